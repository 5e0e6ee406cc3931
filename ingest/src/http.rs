//! What the requests of the Confluence and web runs share besides their retries
//! ([`crate::retry`]): the timeouts and the bounded read of an answer's body.

use std::time::Duration;

/// One request, body included, must finish within this.
pub(crate) const REQUEST_TIMEOUT: Duration = Duration::from_secs(60);
/// A connection must be made within this.
pub(crate) const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);
/// The largest answer read; a page or a sitemap is far smaller (the sitemap
/// protocol caps one at 50 MB).
const MAX_BODY: usize = 64 * 1024 * 1024;

/// A 2xx answer's body, refused past [`MAX_BODY`].
pub(crate) async fn read_body(mut resp: reqwest::Response) -> Result<Vec<u8>, String> {
    if resp.content_length().is_some_and(|n| n > MAX_BODY as u64) {
        return Err(format!("the answer is larger than {} MiB", MAX_BODY >> 20));
    }
    let mut body = Vec::new();
    while let Some(chunk) = resp.chunk().await.map_err(|e| kb_common::http::describe(&e))? {
        if body.len() + chunk.len() > MAX_BODY {
            return Err(format!("the answer is larger than {} MiB", MAX_BODY >> 20));
        }
        body.extend_from_slice(&chunk);
    }
    Ok(body)
}
