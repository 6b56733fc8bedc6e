//! Rust: core's own types (`generated/rust/types.rs`: every record and enum of the IDL, and the builtin matrix a
//! verb returns) and error kinds (`generated/rust/error_kind.rs`), which `core` includes so that nothing there
//! repeats the IDL. [`stub`] renders a core whose every callable is `unimplemented!()`, for compiling a fixture's
//! glue without the real runtime.

pub mod format;
pub mod stub;

use crate::lang::banner;
use crate::model::*;
use crate::render::{template, Named, Rendered};
use crate::Output;

struct FieldView {
    doc: String,
    name: String,
    ty: String,
}

struct ConstantView {
    field: String,
    name: String,
    ty: String,
    value: String,
}

template! { "rust/record.rs" struct RecordRs {
    doc: String,
    derives: String,
    name: String,
    fields: Vec<FieldView>,
    constants: Vec<ConstantView>,
    /// A hand-written `Default` when a required field has an IDL default; `None` derives it or has none.
    defaults: Option<Vec<(String, String)>>,
} }

struct VariantView {
    doc: String,
    name: String,
    value: String,
}

template! { "rust/enum.rs" struct EnumRs {
    doc: String,
    name: String,
    strings: bool,
    variants: Vec<VariantView>,
} }

template! { "rust/matrix.rs" struct MatrixRs; }

template! { "rust/types.rs" struct TypesRs {
    banner: String,
    body: String,
} }

struct KindView {
    doc: String,
    name: String,
    code: String,
    status: u32,
}

template! { "rust/error_kind.rs" struct ErrorKindRs {
    banner: String,
    kinds: Vec<KindView>,
} }

fn record(api: &Api, r: &Record) -> Rendered {
    let traits = format::record_traits(api, r);
    let mut derives = format::derives(traits);
    let custom_default = r.fields.iter().any(|f| !f.optional && f.default.is_some());
    if traits.default && !custom_default {
        derives.push_str(", Default");
    }
    let constants = r
        .fields
        .iter()
        .filter_map(|f| match &f.default {
            Some(l) if *l != Literal::EmptyRecord => Some(ConstantView {
                field: f.name.snake(),
                name: format!("DEFAULT_{}", f.name.screaming()),
                ty: format::constant_ty(&f.ty),
                value: format::literal(&f.ty, l),
            }),
            _ => None,
        })
        .collect();
    let defaults = (traits.default && custom_default).then(|| {
        r.fields
            .iter()
            .map(|f| {
                let value = match (&f.default, f.optional) {
                    (Some(l), false) => match &f.ty {
                        Type::String | Type::Path | Type::GpuClass => {
                            format!("{}.to_string()", format::literal(&f.ty, l))
                        }
                        t => format::literal(t, l),
                    },
                    _ => "Default::default()".into(),
                };
                (f.name.snake(), value)
            })
            .collect()
    });
    let view = RecordRs {
        doc: format::doc(&r.doc, ""),
        derives,
        name: r.name.pascal(),
        fields: r
            .fields
            .iter()
            .map(|f| FieldView { doc: format::doc(&f.doc, "    "), name: f.name.snake(), ty: format::field_ty(f) })
            .collect(),
        constants,
        defaults,
    };
    view.rendered(format!("record {}", r.name.pascal()))
}

fn enumeration(e: &Enum) -> Rendered {
    let view = EnumRs {
        doc: format::doc(&e.doc, ""),
        name: e.name.pascal(),
        strings: e.is_string(),
        variants: e
            .variants
            .iter()
            .map(|v| VariantView {
                doc: format::doc(&v.doc, "    "),
                name: v.name.pascal(),
                value: match &v.value {
                    EnumValue::Number(n) => n.to_string(),
                    EnumValue::String(s) => format!("{s:?}"),
                },
            })
            .collect(),
    };
    view.rendered(format!("enum {}", e.name.pascal()))
}

/// `generated/rust/types.rs`: every enum and record in IDL order, then the builtin matrix when a verb returns one.
pub fn types(api: &Api) -> Rendered {
    let mut parts = Vec::new();
    for item in &api.items {
        match item {
            Item::Record(r) => parts.push(record(api, r)?),
            Item::Enum(e) => parts.push(enumeration(e)?),
            Item::Class(_) | Item::Function(_) => {}
        }
    }
    if api.returns_matrix() {
        parts.push(MatrixRs.rendered("the f32 matrix")?);
    }
    TypesRs { banner: banner("//"), body: parts.join("\n\n") }.rendered("types.rs")
}

/// `generated/rust/error_kind.rs`: the `ErrorKind` enum of the IDL's `errors:` list.
pub fn error_kind(api: &Api) -> Rendered {
    let kinds = api
        .errors
        .iter()
        .map(|k| KindView {
            doc: format::doc(&k.doc, "    "),
            name: k.name.pascal(),
            code: k.name.snake(),
            status: k.status,
        })
        .collect();
    ErrorKindRs { banner: banner("//"), kinds }.rendered("error_kind.rs")
}

pub fn render(api: &Api) -> Rendered<Vec<Output>> {
    Ok(vec![
        Output { path: "rust/types.rs".into(), contents: types(api)? },
        Output { path: "rust/error_kind.rs".into(), contents: error_kind(api)? },
    ])
}
