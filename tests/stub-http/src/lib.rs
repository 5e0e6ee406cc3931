//! One stub HTTP/1.1 server for every test binary of the workspace: the scripted
//! LLM, the fake Confluence, the fake website, the static host of the browser
//! tests. hyper reads the requests (chunked bodies included) and writes the
//! responses, so no test parses HTTP by hand.
//!
//! A [`StubServer`] listens on `127.0.0.1`, on a port of its own, and answers each
//! request with the handler it was started with: a plain function from
//! [`Request`] to [`Response`]. Handlers run on tokio's blocking pool, so one may
//! sleep, take locks or make HTTP requests of its own, and requests are answered
//! concurrently, as a real server answers them. The server records nothing: a
//! handler keeps whatever its test asserts.
//!
//! Delays belong in the [`Response`] (a stall before the status line, paced chunks
//! for a stream of server-sent events), where they are timers rather than
//! sleeping threads: dropping the server stops it at once, stalled responses and
//! all.
//!
//! ```no_run
//! use std::time::Duration;
//! use stub_http::{Response, StubServer};
//!
//! let server = StubServer::start(|req| match req.path() {
//!     "/health" => Response::new(200).header("content-type", "text/plain").body("ok"),
//!     "/events" => Response::new(200)
//!         .header("content-type", "text/event-stream")
//!         .chunk(Duration::ZERO, "data: one\n\n")
//!         .chunk(Duration::from_millis(50), "data: two\n\n"),
//!     "/slow" => Response::new(504).delay(Duration::from_secs(60)),
//!     _ => Response::new(404),
//! });
//! let health = format!("{}/health", server.url());
//! # let _ = health;
//! ```

mod request;
mod response;
mod serve;

use std::net::{Ipv4Addr, SocketAddr};
use std::sync::Arc;
use std::thread::JoinHandle;

use tokio::sync::oneshot;

pub use request::Request;
pub use response::Response;

/// A running stub server; dropping it stops it.
pub struct StubServer {
    addr: SocketAddr,
    stop: Option<oneshot::Sender<()>>,
    thread: Option<JoinHandle<()>>,
}

impl StubServer {
    /// Listens on `127.0.0.1:0` and answers every request with `handler`, on a
    /// thread with a tokio runtime of its own.
    ///
    /// Panics if the port cannot be bound or the runtime cannot start: a test
    /// without its server cannot run. A handler that panics answers 500 with the
    /// panic's message; the server goes on.
    pub fn start(handler: impl Fn(Request) -> Response + Send + Sync + 'static) -> StubServer {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("stub-http: cannot start a tokio runtime");
        let std_listener =
            std::net::TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).expect("stub-http: cannot bind 127.0.0.1:0");
        let addr = std_listener.local_addr().expect("stub-http: the bound address");
        std_listener.set_nonblocking(true).expect("stub-http: a non-blocking listener");
        let listener = {
            let _context = runtime.enter();
            tokio::net::TcpListener::from_std(std_listener).expect("stub-http: a tokio listener")
        };
        let (stop, stopped) = oneshot::channel();
        let handler: Arc<serve::Handler> = Arc::new(handler);
        let thread = std::thread::Builder::new()
            .name(format!("stub-http {addr}"))
            .spawn(move || {
                runtime.block_on(serve::accept(listener, handler, stopped));
                // Handlers still running (a test that gave up on a request) are
                // left to finish on their own; nobody waits for them.
                runtime.shutdown_background();
            })
            .expect("stub-http: cannot spawn the server thread");
        StubServer { addr, stop: Some(stop), thread: Some(thread) }
    }

    /// The address it listens on.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// Its base URL, `http://127.0.0.1:PORT`, without a trailing slash.
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }
}

impl Drop for StubServer {
    /// Stops accepting, drops every connection and returns once the port is free.
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}
