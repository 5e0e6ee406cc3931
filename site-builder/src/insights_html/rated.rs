//! "Pages readers rated": each page's "Was this helpful?" answers as a table
//! row (yes, no, the helpful share, its latest comments), worst first as the
//! report orders them. Comments are what readers typed: the template escapes
//! them like every other value.

use search_service::insights::report::{PageRating, Report};
use serde::Serialize;

use super::dates::When;
use super::format::{count, percent, plural};
use super::links::Link;

/// Below this helpful share a page's row is marked for a look.
const WARN_BELOW: f64 = 0.5;

#[derive(Debug, Clone, Serialize)]
pub(super) struct RatedView {
    /// `4 pages rated: 9 yes, 5 no.`
    summary: String,
    items: Vec<RatedPage>,
}

#[derive(Debug, Clone, Serialize)]
struct RatedPage {
    link: Link,
    yes: String,
    no: String,
    /// `33%`
    helpful: String,
    /// `warn` below [`WARN_BELOW`], else empty.
    tone: &'static str,
    last: When,
    comments: Vec<CommentView>,
}

#[derive(Debug, Clone, Serialize)]
struct CommentView {
    /// `Yes` or `No`: the answer it came with.
    rating: &'static str,
    time: When,
    comment: String,
}

pub(super) fn view(r: &Report) -> RatedView {
    let (yes, no) = r.pages_rated.iter().fold((0, 0), |(y, n), p| (y + p.yes, n + p.no));
    RatedView {
        summary: format!(
            "{} rated: {} yes, {} no.",
            plural(r.pages_rated.len() as u64, "page", "pages"),
            count(yes),
            count(no)
        ),
        items: r.pages_rated.iter().map(page).collect(),
    }
}

fn page(p: &PageRating) -> RatedPage {
    RatedPage {
        link: Link::page(&p.page),
        yes: count(p.yes),
        no: count(p.no),
        helpful: percent(p.helpful),
        tone: if p.helpful < WARN_BELOW { "warn" } else { "" },
        last: When::new(&p.last),
        comments: p
            .comments
            .iter()
            .map(|c| CommentView {
                rating: if c.rating == "up" { "Yes" } else { "No" },
                time: When::new(&c.time),
                comment: c.comment.clone(),
            })
            .collect(),
    }
}
