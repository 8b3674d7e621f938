//! Shared by the run tests that check the process's memory stays flat.

/// The process's resident memory (`VmRSS`), in KiB.
pub fn resident_kib() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    let line = status.lines().find(|l| l.starts_with("VmRSS:")).unwrap();
    line.split_whitespace().nth(1).unwrap().parse().unwrap()
}
