//! A scripted OpenAI-compatible server for the agent tests: real HTTP on
//! loopback, the real Chat Completions wire format (`tool_calls`; streamed
//! `chat.completion.chunk`s ending in `data: [DONE]` when the request says
//! `stream: true`), answering each request with the next step of its script and
//! recording every request body it received.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{json, Value};

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
    port: u16,
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
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let requests = Arc::new(Mutex::new(Vec::new()));
        let log = requests.clone();
        let script = Arc::new(Mutex::new(steps.into_iter().collect::<std::collections::VecDeque<_>>()));
        std::thread::spawn(move || {
            for (i, conn) in listener.incoming().enumerate() {
                let Ok(conn) = conn else { continue };
                let log = log.clone();
                let step = script.lock().unwrap().pop_front();
                std::thread::spawn(move || serve(conn, step, i, pace, &log));
            }
        });
        ScriptedLlm { port, requests }
    }

    /// The base URL, as `llm_base_url` takes it.
    pub fn base_url(&self) -> String {
        format!("http://127.0.0.1:{}/v1", self.port)
    }

    /// The request bodies received so far.
    pub fn requests(&self) -> Vec<Value> {
        self.requests.lock().unwrap().clone()
    }
}

fn serve(mut conn: TcpStream, step: Option<Step>, i: usize, pace: Duration, log: &Mutex<Vec<Value>>) {
    let mut reader = BufReader::new(conn.try_clone().unwrap());
    let mut len = 0usize;
    let mut chunked = false;
    let mut first = String::new();
    reader.read_line(&mut first).unwrap();
    let mut head = first.clone();
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).unwrap() == 0 || line == "\r\n" {
            break;
        }
        head.push_str(&line);
        let lower = line.to_ascii_lowercase();
        if let Some(v) = lower.strip_prefix("content-length:") {
            len = v.trim().parse().unwrap();
        }
        if lower.starts_with("transfer-encoding:") && lower.contains("chunked") {
            chunked = true;
        }
    }
    let mut body = Vec::new();
    if chunked {
        // Chunk size in hex, CRLF, data, CRLF; a zero-size chunk ends it.
        loop {
            let mut size = String::new();
            while size.trim().is_empty() {
                size.clear();
                if reader.read_line(&mut size).unwrap() == 0 {
                    break;
                }
            }
            let n = usize::from_str_radix(size.trim().split(';').next().unwrap(), 16).unwrap_or(0);
            if n == 0 {
                break;
            }
            let mut data = vec![0; n];
            reader.read_exact(&mut data).unwrap();
            body.extend_from_slice(&data);
        }
    } else {
        body.resize(len, 0);
        if let Err(e) = reader.read_exact(&mut body) {
            let mut got = Vec::new();
            let _ = reader.read_to_end(&mut got);
            panic!("scripted LLM: connection {i}: body cut short ({e}) after {} of {len} bytes: {head}", got.len());
        }
    }
    assert!(first.starts_with("POST /v1/chat/completions "), "unexpected request line {first:?}");
    let req: Value = serde_json::from_slice(&body).unwrap_or_else(|e| {
        panic!(
            "scripted LLM: request body is not JSON ({e}; chunked {chunked}, length {len}): {head} {:?}",
            String::from_utf8_lossy(&body)
        )
    });
    let stream = req["stream"].as_bool().unwrap_or(false);
    log.lock().unwrap().push(req);
    let reply = |conn: &mut TcpStream, status: u16, ctype: &str, body: &str| {
        let head = format!(
            "HTTP/1.1 {status} X\r\ncontent-type: {ctype}\r\ncontent-length: {}\r\nconnection: close\r\n\r\n",
            body.len()
        );
        let _ = conn.write_all(head.as_bytes());
        let _ = conn.write_all(body.as_bytes());
    };
    let (content, tool_calls) = match step {
        Some(Step::Answer(t)) => (Some(t), None),
        Some(Step::ToolCall { arguments }) => (
            None,
            Some(json!([{ "id": format!("call_{i}"), "type": "function",
                          "function": { "name": "search_knowledge_base", "arguments": arguments } }])),
        ),
        Some(Step::ToolCalls(all)) => (
            None,
            Some(Value::Array(
                all.into_iter()
                    .enumerate()
                    .map(|(j, arguments)| {
                        json!({ "id": format!("call_{i}_{j}"), "type": "function",
                                "function": { "name": "search_knowledge_base", "arguments": arguments } })
                    })
                    .collect(),
            )),
        ),
        Some(Step::Status(code, body)) => return reply(&mut conn, code, "application/json", &body),
        Some(Step::Stall(d)) => {
            std::thread::sleep(d);
            return reply(&mut conn, 500, "text/plain", "too late");
        }
        Some(Step::Garbage) => return reply(&mut conn, 200, "text/html", "<html><body>Bad gateway</body></html>"),
        None => return reply(&mut conn, 500, "application/json", r#"{"error":{"message":"script exhausted"}}"#),
    };
    if !stream {
        let msg = json!({ "role": "assistant", "content": content, "tool_calls": tool_calls });
        let body = json!({ "id": "x", "object": "chat.completion", "choices": [{ "index": 0, "message": msg, "finish_reason": "stop" }] });
        return reply(&mut conn, 200, "application/json", &body.to_string());
    }
    let head =
        "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncache-control: no-cache\r\nconnection: close\r\n\r\n";
    let _ = conn.write_all(head.as_bytes());
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
    for f in frames {
        if conn.write_all(f.as_bytes()).is_err() {
            return;
        }
        let _ = conn.flush();
        std::thread::sleep(pace);
    }
}
