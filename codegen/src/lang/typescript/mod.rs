//! TypeScript and Node: the declaration file of the public JavaScript API (`index.d.ts`, here), the JavaScript
//! wrapper that implements it ([`wrapper`]: `index.js`, `index.mjs`) and the napi-rs glue under it ([`napi`]:
//! `generated/node/glue.rs`), all spelled by the one formatter in [`format`].

pub mod docs;
pub mod format;
pub mod napi;
pub mod wrapper;

use crate::lang::banner;
use crate::model::*;
use crate::plan::CallPlan;
use crate::render::{template, Named, Rendered};
use crate::Output;
use format::{jsdoc_block, Ts};

/// What the napi glue can emit: a record holding a handle has no `ToJs`, and a matrix result is moved, never optional.
pub const SUPPORTS: crate::lang::shapes::Shapes = crate::lang::shapes::Shapes::except(&[
    crate::lang::shapes::Shape::ClassInReturnedInputRecord,
    crate::lang::shapes::Shape::OptionalMatrixResult,
]);

pub struct Line {
    pub doc: String,
    pub name: String,
    pub mark: &'static str,
    pub ty: String,
}

template! {
    "typescript/record.d.ts"
    struct RecordDts {
        doc: String,
        name: String,
        extends: Option<String>,
        fields: Vec<Line>,
    }
}

pub struct VariantLine {
    pub doc: String,
    pub name: String,
    pub value: String,
}

template! {
    "typescript/enum.d.ts"
    struct EnumDts {
        doc: String,
        name: String,
        variants: Vec<VariantLine>,
    }
}

pub struct MemberLine {
    pub doc: String,
    pub signature: String,
}

template! {
    "typescript/class.d.ts"
    struct ClassDts {
        doc: String,
        name: String,
        members: Vec<MemberLine>,
        compiled: String,
        compiled_doc: String,
        compiled_members: Vec<String>,
    }
}

template! {
    "typescript/function.d.ts"
    struct FunctionDts {
        doc: String,
        signature: String,
    }
}

pub struct ErrorLine {
    pub code: String,
    pub doc: String,
}

template! {
    "typescript/error.d.ts"
    struct ErrorDts {
        errors: Vec<ErrorLine>,
    }
}

template! {
    "typescript/matrix.d.ts"
    /// The builtin `f32_matrix` result type.
    struct MatrixDts;
}

template! {
    "typescript/index.d.ts"
    struct IndexDts {
        banner: String,
        doc: String,
        parts: Vec<String>,
    }
}

/// A callable's JSDoc: its doc text and one `@param` per documented parameter.
pub fn callable_jsdoc(ts: &Ts, api: &Api, callable: &Callable, indent: &str) -> String {
    let mut text = ts.jsdoc(api, &callable.doc);
    for p in callable.params.iter().filter(|p| !p.doc.is_empty()) {
        text.push_str(&format!("\n@param {} {}", ts.member(&p.name), ts.jsdoc(api, &p.doc)));
        if p.ty.holds_bytes() {
            text.push_str(&format!(" {}", ts.bytes_note(callable)));
        }
    }
    jsdoc_block(&text, indent)
}

/// The declaration of a class member, as `.d.ts` spells it.
pub fn member_signature(ts: &Ts, api: &Api, class: &Class, callable: &Callable, compiled: bool) -> String {
    let stat = if callable.kind == CallableKind::Constructor { "static " } else { "" };
    format!(
        "{stat}{}({}): {}",
        ts.member(&callable.name),
        ts.params_decl(api, callable, compiled),
        ts.returns(api, &CallPlan::of(api, Some(class), callable), compiled)
    )
}

fn record(ts: &Ts, api: &Api, r: &Record) -> Rendered {
    let line = |f: &Field, compiled: bool| Line {
        doc: jsdoc_block(&ts.jsdoc(api, &f.doc), "    "),
        name: ts.member(&f.name),
        mark: ts.field_mark(r, f),
        ty: ts.field_type(api, r, f, compiled),
    };
    let doc = jsdoc_block(&ts.jsdoc(api, &r.doc), "");
    match &r.compiled {
        Some(compiled) => {
            let twin = RecordDts {
                doc: jsdoc_block(
                    &format!(
                        "{} The native layer's view, where enum fields cross as their raw values.",
                        ts.jsdoc(api, &r.doc)
                    ),
                    "",
                ),
                name: ts.type_name(compiled),
                extends: None,
                fields: r.fields.iter().map(|f| line(f, true)).collect(),
            };
            let narrowed = ts.narrowed_fields(api, r);
            let omitted = narrowed.iter().map(|f| format!("{:?}", ts.member(&f.name))).collect::<Vec<_>>().join(" | ");
            let public = RecordDts {
                doc,
                name: ts.type_name(&r.name),
                extends: Some(format!("Omit<{}, {omitted}>", ts.type_name(compiled))),
                fields: narrowed.iter().map(|f| line(f, false)).collect(),
            };
            Ok(format!(
                "{}\n\n{}",
                twin.rendered(format!("record {}", compiled.pascal()))?,
                public.rendered(format!("record {}", r.name.pascal()))?
            ))
        }
        None => RecordDts {
            doc,
            name: ts.type_name(&r.name),
            extends: None,
            fields: r.fields.iter().map(|f| line(f, false)).collect(),
        }
        .rendered(format!("record {}", r.name.pascal())),
    }
}

fn enumeration(ts: &Ts, api: &Api, e: &Enum) -> Rendered {
    EnumDts {
        doc: jsdoc_block(&ts.jsdoc(api, &e.doc), ""),
        name: ts.type_name(&e.name),
        variants: e
            .variants
            .iter()
            .map(|v| VariantLine {
                doc: jsdoc_block(&ts.jsdoc(api, &v.doc), "    "),
                name: ts.variant(&v.name),
                value: ts.variant_value(&v.value),
            })
            .collect(),
    }
    .rendered(format!("enum {}", e.name.pascal()))
}

fn class(ts: &Ts, api: &Api, c: &Class) -> Rendered {
    let offered = |m: &&Callable| m.offered_in(Language::TypeScript);
    let doc = crate::lang::class_doc(c, &|d| ts.jsdoc(api, d));
    ClassDts {
        doc: jsdoc_block(&doc, ""),
        name: ts.type_name(&c.name),
        members: c
            .members
            .iter()
            .filter(offered)
            .map(|m| MemberLine {
                doc: callable_jsdoc(ts, api, m, "    "),
                signature: member_signature(ts, api, c, m, false),
            })
            .collect(),
        compiled: ts.type_name(&c.compiled),
        compiled_doc: jsdoc_block(&ts.jsdoc(api, &c.compiled_doc), "    "),
        // The twins are plain functions of the native layer, not methods of its class.
        compiled_members: c
            .methods()
            .filter(offered)
            .filter(|m| !m.is_twin())
            .map(|m| member_signature(ts, api, c, m, true))
            .collect(),
    }
    .rendered(format!("class {}", c.name.pascal()))
}

pub fn function_signature(ts: &Ts, api: &Api, f: &Callable) -> String {
    format!(
        "{}({}): {}",
        ts.function(&f.name),
        ts.params_decl(api, f, false),
        ts.returns(api, &CallPlan::of(api, None, f), false)
    )
}

fn function(ts: &Ts, api: &Api, f: &Callable) -> Rendered {
    FunctionDts { doc: callable_jsdoc(ts, api, f, ""), signature: function_signature(ts, api, f) }
        .rendered(crate::render::callable_item(None, f))
}

fn errors(ts: &Ts, api: &Api) -> Rendered {
    ErrorDts {
        errors: api
            .errors
            .iter()
            .map(|e| ErrorLine { code: format!("{:?}", ts.error_code(e)), doc: ts.jsdoc(api, &e.doc) })
            .collect(),
    }
    .rendered("errors")
}

/// The interface as Node offers it: after each long call (`async: true`), its Promise twin `<name>Async`, which
/// runs the call off the event loop. Every Node output (declarations, wrapper, glue, reference page) renders from
/// this view, so the twins are ordinary members everywhere but in the few places that ask [`Callable::is_twin`].
pub fn node_view(api: &Api) -> Api {
    let mut view = api.clone();
    for item in &mut view.items {
        let Item::Class(k) = item else { continue };
        let mut members = Vec::with_capacity(k.members.len());
        for m in &k.members {
            members.push(m.clone());
            if m.is_async && m.offered_in(Language::TypeScript) {
                let mut twin = m.async_twin();
                twin.doc
                    .segments
                    .push(DocSegment::Text(" Runs off the event loop: the promise resolves with what ".into()));
                twin.doc
                    .segments
                    .push(DocSegment::Ref(Reference::Method { class: k.name.clone(), method: m.name.clone() }));
                twin.doc.segments.push(DocSegment::Text(" returns, or rejects with the error it throws.".into()));
                members.push(twin);
            }
        }
        k.members = members;
    }
    view
}

pub fn render(api: &Api) -> Rendered<Vec<Output>> {
    let view = node_view(api);
    let api = &view;
    let ts = Ts;
    let mut parts = Vec::new();
    for item in &api.items {
        parts.push(match item {
            Item::Record(r) => record(&ts, api, r)?,
            Item::Enum(e) => enumeration(&ts, api, e)?,
            Item::Class(c) => class(&ts, api, c)?,
            Item::Function(f) if f.offered_in(Language::TypeScript) => function(&ts, api, f)?,
            Item::Function(_) => continue,
        });
    }
    if api.returns_matrix() {
        parts.push(MatrixDts.rendered("f32_matrix")?.trim_end().to_string());
    }
    parts.push(errors(&ts, api)?);
    let doc = jsdoc_block(&format!("{}\n@packageDocumentation", ts.jsdoc(api, &api.doc)), "");
    let index = IndexDts { banner: banner("//"), doc: doc.trim_end().to_string(), parts };
    let mut out =
        vec![Output { path: "typescript/index.d.ts".into(), contents: index.rendered("typescript/index.d.ts")? }];
    out.push(napi::render(api)?);
    out.extend(wrapper::render(api)?);
    out.extend(crate::lang::docs::render(&docs::JsDocs, api)?);
    Ok(out)
}
