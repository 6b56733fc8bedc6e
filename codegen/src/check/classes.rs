//! Classes: a compiled handle, a thread-safety sentence, members each checked as a callable, exactly one `free`.

use super::callables::source;
use super::docs::Scope;
use super::names::PREFIX;
use super::Checker;
use crate::model::*;
use crate::raw::*;
use std::collections::BTreeSet;

impl Checker {
    pub(super) fn class(&mut self, item: &RawItem, name: &S<String>) -> Class {
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
        let page = self.page_of(item.page.as_ref(), None, &name.referenced, &id);
        let examples = self.examples(item.example.as_ref(), &id);
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
            let mut source = source!(m, mname, mid.clone(), kind, expected);
            source.class_page = Some(page.clone());
            let mut callable = self.callable(source);
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
        Class {
            name: Name::parse(&id),
            c_name,
            doc,
            details,
            thread_safety,
            compiled,
            compiled_doc,
            members,
            examples,
            page,
        }
    }
}
