//! The recorder on several threads at once, for circuits made of a common
//! part followed by *units* of one shape: PoRep's partitions, whose
//! challenges (filecoin-proofs' `challenge_i` namespaces) read only the
//! replica id and the commitments allocated before them.
//!
//! Each thread synthesizes the circuit of its own units only, as the
//! circuit's own code builds it for those units (for PoRep, filecoin-
//! proofs' `StackedCircuit` over a subset of the challenges' vanilla
//! proofs): the common part, then its units. Since units have one shape,
//! a thread's unit k is the whole circuit's unit `owned[k]`, shifted by a
//! whole number of units: each thread writes its units' aux values, inputs
//! and a, b, c straight into the shared vectors at their final places.
//! Every thread computes the common part (its units read it); thread 0
//! records it. The witness is the sequential recorder's, in bellperson's
//! order, with no merge and no second copy.
//!
//! What is checked, since a circuit could break the assumptions: a pass
//! over one unit (counting only, no values; once per circuit type in the
//! process) gives the common part's and a unit's sizes, and every thread's
//! units must have exactly that size, read only the common part and
//! themselves, and be followed by nothing. Otherwise the recording stops
//! with `Dependent`, and the caller records on one thread. What cannot be
//! checked without the whole synthesis is the contract of `circuit_of`: a
//! subset's circuit has the whole circuit's units for those indices, with
//! their values (a unit must not depend on the units left out). filecoin-
//! proofs' challenges read only the common part (`StackedCircuit`), the
//! tests compare with the sequential recorder, and the C2 job verifies
//! its proofs.

use super::recorder::{larger_than, times, Capacity};
use crate::error::{Error, ErrorKind, Result};
use crate::groth16::constraints::Sizes;
use crate::math::Fr;
use crate::Witness;
use bellperson::{Circuit, ConstraintSystem, Index, LinearCombination, SynthesisError, Variable};
use blst::blst_fr;
use blstrs::Scalar;
use ff::Field;
use once_cell::sync::Lazy;
use rayon::prelude::*;
use std::any::TypeId;
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Mutex;

/// Aux allocations between two looks at the cancel flag.
const CANCEL_EVERY: usize = 1 << 14;

/// Why a shared recording did not give a witness.
#[derive(Debug)]
pub enum SharedFailure {
    /// The circuit is not a common part and units of one shape, each
    /// reading only the common part: record it sequentially.
    Dependent(String),
    /// What the sequential recorder would report too (cancelled, larger
    /// than its capacity), or the circuit could not be built.
    Failed(Error),
}

/// Records on `threads` threads the circuit of `units` units that
/// `circuit_of(units)` builds for any ascending subset of them, into
/// vectors of at most `capacity`; `is_unit` names the units' top-level
/// namespaces.
pub fn record_shared<C, F>(
    circuit_of: F,
    units: usize,
    cancelled: Option<&AtomicBool>,
    capacity: Capacity,
    threads: usize,
    is_unit: fn(&str) -> bool,
) -> std::result::Result<Witness, SharedFailure>
where
    C: Circuit<Scalar> + 'static,
    F: Fn(&[usize]) -> Result<C> + Sync,
{
    shared(
        Mode::Witness,
        circuit_of,
        units,
        cancelled,
        capacity,
        threads,
        is_unit,
    )
}

/// A witness's values alone: inputs (ONE first) and aux, in bellperson's
/// order.
#[derive(Debug, PartialEq, Eq)]
pub struct Values {
    pub inputs: Vec<Fr>,
    pub aux: Vec<Fr>,
}

/// `record_shared` computing the values alone, as bellperson's `WitnessCS`
/// does: the constraints are counted, their linear combinations never
/// built. a, b, c and the densities then come from the circuit's recorded
/// constraints (`UnitConstraints`). What a unit reads is not checked here (no
/// linear combination is seen): the recorded constraints were checked
/// against a whole recording.
pub fn values_shared<C, F>(
    circuit_of: F,
    units: usize,
    cancelled: Option<&AtomicBool>,
    capacity: Capacity,
    threads: usize,
    is_unit: fn(&str) -> bool,
) -> std::result::Result<Values, SharedFailure>
where
    C: Circuit<Scalar> + 'static,
    F: Fn(&[usize]) -> Result<C> + Sync,
{
    let witness = shared(
        Mode::Values,
        circuit_of,
        units,
        cancelled,
        capacity,
        threads,
        is_unit,
    )?;
    Ok(Values {
        inputs: witness.inputs,
        aux: witness.aux,
    })
}

/// What the threads compute.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Mode {
    /// The witness as the recorder gives it.
    Witness,
    /// Inputs and aux only (a, b, c and the densities left empty).
    Values,
}

fn shared<C, F>(
    mode: Mode,
    circuit_of: F,
    units: usize,
    cancelled: Option<&AtomicBool>,
    capacity: Capacity,
    threads: usize,
    is_unit: fn(&str) -> bool,
) -> std::result::Result<Witness, SharedFailure>
where
    C: Circuit<Scalar> + 'static,
    F: Fn(&[usize]) -> Result<C> + Sync,
{
    if units < 2 {
        return Err(SharedFailure::Dependent(format!(
            "{units} unit(s): nothing to share"
        )));
    }
    // A shape seen before is tried first: a circuit off it stops at its
    // first unit, and is counted afresh. A shape is kept once a recording
    // with it succeeds.
    let key = (TypeId::of::<C>(), units);
    let seen = lock(&SHAPES).get(&key).copied();
    if let Some(shape) = seen {
        match record_with(
            mode,
            shape,
            &circuit_of,
            units,
            cancelled,
            capacity,
            threads,
            is_unit,
        ) {
            Ok(witness) => return Ok(witness),
            Err(Miss::OffShape(_)) => {
                lock(&SHAPES).remove(&key);
            }
            Err(miss) => return Err(miss.into()),
        }
    }
    let shape = Shape::of(circuit_of(&[0]).map_err(SharedFailure::Failed)?, is_unit)?;
    let witness = record_with(
        mode,
        shape,
        &circuit_of,
        units,
        cancelled,
        capacity,
        threads,
        is_unit,
    )?;
    lock(&SHAPES).insert(key, shape);
    Ok(witness)
}

/// How a recording with a given shape ended without a witness.
#[derive(Debug)]
enum Miss {
    /// The circuit is off the shape (or larger than the capacity with it).
    OffShape(String),
    /// The circuit code failed or panicked: one thread tells why.
    Unshared(String),
    /// Stopped because another thread missed.
    Stopped,
    Failed(Error),
}

impl From<Miss> for SharedFailure {
    fn from(miss: Miss) -> SharedFailure {
        match miss {
            Miss::OffShape(why) | Miss::Unshared(why) => SharedFailure::Dependent(why),
            Miss::Stopped => SharedFailure::Dependent("stopped".into()),
            Miss::Failed(e) => SharedFailure::Failed(e),
        }
    }
}

impl Miss {
    /// Which miss a recording reports when its threads missed differently.
    fn rank(&self) -> u8 {
        match self {
            Miss::Failed(_) => 3,
            Miss::Unshared(_) => 2,
            Miss::OffShape(_) => 1,
            Miss::Stopped => 0,
        }
    }
}

/// The shapes of the circuits recorded so far, by circuit type and units.
static SHAPES: Lazy<Mutex<HashMap<(TypeId, usize), Shape>>> = Lazy::new(Default::default);

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|e| e.into_inner())
}

/// `shared` with the shape known.
#[allow(clippy::too_many_arguments)]
fn record_with<C, F>(
    mode: Mode,
    shape: Shape,
    circuit_of: &F,
    units: usize,
    cancelled: Option<&AtomicBool>,
    capacity: Capacity,
    threads: usize,
    is_unit: fn(&str) -> bool,
) -> std::result::Result<Witness, Miss>
where
    C: Circuit<Scalar>,
    F: Fn(&[usize]) -> Result<C> + Sync,
{
    let total = shape.total(units);
    if total.constraints + total.inputs > capacity.constraints
        || total.inputs > capacity.inputs
        || total.aux > capacity.aux
    {
        // The sequential recorder stops at the capacity and says so.
        return Err(Miss::OffShape(larger_than(capacity).message));
    }
    if cancelled.is_some_and(|c| c.load(Ordering::Relaxed)) {
        return Err(Miss::Failed(Error::new(
            ErrorKind::Cancelled,
            "cancelled before synthesis",
        )));
    }
    let threads = threads_for(units, threads);
    let per_thread = units.div_ceil(threads);
    let out = Outputs::zeroed(total, mode);
    let ends: Vec<std::result::Result<ThreadEnd, Miss>> = std::thread::scope(|scope| {
        let workers: Vec<_> = (0..threads)
            .map(|me| {
                let owned: Vec<usize> = (me * per_thread..((me + 1) * per_thread).min(units)).collect();
                let out = &out;
                scope.spawn(move || -> std::result::Result<ThreadEnd, Miss> {
                    let circuit = circuit_of(&owned).map_err(Miss::Failed)?;
                    Share::new(me, owned, shape, total.inputs, out, cancelled, is_unit).run(circuit)
                })
            })
            .collect();
        workers
            .into_iter()
            .map(|w| {
                // filecoin-proofs' circuit code panics on some malformed
                // vanilla proofs: the sequential recorder reports it.
                w.join().unwrap_or_else(|panic| {
                    out.stop.store(true, Ordering::Relaxed);
                    Err(Miss::Unshared(format!(
                        "the circuit code panicked: {}",
                        crate::error::panic_message(&*panic)
                    )))
                })
            })
            .collect()
    });
    let mut done = Vec::with_capacity(threads);
    let mut worst: Option<Miss> = None;
    for end in ends {
        match end {
            Ok(end) => done.push(end),
            Err(miss) => {
                if !worst.as_ref().is_some_and(|w| w.rank() >= miss.rank()) {
                    worst = Some(miss);
                }
            }
        }
    }
    if let Some(miss) = worst {
        return Err(miss);
    }
    out.into_witness(&done, total).map_err(Miss::Failed)
}

/// The threads that record `units` units as soon as `threads` can: the
/// fewest that take at most as many units each as the busiest of
/// `threads` would (18 challenges on 8 threads: 3 each, on 6 threads; on
/// 4 threads: 5, 5, 5 and 3).
pub fn threads_for(units: usize, threads: usize) -> usize {
    let per_thread = units.div_ceil(threads.clamp(1, units.max(1)));
    units.div_ceil(per_thread.max(1)).max(1)
}

/// The sizes of the common part and of one unit.
#[derive(Clone, Copy, Debug)]
struct Shape {
    common: Sizes,
    unit: Sizes,
}

impl Shape {
    /// Counts a circuit of one unit, calling no closure (as parameter
    /// generation does). That the other units have its shape, and that
    /// nothing follows them, each thread checks as it goes.
    fn of<C: Circuit<Scalar>>(
        circuit: C,
        is_unit: fn(&str) -> bool,
    ) -> std::result::Result<Shape, SharedFailure> {
        let mut tally = Tally {
            is_unit,
            depth: 0,
            counts: Sizes {
                inputs: 1,
                ..Sizes::default()
            },
            starts: Vec::new(),
            after_units: false,
        };
        circuit
            .synthesize(&mut tally)
            .map_err(|e| SharedFailure::Dependent(format!("counting one unit: {e}")))?;
        match tally.starts[..] {
            [start] if !tally.after_units => Ok(Shape {
                common: start,
                unit: tally.counts.minus(start),
            }),
            _ => Err(SharedFailure::Dependent(format!(
                "one unit counted as {:?} (ending at {:?}), not a common part and a unit",
                tally.starts, tally.counts
            ))),
        }
    }

    fn total(&self, units: usize) -> Sizes {
        self.common.plus(self.unit, units)
    }
}

/// A constraint system that only counts, noting where units begin.
struct Tally {
    is_unit: fn(&str) -> bool,
    depth: usize,
    counts: Sizes,
    starts: Vec<Sizes>,
    /// Something at the top level came after a unit began.
    after_units: bool,
}

impl ConstraintSystem<Scalar> for Tally {
    type Root = Self;

    fn alloc<F, A, AR>(&mut self, _: A, _: F) -> std::result::Result<Variable, SynthesisError>
    where
        F: FnOnce() -> std::result::Result<Scalar, SynthesisError>,
        A: FnOnce() -> AR,
        AR: Into<String>,
    {
        self.after_units |= self.depth == 0 && !self.starts.is_empty();
        self.counts.aux += 1;
        Ok(Variable::new_unchecked(Index::Aux(self.counts.aux - 1)))
    }

    fn alloc_input<F, A, AR>(&mut self, _: A, _: F) -> std::result::Result<Variable, SynthesisError>
    where
        F: FnOnce() -> std::result::Result<Scalar, SynthesisError>,
        A: FnOnce() -> AR,
        AR: Into<String>,
    {
        self.after_units |= self.depth == 0 && !self.starts.is_empty();
        self.counts.inputs += 1;
        Ok(Variable::new_unchecked(Index::Input(self.counts.inputs - 1)))
    }

    fn enforce<A, AR, LA, LB, LC>(&mut self, _: A, _: LA, _: LB, _: LC)
    where
        A: FnOnce() -> AR,
        AR: Into<String>,
        LA: FnOnce(LinearCombination<Scalar>) -> LinearCombination<Scalar>,
        LB: FnOnce(LinearCombination<Scalar>) -> LinearCombination<Scalar>,
        LC: FnOnce(LinearCombination<Scalar>) -> LinearCombination<Scalar>,
    {
        self.after_units |= self.depth == 0 && !self.starts.is_empty();
        self.counts.constraints += 1;
    }

    fn push_namespace<NR, N>(&mut self, name: N)
    where
        NR: Into<String>,
        N: FnOnce() -> NR,
    {
        if self.depth == 0 {
            if (self.is_unit)(&name().into()) {
                self.starts.push(self.counts);
            } else {
                self.after_units |= !self.starts.is_empty();
            }
        }
        self.depth += 1;
    }

    fn pop_namespace(&mut self) {
        self.depth = self.depth.saturating_sub(1);
    }

    fn get_root(&mut self) -> &mut Self::Root {
        self
    }
}

/// Field elements written by several threads, each place by one thread
/// only and read back by that thread alone: relaxed atomics (plain loads
/// and stores on the machines we run on) make that safe without locks.
struct Cells(Vec<[AtomicU64; 4]>);

impl Cells {
    fn zeroed(n: usize) -> Cells {
        Cells((0..n).into_par_iter().map(|_| Default::default()).collect())
    }

    fn set(&self, i: usize, value: Scalar) {
        let limbs = blst_fr::from(value).l;
        for (cell, limb) in self.0[i].iter().zip(limbs) {
            cell.store(limb, Ordering::Relaxed);
        }
    }

    fn get(&self, i: usize) -> Scalar {
        let l = self.0[i].each_ref().map(|cell| cell.load(Ordering::Relaxed));
        Scalar::from(blst_fr { l })
    }

    /// The values, in place.
    fn into_frs(self) -> Vec<Fr> {
        self.0
            .into_iter()
            .map(|cells| {
                Fr(blst_fr {
                    l: cells.map(AtomicU64::into_inner),
                })
            })
            .collect()
    }
}

/// The shared vectors, at the circuit's sizes (a, b and c with room for
/// bellperson's input constraints; empty for values alone). The aux
/// densities are marked by any thread (units read the common part's
/// variables).
struct Outputs {
    mode: Mode,
    a: Cells,
    b: Cells,
    c: Cells,
    aux: Cells,
    a_aux: Vec<AtomicBool>,
    b_aux: Vec<AtomicBool>,
    /// Set by a thread that misses: the others stop too.
    stop: AtomicBool,
}

impl Outputs {
    fn zeroed(total: Sizes, mode: Mode) -> Outputs {
        let flags = |n| (0..n).into_par_iter().map(|_| AtomicBool::new(false)).collect();
        let (constraints, marked) = match mode {
            Mode::Witness => (total.constraints + total.inputs, total.aux),
            Mode::Values => (0, 0),
        };
        Outputs {
            mode,
            a: Cells::zeroed(constraints),
            b: Cells::zeroed(constraints),
            c: Cells::zeroed(constraints),
            aux: Cells::zeroed(total.aux),
            a_aux: flags(marked),
            b_aux: flags(marked),
            stop: AtomicBool::new(false),
        }
    }

    /// The witness, with bellperson's `input · 0 = 0` constraint per input
    /// (b and c are left zero).
    fn into_witness(self, ends: &[ThreadEnd], total: Sizes) -> Result<Witness> {
        let mut inputs = vec![None; total.inputs];
        let mut b_inp = vec![false; total.inputs];
        for end in ends {
            for &(i, x) in &end.inputs {
                inputs[i] = Some(x);
            }
            for (mark, &set) in b_inp.iter_mut().zip(&end.b_inp) {
                *mark |= set;
            }
        }
        let inputs = inputs
            .into_iter()
            .enumerate()
            .map(|(i, x)| {
                x.ok_or_else(|| Error::new(ErrorKind::Panic, format!("input {i} was computed by no thread")))
            })
            .collect::<Result<Vec<Scalar>>>()?;
        if self.mode == Mode::Witness {
            for (i, &x) in inputs.iter().enumerate() {
                self.a.set(total.constraints + i, x);
            }
        }
        let bits = |flags: &[AtomicBool]| -> Vec<u64> {
            flags
                .par_chunks(64)
                .map(|chunk| {
                    chunk
                        .iter()
                        .enumerate()
                        .filter(|(_, f)| f.load(Ordering::Relaxed))
                        .fold(0u64, |w, (i, _)| w | 1 << i)
                })
                .collect()
        };
        let inp_bits = b_inp
            .chunks(64)
            .map(|chunk| {
                chunk
                    .iter()
                    .enumerate()
                    .filter(|(_, &f)| f)
                    .fold(0u64, |w, (i, _)| w | 1 << i)
            })
            .collect();
        Ok(Witness {
            a_aux_density: bits(&self.a_aux),
            b_inp_density: inp_bits,
            b_aux_density: bits(&self.b_aux),
            a: self.a.into_frs(),
            b: self.b.into_frs(),
            c: self.c.into_frs(),
            inputs: inputs.into_iter().map(|x| Fr(x.into())).collect(),
            aux: self.aux.into_frs(),
            products: None,
        })
    }
}

/// What a thread hands back: its inputs at their final places and the
/// input densities it marked.
struct ThreadEnd {
    inputs: Vec<(usize, Scalar)>,
    b_inp: Vec<bool>,
}

/// Where a thread is in its circuit.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Part {
    /// Before the units: every thread computes it, thread 0 records it.
    Common,
    /// Its k-th unit, the whole circuit's unit `owned[k]`.
    Unit(usize),
    /// Back at the top level after a unit.
    After,
}

/// One thread's constraint system. Indices in its circuit ("local") map to
/// the whole circuit's ("global"): the common part's are the same; a unit's
/// are shifted by whole units.
struct Share<'o> {
    me: usize,
    owned: Vec<usize>,
    shape: Shape,
    out: &'o Outputs,
    cancelled: Option<&'o AtomicBool>,
    is_unit: fn(&str) -> bool,
    depth: usize,
    part: Part,
    /// Local counts so far.
    counts: Sizes,
    /// Where the current unit begins (local indices), and what to add to
    /// its local indices for the whole circuit's.
    unit_start: Sizes,
    shift: Sizes,
    /// The common part's aux values (every thread computes them).
    common_aux: Vec<Scalar>,
    /// Every input this thread computed, by local index, and where it goes.
    inputs: Vec<(usize, Scalar)>,
    /// Input densities, by global index.
    b_inp: Vec<bool>,
    /// Why this thread's circuit is not what `Shape` says, first seen.
    broken: Option<String>,
}

/// One of a thread's counters: aux, inputs or constraints.
#[derive(Clone, Copy)]
enum Kind {
    Aux,
    Input,
    Constraint,
}

impl Kind {
    /// This counter of `sizes`.
    fn of(self, sizes: &Sizes) -> usize {
        match self {
            Kind::Aux => sizes.aux,
            Kind::Input => sizes.inputs,
            Kind::Constraint => sizes.constraints,
        }
    }
}

impl<'o> Share<'o> {
    fn new(
        me: usize,
        owned: Vec<usize>,
        shape: Shape,
        inputs: usize,
        out: &'o Outputs,
        cancelled: Option<&'o AtomicBool>,
        is_unit: fn(&str) -> bool,
    ) -> Share<'o> {
        Share {
            me,
            owned,
            shape,
            out,
            cancelled,
            is_unit,
            depth: 0,
            part: Part::Common,
            counts: Sizes::default(),
            common_aux: Vec::with_capacity(shape.common.aux),
            unit_start: Sizes::default(),
            shift: Sizes::default(),
            inputs: Vec::new(),
            b_inp: vec![false; inputs],
            broken: None,
        }
    }

    fn run<C: Circuit<Scalar>>(mut self, circuit: C) -> std::result::Result<ThreadEnd, Miss> {
        let synthesized = self
            .alloc_input(|| "one", || Ok(Scalar::ONE))
            .and_then(|_| circuit.synthesize(&mut self));
        if self.cancelled.is_some_and(|c| c.load(Ordering::Relaxed)) {
            return Err(Miss::Failed(Error::new(
                ErrorKind::Cancelled,
                "cancelled during synthesis",
            )));
        }
        let expected = self.shape.common.plus(self.shape.unit, self.owned.len());
        if self.broken.is_none() && synthesized.is_ok() && self.counts != expected {
            self.broken = Some(format!(
                "thread {} counted {:?} for {} units, {expected:?} expected",
                self.me,
                self.counts,
                self.owned.len()
            ));
        }
        let miss = match (self.broken.take(), synthesized) {
            (Some(why), _) => Some(Miss::OffShape(why)),
            (None, Ok(())) => None,
            (None, Err(_)) if self.out.stop.load(Ordering::Relaxed) => return Err(Miss::Stopped),
            // The sequential recorder tells what went wrong.
            (None, Err(e)) => Some(Miss::Unshared(format!("synthesis failed: {e}"))),
        };
        if let Some(miss) = miss {
            self.out.stop.store(true, Ordering::Relaxed);
            return Err(miss);
        }
        Ok(ThreadEnd {
            inputs: self.inputs,
            b_inp: self.b_inp,
        })
    }

    fn note_broken(&mut self, why: impl FnOnce() -> String) {
        if self.broken.is_none() {
            self.broken = Some(why());
        }
    }

    /// The whole circuit's index of local index `local` of `kind` where the
    /// current part may read it: in the common part or the current unit.
    fn readable(&self, kind: Kind, local: usize) -> Option<usize> {
        if local < kind.of(&self.shape.common) {
            Some(local)
        } else if matches!(self.part, Part::Unit(_)) && local >= kind.of(&self.unit_start) {
            Some(local + kind.of(&self.shift))
        } else {
            None
        }
    }

    /// Whether this thread records the current part.
    fn records(&self) -> bool {
        matches!(self.part, Part::Unit(_)) || (self.part == Part::Common && self.me == 0)
    }

    /// Σ coefficient · value over `lc`, marking variables of non-zero
    /// coefficients in the given densities (as the sequential recorder).
    fn eval(
        &mut self,
        lc: &LinearCombination<Scalar>,
        mark_inputs: bool,
        mark_aux: Option<&[AtomicBool]>,
    ) -> Scalar {
        let mut sum = Scalar::ZERO;
        for (&local, coeff) in lc.iter_inputs() {
            if bool::from(coeff.is_zero()) {
                continue;
            }
            match (self.readable(Kind::Input, local), self.inputs.get(local)) {
                (Some(i), Some(&(_, x))) => {
                    sum += times(x, coeff);
                    if mark_inputs {
                        self.b_inp[i] = true;
                    }
                }
                _ => self.note_broken(|| {
                    format!("a constraint reads input {local} outside its unit and the common part")
                }),
            }
        }
        for (&local, coeff) in lc.iter_aux() {
            if bool::from(coeff.is_zero()) {
                continue;
            }
            let value = match self.readable(Kind::Aux, local) {
                Some(i) if local < self.shape.common.aux => self.common_aux.get(i).copied().map(|x| (i, x)),
                Some(i) => Some((i, self.out.aux.get(i))),
                None => None,
            };
            let Some((i, x)) = value else {
                self.note_broken(|| {
                    format!("a constraint reads aux variable {local} outside its unit and the common part")
                });
                continue;
            };
            sum += times(x, coeff);
            if let Some(marks) = mark_aux {
                if !marks[i].load(Ordering::Relaxed) {
                    marks[i].store(true, Ordering::Relaxed);
                }
            }
        }
        sum
    }

    /// The global index of the next local index of `kind`, counted; `None`
    /// (and the thread's circuit marked broken) past what `Shape` allows.
    fn next(&mut self, kind: Kind) -> Option<usize> {
        let local = kind.of(&self.counts);
        let after = self.part == Part::After;
        let global = match self.part {
            Part::Common if local < kind.of(&self.shape.common) => Some(local),
            Part::Unit(_)
                if self.depth > 0 && local < kind.of(&self.unit_start) + kind.of(&self.shape.unit) =>
            {
                Some(local + kind.of(&self.shift))
            }
            _ => None,
        };
        match kind {
            Kind::Aux => self.counts.aux += 1,
            Kind::Input => self.counts.inputs += 1,
            Kind::Constraint => self.counts.constraints += 1,
        }
        if global.is_none() {
            self.note_broken(|| {
                format!(
                    "the circuit goes on past its units' shape ({} at local index {local}{})",
                    match kind {
                        Kind::Aux => "an aux variable",
                        Kind::Input => "an input",
                        Kind::Constraint => "a constraint",
                    },
                    if after { ", after the units" } else { "" }
                )
            });
        }
        global
    }
}

impl ConstraintSystem<Scalar> for Share<'_> {
    type Root = Self;

    fn alloc<F, A, AR>(&mut self, _: A, f: F) -> std::result::Result<Variable, SynthesisError>
    where
        F: FnOnce() -> std::result::Result<Scalar, SynthesisError>,
        A: FnOnce() -> AR,
        AR: Into<String>,
    {
        let local = self.counts.aux;
        if local % CANCEL_EVERY == 0
            && (self.cancelled.is_some_and(|c| c.load(Ordering::Relaxed))
                || self.out.stop.load(Ordering::Relaxed))
        {
            return Err(SynthesisError::AssignmentMissing);
        }
        // A circuit off its shape stops at once: the caller records it on
        // one thread.
        let i = self.next(Kind::Aux).ok_or(SynthesisError::AssignmentMissing)?;
        let value = f()?;
        if self.part == Part::Common {
            self.common_aux.push(value);
        }
        if self.records() {
            self.out.aux.set(i, value);
        }
        Ok(Variable::new_unchecked(Index::Aux(local)))
    }

    fn alloc_input<F, A, AR>(&mut self, _: A, f: F) -> std::result::Result<Variable, SynthesisError>
    where
        F: FnOnce() -> std::result::Result<Scalar, SynthesisError>,
        A: FnOnce() -> AR,
        AR: Into<String>,
    {
        let local = self.counts.inputs;
        let i = self.next(Kind::Input).ok_or(SynthesisError::AssignmentMissing)?;
        self.inputs.push((i, f()?));
        Ok(Variable::new_unchecked(Index::Input(local)))
    }

    fn enforce<A, AR, LA, LB, LC>(&mut self, _: A, a: LA, b: LB, c: LC)
    where
        A: FnOnce() -> AR,
        AR: Into<String>,
        LA: FnOnce(LinearCombination<Scalar>) -> LinearCombination<Scalar>,
        LB: FnOnce(LinearCombination<Scalar>) -> LinearCombination<Scalar>,
        LC: FnOnce(LinearCombination<Scalar>) -> LinearCombination<Scalar>,
    {
        // enforce cannot fail: off its shape, the synthesis runs on to its
        // next allocation, which stops it.
        let Some(k) = self.next(Kind::Constraint) else {
            return;
        };
        if !self.records() || self.out.mode == Mode::Values {
            return;
        }
        let out = self.out;
        let va = self.eval(&a(LinearCombination::zero()), false, Some(&out.a_aux));
        let vb = self.eval(&b(LinearCombination::zero()), true, Some(&out.b_aux));
        let vc = self.eval(&c(LinearCombination::zero()), false, None);
        out.a.set(k, va);
        out.b.set(k, vb);
        out.c.set(k, vc);
    }

    fn push_namespace<NR, N>(&mut self, name: N)
    where
        NR: Into<String>,
        N: FnOnce() -> NR,
    {
        if self.depth == 0 {
            let name: String = name().into();
            let unit = match self.part {
                Part::Common => 0,
                Part::Unit(k) => k + 1,
                Part::After => self.owned.len(),
            };
            if !(self.is_unit)(&name) {
                // The common part's own namespaces (replica_id, comm_d, ..).
                if self.part != Part::Common {
                    self.part = Part::After;
                }
            } else if unit < self.owned.len() && self.counts == self.shape.common.plus(self.shape.unit, unit)
            {
                self.part = Part::Unit(unit);
                self.unit_start = self.counts;
                // Owned units ascend from unit 0 on: owned[k] ≥ k.
                self.shift = Sizes::default().plus(self.shape.unit, self.owned[unit] - unit);
            } else {
                self.part = Part::After;
                let counts = self.counts;
                self.note_broken(|| format!("unit {unit} ({name}) begins at {counts:?}"));
            }
        }
        self.depth += 1;
    }

    fn pop_namespace(&mut self) {
        self.depth = self.depth.saturating_sub(1);
    }

    fn get_root(&mut self) -> &mut Self::Root {
        self
    }
}
