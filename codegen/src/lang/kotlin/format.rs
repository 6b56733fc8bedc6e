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
/// the name its pointer is bound to), and the Rust expression lifting the slots back into the core value.
#[derive(Default)]
pub struct Lowered {
    pub slots: Vec<Slot>,
    pub handles: Vec<(String, String)>,
    pub lift: String,
}

/// How a result crosses back.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Crossing {
    Unit,
    /// A JNI scalar (integer, float, bool, enum ordinal).
    Scalar,
    String,
    Handle,
    /// A `byte[]` the Kotlin `Reader` decodes.
    Bytes,
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

    /// What an API function returns (a constructor its class), `None` for `Unit`.
    pub fn returns(&self, class: Option<&Class>, c: &Callable) -> Option<String> {
        match (c.kind, &c.returns, class) {
            (CallableKind::Constructor, _, Some(k)) => Some(self.type_name(&k.name)),
            (_, Some(t), _) if c.returns_optional => Some(format!("{}?", self.returned(t))),
            (_, Some(t), _) => Some(self.returned(t)),
            _ => None,
        }
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

    // ---- crossing JNI ----

    /// The JNI type of one slot carrying a non-list scalar of `ty`: (Kotlin, Rust, Kotlin expression of `e`).
    fn scalar_slot(&self, ty: &Type, e: &str) -> (&'static str, &'static str, String) {
        match ty {
            Type::U32 => ("Int", "jint", format!("{e}.toInt()")),
            Type::I32 => ("Int", "jint", e.to_string()),
            Type::U64 | Type::Address => ("Long", "jlong", format!("{e}.toLong()")),
            Type::F64 => ("Double", "jdouble", e.to_string()),
            Type::Bool => ("Boolean", "jboolean", e.to_string()),
            Type::Enum(_) => ("Int", "jint", format!("{e}.ordinal")),
            _ => unreachable!("not a scalar: {ty}"),
        }
    }

    /// The Rust lifting a JNI scalar `n` of `ty` into the core's value.
    fn scalar_lift(&self, ty: &Type, n: &str) -> String {
        match ty {
            Type::U32 => format!("{n} as u32"),
            Type::U64 | Type::Address => format!("{n} as u64"),
            Type::Bool => format!("{n} != 0"),
            Type::Enum(e) => format!("runtime::variant(&uform_core::{}::ALL, {n})?", self.type_name(e)),
            _ => n.to_string(),
        }
    }

    /// A reference-typed value (string or list): (Kotlin type, Rust type, Kotlin conversion of `e`, Rust lift of `n`).
    fn reference(&self, ty: &Type, e: &str, n: &str) -> (String, String, String, String) {
        match ty {
            Type::String | Type::Path | Type::GpuClass => {
                ("String".into(), "JString<'l>".into(), e.into(), format!("runtime::string(env, &{n})?"))
            }
            Type::List(inner) => {
                let (kt, rs, arg, helper) = match &**inner {
                    Type::U32 => ("IntArray", "JIntArray<'l>", format!("uints({e})"), "u32s"),
                    Type::I32 => ("IntArray", "JIntArray<'l>", format!("{e}.toIntArray()"), "i32s"),
                    Type::U64 | Type::Address => ("LongArray", "JLongArray<'l>", format!("ulongs({e})"), "u64s"),
                    Type::F64 => ("DoubleArray", "JDoubleArray<'l>", format!("{e}.toDoubleArray()"), "f64s"),
                    Type::Bool => ("BooleanArray", "JBooleanArray<'l>", format!("{e}.toBooleanArray()"), "bools"),
                    Type::Enum(k) => {
                        let lift = format!("runtime::variants(env, &uform_core::{}::ALL, &{n})?", self.type_name(k));
                        return ("IntArray".into(), "JIntArray<'l>".into(), format!("ordinals({e})"), lift);
                    }
                    // Strings, paths and GPU classes; lists of records are refused by the checker (`SUPPORTS`).
                    _ => ("Array<String>", "JObjectArray<'l>", format!("{e}.toTypedArray()"), "strings"),
                };
                (kt.into(), rs.into(), arg, format!("runtime::{helper}(env, &{n})?"))
            }
            _ => unreachable!("not a reference: {ty}"),
        }
    }

    /// Lowers one value into JNI slots; `owned` says whether the core takes a handle by value (a record field) or
    /// borrows it (a parameter).
    pub fn lower(&self, api: &Api, value: &Value, owned_handle: bool) -> Lowered {
        let (e, n) = (value.kt.as_str(), value.rs.as_str());
        let kt_name = Name::parse(n).camel();
        match value.ty {
            Type::Class(k) => {
                let bound = format!("{kt_name}Handle");
                let borrow = format!("unsafe {{ runtime::borrow::<uform_core::{}>({n}) }}", self.type_name(k));
                Lowered {
                    slots: vec![Slot {
                        kt_param: format!("{kt_name}: Long"),
                        kt_arg: bound.clone(),
                        rs_param: format!("{n}: jlong"),
                    }],
                    handles: vec![(e.to_string(), bound)],
                    lift: if owned_handle { format!("{borrow}.clone()") } else { borrow },
                }
            }
            Type::Record(r) => {
                let record = api.record(r).expect("a checked record");
                let mut out = Lowered::default();
                let mut fields = Vec::new();
                for f in &record.fields {
                    let field = Value {
                        kt: format!("{e}.{}", self.member(&f.name)),
                        rs: format!("{n}_{}", f.name.snake()),
                        ty: &f.ty,
                        optional: f.optional,
                    };
                    let lowered = self.lower(api, &field, true);
                    out.slots.extend(lowered.slots);
                    out.handles.extend(lowered.handles);
                    fields.push(format!("\n            {}: {},", rust_ident(&f.name.snake()), lowered.lift));
                }
                out.lift = format!("uform_core::{} {{{}\n        }}", self.type_name(r), fields.concat());
                out
            }
            Type::String | Type::Path | Type::GpuClass | Type::List(_) => {
                let (kt, rs, arg, lift) = self.reference(value.ty, if value.optional { "it" } else { e }, n);
                if value.optional {
                    Lowered {
                        slots: vec![Slot {
                            kt_param: format!("{kt_name}: {kt}?"),
                            kt_arg: if arg == "it" { e.to_string() } else { format!("{e}?.let {{ {arg} }}") },
                            rs_param: format!("{n}: {rs}"),
                        }],
                        handles: vec![],
                        lift: format!("if {n}.is_null() {{ None }} else {{ Some({lift}) }}"),
                    }
                } else {
                    Lowered {
                        slots: vec![Slot {
                            kt_param: format!("{kt_name}: {kt}"),
                            kt_arg: arg,
                            rs_param: format!("{n}: {rs}"),
                        }],
                        handles: vec![],
                        lift,
                    }
                }
            }
            Type::F32Matrix => unreachable!("a matrix is only a result"),
            scalar => {
                let lift = self.scalar_lift(scalar, n);
                if value.optional {
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
                        handles: vec![],
                        lift: format!("if {n}_present != 0 {{ Some({lift}) }} else {{ None }}"),
                    }
                } else {
                    let (kt, rs, arg) = self.scalar_slot(scalar, e);
                    Lowered {
                        slots: vec![Slot {
                            kt_param: format!("{kt_name}: {kt}"),
                            kt_arg: arg,
                            rs_param: format!("{n}: {rs}"),
                        }],
                        handles: vec![],
                        lift,
                    }
                }
            }
        }
    }

    /// How a result of `ty` crosses back.
    pub fn crossing(&self, ty: Option<&Type>, optional: bool, constructor: bool) -> Crossing {
        match ty {
            _ if constructor => Crossing::Handle,
            None => Crossing::Unit,
            Some(Type::String | Type::Path | Type::GpuClass) => Crossing::String,
            Some(Type::List(_) | Type::Record(_) | Type::F32Matrix) => Crossing::Bytes,
            Some(Type::Class(_)) => Crossing::Handle,
            Some(_) if optional => Crossing::Bytes,
            Some(_) => Crossing::Scalar,
        }
    }

    /// The `external fun`'s return type for a crossing.
    pub fn native_returns(&self, ty: Option<&Type>, crossing: Crossing, optional: bool) -> String {
        let nullable = if optional { "?" } else { "" };
        match crossing {
            Crossing::Unit => String::new(),
            Crossing::Scalar => format!(": {}", self.scalar_slot(ty.expect("a scalar result"), "").0),
            Crossing::String => format!(": String{nullable}"),
            Crossing::Handle => ": Long".into(),
            Crossing::Bytes => format!(": ByteArray{nullable}"),
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
            Type::Class(_) => unreachable!("a handle is never encoded"),
        }
    }

    /// The Kotlin expression turning the native result `e` into the API's value.
    pub fn lift_result(&self, ty: Option<&Type>, optional: bool, crossing: Crossing, e: &str) -> String {
        match (crossing, ty) {
            (Crossing::Unit, _) | (Crossing::String, _) | (Crossing::Handle, _) => e.to_string(),
            (Crossing::Scalar, Some(Type::U32)) => format!("{e}.toUInt()"),
            (Crossing::Scalar, Some(Type::U64 | Type::Address)) => format!("{e}.toULong()"),
            (Crossing::Scalar, Some(Type::Enum(n))) => format!("{}.entries[{e}]", self.type_name(n)),
            (Crossing::Scalar, _) => e.to_string(),
            (Crossing::Bytes, Some(t)) if optional => format!("{e}?.let {{ Reader(it).{} }}", self.read(t)),
            (Crossing::Bytes, Some(t)) => format!("Reader({e}).{}", self.read(t)),
            (Crossing::Bytes, None) => unreachable!("bytes without a type"),
        }
    }

    /// The Rust return type of the JNI function.
    pub fn rust_returns(&self, ty: Option<&Type>, crossing: Crossing) -> String {
        match crossing {
            Crossing::Unit => "()".into(),
            Crossing::Scalar => self.scalar_slot(ty.expect("a scalar result"), "").1.into(),
            Crossing::String | Crossing::Bytes => "jobject".into(),
            Crossing::Handle => "jlong".into(),
        }
    }

    /// The Rust turning the core's value `v` into what the JNI function returns.
    pub fn rust_result(&self, ty: Option<&Type>, optional: bool, crossing: Crossing) -> String {
        let one = |v: &str| match crossing {
            Crossing::String => format!("runtime::jstring(env, &{v})?"),
            Crossing::Bytes => format!("runtime::bytes(env, &{v})?"),
            _ => unreachable!(),
        };
        match (crossing, ty) {
            (Crossing::Unit, _) => "value".into(),
            (Crossing::Handle, _) => "runtime::handle(value)".into(),
            (Crossing::Scalar, Some(Type::U32)) => "value as jint".into(),
            (Crossing::Scalar, Some(Type::U64 | Type::Address)) => "value as jlong".into(),
            (Crossing::Scalar, Some(Type::Bool)) => "jboolean::from(value)".into(),
            (Crossing::Scalar, Some(Type::Enum(n))) => {
                format!("runtime::ordinal(&uform_core::{}::ALL, &value) as jint", self.type_name(n))
            }
            (Crossing::Scalar, _) => "value".into(),
            (_, _) if optional => {
                format!("match value {{ Some(value) => {}, None => std::ptr::null_mut() }}", one("value"))
            }
            _ => one("value"),
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
