#[test]
fn the_real_idl_loads() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../idl/uform.yaml");
    match uform_codegen::load(&path) {
        Ok(api) => assert!(api.items.len() >= 13),
        Err(d) => panic!("{d}"),
    }
}
