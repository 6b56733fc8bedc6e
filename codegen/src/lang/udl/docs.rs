//! The Kotlin and Swift reference pages: the shared page shape of [`crate::lang::docs`], spelled as uniffi
//! spells the UDL in each language (camelCase members, `UInt`/`UInt32`, `UFormException`/`UFormError`).

use super::format::ERROR;
use crate::lang::docs::{text, DocStyle, Entry};
use crate::model::*;
use crate::render::Rendered;

pub struct KotlinDocs;
pub struct SwiftDocs;

/// What differs between Kotlin and Swift as uniffi emits them.
trait Spelling {
    const KOTLIN: bool;
    fn ty(&self, ty: &Type) -> String {
        let k = Self::KOTLIN;
        match ty {
            Type::U32 => (if k { "UInt" } else { "UInt32" }).into(),
            Type::U64 | Type::Address => (if k { "ULong" } else { "UInt64" }).into(),
            Type::I32 => (if k { "Int" } else { "Int32" }).into(),
            Type::F64 => "Double".into(),
            Type::Bool => (if k { "Boolean" } else { "Bool" }).into(),
            Type::String | Type::Path | Type::GpuClass => "String".into(),
            Type::F32Matrix => "F32Matrix".into(),
            Type::List(inner) if k => format!("List<{}>", self.ty(inner)),
            Type::List(inner) => format!("[{}]", self.ty(inner)),
            Type::Record(n) | Type::Enum(n) | Type::Class(n) => n.pascal(),
        }
    }
    fn variant(&self, name: &Name) -> String {
        if Self::KOTLIN {
            name.screaming()
        } else {
            name.camel()
        }
    }
    fn error_type(&self) -> String {
        if Self::KOTLIN {
            ERROR.replace("Error", "Exception")
        } else {
            ERROR.into()
        }
    }
    fn literal(&self, param: &Param) -> Option<String> {
        let k = Self::KOTLIN;
        Some(match param.default.as_ref()? {
            Literal::EmptyRecord => (if k { "null" } else { "nil" }).into(),
            Literal::Variant(v) => match &param.ty {
                Type::Enum(e) if k => format!("{}.{}", e.pascal(), self.variant(v)),
                _ => format!(".{}", self.variant(v)),
            },
            Literal::Integer(i) if k && param.ty.is_integer() && !matches!(param.ty, Type::I32) => format!("{i}u"),
            Literal::Integer(i) => i.to_string(),
            Literal::Float(f) => format!("{f:?}"),
            Literal::Bool(b) => b.to_string(),
            Literal::String(s) => format!("{s:?}"),
        })
    }
    fn param(&self, p: &Param) -> String {
        let mut ty = self.ty(&p.ty);
        if p.default == Some(Literal::EmptyRecord) {
            ty.push('?');
        }
        match self.literal(p) {
            Some(d) => format!("{}: {ty} = {d}", p.name.camel()),
            None => format!("{}: {ty}", p.name.camel()),
        }
    }
    fn returns(&self, class: Option<&Class>, c: &Callable) -> Option<String> {
        match (c.kind, &c.returns, class) {
            (CallableKind::Constructor, _, Some(k)) => Some(k.name.pascal()),
            (_, Some(t), _) if c.returns_optional => Some(format!("{}?", self.ty(t))),
            (_, Some(t), _) => Some(self.ty(t)),
            _ => None,
        }
    }
    fn declaration(&self, class: Option<&Class>, c: &Callable) -> String {
        let params: Vec<String> = c.params.iter().map(|p| self.param(p)).collect();
        let params = if params.len() > 1 {
            format!("\n{}", params.iter().map(|p| format!("    {p},\n")).collect::<String>())
        } else {
            params.join("")
        };
        let name = c.name.camel();
        let returns = self.returns(class, c);
        if Self::KOTLIN {
            let throws = if c.throws { format!("@Throws({}::class)\n", self.error_type()) } else { String::new() };
            let scope = match (class, c.kind) {
                (Some(k), CallableKind::Constructor) => format!("{}.Companion.", k.name.pascal()),
                _ => String::new(),
            };
            let returns = returns.map(|r| format!(": {r}")).unwrap_or_default();
            format!("{throws}fun {scope}{name}({params}){returns}")
        } else {
            let prefix = match (class, c.kind) {
                (Some(_), CallableKind::Constructor) => "public static func",
                (Some(_), _) => "open func",
                (None, _) => "public func",
            };
            // A long call is Swift's async twin under the IDL's name (super::async_twin).
            let effects = if super::async_twin::has_twin(c) { " async" } else { "" };
            let throws = if c.throws { format!("{effects} throws") } else { effects.to_string() };
            let returns = returns.map(|r| format!(" -> {r}")).unwrap_or_default();
            format!("{prefix} {name}({params}){throws}{returns}")
        }
    }
}

struct K;
struct S;
impl Spelling for K {
    const KOTLIN: bool = true;
}
impl Spelling for S {
    const KOTLIN: bool = false;
}

fn reference(api: &Api, r: &Reference) -> String {
    let spelled = match r {
        Reference::Member(n) | Reference::Function(n) => n.camel(),
        Reference::Type(n) => n.pascal(),
        Reference::Method { class, method } => format!("{}.{}", class.pascal(), method.camel()),
    };
    match r {
        Reference::Function(n) if api.functions().any(|f| &f.name == n && f.offered_in(Language::Kotlin)) => {
            format!("[`{spelled}`](#{})", n.camel().to_lowercase())
        }
        Reference::Method { method, .. } => format!("[`{spelled}`](#{})", method.camel().to_lowercase()),
        _ => format!("`{spelled}`"),
    }
}

macro_rules! style {
    ($style:ident, $spelling:ident, $folder:expr, $language:expr, $fence:expr, $lang:expr) => {
        impl DocStyle for $style {
            fn folder(&self) -> &'static str {
                $folder
            }
            fn language(&self) -> &'static str {
                $language
            }
            fn fence(&self) -> &'static str {
                $fence
            }
            fn offered(&self, callable: &Callable) -> bool {
                callable.offered_in($lang)
            }
            fn imports(&self, _api: &Api) -> Vec<String> {
                if $spelling::KOTLIN {
                    vec![format!("import {}.*", uform_package())]
                } else {
                    vec!["import UForm".into()]
                }
            }
            fn reference(&self, api: &Api, r: &Reference) -> String {
                reference(api, r)
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
                if $spelling::KOTLIN {
                    format!("data class {}", record.name.pascal())
                } else {
                    format!("public struct {}", record.name.pascal())
                }
            }
            fn record_entries(&self, api: &Api, record: &Record) -> Vec<Entry> {
                record
                    .fields
                    .iter()
                    .map(|f| {
                        let mut ty = $spelling.ty(&f.ty);
                        if f.optional {
                            ty.push('?');
                        }
                        Entry { name: f.name.camel(), ty: Some(ty), doc: text(self, api, &f.doc) }
                    })
                    .collect()
            }
            fn enum_declaration(&self, _api: &Api, e: &Enum) -> String {
                if $spelling::KOTLIN {
                    format!("enum class {}", e.name.pascal())
                } else {
                    format!("public enum {}", e.name.pascal())
                }
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
                            name: $spelling.variant(&v.name),
                            ty: None,
                            doc: format!("{} Elsewhere `{value}`.", text(self, api, &v.doc)),
                        }
                    })
                    .collect()
            }
            fn class_declaration(&self, _api: &Api, class: &Class) -> String {
                let n = class.name.pascal();
                if $spelling::KOTLIN {
                    format!("open class {n} : Disposable, AutoCloseable, {n}Interface")
                } else {
                    format!("open class {n}: {n}Protocol, @unchecked Sendable")
                }
            }
            fn callable_declaration(&self, api: &Api, class: Option<&Class>, c: &Callable) -> Rendered {
                Ok({
                { let _ = api; $spelling.declaration(class, c) }
                })
            }
            fn param_name(&self, param: &Param) -> String {
                param.name.camel()
            }
            fn compiled_declaration(&self, _api: &Api, _class: &Class) -> Option<String> {
                None
            }
            fn errors_heading(&self) -> String {
                $spelling.error_type()
            }
            fn errors_intro(&self) -> String {
                if $spelling::KOTLIN {
                    format!("The exception every throwing call raises: one subclass per kind, the same set in every language; `message` names the argument and the value. `{}` comes from the UDL's `[Error] enum {ERROR}`.", $spelling.error_type())
                } else {
                    format!("The error every throwing call throws: one case per kind, the same set in every language; `message` names the argument and the value.")
                }
            }
            fn errors_declaration(&self, _api: &Api) -> String {
                if $spelling::KOTLIN {
                    format!("sealed class {0}(message: String) : kotlin.Exception(message)", $spelling.error_type())
                } else {
                    format!("public enum {ERROR}: Swift.Error")
                }
            }
            fn error_entry(&self, api: &Api, error: &ErrorKindDef) -> Entry {
                let name = if $spelling::KOTLIN {
                    format!("{}.{}", $spelling.error_type(), error.name.pascal())
                } else {
                    format!(".{}(message: String)", error.name.pascal())
                };
                Entry { name, ty: None, doc: text(self, api, &error.doc) }
            }
        }
    };
}

/// The Kotlin package uniffi-bindgen is configured with (see bindings/uniffi-bindgen).
fn uform_package() -> &'static str {
    "cloud.unum.uform"
}

style!(KotlinDocs, K, "kotlin", "Kotlin", "kotlin", Language::Kotlin);
style!(SwiftDocs, S, "swift", "Swift", "swift", Language::Swift);
