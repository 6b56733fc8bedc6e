//! The pyo3 glue `generated/python/glue.rs` (included by `bindings/python`): one `#[pyclass]` per IDL class, one
//! `#[pyfunction]` per free function, readers and writers for records and enums, and the exception mapping.

use super::{offered, PY};
use crate::lang::banner;
use crate::model::*;
use crate::plan::{CallPlan, Callee, Kept, Passing, Receiver};
use crate::render::{template, Named, Rendered};

pub struct GlueField {
    pub name: String,
    pub read: String,
    pub write: String,
}

pub struct GlueVariant {
    pub rust: String,
    pub value: String,
}

template! {
    "python/glue.rs"
    struct GlueFile {
        banner: String,
        parts: Vec<String>,
        classes: Vec<String>,
        functions: Vec<String>,
    }
}

template! {
    "python/record.rs"
    struct GlueRecord {
        input: bool,
        py_name: String,
        snake: String,
        core: String,
        fields: Vec<GlueField>,
    }
}

template! {
    "python/enum.rs"
    struct GlueEnum {
        py_name: String,
        snake: String,
        core: String,
        is_string: bool,
        accepted: String,
        variants: Vec<GlueVariant>,
    }
}

template! {
    "python/class.rs"
    struct GlueClass {
        doc: String,
        py_name: String,
        name: String,
        core: String,
        members: Vec<String>,
        compiled_doc: String,
        free: Option<String>,
    }
}

template! {
    "python/function.rs"
    struct GlueFunction {
        doc: String,
        indent: &'static str,
        attributes: Vec<String>,
        name: String,
        params: String,
        returns: String,
        body: Vec<String>,
    }
}

template! {
    "python/error.rs"
    struct GlueError {
        kinds: Vec<(String, String)>,
    }
}

/// A `///` block at `indent`.
fn rust_doc(text: &str, indent: &str) -> String {
    crate::lang::wrap(text, 106usize.saturating_sub(indent.len()))
        .into_iter()
        .map(|l| if l.is_empty() { format!("{indent}///\n") } else { format!("{indent}/// {l}\n") })
        .collect()
}

fn glue_record(api: &Api, r: &Record) -> Rendered {
    let input = r.direction == Direction::Input;
    let fields = r
        .fields
        .iter()
        .map(|f| {
            let name = PY.member(&f.name);
            let reader = PY.reader(&f.ty);
            let read = if f.optional {
                format!("opt({name}, \"{name}\", {reader})?")
            } else {
                format!("required(py, {name}, \"{name}\", {reader})?")
            };
            let write = if matches!(f.ty, Type::Class(_)) {
                format!("// `{name}` holds a handle, only ever read from Python into a call.")
            } else if input && f.optional {
                let value = PY.writer(&format!("value.{name}"), &f.ty, true, false);
                format!("if value.{name}.is_some() {{ fields.set_item(\"{name}\", {value}?)?; }}")
            } else {
                format!(
                    "fields.set_item(\"{name}\", {}?)?;",
                    PY.writer(&format!("value.{name}"), &f.ty, f.optional, true)
                )
            };
            GlueField { name, read, write }
        })
        .collect();
    let _ = api;
    let record = GlueRecord {
        input,
        py_name: PY.type_name(&r.name),
        snake: r.name.snake(),
        core: PY.core_type(&r.name),
        fields,
    };
    Ok(record.rendered(format!("record {}", r.name.pascal()))?.trim().to_string())
}

fn glue_enum(e: &Enum) -> Rendered {
    let is_string = e.is_string();
    let value = |v: &Variant| match &v.value {
        EnumValue::String(s) => format!("{s:?}"),
        EnumValue::Number(_) => e.number(v).to_string(),
    };
    let accepted = e
        .variants
        .iter()
        .map(|v| format!("{}.{} ({})", PY.type_name(&e.name), PY.variant(&v.name), value(v).replace('"', "'")))
        .collect::<Vec<_>>()
        .join(", ");
    GlueEnum {
        py_name: PY.type_name(&e.name),
        snake: e.name.snake(),
        core: PY.core_type(&e.name),
        is_string,
        accepted: accepted.replace('{', "{{").replace('}', "}}"),
        variants: e.variants.iter().map(|v| GlueVariant { rust: v.name.pascal(), value: value(v) }).collect(),
    }
    .rendered(format!("enum {}", e.name.pascal()))
}

/// A default literal as the core's value.
fn core_literal(ty: &Type, literal: &Literal) -> String {
    match (ty, literal) {
        (Type::Enum(e), Literal::Variant(v)) => format!("{}::{}", PY.core_type(e), v.pascal()),
        (_, Literal::Integer(i)) => i.to_string(),
        (_, Literal::Float(f)) => format!("{f:?}"),
        (_, Literal::Bool(b)) => b.to_string(),
        (_, Literal::String(s)) => format!("{s:?}.to_string()"),
        _ => "Default::default()".into(),
    }
}

/// The core call of a plan with these arguments, calling `prefix` + the core function's name (`try_` for the
/// non-blocking attempt of a `try_first` call).
fn core_call(plan: &CallPlan, prefix: &str, args: &str) -> String {
    match &plan.callee {
        Callee::Constructor { class, name } => format!("{}::{prefix}{}({args})", PY.core_type(class), name.snake()),
        Callee::Method { name } => format!("self.core.{prefix}{}({args})", name.snake()),
        Callee::Function { name } => format!("uform_core::{prefix}{}({args})", name.snake()),
    }
}

fn glue_callable(api: &Api, class: Option<&Class>, c: &Callable) -> Rendered {
    let plan = CallPlan::of(api, class, c);
    let indent = if class.is_some() { "    " } else { "" };
    let mut rust_params: Vec<String> = Vec::new();
    if plan.receiver != Receiver::None {
        rust_params.push("&self".into());
    }
    rust_params.push("py: Python<'_>".into());
    let mut signature: Vec<String> = Vec::new();
    let mut body: Vec<String> = Vec::new();
    let mut core_args: Vec<String> = Vec::new();
    let mut keyword_only = false;
    for a in &plan.arguments {
        let name = PY.member(&a.name);
        match (&a.passing, &a.default) {
            // An input record spreads into keyword-only arguments; a required field is a required keyword.
            (Passing::Record { record: n, .. }, _) => {
                if !keyword_only {
                    signature.push("*".into());
                    keyword_only = true;
                }
                let fields: Vec<&Field> = api.record(n).map(|r| r.fields.iter().collect()).unwrap_or_default();
                let mut args = String::new();
                for f in &fields {
                    let field = PY.member(&f.name);
                    if f.optional {
                        signature.push(format!("{field}=None"));
                        rust_params.push(format!("{field}: Option<Bound<'_, PyAny>>"));
                        args.push_str(&format!(", {field}.as_ref()"));
                    } else {
                        signature.push(field.clone());
                        rust_params.push(format!("{field}: Bound<'_, PyAny>"));
                        args.push_str(&format!(", Some(&{field})"));
                    }
                }
                body.push(format!("let {name} = {}_from_kwargs(py{args})?;", n.snake()));
                core_args.push(name);
            }
            (Passing::Handle { class: k }, _) => {
                signature.push(name.clone());
                rust_params.push(format!("{name}: Bound<'_, {}>", PY.type_name(k)));
                body.push(format!("let {name}_core = &{name}.get().core;"));
                core_args.push(format!("{name}_core"));
            }
            (_, Some(default)) => {
                let ty = &a.ty;
                signature.push(format!("{name}=None"));
                rust_params.push(format!("{name}: Option<Bound<'_, PyAny>>"));
                body.push(format!(
                    "let {name} = opt({name}.as_ref(), \"{name}\", {})?.unwrap_or({});",
                    PY.reader(ty),
                    core_literal(ty, default)
                ));
                core_args.push(name);
            }
            (passing, None) => {
                let ty = &a.ty;
                signature.push(name.clone());
                rust_params.push(format!("{name}: Bound<'_, PyAny>"));
                body.push(format!("let {name} = {}?;", PY.read(ty, &format!("&{name}"), &format!("\"{name}\""))));
                // The core borrows each buffer in place (`&[&[u8]]`), while the `bytes` objects stay alive.
                if matches!(passing, Passing::List { element: Type::Bytes }) {
                    body.push(format!("let {name} = {name}.iter().map(|b| b.as_bytes()).collect::<Vec<&[u8]>>();"));
                }
                // The core borrows a list argument.
                core_args.push(if matches!(passing, Passing::List { .. }) { format!("&{name}") } else { name });
            }
        }
    }
    let args = core_args.join(", ");
    let call = core_call(&plan, "", &args);
    let guarded = if plan.throws { format!("guard(|| {call})") } else { format!("guard_value(|| {call})") };
    let run = match (plan.blocking, plan.try_first) {
        // Holding the GIL costs nothing when the call does not wait: release it only when the core says it must.
        (true, true) => {
            let attempt = core_call(&plan, "try_", &args);
            format!("match guard_value(|| {attempt}) {{ Ok(Some(done)) => done, Ok(None) => py.detach(|| {guarded}), Err(panic) => Err(panic) }}")
        }
        (true, false) => format!("py.detach(|| {guarded})"),
        _ => guarded,
    };
    if plan.returns_value() {
        body.push(format!("let value = {run}.map_err(|e| raise(py, e))?;"));
    } else {
        body.push(format!("{run}.map_err(|e| raise(py, e))?;"));
    }
    // The Python objects of the handles the new value holds stay alive as long as it does.
    let borrowed: Vec<String> = plan
        .keeps_alive
        .iter()
        .map(|k| match k {
            Kept::Argument { name } => format!("{}.clone().into_any().unbind()", PY.member(name)),
            Kept::Field { field, optional: false, .. } => format!("{}.clone().unbind()", PY.member(field)),
            // A keyword argument left out, or passed as None, keeps nothing.
            Kept::Field { field, optional: true, .. } => {
                format!("{}.as_ref().filter(|v| !v.is_none()).map(|v| v.clone().unbind())", PY.member(field))
            }
        })
        .collect();
    let any_optional = plan.keeps_alive.iter().any(|k| matches!(k, Kept::Field { optional: true, .. }));
    // The value's type, for the writer the result shares with record fields, as the plan lowers it.
    let returns = match (plan.kind, plan.outcome.lowering.ty()) {
        (CallableKind::Constructor, _) => {
            let kept = if any_optional {
                let each: Vec<String> = plan
                    .keeps_alive
                    .iter()
                    .zip(&borrowed)
                    .map(|(k, b)| match k {
                        Kept::Field { optional: true, .. } => b.clone(),
                        _ => format!("Some({b})"),
                    })
                    .collect();
                format!("[{}].into_iter().flatten().collect()", each.join(", "))
            } else {
                format!("vec![{}]", borrowed.join(", "))
            };
            body.push(format!("Ok(Self {{ core: value, _borrowed: {kept} }})"));
            "Self".to_string()
        }
        (_, Some(t)) if plan.constant => {
            // Made into a Python object on the first call; every later call hands out that object.
            body.pop();
            body.push("static VALUE: pyo3::sync::PyOnceLock<Py<PyAny>> = pyo3::sync::PyOnceLock::new();".into());
            body.push(format!(
                "let value = VALUE.get_or_try_init(py, || -> PyResult<Py<PyAny>> {{ let value = {run}.map_err(|e| raise(py, e))?; Ok(({})?.unbind()) }})?;",
                PY.writer("value", &t, plan.outcome.optional, false)
            ));
            body.push("Ok(value.clone_ref(py))".into());
            "Py<PyAny>".to_string()
        }
        (_, Some(t)) => {
            body.push(format!("Ok(({})?.unbind())", PY.writer("value", &t, plan.outcome.optional, false)));
            "Py<PyAny>".to_string()
        }
        (_, None) => {
            body.push("Ok(())".into());
            "()".to_string()
        }
    };
    let mut attributes = Vec::new();
    match (class, c.kind) {
        (None, _) => attributes.push("#[pyfunction]".to_string()),
        (Some(_), CallableKind::Constructor) => attributes.push("#[staticmethod]".to_string()),
        _ => {}
    }
    if !signature.is_empty() {
        attributes.push(format!("#[pyo3(signature = ({}))]", signature.join(", ")));
    }
    if rust_params.len() > 7 {
        attributes.push("#[allow(clippy::too_many_arguments)]".into());
    }
    GlueFunction {
        doc: rust_doc(&PY.doc_text(api, &c.doc), indent),
        indent,
        attributes,
        name: PY.rust_fn(None, &c.name),
        params: rust_params.join(", "),
        returns,
        body,
    }
    .rendered(crate::render::callable_item(class, c))
}

/// Reads a handle held in a record's field: the core value the Python object wraps.
fn class_from_py(k: &Class) -> String {
    let (name, snake) = (PY.type_name(&k.name), k.name.snake());
    let article = if name.starts_with(['A', 'E', 'I', 'O', 'U']) { "an" } else { "a" };
    format!(
        "#[allow(dead_code)]\nfn {snake}_from_py(value: &Bound<'_, PyAny>, argument: &str) -> PyResult<{core}> {{\n    match value.cast::<{name}>() {{\n        Ok(v) => Ok(v.get().core.clone()),\n        Err(_) => Err(pyo3::exceptions::PyTypeError::new_err(format!(\"`{{argument}}` must be {article} {name}, got {{}}\", value.get_type().name()?))),\n    }}\n}}\n",
        core = PY.core_type(&k.name)
    )
}

fn glue_class(api: &Api, k: &Class) -> Rendered {
    let members = k.members.iter().filter(|m| offered(m)).map(|m| glue_callable(api, Some(k), m));
    Ok(class_from_py(k)
        + &GlueClass {
            doc: rust_doc(&PY.doc_text(api, &k.doc), ""),
            py_name: PY.type_name(&k.name),
            name: PY.type_name(&k.name),
            core: PY.core_type(&k.name),
            members: members.collect::<Rendered<_>>()?,
            compiled_doc: PY.doc_text(api, &k.compiled_doc),
            free: k.members.iter().find(|m| m.kind == CallableKind::Free && offered(m)).map(|m| PY.member(&m.name)),
        }
        .rendered(format!("class {}", k.name.pascal()))?)
}

pub(super) fn glue_file(api: &Api) -> Rendered {
    let mut parts = Vec::new();
    let mut classes = Vec::new();
    let mut functions = Vec::new();
    for item in &api.items {
        match item {
            Item::Record(r) => parts.push(glue_record(api, r)?),
            Item::Enum(e) => parts.push(glue_enum(e)?),
            Item::Class(k) => {
                parts.push(glue_class(api, k)?);
                classes.push(PY.type_name(&k.name));
            }
            Item::Function(f) if offered(f) => {
                parts.push(glue_callable(api, None, f)?);
                functions.push(PY.rust_fn(None, &f.name));
            }
            Item::Function(_) => {}
        }
    }
    parts.push(
        GlueError { kinds: api.errors.iter().map(|e| (e.name.pascal(), PY.error_class(e))).collect() }
            .rendered("errors")?,
    );
    let parts = parts.iter().map(|p| p.trim().to_string()).collect();
    GlueFile { banner: banner("//"), parts, classes, functions }.rendered("python/glue.rs")
}
