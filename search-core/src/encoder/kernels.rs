//! The numeric kernels of the encoder: an int8-weight linear layer, LayerNorm,
//! GELU, and small dot products, written so that LLVM vectorises them (fixed-width
//! width panels, independent accumulators) for SSE/AVX2 natively and SIMD128 in wasm.
//!
//! Why int8 weights with f32 activations: the weights are what is bundled into the
//! component (4× smaller than f32) and what streams through the caches on every
//! query; activations stay f32, so accuracy stays within the faithfulness budget
//! (cosine ≥ 0.99 against the original f32 model). On x86_64 the linear kernel is
//! compiled twice and picked at run time: with AVX2 + FMA when the CPU has them,
//! plain otherwise; wasm builds use SIMD128 when compiled with `+simd128`.

// Index loops over fixed-size lanes are what LLVM vectorises most reliably here.
#![allow(clippy::needless_range_loop)]

/// Output rows per weight panel: the kernel computes `NR` outputs at once. Part of
/// the encoder file's layout (panels are packed with it).
pub const NR: usize = 32;
/// Tokens sharing one dequantised weight panel (kept in L1/L2 across them).
const TOKEN_TILE: usize = 96;

/// A multiply-add: fused where the target has FMA, plain elsewhere (a fused
/// multiply-add without hardware support is a slow library call).
trait MulAdd {
    fn mul_add(a: f32, b: f32, c: f32) -> f32;
}

struct Plain;
impl MulAdd for Plain {
    #[inline(always)]
    fn mul_add(a: f32, b: f32, c: f32) -> f32 {
        a * b + c
    }
}

#[cfg(target_arch = "x86_64")]
struct Fused;
#[cfg(target_arch = "x86_64")]
impl MulAdd for Fused {
    #[inline(always)]
    fn mul_add(a: f32, b: f32, c: f32) -> f32 {
        a.mul_add(b, c)
    }
}

/// A linear layer with int8 weights, `rows × cols`, one scale per row, f32 bias.
///
/// `q` is stored in *panels* of [`NR`] rows: panel `p` holds, for each input
/// column `c`, the weights of rows `p·NR .. p·NR+NR` side by side
/// (`q[p·cols·NR + c·NR + r]`). The kernel then walks the input columns once per
/// panel and updates `NR` outputs per step with one vector operation — the classic
/// outer-product GEMM micro-kernel, which keeps the FMA units busy instead of
/// waiting on loads. [`pack_panels`] produces the layout.
#[derive(Clone, Copy)]
pub struct QLinear<'a> {
    pub q: &'a [i8],
    pub scale: &'a [f32],
    pub bias: &'a [f32],
    pub rows: usize,
    pub cols: usize,
}

impl QLinear<'_> {
    /// `y[t][o] = scale[o] · Σ_c x[t][c] · q[o][c] + bias[o]` for `n` tokens.
    pub fn forward(&self, x: &[f32], n: usize, y: &mut [f32]) {
        debug_assert_eq!(x.len(), n * self.cols);
        debug_assert_eq!(y.len(), n * self.rows);
        debug_assert_eq!(self.rows % NR, 0);
        let (rows, cols) = (self.rows, self.cols);
        let mut panel = vec![0f32; cols * NR];
        for t0 in (0..n).step_by(TOKEN_TILE) {
            let t1 = (t0 + TOKEN_TILE).min(n);
            for p in 0..rows / NR {
                for (dst, src) in panel.iter_mut().zip(&self.q[p * cols * NR..(p + 1) * cols * NR]) {
                    *dst = f32::from(*src);
                }
                panel_product(&x[t0 * cols..t1 * cols], t1 - t0, cols, cols, &panel, &mut y[t0 * rows..], rows, p * NR);
            }
        }
        for row in y.chunks_exact_mut(rows) {
            for ((v, s), b) in row.iter_mut().zip(self.scale).zip(self.bias) {
                *v = *v * s + b;
            }
        }
    }
}

/// The GEMM building block: for `n` rows of `x` (each `cols` long, `x_stride`
/// apart) and one panel of [`NR`] columns (`panel[c·NR + r]`), writes
/// `out[t·out_stride + o0 + r] = Σ_c x[t][c] · panel[c][r]`.
///
/// Used by the linear layers (a panel of dequantised weights) and by attention
/// (a panel of keys for the scores, of values for the context). The widest
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
    product::<Plain, 2>(x, n, cols, x_stride, panel, out, out_stride, o0);
}

/// Walks the `$n` rows of `$x` in blocks of at most `$mr` (≤ 6) rows and calls the
/// micro-kernel `$micro::<height>` on each: one driver for the portable and the
/// AVX-512 kernels, whose block heights must be compile-time constants.
macro_rules! row_blocks {
    ($mr:expr, $micro:ident $(::<$kernel:ty>)?; $x:expr, $n:expr, $cols:expr, $x_stride:expr, $panel:expr, $out:expr, $out_stride:expr, $o0:expr) => {{
        let mut t = 0;
        while t < $n {
            let m = ($n - t).min($mr);
            let xs = &$x[t * $x_stride..];
            let dst = &mut $out[t * $out_stride..];
            match m {
                6 => $micro::<6 $(, $kernel)?>($panel, xs, $cols, $x_stride, dst, $out_stride, $o0),
                5 => $micro::<5 $(, $kernel)?>($panel, xs, $cols, $x_stride, dst, $out_stride, $o0),
                4 => $micro::<4 $(, $kernel)?>($panel, xs, $cols, $x_stride, dst, $out_stride, $o0),
                3 => $micro::<3 $(, $kernel)?>($panel, xs, $cols, $x_stride, dst, $out_stride, $o0),
                2 => $micro::<2 $(, $kernel)?>($panel, xs, $cols, $x_stride, dst, $out_stride, $o0),
                1 => $micro::<1 $(, $kernel)?>($panel, xs, $cols, $x_stride, dst, $out_stride, $o0),
                _ => unreachable!("micro-kernel height {m} > 6"),
            }
            t += m;
        }
    }};
}

/// AVX2: 16 ymm registers hold 3 rows × 32 columns of accumulators.
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
    product::<Fused, 3>(x, n, cols, x_stride, panel, out, out_stride, o0);
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
fn product<M: MulAdd, const MR: usize>(
    x: &[f32],
    n: usize,
    cols: usize,
    x_stride: usize,
    panel: &[f32],
    out: &mut [f32],
    out_stride: usize,
    o0: usize,
) {
    row_blocks!(MR, micro::<M>; x, n, cols, x_stride, panel, out, out_stride, o0);
}

/// `T` rows × [`NR`] columns: for each input column, one panel row times each
/// row's input value, accumulated in registers.
#[inline(always)]
fn micro<const T: usize, M: MulAdd>(
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
                acc[m][r] = M::mul_add(xv, w[r], acc[m][r]);
            }
        }
    }
    for m in 0..T {
        out[m * out_stride + o0..m * out_stride + o0 + NR].copy_from_slice(&acc[m]);
    }
}

/// Reorders row-major `rows × cols` int8 weights into [`QLinear`]'s panels.
pub fn pack_panels(q: &[i8], rows: usize, cols: usize) -> Vec<i8> {
    assert_eq!(rows % NR, 0, "rows must be a multiple of {NR}");
    let mut out = vec![0i8; q.len()];
    for p in 0..rows / NR {
        for c in 0..cols {
            for r in 0..NR {
                out[p * cols * NR + c * NR + r] = q[(p * NR + r) * cols + c];
            }
        }
    }
    out
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
    // Round to nearest by adding and removing 1.5·2²³: `f32::round` is a library
    // call on baseline x86_64 and would stop the loop from vectorising.
    const MAGIC: f32 = 12_582_912.0;
    let n = (x * std::f32::consts::LOG2_E + MAGIC) - MAGIC;
    let r = x - n * 0.693_359_4 + n * 2.121_944_4e-4;
    let mut p = 1.987_569_1e-4;
    p = p * r + 1.398_199_9e-3;
    p = p * r + 8.333_452e-3;
    p = p * r + 4.166_579_6e-2;
    p = p * r + 0.166_666_65;
    p = p * r + 0.5;
    let e = p * r * r + r + 1.0;
    e * f32::from_bits(((n as i32 + 127) as u32) << 23)
}

/// In-place softmax.
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
mod tests {
    use super::*;

    fn reference(x: &[f32], n: usize, w: &[f32], rows: usize, cols: usize, b: &[f32]) -> Vec<f32> {
        let mut y = vec![0.0; n * rows];
        for t in 0..n {
            for o in 0..rows {
                y[t * rows + o] = (0..cols).map(|c| x[t * cols + c] * w[o * cols + c]).sum::<f32>() + b[o];
            }
        }
        y
    }

    fn pseudo(n: usize, seed: u32) -> Vec<f32> {
        let mut s = seed;
        (0..n)
            .map(|_| {
                s = s.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
                (s >> 8) as f32 / (1u32 << 24) as f32 - 0.5
            })
            .collect()
    }

    #[test]
    fn quantised_linear_matches_f32_on_every_shape() {
        for &(n, rows, cols) in &[(1, 32, 8), (3, 64, 16), (33, 32, 40), (5, 96, 13), (100, 64, 384), (14, 32, 7)] {
            let w = pseudo(rows * cols, 1);
            let x = pseudo(n * cols, 2);
            let b = pseudo(rows, 3);
            let (q, s) = quantize_rows(&w, cols);
            let deq: Vec<f32> = q.iter().enumerate().map(|(i, &v)| f32::from(v) * s[i / cols]).collect();
            let want = reference(&x, n, &deq, rows, cols, &b);
            let mut got = vec![0.0; n * rows];
            let q = pack_panels(&q, rows, cols);
            QLinear { q: &q, scale: &s, bias: &b, rows, cols }.forward(&x, n, &mut got);
            for (g, w) in got.iter().zip(&want) {
                assert!((g - w).abs() < 1e-4, "{n}x{rows}x{cols}: {g} vs {w}");
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
