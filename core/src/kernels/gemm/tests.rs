//! The products against plain loops, for every kernel class this CPU runs.

use super::*;

fn naive(a: &[f32], b_rows: &[f32], m: usize, n: usize, k: usize) -> Vec<f32> {
    let mut c = vec![0.0; m * n];
    for i in 0..m {
        for j in 0..n {
            c[i * n + j] = (0..k).map(|p| a[i * k + p] as f64 * b_rows[j * k + p] as f64).sum::<f64>() as f32;
        }
    }
    c
}

fn values(len: usize, seed: usize) -> Vec<f32> {
    (0..len).map(|i| (((i * 2654435761 + seed * 97) % 1000) as f32 / 500.0) - 1.0).collect()
}

#[test]
fn dense_matches_a_naive_product_for_every_class_and_ragged_shape() {
    let executor = Executor::for_ram(crate::ExecutorForRamConfig { threads: Some(2), ..Default::default() }).unwrap();
    let mut classes = vec![None, Some("portable")];
    classes.extend(crate::capabilities::runnable_cpu_classes().into_iter().map(Some));
    for class in classes {
        let kernels = Kernels::for_class(class).unwrap();
        // (50, 520, 40): few row blocks against many panels, tiles several panels wide that ask the next one ahead.
        // (130, 320, 24): whole rows in tiles one panel wide, each thread's last panel asking for its next tile's.
        // Last row blocks of 1, 2, 6, 9 and 10 rows: every form of a micro-kernel with several.
        let shapes = [
            (1, 32, 1),
            (13, 96, 384),
            (70, 40, 33),
            (300, 160, 17),
            (9, 64, 700),
            (50, 520, 40),
            (30, 64, 50),
            (130, 320, 24),
        ];
        for (m, n, k) in shapes {
            let (a, w) = (values(m * k, 1), values(n * k, 2));
            let bias = values(n, 3);
            let mut c = vec![7.0; m * n];
            dense(&executor, &kernels, &a, m, &Packed::weights(&w, n, k), &mut c, Epilogue::Bias(&bias)).unwrap();
            let want = naive(&a, &w, m, n, k);
            for (idx, (got, want)) in c.iter().zip(&want).enumerate() {
                let want = want + bias[idx % n];
                // Relative: a 384-term f32 sum near 124 carries ~1e-4 of rounding whatever the order.
                assert!(
                    (got - want).abs() < 1e-4 * want.abs().max(1.0),
                    "{kernels:?} {m}x{n}x{k} [{idx}]: {got} vs {want}"
                );
            }
            let before = c.clone();
            dense(&executor, &kernels, &a, m, &Packed::weights(&w, n, k), &mut c, Epilogue::Accumulate).unwrap();
            for (idx, (got, old)) in c.iter().zip(&before).enumerate() {
                let want = old + want[idx];
                assert!(
                    (got - want).abs() < 2e-4 * want.abs().max(1.0),
                    "{kernels:?} accumulate [{idx}]: {got} vs {want}"
                );
            }
            // The residual and LayerNorm in the tiles: the same floats as adding, then normalising each row.
            let (gamma, beta) = (values(n, 5), values(n, 6));
            let mut sequential = before.clone();
            dense(&executor, &kernels, &a, m, &Packed::weights(&w, n, k), &mut sequential, Epilogue::Accumulate)
                .unwrap();
            for row in sequential.chunks_exact_mut(n) {
                kernels.add(row, &bias);
                kernels.layer_norm(row, &gamma, &beta, 1e-12);
            }
            let mut fused = before.clone();
            let norm = Epilogue::AddBiasLayerNorm { bias: &bias, gamma: &gamma, beta: &beta, eps: 1e-12 };
            dense(&executor, &kernels, &a, m, &Packed::weights(&w, n, k), &mut fused, norm).unwrap();
            assert_eq!(fused, sequential, "{kernels:?} {m}x{n}x{k}: the fused LayerNorm");
            // The pre-norm residual and the other activations: the same floats as their steps one by one.
            let mut fused = before.clone();
            dense(&executor, &kernels, &a, m, &Packed::weights(&w, n, k), &mut fused, Epilogue::AccumulateBias(&bias))
                .unwrap();
            let mut sequential = before.clone();
            dense(&executor, &kernels, &a, m, &Packed::weights(&w, n, k), &mut sequential, Epilogue::Accumulate)
                .unwrap();
            sequential.chunks_exact_mut(n).for_each(|row| kernels.add(row, &bias));
            assert_eq!(fused, sequential, "{kernels:?} {m}x{n}x{k}: the residual's bias");
            // The residual, then the next sublayer's LayerNorm into another matrix, C left as the residual.
            let mut residual = before.clone();
            let mut normed = vec![9.0; m * n];
            let norm = Norm { gamma: &gamma, beta: &beta, eps: 1e-5 };
            let packed = Packed::weights(&w, n, k);
            dense_norm_into(&executor, &kernels, (&a, m), &packed, &mut residual, &bias, norm, &mut normed).unwrap();
            assert_eq!(residual, sequential, "{kernels:?} {m}x{n}x{k}: the residual beside its LayerNorm");
            // A given as its transpose, read by columns (rows `ld` = m + 3 apart): the same steps in the same
            // order as A by rows, so the same floats, whether every row of a block is real or not, while `k`
            // is one chunk; over several, each chunk's sum is added to C.
            let ld = m + 3;
            let mut at = values(k * ld, 4);
            for (i, row) in a.chunks_exact(k).enumerate() {
                row.iter().enumerate().for_each(|(p, v)| at[p * ld + i] = *v);
            }
            let mut by_columns = before.clone();
            let packed = Packed::weights(&w, n, k);
            let columns = Stride::Columns(ld);
            dense_strided(&executor, &kernels, &at, columns, m, &packed, &mut by_columns, Epilogue::Bias(&bias))
                .unwrap();
            let mut by_rows = before.clone();
            dense(&executor, &kernels, &a, m, &packed, &mut by_rows, Epilogue::Bias(&bias)).unwrap();
            if k <= COLUMNS_KC {
                assert_eq!(by_columns, by_rows, "{kernels:?} {m}x{n}x{k}: A read by columns");
            }
            for (idx, (got, want)) in by_columns.iter().zip(&want).enumerate() {
                let want = want + bias[idx % n];
                assert!(
                    (got - want).abs() < 1e-4 * want.abs().max(1.0),
                    "{kernels:?} {m}x{n}x{k} by columns [{idx}]: {got} vs {want}"
                );
            }
            let mut want = sequential.clone();
            want.chunks_exact_mut(n).for_each(|row| kernels.layer_norm(row, &gamma, &beta, 1e-5));
            assert_eq!(normed, want, "{kernels:?} {m}x{n}x{k}: the LayerNorm into another matrix");
            for activation in [Activation::QuickGelu, Activation::GeluTanh, Activation::Gelu] {
                let mut fused = vec![0.0; m * n];
                let epilogue = Epilogue::BiasActivation(&bias, activation);
                dense(&executor, &kernels, &a, m, &Packed::weights(&w, n, k), &mut fused, epilogue).unwrap();
                let mut sequential = vec![0.0; m * n];
                dense(&executor, &kernels, &a, m, &Packed::weights(&w, n, k), &mut sequential, Epilogue::Plain)
                    .unwrap();
                sequential.chunks_exact_mut(n).for_each(|row| activation.apply(&kernels, row, &bias));
                assert_eq!(fused, sequential, "{kernels:?} {m}x{n}x{k}: {activation:?}");
            }
        }
    }
}

#[test]
fn the_fused_x86_kernels_agree_bit_for_bit() {
    // avx2 and every form of avx512 (its assembly loop for whole blocks of twelve rows, the 8- and 4-row forms,
    // the loops that ask the next panel ahead) sum each output over k in the same order, fusing each step.
    let executor = Executor::for_ram(crate::ExecutorForRamConfig { threads: Some(2), ..Default::default() }).unwrap();
    let mut fused: Vec<Kernels> = Vec::new();
    for class in crate::capabilities::runnable_cpu_classes() {
        let kernels = Kernels::for_class(Some(class)).unwrap();
        if kernels.name != "portable" && !fused.iter().any(|k| k.name == kernels.name) {
            fused.push(kernels);
        }
    }
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx512f") {
        assert_eq!(fused.len(), 2, "avx2 and avx512 both run here: {fused:?}");
    }
    for (m, n, k) in [(50, 520, 40), (30, 64, 50), (300, 160, 17), (25, 96, 384), (12, 288, 3)] {
        let (a, w) = (values(m * k, 7), values(n * k, 8));
        let packed = Packed::weights(&w, n, k);
        let results: Vec<Vec<f32>> = fused
            .iter()
            .map(|kernels| {
                let mut c = vec![0.0; m * n];
                dense(&executor, kernels, &a, m, &packed, &mut c, Epilogue::Plain).unwrap();
                c
            })
            .collect();
        for (kernels, c) in fused.iter().zip(&results).skip(1) {
            assert!(c == &results[0], "{kernels:?} and {:?} differ at {m}x{n}x{k}", fused[0]);
        }
    }
}

#[test]
fn packing_columns_matches_packing_the_transpose() {
    let (k, n) = (5, 40);
    let b = values(k * n, 4); // B[p][j] at p·n + j
    let mut bt = vec![0.0; n * k]; // Bᵀ rows: B[p][j] at j·k + p
    for p in 0..k {
        for j in 0..n {
            bt[j * k + p] = b[p * n + j];
        }
    }
    let (mut x, mut y) = (vec![1.0; packed_len(n, k)], vec![2.0; packed_len(n, k)]);
    pack_columns(&b, n, k, n, &mut x);
    pack_rows(&bt, k, n, k, &mut y);
    assert_eq!(x, y);
}
