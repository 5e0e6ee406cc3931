//! The answer agent: a conversation in, a cited answer out, with every step it took
//! reported as an event (`search`, `sources`, `token`, `done`, `error`): the wire
//! format of `POST /api/chat` and of `site-builder chat`.
//!
//! Two agents share these types. [`extractive`] needs nothing but the index: it
//! splits multi-part questions, searches each part, abstains when nothing is
//! relevant, and otherwise answers with the passages of the best sources that
//! answer it: sentences, list steps, table rows ([`passages`], [`select`]),
//! each page cited once, citations numbered in the order the answer uses them.
//! [`react`] is the ReAct loop over an OpenAI-compatible LLM ([`openai`] is its
//! wire format), falling back to the extractive answer when the LLM fails. Both are
//! sans-I/O: they call the search service directly, hand events to a callback, and
//! leave the HTTP to the driver (the component, or the terminal).

pub mod extractive;
pub mod openai;
pub mod passages;
pub mod react;
pub mod select;
pub mod settings;
pub mod words;

use search_core::index::lang::LangTag;
use serde::{Deserialize, Serialize};

use crate::service::SearchResult;

/// Most messages a conversation may carry.
pub const MAX_MESSAGES: usize = 40;
/// Longest message, in characters.
pub const MAX_MESSAGE_CHARS: usize = 4000;
/// Longest conversation, in characters (older turns beyond it are dropped first).
pub const MAX_CONVERSATION_CHARS: usize = 24_000;
/// Longest `visitor` id, in characters.
pub const MAX_VISITOR_CHARS: usize = 64;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    User,
    Assistant,
}

/// One turn of the conversation the client holds.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Message {
    pub role: Role,
    pub content: String,
}

/// The body of `POST /api/chat`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ChatRequest {
    pub messages: Vec<Message>,
    #[serde(default)]
    pub stream: bool,
    /// The widget's random per-browser id (insights count visitors by it; it is
    /// never tied to an address).
    #[serde(default)]
    pub visitor: Option<String>,
    /// The reader's language (`lang`: the page the widget is on), whose pages
    /// the answer quotes first ([`crate::service::Service::answer_language`]);
    /// `None`: read from the question. `all` or empty is `None`.
    #[serde(default, deserialize_with = "reader_language")]
    pub lang: Option<LangTag>,
}

/// `lang` of a chat request: a language tag, `all` or empty (`None`), checked
/// before by [`ChatRequest::parse`].
fn reader_language<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<LangTag>, D::Error> {
    let raw: Option<String> = Option::deserialize(d)?;
    match raw.as_deref() {
        None => Ok(None),
        Some(t) => LangTag::choice(t).map_err(|_| serde::de::Error::custom("`lang` is not a language tag")),
    }
}

/// Why a chat request was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct RequestError {
    /// The JSON field at fault (`messages`, `messages[3].content`, …).
    pub field: String,
    pub message: String,
}

impl ChatRequest {
    /// Parses and bounds a request body: at most [`MAX_MESSAGES`] messages of at
    /// most [`MAX_MESSAGE_CHARS`] characters, the user's never blank (only white
    /// space), the last the user's; a `visitor` id, if sent, a string of at most
    /// [`MAX_VISITOR_CHARS`]; older turns beyond [`MAX_CONVERSATION_CHARS`] are
    /// dropped. (`openapi.yaml`'s `ChatRequest` says all of it but that the last
    /// turn is the user's, which JSON Schema cannot address.)
    pub fn parse(body: &[u8]) -> Result<ChatRequest, RequestError> {
        let err = |field: &str, message: String| RequestError { field: field.into(), message };
        let not_chat = |e: &dyn std::fmt::Display| {
            err("body", format!("the body is not a chat request ({e}); send {{\"messages\":[{{\"role\":\"user\",\"content\":\"…\"}}],\"stream\":true}}"))
        };
        let value: serde_json::Value = serde_json::from_slice(body).map_err(|e| not_chat(&e))?;
        // serde reads a struct from an array too, field by field in order: the
        // contract's objects are objects, so `[[…], true]` is not a chat.
        if !value.is_object() {
            return Err(not_chat(&"a JSON object is expected"));
        }
        if let Some(i) = value["messages"].as_array().and_then(|m| m.iter().position(|m| !m.is_object())) {
            return Err(err(
                &format!("messages[{i}]"),
                format!("message {i} must be an object with `role` and `content`"),
            ));
        }
        // An optional field is omitted when unknown, never `null`.
        if let Some(v) = value.get("visitor") {
            match v.as_str() {
                None => return Err(err("visitor", "`visitor` must be a string; omit it when there is none".into())),
                Some(v) if v.chars().count() > MAX_VISITOR_CHARS => {
                    return Err(err("visitor", format!("`visitor` is longer than {MAX_VISITOR_CHARS} characters")))
                }
                Some(_) => {}
            }
        }
        if let Some(v) = value.get("lang") {
            match v.as_str().map(LangTag::choice) {
                Some(Ok(_)) => {}
                _ => {
                    return Err(err(
                        "lang",
                        format!("`lang` must be a language tag such as `de` or `zh-cn`, or `all`; got {v}"),
                    ))
                }
            }
        }
        let mut req: ChatRequest = serde_json::from_value(value).map_err(|e| not_chat(&e))?;
        if req.messages.is_empty() {
            return Err(err("messages", "`messages` is empty; send at least the user's question".into()));
        }
        if req.messages.len() > MAX_MESSAGES {
            return Err(err("messages", format!("{} messages; the limit is {MAX_MESSAGES}", req.messages.len())));
        }
        for (i, m) in req.messages.iter().enumerate() {
            let n = m.content.chars().count();
            if n > MAX_MESSAGE_CHARS {
                return Err(err(
                    &format!("messages[{i}].content"),
                    format!("message {i} is {n} characters long; the limit is {MAX_MESSAGE_CHARS}"),
                ));
            }
            if m.role == Role::User && m.content.trim().is_empty() {
                return Err(err(&format!("messages[{i}].content"), format!("message {i}, the user's, is blank")));
            }
        }
        if req.messages.last().map(|m| m.role) != Some(Role::User) {
            return Err(err("messages", "the last message must be the user's question".into()));
        }
        // Keep the newest turns within the budget (the last one always fits).
        let mut total = 0;
        let keep = req
            .messages
            .iter()
            .rev()
            .take_while(|m| {
                total += m.content.chars().count();
                total <= MAX_CONVERSATION_CHARS
            })
            .count();
        let drop = req.messages.len() - keep.max(1);
        req.messages.drain(..drop);
        Ok(req)
    }

    /// The user's latest message.
    pub fn question(&self) -> &str {
        self.messages.last().map(|m| m.content.trim()).unwrap_or("")
    }
}

/// A numbered source the answer may cite as `[n]`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Source {
    /// 1-based citation number.
    pub n: usize,
    pub chunk_id: String,
    pub page_id: String,
    pub title: String,
    pub path: Vec<String>,
    /// Site-relative URL with `#anchor`.
    pub url: String,
    /// HTML-escaped, terms in `<mark>`.
    pub snippet: String,
    /// The page's language tag (`en`, `de`): a page of the main language
    /// standing in for a translation the reader's language lacks is cited in
    /// its own, and the widget says so.
    pub lang: String,
}

impl Source {
    /// Result `r` as citation number `n`.
    pub fn from_result(n: usize, r: &SearchResult) -> Source {
        Source {
            n,
            chunk_id: r.chunk_id.clone(),
            page_id: r.page_id.clone(),
            title: r.title.clone(),
            path: r.path.clone(),
            url: r.url.clone(),
            snippet: r.snippet.clone(),
            lang: r.lang.clone(),
        }
    }
}

/// What one search found, as the `search` event reports it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SearchStep {
    pub query: String,
    pub k: usize,
    pub hits: Vec<Hit>,
}

/// A result in a `search` event.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Hit {
    pub chunk_id: String,
    #[serde(default)]
    pub page_id: String,
    pub title: String,
    pub url: String,
    pub score: f32,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub dense: Option<f32>,
}

impl From<&SearchResult> for Hit {
    fn from(r: &SearchResult) -> Hit {
        Hit {
            chunk_id: r.chunk_id.clone(),
            page_id: r.page_id.clone(),
            title: r.title.clone(),
            url: r.url.clone(),
            score: r.score,
            dense: r.dense,
        }
    }
}

/// Milliseconds spent, as the `done` event reports them.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct ChatTimings {
    /// In searches (encoding included).
    pub search: f64,
    /// Waiting for the LLM.
    pub llm: f64,
    pub total: f64,
}

/// The final event, and the whole answer when not streaming.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Done {
    /// Names this answer, for feedback on it (`POST /api/feedback`'s `id`); set
    /// by the edge function, empty elsewhere.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub id: String,
    pub answer: String,
    /// The sources the answer cites (by their `[n]`), in citation order.
    pub citations: Vec<Source>,
    /// The knowledge base does not answer the question; `answer` says so and
    /// points to the closest pages, if any.
    pub abstained: bool,
    /// Composed from the sources' own sentences, without an LLM.
    pub extractive: bool,
    /// An LLM is configured but failed; this is the extractive fallback.
    pub degraded: bool,
    /// Search rounds taken.
    pub rounds: usize,
    pub timings_ms: ChatTimings,
}

/// One step of the agent, streamed as a Server-Sent Event named after the variant.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
pub enum Event {
    Search(SearchStep),
    Sources { sources: Vec<Source> },
    Token { text: String },
    Done(Done),
    Error { message: String },
}

impl Event {
    /// The SSE `event:` name.
    pub fn name(&self) -> &'static str {
        match self {
            Event::Search(_) => "search",
            Event::Sources { .. } => "sources",
            Event::Token { .. } => "token",
            Event::Done(_) => "done",
            Event::Error { .. } => "error",
        }
    }

    /// The event as one SSE frame: `event: NAME\ndata: JSON\n\n`.
    pub fn to_sse(&self) -> String {
        let data = serde_json::to_string(self).unwrap_or_else(|_| "{}".into());
        format!("event: {}\ndata: {data}\n\n", self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requests_are_bounded_and_must_end_with_the_user() {
        let ok = br#"{"messages":[{"role":"user","content":"How do I reset my password?"}],"stream":true}"#;
        let r = ChatRequest::parse(ok).unwrap();
        assert!(r.stream);
        assert_eq!(r.question(), "How do I reset my password?");
        for (body, field) in [
            (&b"not json"[..], "body"),
            (br#"{"messages":[]}"#, "messages"),
            (br#"{"messages":[{"role":"assistant","content":"hi"}]}"#, "messages"),
            (br#"{"messages":[{"role":"user","content":"  "}]}"#, "messages[0].content"),
            (br#"{"messages":[{"role":"user","content":""}]}"#, "messages[0].content"),
            (br#"{"messages":[{"role":"user","content":"\u3000"},{"role":"assistant","content":"a"},{"role":"user","content":"b"}]}"#, "messages[0].content"),
            (br#"{"messages":[{"role":"user","content":"a"}],"visitor":null}"#, "visitor"),
            (br#"{"messages":[{"role":"user","content":"a"}],"visitor":7}"#, "visitor"),
            (br#"{"messages":[{"role":"user","content":"a"}],"lang":null}"#, "lang"),
            (br#"{"messages":[{"role":"user","content":"a"}],"lang":"de DE"}"#, "lang"),
            (br#"{"messages":[{"role":"user","content":"a"}],"lang":["de"]}"#, "lang"),
            (br#"{"messages":[{"role":"user","content":"a"}],"lang":"abcdefghijklmnop"}"#, "lang"),
            (br#"{"messages":[{"role":"system","content":"x"}]}"#, "body"),
            (br#"{"messages":[{"role":"user","content":"x"}],"extra":1}"#, "body"),
            // serde would read these as positional structs; the contract's
            // objects are objects.
            (br#"[[{"role":"user","content":"x"}],true]"#, "body"),
            (br#"{"messages":[["user","x"]]}"#, "messages[0]"),
            (br#"{"messages":[{"role":"user","content":"a"},["user","x"]]}"#, "messages[1]"),
        ] {
            assert_eq!(ChatRequest::parse(body).unwrap_err().field, field, "{}", String::from_utf8_lossy(body));
        }
        let long = format!(r#"{{"messages":[{{"role":"user","content":"{}"}}]}}"#, "a".repeat(4001));
        assert_eq!(ChatRequest::parse(long.as_bytes()).unwrap_err().field, "messages[0].content");
        let visitor =
            |n: usize| format!(r#"{{"messages":[{{"role":"user","content":"a"}}],"visitor":"{}"}}"#, "v".repeat(n));
        assert_eq!(ChatRequest::parse(visitor(65).as_bytes()).unwrap_err().field, "visitor");
        assert_eq!(ChatRequest::parse(visitor(64).as_bytes()).unwrap().visitor.map(|v| v.len()), Some(64));
        // The reader's language: a tag, or `all` and empty for none.
        let lang = |l: &str| {
            let body = format!(r#"{{"messages":[{{"role":"user","content":"a"}}],"lang":"{l}"}}"#);
            ChatRequest::parse(body.as_bytes()).unwrap().lang.map(|t| t.to_string())
        };
        assert_eq!((lang("de").as_deref(), lang("zh_CN").as_deref()), (Some("de"), Some("zh-cn")));
        assert_eq!((lang("all"), lang("")), (None, None));
        // An assistant's turn may be empty (an answer the client never got); a
        // character Rust does not call white space (U+001C) is not blank.
        let r = ChatRequest::parse(
            br#"{"messages":[{"role":"user","content":"a"},{"role":"assistant","content":""},{"role":"user","content":"\u001c"}]}"#,
        )
        .unwrap();
        assert_eq!(r.question(), "\u{1c}");
        // Old turns beyond the budget are dropped, the newest kept.
        let turn = "b".repeat(3000);
        let msgs: Vec<String> = (0..10)
            .map(|i| format!(r#"{{"role":"{}","content":"{turn}"}}"#, if i % 2 == 0 { "user" } else { "assistant" }))
            .chain([r#"{"role":"user","content":"last"}"#.to_string()])
            .collect();
        let r = ChatRequest::parse(format!(r#"{{"messages":[{}]}}"#, msgs.join(",")).as_bytes()).unwrap();
        assert_eq!(r.messages.len(), 8);
        assert_eq!(r.question(), "last");
    }

    #[test]
    fn events_frame_as_sse() {
        let e = Event::Token { text: "Hello\nworld".into() };
        assert_eq!(e.to_sse(), "event: token\ndata: {\"text\":\"Hello\\nworld\"}\n\n");
    }
}
