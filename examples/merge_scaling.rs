//! How the merges and patches scale with the size of the resource and the patch (every
//! merge and patch must be O(n log n) or better). For each case and each size
//! n it builds a resource and a patch of n elements, runs the walker once in-process and prints
//! the time it took (the parse of the inputs is not counted; it is printed as a baseline).
//!
//! `merge_scaling [--cap SECONDS] [--case NAME]... [N ...]` (default sizes 10000 100000 1000000).
//! A case stops at the first size that takes longer than the cap (default 20 s): quadratic code
//! would take hours at the next one. `tools/bench.py --scaling` runs it and prints the table.
//!
//! The cases:
//!
//! | case | resource | patch |
//! |---|---|---|
//! | `parse` | the `merge2-map` resource | (parse only: the floor) |
//! | `merge2-finalizers` | `metadata.finalizers`, n strings | `$deleteFromPrimitiveList/finalizers` of n/2 and `finalizers` of n/2 new and n/2 old |
//! | `merge2-env` | one container's `env`, n `{name, value}` | n elements, half changed, half new |
//! | `merge2-env-kustomize` | the same, with kustomize's options | the same |
//! | `merge2-order` | the same `env` | `$setElementOrder/env` naming all n in reverse, and n/2 elements |
//! | `merge2-retain` | a map of n keys | `$retainKeys` of n/2 keys |
//! | `merge2-map` | a ConfigMap's `data`, n keys | n keys: half changed, a quarter new, a quarter `null` |
//! | `jsonmerge-map` | the same | the same |
//! | `json6902-map` | the same | n operations: `remove` of the last n/4 keys (last first), `replace` of half the keys, `add` of n/4 new |
//! | `merge3-map`, `merge3-env`, `merge3-finalizers` | the resource with a local change | original and updated of the same size |
//! | `apply-map`, `apply-env`, `apply-finalizers` | the live object with the annotation | the local configuration |

use std::time::{Duration, Instant};

use krm_merge::merge::{apply, merge2, merge3, Context};
use krm_merge::patch::{json6902, jsonmerge};
use krm_merge::schema::Schema;
use krm_merge::yaml::{self, Node};

const CASES: &[&str] = &[
    "parse",
    "merge2-finalizers",
    "merge2-env",
    "merge2-env-kustomize",
    "merge2-order",
    "merge2-retain",
    "merge2-map",
    "jsonmerge-map",
    "json6902-map",
    "merge3-map",
    "merge3-env",
    "merge3-finalizers",
    "apply-map",
    "apply-env",
    "apply-finalizers",
];

fn main() {
    let mut cap = Duration::from_secs(20);
    let mut cases: Vec<String> = Vec::new();
    let mut sizes: Vec<usize> = Vec::new();
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        match a.as_str() {
            "--cap" => {
                let s: f64 = args
                    .next()
                    .and_then(|v| v.parse().ok())
                    .expect("--cap SECONDS");
                cap = Duration::from_secs_f64(s);
            }
            "--case" => cases.push(args.next().expect("--case NAME")),
            n => sizes.push(n.parse().expect("a size")),
        }
    }
    if sizes.is_empty() {
        sizes = vec![10_000, 100_000, 1_000_000];
    }
    if cases.is_empty() {
        cases = CASES.iter().map(|c| (*c).to_owned()).collect();
    }
    println!("case\tn\tinput bytes\tseconds");
    for case in &cases {
        assert!(CASES.contains(&case.as_str()), "unknown case {case}");
        for &n in &sizes {
            let (bytes, took) = run(case, n);
            println!("{case}\t{n}\t{bytes}\t{:.3}", took.as_secs_f64());
            if took > cap {
                println!("{case}\t(stopped: over the cap of {} s)", cap.as_secs_f64());
                break;
            }
        }
    }
}

fn parse(text: &str) -> Node<'static> {
    yaml::parse_stream(text)
        .expect("generated YAML")
        .remove(0)
        .root
        .expect("a document")
        .into_owned()
}

/// A ConfigMap with `n` data keys `kI: vI`.
fn config_map(n: usize, value: impl Fn(usize) -> String) -> String {
    let mut s = String::with_capacity(n * 16 + 64);
    s.push_str("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: big\ndata:\n");
    for i in 0..n {
        s.push_str(&format!("  k{i}: {}\n", value(i)));
    }
    s
}

/// The map patch: the first half of the keys changed, keys n..n+n/4 new, the last quarter null.
fn map_patch(n: usize) -> String {
    let mut s = String::with_capacity(n * 16 + 16);
    s.push_str("data:\n");
    for i in 0..n / 2 {
        s.push_str(&format!("  k{i}: changed{i}\n"));
    }
    for i in n..n + n / 4 {
        s.push_str(&format!("  k{i}: new{i}\n"));
    }
    for i in n - n / 4..n {
        s.push_str(&format!("  k{i}: null\n"));
    }
    s
}

/// A Deployment whose one container has `n` env entries (`EI: value`), and `head` in its
/// container before `env`.
fn deployment(n: usize, value: impl Fn(usize) -> String, extra: &str) -> String {
    let mut s = String::with_capacity(n * 40 + 256);
    s.push_str("apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: big\nspec:\n  template:\n    spec:\n      containers:\n      - name: app\n");
    s.push_str(extra);
    s.push_str("        env:\n");
    for i in 0..n {
        s.push_str(&format!(
            "        - name: E{i}\n          value: {}\n",
            value(i)
        ));
    }
    s
}

/// Env entries `from..to` as patch elements.
fn env_elements(s: &mut String, range: std::ops::Range<usize>, value: &str) {
    for i in range {
        s.push_str(&format!(
            "        - name: E{i}\n          value: {value}{i}\n"
        ));
    }
}

/// A ConfigMap with `n` finalizers `example.com/fI`.
fn finalizers(n: usize, extra: &str) -> String {
    let mut s = String::with_capacity(n * 24 + 64);
    s.push_str("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: big\n");
    s.push_str(extra);
    s.push_str("  finalizers:\n");
    for i in 0..n {
        s.push_str(&format!("  - example.com/f{i}\n"));
    }
    s
}

fn time(f: impl FnOnce()) -> Duration {
    let t = Instant::now();
    f();
    t.elapsed()
}

/// Runs one case at size `n`: the bytes of its inputs and the time of the walker alone.
fn run(case: &str, n: usize) -> (usize, Duration) {
    let schema = Schema::builtin();
    let cm_root = schema.root("", "v1", "ConfigMap");
    let deploy_root = schema.root("apps", "v1", "Deployment");
    let m2 = merge2::Options::default();
    let kustomize = merge2::Options {
        new_items: merge2::NewItems::Prepend,
        infer_keys: false,
        kustomize: true,
    };
    let none = Default::default();
    match case {
        "parse" => {
            let text = config_map(n, |i| format!("v{i}"));
            let t = time(|| drop(parse(&text)));
            (text.len(), t)
        }
        "merge2-finalizers" => {
            let dest_text = finalizers(n, "");
            let mut p = String::from("metadata:\n  $deleteFromPrimitiveList/finalizers:\n");
            for i in (0..n).step_by(2) {
                p.push_str(&format!("  - example.com/f{i}\n"));
            }
            p.push_str("  finalizers:\n");
            for i in n / 2..n + n / 2 {
                p.push_str(&format!("  - example.com/f{i}\n"));
            }
            let (mut dest, patch) = (parse(&dest_text), parse(&p));
            let t = time(|| {
                merge2::merge(
                    &mut dest,
                    &patch,
                    &Context::new(&schema, cm_root, &none).with(m2),
                )
                .expect("merges");
            });
            (dest_text.len() + p.len(), t)
        }
        "merge2-env" | "merge2-env-kustomize" | "merge2-order" => {
            let dest_text = deployment(n, |i| format!("v{i}"), "");
            let mut p = String::from(
                "spec:\n  template:\n    spec:\n      containers:\n      - name: app\n",
            );
            if case == "merge2-order" {
                p.push_str("        $setElementOrder/env:\n");
                for i in (0..n).rev() {
                    p.push_str(&format!("        - name: E{i}\n"));
                }
                // The patch's own list follows the order: reversed too.
                p.push_str("        env:\n");
                for i in (0..n / 2).rev() {
                    p.push_str(&format!(
                        "        - name: E{i}\n          value: changed{i}\n"
                    ));
                }
            } else {
                p.push_str("        env:\n");
                env_elements(&mut p, 0..n / 2, "changed");
                env_elements(&mut p, n..n + n / 2, "new");
            }
            let opts = if case == "merge2-env-kustomize" {
                kustomize
            } else {
                m2
            };
            let (mut dest, patch) = (parse(&dest_text), parse(&p));
            let t = time(|| {
                merge2::merge(
                    &mut dest,
                    &patch,
                    &Context::new(&schema, deploy_root, &none).with(opts),
                )
                .expect("merges");
            });
            (dest_text.len() + p.len(), t)
        }
        "merge2-retain" => {
            // Deployment spec.strategy has retainKeys; a map of n keys under it.
            let mut d = String::from("apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: big\nspec:\n  strategy:\n");
            for i in 0..n {
                d.push_str(&format!("    k{i}: v{i}\n"));
            }
            let mut p = String::from("spec:\n  strategy:\n    $retainKeys:\n");
            for i in (0..n).step_by(2) {
                p.push_str(&format!("    - k{i}\n"));
            }
            p.push_str("    k0: changed\n");
            let (mut dest, patch) = (parse(&d), parse(&p));
            let t = time(|| {
                merge2::merge(
                    &mut dest,
                    &patch,
                    &Context::new(&schema, deploy_root, &none).with(m2),
                )
                .expect("merges");
            });
            (d.len() + p.len(), t)
        }
        "merge2-map" | "jsonmerge-map" => {
            let d = config_map(n, |i| format!("v{i}"));
            let p = map_patch(n);
            let (mut dest, patch) = (parse(&d), parse(&p));
            let t = time(|| {
                if case == "merge2-map" {
                    merge2::merge(
                        &mut dest,
                        &patch,
                        &Context::new(&schema, cm_root, &none).with(m2),
                    )
                    .expect("merges");
                } else {
                    jsonmerge::merge(&mut dest, &patch).expect("merges");
                }
            });
            (d.len() + p.len(), t)
        }
        "json6902-map" => {
            let d = config_map(n, |i| format!("v{i}"));
            let mut p = String::with_capacity(n * 48);
            for i in 0..n / 2 {
                p.push_str(&format!(
                    "- {{op: replace, path: /data/k{i}, value: changed{i}}}\n"
                ));
            }
            for i in n..n + n / 4 {
                p.push_str(&format!("- {{op: add, path: /data/k{i}, value: new{i}}}\n"));
            }
            // From the end: a remove before the end shifts what follows (bounded, see
            // json6902::SHIFT_BUDGET), which no index avoids.
            let mut removes = String::new();
            for i in (n - n / 4..n).rev() {
                removes.push_str(&format!("- {{op: remove, path: /data/k{i}}}\n"));
            }
            p.insert_str(0, &removes);
            let (mut dest, patch) = (parse(&d), parse(&p));
            let ops = json6902::parse_ops(&patch).expect("ops");
            let t = time(|| json6902::patch(&mut dest, &ops).expect("applies"));
            (d.len() + p.len(), t)
        }
        "merge3-map" | "apply-map" => {
            let original = config_map(n, |i| format!("v{i}"));
            let updated = config_map(n, |i| {
                if i % 2 == 0 {
                    format!("up{i}")
                } else {
                    format!("v{i}")
                }
            });
            let local = config_map(n, |i| {
                if i % 3 == 0 {
                    format!("local{i}")
                } else {
                    format!("v{i}")
                }
            });
            three(case, n, &original, &updated, &local, cm_root)
        }
        "merge3-env" | "apply-env" => {
            let original = deployment(n, |i| format!("v{i}"), "");
            let updated = deployment(
                n,
                |i| {
                    if i % 2 == 0 {
                        format!("up{i}")
                    } else {
                        format!("v{i}")
                    }
                },
                "",
            );
            let local = deployment(
                n,
                |i| {
                    if i % 3 == 0 {
                        format!("local{i}")
                    } else {
                        format!("v{i}")
                    }
                },
                "",
            );
            three(case, n, &original, &updated, &local, deploy_root)
        }
        "merge3-finalizers" | "apply-finalizers" => {
            let original = finalizers(n, "");
            let mut updated = finalizers(n, "");
            for i in n..n + n / 2 {
                updated.push_str(&format!("  - example.com/f{i}\n"));
            }
            let local = finalizers(n, "");
            three(case, n, &original, &updated, &local, cm_root)
        }
        other => panic!("unknown case {other}"),
    }
}

/// merge3 (`original` to `updated` into `local`) or apply (`updated` applied to `local` with
/// `original` as its last-applied configuration).
fn three(
    case: &str,
    _n: usize,
    original: &str,
    updated: &str,
    local: &str,
    root: krm_merge::schema::Cursor,
) -> (usize, Duration) {
    let schema = Schema::builtin();
    let (o, u, mut l) = (parse(original), parse(updated), parse(local));
    let bytes = original.len() + updated.len() + local.len();
    let none = Default::default();
    let t = if case.starts_with("merge3") {
        time(|| {
            merge3::merge(
                &mut l,
                &o,
                &u,
                &Context::new(&schema, root, &none).with(merge3::Options::default()),
            )
            .expect("merges");
        })
    } else {
        time(|| {
            apply::three_way(
                &mut l,
                Some(&o),
                &u,
                &Context::new(&schema, root, &none).with(apply::Options::default()),
            )
            .expect("applies");
        })
    };
    (bytes, t)
}
