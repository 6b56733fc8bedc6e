//! Core against the IDL: its records, enums and error kinds come only from `generated/rust/` (core/src declares none
//! of them itself and spells none of the IDL's enum strings or error codes), and every IDL path its messages name
//! (`Error::invalid_argument("config.memory_domains[1]", …)`, `path::name("gpu_devices()")`, as the first argument of
//! those or of a core helper whose first parameter is `argument: &str`) resolves against the IDL, so renaming a
//! parameter or a field there cannot leave a message naming the old one.

use std::path::{Path, PathBuf};
use uform_codegen::model::{Api, Type};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap().to_path_buf()
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let path = entry.path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

#[test]
fn core_repeats_nothing_of_the_idl() {
    let api = uform_codegen::load(&root().join("idl/uform.yaml")).unwrap_or_else(|d| panic!("{d}"));
    let mut forbidden = Vec::new();
    for r in api.records() {
        forbidden.push(format!("pub struct {} ", r.name.pascal()));
    }
    for e in api.enums() {
        forbidden.push(format!("pub enum {} ", e.name.pascal()));
        for v in &e.variants {
            if let uform_codegen::model::EnumValue::String(s) = &v.value {
                forbidden.push(format!("{s:?}"));
            }
        }
    }
    forbidden.push("pub enum ErrorKind ".into());
    forbidden.extend(api.errors.iter().map(|k| format!("{:?}", k.name.snake())));
    let mut files = Vec::new();
    rust_files(&root().join("core/src"), &mut files);
    assert!(files.len() > 10);
    let mut found = Vec::new();
    for file in files {
        let text = std::fs::read_to_string(&file).unwrap();
        for f in &forbidden {
            if text.contains(f.as_str()) {
                found.push(format!("{}: {f}", file.display()));
            }
        }
    }
    assert!(found.is_empty(), "core/src repeats the IDL instead of including generated/rust:\n{}", found.join("\n"));
    let types = std::fs::read_to_string(root().join("core/src/types.rs")).unwrap();
    assert!(types.contains("include!(\"../generated/types.rs\")"));
    let error = std::fs::read_to_string(root().join("core/src/error.rs")).unwrap();
    assert!(error.contains("include!(\"../generated/error_kind.rs\")"));
}

/// The functions whose first argument is an IDL path: the two the error scheme names, and every core function
/// whose first parameter is `argument: &str` (helpers like `positive("config.threads", …)`).
fn path_taking_functions(sources: &[(PathBuf, String)]) -> Vec<String> {
    let mut names = vec!["invalid_argument".to_string(), "path::name".to_string()];
    for (_, text) in sources {
        for line in text.lines() {
            let Some(at) = line.find("fn ") else { continue };
            let rest = &line[at + 3..];
            let name: String = rest.chars().take_while(|c| c.is_ascii_alphanumeric() || *c == '_').collect();
            let params = rest[name.len()..].trim_start_matches(|c| c != '(');
            if !name.is_empty() && params.starts_with("(argument: &str") && !names.contains(&name) {
                names.push(name);
            }
        }
    }
    names
}

/// Every string literal passed first to one of `functions`, with its file and line; comments are skipped.
fn literals(sources: &[(PathBuf, String)], functions: &[String]) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for (file, text) in sources {
        // Comment lines hold examples, not messages.
        let code: String =
            text.lines().map(|l| if l.trim_start().starts_with("//") { "" } else { l }).collect::<Vec<_>>().join("\n");
        for function in functions {
            let call = format!("{function}(");
            let mut from = 0;
            while let Some(at) = code[from..].find(&call) {
                let start = from + at;
                from = start + call.len();
                // A whole name: `name(` must not end a longer identifier (`rename(`); `fn name(` is the definition.
                let before = code[..start].chars().next_back();
                if before.is_some_and(|c| c.is_ascii_alphanumeric() || c == '_') || code[..start].ends_with("fn ") {
                    continue;
                }
                let rest = code[from..].trim_start();
                let Some(rest) = rest.strip_prefix('"') else { continue };
                let Some(end) = rest.find('"') else { continue };
                let line = code[..start].lines().count();
                out.push((
                    format!("{}:{line}", file.strip_prefix(root()).unwrap_or(file).display()),
                    rest[..end].to_string(),
                ));
            }
        }
    }
    out
}

/// Where `literal` leads in the IDL, or why it leads nowhere: `Class.member`, `Record.field`, a name, or a parameter's
/// path through its records' fields.
fn resolve(api: &Api, literal: &str) -> Result<(), String> {
    let callables: Vec<_> = api.callables().collect();
    let called = literal.strip_suffix("()");
    let path = called.unwrap_or(literal);
    // `Model.encode_text`: a class and its member.
    if let Some((class, member)) = path.split_once('.').filter(|(c, _)| c.starts_with(char::is_uppercase)) {
        // `ExecutorForRamConfig.scratch_limit`: a record and its field.
        if let Some(record) = api.records().find(|r| r.name.pascal() == class) {
            return match called.is_none() && record.fields.iter().any(|f| f.name.snake() == member) {
                true => Ok(()),
                false => Err(format!("`{class}` has no field `{member}`")),
            };
        }
        let class = api.classes().find(|k| k.name.pascal() == class).ok_or(format!("no class or record `{class}`"))?;
        return match class.members.iter().any(|m| m.name.snake() == member) {
            true => Ok(()),
            false => Err(format!("`{}` has no member `{member}`", class.name.pascal())),
        };
    }
    let mut segments = Vec::new();
    for part in path.split('.') {
        let (name, indices) = part.split_once('[').map_or((part, ""), |(n, i)| (n, i));
        let indexed = indices.split(['[', ']']).filter(|i| !i.is_empty()).all(|i| i.parse::<usize>().is_ok());
        if !indexed {
            return Err(format!("`{part}` has an index that is not a number"));
        }
        segments.push(name);
    }
    let [first, fields @ ..] = segments.as_slice() else { return Err("empty".into()) };
    if called.is_some() || fields.is_empty() {
        // One name: a function or member (with or without its call), a parameter or a field.
        let named = callables.iter().any(|c| c.name.snake() == *first)
            || (called.is_none()
                && (callables.iter().flat_map(|c| &c.params).any(|p| p.name.snake() == *first)
                    || api.records().flat_map(|r| &r.fields).any(|f| f.name.snake() == *first)));
        return match (named, fields.is_empty()) {
            (true, true) => Ok(()),
            (true, false) => Err("a call's `()` ends the path".into()),
            (false, _) => Err(format!("no function, member, parameter or field `{first}`")),
        };
    }
    // `config.memory_domains[1]`: a parameter, then a field of its record at every step.
    let mut tried = Vec::new();
    for p in callables.iter().flat_map(|c| &c.params).filter(|p| p.name.snake() == *first) {
        let mut ty = &p.ty;
        let mut ok = true;
        for field in fields {
            let record = match ty.element().unwrap_or(ty) {
                Type::Record(r) => api.record(r),
                _ => None,
            };
            match record.and_then(|r| r.fields.iter().find(|f| f.name.snake() == *field)) {
                Some(f) => ty = &f.ty,
                None => {
                    tried.push(format!("{first}: {}", p.ty));
                    ok = false;
                    break;
                }
            }
        }
        if ok {
            return Ok(());
        }
    }
    match tried.is_empty() {
        true => Err(format!("no parameter `{first}`")),
        false => Err(format!("no such field in any parameter so named ({})", tried.join(", "))),
    }
}

#[test]
fn every_idl_path_in_cores_messages_names_something_the_idl_declares() {
    let api = uform_codegen::load(&root().join("idl/uform.yaml")).unwrap_or_else(|d| panic!("{d}"));
    let mut files = Vec::new();
    rust_files(&root().join("core/src"), &mut files);
    let sources: Vec<(PathBuf, String)> =
        files.into_iter().map(|f| (f.clone(), std::fs::read_to_string(&f).unwrap())).collect();
    let functions = path_taking_functions(&sources);
    assert!(functions.iter().any(|f| f == "positive"), "the helpers are found: {functions:?}");
    let found = literals(&sources, &functions);
    assert!(found.len() >= 40, "the scan finds core's paths: {found:?}");
    let stale: Vec<String> = found
        .iter()
        .filter_map(|(at, literal)| resolve(&api, literal).err().map(|why| format!("{at}: \"{literal}\": {why}")))
        .collect();
    assert!(stale.is_empty(), "core's messages name what the IDL does not declare:\n{}", stale.join("\n"));
}

#[test]
fn a_renamed_field_or_parameter_is_caught() {
    let api = uform_codegen::load(&root().join("idl/uform.yaml")).unwrap_or_else(|d| panic!("{d}"));
    assert_eq!(resolve(&api, "config.memory_domains[1]"), Ok(()));
    assert_eq!(resolve(&api, "Model.encode_text"), Ok(()));
    assert_eq!(resolve(&api, "gpu_devices()"), Ok(()));
    assert_eq!(resolve(&api, "ExecutorForRamConfig.scratch_limit"), Ok(()));
    assert!(resolve(&api, "config.memory_domain").is_err());
    assert!(resolve(&api, "settings.threads").is_err());
    assert!(resolve(&api, "Model.encode").is_err());
    assert!(resolve(&api, "gpu_device()").is_err());
    assert!(resolve(&api, "ExecutorForRamConfig.scratch_limits").is_err());
}
