//! Checks the fast YAML reader against granit-parser: `fast_check [--mutate] PATH...` (files,
//! or directories read recursively for *.yaml, *.yml, *.json). For each text: the events
//! agree, and the trees (or the errors) are the same. With `--mutate`, also every text made
//! from it by deleting one byte, or inserting one of a set of telling characters, at each
//! position. Prints what disagrees, and how much the fast reader read whole.
//!
//! `fast_check --coverage PATH...` measures instead: one line per file, `FAST_BYTES
//! TOTAL_BYTES PATH`, the bytes of the file the fast reader read (granit-parser reading the
//! rest) and its size (`tools/bench.py` reads these lines). A file that is not YAML (or not
//! UTF-8) counts no fast bytes. `--stops` prints, per file the fast reader does not read
//! whole, the lines where it stopped.

use krm_merge::yaml::{
    check_fast_reader, fast_reader_coverage, fast_reader_stops, parse_stream, parse_stream_granit,
};

fn files(p: &std::path::Path, out: &mut Vec<std::path::PathBuf>) {
    if p.is_dir() {
        let mut entries: Vec<_> = std::fs::read_dir(p)
            .into_iter()
            .flatten()
            .flatten()
            .map(|e| e.path())
            .collect();
        entries.sort();
        for e in entries {
            files(&e, out);
        }
    } else if p
        .extension()
        .is_some_and(|e| e == "yaml" || e == "yml" || e == "json")
    {
        out.push(p.to_path_buf());
    }
}

#[derive(Default)]
struct Tally {
    whole: usize,
    partial: usize,
    bad: usize,
}

/// The start of a text, to show with what disagrees.
fn head(src: &str) -> &str {
    let mut end = src.len().min(600);
    while !src.is_char_boundary(end) {
        end -= 1;
    }
    &src[..end]
}

fn check(src: &str, name: &str, t: &mut Tally) {
    match check_fast_reader(src) {
        Ok(true) => t.whole += 1,
        Ok(false) => t.partial += 1,
        Err(e) => {
            t.bad += 1;
            println!("EVENTS {name}: {e}\n  {:?}", head(src));
            return;
        }
    }
    let a = parse_stream(src).map(|d| format!("{d:?}"));
    let b = parse_stream_granit(src).map(|d| format!("{d:?}"));
    if a != b {
        t.bad += 1;
        println!("TREES {name}\n  {:?}", head(src));
    }
}

fn main() {
    let mut mutate = false;
    let mut coverage = false;
    let mut stops = false;
    let mut all = Vec::new();
    for a in std::env::args().skip(1) {
        match a.as_str() {
            "--mutate" => mutate = true,
            "--coverage" => coverage = true,
            "--stops" => stops = true,
            _ => files(std::path::Path::new(&a), &mut all),
        }
    }
    if stops {
        for f in &all {
            let Ok(src) = std::fs::read_to_string(f) else {
                continue;
            };
            let lines = fast_reader_stops(src.strip_prefix('\u{feff}').unwrap_or(&src));
            for l in lines {
                let text = src.lines().nth(l.saturating_sub(1)).unwrap_or("");
                println!(
                    "{}:{l}: {}",
                    f.display(),
                    text.chars().take(100).collect::<String>()
                );
            }
        }
        return;
    }
    if coverage {
        for f in &all {
            let bytes = std::fs::read(f).unwrap_or_default();
            let fast = std::str::from_utf8(&bytes)
                .ok()
                .and_then(|s| fast_reader_coverage(s).ok())
                .unwrap_or(0);
            println!("{fast} {} {}", bytes.len(), f.display());
        }
        return;
    }
    let mut t = Tally::default();
    let inserts = [
        " ", "\n", "#", ":", "-", "'", "\"", "|", ">", "[", "]", "{", "}", ",", "\t", "&a ", "*a",
        "!t ", "? ", "- ", ": ", " #", "---\n", "...\n", "\\", "é", "\u{85}", "0",
    ];
    for f in &all {
        let Ok(src) = std::fs::read_to_string(f) else {
            continue;
        };
        let name = f.display().to_string();
        check(&src, &name, &mut t);
        if !mutate || src.len() > 4000 {
            continue;
        }
        let cuts: Vec<usize> = (0..=src.len())
            .filter(|&i| src.is_char_boundary(i))
            .collect();
        for w in cuts.windows(2) {
            let mut m = String::from(&src[..w[0]]);
            m.push_str(&src[w[1]..]);
            check(&m, &format!("{name} without byte {}", w[0]), &mut t);
        }
        for &i in &cuts {
            for ins in inserts {
                let mut m = String::from(&src[..i]);
                m.push_str(ins);
                m.push_str(&src[i..]);
                check(&m, &format!("{name} with {ins:?} at {i}"), &mut t);
            }
        }
    }
    println!(
        "{} texts: {} read whole by the fast reader, {} partly or not, {} disagreements",
        t.whole + t.partial + t.bad,
        t.whole,
        t.partial,
        t.bad
    );
}
