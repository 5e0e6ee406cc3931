//! `openapi.yaml` read once, and JSON values checked against its schemas: the
//! subset of JSON Schema the file uses (`$ref`, `type`, `enum`, `required`,
//! `properties`, `additionalProperties: false`, `items`, string lengths and number
//! bounds). Enough to make an undocumented or missing field fail a test.

use std::sync::OnceLock;

use serde_json::Value;

pub fn openapi() -> &'static Value {
    static DOC: OnceLock<Value> = OnceLock::new();
    DOC.get_or_init(|| {
        let text = std::fs::read_to_string(super::repo().join("openapi.yaml")).unwrap();
        let yaml: serde_norway::Value = serde_norway::from_str(&text).unwrap();
        serde_json::to_value(yaml).unwrap()
    })
}

/// Errors of `value` against `#/components/schemas/{name}` (empty: valid).
pub fn check(name: &str, value: &Value) -> Vec<String> {
    let mut errs = Vec::new();
    let schema = json!({ "$ref": format!("#/components/schemas/{name}") });
    walk(&schema, value, "$", &mut errs);
    errs
}

/// Panics with every error when `value` does not match schema `name`.
pub fn assert_valid(name: &str, value: &Value) {
    let errs = check(name, value);
    assert!(errs.is_empty(), "response does not match openapi.yaml's {name}:\n{}\n{value:#}", errs.join("\n"));
}

use serde_json::json;

fn resolve(r: &str) -> &'static Value {
    let mut v = openapi();
    for part in r.trim_start_matches("#/").split('/') {
        v = v.get(part).unwrap_or_else(|| panic!("openapi.yaml: dangling $ref {r}"));
    }
    v
}

fn type_ok(t: &str, v: &Value) -> bool {
    match t {
        "string" => v.is_string(),
        "integer" => v.is_i64() || v.is_u64(),
        "number" => v.is_number(),
        "boolean" => v.is_boolean(),
        "object" => v.is_object(),
        "array" => v.is_array(),
        "null" => v.is_null(),
        other => panic!("openapi.yaml: unsupported type {other}"),
    }
}

fn walk(s: &Value, v: &Value, at: &str, errs: &mut Vec<String>) {
    if let Some(r) = s.get("$ref").and_then(Value::as_str) {
        return walk(resolve(r), v, at, errs);
    }
    if let Some(t) = s.get("type") {
        let ok = match t {
            Value::String(t) => type_ok(t, v),
            Value::Array(ts) => ts.iter().filter_map(Value::as_str).any(|t| type_ok(t, v)),
            _ => true,
        };
        if !ok {
            errs.push(format!("{at}: expected {t}, got {v}"));
            return;
        }
    }
    if let Some(e) = s.get("enum").and_then(Value::as_array) {
        if !e.contains(v) {
            errs.push(format!("{at}: {v} is not one of {e:?}"));
        }
    }
    if let (Some(s_len), Some(text)) = (s.get("maxLength").and_then(Value::as_u64), v.as_str()) {
        if text.chars().count() as u64 > s_len {
            errs.push(format!("{at}: longer than {s_len}"));
        }
    }
    if let Some(n) = v.as_f64() {
        if s.get("minimum").and_then(Value::as_f64).is_some_and(|m| n < m) {
            errs.push(format!("{at}: {n} below the minimum"));
        }
        if s.get("maximum").and_then(Value::as_f64).is_some_and(|m| n > m) {
            errs.push(format!("{at}: {n} above the maximum"));
        }
    }
    if let Some(obj) = v.as_object() {
        let props = s.get("properties").and_then(Value::as_object);
        for r in s.get("required").and_then(Value::as_array).into_iter().flatten() {
            let r = r.as_str().unwrap_or_default();
            if !obj.contains_key(r) {
                errs.push(format!("{at}: missing required `{r}`"));
            }
        }
        for (k, val) in obj {
            match props.and_then(|p| p.get(k)) {
                Some(ps) => walk(ps, val, &format!("{at}.{k}"), errs),
                None if s.get("additionalProperties") == Some(&Value::Bool(false)) => {
                    errs.push(format!("{at}: `{k}` is not documented"))
                }
                None => {}
            }
        }
    }
    if let (Some(items), Some(arr)) = (s.get("items"), v.as_array()) {
        for (i, x) in arr.iter().enumerate() {
            walk(items, x, &format!("{at}[{i}]"), errs);
        }
    }
}
