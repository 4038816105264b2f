//! What the C API tests share: a small synthetic circuit's parameters on
//! disk with three witnesses, and the C views of them.
#![allow(dead_code)]

use c2prover::capi::native::*;
use c2prover::capi::*;
use c2prover::testkit::synthetic::Circuit;
use c2prover::{Parameters, Witness};
use std::ffi::CString;
use std::path::PathBuf;
use std::ptr::{null, null_mut};
use std::sync::OnceLock;

pub struct Fixture {
    pub path: PathBuf,
    pub params: Parameters,
    pub witnesses: Vec<Witness>,
}

/// A 2^8 synthetic circuit's parameters on disk and three witnesses.
pub fn fixture() -> &'static Fixture {
    static F: OnceLock<Fixture> = OnceLock::new();
    F.get_or_init(|| {
        let circuits: Vec<Circuit> = (0..3)
            .map(|i| Circuit::porep_like(8, 7, 70 + i).unwrap())
            .collect();
        let params = circuits[0].setup(8);
        let dir = std::env::temp_dir().join(format!("c2prover-cabi-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("fixture.params");
        let mut bytes = Vec::new();
        params.write(&mut bytes).unwrap();
        std::fs::write(&path, bytes).unwrap();
        Fixture {
            path,
            params,
            witnesses: circuits.iter().map(Circuit::witness).collect(),
        }
    })
}

pub fn c_path(p: &std::path::Path) -> CString {
    CString::new(p.to_str().unwrap()).unwrap()
}

pub fn assignment(w: &Witness) -> c2p_assignment {
    let a = w.as_assignment();
    c2p_assignment {
        a_aux_density: w.a_aux_density.as_ptr(),
        a_aux_bit_len: a.a_aux_density.bit_len,
        a_aux_popcount: a.a_aux_density.popcount,
        b_inp_density: w.b_inp_density.as_ptr(),
        b_inp_bit_len: a.b_inp_density.bit_len,
        b_inp_popcount: a.b_inp_density.popcount,
        b_aux_density: w.b_aux_density.as_ptr(),
        b_aux_bit_len: a.b_aux_density.bit_len,
        b_aux_popcount: a.b_aux_density.popcount,
        a: w.a.as_ptr().cast(),
        b: w.b.as_ptr().cast(),
        c: w.c.as_ptr().cast(),
        abc_size: w.a.len(),
        inp_assignment_data: w.inputs.as_ptr().cast(),
        inp_assignment_size: w.inputs.len(),
        aux_assignment_data: w.aux.as_ptr().cast(),
        aux_assignment_size: w.aux.len(),
    }
}

pub fn load() -> *mut c2p_params {
    let path = c_path(&fixture().path);
    let mut params = null_mut();
    assert_eq!(c2p_params_load(path.as_ptr(), null(), &mut params), C2P_OK);
    params
}
