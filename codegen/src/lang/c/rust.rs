//! The Rust side of the C ABI (`generated/c/ffi.rs`, included by `bindings/c`): `#[repr(C)]` mirrors of the
//! header's types and their conversions ([`mirror`]), and one `extern "C"` function per callable, from the same
//! lowering plan as the header. The hand-written runtime it calls lives in `bindings/c/src/`: `handles.rs` (the handle
//! registries), `runtime.rs` (last error, panic guard, arenas, C string and array readers), `versioned.rs`.

use super::abi::{is_flat, lower, slot_name, Return, Slot};
use super::mirror::{self, enum_from_c, enum_to_c, registry, RustC};
use crate::lang::banner;
use crate::model::*;
use crate::plan::{CallPlan, Callee, Passing, Receiver};
use crate::render::{template, Named, Rendered};
use crate::Output;

template! {
    "c/ffi_function.rs"
    struct FunctionRs {
        c_name: String,
        params: String,
        returns: String,
        guard: String,
        body: Vec<String>,
    }
}

template! {
    "c/ffi.rs"
    struct FfiRs {
        banner: String,
        handles: Vec<(String, String)>,
        errors: Vec<(String, u32)>,
        parts: Vec<String>,
    }
}

fn params(api: &Api, slots: &[Slot]) -> String {
    let rc = RustC;
    let mut out = Vec::new();
    for s in slots {
        match s {
            Slot::Handle { name, class } => out.push(format!("{name}: *mut {}", class_c(api, class))),
            Slot::Value { name, ty } => out.push(format!("{name}: {}", rc.c_field(api, ty))),
            Slot::Record { name, record } => out.push(format!("{name}: *const {}", record_c(api, record))),
            Slot::List { name, element } => {
                out.push(format!("{name}: *const {}", rc.c_field(api, element)));
                out.push(format!("{name}_count: usize"));
            }
            Slot::OutHandle { name, class } => out.push(format!("{name}: *mut *mut {}", class_c(api, class))),
            Slot::OutRecord { name, record, found } => {
                out.push(format!("{name}: *mut {}", record_c(api, record)));
                if *found {
                    out.push("found: *mut bool".into());
                }
            }
            Slot::OutValue { name, ty } => out.push(format!("{name}: *mut {}", rc.c_field(api, ty))),
            Slot::OutList { name, element } => {
                out.push(format!("{name}: *mut *const {}", rc.c_field(api, element)));
                out.push(format!("{name}_count: *mut usize"));
            }
        }
    }
    out.join(", ")
}

fn class_c(api: &Api, n: &Name) -> String {
    api.class(n).map_or_else(String::new, |c| c.c_name.clone())
}
fn record_c(api: &Api, n: &Name) -> String {
    api.record(n).map_or_else(String::new, |r| r.c_name.clone())
}

/// The core call of a plan, its arguments spelled by `arg` (the C parameter read into the core's value) and a
/// method's receiver by `receiver`.
fn core_call(plan: &CallPlan, receiver: Option<&str>, args: &[String]) -> String {
    let args = args.join(", ");
    match (&plan.callee, receiver) {
        (Callee::Constructor { class, name }, _) => format!("uform_core::{}::{}({args})", class.pascal(), name.snake()),
        (Callee::Method { name }, Some(recv)) => format!("{recv}.value.{}({args})", name.snake()),
        (Callee::Function { name }, _) => format!("uform_core::{}({args})", name.snake()),
        (Callee::Method { name }, None) => format!("compile_error!(\"method {} without a receiver\")", name.snake()),
    }
}

/// A string result as a C pointer: computed once per process when the plan says it is constant, otherwise
/// interned (static storage, never freed, one copy per distinct value).
fn c_string(plan: &CallPlan, c_name: &str, value: &str) -> String {
    if plan.constant {
        format!("process_c_str({c_name:?}, || {value})")
    } else {
        format!("interned_c_str({value})")
    }
}

/// The body of an `extern "C"` function: read arguments, call the core, write results. The C parameters come from
/// the ABI lowering (`slots`); everything about the call itself from the plan.
fn body(api: &Api, plan: &CallPlan, c_name: &str, slots: &[Slot]) -> Vec<String> {
    let mut lines = Vec::new();
    let mut args = Vec::new();
    let has_receiver = plan.receiver != Receiver::None;
    let receiver = if has_receiver { slots.first().and_then(Slot::name) } else { None };
    let inputs = slots.iter().skip(usize::from(has_receiver)).filter(|s| !s.is_out());
    if has_receiver && plan.kind != CallableKind::Free {
        if let Some(Slot::Handle { name, class: k }) = slots.first() {
            lines.push(format!("let {name} = {}.get({name} as usize, {name:?}, {:?})?;", registry(k), k.pascal()));
        }
    }
    for (s, a) in inputs.zip(&plan.arguments) {
        match (s, &a.passing) {
            (Slot::Handle { name, class: k }, _) => {
                lines.push(format!("let {name} = {}.get({name} as usize, {name:?}, {:?})?;", registry(k), k.pascal()));
                args.push(format!("&{name}.value"));
            }
            (Slot::Value { name, ty }, _) => {
                let expr = match ty {
                    Type::Enum(e) => format!("{}({name}, {name:?})?", enum_from_c(e)),
                    Type::Address => format!("{name} as u64"),
                    Type::GpuClass => format!("gpu_class_name({name}, {name:?})?"),
                    Type::String | Type::Path => {
                        format!("read_str({name}, {name:?})?.ok_or_else(|| null_argument({name:?}))?")
                    }
                    _ => name.clone(),
                };
                lines.push(format!("let {name} = {expr};"));
                args.push(name.clone());
            }
            (Slot::Record { name, record }, Passing::Record { all_optional, .. }) => {
                let absent = if *all_optional {
                    "Default::default()".to_string()
                } else {
                    format!("return Err(null_argument({name:?}))")
                };
                lines.push(format!(
                    "let {name} = if {name}.is_null() {{ {absent} }} else {{ {}_from_c(&read_versioned({name}, {name:?})?)? }};",
                    record.snake()
                ));
                args.push(name.clone());
            }
            (Slot::List { name, element: Type::String | Type::Path }, _) => {
                lines.push(format!("let {name} = read_str_list({name}, {name}_count, {name:?})?;"));
                args.push(format!("&{name}"));
            }
            (Slot::List { name, element: Type::Bytes }, _) => {
                lines.push(format!("let {name} = read_bytes_list({name}, {name}_count, {name:?})?;"));
                args.push(format!("&{name}"));
            }
            (Slot::List { name, element }, _) => {
                let convert = match element {
                    Type::Enum(e) => {
                        format!(".into_iter().map(|x| {}(x, {name:?})).collect::<Result<Vec<_>, _>>()?", enum_from_c(e))
                    }
                    Type::Address => ".into_iter().map(|x| x as u64).collect::<Vec<_>>()".into(),
                    Type::GpuClass => {
                        format!(".into_iter().map(|x| gpu_class_name(x, {name:?}).map(String::from)).collect::<Result<Vec<_>, _>>()?")
                    }
                    Type::U32 | Type::U64 | Type::I32 | Type::F64 | Type::Bool => String::new(),
                    // Rejected by the checker (`Shape::ListOfRecordsArgument`), or read as handles, not plain values.
                    _ => {
                        lines.push(format!("compile_error!(\"unsupported C list argument {name}\");"));
                        continue;
                    }
                };
                lines.push(format!(
                    "let {name} = read_list({name}, {name}_count, {name:?})?.unwrap_or_default(){convert};"
                ));
                args.push(format!("&{name}"));
            }
            (s, _) => lines.push(format!("compile_error!(\"unsupported C argument {:?}\");", s.name())),
        }
    }
    for s in slots.iter().filter(|s| s.is_out()) {
        let Some(name) = s.name() else { continue };
        lines.push(format!("check_out({name}, {name:?})?;"));
        if let Slot::OutList { name, .. } = s {
            lines.push(format!("check_out({name}_count, \"{name}_count\")?;"));
        }
        if let Slot::OutRecord { found: true, .. } = s {
            lines.push("check_out(found, \"found\")?;".into());
        }
    }
    let call = core_call(plan, receiver, &args);
    let fallible = if plan.throws { "?" } else { "" };
    match slots.iter().find(|s| s.is_out()) {
        None if plan.kind == CallableKind::Free => {
            if let (Some(Slot::Handle { name: recv, class: k }), true) = (slots.first(), has_receiver) {
                lines.push(format!(
                    "{}.free({recv} as usize, {recv:?}, {:?}, |v| v.free())?;",
                    registry(k),
                    k.pascal()
                ));
            }
        }
        None => lines.push(format!("{call}{fallible};")),
        Some(Slot::OutHandle { name, class: k }) => {
            lines.push(format!("let value = {call}{fallible};"));
            lines.push(OUT_SAFETY.into());
            lines.push(format!("unsafe {{ *{name} = {}.insert(value) as *mut {} }};", registry(k), class_c(api, k)));
        }
        Some(Slot::OutRecord { name, record, found }) => {
            let convert = format!("{}_to_c", record.snake());
            // An input record written out grows like one read in: only the bytes the caller's struct_size declares.
            let store = if api.record(record).is_some_and(|r| r.direction == Direction::Input) {
                vec![
                    format!("write_versioned({name}, c, {name:?})?;"),
                    OUT_SAFETY.into(),
                    "unsafe { *found = true };".into(),
                ]
            } else {
                vec![OUT_SAFETY.into(), format!("unsafe {{ *{name} = c; *found = true }};")]
            };
            if *found {
                let c = if is_flat(api, record) {
                    format!("{convert}(&v, &mut Arena::default())")
                } else {
                    format!("thread_arena({c_name:?}, |arena| {convert}(&v, arena))")
                };
                lines.push(format!("match {call}{fallible} {{"));
                lines.push("    Some(v) => {".into());
                lines.push(format!("        let c = {c};"));
                lines.extend(store.into_iter().map(|line| format!("        {line}")));
                lines.push("    }".into());
                lines.push("    None => {".into());
                lines.push(format!("        {OUT_SAFETY}"));
                lines.push("        unsafe { *found = false };".into());
                lines.push("    }".into());
                lines.push("}".into());
            } else if is_flat(api, record) {
                // Nothing to own: every call writes its own result (a step's numbers differ from the last step's),
                // through an arena of its own that stays empty, so no earlier result on this thread is disturbed.
                lines.push(format!("let v = {call}{fallible};"));
                lines.push(format!("let c = {convert}(&v, &mut Arena::default());"));
                lines.push(OUT_SAFETY.into());
                lines.push(format!("unsafe {{ *{name} = c }};"));
            } else if let Some(recv) = receiver {
                // What a method returns lives as long as its handle (see the header's ownership notes): computed
                // once, on the first call, like a description.
                let cached = format!("{recv}.cached({c_name:?}, |arena| Ok({convert}(&{call}{fallible}, arena)))?");
                lines.push(OUT_SAFETY.into());
                lines.push(format!("unsafe {{ *{name} = *{cached} }};"));
            } else {
                // The call's `?` belongs to the glue's closure, not the arena's.
                lines.push(format!("let v = {call}{fallible};"));
                lines.push(format!("let c = thread_arena({c_name:?}, |arena| {convert}(&v, arena));"));
                lines.push(OUT_SAFETY.into());
                lines.push(format!("unsafe {{ *{name} = c }};"));
            }
        }
        Some(Slot::OutValue { name, ty: Type::F32Matrix }) => {
            lines.push(format!("let value = {call}{fallible};"));
            lines.push(OUT_SAFETY.into());
            lines.push(format!("unsafe {{ *{name} = f32_matrix_to_c(value) }};"));
        }
        Some(Slot::OutValue { name, ty }) => {
            let value = match ty {
                // Not `value`: that is the out parameter's name.
                Type::String | Type::Path => {
                    lines.push(format!("let result = {call}{fallible};"));
                    c_string(plan, c_name, "result")
                }
                Type::Enum(e) => format!("{}({call}{fallible})", enum_to_c(e)),
                Type::Address => format!("{call}{fallible} as usize"),
                _ => format!("{call}{fallible}"),
            };
            lines.push(OUT_SAFETY.into());
            lines.push(format!("unsafe {{ *{name} = {value} }};"));
        }
        Some(Slot::OutList { name, element }) => {
            let convert = match element {
                Type::Record(r) => {
                    format!("let items: Vec<_> = v.iter().map(|x| {}_to_c(x, arena)).collect(); ", r.snake())
                }
                _ => "let items = v; ".into(),
            };
            if has_receiver {
                // A method's list differs from call to call (a rerank's scores): this thread's arena for the
                // function holds it until the thread calls the function again.
                lines.push(format!("let v = {call}{fallible};"));
                lines.push(format!(
                    "let (ptr, len) = thread_arena({c_name:?}, |arena| {{ {convert}arena.list_parts(items) }});"
                ));
            } else {
                // A free function's list (the capabilities) is the process's: computed once, kept for its life.
                lines.push(format!("let (ptr, len) = process_cached({c_name:?}, |arena| {{ let v = {call}{fallible}; {convert}Ok(arena.list_parts(items)) }})?;"));
            }
            lines.push(OUT_SAFETY.into());
            lines.push(format!("unsafe {{ *{name} = ptr; *{name}_count = len }};"));
        }
        Some(_) => {}
    }
    lines.push("Ok(())".into());
    lines
}

/// What makes writing a result through the caller's out-parameters sound.
const OUT_SAFETY: &str =
    "// SAFETY: each out-parameter was checked non-NULL above and points to writable storage (the header's contract).";

/// Rust's keywords that are not C's: a C parameter so named (`uform_match_t *match`) is a raw identifier in Rust.
const RUST_KEYWORDS: &[&str] = &[
    "as", "async", "await", "box", "crate", "dyn", "fn", "impl", "in", "let", "loop", "match", "mod", "move", "mut",
    "pub", "ref", "trait", "type", "unsafe", "use", "where", "abstract", "become", "final", "macro", "override",
    "priv", "try", "typeof", "unsized", "virtual", "yield", "gen",
];

fn escape_keyword(slot: &mut Slot) {
    let name: &mut String = slot_name!(slot);
    if RUST_KEYWORDS.contains(&name.as_str()) {
        *name = format!("r#{name}");
    }
}

/// One `extern "C"` function, from the callable's plan and its C lowering.
fn function(api: &Api, class: Option<&Class>, c: &Callable) -> Rendered {
    let plan = CallPlan::of(api, class, c);
    let mut lowered = lower(&plan);
    for slot in &mut lowered.slots {
        escape_keyword(slot);
    }
    let (returns, guard, body) = match &lowered.returns {
        Return::Status => (" -> uform_status_t".to_string(), "guard", body(api, &plan, &c.c_name, &lowered.slots)),
        // Only calls that cannot fail return their value (see `lower`): no receiver, and plain scalar arguments.
        Return::Value { ty, optional } => {
            let args: Vec<String> = lowered.slots.iter().filter_map(Slot::name).map(str::to_string).collect();
            let call = core_call(&plan, None, &args);
            let value = match ty {
                Type::String if *optional => format!("static_c_str_opt({call})"),
                Type::String => c_string(&plan, &c.c_name, &call),
                _ => call,
            };
            let guard = if *ty == Type::String { "guard_value" } else { "guard_scalar" };
            (format!(" -> {}", RustC.c_field(api, ty)), guard, vec![value])
        }
    };
    // Argument names in messages are the C parameter's, without the raw identifier's `r#`.
    let body = body.into_iter().map(|line| line.replace("\"r#", "\"")).collect();
    FunctionRs { c_name: c.c_name.clone(), params: params(api, &lowered.slots), returns, guard: guard.into(), body }
        .rendered(crate::render::callable_item(class, c))
}

pub fn render(api: &Api) -> Rendered<Vec<Output>> {
    let mut parts = mirror::parts(api)?;
    for k in api.classes() {
        parts.push(format!("#[repr(C)]\npub struct {} {{\n    _opaque: [u8; 0],\n}}", k.c_name));
        for m in k.members.iter().filter(|m| m.offered_in(Language::C)) {
            parts.push(function(api, Some(k), m)?);
        }
    }
    for f in api.functions().filter(|f| f.offered_in(Language::C)) {
        parts.push(function(api, None, f)?);
    }
    let ffi = FfiRs {
        banner: banner("//"),
        handles: api.classes().map(|k| (registry(&k.name), k.name.pascal())).collect(),
        errors: api.errors.iter().map(|e| (e.name.pascal(), e.status)).collect(),
        parts,
    };
    Ok(vec![Output { path: "c/ffi.rs".into(), contents: ffi.rendered("c/ffi.rs")? }])
}

#[cfg(test)]
mod tests {
    use crate::test_idl::NAME_OF;

    /// The glue (`c/ffi.rs`) rendered from IDL `items`.
    fn glue(items: &[&str]) -> String {
        let api = crate::test_idl::api(items, "c_glue.yaml");
        super::render(&api).unwrap().remove(0).contents
    }

    /// The `extern "C"` function named `c_name` in `glue`.
    fn function<'a>(glue: &'a str, c_name: &str) -> &'a str {
        let start = glue.find(&format!("fn {c_name}(")).unwrap_or_else(|| panic!("{c_name} missing:\n{glue}"));
        let end = glue[start..].find("\n}\n").map_or(glue.len(), |e| start + e);
        &glue[start..end]
    }

    /// Functions beside [`NAME_OF`]: a constant string, a scalar, and a string from an argument that can be rejected.
    const FUNCTIONS: &str = r#"
  - function: version_text
    c: uform_version_text
    throws: false
    constant: true
    returns: string
    doc: The version.
  - function: twice
    c: uform_twice
    throws: false
    returns: u32
    params:
      - name: n
        type: u32
        doc: A number.
    doc: Twice it.
  - function: label
    c: uform_label
    throws: false
    returns: string
    params:
      - name: text
        type: string
        doc: A text.
    doc: A label.
"#;

    #[test]
    fn a_string_function_with_parameters_passes_them_and_caches_nothing() {
        let glue = glue(&[NAME_OF, FUNCTIONS]);
        let f = function(&glue, "uform_name_of");
        assert!(f.contains("interned_c_str(uform_core::name_of(code))"), "{f}");
        assert!(!f.contains("process_c_str"), "{f}");
    }

    #[test]
    fn a_constant_string_is_computed_once_per_process() {
        let glue = glue(&[NAME_OF, FUNCTIONS]);
        let f = function(&glue, "uform_version_text");
        assert!(f.contains("process_c_str(\"uform_version_text\", || uform_core::version_text())"), "{f}");
    }

    #[test]
    fn a_scalar_function_passes_its_arguments() {
        let glue = glue(&[NAME_OF, FUNCTIONS]);
        let f = function(&glue, "uform_twice");
        assert!(f.contains("-> u32"), "{f}");
        assert!(f.contains("guard_scalar(") && f.contains("uform_core::twice(n)"), "{f}");
    }

    /// A class with a method returning a record of numbers (a training step) and one returning a record that
    /// points into memory (a description).
    const METHODS: &str = r#"
  - record: Tally
    c: uform_tally_t
    direction: output
    doc: Counts.
    fields:
      - name: count
        type: u64
        doc: How many.
      - name: rate
        type: f64
        doc: How fast.
  - record: Summary
    c: uform_summary_t
    direction: output
    doc: A summary.
    fields:
      - name: name
        type: string
        doc: Its name.
  - class: Counter
    c: uform_counter_t
    doc: Counts.
    thread_safety: Safe.
    compiled: CompiledCounter
    compiled_doc: The handle.
    members:
      - constructor: create
        c: uform_counter_create
        doc: Makes one.
      - method: tick
        c: uform_counter_tick
        returns: Tally
        doc: Counts one more.
      - method: describe
        c: uform_counter_describe
        returns: Summary
        doc: Describes it.
      - free: free
        c: uform_counter_free
        doc: Frees it.
"#;

    #[test]
    fn a_method_returning_a_record_of_numbers_runs_every_call() {
        let glue = glue(&[METHODS]);
        let tick = function(&glue, "uform_counter_tick");
        assert!(tick.contains("let v = counter.value.tick()?;"), "{tick}");
        assert!(!tick.contains(".cached(") && !tick.contains("thread_arena"), "{tick}");
        // A record that points into memory is kept per handle, computed on the first call.
        let describe = function(&glue, "uform_counter_describe");
        assert!(describe.contains("counter.cached(\"uform_counter_describe\""), "{describe}");
    }

    #[test]
    fn a_function_whose_argument_can_be_rejected_returns_a_status() {
        let glue = glue(&[NAME_OF, FUNCTIONS]);
        let f = function(&glue, "uform_label");
        assert!(f.contains("-> uform_status_t"), "{f}");
        assert!(f.contains("read_str(text, \"text\")?"), "{f}");
        assert!(f.contains("let result = uform_core::label(text);"), "{f}");
        assert!(f.contains("*value = interned_c_str(result)"), "{f}");
    }
}
