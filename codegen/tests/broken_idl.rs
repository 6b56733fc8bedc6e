//! Broken IDL inputs: each must give its specific message at its position, and never a panic. The table of cases is
//! `broken_idl.yaml`, each an edit of [`BASE`].

use uform_codegen::{load_bytes, load_str};

/// A small valid IDL that each case breaks in one place.
const BASE: &str = r#"package: uform
version: 0.1.0
title: Executors
doc: The surface.
errors:
  - error: InvalidArgument
    doc: Bad input.
items:
  - record: Options
    c: uform_options_t
    direction: input
    doc: Options.
    fields:
      - name: count
        type: u32
        optional: true
        default: 1
        doc: How many; see [[mood]].
      - name: mood
        type: Mood
        optional: true
        doc: The mood.
  - enum: Mood
    c: uform_mood_t
    doc: A mood.
    values:
      - name: Parked
        value: 0
        doc: Parked.
      - name: Spinning
        value: 1
        doc: Spinning.
  - class: Pool
    c: uform_pool_t
    doc: A pool.
    thread_safety: Safe.
    compiled: CompiledPool
    compiled_doc: The handle.
    members:
      - constructor: create
        c: uform_pool_create
        doc: Makes one; see [[Pool.free]].
        params:
          - name: options
            type: Options
            default: {}
      - free: free
        c: uform_pool_free
        doc: Frees it.
  - function: version
    c: uform_version
    throws: false
    returns: string
    doc: The version.
"#;

/// [`BASE`] with each `(from, to)` edit made in order: the first `from`, which must be there, becomes `to`.
fn broken<T: AsRef<str>>(edits: &[(T, T)]) -> String {
    edits.iter().fold(BASE.to_string(), |text, (from, to)| {
        let (from, to) = (from.as_ref(), to.as_ref());
        assert!(text.contains(from), "the case's anchor {from:?} is not in the text");
        text.replacen(from, to, 1)
    })
}

#[test]
fn the_base_is_valid() {
    let api = load_str(BASE, "base.yaml").unwrap_or_else(|d| panic!("{d}"));
    assert_eq!(api.items.len(), 4);
}

/// One case of `broken_idl.yaml`: its name, its text (edits of [`BASE`], or whole) and a part of its message.
#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct Case {
    case: String,
    #[serde(default)]
    edits: Vec<(String, String)>,
    text: Option<String>,
    expect: String,
}

impl Case {
    fn text(&self) -> String {
        self.text.clone().unwrap_or_else(|| broken(&self.edits))
    }
}

#[test]
fn every_broken_input_gets_its_message_and_position() {
    let cases: Vec<Case> = serde_saphyr::from_str(include_str!("broken_idl.yaml")).unwrap();
    assert!(cases.len() >= 15);
    let mut failures = Vec::new();
    for case in &cases {
        let (name, expected) = (&case.case, &case.expect);
        let text = case.text();
        let result = std::panic::catch_unwind(|| load_str(&text, "base.yaml"));
        match result {
            Err(_) => failures.push(format!("{name}: PANICKED")),
            Ok(Ok(_)) => failures.push(format!("{name}: was accepted")),
            Ok(Err(d)) => {
                let shown = d.to_string();
                if !shown.contains(expected.as_str()) {
                    failures.push(format!("{name}: expected {expected:?} in\n{shown}"));
                }
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

#[test]
fn every_problem_is_reported_at_once() {
    let text = broken(&[("type: u32", "type: u33"), ("c: uform_mood_t", "c: mood"), ("    doc: A pool.\n", "")]);
    let d = load_str(&text, "base.yaml").unwrap_err();
    assert_eq!(d.problems.len(), 3, "{d}");
}

#[test]
fn bytes_that_are_not_utf8_get_their_position() {
    let mut bytes = BASE.replacen("title: Executors", "title: Ex\u{e9}cutors", 1).into_bytes();
    let at = bytes.iter().position(|&b| b == 0xc3).unwrap();
    bytes[at + 1] = 0xff;
    let d = load_bytes(&bytes, "base.yaml").unwrap_err();
    assert_eq!(d.to_string(), "base.yaml:3:10: not UTF-8: invalid byte sequence starting with 0xc3; save the file as UTF-8\n1 problem in base.yaml");
    let d = load_bytes(b"package: uform\n\xff", "base.yaml").unwrap_err();
    assert!(d.to_string().starts_with("base.yaml:2:1: not UTF-8: invalid byte sequence starting with 0xff"), "{d}");
    assert!(load_bytes(BASE.as_bytes(), "base.yaml").is_ok());
}

#[test]
fn arbitrary_bytes_never_panic() {
    let mut seed = 0x9e3779b97f4a7c15u64;
    for round in 0..2000 {
        let mut text = BASE.as_bytes().to_vec();
        for _ in 0..(1 + round % 8) {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            let at = (seed as usize) % text.len();
            let alphabet = b"{}[]:-\n \"'&*!|>#?@\t0x9";
            text[at] = alphabet[(seed >> 32) as usize % alphabet.len()];
        }
        let text = String::from_utf8_lossy(&text).into_owned();
        let outcome = std::panic::catch_unwind(|| load_str(&text, "fuzz.yaml"));
        assert!(outcome.is_ok(), "the loader panicked on:\n{text}");
    }
}
