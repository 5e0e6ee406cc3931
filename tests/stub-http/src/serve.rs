//! The accept loop and the connections: hyper's HTTP/1.1 server over tokio, each
//! request's body read whole before its handler runs on the blocking pool, a
//! handler's panic answered as a 500.

use std::sync::Arc;

use http_body_util::BodyExt;
use hyper::body::Incoming;
use hyper::server::conn::http1;
use hyper_util::rt::{TokioIo, TokioTimer};
use tokio::net::TcpListener;
use tokio::sync::oneshot;

use crate::response::Body;
use crate::{Request, Response};

/// What a server answers with.
pub(crate) type Handler = dyn Fn(Request) -> Response + Send + Sync;

/// Serves connections until `stop` fires (or its sender is dropped).
pub(crate) async fn accept(listener: TcpListener, handler: Arc<Handler>, mut stop: oneshot::Receiver<()>) {
    loop {
        let stream = tokio::select! {
            _ = &mut stop => return,
            accepted = listener.accept() => match accepted {
                Ok((stream, _)) => stream,
                Err(e) => {
                    eprintln!("stub-http: accept failed: {e}");
                    continue;
                }
            },
        };
        // Small streamed chunks must not wait for Nagle's algorithm.
        let _ = stream.set_nodelay(true);
        let handler = handler.clone();
        tokio::spawn(async move {
            let service = hyper::service::service_fn(move |req| answer(handler.clone(), req));
            // A client hanging up mid-request is the client's business.
            let _ =
                http1::Builder::new().timer(TokioTimer::new()).serve_connection(TokioIo::new(stream), service).await;
        });
    }
}

/// One request: its body read whole, the handler run off the runtime's thread.
/// A body that cannot be read (the client went away) closes the connection.
async fn answer(handler: Arc<Handler>, req: hyper::Request<Incoming>) -> Result<http::Response<Body>, hyper::Error> {
    let (parts, body) = req.into_parts();
    let body = match body.collect().await {
        Ok(collected) => collected.to_bytes(),
        Err(e) => {
            eprintln!("stub-http: {} {}: reading the body failed: {e}", parts.method, parts.uri);
            return Err(e);
        }
    };
    let request = Request::new(parts, body);
    let response = match tokio::task::spawn_blocking(move || handler(request)).await {
        Ok(response) => response,
        Err(e) => Response::new(500).header("content-type", "text/plain").body(format!("stub-http: handler: {e}")),
    };
    Ok(response.send().await)
}
