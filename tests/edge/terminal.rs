//! `site-builder chat`: the same agent in a terminal session, driven through its
//! standard input like a user would, with and without an LLM.

use std::io::Write;
use std::process::{Command, Stdio};

use crate::support::demo;
use crate::support::llm::{answer, search, ScriptedLlm, Step};

/// Runs `site-builder chat` over the demo index with these lines typed in and
/// these Spin variables in the environment (and no `.env`); returns stdout.
fn session(lines: &str, vars: &[(&str, &str)]) -> String {
    let o = chat(lines, vars);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    String::from_utf8(o.stdout).unwrap()
}

/// [`session`], whatever the command's exit.
fn chat(lines: &str, vars: &[(&str, &str)]) -> std::process::Output {
    let dir = tempfile::tempdir().unwrap();
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_site-builder"));
    cmd.args(["chat", "--index"]).arg(demo().dist.join("index.bin")).current_dir(dir.path());
    for (k, _) in std::env::vars().filter(|(k, _)| k.starts_with("SPIN_VARIABLE_")) {
        cmd.env_remove(k);
    }
    for (k, v) in vars {
        cmd.env(k, v);
    }
    let mut child = cmd.stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap();
    child.stdin.take().unwrap().write_all(lines.as_bytes()).unwrap();
    child.wait_with_output().unwrap()
}

#[test]
#[ignore = "needs the model and the wasm32-wasip2 target (the demo built and its component compiled): scripts/test runs it"]
fn without_an_llm_the_terminal_answers_extractively() {
    let out = session("How do I buy a parking permit?\n\nexit\n", &[]);
    assert!(out.starts_with("Knowledge-base assistant\n"), "{out}");
    assert!(out.contains("answers are extractive"), "{out}");
    assert!(out.contains("searched: How do I buy a parking permit?"), "{out}");
    assert!(out.contains("[1]") && out.contains("Sources\n  [1] "), "{out}");
    assert!(out.contains("buying-a-parking-permit.html#"), "{out}");
    assert!(out.contains("(extractive answer)"), "{out}");
    assert!(out.trim_end().ends_with("Goodbye."), "{out}");
}

#[test]
#[ignore = "needs the model and the wasm32-wasip2 target (the demo built and its component compiled): scripts/test runs it"]
fn with_an_llm_the_terminal_streams_the_cited_answer() {
    let llm = ScriptedLlm::start(vec![search("parking permit"), answer("Buy it in the parking portal [1].")]);
    let url = llm.base_url();
    let out = session(
        "How do I get a parking permit?\nquit\n",
        &[
            ("SPIN_VARIABLE_LLM_BASE_URL", &url),
            ("SPIN_VARIABLE_LLM_MODEL", "scripted"),
            ("SPIN_VARIABLE_LLM_TIMEOUT_SECS", "2"),
        ],
    );
    assert!(out.contains("Model: scripted at"), "{out}");
    assert!(out.contains("searched: parking permit"), "{out}");
    assert!(out.contains("Buy it in the parking portal [1]."), "{out}");
    assert!(out.contains("Sources\n  [1] ") && out.contains("parking"), "{out}");
    assert!(!out.contains("extractive"), "{out}");
    assert_eq!(llm.requests().len(), 2);
    assert_eq!(llm.requests()[0]["stream"], true);
}

#[test]
#[ignore = "needs the model and the wasm32-wasip2 target (the demo built and its component compiled): scripts/test runs it"]
fn when_the_llm_fails_the_terminal_says_so_and_still_answers() {
    let llm = ScriptedLlm::start(vec![Step::Status(503, "busy".into())]);
    let url = llm.base_url();
    let out = session(
        "How do I buy a parking permit?\n",
        &[("SPIN_VARIABLE_LLM_BASE_URL", &url), ("SPIN_VARIABLE_LLM_MODEL", "scripted")],
    );
    assert!(out.contains("HTTP 503"), "{out}");
    assert!(out.contains("(extractive answer; the LLM failed)"), "{out}");
    assert!(out.contains("Sources\n  [1] "), "{out}");
}

#[test]
#[ignore = "needs the model and the wasm32-wasip2 target (the demo built and its component compiled): scripts/test runs it"]
fn the_terminal_applies_the_edge_functions_llm_rules() {
    // A base URL without a model is refused, naming the variable, as the edge
    // function refuses it (no silent default model).
    let o = chat("", &[("SPIN_VARIABLE_LLM_BASE_URL", "http://127.0.0.1:9/v1")]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("llm_model"), "{}", String::from_utf8_lossy(&o.stderr));

    // The total budget holds here too: a slow first reply uses up
    // llm_max_total_secs, so no second call is made and the answer is extractive.
    let llm = ScriptedLlm::start_paced(
        vec![search("parking permit"), answer("Buy it in the parking portal [1].")],
        std::time::Duration::from_millis(400),
    );
    let url = llm.base_url();
    let out = session(
        "How do I get a parking permit?\n",
        &[
            ("SPIN_VARIABLE_LLM_BASE_URL", &url),
            ("SPIN_VARIABLE_LLM_MODEL", "scripted"),
            ("SPIN_VARIABLE_LLM_MAX_TOTAL_SECS", "1"),
        ],
    );
    assert!(out.contains("llm_max_total_secs"), "{out}");
    assert!(out.contains("Sources\n  [1] "), "{out}");
    assert_eq!(llm.requests().len(), 1, "a call was made past the budget");
}
