//! The Markdown reference, one folder per language: an `index.md` and one page per group of the IDL's `pages:`, from
//! one set of templates (one per concept). Each language supplies a [`DocStyle`]: its names, its declaration blocks
//! and its field lines; the pages' shape is shared, so every language's reference reads like the seed page.
//!
//! References in doc text (`[[Model.encode_text]]`) become links wherever their target is documented in that
//! language, on the same page or another: every page renders with a placeholder per reference, then each target's
//! anchor is read off the headings as GitHub spells them (lowercase, punctuation dropped, `-1` after a repeat).

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

/// What a language decides about its reference pages.
pub trait DocStyle {
    /// The folder under `generated/docs/`, like "javascript".
    fn folder(&self) -> &'static str;
    /// The language as a reader names it, like "JavaScript".
    fn language(&self) -> &'static str;
    /// The language whose callables (`only:`) and examples the pages show.
    fn lang(&self) -> Language;
    /// The code fence's info string, like "typescript".
    fn fence(&self) -> &'static str;
    fn offered(&self, callable: &Callable) -> bool {
        callable.offered_in(self.lang())
    }
    /// Lines shown under a page's title, like import statements, for a page documenting `classes`.
    fn imports(&self, api: &Api, classes: &[&Class]) -> Vec<String>;
    /// A reference inside doc text as the language spells it, without backticks (a link is added where the target
    /// is documented).
    fn spell(&self, api: &Api, reference: &Reference) -> String;
    /// The heading (and anchor) of an item or member.
    fn heading(&self, item: &Item) -> String;
    fn member_heading(&self, class: &Class, member: &Callable) -> String;
    /// The heading of a member documented on another page than its class: `Model.encodeText`.
    fn qualified_member_heading(&self, class: &Class, member: &Callable) -> String {
        format!("{}.{}", self.heading(&Item::Class(class.clone())), self.member_heading(class, member))
    }
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
    fn notes(&self, _api: &Api) -> Vec<String> {
        Vec::new()
    }
    fn mirrors(&self, c_name: &str) -> Option<String> {
        Some(format!("Mirrors `{c_name}`."))
    }
    /// Whether a `bytes` parameter of `callable` is read in place or copied, as this language passes it (appended to
    /// the parameter's doc).
    fn bytes_note(&self, _callable: &Callable) -> Option<String> {
        None
    }
    /// "Calls `uform_…`." for callables.
    fn calls(&self, callable: &Callable) -> Option<String> {
        Some(format!("Calls `{}`.", callable.c_name))
    }
}

/// Renders doc text with a style's references, each a link placeholder that [`render`] resolves once every page is
/// laid out (a reference to a sibling field or parameter stays a code span).
pub fn text(style: &dyn DocStyle, api: &Api, doc: &Doc) -> String {
    doc.render(&|r| {
        let spelled = style.spell(api, r);
        match target_key(r) {
            Some(key) => format!("{LINK_OPEN}{key}{LINK_TEXT}{spelled}{LINK_CLOSE}"),
            None => format!("`{spelled}`"),
        }
    })
}

/// Marks a reference in rendered text until its target's page and anchor are known: `OPEN key TEXT spelled CLOSE`.
const LINK_OPEN: char = '\u{E010}';
const LINK_TEXT: char = '\u{E011}';
const LINK_CLOSE: char = '\u{E012}';

/// What a reference points at, as the pages record their sections: `type:MeshOptions`, `fn:gpu_devices`,
/// `member:Executor.free`. A sibling field or parameter has no section of its own.
fn target_key(r: &Reference) -> Option<String> {
    match r {
        Reference::Member(_) => None,
        Reference::Type(n) => Some(format!("type:{}", n.pascal())),
        Reference::Function(n) => Some(format!("fn:{}", n.snake())),
        Reference::Method { class, method } => Some(member_key(class, method)),
    }
}

fn member_key(class: &Name, member: &Name) -> String {
    format!("member:{}.{}", class.pascal(), member.snake())
}

template! {
    "docs/page.md"
    struct PageMd {
        title: String,
        language: String,
        intro: String,
        imports: Vec<String>,
        sections: Vec<String>,
    }
}

/// One page's line in the index: its link and what it covers.
pub struct PageLine {
    pub name: String,
    pub file: String,
    pub doc: String,
}

template! {
    "docs/index.md"
    struct IndexMd {
        title: String,
        language: String,
        doc: String,
        intro: String,
        imports: Vec<String>,
        pages: Vec<PageLine>,
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
        example: Option<String>,
        /// Members documented on other pages, as links.
        elsewhere: Vec<String>,
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

/// One page as it renders: its sections, and the key and heading of each section a reference may point at, in order.
#[derive(Default)]
struct Sections {
    texts: Vec<String>,
    targets: Vec<(String, String)>,
}

fn callable(style: &dyn DocStyle, api: &Api, class: Option<&Class>, c: &Callable, heading: String) -> Rendered {
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
            .map(|p| {
                let mut doc = text(style, api, &p.doc);
                if let Some(note) = p.ty.holds_bytes().then(|| style.bytes_note(c)).flatten() {
                    doc = format!("{doc} {note}");
                }
                Entry { name: style.param_name(p), ty: None, doc }
            })
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

fn class_section(style: &dyn DocStyle, api: &Api, k: &Class, out: &mut Sections) -> Rendered {
    let offered: Vec<&Callable> = k.members.iter().filter(|m| style.offered(m)).collect();
    let mut members = Vec::new();
    let mut targets = Vec::new();
    for m in offered.iter().filter(|m| m.page == k.page) {
        let heading = style.member_heading(k, m);
        targets.push((member_key(&k.name, &m.name), heading.clone()));
        members.push(callable(style, api, Some(k), m, heading)?);
    }
    // A member documented on another page is named here, linked, so the class reads whole.
    let elsewhere = offered
        .iter()
        .filter(|m| m.page != k.page && !m.is_twin())
        .map(|m| {
            let reference = Reference::Method { class: k.name.clone(), method: m.name.clone() };
            text(style, api, &Doc { segments: vec![DocSegment::Ref(reference)] })
        })
        .collect();
    let heading = style.heading(&Item::Class(k.clone()));
    out.targets.push((format!("type:{}", k.name.pascal()), heading.clone()));
    out.targets.extend(targets);
    ClassSection {
        heading,
        doc: text(style, api, &k.doc),
        fence: style.fence().into(),
        declaration: style.class_declaration(api, k),
        details: text(style, api, &k.details),
        thread_safety: text(style, api, &k.thread_safety),
        example: k.example(style.lang()).map(str::to_string),
        elsewhere,
        members,
        compiled: style.compiled_declaration(api, k).map(|d| (text(style, api, &k.compiled_doc), d)),
    }
    .rendered(format!("class {}", k.name.pascal()))
}

/// The sections of one page: its items in IDL order (a class with the members on this page), and the members of
/// classes on other pages that are documented here.
fn page_sections(style: &dyn DocStyle, api: &Api, page: &Name) -> Rendered<Sections> {
    let mut out = Sections::default();
    for item in &api.items {
        match item {
            Item::Record(r) if &r.page == page => {
                out.targets.push((format!("type:{}", r.name.pascal()), style.heading(item)));
                out.texts.push(record_section(style, api, r)?);
                out.texts.extend(style.companions(api, r)?);
            }
            Item::Enum(e) if &e.page == page => {
                out.targets.push((format!("type:{}", e.name.pascal()), style.heading(item)));
                out.texts.push(
                    EnumSection {
                        heading: style.heading(item),
                        doc: text(style, api, &e.doc),
                        fence: style.fence().into(),
                        declaration: style.enum_declaration(api, e),
                        entries: style.enum_entries(api, e),
                    }
                    .rendered(format!("enum {}", e.name.pascal()))?,
                );
            }
            Item::Class(k) if &k.page == page => {
                let section = class_section(style, api, k, &mut out)?;
                out.texts.push(section);
            }
            Item::Class(k) => {
                for m in k.members.iter().filter(|m| &m.page == page && style.offered(m)) {
                    let heading = style.qualified_member_heading(k, m);
                    out.targets.push((member_key(&k.name, &m.name), heading.clone()));
                    out.texts.push(callable(style, api, Some(k), m, heading)?);
                }
            }
            Item::Function(f) if &f.page == page && style.offered(f) => {
                out.targets.push((format!("fn:{}", f.name.snake()), style.heading(item)));
                out.texts.push(callable(style, api, None, f, style.heading(item))?);
            }
            _ => {}
        }
    }
    Ok(out)
}

/// One rendered file of a language's reference, its links still placeholders, with the targets its sections hold.
struct PageFile {
    file: String,
    md: String,
    targets: Vec<(String, String)>,
}

/// The file of a page: `executors.md`.
fn page_file(page: &Name) -> String {
    format!("{}.md", page.snake())
}

/// Renders one language's reference: `index.md` (the pages, the language's notes and the errors) and one file per
/// page that documents something in this language.
pub fn render(style: &dyn DocStyle, api: &Api) -> Rendered<Vec<Output>> {
    let mut files: Vec<PageFile> = Vec::new();
    let mut lines = Vec::new();
    for page in &api.pages {
        let sections = page_sections(style, api, &page.name)?;
        if sections.texts.is_empty() {
            continue;
        }
        let classes: Vec<&Class> = api.classes().filter(|k| k.page == page.name).collect();
        let md = PageMd {
            title: page.name.pascal(),
            language: style.language().into(),
            intro: text(style, api, &page.intro),
            imports: style.imports(api, &classes),
            sections: sections.texts,
        };
        let file = page_file(&page.name);
        lines.push(PageLine { name: page.name.pascal(), file: file.clone(), doc: text(style, api, &page.doc) });
        let md = md.rendered(format!("{} page {}", style.language(), page.name.pascal()))?;
        files.push(PageFile { file, md, targets: sections.targets });
    }
    let mut sections = style.notes(api);
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
    let index = IndexMd {
        title: api.title.clone(),
        language: style.language().into(),
        doc: text(style, api, &api.doc),
        intro: if api.pages.len() > 1 { text(style, api, &api.intro) } else { String::new() },
        imports: style.imports(api, &api.classes().collect::<Vec<_>>()),
        pages: lines,
        sections,
    };
    let md = index.rendered(format!("{} index", style.language()))?;
    files.push(PageFile { file: "index.md".into(), md, targets: Vec::new() });
    let anchors = anchors(&files);
    Ok(files
        .iter()
        .map(|f| Output {
            path: format!("docs/{}/{}", style.folder(), f.file).into(),
            contents: resolve_links(&f.md, &f.file, &anchors),
        })
        .collect())
}

/// Where each target is: its file and its anchor there, read off the rendered headings in order.
fn anchors(files: &[PageFile]) -> std::collections::BTreeMap<String, (String, String)> {
    let mut out = std::collections::BTreeMap::new();
    for f in files {
        let headings = headings(&f.md);
        let mut next = 0;
        for (key, heading) in &f.targets {
            let Some(at) = headings[next..].iter().position(|(text, _)| text == heading) else { continue };
            out.entry(key.clone()).or_insert_with(|| (f.file.clone(), headings[next + at].1.clone()));
            next += at + 1;
        }
    }
    out
}

/// The headings of a Markdown page outside code fences, each with the anchor GitHub gives it.
pub fn headings(md: &str) -> Vec<(String, String)> {
    let mut seen: Vec<String> = Vec::new();
    let mut out = Vec::new();
    let mut fenced = false;
    for line in md.lines() {
        if line.starts_with("```") {
            fenced = !fenced;
            continue;
        }
        let level = line.chars().take_while(|c| *c == '#').count();
        if fenced || level == 0 || level > 6 || !line[level..].starts_with(' ') {
            continue;
        }
        let text = line[level..].trim().to_string();
        let base = slug(&text);
        let mut anchor = base.clone();
        let mut n = 0;
        while seen.contains(&anchor) {
            n += 1;
            anchor = format!("{base}-{n}");
        }
        seen.push(anchor.clone());
        out.push((text, anchor));
    }
    out
}

/// GitHub's anchor for a heading: lowercase, spaces as `-`, everything but letters, digits, `_` and `-` dropped.
fn slug(heading: &str) -> String {
    heading
        .to_lowercase()
        .chars()
        .filter_map(|c| match c {
            ' ' => Some('-'),
            c if c.is_alphanumeric() || c == '_' || c == '-' => Some(c),
            _ => None,
        })
        .collect()
}

/// Turns every placeholder into a link to its target (`#anchor` on the same page, `file.md#anchor` on another), or
/// into a code span where the target is not documented in this language.
fn resolve_links(md: &str, file: &str, anchors: &std::collections::BTreeMap<String, (String, String)>) -> String {
    let mut out = String::with_capacity(md.len());
    let mut rest = md;
    while let Some(open) = rest.find(LINK_OPEN) {
        out.push_str(&rest[..open]);
        let after = &rest[open + LINK_OPEN.len_utf8()..];
        let (Some(mid), Some(close)) = (after.find(LINK_TEXT), after.find(LINK_CLOSE)) else { break };
        let (key, spelled) = (&after[..mid], &after[mid + LINK_TEXT.len_utf8()..close]);
        match anchors.get(key) {
            Some((target, anchor)) if target == file => out.push_str(&format!("[`{spelled}`](#{anchor})")),
            Some((target, anchor)) => out.push_str(&format!("[`{spelled}`]({target}#{anchor})")),
            None => out.push_str(&format!("`{spelled}`")),
        }
        rest = &after[close + LINK_CLOSE.len_utf8()..];
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn anchors_follow_github_and_number_repeats() {
        let md =
            "# Executors\n\n## free\n\n```c\n#define X 1\n```\n\n## free\n\n## Model.encodeText\n\n## uform_model_t\n";
        let anchors: Vec<String> = headings(md).into_iter().map(|(_, a)| a).collect();
        assert_eq!(anchors, ["executors", "free", "free-1", "modelencodetext", "uform_model_t"]);
    }
}
