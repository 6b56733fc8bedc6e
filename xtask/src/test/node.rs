//! `cargo xtask test node`: builds the addon (release), assembles and `npm pack`s the `uform` package and its
//! platform package, installs both tarballs into an empty folder under target/node/consumer, and runs there —
//! against that install, never the source tree — the scenario suite (`node --test` over bindings/node/test), a TypeScript consumer that uses
//! `using` (compiled by tsc, then run), and the strict tsc check of tests/typescript. In the whole run the scenario
//! suite runs once, in `packages`, against `npm install uform` from the local registry (`super::left_to_packages`).
//!
//! `overhead()` is the Node part of `cargo xtask bench overhead`.

use crate::util::{apt_install, have, result_line, root, run_in, status};
use std::path::{Path, PathBuf};
use std::process::Command;

pub fn run() -> Result<(), String> {
    ensure_node()?;
    let consumer = install_package()?;
    if !super::left_to_packages("the Node scenario suite", "npm") {
        suite(&consumer)?;
    }
    typescript(&consumer)
}

pub(super) fn ensure_node() -> Result<(), String> {
    if !have("node") || !have("npm") {
        apt_install(&["nodejs", "npm"])?;
    }
    let version = Command::new("node").arg("--version").output().map_err(|e| format!("cannot run node: {e}"))?;
    let version = String::from_utf8_lossy(&version.stdout).trim().to_string();
    let major: u32 = version.trim_start_matches('v').split('.').next().and_then(|m| m.parse().ok()).unwrap_or(0);
    if major < 20 {
        return Err(format!("the uform package needs Node 20 or newer; this machine has {version}"));
    }
    Ok(())
}

/// Builds and packs the package, then installs the tarball into a fresh folder; returns that folder.
pub(super) fn install_package() -> Result<PathBuf, String> {
    let root = root();
    let out = root.join("target/node");
    let package = out.join("package");
    let build = Command::new("node")
        .arg(root.join("bindings/node/build.mjs"))
        .args(["--release", "--pack", "--out"])
        .arg(&package)
        .current_dir(&root)
        .output()
        .map_err(|e| format!("cannot run the package build: {e}"))?;
    eprint!("{}", String::from_utf8_lossy(&build.stderr));
    if !build.status.success() {
        return Err(format!("bindings/node/build.mjs failed with {}", build.status));
    }
    // build.mjs prints the main package's tarball, then the platform package's.
    let tarballs: Vec<String> = String::from_utf8_lossy(&build.stdout).lines().map(str::to_string).collect();
    if tarballs.len() != 2 || !tarballs.iter().all(|t| t.ends_with(".tgz")) {
        return Err(format!("build.mjs --pack named no two tarballs: {tarballs:?}"));
    }
    let consumer = out.join("consumer");
    let _ = std::fs::remove_dir_all(&consumer);
    std::fs::create_dir_all(&consumer).map_err(|e| e.to_string())?;
    write(
        &consumer.join("package.json"),
        "{ \"name\": \"uform-consumer\", \"private\": true, \"version\": \"0.0.0\" }\n",
    )?;
    // Both tarballs at once: the platform package satisfies the main package's optional dependency on it.
    run_in(&consumer, "npm", &["install", "--no-audit", "--no-fund", "--no-package-lock", &tarballs[0], &tarballs[1]])?;
    // The suite and its helpers, copied so that `import 'uform'` resolves to the install.
    copy_dir(&root.join("bindings/node/test"), &consumer.join("test"))?;
    copy_dir(&root.join("bindings/node/bench"), &consumer.join("bench"))?;
    Ok(consumer)
}

pub(super) fn suite(consumer: &Path) -> Result<(), String> {
    let scratch = consumer.join("scratch");
    std::fs::create_dir_all(&scratch).map_err(|e| e.to_string())?;
    let mut files: Vec<String> = std::fs::read_dir(consumer.join("test"))
        .map_err(|e| e.to_string())?
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|name| name.contains(".test."))
        .map(|name| format!("test/{name}"))
        .collect();
    files.sort();
    let mut cmd = Command::new("node");
    cmd.args(["--test", "--expose-gc"])
        .args(&files)
        .current_dir(consumer)
        .env("UFORM_TEST_DIR", &scratch)
        .env("UFORM_TEST_MODEL_DIR", crate::util::test_model_dir()?)
        .env("UFORM_TEST_TINY_MODEL_DIR", super::tiny_model::dir()?)
        .env("UFORM_TEST_REFERENCE", root().join("tests/fixtures/encode/reference.json"))
        .env("UFORM_TEST_TRAIN_REFERENCE", root().join("tests/fixtures/train/reference.json"));
    status(cmd, "the Node scenario suite")
}

/// The strict tsc check of tests/typescript against the generated declarations, and a consumer that imports the
/// installed package by name, uses `using`, and runs after tsc lowers it (Node 20 cannot parse `using` itself).
fn typescript(consumer: &Path) -> Result<(), String> {
    let root = root();
    let tsc = tsc()?;
    let tsc = tsc.to_string_lossy().into_owned();
    run_in(&root, &tsc, &["-p", &root.join("tests/typescript/tsconfig.json").to_string_lossy()])?;
    let dir = consumer.join("typescript");
    std::fs::create_dir_all(&dir).map_err(|e| e.to_string())?;
    std::fs::copy(root.join("tests/typescript/package-consumer.mts"), dir.join("package-consumer.mts"))
        .map_err(|e| e.to_string())?;
    write(
        &dir.join("tsconfig.json"),
        &format!(
            r#"{{
  "compilerOptions": {{
    "strict": true,
    "target": "es2022",
    "lib": ["es2022", "esnext.disposable"],
    "module": "nodenext",
    "moduleResolution": "nodenext",
    "types": ["node"],
    "typeRoots": ["{}"],
    "outDir": "out",
    "exactOptionalPropertyTypes": true,
    "noUnusedLocals": true
  }},
  "files": ["package-consumer.mts"]
}}
"#,
            root.join("target/tools/node_modules/@types").display()
        ),
    )?;
    run_in(&dir, &tsc, &["-p", "tsconfig.json"])?;
    let mut cmd = Command::new("node");
    cmd.arg("out/package-consumer.mjs").current_dir(&dir).env("UFORM_TEST_MODEL_DIR", crate::util::test_model_dir()?);
    status(cmd, "the compiled TypeScript consumer")
}

/// TypeScript and @types/node@20 under target/tools, installed from npm when missing (shared with the codegen tests).
fn tsc() -> Result<PathBuf, String> {
    let tools = root().join("target/tools");
    let tsc = tools.join("node_modules/.bin/tsc");
    if !tsc.exists() || !tools.join("node_modules/@types/node").exists() {
        std::fs::create_dir_all(&tools).map_err(|e| e.to_string())?;
        run_in(
            &tools,
            "npm",
            &["install", "--no-audit", "--no-fund", "--prefix", ".", "typescript@7", "@types/node@20"],
        )?;
    }
    Ok(tsc)
}

/// `cargo xtask bench overhead`, the Node part: builds and installs the package as the tests do, then runs
/// bindings/node/bench/overhead.mjs, which prints `overhead node: capabilities/noop=R1 drain/noop=R2`.
pub fn overhead() -> Result<String, String> {
    ensure_node()?;
    let consumer = install_package()?;
    let mut cmd = Command::new("node");
    cmd.arg("bench/overhead.mjs").current_dir(&consumer);
    result_line(cmd, "the Node overhead benchmark", "overhead node:")
}

fn write(path: &Path, text: &str) -> Result<(), String> {
    std::fs::write(path, text).map_err(|e| format!("cannot write {}: {e}", path.display()))
}

pub(super) fn copy_dir(from: &Path, to: &Path) -> Result<(), String> {
    let _ = std::fs::remove_dir_all(to);
    std::fs::create_dir_all(to).map_err(|e| e.to_string())?;
    for entry in std::fs::read_dir(from).map_err(|e| format!("cannot read {}: {e}", from.display()))?.flatten() {
        let path = entry.path();
        if path.is_dir() {
            copy_dir(&path, &to.join(entry.file_name()))?;
        } else {
            std::fs::copy(&path, to.join(entry.file_name()))
                .map_err(|e| format!("cannot copy {}: {e}", path.display()))?;
        }
    }
    Ok(())
}
