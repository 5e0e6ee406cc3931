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
use crate::container::{Container, ContainerError, Writer};

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

impl<'a> GraphView<'a> {
    /// The graph of an index, if it has one (`Ok(None)` when the index is flat).
    pub fn open(c: &Container<'a>, chunks: usize) -> Result<Option<GraphView<'a>>, ContainerError> {
        if !c.names().iter().any(|n| n == "hnsw.zero") {
            return Ok(None);
        }
        let doc: &[u32] = c.exact("hnsw.doc", chunks)?;
        let zero: &[u32] = c.exact("hnsw.zero", chunks * M0)?;
        let ulen: &[u32] = c.u32s("hnsw.ulen")?;
        let total: usize = ulen.iter().map(|&l| l as usize).sum();
        let upper: &[u32] = c.exact("hnsw.upper", total * M)?;
        if ulen.iter().any(|&l| l as usize > chunks) || doc.iter().any(|&d| d as usize >= chunks) {
            return Err(ContainerError::Shape {
                section: "hnsw".into(),
                message: "layer or chunk out of range".into(),
            });
        }
        let ef = c.exact::<u32>("hnsw.ef", 1)?[0] as usize;
        Ok(Some(GraphView { zero, upper, ulen, doc, ef }))
    }

    fn upper_neighbours(&self, layer: usize, point: u32) -> &'a [u32] {
        let start: usize = self.ulen[..layer].iter().map(|&l| l as usize).sum();
        let at = (start + point as usize) * M;
        self.upper.get(at..at + M).unwrap_or(&[])
    }

    /// The `k` best chunks by `similarity` (higher is closer), approximately.
    pub fn search(&self, k: usize, ef: usize, similarity: impl Fn(u32) -> f32) -> Vec<(u32, f32)> {
        let n = self.doc.len();
        if n == 0 || k == 0 {
            return Vec::new();
        }
        let sim = |p: u32| similarity(self.doc[p as usize]);
        let valid = |p: u32| p != NONE && (p as usize) < n;
        // Greedy descent through the upper layers, top first.
        let mut ep = 0u32;
        let mut best = sim(ep);
        for layer in (0..self.ulen.len()).rev() {
            if ep as usize >= self.ulen[layer] as usize {
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
        // Beam search on layer 0.
        let ef = ef.max(k);
        let mut visited: HashSet<u32> = HashSet::with_capacity(ef * 8);
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
            results.into_iter().map(|Reverse(Scored(s, p))| (self.doc[p as usize], s)).collect();
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
