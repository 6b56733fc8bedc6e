//! C: the header `uform.h` and the C reference page. The C library's Rust glue (bindings/c) is rendered from the
//! same lowering plan in [`abi`].

pub mod abi;
pub mod docs;
pub mod format;
mod mirror;
pub mod rust;

use crate::lang::banner;
use crate::model::*;
use crate::plan::CallPlan;
use crate::render::{template, Named, Rendered};
use crate::Output;
use abi::{lower, Return, Slot};
use format::{comment, C};

/// What the C glue can emit: its input records hold no records, a returned input record holds no list or handle,
/// and a result crosses as a C value only as a plain scalar, a record, a list, a handle, a matrix or a cached string.
/// An input struct's zero means "absent" but 0 is a GPU class id, so an input record holds no `gpu_class`; an output
/// struct's optional field is NULL or -1 when absent, which only a string, a path and a `gpu_class` can spare. An
/// array of input structs has the caller's `sizeof` as its stride, which grows with the header, so a list argument
/// holds no records.
pub const SUPPORTS: crate::lang::shapes::Shapes = crate::lang::shapes::Shapes::except(&[
    crate::lang::shapes::Shape::RecordInInputRecord,
    crate::lang::shapes::Shape::ListInReturnedInputRecord,
    crate::lang::shapes::Shape::ClassInReturnedInputRecord,
    crate::lang::shapes::Shape::OptionalMatrixResult,
    crate::lang::shapes::Shape::OptionalValueResult,
    crate::lang::shapes::Shape::ConvertedValueResult,
    crate::lang::shapes::Shape::GpuClassInInputRecord,
    crate::lang::shapes::Shape::OptionalValueInOutputRecord,
    crate::lang::shapes::Shape::ListOfRecordsArgument,
]);

/// How a C struct grows, said once in the header's file comment and on the C reference page.
pub const GROWTH: &str = "Structs that grow: every struct a caller fills in (`uform_*_options_t`, `uform_*_config_t`) \
leads with `uint32_t struct_size`. Set it to the struct's `sizeof`, as its `UFORM_*_INIT` macro does, or leave it \
zero, which names the struct's first layout, so a zero-initialised struct stays valid. A later library that \
appended fields to the struct reads only the `struct_size` bytes the caller declared and takes the appended \
fields as absent. A library older than the caller's header reads the fields it knows and accepts the bytes past \
them only when all are zero; a set field it does not know is `UFORM_STATUS_INVALID_ARGUMENT` naming `struct_size`, \
as is a `struct_size` from 1 to 3 or above 4096 (read no further). A struct UForm fills in \
(`uform_mesh_options_from_environment`) takes `struct_size` the same way, set before the call: UForm writes only \
that many bytes and keeps `struct_size`.";

/// The tri-state byte of an optional bool in an input struct, said once in the header and on the C reference page.
pub const OPTIONAL_BOOL: &str = "Optional bools: an optional bool of a struct a caller fills in is a \
`uform_optional_bool_t`, one byte as `bool` is. `UFORM_ABSENT` (zero, what a zero-initialised struct holds) takes \
the field's default; `UFORM_TRUE` (C's `true`) and `UFORM_FALSE` pass the value. C's `false` is zero, so it means \
absent: pass `UFORM_FALSE` to turn a field off. Any other value is `UFORM_STATUS_INVALID_ARGUMENT` naming the \
field.";

pub struct Constant {
    pub doc: String,
    pub name: String,
    pub value: String,
}

template! {
    "c/matrix.h"
    /// The builtin `f32_matrix` result type and its free function.
    struct MatrixH;
}

template! {
    "c/bytes.h"
    /// The builtin `bytes` element of a `list<bytes>` parameter: a pointer and a length.
    struct BytesH;
}

template! {
    "c/optional_bool.h"
    /// The tri-state byte of an optional bool in an input struct, whose zero must stay "absent".
    struct OptionalBoolH {
        doc: String,
    }
}

template! {
    "c/error.h"
    struct ErrorH {
        errors: Vec<Constant>,
    }
}

template! {
    "c/enum.h"
    struct EnumH {
        doc: String,
        name: String,
        variants: Vec<Constant>,
    }
}

pub struct FieldDecl {
    pub doc: String,
    pub decls: String,
}

template! {
    "c/record.h"
    struct RecordH {
        doc: String,
        name: String,
        fields: Vec<FieldDecl>,
    }
}

template! {
    "c/class.h"
    struct ClassH {
        doc: String,
        name: String,
    }
}

template! {
    "c/function.h"
    struct FunctionH {
        doc: String,
        returns: String,
        name: String,
        params: String,
    }
}

template! {
    "c/header.h"
    struct HeaderH {
        banner: String,
        doc: String,
        version: String,
        parts: Vec<String>,
    }
}

/// Records ordered so each comes after the records its fields hold.
pub fn records_in_dependency_order(api: &Api) -> Vec<&Record> {
    let mut out: Vec<&Record> = Vec::new();
    fn visit<'a>(api: &'a Api, r: &'a Record, out: &mut Vec<&'a Record>, depth: usize) {
        if out.iter().any(|o| o.name == r.name) || depth > 32 {
            return;
        }
        for f in &r.fields {
            let inner = f.ty.element().unwrap_or(&f.ty);
            if let Type::Record(n) = inner {
                if let Some(dep) = api.record(n) {
                    visit(api, dep, out, depth + 1);
                }
            }
        }
        if !out.iter().any(|o| o.name == r.name) {
            out.push(r);
        }
    }
    for r in api.records() {
        visit(api, r, &mut out, 0);
    }
    out
}

/// The lifetime of what a call writes out, said once per kind of call.
fn ownership(class: Option<&Class>) -> String {
    match class {
        Some(k) => {
            let free =
                k.members.iter().find(|m| m.kind == CallableKind::Free).map_or_else(String::new, |m| m.c_name.clone());
            format!("owned by the {} and valid until `{free}`", k.name.snake().replace('_', " "))
        }
        None => "owned by UForm and valid for the life of the process".into(),
    }
}

pub fn function_doc(fmt: &C, api: &Api, class: Option<&Class>, c: &Callable) -> String {
    let lowered = lower(&CallPlan::of(api, class, c));
    let mut text = fmt.doc(api, &c.doc);
    for slot in &lowered.slots {
        let line = match slot {
            Slot::Handle { name, class: k } => {
                let param = c.params.iter().find(|p| &p.name.snake() == name);
                match param {
                    Some(p) if !p.doc.is_empty() => format!("@param {name} {}", fmt.doc(api, &p.doc)),
                    _ => format!("@param {name} The {} to act on.", k.snake().replace('_', " ")),
                }
            }
            Slot::Value { name, .. } | Slot::Record { name, .. } | Slot::List { name, .. } => {
                let p = c.params.iter().find(|p| &p.name.snake() == name);
                let mut doc = p
                    .map(|p| fmt.doc(api, &p.doc))
                    .filter(|d| !d.is_empty())
                    .unwrap_or_else(|| format!("The {}.", name.replace('_', " ")));
                if matches!(slot, Slot::Record { .. }) {
                    doc.push_str(" NULL means every field absent.");
                }
                if matches!(slot, Slot::List { element: Type::Bytes, .. }) {
                    doc.push_str(&format!(" {}", fmt.bytes_note()));
                }
                if let (Slot::Value { ty: Type::Enum(e), .. }, Some(p)) = (slot, p) {
                    if let (Some(Literal::Variant(v)), Some(en)) = (&p.default, api.enumeration(e)) {
                        if let Some(var) = en.variants.iter().find(|x| &x.name == v) {
                            doc.push_str(&format!(" Other languages default it to `{}`.", fmt.constant(en, var)));
                        }
                    }
                }
                format!("@param {name} {doc}")
            }
            Slot::OutHandle { name, class: k } => {
                let free = api
                    .class(k)
                    .and_then(|kk| kk.members.iter().find(|m| m.kind == CallableKind::Free))
                    .map_or_else(String::new, |m| m.c_name.clone());
                format!("@param {name} Receives the new {}; release it with `{free}`.", k.snake().replace('_', " "))
            }
            Slot::OutRecord { name, found, record } => {
                let owner = match class {
                    Some(_) => ownership(class),
                    None => "owned by UForm and valid until this thread calls it again".into(),
                };
                let mut s = if abi::is_flat(api, record) {
                    format!("@param {name} Receives the result.")
                } else {
                    format!("@param {name} Receives the result; what it points to is {owner}.")
                };
                if *found {
                    s.push_str(
                        "\n@param found Receives whether there was a result; without one the record is left untouched.",
                    );
                }
                s
            }
            Slot::OutValue { name, .. } => format!("@param {name} Receives the result."),
            Slot::OutList { name, .. } => {
                let owner = match class {
                    Some(_) => format!("owned by UForm and valid until this thread calls `{}` again", c.c_name),
                    None => ownership(class),
                };
                format!(
                    "@param {name} Receives the array, {owner}.\n@param {name}_count Receives the number of elements."
                )
            }
        };
        text.push('\n');
        text.push_str(&line);
    }
    match &lowered.returns {
        Return::Status => text.push_str(
            "\n@return `UFORM_STATUS_OK`, or the error kind with `uform_last_error_message` saying why; a NULL pointer \
             where a value is required is `UFORM_STATUS_INVALID_ARGUMENT`.",
        ),
        Return::Value { optional: true, .. } => text.push_str("\n@return The value, or NULL when there is none; static storage, never freed."),
        Return::Value { ty: Type::String, .. } => text.push_str("\n@return A NUL-terminated string in static storage, never freed."),
        Return::Value { .. } => {}
    }
    comment(&text, "")
}

pub fn function_decl(fmt: &C, api: &Api, class: Option<&Class>, c: &Callable) -> Rendered {
    let lowered = lower(&CallPlan::of(api, class, c));
    let params: Vec<String> = lowered.slots.iter().flat_map(|s| fmt.slot(api, s)).collect();
    let returns = fmt.returns(api, &lowered.returns);
    let returns = if returns.ends_with('*') { returns } else { format!("{returns} ") };
    FunctionH {
        doc: function_doc(fmt, api, class, c),
        returns,
        name: c.c_name.clone(),
        params: if params.is_empty() { "void".into() } else { params.join(", ") },
    }
    .rendered(crate::render::callable_item(class, c))
}

fn record(fmt: &C, api: &Api, r: &Record) -> Rendered {
    let mut doc = fmt.doc(api, &r.doc);
    let mut fields = Vec::new();
    let mut init = String::new();
    if fmt.versioned(r) {
        let macro_name = fmt.init_macro(r);
        doc.push_str(&format!(
            " Start from `{macro_name}`, or zero-initialise it: a zero field means absent. It can grow: see \
             `struct_size`."
        ));
        fields.push(FieldDecl {
            doc: comment(&fmt.struct_size_doc(r), "    "),
            decls: "    uint32_t struct_size;".into(),
        });
        init = format!(
            "\n\n/** `{}` with `struct_size` set and every other field absent. */\n#define {macro_name} {{ .struct_size = sizeof({}) }}",
            r.c_name, r.c_name
        );
    }
    let rendered = RecordH {
        doc: comment(&doc, ""),
        name: r.c_name.clone(),
        fields: fields
            .into_iter()
            .chain(r.fields.iter().map(|f| {
                let mut d = fmt.doc(api, &f.doc);
                if let Some(note) = fmt.field_note(r, f) {
                    d.push(' ');
                    d.push_str(&note);
                }
                FieldDecl {
                    doc: comment(&d, "    "),
                    decls: fmt.field(api, r, f).iter().map(|x| format!("    {x};")).collect::<Vec<_>>().join("\n"),
                }
            }))
            .collect(),
    }
    .rendered(format!("record {}", r.name.pascal()))?;
    Ok(rendered + &init)
}

fn enumeration(fmt: &C, api: &Api, e: &Enum) -> Rendered {
    EnumH {
        doc: comment(&fmt.doc(api, &e.doc), ""),
        name: e.c_name.clone(),
        variants: e
            .variants
            .iter()
            .map(|v| {
                let mut d = fmt.doc(api, &v.doc);
                if let EnumValue::String(s) = &v.value {
                    d = format!("{s:?}: {d}");
                }
                Constant { doc: comment(&d, "    "), name: fmt.constant(e, v), value: e.number(v).to_string() }
            })
            .collect(),
    }
    .rendered(format!("enum {}", e.name.pascal()))
}

fn class(fmt: &C, api: &Api, k: &Class) -> Rendered {
    let mut doc = crate::lang::class_doc(k, &|d| fmt.doc(api, d));
    doc.push_str("\n\nAn opaque handle; a handle already freed, or never made by UForm, is reported as `UFORM_STATUS_FREED_HANDLE`.");
    ClassH { doc: comment(&doc, ""), name: k.c_name.clone() }.rendered(format!("class {}", k.name.pascal()))
}

fn members(fmt: &C, api: &Api, k: &Class) -> Rendered<Vec<String>> {
    k.members
        .iter()
        .filter(|m| m.offered_in(Language::C))
        .map(|m| function_decl(fmt, api, Some(k), m))
        .collect::<Rendered<_>>()
}

pub fn render(api: &Api) -> Rendered<Vec<Output>> {
    let fmt = C;
    let mut parts = Vec::new();
    parts.push(
        ErrorH {
            errors: api
                .errors
                .iter()
                .map(|e| Constant {
                    doc: comment(&fmt.doc(api, &e.doc), "    "),
                    name: fmt.status_constant(Some(e)),
                    value: e.status.to_string(),
                })
                .collect(),
        }
        .rendered("errors")?,
    );
    for e in api.enums() {
        parts.push(enumeration(&fmt, api, e)?);
    }
    // Every handle is declared before any record or function, since records and members hold handles.
    for k in api.classes() {
        parts.push(class(&fmt, api, k)?);
    }
    if fmt.has_optional_bool(api) {
        let doc = comment(OPTIONAL_BOOL, "");
        parts.push(OptionalBoolH { doc: doc.trim_end().into() }.rendered("optional bool")?.trim_end().to_string());
    }
    for r in records_in_dependency_order(api) {
        parts.push(record(&fmt, api, r)?);
    }
    if api.takes_bytes() {
        parts.push(BytesH.rendered("bytes")?.trim_end().to_string());
    }
    if api.returns_matrix() {
        parts.push(MatrixH.rendered("f32_matrix")?.trim_end().to_string());
    }
    for k in api.classes() {
        parts.extend(members(&fmt, api, k)?);
    }
    for f in api.functions().filter(|f| f.offered_in(Language::C)) {
        parts.push(function_decl(&fmt, api, None, f)?);
    }
    let doc = comment(&format!("@file uform.h\n{}\n\n{GROWTH}", fmt.doc(api, &api.doc)), "");
    let header = HeaderH {
        banner: format!("/* {} */", banner("").trim()),
        doc: doc.trim_end().into(),
        version: api.version.clone(),
        parts,
    };
    let mut out = vec![Output { path: "c/uform.h".into(), contents: header.rendered("c/uform.h")? }];
    out.extend(crate::lang::docs::render(&docs::CDocs, api)?);
    out.extend(rust::render(api)?);
    Ok(out)
}
