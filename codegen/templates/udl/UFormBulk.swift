{{ banner }}
//
// The types the UDL declares as coming from `{{ bulk_crate }}` (no such crate): uniffi emits no Swift for them and
// calls the generator's, in F32Matrix.swift and Enums.swift beside this file. Its initialization check calls the
// function below once for that crate.

/// uniffi's initialization check calls this for the types it takes from `{{ bulk_crate }}`: there is nothing to set up.
#if swift(>=5.8)
@_documentation(visibility: private)
#endif
public func {{ ensure_initialized }}() {
}
