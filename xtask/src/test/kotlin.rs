//! `cargo xtask test kotlin`: builds the JNI cdylib (`uform-jni`), runs the Kotlin scenario suite with Maven (the jar carries
//! the native library under `linux-x86-64/`), installs the jar into the repository
//! `bindings/kotlin/target/local-repo`, and builds and runs `bindings/kotlin/consumer` against only that artifact
//! (in the whole run the consumer runs once, in `packages`, against the deployed artifact).
//! Maven uses the ordinary `~/.m2` for plugins, so after the first run it works offline.
//!
//! `overhead()` is the Kotlin part of `cargo xtask bench overhead`.

use crate::util::{apt_install, cargo, have, root, status};
use std::path::Path;
use std::process::{Command, Stdio};

/// Maven in `dir`, without the `LD_LIBRARY_PATH` that `cargo run` sets (it names target/debug), so nothing but the
/// library inside the artifact can be what the tests, the consumer and the benchmark load.
fn mvn(dir: &Path, args: &[&str]) -> Command {
    let mut cmd = Command::new("mvn");
    cmd.args(["-B", "-q", "-Dstyle.color=never"]).args(args).current_dir(dir).env_remove("LD_LIBRARY_PATH");
    cmd
}

fn ensure_tools() -> Result<(), String> {
    if !have("mvn") || !have("java") {
        apt_install(&["openjdk-17-jdk-headless", "maven"])?;
    }
    Ok(())
}

pub fn run() -> Result<(), String> {
    ensure_tools()?;
    cargo(&["build", "--quiet", "-p", "uform-jni"])?;
    let kotlin = root().join("bindings/kotlin");
    let mut verify = mvn(&kotlin, &["verify"]);
    verify
        .env("UFORM_TEST_MODEL_DIR", crate::util::test_model_dir()?)
        .env("UFORM_TEST_REFERENCE", root().join("tests/fixtures/encode/reference.json"))
        .env("UFORM_TEST_TRAIN_REFERENCE", root().join("tests/fixtures/train/reference.json"));
    status(verify, "the Kotlin scenario suite")?;
    if super::left_to_packages("the Kotlin consumer project", "maven") {
        return Ok(());
    }
    let repo = kotlin.join("target/local-repo");
    let repo_arg = format!("-DlocalRepositoryPath={}", repo.display());
    let jar = format!("-Dfile=target/uform-{}.jar", super::versions::check()?);
    let install = ["install:install-file", &jar, "-DpomFile=pom.xml", &repo_arg];
    status(mvn(&kotlin, &install), "installing the Kotlin artifact")?;
    // Maven caches what it resolves from the local repository in ~/.m2; drop that copy so the consumer always
    // resolves the jar just built.
    if let Some(home) = std::env::var_os("HOME") {
        let cached = std::path::Path::new(&home).join(".m2/repository/cloud/unum/uform");
        let _ = std::fs::remove_dir_all(cached);
    }
    let mut consumer = mvn(&kotlin.join("consumer"), &["compile", "exec:java"]);
    consumer.env("UFORM_TEST_MODEL_DIR", crate::util::test_model_dir()?);
    status(consumer, "the Kotlin consumer project")
}

/// `cargo xtask bench overhead`, the Kotlin part: builds the release library, then compiles and runs
/// bindings/kotlin/src/bench (Maven profile `bench`, built into target/bench against target/release), which times
/// `capabilitiesCompiled()` and `drain()` against a bare JNI no-op (`UFormNative.benchNoop`, an `external fun` bound
/// like every generated one). Echoes the detail to stderr and returns the result line, `overhead kotlin: noop_ns=N capabilities_ns=C
/// drain_ns=D capabilities/noop=R1 drain/noop=R2`.
pub fn overhead() -> Result<String, String> {
    ensure_tools()?;
    cargo(&["build", "--quiet", "--release", "-p", "uform-jni"])?;
    let kotlin = root().join("bindings/kotlin");
    let mut cmd = mvn(&kotlin, &["-Pbench", "test-compile", "exec:exec@overhead"]);
    eprintln!("+ {cmd:?}");
    let output = cmd.stderr(Stdio::inherit()).output().map_err(|e| format!("cannot start `mvn`: {e}"))?;
    let stdout = String::from_utf8_lossy(&output.stdout);
    const PREFIX: &str = "overhead kotlin: ";
    let mut result = None;
    for line in stdout.lines() {
        // Maven may put its colour reset in front of the first line it passes through.
        match line.find(PREFIX) {
            Some(at) if result.is_none() => result = Some(line[at..].trim_end().to_string()),
            _ => eprintln!("{line}"),
        }
    }
    if !output.status.success() {
        return Err(format!("the Kotlin overhead benchmark failed with {}", output.status));
    }
    result.ok_or_else(|| format!("the Kotlin overhead benchmark printed no `{}` line", PREFIX.trim_end()))
}
