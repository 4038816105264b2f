//! `c2prover bench soak` as an operator runs it, for a few seconds: jobs
//! proved and verified, cancelled, refused and proved after injected
//! faults, with no unexpected failure, and a report line with the memory.

use std::process::Command;

#[test]
fn a_short_soak_proves_verifies_and_reports() {
    let out = Command::new(env!("CARGO_BIN_EXE_c2prover"))
        .args(["bench", "soak", "--minutes", "0.08", "--log2", "8,9"])
        .args(["--jobs", "3", "--report-seconds", "1", "--seed", "7"])
        .output()
        .expect("the command runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let summary = stdout
        .lines()
        .find(|l| l.starts_with("soak of"))
        .expect("a summary line");
    assert!(summary.ends_with("unexpected failures 0"), "{summary}");
    // "proofs N (verified N)": some, all verified.
    let count = |label: &str| -> u64 {
        let at = summary.find(label).expect(label) + label.len();
        summary[at..]
            .split(|c: char| !c.is_ascii_digit())
            .next()
            .and_then(|n| n.parse().ok())
            .expect(label)
    };
    assert!(count("proofs ") > 0, "{summary}");
    assert_eq!(count("proofs "), count("(verified "), "{summary}");
    assert!(stdout.contains("host RSS"), "{stdout}");
}
