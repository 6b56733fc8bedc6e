//! `cargo xtask test python`. (Filled in by the python work.)

pub fn run() -> Result<(), String> {
    eprintln!("no python tests yet");
    Ok(())
}

pub fn overhead() -> Result<(), String> {
    Err("the python overhead benchmark is not built yet".into())
}
