//! The whole write of a package upgrade under injected failures: `merge3 ORIGINAL/ UPDATED/
//! LOCAL/` with `--in-place` and with `--output DIR`, its file system failing at each of its
//! calls in turn. Every local file stays wholly old (bytes and permission bits), nothing the
//! upgrade adds is left behind (no new file, no new directory, no `--output` directory), no
//! temporary is left, and the error names the file; the one call whose failure comes after
//! every file is in place (the last sync) leaves the package wholly new, and says so.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

use proptest::prelude::*;

use super::*;
use crate::cli::args::{Level, Report, Source, Write};
use crate::cli::out::{Colors, StdoutIs};
use crate::cli::writeback::{tree, Failing};

/// A package upgrade: per base resource, its file and what upstream does (0 nothing, 1 changes
/// it, 2 deletes it); upstream additions (to base file `t`, else to a new directory).
#[derive(Clone, Debug)]
struct Case {
    base: Vec<(usize, u8)>,
    added: Vec<usize>,
}

fn case() -> impl Strategy<Value = Case> {
    (
        prop::collection::vec((0usize..3, 0u8..3), 1..7),
        prop::collection::vec(0usize..5, 0..3),
    )
        .prop_map(|(base, added)| Case { base, added })
}

fn doc(name: &str, v: &str) -> String {
    format!("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {name}\ndata:\n  v: \"{v}\"\n")
}

/// ORIGINAL, UPDATED and LOCAL (a copy of ORIGINAL) under `root`.
fn lay_out(root: &Path, c: &Case) {
    let mut original: BTreeMap<String, Vec<String>> = BTreeMap::new();
    let mut updated: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for (i, &(f, fate)) in c.base.iter().enumerate() {
        let file = format!("d{}/f{f}.yaml", f % 2);
        let name = format!("b{i}");
        original
            .entry(file.clone())
            .or_default()
            .push(doc(&name, "o"));
        let docs = updated.entry(file).or_default();
        match fate {
            0 => docs.push(doc(&name, "o")),
            1 => docs.push(doc(&name, "up")),
            _ => {}
        }
    }
    for (i, &t) in c.added.iter().enumerate() {
        let file = match original.keys().nth(t) {
            Some(f) => f.clone(),
            None => format!("new/deep/n{t}.yaml"),
        };
        updated
            .entry(file)
            .or_default()
            .push(doc(&format!("a{i}"), "new"));
    }
    for (side, files) in [
        ("original", &original),
        ("updated", &updated),
        ("local", &original),
    ] {
        for (rel, docs) in files {
            let p = root.join(side).join(rel);
            fs::create_dir_all(p.parent().unwrap()).unwrap();
            fs::write(&p, docs.join("---\n")).unwrap();
        }
    }
}

fn scratch() -> PathBuf {
    use std::sync::atomic::{AtomicUsize, Ordering};
    static N: AtomicUsize = AtomicUsize::new(0);
    let d = std::env::temp_dir().join(format!(
        "krm-merge-upgrade-unit-{}-{}",
        std::process::id(),
        N.fetch_add(1, Ordering::Relaxed)
    ));
    let _ = fs::remove_dir_all(&d);
    fs::create_dir_all(&d).unwrap();
    d
}

/// `merge3 original updated local` under `root`, written as `write` says through `fs`: the
/// exit code and what was said.
fn upgrade(root: &Path, write: &Write, fs: &dyn writeback::Fs) -> (i32, String) {
    let side = |s: &str| Source::Path(root.join(s));
    let (original, updated, local) = (side("original"), side("updated"), side("local"));
    let report = Report {
        level: Level::default(),
        results: None,
    };
    let req = Request {
        original: &original,
        updated: &updated,
        local: &local,
        opts: PatchOptions::default(),
        write,
        summary: false,
        report: &report,
    };
    let (mut out, mut err) = (Vec::new(), Vec::new());
    let mut io = Io {
        stdout: &mut out,
        stderr: &mut err,
        stdout_is: StdoutIs::default(),
        color: Colors::default(),
    };
    let mut empty: &[u8] = &[];
    let stdin = Stdin {
        read: &mut empty,
        terminal: false,
    };
    let code = run_on(&req, stdin, &mut io, fs);
    (code, String::from_utf8(err).unwrap())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 16, ..ProptestConfig::default() })]

    #[test]
    fn an_upgrade_is_written_whole_or_not_at_all(c in case(), output in any::<bool>()) {
        let root = scratch();
        lay_out(&root, &c);
        let local = root.join("local");
        let write = if output { Write::Output(root.join("out")) } else { Write::InPlace };
        let written = if output { root.join("out") } else { local.clone() };
        let old = tree(&local);
        // What the upgrade makes, written on the real file system in a copy.
        let model = scratch();
        lay_out(&model, &c);
        let model_write = if output { Write::Output(model.join("out")) } else { Write::InPlace };
        prop_assert_eq!(upgrade(&model, &model_write, &writeback::Real).0, 0);
        let new = tree(&if output { model.join("out") } else { model.join("local") });
        let mut fail_at = 0;
        loop {
            let fs = Failing::new(fail_at);
            let (code, said) = upgrade(&root, &write, &fs);
            if fail_at >= fs.calls.get() {
                // Every call made, none failed: the upgrade is whole.
                prop_assert_eq!(code, 0, "{}", said);
                prop_assert_eq!(tree(&written), new.clone());
                break;
            }
            prop_assert_eq!(code, 1, "call {} failed unsaid", fail_at);
            prop_assert!(said.contains("injected failure"), "{}", said);
            prop_assert!(said.contains(&root.display().to_string()), "no file named: {}", said);
            if said.contains("every file is written") {
                prop_assert_eq!(tree(&written), new.clone(), "{}", said);
                if output {
                    fs::remove_dir_all(&written).unwrap();
                } else {
                    fs::remove_dir_all(&root).unwrap();
                    lay_out(&root, &c);
                }
            } else {
                prop_assert!(said.ends_with("nothing was written\n"), "{}", said);
                prop_assert_eq!(tree(&local), old.clone(), "{}", said);
                prop_assert!(!local.join("new").exists(), "{}: a new directory stays", said);
                prop_assert!(!root.join("out").exists(), "{}: --output left a directory", said);
                // No temporary anywhere (`tree` panics on one), beside the output either.
                let _ = tree(&root);
            }
            fail_at += 1;
        }
        // An upgrade in place that changes nothing writes nothing (no call to fail); any other
        // makes a temporary, renames it and syncs at the least.
        let unchanged = !output && new == old;
        prop_assert!(unchanged || fail_at > 2, "too few calls to fail: {}", fail_at);
        prop_assert!(!unchanged || fail_at == 0, "an unchanging upgrade wrote: {}", fail_at);
        fs::remove_dir_all(&root).unwrap();
        fs::remove_dir_all(&model).unwrap();
    }
}
