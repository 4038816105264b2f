//! The parameter loader on good and bad files: every bad file is an error
//! that names what is wrong and where, never a crash or a hang.

use c2prover::params::{evict_cached, format::Layout, load_cached};
use c2prover::testkit::synthetic::Circuit;
use c2prover::{ErrorKind, G1Affine, LoadOptions, Parameters};
use std::path::PathBuf;
use std::sync::Arc;

fn small_params() -> (Parameters, Vec<u8>) {
    let params = Circuit::porep_like(8, 1, 1).unwrap().setup(2);
    let mut bytes = Vec::new();
    params.write(&mut bytes).unwrap();
    (params, bytes)
}

fn temp_file(name: &str, bytes: &[u8]) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("c2prover-params-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(name);
    std::fs::write(&path, bytes).unwrap();
    path
}

fn decode_err(bytes: &[u8]) -> c2prover::Error {
    match Parameters::decode(bytes, &LoadOptions::default()) {
        Ok(_) => panic!("a bad file was accepted"),
        Err(e) => e,
    }
}

#[test]
fn loads_what_it_writes() {
    let (params, bytes) = small_params();
    let path = temp_file("good.params", &bytes);
    let loaded = Parameters::load(
        &path,
        &LoadOptions {
            check_subgroup: true,
            ..Default::default()
        },
    )
    .unwrap();
    assert_eq!(loaded, params);
    let mut again = Vec::new();
    loaded.write(&mut again).unwrap();
    assert_eq!(again, bytes, "write(load(file)) is the file");
    assert_eq!(loaded.domain_size(), 256);
    assert_eq!(loaded.num_inputs(), 9);
}

#[test]
fn empty_and_missing_files() {
    let empty = temp_file("empty.params", &[]);
    let err = Parameters::load(&empty, &LoadOptions::default()).unwrap_err();
    assert_eq!(err.kind, ErrorKind::ParamsFormat);
    assert!(err.message.contains("empty"), "{}", err.message);

    let missing = std::env::temp_dir().join("c2prover-does-not-exist.params");
    let err = Parameters::load(&missing, &LoadOptions::default()).unwrap_err();
    assert_eq!(err.kind, ErrorKind::Io);
    assert!(
        err.message.contains("c2prover-does-not-exist.params"),
        "{}",
        err.message
    );
}

#[test]
fn every_truncation_is_refused() {
    let (_, bytes) = small_params();
    let layout = Layout::parse(&bytes[..]).unwrap();
    let mut cuts = vec![1, 95, 96, 863, 864, 866, 868, bytes.len() / 2, bytes.len() - 1];
    for s in layout.sections() {
        cuts.extend([s.offset - 4, s.offset - 1, s.offset, s.offset + 1, s.end() - 1]);
    }
    for cut in cuts.into_iter().filter(|&c| c < bytes.len()) {
        let err = decode_err(&bytes[..cut]);
        assert_eq!(err.kind, ErrorKind::ParamsFormat, "cut {cut}");
        assert!(err.message.contains("truncated"), "cut {cut}: {}", err.message);
    }
    let mut longer = bytes.clone();
    longer.extend_from_slice(&[0; 5]);
    assert!(decode_err(&longer).message.contains("unexpected bytes"));
}

/// A file that shrinks after the loader opened it (another process
/// rewriting it, a disk going away) is an I/O error naming the file, not a
/// SIGBUS: the loader reads with `pread`, never through a memory map.
#[test]
fn a_file_that_shrinks_during_the_load_is_an_io_error() {
    use c2prover::params::source::FileSource;
    let (_, bytes) = small_params();
    let layout = Layout::parse(&bytes[..]).unwrap();
    for cut in [layout.h.offset + 10, layout.b_g2.end() - 1, 100] {
        let path = temp_file("shrinks.params", &bytes);
        let opened = FileSource::open(&path).unwrap();
        let file = std::fs::OpenOptions::new().write(true).open(&path).unwrap();
        file.set_len(cut as u64).unwrap();
        let err = Parameters::decode_from(&opened, &LoadOptions::default()).unwrap_err();
        assert_eq!(err.kind, ErrorKind::Io, "cut {cut}: {}", err.message);
        assert!(
            err.message.contains("shrinks.params") && err.message.contains("during the load"),
            "cut {cut}: {}",
            err.message
        );
    }
}

/// Loads racing a thread that truncates the file at once: each ends with
/// the parameters (the load read them first), a format error (the file was
/// short when opened) or an I/O error, and the process lives on.
#[test]
fn loads_racing_a_truncation_end_in_a_result() {
    let (params, bytes) = small_params();
    let path = temp_file("racing.params", &bytes);
    for round in 0..40 {
        std::fs::write(&path, &bytes).unwrap();
        let cut = (bytes.len() / 40) * round;
        let loaded = std::thread::scope(|scope| {
            let loading = scope.spawn(|| Parameters::load(&path, &LoadOptions::default()));
            let file = std::fs::OpenOptions::new().write(true).open(&path).unwrap();
            file.set_len(cut as u64).unwrap();
            loading.join().expect("the load returns")
        });
        match loaded {
            Ok(loaded) => assert!(
                loaded.h == params.h && loaded.b_g2 == params.b_g2,
                "round {round}: a load that succeeds read the whole file"
            ),
            Err(e) => assert!(
                matches!(e.kind, ErrorKind::Io | ErrorKind::ParamsFormat),
                "round {round}: {e:?}"
            ),
        }
    }
}

#[test]
fn huge_counts_fail_before_allocating() {
    let (_, mut bytes) = small_params();
    let layout = Layout::parse(&bytes[..]).unwrap();
    let count_at = layout.l.offset - 4;
    bytes[count_at..count_at + 4].copy_from_slice(&u32::MAX.to_be_bytes());
    let err = decode_err(&bytes);
    assert!(
        err.message.contains("section `l` declares 4294967295 points"),
        "{}",
        err.message
    );
}

#[test]
fn inconsistent_counts_are_refused() {
    // Move one point from b_g2 into... nothing: rebuild with a short b_g2.
    let (mut params, _) = small_params();
    params.b_g2.pop();
    let mut bytes = Vec::new();
    params.write(&mut bytes).unwrap();
    assert!(decode_err(&bytes).message.contains("`b_g1` has"));

    let (mut params, _) = small_params();
    params.h.pop();
    let mut bytes = Vec::new();
    params.write(&mut bytes).unwrap();
    assert!(decode_err(&bytes).message.contains("power of two minus one"));
}

#[test]
fn corrupted_points_name_section_index_and_offset() {
    let (_, bytes) = small_params();
    let layout = Layout::parse(&bytes[..]).unwrap();

    // A coordinate changed: off the curve.
    let mut bad = bytes.clone();
    let at = layout.l.point_offset(7);
    bad[at + 40] ^= 1;
    let err = decode_err(&bad);
    assert_eq!(err.kind, ErrorKind::ParamsFormat);
    assert!(
        err.message.contains("section `l`, point 7 at byte offset"),
        "{}",
        err.message
    );
    assert!(err.message.contains(&at.to_string()), "{}", err.message);

    // The compressed flag on an uncompressed point.
    let mut bad = bytes.clone();
    bad[layout.b_g2.point_offset(3)] |= 0x80;
    let err = decode_err(&bad);
    assert!(err.message.contains("section `b_g2`, point 3"), "{}", err.message);

    // The infinity flag with a non-zero coordinate.
    let mut bad = bytes.clone();
    bad[layout.h.point_offset(0)] |= 0x40;
    assert!(decode_err(&bad).message.contains("section `h`, point 0"));

    // A coordinate not below p.
    let mut bad = bytes.clone();
    let at = layout.a.point_offset(2);
    bad[at..at + 48].fill(0x1f);
    assert!(decode_err(&bad).message.contains("section `a`, point 2"));

    // The verifying key.
    let mut bad = bytes.clone();
    bad[100] ^= 0x01;
    assert!(decode_err(&bad).message.contains("beta_g1"));
}

#[test]
fn subgroup_check_on_request() {
    // A point on the curve outside the prime-order subgroup.
    let outsider = (1u8..=255)
        .find_map(|x| {
            let mut enc = [0u8; 48];
            enc[0] = 0x80;
            enc[47] = x;
            G1Affine::from_compressed_unchecked(&enc)
                .ok()
                .filter(|p| !p.in_subgroup())
        })
        .expect("some small x gives a point outside G1");
    let (_, mut bytes) = small_params();
    let layout = Layout::parse(&bytes[..]).unwrap();
    let at = layout.h.point_offset(5);
    bytes[at..at + 96].copy_from_slice(&outsider.to_uncompressed());
    assert!(Parameters::decode(&bytes, &LoadOptions::default()).is_ok());
    let err = Parameters::decode(
        &bytes,
        &LoadOptions {
            check_subgroup: true,
            ..Default::default()
        },
    )
    .unwrap_err();
    assert!(
        err.message.contains("section `h`, point 5") && err.message.contains("subgroup"),
        "{}",
        err.message
    );
}

#[test]
fn cache_shares_loads_and_notices_replaced_files() {
    let (params, bytes) = small_params();
    let path = temp_file("cached.params", &bytes);
    let a = load_cached(&path, &LoadOptions::default()).unwrap();
    let b = load_cached(&path, &LoadOptions::default()).unwrap();
    assert!(Arc::ptr_eq(&a, &b), "second load served from the cache");
    assert_eq!(*a, params);

    assert!(evict_cached(&path));
    let c = load_cached(&path, &LoadOptions::default()).unwrap();
    assert!(!Arc::ptr_eq(&a, &c), "evicted entry reloaded");

    // A different file at the same path (another length) is loaded anew.
    let other = Circuit::porep_like(7, 3, 3).unwrap().setup(4);
    let mut other_bytes = Vec::new();
    other.write(&mut other_bytes).unwrap();
    std::fs::write(&path, &other_bytes).unwrap();
    let d = load_cached(&path, &LoadOptions::default()).unwrap();
    assert_eq!(*d, other);

    // Failures are not cached.
    std::fs::write(&path, &bytes[..100]).unwrap();
    assert!(load_cached(&path, &LoadOptions::default()).is_err());
    std::fs::write(&path, &bytes).unwrap();
    assert_eq!(*load_cached(&path, &LoadOptions::default()).unwrap(), params);
}

/// Sections longer than a write block (2^16 points) and than one parallel
/// group of blocks are written whole and in order.
#[test]
fn long_sections_are_written_in_order() {
    let params = c2prover::testkit::shaped::PorepShape::scaled(18).parameters(3);
    assert!(
        params.h.len() > 1 << 17,
        "the h section spans several groups of blocks"
    );
    let mut bytes = Vec::new();
    params.write(&mut bytes).unwrap();
    let loaded = Parameters::decode(&bytes, &LoadOptions::default()).unwrap();
    assert_eq!(loaded, params);
}
