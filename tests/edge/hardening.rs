//! The public-internet defences, through the real component in the local host:
//! origins refused on the server, bodies that must be JSON, per-client rate limits
//! kept in the key-value store (shared by instances, surviving a restart, not
//! fooled by a forged client header), body limits, outbound requests only to the
//! allowed LLM origin, slow clients (header and body deadlines, per-address
//! requests in flight), and the headers files and pages are served with.

use std::time::Duration;

use serde_json::json;

use crate::support::llm::{answer, ScriptedLlm};
use crate::support::schema::assert_valid;
use crate::support::{demo, request, start, Resp};

const JSON: (&str, &str) = ("content-type", "application/json");

fn chat_body() -> Vec<u8> {
    serde_json::to_vec(&json!({ "messages": [{ "role": "user", "content": "How do I buy a parking permit?" }] }))
        .unwrap()
}

fn error_code(r: &Resp) -> String {
    assert_valid("Error", &r.json());
    r.json()["error"]["code"].as_str().unwrap_or_default().to_string()
}

#[test]
#[ignore = "needs the model and the wasm32-wasip2 target (the demo built and its component compiled): scripts/test runs it"]
fn other_sites_and_non_json_bodies_are_refused_by_the_server() {
    let host = start(&[("allowed_origins", "https://www.example.edu")]);
    let chat = format!("{}/api/chat", host.url());
    let body = chat_body();
    // Another site driving its visitors' browsers: 403 before any work, with no
    // CORS grant.
    for origin in ["https://evil.example", "null"] {
        let r = request("POST", &chat, &[JSON, ("origin", origin)], Some(&body));
        assert_eq!((r.status, error_code(&r).as_str()), (403, "forbidden_origin"), "{origin}");
        assert_eq!(r.header("access-control-allow-origin"), None);
        let r = request("GET", &format!("{}/api/search?q=parking", host.url()), &[("origin", origin)], None);
        assert_eq!(r.status, 403, "{origin}");
    }
    // The listed site and no Origin: served.
    for origin in [Some("https://www.example.edu"), None] {
        let mut headers = vec![JSON];
        headers.extend(origin.map(|o| ("origin", o)));
        let r = request("POST", &chat, &headers, Some(&body));
        assert_eq!(r.status, 200, "{origin:?}: {}", r.text());
    }
    // An Origin that matches the Host proves nothing: the client sends both (a
    // forged Host, or a DNS name rebound to this server). Refused unless listed,
    // on the search, the chat and the feedback alike.
    let own = host.url();
    let addr = own.trim_start_matches("http://").to_string();
    for (forged_host, origin) in [("attacker.example", "http://attacker.example"), (addr.as_str(), own.as_str())] {
        let headers = [JSON, ("host", forged_host), ("origin", origin)];
        let r = request("POST", &chat, &headers, Some(&body));
        assert_eq!((r.status, error_code(&r).as_str()), (403, "forbidden_origin"), "{forged_host}");
        let r = request("GET", &format!("{own}/api/search?q=parking"), &headers[1..], None);
        assert_eq!(r.status, 403, "{forged_host}");
        let r = request("POST", &format!("{own}/api/feedback"), &headers, Some(br#"{"id":"a1","rating":"up"}"#));
        assert_eq!(r.status, 403, "{forged_host}");
    }

    // A "simple" cross-site POST (text/plain needs no preflight) is refused even
    // from an allowed origin: the API takes JSON only.
    for ct in ["text/plain", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x"] {
        let r = request("POST", &chat, &[("content-type", ct)], Some(&body));
        assert_eq!((r.status, error_code(&r).as_str()), (415, "unsupported_media_type"), "{ct}");
        let r = request("POST", &format!("{}/api/feedback", host.url()), &[("content-type", ct)], Some(b"{}"));
        assert_eq!(r.status, 415, "{ct}");
    }
    let r = request("POST", &chat, &[], Some(&body));
    assert_eq!(r.status, 415);
    // Bodies past the limit: 413, whatever they claim to be.
    let huge = vec![b'{'; 600 * 1024];
    let r = request("POST", &chat, &[JSON], Some(&huge));
    assert_eq!((r.status, error_code(&r).as_str()), (413, "too_large"));
}

#[test]
#[ignore = "needs the model and the wasm32-wasip2 target (the demo built and its component compiled): scripts/test runs it"]
fn clients_over_the_limit_get_429_with_retry_after_and_the_counts_outlive_the_host() {
    let state = crate::support::state_dir();
    let limits = [("search_rate_limit", "5"), ("chat_rate_limit", "2")];
    let d = demo();
    let start_on = |state: &std::path::Path| {
        let mut variables = edge_host::Variables::defaults();
        for (n, v) in limits {
            variables.set(n, v).unwrap();
        }
        edge_host::spawn(edge_host::HostConfig {
            addr: "127.0.0.1:0".parse().unwrap(),
            ..edge_host::HostConfig::search_fn(d.dist.join("site"), d.component.clone(), variables, state.to_path_buf())
        })
        .unwrap()
    };
    let host = start_on(&state);
    let search = |h: &edge_host::Running, forged: &str| {
        request("GET", &format!("{}/api/search?q=parking&mode=bm25", h.url()), &[("spin-client-addr", forged)], None)
    };
    // A client forging the platform's address header changes nothing: the host
    // sets it from the connection.
    let statuses: Vec<u16> = (0..8).map(|i| search(&host, &format!("203.0.113.{i}:1")).status).collect();
    assert_eq!(statuses, [200, 200, 200, 200, 200, 429, 429, 429]);
    let r = search(&host, "198.51.100.1:1");
    assert_eq!(error_code(&r), "rate_limited");
    let retry: u64 = r.header("retry-after").expect("Retry-After").parse().expect("seconds");
    assert!((1..=120).contains(&retry), "{retry}");
    // Health checks are not limited; chat has its own, smaller allowance.
    assert_eq!(request("GET", &format!("{}/api/health", host.url()), &[], None).status, 200);
    let chat = |h: &edge_host::Running| request("POST", &format!("{}/api/chat", h.url()), &[JSON], Some(&chat_body()));
    assert_eq!([chat(&host).status, chat(&host).status, chat(&host).status], [200, 200, 429]);
    // The counters are in the state folder's SQLite file, not in the process: a
    // restarted host still refuses.
    drop(host);
    assert!(state.join(edge_host::key_value::FILE_NAME).is_file());
    let again = start_on(&state);
    assert_eq!(search(&again, "x").status, 429);
    assert_eq!(chat(&again).status, 429);
}

/// `n` words no vocabulary has whole, so each is several word pieces, and no
/// two queries alike (a cached vector would cost nothing): `seed` tells them apart.
fn long_text(seed: usize, chars: usize) -> String {
    let mut text = String::new();
    for i in 0.. {
        let word = format!("zq{seed}x{i}vk ");
        if text.len() + word.len() > chars {
            break;
        }
        text.push_str(&word);
    }
    text.trim_end().to_string()
}

#[test]
#[ignore = "needs the model and the wasm32-wasip2 target (the demo built and its component compiled): scripts/test runs it"]
fn long_queries_spend_the_budget_as_the_work_they_are() {
    // 64 searches a minute. A 1,000-character query of distinct words fills the
    // encoder (256 pieces, 8 units): 8 pass, then the client waits, ordinary
    // questions included. Before: 64 of them passed, each 50-100 times the work.
    let host = start(&[("search_rate_limit", "64"), ("chat_rate_limit", "20")]);
    let search =
        |q: &str| request("GET", &format!("{}/api/search?q={}", host.url(), q.replace(' ', "+")), &[], None).status;
    let statuses: Vec<u16> = (0..12).map(|i| search(&long_text(i, 1000))).collect();
    assert_eq!(statuses.iter().filter(|s| **s == 200).count(), 8, "{statuses:?}");
    assert_eq!(statuses[8..], [429; 4]);
    assert_eq!(search("parking permit"), 429, "the budget is spent");
    // BM25 alone encodes nothing: an ordinary cost, whatever the length.
    let other = start(&[("search_rate_limit", "8")]);
    let bm25 = |i: usize| {
        let q = long_text(i, 1000).replace(' ', "+");
        request("GET", &format!("{}/api/search?q={q}&mode=bm25", other.url()), &[], None).status
    };
    let statuses: Vec<u16> = (0..9).map(bm25).collect();
    assert_eq!(statuses, [200, 200, 200, 200, 200, 200, 200, 200, 429]);
    // A chat of long parts: each search the agent runs is charged (12 units for
    // six searches of 256 pieces), so 20 chats a minute become a few; six
    // ordinary chats would all pass.
    let chat = |i: usize| {
        let text =
            format!("{}? {}? {}?", long_text(3 * i, 1300), long_text(3 * i + 1, 1300), long_text(3 * i + 2, 1300));
        let body = serde_json::to_vec(&json!({ "messages": [{ "role": "user", "content": text }] })).unwrap();
        request("POST", &format!("{}/api/chat", host.url()), &[JSON], Some(&body)).status
    };
    let statuses: Vec<u16> = (0..6).map(chat).collect();
    let passed = statuses.iter().take_while(|s| **s == 200).count();
    assert!((1..=5).contains(&passed) && statuses[passed..].iter().all(|s| *s == 429), "{statuses:?}");
}

#[test]
#[ignore = "needs the model and the wasm32-wasip2 target (the demo built and its component compiled): scripts/test runs it"]
fn concurrent_instances_share_one_count() {
    let host = start(&[("search_rate_limit", "20")]);
    let url = format!("{}/api/search?q=parking+permit&mode=bm25", host.url());
    // 8 at a time: the host runs one instance per concurrent request, so the
    // count must live outside the instances to hold.
    let statuses: Vec<u16> = std::thread::scope(|s| {
        let workers: Vec<_> = (0..8)
            .map(|_| s.spawn(|| (0..10).map(|_| request("GET", &url, &[], None).status).collect::<Vec<u16>>()))
            .collect();
        workers.into_iter().flat_map(|w| w.join().unwrap()).collect()
    });
    let ok = statuses.iter().filter(|s| **s == 200).count();
    let limited = statuses.iter().filter(|s| **s == 429).count();
    assert_eq!(ok + limited, 80, "only 200 and 429: {statuses:?}");
    // Each request adds itself with an atomic increment before it is judged, so
    // no count is lost however the 8 overlap: exactly the limit passes. (One more
    // if the burst straddles a minute boundary, as the previous minute's weight
    // fades during it.)
    assert!((20..=21).contains(&ok), "{ok} of 80 passed a limit of 20");
    // Refused requests took themselves back out: the store holds the passes.
    let kv = edge_host::key_value::KeyValue::open(host.state()).expect("state");
    let counted: i64 = kv
        .keys("default")
        .expect("keys")
        .iter()
        .filter(|k| k.starts_with("ratelimit/search/"))
        .map(|k| i64::from_be_bytes(kv.get("default", k).expect("get").expect("value").try_into().expect("8 bytes")))
        .sum();
    assert_eq!(counted, ok as i64, "the counters hold the requests that passed");
}

#[test]
#[ignore = "needs the model and the wasm32-wasip2 target (the demo built and its component compiled): scripts/test runs it"]
fn the_function_reaches_only_the_allowed_llm_origin() {
    let llm = ScriptedLlm::start(vec![answer("It is sold online [1].")]);
    // The LLM is on 127.0.0.1, but only the provider's origin is allowed.
    let host = start(&[
        ("llm_base_url", &llm.base_url()),
        ("llm_model", "m"),
        ("llm_allowed_outbound_host", "https://api.openai.com"),
    ]);
    let ask = |h: &edge_host::Running| {
        let body = br#"{"messages":[{"role":"user","content":"parking permit?"}],"stream":false}"#;
        let r = request("POST", &format!("{}/api/chat", h.url()), &[JSON], Some(body));
        assert_eq!(r.status, 200, "{}", r.text());
        r.json()
    };
    let v = ask(&host);
    assert_eq!(v["degraded"], true, "the denied call falls back to the extractive answer: {v:#}");
    std::thread::sleep(Duration::from_millis(200));
    assert!(llm.requests().is_empty(), "a request left the sandbox: {:?}", llm.requests());
    // With the origin allowed, the same host configuration reaches it.
    let allowed = start(&[
        ("llm_base_url", &llm.base_url()),
        ("llm_model", "m"),
        ("llm_allowed_outbound_host", llm.base_url().trim_end_matches("/v1")),
    ]);
    assert_eq!(ask(&allowed)["degraded"], false);
    assert_eq!(llm.requests().len(), 1);
}

/// The first line of an HTTP response on `stream` (its status code), or `None` if
/// the server closed the connection without one.
fn status_line(stream: &mut std::net::TcpStream) -> Option<u16> {
    use std::io::Read;
    let mut got = Vec::new();
    let mut buf = [0u8; 1024];
    while !got.windows(2).any(|w| w == b"\r\n") {
        match stream.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => got.extend_from_slice(&buf[..n]),
        }
    }
    let line = String::from_utf8_lossy(&got).lines().next().unwrap_or("").to_string();
    line.split_whitespace().nth(1).and_then(|s| s.parse().ok())
}

/// Whether the server closes `stream` (reads until end of file). A connection
/// the server keeps open is given up on after a minute: a guard against a hang,
/// far past the deadlines the tests set, not a measure of them.
fn closed_by_server(stream: &mut std::net::TcpStream) -> bool {
    use std::io::Read;
    stream.set_read_timeout(Some(Duration::from_secs(60))).unwrap();
    let mut buf = [0u8; 4096];
    loop {
        match stream.read(&mut buf) {
            Ok(0) => return true,
            Ok(_) => continue,
            Err(e) => return e.kind() == std::io::ErrorKind::ConnectionReset,
        }
    }
}

/// Whether the server has answered on `stream` yet (bytes waiting, or closed).
fn answered_yet(stream: &std::net::TcpStream) -> bool {
    stream.set_nonblocking(true).unwrap();
    let mut buf = [0u8; 1];
    let answered = !matches!(stream.peek(&mut buf), Err(e) if e.kind() == std::io::ErrorKind::WouldBlock);
    stream.set_nonblocking(false).unwrap();
    answered
}

/// 256 slow POSTs from one address (headers, then 1 byte of a 100-byte body:
/// enough to hold all 256 of the host's function slots before the host read
/// bodies itself) beside a reader at another address: the reader's searches are
/// all answered while the slow requests still hold their slots; those are
/// answered 408 when the body deadline passes (at most `in_flight_per_client` of
/// them: the rest 429 at once), not 504 at the function's timeout; a connection
/// that sends half its headers, or sits idle after a request, is closed at the
/// header deadline. Orders and statuses, not durations: a loaded machine
/// cannot fail them.
#[test]
#[ignore = "needs the model and the wasm32-wasip2 target (the demo built and its component compiled): scripts/test runs it"]
fn slow_clients_hold_neither_the_function_nor_other_readers() {
    use std::io::Write;
    use std::net::TcpStream;
    let limits = edge_host::Limits {
        header_timeout: Duration::from_secs(2),
        // Long enough that the reader's searches come before it on any machine.
        body_timeout: Duration::from_secs(10),
        ..edge_host::Limits::default()
    };
    // No chat limit: the function's own limit (20 a minute) would refuse most slow
    // requests before reading their bodies; here only the host stands in the way.
    let host = crate::support::start_configured(demo(), &[("chat_rate_limit", "0")], |c| c.limits = limits);
    let addr = host.addr();
    // The reader is another address: all of 127.0.0.0/8 is this machine.
    let reader = kb_common::http::blocking_client()
        .local_address(std::net::IpAddr::from([127, 0, 0, 2]))
        .timeout(Duration::from_secs(60))
        .build()
        .unwrap();
    let search = |q: &str| reader.get(format!("{}/api/search?q={q}&mode=bm25", host.url())).send().unwrap().status();
    assert_eq!(search("warm+up"), 200);

    let mut slow: Vec<TcpStream> = (0..edge_host::server::MAX_API_REQUESTS)
        .map(|_| {
            let mut s = TcpStream::connect(addr).unwrap();
            write!(
                s,
                "POST /api/chat HTTP/1.1\r\nhost: {addr}\r\ncontent-type: application/json\r\ncontent-length: 100\r\n\r\n{{"
            )
            .unwrap();
            s
        })
        .collect();
    // Give the host a moment to take them all in.
    std::thread::sleep(Duration::from_millis(300));
    for q in ["parking+permit", "wifi", "library+hours", "student+id+card", "vpn", "printing", "email", "exam"] {
        assert_eq!(search(q), 200, "{q} during the attack");
    }
    // Which slow requests had been answered while the reader was served.
    let answered_during: Vec<bool> = slow.iter().map(answered_yet).collect();

    // The slow requests: 408 at the body deadline (those in flight), 429 at once
    // (the rest); a 408, not the 504 of the function's request timeout.
    let mut statuses = std::collections::BTreeMap::<u16, usize>::new();
    for (s, answered) in slow.iter_mut().zip(&answered_during) {
        s.set_read_timeout(Some(Duration::from_secs(60))).unwrap();
        let status = status_line(s).unwrap_or(0);
        *statuses.entry(status).or_default() += 1;
        assert!(status != 408 || !answered, "a slow body was answered before the reader was served");
    }
    let in_flight = limits.in_flight_per_client;
    assert_eq!(
        statuses,
        [(408, in_flight), (429, edge_host::server::MAX_API_REQUESTS - in_flight)].into_iter().collect(),
        "slow bodies answered"
    );

    // Headers: half a request line, or an idle kept-alive connection, is closed at
    // the header deadline.
    let mut half = TcpStream::connect(addr).unwrap();
    half.write_all(b"GET /api/health HTTP/1.1\r\nhost: x").unwrap();
    assert!(closed_by_server(&mut half), "half-sent headers kept the connection open");
    let mut idle = TcpStream::connect(addr).unwrap();
    idle.write_all(format!("GET /api/health HTTP/1.1\r\nhost: {addr}\r\n\r\n").as_bytes()).unwrap();
    assert_eq!(status_line(&mut idle), Some(200));
    assert!(closed_by_server(&mut idle), "an idle connection was kept past the header deadline");

    // Bodies still arrive whole, declared by length or chunked.
    let r = request("POST", &format!("{}/api/chat", host.url()), &[JSON], Some(&chat_body()));
    assert_eq!(r.status, 200, "{}", r.text());
    let mut chunked = TcpStream::connect(addr).unwrap();
    let body = String::from_utf8(chat_body()).unwrap();
    let (a, b) = body.split_at(10);
    write!(
        chunked,
        "POST /api/chat HTTP/1.1\r\nhost: {addr}\r\ncontent-type: application/json\r\ntransfer-encoding: chunked\r\nconnection: close\r\n\r\n{:x}\r\n{a}\r\n{:x}\r\n{b}\r\n0\r\n\r\n",
        a.len(),
        b.len()
    )
    .unwrap();
    chunked.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
    assert_eq!(status_line(&mut chunked), Some(200));
    // A body over the host's cap is refused before it is read.
    let r = request(
        "POST",
        &format!("{}/api/chat", host.url()),
        &[JSON],
        Some(&vec![b' '; edge_host::server::MAX_BODY_BYTES + 1]),
    );
    assert_eq!((r.status, error_code(&r).as_str()), (413, "too_large"));
}

/// Headers for what the host serves: the pages the build generated carry their
/// `<meta>` policy as a header too, with `frame-ancestors 'self'` and
/// `X-Frame-Options`, so no other site can frame them; files copied from the
/// content folder are sandboxed (and HTML or XML ones are downloads); everything,
/// the API's answers included, is `nosniff`.
#[test]
#[ignore = "needs the model and the wasm32-wasip2 target (the demo built and its component compiled): scripts/test runs it"]
fn linked_files_are_sandboxed_and_pages_refuse_framing() {
    let kb = crate::support::built("tests/hostile");
    let host = crate::support::start_over(&kb, &[]);
    let get = |p: &str| request("GET", &format!("{}/{p}", host.url()), &[], None);
    for page in ["", "search.html", "hostile/linked-files.html", "hostile/raw-html.html", "sections/hostile.html"] {
        let r = get(page);
        assert_eq!(r.status, 200, "{page}");
        let csp = r.header("content-security-policy").unwrap_or_else(|| panic!("{page}: no CSP header"));
        // The page's own policy, word for word, plus what only a header can say.
        let html = r.text();
        let meta = html
            .split("http-equiv=\"Content-Security-Policy\" content=\"")
            .nth(1)
            .and_then(|s| s.split('"').next())
            .unwrap_or_else(|| panic!("{page}: no CSP meta"));
        assert_eq!(csp, format!("{meta}; frame-ancestors 'self'"), "{page}");
        assert_eq!(r.header("x-frame-options"), Some("SAMEORIGIN"), "{page}");
        assert_eq!(r.header("x-content-type-options"), Some("nosniff"), "{page}");
        assert_eq!(r.header("content-disposition"), None, "{page}");
    }
    let r = get("no/such/page.html");
    assert_eq!(r.status, 404);
    assert_eq!(r.header("x-frame-options"), Some("SAMEORIGIN"), "the site's 404 page is a page");
    for (file, ctype, download) in [
        ("hostile/files/diagram.svg", "image/svg+xml", false),
        ("hostile/files/plain.svg", "image/svg+xml", false),
        ("hostile/files/form.html", "text/html; charset=utf-8", true),
        ("hostile/files/old-page.htm", "text/html; charset=utf-8", true),
        ("hostile/files/feed.xml", "text/xml; charset=utf-8", true),
        ("hostile/files/manual.pdf", "application/pdf", false),
    ] {
        let r = get(file);
        assert_eq!(r.status, 200, "{file}");
        assert_eq!(r.header("content-type"), Some(ctype), "{file}");
        assert_eq!(r.header("x-content-type-options"), Some("nosniff"), "{file}");
        assert_eq!(r.header("content-security-policy"), Some(edge_host::static_files::FILE_CSP), "{file}");
        assert_eq!(r.header("content-disposition").is_some(), download, "{file}");
    }
    let csp = edge_host::static_files::FILE_CSP;
    assert!(csp.contains("sandbox") && csp.starts_with("default-src 'none'"), "{csp}");
    for api in ["api/health", "api/search?q=vpn", "api/nothing"] {
        let r = get(api);
        assert_eq!(r.header("x-content-type-options"), Some("nosniff"), "{api}");
        assert!(r.header("content-security-policy").is_some_and(|c| c.contains("frame-ancestors 'none'")), "{api}");
    }
}
