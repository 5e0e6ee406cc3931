//! Harness for the `search_query` target: the query string of `GET
//! /api/search` (`search_fn::api::SearchQuery::parse`), as any bytes a client can
//! send after the `?`. A query is accepted within its bounds or refused with the
//! parameter at fault; never a panic.

use search_fn::api::{SearchQuery, MAX_K, MAX_PAGE, MAX_QUERY_CHARS};

pub fn run(data: &[u8]) {
    // The component hands the parser the URI's query as a `str`; a URI cannot
    // carry other bytes, so invalid UTF-8 is read the way a lossy client would send it.
    let s = String::from_utf8_lossy(data);
    if let Ok(q) = SearchQuery::parse(&s) {
        assert!(q.k >= 1 && q.k <= MAX_K, "k {} out of bounds", q.k);
        assert!(q.page >= 1 && q.page <= MAX_PAGE, "page {} out of bounds", q.page);
        assert!(q.q.chars().count() <= MAX_QUERY_CHARS, "query of {} chars", q.q.chars().count());
    }
}
