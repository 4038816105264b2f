//! Learning a units circuit's constraints (`UnitConstraints`: the rows of
//! A, B and C of the common part and of one unit, see `shared_recorder`)
//! from its circuit of one unit, so that a partition needs only its values
//! and a, b, c are products over the rows.
//!
//! That every unit of the whole circuit has the first one's rows is
//! checked, not assumed: rows are kept (`learn`) only once they give back,
//! byte for byte, the a, b, c and densities of a whole partition the
//! recorder made.
//!
//! Rows learned are kept in a file beside the parameters (`RowsFile`,
//! `groth16::constraints_file`): later processes load them (under a second
//! for a 32 GiB PoRep partition's) instead of recording a partition whole
//! and learning (22 s and more). Loaded rows are not checked against a
//! recorded partition (that is the cost saved): a file is trusted as the
//! parameters are, once its digest, structure and sizes hold, and the
//! proofs are verified as always. A bad file is an error naming it and
//! what is wrong; one of another version or shape is learned and recorded
//! anew.
//!
//! Memory: a 32 GiB PoRep partition's rows are those of one challenge (some
//! 40 M terms, about 0.4 GiB with the whole partition's density bitmaps),
//! not of its 18; they stay for the process's life, one set per parameters
//! used, and are not counted in the host budget (a permit held for ever
//! would stop a job larger than the budget from ever running alone).
//! Writing or loading the file holds its bytes (the rows' size) besides,
//! once.

use super::recorder::Capacity;
use crate::error::{Error, Result};
use crate::groth16::constraints::{Matrix, Rows, Sizes, Term, INPUT};
use crate::groth16::{constraints_file, UnitConstraints};
use crate::math::Fr;
use crate::Witness;
use bellperson::{Circuit, ConstraintSystem, Index, LinearCombination, SynthesisError, Variable};
use blst::blst_fr;
use blstrs::Scalar;
use ff::Field;
use once_cell::sync::Lazy;
use std::any::TypeId;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

/// Records the constraints of `one_unit` (the circuit of the first unit
/// alone) and checks them against `whole`, the recorder's witness of the
/// circuit of `units` units. `Err` says why they cannot stand for it.
pub fn learn<C: Circuit<Scalar>>(
    one_unit: C,
    units: usize,
    whole: &Witness,
) -> std::result::Result<UnitConstraints, String> {
    let mut cs = Structure::default();
    cs.alloc_input(|| "one", || Ok(Scalar::ONE))
        .and_then(|_| one_unit.synthesize(&mut cs))
        .map_err(|e| format!("recording one unit: {e}"))?;
    if let Some(why) = cs.refused {
        return Err(why);
    }
    let one = Sizes {
        aux: cs.aux,
        inputs: cs.inputs,
        constraints: cs.rows[0].len(),
    };
    let total = Sizes {
        aux: whole.aux.len(),
        inputs: whole.inputs.len(),
        constraints: whole.a.len().saturating_sub(whole.inputs.len()),
    };
    let (common, unit) = split(one, total, units)
        .ok_or_else(|| format!("{units} units of {total:?} are not a common part and units of {one:?}"))?;
    let coefficients = cs.coefficients.values.into_iter().map(|c| Fr(c.into())).collect();
    let constraints =
        UnitConstraints::new(units, common, unit, coefficients, cs.rows).map_err(|e| e.message)?;
    match constraints.first_difference(whole) {
        None => Ok(constraints),
        Some(why) => Err(why),
    }
}

/// The common part's and a unit's sizes from those of one unit and of
/// `units` units.
fn split(one: Sizes, total: Sizes, units: usize) -> Option<(Sizes, Sizes)> {
    let per_unit = |one: usize, total: usize| {
        let more = total.checked_sub(one)?;
        (units >= 2 && more % (units - 1) == 0).then(|| more / (units - 1))
    };
    let unit = Sizes {
        aux: per_unit(one.aux, total.aux)?,
        inputs: per_unit(one.inputs, total.inputs)?,
        constraints: per_unit(one.constraints, total.constraints)?,
    };
    let common = Sizes {
        aux: one.aux.checked_sub(unit.aux)?,
        inputs: one.inputs.checked_sub(unit.inputs)?,
        constraints: one.constraints.checked_sub(unit.constraints)?,
    };
    Some((common, unit))
}

/// Distinct coefficients, each once: 1 and −1 first (`ONE`, `MINUS_ONE`).
struct Coefficients {
    values: Vec<Scalar>,
    index: HashMap<[u64; 4], u32>,
}

impl Default for Coefficients {
    fn default() -> Coefficients {
        let mut known = Coefficients {
            values: Vec::new(),
            index: HashMap::new(),
        };
        for c in [Scalar::ONE, -Scalar::ONE] {
            known.index_of(&c);
        }
        known
    }
}

impl Coefficients {
    fn index_of(&mut self, c: &Scalar) -> u32 {
        let next = self.values.len() as u32;
        let i = *self.index.entry(blst_fr::from(*c).l).or_insert(next);
        if i == next {
            self.values.push(*c);
        }
        i
    }
}

/// A constraint system that records rows and calls no value closure (as
/// parameter generation does).
#[derive(Default)]
struct Structure {
    inputs: usize,
    aux: usize,
    coefficients: Coefficients,
    rows: [Rows; 3],
    /// Why the rows cannot be kept (too many variables or terms).
    refused: Option<String>,
}

impl Structure {
    fn push(&mut self, m: Matrix, lc: &LinearCombination<Scalar>) {
        let mut terms = Vec::new();
        let variables = lc
            .iter_inputs()
            .map(|(&i, c)| (i, INPUT, c))
            .chain(lc.iter_aux().map(|(&i, c)| (i, 0, c)));
        for (i, kind, c) in variables {
            // A zero coefficient neither adds nor marks a density (as the
            // recorder).
            if bool::from(c.is_zero()) {
                continue;
            }
            match u32::try_from(i) {
                Ok(i) if i < INPUT => terms.push(Term {
                    variable: i | kind,
                    coefficient: self.coefficients.index_of(c),
                }),
                _ => self.refused = Some(format!("variable {i} is past 2^31")),
            }
        }
        if let Err(e) = self.rows[m as usize].push(terms) {
            self.refused = Some(e.message);
        }
    }
}

impl ConstraintSystem<Scalar> for Structure {
    type Root = Self;

    fn alloc<F, A, AR>(&mut self, _: A, _: F) -> std::result::Result<Variable, SynthesisError>
    where
        F: FnOnce() -> std::result::Result<Scalar, SynthesisError>,
        A: FnOnce() -> AR,
        AR: Into<String>,
    {
        self.aux += 1;
        Ok(Variable::new_unchecked(Index::Aux(self.aux - 1)))
    }

    fn alloc_input<F, A, AR>(&mut self, _: A, _: F) -> std::result::Result<Variable, SynthesisError>
    where
        F: FnOnce() -> std::result::Result<Scalar, SynthesisError>,
        A: FnOnce() -> AR,
        AR: Into<String>,
    {
        self.inputs += 1;
        Ok(Variable::new_unchecked(Index::Input(self.inputs - 1)))
    }

    fn enforce<A, AR, LA, LB, LC>(&mut self, _: A, a: LA, b: LB, c: LC)
    where
        A: FnOnce() -> AR,
        AR: Into<String>,
        LA: FnOnce(LinearCombination<Scalar>) -> LinearCombination<Scalar>,
        LB: FnOnce(LinearCombination<Scalar>) -> LinearCombination<Scalar>,
        LC: FnOnce(LinearCombination<Scalar>) -> LinearCombination<Scalar>,
    {
        self.push(Matrix::A, &a(LinearCombination::zero()));
        self.push(Matrix::B, &b(LinearCombination::zero()));
        self.push(Matrix::C, &c(LinearCombination::zero()));
    }

    fn push_namespace<NR, N>(&mut self, _: N)
    where
        NR: Into<String>,
        N: FnOnce() -> NR,
    {
    }

    fn pop_namespace(&mut self) {}

    fn get_root(&mut self) -> &mut Self::Root {
        self
    }
}

/// What the process knows of a circuit type's constraints, by circuit type
/// and units.
#[derive(Clone)]
enum Known {
    Learned(Arc<UnitConstraints>),
    /// A partition is being recorded whole to learn from (the refusals
    /// before it are in its `Claim`).
    Learning,
    /// The rows did not give a recorded witness back so many times (a
    /// malformed C1 output can do that once; a circuit whose units differ
    /// always does).
    Refused(usize),
}

/// Refusals after which a circuit type is no longer tried.
const TRIES: usize = 3;

/// A circuit's shape: its type, its parameters' identifier (one set of
/// parameters proves one set of constraints) and its units.
type Key = (TypeId, String, usize);

static KNOWN: Lazy<Mutex<HashMap<Key, Known>>> = Lazy::new(Default::default);
/// The files rows were loaded from, and the shape each was loaded for.
static LOADED: Lazy<Mutex<HashMap<PathBuf, Key>>> = Lazy::new(Default::default);
/// Files whose rows were forgotten (`forget_loaded`): not loaded again by
/// this process until it records them anew.
static DISTRUSTED: Lazy<Mutex<std::collections::HashSet<PathBuf>>> = Lazy::new(Default::default);

fn distrusted() -> std::sync::MutexGuard<'static, std::collections::HashSet<PathBuf>> {
    DISTRUSTED.lock().unwrap_or_else(|e| e.into_inner())
}
/// Signalled when a learning ends, for the partitions waiting on it.
static LEARNING_ENDED: Condvar = Condvar::new();

fn known() -> std::sync::MutexGuard<'static, HashMap<Key, Known>> {
    KNOWN.lock().unwrap_or_else(|e| e.into_inner())
}

fn key<C: 'static>(parameters: &str, units: usize) -> Key {
    (TypeId::of::<C>(), parameters.to_owned(), units)
}

/// How many circuits' constraints the process has learned.
pub fn learned_count() -> usize {
    known()
        .values()
        .filter(|k| matches!(k, Known::Learned(_)))
        .count()
}

/// Whether partitions of circuits of type `C` take the values path now:
/// their rows are learned, or being learned.
pub fn values_path<C: 'static>(parameters: &str, units: usize) -> bool {
    matches!(
        known().get(&key::<C>(parameters, units)),
        Some(Known::Learned(_) | Known::Learning)
    )
}

/// How a partition of circuits of one shape is synthesized.
pub enum Route {
    /// Values only; a, b, c are products over these rows.
    Learned(Arc<UnitConstraints>),
    /// Recorded whole, then learned from: this partition holds the claim.
    Learn(Claim),
    /// Another partition is learning: values now, the rows once it ends
    /// (`wait_learned`).
    Pending,
    /// Recorded whole: the rows were refused too often.
    Whole,
}

/// The route for a partition of circuits of type `C`; at most one partition
/// at a time learns a shape. A partition that may not record whole
/// (`may_learn` false) never claims the learning: it gets `Whole`.
pub fn route<C: 'static>(parameters: &str, units: usize, may_learn: bool) -> Route {
    let key = key::<C>(parameters, units);
    let mut known = known();
    let refusals = match known.get(&key) {
        Some(Known::Learned(r1cs)) => return Route::Learned(r1cs.clone()),
        Some(Known::Learning) => return Route::Pending,
        Some(Known::Refused(tries)) if *tries >= TRIES => return Route::Whole,
        _ if !may_learn => return Route::Whole,
        Some(Known::Refused(tries)) => *tries,
        None => 0,
    };
    known.insert(key.clone(), Known::Learning);
    Route::Learn(Claim {
        key,
        refusals,
        ended: false,
    })
}

/// The rows another partition is learning, once it ends; `None` when it
/// refused them or gave up, or when `cancelled` is set.
pub fn wait_learned<C: 'static>(
    parameters: &str,
    units: usize,
    cancelled: Option<&AtomicBool>,
) -> Option<Arc<UnitConstraints>> {
    let key = key::<C>(parameters, units);
    let mut known = known();
    loop {
        match known.get(&key) {
            Some(Known::Learned(r1cs)) => return Some(r1cs.clone()),
            Some(Known::Learning) => {}
            _ => return None,
        }
        if cancelled.is_some_and(|c| c.load(Ordering::Relaxed)) {
            return None;
        }
        known = LEARNING_ENDED
            .wait_timeout(known, Duration::from_millis(20))
            .unwrap_or_else(|e| e.into_inner())
            .0;
    }
}

/// Forgets the rows this process loaded from `file`, if it did (a proof
/// over them did not verify): the next partition of their shape learns
/// them from its circuit again, and records them over the file. Whether
/// any were forgotten.
pub fn forget_loaded(file: &Path) -> bool {
    let Some(key) = LOADED.lock().unwrap_or_else(|e| e.into_inner()).remove(file) else {
        return false;
    };
    distrusted().insert(file.to_path_buf());
    let mut known = known();
    if matches!(known.get(&key), Some(Known::Learned(_))) {
        known.remove(&key);
    }
    true
}

/// A partition's claim to learn its shape's rows. Dropped unused (the
/// partition failed or stopped), the shape is left as it was.
pub struct Claim {
    key: Key,
    refusals: usize,
    ended: bool,
}

impl Claim {
    /// Learns the rows from a circuit of one unit and the recorder's
    /// witness of the whole partition (`learn`), and keeps them (and
    /// returns them), or counts a refusal.
    pub fn learn<C: Circuit<Scalar> + 'static>(
        mut self,
        one_unit: C,
        units: usize,
        whole: &Witness,
    ) -> Option<Arc<UnitConstraints>> {
        let learned = match learn(one_unit, units, whole) {
            Ok(r1cs) => {
                log::info!(
                    "constraints of {} recorded: {} terms, {} coefficients, {} MiB",
                    std::any::type_name::<C>(),
                    r1cs.terms(),
                    r1cs.coefficients().len(),
                    r1cs.host_bytes() >> 20
                );
                Known::Learned(Arc::new(r1cs))
            }
            Err(why) => {
                log::warn!("{}: recorded whole again: {why}", std::any::type_name::<C>());
                Known::Refused(self.refusals + 1)
            }
        };
        let rows = match &learned {
            Known::Learned(rows) => Some(rows.clone()),
            _ => None,
        };
        self.end(Some(learned));
        rows
    }

    /// The rows kept in `file`, kept for the process as if learned:
    /// `Ok(Ok(rows))`; `Ok(Err(self))` when there is none to load (the rows
    /// are to be learned); `Err` when it cannot be read, is bad, or is not
    /// of the parameters' sizes `capacity` (the claim ends, the shape left
    /// as it was).
    pub fn load(
        self,
        file: &RowsFile,
        capacity: Capacity,
    ) -> Result<std::result::Result<Arc<UnitConstraints>, Claim>> {
        if distrusted().contains(&file.path) {
            return Ok(Err(self));
        }
        match file.load(self.key.2, capacity) {
            Ok(Some(rows)) => {
                let rows = Arc::new(rows);
                let mut claim = self;
                LOADED
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .insert(file.path.clone(), claim.key.clone());
                claim.end(Some(Known::Learned(rows.clone())));
                Ok(Ok(rows))
            }
            Ok(None) => Ok(Err(self)),
            Err(e) => Err(e),
        }
    }

    fn end(&mut self, known_now: Option<Known>) {
        self.ended = true;
        let mut known = known();
        match known_now {
            Some(k) => known.insert(self.key.clone(), k),
            None => known.remove(&self.key),
        };
        drop(known);
        LEARNING_ENDED.notify_all();
    }
}

/// The file beside a parameters file that keeps the rows of its circuit:
/// `<the parameters file's name>.c2p-r1cs-v<version>`, named inside by the
/// parameters' identifier and the units (`shape`).
#[derive(Clone, Debug)]
pub struct RowsFile {
    pub path: PathBuf,
    pub shape: String,
}

impl RowsFile {
    /// The rows file of the parameters file `params` for circuits of
    /// `units` units of the parameters identified as `parameters`.
    pub fn beside(params: &Path, parameters: &str, units: usize) -> RowsFile {
        let mut name = params.file_name().unwrap_or_default().to_os_string();
        name.push(format!(".c2p-r1cs-v{}", constraints_file::VERSION));
        RowsFile {
            path: params.with_file_name(name),
            shape: format!("{parameters}, {units} units"),
        }
    }

    /// The rows it holds for circuits of `units` units of the parameters'
    /// sizes `capacity`; `None` when there is no such file, or it is of
    /// another version or shape (to be recorded anew).
    fn load(&self, units: usize, capacity: Capacity) -> Result<Option<UnitConstraints>> {
        let begun = Instant::now();
        let named = |e: Error| {
            Error::new(
                e.kind,
                format!(
                    "{}: {} (the constraints recorded beside the parameters; delete it to record them anew)",
                    self.path.display(),
                    e.message
                ),
            )
        };
        match std::fs::metadata(&self.path) {
            Ok(m) if m.is_file() => {}
            Ok(_) => return Err(named(Error::invalid("not a regular file"))),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(Error::io(self.path.display(), e)),
        }
        let bytes = std::fs::read(&self.path).map_err(|e| Error::io(self.path.display(), e))?;
        let expected = constraints_file::Expected {
            shape: &self.shape,
            units,
            aux: capacity.aux,
            inputs: capacity.inputs,
            abc: capacity.constraints,
        };
        let rows = match constraints_file::decode(&bytes, &expected).map_err(named)? {
            constraints_file::Decoded::Rows(rows) => *rows,
            constraints_file::Decoded::Stale(what) => {
                log::info!(
                    "{} holds {what}: the constraints are learned and recorded anew",
                    self.path.display()
                );
                return Ok(None);
            }
        };
        log::info!(
            "constraints loaded from {} in {:.2} s: {} terms",
            self.path.display(),
            begun.elapsed().as_secs_f64(),
            rows.terms()
        );
        Ok(Some(rows))
    }

    /// Writes `rows` into the file: into a new file of its own beside it
    /// (created exclusively, under a name no other writer takes), synced,
    /// then renamed over it, so no reader sees part of one, even after a
    /// crash. A write that fails is logged: the rows stay learned for this
    /// process.
    pub fn store(&self, rows: &UnitConstraints) {
        use std::io::Write;
        let begun = Instant::now();
        let bytes = constraints_file::encode(rows, &self.shape);
        let mut partial = self.path.clone().into_os_string();
        partial.push(format!(
            ".{}-{:016x}.partial",
            std::process::id(),
            rand_core::RngCore::next_u64(&mut rand_core::OsRng)
        ));
        let partial = PathBuf::from(partial);
        let written = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&partial)
            .and_then(|mut file| {
                file.write_all(&bytes)?;
                file.sync_all()
            })
            .and_then(|()| std::fs::rename(&partial, &self.path))
            .and_then(|()| match self.path.parent() {
                Some(dir) => std::fs::File::open(dir)?.sync_all(),
                None => Ok(()),
            });
        match written {
            Ok(()) => {
                distrusted().remove(&self.path);
                log::info!(
                    "constraints recorded into {} ({} MiB) in {:.2} s",
                    self.path.display(),
                    bytes.len() >> 20,
                    begun.elapsed().as_secs_f64()
                )
            }
            Err(e) => {
                let _ = std::fs::remove_file(&partial);
                log::warn!(
                    "the constraints could not be recorded into {} ({e}); learned again by the next process",
                    self.path.display()
                );
            }
        }
    }
}

#[cfg(test)]
impl Claim {
    /// Ends the claim with `rows` learned (what `learn` does with rows that
    /// give the witness back).
    fn keep(mut self, rows: Arc<UnitConstraints>) {
        self.end(Some(Known::Learned(rows)));
    }
}

impl Drop for Claim {
    fn drop(&mut self) {
        if !self.ended {
            let before = (self.refusals > 0).then_some(Known::Refused(self.refusals));
            self.end(before);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A circuit of one unit whose rows cannot stand for a partition of
    /// `units` units (it has no variables at all).
    struct Empty;

    impl Circuit<Scalar> for Empty {
        fn synthesize<CS: ConstraintSystem<Scalar>>(
            self,
            _: &mut CS,
        ) -> std::result::Result<(), SynthesisError> {
            Ok(())
        }
    }

    fn whole() -> Witness {
        Witness {
            a: vec![Fr::default(); 10],
            aux: vec![Fr::default(); 7],
            inputs: vec![Fr::default(); 1],
            ..Witness::default()
        }
    }

    #[test]
    fn one_partition_learns_while_the_others_wait() {
        // A type of its own: the cache is the process's.
        struct Shape;
        let claim = match route::<Shape>("p", 3, true) {
            Route::Learn(claim) => claim,
            _ => panic!("the first partition learns"),
        };
        assert!(
            values_path::<Shape>("p", 3),
            "the others take the values path meanwhile"
        );
        assert!(matches!(route::<Shape>("p", 3, true), Route::Pending));
        assert!(
            matches!(route::<Shape>("q", 3, true), Route::Learn(_)),
            "other parameters, another shape"
        );
        let waiter = std::thread::spawn(|| wait_learned::<Shape>("p", 3, None).is_some());
        // Dropped unused (its partition failed): the waiter gets nothing
        // and the shape is as it was, so the next partition claims it.
        drop(claim);
        assert!(!waiter.join().unwrap());
        assert!(!values_path::<Shape>("p", 3));
        let claim = match route::<Shape>("p", 3, true) {
            Route::Learn(claim) => claim,
            _ => panic!("claimed again"),
        };
        let stop = AtomicBool::new(true);
        assert!(
            wait_learned::<Shape>("p", 3, Some(&stop)).is_none(),
            "a stopped wait ends"
        );
        drop(claim);
    }

    #[test]
    fn a_waiting_partition_gets_the_rows_learned() {
        struct Shape;
        let Route::Learn(claim) = route::<Shape>("p", 2, true) else {
            panic!("the first partition learns");
        };
        // A partition held to its values' memory never claims the learning.
        struct Other;
        assert!(matches!(route::<Other>("p", 2, false), Route::Whole));
        assert!(!values_path::<Other>("p", 2), "nothing claimed");
        let waiting = std::sync::Barrier::new(2);
        let got = std::thread::scope(|scope| {
            let waiter = scope.spawn(|| {
                waiting.wait();
                wait_learned::<Shape>("p", 2, None)
            });
            waiting.wait();
            std::thread::sleep(Duration::from_millis(50));
            let (rows, _, _) = crate::testkit::synthetic::unit_constraints(2, 1, 7).unwrap();
            claim.keep(rows);
            waiter.join().unwrap()
        });
        let rows = got.expect("the rows, once learned");
        assert!(matches!(route::<Shape>("p", 2, false), Route::Learned(r) if Arc::ptr_eq(&r, &rows)));
    }

    #[test]
    fn a_rows_file_is_loaded_when_there_and_must_fit_the_parameters() {
        struct Shape;
        let dir = std::env::temp_dir().join(format!("c2p-rows-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = RowsFile::beside(&dir.join("p.params"), "p", 2);
        assert!(file.path.ends_with("p.params.c2p-r1cs-v1"));
        let (rows, _, _) = crate::testkit::synthetic::unit_constraints(2, 1, 7).unwrap();
        let total = rows.total();
        let fits = Capacity {
            constraints: rows.abc_len(),
            inputs: total.inputs,
            aux: total.aux,
        };
        let claim = |route| match route {
            Route::Learn(claim) => claim,
            _ => panic!("nothing known yet: learned or loaded"),
        };
        // No file: the claim comes back, to learn.
        let Ok(Err(c)) = claim(route::<Shape>("p", 2, true)).load(&file, fits) else {
            panic!("no file, no rows");
        };
        drop(c);
        file.store(&rows);
        // Of other sizes than the parameters': refused, nothing kept.
        let other = Capacity {
            aux: fits.aux + 1,
            ..fits
        };
        let e = claim(route::<Shape>("p", 2, true))
            .load(&file, other)
            .map(|_| ())
            .unwrap_err();
        assert_eq!(e.kind, crate::ErrorKind::SizeMismatch, "{}", e.message);
        assert!(!values_path::<Shape>("p", 2));
        let loaded = match claim(route::<Shape>("p", 2, true)).load(&file, fits) {
            Ok(Ok(loaded)) => loaded,
            _ => panic!("the rows stored"),
        };
        assert_eq!(*loaded, *rows);
        assert!(matches!(route::<Shape>("p", 2, false), Route::Learned(r) if Arc::ptr_eq(&r, &loaded)));
        // Rows whose proofs did not verify are forgotten and their file
        // not loaded again: learned, until recorded anew.
        assert!(forget_loaded(&file.path));
        assert!(!forget_loaded(&file.path), "once");
        assert!(!values_path::<Shape>("p", 2));
        match claim(route::<Shape>("p", 2, true)).load(&file, fits) {
            Ok(Err(c)) => drop(c),
            Ok(Ok(_)) => panic!("a forgotten file is not loaded again"),
            Err(e) => panic!("{e:?}"),
        }
        file.store(&rows);
        assert!(matches!(
            claim(route::<Shape>("p", 2, true)).load(&file, fits),
            Ok(Ok(_))
        ));
        // Unwritable: logged, nothing written, no panic.
        let nowhere = RowsFile::beside(&dir.join("no/such/dir/p.params"), "p", 2);
        nowhere.store(&rows);
        assert!(!nowhere.path.exists());
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn rows_refused_three_times_are_no_longer_tried() {
        struct Shape;
        for refusals in 0..TRIES {
            match route::<Shape>("p", 3, true) {
                Route::Learn(claim) => assert!(claim.learn(Empty, 3, &whole()).is_none()),
                _ => panic!("try {refusals} learns"),
            }
            assert!(!values_path::<Shape>("p", 3), "refused: recorded whole");
        }
        assert!(matches!(route::<Shape>("p", 3, true), Route::Whole));
        assert_eq!(wait_learned::<Shape>("p", 3, None).map(|_| ()), None);
    }
}
