//! The reference's pages: every link in every language's pages lands on a file and a heading that exist (GitHub's
//! anchors), for the real IDL (`generated/docs/`) and every valid fixture; each folder has an index listing its pages;
//! and the JavaScript Executors page keeps the seed page's sections, in the seed's order.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap().to_path_buf()
}

/// GitHub's anchors of a page's headings (outside code fences), in order: lowercase, spaces as `-`, punctuation but
/// `_` and `-` dropped, a repeat numbered `-1`, `-2`.
fn anchors(md: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut fenced = false;
    for line in md.lines() {
        if line.starts_with("```") {
            fenced = !fenced;
        }
        let Some(text) = line.trim_start_matches('#').strip_prefix(' ') else { continue };
        if fenced || !line.starts_with('#') {
            continue;
        }
        let base: String = text
            .trim()
            .to_lowercase()
            .chars()
            .filter(|c| c.is_alphanumeric() || matches!(c, ' ' | '_' | '-'))
            .map(|c| if c == ' ' { '-' } else { c })
            .collect();
        let mut anchor = base.clone();
        for n in 1.. {
            if !out.contains(&anchor) {
                break;
            }
            anchor = format!("{base}-{n}");
        }
        out.push(anchor);
    }
    out
}

/// Every link target of a page outside code fences: `(target, line)`.
fn links(md: &str) -> Vec<(String, usize)> {
    let mut out = Vec::new();
    let mut fenced = false;
    for (number, line) in md.lines().enumerate() {
        if line.starts_with("```") {
            fenced = !fenced;
        }
        if fenced {
            continue;
        }
        let mut rest = line;
        while let Some(at) = rest.find("](") {
            let after = &rest[at + 2..];
            let Some(end) = after.find(')') else { break };
            out.push((after[..end].to_string(), number + 1));
            rest = &after[end..];
        }
    }
    out
}

/// The broken links of one language's pages (file name → contents), each as `file:line: target: why`.
fn broken_links(language: &str, pages: &BTreeMap<String, String>) -> Vec<String> {
    let mut broken = Vec::new();
    for (file, md) in pages {
        for (target, line) in links(md) {
            if target.starts_with("http://") || target.starts_with("https://") {
                continue;
            }
            let (path, anchor) = target.split_once('#').unwrap_or((&target, ""));
            let page = if path.is_empty() { file.as_str() } else { path };
            let why = match pages.get(page) {
                None => "no such page".to_string(),
                Some(_) if anchor.is_empty() => continue,
                Some(target_md) if anchors(target_md).iter().any(|a| a == anchor) => continue,
                Some(_) => format!("{page} has no heading with anchor `{anchor}`"),
            };
            broken.push(format!("{language}/{file}:{line}: {target}: {why}"));
        }
    }
    broken
}

/// The rendered docs of an IDL, by language folder and file name.
fn rendered_docs(idl: &Path) -> BTreeMap<String, BTreeMap<String, String>> {
    let api = uform_codegen::load(idl).unwrap_or_else(|d| panic!("{d}"));
    let mut out: BTreeMap<String, BTreeMap<String, String>> = BTreeMap::new();
    for o in uform_codegen::render(&api).unwrap_or_else(|e| panic!("{e}")) {
        let path = o.path.to_string_lossy().to_string();
        let Some(rest) = path.strip_prefix("docs/") else { continue };
        let (language, file) = rest.split_once('/').unwrap();
        out.entry(language.to_string()).or_default().insert(file.to_string(), o.contents);
    }
    out
}

#[test]
fn every_link_of_the_reference_lands_on_a_heading_in_every_language() {
    let docs = root().join("generated/docs");
    let mut broken = Vec::new();
    let mut languages = 0;
    for language in std::fs::read_dir(&docs).unwrap().flatten().filter(|e| e.path().is_dir()) {
        let pages: BTreeMap<String, String> = std::fs::read_dir(language.path())
            .unwrap()
            .flatten()
            .map(|e| (e.file_name().to_string_lossy().to_string(), std::fs::read_to_string(e.path()).unwrap()))
            .collect();
        let name = language.file_name().to_string_lossy().to_string();
        let index = pages.get("index.md").unwrap_or_else(|| panic!("{name} has no index.md"));
        for page in ["executors.md", "models.md", "encoding.md", "training.md"] {
            assert!(pages.contains_key(page), "{name} has no {page}");
            assert!(index.contains(&format!("]({page})")), "{name}/index.md does not list {page}");
        }
        let all: Vec<(String, usize)> = pages.values().flat_map(|md| links(md)).collect();
        let across = all.iter().filter(|(t, _)| t.contains(".md#")).count();
        assert!(
            all.len() > 30 && across > 10,
            "{name}'s pages link to each other ({} links, {across} across pages)",
            all.len()
        );
        broken.extend(broken_links(&name, &pages));
        languages += 1;
    }
    assert_eq!(languages, 5, "one folder per language");
    assert!(broken.is_empty(), "links that land nowhere:\n{}", broken.join("\n"));
}

#[test]
fn every_fixture_reference_links_resolve() {
    let dir = root().join("codegen/tests/fixtures");
    let mut broken = Vec::new();
    for entry in std::fs::read_dir(&dir).unwrap().flatten() {
        let path = entry.path();
        let stem = path.file_stem().unwrap().to_string_lossy().to_string();
        if path.extension().is_none_or(|e| e != "yaml") || stem.starts_with("bad_") {
            continue;
        }
        if path.with_extension("expected").exists() {
            continue;
        }
        for (language, pages) in rendered_docs(&path) {
            assert!(pages.contains_key("index.md"), "{stem}: {language} has no index.md");
            broken.extend(broken_links(&format!("{stem}/{language}"), &pages));
        }
    }
    assert!(broken.is_empty(), "links that land nowhere:\n{}", broken.join("\n"));
}

/// The sections of the seed's Executors page (the normative JavaScript page, `seed/executors.md` beside DESIGN.md),
/// in its order.
const SEED_EXECUTORS: &[&str] = &[
    "MeshOptions",
    "MeshDescription",
    "MultimemTier",
    "GpuVendor",
    "GpuDevice",
    "ExecutorForRamConfig",
    "ExecutorOnPoolConfig",
    "ExecutorForVramConfig",
    "Mesh",
    "bootstrap",
    "describe",
    "free",
    "compiled",
    "Executor",
    "forRam",
    "forVram",
    "onPool",
    "drain",
    "free",
    "compiled",
    "gpuDevices",
    "capabilitiesCompiled",
    "capabilitiesAvailable",
];

#[test]
fn the_executors_page_keeps_the_seed_pages_sections_in_order() {
    let md = std::fs::read_to_string(root().join("generated/docs/javascript/executors.md")).unwrap();
    assert!(md.starts_with("# Executors\n"));
    let headings: Vec<&str> = md.lines().filter_map(|l| l.strip_prefix("## ")).collect();
    let mut next = 0;
    for seed in SEED_EXECUTORS {
        match headings[next..].iter().position(|h| h == seed) {
            Some(at) => next += at + 1,
            None => panic!("the Executors page lost the seed's `{seed}` or moved it out of order: {headings:?}"),
        }
    }
    // What the seed leaves out and the page adds: Node's promise twin, the native layer's twin of a record, the
    // enum `drain` takes, and the mesh's environment reader. Nothing of models, encoding or training.
    let extra: Vec<&&str> = headings.iter().filter(|h| !SEED_EXECUTORS.contains(h)).collect();
    assert_eq!(extra, [&"CompiledMeshDescription", &"bootstrapAsync", &"Mood", &"meshOptionsFromEnvironment"]);
}
