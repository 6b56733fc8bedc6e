//! Kotlin over JNI: `generated/kotlin/cloud/unum/uform/UForm.kt` (the API: records, enums, exceptions, classes and
//! functions), `UFormNative.kt` (the `external fun` of every callable, the library loader, the handle and the result
//! decoder) and `generated/jni/glue.rs` (the Rust JNI functions over `uform-core`, [`jni`]). Each callable renders
//! from its [`CallPlan`]; every spelling and crossing decision is in [`format::Kt`].

pub mod docs;
pub mod format;
pub mod jni;

use crate::lang::{banner, class_doc, DocLine as FieldLine, VariantLine};
use crate::model::*;
use crate::plan::{CallPlan, Passing, Receiver};
use crate::render::{template, Named, Rendered};
use crate::Output;
use format::{Crossing, Kt, Value};

/// What the Kotlin and JNI glue can emit: records are flattened into JNI arguments one level deep, so an input record
/// holding a record and a list of records as a parameter are refused; a returned input record holding a class has no
/// encoding.
pub const SUPPORTS: crate::lang::shapes::Shapes = crate::lang::shapes::Shapes::except(&[
    crate::lang::shapes::Shape::RecordInInputRecord,
    crate::lang::shapes::Shape::ListOfRecordsArgument,
    crate::lang::shapes::Shape::ClassInReturnedInputRecord,
]);

const KT: Kt = Kt;
/// The package every Kotlin source declares (`generated/kotlin/<its path>/`).
pub const PACKAGE: &str = "cloud.unum.uform";
/// The native library in the jar, and the platform directory it lies under.
pub const LIBRARY: &str = "libuform_jni.so";
pub const PLATFORM: &str = "linux-x86-64";

fn offered(c: &Callable) -> bool {
    c.offered_in(Language::Kotlin)
}

/// One field's part of a record's `equals` and `hashCode`.
pub struct ContentLine {
    pub equals: String,
    pub hash: String,
}

pub struct ReadLine {
    pub name: String,
    pub read: String,
}

pub struct KindLine {
    pub doc: String,
    pub name: String,
    pub code: String,
}

/// One `external fun` of `UFormNative`.
pub struct NativeFunction {
    pub name: String,
    pub params: String,
    pub returns: String,
}

template! {
    "kotlin/api.kt"
    struct ApiFile {
        banner: String,
        package: &'static str,
        parts: Vec<String>,
    }
}

template! {
    "kotlin/native.kt"
    struct NativeFile {
        banner: String,
        package: &'static str,
        functions: Vec<NativeFunction>,
        library: &'static str,
        platform: &'static str,
        matrix: bool,
        doubles: bool,
        readers: Vec<String>,
    }
}

template! {
    "kotlin/record.kt"
    struct RecordKt {
        doc: String,
        name: String,
        fields: Vec<FieldLine>,
        /// Set when a field is an array: `equals` and `hashCode` compare contents (a data class compares arrays by
        /// identity). Each entry is one field's comparison and hash, in field order.
        contents: Vec<ContentLine>,
    }
}

template! {
    "kotlin/reader.kt"
    struct ReaderKt {
        name: String,
        fields: Vec<ReadLine>,
    }
}

template! {
    "kotlin/enum.kt"
    struct EnumKt {
        doc: String,
        name: String,
        variants: Vec<VariantLine>,
    }
}

template! {
    "kotlin/error.kt"
    struct ErrorKt {
        doc: String,
        kinds: Vec<KindLine>,
    }
}

template! {
    "kotlin/matrix.kt"
    struct MatrixKt;
}

template! {
    "kotlin/class.kt"
    struct ClassKt {
        doc: String,
        name: String,
        release: String,
        /// The native function giving the quiet word, when some method reads it.
        quiet: Option<String>,
        /// Companion constants: what the quiet word holds while each quiet method would change nothing.
        statics: Vec<String>,
        constructors: Vec<String>,
        methods: Vec<String>,
        free: Option<String>,
    }
}

template! {
    "kotlin/callable.kt"
    struct CallableKt {
        doc: String,
        indent: &'static str,
        throws: bool,
        name: String,
        params: String,
        returns: String,
        lines: Vec<String>,
    }
}

template! {
    "kotlin/constant.kt"
    struct ConstantKt {
        doc: String,
        cache: String,
        name: String,
        ty: String,
        call: String,
    }
}

fn record_kt(r: &Record) -> Rendered {
    let has_arrays = r.fields.iter().any(|f| KT.field_ty(r, f).starts_with("DoubleArray"));
    RecordKt {
        doc: KT.doc_comment(&r.doc, ""),
        name: KT.type_name(&r.name),
        fields: r.fields.iter().map(|f| field_line(r, f)).collect(),
        contents: if has_arrays { r.fields.iter().map(|f| content_line(r, f)).collect() } else { Vec::new() },
    }
    .rendered(format!("record {}", r.name.pascal()))
}

/// A record field's declaration in the class's constructor: an optional field defaults to its IDL default in an
/// input record, else to `null`.
fn field_line(r: &Record, f: &Field) -> FieldLine {
    let declaration = format!("{}: {}", KT.member(&f.name), KT.field_ty(r, f));
    let declaration = match (&f.default, r.direction) {
        _ if !f.optional => declaration,
        (Some(d), Direction::Input) => format!("{declaration} = {}", KT.literal(d, &f.ty)),
        _ => format!("{declaration} = null"),
    };
    FieldLine { doc: KT.doc_comment(&f.doc, "    "), declaration }
}

/// A field's part of the `equals` and `hashCode` that a record holding an array writes out (a data class would compare
/// the array by identity): an array compares and hashes by its contents, every other field as a data class would.
fn content_line(r: &Record, f: &Field) -> ContentLine {
    let name = KT.member(&f.name);
    if KT.field_ty(r, f).starts_with("DoubleArray") {
        ContentLine { equals: format!("{name}.contentEquals(other.{name})"), hash: format!("{name}.contentHashCode()") }
    } else {
        ContentLine { equals: format!("{name} == other.{name}"), hash: format!("{name}.hashCode()") }
    }
}

fn reader_kt(r: &Record) -> Rendered {
    ReaderKt {
        name: KT.type_name(&r.name),
        fields: r
            .fields
            .iter()
            .map(|f| {
                let read = KT.read(&f.ty);
                ReadLine {
                    name: KT.member(&f.name),
                    read: if f.optional { format!("optional {{ {read} }}") } else { read },
                }
            })
            .collect(),
    }
    .rendered(format!("record {}", r.name.pascal()))
}

fn enum_kt(e: &Enum) -> Rendered {
    EnumKt {
        doc: KT.doc_comment(&e.doc, ""),
        name: KT.type_name(&e.name),
        variants: e.variants.iter().map(|v| variant_line(e, v)).collect(),
    }
    .rendered(format!("enum {}", e.name.pascal()))
}

/// An enum value, its doc followed by what it is in the other languages (a Kotlin enum has no discriminant).
fn variant_line(e: &Enum, v: &Variant) -> VariantLine {
    let doc = format!("{} Its value elsewhere is {}.", KT.doc_text(&v.doc), KT.variant_value(e, v));
    VariantLine { doc: KT.kdoc(&doc, "    "), name: KT.variant(&v.name) }
}

fn error_kt(api: &Api) -> Rendered {
    ErrorKt {
        doc: KT.kdoc(
            "The exception every throwing call throws: one subclass per error kind, the same set in every language, \
             whose message names the argument and the value; `code` is the kind as every language spells it \
             (`invalid_argument`).",
            "",
        ),
        kinds: api
            .errors
            .iter()
            .map(|k| KindLine {
                doc: KT.doc_comment(&k.doc, "    "),
                name: KT.type_name(&k.name),
                code: k.name.snake(),
            })
            .collect(),
    }
    .rendered("errors")
}

/// A callable's KDoc: its doc, one `@param` per documented parameter, and what it throws.
fn callable_doc(c: &Callable, indent: &str) -> String {
    let mut text = KT.doc_text(&c.doc);
    for p in c.params.iter().filter(|p| !p.doc.is_empty()) {
        text.push_str(&format!("\n@param {} {}", p.name.camel(), KT.doc_text(&p.doc)));
        if p.ty.holds_bytes() {
            text.push_str(&format!(" {}", KT.bytes_note()));
        }
    }
    if c.throws {
        text.push_str("\n@throws UFormException of the kind the error names.");
    }
    KT.kdoc(&text, indent)
}

/// What one callable needs on both sides of JNI: the native function, the Kotlin call into it, and the pieces the
/// Rust side renders (built in [`jni`] from the same call).
pub struct JniCall {
    pub native: NativeFunction,
    /// Kotlin lines before the call (a record argument's defaulting).
    pub prelude: Vec<String>,
    /// The handles held across the call: (object expression, name its pointer is bound to, whether it may be null).
    pub handles: Vec<(String, String, bool)>,
    /// The native call's arguments.
    pub args: Vec<String>,
    /// The Rust parameters after `env` and the class.
    pub rs_params: Vec<String>,
    /// The Rust `let` lines lifting each argument, in order.
    pub rs_lets: Vec<String>,
    pub crossing: Crossing,
}

/// A callable's call across JNI, from its plan.
pub fn jni_call(api: &Api, plan: &CallPlan, class: Option<&Class>, c: &Callable) -> JniCall {
    let mut out = JniCall {
        native: NativeFunction {
            name: KT.native_name(class.map(|k| &k.name), &c.name),
            params: String::new(),
            returns: String::new(),
        },
        prelude: Vec::new(),
        handles: Vec::new(),
        args: Vec::new(),
        rs_params: Vec::new(),
        rs_lets: Vec::new(),
        crossing: Crossing::of(&plan.outcome),
    };
    let mut kt_params = Vec::new();
    if let Receiver::Handle { class: k } = &plan.receiver {
        kt_params.push("handle: Long".to_string());
        out.args.push("self".into());
        out.handles.push(("this".into(), "self".into(), false));
        out.rs_params.push("handle: jlong".into());
        out.rs_lets.push(format!(
            "// SAFETY: Kotlin holds a use of `handle` for the whole call (NativeHandle.use).\n        let this = unsafe {{ runtime::borrow::<uform_core::{}>(handle) }};",
            KT.type_name(k)
        ));
    }
    for a in &plan.arguments {
        let param = KT.member(&a.name);
        // An absent record argument is one with every field absent.
        let kt = match &a.passing {
            Passing::Record { record, .. } if a.default == Some(Literal::EmptyRecord) => {
                let local = format!("{}Value", param.trim_matches('`'));
                out.prelude.push(format!("val {local} = {param} ?: {}()", KT.type_name(record)));
                local
            }
            _ => param,
        };
        let value = Value { kt, rs: a.name.snake(), ty: &a.ty, optional: false };
        let lowered = KT.lower(api, &value, false);
        for s in lowered.slots {
            kt_params.push(s.kt_param);
            out.args.push(s.kt_arg);
            out.rs_params.push(s.rs_param);
        }
        out.handles.extend(lowered.handles);
        let safety = lowered.safety.map(|s| format!("{s}\n        ")).unwrap_or_default();
        out.rs_lets.push(format!("{safety}let {} = {};", format::rust_ident(&a.name.snake()), lowered.lift));
    }
    out.native.params = kt_params.join(", ");
    out.native.returns = KT.native_returns(&out.crossing);
    out
}

/// The Kotlin API function of a callable (a constructor in its class's companion object).
fn callable_kt(api: &Api, class: Option<&Class>, c: &Callable, indent: &'static str) -> Rendered {
    let item = crate::render::callable_item(class, c);
    let plan = CallPlan::of(api, class, c);
    let l = jni_call(api, &plan, class, c);
    let returns = KT.returns(&plan.outcome);
    // A constant is a function without parameters (the checker sees to it).
    if plan.constant {
        return ConstantKt {
            doc: callable_doc(c, ""),
            cache: format!("{}Value", c.name.camel()),
            name: KT.member(&c.name),
            ty: returns.unwrap_or_default(),
            call: KT.lift_result(&l.crossing, &format!("UFormNative.{}()", l.native.name)),
        }
        .rendered(item);
    }
    let call = format!("UFormNative.{}({})", l.native.name, l.args.join(", "));
    let mut value = KT.lift_result(&l.crossing, &call);
    if plan.reads_quiet_word() {
        // Skipped while the quiet word says the call would change nothing (core's `quiet()`).
        let expected = match c.params.first() {
            Some(p) => format!("{}[{}.ordinal]", quiet_constant(c), KT.member(&p.name)),
            None => quiet_constant(c),
        };
        value = format!("if (QuietWord.read(quiet) != {expected}) {value}");
    }
    // Hold each handle for the call, innermost last: `x.handle.use(x) { xHandle -> … }`.
    let mut lines = l.prelude.clone();
    let returns = returns.map(|r| format!(": {r}")).unwrap_or_default();
    let keyword = if returns.is_empty() { "" } else { "return " };
    if l.handles.is_empty() {
        lines.push(format!("{keyword}{value}"));
    } else {
        for (depth, (object, bound, optional)) in l.handles.iter().enumerate() {
            let pad = "    ".repeat(depth);
            let start = if depth == 0 { keyword } else { "" };
            if *optional {
                lines.push(format!("{pad}{start}useOptional({object}, {object}?.handle) {{ {bound} ->"));
                continue;
            }
            let owner = if object == "this" { "handle".to_string() } else { format!("{object}.handle") };
            lines.push(format!("{pad}{start}{owner}.use({object}) {{ {bound} ->"));
        }
        lines.push(format!("{}{value}", "    ".repeat(l.handles.len())));
        for depth in (0..l.handles.len()).rev() {
            lines.push(format!("{}}}", "    ".repeat(depth)));
        }
    }
    CallableKt {
        doc: callable_doc(c, indent),
        indent,
        throws: c.throws,
        name: KT.member(&c.name),
        params: c.params.iter().map(|p| KT.param(p)).collect::<Vec<_>>().join(", "),
        returns,
        lines,
    }
    .rendered(item)
}

fn class_kt(api: &Api, c: &Class) -> Rendered {
    let members: Vec<&Callable> = c.members.iter().filter(|m| offered(m)).collect();
    let quiet = quiet_methods(api, c);
    let statics = quiet
        .iter()
        .map(|m| {
            let native = format!("UFormNative.{}", quiet_when_name(c, m));
            match m.params.first().map(|p| &p.ty) {
                Some(Type::Enum(e)) => format!(
                    "private val {}: IntArray = IntArray({}.entries.size) {{ {native}(it) }}",
                    quiet_constant(m),
                    KT.type_name(e)
                ),
                _ => format!("private val {}: Int = {native}()", quiet_constant(m)),
            }
        })
        .collect();
    ClassKt {
        doc: KT.kdoc(&class_doc(c, &|d| KT.doc_text(d)), ""),
        name: KT.type_name(&c.name),
        release: KT.native_name(Some(&c.name), &Name::parse("release")),
        quiet: (!quiet.is_empty()).then(|| KT.native_name(Some(&c.name), &Name::parse("quiet"))),
        statics,
        constructors: members
            .iter()
            .filter(|m| m.kind == CallableKind::Constructor)
            .map(|m| callable_kt(api, Some(c), m, "        "))
            .collect::<Rendered<_>>()?,
        methods: members
            .iter()
            .filter(|m| m.kind != CallableKind::Constructor)
            .map(|m| callable_kt(api, Some(c), m, "    "))
            .collect::<Rendered<_>>()?,
        free: c.members.iter().find(|m| m.kind == CallableKind::Free).map(|m| m.name.camel()),
    }
    .rendered(format!("class {}", c.name.pascal()))
}

/// The methods of `class` that read its quiet word before calling in ([`CallPlan::reads_quiet_word`]).
pub fn quiet_methods<'a>(api: &Api, class: &'a Class) -> Vec<&'a Callable> {
    class.members.iter().filter(|m| offered(m) && CallPlan::of(api, Some(class), m).reads_quiet_word()).collect()
}

/// The native function saying what the quiet word holds while `method` would change nothing.
pub fn quiet_when_name(class: &Class, method: &Callable) -> String {
    format!("{}Quiet", KT.native_name(Some(&class.name), &method.name))
}

/// The companion constant holding what the quiet word holds while `method` would change nothing.
fn quiet_constant(method: &Callable) -> String {
    format!("QUIET_{}", method.name.screaming())
}

/// The records some result carries, directly or inside another record or a list: they need a reader here and an
/// encoder in the glue.
/// Whether a result or a returned record's field is a list of floats, which Kotlin reads as a `DoubleArray`.
fn returns_doubles(api: &Api) -> bool {
    let doubles = |ty: &Type| matches!(ty, Type::List(inner) if **inner == Type::F64);
    api.callables().filter(|c| offered(c)).any(|c| c.returns.as_ref().is_some_and(doubles))
        || returned_records(api).iter().any(|r| r.fields.iter().any(|f| doubles(&f.ty)))
}

pub fn returned_records(api: &Api) -> Vec<&Record> {
    fn visit<'a>(api: &'a Api, ty: &Type, out: &mut Vec<&'a Record>) {
        match ty {
            Type::List(inner) => visit(api, inner, out),
            Type::Record(n) => {
                if let Some(r) = api.record(n) {
                    if !out.iter().any(|o| o.name == r.name) {
                        out.push(r);
                        for f in &r.fields {
                            visit(api, &f.ty, out);
                        }
                    }
                }
            }
            _ => {}
        }
    }
    let mut out = Vec::new();
    for c in api.callables().filter(|c| offered(c)) {
        if let Some(ty) = &c.returns {
            visit(api, ty, &mut out);
        }
    }
    // In IDL order, so the files do not depend on the order of the callables.
    api.records().filter(|r| out.iter().any(|o| o.name == r.name)).collect()
}

fn api_file(api: &Api) -> Rendered {
    let mut parts = Vec::new();
    for item in &api.items {
        match item {
            Item::Record(r) => parts.push(record_kt(r)?),
            Item::Enum(e) => parts.push(enum_kt(e)?),
            Item::Class(c) => parts.push(class_kt(api, c)?),
            Item::Function(f) if offered(f) => parts.push(callable_kt(api, None, f, "")?),
            Item::Function(_) => {}
        }
    }
    if api.returns_matrix() {
        parts.push(MatrixKt.rendered("f32_matrix")?);
    }
    parts.push(error_kt(api)?);
    ApiFile { banner: banner("//"), package: PACKAGE, parts }.rendered("UForm.kt")
}

fn native_file(api: &Api) -> Rendered {
    let mut functions = Vec::new();
    for item in &api.items {
        match item {
            Item::Class(c) => {
                for m in c.members.iter().filter(|m| offered(m)) {
                    functions.push(jni_call(api, &CallPlan::of(api, Some(c), m), Some(c), m).native);
                }
                functions.push(NativeFunction {
                    name: KT.native_name(Some(&c.name), &Name::parse("release")),
                    params: "handle: Long".into(),
                    returns: String::new(),
                });
                let quiet = quiet_methods(api, c);
                if !quiet.is_empty() {
                    functions.push(NativeFunction {
                        name: KT.native_name(Some(&c.name), &Name::parse("quiet")),
                        params: "handle: Long".into(),
                        returns: ": ByteBuffer".into(),
                    });
                }
                for q in quiet {
                    functions.push(NativeFunction {
                        name: quiet_when_name(c, q),
                        params: if q.params.is_empty() { String::new() } else { "ordinal: Int".into() },
                        returns: ": Int".into(),
                    });
                }
            }
            Item::Function(f) if offered(f) => {
                functions.push(jni_call(api, &CallPlan::of(api, None, f), None, f).native)
            }
            _ => {}
        }
    }
    NativeFile {
        banner: banner("//"),
        package: PACKAGE,
        functions,
        library: LIBRARY,
        platform: PLATFORM,
        matrix: api.returns_matrix(),
        doubles: returns_doubles(api),
        readers: returned_records(api).into_iter().map(reader_kt).collect::<Rendered<_>>()?,
    }
    .rendered("UFormNative.kt")
}

pub fn render(api: &Api) -> Rendered<Vec<Output>> {
    let dir = format!("kotlin/{}", PACKAGE.replace('.', "/"));
    let mut out = vec![
        Output { path: format!("{dir}/UForm.kt").into(), contents: api_file(api)? },
        Output { path: format!("{dir}/UFormNative.kt").into(), contents: native_file(api)? },
        Output { path: "jni/glue.rs".into(), contents: jni::glue_file(api)? },
    ];
    out.extend(crate::lang::docs::render(&docs::KotlinDocs, api)?);
    Ok(out)
}
