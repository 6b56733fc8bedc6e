//! The Python reference page: the seed page's shape, spelled by the Python formatter.

use super::format::Py;
use super::ERROR_BASE;
use crate::lang::docs::{text, DocStyle, Entry};
use crate::model::*;
use crate::plan::CallPlan;
use crate::render::Rendered;

pub struct PythonDocs;

const PY: Py = Py;

impl DocStyle for PythonDocs {
    fn folder(&self) -> &'static str {
        "python"
    }
    fn language(&self) -> &'static str {
        "Python"
    }
    fn fence(&self) -> &'static str {
        "python"
    }
    fn lang(&self) -> Language {
        Language::Python
    }
    fn imports(&self, api: &Api, classes: &[&Class]) -> Vec<String> {
        let mut lines = vec![format!("import {}", api.package)];
        lines.extend(classes.iter().map(|c| format!("from {} import {}", api.package, PY.type_name(&c.name))));
        lines
    }
    fn spell(&self, api: &Api, r: &Reference) -> String {
        PY.reference(api, r)
    }
    fn heading(&self, item: &Item) -> String {
        match item {
            Item::Function(f) => PY.function(&f.name),
            other => PY.type_name(other.name()),
        }
    }
    fn member_heading(&self, _class: &Class, member: &Callable) -> String {
        PY.member(&member.name)
    }
    fn record_declaration(&self, _api: &Api, record: &Record) -> String {
        match record.direction {
            Direction::Input => format!("class {}(TypedDict, total=False)", PY.type_name(&record.name)),
            Direction::Output => format!("@dataclass(frozen=True)\nclass {}", PY.type_name(&record.name)),
        }
    }
    fn record_entries(&self, api: &Api, record: &Record) -> Vec<Entry> {
        record
            .fields
            .iter()
            .map(|f| Entry {
                name: PY.member(&f.name),
                ty: Some(PY.field_type(record, f)),
                doc: text(self, api, &f.doc),
            })
            .collect()
    }
    fn enum_declaration(&self, _api: &Api, e: &Enum) -> String {
        let bases = if e.is_string() { "str, Enum" } else { "IntEnum" };
        format!("class {}({bases})", PY.type_name(&e.name))
    }
    fn enum_entries(&self, api: &Api, e: &Enum) -> Vec<Entry> {
        e.variants
            .iter()
            .map(|v| Entry {
                name: PY.variant(&v.name),
                ty: Some(match &v.value {
                    EnumValue::String(s) => format!("{s:?}"),
                    EnumValue::Number(_) => e.number(v).to_string(),
                }),
                doc: text(self, api, &v.doc),
            })
            .collect()
    }
    fn class_declaration(&self, _api: &Api, class: &Class) -> String {
        let name = PY.type_name(&class.name);
        if class.members.iter().any(|m| m.kind == CallableKind::Free) {
            format!("class {name}  # a context manager: `with` frees it on exit")
        } else {
            format!("class {name}")
        }
    }
    fn callable_declaration(&self, api: &Api, class: Option<&Class>, c: &Callable, plan: &CallPlan) -> Rendered {
        Ok({
            let decorator = match (class, c.kind) {
                (Some(_), CallableKind::Constructor) => "@staticmethod\n",
                _ => "",
            };
            let mut params: Vec<String> = Vec::new();
            if class.is_some() && c.kind != CallableKind::Constructor {
                params.push("self".into());
            }
            for (name, ty, default) in PY.params(api, c) {
                params.push(match (ty.is_empty(), default) {
                    (true, _) => name,
                    (false, Some(d)) => format!("{name}: {ty} = {d}"),
                    (false, None) => format!("{name}: {ty}"),
                });
            }
            let returns = PY.returns(&plan.outcome);
            let name = PY.function(&c.name);
            if params.len() > 2 {
                let lines: String = params.iter().map(|p| format!("    {p},\n")).collect();
                format!("{decorator}def {name}(\n{lines}) -> {returns}")
            } else {
                format!("{decorator}def {name}({}) -> {returns}", params.join(", "))
            }
        })
    }
    /// A record parameter spreads into keyword arguments, so it reads as `**options`: what
    /// `Mesh.bootstrap(ex, **mesh_options_from_environment())` passes.
    fn bytes_note(&self, _callable: &Callable) -> Option<String> {
        Some(Py.bytes_note())
    }
    fn param_name(&self, param: &Param) -> String {
        match (&param.ty, &param.default) {
            (Type::Record(_), Some(Literal::EmptyRecord)) => format!("**{}", PY.member(&param.name)),
            _ => PY.member(&param.name),
        }
    }
    fn compiled_declaration(&self, _api: &Api, class: &Class) -> Option<String> {
        let name = PY.type_name(&class.name);
        Some(format!("@property\ndef compiled(self) -> {name}  # the object itself"))
    }
    fn errors_heading(&self) -> String {
        ERROR_BASE.into()
    }
    fn errors_intro(&self) -> String {
        "The error every failing call raises; `code` names its kind, the same set in every language, and the message names the argument and the value. Each kind has its own subclass that also derives from the builtin exception a Python user would catch; wrong Python types raise `TypeError`.".into()
    }
    fn errors_declaration(&self, _api: &Api) -> String {
        format!("class {ERROR_BASE}(Exception):\n    code: str")
    }
    fn error_entry(&self, api: &Api, error: &ErrorKindDef) -> Entry {
        Entry {
            name: {
                let (class, builtin) = (PY.error_class(error), PY.error_builtin(error));
                // `uform.TimeoutError` derives from the builtin of the same name.
                let builtin = if class == builtin { format!("builtins.{builtin}") } else { builtin.to_string() };
                format!("{class}({ERROR_BASE}, {builtin})")
            },
            ty: None,
            doc: format!("`code` {:?}. {}", PY.error_code(error), text(self, api, &error.doc)),
        }
    }
}
