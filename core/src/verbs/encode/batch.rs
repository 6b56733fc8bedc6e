//! How one call's texts are cut into batches that fit the executor's scratch (`scratchLimit`).
//!
//! The call's texts are taken longest first (by bytes, as sentence-transformers sorts them), tokenised a chunk at a
//! time into a pending pool that holds about one batch of tokens, and each batch takes the pool's texts with the
//! most tokens first for as long as its scratch ([`forward::scratch_lens`]) fits the limit: batches stay dense
//! (their texts have similar lengths, and nothing is padded anyway) and the first batch meets the longest text, so a
//! text that cannot fit fails the call before any work is spent on the others. Rows land in input order. A batch's
//! rows do not depend on its other texts (every product sums over the whole of `k`, see `gemm`), so a call cut into
//! batches embeds exactly as the same texts in smaller calls.

use crate::error::{Error, ErrorKind, Result};
use crate::executor::Scratch;
use crate::families::bert::forward;
use crate::families::bert::Config;

/// Sizes batches for one model on one executor.
pub struct Planner<'c> {
    config: &'c Config,
    threads: usize,
    limit: usize,
}

/// The next batch: its first `texts` pending texts, with `slots` threads doing attention.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Batch {
    pub texts: usize,
    pub slots: usize,
}

impl<'c> Planner<'c> {
    pub fn new(config: &'c Config, threads: usize, limit: usize) -> Planner<'c> {
        Planner { config, threads: threads.max(1), limit }
    }

    /// Scratch bytes of a batch of `total` tokens whose longest text has `longest`, with `slots` attention threads.
    pub fn bytes(&self, total: usize, longest: usize, slots: usize) -> usize {
        Scratch::bytes_for(&forward::scratch_lens(self.config, total, longest, slots))
    }

    /// Tokens a batch of short texts holds at most: how many the pending pool is filled to.
    pub fn capacity(&self) -> usize {
        let per_token = self.bytes(1, 0, 0).max(1);
        (self.limit / per_token).max(1)
    }

    /// The next batch from pending texts' token counts, most tokens first (`lens[0]` the longest); `None` for no
    /// texts, or `Err(bytes)` with what the first text alone needs when even one attention thread does not fit.
    pub fn next(&self, lens: &[usize]) -> std::result::Result<Option<Batch>, usize> {
        let Some(&longest) = lens.first() else { return Ok(None) };
        let heads = self.config.heads.max(1);
        let slots_for = |texts: usize| self.threads.min(texts.saturating_mul(heads)).max(1);
        let (mut total, mut texts) = (0usize, 0usize);
        for &len in lens {
            let (t, n) = (total + len, texts + 1);
            if self.bytes(t, longest, slots_for(n)) > self.limit {
                break;
            }
            (total, texts) = (t, n);
        }
        if texts > 0 {
            return Ok(Some(Batch { texts, slots: slots_for(texts) }));
        }
        // The longest text alone does not fit with every thread on attention: fewer threads, down to one.
        let slots = (1..slots_for(1)).rev().find(|&s| self.bytes(longest, longest, s) <= self.limit);
        match slots {
            Some(slots) => Ok(Some(Batch { texts: 1, slots })),
            None => Err(self.bytes(longest, longest, 1)),
        }
    }

    /// The out-of-memory error for `texts[index]`, `tokens` long, whose batch of one needs `bytes`.
    pub fn too_long(&self, index: usize, tokens: usize, bytes: usize) -> Error {
        Error::new(
            ErrorKind::OutOfMemory,
            format!(
                "{}: `texts[{index}]` has {tokens} tokens, which need {bytes} bytes of scratch on their own, over the \
                 executor's {} of {} bytes; raise it or lower {}",
                crate::families::verb(),
                crate::path::name("ExecutorForRamConfig.scratch_limit"),
                self.limit,
                crate::path::name("options.max_tokens"),
            ),
        )
    }
}

/// Refuses a call whose output cannot be allocated, instead of aborting the process.
pub fn output(rows: usize, columns: usize) -> Result<Vec<f32>> {
    let len = rows.checked_mul(columns).ok_or_else(|| {
        Error::new(ErrorKind::OutOfMemory, format!("{rows} rows of {columns} floats overflow the address space"))
    })?;
    let mut data = Vec::new();
    data.try_reserve_exact(len).map_err(|_| {
        Error::new(
            ErrorKind::OutOfMemory,
            format!(
                "{}: the result of {rows} rows of {columns} floats ({} bytes) cannot be allocated",
                crate::families::verb(),
                len as u128 * 4
            ),
        )
    })?;
    data.resize(len, 0.0);
    Ok(data)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn minilm() -> Config {
        Config { max_tokens: 256, ..Config::bert(384, 12, 6, 1536, 30522, 512) }
    }

    #[test]
    fn batches_fill_the_limit_and_never_pass_it() {
        let config = minilm();
        let planner = Planner::new(&config, 4, 64 << 20);
        // About 9 KiB per token for MiniLM: 64 MiB holds some 7,000 tokens.
        assert!((6_500..7_300).contains(&planner.capacity()), "{}", planner.capacity());
        let lens = vec![12; 20_000];
        let batch = planner.next(&lens).unwrap().unwrap();
        assert_eq!(batch.slots, 4);
        assert!(planner.bytes(12 * batch.texts, 12, 4) <= 64 << 20);
        assert!(planner.bytes(12 * (batch.texts + 1), 12, 4) > 64 << 20, "the batch stopped early: {batch:?}");
        assert_eq!(planner.next(&[]).unwrap(), None);
    }

    #[test]
    fn a_long_text_gets_fewer_attention_threads_before_it_is_refused() {
        let config = minilm();
        // 8 threads, fewer than the 12 heads: one text alone would keep them all busy.
        let one = Planner::new(&config, 8, usize::MAX).bytes(512, 512, 1);
        let all = Planner::new(&config, 8, usize::MAX).bytes(512, 512, 8);
        let tight = Planner::new(&config, 8, (one + all) / 2);
        let batch = tight.next(&[512, 3]).unwrap().unwrap();
        assert_eq!(batch.texts, 1);
        assert!(batch.slots > 1 && batch.slots < 8, "{batch:?}");
        assert_eq!(Planner::new(&config, 8, one - 1).next(&[512]), Err(one));
        let e = tight.too_long(7, 512, one);
        assert_eq!(e.kind(), ErrorKind::OutOfMemory);
        assert!(e.message().contains("texts[7]") && e.message().contains("512 tokens"), "{e}");
    }
}
