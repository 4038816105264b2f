//! Memory figures from Linux's /proc: the machine's memory (for default
//! budgets) and this process's resident set (for benchmarks and the
//! memory tests). `None` where /proc does not say (other systems).

/// A "Key:   123 kB" field of a /proc file, in bytes.
fn field_bytes(path: &str, key: &str) -> Option<u64> {
    field_in(&std::fs::read_to_string(path).ok()?, key)
}

/// A "Key:   123 kB" field of a /proc file's text, in bytes.
fn field_in(text: &str, key: &str) -> Option<u64> {
    let line = text.lines().find(|l| l.split(':').next() == Some(key))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    kib.checked_mul(1024)
}

/// Physical memory (MemTotal).
pub fn total_memory() -> Option<u64> {
    field_bytes("/proc/meminfo", "MemTotal")
}

/// This process's resident set now (VmRSS).
pub fn resident() -> Option<u64> {
    field_bytes("/proc/self/status", "VmRSS")
}

/// This process's peak resident set (VmHWM).
pub fn peak_resident() -> Option<u64> {
    field_bytes("/proc/self/status", "VmHWM")
}

/// Starts the peak resident set again from the current size (Linux 4.0+:
/// "5" to clear_refs), so a later phase's peak can be told from an
/// earlier one's.
pub fn reset_peak_resident() -> std::io::Result<()> {
    std::fs::write("/proc/self/clear_refs", "5")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_this_machines_figures() {
        if let Ok(status) = std::fs::read_to_string("/proc/self/status") {
            assert!(resident().unwrap() > 0 && peak_resident().unwrap() > 0);
            // One snapshot: other tests' threads move the resident set
            // between two reads, so only within one is the peak >= now.
            let rss = field_in(&status, "VmRSS").unwrap();
            let peak = field_in(&status, "VmHWM").unwrap();
            assert!(rss > 0 && peak >= rss, "rss {rss}, peak {peak}");
            assert!(total_memory().unwrap() > peak);
        } else {
            assert_eq!(resident(), None);
        }
        assert_eq!(field_bytes("/proc/self/status", "NoSuchField"), None);
    }
}
