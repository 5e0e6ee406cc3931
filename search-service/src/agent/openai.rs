//! The OpenAI-compatible Chat Completions wire format, as data: request bodies
//! with the one tool, and replies parsed whole or from a stream of chunks
//! (`data: {...}` lines, tool-call arguments arriving in pieces). OpenAI, vLLM,
//! Ollama and llama.cpp's server all speak it. No I/O: the component sends with
//! Spin's outbound HTTP, the terminal with a blocking client.

use serde_json::{json, Value};

/// The agent's one tool.
pub const TOOL_NAME: &str = "search_knowledge_base";

/// The tool's declaration.
pub fn tool() -> Value {
    json!({
        "type": "function",
        "function": {
            "name": TOOL_NAME,
            "description": "Search the knowledge base (hybrid semantic + keyword search over its pages' sections). Returns numbered sources with their text. Use short, specific queries; search again with other words when the results do not answer.",
            "parameters": {
                "type": "object",
                "properties": {
                    "query": { "type": "string", "description": "What to look for, in the knowledge base's words." },
                    "k": { "type": "integer", "minimum": 1, "maximum": 10, "description": "How many sections to return (default 5)." }
                },
                "required": ["query"]
            }
        }
    })
}

/// A `/chat/completions` body. `tools`: offer the search tool (else the model
/// must answer).
pub fn request_body(model: &str, messages: &[Value], tools: bool, stream: bool) -> Value {
    let mut body = json!({ "model": model, "messages": messages, "temperature": 0.2, "stream": stream });
    if tools {
        body["tools"] = json!([tool()]);
        body["tool_choice"] = json!("auto");
    }
    body
}

/// One tool call the model asked for.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ToolCall {
    pub id: String,
    pub name: String,
    /// JSON text, as the model wrote it (possibly invalid).
    pub arguments: String,
}

/// The assistant's reply: text, tool calls, or both.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Reply {
    pub content: String,
    pub tool_calls: Vec<ToolCall>,
}

impl Reply {
    /// The reply as an assistant message for the next request.
    pub fn to_message(&self) -> Value {
        let mut m = json!({ "role": "assistant", "content": self.content });
        if !self.tool_calls.is_empty() {
            m["tool_calls"] = self
                .tool_calls
                .iter()
                .map(|c| json!({ "id": c.id, "type": "function", "function": { "name": c.name, "arguments": c.arguments } }))
                .collect();
        }
        m
    }
}

/// Parses a non-streamed `/chat/completions` response.
pub fn parse_reply(body: &[u8]) -> Result<Reply, String> {
    let v: Value = serde_json::from_slice(body).map_err(|e| {
        let text: String = String::from_utf8_lossy(body).chars().take(120).collect();
        format!("the LLM's reply is not JSON ({e}): {text:?}")
    })?;
    let msg = v
        .pointer("/choices/0/message")
        .ok_or_else(|| format!("the LLM's reply has no choices[0].message: {}", preview(&v)))?;
    let content = msg.get("content").and_then(Value::as_str).unwrap_or("").to_string();
    let mut tool_calls = Vec::new();
    for (i, c) in msg.get("tool_calls").and_then(Value::as_array).into_iter().flatten().enumerate() {
        tool_calls.push(ToolCall {
            id: c.get("id").and_then(Value::as_str).map_or_else(|| format!("call_{i}"), str::to_string),
            name: c.pointer("/function/name").and_then(Value::as_str).unwrap_or("").to_string(),
            arguments: c.pointer("/function/arguments").and_then(Value::as_str).unwrap_or("").to_string(),
        });
    }
    Ok(Reply { content, tool_calls })
}

fn preview(v: &Value) -> String {
    let s = v.to_string();
    s.chars().take(200).collect()
}

/// Assembles a streamed reply from its server-sent chunks.
#[derive(Debug, Default)]
pub struct StreamParser {
    line: Vec<u8>,
    reply: Reply,
    done: bool,
    chunks: usize,
}

impl StreamParser {
    /// Feeds bytes as they arrive; returns the text deltas they completed.
    pub fn push(&mut self, bytes: &[u8]) -> Result<Vec<String>, String> {
        let mut deltas = Vec::new();
        for &b in bytes {
            if b != b'\n' {
                self.line.push(b);
                continue;
            }
            let line = std::mem::take(&mut self.line);
            let line = String::from_utf8_lossy(&line);
            let line = line.trim_end_matches('\r');
            let Some(data) = line.strip_prefix("data:") else { continue };
            let data = data.trim();
            if data == "[DONE]" {
                self.done = true;
                continue;
            }
            let v: Value = serde_json::from_str(data)
                .map_err(|e| format!("the LLM sent a chunk that is not JSON ({e}): {data}"))?;
            if let Some(err) = v.get("error") {
                return Err(format!("the LLM reported an error: {err}"));
            }
            self.chunks += 1;
            let Some(delta) = v.pointer("/choices/0/delta") else { continue };
            if let Some(text) = delta.get("content").and_then(Value::as_str) {
                if !text.is_empty() {
                    self.reply.content.push_str(text);
                    deltas.push(text.to_string());
                }
            }
            for tc in delta.get("tool_calls").and_then(Value::as_array).into_iter().flatten() {
                let i = tc.get("index").and_then(Value::as_u64).unwrap_or(0) as usize;
                if i > 64 {
                    return Err("the LLM sent a tool call index beyond 64".into());
                }
                while self.reply.tool_calls.len() <= i {
                    self.reply.tool_calls.push(ToolCall::default());
                }
                let call = &mut self.reply.tool_calls[i];
                if let Some(id) = tc.get("id").and_then(Value::as_str) {
                    call.id = id.to_string();
                }
                if let Some(name) = tc.pointer("/function/name").and_then(Value::as_str) {
                    call.name.push_str(name);
                }
                if let Some(args) = tc.pointer("/function/arguments").and_then(Value::as_str) {
                    call.arguments.push_str(args);
                }
            }
        }
        Ok(deltas)
    }

    /// Whether a tool call has started (its text is then not the answer).
    pub fn has_tool_calls(&self) -> bool {
        !self.reply.tool_calls.is_empty()
    }

    /// The whole reply, once the stream has ended.
    pub fn finish(mut self) -> Result<Reply, String> {
        if !self.line.is_empty() {
            self.push(b"\n")?;
        }
        if self.chunks == 0 {
            return Err("the LLM's stream ended without a single chunk".into());
        }
        for (i, c) in self.reply.tool_calls.iter_mut().enumerate() {
            if c.id.is_empty() {
                c.id = format!("call_{i}");
            }
        }
        Ok(self.reply)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn streamed_tool_calls_and_text_assemble() {
        let mut p = StreamParser::default();
        let chunks = [
            "data: {\"choices\":[{\"delta\":{\"role\":\"assistant\",\"tool_calls\":[{\"index\":0,\"id\":\"c1\",\"type\":\"function\",\"function\":{\"name\":\"search_knowledge_base\",\"arguments\":\"\"}}]}}]}\n\n",
            "data: {\"choices\":[{\"delta\":{\"tool_calls\":[{\"index\":0,\"function\":{\"arguments\":\"{\\\"query\\\": \\\"park\"}}]}}]}\n",
            "\ndata: {\"choices\":[{\"delta\":{\"tool_calls\":[{\"index\":0,\"function\":{\"arguments\":\"ing\\\"}\"}}]}}]}\n\n",
            "data: {\"choices\":[{\"delta\":{\"content\":\"Hel\"}}]}\r\n\r\ndata: {\"choices\":[{\"delta\":{\"content\":\"lo\"}}]}\n\ndata: [DONE]\n\n",
        ];
        let mut deltas = Vec::new();
        for c in chunks {
            // Split mid-line too, as a network would.
            let (a, b) = c.as_bytes().split_at(c.len() / 2);
            deltas.extend(p.push(a).unwrap());
            deltas.extend(p.push(b).unwrap());
        }
        assert_eq!(deltas, vec!["Hel", "lo"]);
        let r = p.finish().unwrap();
        assert_eq!(r.content, "Hello");
        assert_eq!(
            r.tool_calls,
            vec![ToolCall { id: "c1".into(), name: TOOL_NAME.into(), arguments: "{\"query\": \"parking\"}".into() }]
        );
    }

    #[test]
    fn garbage_is_an_error() {
        assert!(StreamParser::default().push(b"data: {not json\n").is_err());
        assert!(StreamParser::default().finish().is_err());
        assert!(parse_reply(b"<html>502</html>").is_err());
        assert!(parse_reply(b"{\"choices\":[]}").is_err());
        let r = parse_reply(br#"{"choices":[{"message":{"role":"assistant","content":"Hi"}}]}"#).unwrap();
        assert_eq!(r, Reply { content: "Hi".into(), tool_calls: vec![] });
    }
}
