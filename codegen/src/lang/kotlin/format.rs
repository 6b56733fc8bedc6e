//! The Kotlin formatter: every decision about how the IDL is spelled in Kotlin and how each value crosses JNI, in
//! one place. [`super`] renders the Kotlin sources and [`super::jni`] the Rust side from these spellings.
//!
//! Decisions:
//! - Types keep their IDL names (PascalCase); members and functions are camelCase, enum values SCREAMING_CASE; a
//!   name that is a Kotlin keyword is quoted in backticks.
//! - Counts are `UInt`/`ULong`, addresses `ULong`, paths and GPU classes `String`, lists `List<T>`; an optional
//!   field is `T?` defaulting to the IDL default or `null`; a record parameter with the default `{}` is `T? = null`.
//! - Across JNI (see `bindings/jni/src/runtime.rs`): a scalar is its JNI scalar (unsigned values reinterpreted), an
//!   enum its ordinal, a string a `String`, a list a primitive array or `Array<String>`, a record argument its fields
//!   one JNI argument each (an optional scalar as a presence flag and a value, an optional reference as `null`), a
//!   handle the `Long` its `NativeHandle` holds. A record, list, matrix or optional non-string result crosses as one
//!   `ByteArray` that `Reader` decodes.

use crate::model::*;
use crate::plan::{Lowering, Outcome, Scalar};

pub struct Kt;

/// Kotlin's hard keywords, and the soft ones that cannot name a parameter unquoted.
const KEYWORDS: &[&str] = &[
    "as",
    "break",
    "class",
    "continue",
    "do",
    "else",
    "false",
    "for",
    "fun",
    "if",
    "in",
    "interface",
    "is",
    "null",
    "object",
    "package",
    "return",
    "super",
    "this",
    "throw",
    "true",
    "try",
    "typealias",
    "typeof",
    "val",
    "var",
    "when",
    "while",
];

/// One JNI argument: its declaration on the `external fun`, the Kotlin expression passing it, and its Rust parameter.
#[derive(Clone, Debug)]
pub struct Slot {
    pub kt_param: String,
    pub kt_arg: String,
    pub rs_param: String,
}

/// A value to lower: how Kotlin reaches it, the Rust identifier its slots are named after, and its type.
pub struct Value<'a> {
    pub kt: String,
    pub rs: String,
    pub ty: &'a Type,
    pub optional: bool,
}

/// What lowering a value makes: its JNI slots, the handles Kotlin must hold for the call (the object expression and
/// the name its pointer is bound to), and the Rust expression lifting the slots back into the core value, with the
/// `// SAFETY:` line the statement or field holding it needs when the lift borrows a handle.
#[derive(Default)]
pub struct Lowered {
    pub slots: Vec<Slot>,
    pub handles: Vec<(String, String, bool)>,
    pub lift: String,
    pub safety: Option<String>,
}

/// How a result crosses back, with what each side needs to spell it.
#[derive(Clone, Debug, PartialEq)]
pub enum Crossing {
    Unit,
    /// A JNI scalar (integer, float, bool, enum ordinal).
    Scalar(Scalar),
    /// A `String`; `null` for an absent optional one.
    String {
        optional: bool,
    },
    /// A new handle's pointer, which Kotlin wraps in its class.
    Handle {
        class: Name,
    },
    /// A `byte[]` the Kotlin `Reader` decodes as `ty`; `null` for an absent optional value.
    Bytes {
        ty: Type,
        optional: bool,
    },
}

impl Crossing {
    /// How a result the plan lowers so crosses back: text as a `String`, a non-optional scalar as itself, everything
    /// else (a list, record, matrix or optional scalar) as bytes.
    pub fn of(outcome: &Outcome) -> Crossing {
        let optional = outcome.optional;
        match &outcome.lowering {
            Lowering::Unit => Crossing::Unit,
            Lowering::Handle { class } => Crossing::Handle { class: class.clone() },
            Lowering::String | Lowering::Path | Lowering::GpuClass => Crossing::String { optional },
            Lowering::Scalar(s) if !optional => Crossing::Scalar(s.clone()),
            Lowering::Scalar(s) => Crossing::Bytes { ty: s.ty(), optional },
            Lowering::List { element } => Crossing::Bytes { ty: Type::List(Box::new(element.clone())), optional },
            Lowering::Record { record } => Crossing::Bytes { ty: Type::Record(record.clone()), optional },
            Lowering::Matrix => Crossing::Bytes { ty: Type::F32Matrix, optional },
        }
    }
}

impl Kt {
    pub fn type_name(&self, name: &Name) -> String {
        name.pascal()
    }

    /// A member, parameter or function name, quoted when it is a keyword.
    pub fn member(&self, name: &Name) -> String {
        quote(name.camel())
    }

    pub fn variant(&self, name: &Name) -> String {
        name.screaming()
    }

    /// The name of a callable's JNI function on `UFormNative`: the class and the member, camelCase, so it needs no
    /// JNI escaping (`executorForRam`, `capabilitiesCompiled`); `release` drops a handle.
    pub fn native_name(&self, class: Option<&Name>, member: &Name) -> String {
        match class {
            Some(k) => format!("{}{}", k.camel(), member.pascal()),
            None => member.camel(),
        }
    }

    /// How a `bytes` parameter crosses: the JVM forces one copy.
    pub fn bytes_note(&self) -> String {
        "Each `ByteArray` is copied once into native memory: JNI cannot lend a JVM array for the whole call.".into()
    }

    /// A type as Kotlin spells it.
    pub fn ty(&self, ty: &Type) -> String {
        match ty {
            Type::U32 => "UInt".into(),
            Type::U64 | Type::Address => "ULong".into(),
            Type::I32 => "Int".into(),
            Type::F64 => "Double".into(),
            Type::Bool => "Boolean".into(),
            Type::String | Type::Path | Type::GpuClass => "String".into(),
            Type::F32Matrix => "F32Matrix".into(),
            Type::Bytes => "ByteArray".into(),
            Type::List(inner) => format!("List<{}>", self.ty(inner)),
            Type::Record(n) | Type::Enum(n) | Type::Class(n) => self.type_name(n),
        }
    }

    /// A type as Kotlin spells a value it is handed back (a result, a field of an output record): a list of floats
    /// is a primitive `DoubleArray`, read in one bulk copy, not a `List` of boxed values.
    pub fn returned(&self, ty: &Type) -> String {
        match ty {
            Type::List(inner) if **inner == Type::F64 => "DoubleArray".into(),
            other => self.ty(other),
        }
    }

    /// A literal as a Kotlin default of type `ty`.
    pub fn literal(&self, literal: &Literal, ty: &Type) -> String {
        match (literal, ty) {
            (Literal::Integer(i), Type::U32) => format!("{i}u"),
            (Literal::Integer(i), Type::U64 | Type::Address) => format!("{i}uL"),
            (Literal::Integer(i), Type::F64) => format!("{i}.0"),
            (Literal::Integer(i), _) => i.to_string(),
            (Literal::Float(f), _) => format!("{f:?}"),
            (Literal::Bool(b), _) => b.to_string(),
            (Literal::String(s), _) => string_literal(s),
            (Literal::Variant(v), Type::Enum(e)) => format!("{}.{}", self.type_name(e), self.variant(v)),
            (Literal::Variant(v), _) => self.variant(v),
            (Literal::EmptyRecord, _) => "null".into(),
        }
    }

    /// A parameter of an API function: `config: ExecutorForRamConfig? = null`, `mood: Mood = Mood.PARKED`.
    pub fn param(&self, p: &Param) -> String {
        let (name, ty) = (self.member(&p.name), self.ty(&p.ty));
        match &p.default {
            Some(Literal::EmptyRecord) => format!("{name}: {ty}? = null"),
            Some(d) => format!("{name}: {ty} = {}", self.literal(d, &p.ty)),
            None => format!("{name}: {ty}"),
        }
    }

    /// What an API function returns, as its plan lowers it (a constructor its class) and as [`Kt::returned`] spells it, `None` for `Unit`.
    pub fn returns(&self, outcome: &Outcome) -> Option<String> {
        let ty = self.returned(&outcome.lowering.ty()?);
        Some(if outcome.optional { format!("{ty}?") } else { ty })
    }

    /// A record field's type: `T?` when optional; as [`Kt::returned`] spells it in an output record.
    pub fn field_ty(&self, record: &Record, field: &Field) -> String {
        let ty = match record.direction {
            Direction::Output => self.returned(&field.ty),
            Direction::Input => self.ty(&field.ty),
        };
        if field.optional {
            format!("{ty}?")
        } else {
            ty
        }
    }

    /// What an enum value is in the other languages: its string, quoted, or its number.
    pub fn variant_value(&self, e: &Enum, v: &Variant) -> String {
        match &v.value {
            EnumValue::String(s) => format!("{s:?}"),
            EnumValue::Number(_) => e.number(v).to_string(),
        }
    }

    /// Doc text with references spelled as Kotlin names them, in KDoc brackets.
    pub fn doc_text(&self, doc: &Doc) -> String {
        doc.render(&|r| match r {
            Reference::Member(n) => format!("`{}`", n.camel()),
            Reference::Function(n) => format!("[{}]", n.camel()),
            Reference::Type(n) => format!("[{}]", self.type_name(n)),
            Reference::Method { class, method } => format!("[{}.{}]", self.type_name(class), method.camel()),
        })
    }

    /// A KDoc block at `indent`.
    pub fn kdoc(&self, text: &str, indent: &str) -> String {
        crate::lang::star_comment(text, indent)
    }

    /// The KDoc block at `indent` holding just `doc`'s text.
    pub fn doc_comment(&self, doc: &Doc, indent: &str) -> String {
        self.kdoc(&self.doc_text(doc), indent)
    }

    // ---- crossing JNI ----

    /// The JNI type of one slot carrying a scalar: (Kotlin, Rust, Kotlin expression of `e`).
    fn scalar_slot(&self, scalar: &Scalar, e: &str) -> (&'static str, &'static str, String) {
        match scalar {
            Scalar::U32 => ("Int", "jint", format!("{e}.toInt()")),
            Scalar::I32 => ("Int", "jint", e.to_string()),
            Scalar::U64 | Scalar::Address => ("Long", "jlong", format!("{e}.toLong()")),
            Scalar::F64 => ("Double", "jdouble", e.to_string()),
            Scalar::Bool => ("Boolean", "jboolean", e.to_string()),
            Scalar::Enum(_) => ("Int", "jint", format!("{e}.ordinal")),
        }
    }

    /// The Rust lifting a JNI scalar `n` into the core's value.
    fn scalar_lift(&self, scalar: &Scalar, n: &str) -> String {
        match scalar {
            Scalar::U32 => format!("{n} as u32"),
            Scalar::U64 | Scalar::Address => format!("{n} as u64"),
            Scalar::Bool => format!("{n} != 0"),
            Scalar::Enum(e) => format!("runtime::variant(&uform_core::{}::ALL, {n})?", self.type_name(e)),
            Scalar::I32 | Scalar::F64 => n.to_string(),
        }
    }

    /// A string, path or GPU class: (Kotlin type, Rust type, Kotlin conversion of `e`, Rust lift of `n`).
    fn string_reference(&self, e: &str, n: &str) -> (String, String, String, String) {
        ("String".into(), "JString<'l>".into(), e.into(), format!("runtime::string(env, &{n})?"))
    }

    /// A list of `element`: (Kotlin type, Rust type, Kotlin conversion of `e`, Rust lift of `n`).
    fn list_reference(&self, element: &Type, e: &str, n: &str) -> (String, String, String, String) {
        let (kt, rs, arg, helper) = match element {
            Type::U32 => ("IntArray", "JIntArray<'l>", format!("uints({e})"), "u32s"),
            Type::I32 => ("IntArray", "JIntArray<'l>", format!("{e}.toIntArray()"), "i32s"),
            Type::U64 | Type::Address => ("LongArray", "JLongArray<'l>", format!("ulongs({e})"), "u64s"),
            Type::F64 => ("DoubleArray", "JDoubleArray<'l>", format!("{e}.toDoubleArray()"), "f64s"),
            Type::Bool => ("BooleanArray", "JBooleanArray<'l>", format!("{e}.toBooleanArray()"), "bools"),
            Type::Enum(k) => {
                let lift = format!("runtime::variants(env, &uform_core::{}::ALL, &{n})?", self.type_name(k));
                return ("IntArray".into(), "JIntArray<'l>".into(), format!("ordinals({e})"), lift);
            }
            // Byte buffers: the JVM cannot lend a `ByteArray`'s bytes past one JNI call, so each is copied once.
            Type::Bytes => ("Array<ByteArray>", "JObjectArray<'l>", format!("{e}.toTypedArray()"), "byte_arrays"),
            // Strings, paths and GPU classes; lists of records are refused by the checker (`SUPPORTS`).
            _ => ("Array<String>", "JObjectArray<'l>", format!("{e}.toTypedArray()"), "strings"),
        };
        (kt.into(), rs.into(), arg, format!("runtime::{helper}(env, &{n})?"))
    }

    /// A string or list value in one slot: `null` when it is optional and absent.
    fn lower_reference(&self, value: &Value, (kt, rs, arg, lift): (String, String, String, String)) -> Lowered {
        let (e, n) = (value.kt.as_str(), value.rs.as_str());
        let kt_name = Name::parse(n).camel();
        if !value.optional {
            let slot = Slot { kt_param: format!("{kt_name}: {kt}"), kt_arg: arg, rs_param: format!("{n}: {rs}") };
            return Lowered { slots: vec![slot], lift, ..Lowered::default() };
        }
        Lowered {
            slots: vec![Slot {
                kt_param: format!("{kt_name}: {kt}?"),
                kt_arg: if arg == "it" { e.to_string() } else { format!("{e}?.let {{ {arg} }}") },
                rs_param: format!("{n}: {rs}"),
            }],
            lift: format!("if {n}.is_null() {{ None }} else {{ Some({lift}) }}"),
            ..Lowered::default()
        }
    }

    /// A scalar value: one slot, or a presence flag and a value when it is optional.
    fn lower_scalar(&self, value: &Value, scalar: &Scalar) -> Lowered {
        let (e, n) = (value.kt.as_str(), value.rs.as_str());
        let kt_name = Name::parse(n).camel();
        let lift = self.scalar_lift(scalar, n);
        if !value.optional {
            let (kt, rs, arg) = self.scalar_slot(scalar, e);
            let slot = Slot { kt_param: format!("{kt_name}: {kt}"), kt_arg: arg, rs_param: format!("{n}: {rs}") };
            return Lowered { slots: vec![slot], lift, ..Lowered::default() };
        }
        let (kt, rs, arg) = self.scalar_slot(scalar, "it");
        let zero = match kt {
            "Boolean" => "false",
            "Double" => "0.0",
            "Long" => "0L",
            _ => "0",
        };
        Lowered {
            slots: vec![
                Slot {
                    kt_param: format!("{kt_name}Present: Boolean"),
                    kt_arg: format!("{e} != null"),
                    rs_param: format!("{n}_present: jboolean"),
                },
                Slot {
                    kt_param: format!("{kt_name}: {kt}"),
                    kt_arg: match arg.strip_prefix("it") {
                        Some("") => format!("{e} ?: {zero}"),
                        Some(call) => format!("{e}?{call} ?: {zero}"),
                        None => format!("{e}?.let {{ {arg} }} ?: {zero}"),
                    },
                    rs_param: format!("{n}: {rs}"),
                },
            ],
            lift: format!("if {n}_present != 0 {{ Some({lift}) }} else {{ None }}"),
            ..Lowered::default()
        }
    }

    /// Lowers one value into JNI slots; `owned` says whether the core takes a handle by value (a record field) or
    /// borrows it (a parameter).
    pub fn lower(&self, api: &Api, value: &Value, owned_handle: bool) -> Lowered {
        let (e, n) = (value.kt.as_str(), value.rs.as_str());
        let kt_name = Name::parse(n).camel();
        if let Some(scalar) = Scalar::of(value.ty) {
            return self.lower_scalar(value, &scalar);
        }
        // Where a value is optional, its Kotlin conversion applies to the `it` of a `?.let`.
        let it = if value.optional { "it" } else { e };
        match value.ty {
            Type::Class(k) => {
                let bound = format!("{kt_name}Handle");
                let borrow = format!("unsafe {{ runtime::borrow::<uform_core::{}>({n}) }}", self.type_name(k));
                let lift = match (owned_handle, value.optional) {
                    // An absent handle crosses as 0 (`useOptional`).
                    (true, true) => format!("if {n} == 0 {{ None }} else {{ Some({borrow}.clone()) }}"),
                    (true, false) => format!("{borrow}.clone()"),
                    (false, _) => borrow,
                };
                Lowered {
                    slots: vec![Slot {
                        kt_param: format!("{kt_name}: Long"),
                        kt_arg: bound.clone(),
                        rs_param: format!("{n}: jlong"),
                    }],
                    handles: vec![(e.to_string(), bound, value.optional)],
                    lift,
                    safety: Some(format!(
                        "// SAFETY: Kotlin holds a use of `{n}` for the whole call (NativeHandle.use)."
                    )),
                }
            }
            Type::Record(r) => {
                let mut out = Lowered::default();
                let mut fields = Vec::new();
                for f in api.record(r).map(|r| r.fields.as_slice()).unwrap_or_default() {
                    let field = Value {
                        kt: format!("{e}.{}", self.member(&f.name)),
                        rs: format!("{n}_{}", f.name.snake()),
                        ty: &f.ty,
                        optional: f.optional,
                    };
                    let lowered = self.lower(api, &field, true);
                    out.slots.extend(lowered.slots);
                    out.handles.extend(lowered.handles);
                    if let Some(safety) = lowered.safety {
                        fields.push(format!("\n            {safety}"));
                    }
                    fields.push(format!("\n            {}: {},", rust_ident(&f.name.snake()), lowered.lift));
                }
                out.lift = format!("uform_core::{} {{{}\n        }}", self.type_name(r), fields.concat());
                out
            }
            Type::List(element) => self.lower_reference(value, self.list_reference(element, it, n)),
            Type::String | Type::Path | Type::GpuClass => self.lower_reference(value, self.string_reference(it, n)),
            // A matrix is only ever a result (the checker refuses it anywhere else); the scalars are lowered above.
            _ => Lowered { lift: "compile_error!(\"a matrix is only ever a result\")".into(), ..Lowered::default() },
        }
    }

    /// The `external fun`'s return type for a crossing.
    pub fn native_returns(&self, crossing: &Crossing) -> String {
        let nullable = |optional: bool| if optional { "?" } else { "" };
        match crossing {
            Crossing::Unit => String::new(),
            Crossing::Scalar(s) => format!(": {}", self.scalar_slot(s, "").0),
            Crossing::String { optional } => format!(": String{}", nullable(*optional)),
            Crossing::Handle { .. } => ": Long".into(),
            Crossing::Bytes { optional, .. } => format!(": ByteArray{}", nullable(*optional)),
        }
    }

    /// The Kotlin expression reading a value of `ty` from a `Reader` in scope.
    pub fn read(&self, ty: &Type) -> String {
        match ty {
            Type::U32 => "u32()".into(),
            Type::U64 | Type::Address => "u64()".into(),
            Type::I32 => "i32()".into(),
            Type::F64 => "f64()".into(),
            Type::Bool => "bool()".into(),
            Type::String | Type::Path | Type::GpuClass => "string()".into(),
            Type::F32Matrix => "matrix()".into(),
            Type::List(inner) if **inner == Type::F64 => "doubles()".into(),
            Type::List(inner) => format!("list {{ {} }}", self.read(inner)),
            Type::Record(n) => format!("read{}()", self.type_name(n)),
            Type::Enum(n) => format!("{}.entries[i32()]", self.type_name(n)),
            // A returned record holding a handle is refused by the checker (`SUPPORTS`), and bytes are only ever a
            // parameter's list element.
            Type::Class(_) => "error(\"a handle is never encoded\")".into(),
            Type::Bytes => "error(\"bytes are never returned\")".into(),
        }
    }

    /// The Kotlin expression turning the native result `e` into the API's value.
    pub fn lift_result(&self, crossing: &Crossing, e: &str) -> String {
        match crossing {
            Crossing::Unit | Crossing::String { .. } => e.to_string(),
            Crossing::Handle { class } => format!("{}({e})", self.type_name(class)),
            Crossing::Scalar(Scalar::U32) => format!("{e}.toUInt()"),
            Crossing::Scalar(Scalar::U64 | Scalar::Address) => format!("{e}.toULong()"),
            Crossing::Scalar(Scalar::Enum(n)) => format!("{}.entries[{e}]", self.type_name(n)),
            Crossing::Scalar(Scalar::I32 | Scalar::F64 | Scalar::Bool) => e.to_string(),
            Crossing::Bytes { ty, optional: true } => format!("{e}?.let {{ Reader(it).{} }}", self.read(ty)),
            Crossing::Bytes { ty, optional: false } => format!("Reader({e}).{}", self.read(ty)),
        }
    }

    /// The Rust return type of the JNI function.
    pub fn rust_returns(&self, crossing: &Crossing) -> String {
        match crossing {
            Crossing::Unit => "()".into(),
            Crossing::Scalar(s) => self.scalar_slot(s, "").1.into(),
            Crossing::String { .. } | Crossing::Bytes { .. } => "jobject".into(),
            Crossing::Handle { .. } => "jlong".into(),
        }
    }

    /// The Rust turning the core's value `value` into what the JNI function returns.
    pub fn rust_result(&self, crossing: &Crossing) -> String {
        let object = |write: &str, optional: bool| {
            if optional {
                format!("match value {{ Some(value) => {write}, None => std::ptr::null_mut() }}")
            } else {
                write.to_string()
            }
        };
        match crossing {
            Crossing::Unit => "value".into(),
            Crossing::Handle { .. } => "runtime::handle(value)".into(),
            Crossing::Scalar(Scalar::U32) => "value as jint".into(),
            Crossing::Scalar(Scalar::U64 | Scalar::Address) => "value as jlong".into(),
            Crossing::Scalar(Scalar::Bool) => "jboolean::from(value)".into(),
            Crossing::Scalar(Scalar::Enum(n)) => {
                format!("runtime::ordinal(&uform_core::{}::ALL, &value) as jint", self.type_name(n))
            }
            Crossing::Scalar(Scalar::I32 | Scalar::F64) => "value".into(),
            Crossing::String { optional } => object("runtime::jstring(env, &value)?", *optional),
            Crossing::Bytes { optional, .. } => object("runtime::bytes(env, &value)?", *optional),
        }
    }
}

/// A Kotlin identifier, quoted in backticks when it is a keyword.
fn quote(name: String) -> String {
    if KEYWORDS.contains(&name.as_str()) {
        format!("`{name}`")
    } else {
        name
    }
}

/// A Rust field name, raw when it is a Rust keyword.
pub fn rust_ident(name: &str) -> String {
    const RUST: &[&str] = &["type", "match", "fn", "use", "mod", "ref", "self", "move", "loop", "impl", "in", "as"];
    if RUST.contains(&name) {
        format!("r#{name}")
    } else {
        name.to_string()
    }
}

/// A Kotlin string literal: escapes and `$` quoted.
fn string_literal(s: &str) -> String {
    let mut out = String::from("\"");
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '$' => out.push_str("\\$"),
            '\n' => out.push_str("\\n"),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}
