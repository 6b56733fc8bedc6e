//! Doc text: required where the schema says so, and its `[[name]]` references resolved against the declarations.

use super::Checker;
use crate::model::*;
use crate::raw::*;
use serde_saphyr::Location;

/// The context doc references resolve in: the sibling fields or parameters of the thing documented.
pub(super) struct Scope<'a> {
    pub members: &'a [String],
}

impl Scope<'_> {
    pub(super) const EMPTY: Scope<'static> = Scope { members: &[] };
}

impl Checker {
    pub(super) fn doc(
        &mut self,
        raw: Option<&S<String>>,
        fallback: &Location,
        item: &str,
        scope: &Scope,
        required: bool,
    ) -> Doc {
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
}
