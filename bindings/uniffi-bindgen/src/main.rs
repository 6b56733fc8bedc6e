//! `uform-uniffi-bindgen <file.udl> swift <out-dir>`: the same generation `cargo xtask codegen` runs,
//! for looking at uniffi's output by hand. The crate config is the `uniffi.toml` next to the UDL, when there is one.

use std::path::Path;
use uform_uniffi_bindgen::{generate, Language};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [udl, language, out] = args.as_slice() else {
        eprintln!("usage: uform-uniffi-bindgen <file.udl> swift <out-dir>");
        std::process::exit(2);
    };
    let language = match language.as_str() {
        "swift" => Language::Swift,
        other => {
            eprintln!("unknown language `{other}`: expected swift (Kotlin has its own binding: cargo xtask codegen)");
            std::process::exit(2);
        }
    };
    let result = (|| -> Result<(), String> {
        let text = std::fs::read_to_string(udl).map_err(|e| format!("cannot read {udl}: {e}"))?;
        let stem = Path::new(udl).file_stem().and_then(|s| s.to_str()).unwrap_or("uform");
        let config = std::fs::read_to_string(Path::new(udl).with_file_name("uniffi.toml")).unwrap_or_default();
        for file in generate(&text, &config, stem, language)? {
            let path = Path::new(out).join(&file.path);
            std::fs::create_dir_all(path.parent().unwrap()).map_err(|e| e.to_string())?;
            std::fs::write(&path, file.contents).map_err(|e| format!("cannot write {}: {e}", path.display()))?;
            println!("{}", path.display());
        }
        Ok(())
    })();
    if let Err(e) = result {
        eprintln!("error: {e}");
        std::process::exit(1);
    }
}
