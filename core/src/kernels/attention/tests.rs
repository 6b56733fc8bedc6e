//! The attention kernels against plain loops and transformers' tables.

/// ModernBERT-base's shape (768 hidden, 12 heads) at its 8,192 positions: a thread's attention scratch is a
/// block of scores and the packed keys and values (about 6 MiB), not the 256 MiB of a full score matrix.
#[test]
fn attention_scratch_grows_linearly_with_the_length() {
    let dh = 768 / 12;
    let (long, short) = (super::attention_floats(dh, 8192), super::attention_floats(dh, 4096));
    assert!(long * 4 < 8 << 20, "{long} floats");
    assert!(long <= 2 * short + 64, "{long} floats at 8192 tokens, {short} at 4096: not linear");
    assert!(long >= 8192 * super::QUERY_BLOCK, "{long} floats hold no block of scores");
}

/// Attention under each mask against a plain loop in f64: two texts (one past a query block), two heads.
#[test]
fn attention_masks_match_a_plain_loop() {
    use super::{attention, attention_floats, Mask};
    let executor =
        crate::executor::Executor::for_ram(crate::ExecutorForRamConfig { threads: Some(2), ..Default::default() })
            .unwrap();
    let kernels = crate::kernels::Kernels::for_class(None).unwrap();
    let (h, heads, dh) = (8, 2, 4);
    let spans = [0..5, 5..45];
    let total = 45;
    let qkv: Vec<f32> = (0..total * 3 * h).map(|i| ((i * 7919 % 113) as f32 / 113.0 - 0.5) * 2.0).collect();
    for mask in [Mask::All, Mask::Causal, Mask::Window(3)] {
        let per_thread = attention_floats(dh, 40);
        let mut scratch = vec![0.0; 2 * per_thread];
        let mut ctx = vec![f32::NAN; total * h];
        attention(&executor, &kernels, (h, heads), None, &qkv, &mut ctx, &spans, &mut scratch, per_thread, 2, mask)
            .unwrap();
        for span in &spans {
            for head in 0..heads {
                for i in span.clone() {
                    let sees = |j: usize| match mask {
                        Mask::All => true,
                        Mask::Causal => j <= i,
                        Mask::Window(w) => j.abs_diff(i) <= w,
                    };
                    let at = |t: usize, part: usize, d: usize| qkv[t * 3 * h + part * h + head * dh + d] as f64;
                    let scores: Vec<(usize, f64)> = span
                        .clone()
                        .filter(|j| sees(*j))
                        .map(|j| (j, (0..dh).map(|d| at(i, 0, d) * at(j, 1, d)).sum::<f64>() / (dh as f64).sqrt()))
                        .collect();
                    let max = scores.iter().map(|s| s.1).fold(f64::MIN, f64::max);
                    let total: f64 = scores.iter().map(|s| (s.1 - max).exp()).sum();
                    for d in 0..dh {
                        let want: f64 = scores.iter().map(|(j, s)| (s - max).exp() / total * at(*j, 2, d)).sum();
                        let got = ctx[i * h + head * dh + d] as f64;
                        assert!((got - want).abs() < 1e-5, "{mask:?} token {i} head {head} [{d}]: {got} vs {want}");
                    }
                }
            }
        }
    }
}

/// transformers' buckets for distances -200..=200, recorded by tests/fixtures/families/make_families.py.
#[test]
fn mpnet_relative_buckets_are_transformers_buckets() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../tests/fixtures/families/reference.json");
    let json: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let table = &json["mpnet"]["relative_buckets"];
    let (distances, buckets) = (table["distances"].as_array().unwrap(), table["buckets"].as_array().unwrap());
    assert_eq!((distances.len(), buckets.len()), (401, 401));
    for (d, want) in distances.iter().zip(buckets) {
        let (d, want) = (d.as_i64().unwrap(), want.as_u64().unwrap() as usize);
        assert_eq!(super::relative_bucket(d, 32), want, "distance {d}");
    }
}
