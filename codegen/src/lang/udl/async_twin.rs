//! Long calls (`async: true` in the IDL) in Swift's own form, `async throws`, through uniffi's async support.
//!
//! Swift and Kotlin share one UDL, and `[Async]` would make Kotlin's form a `suspend fun` as well (it needs
//! kotlinx-coroutines and changes every caller). So the UDL declares each long call twice: the blocking form under
//! its own name, and an async twin `<name>_async` whose Rust glue runs the blocking form on its own thread and
//! completes the future from there (`off_thread` in `bindings/uniffi`), so no executor thread of the caller ever
//! waits. `generated/uniffi/uniffi.toml`, which uniffi-bindgen reads per language, then gives each language one
//! form under the IDL's name: Kotlin excludes the twins (its surface is unchanged), Swift excludes the blocking
//! forms and renames each twin to its IDL name, so `Mesh.bootstrap` is `async throws` in Swift.

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

/// `generated/uniffi/uniffi.toml`: which form of each long call each language sees.
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
    // `only:` is exact per language: a call the UDL declares for one of them is excluded from the other.
    let (mut kotlin_exclude, mut swift_exclude) = (twins.clone(), blocking.clone());
    for (class, callable) in api.items.iter().flat_map(|item| match item {
        Item::Class(c) => c.members.iter().map(|m| (Some(c), m)).collect::<Vec<_>>(),
        Item::Function(f) => vec![(None, f)],
        _ => vec![],
    }) {
        let (kotlin, swift) = (callable.offered_in(Language::Kotlin), callable.offered_in(Language::Swift));
        if swift && !kotlin {
            kotlin_exclude.push(path(udl, class, callable));
        }
        if kotlin && !swift {
            swift_exclude.push(path(udl, class, callable));
        }
    }
    let mut out = format!(
        "{banner}\n#\n# What each language sees of uform.udl (uniffi-bindgen reads it as the crate's config): a long call\n\
         # (`async: true` in the IDL) is declared twice, blocking and as an async twin `<name>_async`. Kotlin keeps\n\
         # the blocking form; Swift gets the twin under the IDL's name, as `async throws`.\n\n\
         [bindings.kotlin]\nexclude = [{}]\n\n[bindings.swift]\nexclude = [{}]\n\n[bindings.swift.rename]\n",
        quoted(&kotlin_exclude),
        quoted(&swift_exclude),
    );
    for ((_, m), twin_path) in long_calls.iter().zip(&twins) {
        out.push_str(&format!("\"{twin_path}\" = \"{}\"\n", udl.member(&m.name)));
    }
    out
}
