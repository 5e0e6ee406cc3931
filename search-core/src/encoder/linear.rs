//! The encoder's linear layers: int8 weights times 7-bit activations, summed
//! exactly in 32-bit integers.
//!
//! Each layer's input is quantised per token just before the product
//! ([`Quantized`]): `x ≈ scale · (u − zero)` with `u` in `0..=127`, the range
//! spanning the token's smallest and largest value (and 0). The weights are int8
//! with one scale per output row, as the encoder file stores them. Then
//!
//! ```text
//! y[t][o] = wscale[o] · scale[t] · (Σ_c q[o][c] · u[t][c] − zero[t] · Σ_c q[o][c]) + bias[o]
//! ```
//!
//! where the first sum is the whole cost of the layer and is exact integer
//! arithmetic, and the row sums `Σ_c q[o][c]` are stored in the encoder file.
//!
//! Why 7 bits and not 8: the instructions that multiply bytes four (or two) at a
//! time want one operand unsigned and, summing pairs of products in 16 bits,
//! would saturate on 255 · 127 · 2. With `u ≤ 127` every pair fits
//! (`127 · 127 · 2 = 32,258`), so each target's fast instruction computes the same
//! exact sum: wasm's `i32x4.relaxed_dot_i8x16_i7x16_add_s` (whose result is only
//! defined for a second operand below 128, which is why it is called i7), x86's
//! `vpmaddubsw` + `vpmaddwd`, and the portable loop. Native build-time embedding
//! and the edge function's query encoding therefore agree to the last bit in
//! these products, whatever CPU runs them. Compared with f32 activations, each
//! weight byte is used as it is stored (no dequantised f32 copy of the panel), and
//! an instruction does 16 (wasm) or 32 (AVX2) multiply-adds instead of 4 or 8.
//! The fidelity bar (cosine ≥ 0.99 against the original f32 model, BEIR within
//! 0.003) is checked in `tests/encoder_fidelity.rs` and BENCHMARKS.md.

// Index loops over fixed-size lanes are what LLVM vectorises most reliably here.
#![allow(clippy::needless_range_loop)]

use super::kernels::{NR, ROUND_MAGIC};

/// Input columns per group: the four bytes one 32-bit lane of a dot product sums.
pub const KG: usize = 4;
/// Largest quantised activation (7 bits).
const U_MAX: f32 = 127.0;
/// Tokens per tile: their quantised inputs (≤ 96 × 1,536 bytes) stay in L2 while
/// every weight panel streams past them.
const TOKEN_TILE: usize = 96;

/// A linear layer with int8 weights, `rows × cols`, one scale per row, f32 bias,
/// and the row sums of the int8 weights (for the activations' zero points).
///
/// `q` is stored in *panels* of [`NR`] rows; within a panel, input columns come in
/// groups of [`KG`], and for each group the panel's rows side by side, four bytes
/// each: `q[p·cols·NR + g·NR·KG + r·KG + j]` is row `p·NR + r`, column `g·KG + j`.
/// One 16-byte load is then four rows × four columns, exactly the operand of a
/// 4-lane byte dot product; [`pack_panels`] produces the layout.
#[derive(Clone, Copy)]
pub struct QLinear<'a> {
    pub q: &'a [i8],
    pub scale: &'a [f32],
    pub bias: &'a [f32],
    pub row_sums: &'a [i32],
    pub rows: usize,
    pub cols: usize,
}

/// Activations of `n` tokens quantised to 7 bits, one scale and zero point per
/// token, with each token's [`OUTLIERS`] largest values kept aside in f32.
#[derive(Default)]
pub struct Quantized {
    pub u: Vec<u8>,
    pub scale: Vec<f32>,
    pub zero: Vec<i32>,
    /// `n × OUTLIERS` (column, value): the values left out of `u` (where they
    /// read as 0) and added back exactly by the epilogue.
    pub outliers: Vec<(u32, f32)>,
}

/// Values per token kept out of the 7-bit range. A transformer's hidden states
/// carry a few activations hundreds of times larger than the rest (MiniLM's
/// `[CLS]` reaches 30 in column 99 where the median is 0.06): scaled to them, 127
/// steps would leave the token's other values one or two steps each. Setting the
/// largest few aside costs `OUTLIERS × rows` f32 multiply-adds per token, about 1 %
/// of the layer.
pub const OUTLIERS: usize = 4;

/// An integral `q` with |q| < 2²² as an integer, read from the bits of
/// `q + ROUND_MAGIC` (whose ulp is 1): a float-to-int `as` has saturating rules
/// that keep a loop scalar on x86 and wasm alike.
#[inline(always)]
fn small_int(q: f32) -> i32 {
    (q + ROUND_MAGIC).to_bits().wrapping_sub(ROUND_MAGIC.to_bits()) as i32
}

/// Round half to even, branch-free (`f32::round_ties_even` is a library call on
/// baseline x86_64 and would keep the loop scalar); exact for |v| < 2²².
#[inline(always)]
fn round(v: f32) -> f32 {
    (v + ROUND_MAGIC) - ROUND_MAGIC
}

/// Slots of the magnitude scan: the outliers, and the largest value left in range.
const TOP: usize = OUTLIERS + 1;

impl Quantized {
    /// Quantises `n` rows of `cols` values, reusing this buffer's allocations.
    ///
    /// Per row: one scan for the [`OUTLIERS`]` + 1` largest magnitudes; the
    /// values above the last of them (`thr`) are the outliers, kept aside exactly
    /// (at most [`OUTLIERS`]: ties at `thr` stay in range); one pass for the range
    /// of the rest; one pass that writes each value's step, or the zero point for
    /// an outlier. Both passes select rather than branch, so they vectorise.
    #[inline(always)]
    pub fn quantize(&mut self, x: &[f32], n: usize, cols: usize) {
        debug_assert_eq!(x.len(), n * cols);
        self.u.resize(n * cols, 0);
        self.scale.clear();
        self.zero.clear();
        self.outliers.clear();
        for (row, u) in x.chunks_exact(cols).zip(self.u.chunks_exact_mut(cols)) {
            let top = largest::<TOP>(row);
            let thr = top[OUTLIERS].1.abs();
            let mut kept = [(0u32, 0f32); OUTLIERS];
            for (slot, &(c, v)) in kept.iter_mut().zip(&top) {
                if v.abs() > thr {
                    *slot = (c, v);
                }
            }
            self.outliers.extend_from_slice(&kept);
            let (lo, hi) = min_max_within(row, thr);
            // The range always holds 0, so the zero point is a whole step in 0..=127.
            let (lo, hi) = (lo.min(0.0), hi.max(0.0));
            let scale = if hi > lo { (hi - lo) / U_MAX } else { 1.0 };
            let inv = 1.0 / scale;
            let zero = round(-lo * inv).clamp(0.0, U_MAX);
            // Compare-and-select rather than `f32::clamp`, and `small_int` rather
            // than a saturating `as u8`, whose exact rules kept this loop scalar
            // (one conversion per value); the value is in 0..=127 either way.
            for (d, &v) in u.iter_mut().zip(row) {
                let q = round(v * inv) + zero;
                let q = if q > U_MAX { U_MAX } else { q };
                let q = if q > 0.0 { q } else { 0.0 };
                let q = if v.abs() > thr { zero } else { q };
                *d = small_int(q) as u8;
            }
            self.scale.push(scale);
            self.zero.push(zero as i32);
        }
    }
}

/// The `K` values of largest magnitude as (column, value), largest first;
/// places a short row leaves are (0, 0.0).
///
/// Eight values at a time are compared with the smallest magnitude kept so far
/// in one vector comparison; only a block with a larger value is looked at one by
/// one, which after the first few blocks is rare.
#[inline(always)]
fn largest<const K: usize>(row: &[f32]) -> [(u32, f32); K] {
    let mut top = [(0u32, 0f32); K];
    let mut floor = 0f32;
    let mut insert = |c: usize, v: f32, floor: &mut f32| {
        let a = v.abs();
        if a <= *floor {
            return;
        }
        let mut i = K - 1;
        while i > 0 && top[i - 1].1.abs() < a {
            top[i] = top[i - 1];
            i -= 1;
        }
        top[i] = (c as u32, v);
        *floor = top[K - 1].1.abs();
    };
    let blocks = row.chunks_exact(8);
    let tail = blocks.remainder();
    for (b, block) in blocks.enumerate() {
        let mut above = false;
        for &v in block {
            above |= v.abs() > floor;
        }
        if above {
            for (l, &v) in block.iter().enumerate() {
                insert(b * 8 + l, v, &mut floor);
            }
        }
    }
    let start = row.len() - tail.len();
    for (l, &v) in tail.iter().enumerate() {
        insert(start + l, v, &mut floor);
    }
    top
}

/// Smallest and largest value among those of magnitude at most `thr`, with
/// independent lanes so the loop vectorises.
#[inline(always)]
fn min_max_within(x: &[f32], thr: f32) -> (f32, f32) {
    let within = |v: f32| if v.abs() > thr { 0.0 } else { v };
    let mut lo = [f32::INFINITY; 8];
    let mut hi = [f32::NEG_INFINITY; 8];
    let chunks = x.chunks_exact(8);
    let tail = chunks.remainder();
    for c in chunks {
        for l in 0..8 {
            let v = within(c[l]);
            lo[l] = if v < lo[l] { v } else { lo[l] };
            hi[l] = if v > hi[l] { v } else { hi[l] };
        }
    }
    let lo = tail.iter().map(|&v| within(v)).chain(lo).fold(f32::INFINITY, f32::min);
    let hi = tail.iter().map(|&v| within(v)).chain(hi).fold(f32::NEG_INFINITY, f32::max);
    (lo, hi)
}

impl QLinear<'_> {
    /// `y[t][o] = Σ_c x[t][c] · w[o][c] + bias[o]` for `n` tokens, `x` quantised
    /// into `scratch` first.
    #[inline(always)]
    pub fn forward(&self, x: &[f32], n: usize, y: &mut [f32], scratch: &mut Quantized) {
        scratch.quantize(x, n, self.cols);
        self.forward_quantized(scratch, n, y);
    }

    /// The product for inputs already quantised (`x.u` holds `n × cols` bytes).
    fn forward_quantized(&self, x: &Quantized, n: usize, y: &mut [f32]) {
        let (rows, cols) = (self.rows, self.cols);
        debug_assert_eq!(x.u.len(), n * cols);
        debug_assert_eq!(y.len(), n * rows);
        debug_assert!(rows.is_multiple_of(NR) && cols.is_multiple_of(KG));
        for t0 in (0..n).step_by(TOKEN_TILE) {
            let t1 = (t0 + TOKEN_TILE).min(n);
            for p in 0..rows / NR {
                let e = self.epilogue(x, t0..t1, p);
                product(&x.u[t0 * cols..t1 * cols], t1 - t0, cols, e.panel, &e, &mut y[t0 * rows..], rows, p * NR);
            }
        }
    }

    /// Panel `p`'s weights and what its epilogue needs for the tokens `tokens`.
    fn epilogue<'e>(&'e self, x: &'e Quantized, tokens: std::ops::Range<usize>, p: usize) -> Epilogue<'e> {
        let rows = p * NR..(p + 1) * NR;
        Epilogue {
            panel: &self.q[p * self.cols * NR..(p + 1) * self.cols * NR],
            scale: &x.scale[tokens.clone()],
            zero: &x.zero[tokens.clone()],
            outliers: &x.outliers[tokens.start * OUTLIERS..tokens.end * OUTLIERS],
            wscale: &self.scale[rows.clone()],
            row_sums: &self.row_sums[rows.clone()],
            bias: &self.bias[rows],
        }
    }
}

/// What turns one panel's integer sums into outputs: per-token scales, zero
/// points and outliers, per-row weight scales, row sums and biases.
struct Epilogue<'a> {
    panel: &'a [i8],
    scale: &'a [f32],
    zero: &'a [i32],
    outliers: &'a [(u32, f32)],
    wscale: &'a [f32],
    row_sums: &'a [i32],
    bias: &'a [f32],
}

impl Epilogue<'_> {
    /// Writes `T` tokens' outputs for this panel, from token `t` of the tile on.
    #[inline(always)]
    fn store<const T: usize>(&self, acc: &[[i32; NR]; T], t: usize, out: &mut [f32], out_stride: usize, o0: usize) {
        for m in 0..T {
            let (s, z) = (self.scale[t + m], self.zero[t + m]);
            // The outliers' products, from the same int8 weights (one column each:
            // bytes KG apart in the panel).
            let mut extra = [0f32; NR];
            for &(c, v) in &self.outliers[(t + m) * OUTLIERS..(t + m + 1) * OUTLIERS] {
                let (g, j) = (c as usize / KG, c as usize % KG);
                let Some(group) = self.panel.get(g * NR * KG..(g + 1) * NR * KG) else { continue };
                // Row r's four bytes read as one little-endian word, and byte j
                // taken out with two shifts: whole-word loads vectorise, where a
                // byte at every fourth address was read one by one.
                let shift = 24 - 8 * j as u32;
                for (e, w) in extra.iter_mut().zip(group.chunks_exact(KG)) {
                    let word = i32::from_le_bytes([w[0] as u8, w[1] as u8, w[2] as u8, w[3] as u8]);
                    *e += v * ((word << shift) >> 24) as f32;
                }
            }
            let dst = &mut out[m * out_stride + o0..m * out_stride + o0 + NR];
            for r in 0..NR {
                // Wrapping, as the AVX-512 epilogue's lanes wrap: a weight file
                // within its format never comes near i32's range, and a corrupt
                // one gives garbage here, the same on every target, not a panic.
                let sum = acc[m][r].wrapping_sub(z.wrapping_mul(self.row_sums[r]));
                dst[r] = (sum as f32 * s + extra[r]) * self.wscale[r] + self.bias[r];
            }
        }
    }
}

/// One panel against `n` quantised tokens (`u`, `cols` bytes each): the widest
/// kernel the target has, picked at run time on x86_64.
#[allow(clippy::too_many_arguments)]
fn product(u: &[u8], n: usize, cols: usize, panel: &[i8], e: &Epilogue, out: &mut [f32], stride: usize, o0: usize) {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx512vnni") && std::arch::is_x86_feature_detected!("avx512f") {
        // SAFETY: the CPU supports AVX-512F and AVX-512 VNNI (checked here), all
        // `product_vnni` requires.
        unsafe { product_vnni(u, n, cols, panel, e, out, stride, o0) };
        return;
    }
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2") {
        // SAFETY: the CPU supports AVX2 (checked here), all `product_avx2` requires.
        unsafe { product_avx2(u, n, cols, panel, e, out, stride, o0) };
        return;
    }
    #[cfg(all(target_arch = "wasm32", target_feature = "relaxed-simd"))]
    wasm::product_relaxed(u, n, cols, panel, e, out, stride, o0);
    #[cfg(not(all(target_arch = "wasm32", target_feature = "relaxed-simd")))]
    product_portable(u, n, cols, panel, e, out, stride, o0);
}

/// Walks the `$n` tokens in blocks of at most `$mr` and hands the integer sums
/// of the micro-kernel `$micro::<height>` (`T` tokens, `cols` bytes apart, × one
/// panel → `[[i32; NR]; T]`) to the epilogue: one driver for every integer
/// kernel. `[$h, …]` lists the block heights, `$mr` first, down to 1. A macro,
/// as `kernels`' `row_blocks!`: block heights must be compile-time constants,
/// and the AVX2 and VNNI kernels must be called from a function compiled for
/// them to be inlined there.
macro_rules! token_blocks {
    ([$mr:literal $(, $h:literal)*], $micro:ident; $u:expr, $n:expr, $cols:expr, $panel:expr, $e:expr, $out:expr, $stride:expr, $o0:expr) => {
        token_blocks!([$mr $(, $h)*], $micro, store; $u, $n, $cols, $panel, $e, $out, $stride, $o0)
    };
    ([$mr:literal $(, $h:literal)*], $micro:ident, $store:ident; $u:expr, $n:expr, $cols:expr, $panel:expr, $e:expr, $out:expr, $stride:expr, $o0:expr) => {{
        let mut t = 0;
        while t < $n {
            let m = ($n - t).min($mr);
            let xs = &$u[t * $cols..];
            let dst = &mut $out[t * $stride..];
            match m {
                $mr => $e.$store(&$micro::<$mr>($panel, xs, $cols), t, dst, $stride, $o0),
                $($h => $e.$store(&$micro::<$h>($panel, xs, $cols), t, dst, $stride, $o0),)*
                _ => unreachable!("micro-kernel height {m} > {}", $mr),
            }
            t += m;
        }
    }};
}

/// The portable kernel: plain integer loops over the same layout, 3 tokens at a
/// time (the tests compare every target's kernel with it).
#[cfg_attr(all(target_arch = "wasm32", target_feature = "relaxed-simd"), allow(dead_code))]
#[allow(clippy::too_many_arguments)]
fn product_portable(
    u: &[u8],
    n: usize,
    cols: usize,
    panel: &[i8],
    e: &Epilogue,
    out: &mut [f32],
    stride: usize,
    o0: usize,
) {
    token_blocks!([3, 2, 1], micro_portable; u, n, cols, panel, e, out, stride, o0);
}

#[cfg_attr(all(target_arch = "wasm32", target_feature = "relaxed-simd"), allow(dead_code))]
#[inline(always)]
fn micro_portable<const T: usize>(panel: &[i8], u: &[u8], cols: usize) -> [[i32; NR]; T] {
    let mut acc = [[0i32; NR]; T];
    for (g, w) in panel.chunks_exact(NR * KG).enumerate().take(cols / KG) {
        for m in 0..T {
            let a = &u[m * cols + g * KG..m * cols + g * KG + KG];
            for r in 0..NR {
                let mut s = 0i32;
                for j in 0..KG {
                    s += i32::from(w[r * KG + j]) * i32::from(a[j]);
                }
                acc[m][r] += s;
            }
        }
    }
    acc
}

/// AVX2: blocks of up to 4 tokens.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
#[allow(clippy::too_many_arguments)]
unsafe fn product_avx2(
    u: &[u8],
    n: usize,
    cols: usize,
    panel: &[i8],
    e: &Epilogue,
    out: &mut [f32],
    stride: usize,
    o0: usize,
) {
    token_blocks!([4, 3, 2, 1], micro_avx2; u, n, cols, panel, e, out, stride, o0);
}

/// 8-row vectors per AVX2 pass over the panel: 4 tokens × 16 rows = 8
/// accumulators, in registers with the loads beside them.
#[cfg(target_arch = "x86_64")]
const AVX2_P: usize = 2;

/// `vpmaddubsw` multiplies the four activation bytes (broadcast, unsigned) by
/// eight rows' four weight bytes (signed) and sums pairs in 16 bits; `vpmaddwd`
/// by ones sums the pairs into one 32-bit lane per row.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
#[inline]
fn micro_avx2<const T: usize>(panel: &[i8], u: &[u8], cols: usize) -> [[i32; NR]; T] {
    use std::arch::x86_64::{
        __m256i, _mm256_add_epi32, _mm256_loadu_si256, _mm256_madd_epi16, _mm256_maddubs_epi16, _mm256_set1_epi16,
        _mm256_set1_epi32, _mm256_setzero_si256, _mm256_storeu_si256,
    };
    const P: usize = AVX2_P;
    let groups = cols / KG;
    assert!(panel.len() >= groups * NR * KG && u.len() >= (T - 1) * cols + groups * KG);
    let ones = _mm256_set1_epi16(1);
    let mut out = [[0i32; NR]; T];
    for pass in 0..NR / (8 * P) {
        let mut acc: [[__m256i; P]; T] = [[_mm256_setzero_si256(); P]; T];
        for g in 0..groups {
            // SAFETY: the assert above keeps every load in bounds: 32-byte loads
            // within `g·128 .. g·128 + 128` in the panel, and four bytes at
            // `m·cols + 4g` per token.
            unsafe {
                let wp = panel.as_ptr().add(g * NR * KG + pass * 32 * P).cast::<__m256i>();
                let mut w = [_mm256_setzero_si256(); P];
                for v in 0..P {
                    w[v] = _mm256_loadu_si256(wp.add(v));
                }
                for m in 0..T {
                    let a = _mm256_set1_epi32(u.as_ptr().add(m * cols + g * KG).cast::<i32>().read_unaligned());
                    for v in 0..P {
                        let pairs = _mm256_maddubs_epi16(a, w[v]);
                        acc[m][v] = _mm256_add_epi32(acc[m][v], _mm256_madd_epi16(pairs, ones));
                    }
                }
            }
        }
        for m in 0..T {
            for v in 0..P {
                // SAFETY: `out[m]` is 32 i32s; each store writes 8 at `8·(pass·P + v)`.
                unsafe { _mm256_storeu_si256(out[m][(pass * P + v) * 8..].as_mut_ptr().cast::<__m256i>(), acc[m][v]) };
            }
        }
    }
    out
}

/// AVX-512 VNNI: blocks of up to 8 tokens.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512vnni")]
#[allow(clippy::too_many_arguments)]
unsafe fn product_vnni(
    u: &[u8],
    n: usize,
    cols: usize,
    panel: &[i8],
    e: &Epilogue,
    out: &mut [f32],
    stride: usize,
    o0: usize,
) {
    token_blocks!([8, 7, 6, 5, 4, 3, 2, 1], micro_vnni, store_avx512; u, n, cols, panel, e, out, stride, o0);
}

impl Epilogue<'_> {
    /// [`Epilogue::store`] in AVX-512, the same operations in the same order
    /// (separate multiplies and adds, never fused), so the outputs are equal to
    /// the bit. Written out because the compiler kept the generic version's
    /// outlier sums in memory, a store and a reload per outlier: with VNNI's
    /// cheap products that round trip had become a fifth of a layer's time.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx512f")]
    #[inline]
    fn store_avx512<const T: usize>(
        &self,
        acc: &[[i32; NR]; T],
        t: usize,
        out: &mut [f32],
        out_stride: usize,
        o0: usize,
    ) {
        use std::arch::x86_64::{
            __m512, _mm512_add_ps, _mm512_cvtepi32_ps, _mm512_loadu_ps, _mm512_loadu_si512, _mm512_mul_ps,
            _mm512_mullo_epi32, _mm512_set1_epi32, _mm512_set1_ps, _mm512_setzero_ps, _mm512_sll_epi32,
            _mm512_srai_epi32, _mm512_storeu_ps, _mm512_sub_epi32, _mm_cvtsi32_si128,
        };
        assert!(self.wscale.len() >= NR && self.row_sums.len() >= NR && self.bias.len() >= NR);
        for m in 0..T {
            let (s, z) = (self.scale[t + m], self.zero[t + m]);
            let mut extra: [__m512; 2] = [_mm512_setzero_ps(); 2];
            for &(c, v) in &self.outliers[(t + m) * OUTLIERS..(t + m + 1) * OUTLIERS] {
                let (g, j) = (c as usize / KG, c as usize % KG);
                let Some(group) = self.panel.get(g * NR * KG..(g + 1) * NR * KG) else { continue };
                let shift = _mm_cvtsi32_si128(24 - 8 * j as i32);
                let vv = _mm512_set1_ps(v);
                for (h, e) in extra.iter_mut().enumerate() {
                    // SAFETY: `group` is 128 bytes; each load reads 64 at `64·h`.
                    let words = unsafe { _mm512_loadu_si512(group.as_ptr().add(64 * h).cast()) };
                    let q = _mm512_srai_epi32::<24>(_mm512_sll_epi32(words, shift));
                    *e = _mm512_add_ps(*e, _mm512_mul_ps(vv, _mm512_cvtepi32_ps(q)));
                }
            }
            let dst = &mut out[m * out_stride + o0..m * out_stride + o0 + NR];
            for (h, e) in extra.iter().enumerate() {
                // SAFETY: every slice read here holds NR ≥ 16·h + 16 values (the
                // assert above, and `acc[m]` and `dst` are NR long).
                unsafe {
                    let a = _mm512_loadu_si512(acc[m][16 * h..].as_ptr().cast());
                    let rs = _mm512_loadu_si512(self.row_sums[16 * h..].as_ptr().cast());
                    let sum = _mm512_sub_epi32(a, _mm512_mullo_epi32(_mm512_set1_epi32(z), rs));
                    let y = _mm512_add_ps(_mm512_mul_ps(_mm512_cvtepi32_ps(sum), _mm512_set1_ps(s)), *e);
                    let y = _mm512_mul_ps(y, _mm512_loadu_ps(self.wscale[16 * h..].as_ptr()));
                    let y = _mm512_add_ps(y, _mm512_loadu_ps(self.bias[16 * h..].as_ptr()));
                    _mm512_storeu_ps(dst[16 * h..].as_mut_ptr(), y);
                }
            }
        }
    }
}

/// `vpdpbusd` does in one instruction what `vpmaddubsw` + `vpmaddwd` + `vpaddd`
/// do in three: each 32-bit lane adds the four products of the broadcast
/// activation bytes (unsigned) and one row's four weight bytes (signed), summed
/// in 32 bits without saturation, so the sums are the portable loop's exactly.
/// A group's 32 rows are two 64-byte vectors; 8 tokens × 2 = 16 accumulators
/// stay in registers (AVX-512 has 32), and each weight load feeds 8 products.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512vnni")]
#[inline]
fn micro_vnni<const T: usize>(panel: &[i8], u: &[u8], cols: usize) -> [[i32; NR]; T] {
    use std::arch::x86_64::{
        __m512i, _mm512_dpbusd_epi32, _mm512_loadu_si512, _mm512_set1_epi32, _mm512_setzero_si512, _mm512_storeu_si512,
    };
    let groups = cols / KG;
    assert!(panel.len() >= groups * NR * KG && u.len() >= (T - 1) * cols + groups * KG);
    let mut acc: [[__m512i; 2]; T] = [[_mm512_setzero_si512(); 2]; T];
    for g in 0..groups {
        // SAFETY: the assert above keeps every load in bounds: two 64-byte loads
        // at `g·128` in the panel, and four bytes at `m·cols + 4g` per token.
        unsafe {
            let wp = panel.as_ptr().add(g * NR * KG);
            let w0 = _mm512_loadu_si512(wp.cast());
            let w1 = _mm512_loadu_si512(wp.add(64).cast());
            for m in 0..T {
                let a = _mm512_set1_epi32(u.as_ptr().add(m * cols + g * KG).cast::<i32>().read_unaligned());
                acc[m][0] = _mm512_dpbusd_epi32(acc[m][0], a, w0);
                acc[m][1] = _mm512_dpbusd_epi32(acc[m][1], a, w1);
            }
        }
    }
    let mut out = [[0i32; NR]; T];
    for m in 0..T {
        for v in 0..2 {
            // SAFETY: `out[m]` is 32 i32s; each store writes 16 at `16·v`.
            unsafe { _mm512_storeu_si512(out[m][v * 16..].as_mut_ptr().cast(), acc[m][v]) };
        }
    }
    out
}

/// wasm32 with relaxed SIMD: `i32x4.relaxed_dot_i8x16_i7x16_add_s`, four rows ×
/// four columns per instruction (wasmtime lowers it to `pmaddubsw` + `pmaddwd` +
/// `paddd` on x86, `sdot` or `smull` pairs on Arm).
///
/// The shape was measured, not derived (docs/benchmarks/encoder.md, "Integer kernels"): the
/// engine's code generator keeps few vectors in registers across a loop turn and
/// checks the epoch at every turn, so what pays is doing more per turn (two
/// tokens × 16 rows × two groups of columns: 16 dot products) even though some
/// accumulators then live on the stack; kept in its own function so the register
/// allocator sees only the kernel.
#[cfg(all(target_arch = "wasm32", target_feature = "relaxed-simd"))]
mod wasm {
    use super::{Epilogue, KG, NR};
    use core::arch::wasm32::{
        i32x4_relaxed_dot_i8x16_i7x16_add, i32x4_splat, u32x4_splat, v128, v128_load, v128_store,
    };

    /// Vectors of four rows per pass (16 rows), and groups of four columns per loop turn.
    const V: usize = 4;
    const U: usize = 2;

    /// Blocks of two tokens.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn product_relaxed(
        u: &[u8],
        n: usize,
        cols: usize,
        panel: &[i8],
        e: &Epilogue,
        out: &mut [f32],
        stride: usize,
        o0: usize,
    ) {
        token_blocks!([2, 1], micro_relaxed; u, n, cols, panel, e, out, stride, o0);
    }

    /// `T` tokens × 32 rows in passes of `4·V` rows, `U` groups per loop turn.
    #[inline(never)]
    fn micro_relaxed<const T: usize>(panel: &[i8], u: &[u8], cols: usize) -> [[i32; NR]; T] {
        let groups = cols / KG;
        assert!(panel.len() >= groups * NR * KG && u.len() >= (T - 1) * cols + groups * KG);
        let mut out = [[0i32; NR]; T];
        for pass in 0..NR / (4 * V) {
            let mut acc = [[i32x4_splat(0); V]; T];
            let step = |g: usize, acc: &mut [[v128; V]; T]| {
                // SAFETY: the assert above keeps every load in bounds: 16-byte
                // loads within `g·128 .. g·128 + 128`, and four bytes at
                // `m·cols + 4g`, for every g < groups.
                unsafe {
                    let wp = panel.as_ptr().add(g * NR * KG + pass * 16 * V).cast::<v128>();
                    for m in 0..T {
                        let a = u32x4_splat(u.as_ptr().add(m * cols + g * KG).cast::<u32>().read_unaligned());
                        for v in 0..V {
                            acc[m][v] = i32x4_relaxed_dot_i8x16_i7x16_add(v128_load(wp.add(v)), a, acc[m][v]);
                        }
                    }
                }
            };
            let whole = groups - groups % U;
            for g0 in (0..whole).step_by(U) {
                for g in g0..g0 + U {
                    step(g, &mut acc);
                }
            }
            for g in whole..groups {
                step(g, &mut acc);
            }
            for m in 0..T {
                for v in 0..V {
                    // SAFETY: `out[m]` is 32 i32s; each store writes 4 at `16·pass + 4v`.
                    unsafe { v128_store(out[m][pass * 4 * V + v * 4..].as_mut_ptr().cast::<v128>(), acc[m][v]) };
                }
            }
        }
        out
    }
}

/// Reorders row-major `rows × cols` int8 weights into [`QLinear`]'s panels.
pub fn pack_panels(q: &[i8], rows: usize, cols: usize) -> Vec<i8> {
    assert!(rows.is_multiple_of(NR) && cols.is_multiple_of(KG), "rows must be a multiple of {NR}, cols of {KG}");
    let mut out = vec![0i8; q.len()];
    for p in 0..rows / NR {
        for g in 0..cols / KG {
            for r in 0..NR {
                for j in 0..KG {
                    out[p * cols * NR + g * NR * KG + r * KG + j] = q[(p * NR + r) * cols + g * KG + j];
                }
            }
        }
    }
    out
}

/// Each row's sum of its int8 weights (row-major `rows × cols`).
pub fn row_sums(q: &[i8], cols: usize) -> Vec<i32> {
    q.chunks_exact(cols).map(|row| row.iter().map(|&v| i32::from(v)).sum()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::encoder::kernels::quantize_rows;
    use crate::encoder::kernels::tests::pseudo;

    /// The exact integer sums and outputs, computed the obvious way.
    fn reference(qx: &Quantized, n: usize, q: &[i8], s: &[f32], b: &[f32], rows: usize, cols: usize) -> Vec<f32> {
        let mut y = vec![0.0; n * rows];
        for t in 0..n {
            for o in 0..rows {
                let dot: i32 =
                    (0..cols).map(|c| i32::from(q[o * cols + c]) * i32::from(qx.u[t * cols + c])).sum::<i32>();
                let rs: i32 = (0..cols).map(|c| i32::from(q[o * cols + c])).sum();
                let sum = dot - qx.zero[t] * rs;
                let extra: f32 = qx.outliers[t * OUTLIERS..(t + 1) * OUTLIERS]
                    .iter()
                    .map(|&(c, v)| v * f32::from(q[o * cols + c as usize]))
                    .sum();
                y[t * rows + o] = (sum as f32 * qx.scale[t] + extra) * s[o] + b[o];
            }
        }
        y
    }

    type Kernel = fn(&[u8], usize, usize, &[i8], &Epilogue, &mut [f32], usize, usize);

    /// The portable kernel and each x86 kernel the CPU running the tests has.
    fn kernels() -> Vec<(&'static str, Kernel)> {
        #[cfg_attr(not(target_arch = "x86_64"), allow(unused_mut))]
        let mut all: Vec<(&'static str, Kernel)> = vec![("portable", product_portable)];
        #[cfg(target_arch = "x86_64")]
        {
            if std::arch::is_x86_feature_detected!("avx2") {
                // SAFETY (of the call): only listed when the CPU has AVX2.
                all.push(("avx2", |u, n, c, p, e, o, s, o0| unsafe { product_avx2(u, n, c, p, e, o, s, o0) }));
            }
            if std::arch::is_x86_feature_detected!("avx512f") && std::arch::is_x86_feature_detected!("avx512vnni") {
                // SAFETY (of the call): only listed when the CPU has AVX-512F and VNNI.
                all.push(("vnni", |u, n, c, p, e, o, s, o0| unsafe { product_vnni(u, n, c, p, e, o, s, o0) }));
            }
        }
        all
    }

    fn layer(rows: usize, cols: usize, seed: u32) -> (Vec<i8>, Vec<f32>, Vec<f32>) {
        let (q, s) = quantize_rows(&pseudo(rows * cols, seed), cols);
        (q, s, pseudo(rows, seed + 1))
    }

    #[test]
    fn the_kernel_computes_the_exact_integer_product_on_every_shape() {
        for &(n, rows, cols) in &[
            (1, 32, 8),
            (2, 64, 16),
            (3, 32, 40),
            (4, 96, 12),
            (7, 64, 384),
            (13, 32, 20),
            (14, 64, 8),
            (15, 32, 20),
            (100, 32, 1536),
        ] {
            let (q, s, b) = layer(rows, cols, 1);
            let x: Vec<f32> = pseudo(n * cols, 7).iter().map(|v| v * 6.0).collect();
            let mut qx = Quantized::default();
            qx.quantize(&x, n, cols);
            let want = reference(&qx, n, &q, &s, &b, rows, cols);
            let packed = pack_panels(&q, rows, cols);
            let sums = row_sums(&q, cols);
            let lin = QLinear { q: &packed, scale: &s, bias: &b, row_sums: &sums, rows, cols };
            let mut got = vec![0.0; n * rows];
            lin.forward_quantized(&qx, n, &mut got);
            // Same integers, same float epilogue: equal to the bit.
            assert_eq!(got, want, "{n}x{rows}x{cols}");
            // And every kernel this CPU can run agrees, whichever `product` picked.
            for (name, kernel) in kernels() {
                let mut each = vec![0.0; n * rows];
                for p in 0..rows / NR {
                    let e = lin.epilogue(&qx, 0..n, p);
                    kernel(&qx.u, n, cols, e.panel, &e, &mut each, rows, p * NR);
                }
                assert_eq!(each, want, "{name} {n}x{rows}x{cols}");
            }
        }
    }

    #[test]
    fn quantised_activations_stay_within_half_a_step() {
        let cols = 384;
        let mut x: Vec<f32> = pseudo(4 * cols, 3).iter().map(|v| v * 10.0).collect();
        x[..cols].iter_mut().for_each(|v| *v = v.abs() + 0.5); // all positive: zero point 0
        x[cols..2 * cols].iter_mut().for_each(|v| *v = -v.abs() - 0.5); // all negative: zero point 127
        x[3 * cols + 99] = 300.0; // a [CLS]-like outlier
        x[3 * cols + 7] = -250.0;
        let mut qx = Quantized::default();
        qx.quantize(&x, 4, cols);
        assert_eq!((qx.zero[0], qx.zero[1]), (0, 127));
        for t in 0..4 {
            let outliers = &qx.outliers[t * OUTLIERS..(t + 1) * OUTLIERS];
            // The outliers are the row's largest magnitudes, and nothing else is as large.
            let smallest_outlier = outliers.iter().map(|o| o.1.abs()).fold(f32::INFINITY, f32::min);
            for c in 0..cols {
                let v = x[t * cols + c];
                let kept = outliers.iter().find(|o| o.0 as usize == c && o.1 != 0.0);
                let step = qx.scale[t] * (i32::from(qx.u[t * cols + c]) - qx.zero[t]) as f32;
                assert!(qx.u[t * cols + c] <= 127);
                match kept {
                    Some(o) => assert!(o.1 == v && step == 0.0, "{t} {c}: outlier {o:?}, step {step}"),
                    None => {
                        assert!(v.abs() <= smallest_outlier, "{t} {c}: {v} left in range");
                        assert!((step - v).abs() <= qx.scale[t] * 0.5 + 1e-5, "{t} {c}: {step} for {v}");
                    }
                }
            }
        }
        // The outliers take the range's extremes with them: the CLS-like row keeps
        // steps as fine as its ordinary values need.
        assert!(qx.scale[3] < 10.0 / 127.0, "{}", qx.scale[3]);
        assert!(qx.outliers[3 * OUTLIERS..4 * OUTLIERS].iter().any(|o| o == &(99, 300.0)));
        // A row of zeros is exact and has no outliers; so are ties at the threshold
        // (six equal values: none is above the fifth largest, so none is set aside).
        qx.quantize(&[0.0; 8], 1, 8);
        assert!(qx.u.iter().all(|&u| u == 0) && qx.zero[0] == 0 && qx.outliers.iter().all(|o| o.1 == 0.0));
        qx.quantize(&[2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 1.0, 0.0], 1, 8);
        assert!(qx.outliers.iter().all(|o| o.1 == 0.0));
        assert_eq!(qx.u, [127, 127, 127, 127, 127, 127, 64, 0]);
    }

    #[test]
    fn the_quantised_layer_is_close_to_f32() {
        let (n, rows, cols) = (5, 64, 384);
        let w = pseudo(rows * cols, 11);
        let (q, s) = quantize_rows(&w, cols);
        let b = pseudo(rows, 12);
        let x = pseudo(n * cols, 13);
        let packed = pack_panels(&q, rows, cols);
        let sums = row_sums(&q, cols);
        let lin = QLinear { q: &packed, scale: &s, bias: &b, row_sums: &sums, rows, cols };
        let mut got = vec![0.0; n * rows];
        lin.forward(&x, n, &mut got, &mut Quantized::default());
        for t in 0..n {
            for o in 0..rows {
                let want: f32 = (0..cols).map(|c| x[t * cols + c] * w[o * cols + c]).sum::<f32>() + b[o];
                // Each term's error is at most half a step of each quantisation.
                assert!((got[t * rows + o] - want).abs() < 0.05, "{t} {o}: {} vs {want}", got[t * rows + o]);
            }
        }
    }
}
