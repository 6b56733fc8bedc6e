//! The UDL formatter: every decision about how the IDL is spelled in uniffi's UDL and in the Rust glue that
//! implements it, in one place. uniffi then spells the UDL for Kotlin and Swift; [`super::docs`] mirrors those
//! spellings for the reference pages.
//!
//! Decisions:
//! - Types keep their IDL names (PascalCase); members, functions and constructors are snake_case, as UDL wants.
//! - Integers keep their width; addresses are `u64`; paths and GPU classes are `string`.
//! - An optional field is `T?`, defaulting to the IDL default or `null`; a record parameter with the default `{}`
//!   becomes `optional T? name = null` (UDL has no record literals), and the glue reads `None` as "all absent".
//! - Enums are custom types over `i32` from [`BULK_CRATE`], the number C uses for each case (`Enum::number`): an
//!   argument crosses in a register instead of a buffer allocated and freed per call. The glue implements the
//!   conversion, the generator writes the Swift (Enums.swift), and a defaulted enum parameter is required in the UDL
//!   and defaulted by a Swift overload.
//! - Errors are one flat `[Error] enum` of the shared kinds; each case carries the core's message.
//! - Classes are interfaces over `Arc`; constructors are named (`[Name=for_ram]`).
//! - In the Swift the generator writes (Enums.swift), enum cases are camelCase, a Swift reserved word in backticks
//!   as uniffi spells them ([`SWIFT_KEYWORDS`]).

use crate::model::*;
use crate::plan::{CallPlan, Callee, Kept, Lowering, Outcome, Passing};

/// The error type every throwing call names.
pub const ERROR: &str = "UFormError";

/// Where the UDL says the custom types `F32Matrix` and the enums come from. No such crate exists: naming one makes
/// uniffi leave the types' Swift to us (it emits none for another crate's custom type and calls
/// `FfiConverterTypeF32Matrix_lift`, `FfiConverterTypeMood_lower` and `uniffiEnsureUformBulkInitialized`, which
/// swift/Sources/UForm/{F32Matrix,Enums,UFormBulk}.swift define); the Rust glue implements the conversions itself.
pub const BULK_CRATE: &str = "uform_bulk";

/// The crate whose FFI the Swift converter calls (`ffi_uform_uniffi_rustbuffer_free`): bindings/uniffi, as
/// uniffi-bindgen names it (bindings/uniffi-bindgen's `CRATE`).
pub const FFI_CRATE: &str = "uform_uniffi";

/// Swift's reserved words an enum case could collide with ([`Udl::swift_case`] spells them in backticks, as
/// uniffi does).
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

pub struct Udl;

impl Udl {
    pub fn type_name(&self, name: &Name) -> String {
        name.pascal()
    }
    pub fn member(&self, name: &Name) -> String {
        name.snake()
    }
    pub fn variant(&self, name: &Name) -> String {
        name.pascal()
    }

    /// How a `bytes` parameter crosses: uniffi copies each `Data`.
    pub fn bytes_note(&self) -> String {
        "uniffi copies each `Data` once into the Rust side for the call.".into()
    }

    /// A type as UDL spells it.
    pub fn ty(&self, ty: &Type) -> String {
        match ty {
            Type::U32 => "u32".into(),
            Type::U64 | Type::Address => "u64".into(),
            Type::I32 => "i32".into(),
            Type::F64 => "f64".into(),
            Type::Bool => "boolean".into(),
            Type::String | Type::Path | Type::GpuClass => "string".into(),
            Type::F32Matrix => "F32Matrix".into(),
            Type::Bytes => "bytes".into(),
            Type::List(inner) => format!("sequence<{}>", self.ty(inner)),
            Type::Record(n) | Type::Enum(n) | Type::Class(n) => self.type_name(n),
        }
    }

    /// A literal as a UDL default.
    pub fn literal(&self, literal: &Literal) -> String {
        match literal {
            Literal::Integer(i) => i.to_string(),
            Literal::Float(f) => format!("{f:?}"),
            Literal::Bool(b) => b.to_string(),
            Literal::String(s) => format!("{s:?}"),
            Literal::Variant(v) => format!("{:?}", self.variant(v)),
            Literal::EmptyRecord => "null".into(),
        }
    }

    /// A dictionary member: `u32? host_domain_index = 0`.
    pub fn field(&self, record: &Record, field: &Field) -> String {
        let name = self.member(&field.name);
        let ty = self.ty(&field.ty);
        if field.optional {
            let default = match (&field.default, record.direction) {
                // An enum cannot be defaulted (a custom type over `i32`): absent reads as the core's default.
                (Some(Literal::Variant(_)), _) => "null".into(),
                (Some(d), Direction::Input) => self.literal(d),
                _ => "null".into(),
            };
            format!("{ty}? {name} = {default}")
        } else {
            format!("{ty} {name}")
        }
    }

    /// A parameter: `optional ExecutorForRamConfig? config = null`, `Mood mood`.
    pub fn param(&self, param: &Param) -> String {
        let name = self.member(&param.name);
        let ty = self.ty(&param.ty);
        match &param.default {
            Some(Literal::EmptyRecord) => format!("optional {ty}? {name} = null"),
            // An enum is a custom type over `i32` (see `enum.udl`), which uniffi cannot default: the parameter is
            // required here and the Swift overload the generator writes (Enums.swift) supplies the default.
            Some(Literal::Variant(_)) => ty + " " + &name,
            Some(d) => format!("optional {ty} {name} = {}", self.literal(d)),
            None => ty + " " + &name,
        }
    }

    pub fn params(&self, callable: &Callable) -> String {
        callable.params.iter().map(|p| self.param(p)).collect::<Vec<_>>().join(", ")
    }

    /// The return type of a callable, as the plan lowers it; `void` when it returns nothing.
    pub fn returns(&self, outcome: &Outcome) -> String {
        match outcome.lowering.ty() {
            Some(t) if outcome.optional => format!("{}?", self.ty(&t)),
            Some(t) => self.ty(&t),
            None => "void".into(),
        }
    }

    /// The attribute list before a callable, like `[Name=for_ram, Throws=UFormError]`.
    pub fn attributes(&self, callable: &Callable) -> String {
        self.attributes_with(callable, &[])
    }

    /// The attributes plus `extra` (`Async`, `Self=ByArc` for an async twin), in uniffi's order.
    pub fn attributes_with(&self, callable: &Callable, extra: &[&str]) -> String {
        let mut attrs = Vec::new();
        if callable.kind == CallableKind::Constructor {
            attrs.push(format!("Name={}", self.member(&callable.name)));
        }
        attrs.extend(extra.iter().map(|e| e.to_string()));
        if callable.throws {
            attrs.push(format!("Throws={ERROR}"));
        }
        if attrs.is_empty() {
            String::new()
        } else {
            format!("[{}]", attrs.join(", "))
        }
    }

    /// Doc text for a `///` block. uniffi copies it into Kotlin and Swift as is, and both spell members and
    /// functions in camelCase, so references are spelled that way rather than as the UDL's snake_case.
    pub fn doc_text(&self, doc: &Doc) -> String {
        doc.render(&|r| match r {
            Reference::Member(n) | Reference::Function(n) => format!("`{}`", n.camel()),
            Reference::Type(n) => format!("`{}`", self.type_name(n)),
            Reference::Method { class, method } => format!("`{}.{}`", self.type_name(class), method.camel()),
        })
    }

    /// A `///` comment block at `indent`, with an optional extra paragraph, wrapped at 110 columns.
    pub fn doc_block(&self, text: &str, indent: &str) -> String {
        if text.is_empty() {
            return String::new();
        }
        let mut out = String::new();
        for line in crate::lang::wrap(text, 110 - indent.len() - 4) {
            if line.is_empty() {
                out.push_str(&format!("{indent}///\n"));
            } else {
                out.push_str(&format!("{indent}/// {line}\n"));
            }
        }
        out
    }

    /// The `///` block at `indent` holding just `doc`'s text.
    pub fn doc_comment(&self, doc: &Doc, indent: &str) -> String {
        self.doc_block(&self.doc_text(doc), indent)
    }

    /// An enum case as the generated Swift names it (Enums.swift): camelCase, a reserved word in backticks.
    pub fn swift_case(&self, name: &Name) -> String {
        let name = name.camel();
        if SWIFT_KEYWORDS.contains(&name.as_str()) {
            format!("`{name}`")
        } else {
            name
        }
    }

    // ---- the Rust glue: uniffi-facing types on one side, `uform_core` on the other ----

    /// A type as the uniffi-facing Rust glue spells it: core's spelling of the glue's own types, with handles shared
    /// as `Arc`s (the scaffolding's expectations).
    pub fn rust_ty(&self, ty: &Type) -> String {
        crate::lang::rust::format::ty_with(ty, &|class| format!("Arc<{}>", self.type_name(class)))
    }

    /// Whether values of this type need a conversion between the glue and the core.
    fn converts(&self, ty: &Type) -> bool {
        match ty {
            Type::Record(_) | Type::Enum(_) | Type::F32Matrix => true,
            Type::List(inner) => self.converts(inner),
            _ => false,
        }
    }

    /// An expression converting `expr` of type `ty` (optional when `optional`) between glue and core, either way;
    /// both sides implement `From` for every record and enum.
    pub fn convert(&self, expr: &str, ty: &Type, optional: bool) -> String {
        if !self.converts(ty) {
            return expr.into();
        }
        let one = |e: &str| match ty {
            Type::List(_) => format!("{e}.into_iter().map(Into::into).collect()"),
            _ => format!("{e}.into()"),
        };
        if optional {
            format!("{expr}.map(|v| {})", one("v"))
        } else {
            one(expr)
        }
    }

    /// The glue's parameter list.
    pub fn rust_params(&self, callable: &Callable) -> String {
        callable
            .params
            .iter()
            .map(|p| {
                let ty = self.rust_ty(&p.ty);
                let ty = if p.default == Some(Literal::EmptyRecord) { format!("Option<{ty}>") } else { ty };
                format!("{}: {ty}", self.member(&p.name))
            })
            .collect::<Vec<_>>()
            .join(", ")
    }

    /// The arguments handed to the core: records converted (absent ones "all absent"), classes as their core.
    pub fn core_args(&self, plan: &CallPlan) -> String {
        plan.arguments
            .iter()
            .map(|a| {
                let name = self.member(&a.name);
                match (&a.passing, &a.default) {
                    (_, Some(Literal::EmptyRecord)) => format!("{name}.map(Into::into).unwrap_or_default()"),
                    (Passing::Handle { .. }, _) => format!("&{name}.core"),
                    // A converted list is collected into a `Vec` the core borrows as a slice.
                    (Passing::List { .. }, _) if self.converts(&a.ty) => {
                        format!("&{name}.into_iter().map(Into::into).collect::<Vec<_>>()")
                    }
                    // uniffi hands over each buffer it copied out of Swift's `Data`; the core borrows them.
                    (Passing::List { element: Type::Bytes }, _) => {
                        format!("&{name}.iter().map(Vec::as_slice).collect::<Vec<_>>()")
                    }
                    (Passing::List { .. }, _) => format!("&{name}"),
                    _ => self.convert(&name, &a.ty, false),
                }
            })
            .collect::<Vec<_>>()
            .join(", ")
    }

    /// The glue's return type.
    pub fn rust_returns(&self, plan: &CallPlan) -> String {
        let value = match (plan.kind, plan.outcome.lowering.ty()) {
            (CallableKind::Constructor, _) => "Self".to_string(),
            (_, Some(t)) if plan.outcome.optional => format!("Option<{}>", self.rust_ty(&t)),
            (_, Some(t)) => self.rust_ty(&t),
            (_, None) => "()".into(),
        };
        if plan.throws {
            format!("Result<{value}, {ERROR}>")
        } else {
            value
        }
    }

    /// The call into the core.
    pub fn core_call(&self, plan: &CallPlan) -> String {
        let args = self.core_args(plan);
        match &plan.callee {
            Callee::Constructor { class, name } => {
                format!("uform_core::{}::{}({args})", self.type_name(class), self.member(name))
            }
            Callee::Method { name } => format!("self.core.{}({args})", self.member(name)),
            Callee::Function { name } => format!("uform_core::{}({args})", self.member(name)),
        }
    }

    /// What the glue does with the core's (successful) value, as the plan lowers it.
    pub fn wrap_result(&self, plan: &CallPlan, value: &str) -> String {
        match (plan.kind, plan.outcome.lowering.ty()) {
            (CallableKind::Constructor, _) => {
                // The objects of handle arguments; a handle in a record field lives in the converted core record.
                let kept: Vec<String> = plan
                    .keeps_alive
                    .iter()
                    .filter_map(|k| match k {
                        Kept::Argument { name } => {
                            Some(format!("{}.clone() as Arc<dyn std::any::Any + Send + Sync>", self.member(name)))
                        }
                        Kept::Field { .. } => None,
                    })
                    .collect();
                format!("Self {{ core: {value}, _borrowed: vec![{}] }}", kept.join(", "))
            }
            // A core that cannot fail may hand out an optional string as `Option<&'static str>`.
            (_, Some(_)) if plan.outcome.lowering == Lowering::String && plan.outcome.optional => {
                format!("{value}.map(String::from)")
            }
            (_, Some(t)) => self.convert(value, &t, plan.outcome.optional),
            (_, None) => value.into(),
        }
    }
}
