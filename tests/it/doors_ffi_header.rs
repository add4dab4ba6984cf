//! WIRE-5: `include/clarion.h` is generated from `src/ffi.rs` by cbindgen
//! and committed; this test fails when the committed header drifts.
//! `CLARION_BLESS_HEADER=1` rewrites it.

use crate::support::{bless, root};

#[test]
fn wire_5_committed_header_matches_a_fresh_generation() {
    let root = root();
    let config = cbindgen::Config::from_file(root.join("cbindgen.toml")).unwrap();
    let mut fresh = Vec::new();
    cbindgen::Builder::new()
        .with_config(config)
        .with_src(root.join("src/ffi.rs"))
        .generate()
        .expect("cbindgen generates the header")
        .write(&mut fresh);
    let fresh = String::from_utf8(fresh).unwrap();
    let committed_path = root.join("include/clarion.h");
    if bless("CLARION_BLESS_HEADER") {
        std::fs::create_dir_all(root.join("include")).unwrap();
        std::fs::write(&committed_path, &fresh).unwrap();
    }
    let committed = std::fs::read_to_string(&committed_path).unwrap_or_default();
    assert!(
        committed == fresh,
        "include/clarion.h differs from a fresh cbindgen generation; \
         run CLARION_BLESS_HEADER=1 cargo test --test it doors_ffi_header and commit it.\n--- fresh ---\n{fresh}"
    );
    for symbol in [
        "clarion_abi_version",
        "clarion_open",
        "clarion_call",
        "clarion_string_free",
        "clarion_close",
        "clarion_last_error",
    ] {
        assert!(fresh.contains(&format!("{symbol}(")), "{symbol} missing");
    }
}
