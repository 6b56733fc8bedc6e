//! `cargo xtask test [LANGUAGE...]`: every test in every language. Each language's runner lives in its own file
//! and installs what it needs on a fresh machine.

mod c;
mod kotlin;
mod node;
mod python;
mod rust;
mod swift;

const LANGUAGES: [&str; 6] = ["rust", "c", "node", "python", "kotlin", "swift"];

pub fn run(args: &[String]) -> Result<(), String> {
    let chosen: Vec<&str> = if args.is_empty() { LANGUAGES.to_vec() } else { args.iter().map(String::as_str).collect() };
    let mut failed = Vec::new();
    for language in &chosen {
        eprintln!("==> cargo xtask test {language}");
        let result = match *language {
            "rust" => rust::run(),
            "c" => c::run(),
            "node" => node::run(),
            "python" => python::run(),
            "kotlin" => kotlin::run(),
            "swift" => swift::run(),
            other => Err(format!("unknown language `{other}`; choose from {}", LANGUAGES.join(", "))),
        };
        if let Err(e) = result {
            eprintln!("<== {language}: FAILED: {e}");
            failed.push(*language);
        } else {
            eprintln!("<== {language}: ok");
        }
    }
    if failed.is_empty() {
        Ok(())
    } else {
        Err(format!("failed: {}", failed.join(", ")))
    }
}

/// `cargo xtask bench overhead`: each binding's per-call overhead table.
pub fn overhead() -> Result<(), String> {
    node::overhead()?;
    python::overhead()
}
