//! Real PoRep parameters for tests and benchmarks, made as filecoin-proofs'
//! paramcache makes them when none are published for a setup: a random
//! Groth16 setup of the real circuit (`StackedCompound::groth_params`), its
//! `.params` and `.vk` written under filecoin-proofs' own file names. The
//! points are random, so proofs against them convince nobody but a test.

use crate::error::{Error, ErrorKind, Result};
use crate::porep::parameter_files;
use filecoin_proofs::constants::{
    DefaultPieceHasher, SectorShape2KiB, SectorShape8MiB, SECTOR_SIZE_2_KIB, SECTOR_SIZE_8_MIB,
};
use filecoin_proofs_api::RegisteredSealProof;
use std::path::{Path, PathBuf};
use storage_proofs_core::compound_proof::CompoundProof;
use storage_proofs_core::merkle::MerkleTreeTrait;
use storage_proofs_porep::stacked::StackedCompound;

/// Makes (or, when they are there, keeps) the parameters and verifying key
/// of `proof` in `dir`, and returns their paths. filecoin-proofs reads its
/// parameter directory from `FIL_PROOFS_PARAMETER_CACHE` once per process:
/// this sets it to `dir`, and must run before anything else in the process
/// uses filecoin-proofs' settings. Small sector sizes only (2 KiB: ~12
/// minutes on 2 cores).
pub fn generate(proof: RegisteredSealProof, dir: &Path) -> Result<(PathBuf, PathBuf)> {
    std::fs::create_dir_all(dir).map_err(|e| Error::io(dir.display(), e))?;
    std::env::set_var("FIL_PROOFS_PARAMETER_CACHE", dir);
    match u64::from(proof.sector_size()) {
        SECTOR_SIZE_2_KIB => generate_shape::<SectorShape2KiB>(proof),
        SECTOR_SIZE_8_MIB => generate_shape::<SectorShape8MiB>(proof),
        _ => Err(Error::new(
            ErrorKind::Unsupported,
            format!("{proof:?}: random parameters are made here for 2 KiB and 8 MiB sectors only"),
        )),
    }?;
    let (params, vk) = parameter_files(proof, dir)?;
    if !params.is_file() || !vk.is_file() {
        return Err(Error::invalid(format!(
            "filecoin-proofs wrote its parameters elsewhere: its settings were read before \
             FIL_PROOFS_PARAMETER_CACHE was set to {}",
            dir.display()
        )));
    }
    Ok((params, vk))
}

fn generate_shape<Tree: 'static + MerkleTreeTrait>(proof: RegisteredSealProof) -> Result<()> {
    let config = proof.as_v1_config();
    let public_params =
        filecoin_proofs::parameters::public_params::<Tree>(&config).map_err(|e| failed(proof, e))?;
    let mut rng = rand_core::OsRng;
    // Each writes its file when it is missing and reads it otherwise.
    <StackedCompound<Tree, DefaultPieceHasher> as CompoundProof<_, _>>::groth_params(
        Some(&mut rng),
        &public_params,
    )
    .map_err(|e| failed(proof, e))?;
    <StackedCompound<Tree, DefaultPieceHasher> as CompoundProof<_, _>>::verifying_key(
        Some(&mut rng),
        &public_params,
    )
    .map_err(|e| failed(proof, e))?;
    Ok(())
}

fn failed(proof: RegisteredSealProof, e: impl std::fmt::Display) -> Error {
    Error::new(ErrorKind::Io, format!("{proof:?}: making its parameters: {e:#}"))
}
