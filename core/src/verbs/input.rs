//! The rules every verb applies to its caller's input, in one place: no text holds a NUL character (C strings
//! could not carry it), `max_tokens` within the model's positions, `dimensions` within its width. The tokenizer
//! checks the ids it makes against the model's vocabulary ([`crate::families::tokenize::Vocab`]).

use crate::error::{Error, Result};

/// Refuses the first of `texts` (in order) holding a NUL character, naming text `i` as `name(i)`.
pub(crate) fn check_nul<'a>(texts: impl IntoIterator<Item = &'a str>, name: impl Fn(usize) -> String) -> Result<()> {
    match texts.into_iter().enumerate().find_map(|(i, t)| t.find('\0').map(|at| (i, at))) {
        Some((i, at)) => Err(Error::invalid_argument(&name(i), format!("contains a NUL character at byte {at}"))),
        None => Ok(()),
    }
}

/// The tokens a text keeps: `given` (at the path `argument`) checked against the model's `positions`, else the
/// model's own `default`.
pub(crate) fn max_tokens(argument: &str, given: Option<u32>, default: usize, positions: usize) -> Result<usize> {
    match given {
        None => Ok(default),
        Some(m) if m >= 1 && m as usize <= positions => Ok(m as usize),
        Some(m) => Err(Error::invalid_argument(
            argument,
            format!("must be between 1 and {positions} (the model's position embeddings), got {m}"),
        )),
    }
}

/// The columns `dimensions` keeps of a model's `h` (all when absent), checked.
pub(crate) fn columns(dimensions: Option<u32>, h: usize) -> Result<usize> {
    match dimensions {
        None => Ok(h),
        Some(d) if d >= 1 && d as usize <= h => Ok(d as usize),
        Some(d) => Err(Error::invalid_argument(
            "options.dimensions",
            format!("must be between 1 and {h} (the model's dimensions), got {d}"),
        )),
    }
}

/// How many rows a call's `count` inputs make (its argument `argument`, holding `what`), refused past `u32` (the
/// matrices' row count).
pub(crate) fn rows(argument: &str, count: usize, what: &str) -> Result<u32> {
    u32::try_from(count).map_err(|_| Error::invalid_argument(argument, format!("holds {count} {what}, over 2^32 - 1")))
}
