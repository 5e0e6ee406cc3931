//! Drives the ReAct agent ([`search_service::agent::react`]) against the configured
//! OpenAI-compatible endpoint over Spin's outbound HTTP, streaming the agent's
//! events to the client as they happen. Every LLM failure (refused connection,
//! non-2xx status, a reply that is not the wire format, silence past a timeout,
//! a reply past its size cap, the request's total LLM time used up) ends in the
//! extractive answer, marked `degraded`.
//!
//! The API faces the public internet, so one request's work is bounded: each
//! reply is read incrementally and cut at [`MAX_REPLY`] bytes (streamed or not),
//! all LLM calls of a request share one deadline (`llm_max_total_secs`), the
//! agent runs at most a few searches per reply and round, and a client that has
//! gone away (a failed write on the SSE channel) stops the agent before its next
//! LLM call. What went wrong is logged on stderr in full; the client's `error`
//! event says only that the model is unavailable, never the provider's status,
//! URL or reply.

use std::time::Duration;

use bytes::Bytes;
use futures::channel::mpsc::Sender;
use futures::{SinkExt, StreamExt};
use search_service::agent::openai::{self, Reply};
use search_service::agent::react::{Next, React, ReplyStream, Settings};
use search_service::agent::{ChatRequest, Event};
use search_service::service::Service;
use spin_sdk::http::body::IncomingBodyExt;
use spin_sdk::http::{FullBody, StatusCode};
use spin_sdk::wasip3::http::types::ErrorCode;

use crate::api::LlmConfig;

/// Largest reply read from the LLM, whole or streamed (counted over the bytes of
/// the stream, so a model that never stops is cut off too).
pub const MAX_REPLY: usize = 2 << 20;
/// Bytes of an error reply kept for the log.
const ERROR_PREVIEW: usize = 1024;

/// Where events go.
pub enum Sink {
    /// An SSE body being written to the client.
    Stream(Sender<Bytes>),
    /// Collected, for a JSON reply.
    Collect,
}

/// Where events go, what is kept of them, and the answer's id (given to the
/// `done` event: what feedback on the answer names).
pub struct Out<'a> {
    pub sink: Sink,
    /// Every event when collecting; when streaming, all but the tokens (the
    /// insights record needs the searches, the sources and `done`).
    pub seen: &'a mut Vec<Event>,
    pub answer_id: &'a str,
}

/// The client closed the connection: nothing more is worth computing.
#[derive(Debug)]
struct Gone;

impl Out<'_> {
    /// Sends an event; `Err(Gone)` when the SSE channel is closed, which happens
    /// when the host dropped the response body because the client went away.
    async fn send(&mut self, mut e: Event) -> Result<(), Gone> {
        if let Event::Done(d) = &mut e {
            d.id = self.answer_id.to_string();
        }
        match &mut self.sink {
            Sink::Stream(tx) => {
                let bytes = Bytes::from(e.to_sse());
                if !matches!(e, Event::Token { .. }) {
                    self.seen.push(e);
                }
                tx.send(bytes).await.map_err(|_| Gone)
            }
            Sink::Collect => {
                self.seen.push(e);
                Ok(())
            }
        }
    }

    /// Sends an SSE comment (keep-alive); the same `Gone` as [`Out::send`].
    async fn comment(&mut self, text: &'static [u8]) -> Result<(), Gone> {
        match &mut self.sink {
            Sink::Stream(tx) => tx.send(Bytes::from_static(text)).await.map_err(|_| Gone),
            Sink::Collect => Ok(()),
        }
    }

    fn streaming(&self) -> bool {
        matches!(self.sink, Sink::Stream(_))
    }

    /// Before an LLM call: whether the client is still there to read its answer.
    ///
    /// A send only fails once the body writer (a task of wasip3's http_compat
    /// that moves the channel's items into the response stream) has tried to
    /// write an earlier item, found the host's reader gone and dropped the
    /// channel. Right after the agent's events were queued it has not run yet, so
    /// without a pause a departed client still cost one more LLM call (measured:
    /// tests/edge/agent.rs, a_client_that_goes_away_stops_the_agent). The pause
    /// lets it run; it is small next to any LLM call.
    ///
    /// It ends with a comment written right before the call: the outbound
    /// request's body is only sent when the SSE body was written to since the
    /// previous call (see `drive`), and the pause alone broke that (every first
    /// request went out without its body).
    async fn still_there(&mut self) -> Result<(), Gone> {
        let Sink::Stream(tx) = &self.sink else { return Ok(()) };
        spin_sdk::wasip3::clocks::monotonic_clock::wait_for(CLIENT_CHECK.as_nanos() as u64).await;
        if tx.is_closed() {
            return Err(Gone);
        }
        self.comment(b": working\n\n").await
    }
}

/// The pause of [`Out::still_there`].
const CLIENT_CHECK: Duration = Duration::from_millis(20);

/// Why a call to the LLM did not give a reply.
enum Failure {
    /// The LLM failed: logged in full, the client gets the extractive answer.
    Llm(LlmError),
    /// The client went away while the reply streamed.
    Gone,
}

/// What went wrong with the LLM, for the operator's log (the client is told only
/// that the model is unavailable).
#[derive(Debug, thiserror::Error)]
enum LlmError {
    #[error("the request's total LLM time of {:.0} s is used up", .total.as_secs_f64())]
    TimeUsedUp { total: Duration },
    #[error("no answer within {:.1} s", .limit.as_secs_f64())]
    Silent { limit: Duration },
    #[error("{0}")]
    Body(#[source] serde_json::Error),
    #[error("{0}")]
    Request(#[source] spin_sdk::http::Error),
    #[error("cannot reach {url}: {code:?}")]
    Unreachable { url: String, code: ErrorCode },
    #[error("HTTP {status} from {url}: {preview}")]
    Status { status: StatusCode, url: String, preview: String },
    #[error("the reply is larger than {} MiB", MAX_REPLY >> 20)]
    TooLarge,
    #[error("reading the reply: {0:?}")]
    Read(ErrorCode),
    #[error("the stream broke: {0:?}")]
    StreamBroke(ErrorCode),
    #[error("the streamed reply passed {} MiB", MAX_REPLY >> 20)]
    StreamTooLarge,
    #[error(transparent)]
    Reply(#[from] openai::ReplyError),
}

impl From<LlmError> for Failure {
    fn from(e: LlmError) -> Self {
        Failure::Llm(e)
    }
}

impl From<openai::ReplyError> for Failure {
    fn from(e: openai::ReplyError) -> Self {
        Failure::Llm(e.into())
    }
}

/// The clock of one request, for its total LLM deadline.
struct Deadline<'c> {
    clock: &'c dyn Fn() -> f64,
    end_ms: f64,
    total: Duration,
}

impl Deadline<'_> {
    /// How long the next wait may take: the per-call timeout, or what is left of
    /// the request's total if less. `Err` when nothing is left.
    fn limit(&self, per_call: Duration) -> Result<Duration, LlmError> {
        let left_ms = self.end_ms - (self.clock)();
        if left_ms <= 0.0 {
            return Err(LlmError::TimeUsedUp { total: self.total });
        }
        Ok(per_call.min(Duration::from_secs_f64(left_ms / 1e3)))
    }
}

/// Runs the conversation to its `done` event, or until the client goes away.
pub async fn run(svc: &Service<'_>, llm: &LlmConfig, chat: &ChatRequest, clock: &dyn Fn() -> f64, mut out: Out<'_>) {
    if drive(svc, llm, chat, clock, &mut out).await.is_err() {
        eprintln!("llm: the client went away; the agent stopped");
    }
}

async fn drive(
    svc: &Service<'_>,
    llm: &LlmConfig,
    chat: &ChatRequest,
    clock: &dyn Fn() -> f64,
    out: &mut Out<'_>,
) -> Result<(), Gone> {
    let stream = out.streaming();
    // An SSE comment: starts the body at once, so proxies and the browser see the
    // stream open while the model thinks.
    out.comment(b": connected\n\n").await?;
    let deadline = Deadline { clock, end_ms: clock() + llm.max_total.as_secs_f64() * 1e3, total: llm.max_total };
    let mut agent = React::new(svc, Settings::new(&llm.model), chat, stream, clock());
    let mut body = agent.request();
    loop {
        out.still_there().await?;
        let t = clock();
        let reply = if stream {
            call_streaming(llm, &deadline, &body, &mut agent, out).await
        } else {
            call(llm, &deadline, &body).await
        };
        let mut events = Vec::new();
        let next = match reply {
            Ok(reply) => agent.on_reply(reply, clock() - t, clock, &mut |e| events.push(e)),
            Err(Failure::Gone) => return Err(Gone),
            Err(Failure::Llm(why)) => {
                // The details are for the operator's log only: the client's
                // `error` event is generic (react::LLM_UNAVAILABLE).
                let why = why.to_string();
                eprintln!("llm: {why}");
                agent.degrade(&why, clock, &mut |e| events.push(e));
                for e in events {
                    out.send(e).await?;
                }
                return Ok(());
            }
        };
        // Something is written to the client between two LLM calls, a comment when
        // there is no event. Observed with spin-sdk 7 on wasmtime 48: when the
        // SSE body had nothing written since the previous call, the next request's
        // body writer (a task spawned by wasip3's http_compat) was never polled
        // and the request went out without its body (tests/edge/agent.rs,
        // bad_tool_arguments_go_back_to_the_model). It doubles as a keep-alive,
        // and as the check that the client is still there before the next call.
        if events.is_empty() {
            out.comment(b": working\n\n").await?;
        }
        for e in events {
            out.send(e).await?;
        }
        match next {
            Next::Call(b) => body = b,
            Next::Done(_) => return Ok(()),
        }
    }
}

async fn timeout<F: std::future::Future>(limit: Duration, f: F) -> Result<F::Output, LlmError> {
    let sleep = spin_sdk::wasip3::clocks::monotonic_clock::wait_for(limit.as_nanos() as u64);
    match futures::future::select(Box::pin(f), Box::pin(sleep)).await {
        futures::future::Either::Left((v, _)) => Ok(v),
        futures::future::Either::Right(_) => Err(LlmError::Silent { limit }),
    }
}

async fn send(
    llm: &LlmConfig,
    deadline: &Deadline<'_>,
    body: &serde_json::Value,
) -> Result<spin_sdk::http::Response, LlmError> {
    let mut b = spin_sdk::http::Request::builder()
        .method("POST")
        .uri(llm.completions_url())
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream");
    if !llm.api_key.is_empty() {
        b = b.header("authorization", format!("Bearer {}", llm.api_key));
    }
    let bytes = serde_json::to_vec(body).map_err(LlmError::Body)?;
    let req = b
        .header("content-length", bytes.len().to_string())
        .body(FullBody::new(Bytes::from(bytes)))
        .map_err(|e| LlmError::Request(e.into()))?;
    let resp = timeout(deadline.limit(llm.timeout)?, spin_sdk::http::send(req))
        .await?
        .map_err(|code| LlmError::Unreachable { url: llm.completions_url(), code })?;
    if !resp.status().is_success() {
        let status = resp.status();
        // Only the start of an error body, for the log: it is not read whole.
        let mut chunks = resp.into_body().stream();
        let mut text = Vec::new();
        while text.len() < ERROR_PREVIEW {
            match deadline.limit(llm.timeout) {
                Ok(limit) => match timeout(limit, chunks.next()).await {
                    Ok(Some(Ok(c))) => text.extend_from_slice(&c),
                    _ => break,
                },
                Err(_) => break,
            }
        }
        let preview: String = String::from_utf8_lossy(&text).chars().take(200).collect();
        return Err(LlmError::Status { status, url: llm.completions_url(), preview });
    }
    Ok(resp)
}

/// Sends answer text, after the `sources` event when the sources changed.
async fn show(agent: &mut React<'_>, out: &mut Out<'_>, text: String) -> Result<(), Gone> {
    if let Some(e) = agent.sources_event() {
        out.send(e).await?;
    }
    out.send(Event::Token { text }).await
}

/// A whole (non-streamed) reply, read piece by piece and refused as soon as it
/// passes [`MAX_REPLY`], so a huge reply is never held in memory.
async fn call(llm: &LlmConfig, deadline: &Deadline<'_>, body: &serde_json::Value) -> Result<Reply, Failure> {
    let resp = send(llm, deadline, body).await?;
    let mut chunks = resp.into_body().stream();
    let mut bytes = Vec::new();
    loop {
        match timeout(deadline.limit(llm.timeout)?, chunks.next()).await? {
            None => break,
            Some(Ok(c)) => {
                if bytes.len() + c.len() > MAX_REPLY {
                    return Err(LlmError::TooLarge.into());
                }
                bytes.extend_from_slice(&c);
            }
            Some(Err(e)) => return Err(LlmError::Read(e).into()),
        }
    }
    Ok(openai::parse_reply(&bytes)?)
}

/// A streamed call: answer text is forwarded as `token` events as it arrives
/// (after the `sources` event, and without the abstention marker). The stream
/// is cut at [`MAX_REPLY`] bytes and at the request's deadline.
async fn call_streaming(
    llm: &LlmConfig,
    deadline: &Deadline<'_>,
    body: &serde_json::Value,
    agent: &mut React<'_>,
    out: &mut Out<'_>,
) -> Result<Reply, Failure> {
    let resp = send(llm, deadline, body).await?;
    let mut stream = ReplyStream::default();
    let mut chunks = resp.into_body().stream();
    let mut read = 0usize;
    loop {
        let chunk = match timeout(deadline.limit(llm.timeout)?, chunks.next()).await? {
            None => break,
            Some(Ok(c)) => c,
            Some(Err(e)) => return Err(LlmError::StreamBroke(e).into()),
        };
        read += chunk.len();
        if read > MAX_REPLY {
            return Err(LlmError::StreamTooLarge.into());
        }
        if let Some(text) = stream.push(&chunk)? {
            show(agent, out, text).await.map_err(|Gone| Failure::Gone)?;
        }
    }
    let (reply, rest) = stream.finish()?;
    if let Some(text) = rest {
        show(agent, out, text).await.map_err(|Gone| Failure::Gone)?;
    }
    Ok(reply)
}
