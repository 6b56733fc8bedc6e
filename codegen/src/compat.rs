//! Compatibility between two checked interfaces: what a program written against `old` may find broken in `new`, per
//! surface (C, TypeScript, Python, Kotlin, Swift), and whether the version number moved far enough for it.
//!
//! Breaking, on every surface: a removed item, field, variant, callable or error kind (a rename is a removal plus an
//! addition, and is named as a likely rename); a changed type, default or return; a parameter made required (added
//! without a default, or its default dropped); an input field made required, an output field made optional; a
//! parameter moved. Breaking on some surfaces only: a C struct layout change (a field added, removed or moved in
//! any record, except an optional field appended to an input record with `since`, which older C callers' `struct_size`
//! leaves absent), a renumbered enum value (C numbers every enum; TypeScript and Python show numbered values), a changed
//! C name, a callable that starts to throw (Swift and Kotlin declare it).
//!
//! [`required_bump`] says which version a breaking change needs: for 0.x a new minor, from 1.0 a new major.

use crate::model::{Api, Callable, Class, Enum, EnumValue, Field, Item, Literal, Name, Param, Record, Type};
use std::fmt::Write as _;

/// A surface a program consumes the interface through.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Surface {
    C,
    TypeScript,
    Python,
    Kotlin,
    Swift,
}

impl Surface {
    pub const ALL: [Surface; 5] = [Surface::C, Surface::TypeScript, Surface::Python, Surface::Kotlin, Surface::Swift];
    pub fn name(self) -> &'static str {
        match self {
            Surface::C => "c",
            Surface::TypeScript => "typescript",
            Surface::Python => "python",
            Surface::Kotlin => "kotlin",
            Surface::Swift => "swift",
        }
    }
}

/// One incompatible change.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Finding {
    /// The surfaces it breaks.
    pub surfaces: Vec<Surface>,
    /// What it is about, in IDL spelling: `Executor.drain`, `MeshOptions.timeout_seconds`.
    pub subject: String,
    pub what: String,
}

/// Every incompatible change from `old` to `new`, in the order of `old`'s items.
pub fn compare(old: &Api, new: &Api) -> Vec<Finding> {
    let mut out = Findings(Vec::new());
    errors(old, new, &mut out);
    let added: Vec<&Item> = new.items.iter().filter(|n| !old.items.iter().any(|o| o.name() == n.name())).collect();
    for item in &old.items {
        let Some(now) = new.items.iter().find(|n| n.name() == item.name()) else {
            let renamed = added.iter().find(|a| same_shape(item, a)).map(|a| display_name(a));
            let what = match renamed {
                Some(to) => format!("removed (renamed to `{to}`?)"),
                None => "removed".into(),
            };
            out.all(item_subject(item), what);
            continue;
        };
        match (item, now) {
            (Item::Record(a), Item::Record(b)) => record(a, b, &mut out),
            (Item::Enum(a), Item::Enum(b)) => enumeration(a, b, &mut out),
            (Item::Class(a), Item::Class(b)) => class(a, b, &mut out),
            (Item::Function(a), Item::Function(b)) => callable(&a.name.snake(), a, b, &mut out),
            _ => out.all(item_subject(item), format!("changed from {} to {}", kind(item), kind(now))),
        }
    }
    out.0
}

/// The smallest version `new` needs after `old` when `breaking`: for 0.x a new minor, from 1.0 a new major.
/// `Ok(())` when `new` is at least that, or when nothing breaks.
pub fn required_bump(old_version: &str, new_version: &str, breaking: bool) -> Result<(), String> {
    if !breaking {
        return Ok(());
    }
    let parse = |v: &str| -> Option<(u64, u64)> {
        let mut parts = v.split(['.', '-', '+']);
        Some((parts.next()?.parse().ok()?, parts.next()?.parse().ok()?))
    };
    let (Some((old_major, old_minor)), Some((new_major, new_minor))) = (parse(old_version), parse(new_version)) else {
        return Err(format!("cannot compare versions {old_version} and {new_version}"));
    };
    let (ok, needed) = if old_major == 0 {
        (new_major > 0 || new_minor > old_minor, format!("0.{}.0", old_minor + 1))
    } else {
        (new_major > old_major, format!("{}.0.0", old_major + 1))
    };
    if ok {
        Ok(())
    } else {
        Err(format!(
            "version {old_version} -> {new_version}: these breaking changes need at least {needed} \
             (bump `version` in idl/uform.yaml)"
        ))
    }
}

/// The findings as text, grouped by surface: `c:` then one indented line per finding, and so on.
pub fn report(findings: &[Finding]) -> String {
    let mut out = String::new();
    for surface in Surface::ALL {
        let mine: Vec<&Finding> = findings.iter().filter(|f| f.surfaces.contains(&surface)).collect();
        if mine.is_empty() {
            continue;
        }
        let _ = writeln!(out, "{}:", surface.name());
        for f in mine {
            let _ = writeln!(out, "  {}: {}", f.subject, f.what);
        }
    }
    out
}

/// The whole answer for a pair: the report, then `version OLD -> NEW: ok` or `refused: ...` (the fixtures'
/// expected.txt).
pub fn verdict(old: &Api, new: &Api) -> String {
    let findings = compare(old, new);
    let mut text = report(&findings);
    match required_bump(&old.version, &new.version, !findings.is_empty()) {
        Ok(()) => text.push_str(&format!("version {} -> {}: ok\n", old.version, new.version)),
        Err(e) => text.push_str(&format!("refused: {e}\n")),
    }
    text
}

struct Findings(Vec<Finding>);

impl Findings {
    fn add(&mut self, surfaces: &[Surface], subject: impl Into<String>, what: impl Into<String>) {
        self.0.push(Finding { surfaces: surfaces.to_vec(), subject: subject.into(), what: what.into() });
    }
    fn all(&mut self, subject: impl Into<String>, what: impl Into<String>) {
        self.add(&Surface::ALL, subject, what);
    }
}

fn errors(old: &Api, new: &Api, out: &mut Findings) {
    for e in &old.errors {
        match new.errors.iter().find(|n| n.name == e.name) {
            None => out.all(format!("error {}", e.name.pascal()), "removed"),
            Some(n) if n.status != e.status => out.add(
                &[Surface::C],
                format!("error {}", e.name.pascal()),
                format!("status renumbered from {} to {}", e.status, n.status),
            ),
            Some(_) => {}
        }
    }
}

fn record(a: &Record, b: &Record, out: &mut Findings) {
    let name = a.name.pascal();
    if a.c_name != b.c_name {
        out.add(&[Surface::C], &name, format!("C name changed from {} to {}", a.c_name, b.c_name));
    }
    if a.direction != b.direction {
        out.all(&name, format!("direction changed from {:?} to {:?}", a.direction, b.direction).to_lowercase());
    }
    for (i, f) in a.fields.iter().enumerate() {
        let subject = format!("{name}.{}", f.name.snake());
        let Some((j, g)) = b.fields.iter().enumerate().find(|(_, g)| g.name == f.name) else {
            out.all(subject, "field removed");
            continue;
        };
        field(&subject, a.direction == crate::model::Direction::Input, f, g, out);
        if i != j {
            out.add(&[Surface::C], &subject, format!("C struct layout: field moved from position {i} to {j}"));
        }
    }
    for (j, g) in b.fields.iter().enumerate().filter(|(_, g)| !a.fields.iter().any(|f| f.name == g.name)) {
        let subject = format!("{name}.{}", g.name.snake());
        let input = a.direction == crate::model::Direction::Input;
        if input && !g.optional {
            out.all(&subject, "required field added");
        } else if input && g.since.is_some() && j >= a.fields.len() {
            // Appended to a versioned C struct: an older caller's `struct_size` leaves it absent.
        } else if input && j >= a.fields.len() {
            out.add(&[Surface::C], &subject, "C struct layout: field appended without `since`");
        } else {
            out.add(&[Surface::C], &subject, "C struct layout: field added");
        }
    }
}

fn field(subject: &str, input: bool, f: &Field, g: &Field, out: &mut Findings) {
    if f.ty != g.ty {
        out.all(subject, format!("type changed from {} to {}", f.ty, g.ty));
    }
    if f.default != g.default {
        out.all(subject, format!("default changed from {} to {}", literal(&f.default), literal(&g.default)));
    }
    match (input, f.optional, g.optional) {
        (true, true, false) => out.all(subject, "made required"),
        (false, false, true) => out.all(subject, "made optional (readers must now handle its absence)"),
        _ => {}
    }
}

fn enumeration(a: &Enum, b: &Enum, out: &mut Findings) {
    let name = a.name.pascal();
    if a.c_name != b.c_name {
        out.add(&[Surface::C], &name, format!("C name changed from {} to {}", a.c_name, b.c_name));
    }
    for v in &a.variants {
        let subject = format!("{name}.{}", v.name.pascal());
        let Some(w) = b.variants.iter().find(|w| w.name == v.name) else {
            out.all(subject, "value removed");
            continue;
        };
        match (&v.value, &w.value) {
            (EnumValue::Number(x), EnumValue::Number(y)) if x != y => out.add(
                &[Surface::C, Surface::TypeScript, Surface::Python],
                subject,
                format!("renumbered from {x} to {y}"),
            ),
            (EnumValue::String(x), EnumValue::String(y)) if x != y => out.add(
                &[Surface::TypeScript, Surface::Python],
                &subject,
                format!("value changed from \"{x}\" to \"{y}\""),
            ),
            (EnumValue::String(_), EnumValue::String(_)) if a.number(v) != b.number(w) => out.add(
                &[Surface::C],
                subject,
                format!("renumbered from {} to {} (its position)", a.number(v), b.number(w)),
            ),
            (EnumValue::Number(_), EnumValue::String(_)) | (EnumValue::String(_), EnumValue::Number(_)) => {
                out.all(subject, "changed between a numbered and a string value")
            }
            _ => {}
        }
    }
}

fn class(a: &Class, b: &Class, out: &mut Findings) {
    let name = a.name.pascal();
    if a.c_name != b.c_name {
        out.add(&[Surface::C], &name, format!("C name changed from {} to {}", a.c_name, b.c_name));
    }
    for m in &a.members {
        let subject = format!("{name}.{}", m.name.snake());
        match b.members.iter().find(|n| n.name == m.name) {
            Some(n) => callable(&subject, m, n, out),
            None => out.all(subject, format!("{:?} removed", m.kind).to_lowercase()),
        }
    }
}

fn callable(subject: &str, a: &Callable, b: &Callable, out: &mut Findings) {
    if a.kind != b.kind {
        out.all(subject, format!("changed from {:?} to {:?}", a.kind, b.kind).to_lowercase());
    }
    if a.c_name != b.c_name {
        out.add(&[Surface::C], subject, format!("C name changed from {} to {}", a.c_name, b.c_name));
    }
    for surface in Surface::ALL {
        let language = language(surface);
        if a.offered_in(language) && !b.offered_in(language) {
            out.add(&[surface], subject, "no longer offered");
        }
    }
    if a.returns != b.returns {
        out.all(subject, format!("return type changed from {} to {}", returns(&a.returns), returns(&b.returns)));
    }
    if !a.returns_optional && b.returns_optional {
        out.all(subject, "return made optional");
    }
    if !a.throws && b.throws {
        out.add(&[Surface::Kotlin, Surface::Swift], subject, "now throws");
    }
    for (i, p) in a.params.iter().enumerate() {
        let what = format!("{subject}({})", p.name.snake());
        let Some((j, q)) = b.params.iter().enumerate().find(|(_, q)| q.name == p.name) else {
            out.all(what, "parameter removed");
            continue;
        };
        param(&what, p, q, out);
        if i != j {
            out.all(&what, format!("parameter moved from position {i} to {j}"));
        }
    }
    for q in b.params.iter().filter(|q| !a.params.iter().any(|p| p.name == q.name)) {
        let what = format!("{subject}({})", q.name.snake());
        if q.default.is_none() {
            out.all(what, "required parameter added");
        } else {
            out.add(&[Surface::C], what, "parameter added (the C signature changes)");
        }
    }
}

fn param(subject: &str, p: &Param, q: &Param, out: &mut Findings) {
    if p.ty != q.ty {
        out.all(subject, format!("type changed from {} to {}", p.ty, q.ty));
    }
    match (&p.default, &q.default) {
        (Some(_), None) => out.all(subject, "parameter made required (its default was removed)"),
        (Some(x), Some(y)) if x != y => out.all(
            subject,
            format!("default changed from {} to {}", literal(&Some(x.clone())), literal(&Some(y.clone()))),
        ),
        _ => {}
    }
}

fn language(surface: Surface) -> crate::model::Language {
    use crate::model::Language;
    match surface {
        Surface::C => Language::C,
        Surface::TypeScript => Language::TypeScript,
        Surface::Python => Language::Python,
        Surface::Kotlin => Language::Kotlin,
        Surface::Swift => Language::Swift,
    }
}

fn kind(item: &Item) -> &'static str {
    match item {
        Item::Record(_) => "record",
        Item::Enum(_) => "enum",
        Item::Class(_) => "class",
        Item::Function(_) => "function",
    }
}

fn item_subject(item: &Item) -> String {
    format!("{} {}", kind(item), display_name(item))
}

/// An item's name as the IDL spells it: functions in snake_case, types in PascalCase.
fn display_name(item: &Item) -> String {
    match item {
        Item::Function(f) => f.name.snake(),
        other => other.name().pascal(),
    }
}

/// Whether a removed item and an added one look like the same thing under another name.
fn same_shape(a: &Item, b: &Item) -> bool {
    let names = |fields: &[Field]| fields.iter().map(|f| f.name.clone()).collect::<Vec<Name>>();
    match (a, b) {
        (Item::Record(x), Item::Record(y)) => names(&x.fields) == names(&y.fields),
        (Item::Enum(x), Item::Enum(y)) => x.variants.iter().map(|v| &v.name).eq(y.variants.iter().map(|v| &v.name)),
        (Item::Class(x), Item::Class(y)) => x.members.iter().map(|m| &m.name).eq(y.members.iter().map(|m| &m.name)),
        (Item::Function(x), Item::Function(y)) => {
            x.params.iter().map(|p| (&p.name, &p.ty)).eq(y.params.iter().map(|p| (&p.name, &p.ty)))
                && x.returns == y.returns
        }
        _ => false,
    }
}

fn returns(ty: &Option<Type>) -> String {
    ty.as_ref().map_or_else(|| "nothing".into(), Type::to_string)
}

fn literal(value: &Option<Literal>) -> String {
    match value {
        None => "none".into(),
        Some(Literal::Integer(n)) => n.to_string(),
        Some(Literal::Float(x)) => x.to_string(),
        Some(Literal::Bool(b)) => b.to_string(),
        Some(Literal::String(s)) => format!("\"{s}\""),
        Some(Literal::Variant(v)) => v.pascal(),
        Some(Literal::EmptyRecord) => "{}".into(),
    }
}
