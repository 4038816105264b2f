//! Compiles the CUDA backend (`cuda/`) with nvcc when the `cuda` feature is
//! on. nvcc is taken from $NVCC, then $CUDA_HOME/bin, then PATH; the build
//! says which it chose and fails with instructions when there is none.
//! Without the feature nothing is built here and the library runs on the CPU.

use std::env;
use std::path::{Path, PathBuf};
use std::process::Command;

/// SASS for Ampere (A100, A10/RTX 30xx), Ada (L4/RTX 40xx) and Hopper
/// (H100/H200), plus compute_90 PTX so newer GPUs can JIT-compile.
const GENCODES: [&str; 5] = [
    "arch=compute_80,code=sm_80",
    "arch=compute_86,code=sm_86",
    "arch=compute_89,code=sm_89",
    "arch=compute_90,code=sm_90",
    "arch=compute_90,code=compute_90",
];

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-changed=cuda");
    println!("cargo:rerun-if-env-changed=NVCC");
    println!("cargo:rerun-if-env-changed=CUDA_HOME");
    println!("cargo:rerun-if-env-changed=C2P_CUDA_ARCHS");
    // nvcc reads it itself (extra flags, e.g. -D switches for experiments).
    println!("cargo:rerun-if-env-changed=NVCC_APPEND_FLAGS");
    if env::var_os("CARGO_FEATURE_CUDA").is_none() {
        return;
    }
    let nvcc = find_nvcc().unwrap_or_else(|| {
        panic!(
            "\n\nc2prover: the `cuda` feature needs nvcc, and none was found in $NVCC, $CUDA_HOME/bin or PATH.\n\
             Install the CUDA toolkit, or the pinned nvcc from PyPI with\n    scripts/install-cuda.sh DIR\n\
             and then\n    export CUDA_HOME=DIR/nvidia/cu13 PATH=DIR/nvidia/cu13/bin:$PATH\n\
             or build without `--features cuda` for the CPU backend.\n\n"
        )
    });
    let cuda_home = nvcc
        .parent()
        .and_then(Path::parent)
        .map(Path::to_path_buf)
        .expect("nvcc lives in <cuda>/bin");
    println!("cargo:warning=c2prover: compiling cuda/ with {}", nvcc.display());

    let mut build = cc::Build::new();
    build
        .cuda(true)
        .cudart("static")
        // cc turns Cargo's debug info into nvcc's -G, which disables device
        // optimisation (100x slower kernels): keep line info only.
        .debug(false)
        .flag("-lineinfo")
        .flag("-std=c++17")
        .flag("-O3")
        .flag("-Xcompiler")
        .flag("-Wall")
        .flag("-Werror=all-warnings");
    for gencode in gencodes() {
        build.flag("-gencode").flag(&gencode);
    }
    let mut sources: Vec<PathBuf> = std::fs::read_dir("cuda/api")
        .expect("cuda/api exists")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "cu"))
        .collect();
    sources.sort();
    build.files(&sources);
    env::set_var("NVCC", &nvcc);
    build.compile("c2prover_cuda");

    // The PyPI toolkit keeps libraries in <cuda>/lib; a full toolkit in
    // <cuda>/lib64 or targets/x86_64-linux/lib.
    for dir in ["lib", "lib64", "targets/x86_64-linux/lib"] {
        let path = cuda_home.join(dir);
        if path.exists() {
            println!("cargo:rustc-link-search=native={}", path.display());
        }
    }
    println!("cargo:rustc-link-lib=static=cudart_static");
    println!("cargo:rustc-link-lib=dylib=stdc++");
    println!("cargo:rustc-link-lib=dylib=dl");
    println!("cargo:rustc-link-lib=dylib=rt");
    println!("cargo:rustc-link-lib=dylib=pthread");
}

/// All of GENCODES, or SASS for just the architectures in $C2P_CUDA_ARCHS
/// (e.g. `90` or `80,90`): a faster build and smaller binaries for one
/// known GPU.
fn gencodes() -> Vec<String> {
    match env::var("C2P_CUDA_ARCHS") {
        Ok(archs) if !archs.trim().is_empty() => archs
            .split(',')
            .map(|a| format!("arch=compute_{0},code=sm_{0}", a.trim()))
            .collect(),
        _ => GENCODES.iter().map(|g| g.to_string()).collect(),
    }
}

fn find_nvcc() -> Option<PathBuf> {
    let runs = |p: &Path| {
        Command::new(p)
            .arg("--version")
            .output()
            .is_ok_and(|o| o.status.success())
    };
    if let Some(p) = env::var_os("NVCC").map(PathBuf::from) {
        return runs(&p).then_some(p);
    }
    if let Some(home) = env::var_os("CUDA_HOME") {
        let p = Path::new(&home).join("bin/nvcc");
        if runs(&p) {
            return Some(p);
        }
    }
    env::var_os("PATH").and_then(|paths| env::split_paths(&paths).map(|d| d.join("nvcc")).find(|p| runs(p)))
}
