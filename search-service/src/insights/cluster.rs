//! Questions grouped by meaning: the coverage gaps of the report are groups of
//! unanswered questions, not a list of strings that differ by a word.
//!
//! Over the questions' MiniLM vectors (unit length, so a dot product is the
//! cosine), greedy average-linkage clustering: the questions in order of weight
//! (most asked first), each joining the group it is most similar to on average (the
//! mean cosine with the group's members) if that is at least [`THRESHOLD`], else
//! starting one; then groups whose mean cross-similarity passes the threshold are
//! merged until none do. Deterministic, O(n × g) and explainable to the person
//! reading the report. Average rather than centroid similarity: a centroid of many
//! loosely related questions becomes a generic "how do I run a job" vector that
//! swallows every question on the topic (it did, on the CSC dev questions).
//!
//! The threshold, measured with all-MiniLM-L6-v2 (see docs/benchmarks/insights.md):
//! 19 rewordings of 6 help-desk needs form 8 groups, none mixing two needs; the
//! 100 CSC dev questions (100 different needs over one HPC help desk) form 82
//! groups, the largest of 5 questions on one service (Pukki databases).

/// Mean cosine from which a question joins a group.
pub const THRESHOLD: f32 = 0.45;

/// Dimensions of a vector.
pub const DIM: usize = 384;

fn dot(a: &[f32], b: &[f32]) -> f32 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

fn normalised(mut v: Vec<f32>) -> Vec<f32> {
    let n = dot(&v, &v).sqrt();
    if n > 0.0 {
        v.iter_mut().for_each(|x| *x /= n);
    }
    v
}

/// Groups items by meaning. `vectors` holds `weights.len()` rows of [`DIM`]
/// values; returns groups of item indices, each group heaviest item first, the
/// groups by total weight (heaviest first; ties by first index).
pub fn groups(vectors: &[f32], weights: &[f64], threshold: f32) -> Vec<Vec<usize>> {
    let n = weights.len().min(vectors.len() / DIM);
    let row = |i: usize| &vectors[i * DIM..(i + 1) * DIM];
    let mut order: Vec<usize> = (0..n).collect();
    order.sort_by(|&a, &b| weights[b].total_cmp(&weights[a]).then(a.cmp(&b)));
    // (members, sum of member vectors, centroid)
    let mut gs: Vec<(Vec<usize>, Vec<f32>, Vec<f32>)> = Vec::new();
    for &i in &order {
        let v = row(i);
        let best = gs
            .iter()
            .enumerate()
            .map(|(g, (m, sum, _))| (g, dot(v, sum) / m.len() as f32))
            .filter(|&(_, s)| s >= threshold)
            .max_by(|a, b| a.1.total_cmp(&b.1).then(b.0.cmp(&a.0)));
        match best {
            Some((g, _)) => {
                let (members, sum, centroid) = &mut gs[g];
                members.push(i);
                sum.iter_mut().zip(v).for_each(|(s, x)| *s += x);
                *centroid = normalised(sum.clone());
            }
            None => gs.push((vec![i], v.to_vec(), v.to_vec())),
        }
    }
    // Merge groups that drifted together as they grew.
    loop {
        let mut pair = None;
        'outer: for a in 0..gs.len() {
            for b in a + 1..gs.len() {
                if dot(&gs[a].1, &gs[b].1) / (gs[a].0.len() * gs[b].0.len()) as f32 >= threshold {
                    pair = Some((a, b));
                    break 'outer;
                }
            }
        }
        let Some((a, b)) = pair else { break };
        let (members, sum, _) = gs.remove(b);
        let g = &mut gs[a];
        g.0.extend(members);
        g.1.iter_mut().zip(&sum).for_each(|(s, x)| *s += x);
        g.2 = normalised(g.1.clone());
    }
    let mut out: Vec<(f64, Vec<usize>)> = gs
        .into_iter()
        .map(|(mut m, _, _)| {
            m.sort_by(|&a, &b| weights[b].total_cmp(&weights[a]).then(a.cmp(&b)));
            (m.iter().map(|&i| weights[i]).sum(), m)
        })
        .collect();
    out.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1[0].cmp(&b.1[0])));
    out.into_iter().map(|(_, m)| m).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn unit(axis: &[(usize, f32)]) -> Vec<f32> {
        let mut v = vec![0.0; DIM];
        for &(i, x) in axis {
            v[i] = x;
        }
        normalised(v)
    }

    #[test]
    fn near_vectors_group_and_far_ones_do_not() {
        let rows = [
            unit(&[(0, 1.0), (1, 0.3)]),
            unit(&[(0, 1.0), (1, -0.2)]),
            unit(&[(5, 1.0)]),
            unit(&[(0, 0.9), (2, 0.4)]),
            unit(&[(5, 1.0), (6, 0.5)]),
            unit(&[(9, 1.0)]),
        ];
        let flat: Vec<f32> = rows.concat();
        let weights = [1.0, 1.0, 5.0, 1.0, 1.0, 0.5];
        let g = groups(&flat, &weights, THRESHOLD);
        // The group of 0, 1, 3 weighs 3, the one of 2 and 4 weighs 6: heaviest first,
        // each group's heaviest member first.
        assert_eq!(g, vec![vec![2, 4], vec![0, 1, 3], vec![5]]);
    }

    #[test]
    fn nothing_in_nothing_out() {
        assert!(groups(&[], &[], THRESHOLD).is_empty());
        // Fewer vectors than weights: only whole rows count, nothing panics.
        assert_eq!(groups(&[0.0; DIM], &[1.0, 2.0], THRESHOLD), vec![vec![0]]);
    }
}
