//! A small seeded PRNG (SplitMix64): the same seed gives the same cases on every machine.

pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed)
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A number in `0..n` (`n > 0`).
    pub fn below(&mut self, n: usize) -> usize {
        assert!(n > 0, "below(0)");
        (self.next_u64() % n as u64) as usize
    }

    /// A number in `lo..=hi`.
    pub fn range(&mut self, lo: usize, hi: usize) -> usize {
        lo + self.below(hi - lo + 1)
    }

    /// True with probability `percent`/100.
    pub fn chance(&mut self, percent: usize) -> bool {
        self.below(100) < percent
    }

    pub fn pick<'a, T>(&mut self, xs: &'a [T]) -> &'a T {
        &xs[self.below(xs.len())]
    }

    /// `k` distinct elements of `xs` in a random order (all of them when `k >= xs.len()`).
    pub fn choose<T: Clone>(&mut self, xs: &[T], k: usize) -> Vec<T> {
        let mut pool: Vec<T> = xs.to_vec();
        let mut out = Vec::new();
        while out.len() < k && !pool.is_empty() {
            let i = self.below(pool.len());
            out.push(pool.remove(i));
        }
        out
    }

    /// An index into `weights`, chosen with probability proportional to its weight.
    pub fn weighted(&mut self, weights: &[usize]) -> usize {
        let total: usize = weights.iter().sum();
        let mut x = self.below(total);
        for (i, w) in weights.iter().enumerate() {
            if x < *w {
                return i;
            }
            x -= w;
        }
        unreachable!()
    }
}

/// The seed of case `index` of a run seeded with `seed`: every case can be regenerated alone.
pub fn case_seed(seed: u64, index: usize) -> u64 {
    let mut r = Rng::new(seed ^ (index as u64).wrapping_mul(0xD1B5_4A32_D192_ED03));
    r.next_u64()
}
