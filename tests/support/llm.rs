//! A scripted OpenAI-compatible server for the agent tests: real HTTP on
//! loopback (the workspace's `stub-http` server), the real Chat Completions wire
//! format (`tool_calls`; streamed `chat.completion.chunk`s ending in
//! `data: [DONE]` when the request says `stream: true`), answering each request
//! with the next step of its script and recording every request body it
//! received. It stops when dropped.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{json, Value};
use stub_http::{Request, Response, StubServer};

/// What the server does for one request.
#[derive(Debug, Clone)]
pub enum Step {
    /// The assistant calls the search tool with these raw arguments.
    ToolCall { arguments: String },
    /// The assistant calls the search tool once per element, in one reply.
    ToolCalls(Vec<String>),
    /// The assistant answers with this text.
    Answer(String),
    /// This HTTP status with this body.
    Status(u16, String),
    /// Waits this long before answering at all.
    Stall(Duration),
    /// 200 with a body that is not the wire format.
    Garbage,
}

pub fn search(query: &str) -> Step {
    Step::ToolCall { arguments: json!({ "query": query }).to_string() }
}

pub fn answer(text: &str) -> Step {
    Step::Answer(text.into())
}

pub struct ScriptedLlm {
    server: StubServer,
    requests: Arc<Mutex<Vec<Value>>>,
}

impl ScriptedLlm {
    /// Serves `steps` in order, one per request; beyond the script, 500.
    pub fn start(steps: Vec<Step>) -> ScriptedLlm {
        ScriptedLlm::start_paced(steps, Duration::from_millis(2))
    }

    /// Like [`ScriptedLlm::start`], with `pace` between two streamed chunks (a
    /// browser can then see the answer grow).
    pub fn start_paced(steps: Vec<Step>, pace: Duration) -> ScriptedLlm {
        let requests = Arc::new(Mutex::new(Vec::new()));
        let log = requests.clone();
        let script = Mutex::new(VecDeque::from(steps));
        let served = AtomicUsize::new(0);
        let server = StubServer::start(move |req| {
            let i = served.fetch_add(1, Ordering::SeqCst);
            let step = script.lock().unwrap().pop_front();
            reply(&req, step, i, pace, &log)
        });
        ScriptedLlm { server, requests }
    }

    /// The base URL, as `llm_base_url` takes it.
    pub fn base_url(&self) -> String {
        format!("{}/v1", self.server.url())
    }

    /// The request bodies received so far.
    pub fn requests(&self) -> Vec<Value> {
        self.requests.lock().unwrap().clone()
    }
}

/// The `i`-th request (from 0), answered with `step`.
fn reply(req: &Request, step: Option<Step>, i: usize, pace: Duration, log: &Mutex<Vec<Value>>) -> Response {
    let whole = |status: u16, ctype: &str, body: &str| {
        Response::new(status).header("content-type", ctype).body(body.to_string())
    };
    assert!(
        req.method() == "POST" && req.target() == "/v1/chat/completions",
        "unexpected request {} {}",
        req.method(),
        req.target()
    );
    let body: Value = serde_json::from_slice(req.body()).unwrap_or_else(|e| {
        let framing = (req.header("content-length"), req.header("transfer-encoding"));
        panic!("scripted LLM: request {i}: body is not JSON ({e}; length, encoding {framing:?}): {:?}", req.text())
    });
    let stream = body["stream"].as_bool().unwrap_or(false);
    log.lock().unwrap().push(body);
    let (content, tool_calls) = match step {
        Some(Step::Answer(t)) => (Some(t), None),
        Some(Step::ToolCall { arguments }) => (None, Some(json!([tool_call(format!("call_{i}"), arguments)]))),
        Some(Step::ToolCalls(all)) => {
            let calls = all.into_iter().enumerate().map(|(j, arguments)| tool_call(format!("call_{i}_{j}"), arguments));
            (None, Some(Value::Array(calls.collect())))
        }
        Some(Step::Status(code, body)) => return whole(code, "application/json", &body),
        Some(Step::Stall(d)) => return whole(500, "text/plain", "too late").delay(d),
        Some(Step::Garbage) => return whole(200, "text/html", "<html><body>Bad gateway</body></html>"),
        None => return whole(500, "application/json", r#"{"error":{"message":"script exhausted"}}"#),
    };
    if !stream {
        let msg = json!({ "role": "assistant", "content": content, "tool_calls": tool_calls });
        let body = json!({ "id": "x", "object": "chat.completion", "choices": [{ "index": 0, "message": msg, "finish_reason": "stop" }] });
        return whole(200, "application/json", &body.to_string());
    }
    // Each frame is followed by `pace`, the last one too.
    let frames = frames(content, tool_calls);
    let mut response =
        Response::new(200).header("content-type", "text/event-stream").header("cache-control", "no-cache");
    for (n, frame) in frames.into_iter().enumerate() {
        response = response.chunk(if n == 0 { Duration::ZERO } else { pace }, frame);
    }
    response.chunk(pace, "")
}

/// One call of the search tool.
fn tool_call(id: String, arguments: String) -> Value {
    json!({ "id": id, "type": "function", "function": { "name": "search_knowledge_base", "arguments": arguments } })
}

/// A streamed reply's server-sent events, `data: [DONE]` last.
fn frames(content: Option<String>, tool_calls: Option<Value>) -> Vec<String> {
    let chunk = |delta: Value| {
        let c = json!({ "id": "x", "object": "chat.completion.chunk", "choices": [{ "index": 0, "delta": delta, "finish_reason": null }] });
        format!("data: {c}\n\n")
    };
    let mut frames = vec![chunk(json!({ "role": "assistant" }))];
    if let Some(text) = content {
        // Several small pieces, split inside words, as models stream.
        let chars: Vec<char> = text.chars().collect();
        for piece in chars.chunks(7) {
            frames.push(chunk(json!({ "content": piece.iter().collect::<String>() })));
        }
    }
    for (index, c) in tool_calls.iter().flat_map(|c| c.as_array().unwrap()).enumerate() {
        let args = c["function"]["arguments"].as_str().unwrap().to_string();
        frames.push(chunk(json!({ "tool_calls": [{ "index": index, "id": c["id"], "type": "function",
                                   "function": { "name": "search_knowledge_base", "arguments": "" } }] })));
        let (a, b) = args.split_at(args.len() / 2);
        for part in [a, b] {
            frames.push(chunk(json!({ "tool_calls": [{ "index": index, "function": { "arguments": part } }] })));
        }
    }
    frames.push("data: [DONE]\n\n".into());
    frames
}
