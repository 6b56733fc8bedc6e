//! Type expressions (builtins, `list<T>`, declared names) and the defaults checked against them.

use super::diagnostics::show;
use super::Checker;
use crate::model::*;
use crate::raw::*;

const BUILTINS: [&str; 11] =
    ["u32", "u64", "i32", "f64", "bool", "string", "path", "address", "gpu_class", "f32_matrix", "bytes"];

/// Why `bytes` is refused where it is: it crosses only as the element of a list parameter.
pub(super) const BYTES_ONLY_IN_LIST_PARAMETER: &str =
    "`bytes` crosses only as the element of a list parameter (`list<bytes>`), borrowed for the call";

impl Checker {
    pub(super) fn ty(&mut self, raw: &S<String>, item: &str) -> Option<Type> {
        let text = raw.value.trim();
        if let Some(inner) = text.strip_prefix("list<").and_then(|t| t.strip_suffix('>')) {
            let element = S { value: inner.to_string(), referenced: raw.referenced, defined: raw.defined };
            let element = self.ty(&element, item)?;
            if matches!(element, Type::List(_) | Type::Class(_) | Type::F32Matrix) {
                self.problem(
                    &raw.referenced,
                    item,
                    format!("type `{text}`: a list holds scalars, enums, records or bytes"),
                );
                return None;
            }
            return Some(Type::List(Box::new(element)));
        }
        Some(match text {
            "u32" => Type::U32,
            "u64" => Type::U64,
            "i32" => Type::I32,
            "f64" => Type::F64,
            "bool" => Type::Bool,
            "string" => Type::String,
            "path" => Type::Path,
            "address" => Type::Address,
            "gpu_class" => Type::GpuClass,
            "f32_matrix" => Type::F32Matrix,
            "bytes" => Type::Bytes,
            name if self.declared.records.contains(name) => Type::Record(Name::parse(name)),
            name if self.declared.enums.contains_key(name) => Type::Enum(Name::parse(name)),
            name if self.declared.classes.contains_key(name) => Type::Class(Name::parse(name)),
            _ => {
                self.problem(
                    &raw.referenced,
                    item,
                    format!(
                        "unknown type `{text}`; use a builtin ({}), `list<T>`, or a declared record, enum or class",
                        BUILTINS.join(", ")
                    ),
                );
                return None;
            }
        })
    }

    pub(super) fn literal(&mut self, raw: &S<RawLiteral>, ty: &Type, item: &str) -> Option<Literal> {
        let bad = |this: &mut Checker, why: String| {
            this.problem(
                &raw.referenced,
                item,
                format!("default {} does not fit type {}: {why}", show(&raw.value), ty),
            );
            None
        };
        let value = match &raw.value {
            RawLiteral::Unsigned(n) => RawLiteral::Integer128(*n as i128),
            RawLiteral::Integer(n) => RawLiteral::Integer128(*n as i128),
            other => other.clone(),
        };
        match (ty, &value) {
            (t, RawLiteral::Integer128(n)) if t.is_integer() => {
                let (lo, hi) = t.integer_range().unwrap_or((0, 0));
                if *n < lo || *n > hi {
                    return bad(self, format!("it lies outside {lo}..={hi}"));
                }
                Some(Literal::Integer(*n))
            }
            (Type::F64, RawLiteral::Float(f)) => Some(Literal::Float(*f)),
            (Type::F64, RawLiteral::Integer128(n)) => Some(Literal::Float(*n as f64)),
            (Type::Bool, RawLiteral::Bool(b)) => Some(Literal::Bool(*b)),
            (Type::String | Type::Path, RawLiteral::String(s)) => Some(Literal::String(s.clone())),
            (Type::Enum(name), RawLiteral::String(s)) => {
                let variants = self.declared.enums.get(&name.pascal()).cloned().unwrap_or_default();
                if variants.iter().any(|v| v == s) {
                    Some(Literal::Variant(Name::parse(s)))
                } else {
                    bad(self, format!("`{}` has no value `{s}` (it has {})", name.pascal(), variants.join(", ")))
                }
            }
            (Type::Record(_), RawLiteral::Map(m)) if m.is_empty() => Some(Literal::EmptyRecord),
            (Type::Record(_), _) => bad(self, "a record takes only `{}`, every field absent".to_string()),
            _ => bad(self, "the kinds differ".to_string()),
        }
    }
}
