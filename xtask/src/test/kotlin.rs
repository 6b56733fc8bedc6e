//! `cargo xtask test kotlin`: builds the uniffi cdylib, runs the Kotlin scenario suite with Maven (the jar carries
//! the native library under `linux-x86-64/`), installs the jar into the repository
//! `bindings/kotlin/target/local-repo`, and builds and runs `bindings/kotlin/consumer` against only that artifact.
//! Maven uses the ordinary `~/.m2` for plugins, so after the first run it works offline.

use crate::util::{apt_install, cargo, have, root, run_in};

pub fn run() -> Result<(), String> {
    if !have("mvn") || !have("java") {
        apt_install(&["openjdk-17-jdk-headless", "maven"])?;
    }
    cargo(&["build", "--quiet", "-p", "uform-uniffi"])?;
    let kotlin = root().join("bindings/kotlin");
    run_in(&kotlin, "mvn", &["-B", "-q", "-Dstyle.color=never", "verify"])?;
    let repo = kotlin.join("target/local-repo");
    let repo_arg = format!("-DlocalRepositoryPath={}", repo.display());
    run_in(
        &kotlin,
        "mvn",
        &[
            "-B",
            "-q",
            "-Dstyle.color=never",
            "install:install-file",
            "-Dfile=target/uform-0.1.0.jar",
            "-DpomFile=pom.xml",
            &repo_arg,
        ],
    )?;
    // Maven caches what it resolves from the local repository in ~/.m2; drop that copy so the consumer always
    // resolves the jar just built.
    if let Some(home) = std::env::var_os("HOME") {
        let cached = std::path::Path::new(&home).join(".m2/repository/cloud/unum/uform");
        let _ = std::fs::remove_dir_all(cached);
    }
    run_in(&kotlin.join("consumer"), "mvn", &["-B", "-q", "-Dstyle.color=never", "compile", "exec:java"])
}
