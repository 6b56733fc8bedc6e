//! The Swift the generator writes beside uniffi's (`generated/swift/Sources/UForm/`): the types uniffi leaves to
//! it because the UDL names them from [`BULK_CRATE`] (the enums, with the overloads that default enum parameters,
//! and the matrix) and the initialization uniffi's Swift calls for that crate. Spelled by [`Udl`], as the UDL is.

use super::async_twin;
use super::docs;
use super::format::{Udl, BULK_CRATE, FFI_CRATE};
use super::{enum_doc, offered, EnumCase};
use crate::lang::banner;
use crate::model::*;
use crate::plan::CallPlan;
use crate::render::{template, Named, Rendered};
use crate::Output;

/// The Swift files: the matrix's, the enums' and overloads', and what every type from [`BULK_CRATE`] shares.
pub fn render(udl: &Udl, api: &Api) -> Rendered<Vec<Output>> {
    let mut out = Vec::new();
    if api.returns_matrix() {
        let swift = SwiftMatrix { banner: banner("//"), bulk_crate: BULK_CRATE, ffi_crate: FFI_CRATE };
        out.push(Output {
            path: "swift/Sources/UForm/F32Matrix.swift".into(),
            contents: swift.rendered("f32_matrix")?,
        });
    }
    let has_enums = api.items.iter().any(|i| matches!(i, Item::Enum(_)));
    if has_enums {
        out.push(Output { path: "swift/Sources/UForm/Enums.swift".into(), contents: swift_enums(udl, api)? });
    }
    if has_enums || api.returns_matrix() {
        let bulk = SwiftBulk {
            banner: banner("//"),
            bulk_crate: BULK_CRATE,
            ensure_initialized: format!("uniffiEnsure{}Initialized", upper_camel(BULK_CRATE)),
        };
        out.push(Output { path: "swift/Sources/UForm/UFormBulk.swift".into(), contents: bulk.rendered("uform_bulk")? });
    }
    Ok(out)
}

template! {
    "udl/enum.swift"
    /// An enum's Swift: the public enum and the converter uniffi's Swift calls.
    struct SwiftEnum {
        doc: String,
        name: String,
        variants: Vec<EnumCase>,
    }
}

template! {
    "udl/overload.swift"
    /// A callable without its enum-defaulted parameters, calling it with their defaults.
    struct SwiftOverload {
        class: Option<String>,
        /// `drain(mood:)`.
        target: String,
        /// "`mood` = `.parked`".
        defaults: String,
        declaration: String,
        call: String,
    }
}

template! {
    "udl/Enums.swift"
    struct SwiftEnums {
        banner: String,
        bulk_crate: &'static str,
        enums: Vec<String>,
        overloads: Vec<String>,
    }
}

template! {
    "udl/UFormBulk.swift"
    /// What every type from [`BULK_CRATE`] shares: the initialization uniffi's Swift calls for that crate.
    struct SwiftBulk {
        banner: String,
        bulk_crate: &'static str,
        /// `uniffiEnsureUformBulkInitialized`, which uniffi's Swift calls for the types of [`BULK_CRATE`].
        ensure_initialized: String,
    }
}

template! {
    "udl/F32Matrix.swift"
    /// The matrix's Swift side: the public struct and the converter uniffi's Swift calls, reading the floats with
    /// one bulk copy.
    struct SwiftMatrix {
        banner: String,
        bulk_crate: &'static str,
        ffi_crate: &'static str,
    }
}

fn variant_doc(udl: &Udl, e: &Enum, v: &Variant) -> String {
    let value = match &v.value {
        EnumValue::String(s) => format!("\"{s}\""),
        EnumValue::Number(_) => e.number(v).to_string(),
    };
    format!("{} Its value elsewhere is {value}.", udl.doc_text(&v.doc))
}

fn swift_enum(udl: &Udl, e: &Enum) -> Rendered {
    SwiftEnum {
        doc: udl.doc_block(&enum_doc(udl, e), ""),
        name: udl.type_name(&e.name),
        variants: e
            .variants
            .iter()
            .map(|v| EnumCase {
                doc: udl.doc_block(&variant_doc(udl, e, v), "    "),
                name: udl.swift_case(&v.name),
                number: e.number(v),
            })
            .collect(),
    }
    .rendered(format!("enum {}", e.name.pascal()))
}

/// Whether a parameter's default is one the UDL cannot spell (an enum's case).
fn swift_defaulted(p: &Param) -> bool {
    matches!(p.default, Some(Literal::Variant(_)))
}

/// The overload that gives a callable's enum parameters their defaults; none when it has no such parameter.
fn swift_overload(api: &Api, class: Option<&Class>, c: &Callable) -> Option<Rendered> {
    if !c.params.iter().any(swift_defaulted) {
        return None;
    }
    let plan = CallPlan::of(api, class, c);
    let mut short = c.clone();
    short.params.retain(|p| !swift_defaulted(p));
    let name = c.name.camel();
    let target = format!("{name}({})", c.params.iter().map(|p| format!("{}:", p.name.camel())).collect::<String>());
    // Each parameter passed on by name, the enum-defaulted ones as their default.
    let passed: Vec<(String, Option<String>)> =
        c.params.iter().map(|p| (p.name.camel(), docs::literal(p).filter(|_| swift_defaulted(p)))).collect();
    let defaults =
        passed.iter().filter_map(|(n, v)| Some(format!("`{n}` = `{}`", v.as_ref()?))).collect::<Vec<_>>().join(", ");
    let args = passed.iter().map(|(n, v)| format!("{n}: {}", v.as_ref().unwrap_or(n))).collect::<Vec<_>>().join(", ");
    let returns = plan.outcome.lowering.ty().is_some() || c.kind == CallableKind::Constructor;
    let call = format!(
        "{}{}{}{name}({args})",
        if returns { "return " } else { "" },
        if c.throws { "try " } else { "" },
        if async_twin::has_twin(c) { "await " } else { "" },
    );
    Some(
        SwiftOverload {
            class: class.map(|k| k.name.pascal()),
            target,
            defaults,
            declaration: docs::declaration(class, &short, &plan.outcome, true),
            call,
        }
        .rendered(crate::render::callable_item(class, c)),
    )
}

fn swift_enums(udl: &Udl, api: &Api) -> Rendered {
    let mut enums = Vec::new();
    let mut overloads = Vec::new();
    for item in &api.items {
        match item {
            Item::Enum(e) => enums.push(swift_enum(udl, e)?),
            Item::Class(c) => {
                for m in c.members.iter().filter(|m| offered(m)) {
                    overloads.extend(swift_overload(api, Some(c), m).transpose()?);
                }
            }
            Item::Function(f) if offered(f) => overloads.extend(swift_overload(api, None, f).transpose()?),
            _ => {}
        }
    }
    SwiftEnums { banner: banner("//"), bulk_crate: BULK_CRATE, enums, overloads }.rendered("enums")
}

/// `uform_bulk` as uniffi's Swift spells a crate in `uniffiEnsure…Initialized`: `UformBulk`.
fn upper_camel(snake: &str) -> String {
    snake
        .split('_')
        .map(|word| {
            let mut chars = word.chars();
            chars.next().map(|c| c.to_ascii_uppercase().to_string() + chars.as_str()).unwrap_or_default()
        })
        .collect()
}
