//! How an input record's C struct grows: the leading `struct_size`, the `_INIT` macro, and for a field appended with
//! `since`, the first layout the glue measures and the padding check (tests/fixtures/compat/c-field-appended-with-since).

use std::path::Path;

fn rendered(fixture: &str) -> (String, String, String, String) {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/compat").join(fixture);
    let api = uform_codegen::load(&dir.join("new.yaml")).unwrap_or_else(|d| panic!("{d}"));
    let out = uform_codegen::lang::c::render(&api).unwrap_or_else(|e| panic!("{e}"));
    let file = |name: &str| {
        out.iter().find(|o| o.path.ends_with(name)).map(|o| o.contents.clone()).unwrap_or_else(|| panic!("no {name}"))
    };
    (file("uform.h"), file("ffi.rs"), file("index.md"), file("executors.md"))
}

#[test]
fn an_appended_field_is_read_only_when_struct_size_covers_it() {
    let (header, ffi, index, page) = rendered("c-field-appended-with-since");
    let start = header.find("typedef struct uform_options_t {").expect("the struct");
    let body = &header[start..header[start..].find("} uform_options_t;").unwrap() + start];
    let fields: Vec<&str> = body.lines().filter(|l| l.ends_with(';')).map(str::trim).collect();
    assert_eq!(fields, ["uint32_t struct_size;", "uint32_t count;", "uform_mood_t mood;", "const char *label;"]);
    assert!(
        body.contains("Zero means the first\n     * layout, the fields up to `mood`.")
            || body.contains("the fields up to `mood`"),
        "{body}"
    );
    assert!(body.contains("Appended in 0.1.0"), "{body}");
    assert!(header.contains("#define UFORM_OPTIONS_INIT { .struct_size = sizeof(uform_options_t) }"), "{header}");
    assert!(header.contains("Structs that grow:"), "the file comment explains the scheme");

    let first = ffi.find("struct uform_options_t_first {").expect("the first layout's mirror");
    let mirror = &ffi[first..first + ffi[first..].find('}').unwrap()];
    assert!(
        mirror.contains("struct_size: u32") && mirror.contains("mood: i32") && !mirror.contains("label"),
        "{mirror}"
    );
    assert!(ffi.contains("const FIRST_SIZE: usize = std::mem::size_of::<uform_options_t_first>();"), "{ffi}");
    assert!(
        ffi.contains("std::mem::offset_of!(uform_options_t, label) >= std::mem::size_of::<uform_options_t_first>()")
    );
    assert!(ffi.contains("read_versioned(options, \"options\")"), "the glue reads the struct through the helper");

    assert!(index.contains("## Structs that grow"), "the C reference's index explains the scheme");
    assert!(page.contains("#define UFORM_OPTIONS_INIT"), "and the record's page shows the macro");
}

#[test]
fn a_struct_without_appended_fields_has_its_own_size_as_first_layout() {
    let (_, ffi, _, _) = rendered("c-layout-only");
    assert!(ffi.contains("unsafe impl Versioned for uform_options_t {\n    const FIRST_SIZE: usize = std::mem::size_of::<uform_options_t>();"));
    assert!(!ffi.contains("_first"), "no mirror without appended fields");
}
