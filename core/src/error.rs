//! One error model for every language: a kind (the same set in C, JS, Python, Swift and Kotlin), the path to the
//! bad value, and a message that names the argument and the offending value. The message is a template (see
//! [`crate::path`]) that each binding renders with its language's spelling of the names in it.

use crate::path::{self, Segment, Spelling};
use std::fmt;

/// The kinds of failure every binding reports. The order is the C status order (`UFORM_STATUS_…`, 1-based).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ErrorKind {
    /// An argument is missing, out of range, or malformed.
    InvalidArgument,
    /// The request is understood but not supported by this build or this machine.
    Unsupported,
    /// A resource the call needs is not present: no GPU, no driver, no free device.
    Unavailable,
    /// A wait ran past its deadline.
    Timeout,
    /// The handle is borrowed and cannot be freed yet.
    InUse,
    /// Peers disagree, or the state on disk belongs to another run.
    Conflict,
    /// An allocation failed.
    OutOfMemory,
    /// A file-system or operating-system call failed.
    Io,
    /// A GPU driver call failed; the message carries its code.
    Device,
    /// The handle was freed before this call.
    FreedHandle,
    /// A bug: a caught panic or a broken invariant.
    Internal,
}

impl ErrorKind {
    /// Every kind, in C status order.
    pub const ALL: [ErrorKind; 11] = [
        ErrorKind::InvalidArgument,
        ErrorKind::Unsupported,
        ErrorKind::Unavailable,
        ErrorKind::Timeout,
        ErrorKind::InUse,
        ErrorKind::Conflict,
        ErrorKind::OutOfMemory,
        ErrorKind::Io,
        ErrorKind::Device,
        ErrorKind::FreedHandle,
        ErrorKind::Internal,
    ];

    /// The code string every binding exposes (`UFormError.code`, `exc.code`).
    pub fn code(self) -> &'static str {
        match self {
            ErrorKind::InvalidArgument => "invalid_argument",
            ErrorKind::Unsupported => "unsupported",
            ErrorKind::Unavailable => "unavailable",
            ErrorKind::Timeout => "timeout",
            ErrorKind::InUse => "in_use",
            ErrorKind::Conflict => "conflict",
            ErrorKind::OutOfMemory => "out_of_memory",
            ErrorKind::Io => "io",
            ErrorKind::Device => "device",
            ErrorKind::FreedHandle => "freed_handle",
            ErrorKind::Internal => "internal",
        }
    }

    /// The C status value: 0 is success, kinds count from 1 in [`ErrorKind::ALL`] order.
    pub fn status(self) -> i32 {
        ErrorKind::ALL.iter().position(|k| *k == self).map_or(0, |i| i as i32 + 1)
    }
}

/// The error every fallible core call returns. Boxed, so that a `Result<()>` is one pointer wide and comes back in
/// a register: the calls that succeed most often (an idle `drain`) pay nothing for the size of the failure.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Error(Box<Failure>);

#[derive(Clone, Debug, PartialEq, Eq)]
struct Failure {
    kind: ErrorKind,
    /// A template: [`path::PATH`] and [`path::name`] mark the names each language spells.
    message: String,
    path: Vec<Segment>,
}

impl Error {
    /// An error whose message is `message`, a template that may mention IDL names through [`path::name`].
    #[cold]
    pub fn new(kind: ErrorKind, message: impl Into<String>) -> Self {
        Error(Box::new(Failure { kind, message: message.into(), path: Vec::new() }))
    }
    pub fn kind(&self) -> ErrorKind {
        self.0.kind
    }
    /// The message in the IDL's own spelling, which is C's: `` `config.cpu_class` names an unknown … ``.
    pub fn message(&self) -> String {
        self.message_in(&Spelling::CANONICAL)
    }
    /// The message as a language spells the names in it.
    pub fn message_in(&self, spelling: &Spelling) -> String {
        spelling.render(&self.0.message, &self.0.path)
    }
    /// The path to the bad value, like `config`, `memory_domains`, `[1]`; empty when the error names none.
    pub fn path(&self) -> &[Segment] {
        &self.0.path
    }

    /// The value at `path`, the IDL's spelling of it (`config.memory_domains[1]`), is invalid: `what` says why,
    /// naming the value. Each binding spells the path its own way.
    #[cold]
    pub fn invalid_argument(path: &str, what: impl fmt::Display) -> Self {
        Error(Box::new(Failure {
            kind: ErrorKind::InvalidArgument,
            message: format!("{} {what}", path::PATH),
            path: path::parse(path),
        }))
    }
    /// `argument`, a name already spelled for its reader (a binding's own argument, an environment variable), is
    /// invalid: `what` says why.
    #[cold]
    pub fn invalid_as_spelled(argument: &str, what: impl fmt::Display) -> Self {
        Error::new(ErrorKind::InvalidArgument, format!("`{argument}` {what}"))
    }
    pub fn unsupported(message: impl Into<String>) -> Self {
        Error::new(ErrorKind::Unsupported, message)
    }
    pub fn unavailable(message: impl Into<String>) -> Self {
        Error::new(ErrorKind::Unavailable, message)
    }
    pub fn timeout(message: impl Into<String>) -> Self {
        Error::new(ErrorKind::Timeout, message)
    }
    pub fn in_use(message: impl Into<String>) -> Self {
        Error::new(ErrorKind::InUse, message)
    }
    pub fn conflict(message: impl Into<String>) -> Self {
        Error::new(ErrorKind::Conflict, message)
    }
    pub fn device(message: impl Into<String>) -> Self {
        Error::new(ErrorKind::Device, message)
    }
    pub fn internal(message: impl Into<String>) -> Self {
        Error::new(ErrorKind::Internal, message)
    }
    /// A freed handle of `class` was used by `method` (the IDL's spelling, `encode_text`).
    #[cold]
    pub fn freed(class: &str, method: &str) -> Self {
        let article = if class.starts_with(['A', 'E', 'I', 'O', 'U']) { "an" } else { "a" };
        Error::new(
            ErrorKind::FreedHandle,
            format!("{} was called on {article} {class} that was already freed", path::name(method)),
        )
    }
    /// An I/O failure on `path` while doing `action`.
    pub fn io(action: &str, path: &std::path::Path, err: &std::io::Error) -> Self {
        let kind = if err.kind() == std::io::ErrorKind::OutOfMemory { ErrorKind::OutOfMemory } else { ErrorKind::Io };
        Error::new(kind, format!("{action} `{}` failed: {err}", path.display()))
    }
    /// Turns a caught panic payload into an internal error.
    pub fn from_panic(payload: Box<dyn std::any::Any + Send>) -> Self {
        let text = payload
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| payload.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "a panic with a non-string payload".to_string());
        Error::internal(format!("a panic was caught: {text}"))
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message())
    }
}

impl std::error::Error for Error {}

pub type Result<T, E = Error> = std::result::Result<T, E>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statuses_count_from_one_in_order() {
        for (i, kind) in ErrorKind::ALL.iter().enumerate() {
            assert_eq!(kind.status(), i as i32 + 1);
        }
    }

    #[test]
    fn invalid_argument_names_the_argument() {
        let e = Error::invalid_argument("config.threads", "must be at least 1, got 0");
        assert_eq!(e.kind(), ErrorKind::InvalidArgument);
        assert_eq!(e.message(), "`config.threads` must be at least 1, got 0");
        assert_eq!(e.path(), [Segment::Name("config".into()), Segment::Name("threads".into())]);
    }

    #[test]
    fn each_language_reads_the_path_in_its_own_spelling() {
        let e = Error::invalid_argument("config.cpu_class", "names an unknown CPU class \"no-such-cpu\"");
        let camel = Spelling { camel_case: true, flatten_record_parameters: false };
        let python = Spelling { camel_case: false, flatten_record_parameters: true };
        assert!(e.message().starts_with("`config.cpu_class` names"), "{e}");
        assert!(e.message_in(&camel).starts_with("`config.cpuClass` names"), "{e}");
        assert!(e.message_in(&python).starts_with("`cpu_class` names"), "{e}");
        assert_eq!(e.to_string(), e.message());
    }
}
