//! The command line's HTTP clients (Confluence, the LLM stub judge, the terminal
//! chat), built one way: `reqwest` over rustls with the *ring* crypto provider, a
//! user agent that names the tool, and the system's trust store (so an intranet
//! Confluence signed by the university's own CA is trusted as the browser trusts
//! it). Callers set their own timeouts; the async client has none by default, the
//! blocking one 30 s.

use std::sync::Once;

/// Sent with every request, so that a server's operators can see who is calling.
pub const USER_AGENT: &str = concat!("kb-site-builder/", env!("CARGO_PKG_VERSION"));

/// rustls needs a process-wide crypto provider. The dependency tree already has
/// *ring* (wasmtime's HTTP stack uses it), so reqwest is built without its default
/// provider (aws-lc-rs: a second C crypto library to compile and ship) and *ring*
/// is installed here, once. If the embedding program installed a provider first,
/// that one is kept.
fn install_crypto_provider() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        let _ = rustls::crypto::ring::default_provider().install_default();
    });
}

/// An async client builder (for use on a tokio runtime).
pub fn client() -> reqwest::ClientBuilder {
    install_crypto_provider();
    reqwest::Client::builder().user_agent(USER_AGENT)
}

/// A blocking client builder (not for use inside an async runtime).
pub fn blocking_client() -> reqwest::blocking::ClientBuilder {
    install_crypto_provider();
    reqwest::blocking::Client::builder().user_agent(USER_AGENT)
}

/// An error with its causes (`error sending request for url (…): client error
/// (Connect): tcp connect error: Connection refused`): reqwest's own message
/// names the step, the last cause says what a user can fix.
pub fn describe(e: &dyn std::error::Error) -> String {
    let mut text = e.to_string();
    let mut source = e.source();
    while let Some(cause) = source {
        let cause_text = cause.to_string();
        // Layers often repeat their inner error's text; say each thing once.
        if !text.contains(&cause_text) {
            text.push_str(": ");
            text.push_str(&cause_text);
        }
        source = cause.source();
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::TcpListener;
    use std::sync::{Arc, Mutex};

    use stub_http::{Response, StubServer};

    /// A server that answers 200 `ok` and keeps each request's `User-Agent`.
    fn serve() -> (StubServer, Arc<Mutex<Vec<String>>>) {
        let agents = Arc::new(Mutex::new(Vec::new()));
        let seen = agents.clone();
        let stub = StubServer::start(move |req| {
            seen.lock().unwrap().push(req.header("user-agent").unwrap_or_default().to_string());
            Response::new(200).body("ok")
        });
        (stub, agents)
    }

    #[test]
    fn both_clients_build_and_name_the_tool() {
        let (stub, agents) = serve();
        let url = format!("{}/x", stub.url());
        let body = blocking_client().build().unwrap().get(&url).send().unwrap().text().unwrap();
        assert_eq!(body, "ok");
        let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        let body =
            rt.block_on(async { client().build().unwrap().get(&url).send().await.unwrap().text().await.unwrap() });
        assert_eq!(body, "ok");
        assert_eq!(*agents.lock().unwrap(), [USER_AGENT, USER_AGENT], "both clients name the tool");
    }

    #[test]
    fn errors_are_described_with_their_causes() {
        // A port nobody listens on: reqwest's message alone does not say why.
        let port = TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
        let e = blocking_client().build().unwrap().get(format!("http://127.0.0.1:{port}/")).send().unwrap_err();
        let text = describe(&e);
        assert!(text.starts_with(&e.to_string()), "{text}");
        assert!(text.to_ascii_lowercase().contains("refused"), "{text}");
    }

    #[test]
    fn https_clients_build_with_the_ring_provider() {
        // Building a TLS-capable client panics in reqwest when no provider is
        // installed; this is the check that one is.
        assert!(client().https_only(true).build().is_ok());
        assert!(rustls::crypto::CryptoProvider::get_default().is_some());
    }
}
