//! The host memory budget that bounds jobs in flight (backpressure).
//!
//! A job takes a permit for its bytes before it copies the caller's
//! buffers and gives it back when its worker ends (proofs waiting for
//! `finish` hold only their 192 bytes each), so finished-but-uncollected
//! work cannot pile up.

use crate::error::{Error, ErrorKind, Result};
use once_cell::sync::Lazy;
use std::collections::BTreeSet;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Condvar, Mutex, MutexGuard};
use std::time::Duration;

/// Bytes that jobs in flight may hold in host memory.
pub struct Budget {
    state: Mutex<BudgetState>,
    freed: Condvar,
}

struct BudgetState {
    limit: usize,
    used: usize,
    jobs: usize,
    /// Waiting starts are admitted in arrival order: the next ticket to
    /// hand out, and the ticket whose turn it is.
    next_ticket: u64,
    turn: u64,
    /// Tickets whose starts gave up waiting (`acquire_unless`): their turn
    /// is skipped.
    abandoned: BTreeSet<u64>,
}

impl BudgetState {
    /// Moves the turn past tickets whose starts gave up.
    fn skip_abandoned(&mut self) {
        while self.abandoned.remove(&self.turn) {
            self.turn += 1;
        }
    }
}

/// A job's share of the budget, returned on drop.
pub struct Permit {
    budget: &'static Budget,
    bytes: usize,
}

impl Budget {
    /// A budget of `limit` units (bytes for the host budget; any count,
    /// taken first come first served, for other shared resources).
    pub(crate) fn new(limit: usize) -> Budget {
        Budget {
            state: Mutex::new(BudgetState {
                limit,
                used: 0,
                jobs: 0,
                next_ticket: 0,
                turn: 0,
                abandoned: BTreeSet::new(),
            }),
            freed: Condvar::new(),
        }
    }

    fn lock(&self) -> MutexGuard<'_, BudgetState> {
        // The counters stay consistent across a panic elsewhere.
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Takes `bytes` of the budget, waiting for other jobs to end while it
    /// is full, or failing with `Busy` when `wait` is false. Waiting starts
    /// are admitted in the order they arrived (a later, smaller job does not
    /// overtake), and a job larger than the whole budget runs alone (it
    /// waits until nothing else is in flight), so none waits forever.
    pub fn acquire(&'static self, bytes: usize, wait: bool) -> Result<Permit> {
        self.acquire_or_stop(bytes, wait, None)
    }

    /// `acquire` waiting, but giving up with `Cancelled` soon after `stop`
    /// is set (a C2 job cancelled while its partitions wait for memory);
    /// the queue goes on without it.
    pub fn acquire_unless(&'static self, bytes: usize, stop: &AtomicBool) -> Result<Permit> {
        self.acquire_or_stop(bytes, true, Some(stop))
    }

    /// As many units as are free up to `most`, once at least `least` are
    /// (waiting its turn as `acquire_unless` does): a partition's synthesis
    /// takes the cores left beside the others' rather than leave them idle.
    pub fn acquire_some_unless(
        &'static self,
        least: usize,
        most: usize,
        stop: &AtomicBool,
    ) -> Result<Permit> {
        self.acquire_range(least, most.max(least), true, Some(stop))
    }

    fn acquire_or_stop(&'static self, bytes: usize, wait: bool, stop: Option<&AtomicBool>) -> Result<Permit> {
        self.acquire_range(bytes, bytes, wait, stop)
    }

    /// Takes between `least` and `most` (the most that fits), in turn.
    fn acquire_range(
        &'static self,
        least: usize,
        most: usize,
        wait: bool,
        stop: Option<&AtomicBool>,
    ) -> Result<Permit> {
        let bytes = least;
        let mut state = self.lock();
        // What a start would take now: all of `most` when nothing else is in
        // flight (a job larger than the budget runs alone), else what fits.
        let grant = |s: &BudgetState| {
            if s.jobs == 0 {
                return Some(most);
            }
            let free = s.limit.saturating_sub(s.used);
            (free >= least).then(|| free.min(most))
        };
        let nobody_waiting = state.turn == state.next_ticket;
        if let (true, Some(bytes)) = (nobody_waiting, grant(&state)) {
            state.used += bytes;
            state.jobs += 1;
            return Ok(Permit { budget: self, bytes });
        }
        let ticket = state.next_ticket;
        loop {
            if let (true, Some(bytes)) = (state.turn == ticket, grant(&state)) {
                state.turn += 1;
                state.skip_abandoned();
                state.used += bytes;
                state.jobs += 1;
                drop(state);
                // The next waiter may fit too.
                self.freed.notify_all();
                return Ok(Permit { budget: self, bytes });
            }
            if !wait {
                return Err(Error::new(
                    ErrorKind::Busy,
                    format!(
                        "the memory budget is full: {} MiB in use by {} job(s) of {} MiB, this job needs {} MiB",
                        state.used >> 20,
                        state.jobs,
                        state.limit >> 20,
                        bytes >> 20
                    ),
                ));
            }
            if state.next_ticket == ticket {
                state.next_ticket += 1; // in the queue from now on
            }
            if let Some(stop) = stop {
                if stop.load(Ordering::Relaxed) {
                    // Out of the queue: its turn, now or later, passes on.
                    if state.turn == ticket {
                        state.turn += 1;
                        state.skip_abandoned();
                    } else {
                        state.abandoned.insert(ticket);
                    }
                    drop(state);
                    self.freed.notify_all();
                    return Err(Error::new(
                        ErrorKind::Cancelled,
                        "stopped while waiting for its turn in the budget",
                    ));
                }
                state = self
                    .freed
                    .wait_timeout(state, Duration::from_millis(20))
                    .unwrap_or_else(|e| e.into_inner())
                    .0;
                continue;
            }
            state = self.freed.wait(state).unwrap_or_else(|e| e.into_inner());
        }
    }

    /// Sets the limit (bytes); jobs already admitted keep running.
    pub fn set_limit(&self, bytes: usize) {
        self.lock().limit = bytes;
        self.freed.notify_all();
    }

    pub fn limit(&self) -> usize {
        self.lock().limit
    }

    /// Bytes held by jobs in flight, and their number.
    pub fn in_use(&self) -> (usize, usize) {
        let state = self.lock();
        (state.used, state.jobs)
    }

    /// Starts queued, waiting for their turn.
    #[cfg(test)]
    fn waiting(&self) -> u64 {
        let state = self.lock();
        state.next_ticket - state.turn
    }
}

impl Permit {
    /// Units this permit holds.
    pub fn units(&self) -> usize {
        self.bytes
    }

    /// Gives back all but `keep` of the permit's units.
    pub fn shrink_to(&mut self, keep: usize) {
        let given = self.bytes.saturating_sub(keep);
        if given == 0 {
            return;
        }
        self.bytes -= given;
        self.budget.lock().used -= given;
        self.budget.freed.notify_all();
    }
}

impl Drop for Permit {
    fn drop(&mut self) {
        let mut state = self.budget.lock();
        state.used -= self.bytes;
        state.jobs -= 1;
        drop(state);
        self.budget.freed.notify_all();
    }
}

/// The process's host budget: `C2P_HOST_BUDGET` (bytes, or with a K, M, G
/// or T suffix) when set, else half of the machine's physical memory.
pub fn host_budget() -> &'static Budget {
    static BUDGET: Lazy<Budget> = Lazy::new(|| {
        let limit = default_host_budget();
        log::info!("host memory budget for jobs in flight: {} MiB", limit >> 20);
        Budget::new(limit)
    });
    &BUDGET
}

/// The budget's limit unless set otherwise: `C2P_HOST_BUDGET`, else half
/// of physical memory.
pub fn default_host_budget() -> usize {
    crate::config::get()
        .ok()
        .and_then(|c| c.host_budget)
        .unwrap_or_else(|| physical_memory() / 2)
}

/// Physical memory in bytes (16 GiB when the system does not say).
fn physical_memory() -> usize {
    crate::procfs::total_memory().map_or(16 << 30, |bytes| bytes as usize)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    fn leaked(limit: usize) -> &'static Budget {
        Box::leak(Box::new(Budget::new(limit)))
    }

    #[test]
    fn a_full_budget_refuses_or_waits() {
        let budget = leaked(100);
        let first = budget.acquire(60, false).unwrap();
        let second = budget.acquire(40, false).unwrap();
        let err = budget.acquire(1, false).err().unwrap();
        assert_eq!(err.kind, ErrorKind::Busy);
        assert_eq!(budget.in_use(), (100, 2));
        drop(second);
        // A waiting acquire goes through once memory is given back.
        let admitted = Arc::new(AtomicBool::new(false));
        let flag = admitted.clone();
        let waiter = std::thread::spawn(move || {
            let p = budget.acquire(80, true).unwrap();
            flag.store(true, Ordering::SeqCst);
            drop(p);
        });
        std::thread::sleep(std::time::Duration::from_millis(100));
        assert!(
            !admitted.load(Ordering::SeqCst),
            "80 more bytes do not fit beside 60"
        );
        drop(first);
        waiter.join().unwrap();
        assert!(admitted.load(Ordering::SeqCst));
        assert_eq!(budget.in_use(), (0, 0));
    }

    #[test]
    fn some_takes_what_is_free_and_gives_back_what_it_shrinks() {
        let budget = leaked(16);
        let never: &'static AtomicBool = Box::leak(Box::new(AtomicBool::new(false)));
        let mut first = budget.acquire_some_unless(3, 8, never).unwrap();
        assert_eq!(first.units(), 8);
        first.shrink_to(6);
        let second = budget.acquire_some_unless(3, 8, never).unwrap();
        assert_eq!((second.units(), budget.in_use()), (8, (14, 2)));
        // Two are left, fewer than the least: it waits until some come back.
        let waiter = std::thread::spawn(move || budget.acquire_some_unless(3, 8, never).map(|p| p.units()));
        while budget.waiting() < 1 {
            std::thread::sleep(std::time::Duration::from_millis(1));
        }
        drop(first);
        assert_eq!(waiter.join().unwrap().unwrap(), 8, "6 given back and 2 free");
        // Fewer than the most when only those are free.
        let third = budget.acquire_some_unless(3, 5, never).unwrap();
        let fourth = budget.acquire_some_unless(2, 8, never).unwrap();
        assert_eq!((third.units(), fourth.units()), (5, 3));
        // Nothing free: a stopped start gives up rather than wait.
        let stop = AtomicBool::new(true);
        let e = budget.acquire_some_unless(1, 8, &stop).err().unwrap();
        assert_eq!(e.kind, ErrorKind::Cancelled);
        drop((second, third, fourth));
        assert_eq!(budget.in_use(), (0, 0));
    }

    #[test]
    fn a_job_larger_than_the_budget_runs_alone() {
        let budget = leaked(10);
        let big = budget.acquire(1000, false).unwrap();
        assert_eq!(budget.acquire(1, false).err().unwrap().kind, ErrorKind::Busy);
        drop(big);
        let small = budget.acquire(5, false).unwrap();
        assert_eq!(budget.acquire(1000, false).err().unwrap().kind, ErrorKind::Busy);
        drop(small);
    }

    #[test]
    fn waiters_are_admitted_in_arrival_order() {
        let budget = leaked(100);
        let held_small = budget.acquire(15, false).unwrap();
        let held_large = budget.acquire(85, false).unwrap();
        // Waits until `n` starts are queued (no sleeps: the order of
        // arrival must not depend on how busy the machine is).
        let queued = |n: u64| {
            while budget.waiting() < n {
                std::thread::sleep(std::time::Duration::from_millis(1));
            }
        };
        // A large job queues first, then a small one; the two cannot run
        // together (90 + 20 > 100), so each records its turn while holding
        // its permit.
        let order = Arc::new(Mutex::new(Vec::new()));
        let (o1, o2) = (order.clone(), order.clone());
        let large = std::thread::spawn(move || {
            let p = budget.acquire(90, true).unwrap();
            o1.lock().unwrap().push("large");
            drop(p);
        });
        queued(1);
        let small = std::thread::spawn(move || {
            let p = budget.acquire(20, true).unwrap();
            o2.lock().unwrap().push("small");
            drop(p);
        });
        queued(2);
        // No new start overtakes the queue either.
        assert_eq!(budget.acquire(1, false).err().unwrap().kind, ErrorKind::Busy);
        // With 15 in use the small job would fit and the large would not:
        // the small one still waits for its turn. (A budget that let it
        // overtake would admit it within this pause; a correct one never
        // fails here, however slow the machine.)
        drop(held_large);
        std::thread::sleep(std::time::Duration::from_millis(100));
        assert!(
            order.lock().unwrap().is_empty(),
            "a later start overtook the queue"
        );
        drop(held_small);
        large.join().unwrap();
        small.join().unwrap();
        assert_eq!(*order.lock().unwrap(), vec!["large", "small"]);
        assert_eq!(budget.in_use(), (0, 0));
    }

    #[test]
    fn a_start_that_gives_up_leaves_the_queue() {
        let budget = leaked(100);
        let held = budget.acquire(100, false).unwrap();
        let queued = |n: u64| {
            while budget.waiting() < n {
                std::thread::sleep(std::time::Duration::from_millis(1));
            }
        };
        // First in the queue waits plainly; the second and third give up;
        // the fourth waits behind them.
        let first = std::thread::spawn(move || budget.acquire(50, true).map(drop));
        queued(1);
        let stops: Vec<&'static AtomicBool> = (0..2)
            .map(|_| &*Box::leak(Box::new(AtomicBool::new(false))))
            .collect();
        let quitters: Vec<_> = stops
            .iter()
            .map(|&stop| std::thread::spawn(move || budget.acquire_unless(50, stop).map(drop)))
            .collect();
        queued(3);
        let last = std::thread::spawn(move || budget.acquire(50, true).map(drop));
        queued(4);
        for stop in &stops {
            stop.store(true, Ordering::Relaxed);
        }
        for q in quitters {
            assert_eq!(q.join().unwrap().unwrap_err().kind, ErrorKind::Cancelled);
        }
        drop(held);
        first.join().unwrap().unwrap();
        last.join().unwrap().unwrap();
        assert_eq!(budget.in_use(), (0, 0));
        assert_eq!(budget.waiting(), 0);
        // The first in line giving up passes its turn on too.
        let held = budget.acquire(100, false).unwrap();
        let stop: &'static AtomicBool = Box::leak(Box::new(AtomicBool::new(false)));
        let quitter = std::thread::spawn(move || budget.acquire_unless(10, stop).map(drop));
        queued(1);
        let next = std::thread::spawn(move || budget.acquire(10, true).map(drop));
        queued(2);
        stop.store(true, Ordering::Relaxed);
        assert_eq!(quitter.join().unwrap().unwrap_err().kind, ErrorKind::Cancelled);
        drop(held);
        next.join().unwrap().unwrap();
        assert_eq!(budget.waiting(), 0);
    }

    #[test]
    fn raising_the_limit_admits_waiters() {
        let budget = leaked(10);
        let held = budget.acquire(10, false).unwrap();
        let waiter = std::thread::spawn(move || budget.acquire(10, true).map(drop));
        std::thread::sleep(std::time::Duration::from_millis(50));
        budget.set_limit(20);
        waiter.join().unwrap().unwrap();
        drop(held);
        assert_eq!(budget.limit(), 20);
    }
}
