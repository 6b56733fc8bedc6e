//! Tokenisation with Hugging Face's `tokenizers` from the model's `tokenizer.json`, truncating as
//! sentence-transformers does: at most `max_tokens` tokens per text, special tokens included, no padding (the
//! file's own truncation and fixed padding are replaced).

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

/// The tokenizer at the model's own maximum, and the last other maximum a call asked for.
pub struct Tokenizers {
    default: Arc<Tokenizer>,
    default_max: usize,
    /// Special tokens the post-processor adds to one text (`[CLS]` and `[SEP]`: 2).
    added: usize,
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
    pub fn read(dir: &Path, default_max: usize) -> Result<Tokenizers> {
        let path = dir.join("tokenizer.json");
        if !path.is_file() {
            return Err(Error::unsupported(format!(
                "{} needs a `tokenizer.json` beside the weights; `{}` has none",
                crate::encode::verb(),
                dir.display()
            )));
        }
        let base = Tokenizer::from_file(&path)
            .map_err(|e| Error::unsupported(format!("`{}` could not be read as a tokenizer: {e}", path.display())))?;
        let added = base.get_post_processor().map_or(0, |p| p.added_tokens(false));
        let default = Arc::new(configured(&base, default_max, added)?);
        Ok(Tokenizers { default, default_max, added, other: Mutex::new(None) })
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

    /// Tokenises every text on the executor's threads, in input order.
    pub fn encode(&self, executor: &Executor, texts: &[String], max_tokens: usize) -> Result<Vec<Tokens>> {
        let tokenizer = self.for_max(max_tokens)?;
        let slots: Vec<OnceLock<Result<Tokens>>> = texts.iter().map(|_| OnceLock::new()).collect();
        executor.for_n_dynamic(texts.len(), |i| {
            let result = tokenizer
                .encode_fast(texts[i].as_str(), true)
                .map(|encoding| {
                    let keep = encoding.len().min(max_tokens);
                    Tokens {
                        ids: encoding.get_ids()[..keep].to_vec(),
                        type_ids: encoding.get_type_ids()[..keep].to_vec(),
                    }
                })
                .map_err(|e| Error::internal(format!("tokenising `texts[{i}]` failed: {e}")));
            let _ = slots[i].set(result);
        })?;
        slots
            .into_iter()
            .map(|slot| slot.into_inner().unwrap_or_else(|| Err(Error::internal("a text was not tokenised"))))
            .collect()
    }
}
