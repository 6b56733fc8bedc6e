//! The Markdown reference, one page set per language, from one set of templates (one per concept). Each language
//! supplies a [`DocStyle`]: its names, its declaration blocks and its field lines; the page's shape is shared so
//! every language's reference reads like the seed page.

use crate::model::*;
use crate::plan::CallPlan;
use crate::render::{template, Named, Rendered};
use crate::Output;

/// A field or parameter line: "- `name` `type`: doc".
pub struct Entry {
    pub name: String,
    pub ty: Option<String>,
    pub doc: String,
}

/// What a language decides about its reference page.
pub trait DocStyle {
    /// The folder under `generated/docs/`, like "javascript".
    fn folder(&self) -> &'static str;
    /// The language as a reader names it, like "JavaScript".
    fn language(&self) -> &'static str;
    /// The code fence's info string, like "typescript".
    fn fence(&self) -> &'static str;
    fn offered(&self, callable: &Callable) -> bool;
    /// Lines shown under the title, like import statements.
    fn imports(&self, api: &Api) -> Vec<String>;
    /// A reference inside doc text, as Markdown.
    fn reference(&self, api: &Api, reference: &Reference) -> String;
    /// The heading (and anchor) of an item or member.
    fn heading(&self, item: &Item) -> String;
    fn member_heading(&self, class: &Class, member: &Callable) -> String;
    fn record_declaration(&self, api: &Api, record: &Record) -> String;
    fn record_entries(&self, api: &Api, record: &Record) -> Vec<Entry>;
    /// Records the page shows beside this one (the JavaScript page's `Compiled*` twins), as full sections.
    fn companions(&self, _api: &Api, _record: &Record) -> Rendered<Vec<String>> {
        Ok(Vec::new())
    }
    fn enum_declaration(&self, api: &Api, e: &Enum) -> String;
    fn enum_entries(&self, api: &Api, e: &Enum) -> Vec<Entry>;
    fn class_declaration(&self, api: &Api, class: &Class) -> String;
    /// A callable's declaration; its result as the plan lowers it.
    fn callable_declaration(&self, api: &Api, class: Option<&Class>, callable: &Callable, plan: &CallPlan) -> Rendered;
    fn param_name(&self, param: &Param) -> String;
    /// The `compiled` property's declaration, when the language shows one.
    fn compiled_declaration(&self, api: &Api, class: &Class) -> Option<String>;
    /// The errors section: a declaration and one entry per kind.
    fn errors_heading(&self) -> String;
    fn errors_intro(&self) -> String;
    fn errors_declaration(&self, api: &Api) -> String;
    fn error_entry(&self, api: &Api, error: &ErrorKindDef) -> Entry;
    /// "Mirrors `uform_…`." for records, when the language has a C twin to name.
    /// Sections of the language's own, before the errors (C: how its structs grow).
    fn notes(&self) -> Vec<String> {
        Vec::new()
    }
    fn mirrors(&self, c_name: &str) -> Option<String> {
        Some(format!("Mirrors `{c_name}`."))
    }
    /// "Calls `uform_…`." for callables.
    fn calls(&self, callable: &Callable) -> Option<String> {
        Some(format!("Calls `{}`.", callable.c_name))
    }
}

/// Renders doc text with a style's references.
pub fn text(style: &dyn DocStyle, api: &Api, doc: &Doc) -> String {
    doc.render(&|r| style.reference(api, r))
}

template! {
    "docs/page.md"
    struct Page {
        title: String,
        language: String,
        intro: String,
        imports: Vec<String>,
        sections: Vec<String>,
    }
}

template! {
    "docs/record.md"
    pub struct RecordSection {
        pub heading: String,
        pub doc: String,
        pub fence: String,
        pub declaration: String,
        pub mirrors: Option<String>,
        pub entries: Vec<Entry>,
    }
}

template! {
    "docs/enum.md"
    struct EnumSection {
        heading: String,
        doc: String,
        fence: String,
        declaration: String,
        entries: Vec<Entry>,
    }
}

template! {
    "docs/class.md"
    struct ClassSection {
        heading: String,
        doc: String,
        fence: String,
        declaration: String,
        details: String,
        thread_safety: String,
        members: Vec<String>,
        compiled: Option<(String, String)>,
    }
}

template! {
    "docs/callable.md"
    struct CallableSection {
        heading: String,
        doc: String,
        fence: String,
        declaration: String,
        calls: Option<String>,
        entries: Vec<Entry>,
    }
}

template! {
    "docs/errors.md"
    struct ErrorsSection {
        heading: String,
        intro: String,
        fence: String,
        declaration: String,
        entries: Vec<Entry>,
    }
}

fn callable(style: &dyn DocStyle, api: &Api, class: Option<&Class>, c: &Callable) -> Rendered {
    let heading = match class {
        Some(k) => style.member_heading(k, c),
        None => style.heading(&Item::Function(c.clone())),
    };
    CallableSection {
        heading,
        doc: text(style, api, &c.doc),
        fence: style.fence().into(),
        declaration: style.callable_declaration(api, class, c, &CallPlan::of(api, class, c))?,
        calls: style.calls(c),
        entries: c
            .params
            .iter()
            .filter(|p| !p.doc.is_empty())
            .map(|p| Entry { name: style.param_name(p), ty: None, doc: text(style, api, &p.doc) })
            .collect(),
    }
    .rendered(crate::render::callable_item(class, c))
}

pub fn record_section(style: &dyn DocStyle, api: &Api, r: &Record) -> Rendered {
    RecordSection {
        heading: style.heading(&Item::Record(r.clone())),
        doc: text(style, api, &r.doc),
        fence: style.fence().into(),
        declaration: style.record_declaration(api, r),
        mirrors: style.mirrors(&r.c_name),
        entries: style.record_entries(api, r),
    }
    .rendered(format!("record {}", r.name.pascal()))
}

/// Renders one language's reference pages.
pub fn render(style: &dyn DocStyle, api: &Api) -> Rendered<Vec<Output>> {
    let mut sections = Vec::new();
    for item in &api.items {
        match item {
            Item::Record(r) => {
                sections.push(record_section(style, api, r)?);
                sections.extend(style.companions(api, r)?);
            }
            Item::Enum(e) => sections.push(
                EnumSection {
                    heading: style.heading(item),
                    doc: text(style, api, &e.doc),
                    fence: style.fence().into(),
                    declaration: style.enum_declaration(api, e),
                    entries: style.enum_entries(api, e),
                }
                .rendered(format!("enum {}", e.name.pascal()))?,
            ),
            Item::Class(k) => sections.push(
                ClassSection {
                    heading: style.heading(item),
                    doc: text(style, api, &k.doc),
                    fence: style.fence().into(),
                    declaration: style.class_declaration(api, k),
                    details: text(style, api, &k.details),
                    thread_safety: text(style, api, &k.thread_safety),
                    members: k
                        .members
                        .iter()
                        .filter(|m| style.offered(m))
                        .map(|m| callable(style, api, Some(k), m))
                        .collect::<Rendered<_>>()?,
                    compiled: style.compiled_declaration(api, k).map(|d| (text(style, api, &k.compiled_doc), d)),
                }
                .rendered(format!("class {}", k.name.pascal()))?,
            ),
            Item::Function(f) if style.offered(f) => sections.push(callable(style, api, None, f)?),
            Item::Function(_) => {}
        }
    }
    sections.extend(style.notes());
    sections.push(
        ErrorsSection {
            heading: style.errors_heading(),
            intro: style.errors_intro(),
            fence: style.fence().into(),
            declaration: style.errors_declaration(api),
            entries: api.errors.iter().map(|e| style.error_entry(api, e)).collect(),
        }
        .rendered("errors")?,
    );
    let page = Page {
        title: api.title.clone(),
        language: style.language().into(),
        intro: text(style, api, &api.intro),
        imports: style.imports(api),
        sections,
    };
    Ok(vec![Output {
        path: format!("docs/{}/{}.md", style.folder(), api.title.to_lowercase()).into(),
        contents: page.rendered(format!("{} reference", style.language()))?,
    }])
}
