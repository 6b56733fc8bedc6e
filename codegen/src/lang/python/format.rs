//! The Python formatter: every decision about how the IDL is spelled in Python — in the pure-Python package, in
//! its stubs, in the pyo3 glue that implements it, and on the reference page — in one place.
//!
//! Decisions:
//! - Functions, methods, fields and keyword arguments are snake_case; classes, records and enums PascalCase; enum
//!   members SCREAMING_CASE. Numbered enums are `IntEnum`s, string-valued enums `(str, Enum)`.
//! - A record parameter with the default `{}` is spread into keyword-only arguments, one per field (`for_ram(*,
//!   threads=None, ...)`); other parameters stay positional-or-keyword. `None` means absent everywhere.
//! - Input records are `TypedDict(total=False)`s, so `Mesh.bootstrap(ex, **options)` takes what
//!   `mesh_options_from_environment()` returns; output records are frozen dataclasses (immutable, `repr`, `==`),
//!   whose list fields are tuples.
//! - Integers are `int`, addresses too; a path is `str | os.PathLike[str]`; lists taken are `Sequence[T]`, lists
//!   returned `list[T]`.
//! - Errors: `UFormError(Exception)` with `code` (the kind's code string), and one `<Kind>Error` subclass per kind
//!   that also derives from the builtin a Python user would catch: invalid argument → `ValueError`, unsupported →
//!   `NotImplementedError`, timeout → `TimeoutError`, I/O → `OSError`, out of memory → `MemoryError`; a freed
//!   handle is a `RuntimeError` (a use of an object in the wrong state, not a bad value), as are the others.
//!   `uform.TimeoutError` shadows the builtin inside the package only, as `asyncio.TimeoutError` does.

use crate::model::*;
use crate::plan::{Lowering, Outcome};

pub struct Py;

/// Python keywords and builtins a generated name must not take (none does today; a clash gets a trailing `_`).
const RESERVED: &[&str] = &[
    "False", "None", "True", "and", "as", "assert", "async", "await", "break", "class", "continue", "def", "del",
    "elif", "else", "except", "finally", "for", "from", "global", "if", "import", "in", "is", "lambda", "nonlocal",
    "not", "or", "pass", "raise", "return", "try", "while", "with", "yield", "type", "list", "str", "int",
];

impl Py {
    fn safe(&self, name: String) -> String {
        if RESERVED.contains(&name.as_str()) {
            name + "_"
        } else {
            name
        }
    }
    pub fn type_name(&self, name: &Name) -> String {
        self.safe(name.pascal())
    }
    pub fn member(&self, name: &Name) -> String {
        self.safe(name.snake())
    }
    pub fn function(&self, name: &Name) -> String {
        self.safe(name.snake())
    }
    pub fn variant(&self, name: &Name) -> String {
        name.screaming()
    }
    /// The Rust identifier of a glue function: `gpu_devices`, `executor_for_ram`.
    pub fn rust_fn(&self, class: Option<&Class>, name: &Name) -> String {
        match class {
            Some(k) => format!("{}_{}", k.name.snake(), name.snake()),
            None => name.snake(),
        }
    }

    // ---- errors ----

    pub fn error_class(&self, error: &ErrorKindDef) -> String {
        format!("{}Error", error.name.pascal())
    }
    /// The code string, as `uform_core::ErrorKind::code` spells it.
    pub fn error_code(&self, error: &ErrorKindDef) -> String {
        error.name.snake()
    }
    /// The builtin exception a kind's class also derives from.
    pub fn error_builtin(&self, error: &ErrorKindDef) -> &'static str {
        match error.name.snake().as_str() {
            "invalid_argument" => "ValueError",
            "unsupported" => "NotImplementedError",
            "timeout" => "TimeoutError",
            "io" => "OSError",
            "out_of_memory" => "MemoryError",
            _ => "RuntimeError",
        }
    }

    /// How a `bytes` parameter crosses: a `bytes` in place, anything mutable copied.
    pub fn bytes_note(&self) -> String {
        "A `bytes` is read in place, without a copy; a `bytearray` or a `memoryview` is copied once, since another \
         thread could change it while the call runs."
            .into()
    }

    // ---- types ----

    /// A type as a value taken from Python (a parameter or an input field).
    pub fn ty_in(&self, ty: &Type) -> String {
        match ty {
            Type::List(inner) => format!("Sequence[{}]", self.ty_in(inner)),
            Type::Path => "Union[str, os.PathLike[str]]".into(),
            Type::Bytes => "Union[bytes, bytearray, memoryview]".into(),
            other => self.ty_out(other, false),
        }
    }
    /// A type as a value handed to Python; `in_record` spells lists as tuples (records are immutable).
    pub fn ty_out(&self, ty: &Type, in_record: bool) -> String {
        match ty {
            Type::U32 | Type::U64 | Type::I32 | Type::Address => "int".into(),
            Type::F64 => "float".into(),
            Type::Bool => "bool".into(),
            Type::String | Type::Path | Type::GpuClass => "str".into(),
            Type::F32Matrix => "npt.NDArray[np.float32]".into(),
            Type::Bytes => "bytes".into(),
            Type::List(inner) if in_record => format!("Tuple[{}, ...]", self.ty_out(inner, true)),
            Type::List(inner) => format!("List[{}]", self.ty_out(inner, false)),
            Type::Record(n) | Type::Enum(n) | Type::Class(n) => self.type_name(n),
        }
    }
    pub fn optional(&self, ty: String, optional: bool) -> String {
        if optional {
            format!("Optional[{ty}]")
        } else {
            ty
        }
    }
    /// A field's type in its record's class body.
    pub fn field_type(&self, record: &Record, field: &Field) -> String {
        match record.direction {
            // A TypedDict(total=False) key may be missing; present, it may still be None (absent). A required
            // field is `Required[...]`.
            Direction::Input if !field.optional => format!("Required[{}]", self.ty_in(&field.ty)),
            Direction::Input => self.optional(self.ty_in(&field.ty), true),
            Direction::Output => self.optional(self.ty_out(&field.ty, true), field.optional),
        }
    }
    /// A result's annotation, as the plan lowers it.
    pub fn returns(&self, outcome: &Outcome) -> String {
        match (&outcome.lowering, outcome.lowering.ty()) {
            (Lowering::Handle { class }, _) => self.type_name(class),
            (Lowering::Record { record }, _) if outcome.optional => format!("Optional[{}]", self.type_name(record)),
            (_, Some(t)) => self.optional(self.ty_out(&t, false), outcome.optional),
            (_, None) => "None".into(),
        }
    }

    /// A literal as a Python default.
    pub fn literal(&self, api: &Api, ty: &Type, literal: &Literal) -> String {
        match literal {
            Literal::Integer(i) => i.to_string(),
            Literal::Float(f) => format!("{f:?}"),
            Literal::Bool(true) => "True".into(),
            Literal::Bool(false) => "False".into(),
            Literal::String(s) => format!("{s:?}"),
            Literal::Variant(v) => match ty {
                Type::Enum(e) => format!("{}.{}", self.type_name(e), self.variant(v)),
                _ => self.variant(v),
            },
            Literal::EmptyRecord => {
                let _ = api;
                "None".into()
            }
        }
    }

    /// The parameters a callable takes in Python, each as `(name, type, default)`; a record with default `{}`
    /// spreads into keyword-only fields after a `*` marker (name `*`, empty type).
    pub fn params(&self, api: &Api, callable: &Callable) -> Vec<(String, String, Option<String>)> {
        let mut out = Vec::new();
        let mut keyword_only = false;
        for p in &callable.params {
            match (&p.ty, &p.default) {
                // An input record spreads into keyword-only arguments; a required field is a required keyword.
                (Type::Record(n), _) => {
                    if !keyword_only {
                        out.push(("*".into(), String::new(), None));
                        keyword_only = true;
                    }
                    for f in api.record(n).map(|r| r.fields.as_slice()).unwrap_or_default() {
                        out.push(if f.optional {
                            (self.member(&f.name), self.optional(self.ty_in(&f.ty), true), Some("None".into()))
                        } else {
                            (self.member(&f.name), self.ty_in(&f.ty), None)
                        });
                    }
                }
                (ty, default) => {
                    out.push((self.member(&p.name), self.ty_in(ty), default.as_ref().map(|d| self.literal(api, ty, d))))
                }
            }
        }
        out
    }

    /// Doc text with references in Python spelling, as inline code.
    pub fn reference(&self, api: &Api, r: &Reference) -> String {
        match r {
            Reference::Member(n) => self.member(n),
            // A function Python does not offer (like `gpu_class_name`) is named by its C name.
            Reference::Function(n) if !api.functions().any(|f| &f.name == n && f.offered_in(Language::Python)) => {
                api.functions().find(|f| &f.name == n).map_or_else(|| self.function(n), |f| f.c_name.clone())
            }
            Reference::Type(n) => self.type_name(n),
            Reference::Function(n) => format!("{}()", self.function(n)),
            Reference::Method { class, method } => format!("{}.{}()", self.type_name(class), self.member(method)),
        }
    }
    pub fn doc_text(&self, api: &Api, doc: &Doc) -> String {
        doc.render(&|r| format!("`{}`", self.reference(api, r)))
    }
    /// A docstring body at `indent`, wrapped; quotes and backslashes kept safe inside `"""`.
    pub fn docstring(&self, text: &str, indent: &str) -> String {
        let text = text.replace('\\', "\\\\").replace("\"\"\"", "\\\"\\\"\\\"");
        let lines = crate::lang::wrap(&text, 110usize.saturating_sub(indent.len()));
        let mut out = String::new();
        for (i, line) in lines.iter().enumerate() {
            if i > 0 {
                out.push('\n');
                if !line.is_empty() {
                    out.push_str(indent);
                }
            }
            out.push_str(line);
        }
        if lines.len() > 1 {
            out.push('\n');
            out.push_str(indent);
        }
        out
    }

    // ---- the pyo3 glue ----

    /// The core path of a record, enum or class.
    pub fn core_type(&self, name: &Name) -> String {
        format!("uform_core::{}", name.pascal())
    }

    /// An expression reading the Python object `value` (a `&Bound<PyAny>`) into the core's type, named `argument`
    /// in errors: a function path taking `(value, argument)`.
    pub fn reader(&self, ty: &Type) -> String {
        match ty {
            Type::U32 => "arg_u32".into(),
            Type::U64 | Type::Address => "arg_u64".into(),
            Type::I32 => "arg_i32".into(),
            Type::F64 => "arg_f64".into(),
            Type::Bool => "arg_bool".into(),
            Type::String | Type::GpuClass => "arg_string".into(),
            Type::Path => "arg_path".into(),
            Type::Bytes => "arg_bytes".into(),
            Type::List(inner) => format!("|v: &Bound<'_, PyAny>, a: &str| arg_list(v, a, {})", self.reader(inner)),
            Type::Enum(n) => format!("{}_from_py", n.snake()),
            Type::Record(n) | Type::Class(n) => format!("{}_from_py", n.snake()),
            Type::F32Matrix => "compile_error!(\"f32_matrix is only a result\")".into(),
        }
    }

    /// A call reading the Python object `value` (an expression of type `&Bound<PyAny>`) as `ty`, naming `argument`.
    pub fn read(&self, ty: &Type, value: &str, argument: &str) -> String {
        match ty {
            Type::List(inner) => format!("arg_list({value}, {argument}, {})", self.reader(inner)),
            _ => format!("{}({value}, {argument})", self.reader(ty)),
        }
    }

    /// An expression writing the core value at the place `expr` (not a reference) as a Python object, giving a
    /// `PyResult<Bound<PyAny>>`; `in_record` makes lists tuples.
    pub fn writer(&self, expr: &str, ty: &Type, optional: bool, in_record: bool) -> String {
        if optional {
            let inner = self.writer_ref("v", ty, in_record);
            return format!("match &{expr} {{ Some(v) => {inner}, None => Ok(py.None().into_bound(py)) }}");
        }
        match ty {
            Type::Record(n) => format!("{}_to_py(py, &{expr})", n.snake()),
            // Moved, not borrowed: the matrix's buffer becomes the array's.
            Type::F32Matrix => format!("f32_matrix_to_py(py, {expr})"),
            Type::String | Type::Path | Type::GpuClass | Type::List(_) => self.writer_ref(expr, ty, in_record),
            Type::Enum(n) => format!("{}_to_py(py, {expr})", n.snake()),
            _ => format!("py_value(py, {expr})"),
        }
    }

    /// As [`Py::writer`], for `expr` a reference.
    fn writer_ref(&self, expr: &str, ty: &Type, in_record: bool) -> String {
        match ty {
            Type::List(inner) => {
                let each = self.writer_ref("v", inner, in_record);
                let items = format!("{expr}.iter().map(|v| {each}).collect::<PyResult<Vec<_>>>()?");
                let kind = if in_record { "PyTuple" } else { "PyList" };
                format!("py_value(py, pyo3::types::{kind}::new(py, {items})?)")
            }
            Type::Enum(n) => format!("{}_to_py(py, *{expr})", n.snake()),
            Type::Record(n) => format!("{}_to_py(py, {expr})", n.snake()),
            // `AsRef` rather than `as_str`: the value may be a `String`, a reference to one, or a reference to a
            // core's `&'static str`.
            Type::String | Type::Path | Type::GpuClass => format!("py_value(py, AsRef::<str>::as_ref(&{expr}))"),
            _ => format!("py_value(py, *{expr})"),
        }
    }
}
