//! The C formatter: every C naming and type-spelling decision, in one place. `uform_` snake_case, `_t` types,
//! SCREAMING constants, zero-initialised option structs meaning "all absent".

use super::abi::{Return, Slot};
use crate::model::*;

pub struct C;

impl C {
    /// The C type of a declared record, enum or class (`uform_mesh_options_t`).
    pub fn type_name(&self, api: &Api, name: &Name) -> String {
        if let Some(r) = api.record(name) {
            return r.c_name.clone();
        }
        if let Some(e) = api.enumeration(name) {
            return e.c_name.clone();
        }
        if let Some(c) = api.class(name) {
            return c.c_name.clone();
        }
        format!("uform_{}_t", name.snake())
    }

    /// `UFORM_MULTIMEM_TIER_SWITCH_REDUCED`
    pub fn constant(&self, e: &Enum, v: &Variant) -> String {
        format!("UFORM_{}_{}", e.name.screaming(), v.name.screaming())
    }

    pub fn status_constant(&self, error: Option<&ErrorKindDef>) -> String {
        match error {
            Some(e) => format!("UFORM_STATUS_{}", e.name.screaming()),
            None => "UFORM_STATUS_OK".into(),
        }
    }

    /// The C spelling of a value type, with `const` for what UForm only reads.
    pub fn ty(&self, api: &Api, ty: &Type) -> String {
        match ty {
            Type::U32 => "uint32_t".into(),
            Type::U64 => "uint64_t".into(),
            Type::I32 | Type::GpuClass => "int32_t".into(),
            Type::F64 => "double".into(),
            Type::Bool => "bool".into(),
            Type::String | Type::Path => "const char *".into(),
            Type::Address => "uintptr_t".into(),
            Type::F32Matrix => "uform_f32_matrix_t".into(),
            Type::Bytes => "uform_bytes_t".into(),
            Type::Record(n) | Type::Enum(n) | Type::Class(n) => self.type_name(api, n),
            Type::List(e) => self.list(api, e),
        }
    }

    /// A list's pointer: `const uint32_t *`, and for strings `const char *const *`.
    pub fn list(&self, api: &Api, element: &Type) -> String {
        match element {
            Type::String | Type::Path => "const char *const *".into(),
            e => format!("const {} *", self.ty(api, e)),
        }
    }

    /// `type name` with the pointer star against the name.
    pub fn declare(&self, ty: &str, name: &str) -> String {
        if ty.ends_with('*') {
            format!("{ty}{name}")
        } else {
            format!("{ty} {name}")
        }
    }

    /// Whether a field is an optional bool that a caller fills in: C's `false` is zero, which a zeroed struct
    /// must keep meaning "absent", so the field is a `uform_optional_bool_t` with a third value for false.
    pub fn optional_bool(&self, record: &Record, field: &Field) -> bool {
        record.direction == Direction::Input && field.optional && field.ty == Type::Bool
    }

    /// Whether any struct a caller fills in has an optional bool, so the header declares `uform_optional_bool_t`.
    pub fn has_optional_bool(&self, api: &Api) -> bool {
        api.records().any(|r| r.fields.iter().any(|f| self.optional_bool(r, f)))
    }

    /// The member declarations of a record's field (a list takes two).
    pub fn field(&self, api: &Api, record: &Record, field: &Field) -> Vec<String> {
        let name = field.name.snake();
        match &field.ty {
            Type::Bool if self.optional_bool(record, field) => vec![self.declare("uform_optional_bool_t", &name)],
            Type::List(e) => {
                vec![self.declare(&self.list(api, e), &name), format!("size_t {name}_count")]
            }
            Type::Class(k) => vec![self.declare(&format!("{} *", self.type_name(api, k)), &name)],
            ty => vec![self.declare(&self.ty(api, ty), &name)],
        }
    }

    /// Whether a record's C struct grows: it leads with `uint32_t struct_size` (every input record).
    pub fn versioned(&self, record: &Record) -> bool {
        record.direction == Direction::Input
    }

    /// The name of the macro that initialises a versioned struct: `UFORM_MESH_OPTIONS_INIT`.
    pub fn init_macro(&self, record: &Record) -> String {
        format!("{}_INIT", record.c_name.trim_end_matches("_t").to_uppercase())
    }

    /// The doc of a versioned struct's leading `struct_size` field.
    pub fn struct_size_doc(&self, record: &Record) -> String {
        let first = record.fields.iter().take_while(|f| f.since.is_none()).last();
        let first = first.map_or_else(String::new, |f| format!(", the fields up to `{}`", f.name.snake()));
        format!(
            "`sizeof({})` as the caller's uform.h declares it, which `{}` sets: a later library that appended \
             fields reads only these bytes and takes the fields it appended as absent. Zero means the first \
             layout{first}.",
            record.c_name,
            self.init_macro(record)
        )
    }

    /// What a field's absence or ownership means in C, appended to its doc.
    pub fn field_note(&self, record: &Record, field: &Field) -> Option<String> {
        let note = self.absence_note(record, field);
        match &field.since {
            Some(v) if self.versioned(record) => Some(format!(
                "{}Appended in {v}: absent when `struct_size` is zero or ends before it.",
                note.map_or_else(String::new, |n| format!("{n} "))
            )),
            _ => note,
        }
    }

    fn absence_note(&self, record: &Record, field: &Field) -> Option<String> {
        match (record.direction, &field.ty, field.optional) {
            (Direction::Input, Type::List(_), true) => Some("NULL or a zero count means absent.".into()),
            (Direction::Input, Type::String | Type::Path, true) => Some("NULL means absent.".into()),
            (Direction::Input, Type::Class(_), false) => {
                Some("Required: NULL is an invalid argument. Borrowed for the call only.".into())
            }
            (Direction::Input, Type::Class(_), true) => Some("NULL means absent. Borrowed for the call only.".into()),
            (Direction::Output, Type::String, true) => {
                Some("NULL when absent; else NUL-terminated, owned by UForm, like the record holding it.".into())
            }
            (Direction::Input, Type::F64, true) => Some("Zero means absent; `-0.0` passes zero itself.".into()),
            (Direction::Input, Type::Bool, true) => {
                Some("`UFORM_ABSENT` (zero) means absent; `UFORM_FALSE` passes false, as `false` is zero.".into())
            }
            (Direction::Input, _, true) => Some("Zero means absent.".into()),
            (Direction::Output, Type::GpuClass, _) => {
                Some("A class id for `uform_gpu_class_name`, negative when the tables do not know the device.".into())
            }
            (Direction::Output, Type::List(_), _) => Some("Owned by UForm, like the record holding it.".into()),
            (Direction::Output, Type::String, _) => {
                Some("NUL-terminated, owned by UForm, like the record holding it.".into())
            }
            _ => None,
        }
    }

    /// The C parameters of a slot.
    pub fn slot(&self, api: &Api, slot: &Slot) -> Vec<String> {
        match slot {
            Slot::Handle { name, class } => vec![self.declare(&format!("{} *", self.type_name(api, class)), name)],
            Slot::Value { name, ty } => vec![self.declare(&self.ty(api, ty), name)],
            Slot::Record { name, record } => {
                vec![self.declare(&format!("const {} *", self.type_name(api, record)), name)]
            }
            Slot::List { name, element } => {
                vec![self.declare(&self.list(api, element), name), format!("size_t {name}_count")]
            }
            Slot::OutHandle { name, class } => vec![self.declare(&format!("{} **", self.type_name(api, class)), name)],
            Slot::OutRecord { name, record, found } => {
                let mut out = vec![self.declare(&format!("{} *", self.type_name(api, record)), name)];
                if *found {
                    out.push("bool *found".into());
                }
                out
            }
            Slot::OutValue { name, ty } => vec![self.declare(&format!("{} *", self.ty(api, ty)), name)],
            Slot::OutList { name, element } => vec![
                self.declare(&format!("const {} **", self.ty(api, element)), name),
                format!("size_t *{name}_count"),
            ],
        }
    }

    pub fn returns(&self, api: &Api, returns: &Return) -> String {
        match returns {
            Return::Status => "uform_status_t".into(),
            Return::Value { ty, .. } => self.ty(api, ty),
        }
    }

    /// How a `bytes` parameter crosses: borrowed in place.
    pub fn bytes_note(&self) -> String {
        "Each buffer is read in place for the call, never copied or kept.".into()
    }

    /// Doc text with references spelled as C names.
    pub fn doc(&self, api: &Api, doc: &Doc) -> String {
        doc.render(&|r| format!("`{}`", self.reference(api, r)))
    }

    pub fn reference(&self, api: &Api, r: &Reference) -> String {
        match r {
            Reference::Member(n) => n.snake(),
            Reference::Type(n) => self.type_name(api, n),
            Reference::Function(n) => {
                api.functions().find(|f| &f.name == n).map_or_else(|| n.snake(), |f| f.c_name.clone())
            }
            Reference::Method { class, method } => api
                .class(class)
                .and_then(|k| k.members.iter().find(|m| &m.name == method))
                .map_or_else(|| method.snake(), |m| m.c_name.clone()),
        }
    }
}

/// A `/** … */` block at `indent`, wrapped: the same block C uses as TypeScript.
pub use crate::lang::star_comment as comment;
