//! CPU classes and the capability strings. (Contract stub: replaced by the capabilities work.)

use crate::error::{Error, Result};

/// The CPU classes this build can dispatch to and the GPU classes it knows, comma-separated.
pub fn capabilities_compiled() -> String {
    "portable".to_string()
}

/// The CPU classes this machine satisfies and the classes of the GPUs present, comma-separated.
pub fn capabilities_available() -> String {
    "portable".to_string()
}

/// Checks that `cpu_class` (the argument named `argument`) is a known class this CPU can run.
/// Unknown: invalid argument listing the accepted names. Known but not runnable here: unsupported.
pub fn validate_cpu_class(argument: &str, cpu_class: &str) -> Result<&'static str> {
    if cpu_class == "portable" {
        Ok("portable")
    } else {
        Err(Error::invalid_argument(argument, format!("names an unknown CPU class {cpu_class:?}; accepted: portable")))
    }
}
