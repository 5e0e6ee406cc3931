//! A fault in the function reaches the user as a prompt JSON error, never as a
//! hang, and the host goes on serving: a panic and a trap give 500, a request that
//! computes forever gives 504 at the timeout while other requests are answered.

use std::time::{Duration, Instant};

use crate::support::schema::assert_valid;
use crate::support::{build_component, demo, get};

fn faulty_host(timeout: Duration) -> edge_host::Running {
    static WASM: std::sync::OnceLock<std::path::PathBuf> = std::sync::OnceLock::new();
    let wasm = WASM.get_or_init(|| build_component("faulty-fn", &[]));
    edge_host::spawn(edge_host::HostConfig {
        addr: "127.0.0.1:0".parse().unwrap(),
        request_timeout: timeout,
        ..edge_host::HostConfig::search_fn(
            demo().dist.join("site"),
            wasm.clone(),
            edge_host::Variables::defaults(),
            crate::support::state_dir(),
        )
    })
    .unwrap()
}

#[test]
#[ignore = "needs the model and the wasm32-wasip2 target (the demo built and its component compiled): scripts/test runs it"]
fn panics_and_traps_become_500_and_the_host_recovers() {
    let h = faulty_host(Duration::from_secs(10));
    for path in ["/api/panic", "/api/trap", "/api/panic"] {
        // A 500, not the timeout's 504: the fault ended the request at once.
        let r = get(&format!("{}{path}", h.url()));
        assert_eq!(r.status, 500, "{path}: {}", r.text());
        assert_valid("Error", &r.json());
        assert_eq!(r.json()["error"]["code"], "internal");
        let r = get(&format!("{}/api/ok", h.url()));
        assert_eq!((r.status, r.text().as_str()), (200, "ok"), "after {path}");
    }
}

#[test]
#[ignore = "needs the model and the wasm32-wasip2 target (the demo built and its component compiled): scripts/test runs it"]
fn a_function_that_never_answers_gets_504_at_the_timeout() {
    let timeout = Duration::from_secs(5);
    let h = faulty_host(timeout);
    let url = h.url();
    let stuck = std::thread::spawn(move || {
        let t = Instant::now();
        let r = get(&format!("{url}/api/loop"));
        (r.status, r.json(), t.elapsed())
    });
    // While one instance spins, others answer: the other request is answered
    // while the stuck one is still waiting for its timeout (an order, not a
    // duration, so a loaded machine cannot fail it).
    std::thread::sleep(Duration::from_millis(300));
    let r = get(&format!("{}/api/ok", h.url()));
    assert_eq!(r.status, 200);
    assert!(!stuck.is_finished(), "ok was answered only once the stuck request had ended");
    let (status, body, took) = stuck.join().unwrap();
    assert_eq!(status, 504, "{body}");
    assert_valid("Error", &body);
    assert_eq!(body["error"]["code"], "timeout");
    assert!(took >= timeout, "answered after {took:?}, before the timeout");
    assert_eq!(get(&format!("{}/api/ok", h.url())).status, 200, "the host still serves");
}
