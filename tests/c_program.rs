//! C and C++ callers of the shared library: tests/c/prove.c built with
//! -std=c11 -Wall -Wextra -Werror against the committed header, run under
//! AddressSanitizer + UndefinedBehaviorSanitizer and under valgrind; and
//! tests/cpp/supraseal_dlopen.cpp, which dlopen()s the library and proves
//! through the supraseal-compatible symbols. Needs cc, c++ and valgrind
//! (all on the CI image; .ci/run installs them when missing).

use c2prover::testkit::synthetic::Circuit;
use c2prover::testkit::witness_file;
use c2prover::{Fr, Witness};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// target/<profile>, with libc2prover.so built from the current source.
/// `cargo test` builds the library only as an rlib, so the shared library is
/// built here, with this test's profile and features (cargo returns at once
/// when it is up to date).
fn lib_dir() -> PathBuf {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let exe = std::env::current_exe().expect("test executable path");
        let dir = exe
            .parent()
            .and_then(Path::parent)
            .expect("target/<profile>")
            .to_path_buf();
        let mut cargo = Command::new(env!("CARGO"));
        cargo.current_dir(root()).args(["build", "--lib"]);
        if dir.file_name().is_some_and(|n| n == "release") {
            cargo.arg("--release");
        }
        if !cfg!(feature = "supraseal-abi") {
            cargo.arg("--no-default-features");
        }
        if cfg!(feature = "cuda") {
            cargo.args(["--features", "cuda"]);
        }
        if let Some(target) = dir.parent() {
            cargo.env("CARGO_TARGET_DIR", target);
        }
        run(&mut cargo, "cargo build --lib (for libc2prover.so)");
        let so = dir.join("libc2prover.so");
        assert!(so.exists(), "cargo build did not produce {}", so.display());
        dir
    })
    .clone()
}

/// The fixture files prove.c and supraseal_dlopen.cpp read.
fn fixture() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let dir = std::env::temp_dir().join(format!("c2prover-cprog-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let circuits: Vec<Circuit> = (0..2)
            .map(|i| Circuit::porep_like(9, 5, 50 + i).unwrap())
            .collect();
        let params = circuits[0].setup(6);
        let witnesses: Vec<Witness> = circuits.iter().map(Circuit::witness).collect();
        let mut bytes = Vec::new();
        params.write(&mut bytes).unwrap();
        std::fs::write(dir.join("fixture.params"), &bytes).unwrap();
        std::fs::write(dir.join("truncated.params"), &bytes[..bytes.len() / 3]).unwrap();
        let mut wit = Vec::new();
        witness_file::write(&mut wit, &witnesses).unwrap();
        std::fs::write(dir.join("fixture.wit"), wit).unwrap();
        let r: Vec<Fr> = (0..2).map(|i| Fr::from_u64(1000 + i)).collect();
        let s: Vec<Fr> = (0..2).map(|i| Fr::from_u64(2000 + i)).collect();
        let rs: Vec<u8> = r.iter().chain(&s).flat_map(|x| x.to_mont_bytes()).collect();
        std::fs::write(dir.join("rs.bin"), rs).unwrap();
        let assignments: Vec<_> = witnesses.iter().map(Witness::as_assignment).collect();
        let proofs = c2prover::prove(&params, &assignments, &r, &s).unwrap();
        let compressed: Vec<u8> = proofs.iter().flat_map(|p| p.to_compressed()).collect();
        let raw: Vec<u8> = proofs.iter().flat_map(|p| p.to_raw()).collect();
        std::fs::write(dir.join("expected.bin"), compressed).unwrap();
        std::fs::write(dir.join("expected_raw.bin"), raw).unwrap();
        dir
    })
}

fn run(cmd: &mut Command, what: &str) -> String {
    let out = cmd.output().unwrap_or_else(|e| panic!("{what}: cannot run: {e}"));
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.status.success(), "{what} failed ({}):\n{text}", out.status);
    text
}

fn build_c(name: &str, extra: &[&str]) -> PathBuf {
    let exe = std::env::temp_dir().join(format!("c2prover-{name}-{}", std::process::id()));
    let lib = lib_dir();
    let mut cmd = Command::new("cc");
    cmd.args(["-std=c11", "-Wall", "-Wextra", "-Werror", "-g", "-O1"])
        .args(extra)
        .arg("-I")
        .arg(root().join("include"))
        .arg(root().join("tests/c/prove.c"))
        .arg("-o")
        .arg(&exe)
        .arg(lib.join("libc2prover.so"))
        .arg(format!("-Wl,-rpath,{}", lib.display()));
    run(&mut cmd, &format!("compiling tests/c/prove.c ({name})"));
    exe
}

#[test]
fn c_program_under_address_and_undefined_sanitizers() {
    let exe = build_c(
        "asan",
        &[
            "-fsanitize=address,undefined",
            "-fno-sanitize-recover=all",
            "-fno-omit-frame-pointer",
        ],
    );
    let out = run(
        Command::new(&exe)
            .arg(fixture())
            .env("ASAN_OPTIONS", "detect_leaks=1:abort_on_error=0:exitcode=23")
            .env("UBSAN_OPTIONS", "print_stacktrace=1:halt_on_error=1"),
        "prove.c under ASan/UBSan",
    );
    assert!(out.contains("c api: all checks passed"), "{out}");
}

#[test]
fn c_program_under_valgrind() {
    let exe = build_c("plain", &[]);
    let out = run(
        Command::new("valgrind")
            .args([
                "--error-exitcode=33",
                "--leak-check=full",
                "--errors-for-leak-kinds=definite",
                "--show-leak-kinds=definite",
                "--quiet",
            ])
            .arg(&exe)
            .arg(fixture()),
        "prove.c under valgrind (install valgrind if missing)",
    );
    assert!(out.contains("c api: all checks passed"), "{out}");
}

#[test]
fn cpp_program_dlopens_the_supraseal_symbols() {
    let exe = std::env::temp_dir().join(format!("c2prover-dlopen-{}", std::process::id()));
    run(
        Command::new("c++")
            .args(["-std=c++17", "-Wall", "-Wextra", "-Werror", "-O1"])
            .arg(root().join("tests/cpp/supraseal_dlopen.cpp"))
            .arg("-o")
            .arg(&exe)
            .arg("-ldl"),
        "compiling tests/cpp/supraseal_dlopen.cpp",
    );
    let out = run(
        Command::new(&exe)
            .arg(lib_dir().join("libc2prover.so"))
            .arg(fixture()),
        "supraseal_dlopen",
    );
    assert!(out.contains("all checks passed"), "{out}");
}
