//! Where a bad value sits, and how each language spells it.
//!
//! Core names arguments the way the IDL does: snake_case words, a record parameter and its field joined by a dot,
//! a list element by its index (`config.memory_domains[1]`). An [`Error`](crate::Error) keeps that path as
//! [`Segment`]s, and its message is a template: [`PATH`] marks where the spelled path goes, and [`name`] marks any
//! other IDL name the message mentions (a sibling field, a method). Each binding's error conversion renders the
//! template with its language's [`Spelling`]: C `config.cpu_class`, JavaScript, Kotlin and Swift
//! `config.cpuClass`, Python `cpu_class` (Python takes a record parameter's fields as keyword arguments).

use std::fmt;

/// One step of a path: an IDL name (a parameter, a field, a method, in the IDL's snake_case) or a list index.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Segment {
    Name(String),
    Index(usize),
}

/// Marks, in an error message's template, where the error's own path goes.
pub const PATH: char = '\u{E000}';
const NAME_OPEN: char = '\u{E001}';
const NAME_CLOSE: char = '\u{E002}';

/// An IDL name or path inside an error message, like `name("config.host_domain_count")` or
/// `name("gpu_devices()")`: the message shows it in backticks in each language's spelling. Class names
/// (`Model.load_ram`) keep their PascalCase.
pub fn name(canonical: &str) -> impl fmt::Display + '_ {
    struct Marked<'a>(&'a str);
    impl fmt::Display for Marked<'_> {
        fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            write!(f, "{NAME_OPEN}{}{NAME_CLOSE}", self.0)
        }
    }
    Marked(canonical)
}

/// Parses a canonical path, `config.memory_domains[1]`, into segments. A call's `()` stays on its name.
pub fn parse(canonical: &str) -> Vec<Segment> {
    let mut segments = Vec::new();
    for part in canonical.split('.') {
        let (head, mut rest) = part.split_once('[').map_or((part, ""), |(h, r)| (h, r));
        if !head.is_empty() {
            segments.push(Segment::Name(head.to_string()));
        }
        while let Some((index, after)) = rest.split_once(']') {
            match index.parse() {
                Ok(i) => segments.push(Segment::Index(i)),
                Err(_) => segments.push(Segment::Name(format!("[{index}]"))),
            }
            rest = after.strip_prefix('[').unwrap_or(after);
        }
    }
    segments
}

/// How one language spells names and paths in messages.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Spelling {
    /// Members in camelCase (`cpuClass`) instead of the IDL's snake_case (`cpu_class`).
    pub camel_case: bool,
    /// A record parameter's fields are arguments of their own (Python's keyword arguments): a path into a
    /// record parameter drops the parameter (`config.cpu_class` is `cpu_class`).
    pub flatten_record_parameters: bool,
}

impl Spelling {
    /// The IDL's own spelling, which is also C's: `config.cpu_class`.
    pub const CANONICAL: Spelling = Spelling { camel_case: false, flatten_record_parameters: false };

    /// One name: `cpu_class` as `cpuClass` in camelCase; a class name and a trailing `()` stay as they are.
    pub fn name(&self, name: &str) -> String {
        if !self.camel_case {
            return name.to_string();
        }
        let mut out = String::with_capacity(name.len());
        let mut upper = false;
        for c in name.chars() {
            match c {
                '_' if !out.is_empty() => upper = true,
                c if upper => {
                    out.extend(c.to_uppercase());
                    upper = false;
                }
                c => out.push(c),
            }
        }
        out
    }

    /// A whole path: names joined by dots, indices in brackets.
    pub fn path(&self, segments: &[Segment]) -> String {
        let flatten = self.flatten_record_parameters
            && segments.len() > 1
            && matches!(segments[1], Segment::Name(_))
            && matches!(&segments[0], Segment::Name(n) if n.starts_with(|c: char| c.is_ascii_lowercase()));
        let mut out = String::new();
        for segment in &segments[usize::from(flatten)..] {
            match segment {
                Segment::Name(n) => {
                    if !out.is_empty() {
                        out.push('.');
                    }
                    out.push_str(&self.name(n));
                }
                Segment::Index(i) => out.push_str(&format!("[{i}]")),
            }
        }
        out
    }

    /// Renders a message template: [`PATH`] becomes `path` and each [`name`] its spelling, both in backticks.
    pub fn render(&self, template: &str, path: &[Segment]) -> String {
        let mut out = String::with_capacity(template.len() + 16);
        let mut rest = template;
        while let Some(at) = rest.find([PATH, NAME_OPEN]) {
            out.push_str(&rest[..at]);
            let marker = rest[at..].chars().next().unwrap_or(PATH);
            rest = &rest[at + marker.len_utf8()..];
            out.push('`');
            if marker == PATH {
                out.push_str(&self.path(path));
            } else {
                let (canonical, after) = rest.split_once(NAME_CLOSE).unwrap_or((rest, ""));
                out.push_str(&self.path(&parse(canonical)));
                rest = after;
            }
            out.push('`');
        }
        out.push_str(rest);
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const CAMEL: Spelling = Spelling { camel_case: true, flatten_record_parameters: false };
    const PYTHON: Spelling = Spelling { camel_case: false, flatten_record_parameters: true };

    #[test]
    fn paths_parse_into_names_and_indices() {
        let n = |s: &str| Segment::Name(s.into());
        assert_eq!(parse("config.memory_domains[1]"), [n("config"), n("memory_domains"), Segment::Index(1)]);
        assert_eq!(parse("texts[2][3]"), [n("texts"), Segment::Index(2), Segment::Index(3)]);
        assert_eq!(parse("gpu_devices()"), [n("gpu_devices()")]);
    }

    #[test]
    fn each_language_spells_a_record_field_its_own_way() {
        let path = parse("config.cpu_class");
        assert_eq!(Spelling::CANONICAL.path(&path), "config.cpu_class");
        assert_eq!(CAMEL.path(&path), "config.cpuClass");
        assert_eq!(PYTHON.path(&path), "cpu_class");
        let element = parse("config.memory_domains[1]");
        assert_eq!(CAMEL.path(&element), "config.memoryDomains[1]");
        assert_eq!(PYTHON.path(&element), "memory_domains[1]");
        // A plain parameter or one of its elements keeps its name; a class keeps its spelling.
        assert_eq!(PYTHON.path(&parse("texts[3]")), "texts[3]");
        assert_eq!(CAMEL.path(&parse("Model.load_ram")), "Model.loadRam");
        assert_eq!(PYTHON.path(&parse("Model.load_ram")), "Model.load_ram");
        assert_eq!(CAMEL.path(&parse("gpu_devices()")), "gpuDevices()");
    }

    #[test]
    fn a_template_renders_its_path_and_names_in_backticks() {
        let template = format!("{PATH} must be less than {} 2, got 3", name("options.host_domain_count"));
        let path = parse("options.host_domain_index");
        assert_eq!(
            Spelling::CANONICAL.render(&template, &path),
            "`options.host_domain_index` must be less than `options.host_domain_count` 2, got 3"
        );
        assert_eq!(
            CAMEL.render(&template, &path),
            "`options.hostDomainIndex` must be less than `options.hostDomainCount` 2, got 3"
        );
        assert_eq!(
            PYTHON.render(&template, &path),
            "`host_domain_index` must be less than `host_domain_count` 2, got 3"
        );
        // Text without markers, backticks included, passes through.
        assert_eq!(CAMEL.render("`a_b` is \"x_y\"", &[]), "`a_b` is \"x_y\"");
    }
}
