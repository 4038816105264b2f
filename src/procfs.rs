//! Memory figures from Linux's /proc: the machine's memory (for default
//! budgets) and this process's resident set (for benchmarks and the
//! memory tests). `None` where /proc does not say (other systems).

/// A "Key:   123 kB" field of a /proc file, in bytes.
fn field_bytes(path: &str, key: &str) -> Option<u64> {
    let text = std::fs::read_to_string(path).ok()?;
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
        if std::path::Path::new("/proc/self/status").exists() {
            let (rss, peak) = (resident().unwrap(), peak_resident().unwrap());
            assert!(rss > 0 && peak >= rss, "rss {rss}, peak {peak}");
            assert!(total_memory().unwrap() > peak);
        } else {
            assert_eq!(resident(), None);
        }
        assert_eq!(field_bytes("/proc/self/status", "NoSuchField"), None);
    }
}
