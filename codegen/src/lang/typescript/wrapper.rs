//! The public JavaScript API of the Node package: `generated/typescript/index.js` (CommonJS) and `index.mjs` (its
//! ES module face), implementing exactly what `index.d.ts` declares over the napi-rs native layer. Classes wrap
//! their compiled handles (private construction, static constructors, `free`, `[Symbol.dispose]`, a
//! `FinalizationRegistry` for forgotten handles); enums are frozen objects shaped as `tsc` emits enums; every native
//! error with a UForm kind becomes a `UFormError`.

use super::callable_jsdoc;
use super::format::{jsdoc_block, Ts};
use crate::lang::banner;
use crate::model::*;
use crate::plan::CallPlan;
use crate::render::{template, Named, Rendered};
use crate::Output;

pub struct VariantJs {
    pub doc: String,
    pub name: String,
    pub value: String,
}

template! {
    "typescript/enum.js"
    struct EnumJs {
        doc: String,
        name: String,
        variants: Vec<VariantJs>,
        /// Numeric enums map values back to names, as `tsc` emits them.
        reverse: Vec<VariantJs>,
    }
}

pub struct MemberJs {
    pub doc: String,
    pub name: String,
    pub params: String,
    pub args: String,
    pub borrowed: String,
    pub checks: Vec<String>,
    pub returns: bool,
    pub frees: bool,
    /// The native plain function taking the handle number, when the method has one.
    pub fast: Option<String>,
    /// The condition under which the call would change nothing, read from the quiet word (`try_first` methods).
    pub quiet: Option<String>,
    /// A Promise twin: an `async` member awaiting its native function.
    pub promise: bool,
}

template! {
    "typescript/class.js"
    struct ClassJs {
        doc: String,
        name: String,
        registry: String,
        compiled: String,
        compiled_doc: String,
        constructors: String,
        constructors_js: Vec<MemberJs>,
        methods: Vec<MemberJs>,
        free: String,
        /// The native function giving an instance's quiet word, when a method checks it.
        quiet_word: Option<String>,
        /// The tables of expected quiet words and their lookups, one per checking method.
        quiet_tables: String,
    }
}

template! {
    "typescript/function.js"
    struct FunctionJs {
        doc: String,
        name: String,
        params: String,
        checks: Vec<String>,
        /// Asked of the native layer once, then handed out from the wrapper.
        constant: bool,
    }
}

pub struct ErrorJs {
    pub code: String,
    pub doc: String,
}

template! {
    "typescript/error.js"
    struct ErrorsJs {
        errors: Vec<ErrorJs>,
    }
}

template! {
    "typescript/index.js"
    struct IndexJs {
        banner: String,
        doc: String,
        package: String,
        parts: Vec<String>,
        exports: Vec<String>,
    }
}

template! {
    "typescript/index.mjs"
    struct IndexMjs {
        banner: String,
        exports: Vec<String>,
    }
}

fn enumeration(ts: &Ts, api: &Api, e: &Enum) -> Rendered {
    let variants: Vec<VariantJs> = e
        .variants
        .iter()
        .map(|v| VariantJs {
            doc: jsdoc_block(&ts.jsdoc(api, &v.doc), "    "),
            name: ts.variant(&v.name),
            value: ts.variant_value(&v.value),
        })
        .collect();
    let reverse = e
        .variants
        .iter()
        .filter_map(|v| match v.value {
            EnumValue::Number(n) => {
                Some(VariantJs { doc: String::new(), name: format!("{:?}", ts.variant(&v.name)), value: n.to_string() })
            }
            EnumValue::String(_) => None,
        })
        .collect();
    EnumJs { doc: jsdoc_block(&ts.jsdoc(api, &e.doc), ""), name: ts.type_name(&e.name), variants, reverse }
        .rendered(format!("enum {}", e.name.pascal()))
}

/// A callable's parameter list, and the arguments it hands the native layer: a class argument crosses as its
/// compiled handle (a Promise twin's as the handle's number), and is kept reachable by the handle it helps make.
fn params_and_args(ts: &Ts, api: &Api, c: &Callable) -> (String, String, String, Vec<String>) {
    let mut checks = Vec::new();
    let mut params = Vec::new();
    let mut args = Vec::new();
    let mut borrowed = Vec::new();
    for p in &c.params {
        let name = ts.member(&p.name);
        match &p.ty {
            Type::Class(k) => {
                let class = ts.type_name(k);
                let article = if class.starts_with(['A', 'E', 'I', 'O', 'U']) { "an" } else { "a" };
                checks.push(format!(
                    "if (!({name} instanceof {class})) throw notInstance({name:?}, '{article} {class}', {name});"
                ));
                args.push(format!("{name}.compiled{}", if c.is_twin() { ".handle" } else { "" }));
                borrowed.push(name.clone());
            }
            // A record holding handles crosses with each handle replaced by its number (the glue reads it from
            // the class's registry); the handles stay reachable like class arguments.
            Type::Record(r)
                if api.record(r).is_some_and(|r| r.fields.iter().any(|f| matches!(f.ty, Type::Class(_)))) =>
            {
                let mut replaced = vec![format!("...{name}")];
                let mut present = Vec::new();
                let mut any_required = false;
                for f in api.record(r).map(|r| r.fields.as_slice()).unwrap_or_default() {
                    let Type::Class(k) = &f.ty else { continue };
                    let (class, field) = (ts.type_name(k), ts.member(&f.name));
                    let article = if class.starts_with(['A', 'E', 'I', 'O', 'U']) { "an" } else { "a" };
                    let argument = format!("{name}.{field}");
                    if f.optional {
                        // Absent as undefined or null, which cross as they are.
                        checks.push(format!(
                            "if ({name}?.{field} != null && !({name}.{field} instanceof {class})) throw notInstance({argument:?}, '{article} {class}', {name}.{field});"
                        ));
                        replaced.push(format!("{field}: {name}?.{field}?.compiled.handle"));
                        borrowed.push(format!("{name}?.{field}"));
                        present.push(format!("{name}?.{field} != null"));
                        continue;
                    }
                    any_required = true;
                    checks.push(format!(
                        "if (!({name}?.{field} instanceof {class})) throw notInstance({argument:?}, '{article} {class}', {name}?.{field});"
                    ));
                    replaced.push(format!("{field}: {name}.{field}.compiled.handle"));
                    borrowed.push(argument);
                }
                let replaced = format!("{{ {} }}", replaced.join(", "));
                if any_required {
                    args.push(replaced);
                } else {
                    // Only optional handles: without one the record crosses as it is, so the native layer judges
                    // a value that is no record at all.
                    args.push(format!("{} ? {replaced} : {name}", present.join(" || ")));
                }
            }
            _ => args.push(name.clone()),
        }
        params.push(name);
    }
    (params.join(", "), args.join(", "), borrowed.join(", "), checks)
}

fn class(ts: &Ts, api: &Api, k: &Class) -> Rendered {
    let offered: Vec<&Callable> = k.members.iter().filter(|m| m.offered_in(Language::TypeScript)).collect();
    let member = |m: &Callable| {
        let (params, args, borrowed, checks) = params_and_args(ts, api, m);
        MemberJs {
            doc: callable_jsdoc(ts, api, m, "    "),
            name: ts.member(&m.name),
            params,
            args,
            borrowed,
            checks,
            returns: CallPlan::of(api, Some(k), m).returns_value(),
            frees: m.kind == CallableKind::Free,
            fast: ts.fast_function_of(k, m),
            quiet: ts
                .quiet_of(api, k, m)
                .map(|q| format!("Atomics.load(this.#quiet, 0) === {}({})", q.lookup, q.argument.unwrap_or_default())),
            promise: m.is_twin(),
        }
    };
    let quiet_plans: Vec<_> = offered.iter().filter_map(|m| ts.quiet_of(api, k, m).map(|q| (*m, q))).collect();
    let quiet_tables: String = quiet_plans
        .iter()
        .map(|(m, q)| {
            let word_of = &q.lookup;
            let calls: Vec<String> = std::iter::once(format!("native.{}()", q.expected)).chain(q.values.iter().map(|v| format!("native.{}({v})", q.expected))).collect();
            let argument = q.argument.clone().unwrap_or_default();
            let mut cases = vec![format!("        case undefined:\n            return {}[0];", q.table)];
            for (i, v) in q.values.iter().enumerate() {
                cases.push(format!("        case {v}:\n            return {}[{}];", q.table, i + 1));
            }
            format!(
                "/** What {article} {class}'s quiet word holds while `{method}({argument})` would change nothing: for an absent argument, then each value. */\nconst {table} = [{calls}];\n\nfunction {word_of}({argument}) {{\n    switch ({switch}) {{\n{cases}\n        default:\n            return -1; // no word holds it: the native layer judges the argument\n    }}\n}}\n\n",
                article = if ts.type_name(&k.name).starts_with(['A', 'E', 'I', 'O', 'U']) { "an" } else { "a" },
                class = ts.type_name(&k.name),
                method = ts.member(&m.name),
                table = q.table,
                calls = calls.join(", "),
                switch = if argument.is_empty() { "undefined".to_string() } else { argument.clone() },
                cases = cases.join("\n"),
            )
        })
        .collect();
    let quiet_word = quiet_plans.first().map(|(_, q)| q.word.clone());
    let name = ts.type_name(&k.name);
    let constructors: Vec<String> = offered
        .iter()
        .filter(|m| m.kind == CallableKind::Constructor)
        .map(|m| format!("{name}.{}", ts.member(&m.name)))
        .collect();
    let mut doc = ts.jsdoc(api, &k.doc);
    if !k.details.is_empty() {
        doc.push_str(&format!("\n\n{}", ts.jsdoc(api, &k.details)));
    }
    ClassJs {
        doc: jsdoc_block(&doc, ""),
        registry: format!("{}_FINALIZER", k.name.screaming()),
        compiled: ts.type_name(&k.compiled),
        compiled_doc: jsdoc_block(&ts.jsdoc(api, &k.compiled_doc), "    "),
        constructors: constructors.join(", "),
        constructors_js: offered.iter().filter(|m| m.kind == CallableKind::Constructor).map(|m| member(m)).collect(),
        methods: offered.iter().filter(|m| m.kind != CallableKind::Constructor).map(|m| member(m)).collect(),
        free: offered
            .iter()
            .find(|m| m.kind == CallableKind::Free)
            .map_or_else(|| "free".into(), |m| ts.member(&m.name)),
        name,
        quiet_word,
        quiet_tables,
    }
    .rendered(format!("class {}", k.name.pascal()))
}

fn function(ts: &Ts, api: &Api, f: &Callable) -> Rendered {
    let (params, _, _, checks) = params_and_args(ts, api, f);
    FunctionJs { doc: callable_jsdoc(ts, api, f, ""), name: ts.function(&f.name), params, checks, constant: f.constant }
        .rendered(crate::render::callable_item(None, f))
}

fn errors(ts: &Ts, api: &Api) -> Rendered {
    ErrorsJs {
        errors: api
            .errors
            .iter()
            .map(|e| ErrorJs { code: format!("{:?}", ts.error_code(e)), doc: ts.jsdoc(api, &e.doc) })
            .collect(),
    }
    .rendered("errors")
}

/// `index.js` and `index.mjs`, from the Node view of the interface (`node_view`: the Promise twins included).
pub fn render(api: &Api) -> Rendered<Vec<Output>> {
    let ts = Ts;
    let mut parts = vec![errors(&ts, api)?];
    let mut exports = Vec::new();
    for item in &api.items {
        match item {
            Item::Record(_) => {}
            Item::Enum(e) => {
                parts.push(enumeration(&ts, api, e)?);
                exports.push(ts.type_name(&e.name));
            }
            Item::Class(k) => {
                parts.push(class(&ts, api, k)?);
                exports.push(ts.type_name(&k.name));
            }
            Item::Function(f) if f.offered_in(Language::TypeScript) => {
                parts.push(function(&ts, api, f)?);
                exports.push(ts.function(&f.name));
            }
            Item::Function(_) => {}
        }
    }
    exports.push("UFormError".into());
    let doc = jsdoc_block(&ts.jsdoc(api, &api.doc), "");
    let index = IndexJs {
        banner: banner("//"),
        doc: doc.trim_end().to_string(),
        package: api.package.clone(),
        parts,
        exports: exports.clone(),
    };
    let mjs = IndexMjs { banner: banner("//"), exports };
    Ok(vec![
        Output { path: "typescript/index.js".into(), contents: index.rendered("typescript/index.js")? },
        Output { path: "typescript/index.mjs".into(), contents: mjs.rendered("typescript/index.mjs")? },
    ])
}
