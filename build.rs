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

/// Variables that change what nvcc makes (see `build_key`).
const NVCC_INPUTS: [&str; 8] = [
    "NVCC_APPEND_FLAGS",
    "NVCC_PREPEND_FLAGS",
    "NVCC_CCBIN",
    "CXX",
    "CXXFLAGS",
    "CRATE_CC_NO_DEFAULTS",
    "TARGET",
    "PATH",
];

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-changed=cuda");
    println!("cargo:rerun-if-env-changed=NVCC");
    println!("cargo:rerun-if-env-changed=CUDA_HOME");
    println!("cargo:rerun-if-env-changed=C2P_CUDA_ARCHS");
    // nvcc and cc read these themselves (nvcc's extra flags and host
    // compiler, cc's C++ compiler and flags). Listed here, not only by cc,
    // because a build that reuses the cached library never runs cc.
    for name in NVCC_INPUTS {
        println!("cargo:rerun-if-env-changed={name}");
    }
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
    println!("cargo:warning=c2prover: cuda/ with {}", nvcc.display());

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
    compile_or_reuse(&build, &nvcc);

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

/// nvcc's output depends on the sources, nvcc and its flags, not on Cargo's
/// profile or features, so the library is kept in the target directory
/// under a hash of those and reused by the next build that would make the
/// same one (CI compiles cuda/ for clippy, the tests and the supraseal
/// benchmark: once now, not three times).
fn compile_or_reuse(build: &cc::Build, nvcc: &Path) {
    const LIB: &str = "libc2prover_cuda.a";
    let out_dir = PathBuf::from(env::var_os("OUT_DIR").expect("Cargo sets OUT_DIR"));
    // Cargo marks its target directory with CACHEDIR.TAG.
    let Some(target) = out_dir.ancestors().find(|d| d.join("CACHEDIR.TAG").is_file()) else {
        build.compile("c2prover_cuda");
        return;
    };
    let cached = target
        .join("cuda-cache")
        .join(format!("{:016x}", build_key(nvcc)));
    if std::fs::copy(cached.join(LIB), out_dir.join(LIB)).is_ok() {
        println!(
            "cargo:warning=c2prover: cuda/ unchanged, reusing {}",
            cached.display()
        );
        println!("cargo:rustc-link-search=native={}", out_dir.display());
        println!("cargo:rustc-link-lib=static=c2prover_cuda");
        return;
    }
    build.compile("c2prover_cuda");
    // A failed copy only costs the next build a compile. Copy, then rename:
    // a concurrent build never sees half a library.
    let partial = cached.join(format!("{LIB}.{}", std::process::id()));
    let stored = std::fs::create_dir_all(&cached)
        .and_then(|()| std::fs::copy(out_dir.join(LIB), &partial))
        .and_then(|_| std::fs::rename(&partial, cached.join(LIB)));
    if stored.is_err() {
        let _ = std::fs::remove_file(&partial);
    }
}

/// FNV-1a over everything nvcc's output depends on: every file under
/// cuda/, this build script (the flags), nvcc's path and version, the host
/// C++ compiler's version, and the variables that change their flags.
fn build_key(nvcc: &Path) -> u64 {
    let mut hash = 0xcbf2_9ce4_8422_2325u64;
    let mut eat = |bytes: &[u8]| {
        for &b in bytes.iter().chain(&[0xff]) {
            hash = (hash ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
        }
    };
    let mut files = Vec::new();
    let mut dirs = vec![PathBuf::from("cuda")];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
            let path = entry.path();
            // Real directories only: a symlink loop must not run forever.
            if entry.file_type().is_ok_and(|t| t.is_dir()) {
                dirs.push(path);
            } else {
                files.push(path);
            }
        }
    }
    files.sort();
    files.push(PathBuf::from("build.rs"));
    for file in &files {
        eat(file.to_string_lossy().as_bytes());
        eat(&std::fs::read(file).unwrap_or_default());
    }
    eat(nvcc.to_string_lossy().as_bytes());
    let version = |tool: &Path| {
        Command::new(tool)
            .arg("--version")
            .output()
            .map(|o| o.stdout)
            .unwrap_or_default()
    };
    eat(&version(nvcc));
    let host_cxx = env::var("NVCC_CCBIN")
        .or_else(|_| env::var("CXX"))
        .unwrap_or_else(|_| "c++".into());
    eat(&version(Path::new(&host_cxx)));
    for name in NVCC_INPUTS.iter().chain(&["C2P_CUDA_ARCHS"]) {
        eat(env::var(name).unwrap_or_default().as_bytes());
    }
    hash
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
