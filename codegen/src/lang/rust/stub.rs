//! A stub core for a fixture IDL: the fixture's types and error kinds (as [`super::types`] and
//! [`super::error_kind`] render them for the real core), the error type, and every function, class and member with
//! the signature the generated glue calls, each body `unimplemented!()`. Compiling a fixture's glue against it
//! checks the glue and the signature rules of `idl/README.md` without the real runtime.
//!
//! The rules, as the glue assumes them: a callable returns `Result<T>` exactly when it `throws`; parameters are
//! scalars, enums and records by value, strings and paths as `impl AsRef<str>`, lists as slices, handles as `&Class`;
//! a non-throwing optional string is `Option<&'static str>`; constructors return `Self`, methods take `&self`,
//! `free` is `fn free(&self) -> Result<()>`; a `try_first` method has a twin `try_<name>` returning `None` when it
//! would block, and when it has no result and no parameter or one enum parameter (Node's fast path), the associated
//! `<name>_quiet_when(params) -> u32` and `quiet(&self) -> executor::Quiet`; a class with an async method has
//! `begin_call(&self, method: &str) -> Result<CallGuard>`; every class has `is_freed(&self) -> bool`; every class is `Clone + Debug + Send + Sync`.

use super::format;
use crate::model::*;
use crate::plan::{CallPlan, Lowering};

/// A parameter's type in a core signature.
fn param_ty(t: &Type) -> String {
    match t {
        Type::String | Type::Path | Type::GpuClass => "impl AsRef<str>".into(),
        // Byte buffers are borrowed in place, each a slice of the caller's memory.
        Type::List(e) if **e == Type::Bytes => "&[&[u8]]".into(),
        Type::List(e) => format!("&[{}]", format::ty(e)),
        Type::Class(n) => format!("&{}", n.pascal()),
        other => format::ty(other),
    }
}

/// A callable's result type in a core signature, from its plan.
fn result_ty(plan: &CallPlan) -> String {
    let optional = plan.outcome.optional;
    let plain = match (&plan.outcome.lowering, plan.outcome.lowering.ty()) {
        (Lowering::String, _) if optional && !plan.throws => return "Option<&'static str>".into(),
        (_, None) => "()".to_string(),
        (_, Some(t)) if optional => format!("Option<{}>", format::ty(&t)),
        (_, Some(t)) => format::ty(&t),
    };
    if plan.throws {
        format!("Result<{plain}>")
    } else {
        plain
    }
}

fn signature(c: &Callable, receiver: bool, name: &str, result: &str) -> String {
    let mut params: Vec<String> = Vec::new();
    if receiver {
        params.push("&self".into());
    }
    params.extend(c.params.iter().map(|p| format!("_{}: {}", p.name.snake(), param_ty(&p.ty))));
    format!("pub fn {name}({}) -> {result} {{\n        unimplemented!()\n    }}", params.join(", "))
}

/// Whether a method has the quiet word the Node and Kotlin fast paths read ([`crate::plan::CallPlan::reads_quiet_word`]).
fn quiet(api: &Api, k: &Class, m: &Callable) -> bool {
    CallPlan::of(api, Some(k), m).reads_quiet_word()
}

fn class(api: &Api, k: &Class) -> String {
    // Python's glue asks before each call whether the handle was freed (not in idl/README.md's table; core has it).
    let mut members = vec!["pub fn is_freed(&self) -> bool {\n        unimplemented!()\n    }".to_string()];
    if k.members.iter().any(|m| quiet(api, k, m)) {
        members.push("pub fn quiet(&self) -> executor::Quiet {\n        unimplemented!()\n    }".to_string());
    }
    if k.members.iter().any(|m| m.is_async) {
        members.push(
            "pub fn begin_call(&self, _method: &str) -> Result<CallGuard> {\n        unimplemented!()\n    }"
                .to_string(),
        );
    }
    for m in &k.members {
        let name = m.name.snake();
        let result = result_ty(&CallPlan::of(api, Some(k), m));
        match m.kind {
            CallableKind::Constructor => {
                let result = if m.throws { "Result<Self>".to_string() } else { "Self".to_string() };
                members.push(signature(m, false, &name, &result));
            }
            CallableKind::Free => members.push(signature(m, true, &name, "Result<()>")),
            CallableKind::Method | CallableKind::Function => {
                members.push(signature(m, true, &name, &result));
                if m.try_first {
                    members.push(signature(m, true, &format!("try_{name}"), &format!("Option<{result}>")));
                }
                if quiet(api, k, m) {
                    members.push(signature(m, false, &format!("{name}_quiet_when"), "u32"));
                }
            }
        }
    }
    let body: Vec<String> = members.iter().map(|m| format!("    {m}")).collect();
    format!(
        "#[derive(Clone, Debug)]\npub struct {name};\n\nimpl {name} {{\n{}\n}}\n",
        body.join("\n\n"),
        name = k.name.pascal()
    )
}

/// The stub core's error type: core's shape (a kind and a message) with the helpers the glue's runtimes call.
fn error(api: &Api) -> String {
    let mut out = String::from(
        "#[derive(Clone, Debug, PartialEq, Eq)]\npub struct Error(ErrorKind, String);\n\n\
         pub type Result<T, E = Error> = std::result::Result<T, E>;\n\n\
         impl Error {\n    pub fn new(kind: ErrorKind, message: impl Into<String>) -> Self {\n        \
         Error(kind, message.into())\n    }\n    pub fn kind(&self) -> ErrorKind {\n        self.0\n    }\n    \
         pub fn message(&self) -> &str {\n        &self.1\n    }\n    \
         pub fn message_in(&self, _spelling: &path::Spelling) -> String {\n        self.1.clone()\n    }\n",
    );
    let has = |name: &str| api.errors.iter().any(|k| k.name.snake() == name);
    if has("invalid_argument") {
        out.push_str(
            "    pub fn invalid_argument(argument: &str, what: impl std::fmt::Display) -> Self {\n        \
             Error::new(ErrorKind::InvalidArgument, format!(\"`{argument}` {what}\"))\n    }\n    \
             pub fn invalid_as_spelled(argument: &str, what: impl std::fmt::Display) -> Self {\n        \
             Error::new(ErrorKind::InvalidArgument, format!(\"`{argument}` {what}\"))\n    }\n",
        );
    }
    if has("freed_handle") {
        out.push_str(
            "    pub fn freed(class: &str, method: &str) -> Self {\n        \
             Error::new(ErrorKind::FreedHandle, format!(\"`{method}` was called on a freed {class}\"))\n    }\n",
        );
    }
    if has("internal") {
        out.push_str(
            "    pub fn internal(message: impl Into<String>) -> Self {\n        \
             Error::new(ErrorKind::Internal, message)\n    }\n    \
             pub fn from_panic(_payload: Box<dyn std::any::Any + Send>) -> Self {\n        \
             Error::internal(\"a panic was caught\")\n    }\n",
        );
    }
    out.push_str(
        "}\n\nimpl std::fmt::Display for Error {\n    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result \
         {\n        f.write_str(&self.1)\n    }\n}\n\nimpl std::error::Error for Error {}\n",
    );
    out
}

/// The `src/lib.rs` of a crate named `uform-core` that the fixture's glue compiles against.
pub fn core(api: &Api) -> crate::render::Rendered {
    let mut out = String::from(
        "//! A stub core rendered from a fixture IDL by uform-codegen's stub_core test.\n\
         #![allow(dead_code, unused_variables, clippy::all)]\n\n",
    );
    out.push_str(&super::types(api)?);
    out.push('\n');
    if !api.returns_matrix() {
        // The C runtime converts matrices whether or not a fixture returns one.
        out.push_str(
            "#[derive(Clone, Debug, PartialEq, Default)]\npub struct F32Matrix {\n    pub data: Vec<f32>,\n    \
             pub rows: u32,\n    pub columns: u32,\n}\n\n",
        );
    }
    out.push_str(&super::error_kind(api)?);
    out.push('\n');
    out.push_str(&error(api));
    out.push_str(
        "\npub mod devices {\n    pub fn gpu_class_id(_name: &str) -> Option<i32> {\n        unimplemented!()\n    }\n    \
         pub fn gpu_class_name(_id: i32) -> Option<&'static str> {\n        unimplemented!()\n    }\n}\n",
    );
    // What the Node and Python runtimes name in core whatever the IDL: message spelling, the quiet word, the guard
    // of an async method's call.
    out.push_str(
        "\npub mod path {\n    #[derive(Clone, Copy, Debug, PartialEq, Eq)]\n    pub struct Spelling {\n        \
         pub camel_case: bool,\n        pub flatten_record_parameters: bool,\n    }\n}\n\n\
         pub mod executor {\n    pub struct Quiet;\n\n    impl Quiet {\n        \
         pub fn word(&self) -> &std::sync::atomic::AtomicU32 {\n            unimplemented!()\n        }\n    }\n}\n\n\
         #[must_use]\npub struct CallGuard;\n",
    );
    for f in api.functions() {
        out.push('\n');
        out.push_str(
            &signature(f, false, &f.name.snake(), &result_ty(&CallPlan::of(api, None, f))).replace("\n    ", "\n"),
        );
        out.push('\n');
    }
    for k in api.classes() {
        out.push('\n');
        out.push_str(&class(api, k));
    }
    Ok(out)
}
