//! The Swift reference page: the shared page shape of [`crate::lang::docs`], spelled as uniffi spells the UDL in
//! Swift (camelCase members, `UInt32`, `UFormError`). Kotlin's page is [`crate::lang::kotlin::docs`].

use super::format::ERROR;
use crate::lang::docs::{text, DocStyle, Entry};
use crate::model::*;
use crate::plan::{CallPlan, Lowering, Outcome};
use crate::render::Rendered;

pub struct SwiftDocs;

fn ty(ty: &Type) -> String {
    match ty {
        Type::U32 => "UInt32".into(),
        Type::U64 | Type::Address => "UInt64".into(),
        Type::I32 => "Int32".into(),
        Type::F64 => "Double".into(),
        Type::Bool => "Bool".into(),
        Type::String | Type::Path | Type::GpuClass => "String".into(),
        Type::F32Matrix => "F32Matrix".into(),
        Type::Bytes => "Data".into(),
        Type::List(inner) => format!("[{}]", self::ty(inner)),
        Type::Record(n) | Type::Enum(n) | Type::Class(n) => n.pascal(),
    }
}

pub(super) fn literal(param: &Param) -> Option<String> {
    Some(match param.default.as_ref()? {
        Literal::EmptyRecord => "nil".into(),
        Literal::Variant(v) => format!(".{}", v.camel()),
        Literal::Integer(i) => i.to_string(),
        Literal::Float(f) => format!("{f:?}"),
        Literal::Bool(b) => b.to_string(),
        Literal::String(s) => format!("{s:?}"),
    })
}

fn param(p: &Param) -> String {
    let mut ty = self::ty(&p.ty);
    if p.default == Some(Literal::EmptyRecord) {
        ty.push('?');
    }
    match literal(p) {
        Some(d) => format!("{}: {ty} = {d}", p.name.camel()),
        None => format!("{}: {ty}", p.name.camel()),
    }
}

/// A callable's Swift declaration; `in_extension` spells a method `public` (an extension's member cannot be `open`).
pub(super) fn declaration(class: Option<&Class>, c: &Callable, outcome: &Outcome, in_extension: bool) -> String {
    let params: Vec<String> = c.params.iter().map(param).collect();
    let params = if params.len() > 1 {
        format!("\n{}", params.iter().map(|p| format!("    {p},\n")).collect::<String>())
    } else {
        params.join("")
    };
    let returns = match (&outcome.lowering, outcome.lowering.ty()) {
        (Lowering::Handle { class }, _) => Some(class.pascal()),
        (_, Some(t)) if outcome.optional => Some(format!("{}?", ty(&t))),
        (_, Some(t)) => Some(ty(&t)),
        (_, None) => None,
    };
    let prefix = match (class, c.kind) {
        (Some(_), CallableKind::Constructor) => "public static func",
        (Some(_), _) if in_extension => "public func",
        (Some(_), _) => "open func",
        (None, _) => "public func",
    };
    // A long call is Swift's async twin under the IDL's name (super::async_twin).
    let effects = if super::async_twin::has_twin(c) { " async" } else { "" };
    let throws = if c.throws { format!("{effects} throws") } else { effects.to_string() };
    let returns = returns.map(|r| format!(" -> {r}")).unwrap_or_default();
    format!("{prefix} {}({params}){throws}{returns}", c.name.camel())
}

impl DocStyle for SwiftDocs {
    fn folder(&self) -> &'static str {
        "swift"
    }
    fn language(&self) -> &'static str {
        "Swift"
    }
    fn fence(&self) -> &'static str {
        "swift"
    }
    fn lang(&self) -> Language {
        Language::Swift
    }
    fn imports(&self, _api: &Api, _classes: &[&Class]) -> Vec<String> {
        vec!["import UForm".into()]
    }
    fn spell(&self, _api: &Api, r: &Reference) -> String {
        match r {
            Reference::Member(n) | Reference::Function(n) => n.camel(),
            Reference::Type(n) => n.pascal(),
            Reference::Method { class, method } => format!("{}.{}", class.pascal(), method.camel()),
        }
    }
    fn heading(&self, item: &Item) -> String {
        match item {
            Item::Function(f) => f.name.camel(),
            other => other.name().pascal(),
        }
    }
    fn member_heading(&self, _class: &Class, member: &Callable) -> String {
        member.name.camel()
    }
    fn record_declaration(&self, _api: &Api, record: &Record) -> String {
        format!("public struct {}", record.name.pascal())
    }
    fn record_entries(&self, api: &Api, record: &Record) -> Vec<Entry> {
        record
            .fields
            .iter()
            .map(|f| {
                let mut ty = ty(&f.ty);
                if f.optional {
                    ty.push('?');
                }
                Entry { name: f.name.camel(), ty: Some(ty), doc: text(self, api, &f.doc) }
            })
            .collect()
    }
    fn enum_declaration(&self, _api: &Api, e: &Enum) -> String {
        format!("public enum {}", e.name.pascal())
    }
    fn enum_entries(&self, api: &Api, e: &Enum) -> Vec<Entry> {
        e.variants
            .iter()
            .map(|v| {
                let value = match &v.value {
                    EnumValue::String(s) => format!("{s:?}"),
                    EnumValue::Number(_) => e.number(v).to_string(),
                };
                Entry {
                    name: v.name.camel(),
                    ty: None,
                    doc: format!("{} Elsewhere `{value}`.", text(self, api, &v.doc)),
                }
            })
            .collect()
    }
    fn class_declaration(&self, _api: &Api, class: &Class) -> String {
        let n = class.name.pascal();
        format!("open class {n}: {n}Protocol, @unchecked Sendable")
    }
    fn callable_declaration(&self, _api: &Api, class: Option<&Class>, c: &Callable, plan: &CallPlan) -> Rendered {
        Ok(declaration(class, c, &plan.outcome, false))
    }
    fn bytes_note(&self, _callable: &Callable) -> Option<String> {
        Some(super::format::Udl.bytes_note())
    }
    fn param_name(&self, param: &Param) -> String {
        param.name.camel()
    }
    fn compiled_declaration(&self, _api: &Api, _class: &Class) -> Option<String> {
        None
    }
    fn errors_heading(&self) -> String {
        ERROR.into()
    }
    fn errors_intro(&self) -> String {
        "The error every throwing call throws: one case per kind, the same set in every language; `message` names the \
         argument and the value."
            .into()
    }
    fn errors_declaration(&self, _api: &Api) -> String {
        format!("public enum {ERROR}: Swift.Error")
    }
    fn error_entry(&self, api: &Api, error: &ErrorKindDef) -> Entry {
        Entry { name: format!(".{}(message: String)", error.name.pascal()), ty: None, doc: text(self, api, &error.doc) }
    }
}
