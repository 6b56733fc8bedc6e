//! UDL for uniffi: `generated/uniffi/uform.udl`, from which uniffi-bindgen makes the Kotlin and Swift bindings,
//! and `generated/uniffi/glue.rs`, the Rust that implements it over `uform-core` (included by
//! `bindings/uniffi`). One template per concept for each; every spelling decision is in [`format::Udl`].
//! The Kotlin and Swift reference pages ([`docs`]) spell the API as uniffi emits it.

pub mod async_twin;
pub mod docs;
pub mod format;

use crate::lang::{banner, class_doc};
use crate::model::*;
use crate::plan::{CallPlan, Outcome};
use crate::render::{template, Named, Rendered};
use crate::Output;
use format::{Udl, BULK_CRATE, ERROR, FFI_CRATE};

/// What the UDL and its glue can emit: every shape.
pub const SUPPORTS: crate::lang::shapes::Shapes = crate::lang::shapes::Shapes::ALL;

/// The UDL is Swift's alone (Kotlin has its own JNI binding, [`crate::lang::kotlin`]).
fn offered(callable: &Callable) -> bool {
    callable.offered_in(Language::Swift)
}

pub struct DocLine {
    pub doc: String,
    pub declaration: String,
}

pub struct VariantLine {
    pub doc: String,
    pub name: String,
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
        doc: udl.doc_block(&udl.doc_text(&r.doc), ""),
        name: udl.type_name(&r.name),
        fields: r
            .fields
            .iter()
            .map(|f| DocLine { doc: udl.doc_block(&udl.doc_text(&f.doc), "    "), declaration: udl.field(r, f) })
            .collect(),
    }
    .rendered(format!("record {}", r.name.pascal()))
}

/// An enum's doc, plus what its values are in the other languages (UDL has no discriminants).
fn enum_doc(udl: &Udl, e: &Enum) -> String {
    udl.doc_text(&e.doc)
}

fn variant_doc(udl: &Udl, e: &Enum, v: &Variant) -> String {
    let value = match &v.value {
        EnumValue::String(s) => format!("\"{s}\""),
        EnumValue::Number(_) => e.number(v).to_string(),
    };
    format!("{} Its value elsewhere is {value}.", udl.doc_text(&v.doc))
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

// ---- the Swift the generator writes for the types uniffi leaves to it ----

template! {
    "udl/enum.swift"
    /// An enum's Swift: the public enum and the converter uniffi's Swift calls.
    struct SwiftEnum {
        doc: String,
        name: String,
        variants: Vec<EnumCase>,
    }
}

template! {
    "udl/overload.swift"
    /// A callable without its enum-defaulted parameters, calling it with their defaults.
    struct SwiftOverload {
        class: Option<String>,
        /// `drain(mood:)`.
        target: String,
        /// "`mood` = `.parked`".
        defaults: String,
        declaration: String,
        call: String,
    }
}

template! {
    "udl/Enums.swift"
    struct SwiftEnums {
        banner: String,
        bulk_crate: &'static str,
        enums: Vec<String>,
        overloads: Vec<String>,
    }
}

template! {
    "udl/UFormBulk.swift"
    /// What every type from [`BULK_CRATE`] shares: the initialization uniffi's Swift calls for that crate.
    struct SwiftBulk {
        banner: String,
        bulk_crate: &'static str,
        /// `uniffiEnsureUformBulkInitialized`, which uniffi's Swift calls for the types of [`BULK_CRATE`].
        ensure_initialized: String,
    }
}

/// Swift's reserved words a case could collide with, spelled in backticks as uniffi does.
const SWIFT_KEYWORDS: &[&str] = &[
    "as",
    "break",
    "case",
    "catch",
    "class",
    "continue",
    "default",
    "defer",
    "do",
    "else",
    "enum",
    "extension",
    "fallthrough",
    "false",
    "for",
    "func",
    "guard",
    "if",
    "import",
    "in",
    "init",
    "inout",
    "internal",
    "is",
    "let",
    "nil",
    "operator",
    "private",
    "protocol",
    "public",
    "repeat",
    "return",
    "self",
    "Self",
    "static",
    "struct",
    "super",
    "switch",
    "throw",
    "throws",
    "true",
    "try",
    "typealias",
    "var",
    "where",
    "while",
];

fn swift_case(v: &Variant) -> String {
    let name = v.name.camel();
    if SWIFT_KEYWORDS.contains(&name.as_str()) {
        format!("`{name}`")
    } else {
        name
    }
}

fn swift_enum(udl: &Udl, e: &Enum) -> Rendered {
    SwiftEnum {
        doc: udl.doc_block(&enum_doc(udl, e), ""),
        name: udl.type_name(&e.name),
        variants: e
            .variants
            .iter()
            .map(|v| EnumCase {
                doc: udl.doc_block(&variant_doc(udl, e, v), "    "),
                name: swift_case(v),
                number: e.number(v),
            })
            .collect(),
    }
    .rendered(format!("enum {}", e.name.pascal()))
}

/// Whether a parameter's default is one the UDL cannot spell (an enum's case).
fn swift_defaulted(p: &Param) -> bool {
    matches!(p.default, Some(Literal::Variant(_)))
}

/// The overload that gives a callable's enum parameters their defaults; none when it has no such parameter.
fn swift_overload(api: &Api, class: Option<&Class>, c: &Callable) -> Option<Rendered> {
    if !c.params.iter().any(swift_defaulted) {
        return None;
    }
    let plan = CallPlan::of(api, class, c);
    let mut short = c.clone();
    short.params.retain(|p| !swift_defaulted(p));
    let name = c.name.camel();
    let target = format!("{name}({})", c.params.iter().map(|p| format!("{}:", p.name.camel())).collect::<String>());
    // Each parameter passed on by name, the enum-defaulted ones as their default.
    let passed: Vec<(String, Option<String>)> =
        c.params.iter().map(|p| (p.name.camel(), docs::literal(p).filter(|_| swift_defaulted(p)))).collect();
    let defaults =
        passed.iter().filter_map(|(n, v)| Some(format!("`{n}` = `{}`", v.as_ref()?))).collect::<Vec<_>>().join(", ");
    let args = passed.iter().map(|(n, v)| format!("{n}: {}", v.as_ref().unwrap_or(n))).collect::<Vec<_>>().join(", ");
    let returns = plan.outcome.lowering.ty().is_some() || c.kind == CallableKind::Constructor;
    let call = format!(
        "{}{}{}{name}({args})",
        if returns { "return " } else { "" },
        if c.throws { "try " } else { "" },
        if async_twin::has_twin(c) { "await " } else { "" },
    );
    Some(
        SwiftOverload {
            class: class.map(|k| k.name.pascal()),
            target,
            defaults,
            declaration: docs::declaration(class, &short, &plan.outcome, true),
            call,
        }
        .rendered(crate::render::callable_item(class, c)),
    )
}

fn swift_enums(udl: &Udl, api: &Api) -> Rendered {
    let mut enums = Vec::new();
    let mut overloads = Vec::new();
    for item in &api.items {
        match item {
            Item::Enum(e) => enums.push(swift_enum(udl, e)?),
            Item::Class(c) => {
                for m in c.members.iter().filter(|m| offered(m)) {
                    overloads.extend(swift_overload(api, Some(c), m).transpose()?);
                }
            }
            Item::Function(f) if offered(f) => overloads.extend(swift_overload(api, None, f).transpose()?),
            _ => {}
        }
    }
    SwiftEnums { banner: banner("//"), bulk_crate: BULK_CRATE, enums, overloads }.rendered("enums")
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
        variants: api.errors.iter().map(|e| VariantLine { doc: udl.doc_block(&udl.doc_text(&e.doc), "    "), name: udl.variant(&e.name) }).collect(),
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
        doc: udl.doc_block(&udl.doc_text(&api.doc), "").replace("/// ", "// ").replace("///\n", "//\n"),
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

// ---- the Rust glue ----

pub struct GlueField {
    pub name: String,
    pub ty: String,
    pub to_core: String,
    pub from_core: String,
}

template! {
    "udl/glue.rs"
    struct GlueFile {
        banner: String,
        error: &'static str,
        parts: Vec<String>,
    }
}

template! {
    "udl/glue_record.rs"
    struct GlueRecord {
        doc: String,
        name: String,
        /// Holds a handle: only ever converted into the core (a core handle has no glue object to go back to).
        handles: bool,
        fields: Vec<GlueField>,
    }
}

template! {
    "udl/matrix.udl"
    /// The builtin `f32_matrix` result: in the UDL a custom type over bytes, from [`BULK_CRATE`].
    struct MatrixUdl {
        bulk_crate: &'static str,
    }
}

template! {
    "udl/glue_matrix.rs"
    /// The matrix's Rust side: its struct, and its conversion to the bytes Swift copies in bulk.
    struct GlueMatrix {
        bulk_crate: &'static str,
    }
}

template! {
    "udl/F32Matrix.swift"
    /// The matrix's Swift side: the public struct and the converter uniffi's Swift calls, reading the floats with
    /// one bulk copy.
    struct SwiftMatrix {
        banner: String,
        bulk_crate: &'static str,
        ffi_crate: &'static str,
    }
}

template! {
    "udl/glue_enum.rs"
    struct GlueEnum {
        doc: String,
        name: String,
        bulk_crate: &'static str,
        variants: Vec<EnumCase>,
    }
}

template! {
    "udl/glue_class.rs"
    struct GlueClass {
        doc: String,
        name: String,
        members: String,
        free: Option<String>,
    }
}

template! {
    "udl/glue_function.rs"
    struct GlueFunction {
        doc: String,
        indent: &'static str,
        /// `async ` for an async twin.
        qualifier: &'static str,
        name: String,
        params: String,
        returns: String,
        body: String,
    }
}

template! {
    "udl/glue_error.rs"
    struct GlueError {
        name: &'static str,
        kinds: Vec<String>,
    }
}

fn glue_record(udl: &Udl, r: &Record) -> Rendered {
    GlueRecord {
        doc: udl.doc_block(&udl.doc_text(&r.doc), ""),
        name: udl.type_name(&r.name),
        handles: r.fields.iter().any(|f| matches!(f.ty, Type::Class(_))),
        fields: r
            .fields
            .iter()
            .map(|f| {
                let name = udl.member(&f.name);
                let ty = udl.rust_ty(&f.ty);
                let access = format!("value.{name}");
                GlueField {
                    ty: if f.optional { format!("Option<{ty}>") } else { ty },
                    to_core: if matches!(f.ty, Type::Class(_)) && f.optional {
                        format!("{access}.as_ref().map(|h| h.core.clone())")
                    } else if matches!(f.ty, Type::Class(_)) {
                        format!("{access}.core.clone()")
                    } else {
                        udl.convert(&access, &f.ty, f.optional)
                    },
                    from_core: udl.convert(&access, &f.ty, f.optional),
                    name,
                }
            })
            .collect(),
    }
    .rendered(format!("record {}", r.name.pascal()))
}

fn glue_enum(udl: &Udl, e: &Enum) -> Rendered {
    GlueEnum {
        doc: udl.doc_block(&udl.doc_text(&e.doc), ""),
        name: udl.type_name(&e.name),
        bulk_crate: BULK_CRATE,
        variants: rust_cases(udl, e),
    }
    .rendered(format!("enum {}", e.name.pascal()))
}

/// A callable's glue, followed by its async twin's when it is a long call ([`async_twin`]).
fn glue_callable(udl: &Udl, api: &Api, class: Option<&Class>, c: &Callable) -> Rendered {
    let glue = glue_one(udl, api, class, c)?;
    if !async_twin::has_twin(c) {
        return Ok(glue);
    }
    let twin = async_twin::twin(c);
    let indent = if class.is_some() { "    " } else { "" };
    let params = udl.rust_params(c);
    let params = match (c.kind, params.is_empty()) {
        (CallableKind::Method | CallableKind::Free, true) => "self: Arc<Self>".to_string(),
        (CallableKind::Method | CallableKind::Free, false) => format!("self: Arc<Self>, {params}"),
        _ => params,
    };
    let plan = CallPlan::of(api, class, c);
    let twin_glue = GlueFunction {
        doc: udl.doc_block(&format!("{} Runs on its own thread.", udl.doc_text(&c.doc)), indent),
        indent,
        qualifier: "async ",
        name: udl.member(&twin.name),
        params,
        returns: udl.rust_returns(&plan),
        body: async_twin::glue_body(udl, c),
    }
    .rendered(crate::render::callable_item(class, c))?;
    Ok(format!("{glue}\n{twin_glue}"))
}

fn glue_one(udl: &Udl, api: &Api, class: Option<&Class>, c: &Callable) -> Rendered {
    let indent = if class.is_some() { "    " } else { "" };
    let receiver = match (class, c.kind) {
        (Some(_), CallableKind::Method | CallableKind::Free) => "&self",
        _ => "",
    };
    let params = udl.rust_params(c);
    let params = match (receiver.is_empty(), params.is_empty()) {
        (true, _) => params,
        (false, true) => receiver.to_string(),
        (false, false) => format!("{receiver}, {params}"),
    };
    let plan = CallPlan::of(api, class, c);
    let call = udl.core_call(&plan);
    let body = if plan.throws {
        format!("guard(|| Ok({}))", udl.wrap_result(&plan, &format!("{call}?")))
    } else {
        udl.wrap_result(&plan, &call)
    };
    GlueFunction {
        doc: udl.doc_block(&udl.doc_text(&c.doc), indent),
        indent,
        qualifier: "",
        name: udl.member(&c.name),
        params,
        returns: udl.rust_returns(&plan),
        body,
    }
    .rendered(crate::render::callable_item(class, c))
}

fn glue_class(udl: &Udl, api: &Api, c: &Class) -> Rendered {
    GlueClass {
        doc: udl.doc_block(&udl.doc_text(&c.doc), ""),
        name: udl.type_name(&c.name),
        members: c
            .members
            .iter()
            .filter(|m| offered(m))
            .map(|m| glue_callable(udl, api, Some(c), m))
            .collect::<Rendered<Vec<_>>>()?
            .join("\n"),
        free: c.members.iter().find(|m| m.kind == CallableKind::Free).map(|m| udl.member(&m.name)),
    }
    .rendered(format!("class {}", c.name.pascal()))
}

fn glue_file(udl: &Udl, api: &Api) -> Rendered {
    let mut parts = Vec::new();
    for item in &api.items {
        match item {
            Item::Record(r) => parts.push(glue_record(udl, r)?),
            Item::Enum(e) => parts.push(glue_enum(udl, e)?),
            Item::Class(c) => parts.push(glue_class(udl, api, c)?),
            Item::Function(f) if offered(f) => parts.push(glue_callable(udl, api, None, f)?),
            Item::Function(_) => {}
        }
    }
    if api.returns_matrix() {
        parts.push(GlueMatrix { bulk_crate: BULK_CRATE }.rendered("f32_matrix")?);
    }
    parts.push(
        GlueError { name: ERROR, kinds: api.errors.iter().map(|e| udl.variant(&e.name)).collect() }
            .rendered("errors")?,
    );
    GlueFile { banner: banner("//"), error: ERROR, parts }.rendered("uniffi glue")
}

/// `uform_bulk` as uniffi's Swift spells a crate in `uniffiEnsure…Initialized`: `UformBulk`.
fn upper_camel(snake: &str) -> String {
    snake
        .split('_')
        .map(|word| {
            let mut chars = word.chars();
            chars.next().map(|c| c.to_ascii_uppercase().to_string() + chars.as_str()).unwrap_or_default()
        })
        .collect()
}

pub fn render(api: &Api) -> Rendered<Vec<Output>> {
    let udl = Udl;
    let mut out = vec![
        Output { path: "uniffi/uform.udl".into(), contents: udl_file(&udl, api)? },
        Output { path: "uniffi/glue.rs".into(), contents: glue_file(&udl, api)? },
        Output { path: "uniffi/uniffi.toml".into(), contents: async_twin::bindings_toml(&udl, api, &banner("#")) },
    ];
    if api.returns_matrix() {
        let swift = SwiftMatrix { banner: banner("//"), bulk_crate: BULK_CRATE, ffi_crate: FFI_CRATE };
        out.push(Output {
            path: "swift/Sources/UForm/F32Matrix.swift".into(),
            contents: swift.rendered("f32_matrix")?,
        });
    }
    let has_enums = api.items.iter().any(|i| matches!(i, Item::Enum(_)));
    if has_enums {
        out.push(Output { path: "swift/Sources/UForm/Enums.swift".into(), contents: swift_enums(&udl, api)? });
    }
    if has_enums || api.returns_matrix() {
        let bulk = SwiftBulk {
            banner: banner("//"),
            bulk_crate: BULK_CRATE,
            ensure_initialized: format!("uniffiEnsure{}Initialized", upper_camel(BULK_CRATE)),
        };
        out.push(Output { path: "swift/Sources/UForm/UFormBulk.swift".into(), contents: bulk.rendered("uform_bulk")? });
    }
    out.extend(crate::lang::docs::render(&docs::SwiftDocs, api)?);
    Ok(out)
}
