//! The constraints of circuits whose a, b, c are left to them
//! (`Assignment::products`), on each GPU: uploaded on the first such
//! circuit there and kept while the constraints live (a PoRep job's are
//! kept for the process's life: about 0.4 GiB for 32 GiB sectors), so that
//! a circuit's a, b, c are products on the device from its aux values,
//! which go up for the MSMs anyway.

use super::{unit_products, DeviceAbc, DeviceConstraints, DeviceScalars};
use crate::error::{Error, Result};
use crate::groth16::{Assignment, UnitConstraints};
use crate::math::domain::Domain;
use once_cell::sync::Lazy;
use std::sync::{Arc, Mutex, Weak};

/// The copies made: GPU, whose constraints, the copy.
type Copies = Vec<(usize, Weak<UnitConstraints>, Arc<DeviceConstraints>)>;

static COPIES: Lazy<Mutex<Copies>> = Lazy::new(Default::default);

/// `constraints` on GPU `gpu`, uploaded on first use. Copies of constraints
/// dropped since are freed here (a circuit in flight holds its own `Arc`).
fn on_gpu(gpu: usize, constraints: &Arc<UnitConstraints>) -> Result<Arc<DeviceConstraints>> {
    let mut copies = COPIES.lock().unwrap_or_else(|e| e.into_inner());
    copies.retain(|(_, of, _)| of.strong_count() > 0);
    let made = copies
        .iter()
        .find(|(on, of, _)| *on == gpu && of.as_ptr() == Arc::as_ptr(constraints));
    if let Some((_, _, copy)) = made {
        return Ok(copy.clone());
    }
    let copy = Arc::new(DeviceConstraints::upload(gpu, constraints)?);
    log::debug!(
        "constraints on GPU {gpu}: {} MiB ({} terms)",
        copy.bytes() >> 20,
        constraints.terms()
    );
    copies.push((gpu, Arc::downgrade(constraints), copy.clone()));
    Ok(copy)
}

/// `w`'s a, b, c (left to its constraints) as products on GPU `gpu`, from
/// its aux values there (`aux`) and its inputs.
pub fn products_on_device(
    gpu: usize,
    domain: &Domain,
    w: &Assignment,
    aux: &DeviceScalars,
) -> Result<DeviceAbc> {
    let constraints = w
        .products
        .ok_or_else(|| Error::invalid("a, b, c on the GPU for a witness that gives them"))?;
    let on_gpu = on_gpu(gpu, constraints)?;
    unit_products(gpu, domain, &on_gpu, w.inputs, aux)
}
