//! Test inputs shared by the run tests.

/// `len` values in -1..1, of every pattern of low bits: a fixed xorshift sequence from `seed`.
pub fn values(seed: u64, len: usize) -> Vec<f64> {
    let mut x = seed;
    (0..len)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x >> 11) as f64 / (1u64 << 52) as f64 * 2.0 - 1.0
        })
        .collect()
}
