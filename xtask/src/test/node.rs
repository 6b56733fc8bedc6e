//! `cargo xtask test node`. (Filled in by the node work.)

pub fn run() -> Result<(), String> {
    eprintln!("no node tests yet");
    Ok(())
}

pub fn overhead() -> Result<(), String> {
    Err("the node overhead benchmark is not built yet".into())
}
