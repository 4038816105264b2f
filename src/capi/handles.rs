//! Handles given to C callers are not pointers to our memory but tokens: a
//! number that names an entry in a registry. A freed, finished or forged
//! handle is then simply not found (`C2P_ERR_BAD_STATE`), instead of being a
//! use-after-free in the caller's process. Tokens are never reused.

use crate::error::{Error, ErrorKind};
use once_cell::sync::Lazy;
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, MutexGuard};

/// Objects of one kind, by token.
pub struct Registry<T> {
    kind: &'static str,
    entries: Lazy<Mutex<HashMap<u64, T>>>,
}

/// Tokens for every registry come from one counter, so a token of one kind
/// is never valid for another. It starts high, away from small integers a
/// caller might pass by mistake.
static NEXT_TOKEN: AtomicU64 = AtomicU64::new(0x1000);

impl<T> Registry<T> {
    pub const fn new(kind: &'static str) -> Self {
        Registry {
            kind,
            entries: Lazy::new(|| Mutex::new(HashMap::new())),
        }
    }

    fn lock(&self) -> MutexGuard<'_, HashMap<u64, T>> {
        // Entries are inserted and removed whole: a panic elsewhere while
        // the lock was held cannot leave the map inconsistent.
        self.entries
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Stores `value` and returns its token (never 0).
    pub fn insert(&self, value: T) -> u64 {
        let token = NEXT_TOKEN.fetch_add(1, Ordering::Relaxed);
        self.lock().insert(token, value);
        token
    }

    /// Takes the entry out (free, finish).
    pub fn remove(&self, token: u64) -> Result<T, Error> {
        self.lock().remove(&token).ok_or_else(|| self.unknown(token))
    }

    /// Runs `f` on the entry without taking it out.
    pub fn with<R>(&self, token: u64, f: impl FnOnce(&T) -> R) -> Result<R, Error> {
        let entries = self.lock();
        entries.get(&token).map(f).ok_or_else(|| self.unknown(token))
    }

    /// Drops an entry for a `_free`/`destroy` function: NULL (0) and
    /// unknown tokens are ignored (and logged), panics are contained.
    pub fn free(&self, token: u64, caller: &str) {
        if token == 0 {
            return;
        }
        if let Err(e) = super::catch(|| self.remove(token).map(drop)) {
            log::warn!("{caller}: {}", e.message);
        }
    }

    fn unknown(&self, token: u64) -> Error {
        Error::new(
            ErrorKind::BadState,
            format!(
                "unknown {} handle {token:#x}: already freed or finished, or never returned by c2prover",
                self.kind
            ),
        )
    }
}
