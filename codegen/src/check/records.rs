//! Records (direction, fields, what a field may hold) and enums (numbered or string-valued, no clashes).

use super::diagnostics::show;
use super::docs::Scope;
use super::names::{is_pascal, is_snake, PREFIX};
use super::Checker;
use crate::model::*;
use crate::raw::*;
use std::collections::{BTreeMap, BTreeSet};

impl Checker {
    pub(super) fn record(&mut self, item: &RawItem, name: &S<String>) -> Record {
        let id = name.value.clone();
        self.unexpected(
            &[
                ("values", item.values.is_some()),
                ("members", item.members.is_some()),
                ("params", item.params.is_some()),
                ("returns", item.returns.is_some()),
                ("example", item.example.is_some()),
            ],
            &name.referenced,
            &id,
            "a record",
        );
        let direction = match item.direction.as_ref().map(|d| d.value.as_str()) {
            Some("input") => Direction::Input,
            Some("output") => Direction::Output,
            Some(other) => {
                let loc = item.direction.as_ref().map(|d| d.referenced).unwrap_or(name.referenced);
                self.problem(&loc, &id, format!("direction `{other}` is neither `input` nor `output`"));
                Direction::Output
            }
            None => {
                self.problem(
                    &name.referenced,
                    &id,
                    "has no `direction`; say `input` (passed in) or `output` (returned)",
                );
                Direction::Output
            }
        };
        let c_name =
            self.c_name(item.c.as_ref(), &format!("{PREFIX}{}_t", Name::parse(&id).snake()), &name.referenced, &id);
        let field_names: Vec<String> = item.fields.iter().flatten().map(|f| f.name.value.clone()).collect();
        let scope = Scope { members: &field_names };
        let doc = self.doc(item.doc.as_ref(), &name.referenced, &id, &Scope { members: &[] }, true);
        let compiled = item.compiled.as_ref().map(|c| {
            if !is_pascal(&c.value) {
                self.problem(&c.referenced, &id, format!("compiled name `{}` must be PascalCase", c.value));
            }
            Name::parse(&c.value)
        });
        let mut fields = Vec::new();
        let mut seen = BTreeSet::new();
        let mut last_since: Option<Vec<u64>> = None;
        if item.fields.as_ref().is_none_or(|f| f.is_empty()) {
            self.problem(&name.referenced, &id, "a record needs at least one field");
        }
        for f in item.fields.iter().flatten() {
            let fid = format!("{id}.{}", f.name.value);
            if !is_snake(&f.name.value) {
                self.problem(&f.name.referenced, &fid, format!("field name `{}` must be snake_case", f.name.value));
            }
            if !seen.insert(f.name.value.clone()) {
                self.problem(&f.name.referenced, &fid, format!("duplicate field `{}`", f.name.value));
            }
            let ty = self.ty(&f.ty, &fid);
            let optional = Self::flag(f.optional.as_ref(), false);
            if ty == Some(Type::F32Matrix) {
                self.problem(&f.ty.referenced, &fid, "`f32_matrix` is only ever a result, not a record field");
            }
            if ty.as_ref().is_some_and(Type::holds_bytes) {
                self.problem(&f.ty.referenced, &fid, super::types::BYTES_ONLY_IN_LIST_PARAMETER);
            }
            if let Some(Type::Class(c)) = &ty {
                // A handle crosses into a call (the record borrows it for the call); no call hands one back inside a
                // record. An optional one is absent as null (`None`, `null`, `NULL`) and has no default.
                if direction != Direction::Input {
                    self.problem(
                        &f.ty.referenced,
                        &fid,
                        format!("only an input record can hold class `{}`", c.pascal()),
                    );
                } else if optional && f.default.is_some() {
                    self.problem(
                        &f.ty.referenced,
                        &fid,
                        format!("a field holding class `{}` has no default: absent means no handle", c.pascal()),
                    );
                }
            }
            let default = match (&f.default, &ty) {
                (Some(d), Some(t)) => {
                    if !optional {
                        self.problem(
                            &d.referenced,
                            &fid,
                            "a default needs `optional: true`: it is what an absent value derives",
                        );
                    }
                    self.literal(d, t, &fid)
                }
                _ => None,
            };
            let doc = self.doc(f.doc.as_ref(), &f.name.referenced, &fid, &scope, true);
            let since = self.since(f, direction, optional, &mut last_since, &fid);
            if let Some(ty) = ty {
                fields.push(Field { name: Name::parse(&f.name.value), ty, optional, default, since, doc });
            }
        }
        let page = self.page_of(item.page.as_ref(), None, &name.referenced, &id);
        Record { name: Name::parse(&id), c_name, direction, compiled, doc, fields, page }
    }

    /// A field's `since`: only on an optional field of an input record, appended after the fields of the first C
    /// layout, in version order (a C caller's `struct_size` names a prefix of the fields).
    pub(super) fn since(
        &mut self,
        f: &RawField,
        direction: Direction,
        optional: bool,
        last: &mut Option<Vec<u64>>,
        fid: &str,
    ) -> Option<String> {
        let Some(since) = &f.since else {
            if last.is_some() {
                self.problem(
                    &f.name.referenced,
                    fid,
                    "a field of the first C layout after a field with `since`: append new fields at the end",
                );
            }
            return None;
        };
        let version: Option<Vec<u64>> = since.value.split('.').map(|p| p.parse().ok()).collect();
        match version {
            _ if direction != Direction::Input => self.problem(
                &since.referenced,
                fid,
                "`since` grows an input record's C struct; an output record cannot have it",
            ),
            _ if !optional => self.problem(
                &since.referenced,
                fid,
                "a field with `since` must be optional: older C callers leave it absent",
            ),
            Some(v) if v.len() == 3 => {
                if last.as_ref().is_some_and(|l| *l > v) {
                    self.problem(
                        &since.referenced,
                        fid,
                        format!("`since: {}` is older than the field before it", since.value),
                    );
                }
                *last = Some(v);
            }
            _ => self.problem(&since.referenced, fid, format!("`since: {}` is not a version like 0.3.0", since.value)),
        }
        Some(since.value.clone())
    }

    pub(super) fn enumeration(&mut self, item: &RawItem, name: &S<String>) -> Enum {
        let id = name.value.clone();
        self.unexpected(
            &[
                ("fields", item.fields.is_some()),
                ("members", item.members.is_some()),
                ("params", item.params.is_some()),
                ("direction", item.direction.is_some()),
                ("example", item.example.is_some()),
            ],
            &name.referenced,
            &id,
            "an enum",
        );
        let c_name =
            self.c_name(item.c.as_ref(), &format!("{PREFIX}{}_t", Name::parse(&id).snake()), &name.referenced, &id);
        let doc = self.doc(item.doc.as_ref(), &name.referenced, &id, &Scope { members: &[] }, true);
        let mut variants = Vec::new();
        let mut names = BTreeSet::new();
        let mut values: BTreeMap<String, String> = BTreeMap::new();
        let raw = item.values.as_deref().unwrap_or_default();
        if raw.is_empty() {
            self.problem(&name.referenced, &id, "an enum needs at least one value");
        }
        let strings = raw.iter().filter(|v| matches!(v.value.value, RawLiteral::String(_))).count();
        if strings != 0 && strings != raw.len() {
            self.problem(&name.referenced, &id, "values mix numbers and strings; an enum is numbered or string-valued");
        }
        for (ordinal, v) in raw.iter().enumerate() {
            let vid = format!("{id}.{}", v.name.value);
            if !is_pascal(&v.name.value) {
                self.problem(&v.name.referenced, &vid, format!("value name `{}` must be PascalCase", v.name.value));
            }
            if !names.insert(v.name.value.clone()) {
                self.problem(&v.name.referenced, &vid, format!("duplicate value name `{}`", v.name.value));
            }
            let value = match &v.value.value {
                RawLiteral::Integer(n) if *n >= i32::MIN as i64 && *n <= i32::MAX as i64 => EnumValue::Number(*n),
                RawLiteral::String(s) if !s.is_empty() => EnumValue::String(s.clone()),
                other => {
                    self.problem(
                        &v.value.referenced,
                        &vid,
                        format!("value {} is neither a 32-bit integer nor a non-empty string", show(other)),
                    );
                    continue;
                }
            };
            let key = match &value {
                EnumValue::Number(n) => n.to_string(),
                EnumValue::String(s) => format!("{s:?}"),
            };
            if let Some(first) = values.insert(key.clone(), v.name.value.clone()) {
                self.problem(&v.value.referenced, &vid, format!("value {key} clashes with `{id}.{first}`"));
            }
            let doc = self.doc(v.doc.as_ref(), &v.name.referenced, &vid, &Scope { members: &[] }, true);
            variants.push(Variant { name: Name::parse(&v.name.value), value, ordinal, doc });
        }
        let page = self.page_of(item.page.as_ref(), None, &name.referenced, &id);
        Enum { name: Name::parse(&id), c_name, doc, variants, page }
    }
}
