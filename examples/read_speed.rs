//! How fast each way of reading a YAML stream is, in process: `read_speed FILE [RUNS]`.
//! Prints the median time and throughput of: the fast reader's events alone, its trees
//! (`parse_each`, the path every command takes), and the same trees from granit-parser alone.

use std::time::Instant;

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn main() {
    let mut args = std::env::args().skip(1);
    let path = args.next().expect("usage: read_speed FILE [RUNS]");
    let runs: usize = args.next().and_then(|a| a.parse().ok()).unwrap_or(5);
    // `ONLY=events|tree|granit`: one of them (for profiling).
    let only = std::env::var("ONLY").unwrap_or_default();
    let src = std::fs::read_to_string(&path).expect("readable UTF-8 file");
    let mb = src.len() as f64 / 1e6;
    let time = |f: &dyn Fn() -> usize| {
        let mut times = Vec::new();
        let mut n = 0;
        for _ in 0..runs {
            let t = Instant::now();
            n = f();
            times.push(t.elapsed().as_secs_f64());
        }
        (median(times), n)
    };
    let report = |what: &str, (t, n): (f64, usize)| {
        println!("{what:<28} {t:.3} s  {:>6.1} MB/s  ({n})", mb / t);
    };
    let on = |w: &str| only.is_empty() || only == w;
    if on("events") {
        report(
            "fast reader, events only",
            time(&|| krm_merge::yaml::fast_reader_events(&src)),
        );
    }
    if on("tree") {
        report(
            "parse_each (fast reader)",
            time(&|| {
                let mut n = 0;
                krm_merge::yaml::parse_each(&src, |_| n += 1).expect("valid YAML");
                n
            }),
        );
    }
    if on("granit") {
        report(
            "parse (granit-parser alone)",
            time(&|| {
                krm_merge::yaml::parse_stream_granit(&src)
                    .expect("valid YAML")
                    .len()
            }),
        );
    }
}
