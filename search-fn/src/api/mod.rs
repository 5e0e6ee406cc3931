//! The HTTP API of the edge function, as plain data in and out: a request's method,
//! path, query string and `Origin` go in; a status, headers and a JSON body come
//! out. No Spin types here, so the routing, the parameter checks, the errors and
//! CORS are unit-tested natively; `component.rs` is the thin Spin glue around it.
//!
//! What a public endpoint owes its operator is checked here too, before any work:
//! an `Origin` outside `allowed_origins` is refused (403) on the server, not only
//! by the browser; bodies must be `application/json` (a `text/plain` POST is a
//! "simple" request that skips the CORS preflight); and [`Route::bucket`] says which
//! per-client rate limit ([`crate::limit`]) a route draws from.
//!
//! The contract is documented in `openapi.yaml` at the repository root, and a test
//! keeps the two in step.
//!
//! One module per concern: [`config`] (the variables), [`reply`] (requests,
//! replies, errors), [`route`] (admission, dispatch, CORS), [`access`] (the
//! insights token), and one per endpoint: [`search`], [`chat`], [`feedback`].

mod access;
mod chat;
mod config;
mod feedback;
mod reply;
mod route;
mod search;

pub use access::{insights_access, now_unix};
pub use chat::{chat_extractive, chat_record, chat_request, chat_units, events_reply, name_answer, sse_headers};
pub use config::{
    insights_token, query_cache_size, AllowedOrigins, Backend, Config, LlmConfig, SettingError, MAX_QUERY_CACHE,
    MIN_INSIGHTS_TOKEN,
};
pub use feedback::{
    feedback, feedback_reply, insights_reply, rated_page, Feedback, FeedbackBody, FeedbackKept, PageFeedback,
    FEEDBACK_LIMITS,
};
pub use reply::{ApiError, Reply, Request};
pub use route::{admit, dispatch, handle, with_cors, Admission, Dispatch, Route};
pub use search::{is_blank, SearchQuery};

/// Longest query accepted, in characters.
pub const MAX_QUERY_CHARS: usize = 1000;

/// Most results per page.
pub const MAX_K: usize = 50;

/// Results per page when `k` is not given.
pub const DEFAULT_K: usize = 5;

/// Deepest page of results.
pub const MAX_PAGE: usize = 20;

/// The routes this function serves, with their methods (`spin.toml` routes
/// `/api/...` here; a test checks the two agree).
pub const ROUTES: &[(&str, &[&str])] = &[
    ("/api/search", &["GET"]),
    ("/api/health", &["GET"]),
    ("/api/chat", &["POST"]),
    ("/api/feedback", &["POST"]),
    ("/api/insights", &["GET"]),
];

/// Largest `POST /api/chat` body accepted, in bytes.
pub const MAX_CHAT_BODY: usize = 512 * 1024;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::limit::Bucket;
    use search_core::index::lang::LangChoice;
    use search_core::index::Mode;

    fn err(qs: &str) -> ApiError {
        SearchQuery::parse(qs).expect_err(qs)
    }

    #[test]
    fn backend_variables_are_checked_and_named_when_wrong() {
        assert_eq!(Backend::from_variables("", "", ""), Ok(Backend::Bundled));
        assert_eq!(Backend::from_variables("bundled", "postgres://x/db", "t"), Ok(Backend::Bundled));
        assert_eq!(
            Backend::from_variables("postgres", " postgres://a/db  postgres://b/db ", ""),
            Ok(Backend::Postgres {
                urls: vec!["postgres://a/db".into(), "postgres://b/db".into()],
                tenant: "default".into()
            })
        );
        assert!(Backend::from_variables("postgres", "", "t").unwrap_err().to_string().contains("postgres_url"));
        assert!(Backend::from_variables("postgres", "postgres://a/db", "a b")
            .unwrap_err()
            .to_string()
            .contains("tenant"));
        assert!(Backend::from_variables("mysql", "", "").unwrap_err().to_string().contains("search_backend"));
    }

    #[test]
    fn query_cache_size_is_bounded_and_named_when_wrong() {
        assert_eq!(query_cache_size(""), Ok(search_core::query_cache::DEFAULT_CAPACITY));
        assert_eq!(query_cache_size(" 0 "), Ok(0));
        assert_eq!(query_cache_size("65536"), Ok(MAX_QUERY_CACHE));
        for bad in ["65537", "-1", "lots", "1e3"] {
            let e = query_cache_size(bad).unwrap_err().to_string();
            assert!(e.starts_with("query_cache_size: `") && e.contains(bad), "{e}");
        }
    }

    #[test]
    fn search_query_defaults_and_decoding() {
        let q = SearchQuery::parse("q=reset+my%20password&unknown=1").unwrap();
        let want = SearchQuery {
            q: "reset my password".into(),
            k: DEFAULT_K,
            mode: None,
            page: 1,
            partial: false,
            lang: LangChoice::Question,
        };
        assert_eq!(q, want);
        // A language, every language (`all`, empty), or the question's (the default).
        let zh = SearchQuery::parse("q=a&lang=zh_CN").unwrap().lang;
        assert!(matches!(zh, LangChoice::Only(t) if t.as_str() == "zh-cn"), "{zh:?}");
        for all in ["all", ""] {
            assert_eq!(SearchQuery::parse(&format!("q=a&lang={all}")).unwrap().lang, LangChoice::Every, "{all}");
        }
        assert_eq!(SearchQuery::parse("q=a&lang=question").unwrap().lang, LangChoice::Question);
        let q = SearchQuery::parse("q=%C3%A9t%C3%A9&k=50&mode=bm25&page=20&partial=true").unwrap();
        assert_eq!((q.q.as_str(), q.k, q.mode, q.page, q.partial), ("été", 50, Some(Mode::Bm25), 20, true));
        for (v, partial) in [("true", true), ("false", false)] {
            assert_eq!(SearchQuery::parse(&format!("q=a&partial={v}")).unwrap().partial, partial, "{v}");
        }
        // Leading and trailing white space is not searched, and a character Rust
        // does not call white space (U+001C, which Python's `\s` does) is a query.
        assert_eq!(SearchQuery::parse("q=%20parking%E3%80%80").unwrap().q, "parking");
        assert_eq!(SearchQuery::parse("q=%1C").unwrap().q, "\u{1c}");
        assert_eq!(SearchQuery::parse("q=a&k=05&page=007").map(|q| (q.k, q.page)), Ok((5, 7)));
    }

    #[test]
    fn search_query_errors_name_the_parameter() {
        for (qs, param) in [
            ("", "q"),
            ("q=", "q"),
            ("q=%20%20", "q"),
            ("q=a&k=0", "k"),
            ("q=a&k=51", "k"),
            ("q=a&k=five", "k"),
            ("q=a&k=-1", "k"),
            ("q=a&page=0", "page"),
            ("q=a&page=21", "page"),
            ("q=a&mode=semantic", "mode"),
            ("q=a&mode=%20bm25", "mode"),
            ("q=a&mode=%20", "mode"),
            ("q=a&q=b", "q"),
            ("q=a&k=1&k=2", "k"),
            ("q=a&partial=yes", "partial"),
            ("q=a&lang=de%20DE", "lang"),
            ("q=a&lang=%3Cscript%3E", "lang"),
            ("q=a&lang=de&lang=fr", "lang"),
            ("q=a&partial=true&partial=true", "partial"),
            // A boolean is `true` or `false`, spelled exactly so.
            ("q=a&partial=", "partial"),
            ("q=a&partial=1", "partial"),
            ("q=a&partial=0", "partial"),
            ("q=a&partial=True", "partial"),
            ("q=a&partial=%20true", "partial"),
            // A whole number is digits: no sign, space or exponent.
            ("q=a&k=%2B5", "k"),
            ("q=a&k=%205", "k"),
            ("q=a&k=5%20", "k"),
            ("q=a&k=", "k"),
            ("q=a&page=1e1", "page"),
            ("q=a&page=99999999999999999999999", "page"),
            // Blank is every character white space, Unicode's included.
            ("q=%E3%80%80%C2%85%0B", "q"),
        ] {
            let e = err(qs);
            assert_eq!(
                (e.status, e.code, e.parameter.as_deref()),
                (400, "invalid_parameter", Some(param)),
                "{qs}: {e:?}"
            );
        }
        assert!(err("q=a&mode=semantic").message.contains("rrf, convex, dot, dense, bm25"));
    }

    #[test]
    fn query_length_is_counted_in_characters_as_sent() {
        let ok = "é".repeat(MAX_QUERY_CHARS);
        assert!(SearchQuery::parse(&format!("q={ok}")).is_ok());
        let e = err(&format!("q={ok}a"));
        assert!(e.message.contains("1001 characters"), "{}", e.message);
        // White space counts: maxLength is of the parameter as sent.
        let e = err(&format!("q=%20{}", "a".repeat(MAX_QUERY_CHARS)));
        assert_eq!(e.parameter.as_deref(), Some("q"));
        assert!(e.message.contains("1001 characters"), "{}", e.message);
    }

    #[test]
    fn blank_is_what_trim_removes() {
        for c in ['\t', '\n', '\u{b}', '\u{c}', '\r', ' ', '\u{85}', '\u{a0}', '\u{1680}', '\u{2000}', '\u{200a}'] {
            assert!(is_blank(&c.to_string()), "{c:?}");
        }
        for c in ['\u{2028}', '\u{2029}', '\u{202f}', '\u{205f}', '\u{3000}'] {
            assert!(is_blank(&c.to_string()), "{c:?}");
        }
        // Not white space to Rust, whatever a regex dialect's `\s` says.
        for c in ['\u{1c}', '\u{1f}', '\u{feff}', '\u{200b}', '\u{180e}', '\0', 'a'] {
            assert!(!is_blank(&c.to_string()), "{c:?}");
        }
        assert!(is_blank(""));
    }

    /// The feedback on an answer a body is (a test's body must be one).
    fn on_answer(body: &[u8]) -> Feedback {
        match feedback(body) {
            Ok(FeedbackBody::Answer(fb)) => fb,
            other => panic!("not feedback on an answer: {other:?}"),
        }
    }

    #[test]
    fn feedback_is_validated_recorded_and_logged_as_one_json_line() {
        let fb = on_answer(br#"{"id":"a1","rating":"down","comment":"Out of date","visitor":"v-123456789"}"#);
        let rec = fb.record();
        assert_eq!((rec.answer_id.as_str(), rec.up, rec.visitor.as_deref()), ("a1", false, Some("v-123456789")));
        assert_eq!(rec.comment.as_deref(), Some("Out of date"));
        let v: serde_json::Value = serde_json::from_str(&fb.line(0)).unwrap();
        assert_eq!(v["event"], "feedback");
        assert_eq!(v["time"], "1970-01-01T00:00:00Z");
        assert_eq!((v["rating"].as_str(), v["comment"].as_str()), (Some("down"), Some("Out of date")));
        assert_eq!(v["id"], "a1");
        for (body, param) in [
            (r#"{"id":"a","rating":"meh"}"#.to_string(), "rating"),
            (r#"{"id":"a","comment":"no rating"}"#.to_string(), "body"),
            (r#"{"rating":"up"}"#.to_string(), "body"),
            (format!(r#"{{"rating":"up","id":"{}"}}"#, "i".repeat(101)), "id"),
            (r#"{"id":"a","rating":"up","extra":1}"#.to_string(), "body"),
            // The answer's text is the store's, not the client's to send.
            (r#"{"id":"a","rating":"up","answer":"The assistant said: call 555"}"#.to_string(), "body"),
            (r#"{"id":"a","rating":"up","question":"q"}"#.to_string(), "body"),
            (format!(r#"{{"id":"a","rating":"up","comment":"{}"}}"#, "x".repeat(2001)), "comment"),
            ("not json".to_string(), "body"),
            (r#"{"id":7,"rating":"up"}"#.to_string(), "id"),
            (r#"{"id":"a","rating":"up","page":null}"#.to_string(), "page"),
            (format!(r#"{{"id":"a","rating":"up","visitor":"{}"}}"#, "v".repeat(65)), "visitor"),
            // serde reads a struct from an array, positionally; the API does not.
            (r#"["a1","down"]"#.to_string(), "body"),
            (r#"[null,"down"]"#.to_string(), "body"),
        ] {
            let e = feedback(body.as_bytes()).unwrap_err();
            assert_eq!((e.status, e.parameter.as_deref()), (400, Some(param)), "{body}: {}", e.message);
        }
    }

    #[test]
    fn feedback_on_a_page_names_a_page_of_the_site_or_is_refused() {
        let pages: std::collections::HashMap<String, String> =
            [("campus/parking/permits.html".to_string(), "p7".to_string())].into();
        let body = br#"{"page":"campus/parking/permits.html","rating":"down","comment":" The fee is old ","visitor":"v-123456789"}"#;
        let Ok(FeedbackBody::Page(pf)) = feedback(body) else { panic!("a page's feedback") };
        assert_eq!(rated_page(&pf.page, Some(&pages)), Ok(Some("p7".into())));
        let rec = pf.record(Some("p7".into()));
        assert_eq!(
            (rec.page.as_str(), rec.page_id.as_deref(), rec.up),
            ("campus/parking/permits.html", Some("p7"), false)
        );
        let v: serde_json::Value = serde_json::from_str(&pf.line(0)).unwrap();
        assert_eq!((v["event"].as_str(), v["comment"].as_str()), (Some("page_feedback"), Some("The fee is old")));
        // With an `id` it is an answer's, whatever page it came from.
        assert!(matches!(feedback(br#"{"id":"a1","page":"x.html","rating":"up"}"#), Ok(FeedbackBody::Answer(_))));
        // A page the index does not have, in any spelling, is refused by name.
        for page in
            ["campus/nope.html", "/campus/parking/permits.html", "https://x.example/campus/parking/permits.html", ""]
        {
            let e = rated_page(page, Some(&pages)).unwrap_err();
            assert_eq!((e.status, e.code, e.parameter.as_deref()), (400, "unknown_page", Some("page")), "{page}");
        }
        assert!(rated_page("campus/nope.html", Some(&pages)).unwrap_err().message.contains("campus/nope.html"));
        // With no list of pages (the PostgreSQL backend), a URL of a page's form only.
        assert_eq!(rated_page("campus/parking/permits.html", None), Ok(None));
        for page in
            ["/a.html", "../a.html", "a//b.html", "a.html?x=1", "a.html#top", "javascript:alert(1)", "a b.html", "a\\b"]
        {
            assert_eq!(rated_page(page, None).unwrap_err().code, "unknown_page", "{page}");
        }
        // The body's own faults, each named.
        let ok = |extra: &str| format!(r#"{{"page":"a.html","rating":"up"{extra}}}"#);
        for (body, param) in [
            (r#"{"page":"a.html","rating":"meh"}"#.to_string(), "rating"),
            (r#"{"page":"a.html"}"#.to_string(), "body"),
            (ok(&format!(r#","comment":"{}""#, "é".repeat(record_limit() + 1))), "comment"),
            (ok(r#","comment":null"#), "comment"),
            (ok(r#","question":"q""#), "body"),
            (format!(r#"{{"page":"{}","rating":"up"}}"#, "p".repeat(2001)), "page"),
            (r#"{"page":7,"rating":"up"}"#.to_string(), "page"),
        ] {
            let e = feedback(body.as_bytes()).unwrap_err();
            assert_eq!((e.status, e.parameter.as_deref()), (400, Some(param)), "{body}: {}", e.message);
        }
        assert!(feedback(ok(&format!(r#","comment":"{}""#, "é".repeat(record_limit()))).as_bytes()).is_ok());
        let e = feedback(br#"{"rating":"up"}"#).unwrap_err();
        assert!(e.message.contains("\"page\"") && e.message.contains("\"id\""), "{}", e.message);
    }

    fn record_limit() -> usize {
        search_service::insights::record::MAX_PAGE_COMMENT_CHARS
    }

    #[test]
    fn feedback_on_an_answer_never_given_is_404_and_the_rest_202() {
        let r = feedback_reply(FeedbackKept::UnknownAnswer, "made-up");
        assert_eq!(r.status, 404);
        let v: serde_json::Value = serde_json::from_slice(&r.body).unwrap();
        assert_eq!(
            (v["error"]["code"].as_str(), v["error"]["parameter"].as_str()),
            (Some("unknown_answer"), Some("id"))
        );
        assert!(v["error"]["message"].as_str().unwrap().contains("made-up"));
        for kept in [FeedbackKept::Stored, FeedbackKept::Logged] {
            assert_eq!(feedback_reply(kept, "a").status, 202);
        }
    }

    #[test]
    fn feedback_keeps_the_page_path_only_and_cuts_what_it_logs_and_stores() {
        let big = "\u{1F600}".repeat(2000);
        let body = serde_json::json!({ "id": "a1", "rating": "up", "page": "https://x.example/a?token=s#access_token=t",
            "comment": big });
        let fb = on_answer(&serde_json::to_vec(&body).unwrap());
        assert_eq!(fb.page.as_deref(), Some("/a"));
        assert_eq!(fb.record().page.as_deref(), Some("/a"));
        let line = fb.line(0);
        assert!(!line.contains("token") && !line.contains("x.example"), "{line}");
        assert!(line.len() < 8_000, "{}", line.len());
    }

    #[test]
    fn insights_need_the_bearer_token() {
        let now = 1_800_000_000;
        let token = "0123456789abcdef0123";
        let with = |auth: Option<&'static str>, query: &'static str| Request {
            query,
            authorization: auth,
            ..req("GET", "/api/insights", None)
        };
        let off = Config::default();
        let e = insights_access(&with(Some("Bearer x"), ""), &off, now).unwrap_err();
        assert_eq!((e.status, e.code), (403, "forbidden"));
        assert!(e.message.contains("insights_token"));
        // No credentials at all is a 401 whatever the configuration.
        assert_eq!(insights_access(&with(None, ""), &off, now).unwrap_err().status, 401);
        let cfg = Config { insights_token: insights_token(token).unwrap(), ..Config::default() };
        let e = insights_access(&with(None, ""), &cfg, now).unwrap_err();
        assert_eq!((e.status, e.code), (401, "unauthorized"));
        assert_eq!(e.reply().header("www-authenticate"), Some("Bearer realm=\"insights\""));
        assert_eq!(insights_access(&with(Some("Basic abc"), ""), &cfg, now).unwrap_err().status, 401);
        assert_eq!(insights_access(&with(Some("Bearer 0123456789abcdef0124"), ""), &cfg, now).unwrap_err().status, 403);
        assert_eq!(insights_access(&with(Some("Bearer 0123456789abcdef"), ""), &cfg, now).unwrap_err().status, 403);
        let ok = Some("bearer 0123456789abcdef0123");
        assert_eq!(insights_access(&with(ok, ""), &cfg, now), Ok(now - 30 * 86_400));
        assert_eq!(insights_access(&with(ok, "since=7d"), &cfg, now), Ok(now - 7 * 86_400));
        let e = insights_access(&with(ok, "since=soon"), &cfg, now).unwrap_err();
        assert_eq!((e.status, e.parameter.as_deref()), (400, Some("since")));
        // `since` exactly as openapi.yaml spells it: its pattern, or a date.
        for good in ["all", "1h", "999999w", "2026-11-01", "2024-02-29", "1970-01-01"] {
            assert!(insights_access(&with(ok, leak(format!("since={good}"))), &cfg, now).is_ok(), "{good}");
        }
        for bad in [
            "",
            "%2030d",
            "30d%20",
            "ALL",
            "030d",
            "0d",
            "1234567d",
            "30",
            "30m",
            "%2B202-01-01",
            "2026-1-01",
            "2026-02-30",
            "2026-11-01T00:00:00Z",
            "30d&since=7d",
        ] {
            let e = insights_access(&with(ok, leak(format!("since={bad}"))), &cfg, now).unwrap_err();
            assert_eq!((e.status, e.parameter.as_deref()), (400, Some("since")), "{bad}");
        }
        assert!(insights_token("short").unwrap_err().to_string().contains("at least 16"));
        assert!(insights_token("with space in the middle").is_err());
        assert_eq!(insights_token("  "), Ok(None));
        assert_eq!(Route::Insights.bucket(), Some(Bucket::Insights));
        // No credentials at all is refused at admission, before the rate limit
        // counts the request; credentials, right or wrong, go on to be counted.
        let (code, name, _) = status(admit(&with(None, ""), &cfg));
        assert_eq!((code, name.as_deref()), (401, Some("unauthorized")));
        assert_eq!(status(admit(&with(Some("Basic abc"), ""), &cfg)).0, 401);
        assert_eq!(status(admit(&with(Some("Bearer wrong"), ""), &cfg)).1.as_deref(), Some("Insights"));
    }

    /// A query string for [`Request`], which borrows it (tests only).
    fn leak(s: String) -> &'static str {
        Box::leak(s.into_boxed_str())
    }

    #[test]
    fn allowed_origins_parse() {
        assert_eq!(AllowedOrigins::parse("").unwrap(), AllowedOrigins::Any);
        assert_eq!(AllowedOrigins::parse(" * ").unwrap(), AllowedOrigins::Any);
        assert_eq!(
            AllowedOrigins::parse("https://a.example.edu/, http://localhost:8080").unwrap(),
            AllowedOrigins::List(vec!["https://a.example.edu".into(), "http://localhost:8080".into()])
        );
        for bad in ["a.example.edu", "https://", "https://a.edu/path", "ftp://a.edu"] {
            assert!(AllowedOrigins::parse(bad).is_err(), "{bad}");
        }
    }

    fn req<'a>(method: &'a str, path: &'a str, origin: Option<&'a str>) -> Request<'a> {
        Request { method, path, query: "q=x", origin, content_type: None, authorization: None }
    }

    fn listed(origins: &str) -> Config {
        Config { allowed_origins: AllowedOrigins::parse(origins).unwrap(), ..Config::default() }
    }

    fn status(a: Admission) -> (u16, Option<String>, Option<String>) {
        match a {
            Admission::Route(r) => (0, Some(format!("{r:?}")), None),
            Admission::Reply(r) => {
                let v: serde_json::Value = serde_json::from_slice(&r.body).unwrap_or_default();
                (r.status, v["error"]["code"].as_str().map(String::from), r.header("retry-after").map(String::from))
            }
        }
    }

    #[test]
    fn other_sites_are_refused_on_the_server_when_origins_are_listed() {
        let cfg = listed("https://www.example.edu");
        let chat = |origin, ct| Request { content_type: ct, ..req("POST", "/api/chat", origin) };
        let json = Some("application/json; charset=utf-8");
        // Listed, and no Origin at all: in.
        for origin in [Some("https://www.example.edu"), Some("https://WWW.example.edu/"), None] {
            assert_eq!(status(admit(&chat(origin, json), &cfg)).1.as_deref(), Some("Chat"), "{origin:?}");
        }
        // Any other site, `null` (sandboxed frames), a look-alike, and a page
        // whose origin is the request's Host but is not listed (a forged Host,
        // or DNS rebinding): 403, also for the preflight and for GETs.
        for origin in [
            "https://evil.example",
            "null",
            "https://www.example.edu.evil.example",
            "http://www.example.edu",
            "https://help.example.edu",
        ] {
            assert_eq!(status(admit(&chat(Some(origin), json), &cfg)).0, 403, "{origin}");
            assert_eq!(status(admit(&req("OPTIONS", "/api/chat", Some(origin)), &cfg)).0, 403);
            let (code, name, _) = status(admit(&req("GET", "/api/search", Some(origin)), &cfg));
            assert_eq!((code, name.as_deref()), (403, Some("forbidden_origin")));
        }
        // `*` lets every origin in.
        let any = Config::default();
        assert_eq!(status(admit(&chat(Some("https://evil.example"), json), &any)).1.as_deref(), Some("Chat"));
    }

    #[test]
    fn bodies_must_be_declared_json() {
        let cfg = Config::default();
        for path in ["/api/chat", "/api/feedback"] {
            for ct in [None, Some("text/plain"), Some("application/x-www-form-urlencoded"), Some("multipart/form-data")]
            {
                let r = Request { content_type: ct, ..req("POST", path, None) };
                let (code, name, _) = status(admit(&r, &cfg));
                assert_eq!((code, name.as_deref()), (415, Some("unsupported_media_type")), "{path} {ct:?}");
            }
            let r = Request { content_type: Some("Application/JSON"), ..req("POST", path, None) };
            assert_eq!(status(admit(&r, &cfg)).0, 0);
        }
        // GETs read no body.
        assert_eq!(status(admit(&req("GET", "/api/search", None), &cfg)).0, 0);
    }

    #[test]
    fn rate_limit_errors_carry_retry_after_and_name_the_endpoint() {
        let long = " (a long query counts as several)";
        for (bucket, path, note) in [
            (Bucket::Search, "/api/search", long),
            (Bucket::Chat, "/api/chat", long),
            (Bucket::Feedback, "/api/feedback", ""),
            (Bucket::Insights, "/api/insights", ""),
        ] {
            let r = ApiError::rate_limited(bucket, 20, 7).reply();
            assert_eq!((r.status, r.header("retry-after")), (429, Some("7")));
            let v: serde_json::Value = serde_json::from_slice(&r.body).unwrap();
            assert_eq!((v["error"]["status"].as_u64(), v["error"]["code"].as_str()), (Some(429), Some("rate_limited")));
            assert_eq!(
                v["error"]["message"],
                format!("more than 20 requests a minute to {path} from this address{note}; try again in 7 s")
            );
        }
        // Each limited route draws from its own bucket.
        for (route, bucket) in [
            (Route::Search, Some(Bucket::Search)),
            (Route::Chat, Some(Bucket::Chat)),
            (Route::Feedback, Some(Bucket::Feedback)),
            (Route::Insights, Some(Bucket::Insights)),
            (Route::Health, None),
        ] {
            assert_eq!(route.bucket(), bucket, "{route:?}");
            if let Some(b) = bucket {
                let path = ROUTES.iter().find(|(p, _)| *p == b.path()).map(|(p, _)| *p);
                assert_eq!(path, Some(b.path()), "{route:?} is limited under a route that exists");
            }
        }
    }

    #[test]
    fn routing_errors_without_an_index() {
        let clock = || 0.0;
        let cfg = Config::default();
        let r = handle(&req("GET", "/api/nope", None), Err("x"), &cfg, &clock);
        assert_eq!(r.status, 404);
        let v: serde_json::Value = serde_json::from_slice(&r.body).unwrap();
        assert_eq!(v["error"]["code"], "not_found");
        let r = handle(&req("POST", "/api/search", None), Err("x"), &cfg, &clock);
        assert_eq!((r.status, r.header("allow")), (405, Some("GET, OPTIONS")));
        let r = handle(&req("GET", "/api/search", None), Err("bad magic"), &cfg, &clock);
        assert_eq!(r.status, 503);
        assert!(String::from_utf8_lossy(&r.body).contains("bad magic"));
    }

    #[test]
    fn cors_any_and_list() {
        let clock = || 0.0;
        let any = Config::default();
        let r = handle(&req("OPTIONS", "/api/search", Some("https://x.org")), Err("x"), &any, &clock);
        assert_eq!(r.status, 204);
        assert_eq!(r.header("access-control-allow-origin"), Some("*"));
        assert_eq!(r.header("access-control-allow-methods"), Some("GET, OPTIONS"));
        let list = listed("https://www.example.edu");
        let r = handle(&req("OPTIONS", "/api/search", Some("https://WWW.example.edu")), Err("x"), &list, &clock);
        assert_eq!(r.header("access-control-allow-origin"), Some("https://www.example.edu"));
        assert_eq!(r.header("vary"), Some("Origin"));
        let r = handle(&req("GET", "/api/search", Some("https://evil.example")), Err("x"), &list, &clock);
        assert_eq!((r.status, r.header("access-control-allow-origin")), (403, None));
    }
}
