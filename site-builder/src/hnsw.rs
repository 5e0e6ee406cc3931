//! Building the HNSW graph for large indexes with `instant-distance`, converted to
//! the layout `search_core::index::graph` stores and searches in place.
//!
//! instant-distance has no public accessor for its neighbour lists, so the graph is
//! read through its serde output, which is not a stable interface. Hence the exact
//! pin in `Cargo.toml`, a typed [`GraphError`] for every shape this code expects,
//! and a test that searches the converted graph against the exact scan: a version
//! whose layout moved fails the build loudly instead of shipping a wrong graph.

use search_core::index::graph::{Graph, M, M0};
use serde_json::Value;

/// A unit vector as instant-distance sees it; distance is 1 − cosine.
#[derive(Clone)]
struct Point(Vec<f32>);

impl instant_distance::Point for Point {
    fn distance(&self, other: &Self) -> f32 {
        1.0 - self.0.iter().zip(&other.0).map(|(a, b)| a * b).sum::<f32>()
    }
}

// The graph is read back through serde; the points themselves are not needed
// there (the index stores its own vectors), so they serialise as nothing.
impl serde::Serialize for Point {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_unit()
    }
}

impl<'de> serde::Deserialize<'de> for Point {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        <()>::deserialize(d).map(|()| Point(Vec::new()))
    }
}

/// Why the graph could not be converted (a change in instant-distance's layout).
#[derive(Debug, thiserror::Error)]
#[error("HNSW graph from instant-distance has an unexpected layout: {0}")]
pub struct GraphError(String);

fn ids(v: &Value, what: &str) -> Result<Vec<u32>, GraphError> {
    v.as_array()
        .ok_or_else(|| GraphError(format!("{what} is not a list")))?
        .iter()
        .map(|x| x.as_u64().map(|n| n as u32).ok_or_else(|| GraphError(format!("{what}: not a point id"))))
        .collect()
}

/// Builds the graph over `n × dim` unit vectors.
pub fn build_graph(vectors: &[f32], dim: usize, ef_search: usize) -> Result<Graph, GraphError> {
    let points: Vec<Point> = vectors.chunks_exact(dim).map(|v| Point(v.to_vec())).collect();
    let n = points.len();
    let (hnsw, pids) =
        instant_distance::Builder::default().ef_construction(100).ef_search(ef_search).seed(42).build_hnsw(points);
    let v = serde_json::to_value(&hnsw).map_err(|e| GraphError(e.to_string()))?;
    let mut zero = Vec::with_capacity(n);
    for node in v["zero"].as_array().ok_or_else(|| GraphError("no `zero` layer".into()))? {
        let list = ids(node, "zero node")?;
        let arr: [u32; M0] = list.try_into().map_err(|_| GraphError(format!("zero node is not {M0} ids")))?;
        zero.push(arr);
    }
    let mut upper = Vec::new();
    for layer in v["layers"].as_array().ok_or_else(|| GraphError("no `layers`".into()))? {
        let mut nodes = Vec::new();
        for node in layer.as_array().ok_or_else(|| GraphError("layer is not a list".into()))? {
            let list = ids(node, "upper node")?;
            let arr: [u32; M] = list.try_into().map_err(|_| GraphError(format!("upper node is not {M} ids")))?;
            nodes.push(arr);
        }
        upper.push(nodes);
    }
    let pid_values = ids(&serde_json::to_value(&pids).map_err(|e| GraphError(e.to_string()))?, "point ids")?;
    let mut doc = vec![0u32; n];
    for (d, &p) in pid_values.iter().enumerate() {
        *doc.get_mut(p as usize).ok_or_else(|| GraphError("point id out of range".into()))? = d as u32;
    }
    if zero.len() != n {
        return Err(GraphError(format!("{} layer-0 nodes for {n} points", zero.len())));
    }
    Ok(Graph { zero, upper, doc, ef: ef_search as u32 })
}

#[cfg(test)]
mod tests {
    use super::*;
    use search_core::container::{AlignedBytes, Container, Writer};
    use search_core::index::graph::GraphView;

    fn unit_vectors(n: usize, dim: usize) -> Vec<f32> {
        let mut s = 12345u32;
        let mut v = Vec::with_capacity(n * dim);
        for _ in 0..n {
            let row: Vec<f32> = (0..dim)
                .map(|_| {
                    s = s.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
                    (s >> 8) as f32 / (1u32 << 24) as f32 - 0.5
                })
                .collect();
            let norm = row.iter().map(|x| x * x).sum::<f32>().sqrt();
            v.extend(row.iter().map(|x| x / norm));
        }
        v
    }

    #[test]
    fn graph_search_finds_what_the_exact_scan_finds() {
        let (n, dim) = (1500, 32);
        let vecs = unit_vectors(n, dim);
        let g = build_graph(&vecs, dim, 64).unwrap();
        assert_eq!(g.doc.len(), n);
        let mut w = Writer::new(*b"KBTEST\0\0", 1);
        g.write(&mut w);
        let bytes = AlignedBytes::new(&w.finish());
        let c = Container::open(bytes.as_slice(), *b"KBTEST\0\0", 1).unwrap();
        let view = GraphView::open(&c, n).unwrap().unwrap();
        let sim = |q: &[f32], d: u32| {
            vecs[d as usize * dim..(d as usize + 1) * dim].iter().zip(q).map(|(a, b)| a * b).sum::<f32>()
        };
        let mut found = 0;
        for qi in (0..n).step_by(50) {
            let q = &vecs[qi * dim..(qi + 1) * dim];
            let mut exact: Vec<(u32, f32)> = (0..n as u32).map(|d| (d, sim(q, d))).collect();
            exact.sort_by(|a, b| b.1.total_cmp(&a.1));
            let top: std::collections::HashSet<u32> = exact.iter().take(10).map(|h| h.0).collect();
            let approx = view.search(10, 64, |d| sim(q, d));
            assert_eq!(approx[0].0, qi as u32, "a point is its own nearest neighbour");
            found += approx.iter().filter(|h| top.contains(&h.0)).count();
        }
        let recall = found as f64 / (30.0 * 10.0);
        assert!(recall > 0.9, "recall@10 {recall}");
    }
}
