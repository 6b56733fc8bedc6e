//! Long calls (`async: true` in the IDL) in Swift's own form, `async throws`, through uniffi's async support.
//!
//! The UDL declares each long call twice: the blocking form under its own name, and an async twin `<name>_async`
//! whose Rust glue runs the blocking form on its own thread and completes the future from there (`off_thread` in
//! `bindings/uniffi`), so no executor thread of the caller ever waits. `generated/uniffi/uniffi.toml`, which
//! uniffi-bindgen reads, excludes the blocking forms from Swift and renames each twin to its IDL name, so
//! `Mesh.bootstrap` is `async throws` in Swift.

use super::format::Udl;
use crate::model::*;

/// Whether `callable` gets an async twin: a long call Swift offers.
pub fn has_twin(callable: &Callable) -> bool {
    callable.is_async && callable.offered_in(Language::Swift)
}

/// The twin: the same call, parameters and doc, named `<name>_async`.
pub fn twin(callable: &Callable) -> Callable {
    callable.async_twin()
}

/// The UDL attributes a twin adds: `Async`, and for a method `Self=ByArc` (the glue moves the object's `Arc` onto
/// the thread that runs the call).
pub fn extra_attributes(callable: &Callable) -> &'static [&'static str] {
    match callable.kind {
        CallableKind::Method | CallableKind::Free => &["Async", "Self=ByArc"],
        _ => &["Async"],
    }
}

/// The twin's glue body: the blocking form, moved onto its own thread.
pub fn glue_body(udl: &Udl, callable: &Callable) -> String {
    let args: Vec<String> = callable.params.iter().map(|p| udl.member(&p.name)).collect();
    let target = match callable.kind {
        CallableKind::Constructor => "Self::",
        CallableKind::Method | CallableKind::Free => "self.",
        CallableKind::Function => "",
    };
    format!("off_thread(move || {target}{}({})).await", udl.member(&callable.name), args.join(", "))
}

/// How uniffi-bindgen names a callable in `exclude` and `rename`: `Class.member` or `function`.
fn path(udl: &Udl, class: Option<&Class>, callable: &Callable) -> String {
    match class {
        Some(c) => format!("{}.{}", udl.type_name(&c.name), udl.member(&callable.name)),
        None => udl.member(&callable.name),
    }
}

fn quoted(items: &[String]) -> String {
    items.iter().map(|i| format!("\"{i}\"")).collect::<Vec<_>>().join(", ")
}

/// `generated/uniffi/uniffi.toml`: Swift sees each long call's twin under the IDL's name, and not the blocking form.
pub fn bindings_toml(udl: &Udl, api: &Api, banner: &str) -> String {
    let mut long_calls: Vec<(Option<&Class>, &Callable)> = Vec::new();
    for item in &api.items {
        match item {
            Item::Class(c) => long_calls.extend(c.members.iter().filter(|m| has_twin(m)).map(|m| (Some(c), m))),
            Item::Function(f) if has_twin(f) => long_calls.push((None, f)),
            _ => {}
        }
    }
    let twins: Vec<String> = long_calls.iter().map(|(c, m)| path(udl, *c, &twin(m))).collect();
    let blocking: Vec<String> = long_calls.iter().map(|(c, m)| path(udl, *c, m)).collect();
    let mut out = format!(
        "{banner}\n#\n# What Swift sees of uform.udl (uniffi-bindgen reads it as the crate's config): a long call\n\
         # (`async: true` in the IDL) is declared twice, blocking and as an async twin `<name>_async`; Swift gets the\n\
         # twin under the IDL's name, as `async throws`. (Kotlin has its own JNI binding: codegen/src/lang/kotlin.)\n\n\
         [bindings.swift]\nexclude = [{}]\n\n[bindings.swift.rename]\n",
        quoted(&blocking),
    );
    for ((_, m), twin_path) in long_calls.iter().zip(&twins) {
        out.push_str(&format!("\"{twin_path}\" = \"{}\"\n", udl.member(&m.name)));
    }
    out
}
