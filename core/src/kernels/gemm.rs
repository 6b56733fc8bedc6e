//! Matrix products on the executor's threads: `C = A · Bᵀ` for a dense layer (B a weight matrix `[n × k]` as
//! PyTorch's `Linear` stores it), and the small per-head products of attention.
//!
//! The right-hand side is packed into panels of [`NR`] columns, each `k` rows of `NR` values (zero-padded past
//! `n`): a layer's weights once when the model is prepared, attention's keys and values per head into thread
//! scratch. The left-hand side is read in place, row by row. A dense product is cut into tiles of `MC × NC`
//! outputs, and every output is summed over the whole of `k` by one micro-kernel call, in order: results are
//! identical whatever threads run them and however wide the tiles are.

use super::activation::Activation;
use super::bf16;
use super::{Ahead, Kernels, Lhs, MicroTile, NR};
use crate::error::{Error, Result};
use crate::executor::Executor;
use std::sync::atomic::{AtomicUsize, Ordering};

/// Panels of `NR` columns: in f32, panel `q` holds `B[p][q·NR + j]` at `q·k·NR + p·NR + j`; in bf16, as
/// [`bf16`] lays them out.
pub struct Packed {
    pub n: usize,
    pub k: usize,
    pub panels: Panels,
}

/// A packed matrix's values, in the precision it is multiplied in.
pub enum Panels {
    F32(Vec<f32>),
    Bf16(Vec<u16>),
}

/// Floats a packed `n × k` right-hand side takes.
pub fn packed_len(n: usize, k: usize) -> usize {
    n.div_ceil(NR) * NR * k
}

/// Packs `Bᵀ` given as rows: `B[p][j] = src[j·ld + p]` for `j < n`, `p < k` (a weight matrix, or attention's keys).
pub fn pack_rows(src: &[f32], ld: usize, n: usize, k: usize, dst: &mut [f32]) {
    let dst = &mut dst[..packed_len(n, k)];
    for (q, panel) in dst.chunks_exact_mut(k * NR).enumerate() {
        for jj in 0..NR {
            let j = q * NR + jj;
            if j < n {
                let row = &src[j * ld..j * ld + k];
                for (p, v) in row.iter().enumerate() {
                    panel[p * NR + jj] = *v;
                }
            } else {
                for p in 0..k {
                    panel[p * NR + jj] = 0.0;
                }
            }
        }
    }
}

/// Packs `B` given as rows: `B[p][j] = src[p·ld + j]` (attention's values).
pub fn pack_columns(src: &[f32], ld: usize, k: usize, n: usize, dst: &mut [f32]) {
    let dst = &mut dst[..packed_len(n, k)];
    for (q, panel) in dst.chunks_exact_mut(k * NR).enumerate() {
        let (j0, width) = (q * NR, NR.min(n - q * NR));
        for p in 0..k {
            panel_line(&mut panel[p * NR..p * NR + NR], &src[p * ld + j0..p * ld + j0 + width]);
        }
    }
}

/// One line of a panel: `src` (at most [`NR`] floats), then zeros. A whole line is copied at a constant length, two
/// vector moves rather than a call to `memmove` and one to `memset` for nothing (3% of a training step).
#[inline(always)]
fn panel_line(out: &mut [f32], src: &[f32]) {
    if src.len() == NR {
        let out: &mut [f32; NR] = (&mut out[..NR]).try_into().expect("a line holds NR floats");
        *out = src.try_into().expect("NR floats");
    } else {
        out[..src.len()].copy_from_slice(src);
        out[src.len()..].fill(0.0);
    }
}

impl Packed {
    /// Packs a weight matrix stored `[n × k]`.
    pub fn weights(w: &[f32], n: usize, k: usize) -> Packed {
        let mut data = vec![0.0; packed_len(n, k)];
        pack_rows(w, k, n, k, &mut data);
        Packed { n, k, panels: Panels::F32(data) }
    }

    /// Packs a weight matrix stored `[n × k]` as bf16 panels, each value rounded to nearest even.
    pub fn weights_bf16(w: &[f32], n: usize, k: usize) -> Packed {
        Packed { n, k, panels: Panels::Bf16(bf16::pack_weights(w, n, k)) }
    }

    /// Packs `B` given as `k` rows of `n` at stride `ld` (`B[p][j] = src[p·ld + j]`) into `self`, reusing its
    /// buffer, one panel per task on `executor`'s threads: the right-hand side of `dY·W` (B = W) and `dYᵀ·X`
    /// (B = X) in a backward pass.
    pub fn columns_from(&mut self, executor: &Executor, src: &[f32], ld: usize, k: usize, n: usize) -> Result<()> {
        assert!(k == 0 || src.len() >= (k - 1) * ld + n, "pack: source too small for {k} × {n}");
        self.n = n;
        self.k = k;
        if !matches!(self.panels, Panels::F32(_)) {
            self.panels = Panels::F32(Vec::new());
        }
        let Panels::F32(data) = &mut self.panels else { unreachable!("made f32 above") };
        data.resize(packed_len(n, k), 0.0);
        let out = Shared(data.as_mut_ptr());
        executor.for_n_dynamic(n.div_ceil(NR), |q| {
            let (j0, width) = (q * NR, NR.min(n - q * NR));
            // SAFETY: panel `q` is the `k·NR` floats at `q·k·NR`, inside the buffer sized above, written by this
            // task alone.
            let panel = unsafe { out.slice(q * k * NR, k * NR) };
            for p in 0..k {
                panel_line(&mut panel[p * NR..p * NR + NR], &src[p * ld + j0..p * ld + j0 + width]);
            }
        })
    }

    /// An empty packing to fill with [`Packed::columns_from`].
    pub fn empty() -> Packed {
        Packed { n: 0, k: 0, panels: Panels::F32(Vec::new()) }
    }
}

/// `C[rows × n] (+)= A[rows × k] · B` on the calling thread: every panel of `b`, `kernels.mr` rows at a time.
///
/// # Safety
/// `a` covers `rows` rows of `k` as it says ([`Lhs`]); `c` covers `rows` rows of `n` at stride `ldc`, written by no
/// one else meanwhile; `b` holds `packed_len(n, k)` floats.
#[allow(clippy::too_many_arguments)]
pub unsafe fn serial(
    kernels: &Kernels,
    a: Lhs,
    rows: usize,
    b: &[f32],
    n: usize,
    k: usize,
    c: *mut f32,
    ldc: usize,
    accumulate: bool,
) {
    // SAFETY: the caller's contract; no panel after these to ask for.
    unsafe { serial_asking(kernels, a, rows, b, n, k, c, ldc, accumulate, std::ptr::null(), None) }
}

/// A bias for each of a product's columns, and the activation after it, if any.
type Bias<'a> = Option<(&'a [f32], Option<Activation>)>;

/// [`serial`], and where `after` is not null (the panel a thread likely multiplies after these, in a product that
/// reads its weights once), the passes over the last panel ask for that one, as every other panel's ask for the next.
/// `bias` (`n` values) and its activation apply to each block of outputs as soon as its sum is whole, while it is
/// still in L1.
///
/// # Safety
/// As [`serial`]'s; `after` is a hint only, never read.
#[allow(clippy::too_many_arguments)]
unsafe fn serial_asking(
    kernels: &Kernels,
    a: Lhs,
    rows: usize,
    b: &[f32],
    n: usize,
    k: usize,
    c: *mut f32,
    ldc: usize,
    accumulate: bool,
    after: *const f32,
    bias: Bias<'_>,
) {
    debug_assert!(b.len() >= packed_len(n, k));
    let (panels, blocks) = (n.div_ceil(NR), rows.div_ceil(kernels.mr));
    // A read by columns takes its `k` steps in chunks (see `COLUMNS_KC`), each added to C after the first.
    let chunks = if a.columns && k > COLUMNS_KC { k.div_ceil(COLUMNS_KC) } else { 1 };
    // With few row blocks, or where the weights stream from memory (`after`), the passes after a panel's first (or
    // its only pass) share out the next panel's lines to ask into L2 (see `Ahead`); with more row blocks of a product
    // that reads its panels many times, the hardware fetches the next one unasked.
    let (lines, askers) = (k * NR / 16, blocks.saturating_sub(1).max(1));
    let streamed = blocks <= STREAMED_BLOCKS || !after.is_null();
    let share = if streamed && chunks == 1 { lines.div_ceil(askers) } else { 0 };
    let steps = if chunks > 1 { COLUMNS_KC } else { k };
    for chunk in 0..chunks {
        let (k0, kc) = (chunk * steps, steps.min(k - chunk * steps));
        let (a, accumulate) = (a.from_step(k0), accumulate || chunk > 0);
        for q in 0..panels {
            let cols = NR.min(n - q * NR);
            let panel = b[(q * k + k0) * NR..].as_ptr();
            let next = if q + 1 < panels { b[(q + 1) * k * NR..].as_ptr() } else { after };
            for block in 0..blocks {
                let i = block * kernels.mr;
                let r = kernels.mr.min(rows - i);
                let ahead = match (block + askers).checked_sub(blocks) {
                    Some(nth) if !next.is_null() && share > 0 => {
                        let from = (nth * share).min(lines);
                        Ahead { at: next.wrapping_add(from * 16), lines: share.min(lines - from) }
                    }
                    _ => Ahead::NONE,
                };
                // SAFETY: the caller's contract, row `i`, step `k0` and column `q·NR` on.
                unsafe {
                    let c = c.add(i * ldc + q * NR);
                    let tile =
                        MicroTile { k: kc, a: a.from_row(i), rows: r, b: panel, c, ldc, cols, accumulate, ahead };
                    kernels.micro(tile);
                    if let Some((bias, activation)) = bias.filter(|_| chunk + 1 == chunks) {
                        kernels.bias_tile(c, ldc, r, &bias[q * NR..q * NR + cols], activation);
                    }
                };
            }
        }
    }
}

/// The steps of `k` a product whose A is read by columns takes at a time ([`serial`]). Each step reads one line of
/// A `ld` floats on from the last, a page or more apart in a wide `dY`; over the whole of `k` (4,096 steps in a
/// training step's weight gradients) those pages overflow the TLB before the next block of rows reads the same
/// lines again, and the product ran at half the speed of one by rows. In chunks of 256 steps, the row blocks of a
/// tile reuse a chunk's lines and pages while they are cached. Each chunk after the first is added to C, so A by
/// columns rounds like a sum over `k` split in chunks.
const COLUMNS_KC: usize = 256;

/// What a dense layer does after the product, per output tile.
#[derive(Clone, Copy)]
pub enum Epilogue<'a> {
    /// `C = A·Bᵀ + bias`.
    Bias(&'a [f32]),
    /// `C = gelu(A·Bᵀ + bias)`.
    BiasGelu(&'a [f32]),
    /// `C = activation(A·Bᵀ + bias)`: another activation than GELU's erf form (CLIP's quick GELU, SigLIP's tanh GELU).
    BiasActivation(&'a [f32], super::activation::Activation),
    /// `C = LayerNorm(C + A·Bᵀ + bias)`: the residual connection, then the LayerNorm after it (`gamma`, `beta`,
    /// `eps`), which the last tile to finish a block of rows applies to those whole rows, so the normalisation
    /// needs no dispatch of its own.
    AddBiasLayerNorm { bias: &'a [f32], gamma: &'a [f32], beta: &'a [f32], eps: f32 },
    /// `C = A·Bᵀ`.
    Plain,
    /// `C += A·Bᵀ`.
    Accumulate,
    /// `C += A·Bᵀ + bias`: a pre-norm layer's residual connection.
    AccumulateBias(&'a [f32]),
}

/// A LayerNorm's weights: `gamma`, `beta` and `eps`.
#[derive(Clone, Copy)]
pub struct Norm<'a> {
    pub gamma: &'a [f32],
    pub beta: &'a [f32],
    pub eps: f32,
}

/// A pointer the tiles of one product share; each tile writes its own outputs only.
#[derive(Clone, Copy)]
pub struct Shared(pub *mut f32);
// SAFETY: the tiles write disjoint parts of what it points to, and the dispatch ends before the borrow does.
unsafe impl Send for Shared {}
// SAFETY: as for `Send`: shared by reference, the pointer is only read; what it points to is written in disjoint parts.
unsafe impl Sync for Shared {}

impl Shared {
    /// The pointer `count` floats on. A method, so that a closure calling it captures the `Send` wrapper whole, not
    /// its raw pointer field.
    ///
    /// # Safety
    /// As [`pointer::add`]'s.
    #[inline(always)]
    pub unsafe fn add(self, count: usize) -> *mut f32 {
        // SAFETY: the caller's contract.
        unsafe { self.0.add(count) }
    }

    /// The `len` floats from `at` on.
    ///
    /// # Safety
    /// They lie inside what the pointer points to, and no one else reads or writes them while the slice lives.
    #[inline(always)]
    pub unsafe fn slice<'a>(self, at: usize, len: usize) -> &'a mut [f32] {
        // SAFETY: the caller's contract.
        unsafe { std::slice::from_raw_parts_mut(self.0.add(at), len) }
    }
}

/// The tile of a product of `m` rows and `n` columns: for a few rows against many columns (a batch of one), every
/// row in one tile, so that each panel of weights, which at such sizes streams from memory, is read from it once,
/// and for the fewest rows several panels in one tile, about four tiles per thread, so that each panel's passes
/// can ask the next one into L2 ([`serial`]); otherwise tall tiles for tall products, narrow ones when few rows
/// must still spread over the threads. bf16 tiles are whole blocks of [`bf16::BLOCK`] rows.
fn tile(m: usize, n: usize, mr: usize, panels: &Panels, threads: usize) -> (usize, usize) {
    if matches!(panels, Panels::F32(_)) && m <= WHOLE_ROWS && n >= 8 * NR {
        let wide = if m <= STREAMED_BLOCKS * mr { (n / NR / (4 * threads)).clamp(1, 8) } else { 1 };
        return (m.next_multiple_of(mr), wide * NR);
    }
    let mc = match panels {
        Panels::F32(_) => mr * if m >= 256 { 12 } else { 4 },
        Panels::Bf16(_) => {
            bf16::BLOCK
                * if m >= 256 {
                    4
                } else if m > 64 {
                    2
                } else {
                    1
                }
        }
    };
    let nc = if m <= 64 { 2 * NR } else { 4 * NR };
    (mc, nc)
}

/// The most row blocks for which a panel's passes ask the next panel into L2 ([`serial`]), in tiles several panels
/// wide ([`tile`]): with more, in a product of many row tiles, the passes take longer than reading a panel from
/// memory, and the hardware's own prefetch keeps up (asking as well cost 6% on 4,096 rows of text). A product of
/// whole rows up to [`WHOLE_ROWS`] reads each panel once, from memory where the weights outgrow the cache (ViT-B/16's
/// 340 MB at batch 1), and asks at any number of row blocks, across its tiles too ([`serial_asking`]): one thread
/// on 197 rows against 4,096 panels ran at 150 GFLOP/s asking, 131 not.
const STREAMED_BLOCKS: usize = 8;

/// The most rows a product keeps in one tile (see [`tile`]): 256 rows of 768 floats, what a tile's micro-kernel
/// calls read again for each panel, fit a core's L2 beside the panel.
const WHOLE_ROWS: usize = 256;

thread_local! {
    /// A bf16 tile's rows of A, rounded once for all its panels; kept by the thread for its next tile.
    static ROUNDED: std::cell::RefCell<Vec<u16>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// [`serial`] for bf16 panels: `C[rows × cols] (+)= A[rows × k] · B` for the panels of columns `j0..j0+cols`, A's
/// rows rounded to bf16 once, then every panel a block of [`bf16::BLOCK`] rows at a time.
///
/// # Safety
/// As [`serial`]'s, with `panels` the whole packed matrix of `k` rows and `j0` a multiple of `NR`.
#[allow(clippy::too_many_arguments)]
unsafe fn serial_bf16(
    kernel: bf16::Kernel,
    a: *const f32,
    lda: usize,
    rows: usize,
    panels: &[u16],
    j0: usize,
    cols: usize,
    k: usize,
    c: *mut f32,
    ldc: usize,
    accumulate: bool,
) {
    let kp = bf16::padded_k(k);
    ROUNDED.with_borrow_mut(|rounded| {
        // SAFETY: the caller's contract covers A's rows.
        unsafe { bf16::round_rows(kernel, a, lda, rows, k, rounded) };
        let mut out = [0f32; bf16::BLOCK * NR];
        kernel.begin();
        for q in 0..cols.div_ceil(NR) {
            let width = NR.min(cols - q * NR);
            let panel = panels[(j0 / NR + q) * kp * NR..][..kp * NR].as_ptr();
            for i in (0..rows).step_by(bf16::BLOCK) {
                let r = bf16::BLOCK.min(rows - i);
                // SAFETY: `rounded` holds `rows` rows of `kp` padded to 16, so the block's padded rows from `i`;
                // the panel is `kp·NR` values (sliced above); the kernel was begun on this thread.
                unsafe { kernel.block(kp, rounded.as_ptr().add(i * kp), r, panel, &mut out) };
                for ii in 0..r {
                    // SAFETY: the caller's contract covers C's rows `0..rows`, columns `0..cols`.
                    let dst = unsafe { std::slice::from_raw_parts_mut(c.add((i + ii) * ldc + q * NR), width) };
                    let src = &out[ii * NR..ii * NR + width];
                    if accumulate {
                        dst.iter_mut().zip(src).for_each(|(d, s)| *d += *s);
                    } else {
                        dst.copy_from_slice(src);
                    }
                }
            }
        }
        kernel.end();
    })
}

/// `C[m × w.n] = epilogue(A[m × w.k] · Wᵀ)` on `executor`'s threads, with `A` and `C` dense (strides `w.k` and `w.n`).
pub fn dense(
    executor: &Executor,
    kernels: &Kernels,
    a: &[f32],
    m: usize,
    w: &Packed,
    c: &mut [f32],
    epilogue: Epilogue<'_>,
) -> Result<()> {
    dense_strided(executor, kernels, a, Stride::Rows(w.k), m, w, c, epilogue)
}

/// A pre-norm layer's residual connection and the next sublayer's LayerNorm in one dispatch: `C += A·Wᵀ + bias`,
/// then `into`'s rows (`m × w.n`) the `norm` of C's, which the last tile to finish a block of rows writes, as
/// [`Epilogue::AddBiasLayerNorm`] normalises in place.
#[allow(clippy::too_many_arguments)]
pub fn dense_norm_into(
    executor: &Executor,
    kernels: &Kernels,
    (a, m): (&[f32], usize),
    w: &Packed,
    c: &mut [f32],
    bias: &[f32],
    norm: Norm<'_>,
    into: &mut [f32],
) -> Result<()> {
    assert!(into.len() >= m * w.n, "dense_norm_into: `into` under {m} rows of {}", w.n);
    let into = Some((Shared(into.as_mut_ptr()), norm));
    tiles(executor, kernels, a, Stride::Rows(w.k), m, w, c, Epilogue::AccumulateBias(bias), into)
}

/// How the slice given as a product's A holds it ([`dense_strided`]).
#[derive(Clone, Copy, Debug)]
pub enum Stride {
    /// A's rows this many floats apart (at least `w.k`), like one head's columns of a wider matrix.
    Rows(usize),
    /// A given as its transpose: `w.k` rows of this many floats (at least `m`), A's row `i` their column `i`
    /// ([`Lhs::columns`]), as `dW = dYᵀ·X` takes `dY`. Only for f32 weights.
    Columns(usize),
}

/// [`dense`] with A laid out as `stride` says.
#[allow(clippy::too_many_arguments)]
pub fn dense_strided(
    executor: &Executor,
    kernels: &Kernels,
    a: &[f32],
    stride: Stride,
    m: usize,
    w: &Packed,
    c: &mut [f32],
    epilogue: Epilogue<'_>,
) -> Result<()> {
    tiles(executor, kernels, a, stride, m, w, c, epilogue, None)
}

/// The tiles of a product on `executor`'s threads, A laid out as `stride` says; `into`, if given, is a matrix of
/// `m × w.n` (checked by [`dense_norm_into`]) borrowed apart from A and C, that receives the norm of C's rows.
#[allow(clippy::too_many_arguments)]
fn tiles(
    executor: &Executor,
    kernels: &Kernels,
    a: &[f32],
    stride: Stride,
    m: usize,
    w: &Packed,
    c: &mut [f32],
    epilogue: Epilogue<'_>,
    into: Option<(Shared, Norm<'_>)>,
) -> Result<()> {
    let (lda, columns) = match stride {
        Stride::Rows(lda) => (lda, false),
        Stride::Columns(ld) => (ld, true),
    };
    let (n, k) = (w.n, w.k);
    let (lines, width) = if columns { (k, m) } else { (m, k) };
    assert!(lda >= width, "dense: a stride of {lda} under {width} columns");
    assert!(
        (lines == 0 || a.len() >= (lines - 1) * lda + width) && c.len() >= m * n,
        "dense: buffers too small for {m} × {n} × {k}"
    );
    if m == 0 {
        return Ok(());
    }
    let bf16 = match (&w.panels, kernels.bf16) {
        (Panels::Bf16(_), None) => {
            return Err(Error::internal(format!(
                "bf16 weights reached the {} kernels, which have no bf16",
                kernels.name
            )))
        }
        (Panels::Bf16(_), Some(_)) if columns => {
            return Err(Error::internal("bf16 weights in a product whose A is given transposed, which they never are"))
        }
        (Panels::Bf16(_), Some(kernel)) => Some(kernel),
        (Panels::F32(_), _) => None,
    };
    let threads = executor.threads();
    let (mc, nc) = tile(m, n, kernels.mr, &w.panels, threads);
    let (row_tiles, col_tiles) = (m.div_ceil(mc), n.div_ceil(nc));
    // Whole rows in tiles one panel wide (`tile`): each thread's last panel asks for the panel it likely takes next.
    let ask_after = row_tiles == 1 && m > STREAMED_BLOCKS * kernels.mr && matches!(w.panels, Panels::F32(_));
    let out = Shared(c.as_mut_ptr());
    let a = a.as_ptr() as usize;
    // Per block of rows, its tiles finished so far (for the LayerNorm epilogue: the last one normalises the rows).
    let norm = match (epilogue, into) {
        (Epilogue::AddBiasLayerNorm { gamma, beta, eps, .. }, _) => Some((None, Norm { gamma, beta, eps })),
        (_, Some((into, norm))) => Some((Some(into), norm)),
        _ => None,
    };
    let finished: Vec<AtomicUsize> = match norm {
        Some(_) => (0..row_tiles).map(|_| AtomicUsize::new(0)).collect(),
        None => Vec::new(),
    };
    executor.for_n_dynamic(row_tiles * col_tiles, |t| {
        let (i0, j0) = ((t / col_tiles) * mc, (t % col_tiles) * nc);
        let (rows, cols) = (mc.min(m - i0), nc.min(n - j0));
        let accumulate =
            matches!(epilogue, Epilogue::AddBiasLayerNorm { .. } | Epilogue::Accumulate | Epilogue::AccumulateBias(_));
        // SAFETY: rows `i0..i0+rows` of A are in bounds (checked above); this tile alone writes C's rows
        // `i0..i0+rows`, columns `j0..j0+cols`; the panels of columns `j0..` are in `w.panels`.
        unsafe {
            let a = Lhs { at: a as *const f32, ld: lda, columns }.from_row(i0);
            let c = out.add(i0 * n + j0);
            let bias: Bias<'_> = match epilogue {
                Epilogue::Bias(bias) | Epilogue::AddBiasLayerNorm { bias, .. } | Epilogue::AccumulateBias(bias) => {
                    Some((&bias[j0..j0 + cols], None))
                }
                Epilogue::BiasGelu(bias) => Some((&bias[j0..j0 + cols], Some(Activation::Gelu))),
                Epilogue::BiasActivation(bias, activation) => Some((&bias[j0..j0 + cols], Some(activation))),
                Epilogue::Plain | Epilogue::Accumulate => None,
            };
            match (&w.panels, bf16) {
                (Panels::Bf16(panels), Some(kernel)) => {
                    serial_bf16(kernel, a.at, lda, rows, panels, j0, cols, k, c, n, accumulate);
                    if let Some((bias, activation)) = bias {
                        kernels.bias_tile(c, n, rows, bias, activation);
                    }
                }
                (Panels::F32(data), _) => {
                    // A product of whole rows reads each panel once; its thread likely takes the tile `threads` on
                    // next, whose first panel its last panel's passes ask for.
                    let after = match t + threads {
                        next if ask_after && next < col_tiles => data[next * nc * k..].as_ptr(),
                        _ => std::ptr::null(),
                    };
                    serial_asking(kernels, a, rows, &data[j0 * k..], cols, k, c, n, accumulate, after, bias)
                }
                (Panels::Bf16(_), None) => unreachable!("refused above"),
            }
        }
        if let Some((into, Norm { gamma, beta, eps })) = norm {
            // The AcqRel count orders every other tile's writes to these rows before the last tile reads them.
            if finished[t / col_tiles].fetch_add(1, Ordering::AcqRel) + 1 == col_tiles {
                for i in i0..i0 + rows {
                    // SAFETY: every tile of rows `i0..i0+rows` has finished writing (the count says so) and none
                    // touches them again, so the last one alone holds the whole rows, inside C (checked above).
                    let row = unsafe { out.slice(i * n, n) };
                    match into {
                        Some(into) => {
                            // SAFETY: `into` holds `m × n` floats apart from A and C (`dense_norm_into`'s borrow
                            // and check), and its rows `i0..i0+rows` are this block's, written by its last tile alone.
                            let normed = unsafe { into.slice(i * n, n) };
                            normed.copy_from_slice(row);
                            kernels.layer_norm(normed, gamma, beta, eps);
                        }
                        None => kernels.layer_norm(row, gamma, beta, eps),
                    }
                }
            }
        }
    })
}

#[cfg(test)]
mod tests;
