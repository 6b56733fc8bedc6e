//! IDL text for the unit tests: the header of a small valid file, and the items more than one test module loads.

use crate::model::Api;

/// Loads `items` (each the text of one or more entries under `items:`, in order) behind a header declaring the
/// package and two errors. `file` names the text in the diagnostics of a test whose IDL does not check.
pub fn api(items: &[&str], file: &str) -> Api {
    let idl = format!(
        "package: uform\nversion: 0.1.0\ntitle: T\ndoc: A test interface.\nerrors:\n  - error: InvalidArgument\n    \
         doc: Bad input.\n  - error: Internal\n    doc: A bug.\nitems:\n{}",
        items.concat()
    );
    crate::load_str(&idl, file).unwrap_or_else(|d| panic!("{d}"))
}

/// A function that cannot fail, returning a string made from one scalar parameter.
pub const NAME_OF: &str = r#"
  - function: name_of
    c: uform_name_of
    throws: false
    returns: string
    params:
      - name: code
        type: u32
        doc: A code.
    doc: A name.
"#;
