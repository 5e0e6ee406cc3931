//! The dense vectors as the index stores them: the conversions to and from
//! half floats and fixed point, the dot products a scan computes on each stored
//! form (the kernels: portable loops LLVM vectorises, and `i32x4.dot_i16x8_s` by
//! hand on wasm32), and the top-k selection over a scan.

/// `q · row` for a row stored as IEEE half floats, widened lane by lane in the
/// loop (eight independent accumulators, which LLVM turns into SIMD on x86 and
/// on wasm32 with simd128: the scan stays a single pass over half the bytes).
#[inline]
pub(crate) fn dot_f16(q: &[f32], row: &[u16]) -> f32 {
    dot_widened(q, row, f16_to_f32)
}

/// A query vector multiplied by 2^112 once, so that a scan over half-float rows
/// skips the widening's own ×2^112 ([`f16_to_f32`]) on every component.
/// Scaling by a power of two is exact here (|q| ≤ 1), and `(q·2^112)·b` and
/// `q·(b·2^112)` are the same real number rounded once, so the scores are
/// [`dot_f16`]'s to the bit (a test checks it, subnormal halves included).
pub(crate) struct F16Query(pub(super) Vec<f32>);

impl F16Query {
    pub(crate) fn new(q: &[f32]) -> F16Query {
        F16Query(q.iter().map(|x| x * F16_SCALE).collect())
    }

    /// `q · row`, as [`dot_f16`].
    #[inline]
    pub(crate) fn dot(&self, row: &[u16]) -> f32 {
        dot_widened(&self.0, row, f16_unscaled)
    }
}

/// The fixed-point unit of [`VectorStorage::I16`]: ±1 is ±32767.
pub(super) const Q15: f32 = 32767.0;

/// `x` in fixed point, rounded to nearest and clamped to ±1 (NaN as 0).
pub(super) fn q15(x: f32) -> i16 {
    if x.is_nan() {
        return 0;
    }
    (x.clamp(-1.0, 1.0) * Q15).round() as i16
}

/// A query for a scan over fixed-point rows: its direction in fixed point (unit
/// length, so that no sum of products can overflow 32 bits for unit rows: |Σ q·d|
/// ≤ 32767²) and the factor that turns the integer sum back into `q · row`.
pub(crate) struct I16Query {
    q: Vec<i16>,
    scale: f32,
}

impl I16Query {
    pub(crate) fn new(q: &[f32]) -> I16Query {
        let norm = q.iter().map(|x| x * x).sum::<f32>().sqrt();
        if !(norm.is_finite() && norm > 0.0) {
            return I16Query { q: vec![0; q.len()], scale: 0.0 };
        }
        I16Query { q: q.iter().map(|&x| q15(x / norm)).collect(), scale: norm / (Q15 * Q15) }
    }

    /// `q · row`: the exact integer sum of products, scaled once. Wrapping adds:
    /// rows of a corrupt file (not unit length) give wrong scores, not a panic;
    /// the sum is the same in any order, so every target gives the same score.
    #[inline]
    pub(crate) fn dot(&self, row: &[i16]) -> f32 {
        dot_i16(&self.q, row) as f32 * self.scale
    }
}

/// The wrapping integer dot product of two i16 slices (over the shorter's
/// length). Natively LLVM turns the eight-lane loop into `pmaddwd`; in wasm it
/// does not (it widens each lane and multiplies, which measured slower than the
/// half-float scan), so wasm gets `i32x4.dot_i16x8_s` by hand: eight products
/// and their pairwise sums in one instruction. Both give the same sum: a pair of
/// products of values within ±32768 × ±32767 fits in an i32, and wrapping adds
/// do not depend on order.
#[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
pub(super) fn dot_i16(q: &[i16], row: &[i16]) -> i32 {
    use core::arch::wasm32::{i32x4_add, i32x4_dot_i16x8, i32x4_extract_lane, i32x4_splat, v128, v128_load};
    let n = q.len().min(row.len());
    let (mut a0, mut a1) = (i32x4_splat(0), i32x4_splat(0));
    let mut i = 0;
    while i + 16 <= n {
        // SAFETY: i + 16 <= n keeps both 16-byte loads of each slice in bounds;
        // `v128_load` has no alignment requirement.
        unsafe {
            let (x, y) = (q.as_ptr().add(i), row.as_ptr().add(i));
            a0 = i32x4_add(a0, i32x4_dot_i16x8(v128_load(x.cast::<v128>()), v128_load(y.cast::<v128>())));
            a1 = i32x4_add(a1, i32x4_dot_i16x8(v128_load(x.add(8).cast::<v128>()), v128_load(y.add(8).cast::<v128>())));
        }
        i += 16;
    }
    let a = i32x4_add(a0, a1);
    let lanes = [
        i32x4_extract_lane::<0>(a),
        i32x4_extract_lane::<1>(a),
        i32x4_extract_lane::<2>(a),
        i32x4_extract_lane::<3>(a),
    ];
    let sum = lanes.iter().fold(0i32, |s, &l| s.wrapping_add(l));
    q[i..n].iter().zip(&row[i..n]).fold(sum, |s, (&x, &y)| s.wrapping_add(i32::from(x) * i32::from(y)))
}

/// [`dot_i16`] elsewhere: eight lanes LLVM vectorises (`pmaddwd` on x86).
#[cfg(not(all(target_arch = "wasm32", target_feature = "simd128")))]
pub(super) fn dot_i16(q: &[i16], row: &[i16]) -> i32 {
    let mut acc = [0i32; 8];
    for (x, y) in q.chunks_exact(8).zip(row.chunks_exact(8)) {
        for l in 0..8 {
            acc[l] = acc[l].wrapping_add(i32::from(x[l]) * i32::from(y[l]));
        }
    }
    let rest = q.chunks_exact(8).remainder().iter().zip(row.chunks_exact(8).remainder());
    rest.fold(acc.iter().fold(0i32, |a, &b| a.wrapping_add(b)), |a, (&x, &y)| {
        a.wrapping_add(i32::from(x) * i32::from(y))
    })
}

/// 2^112: what the bits of a half, moved into f32 position, are short of.
pub(super) const F16_SCALE: f32 = f32::from_bits(0x7780_0000);

/// `Σ q[i] · widen(row[i])` in eight lanes, the one loop both scans share.
#[inline(always)]
pub(super) fn dot_widened(q: &[f32], row: &[u16], widen: impl Fn(u16) -> f32) -> f32 {
    let mut acc = [0f32; 8];
    for (x, h) in q.chunks_exact(8).zip(row.chunks_exact(8)) {
        for l in 0..8 {
            acc[l] += x[l] * widen(h[l]);
        }
    }
    let tail: f32 =
        q.chunks_exact(8).remainder().iter().zip(row.chunks_exact(8).remainder()).map(|(x, &h)| x * widen(h)).sum();
    acc.iter().sum::<f32>() + tail
}

/// IEEE half → f32, exact for every finite half (zeros and subnormals included),
/// branch-free so that it vectorises: [`f16_unscaled`], scaled by 2^112, which
/// also normalises subnormals. Infinities and NaN (never written: vectors are
/// unit length) come out as large finite numbers, so a corrupt file gives wrong
/// scores, not a panic.
#[inline(always)]
pub(super) fn f16_to_f32(h: u16) -> f32 {
    f16_unscaled(h) * F16_SCALE
}

/// The sign-extended bits of a half shifted into f32 position (sign at bit 31,
/// exponent and mantissa at bits 13–27), read as an f32 whose exponent is 112
/// too small.
#[inline(always)]
pub(super) fn f16_unscaled(h: u16) -> f32 {
    f32::from_bits(((h as i16 as i32) << 13) as u32 & 0x8FFF_E000)
}

/// f32 → IEEE half bits, rounded to nearest, ties to even. Values beyond the half
/// range saturate to ±65504 (unit vectors never get there); below it they become
/// subnormals or zero.
pub(crate) fn f16_bits(x: f32) -> u16 {
    let b = x.to_bits();
    let sign = ((b >> 16) & 0x8000) as u16;
    let a = b & 0x7FFF_FFFF;
    if a >= 0x477F_F000 {
        // |x| rounds to 65520 or more (or is inf/NaN): the largest finite half.
        return sign | 0x7BFF;
    }
    if a < 0x3880_0000 {
        // Below 2^-14: a subnormal half. Adding 0.5 lets the FPU round the
        // mantissa (ties to even) at the right place.
        let v = f32::from_bits(a) + 0.5;
        return sign | (v.to_bits() - 0x3F00_0000) as u16;
    }
    // Normal: rebias the exponent (127 → 15) and round 23 mantissa bits to 10.
    let odd = (a >> 13) & 1;
    let rounded = a.wrapping_add(0xC800_0FFF).wrapping_add(odd);
    sign | (rounded >> 13) as u16
}

#[inline]
pub(super) fn dot(a: &[f32], b: &[f32]) -> f32 {
    let mut acc = [0f32; 8];
    for (x, y) in a.chunks_exact(8).zip(b.chunks_exact(8)) {
        for l in 0..8 {
            acc[l] += x[l] * y[l];
        }
    }
    let tail: f32 = a.chunks_exact(8).remainder().iter().zip(b.chunks_exact(8).remainder()).map(|(x, y)| x * y).sum();
    acc.iter().sum::<f32>() + tail
}

/// The `depth` rows of `rows` (`dim` half floats each, `dim` > 0) closest to
/// `q`, best first: the exact scan of [`Index::dense_top`] over half floats,
/// whether the rows are an index file's or the browser engine's.
pub(crate) fn top_f16(
    q: &[f32],
    rows: &[u16],
    dim: usize,
    depth: usize,
    keep: impl Fn(u32) -> bool,
) -> Vec<(u32, f32)> {
    let q = F16Query::new(q);
    top_rows(rows, dim, depth, keep, |row| q.dot(row))
}

/// The `depth` rows of `rows` (`dim` values each) that `score` ranks highest
/// among those `keep` keeps, best first: the exact scan, whatever the storage.
pub(crate) fn top_rows<T>(
    rows: &[T],
    dim: usize,
    depth: usize,
    keep: impl Fn(u32) -> bool,
    score: impl Fn(&[T]) -> f32,
) -> Vec<(u32, f32)> {
    let mut top = TopK::new(depth);
    for (d, row) in rows.chunks_exact(dim.max(1)).enumerate() {
        if keep(d as u32) {
            top.push(d as u32, score(row));
        }
    }
    top.into_sorted()
}

/// A bounded min-heap keeping the `k` best (doc, score) pairs.
pub(super) struct TopK {
    k: usize,
    heap: std::collections::BinaryHeap<std::cmp::Reverse<Scored>>,
}

/// (score, doc) ordered by score, then by doc (lower first); shared by the exact
/// scan's top-k and the HNSW search.
#[derive(PartialEq)]
pub(crate) struct Scored(pub(crate) f32, pub(crate) u32);
impl Eq for Scored {}
impl PartialOrd for Scored {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Scored {
    // Higher score is better; on a tie the lower doc id is better.
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.0.total_cmp(&other.0).then(other.1.cmp(&self.1))
    }
}

impl TopK {
    pub(super) fn new(k: usize) -> TopK {
        // Reserve for a usual depth only: `k` comes from the caller, and the heap
        // grows as needed when it really fills.
        TopK { k, heap: std::collections::BinaryHeap::with_capacity(k.min(1024) + 1) }
    }

    pub(super) fn push(&mut self, doc: u32, score: f32) {
        if self.k == 0 {
            return;
        }
        let item = std::cmp::Reverse(Scored(score, doc));
        if self.heap.len() < self.k {
            self.heap.push(item);
        } else if self.heap.peek().is_some_and(|worst| item < *worst) {
            self.heap.pop();
            self.heap.push(item);
        }
    }

    pub(super) fn into_sorted(self) -> Vec<(u32, f32)> {
        let mut v: Vec<(u32, f32)> = self.heap.into_iter().map(|std::cmp::Reverse(Scored(s, d))| (d, s)).collect();
        v.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        v
    }
}
