//! The C reference page, spelled by the C formatter.

use super::format::C;
use super::{abi::lower, function_decl};
use crate::lang::docs::{text, DocStyle, Entry};
use crate::model::*;
use crate::plan::CallPlan;
use crate::render::Rendered;

pub struct CDocs;

const FMT: C = C;

impl DocStyle for CDocs {
    fn folder(&self) -> &'static str {
        "c"
    }
    fn language(&self) -> &'static str {
        "C"
    }
    fn fence(&self) -> &'static str {
        "c"
    }
    fn lang(&self) -> Language {
        Language::C
    }
    fn imports(&self, _api: &Api, _classes: &[&Class]) -> Vec<String> {
        vec!["#include <uform.h>".into()]
    }
    fn spell(&self, api: &Api, r: &Reference) -> String {
        FMT.reference(api, r)
    }
    fn heading(&self, item: &Item) -> String {
        match item {
            Item::Record(r) => r.c_name.clone(),
            Item::Enum(e) => e.c_name.clone(),
            Item::Class(k) => k.c_name.clone(),
            Item::Function(f) => f.c_name.clone(),
        }
    }
    fn member_heading(&self, _class: &Class, member: &Callable) -> String {
        member.c_name.clone()
    }
    /// A C function's name names its class already.
    fn qualified_member_heading(&self, class: &Class, member: &Callable) -> String {
        self.member_heading(class, member)
    }
    fn record_declaration(&self, _api: &Api, record: &Record) -> String {
        let mut decl = format!("typedef struct {0} {0};", record.c_name);
        if FMT.versioned(record) {
            decl.push_str(&format!(
                "\n#define {} {{ .struct_size = sizeof({}) }}",
                FMT.init_macro(record),
                record.c_name
            ));
        }
        decl
    }
    fn notes(&self, api: &Api) -> Vec<String> {
        let optional_bool = FMT.has_optional_bool(api).then_some(super::OPTIONAL_BOOL);
        [Some(super::GROWTH), optional_bool]
            .into_iter()
            .flatten()
            .filter_map(|note| note.split_once(": "))
            .map(|(title, body)| {
                let mut chars = body.chars();
                let first = chars.next().map(|c| c.to_uppercase().collect::<String>()).unwrap_or_default();
                format!("## {title}\n\n{first}{}\n", chars.as_str())
            })
            .collect()
    }
    fn record_entries(&self, api: &Api, record: &Record) -> Vec<Entry> {
        let size = FMT.versioned(record).then(|| Entry {
            name: "struct_size".into(),
            ty: Some("uint32_t".into()),
            doc: FMT.struct_size_doc(record),
        });
        size.into_iter()
            .chain(record.fields.iter().flat_map(|f| {
                let mut doc = text(self, api, &f.doc);
                if let Some(note) = FMT.field_note(record, f) {
                    doc.push(' ');
                    doc.push_str(&note);
                }
                FMT.field(api, record, f)
                    .into_iter()
                    .enumerate()
                    .map(|(i, decl)| {
                        let (ty, name) = split(&decl);
                        let doc = if i == 0 {
                            doc.clone()
                        } else {
                            format!("The number of elements of `{}`.", f.name.snake())
                        };
                        Entry { name, ty: Some(ty), doc }
                    })
                    .collect::<Vec<_>>()
            }))
            .collect()
    }
    fn mirrors(&self, _c_name: &str) -> Option<String> {
        None
    }
    fn enum_declaration(&self, _api: &Api, e: &Enum) -> String {
        format!("typedef enum {0} {0};", e.c_name)
    }
    fn enum_entries(&self, api: &Api, e: &Enum) -> Vec<Entry> {
        e.variants
            .iter()
            .map(|v| {
                let mut doc = text(self, api, &v.doc);
                if let EnumValue::String(s) = &v.value {
                    doc = format!("{s:?} in other languages. {doc}");
                }
                Entry { name: FMT.constant(e, v), ty: Some(e.number(v).to_string()), doc }
            })
            .collect()
    }
    fn class_declaration(&self, _api: &Api, class: &Class) -> String {
        format!("typedef struct {0} {0};", class.c_name)
    }
    fn callable_declaration(&self, api: &Api, class: Option<&Class>, c: &Callable, plan: &CallPlan) -> Rendered {
        Ok({
            let decl = function_decl(&FMT, api, class, c)?;
            let prototype =
                decl.lines().filter(|l| !l.starts_with("/*") && !l.starts_with(" *")).collect::<Vec<_>>().join("\n");
            let lowered = lower(plan);
            let params: Vec<String> = lowered.slots.iter().flat_map(|s| FMT.slot(api, s)).collect();
            if params.len() > 1 {
                let open = prototype.find('(').unwrap_or(0);
                let lines: Vec<String> = params.iter().map(|p| format!("    {p}")).collect();
                format!("{}(\n{}\n);", &prototype[..open], lines.join(",\n"))
            } else {
                prototype
            }
        })
    }
    fn bytes_note(&self, _callable: &Callable) -> Option<String> {
        Some(C.bytes_note())
    }
    fn param_name(&self, param: &Param) -> String {
        param.name.snake()
    }
    fn compiled_declaration(&self, _api: &Api, _class: &Class) -> Option<String> {
        None
    }
    fn errors_heading(&self) -> String {
        "uform_status_t".into()
    }
    fn errors_intro(&self) -> String {
        "Every call that can fail returns a status: zero is success, each error kind has its own value, and \
         `uform_last_error_message()` gives the calling thread's last message, naming the argument and the value."
            .into()
    }
    fn errors_declaration(&self, _api: &Api) -> String {
        "typedef enum uform_status_t uform_status_t;\nconst char *uform_last_error_message(void);\nconst char *uform_status_name(uform_status_t status);".into()
    }
    fn error_entry(&self, api: &Api, error: &ErrorKindDef) -> Entry {
        Entry {
            name: format!("{} = {}", FMT.status_constant(Some(error)), error.status),
            ty: None,
            doc: text(self, api, &error.doc),
        }
    }
}

/// Splits `const char *name` into its type and name.
fn split(decl: &str) -> (String, String) {
    let at = decl.rfind([' ', '*']).map_or(0, |i| i + 1);
    (decl[..at].trim_end().to_string(), decl[at..].to_string())
}
