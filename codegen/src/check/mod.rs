//! Checks the raw file into the model, collecting every problem instead of stopping at the first.
//!
//! One module per concept: [`backends`] (what each backend can emit), [`names`] (spelling rules, declarations, C names), [`docs`] (doc text and its
//! references), [`types`] (type expressions and defaults), [`records`] (records and enums), [`callables`]
//! (functions and members), [`classes`], [`only`] (languages) and [`diagnostics`] (how a problem is reported).

mod backends;
mod callables;
mod classes;
mod diagnostics;
mod docs;
mod names;
mod only;
mod pages;
mod records;
mod types;

use crate::diagnostics::Diagnostic;
use crate::model::*;
use crate::raw::*;
use diagnostics::at;
use docs::Scope;
use names::{is_pascal, PREFIX};
use std::collections::{BTreeMap, BTreeSet};

/// Names every item and member declares, gathered before anything is checked so references can resolve.
#[derive(Default)]
struct Declared {
    records: BTreeSet<String>,
    enums: BTreeMap<String, Vec<String>>,
    classes: BTreeMap<String, BTreeSet<String>>,
    functions: BTreeSet<String>,
}

struct Checker {
    problems: Vec<Diagnostic>,
    declared: Declared,
    /// The pages items may name, in order, and whether `pages:` declared them (else `title` names the one page).
    pages: Vec<Name>,
    pages_declared: bool,
}

/// Checks a parsed file; every problem found is returned at once.
pub fn check(file: &RawFile) -> Result<Api, Vec<Diagnostic>> {
    let mut c =
        Checker { problems: Vec::new(), declared: Declared::default(), pages: Vec::new(), pages_declared: false };
    c.declare(file);
    let empty = Scope::EMPTY;
    if file.package.value != "uform" {
        c.problem(
            &file.package.referenced,
            "",
            format!("package `{}` must be `uform`: every C name starts with `{PREFIX}`", file.package.value),
        );
    }
    let version = &file.version.value;
    let version_ok = version.starts_with(|c: char| c.is_ascii_digit())
        && version.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '+'));
    if !version_ok {
        c.problem(
            &file.version.referenced,
            "",
            format!("version `{version}` must be a version number like 1.2.3 (digits, letters, `.`, `-`, `+`): it is written into C, Python and package files"),
        );
    }
    if !is_pascal(&file.title.value) {
        c.problem(
            &file.title.referenced,
            "",
            format!(
                "title `{}` must be one PascalCase word: it heads the reference's index (and, without `pages`, names its one page, docs/<language>/<title>.md)",
                file.title.value
            ),
        );
    }
    let doc = c.doc(file.doc.as_ref(), &file.package.referenced, "package", &empty, true);
    let intro = c.doc(file.intro.as_ref(), &file.package.referenced, "package", &empty, false);
    let pages = c.pages(file, &doc, &intro);

    let mut errors = Vec::new();
    let mut seen = BTreeSet::new();
    for (i, e) in file.errors.iter().enumerate() {
        if !is_pascal(&e.error.value) {
            c.problem(&e.error.referenced, &e.error.value, "error kind names are PascalCase");
        }
        if !seen.insert(e.error.value.clone()) {
            c.problem(&e.error.referenced, &e.error.value, format!("duplicate error kind `{}`", e.error.value));
        }
        let edoc = c.doc(e.doc.as_ref(), &e.error.referenced, &e.error.value, &empty, true);
        errors.push(ErrorKindDef { name: Name::parse(&e.error.value), status: i as u32 + 1, doc: edoc });
    }
    if errors.is_empty() {
        c.problem(&file.package.referenced, "", "no `errors`: the error kinds are part of every surface");
    }

    let mut items = Vec::new();
    for (index, item) in file.items.iter().enumerate() {
        let names: Vec<(&str, &S<String>)> = [
            ("record", &item.record),
            ("enum", &item.enumeration),
            ("class", &item.class),
            ("function", &item.function),
        ]
        .into_iter()
        .filter_map(|(k, v)| v.as_ref().map(|n| (k, n)))
        .collect();
        let (kind, name) = match names.as_slice() {
            [(kind, name)] => (*kind, *name),
            [] => {
                let loc = item.c.as_ref().or(item.doc.as_ref()).map(|s| s.referenced);
                let (line, column) = loc.as_ref().map(at).unwrap_or((0, 0));
                c.problems.push(Diagnostic {
                    line,
                    column,
                    item: format!("items[{index}]"),
                    message: "an item is named by one of `record`, `enum`, `class`, `function`".into(),
                });
                continue;
            }
            [(_, first), ..] => {
                c.problem(
                    &first.referenced,
                    &first.value,
                    "an item is named by exactly one of `record`, `enum`, `class`, `function`",
                );
                continue;
            }
        };
        let pascal = kind != "function";
        if pascal && !is_pascal(&name.value) {
            c.problem(&name.referenced, &name.value, format!("{kind} name `{}` must be PascalCase", name.value));
        }
        items.push(match kind {
            "record" => Item::Record(c.record(item, name)),
            "enum" => Item::Enum(c.enumeration(item, name)),
            "class" => Item::Class(c.class(item, name)),
            _ => Item::Function(c.function(item, name)),
        });
    }
    c.unique_c_names(&items);
    c.pages_used(file, &items);
    c.backends(file, &items);
    if c.problems.is_empty() {
        Ok(Api {
            package: file.package.value.clone(),
            version: file.version.value.clone(),
            title: file.title.value.clone(),
            doc,
            intro,
            pages,
            errors,
            items,
        })
    } else {
        c.problems.sort();
        c.problems.dedup();
        Err(c.problems)
    }
}
