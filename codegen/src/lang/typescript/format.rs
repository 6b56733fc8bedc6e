//! The TypeScript formatter: every JavaScript/TypeScript naming and type-spelling decision, in one place.
//! Names follow the seed page: camelCase members and functions, PascalCase types and enum members.

use crate::model::*;
use crate::plan::CallPlan;

pub struct Ts;

impl Ts {
    pub fn type_name(&self, name: &Name) -> String {
        name.pascal()
    }
    pub fn member(&self, name: &Name) -> String {
        name.camel()
    }
    pub fn function(&self, name: &Name) -> String {
        name.camel()
    }
    pub fn variant(&self, name: &Name) -> String {
        name.pascal()
    }
    /// The native layer's plain function behind an instance method, taking the handle number first
    /// (`executorDrain`): what the wrapper calls, since a number crosses napi faster than an object unwraps.
    pub fn fast_function(&self, class: &Name, method: &Name) -> String {
        let mut words = class.words().to_vec();
        words.extend(method.words().iter().cloned());
        Name::parse(&words.join("_")).camel()
    }
    /// The plain function an instance method has, if any: not constructors, and not methods taking a class
    /// argument, which only napi-rs's own conversion checks. A Promise twin always has one (a class argument crosses
    /// as its handle number).
    pub fn fast_function_of(&self, class: &Class, method: &Callable) -> Option<String> {
        let eligible = method.offered_in(Language::TypeScript)
            && (method.is_twin()
                || method.kind != CallableKind::Constructor
                    && !method.params.iter().any(|p| matches!(p.ty, Type::Class(_))));
        eligible.then(|| self.fast_function(&class.name, &method.name))
    }

    /// The JavaScript check a `try_first` method makes before calling in (see [`Quiet`]), when its plan reads the
    /// quiet word ([`crate::plan::CallPlan::reads_quiet_word`]: no result, and at most one argument, an enum).
    pub fn quiet_of(&self, api: &Api, class: &Class, method: &Callable) -> Option<Quiet> {
        let plan = crate::plan::CallPlan::of(api, Some(class), method);
        if !plan.reads_quiet_word() || self.fast_function_of(class, method).is_none() {
            return None;
        }
        let enum_param = match method.params.first().map(|p| &p.ty) {
            Some(Type::Enum(n)) => Some(api.enumeration(n)?),
            _ => None,
        };
        let values = enum_param.map_or_else(Vec::new, |e| {
            e.variants
                .iter()
                .map(|v| match &v.value {
                    EnumValue::Number(n) => n.to_string(),
                    EnumValue::String(s) => format!("{s:?}"),
                })
                .collect()
        });
        let fast = self.fast_function(&class.name, &method.name);
        Some(Quiet {
            word: self.fast_function(&class.name, &Name::parse("quiet")),
            expected: format!("{fast}Quiet"),
            table: format!("{}_{}_QUIET", class.name.screaming(), method.name.screaming()),
            lookup: format!("{fast}QuietWord"),
            argument: method.params.first().map(|p| self.member(&p.name)),
            values,
        })
    }

    /// How a `bytes` parameter crosses: borrowed by the blocking form, copied by a Promise twin.
    pub fn bytes_note(&self, callable: &Callable) -> String {
        if callable.is_twin() {
            "Each buffer is copied once, since JavaScript may change it while the work runs off the event loop; \
             the blocking form reads them in place."
                .into()
        } else {
            "Each `Uint8Array` (a `Buffer` is one) is read in place for the call, without a copy.".into()
        }
    }

    /// The spelling of a type. `compiled` spells the native layer's view, where string enums are plain strings.
    pub fn ty(&self, api: &Api, ty: &Type, compiled: bool) -> String {
        match ty {
            Type::U32 | Type::U64 | Type::I32 | Type::F64 => "number".into(),
            Type::Bool => "boolean".into(),
            Type::String | Type::Path | Type::GpuClass => "string".into(),
            Type::Address => "bigint".into(),
            Type::F32Matrix => "F32Matrix".into(),
            // A `Buffer` is a `Uint8Array`.
            Type::Bytes => "Uint8Array".into(),
            Type::List(inner) if **inner == Type::Bytes => "ReadonlyArray<Uint8Array>".into(),
            Type::List(inner) => format!("{}[]", self.ty(api, inner, compiled)),
            Type::Enum(n) if compiled && api.enumeration(n).is_some_and(Enum::is_string) => "string".into(),
            Type::Record(n) if compiled => {
                api.record(n).and_then(|r| r.compiled.as_ref()).map_or_else(|| n.pascal(), Name::pascal)
            }
            Type::Record(n) | Type::Enum(n) => self.type_name(n),
            Type::Class(n) if compiled => api.class(n).map_or_else(|| n.pascal(), |c| c.compiled.pascal()),
            Type::Class(n) => self.type_name(n),
        }
    }

    /// A field's type as declared: output fields that may be absent are `T | null`.
    pub fn field_type(&self, api: &Api, record: &Record, field: &Field, compiled: bool) -> String {
        let ty = self.ty(api, &field.ty, compiled);
        if field.optional && record.direction == Direction::Output {
            format!("{ty} | null")
        } else {
            ty
        }
    }

    /// `?` after an input field's name when it may be absent.
    pub fn field_mark(&self, record: &Record, field: &Field) -> &'static str {
        if field.optional && record.direction == Direction::Input {
            "?"
        } else {
            ""
        }
    }

    /// Fields a record's public shape re-declares over its compiled twin: those of string-enum type.
    pub fn narrowed_fields<'a>(&self, api: &Api, record: &'a Record) -> Vec<&'a Field> {
        record
            .fields
            .iter()
            .filter(|f| matches!(&f.ty, Type::Enum(n) if api.enumeration(n).is_some_and(Enum::is_string)))
            .collect()
    }

    pub fn literal(&self, api: &Api, ty: &Type, literal: &Literal) -> String {
        match (literal, ty) {
            (Literal::Integer(n), Type::Address) => format!("{n}n"),
            (Literal::Integer(n), _) => n.to_string(),
            (Literal::Float(f), _) => f.to_string(),
            (Literal::Bool(b), _) => b.to_string(),
            (Literal::String(s), _) => format!("{s:?}"),
            (Literal::Variant(v), Type::Enum(e)) => {
                format!("{}.{}", self.ty(api, &Type::Enum(e.clone()), false), self.variant(v))
            }
            (Literal::Variant(v), _) => self.variant(v),
            (Literal::EmptyRecord, _) => "{}".into(),
        }
    }

    pub fn variant_value(&self, value: &EnumValue) -> String {
        match value {
            EnumValue::Number(n) => n.to_string(),
            EnumValue::String(s) => format!("{s:?}"),
        }
    }

    /// A result's type, as the plan lowers it; a Promise twin's is a promise of it.
    pub fn returns(&self, api: &Api, plan: &CallPlan, compiled: bool) -> String {
        let value = match plan.outcome.lowering.ty() {
            None => "void".into(),
            Some(ty) if plan.outcome.optional => format!("{} | null", self.ty(api, &ty, compiled)),
            Some(ty) => self.ty(api, &ty, compiled),
        };
        if plan.twin_of.is_some() {
            format!("Promise<{value}>")
        } else {
            value
        }
    }

    /// Parameters for a declaration file: defaults become optional markers.
    pub fn params_decl(&self, api: &Api, callable: &Callable, compiled: bool) -> String {
        callable
            .params
            .iter()
            .map(|p| {
                let mark = if p.default.is_some() { "?" } else { "" };
                format!("{}{mark}: {}", self.member(&p.name), self.ty(api, &p.ty, compiled))
            })
            .collect::<Vec<_>>()
            .join(", ")
    }

    /// Parameters as the reference page shows them, defaults spelled out.
    pub fn params_shown(&self, api: &Api, callable: &Callable) -> Vec<String> {
        callable
            .params
            .iter()
            .map(|p| {
                let default =
                    p.default.as_ref().map(|d| format!(" = {}", self.literal(api, &p.ty, d))).unwrap_or_default();
                format!("{}: {}{default}", self.member(&p.name), self.ty(api, &p.ty, false))
            })
            .collect()
    }

    /// A class's `code` string union for errors.
    pub fn error_code(&self, error: &ErrorKindDef) -> String {
        error.name.snake()
    }

    /// Doc text with references spelled for JSDoc: code spans in JavaScript spelling.
    pub fn jsdoc(&self, api: &Api, doc: &Doc) -> String {
        doc.render(&|r| format!("`{}`", self.reference(api, r)))
    }

    /// How a reference is spelled; a function JavaScript does not offer is named by its C name.
    pub fn reference(&self, api: &Api, r: &Reference) -> String {
        match r {
            Reference::Member(n) => self.member(n),
            Reference::Type(n) => self.type_name(n),
            Reference::Function(n) => match api.functions().find(|f| &f.name == n) {
                Some(f) if !f.offered_in(Language::TypeScript) => f.c_name.clone(),
                _ => self.function(n),
            },
            Reference::Method { method, .. } => self.member(method),
        }
    }
}

/// A JSDoc block at `indent`, wrapped.
pub use crate::lang::star_comment as jsdoc_block;

/// How the wrapper skips calling in when the core's quiet word says the call would change nothing (a `try_first`
/// method, like `drain` on an idle executor): the word is an external `ArrayBuffer` over the core's atomic, read
/// with `Atomics.load`, and compared with what the core says it holds while the call would change nothing, asked
/// once per argument value when the module loads.
pub struct Quiet {
    /// The native function giving a handle's word (`executorQuiet`).
    pub word: String,
    /// The native function giving the expected word for an argument (`executorDrainQuiet`).
    pub expected: String,
    /// The wrapper's table of expected words (`EXECUTOR_DRAIN_QUIET`): absent argument first, then each value.
    pub table: String,
    /// The wrapper's function from an argument to its expected word (`executorDrainQuietWord`).
    pub lookup: String,
    /// The method's one argument, if any.
    pub argument: Option<String>,
    /// The JavaScript literals of the argument's enum values.
    pub values: Vec<String>,
}
