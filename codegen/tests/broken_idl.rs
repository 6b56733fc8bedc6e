//! A table of broken IDL inputs: each must give its specific message at its position, and never a panic.

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

fn broken(from: &str, to: &str) -> String {
    assert!(BASE.contains(from), "the case's anchor {from:?} is not in BASE");
    BASE.replacen(from, to, 1)
}

#[test]
fn the_base_is_valid() {
    let api = load_str(BASE, "base.yaml").unwrap_or_else(|d| panic!("{d}"));
    assert_eq!(api.items.len(), 4);
}

#[test]
fn every_broken_input_gets_its_message_and_position() {
    let cases: Vec<(&str, String, &str)> = vec![
        (
            "a first-layout field after an appended one",
            broken("        default: 1\n", "        default: 1\n        since: 0.2.0\n"),
            "base.yaml:20:15: Options.mood: a field of the first C layout after a field with `since`",
        ),
        (
            "since that is not a version",
            broken("        doc: The mood.\n", "        since: soon\n        doc: The mood.\n"),
            "base.yaml:22:16: Options.mood: `since: soon` is not a version like 0.3.0",
        ),
        ("unknown type", broken("type: u32", "type: u33"), "base.yaml:15:15: Options.count: unknown type `u33`"),
        ("unknown list element", broken("type: u32", "type: list<Nope>"), "base.yaml:15:15: Options.count: unknown type `Nope`"),
        (
            "duplicate item name",
            broken("  - enum: Mood", "  - enum: Options"),
            "base.yaml:23:11: Options: duplicate name: `Options` is already declared at line 9, column 13",
        ),
        ("duplicate field", broken("      - name: mood", "      - name: count"), "base.yaml:19:15: Options.count: duplicate field `count`"),
        ("clashing enum values", broken("        value: 1", "        value: 0"), "base.yaml:31:16: Mood.Spinning: value 0 clashes with `Mood.Parked`"),
        ("mixed enum values", broken("        value: 1", "        value: spinning"), "Mood: values mix numbers and strings"),
        ("missing doc text", broken("    doc: A mood.\n", ""), "base.yaml:23:11: Mood: has no doc text"),
        ("empty doc text", broken("        doc: The mood.", "        doc: \"  \""), "base.yaml:19:15: Options.mood: has no doc text"),
        (
            "C name breaks the convention",
            broken("c: uform_options_t", "c: options_t"),
            "base.yaml:10:8: Options: C name `options_t` breaks the convention: expected `uform_options_t`",
        ),
        ("missing C name", broken("    c: uform_mood_t\n", ""), "base.yaml:23:11: Mood: has no C name; add `c: uform_mood_t`"),
        (
            "member C name breaks the convention",
            broken("c: uform_pool_free", "c: uform_free_pool"),
            "Pool.free: C name `uform_free_pool` breaks the convention: expected `uform_pool_free`",
        ),
        (
            "default does not fit its type",
            broken("default: 1", "default: -1"),
            "base.yaml:17:18: Options.count: default -1 does not fit type u32: it lies outside 0..=4294967295",
        ),
        (
            "default too large",
            broken("default: 1", "default: 4294967296"),
            "Options.count: default 4294967296 does not fit type u32",
        ),
        ("default of the wrong kind", broken("default: 1", "default: many"), "Options.count: default \"many\" does not fit type u32: the kinds differ"),
        (
            "default naming no enum value",
            broken("        optional: true\n        doc: The mood.", "        optional: true\n        default: Sleeping\n        doc: The mood."),
            "Options.mood: default \"Sleeping\" does not fit type Mood: `Mood` has no value `Sleeping` (it has Parked, Spinning)",
        ),
        (
            "method on an unknown class",
            broken("see [[Pool.free]]", "see [[Tank.free]]"),
            "Pool.create: doc references `Tank.free`, a method on unknown class `Tank`",
        ),
        (
            "missing method on a known class",
            broken("see [[Pool.free]]", "see [[Pool.drain]]"),
            "Pool.create: doc references `Pool.drain`, but class `Pool` has no member `drain`",
        ),
        ("unknown doc reference", broken("see [[mood]]", "see [[mode]]"), "Options.count: doc references unknown `[[mode]]`"),
        ("field name not snake_case", broken("name: count", "name: Count"), "base.yaml:14:15: Options.Count: field name `Count` must be snake_case"),
        ("record name not PascalCase", broken("record: Options", "record: options"), "options: record name `options` must be PascalCase"),
        ("bad direction", broken("direction: input", "direction: sideways"), "base.yaml:11:16: Options: direction `sideways` is neither `input` nor `output`"),
        ("class without free", broken("      - free: free\n        c: uform_pool_free\n        doc: Frees it.\n", ""), "Pool: a class needs exactly one `free` member, found 0"),
        (
            "matrix as a record field",
            broken("type: Mood\n", "type: f32_matrix\n"),
            "Options.mood: `f32_matrix` is only ever a result, not a record field",
        ),
        (
            "optional record field holding a class with a default",
            broken("        type: Mood\n        optional: true\n", "        type: Pool\n        optional: true\n        default: 1\n"),
            "Options.mood: a field holding class `Pool` has no default: absent means no handle",
        ),
        (
            "output record holding a class",
            broken("direction: input", "direction: output").replace("        type: Mood\n        optional: true\n", "        type: Pool\n"),
            "Options.mood: only an input record can hold class `Pool`",
        ),
        ("unknown key", broken("    direction: input", "    directions: input"), "unknown field `directions`"),
        ("not YAML at all", "items: [unclosed".to_string(), "base.yaml:1:"),
        (
            "title that is no file name",
            broken("title: Executors", "title: ../../x"),
            "base.yaml:3:8: title `../../x` must be one PascalCase word: it heads the reference's index (and, without `pages`, names its one page, docs/<language>/<title>.md)",
        ),
        (
            "an item naming a page without `pages`",
            broken("    c: uform_mood_t\n", "    c: uform_mood_t\n    page: Moods\n"),
            "Mood: names a `page`, but the file declares no `pages`",
        ),
        (
            "an item without a page once `pages` are declared",
            broken("errors:", "pages:\n  - page: Main\n    doc: All of it.\nerrors:"),
            "Options: has no `page`; name the page it is documented on (Main)",
        ),
        (
            "a page nobody declared",
            broken("errors:", "pages:\n  - page: Main\n    doc: All of it.\nerrors:")
                .replace("    c: uform_options_t\n", "    c: uform_options_t\n    page: Mian\n"),
            "Options: page `Mian` is not declared in `pages` (Main)",
        ),
        (
            "a page that documents nothing",
            broken("errors:", "pages:\n  - page: Main\n    doc: All of it.\n  - page: Empty\n    doc: Nothing.\nerrors:")
                .replace("    c: uform_options_t\n", "    c: uform_options_t\n    page: Main\n")
                .replace("    c: uform_mood_t\n", "    c: uform_mood_t\n    page: Main\n")
                .replace("    c: uform_pool_t\n", "    c: uform_pool_t\n    page: Main\n")
                .replace("    c: uform_version\n", "    c: uform_version\n    page: Main\n"),
            "pages.Empty: documents nothing: no item or member names it",
        ),
        (
            "an example in no language",
            broken("    compiled_doc: The handle.\n", "    compiled_doc: The handle.\n    example:\n      cobol: DISPLAY 1.\n"),
            "Pool.example.cobol: `cobol` is not a language; use javascript, python, c, kotlin or swift",
        ),
        (
            "an example on a record",
            broken("    direction: input\n", "    direction: input\n    example:\n      c: int x;\n"),
            "Options: `example` does not belong to a record",
        ),
        ("title that is a hidden file name", broken("title: Executors", "title: .inf"), "title `.inf` must be one PascalCase word"),
        (
            "try_first on a call that does not block",
            broken("        c: uform_pool_free\n", "        c: uform_pool_free\n        try_first: true\n"),
            "Pool.free: `try_first` needs `blocking: true`: it names a non-blocking attempt made before blocking",
        ),
        (
            "async on a call that does not block",
            broken("        c: uform_pool_free\n", "        c: uform_pool_free\n        async: true\n"),
            "Pool.free: `async` needs a blocking constructor, method or function that throws (not a `free`)",
        ),
        (
            "constant on a function that takes parameters",
            broken("    throws: false\n    returns: string", "    throws: false\n    constant: true\n    params:\n      - name: mood\n        type: Mood\n    returns: string"),
            "version: `constant` needs a function with no parameters that returns a value and does not block",
        ),
        (
            "constant on a method",
            broken("        c: uform_pool_free\n", "        c: uform_pool_free\n        constant: true\n"),
            "Pool.free: `constant` needs a function with no parameters that returns a value and does not block",
        ),
        ("doc text that ends a block comment", broken("doc: A pool.", "doc: A pool */ int x; /*"), "Pool: doc text contains `*/`"),
        ("version with a quote", broken("version: 0.1.0", "version: 0.1\"x"), "version `0.1\"x` must be a version number like 1.2.3"),
        ("unknown language in only", broken("    throws: false", "    throws: false\n    only: [cobol]"), "version: `only` names unknown language `cobol`"),
    ];
    assert!(cases.len() >= 15);
    let mut failures = Vec::new();
    for (name, text, expected) in &cases {
        let result = std::panic::catch_unwind(|| load_str(text, "base.yaml"));
        match result {
            Err(_) => failures.push(format!("{name}: PANICKED")),
            Ok(Ok(_)) => failures.push(format!("{name}: was accepted")),
            Ok(Err(d)) => {
                let shown = d.to_string();
                if !shown.contains(expected) {
                    failures.push(format!("{name}: expected {expected:?} in\n{shown}"));
                }
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

#[test]
fn every_problem_is_reported_at_once() {
    let text = broken("type: u32", "type: u33").replace("c: uform_mood_t", "c: mood").replace("    doc: A pool.\n", "");
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
