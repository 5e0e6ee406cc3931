//! Recent query vectors, so that a query asked again is not encoded again.
//!
//! The encoder is about 90 % of a fused query. Search as you type repeats itself:
//! the results page asks again for the text the suggestions just answered (with
//! another `k`), a reader who deletes a typo goes back to a prefix already asked,
//! and popular questions come back from many readers. The vector depends only on
//! the token ids, so those are the key: "How do I" and "how do  I" share an entry.
//!
//! A least-recently-used map of bounded size: an entry is 384 floats plus its
//! tokens (about 1.6 KB), so the default 512 entries hold under 1 MB per instance.
//! Lookups and hits are O(1); evicting the oldest entry scans the map, which is
//! O(capacity) but only happens on a miss, next to a 10–30 ms encoder pass.

use std::collections::HashMap;

/// How many vectors a [`QueryCache`] keeps by default.
pub const DEFAULT_CAPACITY: usize = 512;

/// An LRU map from a query's token ids to its unit vector.
#[derive(Debug)]
pub struct QueryCache {
    capacity: usize,
    /// Token ids → (vector, tick of last use).
    entries: HashMap<Vec<u32>, (Vec<f32>, u64)>,
    tick: u64,
    hits: u64,
    misses: u64,
}

impl QueryCache {
    /// A cache of `capacity` vectors (0 keeps nothing).
    pub fn new(capacity: usize) -> QueryCache {
        QueryCache { capacity, entries: HashMap::new(), tick: 0, hits: 0, misses: 0 }
    }

    /// The vector of `tokens` if it is cached (and marks it recently used).
    pub fn get(&mut self, tokens: &[u32]) -> Option<Vec<f32>> {
        self.tick += 1;
        match self.entries.get_mut(tokens) {
            Some((v, used)) => {
                *used = self.tick;
                self.hits += 1;
                Some(v.clone())
            }
            None => {
                self.misses += 1;
                None
            }
        }
    }

    /// Keeps `vector` for `tokens`, dropping the least recently used entry when full.
    pub fn insert(&mut self, tokens: Vec<u32>, vector: Vec<f32>) {
        if self.capacity == 0 {
            return;
        }
        self.tick += 1;
        if self.entries.len() >= self.capacity && !self.entries.contains_key(&tokens) {
            if let Some(oldest) = self.entries.iter().min_by_key(|(_, (_, used))| *used).map(|(k, _)| k.clone()) {
                self.entries.remove(&oldest);
            }
        }
        self.entries.insert(tokens, (vector, self.tick));
    }

    /// Vectors held now.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Lookups that found a vector, and lookups that did not, since creation.
    pub fn stats(&self) -> (u64, u64) {
        (self.hits, self.misses)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_the_most_recently_used() {
        let mut c = QueryCache::new(2);
        c.insert(vec![1], vec![1.0]);
        c.insert(vec![2], vec![2.0]);
        // Using 1 makes 2 the oldest: the third entry evicts 2, not 1.
        assert_eq!(c.get(&[1]), Some(vec![1.0]));
        c.insert(vec![3], vec![3.0]);
        assert_eq!(c.len(), 2);
        assert_eq!(c.get(&[2]), None);
        assert_eq!(c.get(&[1]), Some(vec![1.0]));
        assert_eq!(c.get(&[3]), Some(vec![3.0]));
        assert_eq!(c.stats(), (3, 1));
    }

    #[test]
    fn replacing_an_entry_evicts_nothing() {
        let mut c = QueryCache::new(2);
        c.insert(vec![1], vec![1.0]);
        c.insert(vec![2], vec![2.0]);
        c.insert(vec![2], vec![2.5]);
        assert_eq!(c.len(), 2);
        assert_eq!(c.get(&[1]), Some(vec![1.0]));
        assert_eq!(c.get(&[2]), Some(vec![2.5]));
    }

    #[test]
    fn capacity_zero_keeps_nothing() {
        let mut c = QueryCache::new(0);
        c.insert(vec![1], vec![1.0]);
        assert!(c.is_empty());
        assert_eq!(c.get(&[1]), None);
    }
}
