//! Tokenisation with Hugging Face's `tokenizers` from the model's `tokenizer.json`, truncating as
//! sentence-transformers does: at most `max_tokens` tokens per text, special tokens included, no padding (the
//! file's own truncation and fixed padding are replaced).
//!
//! A long text is not tokenised whole: a prefix of it is, cut at a whitespace, starting at [`WINDOW_PER_TOKEN`]
//! bytes per kept token and growing fourfold while the prefix yields fewer than the kept tokens plus [`MARGIN`],
//! up to [`CAP_PER_TOKEN`] bytes per kept token. The kept tokens of such a prefix are the whole text's (the words
//! before the cut tokenise as they would in the whole text), so a 100 MB text costs about what its first kilobytes
//! cost and embeds as its truncated prefix does. Only a text whose kept tokens average over 1 KiB each (words of
//! hundreds of characters, each one `[UNK]`) is tokenised from its first `max_tokens` KiB alone.

use crate::error::{Error, Result};
use crate::executor::Executor;
use std::path::Path;
use std::sync::{Arc, Mutex, OnceLock};
use tokenizers::{PostProcessor, Tokenizer, TruncationDirection, TruncationParams, TruncationStrategy};

/// One text's tokens.
pub struct Tokens {
    pub ids: Vec<u32>,
    pub type_ids: Vec<u32>,
}

/// The ids a model embeds: rows of its word embeddings, and of its token type embeddings where it has them (a
/// family without them ignores the types a pair's template gives, as transformers does). Every text's tokens are
/// checked against them where they are made, so no id past a table reaches a forward pass.
#[derive(Clone, Copy, Debug)]
pub struct Vocab {
    pub words: usize,
    pub types: Option<usize>,
}

impl Vocab {
    /// Refuses `tokens` with an id past the tables, naming the input as `name`.
    fn check(&self, tokens: &Tokens, name: &str) -> Result<()> {
        if let Some(id) = tokens.ids.iter().find(|id| **id as usize >= self.words) {
            return Err(Error::unsupported(format!(
                "the tokenizer gave `{name}` token {id}, past the {} word embeddings",
                self.words
            )));
        }
        if let Some(ty) = self.types.and_then(|types| tokens.type_ids.iter().find(|ty| **ty as usize >= types)) {
            return Err(Error::unsupported(format!("the tokenizer gave `{name}` token type {ty}")));
        }
        Ok(())
    }
}

/// Bytes of a text first tokenised per kept token.
pub const WINDOW_PER_TOKEN: usize = 16;
/// Bytes of a text tokenised at most per kept token.
pub const CAP_PER_TOKEN: usize = 1024;
/// Tokens past the kept ones a prefix must yield for its cut not to matter.
pub const MARGIN: usize = 16;

/// The tokenizer at the model's own maximum, and the last other maximum a call asked for.
pub struct Tokenizers {
    /// The file's tokenizer with neither truncation nor padding: a prefix's tokens, before special tokens.
    raw: Arc<Tokenizer>,
    default: Arc<Tokenizer>,
    default_max: usize,
    /// Special tokens the post-processor adds to one text (`[CLS]` and `[SEP]`: 2).
    added: usize,
    vocab: Vocab,
    other: Mutex<Option<(usize, Arc<Tokenizer>)>>,
}

fn configured(base: &Tokenizer, max_tokens: usize, added: usize) -> Result<Tokenizer> {
    let mut tokenizer = base.clone();
    tokenizer.with_padding(None);
    // The library subtracts the special tokens from the maximum, so it must not be below their count; a smaller
    // maximum is applied by cutting afterwards.
    tokenizer
        .with_truncation(Some(TruncationParams {
            max_length: max_tokens.max(added),
            strategy: TruncationStrategy::LongestFirst,
            stride: 0,
            direction: TruncationDirection::Right,
        }))
        .map_err(|e| Error::internal(format!("configuring the tokenizer's truncation failed: {e}")))?;
    Ok(tokenizer)
}

impl Tokenizers {
    /// The tokenizer of `dir`'s `tokenizer.json`, keeping `default_max` tokens a text unless asked for another
    /// maximum, and giving ids within `vocab`.
    pub fn read(dir: &Path, default_max: usize, vocab: Vocab) -> Result<Tokenizers> {
        let path = dir.join("tokenizer.json");
        let Some(bytes) = crate::model::layout::read_side(&path, crate::model::layout::MAX_TOKENIZER_BYTES)? else {
            return Err(Error::unsupported(format!(
                "{} needs a `tokenizer.json` beside the weights; `{}` has none",
                super::verb(),
                dir.display()
            )));
        };
        let base = Tokenizer::from_bytes(&bytes)
            .map_err(|e| Error::unsupported(format!("`{}` could not be read as a tokenizer: {e}", path.display())))?;
        let added = base.get_post_processor().map_or(0, |p| p.added_tokens(false));
        let default = Arc::new(configured(&base, default_max, added)?);
        let mut raw = base;
        raw.with_padding(None);
        raw.with_truncation(None)
            .map_err(|e| Error::internal(format!("turning the tokenizer's truncation off failed: {e}")))?;
        Ok(Tokenizers { raw: Arc::new(raw), default, default_max, added, vocab, other: Mutex::new(None) })
    }

    fn for_max(&self, max_tokens: usize) -> Result<Arc<Tokenizer>> {
        if max_tokens == self.default_max {
            return Ok(self.default.clone());
        }
        let mut other = self.other.lock().unwrap_or_else(|p| p.into_inner());
        match &*other {
            Some((max, tokenizer)) if *max == max_tokens => Ok(tokenizer.clone()),
            _ => {
                let tokenizer = Arc::new(configured(&self.default, max_tokens, self.added)?);
                *other = Some((max_tokens, tokenizer.clone()));
                Ok(tokenizer)
            }
        }
    }

    /// Tokenises `texts[i]` for every `i` of `which` on the executor's threads, in `which`'s order.
    pub fn encode(
        &self,
        executor: &Executor,
        texts: &[String],
        which: &[usize],
        max_tokens: usize,
    ) -> Result<Vec<Tokens>> {
        self.encode_named(executor, texts, which, max_tokens, &|i| format!("texts[{i}]"))
    }

    /// [`Tokenizers::encode`], whose messages name `texts[i]` as `name(i)` does.
    pub fn encode_named(
        &self,
        executor: &Executor,
        texts: &[String],
        which: &[usize],
        max_tokens: usize,
        name: &(dyn Fn(usize) -> String + Sync),
    ) -> Result<Vec<Tokens>> {
        let tokenizer = self.for_max(max_tokens)?;
        self.each(executor, which, max_tokens, name, |i| self.one(&tokenizer, &texts[i], max_tokens))
    }

    /// Tokenises the pair (`query`, `documents[i]`) for every `i` of `which` on the executor's threads, in `which`'s
    /// order: the two texts with the special tokens between them, longest first truncated to `max_tokens` together,
    /// as sentence-transformers' CrossEncoder tokenises. Both are tokenised whole.
    pub fn encode_pairs(
        &self,
        executor: &Executor,
        query: &str,
        documents: &[String],
        which: &[usize],
        max_tokens: usize,
    ) -> Result<Vec<Tokens>> {
        let tokenizer = self.for_max(max_tokens)?;
        let name = |i: usize| format!("documents[{i}]` with `query");
        self.each(executor, which, max_tokens, &name, |i| tokenizer.encode_fast((query, documents[i].as_str()), true))
    }

    /// `text`'s encoding by `tokenizer` (truncated, special tokens added), from a prefix of it (module docs).
    fn one(&self, tokenizer: &Tokenizer, text: &str, max_tokens: usize) -> tokenizers::Result<tokenizers::Encoding> {
        let wanted = max_tokens.saturating_sub(self.added) + MARGIN;
        let cap = max_tokens.saturating_mul(CAP_PER_TOKEN).max(64 << 10);
        let mut window = max_tokens.saturating_mul(WINDOW_PER_TOKEN).max(1024).min(cap);
        loop {
            let whole = text.len() <= window;
            let prefix = if whole { text } else { prefix(text, window) };
            let encoding = self.raw.encode_fast(prefix, false)?;
            if whole || encoding.len() >= wanted || window >= cap {
                return tokenizer.post_process(encoding, None, true);
            }
            window = window.saturating_mul(4).min(cap);
        }
    }

    /// `encode(i)` for every `i` of `which` on the executor's threads, in `which`'s order, cut to `max_tokens` and
    /// checked against the vocabulary; a failure names the input as `name(i)`.
    fn each(
        &self,
        executor: &Executor,
        which: &[usize],
        max_tokens: usize,
        name: &(dyn Fn(usize) -> String + Sync),
        encode: impl Fn(usize) -> tokenizers::Result<tokenizers::Encoding> + Sync,
    ) -> Result<Vec<Tokens>> {
        let slots: Vec<OnceLock<Result<Tokens>>> = which.iter().map(|_| OnceLock::new()).collect();
        executor.for_n_dynamic(which.len(), |j| {
            let i = which[j];
            let result = encode(i)
                .map(|encoding| {
                    let keep = encoding.len().min(max_tokens);
                    let (ids, types) = (&encoding.get_ids()[..keep], &encoding.get_type_ids()[..keep]);
                    Tokens { ids: ids.to_vec(), type_ids: types.to_vec() }
                })
                .map_err(|e| Error::internal(format!("tokenising `{}` failed: {e}", name(i))))
                .and_then(|tokens| self.vocab.check(&tokens, &name(i)).map(|()| tokens));
            let _ = slots[j].set(result);
        })?;
        slots
            .into_iter()
            .map(|slot| slot.into_inner().unwrap_or_else(|| Err(Error::internal("an input was not tokenised"))))
            .collect()
    }
}

/// The first at most `bytes` bytes of `text`, ending before its last whitespace in that span (or, without one in
/// its second half, at the last character boundary).
pub fn prefix(text: &str, bytes: usize) -> &str {
    if text.len() <= bytes {
        return text;
    }
    let mut end = bytes;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    let head = &text[..end];
    match head.char_indices().rev().take_while(|(at, _)| *at >= end / 2).find(|(_, c)| c.is_whitespace()) {
        Some((at, _)) => &text[..at],
        None => head,
    }
}

#[cfg(test)]
mod tests {
    use super::prefix;

    #[test]
    fn prefixes_end_before_a_whitespace_or_on_a_character_boundary() {
        assert_eq!(prefix("one two three", 100), "one two three");
        assert_eq!(prefix("one two three", 9), "one two");
        assert_eq!(prefix("one two three", 8), "one two");
        assert_eq!(prefix("onetwothree", 5), "onetw");
        assert_eq!(prefix("ééé", 3), "é");
        assert_eq!(prefix("a b\u{3000}c", 6), "a b");
        assert_eq!(prefix("x bbbbbbbbbbbbbbbb", 10), "x bbbbbbbb", "no whitespace in the second half");
    }
}
