//! Checks the raw file into the model, collecting every problem instead of stopping at the first.

use crate::diagnostics::Diagnostic;
use crate::model::*;
use crate::raw::*;
use serde_saphyr::Location;
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
}

fn at(loc: &Location) -> (u32, u32) {
    (loc.line() as u32, loc.column() as u32)
}

const BUILTINS: [&str; 10] =
    ["u32", "u64", "i32", "f64", "bool", "string", "path", "address", "gpu_class", "f32_matrix"];
const PREFIX: &str = "uform_";

fn is_pascal(s: &str) -> bool {
    s.chars().next().is_some_and(|c| c.is_ascii_uppercase()) && s.chars().all(|c| c.is_ascii_alphanumeric())
}
fn is_snake(s: &str) -> bool {
    s.chars().next().is_some_and(|c| c.is_ascii_lowercase())
        && s.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
        && !s.contains("__")
        && !s.ends_with('_')
}

/// The context doc references resolve in: the sibling fields or parameters of the thing documented.
struct Scope<'a> {
    members: &'a [String],
}

impl Checker {
    fn problem(&mut self, loc: &Location, item: &str, message: impl Into<String>) {
        let (line, column) = at(loc);
        self.problems.push(Diagnostic { line, column, item: item.to_string(), message: message.into() });
    }

    fn doc(&mut self, raw: Option<&S<String>>, fallback: &Location, item: &str, scope: &Scope, required: bool) -> Doc {
        match raw {
            Some(text) if !text.value.trim().is_empty() => self.parse_doc(&text.value, &text.referenced, item, scope),
            _ => {
                if required {
                    self.problem(fallback, item, "has no doc text; every item, field, value and member needs `doc`");
                }
                Doc::default()
            }
        }
    }

    fn parse_doc(&mut self, text: &str, loc: &Location, item: &str, scope: &Scope) -> Doc {
        if text.contains("*/") {
            self.problem(
                loc,
                item,
                "doc text contains `*/`, which would end the /** */ comments of C, TypeScript, Kotlin and Swift early",
            );
        }
        let mut segments = Vec::new();
        let mut rest = text.trim();
        while let Some(start) = rest.find("[[") {
            if start > 0 {
                segments.push(DocSegment::Text(rest[..start].to_string()));
            }
            let after = &rest[start + 2..];
            let Some(end) = after.find("]]") else {
                self.problem(loc, item, format!("doc text has an unclosed reference `[[{after}`"));
                return Doc { segments };
            };
            let target = &after[..end];
            if let Some(reference) = self.resolve(target, loc, item, scope) {
                segments.push(DocSegment::Ref(reference));
            } else {
                segments.push(DocSegment::Text(format!("`{target}`")));
            }
            rest = &after[end + 2..];
        }
        if !rest.is_empty() {
            segments.push(DocSegment::Text(rest.to_string()));
        }
        Doc { segments }
    }

    fn resolve(&mut self, target: &str, loc: &Location, item: &str, scope: &Scope) -> Option<Reference> {
        if let Some((class, method)) = target.split_once('.') {
            let Some(members) = self.declared.classes.get(class) else {
                self.problem(loc, item, format!("doc references `{target}`, a method on unknown class `{class}`"));
                return None;
            };
            if !members.contains(method) {
                self.problem(
                    loc,
                    item,
                    format!("doc references `{target}`, but class `{class}` has no member `{method}`"),
                );
                return None;
            }
            return Some(Reference::Method { class: Name::parse(class), method: Name::parse(method) });
        }
        if scope.members.iter().any(|m| m == target) {
            return Some(Reference::Member(Name::parse(target)));
        }
        if self.declared.functions.contains(target) {
            return Some(Reference::Function(Name::parse(target)));
        }
        if self.declared.records.contains(target)
            || self.declared.enums.contains_key(target)
            || self.declared.classes.contains_key(target)
        {
            return Some(Reference::Type(Name::parse(target)));
        }
        self.problem(loc, item, format!("doc references unknown `[[{target}]]`"));
        None
    }

    fn ty(&mut self, raw: &S<String>, item: &str) -> Option<Type> {
        let text = raw.value.trim();
        if let Some(inner) = text.strip_prefix("list<").and_then(|t| t.strip_suffix('>')) {
            let element = S { value: inner.to_string(), referenced: raw.referenced, defined: raw.defined };
            let element = self.ty(&element, item)?;
            if matches!(element, Type::List(_) | Type::Class(_) | Type::F32Matrix) {
                self.problem(&raw.referenced, item, format!("type `{text}`: a list holds scalars, enums or records"));
                return None;
            }
            return Some(Type::List(Box::new(element)));
        }
        Some(match text {
            "u32" => Type::U32,
            "u64" => Type::U64,
            "i32" => Type::I32,
            "f64" => Type::F64,
            "bool" => Type::Bool,
            "string" => Type::String,
            "path" => Type::Path,
            "address" => Type::Address,
            "gpu_class" => Type::GpuClass,
            "f32_matrix" => Type::F32Matrix,
            name if self.declared.records.contains(name) => Type::Record(Name::parse(name)),
            name if self.declared.enums.contains_key(name) => Type::Enum(Name::parse(name)),
            name if self.declared.classes.contains_key(name) => Type::Class(Name::parse(name)),
            _ => {
                self.problem(
                    &raw.referenced,
                    item,
                    format!(
                        "unknown type `{text}`; use a builtin ({}), `list<T>`, or a declared record, enum or class",
                        BUILTINS.join(", ")
                    ),
                );
                return None;
            }
        })
    }

    fn literal(&mut self, raw: &S<RawLiteral>, ty: &Type, item: &str) -> Option<Literal> {
        let bad = |this: &mut Checker, why: String| {
            this.problem(
                &raw.referenced,
                item,
                format!("default {} does not fit type {}: {why}", show(&raw.value), ty),
            );
            None
        };
        let value = match &raw.value {
            RawLiteral::Unsigned(n) => RawLiteral::Integer128(*n as i128),
            RawLiteral::Integer(n) => RawLiteral::Integer128(*n as i128),
            other => other.clone(),
        };
        match (ty, &value) {
            (t, RawLiteral::Integer128(n)) if t.is_integer() => {
                let (lo, hi) = t.integer_range().unwrap_or((0, 0));
                if *n < lo || *n > hi {
                    return bad(self, format!("it lies outside {lo}..={hi}"));
                }
                Some(Literal::Integer(*n))
            }
            (Type::F64, RawLiteral::Float(f)) => Some(Literal::Float(*f)),
            (Type::F64, RawLiteral::Integer128(n)) => Some(Literal::Float(*n as f64)),
            (Type::Bool, RawLiteral::Bool(b)) => Some(Literal::Bool(*b)),
            (Type::String | Type::Path, RawLiteral::String(s)) => Some(Literal::String(s.clone())),
            (Type::Enum(name), RawLiteral::String(s)) => {
                let variants = self.declared.enums.get(&name.pascal()).cloned().unwrap_or_default();
                if variants.iter().any(|v| v == s) {
                    Some(Literal::Variant(Name::parse(s)))
                } else {
                    bad(self, format!("`{}` has no value `{s}` (it has {})", name.pascal(), variants.join(", ")))
                }
            }
            (Type::Record(_), RawLiteral::Map(m)) if m.is_empty() => Some(Literal::EmptyRecord),
            (Type::Record(_), _) => bad(self, "a record takes only `{}`, every field absent".to_string()),
            _ => bad(self, "the kinds differ".to_string()),
        }
    }

    fn c_name(&mut self, raw: Option<&S<String>>, expected: &str, fallback: &Location, item: &str) -> String {
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

    fn flag(raw: Option<&S<bool>>, default: bool) -> bool {
        raw.map_or(default, |b| b.value)
    }

    fn unexpected(&mut self, present: &[(&str, bool)], loc: &Location, item: &str, kind: &str) {
        for (key, is_present) in present {
            if *is_present {
                self.problem(loc, item, format!("`{key}` does not belong to {kind}"));
            }
        }
    }

    fn declare(&mut self, file: &RawFile) {
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

    fn record(&mut self, item: &RawItem, name: &S<String>) -> Record {
        let id = name.value.clone();
        self.unexpected(
            &[
                ("values", item.values.is_some()),
                ("members", item.members.is_some()),
                ("params", item.params.is_some()),
                ("returns", item.returns.is_some()),
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
            if let Some(Type::Class(c)) = &ty {
                // A handle crosses into a call (the record borrows it for the call); no call hands one back inside a
                // record, and an absent handle has no meaning a default could give.
                if direction != Direction::Input {
                    self.problem(
                        &f.ty.referenced,
                        &fid,
                        format!("only an input record can hold class `{}`", c.pascal()),
                    );
                } else if optional {
                    self.problem(
                        &f.ty.referenced,
                        &fid,
                        format!("a field holding class `{}` must be required", c.pascal()),
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
        Record { name: Name::parse(&id), c_name, direction, compiled, doc, fields }
    }

    /// A field's `since`: only on an optional field of an input record, appended after the fields of the first C
    /// layout, in version order (a C caller's `struct_size` names a prefix of the fields).
    fn since(
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

    fn enumeration(&mut self, item: &RawItem, name: &S<String>) -> Enum {
        let id = name.value.clone();
        self.unexpected(
            &[
                ("fields", item.fields.is_some()),
                ("members", item.members.is_some()),
                ("params", item.params.is_some()),
                ("direction", item.direction.is_some()),
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
        Enum { name: Name::parse(&id), c_name, doc, variants }
    }

    #[allow(clippy::too_many_arguments)]
    fn callable(
        &mut self,
        name: &S<String>,
        id: &str,
        kind: CallableKind,
        c: Option<&S<String>>,
        expected_c: String,
        doc: Option<&S<String>>,
        params: Option<&Vec<RawParam>>,
        returns: Option<&S<String>>,
        returns_optional: Option<&S<bool>>,
        flags: Flags<'_>,
        only: Option<&Vec<S<String>>>,
    ) -> Callable {
        let Flags { throws, blocking, try_first, constant, is_async } = flags;
        if !is_snake(&name.value) {
            self.problem(&name.referenced, id, format!("name `{}` must be snake_case", name.value));
        }
        let c_name = self.c_name(c, &expected_c, &name.referenced, id);
        let param_names: Vec<String> = params.into_iter().flatten().map(|p| p.name.value.clone()).collect();
        let doc = self.doc(doc, &name.referenced, id, &Scope { members: &param_names }, true);
        let mut out_params = Vec::new();
        let mut seen = BTreeSet::new();
        for p in params.into_iter().flatten() {
            let pid = format!("{id}({})", p.name.value);
            if !is_snake(&p.name.value) {
                self.problem(&p.name.referenced, &pid, format!("parameter name `{}` must be snake_case", p.name.value));
            }
            if !seen.insert(p.name.value.clone()) {
                self.problem(&p.name.referenced, &pid, format!("duplicate parameter `{}`", p.name.value));
            }
            let ty = self.ty(&p.ty, &pid);
            if ty == Some(Type::F32Matrix) {
                self.problem(&p.ty.referenced, &pid, "`f32_matrix` is only ever a result, not a parameter");
            }
            let default = match (&p.default, &ty) {
                (Some(d), Some(t)) => self.literal(d, t, &pid),
                _ => None,
            };
            let pdoc = self.doc(p.doc.as_ref(), &p.name.referenced, &pid, &Scope { members: &param_names }, false);
            if let Some(ty) = ty {
                out_params.push(Param { name: Name::parse(&p.name.value), ty, default, doc: pdoc });
            }
        }
        let mut defaulted = false;
        for p in &out_params {
            if p.default.is_some() {
                defaulted = true;
            } else if defaulted {
                let loc = params
                    .into_iter()
                    .flatten()
                    .find(|r| Name::parse(&r.name.value) == p.name)
                    .map(|r| r.name.referenced);
                self.problem(
                    &loc.unwrap_or(name.referenced),
                    id,
                    format!("parameter `{}` without a default follows one with a default", p.name.snake()),
                );
            }
        }
        let returns_ty = returns.and_then(|r| self.ty(r, id));
        let returns_optional = Self::flag(returns_optional, false);
        if returns_optional && returns.is_none() {
            self.problem(&name.referenced, id, "`returns_optional` without `returns`");
        }
        let only = only.map(|langs| {
            langs
                .iter()
                .filter_map(|l| {
                    let lang = Language::parse(&l.value);
                    if lang.is_none() {
                        self.problem(
                            &l.referenced,
                            id,
                            format!(
                                "`only` names unknown language `{}` (c, typescript, python, kotlin, swift)",
                                l.value
                            ),
                        );
                    }
                    lang
                })
                .collect()
        });
        let callable = Callable {
            name: Name::parse(&name.value),
            c_name,
            kind,
            doc,
            params: out_params,
            returns: returns_ty,
            returns_optional,
            throws: Self::flag(throws, true),
            blocking: Self::flag(blocking, false),
            try_first: Self::flag(try_first, false),
            constant: Self::flag(constant, false),
            is_async: Self::flag(is_async, false),
            twin_of: None,
            only,
        };
        if let Some(flag) = try_first.filter(|f| f.value) {
            if !callable.blocking {
                self.problem(
                    &flag.referenced,
                    id,
                    "`try_first` needs `blocking: true`: it names a non-blocking attempt made before blocking",
                );
            }
        }
        if let Some(flag) = is_async.filter(|f| f.value) {
            if !callable.blocking || !callable.throws || kind == CallableKind::Free {
                self.problem(
                    &flag.referenced,
                    id,
                    "`async` needs a blocking constructor, method or function that throws (not a `free`): its async form runs the blocking call off the caller's thread",
                );
            }
        }
        if let Some(flag) = constant.filter(|f| f.value) {
            if kind != CallableKind::Function
                || !callable.params.is_empty()
                || callable.returns.is_none()
                || callable.blocking
            {
                self.problem(
                    &flag.referenced,
                    id,
                    "`constant` needs a function with no parameters that returns a value and does not block",
                );
            }
        }
        callable
    }

    fn class(&mut self, item: &RawItem, name: &S<String>) -> Class {
        let id = name.value.clone();
        self.unexpected(
            &[
                ("fields", item.fields.is_some()),
                ("values", item.values.is_some()),
                ("params", item.params.is_some()),
                ("returns", item.returns.is_some()),
            ],
            &name.referenced,
            &id,
            "a class",
        );
        let snake = Name::parse(&id).snake();
        let c_name = self.c_name(item.c.as_ref(), &format!("{PREFIX}{snake}_t"), &name.referenced, &id);
        let empty = Scope { members: &[] };
        let doc = self.doc(item.doc.as_ref(), &name.referenced, &id, &empty, true);
        let details = self.doc(item.details.as_ref(), &name.referenced, &id, &empty, false);
        let thread_safety = self.doc(item.thread_safety.as_ref(), &name.referenced, &id, &empty, false);
        if item.thread_safety.is_none() {
            self.problem(
                &name.referenced,
                &id,
                "has no `thread_safety`; say whether its methods may be called from several threads",
            );
        }
        let compiled = match &item.compiled {
            Some(c) => Name::parse(&c.value),
            None => {
                self.problem(&name.referenced, &id, "has no `compiled` handle name");
                Name::parse(&format!("Compiled{id}"))
            }
        };
        let compiled_doc =
            self.doc(item.compiled_doc.as_ref(), &name.referenced, &format!("{id}.compiled"), &empty, true);
        let mut members = Vec::new();
        let mut seen = BTreeSet::new();
        let mut frees = 0;
        for m in item.members.iter().flatten() {
            let (kind, mname) = match (&m.constructor, &m.method, &m.free) {
                (Some(n), None, None) => (CallableKind::Constructor, n),
                (None, Some(n), None) => (CallableKind::Method, n),
                (None, None, Some(n)) => (CallableKind::Free, n),
                _ => {
                    let loc = m.c.as_ref().map(|c| c.referenced).unwrap_or(name.referenced);
                    self.problem(&loc, &id, "a member is named by exactly one of `constructor`, `method`, `free`");
                    continue;
                }
            };
            let mid = format!("{id}.{}", mname.value);
            if !seen.insert(mname.value.clone()) {
                self.problem(&mname.referenced, &mid, format!("duplicate member `{}`", mname.value));
            }
            if kind == CallableKind::Free {
                frees += 1;
            }
            let expected = format!("{PREFIX}{snake}_{}", Name::parse(&mname.value).snake());
            let mut callable = self.callable(
                mname,
                &mid,
                kind,
                m.c.as_ref(),
                expected,
                m.doc.as_ref(),
                m.params.as_ref(),
                m.returns.as_ref(),
                m.returns_optional.as_ref(),
                Flags {
                    throws: m.throws.as_ref(),
                    blocking: m.blocking.as_ref(),
                    try_first: m.try_first.as_ref(),
                    constant: m.constant.as_ref(),
                    is_async: m.is_async.as_ref(),
                },
                m.only.as_ref(),
            );
            if kind == CallableKind::Constructor {
                if m.returns.is_some() {
                    self.problem(&mname.referenced, &mid, "a constructor returns its class; drop `returns`");
                }
                callable.returns = Some(Type::Class(Name::parse(&id)));
            }
            members.push(callable);
        }
        if frees != 1 {
            self.problem(&name.referenced, &id, format!("a class needs exactly one `free` member, found {frees}"));
        }
        Class { name: Name::parse(&id), c_name, doc, details, thread_safety, compiled, compiled_doc, members }
    }

    fn function(&mut self, item: &RawItem, name: &S<String>) -> Callable {
        let id = name.value.clone();
        self.unexpected(
            &[
                ("fields", item.fields.is_some()),
                ("values", item.values.is_some()),
                ("members", item.members.is_some()),
                ("direction", item.direction.is_some()),
            ],
            &name.referenced,
            &id,
            "a function",
        );
        let expected = format!("{PREFIX}{}", Name::parse(&id).snake());
        self.callable(
            name,
            &id,
            CallableKind::Function,
            item.c.as_ref(),
            expected,
            item.doc.as_ref(),
            item.params.as_ref(),
            item.returns.as_ref(),
            item.returns_optional.as_ref(),
            Flags {
                throws: item.throws.as_ref(),
                blocking: item.blocking.as_ref(),
                try_first: item.try_first.as_ref(),
                constant: item.constant.as_ref(),
                is_async: item.is_async.as_ref(),
            },
            item.only.as_ref(),
        )
    }
}

/// The yes/no keys of a function or member, as written.
struct Flags<'a> {
    throws: Option<&'a S<bool>>,
    blocking: Option<&'a S<bool>>,
    try_first: Option<&'a S<bool>>,
    constant: Option<&'a S<bool>>,
    is_async: Option<&'a S<bool>>,
}

fn show(raw: &RawLiteral) -> String {
    match raw {
        RawLiteral::Bool(b) => b.to_string(),
        RawLiteral::Integer(n) => n.to_string(),
        RawLiteral::Unsigned(n) => n.to_string(),
        RawLiteral::Integer128(n) => n.to_string(),
        RawLiteral::Float(f) => f.to_string(),
        RawLiteral::String(s) => format!("{s:?}"),
        RawLiteral::Map(m) if m.is_empty() => "{}".to_string(),
        RawLiteral::Map(_) => "a map".to_string(),
        RawLiteral::List(_) => "a list".to_string(),
    }
}

/// Checks a parsed file; every problem found is returned at once.
pub fn check(file: &RawFile) -> Result<Api, Vec<Diagnostic>> {
    let mut c = Checker { problems: Vec::new(), declared: Declared::default() };
    c.declare(file);
    let empty = Scope { members: &[] };
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
                "title `{}` must be one PascalCase word: it names the reference pages, docs/<language>/<title>.md",
                file.title.value
            ),
        );
    }
    let doc = c.doc(file.doc.as_ref(), &file.package.referenced, "package", &empty, true);
    let intro = c.doc(file.intro.as_ref(), &file.package.referenced, "package", &empty, false);

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
    let mut c_names: BTreeMap<String, String> = BTreeMap::new();
    for item in &items {
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
                c.problems.push(Diagnostic {
                    line: 0,
                    column: 0,
                    item: item.name().pascal(),
                    message: format!("C name `{n}` is also used by `{first}`"),
                });
            }
        }
    }
    if c.problems.is_empty() {
        Ok(Api {
            package: file.package.value.clone(),
            version: file.version.value.clone(),
            title: file.title.value.clone(),
            doc,
            intro,
            errors,
            items,
        })
    } else {
        c.problems.sort();
        c.problems.dedup();
        Err(c.problems)
    }
}
