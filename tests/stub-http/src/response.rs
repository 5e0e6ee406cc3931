//! What a handler answers: a status, headers, and a body sent either whole (with
//! its `content-length`) or as chunks, each after a delay of its own (a model's
//! streamed reply, server-sent events, a stall mid-answer); optionally after a
//! delay before the status line (a server that is slow to answer at all).
//!
//! Every delay is a tokio timer, so a stalled response holds no thread and
//! dropping the server cuts it off.

use std::collections::VecDeque;
use std::convert::Infallible;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::Bytes;
use http::header::{HeaderName, HeaderValue};
use http::{HeaderMap, StatusCode};
use http_body::{Frame, SizeHint};

/// A response under construction: `Response::new(200).header(..).body(..)`.
#[derive(Debug)]
pub struct Response {
    status: StatusCode,
    headers: HeaderMap,
    content: Content,
    delay: Duration,
}

#[derive(Debug)]
enum Content {
    Whole(Bytes),
    /// Sent with chunked transfer encoding, each piece after its delay.
    Chunks(VecDeque<(Duration, Bytes)>),
}

impl Response {
    /// A response with this status and an empty body.
    ///
    /// Panics unless `status` is a three-digit code: a test's own mistake.
    pub fn new(status: u16) -> Response {
        let status = StatusCode::from_u16(status).unwrap_or_else(|_| panic!("stub-http: status {status}"));
        Response { status, headers: HeaderMap::new(), content: Content::Whole(Bytes::new()), delay: Duration::ZERO }
    }

    /// Adds a header (several of one name are all sent).
    ///
    /// Panics if the name or value is not valid in HTTP: a test's own mistake.
    pub fn header(mut self, name: &str, value: &str) -> Response {
        let name = HeaderName::try_from(name).unwrap_or_else(|_| panic!("stub-http: header name {name:?}"));
        let value = HeaderValue::try_from(value).unwrap_or_else(|_| panic!("stub-http: header value {value:?}"));
        self.headers.append(name, value);
        self
    }

    /// The whole body, sent with its length (replaces any chunks).
    pub fn body(mut self, body: impl Into<Bytes>) -> Response {
        self.content = Content::Whole(body.into());
        self
    }

    /// Appends a chunk sent `after` the previous one (or the status line): the
    /// body is then streamed, each chunk flushed as it goes.
    pub fn chunk(mut self, after: Duration, data: impl Into<Bytes>) -> Response {
        if let Content::Whole(_) = self.content {
            self.content = Content::Chunks(VecDeque::new());
        }
        if let Content::Chunks(chunks) = &mut self.content {
            chunks.push_back((after, data.into()));
        }
        self
    }

    /// Waits this long before sending anything at all.
    pub fn delay(mut self, delay: Duration) -> Response {
        self.delay = delay;
        self
    }

    /// The response for hyper, once its delay has passed.
    pub(crate) async fn send(self) -> http::Response<Body> {
        if !self.delay.is_zero() {
            tokio::time::sleep(self.delay).await;
        }
        let mut out = http::Response::new(Body { content: self.content, timer: None });
        *out.status_mut() = self.status;
        *out.headers_mut() = self.headers;
        out
    }
}

/// The body hyper sends: whole, or chunk by chunk on their timers.
pub(crate) struct Body {
    content: Content,
    timer: Option<Pin<Box<tokio::time::Sleep>>>,
}

impl http_body::Body for Body {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        let this = self.get_mut();
        let chunks = match &mut this.content {
            Content::Whole(body) if body.is_empty() => return Poll::Ready(None),
            Content::Whole(body) => return Poll::Ready(Some(Ok(Frame::data(std::mem::take(body))))),
            Content::Chunks(chunks) => chunks,
        };
        while let Some(after) = chunks.front().map(|(after, _)| *after) {
            if !after.is_zero() {
                let timer = this.timer.get_or_insert_with(|| Box::pin(tokio::time::sleep(after)));
                if timer.as_mut().poll(cx).is_pending() {
                    return Poll::Pending;
                }
                this.timer = None;
            }
            match chunks.pop_front() {
                // An empty chunk would end a chunked body early: it is only a pause.
                Some((_, data)) if data.is_empty() => continue,
                Some((_, data)) => return Poll::Ready(Some(Ok(Frame::data(data)))),
                None => break,
            }
        }
        Poll::Ready(None)
    }

    fn is_end_stream(&self) -> bool {
        match &self.content {
            Content::Whole(body) => body.is_empty(),
            Content::Chunks(chunks) => chunks.is_empty(),
        }
    }

    fn size_hint(&self) -> SizeHint {
        match &self.content {
            Content::Whole(body) => SizeHint::with_exact(body.len() as u64),
            Content::Chunks(_) => SizeHint::default(),
        }
    }
}
