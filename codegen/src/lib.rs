//! The UForm code generator: `idl/uform.yaml` → load → check → language-neutral [`model`] → per-language
//! formatters and askama templates → the files under `generated/`.

pub mod check;
pub mod compat;
pub mod diagnostics;
pub mod fuzz;
pub mod lang;
pub mod model;
pub mod plan;
mod raw;
pub mod render;
#[cfg(test)]
mod test_idl;

use diagnostics::{Diagnostic, Diagnostics};
use std::path::{Path, PathBuf};

/// One file the generator produces, relative to `generated/`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Output {
    pub path: PathBuf,
    pub contents: String,
}

/// Loads and checks IDL text. `file` names it in diagnostics. Never panics, whatever the input.
pub fn load_str(text: &str, file: &str) -> Result<model::Api, Diagnostics> {
    let diagnostics = |problems| Diagnostics { file: file.to_string(), problems };
    let parsed = std::panic::catch_unwind(|| serde_saphyr::from_str::<raw::RawFile>(text));
    let raw = match parsed {
        Ok(Ok(raw)) => raw,
        Ok(Err(e)) => {
            let (line, column) = e.location().map(|l| (l.line() as u32, l.column() as u32)).unwrap_or((0, 0));
            let message = e.to_string();
            let message = message.lines().next().unwrap_or("invalid YAML").to_string();
            return Err(diagnostics(vec![Diagnostic { line, column, item: String::new(), message }]));
        }
        Err(_) => {
            return Err(diagnostics(vec![Diagnostic {
                line: 0,
                column: 0,
                item: String::new(),
                message: "the YAML parser failed on this input".into(),
            }]))
        }
    };
    check::check(&raw).map_err(diagnostics)
}

/// Loads and checks IDL bytes, as read from a file. Bytes that are not UTF-8 are one diagnostic at the first bad
/// byte. Never panics, whatever the input.
pub fn load_bytes(bytes: &[u8], file: &str) -> Result<model::Api, Diagnostics> {
    match std::str::from_utf8(bytes) {
        Ok(text) => load_str(text, file),
        Err(e) => {
            let good = &bytes[..e.valid_up_to()];
            let line_start = good.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
            // The prefix is valid UTF-8, so its lines and columns count characters as the YAML parser does.
            let line = good.iter().filter(|&&b| b == b'\n').count() as u32 + 1;
            let column = String::from_utf8_lossy(&good[line_start..]).chars().count() as u32 + 1;
            let bad = bytes[e.valid_up_to()];
            Err(Diagnostics {
                file: file.to_string(),
                problems: vec![Diagnostic {
                    line,
                    column,
                    item: String::new(),
                    message: format!(
                        "not UTF-8: invalid byte sequence starting with 0x{bad:02x}; save the file as UTF-8"
                    ),
                }],
            })
        }
    }
}

/// Loads and checks the IDL file at `path`.
pub fn load(path: &Path) -> Result<model::Api, Diagnostics> {
    let file = path.display().to_string();
    match std::fs::read(path) {
        Ok(bytes) => load_bytes(&bytes, &file),
        Err(e) => Err(Diagnostics {
            file,
            problems: vec![Diagnostic {
                line: 0,
                column: 0,
                item: String::new(),
                message: format!("cannot read: {e}"),
            }],
        }),
    }
}

/// Renders every generated file from a checked model; a template or formatter error names the template and the
/// item instead of producing an empty file.
pub fn render(api: &model::Api) -> render::Rendered<Vec<Output>> {
    let mut out = lang::render_all(api)?;
    for o in &mut out {
        if !o.contents.ends_with('\n') {
            o.contents.push('\n');
        }
    }
    out.sort_by(|a, b| a.path.cmp(&b.path));
    Ok(out)
}
