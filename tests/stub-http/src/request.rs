//! What a handler is given: a request as it arrived, its body read whole (hyper
//! has already undone any chunked transfer encoding).

use bytes::Bytes;
use http::{HeaderMap, Method};

/// One request: method, target (path and query), headers and body.
#[derive(Debug, Clone)]
pub struct Request {
    method: Method,
    target: String,
    headers: HeaderMap,
    body: Bytes,
}

impl Request {
    pub(crate) fn new(parts: http::request::Parts, body: Bytes) -> Request {
        let target = parts.uri.path_and_query().map_or("/", |p| p.as_str()).to_string();
        Request { method: parts.method, target, headers: parts.headers, body }
    }

    /// The method, `GET`, `POST`…
    pub fn method(&self) -> &str {
        self.method.as_str()
    }

    /// The path and query as the client sent them, e.g. `/a/b?x=1`.
    pub fn target(&self) -> &str {
        &self.target
    }

    /// The path, without the query.
    pub fn path(&self) -> &str {
        self.target.split_once('?').map_or(self.target.as_str(), |(path, _)| path)
    }

    /// The query, without the `?` (empty when there is none).
    pub fn query(&self) -> &str {
        self.target.split_once('?').map_or("", |(_, query)| query)
    }

    /// The first value of a header (any case), if it is there and visible ASCII.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).and_then(|v| v.to_str().ok())
    }

    /// Every header as (lower-case name, value), values that are not visible
    /// ASCII left out.
    pub fn headers(&self) -> impl Iterator<Item = (&str, &str)> {
        self.headers.iter().filter_map(|(k, v)| Some((k.as_str(), v.to_str().ok()?)))
    }

    /// The body.
    pub fn body(&self) -> &[u8] {
        &self.body
    }

    /// The body as text, invalid UTF-8 replaced.
    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }
}
