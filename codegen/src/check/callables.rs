//! Functions and class members: names, parameters, results and the flags that must agree with each other
//! (`try_first` needs `blocking`, `async` a blocking call that throws, `constant` a function without parameters).

use super::docs::Scope;
use super::names::{is_snake, PREFIX};
use super::Checker;
use crate::model::*;
use crate::raw::*;
use std::collections::BTreeSet;

/// What a function or a class member says about its call, as written, with the name it is reported under.
pub(super) struct CallableSource<'a> {
    pub name: &'a S<String>,
    /// `function`, or `Class.member`: the item diagnostics name.
    pub id: String,
    pub kind: CallableKind,
    /// The C name the convention gives it.
    pub expected_c: String,
    pub c: Option<&'a S<String>>,
    pub doc: Option<&'a S<String>>,
    pub params: Option<&'a Vec<RawParam>>,
    pub returns: Option<&'a S<String>>,
    pub returns_optional: Option<&'a S<bool>>,
    pub throws: Option<&'a S<bool>>,
    pub blocking: Option<&'a S<bool>>,
    pub try_first: Option<&'a S<bool>>,
    pub constant: Option<&'a S<bool>>,
    pub is_async: Option<&'a S<bool>>,
    pub only: Option<&'a Vec<S<String>>>,
    /// The page it names, and its class's page, which a member without one is documented on.
    pub page: Option<&'a S<String>>,
    pub class_page: Option<Name>,
}

/// A [`CallableSource`] from a raw item or member (both spell the call's keys the same way).
macro_rules! source {
    ($raw:expr, $name:expr, $id:expr, $kind:expr, $expected_c:expr) => {
        $crate::check::callables::CallableSource {
            name: $name,
            id: $id,
            kind: $kind,
            expected_c: $expected_c,
            c: $raw.c.as_ref(),
            doc: $raw.doc.as_ref(),
            params: $raw.params.as_ref(),
            returns: $raw.returns.as_ref(),
            returns_optional: $raw.returns_optional.as_ref(),
            throws: $raw.throws.as_ref(),
            blocking: $raw.blocking.as_ref(),
            try_first: $raw.try_first.as_ref(),
            constant: $raw.constant.as_ref(),
            is_async: $raw.is_async.as_ref(),
            only: $raw.only.as_ref(),
            page: $raw.page.as_ref(),
            class_page: None,
        }
    };
}
pub(super) use source;

impl Checker {
    /// Checks one function or class member into its callable.
    pub(super) fn callable(&mut self, source: CallableSource<'_>) -> Callable {
        let CallableSource {
            name,
            id,
            kind,
            expected_c,
            c,
            doc,
            params,
            returns,
            returns_optional,
            throws,
            blocking,
            try_first,
            constant,
            is_async,
            only,
            page,
            class_page,
        } = source;
        let id = id.as_str();
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
            if ty == Some(Type::Bytes) {
                self.problem(&p.ty.referenced, &pid, super::types::BYTES_ONLY_IN_LIST_PARAMETER);
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
        if let (Some(r), Some(ty)) = (returns, &returns_ty) {
            if ty.holds_bytes() {
                self.problem(&r.referenced, id, super::types::BYTES_ONLY_IN_LIST_PARAMETER);
            }
        }
        let returns_optional = Self::flag(returns_optional, false);
        if returns_optional && returns.is_none() {
            self.problem(&name.referenced, id, "`returns_optional` without `returns`");
        }
        let only = self.only(only, id);
        let page = self.page_of(page, class_page.as_ref(), &name.referenced, id);
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
            page,
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

    pub(super) fn function(&mut self, item: &RawItem, name: &S<String>) -> Callable {
        let id = name.value.clone();
        self.unexpected(
            &[
                ("fields", item.fields.is_some()),
                ("values", item.values.is_some()),
                ("members", item.members.is_some()),
                ("direction", item.direction.is_some()),
                ("example", item.example.is_some()),
            ],
            &name.referenced,
            &id,
            "a function",
        );
        let expected = format!("{PREFIX}{}", Name::parse(&id).snake());
        self.callable(source!(item, name, id, CallableKind::Function, expected))
    }
}
