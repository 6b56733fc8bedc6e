//! `cargo xtask test rust`: the Rust tests of the core (unit tests, the multi-process mesh tests, and the encode
//! tests against the test model, which it installs and names in `UFORM_TEST_MODEL_DIR`), the code generator
//! (snapshots, the broken-IDL table, the fuzz corpus replay and a 20 s mutation run, the C header and strict
//! TypeScript checks), the C ABI crate, the `#[test]`s of the uniffi crate (its off-thread runner, glue helpers, and a matrix result's bulk layout through the scaffolding on the test model),
//! of the JNI crate (its result encoding) and of xtask itself (`only:` landing per language). The bindings are otherwise tested from their
//! own languages. Installs the Debian packages hwlocality needs. After the lint step of the same run, these builds are
//! also clippy's (see `lint`), and the step builds the remaining members for it.

use crate::util::{apt_install, cargo, test_model_dir, CLIPPY_IN_DEV_BUILDS, CORE_BUILD};

pub fn run() -> Result<(), String> {
    apt_install(&[&CORE_BUILD[..], &["pkg-config", "gcc"]].concat())?;
    // Read by the tests of this process's children: cargo passes its environment on.
    std::env::set_var("UFORM_TEST_MODEL_DIR", test_model_dir()?);
    // The libraries as one selection, whose dependencies' features (unified by workspace-hack) are those of
    // `cargo build -p uform-c`, `-p uform-jni` and the bindings' builds, so the later steps reuse this build of core.
    let libraries = cargo(&[
        "test",
        "--no-fail-fast",
        "-p",
        "uform-core",
        "-p",
        "uform-c",
        "-p",
        "uform-uniffi",
        "-p",
        "uform-jni",
    ]);
    // The tools (the code generator and xtask) as `cargo xtask` built them: chosen with the libraries, cargo would
    // unify the generator's dependencies' features with theirs, and the C step would then build core a second time.
    let tools = cargo(&["test", "--no-fail-fast", "-p", "uform-codegen", "-p", "xtask"]);
    libraries.and(tools).and(lint_the_rest())
}

/// When the lint step left clippy to this run's dev builds, builds the members that no test above builds (the
/// benchmarks, and the Node and Python modules, which their steps build for release), so that clippy sees them too.
/// With the libraries' dependencies' features (workspace-hack), this reuses their build of core.
fn lint_the_rest() -> Result<(), String> {
    if CLIPPY_IN_DEV_BUILDS.get().is_none() {
        return Ok(());
    }
    cargo(&["build", "--quiet", "-p", "uform-bench", "-p", "uform-node", "-p", "uform-python"])
}
