//! The napi-rs glue of the Node package (`generated/node/glue.rs`, included by `bindings/node`): one `#[napi]`
//! class per IDL class under its compiled name, `FromJs`/`ToJs` conversions for records and enums, one `#[napi]`
//! function per free function. JavaScript spellings (property keys, `js_name`s, enum values) come from the
//! TypeScript formatter; the Rust side names the core's types, which have the IDL's shape.

use super::format::Ts;
use crate::lang::banner;
use crate::model::*;
use crate::plan::{CallPlan, Callee, Lowering, Outcome, Passing};
use crate::render::{template, Named, Rendered};
use crate::Output;

/// The Rust spelling of the glue: core paths and the types the validating readers produce.
struct Glue;

impl Glue {
    fn core(&self, name: &Name) -> String {
        format!("uform_core::{}", name.pascal())
    }

    /// The type a value is read as with `FromJs` (an address reads as `Address`, a bigint).
    fn read_type(&self, ty: &Type) -> String {
        match ty {
            Type::U32 => "u32".into(),
            Type::U64 => "u64".into(),
            Type::I32 => "i32".into(),
            Type::F64 => "f64".into(),
            Type::Bool => "bool".into(),
            Type::String | Type::Path | Type::GpuClass => "String".into(),
            Type::Address => "Address".into(),
            Type::F32Matrix => "uform_core::F32Matrix".into(),
            // Read only through `borrowed_bytes`/`owned_bytes` (see `read_params`).
            Type::Bytes => "Vec<u8>".into(),
            Type::List(inner) => format!("Vec<{}>", self.read_type(inner)),
            Type::Enum(n) | Type::Record(n) => self.core(n),
            Type::Class(_) => "()".into(),
        }
    }

    /// What turns a read value into the core's value (a `.0` off addresses).
    fn after_read(&self, ty: &Type) -> &'static str {
        match ty {
            Type::Address => ".0",
            Type::List(inner) if **inner == Type::Address => ".into_iter().map(|a| a.0).collect()",
            _ => "",
        }
    }

    /// Reads `js` (an expression of type `Js`) as `ty`, naming `argument` (an expression of type `&str`).
    fn read(&self, ty: &Type, js: &str, argument: &str, optional: bool) -> String {
        let after = self.after_read(ty);
        let t = self.read_type(ty);
        if optional {
            let map = if after.is_empty() { String::new() } else { format!(".map(|v| v{after})") };
            format!("optional::<{t}>({js}, {argument})?{map}")
        } else {
            format!("required::<{t}>({js}, {argument})?{after}")
        }
    }

    /// A borrowed core value as something `ToJs` writes (addresses become bigints).
    fn written(&self, ty: &Type, value: &str) -> String {
        match ty {
            Type::Address => format!("&Address(*{value})"),
            Type::List(inner) if **inner == Type::Address && value == "v" => {
                "&v.iter().map(|a| Address(*a)).collect::<Vec<_>>()".into()
            }
            Type::List(inner) if **inner == Type::Address => {
                format!("&{value}.iter().map(|a| Address(*a)).collect::<Vec<_>>()")
            }
            _ => value.to_string(),
        }
    }

    fn literal(&self, ty: &Type, literal: &Literal) -> String {
        match (literal, ty) {
            (Literal::EmptyRecord, _) => "Default::default()".into(),
            (Literal::Variant(v), Type::Enum(e)) => format!("{}::{}", self.core(e), v.pascal()),
            (Literal::Integer(n), _) => n.to_string(),
            (Literal::Float(f), _) => format!("{f:?}"),
            (Literal::Bool(b), _) => b.to_string(),
            (Literal::String(s), _) => format!("{s:?}.to_string()"),
            (Literal::Variant(v), _) => v.pascal(),
        }
    }
}

pub struct VariantRs {
    pub core: String,
    pub number: i64,
    pub js_name_lit: String,
    pub js_value: String,
}

template! {
    "node/enum.rs"
    struct EnumRs {
        core: String,
        js_name_lit: String,
        string: bool,
        variants: Vec<VariantRs>,
    }
}

pub struct FieldRs {
    pub rust: String,
    pub read: String,
    pub write: String,
}

template! {
    "node/record.rs"
    struct RecordRs {
        core: String,
        input: bool,
        /// An input record with a required field: absent is a missing argument, not "every field absent".
        required: bool,
        /// A record holding a handle is only ever read.
        writable: bool,
        fields: Vec<FieldRs>,
    }
}

template! {
    "node/callable.rs"
    struct CallableRs {
        indent: &'static str,
        factory: bool,
        js_name_lit: String,
        rust_name: String,
        params: String,
        returns: String,
        body: Vec<String>,
    }
}

template! {
    "node/class.rs"
    struct ClassRs {
        name: String,
        compiled: String,
        core: String,
        handles: String,
        members: Vec<String>,
        fast: Vec<String>,
    }
}

template! {
    "node/glue.rs"
    struct GlueRs {
        banner: String,
        parts: Vec<String>,
        fast: Vec<(String, String)>,
    }
}

fn enumeration(ts: &Ts, g: &Glue, e: &Enum) -> Rendered {
    EnumRs {
        core: g.core(&e.name),
        js_name_lit: format!("{:?}", ts.type_name(&e.name)),
        string: e.is_string(),
        variants: e
            .variants
            .iter()
            .map(|v| VariantRs {
                core: v.name.pascal(),
                number: e.number(v),
                js_name_lit: format!("{:?}", ts.variant(&v.name)),
                js_value: match &v.value {
                    EnumValue::String(s) => format!("{s:?}"),
                    EnumValue::Number(n) => format!("{n}f64"),
                },
            })
            .collect(),
    }
    .rendered(format!("enum {}", e.name.pascal()))
}

fn record(ts: &Ts, g: &Glue, r: &Record) -> Rendered {
    let input = r.direction == Direction::Input;
    let fields = r
        .fields
        .iter()
        .map(|f| {
            let (rust, js) = (f.name.snake(), ts.member(&f.name));
            let key = format!("{js:?}");
            // A field names itself by its JavaScript spelling; the record's `fields_of` puts the parameter's path in
            // front (`config.cpuClass`), as the core's messages and the wrapper's spell it.
            let read = match &f.ty {
                // The wrapper passes a handle argument as its number (see `FAST`); the core value is shared.
                Type::Class(k) if f.optional => format!(
                    "optional::<u32>(object.field({key})?, {key})?.map(|number| {}.get(number, {:?}, {key})).transpose()?",
                    handles_of(k),
                    ts.type_name(k)
                ),
                Type::Class(k) => format!(
                    "{}.get(required::<u32>(object.field({key})?, {key})?, {:?}, {key})?",
                    handles_of(k),
                    ts.type_name(k)
                ),
                _ => g.read(&f.ty, &format!("object.field({key})?"), &key, f.optional),
            };
            let write = match (f.optional, input) {
                (false, _) => format!("object.set({key}, {})", g.written(&f.ty, &format!("&self.{rust}"))),
                (true, _) => {
                    let method = if input { "set_optional" } else { "set_nullable" };
                    match g.written(&f.ty, "v") {
                        same if same == "v" => format!("object.{method}({key}, self.{rust}.as_ref())"),
                        converted => format!(
                            "object.{method}({key}, self.{rust}.as_ref().map(|v| {}).as_ref())",
                            converted.trim_start_matches('&')
                        ),
                    }
                }
            };
            FieldRs { rust, read, write }
        })
        .collect();
    let required = input && r.fields.iter().any(|f| !f.optional);
    let writable = !r.fields.iter().any(|f| matches!(f.ty, Type::Class(_)));
    let record = RecordRs { core: g.core(&r.name), input, required, writable, fields };
    Ok(record.rendered(format!("record {}", r.name.pascal()))?.trim().to_string())
}

/// Reads a callable's non-class parameters: one `let` per parameter, from the JavaScript value `source(i, name)`.
fn read_params(ts: &Ts, g: &Glue, c: &Callable, source: &dyn Fn(usize, &str) -> String) -> Vec<String> {
    let mut lines = Vec::new();
    for (i, p) in c.params.iter().enumerate() {
        let (rust, js) = (p.name.snake(), ts.member(&p.name));
        if matches!(p.ty, Type::Class(_)) {
            continue;
        }
        let js_value = source(i, &rust);
        // Byte buffers are borrowed in place for a blocking call, and copied for a Promise twin's worker thread.
        if p.ty == Type::List(Box::new(Type::Bytes)) {
            let reader = if c.is_twin() { "owned_bytes" } else { "borrowed_bytes" };
            lines.push(format!("let {rust} = {reader}({js_value}, {js:?})?;"));
            continue;
        }
        let read = match &p.default {
            Some(Literal::EmptyRecord) => {
                format!("{}.unwrap_or_default()", g.read(&p.ty, &js_value, &format!("{js:?}"), true))
            }
            Some(d) => {
                format!("{}.unwrap_or({})", g.read(&p.ty, &js_value, &format!("{js:?}"), true), g.literal(&p.ty, d))
            }
            None => g.read(&p.ty, &js_value, &format!("{js:?}"), false),
        };
        lines.push(format!("let {rust} = {read};"));
    }
    lines
}

/// The core call of a plan, run under the panic guard. `receiver` is the core handle of a method; a handle
/// argument is the core handle in `<name>.inner` (napi-rs's `&Compiled…`), or in `<name>` itself with `by_number`.
fn core_call(g: &Glue, plan: &CallPlan, receiver: &str, by_number: bool) -> String {
    let args: Vec<String> = plan
        .arguments
        .iter()
        .map(|a| match a.passing {
            Passing::Handle { .. } if by_number => format!("&{}", a.name.snake()),
            Passing::Handle { .. } => format!("&{}.inner", a.name.snake()),
            // A Promise twin owns the buffers it copied; the core borrows them (`&[&[u8]]`).
            Passing::List { element: Type::Bytes } if plan.twin_of.is_some() => {
                format!("&{}.iter().map(Vec::as_slice).collect::<Vec<_>>()", a.name.snake())
            }
            Passing::List { .. } => format!("&{}", a.name.snake()),
            _ => a.name.snake(),
        })
        .collect();
    // A Promise twin's plan calls the blocking form.
    let callee = match &plan.callee {
        Callee::Constructor { class, name } => format!("{}::{}", g.core(class), name.snake()),
        Callee::Method { name } => format!("{receiver}.{}", name.snake()),
        Callee::Function { name } => format!("uform_core::{}", name.snake()),
    };
    let call = format!("{callee}({})", args.join(", "));
    if plan.throws {
        format!("guard(|| {call})")
    } else {
        format!("guard(|| Ok({call}))")
    }
}

/// The expression that turns `value` (the call's result, as the plan lowers it) into a JavaScript value in `env`.
fn write_result(g: &Glue, outcome: &Outcome, env: &str) -> String {
    let Some(ty) = outcome.lowering.ty() else { return format!("undefined({env})?") };
    if outcome.lowering == Lowering::Matrix {
        // Moved, not borrowed: the matrix's buffer becomes the Float32Array's.
        return format!("f32_matrix({env}, value)?");
    }
    let write = |v: &str| format!("{}.to_js({env})", g.written(&ty, v).trim_start_matches('&'));
    if outcome.optional {
        format!("match &value {{ Some(v) => {}?, None => null({env})? }}", write("v"))
    } else {
        format!("{}?", write("value"))
    }
}

/// One `#[napi]` function or method: read the arguments, call the core under the panic guard, write the result.
fn callable(ts: &Ts, g: &Glue, api: &Api, class: Option<&Class>, c: &Callable) -> Rendered {
    let mut params = Vec::new();
    if class.is_some() && c.kind != CallableKind::Constructor {
        params.push("&self".to_string());
    }
    let plan = CallPlan::of(api, class, c);
    let wants_env = plan.returns_value() && plan.kind != CallableKind::Constructor;
    if wants_env {
        params.push("env: Env".to_string());
    }
    for p in &c.params {
        let rust = p.name.snake();
        match &p.ty {
            // A class argument is its compiled handle; napi-rs checks the type tag before the borrow.
            Type::Class(k) => {
                let compiled = api.class(k).map_or_else(|| k.pascal(), |k| k.compiled.pascal());
                params.push(format!("{rust}: &{compiled}"));
            }
            _ => params.push(format!("{rust}: Unknown<'_>")),
        }
    }
    let mut body = read_params(ts, g, c, &|_, rust| format!("Js::of(&{rust})"));
    let guarded = core_call(g, &plan, "self.inner", false);
    let returns = match (class, plan.kind, &plan.outcome.lowering) {
        (Some(k), CallableKind::Constructor, _) => {
            body.push(format!("let inner = {guarded}?;"));
            body.push(format!("let handle = {}.insert(inner.clone());", handles(k)));
            body.push(format!("Ok({} {{ inner, handle }})", k.compiled.pascal()));
            k.compiled.pascal()
        }
        (_, _, Lowering::Unit) => {
            body.push(guarded);
            "()".into()
        }
        _ => {
            body.push(format!("let value = {guarded}?;"));
            body.push(format!("Ok(Out({}))", write_result(g, &plan.outcome, "env.raw()")));
            "Out".into()
        }
    };
    CallableRs {
        indent: if class.is_some() { "    " } else { "" },
        factory: c.kind == CallableKind::Constructor,
        js_name_lit: format!("{:?}", if class.is_some() { ts.member(&c.name) } else { ts.function(&c.name) }),
        rust_name: c.name.snake(),
        params: params.join(", "),
        returns,
        body,
    }
    .rendered(crate::render::callable_item(class, c))
}

/// The registry of a class's core handles, by number.
fn handles(k: &Class) -> String {
    handles_of(&k.name)
}

fn handles_of(class: &Name) -> String {
    format!("{}_HANDLES", class.screaming())
}

/// A raw napi callback around `body`, which reads its first `arguments` arguments from `args` and returns
/// `Result<Option<napi_value>>`: the one shape of every function in the glue's `FAST` list.
fn raw_callback(doc: &str, name: &str, arguments: usize, body: Vec<String>) -> String {
    let mut out = format!(
        "/// {doc}\nunsafe extern \"C\" fn {name}(env: sys::napi_env, info: sys::napi_callback_info) -> sys::napi_value {{\n    // SAFETY: napi calls this callback with its own env and info.\n    unsafe {{\n        raw_call::<{arguments}>(env, info, |args| {{\n"
    );
    for line in body {
        out.push_str(&format!("            {line}\n"));
    }
    out.push_str("        })\n    }\n}");
    out
}

/// The last lines of a raw callback: run the guarded core call and hand back its result, if any.
fn finish_raw(body: &mut Vec<String>, g: &Glue, plan: &CallPlan, guarded: &str) {
    if plan.returns_value() {
        body.push(format!("let value = {guarded}?;"));
        body.push(format!("Ok(Some({}))", write_result(g, &plan.outcome, "args.env()")));
    } else {
        body.push(format!("{guarded}?;"));
        body.push("Ok(None)".into());
    }
}

/// The raw napi callback of a free function (napi-rs's own conversion costs ~100 ns a call once a function takes
/// an argument or the `Env`); registered under the function's JavaScript name.
fn raw_function(ts: &Ts, g: &Glue, api: &Api, c: &Callable) -> String {
    let mut body = read_params(ts, g, c, &|i, _| format!("args.get({i})"));
    let plan = CallPlan::of(api, None, c);
    finish_raw(&mut body, g, &plan, &core_call(g, &plan, "", false));
    raw_callback(&format!("`{}()`.", ts.function(&c.name)), &format!("fn_{}", c.name.snake()), c.params.len(), body)
}

/// The raw napi callback behind an instance method, taking the handle number and then the method's arguments.
fn fast(ts: &Ts, g: &Glue, api: &Api, k: &Class, c: &Callable) -> String {
    if c.is_twin() {
        return promise(ts, g, api, k, c);
    }
    let mut body = vec![
        "let handle = required::<u32>(args.get(0), \"handle\")?;".to_string(),
        format!("let inner = {}.get(handle, {:?}, {:?})?;", handles(k), ts.type_name(&k.name), ts.member(&c.name)),
    ];
    body.extend(read_params(ts, g, c, &|i, _| format!("args.get({})", i + 1)));
    let plan = CallPlan::of(api, Some(k), c);
    finish_raw(&mut body, g, &plan, &core_call(g, &plan, "inner", false));
    let doc = format!(
        "`{}.{}` for the wrapper: `{}(handle, …)`.",
        k.compiled.pascal(),
        ts.member(&c.name),
        ts.fast_function(&k.name, &c.name)
    );
    raw_callback(&doc, &format!("fast_{}_{}", k.name.snake(), c.name.snake()), c.params.len() + 1, body)
}

/// The raw napi callback behind a Promise twin (see `node_view`): reads the arguments on the event loop (a method
/// takes its handle number first; a class argument crosses as its number), then hands the blocking core call to
/// `offload`, which runs it on a libuv pool thread and settles the promise it returns with the written result.
fn promise(ts: &Ts, g: &Glue, api: &Api, k: &Class, c: &Callable) -> String {
    let plan = CallPlan::of(api, Some(k), c);
    let method = plan.kind != CallableKind::Constructor;
    let first = usize::from(method);
    let mut body = Vec::new();
    if method {
        body.push("let handle = required::<u32>(args.get(0), \"handle\")?;".to_string());
        body.push(format!(
            "let inner = {}.get(handle, {:?}, {:?})?;",
            handles(k),
            ts.type_name(&k.name),
            ts.member(&c.name)
        ));
    }
    for (i, p) in c.params.iter().enumerate() {
        if let Type::Class(class) = &p.ty {
            let js = format!("{:?}", ts.member(&p.name));
            body.push(format!(
                "let {} = {}.get(required::<u32>(args.get({}), {js})?, {:?}, {js})?;",
                p.name.snake(),
                handles_of(class),
                i + first,
                ts.type_name(class)
            ));
        }
    }
    body.extend(read_params(ts, g, c, &|i, _| format!("args.get({})", i + first)));
    let mut call = core_call(g, &plan, "inner", true);
    if method {
        // In flight from now on, not from when a pool thread picks it up: a `free` right after is in use, and a
        // `drain` waits for it (the core's `begin_call`, which every class with an async method has).
        body.push(format!("let in_flight = guard(|| inner.begin_call({:?}))?;", ts.member(&c.name)));
        call = format!("{{ let value = {call}; drop(in_flight); value }}");
    }
    let (value, write) = match (plan.kind, &plan.outcome.lowering) {
        (CallableKind::Constructor, _) => (
            "inner",
            format!(
                "let handle = {}.insert(inner.clone()); instance(env, {} {{ inner, handle }})",
                handles(k),
                k.compiled.pascal()
            ),
        ),
        (_, Lowering::Unit) => ("_", "undefined(env)".into()),
        _ => {
            let write = write_result(g, &plan.outcome, "env");
            let write = match write.strip_suffix('?') {
                Some(expr) if !write.starts_with("match") => expr.to_string(),
                _ => format!("Ok({write})"),
            };
            ("value", write)
        }
    };
    body.push(format!("Ok(Some(offload(args.env(), move || {call}, move |env, {value}| {{ {write} }})?))"));
    let doc = format!(
        "`{}.{}` for the wrapper: `{}({}…)`, returning a promise.",
        ts.type_name(&k.name),
        ts.member(&c.name),
        ts.fast_function(&k.name, &c.name),
        if method { "handle, " } else { "" }
    );
    raw_callback(&doc, &format!("fast_{}_{}", k.name.snake(), c.name.snake()), c.params.len() + first, body)
}

/// The raw napi callbacks behind the wrapper's quiet checks (see `Quiet` in the formatter): the class's word, once
/// per class, and the expected word of each `try_first` method.
fn quiet_functions(ts: &Ts, g: &Glue, api: &Api, k: &Class) -> Vec<(String, String, String)> {
    let plans: Vec<(&Callable, crate::lang::typescript::format::Quiet)> =
        k.members.iter().filter_map(|m| Some((m, ts.quiet_of(api, k, m)?))).collect();
    let Some((_, first)) = plans.first() else { return Vec::new() };
    let raw = |js: &str, rust: &str, doc: String, arguments: usize, body: Vec<String>| {
        (js.to_string(), rust.to_string(), raw_callback(&doc, rust, arguments, body))
    };
    let class = ts.type_name(&k.name);
    let mut out = vec![raw(
        &first.word,
        &format!("fast_{}_quiet", k.name.snake()),
        format!(
            "`{}(handle)`: the {class}'s quiet word, as a 4-byte external `ArrayBuffer` the wrapper reads.",
            first.word
        ),
        1,
        vec![
            "let handle = required::<u32>(args.get(0), \"handle\")?;".into(),
            format!("let inner = {}.get(handle, {class:?}, \"quiet\")?;", handles(k)),
            "Ok(Some(quiet_buffer(args.env(), inner.quiet())?))".into(),
        ],
    )];
    for (m, plan) in &plans {
        let mut body = read_params(ts, g, m, &|i, _| format!("args.get({i})"));
        let args: Vec<String> = m.params.iter().map(|p| p.name.snake()).collect();
        body.push(format!(
            "Ok(Some(f64::from({}::{}_quiet_when({})).to_js(args.env())?))",
            g.core(&k.name),
            m.name.snake(),
            args.join(", ")
        ));
        let member = ts.member(&m.name);
        out.push(raw(
            &plan.expected,
            &format!("fast_{}_{}_quiet", k.name.snake(), m.name.snake()),
            format!(
                "`{}(…)`: what the quiet word holds while `{member}(…)` with these arguments would change nothing.",
                plan.expected
            ),
            m.params.len().max(1),
            body,
        ));
    }
    out
}

fn class(ts: &Ts, g: &Glue, api: &Api, k: &Class) -> Rendered {
    let members = k.members.iter().filter(|m| m.offered_in(Language::TypeScript));
    let mut fast_functions: Vec<String> =
        members.clone().filter(|m| ts.fast_function_of(k, m).is_some()).map(|m| fast(ts, g, api, k, m)).collect();
    fast_functions.extend(quiet_functions(ts, g, api, k).into_iter().map(|(_, _, code)| code));
    ClassRs {
        name: ts.type_name(&k.name),
        compiled: k.compiled.pascal(),
        core: k.name.pascal(),
        handles: handles(k),
        members: members.filter(|m| !m.is_twin()).map(|m| callable(ts, g, api, Some(k), m)).collect::<Rendered<_>>()?,
        fast: fast_functions,
    }
    .rendered(format!("class {}", k.name.pascal()))
}

/// Renders from the Node view of the interface (`node_view`: the long calls' Promise twins included).
pub fn render(api: &Api) -> Rendered<Output> {
    let (ts, g) = (Ts, Glue);
    let mut parts = Vec::new();
    for item in &api.items {
        match item {
            Item::Enum(e) => parts.push(enumeration(&ts, &g, e)?),
            Item::Record(r) => parts.push(record(&ts, &g, r)?),
            Item::Class(k) => parts.push(class(&ts, &g, api, k)?),
            Item::Function(f) if f.offered_in(Language::TypeScript) => parts.push(raw_function(&ts, &g, api, f)),
            Item::Function(_) => {}
        }
    }
    let functions = api
        .functions()
        .filter(|f| f.offered_in(Language::TypeScript))
        .map(|f| (Ts.function(&f.name), format!("fn_{}", f.name.snake())));
    let fast = functions
        .chain(api.classes().flat_map(|k| {
            k.members.iter().filter_map(move |m| {
                Some((Ts.fast_function_of(k, m)?, format!("fast_{}_{}", k.name.snake(), m.name.snake())))
            })
        }))
        .chain(api.classes().flat_map(|k| quiet_functions(&ts, &g, api, k).into_iter().map(|(js, rust, _)| (js, rust))))
        .collect();
    Ok(Output {
        path: "node/glue.rs".into(),
        contents: GlueRs { banner: banner("//"), parts, fast }.rendered("node/glue.rs")?,
    })
}
