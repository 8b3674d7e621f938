//! Stable digests of what the tools keep on disk (the names and keys of records, cache keys,
//! build stamps): blake3 over parts, each led by its length, so that `("ab", "c")` and
//! `("a", "bc")` differ. std's `DefaultHasher` is not promised to hash alike from one Rust
//! release to the next; these digests are the same for the same parts.

/// A digest being fed.
#[derive(Clone, Default)]
pub struct Digest(blake3::Hasher);

impl Digest {
    pub fn new() -> Digest {
        Digest::default()
    }

    /// Adds one part.
    pub fn part(&mut self, bytes: impl AsRef<[u8]>) -> &mut Digest {
        let bytes = bytes.as_ref();
        self.0.update(&(bytes.len() as u64).to_le_bytes());
        self.0.update(bytes);
        self
    }

    /// The digest of the parts so far, in 64 hex digits.
    pub fn hex(&self) -> String {
        self.0.finalize().to_hex().to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parts_are_kept_apart() {
        let digest = |parts: &[&str]| {
            let mut d = Digest::new();
            for part in parts {
                d.part(part);
            }
            d.hex()
        };
        assert_ne!(digest(&["ab", "c"]), digest(&["a", "bc"]));
        assert_ne!(digest(&["a"]), digest(&["a", ""]));
        assert_eq!(digest(&["x"]), digest(&["x"]));
        // The same on every build: blake3 of the length (8 bytes, little-endian), then the bytes.
        let mut expected = blake3::Hasher::new();
        expected.update(&1u64.to_le_bytes()).update(b"x");
        assert_eq!(digest(&["x"]), expected.finalize().to_hex().to_string());
        assert_eq!(digest(&["x"]).len(), 64);
    }
}
