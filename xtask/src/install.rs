//! `cargo xtask install --prefix DIR`. (Filled in by the C library work.)

pub fn run(_args: &[String]) -> Result<(), String> {
    Err("`cargo xtask install` is not built yet".into())
}
