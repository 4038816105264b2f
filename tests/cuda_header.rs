//! The CUDA backend's one header (cuda/include/c2p_cuda.h) and the Rust
//! extern block that mirrors it (src/backend/gpu/cuda/sys.rs) declare the same entry
//! points, in the same order: a function added on one side only fails here
//! (the .cu files include the header, so nvcc checks the definitions).

use std::path::Path;

/// The `c2p_cuda_*` names declared as functions in `text`, in order: a name
/// followed by `(` after `fn ` (Rust) or after a return type (C).
fn declared(text: &str, rust: bool) -> Vec<String> {
    let mut names = Vec::new();
    for line in text.lines() {
        let line = line.trim_start();
        if line.starts_with("//") || line.starts_with("*") {
            continue;
        }
        let Some(at) = line.find("c2p_cuda_") else {
            continue;
        };
        let rest = &line[at..];
        let end = rest
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .unwrap_or(rest.len());
        if !rest[end..].starts_with('(') {
            continue;
        }
        let before = line[..at].trim_end();
        let is_declaration = if rust {
            before.ends_with("fn")
        } else {
            before.ends_with("int") || before.ends_with("char*")
        };
        if is_declaration {
            names.push(rest[..end].to_string());
        }
    }
    names
}

#[test]
fn the_extern_block_mirrors_the_cuda_header() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let header = std::fs::read_to_string(root.join("cuda/include/c2p_cuda.h")).unwrap();
    let rust = std::fs::read_to_string(root.join("src/backend/gpu/cuda/sys.rs")).unwrap();
    let extern_block = &rust[rust.find("extern \"C\" {").expect("an extern block")..];
    let extern_block = &extern_block[..extern_block.find("\n}\n").expect("its end")];
    let in_header = declared(&header, false);
    let in_rust = declared(extern_block, true);
    assert!(in_header.len() >= 20, "the header's entry points: {in_header:?}");
    assert_eq!(
        in_rust, in_header,
        "src/backend/gpu/cuda/sys.rs's extern block against cuda/include/c2p_cuda.h"
    );
}

#[test]
fn every_cuda_entry_point_is_declared_in_the_header() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let header = std::fs::read_to_string(root.join("cuda/include/c2p_cuda.h")).unwrap();
    let in_header = declared(&header, false);
    let mut defined = Vec::new();
    for entry in std::fs::read_dir(root.join("cuda/api")).unwrap() {
        let path = entry.unwrap().path();
        let text = std::fs::read_to_string(&path).unwrap();
        for line in text.lines().filter(|l| l.starts_with("extern \"C\"")) {
            if let Some(name) = declared(line, false).first() {
                defined.push(name.clone());
            }
        }
    }
    defined.sort();
    let mut sorted = in_header.clone();
    sorted.sort();
    assert_eq!(
        defined, sorted,
        "extern \"C\" definitions under cuda/api against the header"
    );
}
