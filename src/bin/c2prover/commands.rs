//! The commands that make and check proofs: prove, verify, info, gen-srs.

use super::*;

pub(crate) fn prove(args: ProveArgs) -> Result<(), Error> {
    let (params, witnesses) = match (args.synthetic, &args.params, &args.witness) {
        (Some(log2), _, _) => synthetic(log2, args.circuits.max(1), args.seed)?,
        (None, Some(p), Some(w)) => (load(p)?, witness_file::read(w)?),
        _ => return Err(Error::invalid("give --params and --witness, or --synthetic LOG2")),
    };
    let assignments: Vec<_> = witnesses.iter().map(Witness::as_assignment).collect();
    let (r, s) = c2prover::random_r_s(assignments.len());
    let proofs = step(&format!("proving {} circuit(s)", assignments.len()), || {
        c2prover::prove(&params, &assignments, &r, &s)
    })?;
    let mut all_valid = true;
    for (i, (proof, w)) in proofs.iter().zip(&witnesses).enumerate() {
        let valid = c2prover::verify(&params.vk, &w.inputs[1..], proof)?;
        all_valid &= valid;
        println!(
            "proof {i}: {} {}",
            hex(&proof.to_compressed()),
            if valid { "verified" } else { "INVALID" }
        );
    }
    if let Some(out) = &args.out {
        let bytes: Vec<u8> = proofs
            .iter()
            .flat_map(|p| {
                if args.raw {
                    p.to_raw().to_vec()
                } else {
                    p.to_compressed().to_vec()
                }
            })
            .collect();
        std::fs::write(out, bytes).map_err(|e| Error::io(format!("cannot write {}", out.display()), e))?;
        println!("wrote {} proof(s) to {}", proofs.len(), out.display());
    }
    if all_valid {
        Ok(())
    } else {
        Err(Error::invalid("a proof did not verify"))
    }
}

pub(crate) fn verify(args: VerifyArgs) -> Result<(), Error> {
    let params = load(&args.params)?;
    let witnesses = witness_file::read(&args.witness)?;
    let bytes = std::fs::read(&args.proof)
        .map_err(|e| Error::io(format!("cannot read {}", args.proof.display()), e))?;
    if bytes.len() != witnesses.len() * Proof::COMPRESSED_BYTES {
        return Err(Error::size_mismatch(format!(
            "{} holds {} bytes; {} circuit(s) need {} bytes of compressed proofs",
            args.proof.display(),
            bytes.len(),
            witnesses.len(),
            witnesses.len() * Proof::COMPRESSED_BYTES
        )));
    }
    let mut all_valid = true;
    for (i, (chunk, w)) in bytes
        .chunks_exact(Proof::COMPRESSED_BYTES)
        .zip(&witnesses)
        .enumerate()
    {
        let public: &[Fr] = w.inputs.get(1..).unwrap_or(&[]);
        let valid = c2prover::verify(&params.vk, public, &Proof::from_compressed(chunk)?)?;
        all_valid &= valid;
        println!("proof {i}: {}", if valid { "valid" } else { "INVALID" });
    }
    if all_valid {
        Ok(())
    } else {
        Err(Error::invalid("a proof did not verify"))
    }
}

pub(crate) fn info(args: InfoArgs) -> Result<(), Error> {
    use c2prover::params::source::{FileSource, Source};
    let file = FileSource::open(&args.file)?;
    let layout = Layout::parse(&file)?;
    let domain = layout.h.count + 1;
    println!("file          {} ({} bytes)", args.file.display(), file.len());
    println!("domain        2^{} ({domain})", domain.trailing_zeros());
    println!("inputs        {} (with ONE)", layout.ic.count);
    println!("aux           {}", layout.l.count);
    for s in layout.sections() {
        println!("{:<13} {:>12} points at offset {}", s.name, s.count, s.offset);
    }
    let g1 = 96u64;
    let host = file.len() as u64;
    let per_circuit = 3 * 32 * domain as u64 + (g1 * layout.l.count.max(layout.h.count) as u64);
    println!(
        "memory        parameters {} on the host; proving adds about {} per circuit in flight",
        human(host),
        human(per_circuit)
    );
    if args.check {
        let options = LoadOptions {
            check_subgroup: args.subgroup,
            ..Default::default()
        };
        step("loading: decoding and checking every point", || {
            Parameters::load(&args.file, &options)
        })?;
        println!(
            "check         every point decoded and on its curve{}",
            if args.subgroup { ", in its subgroup" } else { "" }
        );
    }
    Ok(())
}

pub(crate) fn gen_srs(args: GenSrsArgs) -> Result<(), Error> {
    let (params, witnesses) = synthetic(args.log2, args.circuits.max(1), args.seed)?;
    let write_err = |p: &Path, e| Error::io(format!("cannot write {}", p.display()), e);
    let file = std::fs::File::create(&args.params_out).map_err(|e| write_err(&args.params_out, e))?;
    params
        .write(std::io::BufWriter::new(file))
        .map_err(|e| write_err(&args.params_out, e))?;
    let file = std::fs::File::create(&args.witness_out).map_err(|e| write_err(&args.witness_out, e))?;
    witness_file::write(std::io::BufWriter::new(file), &witnesses)
        .map_err(|e| write_err(&args.witness_out, e))?;
    println!(
        "wrote {} and {} ({} circuit(s))",
        args.params_out.display(),
        args.witness_out.display(),
        witnesses.len()
    );
    Ok(())
}
