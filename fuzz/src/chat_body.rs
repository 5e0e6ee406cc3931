//! Harness for the `chat_body` target: the body of `POST /api/chat`, through
//! `search_fn::api::chat_request` (the component's entry) and
//! `search_service::agent::ChatRequest::parse` (what it wraps). Accepted requests
//! keep to the documented bounds; refused ones name a field; never a panic.

use search_service::agent::ChatRequest;

pub fn run(data: &[u8]) {
    let direct = ChatRequest::parse(data);
    let api = search_fn::api::chat_request(data);
    // The component's wrapper refuses exactly what the parser refuses.
    assert_eq!(direct.is_ok(), api.is_ok());
    match direct {
        Ok(req) => {
            assert!(!req.messages.is_empty());
            // What the agent builds from it must serialise.
            let _ = serde_json::to_string(&req.messages.iter().map(|m| &m.content).collect::<Vec<_>>());
        }
        Err(e) => assert!(!e.field.is_empty() && !e.message.is_empty()),
    }
}
