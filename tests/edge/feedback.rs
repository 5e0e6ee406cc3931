//! `POST /api/feedback` through `site-builder serve` (a subprocess, so its log
//! can be read): validated, answered 202, and, with recording off, written as one
//! JSON line: with no store there is no answer to check the id against, and the
//! line names the id; a page's rating is still checked against the index, then
//! logged the same way (recorded feedback is in `insights.rs`).

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};

use serde_json::Value;

use crate::support::schema::assert_valid;
use crate::support::{demo, request};

#[test]
#[ignore = "needs the model and the wasm32-wasip2 target (the demo built and its component compiled): scripts/test runs it"]
fn without_recording_feedback_is_a_structured_log_line() {
    let d = demo();
    let mut child = Command::new(env!("CARGO_BIN_EXE_site-builder"))
        .args(["serve", "--quiet", "--addr", "127.0.0.1:0", "--out"])
        .arg(&d.dist)
        .arg("--component")
        .arg(&d.component)
        .arg("--state")
        .arg(crate::support::state_dir())
        .env("SPIN_VARIABLE_INSIGHTS_RECORDING", "off")
        .stderr(Stdio::piped())
        .stdout(Stdio::null())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
    let banner = lines.by_ref().map_while(Result::ok).find(|l| l.starts_with("Serving")).expect("the serve banner");
    let base = banner.split_whitespace().find(|w| w.starts_with("http://")).unwrap().trim_end_matches('/').to_string();
    let url = format!("{base}/api/feedback");

    let json = ("content-type", "application/json");
    let bad = request("POST", &url, &[json], Some(br#"{"id":"a1","rating":"sideways"}"#));
    assert_eq!(bad.status, 400);
    assert_valid("Error", &bad.json());
    assert_eq!(bad.json()["error"]["parameter"], "rating");

    let body = br#"{"id":"0123456789abcdef0123456789abcdef","rating":"down","comment":"The fee is out of date","page":"https://www.example.edu/"}"#;
    let r = request("POST", &url, &[json, ("origin", "https://www.example.edu")], Some(body));
    assert_eq!(r.status, 202, "{}", r.text());
    assert_eq!(r.json()["status"], "recorded");
    assert_eq!(r.header("access-control-allow-origin"), Some("*"));

    let line = lines
        .by_ref()
        .map_while(Result::ok)
        .find(|l| l.starts_with('{') && l.contains("\"event\":\"feedback\""))
        .expect("a feedback log line");
    let v: Value = serde_json::from_str(&line).unwrap();
    assert_eq!(v["rating"], "down");
    assert_eq!(v["comment"], "The fee is out of date");
    assert_eq!(v["id"], "0123456789abcdef0123456789abcdef");
    assert_eq!(v["page"], "/");
    assert!(v["time"].as_str().unwrap().ends_with('Z'));

    // A token in the page's URL is not logged: the path only, whatever the client sent.
    let body = br#"{"id":"a1","rating":"up","page":"https://x.example/a?token=s#access_token=t"}"#;
    let r = request("POST", &url, &[json], Some(body));
    assert_eq!(r.status, 202, "{}", r.text());
    let line = lines
        .by_ref()
        .map_while(Result::ok)
        .find(|l| l.starts_with('{') && l.contains("\"event\":\"feedback\""))
        .expect("a feedback log line");
    assert!(!line.contains("token") && !line.contains("x.example"), "{line}");
    let v: Value = serde_json::from_str(&line).unwrap();
    assert_eq!(v["page"], "/a");

    // A page's rating, with no store either: checked against the index all the
    // same (a page the site does not have is refused), then logged as one line.
    let bad = request("POST", &url, &[json], Some(br#"{"page":"campus/no-such-page.html","rating":"up"}"#));
    assert_eq!((bad.status, bad.json()["error"]["code"].as_str()), (400, Some("unknown_page")), "{}", bad.text());
    let body =
        br#"{"page":"it-services/vpn.html","rating":"down","comment":"  Which client for Linux?  ","visitor":"<x>"}"#;
    let r = request("POST", &url, &[json], Some(body));
    assert_eq!(r.status, 202, "{}", r.text());
    let line = lines
        .map_while(Result::ok)
        .find(|l| l.starts_with('{') && l.contains("\"event\":\"page_feedback\""))
        .expect("a page feedback log line");
    let v: Value = serde_json::from_str(&line).unwrap();
    assert_eq!((v["page"].as_str(), v["rating"].as_str()), (Some("it-services/vpn.html"), Some("down")));
    assert_eq!(v["comment"], "Which client for Linux?");
    assert!(v.get("visitor").is_none(), "not the widget's kind of id: not logged ({line})");
    let _ = child.kill();
    let _ = child.wait();
}
