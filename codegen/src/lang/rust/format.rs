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

/// What a record can derive. Each record reached is walked once (a memo keyed by name); one being walked counts as
/// deriving everything while its own fields decide, so recursive records end and shared ones cost nothing twice.
pub fn record_traits(api: &Api, r: &Record) -> Traits {
    Walk { api, memo: std::collections::HashMap::new() }.record(r)
}

struct Walk<'a> {
    api: &'a Api,
    memo: std::collections::HashMap<&'a Name, Traits>,
}

impl<'a> Walk<'a> {
    fn ty(&mut self, t: &'a Type, optional: bool) -> Traits {
        match t {
            Type::F64 | Type::F32Matrix => Traits { eq: false, ..ALL },
            Type::Class(_) => Traits { eq: false, partial_eq: false, default: optional },
            Type::List(e) => Traits { default: true, ..self.ty(e, false) },
            Type::Record(n) => {
                let inner = match self.memo.get(n) {
                    Some(t) => *t,
                    None => match self.api.record(n) {
                        Some(r) => {
                            self.memo.insert(n, ALL);
                            let t = self.record(r);
                            self.memo.insert(n, t);
                            t
                        }
                        None => ALL,
                    },
                };
                Traits { default: optional || inner.default, ..inner }
            }
            _ => ALL,
        }
    }

    fn record(&mut self, r: &'a Record) -> Traits {
        r.fields.iter().fold(ALL, |acc, f| {
            let t = self.ty(&f.ty, f.optional);
            Traits {
                eq: acc.eq && t.eq && t.partial_eq,
                partial_eq: acc.partial_eq && t.partial_eq,
                default: acc.default && t.default,
            }
        })
    }
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

#[cfg(test)]
mod tests {
    use super::*;

    /// 40 records, each holding the next twice: walking every path would take 2^40 steps.
    fn chain(last_field: &str) -> String {
        let mut idl = String::from(
            "package: uform\nversion: 0.1.0\ntitle: Chain\ndoc: A chain.\nerrors:\n  - error: InvalidArgument\n    \
             doc: Bad input.\nitems:\n",
        );
        for i in 0..40 {
            let next = if i == 39 { last_field.to_string() } else { format!("Link{}", i + 1) };
            idl += &format!(
                "  - record: Link{i}\n    c: uform_link{i}_t\n    direction: output\n    doc: A link.\n    fields:\n      \
                 - name: left\n        type: {next}\n        doc: Left.\n      - name: right\n        type: {next}\n        \
                 doc: Right.\n"
            );
        }
        idl
    }

    #[test]
    fn shared_records_are_walked_once_and_decide_the_derives() {
        for (leaf, eq) in [("u32", true), ("f64", false)] {
            let api = crate::load_str(&chain(leaf), "chain.yaml").unwrap_or_else(|d| panic!("{d}"));
            let (send, recv) = std::sync::mpsc::channel();
            // A walk of every path never ends: the answer comes from a thread, or the test fails after 10 s.
            std::thread::spawn(move || {
                let _ = send.send(record_traits(&api, api.record(&Name::parse("Link0")).unwrap()));
            });
            let traits = recv.recv_timeout(std::time::Duration::from_secs(10)).expect("the walk did not end");
            assert_eq!(traits, Traits { eq, partial_eq: true, default: true });
        }
    }
}
