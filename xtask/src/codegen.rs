//! `cargo xtask codegen [--check | --compat REF]`.

use crate::util::root;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

pub fn run(args: &[String]) -> Result<(), String> {
    let check = match args {
        [] => false,
        [flag] if flag == "--check" => true,
        [flag, reference] if flag == "--compat" => return compat(reference),
        _ => return Err("usage: cargo xtask codegen [--check | --compat REF]".into()),
    };
    let root = root();
    let api = uform_codegen::load(&root.join("idl/uform.yaml")).map_err(|d| d.to_string())?;
    let mut outputs = uform_codegen::render(&api).map_err(|e| e.to_string())?;
    outputs.extend(crate::codegen_uniffi::bindgen(&root, &outputs)?);
    let generated = root.join("generated");
    let expected: BTreeSet<PathBuf> = outputs.iter().map(|o| o.path.clone()).collect();
    let present = list_files(&generated);
    if check {
        let mut stale = Vec::new();
        for o in &outputs {
            match std::fs::read_to_string(generated.join(&o.path)) {
                Ok(text) if text == o.contents => {}
                Ok(_) => stale.push(format!("stale: generated/{}", o.path.display())),
                Err(_) => stale.push(format!("missing: generated/{}", o.path.display())),
            }
        }
        for p in present.difference(&expected) {
            stale.push(format!("not produced by the generator: generated/{}", p.display()));
        }
        if stale.is_empty() {
            eprintln!("generated/ is up to date ({} files)", outputs.len());
            return Ok(());
        }
        return Err(format!("{}\nrun `cargo xtask codegen` and commit the result", stale.join("\n")));
    }
    for o in &outputs {
        let path = generated.join(&o.path);
        if std::fs::read_to_string(&path).ok().as_deref() == Some(o.contents.as_str()) {
            continue;
        }
        std::fs::create_dir_all(path.parent().unwrap()).map_err(|e| e.to_string())?;
        std::fs::write(&path, &o.contents).map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    }
    for p in present.difference(&expected) {
        std::fs::remove_file(generated.join(p)).map_err(|e| e.to_string())?;
    }
    eprintln!("generated {} files in generated/", outputs.len());
    Ok(())
}

/// `cargo xtask codegen --compat REF`: what changed incompatibly between idl/uform.yaml at git `REF` and now, per
/// surface; fails when something breaks and the version did not move far enough (for 0.x, the minor).
pub fn compat(reference: &str) -> Result<(), String> {
    let root = root();
    let old = std::process::Command::new("git")
        .args(["show", &format!("{reference}:idl/uform.yaml")])
        .current_dir(&root)
        .output()
        .map_err(|e| format!("cannot run git: {e}"))?;
    if !old.status.success() {
        return Err(format!(
            "cannot read idl/uform.yaml at `{reference}`: {}",
            String::from_utf8_lossy(&old.stderr).trim()
        ));
    }
    let old =
        uform_codegen::load_bytes(&old.stdout, &format!("{reference}:idl/uform.yaml")).map_err(|d| d.to_string())?;
    let new = uform_codegen::load(&root.join("idl/uform.yaml")).map_err(|d| d.to_string())?;
    let findings = uform_codegen::compat::compare(&old, &new);
    if findings.is_empty() {
        println!("compat: nothing incompatible since {reference} (version {} -> {})", old.version, new.version);
        return Ok(());
    }
    print!("{}", uform_codegen::compat::report(&findings));
    uform_codegen::compat::required_bump(&old.version, &new.version, true)?;
    println!(
        "compat: {} incompatible changes since {reference}, covered by the version bump {} -> {}",
        findings.len(),
        old.version,
        new.version
    );
    Ok(())
}

fn list_files(dir: &Path) -> BTreeSet<PathBuf> {
    fn walk(base: &Path, dir: &Path, out: &mut BTreeSet<PathBuf>) {
        let Ok(entries) = std::fs::read_dir(dir) else { return };
        for entry in entries.flatten() {
            let path = entry.path();
            if path.is_dir() {
                walk(base, &path, out);
            } else if let Ok(rel) = path.strip_prefix(base) {
                out.insert(rel.to_path_buf());
            }
        }
    }
    let mut out = BTreeSet::new();
    walk(dir, dir, &mut out);
    out
}
