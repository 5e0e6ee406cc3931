//! The Confluence run (`site-builder ingest confluence`): the page tree under a
//! root page, copied over [`super::Client`] into the content folder, each page
//! converted by [`crate::storage`]. The run's phases and its state file are
//! described in [`super`].

use std::collections::{BTreeMap, HashMap, HashSet};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::time::Instant;

use futures_util::stream::{self, StreamExt};
use indicatif::ProgressBar;
use kb_common::frontmatter::Frontmatter;
use kb_common::percent::encode_segment;
use kb_common::slug::slugify;
use kb_common::write::{write_atomic, WriteError};
use serde::{Deserialize, Serialize};

use super::client::{self, Client, FetchError};
use crate::folder::{load_json_state, relative, save_json_state, StateError, STATE_SAVE_INTERVAL};
use crate::storage;

/// The state file, inside the output folder.
pub const STATE_FILE: &str = ".confluence-state.json";

/// What to ingest and where.
#[derive(Debug, Clone)]
pub struct IngestOptions {
    /// The Confluence base URL (`https://wiki.example.org` or `…/wiki`).
    pub base_url: String,
    /// Id of the page whose tree is copied; it becomes `OUT/index.md`.
    pub root_page: String,
    pub out: PathBuf,
    /// Name of the environment variable holding a bearer token.
    pub token_env: Option<String>,
    /// Requests in flight at once.
    pub concurrency: usize,
    /// Delete the files of pages that left the tree.
    pub prune: bool,
    /// Draw a progress bar on stderr.
    pub progress: bool,
    /// Children asked for per listing request.
    pub page_size: usize,
}

/// Why an ingest could not run or had to stop.
#[derive(Debug, thiserror::Error)]
pub enum IngestError {
    #[error("--token-env {0}: the environment variable {0} is not set; export it with your Confluence API token")]
    TokenUnset(String),
    #[error("{0}")]
    Fetch(FetchError),
    #[error("{source}\nstopped after writing {written} page(s); they are recorded in {state}, so a rerun resumes")]
    Stopped { source: FetchError, written: usize, state: PathBuf },
    #[error(transparent)]
    State(#[from] StateError),
    #[error(transparent)]
    Write(#[from] WriteError),
}

/// A page that was not written, and why.
#[derive(Debug, Clone, Serialize)]
pub struct Skipped {
    pub page_id: String,
    pub title: String,
    pub reason: String,
}

impl Skipped {
    fn of(node: &Node, reason: String) -> Skipped {
        Skipped { page_id: node.id.clone(), title: node.title.clone(), reason }
    }
}

/// A page recorded by an earlier run that is no longer in the tree.
#[derive(Debug, Clone, Serialize)]
pub struct Gone {
    pub page_id: String,
    pub path: String,
    pub pruned: bool,
}

/// What a run did.
#[derive(Debug, Default, Clone, Serialize)]
pub struct Summary {
    /// Pages in the tree.
    pub listed: usize,
    /// Page bodies fetched.
    pub fetched: usize,
    /// Pages whose version and path were unchanged and whose file exists.
    pub unchanged: usize,
    pub written: usize,
    pub skipped: Vec<Skipped>,
    pub gone: Vec<Gone>,
    /// Requests retried (429, 5xx, dropped connections).
    pub retries: usize,
}

impl Summary {
    /// The end-of-run text.
    pub fn text(&self) -> String {
        let pruned = self.gone.iter().filter(|g| g.pruned).count();
        let mut s = format!(
            "{} pages in the tree: {} fetched, {} unchanged, {} written, {} skipped, {} gone ({} pruned), {} retries\n",
            self.listed,
            self.fetched,
            self.unchanged,
            self.written,
            self.skipped.len(),
            self.gone.len(),
            pruned,
            self.retries
        );
        for k in &self.skipped {
            let _ = writeln!(s, "  skipped page {} ({}): {}", k.page_id, k.title, k.reason);
        }
        for g in &self.gone {
            let what = if g.pruned { "deleted" } else { "kept; pass --prune to delete it" };
            let _ = writeln!(s, "  gone: page {} ({}), {what}", g.page_id, g.path);
        }
        s
    }
}

#[derive(Debug, Clone, Serialize, Deserialize)]
struct StateEntry {
    version: u64,
    path: String,
    #[serde(default)]
    title: String,
}

#[derive(Debug, Default, Serialize, Deserialize)]
struct State {
    #[serde(default)]
    base_url: String,
    #[serde(default)]
    root_page: String,
    #[serde(default)]
    pages: BTreeMap<String, StateEntry>,
}

/// A page of the listed tree.
#[derive(Debug, Clone)]
struct Node {
    id: String,
    title: String,
    version: u64,
    parent: Option<usize>,
    children: Vec<usize>,
    /// File path relative to OUT, `/`-separated.
    path: String,
}

/// Links to pages of the tree become paths relative to the linking page.
struct TreeLinks<'a> {
    by_title: &'a HashMap<String, String>,
    from_dir: Vec<&'a str>,
}

impl storage::LinkResolver for TreeLinks<'_> {
    fn page_link(&self, title: &str) -> String {
        match self.by_title.get(title) {
            Some(target) => relative(&self.from_dir, target),
            None => storage::TitleLinks.page_link(title),
        }
    }
}

/// Ingests the tree under `opts.root_page`.
pub fn ingest_confluence(opts: &IngestOptions) -> Result<Summary, IngestError> {
    let token = match &opts.token_env {
        Some(name) => match std::env::var(name) {
            Ok(t) if !t.trim().is_empty() => Some(t.trim().to_string()),
            _ => return Err(IngestError::TokenUnset(name.clone())),
        },
        None => None,
    };
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| IngestError::Fetch(FetchError::Client { message: e.to_string() }))?;
    runtime.block_on(run(opts, token))
}

/// The run on the runtime: phase 1 lists the tree, phase 2 fetches and writes the
/// pages that changed, then the pages that left the tree are dealt with.
async fn run(opts: &IngestOptions, token: Option<String>) -> Result<Summary, IngestError> {
    let mut client = Client::new(&opts.base_url, token).map_err(IngestError::Fetch)?;
    client.page_size = opts.page_size.max(1);
    let client = client;
    let in_flight = opts.concurrency.max(1);
    let bar = if opts.progress { ProgressBar::new_spinner() } else { ProgressBar::hidden() };
    bar.set_message("listing the page tree");

    // Phase 1: the tree, without bodies.
    let mut nodes = list_tree(&client, &opts.root_page, in_flight, &bar).await?;
    assign_paths(&mut nodes);
    let mut by_title: HashMap<String, String> = HashMap::new();
    for n in &nodes {
        by_title.entry(n.title.clone()).or_insert_with(|| n.path.clone());
    }

    // Phase 2: fetch what changed.
    let state_path = opts.out.join(STATE_FILE);
    let mut state = load_json_state::<State>(&state_path)?;
    state.base_url = client.base().to_string();
    state.root_page = opts.root_page.clone();
    let mut summary = Summary { listed: nodes.len(), ..Summary::default() };
    let todo = changed(&nodes, &state, &opts.out, &mut summary);
    bar.finish_and_clear();
    let bar = if opts.progress { ProgressBar::new(todo.len() as u64) } else { ProgressBar::hidden() };
    bar.set_message("fetching pages");

    // The files pages of the tree live in: a moved or pruned page's old file is
    // deleted only when no page lives there now.
    let live_paths: HashSet<&str> = nodes.iter().map(|n| n.path.as_str()).collect();
    let writer = PageWriter { nodes: &nodes, by_title: &by_title, base: client.base() };
    let fetching = Fetching { opts, client: &client, writer, live_paths: &live_paths, state_path: &state_path };
    let fetched = fetching.fetch(todo, in_flight, &mut state, &mut summary, &bar).await;
    bar.finish_and_clear();
    summary.retries = client.retries();
    if let Err(stop) = fetched {
        return Err(stopped(stop.error, stop.unsaved.then_some(&state), state_path, summary.written));
    }

    // Pages that left the tree.
    leave_gone(opts, &nodes, &live_paths, &mut state, &mut summary)?;
    save_json_state(&state_path, &state)?;
    summary.skipped.sort_by(|a, b| a.page_id.cmp(&b.page_id));
    Ok(summary)
}

/// Phase 2: what fetching and writing the changed pages works with.
struct Fetching<'a> {
    opts: &'a IngestOptions,
    client: &'a Client,
    writer: PageWriter<'a>,
    live_paths: &'a HashSet<&'a str>,
    state_path: &'a Path,
}

/// Why phase 2 stopped, and whether the state holds records not saved yet.
struct Stop {
    error: IngestError,
    unsaved: bool,
}

impl Fetching<'_> {
    /// Fetches the `todo` nodes' pages, `in_flight` at a time, and writes each as
    /// its answer arrives, saving the state at most every [`STATE_SAVE_INTERVAL`].
    /// A page that fails is skipped; refused credentials, a file or the state that
    /// cannot be written stop the run.
    async fn fetch(
        &self,
        todo: Vec<usize>,
        in_flight: usize,
        state: &mut State,
        summary: &mut Summary,
        bar: &ProgressBar,
    ) -> Result<(), Stop> {
        let (client, nodes) = (self.client, self.writer.nodes);
        let mut answers = stream::iter(todo)
            .map(|n| async move { (n, client.page(&nodes[n].id, "body.storage,version,ancestors").await) })
            .buffer_unordered(in_flight);
        let mut saved_at = Instant::now();
        let mut unsaved = false;
        while let Some((n, answer)) = answers.next().await {
            let node = &nodes[n];
            let page = match answer {
                Ok(page) => page,
                // Refused credentials stop the run; returning drops `answers`,
                // which cancels what is in flight.
                Err(e) if e.is_fatal() => return Err(Stop { error: IngestError::Fetch(e), unsaved }),
                Err(e) => {
                    summary.skipped.push(Skipped::of(node, e.to_string()));
                    continue;
                }
            };
            summary.fetched += 1;
            match self.write(node, &page, state, summary) {
                Ok(true) => unsaved = true,
                Ok(false) => continue,
                Err(error) => return Err(Stop { error, unsaved }),
            }
            if saved_at.elapsed() >= STATE_SAVE_INTERVAL {
                if let Err(error) = save_json_state(self.state_path, state) {
                    return Err(Stop { error: error.into(), unsaved });
                }
                (saved_at, unsaved) = (Instant::now(), false);
            }
            bar.inc(1);
        }
        Ok(())
    }

    /// Writes a fetched page's file and records it in the state: `Ok(false)` when
    /// the page is skipped instead (it cannot be converted).
    fn write(
        &self,
        node: &Node,
        page: &client::Page,
        state: &mut State,
        summary: &mut Summary,
    ) -> Result<bool, IngestError> {
        let (text, version) = match self.writer.markdown(node, page) {
            Ok(t) => t,
            Err(reason) => {
                summary.skipped.push(Skipped::of(node, reason));
                return Ok(false);
            }
        };
        write_atomic(&self.opts.out.join(&node.path), text.as_bytes())?;
        summary.written += 1;
        let old = state
            .pages
            .insert(node.id.clone(), StateEntry { version, path: node.path.clone(), title: node.title.clone() });
        // A moved page leaves its old file behind unless another page now lives there.
        if let Some(old) = old {
            if old.path != node.path && !self.live_paths.contains(old.path.as_str()) {
                let _ = std::fs::remove_file(self.opts.out.join(&old.path));
            }
        }
        Ok(true)
    }
}

/// The page tree under `root`, without bodies, level by level (`in_flight`
/// listings at a time, in order, so that paths do not depend on answer timing).
/// Every listing must succeed: without the whole tree, "gone" would be a guess.
async fn list_tree(client: &Client, root: &str, in_flight: usize, bar: &ProgressBar) -> Result<Vec<Node>, IngestError> {
    let root = client.page(root, "version").await.map_err(IngestError::Fetch)?;
    let mut nodes = vec![Node {
        id: root.id.clone(),
        title: root.title.clone(),
        version: root.version.as_ref().map_or(0, |v| v.number),
        parent: None,
        children: Vec::new(),
        path: String::new(),
    }];
    let mut seen: HashSet<String> = HashSet::from([root.id.clone()]);
    let mut level = vec![0usize];
    while !level.is_empty() {
        let ids: Vec<String> = level.iter().map(|&n| nodes[n].id.clone()).collect();
        let listed: Vec<_> = stream::iter(ids.iter()).map(|id| client.children(id)).buffered(in_flight).collect().await;
        let mut next_level = Vec::new();
        for (&parent, res) in level.iter().zip(listed) {
            for c in res.map_err(IngestError::Fetch)? {
                if !seen.insert(c.id.clone()) {
                    continue;
                }
                let n = nodes.len();
                nodes.push(Node {
                    id: c.id,
                    title: c.title,
                    version: c.version.map_or(0, |v| v.number),
                    parent: Some(parent),
                    children: Vec::new(),
                    path: String::new(),
                });
                nodes[parent].children.push(n);
                next_level.push(n);
            }
        }
        bar.tick();
        level = next_level;
    }
    Ok(nodes)
}

/// The nodes whose page changed since the state was saved (its version or its
/// path, or its file is gone); the rest are counted as unchanged.
fn changed(nodes: &[Node], state: &State, out: &Path, summary: &mut Summary) -> Vec<usize> {
    (0..nodes.len())
        .filter(|&n| {
            let node = &nodes[n];
            let same = state
                .pages
                .get(&node.id)
                .is_some_and(|e| e.version == node.version && e.path == node.path && out.join(&node.path).is_file());
            if same {
                summary.unchanged += 1;
            }
            !same
        })
        .collect()
}

/// The error a run stopped on. What was written before is recorded first
/// (`unsaved`: the state not yet saved), so that a rerun resumes; if even that
/// fails, that is the error to act on.
fn stopped(e: IngestError, unsaved: Option<&State>, state_path: PathBuf, written: usize) -> IngestError {
    if let Some(state) = unsaved {
        if let Err(e) = save_json_state(&state_path, state) {
            return e.into();
        }
    }
    match e {
        IngestError::Fetch(source) => IngestError::Stopped { source, written, state: state_path },
        other => other,
    }
}

/// Pages that left the tree: listed in `summary`, and with `--prune` their
/// files deleted (unless a page of the tree now lives there) and their state
/// entries dropped.
fn leave_gone(
    opts: &IngestOptions,
    nodes: &[Node],
    live_paths: &HashSet<&str>,
    state: &mut State,
    summary: &mut Summary,
) -> Result<(), IngestError> {
    let in_tree: HashSet<&str> = nodes.iter().map(|n| n.id.as_str()).collect();
    let gone: Vec<(String, String)> = state
        .pages
        .iter()
        .filter(|(id, _)| !in_tree.contains(id.as_str()))
        .map(|(id, e)| (id.clone(), e.path.clone()))
        .collect();
    for (id, path) in gone {
        if opts.prune {
            if !live_paths.contains(path.as_str()) {
                let file = opts.out.join(&path);
                match std::fs::remove_file(&file) {
                    Ok(()) => remove_empty_dirs(&opts.out, &file),
                    Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                    Err(e) => return Err(WriteError { path: file, source: e }.into()),
                }
            }
            state.pages.remove(&id);
        }
        summary.gone.push(Gone { page_id: id, path, pruned: opts.prune });
    }
    Ok(())
}

/// Turns a fetched page into the file the build reads.
struct PageWriter<'a> {
    nodes: &'a [Node],
    by_title: &'a HashMap<String, String>,
    base: &'a str,
}

impl PageWriter<'_> {
    /// The file's text and the page's version, or why the page is skipped.
    fn markdown(&self, node: &Node, page: &client::Page) -> Result<(String, u64), String> {
        let body = page
            .body
            .as_ref()
            .and_then(|b| b.storage.as_ref())
            .ok_or_else(|| format!("page {}: the answer has no body.storage", node.id))?;
        let from_dir: Vec<&str> = node.path.rsplit_once('/').map_or(vec![], |(d, _)| d.split('/').collect());
        let markdown = storage::to_markdown(&body.value, &TreeLinks { by_title: self.by_title, from_dir })
            .map_err(|e| format!("page {}: {e}", node.id))?;
        let mut chain = vec![node.title.as_str()];
        let mut p = node.parent;
        while let Some(i) = p {
            chain.push(self.nodes[i].title.as_str());
            p = self.nodes[i].parent;
        }
        chain.reverse();
        let base = self.base;
        let original_url = match page.links.webui.as_deref() {
            Some(w) if w.starts_with("http://") || w.starts_with("https://") => w.to_string(),
            Some(w) => format!("{base}/{}", w.trim_start_matches('/')),
            None => format!("{base}/pages/viewpage.action?pageId={}", encode_segment(&node.id)),
        };
        let version = page.version.as_ref().map_or(node.version, |v| v.number);
        let last_updated = page.version.as_ref().and_then(|v| v.when.as_deref()).and_then(date_of);
        let fm = Frontmatter {
            title: Some(node.title.clone()),
            parent: node.parent.map(|i| self.nodes[i].title.clone()),
            path: Some(chain.join(" / ")),
            original_url: Some(original_url),
            page_id: Some(node.id.clone()),
            version: Some(version.to_string()),
            last_updated: last_updated.map(|d| d.to_string()),
            ..Frontmatter::default()
        };
        let text =
            fm.page_file(&format!("# {}\n\n{markdown}", node.title)).map_err(|e| format!("page {}: {e}", node.id))?;
        Ok((text, version))
    }
}

/// The calendar date of Confluence's `version.when` (RFC 3339, e.g.
/// `2026-03-04T10:15:00.000+02:00`), as written in its own offset: the date the
/// editor saw. `None` when it is not a timestamp.
fn date_of(when: &str) -> Option<time::Date> {
    time::OffsetDateTime::parse(when.trim(), &time::format_description::well_known::Rfc3339).ok().map(|t| t.date())
}

fn remove_empty_dirs(root: &Path, file: &Path) {
    let mut dir = file.parent();
    while let Some(d) = dir {
        if d == root || !d.starts_with(root) || std::fs::remove_dir(d).is_err() {
            break;
        }
        dir = d.parent();
    }
}

/// Gives every node its file: the root is `index.md`; a page with children is
/// `<slug>/index.md` and its children live in `<slug>/`; a leaf is `<slug>.md`.
/// Siblings whose titles slugify alike get `-2`, `-3`, ….
fn assign_paths(nodes: &mut [Node]) {
    let mut dirs: Vec<String> = vec![String::new(); nodes.len()];
    nodes[0].path = "index.md".to_string();
    // Nodes are in breadth-first order, so a parent always comes before its children.
    for p in 0..nodes.len() {
        let mut used: HashSet<String> = HashSet::new();
        let children = nodes[p].children.clone();
        for c in children {
            let mut slug = slugify(&nodes[c].title);
            if slug.is_empty() {
                slug = format!("page-{}", slugify(&nodes[c].id));
            }
            let mut unique = slug.clone();
            let mut k = 2;
            while !used.insert(unique.clone()) {
                unique = format!("{slug}-{k}");
                k += 1;
            }
            let dir = if dirs[p].is_empty() { unique.clone() } else { format!("{}/{unique}", dirs[p]) };
            nodes[c].path = if nodes[c].children.is_empty() { format!("{dir}.md") } else { format!("{dir}/index.md") };
            dirs[c] = dir;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn confluence_timestamps_give_the_editor_s_date() {
        let d = |w: &str| date_of(w).map(|d| d.to_string());
        assert_eq!(d("2026-03-04T10:15:00.000Z").as_deref(), Some("2026-03-04"));
        // Just after midnight in Helsinki is still the previous day in UTC.
        assert_eq!(d("2026-03-04T00:30:00.000+02:00").as_deref(), Some("2026-03-04"));
        assert_eq!(d("2026-02-30T10:00:00Z"), None, "no such day");
        assert_eq!(d("yesterday"), None);
        assert_eq!(d(""), None);
    }

    #[test]
    fn paths_from_the_tree() {
        let node = |id: &str, title: &str, parent: Option<usize>, children: Vec<usize>| Node {
            id: id.into(),
            title: title.into(),
            version: 1,
            parent,
            children,
            path: String::new(),
        };
        let mut nodes = vec![
            node("1", "Home", None, vec![1, 2]),
            node("2", "IT Services", Some(0), vec![3]),
            node("3", "It services!", Some(0), vec![]),
            node("4", "VPN", Some(1), vec![]),
        ];
        assign_paths(&mut nodes);
        let paths: Vec<&str> = nodes.iter().map(|n| n.path.as_str()).collect();
        assert_eq!(paths, ["index.md", "it-services/index.md", "it-services-2.md", "it-services/vpn.md"]);
    }
}
