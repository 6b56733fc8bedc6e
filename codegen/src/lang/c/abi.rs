//! How a callable lowers to the C ABI: which C parameters it takes, which it writes, and what it returns. The C
//! header spells this plan in C and the C library's generated Rust glue spells it in Rust, so the two always agree.

use crate::model::*;
use crate::plan::{CallPlan, Lowering, Passing, Receiver};

/// One value crossing the C boundary (a list crosses as a pointer and a count).
#[derive(Clone, Debug, PartialEq)]
pub enum Slot {
    /// A handle of this class: `uform_x_t *name`.
    Handle { name: String, class: Name },
    /// A scalar, enum, string or address passed by value.
    Value { name: String, ty: Type },
    /// A record passed by pointer; NULL means every field absent.
    Record { name: String, record: Name },
    /// A list passed as `const T *name, size_t name_count`.
    List { name: String, element: Type },
    /// A new handle written to `uform_x_t **name`.
    OutHandle { name: String, class: Name },
    /// A record written to `T *name`; with `found`, a `bool *found` says whether it was written.
    OutRecord { name: String, record: Name, found: bool },
    /// A scalar or string written to `T *name`.
    OutValue { name: String, ty: Type },
    /// A list written as `const T **name, size_t *name_count`, owned by UForm.
    OutList { name: String, element: Type },
}

/// A slot's `name` field, whichever the variant: `&String` from a `&Slot`, `&mut String` from a `&mut Slot`.
macro_rules! slot_name {
    ($slot:expr) => {
        match $slot {
            Slot::Handle { name, .. }
            | Slot::Value { name, .. }
            | Slot::Record { name, .. }
            | Slot::List { name, .. }
            | Slot::OutHandle { name, .. }
            | Slot::OutRecord { name, .. }
            | Slot::OutValue { name, .. }
            | Slot::OutList { name, .. } => name,
        }
    };
}
pub(crate) use slot_name;

impl Slot {
    /// The C parameter's name (a list's count and a record's `found` follow it).
    pub fn name(&self) -> Option<&str> {
        Some(slot_name!(self))
    }

    /// Whether the function writes it (a result).
    pub fn is_out(&self) -> bool {
        matches!(self, Slot::OutHandle { .. } | Slot::OutRecord { .. } | Slot::OutValue { .. } | Slot::OutList { .. })
    }
}

/// Whether a record's C struct holds only values (numbers, flags, enums, records of those): nothing it points to
/// needs an owner, so a call writes it whole each time instead of keeping it per handle. A method's result that
/// points into memory (a description's strings and lists) is computed once and kept until the handle's free.
pub fn is_flat(api: &Api, record: &Name) -> bool {
    /// `seen` holds each record reached: `None` while its fields are walked (a record that holds itself is not flat),
    /// then the answer, so a record shared by many fields is walked once.
    fn flat<'a>(api: &'a Api, ty: &'a Type, seen: &mut std::collections::HashMap<&'a Name, Option<bool>>) -> bool {
        match ty {
            Type::U32 | Type::U64 | Type::I32 | Type::F64 | Type::Bool | Type::Address | Type::Enum(_) => true,
            Type::GpuClass => true, // an id
            Type::Record(n) => match seen.get(n) {
                Some(known) => known.unwrap_or(false),
                None => {
                    seen.insert(n, None);
                    let answer = api.record(n).is_some_and(|r| r.fields.iter().all(|f| flat(api, &f.ty, seen)));
                    seen.insert(n, Some(answer));
                    answer
                }
            },
            Type::String | Type::Path | Type::List(_) | Type::Class(_) | Type::F32Matrix | Type::Bytes => false,
        }
    }
    flat(api, &Type::Record(record.clone()), &mut std::collections::HashMap::new())
}

/// What the C function returns.
#[derive(Clone, Debug, PartialEq)]
pub enum Return {
    /// `uform_status_t`: zero on success, the error kind otherwise.
    Status,
    /// The value itself, for calls that cannot fail and return a scalar or string.
    Value { ty: Type, optional: bool },
}

#[derive(Clone, Debug, PartialEq)]
pub struct Lowered {
    pub slots: Vec<Slot>,
    pub returns: Return,
}

/// The C parameter name of a class's handle and of a list's elements: the type's last word.
fn last_word(name: &Name) -> String {
    name.words().last().cloned().unwrap_or_default()
}

/// A C parameter read without a check.
fn infallible(slot: &Slot) -> bool {
    matches!(slot, Slot::Value { ty: Type::U32 | Type::U64 | Type::I32 | Type::F64 | Type::Bool, .. })
}

/// The C lowering of a callable's plan.
pub fn lower(plan: &CallPlan) -> Lowered {
    let mut slots = Vec::new();
    if let Receiver::Handle { class } = &plan.receiver {
        slots.push(Slot::Handle { name: class.snake(), class: class.clone() });
    }
    for a in &plan.arguments {
        let name = a.name.snake();
        slots.push(match &a.passing {
            Passing::Handle { class } => Slot::Handle { name, class: class.clone() },
            Passing::Record { record, .. } => Slot::Record { name, record: record.clone() },
            Passing::List { element } => Slot::List { name, element: element.clone() },
            Passing::Scalar | Passing::String | Passing::Path => Slot::Value { name, ty: a.ty.clone() },
        });
    }
    // A scalar, string, path or GPU class keeps its IDL type, which the header spells.
    let Some(ty) = plan.outcome.lowering.ty() else { return Lowered { slots, returns: Return::Status } };
    let optional = plan.outcome.optional;
    match &plan.outcome.lowering {
        Lowering::Handle { class } => slots.push(Slot::OutHandle { name: class.snake(), class: class.clone() }),
        Lowering::Record { record } => {
            slots.push(Slot::OutRecord { name: last_word(record), record: record.clone(), found: optional })
        }
        Lowering::List { element } => {
            let name = match element {
                Type::Record(r) | Type::Enum(r) => format!("{}s", last_word(r)),
                _ => "items".into(),
            };
            slots.push(Slot::OutList { name, element: element.clone() });
        }
        Lowering::Matrix => slots.push(Slot::OutValue { name: "matrix".into(), ty }),
        // Only a call that cannot fail returns its value: it does not throw, has no handle to look up, and takes only
        // numbers and bools, which no reader rejects.
        _ if !plan.throws && slots.iter().all(infallible) => {
            return Lowered { slots, returns: Return::Value { ty, optional } }
        }
        _ => slots.push(Slot::OutValue { name: "value".into(), ty }),
    }
    Lowered { slots, returns: Return::Status }
}
