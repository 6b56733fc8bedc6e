//! Helpers every check uses to report a problem at a position of the file.

use super::Checker;
use crate::diagnostics::Diagnostic;
use crate::raw::*;
use serde_saphyr::Location;

/// A position as the diagnostics print it.
pub(super) fn at(loc: &Location) -> (u32, u32) {
    (loc.line() as u32, loc.column() as u32)
}

impl Checker {
    pub(super) fn problem(&mut self, loc: &Location, item: &str, message: impl Into<String>) {
        let (line, column) = at(loc);
        self.problems.push(Diagnostic { line, column, item: item.to_string(), message: message.into() });
    }

    /// A problem that belongs to no position of the file (line and column 0).
    pub(super) fn unplaced(&mut self, item: &str, message: impl Into<String>) {
        self.problems.push(Diagnostic { line: 0, column: 0, item: item.to_string(), message: message.into() });
    }

    pub(super) fn flag(raw: Option<&S<bool>>, default: bool) -> bool {
        raw.map_or(default, |b| b.value)
    }

    /// Reports each key that is present but does not belong to this kind of item.
    pub(super) fn unexpected(&mut self, present: &[(&str, bool)], loc: &Location, item: &str, kind: &str) {
        for (key, is_present) in present {
            if *is_present {
                self.problem(loc, item, format!("`{key}` does not belong to {kind}"));
            }
        }
    }
}

/// A literal as written, for messages.
pub(super) fn show(raw: &RawLiteral) -> String {
    match raw {
        RawLiteral::Bool(b) => b.to_string(),
        RawLiteral::Integer(n) => n.to_string(),
        RawLiteral::Unsigned(n) => n.to_string(),
        RawLiteral::Integer128(n) => n.to_string(),
        RawLiteral::Float(f) => f.to_string(),
        RawLiteral::String(s) => format!("{s:?}"),
        RawLiteral::Map(m) if m.is_empty() => "{}".to_string(),
        RawLiteral::Map(_) => "a map".to_string(),
        RawLiteral::List(_) => "a list".to_string(),
    }
}
