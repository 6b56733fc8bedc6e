//! The Rust formatter for core's own types: type spelling, doc comments, literals, and which traits a type can
//! derive. Core spells a path, a GPU class and an address the way it stores them (`String`, `String`, `u64`).

use crate::lang::wrap;
use crate::model::*;

/// The Rust type core stores for an IDL type; handles live at the crate root (`crate::Executor`).
pub fn ty(t: &Type) -> String {
    ty_with(t, &|class| format!("crate::{}", class.pascal()))
}

/// The Rust type of an IDL type in core's shape, a handle spelled by `handle` (the uniffi glue's `Arc<Executor>`).
pub fn ty_with(t: &Type, handle: &dyn Fn(&Name) -> String) -> String {
    match t {
        Type::U32 => "u32".into(),
        Type::U64 | Type::Address => "u64".into(),
        Type::I32 => "i32".into(),
        Type::F64 => "f64".into(),
        Type::Bool => "bool".into(),
        Type::String | Type::Path | Type::GpuClass => "String".into(),
        Type::F32Matrix => "F32Matrix".into(),
        Type::Bytes => "Vec<u8>".into(),
        Type::List(e) => format!("Vec<{}>", ty_with(e, handle)),
        Type::Record(n) | Type::Enum(n) => n.pascal(),
        Type::Class(n) => handle(n),
    }
}

/// A field's type: `Option<T>` when the IDL marks it optional.
pub fn field_ty(f: &Field) -> String {
    if f.optional {
        format!("Option<{}>", ty(&f.ty))
    } else {
        ty(&f.ty)
    }
}

/// Doc text with every `[[reference]]` in Rust's spelling, as `///` lines at `indent`.
pub fn doc(d: &Doc, indent: &str) -> String {
    let text = d.render(&|r| match r {
        Reference::Member(n) => format!("`{}`", n.snake()),
        Reference::Type(n) => format!("`{}`", n.pascal()),
        Reference::Function(n) => format!("`{}`", n.snake()),
        Reference::Method { class, method } => format!("`{}::{}`", class.pascal(), method.snake()),
    });
    if text.is_empty() {
        return String::new();
    }
    let mut out = String::new();
    for line in wrap(&text, 120 - indent.len() - 4) {
        if line.is_empty() {
            out.push_str(&format!("{indent}///\n"));
        } else {
            out.push_str(&format!("{indent}/// {line}\n"));
        }
    }
    out
}

/// A literal default as a Rust expression of type `t`.
pub fn literal(t: &Type, l: &Literal) -> String {
    match (t, l) {
        (Type::F64, Literal::Integer(i)) => format!("{i}.0"),
        (_, Literal::Integer(i)) => i.to_string(),
        (_, Literal::Float(f)) => format!("{f:?}"),
        (_, Literal::Bool(b)) => b.to_string(),
        (_, Literal::String(s)) => format!("{s:?}"),
        (_, Literal::Variant(v)) => format!("{}::{}", ty(t), v.pascal()),
        (_, Literal::EmptyRecord) => format!("{}::default()", ty(t)),
    }
}

/// The Rust type of a constant holding a default: strings are `&'static str`.
pub fn constant_ty(t: &Type) -> String {
    match t {
        Type::String | Type::Path | Type::GpuClass => "&'static str".into(),
        other => ty(other),
    }
}

/// What a record can derive, given what its fields hold.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Traits {
    /// `Eq` and `Hash`: no floating point anywhere inside.
    pub eq: bool,
    /// `PartialEq`: no handle inside (a handle has no equality).
    pub partial_eq: bool,
    /// `Default`: no required handle inside (a handle has no empty value; an optional one is `None`).
    pub default: bool,
}

const ALL: Traits = Traits { eq: true, partial_eq: true, default: true };

pub fn traits(api: &Api, t: &Type, optional: bool, depth: usize) -> Traits {
    match t {
        Type::F64 | Type::F32Matrix => Traits { eq: false, ..ALL },
        Type::Class(_) => Traits { eq: false, partial_eq: false, default: optional },
        Type::List(e) => Traits { default: true, ..traits(api, e, false, depth) },
        Type::Record(n) if depth < 32 => match api.record(n) {
            Some(r) => Traits {
                default: optional || record_traits(api, r, depth + 1).default,
                ..record_traits(api, r, depth + 1)
            },
            None => ALL,
        },
        _ => ALL,
    }
}

pub fn record_traits(api: &Api, r: &Record, depth: usize) -> Traits {
    r.fields.iter().fold(ALL, |acc, f| {
        let t = traits(api, &f.ty, f.optional, depth);
        Traits {
            eq: acc.eq && t.eq && t.partial_eq,
            partial_eq: acc.partial_eq && t.partial_eq,
            default: acc.default && t.default,
        }
    })
}

/// The derive list of a record.
pub fn derives(t: Traits) -> String {
    let mut list = vec!["Clone", "Debug"];
    if t.partial_eq {
        list.push("PartialEq");
    }
    if t.eq {
        list.extend(["Eq", "Hash"]);
    }
    list.join(", ")
}
