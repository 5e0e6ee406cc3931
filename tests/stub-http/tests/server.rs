//! The stub server over real HTTP: bodies (chunked ones too) reach the handler
//! whole, streamed chunks arrive paced, a panicking handler answers 500, and a
//! dropped server stops at once, even with a response stalled.

use std::io::Read;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use stub_http::{Request, Response, StubServer};

/// The workspace's client (its TLS set up once: in a workspace build reqwest
/// carries `rustls-no-provider`, and a bare builder would panic).
fn client() -> reqwest::blocking::Client {
    kb_common::http::blocking_client().timeout(Duration::from_secs(20)).build().unwrap()
}

#[test]
fn the_handler_sees_the_request_and_its_answer_is_sent() {
    let seen: Arc<Mutex<Vec<Request>>> = Arc::default();
    let log = seen.clone();
    let server = StubServer::start(move |req| {
        log.lock().unwrap().push(req.clone());
        Response::new(201).header("x-one", "1").header("content-type", "text/plain").body(format!("got {}", req.text()))
    });
    assert!(server.url().starts_with("http://127.0.0.1:"));
    let r = client()
        .post(format!("{}/a/b?x=1&y=2", server.url()))
        .header("Authorization", "Bearer t")
        .body("hello")
        .send()
        .unwrap();
    assert_eq!(r.status(), 201);
    assert_eq!(r.headers()["x-one"], "1");
    assert_eq!(r.headers()["content-length"], "9");
    assert_eq!(r.text().unwrap(), "got hello");
    // A body of unknown length goes chunked; hyper hands it over decoded.
    let big = "x".repeat(100_000);
    let r = client()
        .put(format!("{}/c", server.url()))
        .body(reqwest::blocking::Body::new(std::io::Cursor::new(big.clone().into_bytes())))
        .send()
        .unwrap();
    assert_eq!(r.text().unwrap(), format!("got {big}"));
    let seen = seen.lock().unwrap();
    assert_eq!(
        (seen[0].method(), seen[0].target(), seen[0].path(), seen[0].query()),
        ("POST", "/a/b?x=1&y=2", "/a/b", "x=1&y=2")
    );
    assert_eq!(seen[0].header("AUTHORIZATION"), Some("Bearer t"));
    assert!(seen[0].headers().any(|(k, v)| k == "authorization" && v == "Bearer t"));
    assert_eq!(seen[0].body(), b"hello");
    assert_eq!(seen[1].header("transfer-encoding"), Some("chunked"));
    assert_eq!((seen[1].method(), seen[1].query(), seen[1].body().len()), ("PUT", "", 100_000));
}

#[test]
fn chunks_are_streamed_after_their_delays() {
    let server = StubServer::start(|_| {
        Response::new(200)
            .header("content-type", "text/event-stream")
            .chunk(Duration::ZERO, "data: 1\n\n")
            .chunk(Duration::from_millis(300), "")
            .chunk(Duration::ZERO, "data: 2\n\n")
    });
    let start = Instant::now();
    let mut r = client().get(server.url()).send().unwrap();
    let mut first = [0u8; 9];
    r.read_exact(&mut first).unwrap();
    assert_eq!(&first, b"data: 1\n\n");
    let first_at = start.elapsed();
    let mut rest = String::new();
    r.read_to_string(&mut rest).unwrap();
    assert_eq!(rest, "data: 2\n\n", "an empty chunk is a pause, not the end");
    assert!(start.elapsed() >= first_at + Duration::from_millis(250), "{:?} then {:?}", first_at, start.elapsed());
}

#[test]
fn a_panicking_handler_answers_500_and_the_server_goes_on() {
    let server = StubServer::start(|req| match req.path() {
        "/boom" => panic!("on purpose"),
        _ => Response::new(200).body("fine"),
    });
    let r = client().get(format!("{}/boom", server.url())).send().unwrap();
    assert_eq!(r.status(), 500);
    assert!(r.text().unwrap().contains("on purpose"));
    assert_eq!(client().get(server.url()).send().unwrap().text().unwrap(), "fine");
}

#[test]
fn dropping_the_server_cuts_stalled_responses_off() {
    // A client without a timeout: the request can only end early if the server
    // cuts it, and a drop that waited for the stall would let it succeed.
    let server = StubServer::start(|_| Response::new(200).delay(Duration::from_secs(600)));
    let url = server.url();
    let client = kb_common::http::blocking_client().timeout(None).build().unwrap();
    let request = std::thread::spawn(move || client.get(url).send().map(|r| r.status()));
    std::thread::sleep(Duration::from_millis(200));
    let addr = server.addr();
    drop(server);
    assert!(request.join().unwrap().is_err(), "the stalled request ends without a response");
    assert!(std::net::TcpStream::connect(addr).is_err(), "nobody listens any more");
}
