//! Seals a 2 KiB sector (StackedDrg2KiBV1_1 unless told) through filecoin-proofs' public
//! API — add piece, pre-commit 1 and 2, commit 1 — and writes its C1 output
//! as JSON in both forms a C2 caller holds:
//!
//! - `c1-api.json`: filecoin-proofs-api's `SealCommitPhase1Output` (what
//!   filecoin-ffi's `SealCommitPhase2` passes on);
//! - `c1-v1.json`: filecoin-proofs' own `SealCommitPhase1Output<Tree>`;
//! - `sector.json`: the sector's identity (miner and prover id, sector id,
//!   ticket, seed, commitments), for the tests that prove and verify it.
//!
//! Every input is fixed (a seeded piece, ticket and seed), so the files are
//! the same on every run. Usage: `c2prover-porep-fixtures [OUT_DIR [PROOF]]`
//! (default `tests/fixtures/porep-2kib` of the main crate, and
//! StackedDrg2KiBV1_1; `tests/fixtures/porep-2kib-synthetic` holds
//! StackedDrg2KiBV1_1_Feat_SyntheticPoRep's).

use anyhow::{ensure, Context, Result};
use filecoin_proofs::constants::SectorShape2KiB;
use filecoin_proofs::types::SealPreCommitOutput;
use filecoin_proofs_api::seal;
use filecoin_proofs_api::{
    ApiFeature, PaddedBytesAmount, RegisteredSealProof, SectorId, UnpaddedBytesAmount,
};
use rand_chacha::ChaCha8Rng;
use rand_core::{RngCore, SeedableRng};
use std::fs::{self, File, OpenOptions};
use std::path::{Path, PathBuf};

const MINER_ID: u64 = 1000;
const SECTOR_ID: u64 = 7;

/// filecoin-ffi's prover id: the miner's ID-address payload (the miner id
/// as an unsigned varint) in a zeroed 32-byte array.
fn prover_id(miner_id: u64) -> [u8; 32] {
    let mut id = [0u8; 32];
    let (mut n, mut at) = (miner_id, 0);
    loop {
        let byte = (n & 0x7f) as u8;
        n >>= 7;
        if n == 0 {
            id[at] = byte;
            return id;
        }
        id[at] = byte | 0x80;
        at += 1;
    }
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn write_json(path: &Path, value: &impl serde::Serialize) -> Result<()> {
    let file = File::create(path).with_context(|| format!("creating {}", path.display()))?;
    serde_json::to_writer(file, value).with_context(|| format!("writing {}", path.display()))
}

fn main() -> Result<()> {
    let out: PathBuf = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "tests/fixtures/porep-2kib".into())
        .into();
    let proof = std::env::args()
        .nth(2)
        .unwrap_or_else(|| "StackedDrg2KiBV1_1".into());
    let proof: RegisteredSealProof = serde_json::from_value(serde_json::json!(proof))
        .with_context(|| format!("{proof:?} is not a seal proof type"))?;
    ensure!(
        u64::from(proof.sector_size()) == 2048,
        "2 KiB proof types only ({proof:?})"
    );
    fs::create_dir_all(&out)?;
    let work = tempfile::tempdir()?;
    let cache = work.path().join("cache");
    fs::create_dir_all(&cache)?;
    let (staged, sealed) = (work.path().join("staged"), work.path().join("sealed"));

    let mut rng = ChaCha8Rng::seed_from_u64(2048);
    let sector_bytes = u64::from(proof.sector_size());
    let piece_bytes = UnpaddedBytesAmount::from(PaddedBytesAmount(sector_bytes));
    let mut piece = vec![0u8; u64::from(piece_bytes) as usize];
    rng.fill_bytes(&mut piece);
    let mut ticket = [0u8; 32];
    rng.fill_bytes(&mut ticket);
    let mut seed = [0u8; 32];
    rng.fill_bytes(&mut seed);
    let prover_id = prover_id(MINER_ID);
    let sector_id = SectorId::from(SECTOR_ID);

    let mut staged_file = OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(true)
        .open(&staged)?;
    let (piece_info, _) = seal::add_piece(proof, &piece[..], &mut staged_file, piece_bytes, &[])?;
    drop(staged_file);
    File::create(&sealed)?;
    let pieces = [piece_info];

    let p1 = seal::seal_pre_commit_phase1(
        proof, &cache, &staged, &sealed, prover_id, sector_id, ticket, &pieces,
    )?;
    let p2 = seal::seal_pre_commit_phase2(p1, &cache, &sealed)?;
    if proof.feature_enabled(ApiFeature::SyntheticPoRep) {
        // lotus does this between pre-commit 2 and commit 1.
        seal::generate_synth_proofs(&cache, &sealed, prover_id, sector_id, ticket, p2.clone(), &pieces)?;
    }
    let c1 = seal::seal_commit_phase1(
        &cache,
        &sealed,
        prover_id,
        sector_id,
        ticket,
        seed,
        p2.clone(),
        &pieces,
    )?;
    let v1 = filecoin_proofs::seal_commit_phase1::<_, SectorShape2KiB>(
        &proof.as_v1_config(),
        &cache,
        &sealed,
        prover_id,
        sector_id,
        ticket,
        seed,
        SealPreCommitOutput {
            comm_r: p2.comm_r,
            comm_d: p2.comm_d,
        },
        &pieces,
    )?;
    ensure!(
        v1.comm_r == c1.comm_r && v1.comm_d == c1.comm_d,
        "the two commit-1 forms disagree on the commitments"
    );

    write_json(&out.join("c1-api.json"), &c1)?;
    write_json(&out.join("c1-v1.json"), &v1)?;
    let sector = serde_json::json!({
        "registered_proof": format!("{proof:?}"),
        "miner_id": MINER_ID,
        "prover_id": hex(&prover_id),
        "sector_id": SECTOR_ID,
        "ticket": hex(&ticket),
        "seed": hex(&seed),
        "comm_r": hex(&p2.comm_r),
        "comm_d": hex(&p2.comm_d),
    });
    write_json(&out.join("sector.json"), &sector)?;
    println!("wrote {}", out.display());
    Ok(())
}
