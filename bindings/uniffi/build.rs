//! Generates the uniffi scaffolding from the committed UDL, so the crate always matches `generated/uniffi/`.
//! The UDL lives outside this crate, hence `_for_crate` with the crate's library name.

fn main() {
    let udl = "../../generated/uniffi/uform.udl";
    println!("cargo:rerun-if-changed={udl}");
    println!("cargo:rerun-if-changed=../../generated/uniffi/glue.rs");
    uniffi::generate_scaffolding_for_crate(udl, "uform_uniffi")
        .expect("uniffi scaffolding from generated/uniffi/uform.udl");
}
