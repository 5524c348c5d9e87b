//! Measures what checking patches against the schema costs in-process: making the built-in
//! schema, a kind's root and one lookup, and `check_patch` / `check_json6902` on small patches
//! (clean, with a typo, with the lost indentation that needs a search for the misplaced field).
//!
//! `cargo run --release --example schema_check_timing` prints the median of 31 batches, per call.
//! The process start-up cost is measured from outside (hyperfine on the binary); this isolates
//! the library's share.

use std::hint::black_box;
use std::time::Instant;

use krm_merge::patch::json6902::{parse_ops, Op};
use krm_merge::schema::{check_json6902, check_patch, Gvk, Schema};
use krm_merge::yaml::{parse_stream, Node};

fn median_ns(batch: u32, mut f: impl FnMut()) -> f64 {
    let mut samples: Vec<f64> = (0..31)
        .map(|_| {
            let t = Instant::now();
            for _ in 0..batch {
                f();
            }
            t.elapsed().as_nanos() as f64 / f64::from(batch)
        })
        .collect();
    samples.sort_by(f64::total_cmp);
    samples[samples.len() / 2]
}

fn doc(text: &str) -> Node<'_> {
    let docs = parse_stream(text).expect("YAML");
    docs.into_iter()
        .next()
        .and_then(|d| d.root)
        .expect("a document")
}

fn main() {
    let kind = Gvk::new("apps/v1", "Deployment");
    let builtin = median_ns(100_000, || {
        let s = Schema::builtin();
        let root = s.root("apps", "v1", "Deployment");
        black_box(s.field(black_box(root), "spec"));
    });
    println!("Schema::builtin() + root + one field lookup: {builtin:.0} ns");

    let s = Schema::builtin();
    let patches = [
        ("clean", "spec:\n  replicas: 3\n  template:\n    spec:\n      containers:\n      - name: app\n        image: nginx:1.27\n        resources:\n          limits: {cpu: 500m}\n"),
        ("typo", "spec:\n  replcas: 3\n"),
        ("lost indentation", "spec:\nreplicas: 3\n"),
        ("misplaced container field", "imagePullPolicy: Always\n"),
    ];
    for (name, text) in patches {
        let node = doc(text);
        let n = check_patch(&s, kind, &node).len();
        let t = median_ns(10_000, || {
            black_box(check_patch(&s, kind, black_box(&node)));
        });
        println!("check_patch, {name} ({n} findings): {t:.0} ns");
    }
    let ops_doc = doc("- op: replace\n  path: /spec/template/spec/containers/[name=app]/image\n  value: nginx\n- op: add\n  path: /spec/replcas\n  value: 3\n");
    let ops = parse_ops(&ops_doc).expect("ops");
    let n = check_json6902(&s, kind, ops.iter().map(Op::pointers)).len();
    let t = median_ns(10_000, || {
        black_box(check_json6902(
            &s,
            kind,
            black_box(&ops).iter().map(Op::pointers),
        ));
    });
    println!("check_json6902, two ops ({n} findings): {t:.0} ns");
}
