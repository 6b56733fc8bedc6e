//! Problems found in the IDL, each with its position and the item it belongs to.

use std::fmt;

#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Diagnostic {
    pub line: u32,
    pub column: u32,
    /// The item (and member) the problem belongs to, like `MeshOptions.threads`; empty for the file itself.
    pub item: String,
    pub message: String,
}

/// Every problem found in one file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Diagnostics {
    pub file: String,
    pub problems: Vec<Diagnostic>,
}

impl fmt::Display for Diagnostics {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for p in &self.problems {
            if p.item.is_empty() {
                writeln!(f, "{}:{}:{}: {}", self.file, p.line, p.column, p.message)?;
            } else {
                writeln!(f, "{}:{}:{}: {}: {}", self.file, p.line, p.column, p.item, p.message)?;
            }
        }
        write!(f, "{} problem{} in {}", self.problems.len(), if self.problems.len() == 1 { "" } else { "s" }, self.file)
    }
}

impl std::error::Error for Diagnostics {}
