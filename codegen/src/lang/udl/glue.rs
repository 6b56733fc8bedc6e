//! The Rust glue (`generated/uniffi/glue.rs`, included by `bindings/uniffi`): the uniffi-facing types and functions
//! the UDL declares, implemented over `uform-core`, spelled by [`Udl`]'s glue half.

use super::async_twin;
use super::format::{Udl, BULK_CRATE, ERROR};
use super::{offered, rust_cases, EnumCase};
use crate::lang::banner;
use crate::model::*;
use crate::plan::CallPlan;
use crate::render::{template, Named, Rendered};

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
    "udl/glue_matrix.rs"
    /// The matrix's Rust side: its struct, and its conversion to the bytes Swift copies in bulk.
    struct GlueMatrix {
        bulk_crate: &'static str,
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
        doc: udl.doc_comment(&r.doc, ""),
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
        doc: udl.doc_comment(&e.doc, ""),
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
        doc: udl.doc_comment(&c.doc, indent),
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
    let members = c.members.iter().filter(|m| offered(m)).map(|m| glue_callable(udl, api, Some(c), m));
    GlueClass {
        doc: udl.doc_comment(&c.doc, ""),
        name: udl.type_name(&c.name),
        members: members.collect::<Rendered<Vec<_>>>()?.join("\n"),
        free: c.members.iter().find(|m| m.kind == CallableKind::Free).map(|m| udl.member(&m.name)),
    }
    .rendered(format!("class {}", c.name.pascal()))
}

/// `generated/uniffi/glue.rs`.
pub fn glue_file(udl: &Udl, api: &Api) -> Rendered {
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
