//! The iteration order of `llvm::StringMap`, which decides the order of `-list`
//! output and of unbundling.
//!
//! clang-offload-bundler keeps the entries of a binary bundle (and the targets it
//! is asked to extract) in a `StringMap`, so it visits them in hash-bucket order
//! rather than file order. This module replays that table (LLVM 17 and later):
//!
//! - the hash of a key is the low 32 bits of seedless XXH3-64 of its bytes;
//! - the table starts with 16 buckets; a key goes to `hash & (buckets - 1)` and
//!   collisions probe `b = (b + k) & (buckets - 1)` for `k = 1, 2, 3, …`;
//! - after inserting a new key, when `items * 4 > buckets * 3` the table doubles,
//!   re-inserting the old buckets in index order with the same probing;
//! - iteration walks the buckets in ascending index order.
//!
//! Inserting a key that is already present keeps its first slot (LLVM's
//! `map[key] = value` overwrites the value in place).

use xxhash_rust::xxh3::xxh3_64;

/// The hash `llvm::StringMap` stores for a key (LLVM 17+: low 32 bits of XXH3-64).
pub fn string_map_hash(key: &[u8]) -> u32 {
    xxh3_64(key) as u32
}

/// Replays insertions into an `llvm::StringMap` and reports its iteration order.
#[derive(Clone, Debug)]
pub struct StringMapOrder {
    /// Per bucket: index of the first-inserted key that occupies it.
    buckets: Vec<Option<usize>>,
    hashes: Vec<u32>,
    items: usize,
}

impl Default for StringMapOrder {
    fn default() -> Self {
        Self::new()
    }
}

impl StringMapOrder {
    /// An empty map (LLVM allocates 16 buckets on the first insertion).
    pub fn new() -> Self {
        StringMapOrder {
            buckets: vec![None; 16],
            hashes: Vec::new(),
            items: 0,
        }
    }

    /// Computes the iteration order of `keys` inserted one after another.
    ///
    /// Returns the indices (into `keys`) of the distinct keys, first occurrence
    /// of each, in the order a `StringMap` would iterate them.
    pub fn of<K: AsRef<[u8]>>(keys: &[K]) -> Vec<usize> {
        let mut map = StringMapOrder::new();
        for (i, k) in keys.iter().enumerate() {
            map.insert(k.as_ref(), i, |j| keys[j].as_ref());
        }
        map.iter().collect()
    }

    /// Inserts key number `index` (resolving earlier indices to their keys with `key_of`).
    /// Returns false when the key was already present.
    fn insert<'k>(&mut self, key: &[u8], index: usize, key_of: impl Fn(usize) -> &'k [u8]) -> bool {
        let hash = string_map_hash(key);
        if self.hashes.len() <= index {
            self.hashes.resize(index + 1, 0);
        }
        self.hashes[index] = hash;
        let mask = self.buckets.len() - 1;
        let mut bucket = hash as usize & mask;
        let mut probe = 1;
        loop {
            match self.buckets[bucket] {
                None => break,
                Some(j) if self.hashes[j] == hash && key_of(j) == key => return false,
                Some(_) => {
                    bucket = (bucket + probe) & mask;
                    probe += 1;
                }
            }
        }
        self.buckets[bucket] = Some(index);
        self.items += 1;
        if self.items * 4 > self.buckets.len() * 3 {
            self.grow();
        }
        true
    }

    fn grow(&mut self) {
        let new_len = self.buckets.len() * 2;
        let mask = new_len - 1;
        let mut new = vec![None; new_len];
        for j in self.buckets.iter().flatten().copied() {
            let mut bucket = self.hashes[j] as usize & mask;
            let mut probe = 1;
            while new[bucket].is_some() {
                bucket = (bucket + probe) & mask;
                probe += 1;
            }
            new[bucket] = Some(j);
        }
        self.buckets = new;
    }

    /// The key indices in iteration order.
    fn iter(&self) -> impl Iterator<Item = usize> + '_ {
        self.buckets.iter().flatten().copied()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn list_order_of_spec_example() {
        // Spec A.9: b1.bc lists the host entry last although it is first in the file.
        let keys = [
            "host-x86_64-unknown-linux-gnu-",
            "openmp-amdgcn-amd-amdhsa--gfx906",
            "hip-amdgcn-amd-amdhsa--gfx908",
        ];
        let order: Vec<&str> = StringMapOrder::of(&keys)
            .into_iter()
            .map(|i| keys[i])
            .collect();
        assert_eq!(
            order,
            [
                "hip-amdgcn-amd-amdhsa--gfx908",
                "openmp-amdgcn-amd-amdhsa--gfx906",
                "host-x86_64-unknown-linux-gnu-"
            ]
        );
    }

    #[test]
    fn duplicates_keep_first_slot() {
        let keys = ["a", "b", "a"];
        let order = StringMapOrder::of(&keys);
        assert_eq!(order.len(), 2);
        assert!(order.contains(&0) && order.contains(&1));
    }

    #[test]
    fn grows_past_twelve_items() {
        let keys: Vec<String> = (0..100)
            .map(|i| format!("hip-amdgcn-amd-amdhsa--gfx{i}"))
            .collect();
        let order = StringMapOrder::of(&keys);
        let mut sorted = order.clone();
        sorted.sort();
        assert_eq!(sorted, (0..100).collect::<Vec<_>>());
    }
}
