//! Density bitmaps: bit i of a bitmap is bit i % 64 of word i / 64.

/// How many of the first `bits` bits of a bitmap (bit i = bit i % 64 of
/// word i / 64) are set; `words` must hold at least `bits` bits.
pub fn bits_set_below(words: &[u64], bits: usize) -> usize {
    let full = bits / 64;
    let mut n: usize = words[..full].iter().map(|w| w.count_ones() as usize).sum();
    if bits % 64 != 0 {
        n += (words[full] & ((1u64 << (bits % 64)) - 1)).count_ones() as usize;
    }
    n
}
