//! Harness for the `llm_reply` target: what an OpenAI-compatible endpoint sends
//! back, whole (`search_service::agent::openai::parse_reply`) and streamed
//! (`search_service::agent::react::ReplyStream`, fed in arbitrary pieces as a network
//! would cut them). Any bytes are a reply or an error; the streamed reading of
//! the same bytes must not depend on where they were cut.

use search_service::agent::openai::{parse_reply, Reply, ReplyError};
use search_service::agent::react::ReplyStream;

pub fn run(data: &[u8]) {
    let _ = parse_reply(data);
    // The first byte chooses the cut sizes (1 to 16 bytes, cycling), the rest is
    // the stream; read once whole and once in pieces.
    let Some((&seed, body)) = data.split_first() else { return };
    let whole = read(body, &[body.len().max(1)]);
    let sizes: Vec<usize> = (0..8).map(|i| 1 + usize::from(seed.rotate_left(i) % 16)).collect();
    let pieces = read(body, &sizes);
    // The assembled reply does not depend on the cuts. (The text shown on the way
    // may: text before a tool call is shown only if it arrived in an earlier piece.)
    let reply = |r: &Result<(String, Reply), ReplyError>| r.as_ref().map(|(_, reply)| reply.clone()).map_err(|_| ());
    assert_eq!(reply(&whole), reply(&pieces), "the reply depends on how the stream was cut");
    if let Ok((shown, reply)) = &pieces {
        if reply.tool_calls.is_empty() {
            // Without a tool call, everything shown is the answer, marker removed.
            assert!(reply.content.trim_start().ends_with(shown.trim_start()) || shown.is_empty(), "{shown:?}");
        }
    }
}

/// The text shown as it arrived and the reply (or the error) of a stream cut
/// into pieces of `sizes` bytes (cycling).
fn read(body: &[u8], sizes: &[usize]) -> Result<(String, Reply), ReplyError> {
    let mut stream = ReplyStream::default();
    let mut shown = String::new();
    let mut rest = body;
    for &n in sizes.iter().cycle() {
        if rest.is_empty() {
            break;
        }
        let (piece, tail) = rest.split_at(n.min(rest.len()));
        rest = tail;
        if let Some(text) = stream.push(piece)? {
            shown.push_str(&text);
        }
    }
    let (reply, held) = stream.finish()?;
    shown.push_str(&held.unwrap_or_default());
    Ok((shown, reply))
}
