//! `cargo xtask test swift`. (Filled in by the swift work.)

pub fn run() -> Result<(), String> {
    eprintln!("no swift tests yet");
    Ok(())
}
