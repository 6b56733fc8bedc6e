//! `generated/jni/glue.rs`: the Rust half of the Kotlin binding. One JNI function per callable, from the same
//! [`super::jni_call`] as its `external fun`, so the two sides cannot disagree on an argument; an encoder per record
//! and enum a result carries; a release function per class.

use super::format::{rust_ident, Crossing};
use super::{jni_call, offered, returned_records, KT, PACKAGE};
use crate::lang::banner;
use crate::model::*;
use crate::plan::{CallPlan, Callee};
use crate::render::{template, Named, Rendered};

template! {
    "jni/glue.rs"
    struct GlueFile {
        banner: String,
        kinds: Vec<(String, String)>,
        parts: Vec<String>,
    }
}

template! {
    "jni/function.rs"
    struct FunctionRs {
        what: String,
        name: String,
        params: Vec<String>,
        returns: Option<String>,
        lets: Vec<String>,
        call: String,
        /// `None` for a unit result.
        result: Option<String>,
    }
}

template! {
    "jni/release.rs"
    struct ReleaseRs {
        class: String,
        name: String,
        free: String,
    }
}

/// A method that reads the quiet word before calling in.
pub struct QuietMethod {
    pub what: String,
    pub symbol: String,
    pub core: String,
    /// Its enum argument: (Rust name, core enum).
    pub argument: Option<(String, String)>,
}

template! {
    "jni/quiet.rs"
    struct QuietRs {
        class: String,
        word: String,
        methods: Vec<QuietMethod>,
    }
}

template! {
    "jni/encode_record.rs"
    struct EncodeRecordRs {
        name: String,
        fields: Vec<String>,
    }
}

template! {
    "jni/encode_enum.rs"
    struct EncodeEnumRs {
        name: String,
    }
}

/// The JNI symbol of a function of `UFormNative`.
fn symbol(name: &str) -> String {
    format!("Java_{}_UFormNative_{name}", PACKAGE.replace('.', "_"))
}

fn function_rs(api: &Api, class: Option<&Class>, c: &Callable) -> Rendered {
    let item = crate::render::callable_item(class, c);
    let plan = CallPlan::of(api, class, c);
    let l = jni_call(api, &plan, class, c);
    let args: Vec<String> = plan
        .arguments
        .iter()
        .map(|a| {
            let name = rust_ident(&a.name.snake());
            match a.passing {
                // The core borrows each buffer the JVM copied out (`&[&[u8]]`).
                crate::plan::Passing::List { element: Type::Bytes } => {
                    format!("&{name}.iter().map(Vec::as_slice).collect::<Vec<_>>()")
                }
                crate::plan::Passing::List { .. } => format!("&{name}"),
                _ => name,
            }
        })
        .collect();
    let args = args.join(", ");
    let call = match &plan.callee {
        Callee::Constructor { class, name } => format!("uform_core::{}::{}({args})", KT.type_name(class), name.snake()),
        Callee::Method { name } => format!("this.{}({args})", name.snake()),
        Callee::Function { name } => format!("uform_core::{}({args})", name.snake()),
    };
    let call = if plan.throws { format!("{call}?") } else { call };
    let unit = l.crossing == Crossing::Unit;
    let returns = (!unit).then(|| KT.rust_returns(&l.crossing));
    let result = (!unit).then(|| KT.rust_result(&l.crossing));
    let what = match class {
        Some(k) => format!("`{}.{}`", KT.type_name(&k.name), c.name.camel()),
        None => format!("`{}`", c.name.camel()),
    };
    FunctionRs { what, name: symbol(&l.native.name), params: l.rs_params, returns, lets: l.rs_lets, call, result }
        .rendered(item)
}

fn release_rs(c: &Class) -> Rendered {
    let free = match c.members.iter().find(|m| m.kind == CallableKind::Free) {
        Some(f) if f.throws => format!("|core| core.{}()", f.name.snake()),
        Some(f) => format!("|core| {{ core.{}(); Ok(()) }}", f.name.snake()),
        None => "|_| Ok(())".into(),
    };
    ReleaseRs {
        class: KT.type_name(&c.name),
        name: symbol(&KT.native_name(Some(&c.name), &Name::parse("release"))),
        free,
    }
    .rendered(format!("class {}", c.name.pascal()))
}

fn quiet_rs(api: &Api, c: &Class) -> Rendered<Option<String>> {
    let methods: Vec<QuietMethod> = super::quiet_methods(api, c)
        .into_iter()
        .map(|m| QuietMethod {
            what: format!("{}.{}", KT.type_name(&c.name), m.name.camel()),
            symbol: symbol(&super::quiet_when_name(c, m)),
            core: m.name.snake(),
            argument: m.params.first().and_then(|p| match &p.ty {
                Type::Enum(e) => Some((rust_ident(&p.name.snake()), KT.type_name(e))),
                _ => None,
            }),
        })
        .collect();
    if methods.is_empty() {
        return Ok(None);
    }
    let word = symbol(&KT.native_name(Some(&c.name), &Name::parse("quiet")));
    QuietRs { class: KT.type_name(&c.name), word, methods }
        .rendered(format!("class {}, quiet word", c.name.pascal()))
        .map(Some)
}

/// The enums some returned record holds, or a result is: they need an encoder.
fn returned_enums(api: &Api) -> Vec<&Enum> {
    let mut types: Vec<&Type> = returned_records(api).iter().flat_map(|r| r.fields.iter().map(|f| &f.ty)).collect();
    types.extend(api.callables().filter(|c| offered(c)).filter_map(|c| c.returns.as_ref()));
    let named = |ty: &Type| match ty {
        Type::Enum(n) => Some(n.clone()),
        Type::List(inner) => match &**inner {
            Type::Enum(n) => Some(n.clone()),
            _ => None,
        },
        _ => None,
    };
    let names: Vec<Name> = types.into_iter().filter_map(named).collect();
    api.enums().filter(|e| names.contains(&e.name)).collect()
}

pub fn glue_file(api: &Api) -> Rendered {
    let mut parts = Vec::new();
    for item in &api.items {
        match item {
            Item::Class(c) => {
                for m in c.members.iter().filter(|m| offered(m)) {
                    parts.push(function_rs(api, Some(c), m)?);
                }
                parts.push(release_rs(c)?);
                parts.extend(quiet_rs(api, c)?);
            }
            Item::Function(f) if offered(f) => parts.push(function_rs(api, None, f)?),
            _ => {}
        }
    }
    for r in returned_records(api) {
        let fields = r.fields.iter().map(|f| rust_ident(&f.name.snake())).collect();
        parts.push(
            EncodeRecordRs { name: KT.type_name(&r.name), fields }.rendered(format!("record {}", r.name.pascal()))?,
        );
    }
    for e in returned_enums(api) {
        parts.push(EncodeEnumRs { name: KT.type_name(&e.name) }.rendered(format!("enum {}", e.name.pascal()))?);
    }
    let kinds = api
        .errors
        .iter()
        .map(|k| (k.name.pascal(), format!("{}/UFormException${}", PACKAGE.replace('.', "/"), KT.type_name(&k.name))))
        .collect();
    GlueFile { banner: banner("//"), kinds, parts }.rendered("jni glue")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_crossing_follows_the_result() {
        use crate::plan::{Lowering, Outcome, Scalar};
        let crossing = |lowering: Lowering, optional: bool| Crossing::of(&Outcome { lowering, optional });
        let k = Name::parse("Executor");
        assert_eq!(crossing(Lowering::Handle { class: k.clone() }, false), Crossing::Handle { class: k });
        assert_eq!(crossing(Lowering::Scalar(Scalar::U32), false), Crossing::Scalar(Scalar::U32));
        assert_eq!(crossing(Lowering::Scalar(Scalar::U32), true), Crossing::Bytes { ty: Type::U32, optional: true });
        assert_eq!(crossing(Lowering::Path, true), Crossing::String { optional: true });
        assert_eq!(crossing(Lowering::Matrix, false), Crossing::Bytes { ty: Type::F32Matrix, optional: false });
    }
}
