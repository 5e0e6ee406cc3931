//! Drives the ReAct agent ([`search_core::agent::react`]) against the configured
//! OpenAI-compatible endpoint over Spin's outbound HTTP, streaming the agent's
//! events to the client as they happen. Every LLM failure (refused connection,
//! non-2xx status, a reply that is not the wire format, silence past a timeout)
//! ends in the extractive answer, marked `degraded`.

use std::time::Duration;

use bytes::Bytes;
use futures::channel::mpsc::Sender;
use futures::{SinkExt, StreamExt};
use search_core::agent::openai::{self, Reply};
use search_core::agent::react::{Next, React, ReplyStream, Settings};
use search_core::agent::{ChatRequest, Event};
use search_core::service::Service;
use spin_sdk::http::body::IncomingBodyExt;
use spin_sdk::http::FullBody;

use crate::api::LlmConfig;

/// Largest non-streamed reply read.
const MAX_REPLY: usize = 2 << 20;

/// Where events go.
pub enum Out<'a> {
    /// An SSE body being written to the client.
    Stream(Sender<Bytes>),
    /// Collected, for a JSON reply.
    Collect(&'a mut Vec<Event>),
}

impl Out<'_> {
    async fn send(&mut self, e: Event) {
        match self {
            // A client that went away stops nothing here; the answer is finished
            // and discarded (the instance is not held longer than the LLM takes).
            Out::Stream(tx) => {
                let _ = tx.send(Bytes::from(e.to_sse())).await;
            }
            Out::Collect(v) => v.push(e),
        }
    }

    fn streaming(&self) -> bool {
        matches!(self, Out::Stream(_))
    }
}

/// Runs the conversation to its `done` event.
pub async fn run(svc: &Service<'_>, llm: &LlmConfig, chat: &ChatRequest, clock: &dyn Fn() -> f64, mut out: Out<'_>) {
    let stream = out.streaming();
    if let Out::Stream(tx) = &mut out {
        // An SSE comment: starts the body at once, so proxies and the browser
        // see the stream open while the model thinks.
        let _ = tx.send(Bytes::from_static(b": connected\n\n")).await;
    }
    let mut agent = React::new(svc, Settings::new(&llm.model), chat, stream, clock());
    let mut body = agent.request();
    loop {
        let t = clock();
        let reply =
            if stream { call_streaming(llm, &body, &mut agent, &mut out).await } else { call(llm, &body).await };
        let mut events = Vec::new();
        let next = match reply {
            Ok(reply) => agent.on_reply(reply, clock() - t, clock, &mut |e| events.push(e)),
            Err(why) => {
                eprintln!("llm: {why}");
                agent.degrade(&why, clock, &mut |e| events.push(e));
                for e in events {
                    out.send(e).await;
                }
                return;
            }
        };
        // Something is written to the client between two LLM calls, a comment when
        // there is no event. Observed with spin-sdk 7 on wasmtime 48: when the
        // SSE body had nothing written since the previous call, the next request's
        // body writer (a task spawned by wasip3's http_compat) was never polled
        // and the request went out without its body (tests/edge/agent.rs,
        // bad_tool_arguments_go_back_to_the_model). It doubles as a keep-alive.
        if events.is_empty() {
            if let Out::Stream(tx) = &mut out {
                let _ = tx.send(Bytes::from_static(b": working\n\n")).await;
            }
        }
        for e in events {
            out.send(e).await;
        }
        match next {
            Next::Call(b) => body = b,
            Next::Done(_) => return,
        }
    }
}

async fn timeout<F: std::future::Future>(limit: Duration, f: F) -> Result<F::Output, String> {
    let sleep = spin_sdk::wasip3::clocks::monotonic_clock::wait_for(limit.as_nanos() as u64);
    match futures::future::select(Box::pin(f), Box::pin(sleep)).await {
        futures::future::Either::Left((v, _)) => Ok(v),
        futures::future::Either::Right(_) => Err(format!("no answer within {:.1} s", limit.as_secs_f64())),
    }
}

async fn send(llm: &LlmConfig, body: &serde_json::Value) -> Result<spin_sdk::http::Response, String> {
    let mut b = spin_sdk::http::Request::builder()
        .method("POST")
        .uri(llm.completions_url())
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream");
    if !llm.api_key.is_empty() {
        b = b.header("authorization", format!("Bearer {}", llm.api_key));
    }
    let bytes = serde_json::to_vec(body).map_err(|e| e.to_string())?;
    let req = b
        .header("content-length", bytes.len().to_string())
        .body(FullBody::new(Bytes::from(bytes)))
        .map_err(|e| e.to_string())?;
    let resp = timeout(llm.timeout, spin_sdk::http::send(req))
        .await?
        .map_err(|e| format!("cannot reach {}: {e:?}", llm.completions_url()))?;
    if !resp.status().is_success() {
        let status = resp.status();
        let text = timeout(llm.timeout, resp.into_body().bytes()).await.ok().and_then(Result::ok);
        let preview: String = text.map(|b| String::from_utf8_lossy(&b).chars().take(200).collect()).unwrap_or_default();
        return Err(format!("HTTP {status} from {}: {preview}", llm.completions_url()));
    }
    Ok(resp)
}

/// Sends answer text, after the `sources` event when the sources changed.
async fn show(agent: &mut React<'_>, out: &mut Out<'_>, text: String) {
    if let Some(e) = agent.sources_event() {
        out.send(e).await;
    }
    out.send(Event::Token { text }).await;
}

async fn call(llm: &LlmConfig, body: &serde_json::Value) -> Result<Reply, String> {
    let resp = send(llm, body).await?;
    let bytes =
        timeout(llm.timeout, resp.into_body().bytes()).await?.map_err(|e| format!("reading the reply: {e:?}"))?;
    if bytes.len() > MAX_REPLY {
        return Err("the reply is larger than 2 MiB".into());
    }
    openai::parse_reply(&bytes)
}

/// A streamed call: answer text is forwarded as `token` events as it arrives
/// (after the `sources` event, and without the abstention marker).
async fn call_streaming(
    llm: &LlmConfig,
    body: &serde_json::Value,
    agent: &mut React<'_>,
    out: &mut Out<'_>,
) -> Result<Reply, String> {
    let resp = send(llm, body).await?;
    let mut stream = ReplyStream::default();
    let mut chunks = resp.into_body().stream();
    loop {
        let chunk = match timeout(llm.timeout, chunks.next()).await? {
            None => break,
            Some(Ok(c)) => c,
            Some(Err(e)) => return Err(format!("the stream broke: {e:?}")),
        };
        if let Some(text) = stream.push(&chunk)? {
            show(agent, out, text).await;
        }
    }
    let (reply, rest) = stream.finish()?;
    if let Some(text) = rest {
        show(agent, out, text).await;
    }
    Ok(reply)
}
