//! The whole training pass of a small random BERT checked against finite differences of its loss, for every
//! kernel class this CPU runs, with and without dropout; and the optimiser and schedule against their formulas.

use super::*;
use crate::families::bert::train::{Tape, TrainWeights};
use crate::families::bert::{Config, Pooling};
use crate::families::tokenize::Tokens;
use crate::model::TensorView;
use std::path::Path;

/// Weights of a tiny BERT with values from a fixed hash, served as F32 tensors.
struct Random {
    tensors: Vec<(String, Vec<usize>, Vec<u8>)>,
}

impl Weights for Random {
    fn tensor(&self, name: &str) -> Option<TensorView<'_>> {
        self.tensors.iter().find(|t| t.0 == name).map(|(n, s, d)| TensorView {
            name: n,
            dtype: "F32",
            shape: s,
            data: d,
        })
    }
    fn names(&self) -> Vec<&str> {
        self.tensors.iter().map(|t| t.0.as_str()).collect()
    }
    fn directory(&self) -> Option<&Path> {
        None
    }
}

fn config(pooling: Pooling) -> Config {
    Config { pooling, hidden_dropout: 0.0, attention_dropout: 0.0, ..Config::bert(8, 2, 2, 12, 11, 9) }
}

fn random_weights(config: &Config) -> Random {
    // The layout names every tensor; fill each with values from a hash, LayerNorm weights near 1.
    let probe = Master::layout_only(config, "");
    let tensors = probe
        .into_iter()
        .enumerate()
        .map(|(k, (name, shape))| {
            let len: usize = shape.iter().product();
            let layer_norm = name.contains("LayerNorm.weight");
            let data: Vec<u8> = (0..len)
                .flat_map(|i| {
                    let x = ((i * 2654435761 + k * 40503 + 17) % 1009) as f32 / 1009.0 - 0.5;
                    let v = if layer_norm { 1.0 + 0.2 * x } else { 0.6 * x };
                    v.to_le_bytes()
                })
                .collect();
            (name, shape, data)
        })
        .collect();
    Random { tensors }
}

fn batch() -> Vec<Tokens> {
    let texts: [&[u32]; 6] = [&[1, 5, 7, 2], &[1, 3, 2], &[1, 9, 4, 6, 8, 2], &[1, 4, 2], &[1, 10, 5, 3, 2], &[1, 2]];
    texts.iter().map(|ids| Tokens { ids: ids.to_vec(), type_ids: ids.iter().map(|i| i % 2).collect() }).collect()
}

/// The forward pass of `model` over [`batch`], then the loss: the tape the backward pass reads, the loss's gradient
/// of each pooled row, and the loss.
fn forward_with_loss(
    ex: &Executor,
    kernels: &Kernels,
    model: &TrainWeights<'_>,
    drop: (Dropout, Dropout),
) -> (Tape, Vec<f32>, f64) {
    let tokens = batch();
    let mut tape = Tape::default();
    let mut pooled = vec![0.0; tokens.len() * model.config.hidden];
    pass::forward_pooled(&mut tape, (ex, kernels), model, &tokens, drop, &mut pooled).unwrap();
    let mut dpooled = vec![0.0; pooled.len()];
    let loss = loss::contrastive(&pooled, tokens.len() / 2, model.config.hidden, 5.0, &mut dpooled);
    (tape, dpooled, loss)
}

fn loss_of(ex: &Executor, kernels: &Kernels, config: &Config, master: &Master, drop: (Dropout, Dropout)) -> f64 {
    let params = master.params("", config);
    forward_with_loss(ex, kernels, &TrainWeights { config, params: &params, master }, drop).2
}

#[test]
fn every_gradient_matches_finite_differences_for_every_kernel_class() {
    let ex = Executor::for_ram(crate::ExecutorForRamConfig { threads: Some(2), ..Default::default() }).unwrap();
    let mut classes = vec![Some("portable")];
    classes.extend(crate::capabilities::runnable_cpu_classes().into_iter().map(Some));
    for (class, pooling, p) in
        classes.iter().map(|c| (*c, Pooling::Mean, 0.0)).chain([(None, Pooling::Cls, 0.0), (None, Pooling::Mean, 0.25)])
    {
        let kernels = Kernels::for_class(class).unwrap();
        let config = config(pooling);
        let weights = random_weights(&config);
        let mut master = Master::read(&weights, &config, "").unwrap();
        let drop = (Dropout { p, seed: 3, step: 1 }, Dropout { p, seed: 3, step: 1 });
        // The analytic gradient.
        let params = master.params("", &config);
        let model = TrainWeights { config: &config, params: &params, master: &master };
        let (mut tape, dpooled, _) = forward_with_loss(&ex, &kernels, &model, drop);
        let mut grads = vec![f32::NAN; master.values.len()];
        pass::backward_pooled(&mut tape, (&ex, &kernels), &model, drop, &dpooled, &mut grads, &mut |_| {}).unwrap();
        // Central differences in a few elements of every tensor.
        let tensors = master.tensors.clone();
        let mut checked = 0;
        for t in &tensors {
            for i in (t.range.clone()).step_by((t.range.len() / 4).max(1)).take(4) {
                assert!(grads[i].is_finite(), "{class:?} {pooling:?}: {} [{i}] was not written", t.name);
                let h = 1e-2f32;
                let old = master.values[i];
                master.values[i] = old + h;
                let up = loss_of(&ex, &kernels, &config, &master, drop);
                master.values[i] = old - h;
                let down = loss_of(&ex, &kernels, &config, &master, drop);
                master.values[i] = old;
                let fd = (up - down) / (2.0 * h as f64);
                let got = grads[i] as f64;
                assert!(
                    (fd - got).abs() <= 2e-2 * fd.abs().max(got.abs()) + 2e-4,
                    "{class:?} {pooling:?} dropout {p}: d loss / d {}[{}] = {got}, finite differences {fd}",
                    t.name,
                    i - t.range.start
                );
                checked += 1;
            }
        }
        assert!(checked > 60, "{checked}");
    }
}

#[test]
fn the_schedule_warms_up_then_decays_linearly() {
    let s = Settings {
        learning_rate: 1e-4,
        weight_decay: 0.0,
        warmup_steps: 2,
        total_steps: Some(10),
        max_grad_norm: 1.0,
        scale: 20.0,
        max_tokens: 8,
        hidden_dropout: 0.0,
        attention_dropout: 0.0,
        seed: 0,
    };
    let rates: Vec<f64> = (1..=12).map(|k| s.learning_rate(k)).collect();
    let want = [0.0, 0.5e-4, 1e-4, 0.875e-4, 0.75e-4, 0.625e-4, 0.5e-4, 0.375e-4, 0.25e-4, 0.125e-4, 0.0, 0.0];
    for (got, want) in rates.iter().zip(want) {
        assert!((got - want).abs() < 1e-15, "{rates:?}");
    }
    let constant = Settings { total_steps: None, warmup_steps: 0, ..s };
    assert_eq!(constant.learning_rate(1), 1e-4);
    assert_eq!(constant.learning_rate(1000), 1e-4);
}

fn rss_bytes() -> usize {
    let statm = std::fs::read_to_string("/proc/self/statm").unwrap_or_default();
    statm.split_whitespace().nth(1).and_then(|p| p.parse::<usize>().ok()).unwrap_or(0) * 4096
}

/// Memory follows the batch, not the number of steps: 10,000 whole steps (forward, loss, backward, AdamW, a new
/// packed encoder) on the tape of one trainer, after 100 to warm it up, grow the process by less than 2 MB.
#[test]
fn ten_thousand_steps_keep_memory_flat() {
    let ex = Executor::for_ram(crate::ExecutorForRamConfig { threads: Some(2), ..Default::default() }).unwrap();
    let kernels = Kernels::for_class(None).unwrap();
    let config = config(Pooling::Mean);
    let mut master = Master::read(&random_weights(&config), &config, "").unwrap();
    let tokens = batch();
    let mut tape = Tape::default();
    let (mut pooled, mut dpooled) = (vec![0.0; tokens.len() * 8], vec![0.0; tokens.len() * 8]);
    let drop = (Dropout { p: 0.1, seed: 1, step: 1 }, Dropout { p: 0.1, seed: 1, step: 1 });
    let mut params = master.params("", &config);
    let mut step = |k: u64, master: &mut Master, params: &mut crate::families::bert::params::Params| {
        let model = TrainWeights { config: &config, params, master };
        pass::forward_pooled(&mut tape, (&ex, &kernels), &model, &tokens, drop, &mut pooled).unwrap();
        loss::contrastive(&pooled, tokens.len() / 2, config.hidden, 20.0, &mut dpooled);
        let mut grads = std::mem::take(&mut master.grads);
        let model = TrainWeights { config: &config, params, master };
        pass::backward_pooled(&mut tape, (&ex, &kernels), &model, drop, &dpooled, &mut grads, &mut |_| {}).unwrap();
        master.grads = grads;
        adamw(&ex, &kernels, master, k, 1e-4, 0.01, 1.0).unwrap();
        *params = master.params("", &config);
    };
    for k in 1..=100 {
        step(k, &mut master, &mut params);
    }
    let before = rss_bytes();
    for k in 101..=10_100 {
        step(k, &mut master, &mut params);
    }
    let grown = rss_bytes().saturating_sub(before);
    assert!(grown < 2 << 20, "10,000 steps grew RSS by {grown} bytes");
    assert!(master.values.iter().all(|v| v.is_finite()));
}

/// A group of `size` processes whose peers all hold what this one holds: the sum is `size` times the data. It
/// records each all-reduce's start and length, and fails the one numbered `fail_at`.
#[derive(Debug)]
struct Mirror {
    size: usize,
    fail_at: Option<usize>,
    /// Each all-reduce's offset in the gradients (none for a buffer outside them) and length.
    seen: std::sync::Mutex<Vec<(Option<usize>, usize)>>,
    /// The gradients' address range.
    base: std::ops::Range<usize>,
}

impl crate::collective::Collective for Mirror {
    fn rank(&self) -> usize {
        0
    }
    fn size(&self) -> usize {
        self.size
    }
    fn all_reduce_sum(&self, data: &mut [f32]) -> Result<()> {
        let mut seen = self.seen.lock().unwrap();
        if self.fail_at == Some(seen.len()) {
            return Err(Error::conflict("rank 1 of the mesh is gone"));
        }
        let at = data.as_ptr() as usize;
        seen.push((self.base.contains(&at).then(|| (at - self.base.start) / 4), data.len()));
        data.iter_mut().for_each(|x| *x *= self.size as f32);
        Ok(())
    }
    fn all_gather(&self, values: &[u64]) -> Result<Vec<u64>> {
        Ok(values.repeat(self.size))
    }
}

/// The backward pass of the tiny BERT with its gradients averaged by `group` as the pass hands them over.
fn averaged_backward(group: &mut Mirror) -> (Vec<f32>, Vec<f32>, Master, Result<()>) {
    let ex = Executor::for_ram(crate::ExecutorForRamConfig { threads: Some(2), ..Default::default() }).unwrap();
    let kernels = Kernels::for_class(None).unwrap();
    let config = config(Pooling::Mean);
    let master = Master::read(&random_weights(&config), &config, "").unwrap();
    let drop = (Dropout { p: 0.0, seed: 3, step: 1 }, Dropout { p: 0.0, seed: 3, step: 1 });
    let params = master.params("", &config);
    let model = TrainWeights { config: &config, params: &params, master: &master };
    let (mut tape, dpooled, _) = forward_with_loss(&ex, &kernels, &model, drop);
    let mut alone = vec![f32::NAN; master.values.len()];
    pass::backward_pooled(&mut tape, (&ex, &kernels), &model, drop, &dpooled, &mut alone, &mut |_| {}).unwrap();
    let mut grads = vec![f32::NAN; master.values.len()];
    group.base = grads.as_ptr_range().start as usize..grads.as_ptr_range().end as usize;
    let group = &*group;
    let (result, all_reduce, waited) = across::backward_averaged(group, |done| {
        pass::backward_pooled(&mut tape, (&ex, &kernels), &model, drop, &dpooled, &mut grads, done)
    });
    assert!(all_reduce >= 0.0 && waited >= 0.0);
    (alone, grads, master, result)
}

#[test]
fn gradients_are_averaged_layer_by_layer_from_the_last_as_the_backward_pass_finishes_each() {
    let mut group = Mirror { size: 4, fail_at: None, seen: Default::default(), base: 0..0 };
    let (alone, averaged, master, result) = averaged_backward(&mut group);
    result.unwrap();
    // Every peer holds the same gradients here, so their average is this process's own, bit for bit (×4 then ÷4).
    assert_eq!(alone, averaged);
    // One all-reduce per layer, the last layer first, then the embeddings: the tensors after the word embeddings
    // (which come first), then the word embeddings' rows the batch read, gathered: ids 1 to 10 of 11, so 10 rows.
    let len = master.values.len();
    let mut expected: Vec<(Option<usize>, usize)> = (0..master.layers.len())
        .rev()
        .map(|l| {
            let end = if l + 1 < master.layers.len() { master.layer_start(l + 1) } else { len };
            (Some(master.layer_start(l)), end - master.layer_start(l))
        })
        .collect();
    let word = &master.embeddings.word;
    assert_eq!(word.start, 0);
    expected.push((Some(word.end), master.layer_start(0) - word.end));
    expected.push((None, 10 * 8));
    assert_eq!(*group.seen.lock().unwrap(), expected);
}

/// A collective of two processes whose peer read the word rows `theirs`, and whose sums add `peer` to each value.
#[derive(Debug)]
struct Pair {
    theirs: Vec<u64>,
    peer: f32,
    sums: std::sync::Mutex<Vec<Vec<f32>>>,
}

impl crate::collective::Collective for Pair {
    fn rank(&self) -> usize {
        0
    }
    fn size(&self) -> usize {
        2
    }
    fn all_reduce_sum(&self, data: &mut [f32]) -> Result<()> {
        self.sums.lock().unwrap().push(data.to_vec());
        data.iter_mut().for_each(|x| *x += self.peer);
        Ok(())
    }
    fn all_gather(&self, values: &[u64]) -> Result<Vec<u64>> {
        Ok([values, &self.theirs].concat())
    }
}

#[test]
fn the_word_embeddings_are_averaged_over_the_rows_either_process_read_and_the_rest_stay_zero() {
    use crate::collective::{Bucket, ReadRows};
    // One float before the table, a table of 70 rows of 2 (rows 64..70 in the bitmap's second word), two after.
    let (width, rows) = (2, 70);
    let mut values = vec![0.0f32; 1 + width * rows + 2];
    values[0] = 3.0;
    values[1 + width * rows..].copy_from_slice(&[5.0, 7.0]);
    let ours = [0usize, 66];
    for r in ours {
        values[1 + r * width..1 + (r + 1) * width].copy_from_slice(&[r as f32 + 1.0, -(r as f32) - 1.0]);
    }
    let read = vec![1 | 0b100, 1 << 2]; // rows 0, 2 and 66; row 2's gradient is zero here.
    let pair = Pair { theirs: vec![1 << 9, 1 << 2], peer: 1.0, sums: Default::default() };
    let rows_at = ReadRows { range: 1..1 + width * rows, width, read };
    across::average(&pair, Bucket { values: &mut values, rows: Some(rows_at) }).unwrap();
    // The part before the table, the part after it, then rows 0, 2, 9 and 66 side by side (the union, ascending).
    let sums = pair.sums.lock().unwrap();
    assert_eq!(sums[0], [3.0]);
    assert_eq!(sums[1], [5.0, 7.0]);
    assert_eq!(sums[2], [1.0, -1.0, 0.0, 0.0, 0.0, 0.0, 67.0, -67.0]);
    assert_eq!(sums.len(), 3);
    // Each summed value is halved; rows no process read stay zero.
    assert_eq!((values[0], &values[1 + width * rows..]), (2.0, &[3.0, 4.0][..]));
    for r in 0..rows {
        let row = &values[1 + r * width..1 + (r + 1) * width];
        let expected = match r {
            0 => [1.0, 0.0],
            2 | 9 => [0.5, 0.5],
            66 => [34.0, -33.0],
            _ => [0.0, 0.0],
        };
        assert_eq!(row, expected, "row {r}");
    }
}

#[test]
fn word_embeddings_of_another_size_on_a_peer_are_a_conflict() {
    use crate::collective::{Bucket, ReadRows};
    let mut values = vec![0.0f32; 8];
    let pair = Pair { theirs: vec![0, 0], peer: 0.0, sums: Default::default() };
    let rows = ReadRows { range: 0..8, width: 2, read: vec![1] };
    let error = across::average(&pair, Bucket { values: &mut values, rows: Some(rows) }).unwrap_err();
    assert!(error.to_string().contains("word embeddings of different sizes"), "{error}");
}

#[test]
fn a_failed_all_reduce_fails_the_pass_with_its_error_and_sends_nothing_after_it() {
    let mut group = Mirror { size: 2, fail_at: Some(1), seen: Default::default(), base: 0..0 };
    let (_, _, master, result) = averaged_backward(&mut group);
    let error = result.unwrap_err();
    assert!(error.to_string().contains("rank 1 of the mesh is gone"), "{error}");
    // The last layer was reduced; the failure came at the second bucket and nothing was sent after it.
    let seen = group.seen.lock().unwrap();
    assert_eq!(seen.len(), 1);
    assert_eq!(seen[0].0, Some(master.layer_start(master.layers.len() - 1)));
}
