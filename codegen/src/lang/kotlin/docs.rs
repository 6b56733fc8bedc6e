//! The Kotlin reference page: the shared page shape of [`crate::lang::docs`], every name and type spelled by
//! [`super::format::Kt`], the formatter the Kotlin sources use.

use super::KT;
use crate::lang::docs::{text, DocStyle, Entry};
use crate::model::*;
use crate::plan::CallPlan;
use crate::render::Rendered;

pub struct KotlinDocs;

impl DocStyle for KotlinDocs {
    fn folder(&self) -> &'static str {
        "kotlin"
    }
    fn language(&self) -> &'static str {
        "Kotlin"
    }
    fn fence(&self) -> &'static str {
        "kotlin"
    }
    fn lang(&self) -> Language {
        Language::Kotlin
    }
    fn imports(&self, _api: &Api, _classes: &[&Class]) -> Vec<String> {
        vec![format!("import {}.*", super::PACKAGE)]
    }
    fn spell(&self, _api: &Api, r: &Reference) -> String {
        match r {
            Reference::Member(n) | Reference::Function(n) => n.camel(),
            Reference::Type(n) => KT.type_name(n),
            Reference::Method { class, method } => format!("{}.{}", KT.type_name(class), method.camel()),
        }
    }
    fn heading(&self, item: &Item) -> String {
        match item {
            Item::Function(f) => f.name.camel(),
            other => KT.type_name(other.name()),
        }
    }
    fn member_heading(&self, _class: &Class, member: &Callable) -> String {
        member.name.camel()
    }
    fn record_declaration(&self, _api: &Api, record: &Record) -> String {
        format!("data class {}", KT.type_name(&record.name))
    }
    fn record_entries(&self, api: &Api, record: &Record) -> Vec<Entry> {
        record
            .fields
            .iter()
            .map(|f| Entry { name: KT.member(&f.name), ty: Some(KT.field_ty(record, f)), doc: text(self, api, &f.doc) })
            .collect()
    }
    fn enum_declaration(&self, _api: &Api, e: &Enum) -> String {
        format!("enum class {}", KT.type_name(&e.name))
    }
    fn enum_entries(&self, api: &Api, e: &Enum) -> Vec<Entry> {
        e.variants
            .iter()
            .map(|v| {
                let value = KT.variant_value(e, v);
                Entry {
                    name: KT.variant(&v.name),
                    ty: None,
                    doc: format!("{} Elsewhere `{value}`.", text(self, api, &v.doc)),
                }
            })
            .collect()
    }
    fn class_declaration(&self, _api: &Api, class: &Class) -> String {
        format!("class {} : AutoCloseable", KT.type_name(&class.name))
    }
    fn callable_declaration(&self, _api: &Api, class: Option<&Class>, c: &Callable, plan: &CallPlan) -> Rendered {
        let params: Vec<String> = c.params.iter().map(|p| KT.param(p)).collect();
        let params = if params.len() > 1 {
            format!("\n{}", params.iter().map(|p| format!("    {p},\n")).collect::<String>())
        } else {
            params.join("")
        };
        let returns = KT.returns(&plan.outcome).map(|r| format!(": {r}")).unwrap_or_default();
        let throws = if c.throws { "@Throws(UFormException::class)\n" } else { "" };
        let scope = match (class, c.kind) {
            (Some(k), CallableKind::Constructor) => format!("{}.Companion.", KT.type_name(&k.name)),
            _ => String::new(),
        };
        Ok(format!("{throws}fun {scope}{}({params}){returns}", KT.member(&c.name)))
    }
    fn bytes_note(&self, _callable: &Callable) -> Option<String> {
        Some(KT.bytes_note())
    }
    fn param_name(&self, param: &Param) -> String {
        KT.member(&param.name)
    }
    fn compiled_declaration(&self, _api: &Api, _class: &Class) -> Option<String> {
        None
    }
    fn notes(&self, _api: &Api) -> Vec<String> {
        vec!["## Handles\n\nEvery class is `AutoCloseable`. `free()` frees the native object now and keeps the Kotlin \
             object: later calls throw `UFormException.FreedHandle`. `close()` (and `use { }`) drops the Kotlin \
             object's reference: later calls on it, and passing it as an argument, throw `IllegalStateException`. \
             `close()` does not wait for calls in flight on other threads: they finish normally, and the native \
             object is freed when the last of them returns. An object nobody closes is freed the same way once the \
             collector finds it unreachable (a `java.lang.ref.Cleaner`, registered once per object; a call allocates \
             nothing for it). A string holding a lone UTF-16 surrogate is refused with \
             `java.nio.charset.MalformedInputException` before the call reaches the runtime."
            .into()]
    }
    fn errors_heading(&self) -> String {
        "UFormException".into()
    }
    fn errors_intro(&self) -> String {
        "The exception every throwing call throws: one subclass per kind, the same set in every language; `message` \
         names the argument and the value, and `code` is the kind as every language spells it (`invalid_argument`)."
            .into()
    }
    fn errors_declaration(&self, _api: &Api) -> String {
        "sealed class UFormException(message: String, val code: String) : Exception(message)".into()
    }
    fn error_entry(&self, api: &Api, error: &ErrorKindDef) -> Entry {
        Entry {
            name: format!("UFormException.{}", KT.type_name(&error.name)),
            ty: None,
            doc: text(self, api, &error.doc),
        }
    }
}
