//! Rendering that fails loudly: every template is declared with [`template!`], which names its file, and renders
//! through [`Named::rendered`], which turns an askama or formatter error into a [`RenderError`] naming the template
//! and the item. `cargo xtask codegen` stops on the first one instead of writing an empty file.

use std::fmt;

/// A template or formatter that failed: which template, for which item, and askama's message.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RenderError {
    /// The template's path under `codegen/templates/`, e.g. `python/function.rs`.
    pub template: &'static str,
    /// What was being rendered, e.g. `class Model, method encode_text`.
    pub item: String,
    pub message: String,
}

impl fmt::Display for RenderError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "template {} ({}): {}", self.template, self.item, self.message)
    }
}

impl std::error::Error for RenderError {}

/// What rendering returns.
pub type Rendered<T = String> = Result<T, RenderError>;

/// A template that knows its file; implemented by [`template!`].
pub trait Named: askama::Template {
    const PATH: &'static str;

    /// Renders the template; a failure names the template and `item`.
    fn rendered(&self, item: impl fmt::Display) -> Rendered {
        self.render().map_err(|e| RenderError { template: Self::PATH, item: item.to_string(), message: e.to_string() })
    }
}

/// Declares an askama template struct (no escaping) whose [`Named::PATH`] is the file it is derived from:
/// `template! { "python/glue.rs" struct GlueFile { … } }`.
macro_rules! template {
    ($path:tt $(#[$meta:meta])* $vis:vis struct $name:ident { $($body:tt)* }) => {
        $(#[$meta])*
        #[derive(askama::Template)]
        #[template(path = $path, escape = "none")]
        $vis struct $name { $($body)* }

        impl $crate::render::Named for $name {
            const PATH: &'static str = $path;
        }
    };
    ($path:tt $(#[$meta:meta])* $vis:vis struct $name:ident;) => {
        $(#[$meta])*
        #[derive(askama::Template)]
        #[template(path = $path, escape = "none")]
        $vis struct $name;

        impl $crate::render::Named for $name {
            const PATH: &'static str = $path;
        }
    };
}
pub(crate) use template;

/// How an error names a callable: `function version`, `class Model, method encode_text`.
pub fn callable_item(class: Option<&crate::model::Class>, c: &crate::model::Callable) -> String {
    use crate::model::CallableKind;
    let kind = match c.kind {
        CallableKind::Function => "function",
        CallableKind::Constructor => "constructor",
        CallableKind::Method | CallableKind::Free => "method",
    };
    match class {
        Some(k) => format!("class {}, {kind} {}", k.name.pascal(), c.name.snake()),
        None => format!("{kind} {}", c.name.snake()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A field whose formatting fails, as a formatter helper or a filter would.
    struct Formatted(bool);

    impl fmt::Display for Formatted {
        fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            if self.0 {
                f.write_str("fine")
            } else {
                Err(fmt::Error)
            }
        }
    }

    template! {
        "tests/one_field.txt"
        struct OneField {
            value: Formatted,
        }
    }

    /// A renderer built like the backends': parts rendered one by one, the first failure stopping the file.
    fn file(parts: &[bool]) -> Rendered {
        let mut out = Vec::new();
        for (i, &ok) in parts.iter().enumerate() {
            out.push(OneField { value: Formatted(ok) }.rendered(format!("class Model, method part_{i}"))?);
        }
        Ok(out.join("\n"))
    }

    #[test]
    fn a_template_renders_its_fields() {
        assert_eq!(OneField { value: Formatted(true) }.rendered("anything").unwrap(), "value: fine");
    }

    #[test]
    fn a_failing_field_names_the_template_and_the_item() {
        let error = OneField { value: Formatted(false) }.rendered("class Model, method encode_text").unwrap_err();
        assert_eq!(error.template, "tests/one_field.txt");
        assert_eq!(error.item, "class Model, method encode_text");
        let shown = error.to_string();
        assert!(
            shown.starts_with("template tests/one_field.txt (class Model, method encode_text): "),
            "unexpected message: {shown}"
        );
        assert!(shown.len() > "template tests/one_field.txt (class Model, method encode_text): ".len());
    }

    #[test]
    fn the_first_failure_stops_the_file() {
        assert_eq!(file(&[true, true]).unwrap(), "value: fine\nvalue: fine");
        let error = file(&[true, false, false]).unwrap_err();
        assert_eq!(error.item, "class Model, method part_1");
    }

    #[test]
    fn callables_are_named_with_their_class() {
        let api = crate::load(&std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../idl/uform.yaml")).unwrap();
        let class = api.classes().next().unwrap();
        let method = class.methods().next().unwrap();
        assert_eq!(
            callable_item(Some(class), method),
            format!("class {}, method {}", class.name.pascal(), method.name.snake())
        );
        let function = api.functions().next().unwrap();
        assert_eq!(callable_item(None, function), format!("function {}", function.name.snake()));
    }
}
