//! Generated patches under kustomize: for generated base/variant pairs — the base a
//! generated case's resources, the variant what `kubectl kustomize` makes of them with the
//! case's patches — `krm-merge diff --format kustomization` writes the `patches:` that turn the
//! base into the variant, once as strategic merge patches and once as JSON patches; a
//! kustomization of the base with those patches, built by `kubectl kustomize`, must give the
//! variant (as data, by identity), but the resources only the variant has, which no patch
//! creates and the diff reports.
//!
//! Cases where kustomize fails or changes nothing are skipped (there is no pair). Where the diff
//! warns that a patch cannot give the variant exactly (a null that kyaml drops), the build is
//! not compared for that type; where it refuses (kyaml could not give the variant at all), the
//! reason is counted. Both must stay rare: at most one case in ten per type.
//!
//! Knobs: `KRM_MERGE_KDIFF_GEN_CASES` (default 120), `KRM_MERGE_KDIFF_SEED`,
//! `KRM_MERGE_KDIFF_JOBS`, `KRM_MERGE_KDIFF_KEEP=1` (keep every case directory).

use std::collections::BTreeMap;
use std::fs;
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

use serde_json::{json, Value};

use super::gen::Gen;
use super::{by_identity, data_diff, env_usize, flag, kustomize, render, rng, Run, DEFAULT_SEED};
use crate::support::*;

const DEFAULT_CASES: usize = 120;

/// What became of one patch type in one case.
#[derive(Debug)]
enum Outcome {
    /// kustomize with the generated patches gave the variant.
    Same,
    /// The diff warned that its patches cannot give the variant exactly; not compared.
    Warned(String),
    /// The diff refused (exit 1), saying why.
    Refused(String),
    /// kustomize's build differs from the variant, or fails.
    Mismatch(String),
}

/// What became of each patch type in a case.
type Outcomes = Vec<(&'static str, Outcome)>;

/// One case: `None` when it gives no pair.
fn run_case(kubectl: &Path, root: &Path, seed: u64, index: usize) -> Option<Outcomes> {
    let case = Gen::new(rng::case_seed(seed, index), false).case();
    let files = render(&case);
    let dir = root.join(format!("case-{index:04}"));
    fs::create_dir_all(&dir).expect("case dir");
    fs::write(dir.join("resources.yaml"), &files.resources).expect("write");
    fs::write(dir.join("kustomization.yaml"), &files.kustomization).expect("write");
    let out = std::process::Command::new(kubectl)
        .arg("kustomize")
        .arg(&dir)
        .output()
        .expect("run kubectl kustomize");
    let variant_text = String::from_utf8_lossy(&out.stdout).into_owned();
    // List kinds in the base are flattened, as kustomize and the diff read them.
    let base = flatten_lists(docs(&files.resources));
    let variant = docs(&variant_text);
    if !out.status.success() || by_identity(&base) == by_identity(&variant) {
        let _ = fs::remove_dir_all(&dir);
        return None;
    }
    fs::write(dir.join("variant.yaml"), &variant_text).expect("write");
    let base_ids = by_identity(&base);
    // What a build with the generated patches must give: the variant without what only it has.
    let want: BTreeMap<String, Vec<Value>> = by_identity(&variant)
        .into_iter()
        .filter(|(id, _)| base_ids.contains_key(id))
        .collect();
    let mut outcomes = Vec::new();
    for ty in ["merge2", "json6902"] {
        let gen = krm_in(
            &[
                "diff",
                "--format",
                "kustomization",
                "--type",
                ty,
                "resources.yaml",
                "variant.yaml",
            ],
            "",
            Some(&dir),
        );
        let outcome = match gen.code {
            0 => {
                let build = dir.join(ty);
                fs::create_dir_all(&build).expect("dir");
                fs::copy(dir.join("resources.yaml"), build.join("resources.yaml")).expect("copy");
                let mut k = docs(&gen.stdout).pop().unwrap_or_else(|| json!({}));
                k["resources"] = json!(["resources.yaml"]);
                fs::write(
                    build.join("kustomization.yaml"),
                    yaml_text(&krm_merge::yaml::from_json(&k)),
                )
                .expect("write");
                match kustomize(kubectl, &build) {
                    Run::Err(e) => Outcome::Mismatch(format!("kustomize fails: {e}")),
                    Run::Ok(got) => {
                        let got = by_identity(&got);
                        let warned: Vec<&str> = gen
                            .stderr
                            .lines()
                            .filter(|l| l.contains("warning:") && !l.contains("only in NEW"))
                            .collect();
                        if got == want {
                            Outcome::Same
                        } else if !warned.is_empty() {
                            Outcome::Warned(warned.join("; "))
                        } else {
                            let mut at = Vec::new();
                            for (id, w) in &want {
                                match got.get(id) {
                                    Some(g) if g == w => {}
                                    Some(g) if g.len() == w.len() => {
                                        for (x, y) in w.iter().zip(g) {
                                            data_diff(x, y, id.clone(), &mut at);
                                        }
                                    }
                                    _ => at.push(format!("{id}: missing or repeated")),
                                }
                            }
                            Outcome::Mismatch(format!(
                                "differs from the variant (variant | kustomize): {}",
                                at.join(", ")
                            ))
                        }
                    }
                }
            }
            1 => Outcome::Refused(gen.stderr.trim().to_owned()),
            code => Outcome::Mismatch(format!("krm-merge diff exited {code}: {}", gen.stderr)),
        };
        outcomes.push((ty, outcome));
    }
    let keep = flag("KRM_MERGE_KDIFF_KEEP")
        || outcomes
            .iter()
            .any(|(_, o)| matches!(o, Outcome::Mismatch(_)));
    if !keep {
        let _ = fs::remove_dir_all(&dir);
    }
    Some(outcomes)
}

#[test]
#[cfg_attr(not(host_kubectl), ignore = "needs kubectl on PATH")]
fn generated_patches_give_the_variant_under_kustomize() {
    let kubectl = host("kubectl");
    let seed = std::env::var("KRM_MERGE_KDIFF_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(DEFAULT_SEED);
    let count = env_usize("KRM_MERGE_KDIFF_GEN_CASES").unwrap_or(DEFAULT_CASES);
    let jobs = env_usize("KRM_MERGE_KDIFF_JOBS")
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(2, |n| n.get()))
        .max(1);
    let root = std::env::temp_dir().join(format!("krm-merge-kdiff-gen-{}", std::process::id()));
    let _ = fs::remove_dir_all(&root);
    fs::create_dir_all(&root).expect("temp dir");
    let next = AtomicUsize::new(0);
    let results: Mutex<Vec<(usize, Outcomes)>> = Mutex::new(Vec::new());
    std::thread::scope(|s| {
        for _ in 0..jobs {
            s.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::SeqCst);
                if i >= count {
                    break;
                }
                if let Some(o) = run_case(&kubectl, &root, seed, i) {
                    results.lock().expect("lock").push((i, o));
                }
            });
        }
    });
    let mut results = results.into_inner().expect("lock");
    results.sort_by_key(|(i, _)| *i);
    let pairs = results.len();
    let mut tally: BTreeMap<(&str, &str), usize> = BTreeMap::new();
    let mut mismatches = Vec::new();
    for (i, outcomes) in &results {
        for (ty, o) in outcomes {
            let what = match o {
                Outcome::Same => "same",
                Outcome::Warned(w) => {
                    println!("case {i} {ty}: warned: {w}");
                    "warned"
                }
                Outcome::Refused(r) => {
                    println!("case {i} {ty}: refused: {r}");
                    "refused"
                }
                Outcome::Mismatch(m) => {
                    mismatches.push(format!("case {i} {ty}: {m}"));
                    "mismatch"
                }
            };
            *tally.entry((ty, what)).or_default() += 1;
        }
    }
    println!(
        "generated patches under kustomize: {pairs} base/variant pairs from {count} cases (seed {seed}): {tally:?}"
    );
    assert!(pairs * 2 >= count, "only {pairs} pairs from {count} cases");
    assert!(
        mismatches.is_empty(),
        "{} mismatches (case directories kept under {}):\n{}",
        mismatches.len(),
        root.display(),
        mismatches.join("\n")
    );
    for ty in ["merge2", "json6902"] {
        let not_compared =
            tally.get(&(ty, "warned")).unwrap_or(&0) + tally.get(&(ty, "refused")).unwrap_or(&0);
        assert!(
            not_compared * 10 <= pairs,
            "{ty}: {not_compared} of {pairs} pairs not compared"
        );
    }
    if !flag("KRM_MERGE_KDIFF_KEEP") {
        let _ = fs::remove_dir_all(&root);
    }
}
