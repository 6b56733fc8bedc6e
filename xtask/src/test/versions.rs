//! Every package's version is the interface's: `version` in idl/uform.yaml. `check()` reads it from each manifest a
//! package is published from and refuses any that differs, naming the file.

use crate::util::root;

/// Reads the version a manifest's text declares.
type Reader = fn(&str) -> Option<String>;

/// The manifests, with how to read the version each declares.
const MANIFESTS: [(&str, Reader); 6] = [
    ("Cargo.toml", cargo_workspace),
    ("bindings/node/package.json", package_json),
    ("generated/python/pyproject.toml", pyproject),
    ("bindings/kotlin/pom.xml", pom_project),
    ("bindings/kotlin/consumer/pom.xml", pom_uform_dependency),
    ("generated/c/uform.h", c_header),
];

/// `Ok(version)` when every manifest agrees with idl/uform.yaml.
pub fn check() -> Result<String, String> {
    let root = root();
    let read = |path: &str| std::fs::read_to_string(root.join(path)).map_err(|e| format!("cannot read {path}: {e}"));
    let idl = read("idl/uform.yaml")?;
    let version = idl
        .lines()
        .find_map(|l| l.strip_prefix("version:"))
        .map(|v| v.trim().trim_matches(['"', '\'']).to_string())
        .ok_or("idl/uform.yaml has no version")?;
    let mut wrong = Vec::new();
    for (path, find) in MANIFESTS {
        match find(&read(path)?) {
            Some(v) if v == version => {}
            Some(v) => wrong.push(format!("{path} has version {v}")),
            None => wrong.push(format!("{path} declares no version")),
        }
    }
    if wrong.is_empty() {
        eprintln!("versions: {} manifests at {version}, as idl/uform.yaml", MANIFESTS.len());
        Ok(version)
    } else {
        Err(format!("idl/uform.yaml has version {version}, but {}", wrong.join("; ")))
    }
}

/// The value of `key = "..."` on a line of its own.
fn toml_value(line: &str, key: &str) -> Option<String> {
    let rest = line.trim().strip_prefix(key)?.trim_start().strip_prefix('=')?;
    Some(rest.trim().trim_matches('"').to_string())
}

fn cargo_workspace(text: &str) -> Option<String> {
    let section = text.split("[workspace.package]").nth(1)?;
    section.lines().take_while(|l| !l.starts_with('[')).find_map(|l| toml_value(l, "version"))
}

fn pyproject(text: &str) -> Option<String> {
    let section = text.split("[project]").nth(1)?;
    section.lines().take_while(|l| !l.starts_with('[')).find_map(|l| toml_value(l, "version"))
}

fn package_json(text: &str) -> Option<String> {
    let at = text.find("\"version\"")?;
    let rest = text[at + "\"version\"".len()..].trim_start().strip_prefix(':')?.trim_start().strip_prefix('"')?;
    Some(rest[..rest.find('"')?].to_string())
}

fn tag<'a>(text: &'a str, name: &str) -> Option<&'a str> {
    let open = format!("<{name}>");
    let start = text.find(&open)? + open.len();
    Some(text[start..start + text[start..].find('<')?].trim())
}

/// The project's own `<version>`: the first after `<artifactId>uform</artifactId>`.
fn pom_project(text: &str) -> Option<String> {
    let after = &text[text.find("<artifactId>uform</artifactId>")?..];
    tag(after, "version").map(str::to_string)
}

/// The version of the `cloud.unum:uform` dependency.
fn pom_uform_dependency(text: &str) -> Option<String> {
    let dependencies = &text[text.find("<dependencies>")?..];
    pom_project(dependencies)
}

fn c_header(text: &str) -> Option<String> {
    let line = text.lines().find(|l| l.starts_with("#define UFORM_VERSION "))?;
    Some(line.trim_start_matches("#define UFORM_VERSION ").trim().trim_matches('"').to_string())
}

#[cfg(test)]
mod tests {
    #[test]
    fn reads_each_manifest_kind() {
        assert_eq!(super::package_json("{\n  \"name\": \"x\",\n  \"version\": \"1.2.3\"\n}").as_deref(), Some("1.2.3"));
        let toml = "[workspace]\nmembers = []\n[workspace.package]\nedition = \"2021\"\nversion = \"0.4.0\"\n";
        assert_eq!(super::cargo_workspace(toml).as_deref(), Some("0.4.0"));
        let pom = "<groupId>cloud.unum</groupId>\n<artifactId>uform</artifactId>\n<version>0.3.0</version>";
        assert_eq!(super::pom_project(pom).as_deref(), Some("0.3.0"));
        let consumer = "<artifactId>uform-consumer</artifactId><version>9</version><dependencies><dependency>\
                        <groupId>cloud.unum</groupId><artifactId>uform</artifactId><version>0.2.0</version>";
        assert_eq!(super::pom_uform_dependency(consumer).as_deref(), Some("0.2.0"));
        assert_eq!(super::c_header("#define UFORM_VERSION \"0.1.0\"\n").as_deref(), Some("0.1.0"));
        assert_eq!(super::pyproject("[project]\nname = \"uform\"\nversion = \"0.1.0\"\n").as_deref(), Some("0.1.0"));
    }

    #[test]
    fn the_checkout_agrees() {
        super::check().unwrap();
    }
}
