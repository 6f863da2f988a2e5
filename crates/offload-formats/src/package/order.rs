//! The order in which clang-offload-packager (LLVM 19, 22) writes an image's
//! string entries: the iteration order of the `llvm::DenseMap<StringRef, StringRef>`
//! it fills from the `--image=key=value,...` list.
//!
//! `DenseMapInfo<StringRef>` hashes with LLVM's `hash_value(StringRef)`, a CityHash
//! derivative from `llvm/ADT/Hashing.h` whose seed is fixed in release builds
//! without ABI-breaking checks (Debian's packages). The map starts with 64 buckets,
//! probes `b + 1, b + 3, b + 6, …` (triangular steps) and doubles when an insertion
//! would make it three-quarters full, re-inserting in old bucket order. Iteration
//! walks the buckets in order.

const K0: u64 = 0xc3a5_c85c_97cb_3127;
const K1: u64 = 0xb492_b66f_be98_f273;
const K2: u64 = 0x9ae1_6a3b_2f90_404f;
const K3: u64 = 0xc949_d7c7_509e_6557;
/// The fixed seed of release builds (`hashing::detail::fixed_seed_override` unset).
const SEED: u64 = 0xff51_afd7_ed55_8ccd;

fn fetch64(s: &[u8], at: usize) -> u64 {
    crate::raw::u64_at(s, at).expect("8 bytes")
}

fn fetch32(s: &[u8], at: usize) -> u64 {
    crate::raw::u32_at(s, at).expect("4 bytes").into()
}

fn rotate(v: u64, shift: u32) -> u64 {
    v.rotate_right(shift)
}

fn shift_mix(v: u64) -> u64 {
    v ^ (v >> 47)
}

fn hash_16_bytes(low: u64, high: u64) -> u64 {
    const MUL: u64 = 0x9ddf_ea08_eb38_2d69;
    let mut a = (low ^ high).wrapping_mul(MUL);
    a ^= a >> 47;
    let mut b = (high ^ a).wrapping_mul(MUL);
    b ^= b >> 47;
    b.wrapping_mul(MUL)
}

fn hash_1to3(s: &[u8], seed: u64) -> u64 {
    let len = s.len();
    let a = u32::from(s[0]);
    let b = u32::from(s[len >> 1]);
    let c = u32::from(s[len - 1]);
    let y = a.wrapping_add(b << 8);
    let z = (len as u32).wrapping_add(c << 2);
    shift_mix(u64::from(y).wrapping_mul(K2) ^ u64::from(z).wrapping_mul(K3) ^ seed).wrapping_mul(K2)
}

fn hash_4to8(s: &[u8], seed: u64) -> u64 {
    let len = s.len();
    let a = fetch32(s, 0);
    hash_16_bytes(
        (len as u64).wrapping_add(a << 3),
        seed ^ fetch32(s, len - 4),
    )
}

fn hash_9to16(s: &[u8], seed: u64) -> u64 {
    let len = s.len();
    let a = fetch64(s, 0);
    let b = fetch64(s, len - 8);
    hash_16_bytes(seed ^ a, rotate(b.wrapping_add(len as u64), len as u32)) ^ b
}

fn hash_17to32(s: &[u8], seed: u64) -> u64 {
    let len = s.len();
    let a = fetch64(s, 0).wrapping_mul(K1);
    let b = fetch64(s, 8);
    let c = fetch64(s, len - 8).wrapping_mul(K2);
    let d = fetch64(s, len - 16).wrapping_mul(K0);
    hash_16_bytes(
        rotate(a.wrapping_sub(b), 43)
            .wrapping_add(rotate(c ^ seed, 30))
            .wrapping_add(d),
        a.wrapping_add(rotate(b ^ K3, 20))
            .wrapping_sub(c)
            .wrapping_add(len as u64)
            .wrapping_add(seed),
    )
}

fn hash_33to64(s: &[u8], seed: u64) -> u64 {
    let len = s.len();
    let mut z = fetch64(s, 24);
    let mut a = fetch64(s, 0).wrapping_add(
        (len as u64)
            .wrapping_add(fetch64(s, len - 16))
            .wrapping_mul(K0),
    );
    let mut b = rotate(a.wrapping_add(z), 52);
    let mut c = rotate(a, 37);
    a = a.wrapping_add(fetch64(s, 8));
    c = c.wrapping_add(rotate(a, 7));
    a = a.wrapping_add(fetch64(s, 16));
    let vf = a.wrapping_add(z);
    let vs = b.wrapping_add(rotate(a, 31)).wrapping_add(c);
    a = fetch64(s, 16).wrapping_add(fetch64(s, len - 32));
    z = fetch64(s, len - 8);
    b = rotate(a.wrapping_add(z), 52);
    c = rotate(a, 37);
    a = a.wrapping_add(fetch64(s, len - 24));
    c = c.wrapping_add(rotate(a, 7));
    a = a.wrapping_add(fetch64(s, len - 16));
    let wf = a.wrapping_add(z);
    let ws = b.wrapping_add(rotate(a, 31)).wrapping_add(c);
    let r = shift_mix(
        vf.wrapping_add(ws)
            .wrapping_mul(K2)
            .wrapping_add(wf.wrapping_add(vs).wrapping_mul(K0)),
    );
    shift_mix((seed ^ r.wrapping_mul(K0)).wrapping_add(vs)).wrapping_mul(K2)
}

fn hash_short(s: &[u8], seed: u64) -> u64 {
    match s.len() {
        0 => K2 ^ seed,
        1..=3 => hash_1to3(s, seed),
        4..=8 => hash_4to8(s, seed),
        9..=16 => hash_9to16(s, seed),
        17..=32 => hash_17to32(s, seed),
        _ => hash_33to64(s, seed),
    }
}

/// The 64-byte-block state of `hash_combine_range` for inputs over 64 bytes.
struct State {
    h: [u64; 7],
}

impl State {
    fn create(s: &[u8], seed: u64) -> State {
        let mut h = [
            0,
            seed,
            hash_16_bytes(seed, K1),
            rotate(seed ^ K1, 49),
            seed.wrapping_mul(K1),
            shift_mix(seed),
            0,
        ];
        h[6] = hash_16_bytes(h[4], h[5]);
        let mut st = State { h };
        st.mix(s);
        st
    }

    fn mix_32(s: &[u8], a: &mut u64, b: &mut u64) {
        *a = a.wrapping_add(fetch64(s, 0));
        let c = fetch64(s, 24);
        *b = rotate(b.wrapping_add(*a).wrapping_add(c), 21);
        let d = *a;
        *a = a.wrapping_add(fetch64(s, 8)).wrapping_add(fetch64(s, 16));
        *b = b.wrapping_add(rotate(*a, 44)).wrapping_add(d);
        *a = a.wrapping_add(c);
    }

    fn mix(&mut self, s: &[u8]) {
        let h = &mut self.h;
        h[0] = rotate(
            h[0].wrapping_add(h[1])
                .wrapping_add(h[3])
                .wrapping_add(fetch64(s, 8)),
            37,
        )
        .wrapping_mul(K1);
        h[1] = rotate(h[1].wrapping_add(h[4]).wrapping_add(fetch64(s, 48)), 42).wrapping_mul(K1);
        h[0] ^= h[6];
        h[1] = h[1].wrapping_add(h[3]).wrapping_add(fetch64(s, 40));
        h[2] = rotate(h[2].wrapping_add(h[5]), 33).wrapping_mul(K1);
        h[3] = h[4].wrapping_mul(K1);
        h[4] = h[0].wrapping_add(h[5]);
        let (mut a, mut b) = (h[3], h[4]);
        State::mix_32(s, &mut a, &mut b);
        h[3] = a;
        h[4] = b;
        h[5] = h[2].wrapping_add(h[6]);
        h[6] = h[1].wrapping_add(fetch64(s, 16));
        let (mut a, mut b) = (h[5], h[6]);
        State::mix_32(&s[32..], &mut a, &mut b);
        h[5] = a;
        h[6] = b;
        h.swap(2, 0);
    }

    fn finalize(&self, len: u64) -> u64 {
        let h = &self.h;
        hash_16_bytes(
            hash_16_bytes(h[3], h[5])
                .wrapping_add(shift_mix(h[1]).wrapping_mul(K1))
                .wrapping_add(h[2]),
            hash_16_bytes(h[4], h[6])
                .wrapping_add(shift_mix(len).wrapping_mul(K1))
                .wrapping_add(h[0]),
        )
    }
}

/// LLVM's `hash_value(StringRef)` in a release build (fixed seed).
pub fn hash_string(s: &[u8]) -> u64 {
    if s.len() <= 64 {
        return hash_short(s, SEED);
    }
    let aligned_end = s.len() & !63;
    let mut state = State::create(&s[..64], SEED);
    let mut at = 64;
    while at != aligned_end {
        state.mix(&s[at..at + 64]);
        at += 64;
    }
    if s.len() & 63 != 0 {
        state.mix(&s[s.len() - 64..]);
    }
    state.finalize(s.len() as u64)
}

/// The iteration order of a `DenseMap<StringRef, …>` into which `keys` were
/// inserted in the given order (repeated keys keep their first slot): indices of
/// the first occurrences, in bucket order.
pub fn dense_map_order<K: AsRef<[u8]>>(keys: &[K]) -> Vec<usize> {
    let mut buckets: Vec<Option<usize>> = Vec::new();
    let mut entries = 0usize;
    for (i, key) in keys.iter().enumerate() {
        let key = key.as_ref();
        if !buckets.is_empty() && find(&buckets, keys, key).is_ok() {
            continue;
        }
        // DenseMap grows before inserting when the new count reaches 3/4 of the buckets.
        if (entries + 1) * 4 >= buckets.len() * 3 {
            let new_len = (buckets.len() * 2).max(64);
            let old = std::mem::replace(&mut buckets, vec![None; new_len]);
            for j in old.into_iter().flatten() {
                let slot = find(&buckets, keys, keys[j].as_ref()).expect_err("unique key");
                buckets[slot] = Some(j);
            }
        }
        let slot = find(&buckets, keys, key).expect_err("new key");
        buckets[slot] = Some(i);
        entries += 1;
    }
    buckets.into_iter().flatten().collect()
}

/// `Ok(bucket)` holding `key`, or `Err(empty bucket)` where it would go.
fn find<K: AsRef<[u8]>>(buckets: &[Option<usize>], keys: &[K], key: &[u8]) -> Result<usize, usize> {
    let mask = buckets.len() - 1;
    let mut bucket = (hash_string(key) as u32 as usize) & mask;
    let mut probe = 1;
    loop {
        match buckets[bucket] {
            None => return Err(bucket),
            Some(j) if keys[j].as_ref() == key => return Ok(bucket),
            Some(_) => {
                bucket = (bucket + probe) & mask;
                probe += 1;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spec_order_of_nine_keys() {
        let keys = [
            "triple", "arch", "feature", "zeta", "alpha", "beta", "gamma", "delta", "triple2",
        ];
        let order: Vec<&str> = dense_map_order(&keys)
            .into_iter()
            .map(|i| keys[i])
            .collect();
        assert_eq!(
            order,
            [
                "gamma", "feature", "arch", "zeta", "delta", "triple", "triple2", "beta", "alpha"
            ]
        );
    }

    #[test]
    fn repeated_keys_keep_their_first_slot() {
        let keys = ["arch", "triple", "arch"];
        let order = dense_map_order(&keys);
        assert_eq!(order.len(), 2);
        assert!(order.contains(&0) && order.contains(&1));
    }

    #[test]
    fn growth_keeps_every_key() {
        let keys: Vec<String> = (0..200).map(|i| format!("key{i}")).collect();
        let mut order = dense_map_order(&keys);
        order.sort_unstable();
        assert_eq!(order, (0..200).collect::<Vec<_>>());
    }

    #[test]
    fn long_inputs_hash_without_panic() {
        for len in 0..300 {
            let s: Vec<u8> = (0..len).map(|i| i as u8).collect();
            let _ = hash_string(&s);
        }
        assert_ne!(hash_string(&[7; 100]), hash_string(&[7; 101]));
    }
}
