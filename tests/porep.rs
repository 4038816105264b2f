//! The whole C2 job (feature `porep`, in progress): the real 2 KiB C1
//! fixtures (tests/fixtures/porep-2kib, made by compat/porep-fixtures)
//! synthesize into their partitions' witnesses through filecoin-proofs' own
//! circuits, and every constraint holds (a·b = c).
#![cfg(feature = "porep")]

use c2prover::porep;

const C1_API: &[u8] = include_bytes!("fixtures/porep-2kib/c1-api.json");

#[test]
fn the_2kib_c1_synthesizes_into_satisfied_partitions() {
    let c1 = porep::parse_c1(C1_API).expect("the fixture parses");
    let witnesses = porep::synthesize_partitions(c1).expect("the fixture synthesizes");
    assert_eq!(witnesses.len(), 1, "2 KiB sectors prove in one partition");
    for (k, w) in witnesses.iter().enumerate() {
        assert!(
            w.aux.len() > 1000 && w.inputs.len() > 1,
            "partition {k}: a circuit"
        );
        assert_eq!(w.a.len(), w.b.len());
        assert_eq!(w.a.len(), w.c.len());
        let unsatisfied = (0..w.a.len()).filter(|&i| w.a[i] * w.b[i] != w.c[i]).count();
        assert_eq!(unsatisfied, 0, "partition {k}: every constraint holds");
    }
}

#[test]
fn a_c1_that_is_not_json_is_an_invalid_argument() {
    for bad in [&b""[..], b"{", b"[]", &C1_API[..C1_API.len() / 2]] {
        let e = porep::parse_c1(bad).expect_err("refused");
        assert_eq!(e.kind, c2prover::ErrorKind::InvalidArgument, "{e}");
    }
}
