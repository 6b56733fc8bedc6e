//! `cargo xtask test c`: the C scenario suite (tests/c/test_uform.c), the Model scenarios (tests/c/test_model.c),
//! the encodeText scenarios (tests/c/test_encode.c, against the test model in `UFORM_TEST_MODEL_DIR` and the
//! reference embeddings flattened by tests/c/flatten_reference.py into `UFORM_TEST_REFERENCE`), the Trainer
//! scenarios (tests/c/test_train.c, against the training fixture flattened by tests/c/flatten_train_reference.py into
//! `UFORM_TEST_TRAIN_REFERENCE`), the trainer-across-the-mesh scenarios (tests/c/test_train_mesh.c, against each
//! rank's view of the DDP fixtures in `UFORM_TEST_TRAIN_DDP`; its processes run natively only) and the bad-input
//! table (tests/c/test_bad_input.c) compiled with gcc against the generated header and linked with libuform, the C
//! ABI tests (tests/c/abi: a program built against an older header, and structs newer than the library), each run
//! natively and then under valgrind (zero errors, zero leaks; two at a time, since valgrind runs a program on one
//! core; the trainer suites, the older-header ABI test and test_encode.c's batching and changed-file scenarios on the
//! tiny model of `tiny_model`, which checks memory on MiniLM's code paths at a hundredth of its work), then a CMake
//! consumer and a pkg-config consumer built against an installed prefix — with the shared and with the static
//! library — and test_train_mesh.c once more, built with the prefix's pkg-config flags and run
//! natively. In the whole run the consumers and that last run happen once, in `packages` (`super::left_to_packages`).
//!
//! tests/c/test_families.c, the family scenarios, loads the family checkpoints of tests/fixtures/families
//! (`UFORM_TEST_FAMILIES`), their reference flattened by tests/c/flatten_families.py into
//! `UFORM_TEST_FAMILIES_REFERENCE`; test_images.c, the encodeImage scenarios, the image-text checkpoints of
//! tests/fixtures/images (`UFORM_TEST_IMAGES`), their reference flattened by tests/c/flatten_images.py into
//! `UFORM_TEST_IMAGES_REFERENCE`.
//!
//! `overhead()` is the C part of `cargo xtask bench overhead`.

use crate::util::{apt_install, cargo, root, run_in, status, test_model_dir, took, CORE_BUILD};
use std::path::{Path, PathBuf};
use std::process::Command;

/// gcc's flags for the C suites, wherever their header and library come from.
const SUITE_FLAGS: [&str; 6] = ["-std=c99", "-Wall", "-Wextra", "-Werror", "-pedantic", "-g"];

pub fn run() -> Result<(), String> {
    apt_install(&[&CORE_BUILD[..], &["pkg-config", "valgrind", "cmake", "gcc", "make"]].concat())?;
    cargo(&["build", "--quiet", "-p", "uform-c"])?;
    let root = root();
    let out = root.join("target/c-tests");
    let scratch = out.join("scratch dir é");
    std::fs::create_dir_all(&scratch).map_err(|e| e.to_string())?;
    let lib = root.join("target/debug");
    let header = root.join("generated/c");
    let model_dir = test_model_dir()?;
    // Valgrind's runs of the suites that check memory rather than MiniLM's numbers load this instead.
    let tiny = super::tiny_model::dir()?;
    let reference = out.join("reference.txt");
    let mut flatten = Command::new("python3");
    flatten
        .arg(root.join("tests/c/flatten_reference.py"))
        .arg(root.join("tests/fixtures/encode/reference.json"))
        .arg(&reference);
    status(flatten, "flattening the reference embeddings")?;
    let train_reference = out.join("train-reference.txt");
    let mut flatten = Command::new("python3");
    flatten
        .arg(root.join("tests/c/flatten_train_reference.py"))
        .arg(root.join("tests/fixtures/train/reference.json"))
        .arg(&train_reference);
    status(flatten, "flattening the training fixture")?;
    let families = root.join("tests/fixtures/families");
    let families_reference = out.join("families-reference.txt");
    let mut flatten = Command::new("python3");
    flatten.arg(root.join("tests/c/flatten_families.py")).arg(families.join("reference.json")).arg(&families_reference);
    status(flatten, "flattening the family checkpoints' reference")?;
    let images = root.join("tests/fixtures/images");
    let images_reference = out.join("images-reference.txt");
    let mut flatten = Command::new("python3");
    flatten.arg(root.join("tests/c/flatten_images.py")).arg(images.join("reference.json")).arg(&images_reference);
    status(flatten, "flattening the image checkpoints' reference")?;
    let ddp = ddp_fixtures(&out)?;
    // The ABI tests: a program built against an older header (tests/c/abi/older/uform.h), and one whose structs
    // are newer than the library, each against today's libuform.
    let older = root.join("tests/c/abi/older");
    // The two longest under valgrind first: they run side by side (see `two_at_a_time`).
    let suites = [
        ("test_encode", "the C encodeText scenarios", &header),
        ("test_train", "the C Trainer scenarios", &header),
        ("test_uform", "the C suite", &header),
        ("test_model", "the C Model scenarios", &header),
        ("test_images", "the C encodeImage scenarios", &header),
        ("test_families", "the C family scenarios", &header),
        ("test_train_mesh", "the C trainer-across-the-mesh scenarios", &header),
        ("test_bad_input", "the C bad-input table", &header),
        ("abi/test_older_header", "the C ABI: a program built against an older header", &older),
        ("abi/test_newer_header", "the C ABI: structs newer than the library", &header),
    ];
    std::fs::create_dir_all(out.join("abi")).map_err(|e| e.to_string())?;
    let mut grinds = Vec::new();
    for (name, what, include) in suites {
        let binary = out.join(name);
        gcc(&root.join(format!("tests/c/{name}.c")), include, &lib, &binary)?;
        let env = |cmd: &mut Command| {
            cmd.env("LD_LIBRARY_PATH", &lib)
                .env("UFORM_TEST_DIR", &scratch)
                .env("UFORM_TEST_MODEL_DIR", &model_dir)
                .env("UFORM_TEST_REFERENCE", &reference)
                .env("UFORM_TEST_TRAIN_REFERENCE", &train_reference)
                .env("UFORM_TEST_TRAIN_DDP", &ddp)
                .env("UFORM_TEST_FAMILIES", &families)
                .env("UFORM_TEST_FAMILIES_REFERENCE", &families_reference)
                .env("UFORM_TEST_IMAGES", &images)
                .env("UFORM_TEST_IMAGES_REFERENCE", &images_reference);
        };
        let mut native = Command::new(&binary);
        env(&mut native);
        status(native, what)?;
        let mut grind = Command::new("valgrind");
        grind.args([
            "--quiet",
            "--leak-check=full",
            "--show-leak-kinds=definite,indirect,possible",
            "--errors-for-leak-kinds=definite,indirect,possible",
            "--error-exitcode=3",
        ]);
        grind
            .arg(format!("--suppressions={}", root.join("tests/c/valgrind.supp").display()))
            .arg(&binary)
            .env("UFORM_TEST_NO_PROCESSES", "1")
            .env("UFORM_TEST_ENCODE_ROWS", "3") // a few reference texts: valgrind runs the encoder ~50x slower
            .env("UFORM_TEST_TRAIN_STEPS", "1"); // and the trainer: the fixture's first step on two pairs
        env(&mut grind);
        grind.env("UFORM_TEST_TINY_MODEL_DIR", &tiny);
        if matches!(name, "test_train" | "test_train_mesh" | "test_bad_input" | "abi/test_older_header") {
            grind.env("UFORM_TEST_MODEL_DIR", &tiny);
        }
        grinds.push((grind, format!("{what} under valgrind")));
    }
    two_at_a_time(grinds)?;
    if super::left_to_packages("the C consumers (CMake, pkg-config, the trainer across processes)", "c") {
        return Ok(());
    }
    consumers(&out)
}

/// Runs `runs` two at a time, each one's output shown when it ends, and fails naming every run that failed.
/// Valgrind runs all of a program's threads on one core, so on these 2-core machines two suites under it take the
/// time of one.
fn two_at_a_time(runs: Vec<(Command, String)>) -> Result<(), String> {
    let queue = std::sync::Mutex::new(runs.into_iter());
    let failures = std::sync::Mutex::new(Vec::new());
    std::thread::scope(|s| {
        for _ in 0..2 {
            s.spawn(|| loop {
                let next = queue.lock().unwrap_or_else(|p| p.into_inner()).next();
                let Some((mut cmd, what)) = next else { break };
                let started = std::time::Instant::now();
                let result = cmd.output();
                let mut failures = failures.lock().unwrap_or_else(|p| p.into_inner());
                eprintln!("+ {cmd:?}");
                took(started);
                match result {
                    Ok(out) => {
                        eprint!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
                        if !out.status.success() {
                            failures.push(format!("{what} failed with {}", out.status));
                        }
                    }
                    Err(e) => failures.push(format!("cannot run {what}: {e}")),
                }
            });
        }
    });
    let failures = failures.into_inner().unwrap_or_else(|p| p.into_inner());
    if failures.is_empty() {
        Ok(())
    } else {
        Err(failures.join("; "))
    }
}

/// `cargo xtask bench overhead`, the C part: builds libuform (release) and, with one set of gcc flags, the no-op
/// library bench/c/noop.c and the benchmark bench/c/overhead.c; runs it (its detail goes to stderr) and returns its
/// line `overhead c: noop_ns=N capabilities_ns=N drain_ns=N capabilities/noop=R drain/noop=R`.
pub fn overhead() -> Result<String, String> {
    apt_install(&[&CORE_BUILD[..], &["gcc"]].concat())?;
    cargo(&["build", "--quiet", "--release", "-p", "uform-c"])?;
    let root = root();
    let lib = root.join("target/release");
    let out = root.join("target/c-bench");
    std::fs::create_dir_all(&out).map_err(|e| format!("cannot create {}: {e}", out.display()))?;
    // The same flags for the no-op library and the benchmark; -fPIC -shared only make the library a library.
    let flags = ["-std=c99", "-O2", "-Wall", "-Wextra", "-Werror", "-pedantic"];
    let noop = out.join("libuform_bench_noop.so");
    let mut cc = Command::new("gcc");
    cc.args(flags).args(["-fPIC", "-shared"]).arg(root.join("bench/c/noop.c")).arg("-o").arg(&noop);
    status(cc, "gcc (the no-op library)")?;
    let binary = out.join("overhead");
    let mut cc = Command::new("gcc");
    cc.args(flags)
        .arg(root.join("bench/c/overhead.c"))
        .arg("-I")
        .arg(root.join("generated/c"))
        .arg("-L")
        .arg(&lib)
        .arg("-L")
        .arg(&out)
        .args(["-luform", "-luform_bench_noop", "-o"])
        .arg(&binary);
    status(cc, "gcc (the overhead benchmark)")?;
    let library_path = format!("{}:{}", lib.display(), out.display());
    eprintln!("+ LD_LIBRARY_PATH={library_path} {}", binary.display());
    let run = Command::new(&binary)
        .env("LD_LIBRARY_PATH", &library_path)
        .stderr(std::process::Stdio::inherit())
        .output()
        .map_err(|e| format!("cannot run the C overhead benchmark: {e}"))?;
    if !run.status.success() {
        return Err(format!("the C overhead benchmark failed with {}", run.status));
    }
    let stdout = String::from_utf8_lossy(&run.stdout);
    let line = stdout.lines().find(|l| l.starts_with("overhead c: ")).map(str::to_string);
    line.ok_or_else(|| format!("the C overhead benchmark printed no `overhead c:` line: {stdout:?}"))
}

/// `cargo xtask bench uniffi` (and the `uniffi-c` row of `cargo xtask bench overhead`): what the uniffi scaffolding
/// costs on the Rust side, from C. Builds libuform_uniffi (release) and bench/c/uniffi_overhead.c against the Swift
/// FFI header, runs it (its detail goes to stderr) and returns its line
/// `overhead uniffi-c: noop_ns=N capabilities_ns=N drain_ns=N capabilities/noop=R drain/noop=R clone_ns=N`.
pub fn uniffi_overhead() -> Result<String, String> {
    apt_install(&[&CORE_BUILD[..], &["gcc"]].concat())?;
    cargo(&["build", "--quiet", "--release", "-p", "uform-uniffi"])?;
    let root = root();
    let lib = root.join("target/release");
    let out = root.join("target/c-bench");
    std::fs::create_dir_all(&out).map_err(|e| format!("cannot create {}: {e}", out.display()))?;
    let binary = out.join("uniffi_overhead");
    let mut cc = Command::new("gcc");
    cc.args(["-std=c99", "-O2", "-Wall", "-Wextra", "-Werror"])
        .arg(root.join("bench/c/uniffi_overhead.c"))
        .arg("-I")
        .arg(root.join("generated/swift/Sources/UFormFFI"))
        .arg("-L")
        .arg(&lib)
        .args(["-luform_uniffi", "-o"])
        .arg(&binary);
    status(cc, "gcc (the uniffi overhead benchmark)")?;
    eprintln!("+ LD_LIBRARY_PATH={} {}", lib.display(), binary.display());
    let run = Command::new(&binary)
        .env("LD_LIBRARY_PATH", &lib)
        .stderr(std::process::Stdio::inherit())
        .output()
        .map_err(|e| format!("cannot run the uniffi overhead benchmark: {e}"))?;
    if !run.status.success() {
        return Err(format!("the uniffi overhead benchmark failed with {}", run.status));
    }
    let stdout = String::from_utf8_lossy(&run.stdout);
    let line = stdout.lines().find(|l| l.starts_with("overhead uniffi-c: ")).map(str::to_string);
    line.ok_or_else(|| format!("the uniffi overhead benchmark printed no `overhead uniffi-c:` line: {stdout:?}"))
}

fn gcc(src: &Path, include: &Path, lib: &Path, out: &Path) -> Result<(), String> {
    let mut cmd = Command::new("gcc");
    cmd.args(SUITE_FLAGS)
        .arg(src)
        .arg("-I")
        .arg(include)
        .arg("-L")
        .arg(lib)
        .arg("-luform")
        .arg("-lm")
        .arg("-o")
        .arg(out);
    status(cmd, "gcc")
}

/// Each rank's view of the DDP fixtures, for tests/c/test_train_mesh.c: `out`/ddp, its UFORM_TEST_TRAIN_DDP.
fn ddp_fixtures(out: &Path) -> Result<PathBuf, String> {
    let root = root();
    let ddp = out.join("ddp");
    std::fs::create_dir_all(&ddp).map_err(|e| e.to_string())?;
    for world in [2, 4] {
        for rank in 0..world {
            let mut flatten = Command::new("python3");
            flatten
                .arg(root.join("tests/c/flatten_train_reference.py"))
                .arg(root.join(format!("tests/fixtures/train/ddp{world}.json")))
                .arg(ddp.join(format!("ddp{world}-rank{rank}.txt")))
                .args(["--rank", &rank.to_string()]);
            status(flatten, "flattening the DDP fixtures")?;
        }
    }
    Ok(ddp)
}

/// Installs into a prefix, then builds and runs the two consumers against it, and the trainer across processes
/// (tests/c/test_train_mesh.c) with the prefix's pkg-config flags.
pub(super) fn consumers(out: &Path) -> Result<(), String> {
    let root = root();
    let prefix = out.join("prefix");
    let _ = std::fs::remove_dir_all(&prefix);
    crate::install::install(&prefix, "debug")?;
    let consumer = root.join("tests/c/consumer");
    // CMake: find_package(uform) and both imported targets.
    let build = out.join("cmake-build");
    let _ = std::fs::remove_dir_all(&build);
    let prefix_arg = format!("-DCMAKE_PREFIX_PATH={}", prefix.display());
    run_in(
        &root,
        "cmake",
        &[
            "-S",
            &consumer.display().to_string(),
            "-B",
            &build.display().to_string(),
            &prefix_arg,
            "-DCMAKE_BUILD_TYPE=Debug",
        ],
    )?;
    run_in(&root, "cmake", &["--build", &build.display().to_string()])?;
    let lib = prefix.join("lib");
    for exe in ["consumer_shared", "consumer_static"] {
        let mut cmd = Command::new(build.join(exe));
        cmd.env("LD_LIBRARY_PATH", &lib);
        status(cmd, exe)?;
    }
    // pkg-config: the flags it prints build a working program.
    let pkg = Command::new("pkg-config")
        .args(["--cflags", "--libs", "uform"])
        .env("PKG_CONFIG_PATH", lib.join("pkgconfig"))
        .output()
        .map_err(|e| format!("cannot run pkg-config: {e}"))?;
    if !pkg.status.success() {
        return Err(format!("pkg-config does not know uform: {}", String::from_utf8_lossy(&pkg.stderr)));
    }
    let flags = String::from_utf8_lossy(&pkg.stdout).to_string();
    let exe = out.join("consumer_pkgconfig");
    let mut cc = Command::new("gcc");
    cc.arg("-std=c99")
        .arg("-Wall")
        .arg("-Werror")
        .arg(consumer.join("main.c"))
        .args(flags.split_whitespace())
        .arg("-o")
        .arg(&exe);
    status(cc, "gcc with pkg-config flags")?;
    let mut cmd = Command::new(&exe);
    cmd.env("LD_LIBRARY_PATH", &lib);
    status(cmd, "the pkg-config consumer")?;
    // The trainer across processes, as a user's program gets it: uform.h and libuform from the prefix alone (the
    // test's own suite.h includes <uform.h>, and no -I names the repository's header), its peers spawned natively.
    let exe = out.join("test_train_mesh_installed");
    let mut cc = Command::new("gcc");
    cc.args(SUITE_FLAGS)
        .arg(root.join("tests/c/test_train_mesh.c"))
        .args(flags.split_whitespace())
        .arg("-lm")
        .arg("-o")
        .arg(&exe);
    status(cc, "gcc with pkg-config flags (the trainer across processes)")?;
    let scratch = out.join("mesh-scratch");
    std::fs::create_dir_all(&scratch).map_err(|e| e.to_string())?;
    let mut cmd = Command::new(&exe);
    cmd.env("LD_LIBRARY_PATH", &lib)
        .env("UFORM_TEST_DIR", &scratch)
        .env("UFORM_TEST_MODEL_DIR", test_model_dir()?)
        .env("UFORM_TEST_TRAIN_DDP", ddp_fixtures(out)?);
    status(cmd, "the trainer across processes against the installed prefix")
}

#[cfg(test)]
mod tests {
    /// Builds and runs the C overhead benchmark: `cargo test -p xtask -- --ignored c_overhead_line`.
    #[test]
    #[ignore = "builds libuform in release and runs a benchmark"]
    fn c_overhead_line() {
        let line = super::overhead().unwrap();
        let fields: Vec<(&str, f64)> = line
            .strip_prefix("overhead c: ")
            .unwrap()
            .split(' ')
            .map(|f| f.split_once('=').map(|(k, v)| (k, v.parse::<f64>().unwrap())).unwrap())
            .collect();
        let names: Vec<&str> = fields.iter().map(|(k, _)| *k).collect();
        assert_eq!(names, ["noop_ns", "capabilities_ns", "drain_ns", "capabilities/noop", "drain/noop"], "{line}");
        assert!(fields.iter().all(|(_, v)| *v > 0.0), "{line}");
    }
}
