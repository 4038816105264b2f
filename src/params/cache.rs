//! Loaded parameters kept across calls, keyed by file. Reloading the 47 GB
//! PoRep parameters costs tens of seconds, so callers that prove repeatedly
//! ask for the cached handle. The cache is a small LRU: each entry is one
//! reference; callers' `Arc`s keep evicted parameters alive until dropped.

use super::{FileKey, LoadOptions, Parameters};
use crate::error::Result;
use once_cell::sync::{Lazy, OnceCell};
use std::path::Path;
use std::sync::{Arc, Mutex, MutexGuard};

/// Parameter sets kept at once (PoRep, WindowPoSt and WinningPoSt fit).
const CAPACITY: usize = 3;

type Slot = Arc<OnceCell<Arc<Parameters>>>;

struct Entry {
    key: FileKey,
    check_subgroup: bool,
    slot: Slot,
}

/// Most recently used first.
static CACHE: Lazy<Mutex<Vec<Entry>>> = Lazy::new(|| Mutex::new(Vec::new()));

fn entries() -> MutexGuard<'static, Vec<Entry>> {
    // A panic while holding the lock cannot leave the Vec inconsistent.
    CACHE.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// Returns the cached parameters for `path`, loading them on first use.
/// Concurrent callers for the same file share one load; loads of different
/// files run in parallel. A load that fails is not cached.
pub fn load_cached(path: &Path, options: &LoadOptions) -> Result<Arc<Parameters>> {
    let key = FileKey::of(path)?;
    let slot = {
        let mut cache = entries();
        // A subgroup-checked entry serves unchecked requests too.
        let found = cache
            .iter()
            .position(|e| e.key == key && (e.check_subgroup || !options.check_subgroup));
        let entry = match found {
            Some(i) => cache.remove(i),
            None => Entry {
                key,
                check_subgroup: options.check_subgroup,
                slot: Arc::new(OnceCell::new()),
            },
        };
        let slot = entry.slot.clone();
        cache.insert(0, entry);
        cache.truncate(CAPACITY);
        slot
    };
    slot.get_or_try_init(|| Parameters::load(path, options).map(Arc::new))
        .cloned()
}

/// Drops the cache's reference to `path`'s parameters (memory is freed once
/// no caller holds them). Returns whether an entry was removed.
pub fn evict_cached(path: &Path) -> bool {
    let Ok(key) = FileKey::of(path) else {
        return false;
    };
    let mut cache = entries();
    let before = cache.len();
    cache.retain(|e| e.key != key);
    before != cache.len()
}
