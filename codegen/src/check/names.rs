//! Names: the spelling rules (PascalCase, snake_case, the C convention), the declarations gathered before anything
//! is checked, and the uniqueness of C names across items.

use super::diagnostics::at;
use super::Checker;
use crate::model::*;
use crate::raw::*;
use serde_saphyr::Location;
use std::collections::BTreeMap;

pub(super) const PREFIX: &str = "uform_";

pub(super) fn is_pascal(s: &str) -> bool {
    s.chars().next().is_some_and(|c| c.is_ascii_uppercase()) && s.chars().all(|c| c.is_ascii_alphanumeric())
}

pub(super) fn is_snake(s: &str) -> bool {
    s.chars().next().is_some_and(|c| c.is_ascii_lowercase())
        && s.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
        && !s.contains("__")
        && !s.ends_with('_')
}

impl Checker {
    pub(super) fn c_name(
        &mut self,
        raw: Option<&S<String>>,
        expected: &str,
        fallback: &Location,
        item: &str,
    ) -> String {
        match raw {
            None => {
                self.problem(fallback, item, format!("has no C name; add `c: {expected}`"));
                expected.to_string()
            }
            Some(c) if c.value != expected => {
                self.problem(
                    &c.referenced,
                    item,
                    format!("C name `{}` breaks the convention: expected `{expected}` (`{PREFIX}` + snake_case name, `_t` for types)", c.value),
                );
                c.value.clone()
            }
            Some(c) => c.value.clone(),
        }
    }

    pub(super) fn declare(&mut self, file: &RawFile) {
        let mut seen: BTreeMap<String, Location> = BTreeMap::new();
        for item in &file.items {
            let names: Vec<&S<String>> =
                [&item.record, &item.enumeration, &item.class, &item.function].into_iter().flatten().collect();
            let Some(name) = names.first() else { continue };
            if let Some(first) = seen.get(&name.value) {
                let (line, column) = at(first);
                self.problem(
                    &name.referenced,
                    &name.value,
                    format!("duplicate name: `{}` is already declared at line {line}, column {column}", name.value),
                );
                continue;
            }
            seen.insert(name.value.clone(), name.referenced);
            if item.record.is_some() {
                self.declared.records.insert(name.value.clone());
            } else if item.enumeration.is_some() {
                let values = item.values.iter().flatten().map(|v| v.name.value.clone()).collect();
                self.declared.enums.insert(name.value.clone(), values);
            } else if item.class.is_some() {
                let members = item
                    .members
                    .iter()
                    .flatten()
                    .filter_map(|m| m.constructor.as_ref().or(m.method.as_ref()).or(m.free.as_ref()))
                    .map(|n| n.value.clone())
                    .collect();
                self.declared.classes.insert(name.value.clone(), members);
            } else {
                self.declared.functions.insert(name.value.clone());
            }
        }
    }

    /// Every C name (types, members, functions) is used once.
    pub(super) fn unique_c_names(&mut self, items: &[Item]) {
        let mut c_names: BTreeMap<String, String> = BTreeMap::new();
        for item in items {
            let mut names = vec![];
            match item {
                Item::Record(r) => names.push(r.c_name.clone()),
                Item::Enum(e) => names.push(e.c_name.clone()),
                Item::Class(k) => {
                    names.push(k.c_name.clone());
                    names.extend(k.members.iter().map(|m| m.c_name.clone()));
                }
                Item::Function(f) => names.push(f.c_name.clone()),
            }
            for n in names {
                if let Some(first) = c_names.insert(n.clone(), item.name().pascal()) {
                    self.unplaced(&item.name().pascal(), format!("C name `{n}` is also used by `{first}`"));
                }
            }
        }
    }
}
