//! "Did you mean ...?": the known name closest to a misspelt one.
//!
//! Pure functions over strings. Distances are Damerau–Levenshtein in its optimal-string-alignment
//! form (insertions, deletions, substitutions and swaps of two neighbours each cost one), ASCII
//! case ignored, so `replcas` → `replicas` (1), `contianers` → `containers` (1),
//! `imagepullpolicy` → `imagePullPolicy` (0). The work is bounded whatever the input: names
//! longer than [`MAX_LEN`] get no suggestion, and candidates whose length differs by more than the
//! allowed distance are skipped before any table is built.

/// Longer names are not compared (they are no misspelt field names).
pub const MAX_LEN: usize = 64;

/// How far a candidate may be from a name of `len` bytes: short names only by case, then one
/// edit up to 5 bytes, two up to 9, three beyond.
fn allowed(len: usize) -> usize {
    match len {
        0..=2 => 0,
        3..=5 => 1,
        6..=9 => 2,
        _ => 3,
    }
}

/// The candidate closest to `name` within the allowed distance; ties go to the longer common
/// prefix, then to the earlier candidate. `name` itself is never suggested.
pub fn closest<'c>(name: &str, candidates: impl IntoIterator<Item = &'c str>) -> Option<&'c str> {
    if name.len() > MAX_LEN {
        return None;
    }
    let limit = allowed(name.len());
    let mut best: Option<(usize, usize, &str)> = None;
    for c in candidates {
        if c == name || c.len().abs_diff(name.len()) > limit || c.len() > MAX_LEN + limit {
            continue;
        }
        let Some(d) = distance(name.as_bytes(), c.as_bytes(), limit) else {
            continue;
        };
        let prefix = common_prefix(name, c);
        let better = match best {
            None => true,
            Some((bd, bp, _)) => d < bd || (d == bd && prefix > bp),
        };
        if better {
            best = Some((d, prefix, c));
        }
    }
    best.map(|(_, _, c)| c)
}

fn common_prefix(a: &str, b: &str) -> usize {
    a.bytes()
        .zip(b.bytes())
        .take_while(|(x, y)| x.eq_ignore_ascii_case(y))
        .count()
}

/// The optimal-string-alignment distance between `a` and `b` (ASCII case ignored), or `None`
/// when it exceeds `limit`. O(|a|·|b|) time, O(|b|) space.
pub fn distance(a: &[u8], b: &[u8], limit: usize) -> Option<usize> {
    let eq = |x: u8, y: u8| x.eq_ignore_ascii_case(&y);
    let n = b.len();
    // Three rows: i-2, i-1, i.
    let mut before: Vec<usize> = vec![0; n + 1];
    let mut prev: Vec<usize> = (0..=n).collect();
    let mut row: Vec<usize> = vec![0; n + 1];
    for (i, &ca) in a.iter().enumerate() {
        row[0] = i + 1;
        let mut least = row[0];
        for (j, &cb) in b.iter().enumerate() {
            let cost = usize::from(!eq(ca, cb));
            let mut d = (prev[j] + cost).min(prev[j + 1] + 1).min(row[j] + 1);
            if i > 0 && j > 0 && eq(ca, b[j - 1]) && eq(a[i - 1], cb) {
                d = d.min(before[j - 1] + 1);
            }
            row[j + 1] = d;
            least = least.min(d);
        }
        if least > limit {
            return None;
        }
        std::mem::swap(&mut before, &mut prev);
        std::mem::swap(&mut prev, &mut row);
    }
    let d = prev[n];
    (d <= limit).then_some(d)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn distances() {
        let d = |a: &str, b: &str| distance(a.as_bytes(), b.as_bytes(), 10);
        assert_eq!(d("replcas", "replicas"), Some(1));
        assert_eq!(d("contianers", "containers"), Some(1));
        assert_eq!(d("imagepullpolicy", "imagePullPolicy"), Some(0));
        assert_eq!(d("", "abc"), Some(3));
        assert_eq!(d("abc", ""), Some(3));
        assert_eq!(d("kitten", "sitting"), Some(3));
        assert_eq!(distance(b"kitten", b"sitting", 2), None);
    }

    #[test]
    fn closest_prefers_small_distance_then_shared_prefix() {
        let fields = [
            "minReadySeconds",
            "paused",
            "replicas",
            "selector",
            "strategy",
            "template",
        ];
        assert_eq!(closest("replcas", fields), Some("replicas"));
        assert_eq!(closest("Replicas", fields), Some("replicas"));
        assert_eq!(closest("tempalte", fields), Some("template"));
        assert_eq!(closest("zzzzzzzz", fields), None);
        assert_eq!(closest("replicas", fields), None, "never the name itself");
        // Two candidates one edit away: the one sharing the longer prefix wins.
        assert_eq!(closest("porta", ["xorta", "ports"]), Some("ports"));
        // Short names only match by case.
        assert_eq!(closest("ip", ["id", "IP"]), Some("IP"));
        let long = "a".repeat(10_000);
        assert_eq!(closest(&long, [long.as_str()]), None);
    }
}
