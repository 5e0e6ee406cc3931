//! An HNSW graph over the dense vectors, stored in the index and searched in place.
//!
//! Below a size threshold the index scans every vector (exact, and fast enough for
//! a knowledge base of thousands of chunks); above it, the build adds this graph.
//! The graph is built by the `instant-distance` crate at build time; this module
//! owns how it is laid out in `index.bin` and searches it without deserialising:
//!
//! | section | type | what |
//! | --- | --- | --- |
//! | `hnsw.zero` | u32[n·64] | layer-0 neighbours of each graph point (`u32::MAX` = none) |
//! | `hnsw.upper` | u32[·32] | upper layers' neighbour lists, top layer last, concatenated |
//! | `hnsw.ulen` | u32[layers] | points in each upper layer (points `0..len` of the graph) |
//! | `hnsw.doc` | u32[n] | the chunk of each graph point |
//! | `hnsw.ef` | u32[1] | default search breadth |
//!
//! Search is the usual descent: greedy on the upper layers from point 0, then a
//! beam of width `ef` on layer 0.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashSet};

use super::Scored;
use crate::container::{corrupt, Container, ContainerError, Writer};

/// Neighbours per point on layer 0 and on the upper layers.
pub const M0: usize = 64;
pub const M: usize = 32;
const NONE: u32 = u32::MAX;

/// A graph to store: what the builder produced, in this module's layout.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Graph {
    pub zero: Vec<[u32; M0]>,
    /// Upper layers, bottom (layer 1) first.
    pub upper: Vec<Vec<[u32; M]>>,
    /// Chunk of each graph point.
    pub doc: Vec<u32>,
    pub ef: u32,
}

impl Graph {
    pub fn write(&self, w: &mut Writer) {
        let zero: Vec<u32> = self.zero.iter().flatten().copied().collect();
        let upper: Vec<u32> = self.upper.iter().flatten().flatten().copied().collect();
        let ulen: Vec<u32> = self.upper.iter().map(|l| l.len() as u32).collect();
        w.add_u32("hnsw.zero", &zero);
        w.add_u32("hnsw.upper", &upper);
        w.add_u32("hnsw.ulen", &ulen);
        w.add_u32("hnsw.doc", &self.doc);
        w.add_u32("hnsw.ef", &[self.ef]);
    }
}

/// A stored graph, read in place.
#[derive(Clone, Copy)]
pub struct GraphView<'a> {
    zero: &'a [u32],
    upper: &'a [u32],
    ulen: &'a [u32],
    doc: &'a [u32],
    pub ef: usize,
}

/// Most upper layers a stored graph may have. HNSW has about log_M(n) of them
/// (4 for a million points with M = 32); the descent walks every layer per query,
/// so a file claiming millions of empty layers must not be believed.
pub const MAX_LAYERS: usize = 32;
/// Largest beam width, stored or asked for: the beam's heaps and visited set grow
/// with it on every query, so neither the file nor a caller may set it freely.
pub const MAX_EF: usize = 4096;

/// Every neighbour id of a list is a graph point or [`NONE`].
fn check_neighbours(section: &str, ids: &[u32], points: usize) -> Result<(), ContainerError> {
    match ids.iter().position(|&p| p != NONE && p as usize >= points) {
        Some(at) => Err(corrupt(section, format!("neighbour {} at {at} is not one of the {points} points", ids[at]))),
        None => Ok(()),
    }
}

impl<'a> GraphView<'a> {
    /// The graph of an index, if it has one (`Ok(None)` when the index is flat).
    ///
    /// Validates every id once, here (a linear pass over the graph, about 1 ms per
    /// 20k points), so that a search can trust them: the chunk of each point, each
    /// neighbour id, the layer sizes and the stored beam width.
    pub fn open(c: &Container<'a>, chunks: usize) -> Result<Option<GraphView<'a>>, ContainerError> {
        if !c.has("hnsw.zero") {
            return Ok(None);
        }
        let doc: &[u32] = c.exact("hnsw.doc", chunks)?;
        if let Some(at) = doc.iter().position(|&d| d as usize >= chunks) {
            return Err(corrupt("hnsw.doc", format!("point {at} names chunk {}, the index has {chunks}", doc[at])));
        }
        let zero_len =
            chunks.checked_mul(M0).ok_or_else(|| corrupt("hnsw.zero", format!("{chunks} points overflow")))?;
        let zero: &[u32] = c.exact("hnsw.zero", zero_len)?;
        check_neighbours("hnsw.zero", zero, chunks)?;
        let ulen: &[u32] = c.u32s("hnsw.ulen")?;
        if ulen.len() > MAX_LAYERS {
            return Err(corrupt("hnsw.ulen", format!("{} layers, at most {MAX_LAYERS} are read", ulen.len())));
        }
        if let Some(&l) = ulen.iter().find(|&&l| l as usize > chunks) {
            return Err(corrupt("hnsw.ulen", format!("a layer of {l} points in a graph of {chunks}")));
        }
        // At most 32 layers of at most `chunks` points: no overflow, but checked
        // anyway because `usize` is 32 bits on wasm32.
        let total = ulen
            .iter()
            .try_fold(0usize, |acc, &l| acc.checked_add(l as usize))
            .and_then(|t| t.checked_mul(M))
            .ok_or_else(|| corrupt("hnsw.ulen", "layer sizes overflow"))?;
        let upper: &[u32] = c.exact("hnsw.upper", total)?;
        check_neighbours("hnsw.upper", upper, chunks)?;
        let ef = c.exact::<u32>("hnsw.ef", 1)?[0] as usize;
        if ef == 0 || ef > MAX_EF {
            return Err(corrupt("hnsw.ef", format!("beam width {ef}, expected 1 to {MAX_EF}")));
        }
        Ok(Some(GraphView { zero, upper, ulen, doc, ef }))
    }

    fn upper_neighbours(&self, layer: usize, point: u32) -> &'a [u32] {
        let start: usize = self.ulen.iter().take(layer).map(|&l| l as usize).sum();
        let at = (start + point as usize) * M;
        self.upper.get(at..at + M).unwrap_or(&[])
    }

    /// The `k` best chunks by `similarity` (higher is closer), approximately.
    pub fn search(&self, k: usize, ef: usize, similarity: impl Fn(u32) -> f32) -> Vec<(u32, f32)> {
        let n = self.doc.len();
        if n == 0 || k == 0 {
            return Vec::new();
        }
        let sim = |p: u32| self.doc.get(p as usize).map_or(f32::NEG_INFINITY, |&d| similarity(d));
        let valid = |p: u32| p != NONE && (p as usize) < n;
        // Greedy descent through the upper layers, top first.
        let mut ep = 0u32;
        let mut best = sim(ep);
        for layer in (0..self.ulen.len()).rev() {
            if ep as usize >= self.ulen.get(layer).map_or(0, |&l| l as usize) {
                continue;
            }
            loop {
                let mut moved = false;
                for &nb in self.upper_neighbours(layer, ep) {
                    if !valid(nb) || nb as usize >= self.ulen[layer] as usize {
                        continue;
                    }
                    let s = sim(nb);
                    if s > best {
                        best = s;
                        ep = nb;
                        moved = true;
                    }
                }
                if !moved {
                    break;
                }
            }
        }
        // Beam search on layer 0. The beam never needs to be wider than the graph.
        let ef = ef.clamp(k.min(MAX_EF), MAX_EF).min(n).max(1);
        let mut visited: HashSet<u32> = HashSet::with_capacity(ef.saturating_mul(8).min(n));
        visited.insert(ep);
        let mut candidates = BinaryHeap::new(); // best first
        let mut results = BinaryHeap::new(); // worst first (Reverse)
        candidates.push(Scored(best, ep));
        results.push(Reverse(Scored(best, ep)));
        while let Some(Scored(s, p)) = candidates.pop() {
            let worst = results.peek().map_or(f32::NEG_INFINITY, |Reverse(Scored(w, _))| *w);
            if results.len() >= ef && s < worst {
                break;
            }
            let at = p as usize * M0;
            for &nb in self.zero.get(at..at + M0).unwrap_or(&[]) {
                if !valid(nb) || !visited.insert(nb) {
                    continue;
                }
                let ns = sim(nb);
                let worst = results.peek().map_or(f32::NEG_INFINITY, |Reverse(Scored(w, _))| *w);
                if results.len() < ef || ns > worst {
                    candidates.push(Scored(ns, nb));
                    results.push(Reverse(Scored(ns, nb)));
                    if results.len() > ef {
                        results.pop();
                    }
                }
            }
        }
        let mut out: Vec<(u32, f32)> =
            results.into_iter().filter_map(|Reverse(Scored(s, p))| Some((*self.doc.get(p as usize)?, s))).collect();
        out.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        out.truncate(k);
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::container::AlignedBytes;

    /// A ring of 200 points on a line: each links to its 2 nearest on layer 0;
    /// one upper layer of every 10th point linked the same way.
    fn ring() -> (Graph, Vec<f32>) {
        let n = 200u32;
        let mut zero = Vec::new();
        for p in 0..n {
            let mut nb = [NONE; M0];
            nb[0] = (p + 1) % n;
            nb[1] = (p + n - 1) % n;
            zero.push(nb);
        }
        // Graph point p is chunk p; upper layer holds points 0..20 (chunks 0,1,..,19 — near each other).
        let mut upper = Vec::new();
        for p in 0..20u32 {
            let mut nb = [NONE; M];
            nb[0] = (p + 1) % 20;
            nb[1] = (p + 19) % 20;
            upper.push(nb);
        }
        let positions: Vec<f32> = (0..n).map(|i| i as f32).collect();
        (Graph { zero, upper: vec![upper], doc: (0..n).collect(), ef: 16 }, positions)
    }

    #[test]
    fn finds_the_nearest_points_along_the_graph() {
        let (g, pos) = ring();
        let mut w = Writer::new(*b"KBTEST\0\0", 1);
        g.write(&mut w);
        let bytes = AlignedBytes::new(&w.finish());
        let c = Container::open(bytes.as_slice(), *b"KBTEST\0\0", 1).unwrap();
        let view = GraphView::open(&c, 200).unwrap().unwrap();
        let target = 150.0;
        let hits = view.search(3, 32, |d| -(pos[d as usize] - target).abs());
        let docs: Vec<u32> = hits.iter().map(|h| h.0).collect();
        assert_eq!(docs[0], 150);
        assert!(docs.contains(&149) && docs.contains(&151), "{docs:?}");
    }

    #[test]
    fn flat_indexes_have_no_graph_and_bad_graphs_are_errors() {
        let mut w = Writer::new(*b"KBTEST\0\0", 1);
        w.add_u32("other", &[1]);
        let bytes = AlignedBytes::new(&w.finish());
        let c = Container::open(bytes.as_slice(), *b"KBTEST\0\0", 1).unwrap();
        assert!(GraphView::open(&c, 5).unwrap().is_none());
        let (mut g, _) = ring();
        g.doc[3] = 999;
        let mut w = Writer::new(*b"KBTEST\0\0", 1);
        g.write(&mut w);
        let bytes = AlignedBytes::new(&w.finish());
        let c = Container::open(bytes.as_slice(), *b"KBTEST\0\0", 1).unwrap();
        assert!(GraphView::open(&c, 200).is_err());
    }
}
