//! Swift through uniffi: `generated/uniffi/uform.udl` (here), from which uniffi-bindgen makes the Swift binding;
//! the Rust that implements it over `uform-core` ([`glue`]: `generated/uniffi/glue.rs`, included by
//! `bindings/uniffi`); and the Swift uniffi leaves to the generator ([`swift`]: the enums, the matrix). One template
//! per concept for each; every spelling decision is in [`format::Udl`]. The Swift reference pages ([`docs`]) spell
//! the API as uniffi emits it.

pub mod async_twin;
pub mod docs;
pub mod format;
pub mod glue;
pub mod swift;

use crate::lang::{banner, class_doc, DocLine, VariantLine};
use crate::model::*;
use crate::plan::{CallPlan, Outcome};
use crate::render::{template, Named, Rendered};
use crate::Output;
use format::{Udl, BULK_CRATE, ERROR};

/// What the UDL and its glue can emit: every shape.
pub const SUPPORTS: crate::lang::shapes::Shapes = crate::lang::shapes::Shapes::ALL;

/// The UDL is Swift's alone (Kotlin has its own JNI binding, [`crate::lang::kotlin`]).
fn offered(callable: &Callable) -> bool {
    callable.offered_in(Language::Swift)
}

/// An enum's case: its doc, its name as the target spells it, and the number it crosses as (`Enum::number`).
pub struct EnumCase {
    pub doc: String,
    pub name: String,
    pub number: i64,
}

template! {
    "udl/uform.udl"
    struct UdlFile {
        banner: String,
        doc: String,
        namespace: String,
        functions: Vec<String>,
        parts: Vec<String>,
    }
}

template! {
    "udl/function.udl"
    struct FunctionUdl {
        doc: String,
        indent: &'static str,
        attributes: String,
        returns: String,
        name: String,
        params: String,
    }
}

template! {
    "udl/constructor.udl"
    struct ConstructorUdl {
        doc: String,
        attributes: String,
        params: String,
    }
}

template! {
    "udl/record.udl"
    struct RecordUdl {
        doc: String,
        name: String,
        fields: Vec<DocLine>,
    }
}

template! {
    "udl/enum.udl"
    /// An enum: in the UDL a custom type over `i32`, from [`BULK_CRATE`].
    struct EnumUdl {
        doc: String,
        name: String,
        bulk_crate: &'static str,
        variants: Vec<EnumCase>,
    }
}

template! {
    "udl/class.udl"
    struct ClassUdl {
        doc: String,
        name: String,
        members: Vec<String>,
    }
}

template! {
    "udl/error.udl"
    struct ErrorUdl {
        doc: String,
        name: &'static str,
        variants: Vec<VariantLine>,
    }
}

template! {
    "udl/matrix.udl"
    /// The builtin `f32_matrix` result: in the UDL a custom type over bytes, from [`BULK_CRATE`].
    struct MatrixUdl {
        bulk_crate: &'static str,
    }
}

/// A callable's doc text plus one line per documented parameter.
fn callable_doc(udl: &Udl, callable: &Callable) -> String {
    let mut text = udl.doc_text(&callable.doc);
    for p in callable.params.iter().filter(|p| !p.doc.is_empty()) {
        text.push_str(&format!("\n- `{}`: {}", udl.member(&p.name), udl.doc_text(&p.doc)));
    }
    text
}

/// A callable's UDL, followed by its async twin's when it is a long call ([`async_twin`]).
fn callable_udl(udl: &Udl, api: &Api, class: Option<&Class>, callable: &Callable, indent: &'static str) -> Rendered {
    let plan = CallPlan::of(api, class, callable);
    let udl_text = one_callable_udl(udl, callable, &plan.outcome, indent, &[])?;
    if !async_twin::has_twin(callable) {
        return Ok(udl_text);
    }
    let twin = async_twin::twin(callable);
    let extra = async_twin::extra_attributes(callable);
    Ok(format!("{udl_text}\n{}", one_callable_udl(udl, &twin, &plan.outcome, indent, extra)?))
}

fn one_callable_udl(
    udl: &Udl,
    callable: &Callable,
    outcome: &Outcome,
    indent: &'static str,
    extra: &[&str],
) -> Rendered {
    let doc = udl.doc_block(&callable_doc(udl, callable), indent);
    if callable.kind == CallableKind::Constructor {
        return ConstructorUdl { doc, attributes: udl.attributes_with(callable, extra), params: udl.params(callable) }
            .rendered(crate::render::callable_item(None, callable));
    }
    FunctionUdl {
        doc,
        indent,
        attributes: udl.attributes_with(callable, extra),
        returns: udl.returns(outcome),
        name: udl.member(&callable.name),
        params: udl.params(callable),
    }
    .rendered(crate::render::callable_item(None, callable))
}

fn record_udl(udl: &Udl, r: &Record) -> Rendered {
    RecordUdl {
        doc: udl.doc_comment(&r.doc, ""),
        name: udl.type_name(&r.name),
        fields: r.fields.iter().map(|f| field_line(udl, r, f)).collect(),
    }
    .rendered(format!("record {}", r.name.pascal()))
}

/// A record field's line in the dictionary, under its doc.
fn field_line(udl: &Udl, r: &Record, f: &Field) -> DocLine {
    DocLine { doc: udl.doc_comment(&f.doc, "    "), declaration: udl.field(r, f) }
}

/// An enum's doc, plus what its values are in the other languages (UDL has no discriminants).
fn enum_doc(udl: &Udl, e: &Enum) -> String {
    udl.doc_text(&e.doc)
}

/// An enum's cases as the UDL and the Rust glue name them, with the numbers they cross as (no docs: Swift's).
fn rust_cases(udl: &Udl, e: &Enum) -> Vec<EnumCase> {
    e.variants
        .iter()
        .map(|v| EnumCase { doc: String::new(), name: udl.variant(&v.name), number: e.number(v) })
        .collect()
}

fn enum_udl(udl: &Udl, e: &Enum) -> Rendered {
    EnumUdl {
        // A plain comment: the docs are the Swift's (Enums.swift), and uniffi documents no custom type.
        doc: udl.doc_block(&enum_doc(udl, e), "").replace("/// ", "// ").replace("///\n", "//\n"),
        name: udl.type_name(&e.name),
        bulk_crate: BULK_CRATE,
        variants: rust_cases(udl, e),
    }
    .rendered(format!("enum {}", e.name.pascal()))
}

fn class_udl(udl: &Udl, api: &Api, c: &Class) -> Rendered {
    ClassUdl {
        doc: udl.doc_block(&class_doc(c, &|d| udl.doc_text(d)), ""),
        name: udl.type_name(&c.name),
        members: c
            .members
            .iter()
            .filter(|m| offered(m))
            .map(|m| callable_udl(udl, api, Some(c), m, "    "))
            .collect::<Rendered<_>>()?,
    }
    .rendered(format!("class {}", c.name.pascal()))
}

fn error_udl(udl: &Udl, api: &Api) -> Rendered {
    ErrorUdl {
        doc: udl.doc_block("The error every throwing call raises: its case is the kind, the same set in every language, and its message names the argument and the value.", ""),
        name: ERROR,
        variants: api.errors.iter().map(|e| VariantLine { doc: udl.doc_comment(&e.doc, "    "), name: udl.variant(&e.name) }).collect(),
    }
    .rendered("errors")
}

fn udl_file(udl: &Udl, api: &Api) -> Rendered {
    let mut parts = Vec::new();
    for item in &api.items {
        match item {
            Item::Record(r) => parts.push(record_udl(udl, r)?),
            Item::Enum(e) => parts.push(enum_udl(udl, e)?),
            Item::Class(c) => parts.push(class_udl(udl, api, c)?),
            Item::Function(_) => {}
        }
    }
    if api.returns_matrix() {
        parts.push(MatrixUdl { bulk_crate: BULK_CRATE }.rendered("f32_matrix")?);
    }
    parts.push(error_udl(udl, api)?);
    UdlFile {
        banner: banner("//"),
        // uniffi's parser rejects a `///` block after a leading comment, so the overview is a plain comment.
        doc: udl.doc_comment(&api.doc, "").replace("/// ", "// ").replace("///\n", "//\n"),
        namespace: api.package.clone(),
        functions: api
            .functions()
            .filter(|f| offered(f))
            .map(|f| callable_udl(udl, api, None, f, "    "))
            .collect::<Rendered<_>>()?,
        parts,
    }
    .rendered("uform.udl")
}

pub fn render(api: &Api) -> Rendered<Vec<Output>> {
    let udl = Udl;
    let mut out = vec![
        Output { path: "uniffi/uform.udl".into(), contents: udl_file(&udl, api)? },
        Output { path: "uniffi/glue.rs".into(), contents: glue::glue_file(&udl, api)? },
        Output { path: "uniffi/uniffi.toml".into(), contents: async_twin::bindings_toml(&udl, api, &banner("#")) },
    ];
    out.extend(swift::render(&udl, api)?);
    out.extend(crate::lang::docs::render(&docs::SwiftDocs, api)?);
    Ok(out)
}
