//! The pure-Python package `generated/python/uform/__init__.py` (records, enums, the exception hierarchy, the
//! native classes and functions re-exported) and its complete stubs `__init__.pyi`.

use super::{offered, ERROR_BASE, PY};
use crate::lang::{banner, class_doc};
use crate::model::*;
use crate::plan::CallPlan;
use crate::render::{template, Named, Rendered};

pub struct PyField {
    pub name: String,
    pub ty: String,
    pub doc: String,
}

pub struct PyVariant {
    pub name: String,
    pub value: String,
    pub doc: String,
}

pub struct PyErrorKind {
    pub name: String,
    pub builtin: &'static str,
    pub code: String,
    pub doc: String,
}

template! {
    "python/init.py"
    struct InitPy {
        banner: String,
        doc: String,
        version: String,
        exported: Vec<String>,
        parts: Vec<String>,
        native: Vec<String>,
        registered: Vec<String>,
    }
}

template! {
    "python/record.py"
    struct RecordPy {
        input: bool,
        name: String,
        doc: String,
        fields: Vec<PyField>,
    }
}

template! {
    "python/enum.py"
    struct EnumPy {
        name: String,
        bases: String,
        doc: String,
        variants: Vec<PyVariant>,
    }
}

template! {
    "python/error.py"
    struct ErrorPy {
        base: &'static str,
        doc: String,
        codes: String,
        kinds: Vec<PyErrorKind>,
    }
}

template! {
    "python/init.pyi"
    struct InitPyi {
        banner: String,
        doc: String,
        parts: Vec<String>,
    }
}

template! {
    "python/record.pyi"
    struct RecordPyi {
        input: bool,
        name: String,
        doc: String,
        fields: Vec<PyField>,
    }
}

template! {
    "python/enum.pyi"
    struct EnumPyi {
        name: String,
        bases: String,
        doc: String,
        variants: Vec<PyVariant>,
    }
}

template! {
    "python/class.pyi"
    struct ClassPyi {
        name: String,
        doc: String,
        members: Vec<String>,
        compiled_doc: String,
        has_free: bool,
    }
}

template! {
    "python/function.pyi"
    struct FunctionPyi {
        indent: &'static str,
        decorators: Vec<String>,
        name: String,
        params: String,
        returns: String,
        doc: String,
    }
}

template! {
    "python/error.pyi"
    struct ErrorPyi {
        base: &'static str,
        doc: String,
        kinds: Vec<PyErrorKind>,
    }
}

fn fields(api: &Api, r: &Record) -> Vec<PyField> {
    r.fields
        .iter()
        .map(|f| PyField {
            name: PY.member(&f.name),
            ty: PY.field_type(r, f),
            doc: PY.docstring(&PY.doc_text(api, &f.doc), "    "),
        })
        .collect()
}

fn enum_bases(e: &Enum) -> String {
    if e.is_string() {
        "str, _enum.Enum".into()
    } else {
        "_enum.IntEnum".into()
    }
}

fn variants(api: &Api, e: &Enum) -> Vec<PyVariant> {
    e.variants
        .iter()
        .map(|v| PyVariant {
            name: PY.variant(&v.name),
            value: match &v.value {
                EnumValue::String(s) => format!("{s:?}"),
                EnumValue::Number(_) => e.number(v).to_string(),
            },
            doc: PY.docstring(&PY.doc_text(api, &v.doc), "    "),
        })
        .collect()
}

fn error_kinds(api: &Api) -> Vec<PyErrorKind> {
    api.errors
        .iter()
        .map(|e| PyErrorKind {
            name: PY.error_class(e),
            builtin: PY.error_builtin(e),
            code: PY.error_code(e),
            doc: PY.docstring(&PY.doc_text(api, &e.doc), "    "),
        })
        .collect()
}

const ERROR_DOC: &str = "The error every failing call raises; `code` names its kind, the same set in every language, and the message names the argument and the value. Each kind's class also derives from the builtin exception a Python user would catch.";

pub(super) fn init_py(api: &Api) -> Rendered {
    let mut parts = Vec::new();
    let mut exported = Vec::new();
    let mut native = Vec::new();
    let mut registered = Vec::new();
    for item in &api.items {
        match item {
            Item::Record(r) => {
                let name = PY.type_name(&r.name);
                parts.push(
                    RecordPy {
                        input: r.direction == Direction::Input,
                        name: name.clone(),
                        doc: PY.docstring(&PY.doc_text(api, &r.doc), "    "),
                        fields: fields(api, r),
                    }
                    .rendered(format!("record {}", r.name.pascal()))?,
                );
                exported.push(name.clone());
                registered.push(name);
            }
            Item::Enum(e) => {
                let name = PY.type_name(&e.name);
                parts.push(
                    EnumPy {
                        name: name.clone(),
                        bases: enum_bases(e),
                        doc: PY.docstring(&PY.doc_text(api, &e.doc), "    "),
                        variants: variants(api, e),
                    }
                    .rendered(format!("enum {}", e.name.pascal()))?,
                );
                exported.push(name.clone());
                registered.push(name);
            }
            Item::Class(k) => {
                exported.push(PY.type_name(&k.name));
                native.push(PY.type_name(&k.name));
            }
            Item::Function(f) if offered(f) => {
                exported.push(PY.function(&f.name));
                native.push(PY.function(&f.name));
            }
            Item::Function(_) => {}
        }
    }
    let kinds = error_kinds(api);
    exported.push(ERROR_BASE.into());
    registered.push(ERROR_BASE.into());
    for k in &kinds {
        exported.push(k.name.clone());
        registered.push(k.name.clone());
    }
    parts.push(
        ErrorPy {
            base: ERROR_BASE,
            doc: PY.docstring(ERROR_DOC, "    "),
            codes: PY.docstring(
                &format!(
                    "The error's kind, the same set in every language: {}.",
                    kinds.iter().map(|k| format!("{:?}", k.code)).collect::<Vec<_>>().join(", ")
                ),
                "    ",
            ),
            kinds,
        }
        .rendered("errors")?,
    );
    let parts = parts.iter().map(|p| p.trim().to_string()).collect();
    InitPy {
        banner: banner("#"),
        doc: PY.docstring(&PY.doc_text(api, &api.doc), ""),
        version: api.version.clone(),
        exported,
        parts,
        native,
        registered,
    }
    .rendered("python/uform/__init__.py")
}

fn function_pyi(api: &Api, class: Option<&Class>, c: &Callable) -> Rendered {
    let indent = if class.is_some() { "    " } else { "" };
    let mut params: Vec<String> = Vec::new();
    let mut decorators = Vec::new();
    match (class, c.kind) {
        (Some(_), CallableKind::Constructor) => decorators.push("@staticmethod".to_string()),
        (Some(_), _) => params.push("self".into()),
        _ => {}
    }
    for (name, ty, default) in PY.params(api, c) {
        params.push(match (ty.is_empty(), default) {
            (true, _) => name,
            (false, Some(_)) => format!("{name}: {ty} = ..."),
            (false, None) => format!("{name}: {ty}"),
        });
    }
    let params = if params.len() > 3 {
        let lines: String = params.iter().map(|p| format!("\n{indent}    {p},")).collect();
        format!("{lines}\n{indent}")
    } else {
        params.join(", ")
    };
    FunctionPyi {
        indent,
        decorators,
        name: PY.function(&c.name),
        params,
        returns: PY.returns(&CallPlan::of(api, class, c).outcome),
        doc: PY.docstring(&PY.doc_text(api, &c.doc), &format!("{indent}    ")),
    }
    .rendered(crate::render::callable_item(class, c))
}

pub(super) fn init_pyi(api: &Api) -> Rendered {
    let mut parts = Vec::new();
    for item in &api.items {
        match item {
            Item::Record(r) => parts.push(
                RecordPyi {
                    input: r.direction == Direction::Input,
                    name: PY.type_name(&r.name),
                    doc: PY.docstring(&PY.doc_text(api, &r.doc), "    "),
                    fields: fields(api, r),
                }
                .rendered(format!("record {}", r.name.pascal()))?,
            ),
            Item::Enum(e) => parts.push(
                EnumPyi {
                    name: PY.type_name(&e.name),
                    bases: enum_bases(e).replace("_enum.", "enum."),
                    doc: PY.docstring(&PY.doc_text(api, &e.doc), "    "),
                    variants: variants(api, e),
                }
                .rendered(format!("enum {}", e.name.pascal()))?,
            ),
            Item::Class(k) => parts.push(
                ClassPyi {
                    name: PY.type_name(&k.name),
                    doc: PY.docstring(&class_doc(k, &|d| PY.doc_text(api, d)), "    "),
                    members: k
                        .members
                        .iter()
                        .filter(|m| offered(m))
                        .map(|m| function_pyi(api, Some(k), m))
                        .collect::<Rendered<_>>()?,
                    compiled_doc: PY.docstring(&PY.doc_text(api, &k.compiled_doc), "        "),
                    has_free: k.members.iter().any(|m| m.kind == CallableKind::Free && offered(m)),
                }
                .rendered(format!("class {}", k.name.pascal()))?,
            ),
            Item::Function(f) if offered(f) => parts.push(function_pyi(api, None, f)?),
            Item::Function(_) => {}
        }
    }
    parts.push(
        ErrorPyi { base: ERROR_BASE, doc: PY.docstring(ERROR_DOC, "    "), kinds: error_kinds(api) }
            .rendered("errors")?,
    );
    let parts = parts.iter().map(|p| p.trim().to_string()).collect();
    InitPyi { banner: banner("#"), doc: PY.docstring(&PY.doc_text(api, &api.doc), ""), parts }
        .rendered("python/uform/__init__.pyi")
}
