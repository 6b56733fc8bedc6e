//! `cargo xtask test [STEP...]`: the lint step (formatting, generated/ up to date, clippy), then every test in
//! every language. Each language's runner lives in its own file
//! and installs what it needs on a fresh machine.

mod c;
mod kotlin;
mod lint;
mod node;
mod packages;
mod python;
mod rust;
mod swift;
mod tiny_model;
mod versions;

/// The Node package installed into target/node/consumer, for `cargo xtask bench encode`.
pub fn node_package() -> Result<std::path::PathBuf, String> {
    node::ensure_node()?;
    node::install_package()
}

/// A venv holding the freshly built uform wheel (target/py-test-venv), for `cargo xtask bench encode`.
pub fn python_wheel_venv() -> Result<std::path::PathBuf, String> {
    python::install_wheel()
}

const LANGUAGES: [&str; 8] = ["lint", "rust", "c", "node", "python", "kotlin", "swift", "packages"];

/// Set when this run ends with every step of `packages`: see [`left_to_packages`].
static PACKAGES_FOLLOW: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Whether a language step leaves `part` to the `packages` step of this same run, which repeats it against the
/// packages as users get them (`npm install uform` from the registry, `pip install uform` from the index, the Kotlin
/// consumer against the deployed artifact, the C consumers against the installed prefix, the Swift folder): then
/// the part runs once, there, and this says so in the log. Run alone (`cargo xtask test node`), or with
/// `UFORM_PACKAGES_ONLY` choosing some of packages' steps, a language step runs all of its parts itself.
pub(super) fn left_to_packages(part: &str, step: &str) -> bool {
    let follow = PACKAGES_FOLLOW.load(std::sync::atomic::Ordering::Relaxed);
    if follow {
        eprintln!("{part}: runs once in this run, in `packages` {step}, against the package as users install it");
    }
    follow
}

pub fn run(args: &[String]) -> Result<(), String> {
    let chosen: Vec<&str> =
        if args.is_empty() { LANGUAGES.to_vec() } else { args.iter().map(String::as_str).collect() };
    let all_packages = std::env::var_os("UFORM_PACKAGES_ONLY").is_none();
    PACKAGES_FOLLOW.store(chosen.last() == Some(&"packages") && all_packages, std::sync::atomic::Ordering::Relaxed);
    let mut failed = Vec::new();
    for language in &chosen {
        eprintln!("==> cargo xtask test {language}");
        let started = std::time::Instant::now();
        let result = match *language {
            "lint" => lint::run(chosen.iter().skip_while(|step| **step != "lint").any(|step| *step == "rust")),
            "rust" => rust::run(),
            "c" => c::run(),
            "node" => node::run(),
            "python" => python::run(),
            "kotlin" => kotlin::run(),
            "swift" if left_to_packages("the Swift package and its check", "swiftpm") => Ok(()),
            "swift" => swift::run(),
            "packages" => packages::run(),
            other => Err(format!("unknown language `{other}`; choose from {}", LANGUAGES.join(", "))),
        };
        if let Err(e) = result {
            eprintln!("<== {language}: FAILED after {:.0} s: {e}", started.elapsed().as_secs_f64());
            failed.push(*language);
        } else {
            eprintln!("<== {language}: ok ({:.0} s)", started.elapsed().as_secs_f64());
        }
    }
    if failed.is_empty() {
        Ok(())
    } else {
        Err(format!("failed: {}", failed.join(", ")))
    }
}

/// `cargo xtask bench overhead`: per-call cost of `capabilitiesCompiled` and of `drain` on an idle executor in each
/// binding, against a bare no-op made with the same binding technology and timed in the same run, as one table.
/// Each language's benchmark prints its own `overhead <language>: ...` line (kept verbatim below the table).
/// `uniffi-c` is the Rust side of Swift's binding, the uniffi scaffolding timed from C; Swift's own row needs a Swift
/// toolchain (`swift run -c release uform-swift-bench` in the package).
pub fn overhead() -> Result<(), String> {
    // Each benchmark also times encodeText of 32 short texts on the test model, beside what returning its matrix costs.
    std::env::set_var("UFORM_TEST_MODEL_DIR", crate::util::test_model_dir()?);
    type Run = fn() -> Result<String, String>;
    let runs: [(&str, Run); 5] = [
        ("c", c::overhead),
        ("uniffi-c", c::uniffi_overhead),
        ("node", node::overhead),
        ("python", python::overhead),
        ("kotlin", kotlin::overhead),
    ];
    let mut lines = Vec::new();
    for (language, run) in runs {
        eprintln!("==> overhead {language}");
        lines.push((language, run()?));
    }
    println!("{}", overhead_table(&lines));
    Ok(())
}

/// `cargo xtask bench uniffi`: the `uniffi-c` row alone (bench/c/uniffi_overhead.c).
pub fn uniffi_overhead() -> Result<(), String> {
    println!("{}", c::uniffi_overhead()?);
    Ok(())
}

/// The table of the benchmarks' result lines (`key=value` pairs after the colon, in any order).
fn overhead_table(lines: &[(&str, String)]) -> String {
    let field = |line: &str, key: &str| -> String {
        line.split_whitespace()
            .find_map(|pair| pair.strip_prefix(key)?.strip_prefix('=').map(str::to_string))
            .unwrap_or_else(|| "?".into())
    };
    let mut out = String::from(
        "binding overhead: ns per call, best of interleaved rounds; each ratio is against that binding's bare no-op, same run;\n\
         32x384 ns: handing back a 32 x 384 float matrix as encodeText hands back its result (C: no copy), next to\n\
         encodeText of 32 short texts on the test model (2 threads, median of 15)\n",
    );
    out.push_str(&format!(
        "{:<8} {:>9} {:>16} {:>8} {:>14} {:>8} {:>11} {:>13}\n",
        "binding", "no-op ns", "capabilities ns", "ratio", "idle drain ns", "ratio", "32x384 ns", "encode 32 ms"
    ));
    for (language, line) in lines {
        out.push_str(&format!(
            "{:<8} {:>9} {:>16} {:>8} {:>14} {:>8} {:>11} {:>13}\n",
            language,
            field(line, "noop_ns"),
            field(line, "capabilities_ns"),
            field(line, "capabilities/noop"),
            field(line, "drain_ns"),
            field(line, "drain/noop"),
            field(line, "matrix_ns"),
            field(line, "encode_ms"),
        ));
    }
    for (_, line) in lines {
        out.push_str(line);
        out.push('\n');
    }
    out.trim_end().to_string()
}
