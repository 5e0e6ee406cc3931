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

/// Why a reply could not be read (the messages name what the LLM sent).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ReplyError {
    #[error("the LLM's reply is not JSON ({reason}): {start:?}")]
    NotJson { reason: String, start: String },
    #[error("the LLM's reply has no choices[0].message: {0}")]
    NoMessage(String),
    #[error("the LLM sent a chunk that is not JSON ({reason}): {data}")]
    ChunkNotJson { reason: String, data: String },
    #[error("the LLM reported an error: {0}")]
    Reported(String),
    #[error("the LLM sent a tool call index beyond 64")]
    ToolIndex,
    #[error("the LLM's stream ended without a single chunk")]
    Empty,
}

/// The parts of the wire format read here, as types. Servers differ in what they
/// fill in and with which types (null content, missing ids, numbers as strings),
/// so every field is read leniently, element by element: a value of another type
/// reads as absent, as these servers' own clients treat it.
mod wire {
    use serde::de::DeserializeOwned;
    use serde::{Deserialize, Deserializer};
    use serde_json::Value;

    /// `T` from `v`, or `T`'s default when `v` is of another shape.
    pub fn read<T: DeserializeOwned + Default>(v: Value) -> T {
        serde_json::from_value(v).unwrap_or_default()
    }

    /// A field of type `T`, or its default when it holds another type.
    fn lenient<'de, D: Deserializer<'de>, T: DeserializeOwned + Default>(d: D) -> Result<T, D::Error> {
        Ok(read(Value::deserialize(d)?))
    }

    /// A field that counts when present, whatever it holds (`null` included).
    fn present<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Value>, D::Error> {
        Value::deserialize(d).map(Some)
    }

    /// A whole response or a streamed chunk: its `choices` (each read on its
    /// own), and a chunk's `error`.
    #[derive(Deserialize, Default)]
    pub struct Body {
        #[serde(default, deserialize_with = "present")]
        pub error: Option<Value>,
        #[serde(default, deserialize_with = "lenient")]
        pub choices: Vec<Value>,
    }

    impl Body {
        /// `choices[0]`, read as a choice.
        pub fn first_choice(self) -> Option<Choice> {
            self.choices.into_iter().next().map(read)
        }
    }

    /// `message` in a whole response, `delta` in a chunk.
    #[derive(Deserialize, Default)]
    pub struct Choice {
        #[serde(default, deserialize_with = "present")]
        pub message: Option<Value>,
        #[serde(default, deserialize_with = "present")]
        pub delta: Option<Value>,
    }

    /// A message, or a streamed delta of one.
    #[derive(Deserialize, Default)]
    pub struct Message {
        #[serde(default, deserialize_with = "lenient")]
        pub content: Option<String>,
        #[serde(default, deserialize_with = "lenient")]
        pub tool_calls: Vec<Value>,
    }

    impl Message {
        /// The tool calls, each read on its own.
        pub fn tool_calls(&mut self) -> Vec<ToolCall> {
            std::mem::take(&mut self.tool_calls).into_iter().map(read).collect()
        }
    }

    #[derive(Deserialize, Default)]
    pub struct ToolCall {
        #[serde(default, deserialize_with = "lenient")]
        pub index: Option<u64>,
        #[serde(default, deserialize_with = "lenient")]
        pub id: Option<String>,
        #[serde(default, deserialize_with = "lenient")]
        pub function: Function,
    }

    #[derive(Deserialize, Default)]
    pub struct Function {
        #[serde(default, deserialize_with = "lenient")]
        pub name: Option<String>,
        #[serde(default, deserialize_with = "lenient")]
        pub arguments: Option<String>,
    }
}

/// Parses a non-streamed `/chat/completions` response.
pub fn parse_reply(body: &[u8]) -> Result<Reply, ReplyError> {
    let v: Value = serde_json::from_slice(body).map_err(|e| ReplyError::NotJson {
        reason: e.to_string(),
        start: String::from_utf8_lossy(body).chars().take(120).collect(),
    })?;
    let body: wire::Body = wire::read(v.clone());
    let mut msg: wire::Message = body
        .first_choice()
        .and_then(|c| c.message)
        .map(wire::read)
        .ok_or_else(|| ReplyError::NoMessage(preview(&v)))?;
    let tool_calls = msg
        .tool_calls()
        .into_iter()
        .enumerate()
        .map(|(i, c)| ToolCall {
            id: c.id.unwrap_or_else(|| format!("call_{i}")),
            name: c.function.name.unwrap_or_default(),
            arguments: c.function.arguments.unwrap_or_default(),
        })
        .collect();
    Ok(Reply { content: msg.content.unwrap_or_default(), tool_calls })
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
    pub fn push(&mut self, bytes: &[u8]) -> Result<Vec<String>, ReplyError> {
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
                .map_err(|e| ReplyError::ChunkNotJson { reason: e.to_string(), data: data.to_string() })?;
            let chunk: wire::Body = wire::read(v);
            if let Some(err) = chunk.error {
                return Err(ReplyError::Reported(err.to_string()));
            }
            self.chunks += 1;
            let Some(delta) = chunk.first_choice().and_then(|c| c.delta) else { continue };
            let mut delta: wire::Message = wire::read(delta);
            if let Some(text) = delta.content.take().filter(|t| !t.is_empty()) {
                self.reply.content.push_str(&text);
                deltas.push(text);
            }
            for tc in delta.tool_calls() {
                self.add_tool_call_delta(tc)?;
            }
        }
        Ok(deltas)
    }

    /// One piece of a tool call: its id, and more of its name and arguments.
    fn add_tool_call_delta(&mut self, tc: wire::ToolCall) -> Result<(), ReplyError> {
        let i = tc.index.unwrap_or(0) as usize;
        if i > 64 {
            return Err(ReplyError::ToolIndex);
        }
        while self.reply.tool_calls.len() <= i {
            self.reply.tool_calls.push(ToolCall::default());
        }
        let call = &mut self.reply.tool_calls[i];
        if let Some(id) = tc.id {
            call.id = id;
        }
        call.name.push_str(tc.function.name.as_deref().unwrap_or(""));
        call.arguments.push_str(tc.function.arguments.as_deref().unwrap_or(""));
        Ok(())
    }

    /// Whether a tool call has started (its text is then not the answer).
    pub fn has_tool_calls(&self) -> bool {
        !self.reply.tool_calls.is_empty()
    }

    /// The whole reply, once the stream has ended.
    pub fn finish(mut self) -> Result<Reply, ReplyError> {
        if !self.line.is_empty() {
            self.push(b"\n")?;
        }
        if self.chunks == 0 {
            return Err(ReplyError::Empty);
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

    #[test]
    fn fields_of_another_type_read_as_absent_and_an_error_field_always_counts() {
        // A chunk that is JSON but not an object is skipped, not an error.
        let mut p = StreamParser::default();
        assert_eq!(p.push(b"data: 5\ndata: {\"choices\":[{\"delta\":{\"content\":\"Hi\"}}]}\n").unwrap(), ["Hi"]);
        // Content that is not a string, an index that is not a number, a tool
        // call that is not an object: read as absent, element by element.
        let chunk = br#"data: {"choices":[{"delta":{"content":[1],"tool_calls":[7,{"index":"x","id":"c","function":{"name":"s"}}]}}, 3]}"#;
        p.push(chunk).unwrap();
        let r = p.finish().unwrap();
        assert_eq!(r.content, "Hi");
        assert_eq!(r.tool_calls, vec![ToolCall { id: "c".into(), name: "s".into(), arguments: String::new() }]);
        // `"error": null` is still an error report.
        let e = StreamParser::default().push(b"data: {\"error\": null}\n").unwrap_err();
        assert_eq!(e, ReplyError::Reported("null".into()));
        // A message of another type reads as an empty one; no message is an error.
        assert_eq!(parse_reply(br#"{"choices":[{"message":null}, 4]}"#).unwrap(), Reply::default());
        assert!(matches!(parse_reply(br#"{"choices":[{"delta":{}}]}"#), Err(ReplyError::NoMessage(_))));
    }
}
