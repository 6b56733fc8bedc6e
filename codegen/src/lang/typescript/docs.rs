//! The JavaScript reference page: the seed page's shape, spelled by the TypeScript formatter.

use super::format::Ts;
use crate::lang::docs::{record_section, DocStyle, Entry, RecordSection};
use crate::model::*;
use crate::plan::CallPlan;
use crate::render::{Named, Rendered};

pub struct JsDocs;

const TS: Ts = Ts;

impl DocStyle for JsDocs {
    fn folder(&self) -> &'static str {
        "javascript"
    }
    fn language(&self) -> &'static str {
        "JavaScript"
    }
    fn fence(&self) -> &'static str {
        "typescript"
    }
    fn lang(&self) -> Language {
        Language::TypeScript
    }
    fn imports(&self, api: &Api, classes: &[&Class]) -> Vec<String> {
        let mut lines = vec![format!("import * as {0} from '{0}';", api.package)];
        lines.extend(classes.iter().map(|c| format!("import {{ {} }} from '{}';", TS.type_name(&c.name), api.package)));
        lines
    }
    fn spell(&self, api: &Api, r: &Reference) -> String {
        TS.reference(api, r)
    }
    fn heading(&self, item: &Item) -> String {
        match item {
            Item::Function(f) => TS.function(&f.name),
            other => TS.type_name(other.name()),
        }
    }
    fn member_heading(&self, _class: &Class, member: &Callable) -> String {
        TS.member(&member.name)
    }
    fn record_declaration(&self, api: &Api, record: &Record) -> String {
        match &record.compiled {
            Some(twin) => {
                let omitted: Vec<String> =
                    TS.narrowed_fields(api, record).iter().map(|f| format!("{:?}", TS.member(&f.name))).collect();
                format!(
                    "interface {} extends Omit<{}, {}>",
                    TS.type_name(&record.name),
                    TS.type_name(twin),
                    omitted.join(" | ")
                )
            }
            None => format!("interface {}", TS.type_name(&record.name)),
        }
    }
    fn record_entries(&self, api: &Api, record: &Record) -> Vec<Entry> {
        let fields: Vec<&Field> = match record.compiled {
            Some(_) => TS.narrowed_fields(api, record),
            None => record.fields.iter().collect(),
        };
        fields.into_iter().map(|f| self.field(api, record, f, false)).collect()
    }
    fn companions(&self, api: &Api, record: &Record) -> Rendered<Vec<String>> {
        let Some(twin) = &record.compiled else { return Ok(Vec::new()) };
        let section = RecordSection {
            heading: TS.type_name(twin),
            doc: format!(
                "{} The native layer's view, where enum fields cross as their raw values.",
                crate::lang::docs::text(self, api, &record.doc)
            ),
            fence: self.fence().into(),
            declaration: format!("interface {}", TS.type_name(twin)),
            mirrors: self.mirrors(&record.c_name),
            entries: record.fields.iter().map(|f| self.field(api, record, f, true)).collect(),
        };
        let _ = record_section;
        Ok(vec![section.rendered(format!("record {}", twin.pascal()))?])
    }
    fn enum_declaration(&self, _api: &Api, e: &Enum) -> String {
        format!("enum {}", TS.type_name(&e.name))
    }
    fn enum_entries(&self, api: &Api, e: &Enum) -> Vec<Entry> {
        e.variants
            .iter()
            .map(|v| Entry {
                name: TS.variant(&v.name),
                ty: Some(TS.variant_value(&v.value)),
                doc: crate::lang::docs::text(self, api, &v.doc),
            })
            .collect()
    }
    fn class_declaration(&self, _api: &Api, class: &Class) -> String {
        format!("class {} implements Disposable", TS.type_name(&class.name))
    }
    fn callable_declaration(&self, api: &Api, class: Option<&Class>, c: &Callable, plan: &CallPlan) -> Rendered {
        Ok({
            let keyword = match (class, c.kind) {
                (None, _) => "function ",
                (Some(_), CallableKind::Constructor) => "static ",
                _ => "",
            };
            let name = if class.is_some() { TS.member(&c.name) } else { TS.function(&c.name) };
            let params = TS.params_shown(api, c);
            let returns = TS.returns(api, plan, false);
            if params.len() > 1 {
                let lines: String = params.iter().map(|p| format!("    {p},\n")).collect();
                format!("{keyword}{name}(\n{lines}): {returns}")
            } else {
                format!("{keyword}{name}({}): {returns}", params.join(""))
            }
        })
    }
    fn bytes_note(&self, callable: &Callable) -> Option<String> {
        Some(Ts.bytes_note(callable))
    }
    fn param_name(&self, param: &Param) -> String {
        TS.member(&param.name)
    }
    fn compiled_declaration(&self, _api: &Api, class: &Class) -> Option<String> {
        Some(format!("readonly compiled: {}", TS.type_name(&class.compiled)))
    }
    fn errors_heading(&self) -> String {
        "UFormError".into()
    }
    fn errors_intro(&self) -> String {
        "The error every call throws; `code` names its kind, the same set in every language, and the message names the argument and the value.".into()
    }
    fn errors_declaration(&self, _api: &Api) -> String {
        "class UFormError extends Error {\n    readonly code: UFormErrorCode;\n}".into()
    }
    fn error_entry(&self, api: &Api, error: &ErrorKindDef) -> Entry {
        Entry {
            name: format!("{:?}", TS.error_code(error)),
            ty: None,
            doc: crate::lang::docs::text(self, api, &error.doc),
        }
    }
}

impl JsDocs {
    fn field(&self, api: &Api, record: &Record, f: &Field, compiled: bool) -> Entry {
        Entry {
            name: format!("{}{}", TS.member(&f.name), TS.field_mark(record, f)),
            ty: Some(TS.field_type(api, record, f, compiled)),
            doc: crate::lang::docs::text(self, api, &f.doc),
        }
    }
}
