//! `openapi.yaml` read once, and JSON values checked against its schemas with a
//! real JSON Schema validator (`jsonschema`). The file is OpenAPI 3.1, whose
//! schemas are JSON Schema 2020-12, so they are validated as they are written:
//! each check compiles `{"$ref": "#/components/schemas/NAME"}` inside a copy of the
//! document's `components`, so references between schemas resolve as in the file.
//! Formats (`date-time`) are asserted, not only annotated.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

use serde_json::{json, Value};

pub fn openapi() -> &'static Value {
    static DOC: OnceLock<Value> = OnceLock::new();
    DOC.get_or_init(|| {
        let text = std::fs::read_to_string(super::repo().join("openapi.yaml")).unwrap();
        let yaml: serde_norway::Value = serde_norway::from_str(&text).unwrap();
        serde_json::to_value(yaml).unwrap()
    })
}

/// The validator of `#/components/schemas/{name}`, compiled once.
pub fn validator(name: &str) -> Arc<jsonschema::Validator> {
    assert!(openapi()["components"]["schemas"].get(name).is_some(), "openapi.yaml has no schema {name}");
    validator_at(&format!("#/components/schemas/{name}"))
}

/// The validator of the schema at a JSON pointer into the document, compiled once.
fn validator_at(pointer: &str) -> Arc<jsonschema::Validator> {
    static CACHE: OnceLock<Mutex<HashMap<String, Arc<jsonschema::Validator>>>> = OnceLock::new();
    let mut cache = CACHE.get_or_init(Default::default).lock().unwrap_or_else(|e| e.into_inner());
    cache
        .entry(pointer.to_string())
        .or_insert_with(|| {
            let doc = openapi();
            assert!(
                doc["openapi"].as_str().is_some_and(|v| v.starts_with("3.1.")),
                "schemas are JSON Schema 2020-12 in 3.1"
            );
            let root = json!({
                "$schema": "https://json-schema.org/draft/2020-12/schema",
                "$ref": pointer,
                "components": doc["components"],
            });
            let v = jsonschema::options()
                .with_draft(jsonschema::Draft::Draft202012)
                .should_validate_formats(true)
                .build(&root)
                .unwrap_or_else(|e| panic!("openapi.yaml: the schema at {pointer} does not compile: {e}"));
            Arc::new(v)
        })
        .clone()
}

/// Errors of `value` against `#/components/schemas/{name}` (empty: valid).
pub fn check(name: &str, value: &Value) -> Vec<String> {
    validator(name).iter_errors(value).map(|e| format!("{}: {e}", e.instance_path())).collect()
}

/// Panics with every error when `value` does not match schema `name`.
pub fn assert_valid(name: &str, value: &Value) {
    let errs = check(name, value);
    assert!(errs.is_empty(), "response does not match openapi.yaml's {name}:\n{}\n{value:#}", errs.join("\n"));
}

/// Errors of one Server-Sent Event (its `event:` name and `data:` text) against
/// `ChatEvent`: the event as an SSE client reads it (`{"event", "data"}`, data a
/// string), then its data parsed as JSON against the `contentSchema` of the
/// branch that names the event. (`contentSchema` is an annotation in JSON Schema,
/// so it is applied here explicitly, as Schemathesis does.)
pub fn check_event(event: &str, data: &str) -> Vec<String> {
    let mut errs = check("ChatEvent", &json!({ "event": event, "data": data }));
    let branches = openapi()["components"]["schemas"]["ChatEvent"]["oneOf"].as_array().expect("ChatEvent.oneOf");
    let Some(i) = branches.iter().position(|b| b["properties"]["event"]["const"] == event) else {
        errs.push(format!("no ChatEvent branch documents the event `{event}`"));
        return errs;
    };
    let payload = &branches[i]["properties"]["data"];
    assert_eq!(payload["contentMediaType"], "application/json", "ChatEvent `{event}`: data is JSON");
    match serde_json::from_str::<Value>(data) {
        Ok(v) => errs.extend(
            validator_at(&format!("#/components/schemas/ChatEvent/oneOf/{i}/properties/data/contentSchema"))
                .iter_errors(&v)
                .map(|e| format!("data{}: {e}", e.instance_path())),
        ),
        Err(e) => errs.push(format!("data is not JSON ({e})")),
    }
    errs
}

/// Panics with every error when an SSE event does not match `ChatEvent`.
pub fn assert_event_valid(event: &str, data: &str) {
    let errs = check_event(event, data);
    assert!(errs.is_empty(), "event `{event}` does not match openapi.yaml's ChatEvent:\n{}\n{data}", errs.join("\n"));
}
