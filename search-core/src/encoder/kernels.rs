//! The encoder's f32 kernels: the panel product attention runs on (scores = Q·Kᵀ,
//! context = P·V), LayerNorm, GELU, softmax and small reductions, written so that
//! LLVM vectorises them (fixed-width panels, independent accumulators) for
//! SSE/AVX2 natively and SIMD128 in wasm. The linear layers, where nearly all the
//! arithmetic is, have their own integer kernels in [`super::linear`].
//!
//! On x86_64 the panel product is compiled for AVX-512 and for AVX2 + FMA and
//! picked at run time, plain otherwise; the rest is inlined into the encoder's
//! forward pass, which is itself compiled for AVX-512, for AVX2 and for baseline
//! x86_64 (`Encoder::embed_tokens`). wasm builds use SIMD128 when compiled with
//! `+simd128`.

// Index loops over fixed-size lanes are what LLVM vectorises most reliably here.
#![allow(clippy::needless_range_loop)]

/// Outputs per panel: the products compute `NR` outputs at once. Part of the
/// encoder file's layout (weight panels are packed with it, see
/// [`super::linear::QLinear`]), and attention's panels of keys and values.
pub const NR: usize = 32;

/// 1.5·2²³: for |v| < 2²², `v + ROUND_MAGIC` has an ulp of 1, so the addition
/// rounds `v` to the nearest integer (ties to even) and its bits less
/// `ROUND_MAGIC`'s are that integer. Rounding and float-to-int conversion without
/// library calls or saturating casts, so the loops around them vectorise (`exp`
/// here, the activations' quantisation in [`super::linear`]).
pub(crate) const ROUND_MAGIC: f32 = 12_582_912.0;

/// The GEMM building block: for `n` rows of `x` (each `cols` long, `x_stride`
/// apart) and one panel of [`NR`] columns (`panel[c·NR + r]`), writes
/// `out[t·out_stride + o0 + r] = Σ_c x[t][c] · panel[c][r]`.
///
/// Attention's product: a panel of keys for the scores, of values for the context. The widest
/// instruction set the CPU has is picked at run time on x86_64.
#[allow(clippy::too_many_arguments)]
pub fn panel_product(
    x: &[f32],
    n: usize,
    cols: usize,
    x_stride: usize,
    panel: &[f32],
    out: &mut [f32],
    out_stride: usize,
    o0: usize,
) {
    debug_assert!(panel.len() >= cols * NR);
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::is_x86_feature_detected as has;
        if has!("avx512f") && has!("fma") {
            // SAFETY: the CPU supports AVX-512F, AVX2 and FMA (checked here), which
            // is all `product_avx512` requires; it only calls safe code.
            unsafe { product_avx512(x, n, cols, x_stride, panel, out, out_stride, o0) };
            return;
        }
        if has!("avx2") && has!("fma") {
            // SAFETY: as above, for AVX2 and FMA.
            unsafe { product_avx2(x, n, cols, x_stride, panel, out, out_stride, o0) };
            return;
        }
    }
    product::<2>(x, n, cols, x_stride, panel, out, out_stride, o0);
}

/// Walks the `$n` rows of `$x` in blocks of at most `$mr` (≤ 6) rows and calls the
/// micro-kernel `$micro::<height>` on each: one driver for the portable, AVX2 and
/// AVX-512 kernels, whose block heights must be compile-time constants.
macro_rules! row_blocks {
    ($mr:expr, $micro:ident; $x:expr, $n:expr, $cols:expr, $x_stride:expr, $panel:expr, $out:expr, $out_stride:expr, $o0:expr) => {{
        let mut t = 0;
        while t < $n {
            let m = ($n - t).min($mr);
            let xs = &$x[t * $x_stride..];
            let dst = &mut $out[t * $out_stride..];
            match m {
                6 => $micro::<6>($panel, xs, $cols, $x_stride, dst, $out_stride, $o0),
                5 => $micro::<5>($panel, xs, $cols, $x_stride, dst, $out_stride, $o0),
                4 => $micro::<4>($panel, xs, $cols, $x_stride, dst, $out_stride, $o0),
                3 => $micro::<3>($panel, xs, $cols, $x_stride, dst, $out_stride, $o0),
                2 => $micro::<2>($panel, xs, $cols, $x_stride, dst, $out_stride, $o0),
                1 => $micro::<1>($panel, xs, $cols, $x_stride, dst, $out_stride, $o0),
                _ => unreachable!("micro-kernel height {m} > 6"),
            }
            t += m;
        }
    }};
}

/// AVX2 + FMA: 2 rows × 32 columns of accumulators (8 ymm registers) beside the
/// panel's four vectors and the broadcast input, 13 of the 16. Written with
/// intrinsics: the portable kernel at 3 rows needed 17 and kept one accumulator on
/// the stack, and every FMA into it then waited on a store and a reload (half of
/// the attention's time on 256-token texts).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
#[allow(clippy::too_many_arguments)]
unsafe fn product_avx2(
    x: &[f32],
    n: usize,
    cols: usize,
    x_stride: usize,
    panel: &[f32],
    out: &mut [f32],
    out_stride: usize,
    o0: usize,
) {
    row_blocks!(2, micro_avx2; x, n, cols, x_stride, panel, out, out_stride, o0);
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
#[inline]
fn micro_avx2<const T: usize>(
    panel: &[f32],
    xs: &[f32],
    cols: usize,
    x_stride: usize,
    out: &mut [f32],
    out_stride: usize,
    o0: usize,
) {
    use std::arch::x86_64::{
        __m256, _mm256_fmadd_ps, _mm256_loadu_ps, _mm256_set1_ps, _mm256_setzero_ps, _mm256_storeu_ps,
    };
    let mut acc: [[__m256; 4]; T] = [[_mm256_setzero_ps(); 4]; T];
    for (c, w) in panel.chunks_exact(NR).enumerate().take(cols) {
        // SAFETY: `w` is NR = 32 floats, so the four 8-float loads are in bounds.
        let w = unsafe {
            [
                _mm256_loadu_ps(w.as_ptr()),
                _mm256_loadu_ps(w[8..].as_ptr()),
                _mm256_loadu_ps(w[16..].as_ptr()),
                _mm256_loadu_ps(w[24..].as_ptr()),
            ]
        };
        for (m, a) in acc.iter_mut().enumerate() {
            let xv = _mm256_set1_ps(xs[m * x_stride + c]);
            for v in 0..4 {
                a[v] = _mm256_fmadd_ps(xv, w[v], a[v]);
            }
        }
    }
    for (m, a) in acc.iter().enumerate() {
        let dst = &mut out[m * out_stride + o0..m * out_stride + o0 + NR];
        for v in 0..4 {
            // SAFETY: `dst` is NR = 32 floats, so each 8-float store at 8v is in bounds.
            unsafe { _mm256_storeu_ps(dst[v * 8..].as_mut_ptr(), a[v]) };
        }
    }
}

/// AVX-512: 32 zmm registers hold 6 rows × 32 columns of accumulators (2 per row,
/// so each broadcast input feeds two FMAs). Written with intrinsics: left to itself,
/// LLVM folds the panel load into every FMA (6 loads of the same vector per column)
/// and the kernel waits on the load ports instead of the FMA units.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx2,fma")]
#[allow(clippy::too_many_arguments)]
unsafe fn product_avx512(
    x: &[f32],
    n: usize,
    cols: usize,
    x_stride: usize,
    panel: &[f32],
    out: &mut [f32],
    out_stride: usize,
    o0: usize,
) {
    row_blocks!(6, micro_avx512; x, n, cols, x_stride, panel, out, out_stride, o0);
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx2,fma")]
#[inline]
fn micro_avx512<const T: usize>(
    panel: &[f32],
    xs: &[f32],
    cols: usize,
    x_stride: usize,
    out: &mut [f32],
    out_stride: usize,
    o0: usize,
) {
    use std::arch::x86_64::{
        __m512, _mm512_fmadd_ps, _mm512_loadu_ps, _mm512_set1_ps, _mm512_setzero_ps, _mm512_storeu_ps,
    };
    let mut acc: [[__m512; 2]; T] = [[_mm512_setzero_ps(); 2]; T];
    for (c, w) in panel.chunks_exact(NR).enumerate().take(cols) {
        // SAFETY: `w` is NR = 32 floats, so both 16-float loads are in bounds.
        let (w0, w1) = unsafe { (_mm512_loadu_ps(w.as_ptr()), _mm512_loadu_ps(w[16..].as_ptr())) };
        for (m, a) in acc.iter_mut().enumerate() {
            let xv = _mm512_set1_ps(xs[m * x_stride + c]);
            a[0] = _mm512_fmadd_ps(xv, w0, a[0]);
            a[1] = _mm512_fmadd_ps(xv, w1, a[1]);
        }
    }
    for (m, a) in acc.iter().enumerate() {
        let dst = &mut out[m * out_stride + o0..m * out_stride + o0 + NR];
        // SAFETY: `dst` is NR = 32 floats, so both 16-float stores are in bounds.
        unsafe {
            _mm512_storeu_ps(dst.as_mut_ptr(), a[0]);
            _mm512_storeu_ps(dst[16..].as_mut_ptr(), a[1]);
        }
    }
}

#[inline(always)]
#[allow(clippy::too_many_arguments)]
fn product<const MR: usize>(
    x: &[f32],
    n: usize,
    cols: usize,
    x_stride: usize,
    panel: &[f32],
    out: &mut [f32],
    out_stride: usize,
    o0: usize,
) {
    row_blocks!(MR, micro; x, n, cols, x_stride, panel, out, out_stride, o0);
}

/// `T` rows × [`NR`] columns: for each input column, one panel row times each
/// row's input value, accumulated in registers.
#[inline(always)]
fn micro<const T: usize>(
    panel: &[f32],
    xs: &[f32],
    cols: usize,
    x_stride: usize,
    out: &mut [f32],
    out_stride: usize,
    o0: usize,
) {
    let mut acc = [[0f32; NR]; T];
    for (c, w) in panel.chunks_exact(NR).enumerate().take(cols) {
        for m in 0..T {
            let xv = xs[m * x_stride + c];
            for r in 0..NR {
                acc[m][r] += xv * w[r];
            }
        }
    }
    for m in 0..T {
        out[m * out_stride + o0..m * out_stride + o0 + NR].copy_from_slice(&acc[m]);
    }
}

/// Sum with eight independent accumulators: a plain `iter().sum()` is a serial
/// chain of additions (floating point is not reassociated), which neither
/// vectorises nor pipelines.
#[inline(always)]
fn sum(x: &[f32]) -> f32 {
    let mut acc = [0f32; 8];
    let chunks = x.chunks_exact(8);
    let tail: f32 = chunks.remainder().iter().sum();
    for c in chunks {
        for l in 0..8 {
            acc[l] += c[l];
        }
    }
    acc.iter().sum::<f32>() + tail
}

#[inline(always)]
fn max(x: &[f32]) -> f32 {
    let mut acc = [f32::NEG_INFINITY; 8];
    let chunks = x.chunks_exact(8);
    let tail = chunks.remainder().iter().copied().fold(f32::NEG_INFINITY, f32::max);
    for c in chunks {
        for l in 0..8 {
            acc[l] = if c[l] > acc[l] { c[l] } else { acc[l] };
        }
    }
    acc.iter().copied().fold(tail, f32::max)
}

/// In-place LayerNorm of every `dim`-sized row of `x`.
#[inline(always)]
pub fn layer_norm(x: &mut [f32], dim: usize, weight: &[f32], bias: &[f32], eps: f32) {
    let mut sq = vec![0f32; dim];
    for row in x.chunks_exact_mut(dim) {
        let mean = sum(row) / dim as f32;
        for (s, v) in sq.iter_mut().zip(row.iter()) {
            *s = (v - mean) * (v - mean);
        }
        let inv = 1.0 / (sum(&sq) / dim as f32 + eps).sqrt();
        for ((v, w), b) in row.iter_mut().zip(weight).zip(bias) {
            *v = (*v - mean) * inv * w + b;
        }
    }
}

/// GELU as BERT uses it: `x · Φ(x)` with the (exact) error function.
#[inline(always)]
pub fn gelu(x: &mut [f32]) {
    for v in x {
        *v = 0.5 * *v * (1.0 + erf(*v * std::f32::consts::FRAC_1_SQRT_2));
    }
}

/// The error function as a rational approximation on [-4, 4] (±1 outside), within
/// 5e-7 of the correctly rounded value: branch-free, so a loop over it vectorises,
/// where a libm call per element took a fifth of the encoder's time.
#[inline(always)]
pub fn erf(a: f32) -> f32 {
    let x = a.clamp(-4.0, 4.0);
    let x2 = x * x;
    let mut p = x2 * -2.726_142_3e-10 + 2.770_681_4e-8;
    p = x2 * p - 2.101_024e-6;
    p = x2 * p - 5.692_506_4e-5;
    p = x2 * p - 7.349_906_3e-4;
    p = x2 * p - 2.9546e-3;
    p = x2 * p - 1.609_603_3e-2;
    p *= x;
    let mut q = x2 * -1.456_607_2e-5 - 2.133_740_6e-4;
    q = x2 * q - 1.682_827e-3;
    q = x2 * q - 7.373_329e-3;
    q = x2 * q - 1.426_474e-2;
    p / q
}

/// `e^x` by range reduction (`x = n·ln2 + r`) and a degree-6 polynomial for `e^r`,
/// within 2 ulp over the range softmax uses; branch-free, so softmax vectorises.
#[inline(always)]
pub fn exp(x: f32) -> f32 {
    let x = x.clamp(-87.0, 88.0);
    // Round to nearest by adding and removing ROUND_MAGIC: `f32::round` is a
    // library call on baseline x86_64 and would stop the loop from vectorising.
    let t = x * std::f32::consts::LOG2_E + ROUND_MAGIC;
    let n = t - ROUND_MAGIC;
    let r = x - n * 0.693_359_4 + n * 2.121_944_4e-4;
    let mut p = 1.987_569_1e-4;
    p = p * r + 1.398_199_9e-3;
    p = p * r + 8.333_452e-3;
    p = p * r + 4.166_579_6e-2;
    p = p * r + 0.166_666_65;
    p = p * r + 0.5;
    let e = p * r * r + r + 1.0;
    // `t` is ROUND_MAGIC + n exactly (|n| ≤ 127), so its bits less ROUND_MAGIC's
    // are n: no float-to-int conversion, whose saturating rules (NaN to 0,
    // clamping) kept this loop scalar on x86.
    let n = t.to_bits().wrapping_sub(ROUND_MAGIC.to_bits()) as i32;
    e * f32::from_bits(((n + 127) as u32) << 23)
}

/// In-place softmax.
#[inline(always)]
pub fn softmax(x: &mut [f32]) {
    let m = max(x);
    for v in x.iter_mut() {
        *v = exp(*v - m);
    }
    let inv = 1.0 / sum(x);
    for v in x.iter_mut() {
        *v *= inv;
    }
}

/// Symmetric per-row int8 quantisation: `w ≈ q · scale`.
pub fn quantize_rows(w: &[f32], cols: usize) -> (Vec<i8>, Vec<f32>) {
    let mut q = Vec::with_capacity(w.len());
    let mut scales = Vec::with_capacity(w.len() / cols);
    for row in w.chunks_exact(cols) {
        let max = row.iter().fold(0f32, |m, v| m.max(v.abs()));
        let scale = if max > 0.0 { max / 127.0 } else { 1.0 };
        scales.push(scale);
        q.extend(row.iter().map(|v| (v / scale).round().clamp(-127.0, 127.0) as i8));
    }
    (q, scales)
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// Deterministic values in [-0.5, 0.5) (a linear congruential generator).
    pub(crate) fn pseudo(n: usize, seed: u32) -> Vec<f32> {
        let mut s = seed;
        (0..n)
            .map(|_| {
                s = s.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
                (s >> 8) as f32 / (1u32 << 24) as f32 - 0.5
            })
            .collect()
    }

    #[test]
    fn the_panel_product_matches_a_plain_product_on_every_shape() {
        for &(n, cols, stride) in &[(1, 8, 8), (3, 16, 20), (7, 32, 32), (14, 7, 9), (100, 256, 256)] {
            let x = pseudo(n * stride, 2);
            let panel = pseudo(cols * NR, 1);
            let (out_stride, o0) = (NR + 5, 3);
            let mut got = vec![0.0; n * out_stride];
            panel_product(&x, n, cols, stride, &panel, &mut got, out_stride, o0);
            for t in 0..n {
                for r in 0..NR {
                    let want: f32 = (0..cols).map(|c| x[t * stride + c] * panel[c * NR + r]).sum();
                    let g = got[t * out_stride + o0 + r];
                    assert!((g - want).abs() < 1e-4, "{n}x{cols}: {g} vs {want}");
                }
            }
        }
    }

    #[test]
    fn quantisation_error_is_small() {
        let w = pseudo(384 * 8, 9);
        let (q, s) = quantize_rows(&w, 384);
        for (i, (v, qv)) in w.iter().zip(&q).enumerate() {
            assert!((v - f32::from(*qv) * s[i / 384]).abs() <= s[i / 384] / 2.0 + 1e-7);
        }
    }

    #[test]
    fn fast_erf_and_exp_are_accurate() {
        let mut worst_erf = 0f32;
        let mut worst_exp = 0f32;
        let mut x = -9.0f32;
        while x < 9.0 {
            worst_erf = worst_erf.max((erf(x) - libm::erff(x)).abs());
            let e = f64::from(x).exp();
            worst_exp = worst_exp.max(((f64::from(exp(x)) - e) / e).abs() as f32);
            x += 1e-3;
        }
        let mut x = -87.0f32;
        while x < 0.0 {
            let e = f64::from(x).exp();
            worst_exp = worst_exp.max(((f64::from(exp(x)) - e) / e).abs() as f32);
            x += 0.01;
        }
        assert!(worst_erf < 1e-6, "erf error {worst_erf}");
        assert!(worst_exp < 3e-7, "exp relative error {worst_exp}");
    }

    #[test]
    fn layer_norm_softmax_gelu() {
        let mut x = vec![1.0, 2.0, 3.0, 4.0];
        layer_norm(&mut x, 4, &[1.0; 4], &[0.0; 4], 1e-12);
        assert!((x.iter().sum::<f32>()).abs() < 1e-5);
        assert!((x[3] - 1.341_640_8).abs() < 1e-5);
        let mut p = vec![1.0, 2.0, 3.0];
        softmax(&mut p);
        assert!((p.iter().sum::<f32>() - 1.0).abs() < 1e-6);
        assert!((p[2] - 0.665_240_94).abs() < 1e-6);
        let mut g = vec![-1.0, 0.0, 1.0];
        gelu(&mut g);
        assert!((g[0] + 0.158_655_25).abs() < 1e-6 && g[1] == 0.0 && (g[2] - 0.841_344_7).abs() < 1e-6);
    }
}
