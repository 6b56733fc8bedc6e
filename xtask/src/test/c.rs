//! `cargo xtask test c`. (Filled in by the c work.)

pub fn run() -> Result<(), String> {
    eprintln!("no c tests yet");
    Ok(())
}
