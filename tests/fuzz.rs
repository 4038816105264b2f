//! Fuzzing on stable Rust (bolero's test engine): each target replays its
//! corpus (`tests/__fuzz__/<target>/corpus/`) and then runs random inputs
//! for `C2P_FUZZ_SECONDS` (default 5) seconds. The parsers and the C ABI
//! must answer every input with a result or an error of the kind their
//! documentation gives: never a panic, a crash or another kind.
//!
//! Random bytes rarely get past a file's first check, so each input is
//! also read as edits to a valid file or call (`Choices`): the fuzzer's
//! bytes pick what to change, where and to what.

mod common;

use bolero::check;
use c2prover::capi::native::*;
use c2prover::capi::*;
use c2prover::params::format::Layout;
use c2prover::testkit::synthetic::Circuit;
use c2prover::testkit::witness_file;
use c2prover::{ErrorKind, LoadOptions, Parameters, Witness};
use common::fuzz_time;
use std::ffi::CString;
use std::ptr::{null, null_mut};
use std::sync::OnceLock;

/// The fuzzer's bytes read as choices, zeros once they run out.
struct Choices<'a> {
    bytes: &'a [u8],
}

impl Choices<'_> {
    fn byte(&mut self) -> u8 {
        match self.bytes.split_first() {
            Some((&b, rest)) => {
                self.bytes = rest;
                b
            }
            None => 0,
        }
    }

    fn u32(&mut self) -> u32 {
        u32::from_le_bytes([self.byte(), self.byte(), self.byte(), self.byte()])
    }

    /// A number below `n` (0 when `n` is 0).
    fn below(&mut self, n: usize) -> usize {
        if n == 0 {
            0
        } else {
            self.u32() as usize % n
        }
    }
}

/// A small circuit's parameters and a witness of it.
struct Small {
    file: Vec<u8>,
    witness: Witness,
}

fn small() -> &'static Small {
    static SMALL: OnceLock<Small> = OnceLock::new();
    SMALL.get_or_init(|| {
        let circuit = Circuit::porep_like(6, 3, 4).unwrap();
        let params = circuit.setup(5);
        let mut file = Vec::new();
        params.write(&mut file).unwrap();
        Small {
            file,
            witness: circuit.witness(),
        }
    })
}

/// `valid` with the edits `choices` make: bytes set, counts (the u32s
/// `counts` at their offsets) set, a cut, bytes appended.
fn edited(valid: &[u8], counts: &[usize], choices: &mut Choices) -> Vec<u8> {
    let mut file = valid.to_vec();
    for _ in 0..choices.byte() % 8 {
        match choices.byte() % 4 {
            0 => {
                let at = choices.below(file.len());
                if let Some(b) = file.get_mut(at) {
                    *b = choices.byte();
                }
            }
            1 => {
                let at = counts.get(choices.below(counts.len())).copied().unwrap_or(0);
                let count = choices.u32().to_be_bytes();
                if at + 4 <= file.len() {
                    file[at..at + 4].copy_from_slice(&count);
                }
            }
            2 => file.truncate(choices.below(file.len() + 1)),
            _ => {
                let n = choices.byte() as usize;
                file.extend((0..n).map(|_| choices.byte()));
            }
        }
    }
    file
}

/// A parameters file, as it is or edited, decodes or fails as malformed.
#[test]
fn fuzz_params_parser() {
    let valid = &small().file;
    let layout = Layout::parse(&valid[..]).unwrap();
    let counts: Vec<usize> = layout.sections().iter().map(|s| s.offset - 4).collect();
    check!().with_test_time(fuzz_time()).for_each(|input: &[u8]| {
        let file = edited(valid, &counts, &mut Choices { bytes: input });
        for bytes in [input, &file[..]] {
            if let Err(e) = Parameters::decode(bytes, &LoadOptions::default()) {
                assert_eq!(e.kind, ErrorKind::ParamsFormat, "{e:?}");
            }
        }
    });
}

/// A witness file, as it is or edited, parses or fails as invalid.
#[test]
fn fuzz_witness_file() {
    let mut valid = Vec::new();
    witness_file::write(&mut valid, std::slice::from_ref(&small().witness)).unwrap();
    // n_circuits, then the circuit's n_inputs, n_aux and abc_size (u64 LE;
    // the edits set their low four bytes, big-endian, which is as good).
    let counts = [8, 16, 24, 32];
    check!().with_test_time(fuzz_time()).for_each(|input: &[u8]| {
        let file = edited(&valid, &counts, &mut Choices { bytes: input });
        for bytes in [input, &file[..]] {
            if let Err(e) = witness_file::parse(bytes) {
                assert_eq!(e.kind, ErrorKind::InvalidArgument, "{e:?}");
            }
        }
    });
}

/// Room past each buffer of the C call, so that lengths can grow and
/// pointers move while staying inside memory the caller owns.
const SLACK: usize = 70;

/// One circuit's buffers for the C ABI, with `SLACK` to spare.
struct Buffers {
    a_aux: Vec<u64>,
    b_inp: Vec<u64>,
    b_aux: Vec<u64>,
    a: Vec<[u8; 32]>,
    b: Vec<[u8; 32]>,
    c: Vec<[u8; 32]>,
    inputs: Vec<[u8; 32]>,
    aux: Vec<[u8; 32]>,
}

fn scalars_with_slack(values: &[c2prover::Fr]) -> Vec<[u8; 32]> {
    let mut out: Vec<[u8; 32]> = values.iter().map(|v| v.to_mont_bytes()).collect();
    out.resize(values.len() + SLACK, [0; 32]);
    out
}

fn words_with_slack(words: &[u64]) -> Vec<u64> {
    let mut out = words.to_vec();
    out.resize(words.len() + SLACK.div_ceil(64) + 1, 0);
    out
}

/// `c2p_prove` on a valid call edited by the fuzzer's choices (lengths,
/// popcounts, density words, pointers moved within their buffers, values,
/// the number of circuits, r and s): a status of the documented kinds,
/// never C2P_ERR_PANIC or a crash; and the call as it was proves, and its
/// proof verifies.
#[test]
fn fuzz_c_abi_prove() {
    let small = small();
    let dir = std::env::temp_dir().join(format!("c2prover-fuzz-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("small.params");
    std::fs::write(&path, &small.file).unwrap();
    let c_path = CString::new(path.to_str().unwrap()).unwrap();
    let mut params = null_mut();
    assert_eq!(c2p_params_load(c_path.as_ptr(), null(), &mut params), C2P_OK);
    let w = &small.witness;
    let a = w.as_assignment();
    let allowed = [
        C2P_OK,
        ErrorKind::InvalidArgument as i32,
        ErrorKind::SizeMismatch as i32,
        ErrorKind::NullPointer as i32,
    ];
    check!().with_test_time(fuzz_time()).for_each(|input: &[u8]| {
        let mut choices = Choices { bytes: input };
        let mut bufs = Buffers {
            a_aux: words_with_slack(&w.a_aux_density),
            b_inp: words_with_slack(&w.b_inp_density),
            b_aux: words_with_slack(&w.b_aux_density),
            a: scalars_with_slack(&w.a),
            b: scalars_with_slack(&w.b),
            c: scalars_with_slack(&w.c),
            inputs: scalars_with_slack(&w.inputs),
            aux: scalars_with_slack(&w.aux),
        };
        // Lengths (with the pointer offsets that keep them inside their
        // buffers), popcounts, words and values, picked by the input.
        let mut len = [
            a.a_aux_density.bit_len,
            a.a_aux_density.popcount,
            a.b_inp_density.bit_len,
            a.b_inp_density.popcount,
            a.b_aux_density.bit_len,
            a.b_aux_density.popcount,
            w.a.len(),
            w.inputs.len(),
            w.aux.len(),
        ];
        let mut offset = [0usize; 8];
        let edits = choices.byte() % 6;
        for _ in 0..edits {
            match choices.byte() % 5 {
                0 => {
                    let k = choices.below(len.len());
                    len[k] = choices.below(len[k] + SLACK);
                }
                1 => {
                    let k = choices.below(3);
                    let words = [&mut bufs.a_aux, &mut bufs.b_inp, &mut bufs.b_aux];
                    let at = choices.below(words[k].len());
                    words[k][at] ^= 1 << (choices.byte() % 64);
                }
                2 => {
                    let k = choices.below(5);
                    let vector = [
                        &mut bufs.a,
                        &mut bufs.b,
                        &mut bufs.c,
                        &mut bufs.inputs,
                        &mut bufs.aux,
                    ];
                    let at = choices.below(vector[k].len());
                    let byte = choices.below(32);
                    vector[k][at][byte] = choices.byte();
                }
                3 => {
                    // Bitmaps have at least 3 words to spare, scalars SLACK.
                    let k = choices.below(offset.len());
                    offset[k] = choices.below(if k < 3 { 3 } else { 8 });
                }
                _ => {}
            }
        }
        // A length and its offset stay within the buffer.
        let fit = |len: usize, offset: usize, capacity: usize| len.min(capacity - offset);
        let words_bits = |v: &Vec<u64>, off: usize| (v.len() - off) * 64;
        let assignment = c2p_assignment {
            a_aux_density: bufs.a_aux[offset[0]..].as_ptr(),
            a_aux_bit_len: fit(len[0], 0, words_bits(&bufs.a_aux, offset[0])),
            a_aux_popcount: len[1],
            b_inp_density: bufs.b_inp[offset[1]..].as_ptr(),
            b_inp_bit_len: fit(len[2], 0, words_bits(&bufs.b_inp, offset[1])),
            b_inp_popcount: len[3],
            b_aux_density: bufs.b_aux[offset[2]..].as_ptr(),
            b_aux_bit_len: fit(len[4], 0, words_bits(&bufs.b_aux, offset[2])),
            b_aux_popcount: len[5],
            a: bufs.a[offset[3]..].as_ptr().cast(),
            b: bufs.b[offset[4]..].as_ptr().cast(),
            c: bufs.c[offset[5]..].as_ptr().cast(),
            abc_size: fit(len[6], offset[3].max(offset[4]).max(offset[5]), bufs.a.len()),
            inp_assignment_data: bufs.inputs[offset[6]..].as_ptr().cast(),
            inp_assignment_size: fit(len[7], offset[6], bufs.inputs.len()),
            aux_assignment_data: bufs.aux[offset[7]..].as_ptr().cast(),
            aux_assignment_size: fit(len[8], offset[7], bufs.aux.len()),
        };
        let n_circuits = [1, 1, 0, 2][choices.byte() as usize % 4];
        let circuits = [assignment, assignment];
        let mut rs = [[0u8; 32]; 4];
        for r in rs.iter_mut() {
            r[..31].fill(choices.byte());
        }
        let (r, s) = match choices.byte() % 4 {
            0 => (null(), null()),
            1 => (rs[0].as_ptr(), null()),
            _ => (rs.as_ptr().cast::<u8>(), rs[2..].as_ptr().cast::<u8>()),
        };
        let mut proofs = vec![0u8; 192 * n_circuits];
        let status = c2p_prove(
            params,
            circuits.as_ptr(),
            n_circuits,
            r,
            s,
            null(),
            proofs.as_mut_ptr(),
            proofs.len(),
        );
        assert!(allowed.contains(&status), "status {status}");
        if edits == 0 && n_circuits == 1 && r.is_null() {
            assert_eq!(status, C2P_OK, "the valid call proves");
            let inputs: Vec<[u8; 32]> = w.inputs[1..].iter().map(|v| v.to_mont_bytes()).collect();
            let mut valid = false;
            let verified = c2p_verify(
                params,
                inputs.as_ptr().cast(),
                inputs.len(),
                proofs.as_ptr(),
                &mut valid,
            );
            assert_eq!(verified, C2P_OK);
            assert!(valid, "the valid call's proof verifies");
        }
    });
    c2p_params_free(params);
}
