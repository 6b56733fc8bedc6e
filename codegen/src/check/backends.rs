//! What each enabled backend can emit ([`crate::lang::shapes`]): a shape a backend cannot render is a problem at its
//! place in the file, naming the backend, instead of a `compile_error!` in generated glue.

use super::Checker;
use crate::lang::shapes::Shape;
use crate::lang::BACKENDS;
use crate::model::*;
use crate::raw::*;
use serde_saphyr::Location;

/// The raw item declaring `name`.
fn raw_item<'a>(file: &'a RawFile, name: &Name) -> Option<&'a RawItem> {
    let name = name.pascal();
    file.items.iter().find(|i| {
        [&i.record, &i.enumeration, &i.class, &i.function]
            .into_iter()
            .flatten()
            .any(|n| Name::parse(&n.value).pascal() == name)
    })
}

impl Checker {
    pub(super) fn backends(&mut self, file: &RawFile, items: &[Item]) {
        let returned = |record: &Name| {
            items.iter().flat_map(callables_of).any(|c| c.returns.as_ref() == Some(&Type::Record(record.clone())))
        };
        for item in items {
            let raw = raw_item(file, item.name());
            let Some(raw) = raw else { continue };
            let item_loc = [&raw.record, &raw.class, &raw.function].into_iter().flatten().map(|n| n.referenced).next();
            match item {
                Item::Record(r) => {
                    let returned = returned(&r.name);
                    for f in &r.fields {
                        let Some(shape) = Shape::of_field(r, f, returned) else { continue };
                        let loc = raw.fields.iter().flatten().find(|rf| Name::parse(&rf.name.value) == f.name);
                        let loc = loc.map(|rf| rf.ty.referenced).or(item_loc);
                        let id = format!("{}.{}", r.name.pascal(), f.name.snake());
                        self.unsupported(loc, &id, shape, None, "restructure the record");
                    }
                }
                Item::Class(k) => {
                    for m in &k.members {
                        let rm = raw.members.iter().flatten().find(|rm| {
                            [&rm.constructor, &rm.method, &rm.free]
                                .into_iter()
                                .flatten()
                                .any(|n| Name::parse(&n.value) == m.name)
                        });
                        let loc = rm.and_then(|rm| {
                            rm.returns.as_ref().or(rm.constructor.as_ref().or(rm.method.as_ref())).map(|s| s.referenced)
                        });
                        let id = format!("{}.{}", k.name.pascal(), m.name.snake());
                        self.param_shapes(rm.and_then(|rm| rm.params.as_deref()), loc.or(item_loc), &id, m, items);
                        self.result_shapes(loc.or(item_loc), &id, m);
                    }
                }
                Item::Function(f) => {
                    self.param_shapes(raw.params.as_deref(), item_loc, &f.name.snake(), f, items);
                    let loc = raw.returns.as_ref().map(|s| s.referenced).or(item_loc);
                    self.result_shapes(loc, &f.name.snake(), f);
                }
                Item::Enum(_) => {}
            }
        }
    }

    /// Each parameter's shapes, placed at the parameter's type (`raw` its raw parameters, `loc` the fallback).
    fn param_shapes(
        &mut self,
        raw: Option<&[RawParam]>,
        loc: Option<Location>,
        id: &str,
        callable: &Callable,
        items: &[Item],
    ) {
        let record = |n: &Name| {
            items.iter().find_map(|i| match i {
                Item::Record(r) if &r.name == n => Some(r),
                _ => None,
            })
        };
        let mut shapes = Shape::of_params(callable);
        shapes.extend(Shape::of_param_names(callable, record));
        for (i, shape) in shapes {
            let at = raw.and_then(|r| r.get(i)).map(|p| p.ty.referenced).or(loc);
            let id = format!("{id}.{}", callable.params[i].name.snake());
            self.unsupported(at, &id, shape, Some(callable), "change the parameter, or leave");
        }
    }

    fn result_shapes(&mut self, loc: Option<Location>, id: &str, callable: &Callable) {
        for shape in Shape::of_result(callable) {
            self.unsupported(loc, id, shape, Some(callable), "change the result, or leave");
        }
    }

    /// Reports `shape` once per backend that cannot render it (and renders `callable`, when the shape is a call's).
    fn unsupported(&mut self, loc: Option<Location>, id: &str, shape: Shape, callable: Option<&Callable>, fix: &str) {
        for backend in &BACKENDS {
            if backend.supports.supports(shape) || callable.is_some_and(|c| !backend.renders(c)) {
                continue;
            }
            let fix = match callable {
                Some(_) => format!("{fix} {} out with `only:`", language_names(backend.languages)),
                None => fix.to_string(),
            };
            let message = format!("the {} backend cannot render {}; {fix}", backend.name, shape.describe());
            match &loc {
                Some(loc) => self.problem(loc, id, message),
                None => self.unplaced(id, message),
            }
        }
    }
}

fn callables_of(item: &Item) -> Box<dyn Iterator<Item = &Callable> + '_> {
    match item {
        Item::Class(k) => Box::new(k.members.iter()),
        Item::Function(f) => Box::new(std::iter::once(f)),
        _ => Box::new(std::iter::empty()),
    }
}

/// Languages as `only:` spells them.
fn language_names(languages: &[Language]) -> String {
    let names: Vec<&str> = languages
        .iter()
        .map(|l| match l {
            Language::C => "c",
            Language::TypeScript => "typescript",
            Language::Python => "python",
            Language::Kotlin => "kotlin",
            Language::Swift => "swift",
        })
        .collect();
    names.join(" and ")
}
