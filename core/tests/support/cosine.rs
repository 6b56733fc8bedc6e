//! Comparing embeddings with a reference.
#![allow(dead_code)] // each test binary uses its own part of the support module

use uform_core::F32Matrix;

/// The worst cosine between `got`'s rows and `want`'s, row by row, and the row it was found at.
pub fn worst_cosine_at(got: &F32Matrix, want: &[Vec<f32>]) -> (f64, usize) {
    assert_eq!(got.rows as usize, want.len());
    let norm = |v: &[f32]| v.iter().map(|a| *a as f64 * *a as f64).sum::<f64>().sqrt();
    got.data
        .chunks_exact(got.columns as usize)
        .zip(want)
        .map(|(g, w)| g.iter().zip(w).map(|(a, b)| *a as f64 * *b as f64).sum::<f64>() / (norm(g) * norm(w)))
        .enumerate()
        .fold((f64::INFINITY, 0), |worst, (i, c)| if c < worst.0 { (c, i) } else { worst })
}

/// The worst cosine between `got`'s rows and `want`'s, row by row.
pub fn worst_cosine(got: &F32Matrix, want: &[Vec<f32>]) -> f64 {
    worst_cosine_at(got, want).0
}
