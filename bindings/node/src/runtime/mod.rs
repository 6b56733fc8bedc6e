//! The hand-written part of the Node native layer. The generated glue (`generated/node/glue.rs`) is a mechanical use
//! of these helpers, one file per concern:
//!
//! - [`read`]: JavaScript arguments read into Rust values, with validation ([`Js`], [`FromJs`]);
//! - [`write`]: Rust values written as JavaScript values ([`ToJs`], [`Object`]);
//! - [`call`]: the raw napi callbacks of the glue's `FAST` list (their arguments, their thrown errors, their
//!   registration) and the registry of core handles they look up by number;
//! - [`offload`]: a long call run as napi async work, settling a promise;
//! - [`external`]: core buffers shared with JavaScript without a copy (a verb's matrix, an executor's quiet word).
//!
//! Error scheme: every failure is a napi error whose status string is the UForm error kind
//! (`ErrorKind::code()`, like `"invalid_argument"`), so the thrown JavaScript `Error` carries it as `code` and the
//! message names the argument and the value. The generated wrapper (`index.js`) turns any error whose `code` is one
//! of the UForm kinds into a `UFormError`; other napi errors pass through unchanged.
//!
//! Safety: every napi call here takes an env and values napi handed to the callback in progress, on the JavaScript
//! thread that runs it. A [`Js`] is made only from such a value and cannot outlive the call; a bare
//! `sys::napi_env` reaches a helper only from the glue's callbacks (`args.env()`, napi-rs's `Env::raw()`) or an
//! async work's completion, which napi runs on that thread with its env. The `// SAFETY:` comments cite this as
//! "the callback's env".

mod call;
mod external;
mod offload;
mod read;
mod write;

pub use call::*;
pub use external::*;
pub use offload::*;
pub use read::*;
pub use write::*;

use napi::sys;

/// The status of a UForm error crossing napi: the kind's code string.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Kind(pub &'static str);

impl AsRef<str> for Kind {
    fn as_ref(&self) -> &str {
        self.0
    }
}

pub type Failure = napi::Error<Kind>;
/// Named `Result` because napi-derive recognises a fallible return by that name.
pub type Result<T> = std::result::Result<T, Failure>;

/// How JavaScript spells the names in a core message: camelCase members, a record parameter's fields under it
/// (`config.cpuClass`).
const SPELLING: uform_core::path::Spelling =
    uform_core::path::Spelling { camel_case: true, flatten_record_parameters: false };

/// A core error as it crosses into JavaScript.
pub fn fail(e: uform_core::Error) -> Failure {
    napi::Error::new(Kind(e.kind().code()), e.message_in(&SPELLING))
}

/// An invalid-argument error: "`argument` what", `argument` spelled as JavaScript reads it.
pub fn invalid(argument: &str, what: impl std::fmt::Display) -> Failure {
    fail(uform_core::Error::invalid_as_spelled(argument, what))
}

/// A napi call that failed under us: a bug or an exhausted engine, reported as internal.
fn engine(what: &str, status: sys::napi_status) -> Failure {
    napi::Error::new(
        Kind(uform_core::ErrorKind::Internal.code()),
        format!("the JavaScript engine failed to {what} (napi status {status})"),
    )
}

fn check(status: sys::napi_status, what: &str) -> Result<()> {
    if status == sys::Status::napi_ok {
        Ok(())
    } else {
        Err(engine(what, status))
    }
}

/// Runs a core call, turning a panic into the internal error (the core's one message for it, as in every binding):
/// a panic never crosses into JavaScript.
pub fn guard<T>(call: impl FnOnce() -> uform_core::Result<T>) -> Result<T> {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(call))
        .unwrap_or_else(|payload| Err(uform_core::Error::from_panic(payload)))
        .map_err(fail)
}
