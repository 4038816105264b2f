//! The committed C header is exactly what cbindgen generates from the C API's
//! sources (src/capi, the only place with exported items, so nothing
//! internal needs excluding): a change to the C API without regenerating the
//! header fails here. Set C2P_UPDATE_HEADER=1 to rewrite the header instead.

use std::path::Path;

#[test]
fn committed_header_matches_the_source() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let config = cbindgen::Config::from_file(root.join("cbindgen.toml")).expect("cbindgen.toml");
    let mut generated = Vec::new();
    // cbindgen follows mod.rs's `mod` items into the module's other files.
    cbindgen::Builder::new()
        .with_config(config)
        .with_src(root.join("src/capi/mod.rs"))
        .with_src(root.join("src/error.rs"))
        .generate()
        .expect("cbindgen generates the header")
        .write(&mut generated);
    let path = root.join("include/c2prover.h");
    if std::env::var_os("C2P_UPDATE_HEADER").is_some() {
        std::fs::write(&path, &generated).expect("write header");
        return;
    }
    let committed = std::fs::read(&path).unwrap_or_default();
    assert!(
        committed == generated,
        "include/c2prover.h differs from the generated header; run C2P_UPDATE_HEADER=1 cargo test --test header"
    );
}
