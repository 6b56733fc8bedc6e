//! The reference's pages: `pages:` declares them in order, each item names its own with `page:`, and a class member
//! may name another page than its class's (`Model.encode_text` on Encoding). Without `pages:` the reference is one
//! page, named by `title`, and no item names a page. Also the classes' `example:` snippets, one per language.

use super::docs::Scope;
use super::names::is_pascal;
use super::Checker;
use crate::model::*;
use crate::raw::*;
use serde_saphyr::Location;
use std::collections::BTreeSet;

impl Checker {
    /// The pages `pages:` declares, or the one page `title` names (with the file's own doc and intro).
    pub(super) fn pages(&mut self, file: &RawFile, doc: &Doc, intro: &Doc) -> Vec<Page> {
        let Some(raw) = &file.pages else {
            self.pages_declared = false;
            let page = Page { name: Name::parse(&file.title.value), doc: doc.clone(), intro: intro.clone() };
            self.pages = vec![page.name.clone()];
            return vec![page];
        };
        self.pages_declared = true;
        let mut pages: Vec<Page> = Vec::new();
        for p in raw {
            let id = format!("pages.{}", p.page.value);
            if !is_pascal(&p.page.value) {
                let message =
                    format!("page `{}` must be one PascalCase word: it names docs/<language>/<page>.md", p.page.value);
                self.problem(&p.page.referenced, &id, message);
            }
            let name = Name::parse(&p.page.value);
            if pages.iter().any(|q| q.name == name) || name.snake() == "index" {
                self.problem(&p.page.referenced, &id, format!("duplicate page `{}`", p.page.value));
            }
            let doc = self.doc(p.doc.as_ref(), &p.page.referenced, &id, &Scope::EMPTY, true);
            let intro = self.doc(p.intro.as_ref(), &p.page.referenced, &id, &Scope::EMPTY, false);
            pages.push(Page { name, doc, intro });
        }
        if pages.is_empty() {
            self.unplaced("pages", "`pages` is empty: declare at least one page, or leave `pages` out");
        }
        self.pages = pages.iter().map(|p| p.name.clone()).collect();
        pages
    }

    /// The page an item or member is documented on: the one it names, else `inherited` (a member's class's page),
    /// else, without `pages:`, the reference's one page.
    pub(super) fn page_of(
        &mut self,
        named: Option<&S<String>>,
        inherited: Option<&Name>,
        at: &Location,
        id: &str,
    ) -> Name {
        let fallback = inherited.or(self.pages.first()).cloned().unwrap_or_else(|| Name::parse(""));
        match named {
            Some(page) if !self.pages_declared => {
                self.problem(&page.referenced, id, "names a `page`, but the file declares no `pages`");
                fallback
            }
            Some(page) => {
                let name = Name::parse(&page.value);
                if !self.pages.contains(&name) {
                    let known: Vec<String> = self.pages.iter().map(Name::pascal).collect();
                    let message = format!("page `{}` is not declared in `pages` ({})", page.value, known.join(", "));
                    self.problem(&page.referenced, id, message);
                }
                name
            }
            None if inherited.is_none() && self.pages_declared => {
                let known: Vec<String> = self.pages.iter().map(Name::pascal).collect();
                self.problem(
                    at,
                    id,
                    format!("has no `page`; name the page it is documented on ({})", known.join(", ")),
                );
                fallback
            }
            None => fallback,
        }
    }

    /// Reports every declared page that documents nothing.
    pub(super) fn pages_used(&mut self, file: &RawFile, items: &[Item]) {
        let mut used: BTreeSet<&Name> = items.iter().map(Item::page).collect();
        for k in items.iter().filter_map(|i| if let Item::Class(k) = i { Some(k) } else { None }) {
            used.extend(k.members.iter().map(|m| &m.page));
        }
        for p in file.pages.iter().flatten() {
            if !used.contains(&Name::parse(&p.page.value)) {
                let message = "documents nothing: no item or member names it";
                self.problem(&p.page.referenced, &format!("pages.{}", p.page.value), message);
            }
        }
    }

    /// A class's `example:` snippets, by language (`javascript`, `python`, `c`, `kotlin`, `swift`).
    pub(super) fn examples(
        &mut self,
        raw: Option<&S<std::collections::BTreeMap<String, String>>>,
        id: &str,
    ) -> Vec<(Language, String)> {
        let Some(raw) = raw else { return Vec::new() };
        let mut out = Vec::new();
        for (language, snippet) in &raw.value {
            let eid = format!("{id}.example.{language}");
            match Language::parse(language) {
                Some(l) if out.iter().any(|(o, _)| *o == l) => {
                    self.problem(&raw.referenced, &eid, format!("a second example for `{language}`"))
                }
                Some(_) if snippet.trim().is_empty() => self.problem(&raw.referenced, &eid, "the example is empty"),
                Some(l) => out.push((l, snippet.trim_end().to_string())),
                None => self.problem(
                    &raw.referenced,
                    &eid,
                    format!("`{language}` is not a language; use javascript, python, c, kotlin or swift"),
                ),
            }
        }
        out
    }
}
