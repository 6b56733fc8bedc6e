//! The call plan: what every glue needs to know about a callable to call the core, decided once from the checked
//! model so the C, napi, pyo3 and UniFFI glues (and a JNI glue) spell it and re-derive nothing. Nothing here is
//! specific to a language: names are [`Name`]s, types IDL [`Type`]s.

use crate::model::*;

/// What the call runs on.
#[derive(Clone, Debug, PartialEq)]
pub enum Receiver {
    /// A free function or a constructor.
    None,
    /// A method or `free`: the handle of this class.
    Handle { class: Name },
}

/// How an argument crosses into the core.
#[derive(Clone, Debug, PartialEq)]
pub enum Passing {
    /// An integer, float, bool, enum, address or GPU class: by value.
    Scalar,
    /// A string, by value (the core takes it owned).
    String,
    /// A file-system path, by value as a string.
    Path,
    /// A list the core borrows (`&[T]`).
    List { element: Type },
    /// A record by value. With `all_optional`, an absent record means "every field absent" (its default); otherwise
    /// it is a missing argument.
    Record { record: Name, all_optional: bool },
    /// The core value of another handle, borrowed (`&X`).
    Handle { class: Name },
}

/// One argument of the core call, in order.
#[derive(Clone, Debug, PartialEq)]
pub struct Argument {
    pub name: Name,
    pub ty: Type,
    pub passing: Passing,
    /// The value an omitted argument takes, in languages with optional arguments.
    pub default: Option<Literal>,
}

/// A value the core hands back as itself: a number, a bool, an address or an enum value.
#[derive(Clone, Debug, PartialEq)]
pub enum Scalar {
    U32,
    U64,
    I32,
    F64,
    Bool,
    /// A native address (`u64` in core), spelled apart where a language has no 64-bit number (a bigint).
    Address,
    Enum(Name),
}

impl Scalar {
    /// The scalar an IDL type is, if it is one.
    pub fn of(ty: &Type) -> Option<Scalar> {
        Some(match ty {
            Type::U32 => Scalar::U32,
            Type::U64 => Scalar::U64,
            Type::I32 => Scalar::I32,
            Type::F64 => Scalar::F64,
            Type::Bool => Scalar::Bool,
            Type::Address => Scalar::Address,
            Type::Enum(n) => Scalar::Enum(n.clone()),
            _ => return None,
        })
    }

    /// The IDL type of the scalar.
    pub fn ty(&self) -> Type {
        match self {
            Scalar::U32 => Type::U32,
            Scalar::U64 => Type::U64,
            Scalar::I32 => Type::I32,
            Scalar::F64 => Type::F64,
            Scalar::Bool => Type::Bool,
            Scalar::Address => Type::Address,
            Scalar::Enum(n) => Type::Enum(n.clone()),
        }
    }
}

/// How the core's success value is lowered, decided once from the IDL type: every backend renders its result from
/// this and never reads the callable's `returns` again.
#[derive(Clone, Debug, PartialEq)]
pub enum Lowering {
    /// Nothing comes back (`()`).
    Unit,
    Scalar(Scalar),
    /// UTF-8 text (`String` in core).
    String,
    /// A file-system path, as UTF-8 text (`String` in core).
    Path,
    /// A GPU class, by its spelled name (`String` in core; C hands out its id).
    GpuClass,
    /// A list the core hands over (`Vec<T>`).
    List {
        element: Type,
    },
    /// A record by value.
    Record {
        record: Name,
    },
    /// A new handle of this class (constructors).
    Handle {
        class: Name,
    },
    /// A row-major `f32` matrix, moved to the caller.
    Matrix,
}

impl Lowering {
    fn of(ty: &Type) -> Lowering {
        if let Some(scalar) = Scalar::of(ty) {
            return Lowering::Scalar(scalar);
        }
        match ty {
            Type::String => Lowering::String,
            Type::Path => Lowering::Path,
            Type::GpuClass => Lowering::GpuClass,
            Type::List(e) => Lowering::List { element: (**e).clone() },
            Type::Record(r) => Lowering::Record { record: r.clone() },
            Type::Class(k) => Lowering::Handle { class: k.clone() },
            // The scalars are taken above.
            _ => Lowering::Matrix,
        }
    }

    /// The IDL type of the value, for the spellings a backend shares with record fields; `None` for [`Lowering::Unit`].
    pub fn ty(&self) -> Option<Type> {
        Some(match self {
            Lowering::Unit => return None,
            Lowering::Scalar(s) => s.ty(),
            Lowering::String => Type::String,
            Lowering::Path => Type::Path,
            Lowering::GpuClass => Type::GpuClass,
            Lowering::List { element } => Type::List(Box::new(element.clone())),
            Lowering::Record { record } => Type::Record(record.clone()),
            Lowering::Handle { class } => Type::Class(class.clone()),
            Lowering::Matrix => Type::F32Matrix,
        })
    }
}

/// What the call returns.
#[derive(Clone, Debug, PartialEq)]
pub struct Outcome {
    pub lowering: Lowering,
    /// `None` is a possible value (`returns_optional`).
    pub optional: bool,
}

/// Which core function the glue calls.
#[derive(Clone, Debug, PartialEq)]
pub enum Callee {
    /// `uform_core::<name>(…)`.
    Function { name: Name },
    /// `uform_core::<Class>::<name>(…)`.
    Constructor { class: Name, name: Name },
    /// `<receiver>.<name>(…)`.
    Method { name: Name },
}

/// A handle a constructed value keeps alive, so the binding's object must outlive it too.
#[derive(Clone, Debug, PartialEq)]
pub enum Kept {
    /// A handle argument.
    Argument { name: Name },
    /// A handle held in a field of a record argument; an optional one is kept when present.
    Field { argument: Name, field: Name, optional: bool },
}

/// The plan of one callable.
#[derive(Clone, Debug, PartialEq)]
pub struct CallPlan {
    pub kind: CallableKind,
    pub receiver: Receiver,
    pub callee: Callee,
    pub arguments: Vec<Argument>,
    pub outcome: Outcome,
    /// The core returns `Result`; otherwise the plain value.
    pub throws: bool,
    /// Waits on other threads or processes: release any interpreter lock around it.
    pub blocking: bool,
    /// The result never changes while the process runs: compute it once per process and hand out the same value.
    pub constant: bool,
    /// Call the core's non-blocking `try_<name>` first (`None` when it would wait), release the lock only to wait.
    pub try_first: bool,
    /// For an async twin, the blocking call it runs off the caller's thread.
    pub twin_of: Option<Name>,
    /// The handles a constructed value keeps alive (constructors only), in argument order.
    pub keeps_alive: Vec<Kept>,
}

impl CallPlan {
    /// The plan of `callable`, a member of `class` or a free function.
    pub fn of(api: &Api, class: Option<&Class>, callable: &Callable) -> CallPlan {
        let receiver = match (class, callable.kind) {
            (Some(k), CallableKind::Method | CallableKind::Free) => Receiver::Handle { class: k.name.clone() },
            _ => Receiver::None,
        };
        // An async twin runs the blocking call.
        let name = callable.twin_of.clone().unwrap_or_else(|| callable.name.clone());
        let callee = match (class, callable.kind) {
            (Some(k), CallableKind::Constructor) => Callee::Constructor { class: k.name.clone(), name },
            (Some(_), _) => Callee::Method { name },
            (None, _) => Callee::Function { name },
        };
        let arguments: Vec<Argument> = callable.params.iter().map(|p| argument(api, p)).collect();
        let keeps_alive = if callable.kind == CallableKind::Constructor { kept(api, &arguments) } else { Vec::new() };
        let lowering = match (&callable.returns, callable.kind) {
            (_, CallableKind::Constructor) => {
                Lowering::Handle { class: class.map_or_else(|| callable.name.clone(), |k| k.name.clone()) }
            }
            (None, _) => Lowering::Unit,
            (Some(ty), _) => Lowering::of(ty),
        };
        CallPlan {
            kind: callable.kind,
            receiver,
            callee,
            arguments,
            outcome: Outcome { lowering, optional: callable.returns_optional },
            throws: callable.throws,
            blocking: callable.blocking,
            constant: callable.constant,
            try_first: callable.try_first,
            twin_of: callable.twin_of.clone(),
            keeps_alive,
        }
    }

    /// The core function's name (the blocking call's, for an async twin).
    pub fn core_name(&self) -> &Name {
        match &self.callee {
            Callee::Function { name } | Callee::Constructor { name, .. } | Callee::Method { name } => name,
        }
    }

    /// Whether a binding may skip the call by reading its class's quiet word (core's `quiet()` and
    /// `<name>_quiet_when`, see `idl/README.md`): a `try_first` method with no result and no argument or one enum.
    pub fn reads_quiet_word(&self) -> bool {
        let arguments = match self.arguments.as_slice() {
            [] => true,
            [a] => matches!(a.ty, Type::Enum(_)),
            _ => false,
        };
        self.try_first
            && self.outcome.lowering == Lowering::Unit
            && matches!(self.receiver, Receiver::Handle { .. })
            && arguments
    }

    /// Whether the call hands back a value (a constructor's handle included).
    pub fn returns_value(&self) -> bool {
        self.outcome.lowering != Lowering::Unit
    }
}

fn argument(api: &Api, p: &Param) -> Argument {
    let passing = match &p.ty {
        Type::String => Passing::String,
        Type::Path => Passing::Path,
        Type::List(e) => Passing::List { element: (**e).clone() },
        Type::Record(r) => Passing::Record {
            record: r.clone(),
            all_optional: api.record(r).is_none_or(|r| r.fields.iter().all(|f| f.optional)),
        },
        Type::Class(k) => Passing::Handle { class: k.clone() },
        _ => Passing::Scalar,
    };
    Argument { name: p.name.clone(), ty: p.ty.clone(), passing, default: p.default.clone() }
}

fn kept(api: &Api, arguments: &[Argument]) -> Vec<Kept> {
    let mut out = Vec::new();
    for a in arguments {
        match &a.passing {
            Passing::Handle { .. } => out.push(Kept::Argument { name: a.name.clone() }),
            Passing::Record { record, .. } => {
                for f in api.record(record).map(|r| r.fields.as_slice()).unwrap_or_default() {
                    if matches!(f.ty, Type::Class(_)) {
                        out.push(Kept::Field { argument: a.name.clone(), field: f.name.clone(), optional: f.optional });
                    }
                }
            }
            _ => {}
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A record, a class borrowing another class's handle, and a function.
    const ITEMS: &str = r#"
  - record: Options
    c: uform_options_t
    direction: input
    doc: Options.
    fields:
      - name: size
        type: u32
        optional: true
        doc: A size.
  - class: Pool
    c: uform_pool_t
    doc: A pool.
    thread_safety: Any thread.
    compiled: CompiledPool
    compiled_doc: The native pool.
    members:
      - constructor: open
        c: uform_pool_open
        doc: Opens one.
      - free: free
        c: uform_pool_free
        doc: Frees it.
  - class: Model
    c: uform_model_t
    doc: A model.
    thread_safety: Any thread.
    compiled: CompiledModel
    compiled_doc: The native model.
    members:
      - constructor: load
        c: uform_model_load
        doc: Loads one.
        params:
          - name: pool
            type: Pool
            doc: Where it runs.
          - name: options
            type: Options
            default: {}
            doc: How.
      - method: encode
        c: uform_model_encode
        blocking: true
        try_first: true
        returns: list<u32>
        params:
          - name: texts
            type: list<string>
            doc: What.
        doc: Encodes.
      - free: free
        c: uform_model_free
        doc: Frees it.
"#;

    fn api() -> Api {
        crate::test_idl::api(&[ITEMS, crate::test_idl::NAME_OF], "plan.yaml")
    }

    #[test]
    fn a_constructor_borrows_its_handles_and_keeps_them_alive() {
        let api = api();
        let model = api.class(&Name::parse("Model")).unwrap();
        let load = model.constructors().next().unwrap();
        let plan = CallPlan::of(&api, Some(model), load);
        assert_eq!(plan.receiver, Receiver::None);
        assert_eq!(plan.callee, Callee::Constructor { class: Name::parse("Model"), name: Name::parse("load") });
        assert_eq!(plan.arguments[0].passing, Passing::Handle { class: Name::parse("Pool") });
        assert_eq!(plan.arguments[1].passing, Passing::Record { record: Name::parse("Options"), all_optional: true });
        assert_eq!(plan.arguments[1].default, Some(Literal::EmptyRecord));
        assert_eq!(plan.outcome.lowering, Lowering::Handle { class: Name::parse("Model") });
        assert_eq!(plan.keeps_alive, vec![Kept::Argument { name: Name::parse("pool") }]);
        assert!(plan.throws);
    }

    #[test]
    fn a_method_runs_on_its_handle() {
        let api = api();
        let model = api.class(&Name::parse("Model")).unwrap();
        let encode = model.methods().find(|m| m.name == Name::parse("encode")).unwrap();
        let plan = CallPlan::of(&api, Some(model), encode);
        assert_eq!(plan.receiver, Receiver::Handle { class: Name::parse("Model") });
        assert_eq!(plan.callee, Callee::Method { name: Name::parse("encode") });
        assert_eq!(plan.arguments[0].passing, Passing::List { element: Type::String });
        assert_eq!(plan.outcome, Outcome { lowering: Lowering::List { element: Type::U32 }, optional: false });
        assert!(plan.blocking && plan.try_first && !plan.constant);
        assert!(!plan.reads_quiet_word(), "a method with a result always calls in");
        assert!(plan.keeps_alive.is_empty());
        let twin = CallPlan::of(&api, Some(model), &encode.async_twin());
        assert_eq!(twin.core_name(), &Name::parse("encode"));
        assert_eq!(twin.twin_of, Some(Name::parse("encode")));
    }

    #[test]
    fn a_function_passes_its_arguments_and_is_not_constant_unless_declared() {
        let api = api();
        let f = api.functions().next().unwrap();
        let plan = CallPlan::of(&api, None, f);
        assert_eq!(plan.callee, Callee::Function { name: Name::parse("name_of") });
        assert_eq!(plan.arguments.len(), 1);
        assert_eq!(plan.arguments[0].passing, Passing::Scalar);
        assert_eq!(plan.outcome.lowering, Lowering::String);
        assert!(!plan.throws && !plan.constant);
    }
}
