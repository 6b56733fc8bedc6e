//! `cargo xtask test c`: the C scenario suite (tests/c/test_uform.c) and the bad-input table (tests/c/test_bad_input.c)
//! compiled with gcc against the generated header and linked with libuform, each run natively and under valgrind
//! (zero errors, zero leaks), then a CMake consumer and a pkg-config consumer built against an installed prefix —
//! with the shared and with the static library.

use crate::util::{apt_install, cargo, root, run_in, status};
use std::path::Path;
use std::process::Command;

pub fn run() -> Result<(), String> {
    apt_install(&["libhwloc-dev", "libudev-dev", "pkg-config", "valgrind", "cmake", "gcc", "make"])?;
    cargo(&["build", "--quiet", "-p", "uform-c"])?;
    let root = root();
    let out = root.join("target/c-tests");
    let scratch = out.join("scratch dir é");
    std::fs::create_dir_all(&scratch).map_err(|e| e.to_string())?;
    let lib = root.join("target/debug");
    let header = root.join("generated/c");
    let flags = ["-std=c99", "-Wall", "-Wextra", "-Werror", "-pedantic", "-g"];
    for (name, what) in [("test_uform", "the C suite"), ("test_bad_input", "the C bad-input table")] {
        let binary = out.join(name);
        gcc(&flags, &root.join(format!("tests/c/{name}.c")), &header, &lib, &binary)?;
        let env = |cmd: &mut Command| {
            cmd.env("LD_LIBRARY_PATH", &lib).env("UFORM_TEST_DIR", &scratch);
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
        grind.arg(format!("--suppressions={}", root.join("tests/c/valgrind.supp").display())).arg(&binary).env("UFORM_TEST_NO_PROCESSES", "1");
        env(&mut grind);
        status(grind, &format!("{what} under valgrind"))?;
    }
    consumers(&out)
}

fn gcc(flags: &[&str], src: &Path, include: &Path, lib: &Path, out: &Path) -> Result<(), String> {
    let mut cmd = Command::new("gcc");
    cmd.args(flags).arg(src).arg("-I").arg(include).arg("-L").arg(lib).arg("-luform").arg("-o").arg(out);
    status(cmd, "gcc")
}

/// Installs into a prefix, then builds and runs the two consumers against it.
fn consumers(out: &Path) -> Result<(), String> {
    let root = root();
    let prefix = out.join("prefix");
    let _ = std::fs::remove_dir_all(&prefix);
    crate::install::install(&prefix, "debug")?;
    let consumer = root.join("tests/c/consumer");
    // CMake: find_package(uform) and both imported targets.
    let build = out.join("cmake-build");
    let _ = std::fs::remove_dir_all(&build);
    let prefix_arg = format!("-DCMAKE_PREFIX_PATH={}", prefix.display());
    run_in(&root, "cmake", &["-S", &consumer.display().to_string(), "-B", &build.display().to_string(), &prefix_arg, "-DCMAKE_BUILD_TYPE=Debug"])?;
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
    cc.arg("-std=c99").arg("-Wall").arg("-Werror").arg(consumer.join("main.c")).args(flags.split_whitespace()).arg("-o").arg(&exe);
    status(cc, "gcc with pkg-config flags")?;
    let mut cmd = Command::new(&exe);
    cmd.env("LD_LIBRARY_PATH", &lib);
    status(cmd, "the pkg-config consumer")
}
