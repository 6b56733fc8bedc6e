fn main() { eprintln!("dispatch benchmark: not written yet"); std::process::exit(1) }
