//! The `#[repr(C)]` mirrors of the header's records and enums in the C library's Rust glue (`generated/c/ffi.rs`),
//! their conversions to and from the core's types, and how an input record's struct grows.

use crate::model::*;
use crate::render::{template, Named, Rendered};

/// The Rust spelling of C-facing types.
pub(super) struct RustC;

impl RustC {
    /// The `#[repr(C)]` field type mirroring the C field.
    pub(super) fn c_field(&self, api: &Api, ty: &Type) -> String {
        match ty {
            Type::U32 => "u32".into(),
            Type::U64 => "u64".into(),
            Type::I32 | Type::GpuClass => "i32".into(),
            Type::F64 => "f64".into(),
            Type::Bool => "bool".into(),
            Type::String | Type::Path => "*const c_char".into(),
            Type::Address => "usize".into(),
            Type::F32Matrix => "uform_f32_matrix_t".into(),
            Type::Bytes => "uform_bytes_t".into(),
            Type::Enum(_) => "i32".into(),
            Type::Record(n) => api.record(n).map_or_else(String::new, |r| r.c_name.clone()),
            Type::Class(n) => format!("*mut {}", api.class(n).map_or_else(String::new, |c| c.c_name.clone())),
            Type::List(e) => format!("*const {}", self.c_field(api, e)),
        }
    }

    /// Rust expression turning C field `raw.name` of an input record into the core's `Option<T>`.
    fn read_input(&self, field: &Field, record: &Record) -> String {
        let name = field.name.snake();
        let arg = format!("\"{}.{}\"", record.name.pascal(), name);
        match &field.ty {
            Type::U32 | Type::U64 | Type::I32 => format!("nonzero(raw.{name})"),
            Type::Address => format!("nonzero(raw.{name}).map(|x| x as u64)"),
            // Rejected by the checker (`Shape::GpuClassInInputRecord`): zero, C's "absent", is a class id.
            Type::GpuClass => format!("compile_error!(\"unsupported input field {name}\")"),
            Type::F64 => format!("present_f64(raw.{name})"),
            Type::Bool if field.optional => format!("read_optional_bool(raw.{name}, {arg})?"),
            Type::Bool => format!("raw.{name}"),
            Type::String | Type::Path => format!("read_str(raw.{name}, {arg})?"),
            Type::Enum(e) => {
                format!("if raw.{name} == 0 {{ None }} else {{ Some({}(raw.{name}, {arg})?) }}", enum_from_c(e))
            }
            Type::List(e) => {
                let convert = match &**e {
                    Type::Address => ".map(|v| v.into_iter().map(|x| x as u64).collect())",
                    _ => "",
                };
                format!("read_list(raw.{name}, raw.{name}_count, {arg})?{convert}")
            }
            // An optional handle: NULL (a zero-initialised struct) is absent.
            Type::Class(k) if field.optional => format!(
                "if raw.{name}.is_null() {{ None }} else {{ Some({}.get(raw.{name} as usize, {arg}, {:?})?.value.clone()) }}",
                registry(k),
                k.pascal()
            ),
            // A required handle: NULL (a zero-initialised struct) is a missing argument; the core value is shared.
            Type::Class(k) => {
                format!("{}.get(raw.{name} as usize, {arg}, {:?})?.value.clone()", registry(k), k.pascal())
            }
            // Rejected by the checker: a record holds no matrix and no bytes.
            Type::Record(_) | Type::F32Matrix | Type::Bytes => {
                format!("compile_error!(\"unsupported input field {name}\")")
            }
        }
    }

    /// Rust expression turning core value `v.name` of an output record into its C field.
    fn write_output(&self, api: &Api, field: &Field) -> String {
        let name = field.name.snake();
        match &field.ty {
            Type::U32 | Type::U64 | Type::I32 | Type::F64 | Type::Bool => format!("v.{name}"),
            Type::Address => format!("v.{name} as usize"),
            Type::GpuClass if field.optional => {
                format!("v.{name}.as_deref().and_then(uform_core::devices::gpu_class_id).unwrap_or(-1)")
            }
            Type::GpuClass => format!("uform_core::devices::gpu_class_id(&v.{name}).unwrap_or(-1)"),
            Type::String | Type::Path if field.optional => {
                format!("v.{name}.as_deref().map_or(std::ptr::null(), |s| arena.string(s))")
            }
            Type::String | Type::Path => format!("arena.string(&v.{name})"),
            Type::Enum(e) => format!("{}(v.{name})", enum_to_c(e)),
            Type::List(e) => match &**e {
                Type::Record(r) => {
                    let rec = api.record(r).map_or_else(String::new, |r| r.name.snake());
                    format!("{{ let items: Vec<_> = v.{name}.iter().map(|x| {rec}_to_c(x, arena)).collect(); arena.list(items) }}")
                }
                Type::String | Type::Path => {
                    format!("{{ let items: Vec<_> = v.{name}.iter().map(|s| arena.string(s)).collect(); arena.list(items) }}")
                }
                _ => format!("arena.list(v.{name}.clone())"),
            },
            Type::Record(r) => format!("{}_to_c(&v.{name}, arena)", r.snake()),
            Type::Class(_) | Type::F32Matrix | Type::Bytes => {
                format!("compile_error!(\"unsupported output field {name}\")")
            }
        }
    }
}

/// The registry of a class's handles in the glue.
pub(super) fn registry(n: &Name) -> String {
    format!("{}_HANDLES", n.screaming())
}

pub(super) fn enum_from_c(e: &Name) -> String {
    format!("{}_from_c", e.snake())
}
pub(super) fn enum_to_c(e: &Name) -> String {
    format!("{}_to_c", e.snake())
}

template! {
    "c/ffi_record.rs"
    struct RecordRs {
        c_name: String,
        core: String,
        snake: String,
        input: bool,
        fields: Vec<(String, String)>,
        conversions: Vec<(String, String)>,
        counts: Vec<(String, String)>,
    }
}

template! {
    "c/ffi_enum.rs"
    struct EnumRs {
        c_name: String,
        core: String,
        snake: String,
        variants: Vec<(String, i64)>,
        accepted: String,
    }
}

/// What makes an input record's mirror `Versioned` (`bindings/c/src/versioned.rs`) sound.
const VERSIONED_SAFETY: &str =
    "// SAFETY: `#[repr(C)]`, led by `struct_size: u32`, and every field an integer, a float, a C `bool` or a \
     raw pointer, for which all zeros (and whatever a C caller writes) is a valid value.";

/// How an input record's struct grows: its first layout's size (the fields without `since`, mirrored when some
/// field has one), and a compile-time check that no appended field lies in the first layout's trailing padding,
/// where an older caller's struct has bytes nobody set.
fn versioned(r: &Record, fields: &[(String, String)]) -> String {
    let c = &r.c_name;
    let appended: Vec<String> = r.fields.iter().filter(|f| f.since.is_some()).map(|f| f.name.snake()).collect();
    if appended.is_empty() {
        return format!("{VERSIONED_SAFETY}\nunsafe impl Versioned for {c} {{\n    const FIRST_SIZE: usize = std::mem::size_of::<{c}>();\n}}");
    }
    let first: Vec<&(String, String)> = fields
        .iter()
        .filter(|(name, _)| !appended.iter().any(|a| name == a || *name == format!("{a}_count")))
        .collect();
    let mut s =
        format!("/// `{c}` as its first layout declared it.\n#[repr(C)]\n#[allow(dead_code)]\nstruct {c}_first {{\n");
    for (name, ty) in first {
        s.push_str(&format!("    {name}: {ty},\n"));
    }
    s.push_str(&format!(
        "}}\n\n{VERSIONED_SAFETY}\nunsafe impl Versioned for {c} {{\n    const FIRST_SIZE: usize = std::mem::size_of::<{c}_first>();\n}}\n"
    ));
    for a in appended {
        s.push_str(&format!(
            "const _: () = assert!(\n    std::mem::offset_of!({c}, {a}) >= std::mem::size_of::<{c}_first>(),\n    \"{c}.{a} lies in the first layout's trailing padding: append a field that fills it first\"\n);\n"
        ));
    }
    s
}

/// The mirrors and conversions of every enum and record, in IDL order (enums first).
pub(super) fn parts(api: &Api) -> Rendered<Vec<String>> {
    let rc = RustC;
    let mut parts = Vec::new();
    for e in api.enums() {
        parts.push(
            EnumRs {
                c_name: e.c_name.clone(),
                core: e.name.pascal(),
                snake: e.name.snake(),
                variants: e.variants.iter().map(|v| (v.name.pascal(), e.number(v))).collect(),
                accepted: e.variants.iter().map(|v| e.number(v).to_string()).collect::<Vec<_>>().join(", "),
            }
            .rendered(format!("enum {}", e.name.pascal()))?,
        );
    }
    for r in api.records() {
        let input = r.direction == Direction::Input;
        let mut fields = Vec::new();
        if input {
            fields.push(("struct_size".to_string(), "u32".to_string()));
        }
        for f in &r.fields {
            // An optional bool a caller fills in is a byte with three values (`uform_optional_bool_t`).
            let ty = if crate::lang::c::format::C.optional_bool(r, f) { "u8".into() } else { rc.c_field(api, &f.ty) };
            fields.push((f.name.snake(), ty));
            if matches!(f.ty, Type::List(_)) {
                fields.push((format!("{}_count", f.name.snake()), "usize".into()));
            }
        }
        let conversions = r
            .fields
            .iter()
            .map(|f| (f.name.snake(), if input { rc.read_input(f, r) } else { rc.write_output(api, f) }))
            .collect();
        parts.push(
            RecordRs {
                c_name: r.c_name.clone(),
                core: r.name.pascal(),
                snake: r.name.snake(),
                input,
                fields: fields.clone(),
                conversions,
                counts: r
                    .fields
                    .iter()
                    .filter(|f| matches!(f.ty, Type::List(_)))
                    .map(|f| (format!("{}_count", f.name.snake()), f.name.snake()))
                    .collect(),
            }
            .rendered(format!("record {}", r.name.pascal()))?,
        );
        if input {
            parts.push(versioned(r, &fields));
            // Functions may return input records (options from the environment): the C view of a core value.
            let out_fields: Vec<(String, String)> = r
                .fields
                .iter()
                .map(|f| {
                    let name = f.name.snake();
                    let expr = match &f.ty {
                        Type::String | Type::Path => {
                            format!("v.{name}.as_deref().map_or(std::ptr::null(), |s| arena.string(s))")
                        }
                        Type::List(_) => {
                            format!("compile_error!(\"list field {name} in an output of an input record\")")
                        }
                        _ => format!("v.{name}.unwrap_or_default()"),
                    };
                    (name, expr)
                })
                .collect();
            let returned = api.callables().any(|c| c.returns.as_ref() == Some(&Type::Record(r.name.clone())));
            if returned {
                let mut s = format!(
                    "\n#[allow(dead_code)]\nfn {}_to_c(v: &uform_core::{}, arena: &mut Arena) -> {} {{\n    {} {{\n",
                    r.name.snake(),
                    r.name.pascal(),
                    r.c_name,
                    r.c_name
                );
                s.push_str(&format!("        struct_size: std::mem::size_of::<{}>() as u32,\n", r.c_name));
                for (name, expr) in out_fields {
                    s.push_str(&format!("        {name}: {expr},\n"));
                }
                s.push_str("    }\n}");
                parts.push(s);
            }
        }
    }
    Ok(parts)
}
