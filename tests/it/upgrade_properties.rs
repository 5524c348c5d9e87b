//! Whole-package upgrades on random packages, through the binary: `krm-merge merge3 ORIGINAL/
//! UPDATED/ LOCAL/` to stdout, `--in-place` and `--output DIR`, under every `--conflicts`
//! strategy, with the results checked against a model of what an upgrade does, and the
//! promises checked on the files: untouched local files keep their bytes (and, in place, their
//! modification time); local-only resources are unchanged; a local resource is in the output
//! unless upstream deleted it and the local copy had not changed it; an upstream addition is
//! there once; the output re-reads as what stdout printed; `--conflicts error` with a conflict
//! writes nothing; the same upgrade run again on its own output (ORIGINAL = UPDATED) changes
//! nothing.
//!
//! Then real write failures: the binary run with a low `RLIMIT_FSIZE` (a write past it fails
//! with `EFBIG`; `SIGXFSZ` ignored, so that the process sees the error), at limits that make a
//! different file the first to fail, and a target path that is a directory: every local file
//! stays wholly old, nothing added is left behind, no temporary either, and the error names
//! the file.
//!
//! The packages: base resources (ConfigMaps `b<i>`, with fields `u` and `l`) spread over files
//! of two directories, several to a file, some files with a comment or an empty document;
//! upstream leaves each alone, changes `u` or deletes it; the local copy leaves it alone,
//! changes `l` (no conflict), changes `u` (a conflict where upstream changed it too) or deletes
//! it; upstream adds resources (`a<i>`) to its files or to files of a new directory; the local
//! copy adds resources of its own (`m<i>`) to its files or to a file only it has.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use proptest::prelude::*;
use proptest::test_runner::Config;

use crate::support::*;

const FILES: usize = 4;
const STRATEGIES: [&str; 4] = ["warn", "local", "upstream", "error"];

/// What upstream does to a base resource.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Upstream {
    Same,
    Change,
    Delete,
}

/// What the local copy does to a base resource.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Local {
    Same,
    /// `l` changed: never a conflict.
    EditOther,
    /// `u` changed: a conflict when upstream changes or deletes it.
    EditSame,
    Delete,
}

#[derive(Clone, Debug)]
struct Case {
    /// Per base resource: its file, and what each side does to it.
    base: Vec<(usize, Upstream, Local)>,
    /// Per file: a leading comment, an empty document after the first.
    layout: Vec<(bool, bool)>,
    /// Upstream additions: to base file `t` (< FILES), else to new file `new/n<t>.yaml`.
    added: Vec<usize>,
    /// Local-only resources: to base file `t` (< FILES), else to `mine/own.yaml`.
    own: Vec<usize>,
    conflicts: &'static str,
}

fn case() -> impl Strategy<Value = Case> {
    let up = prop::sample::select(vec![Upstream::Same, Upstream::Change, Upstream::Delete]);
    let local = prop::sample::select(vec![
        Local::Same,
        Local::EditOther,
        Local::EditSame,
        Local::Delete,
    ]);
    (
        prop::collection::vec((0..FILES, up, local), 1..10),
        prop::collection::vec((any::<bool>(), any::<bool>()), FILES),
        prop::collection::vec(0..FILES + 2, 0..4),
        prop::collection::vec(0..FILES + 1, 0..3),
        prop::sample::select(STRATEGIES.to_vec()),
    )
        .prop_map(|(base, layout, added, own, conflicts)| Case {
            base,
            layout,
            added,
            own,
            conflicts,
        })
}

fn resource(name: &str, u: &str, l: &str) -> String {
    format!(
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {name}\ndata:\n  u: \"{u}\"\n  l: \"{l}\"\n"
    )
}

fn base_path(j: usize) -> PathBuf {
    PathBuf::from(format!("p{}/f{j}.yaml", j % 2))
}

/// A file's text: its comment, its documents (an empty one after the first, if asked).
fn file_text(j: usize, layout: (bool, bool), docs: &[String]) -> String {
    let mut text = String::new();
    if layout.0 {
        text.push_str(&format!("# file {j}, kept whatever happens\n"));
    }
    for (k, d) in docs.iter().enumerate() {
        if k > 0 || layout.0 {
            text.push_str("---\n");
        }
        text.push_str(d);
        if k == 0 && layout.1 {
            text.push_str("---\n");
        }
    }
    text
}

/// The three sides of a case, as trees of files (relative path to text).
struct Sides {
    original: BTreeMap<PathBuf, String>,
    updated: BTreeMap<PathBuf, String>,
    local: BTreeMap<PathBuf, String>,
}

fn sides(c: &Case) -> Sides {
    let mut o_docs: Vec<Vec<String>> = vec![Vec::new(); FILES];
    let mut u_docs = o_docs.clone();
    let mut l_docs = o_docs.clone();
    for (i, &(f, up, local)) in c.base.iter().enumerate() {
        let name = format!("b{i}");
        o_docs[f].push(resource(&name, "o", "o"));
        match up {
            Upstream::Same => u_docs[f].push(resource(&name, "o", "o")),
            Upstream::Change => u_docs[f].push(resource(&name, "up", "o")),
            Upstream::Delete => {}
        }
        match local {
            Local::Same => l_docs[f].push(resource(&name, "o", "o")),
            Local::EditOther => l_docs[f].push(resource(&name, "o", "loc")),
            Local::EditSame => l_docs[f].push(resource(&name, "mine", "o")),
            Local::Delete => {}
        }
    }
    let mut new_files: BTreeMap<PathBuf, Vec<String>> = BTreeMap::new();
    for (i, &t) in c.added.iter().enumerate() {
        let doc = resource(&format!("a{i}"), "new", "new");
        if t < FILES {
            u_docs[t].push(doc);
        } else {
            new_files
                .entry(PathBuf::from(format!("new/n{t}.yaml")))
                .or_default()
                .push(doc);
        }
    }
    let mut own_file = Vec::new();
    for (i, &t) in c.own.iter().enumerate() {
        let doc = resource(&format!("m{i}"), "own", "own");
        if t < FILES && !o_docs[t].is_empty() {
            l_docs[t].push(doc);
        } else {
            own_file.push(doc);
        }
    }
    // A file upstream has: one the original had, or one the update adds to.
    let tree = |docs: &[Vec<String>]| -> BTreeMap<PathBuf, String> {
        (0..FILES)
            .filter(|&j| !o_docs[j].is_empty() || !docs[j].is_empty())
            .map(|j| (base_path(j), file_text(j, c.layout[j], &docs[j])))
            .collect()
    };
    let original = tree(&o_docs);
    let mut updated = tree(&u_docs);
    for (p, docs) in new_files {
        updated.insert(p, docs.concat_docs());
    }
    let mut local: BTreeMap<PathBuf, String> = tree(&l_docs)
        .into_iter()
        .filter(|(rel, _)| original.contains_key(rel))
        .collect();
    if !own_file.is_empty() {
        local.insert(PathBuf::from("mine/own.yaml"), own_file.concat_docs());
    }
    Sides {
        original,
        updated,
        local,
    }
}

trait ConcatDocs {
    fn concat_docs(&self) -> String;
}

impl ConcatDocs for Vec<String> {
    fn concat_docs(&self) -> String {
        self.join("---\n")
    }
}

/// What the upgrade must give: each resource's `(u, l)` by name; whether there is a conflict
/// (under the strategy).
fn expected(c: &Case) -> (BTreeMap<String, (String, String)>, bool) {
    let mut out = BTreeMap::new();
    let mut conflict = false;
    let s = c.conflicts;
    for (i, &(_, up, local)) in c.base.iter().enumerate() {
        let local_value = match local {
            Local::Same => Some(("o", "o")),
            Local::EditOther => Some(("o", "loc")),
            Local::EditSame => Some(("mine", "o")),
            Local::Delete => None,
        };
        let result = match (up, local) {
            (_, Local::Delete) => None,
            (Upstream::Same, _) => local_value,
            (Upstream::Change, Local::Same) => Some(("up", "o")),
            (Upstream::Change, Local::EditOther) => Some(("up", "loc")),
            (Upstream::Change, Local::EditSame) => {
                conflict = true;
                Some((if s == "local" { "mine" } else { "up" }, "o"))
            }
            (Upstream::Delete, Local::Same) => None,
            (Upstream::Delete, _) => {
                conflict |= s != "upstream";
                if s == "local" {
                    local_value
                } else {
                    None
                }
            }
        };
        if let Some((u, l)) = result {
            out.insert(format!("b{i}"), (u.to_owned(), l.to_owned()));
        }
    }
    for i in 0..c.added.len() {
        out.insert(format!("a{i}"), ("new".to_owned(), "new".to_owned()));
    }
    for i in 0..c.own.len() {
        out.insert(format!("m{i}"), ("own".to_owned(), "own".to_owned()));
    }
    (out, conflict)
}

/// The resources of a stream, by name (a name twice is an error).
fn resources_of(text: &str) -> Result<BTreeMap<String, (String, String)>, String> {
    let mut out = BTreeMap::new();
    for d in docs(text) {
        let name = d["metadata"]["name"].as_str().unwrap_or("").to_owned();
        let field = |f: &str| d["data"][f].as_str().unwrap_or("?").to_owned();
        if out.insert(name.clone(), (field("u"), field("l"))).is_some() {
            return Err(format!("{name} is twice in:\n{text}"));
        }
    }
    Ok(out)
}

fn merge3(dir: &Path, extra: &[&str], conflicts: &str) -> Output {
    let mut cmd = Command::new(bin());
    cmd.current_dir(dir)
        .args([
            "merge3",
            "original",
            "updated",
            "local",
            "--conflicts",
            conflicts,
        ])
        .args(extra)
        .env_remove("KUSTOMIZE_PLUGIN_CONFIG_ROOT");
    cmd.output().expect("run krm-merge")
}

/// The text of a package's files, in the order they are read, as one stream.
fn stream_of(files: &BTreeMap<PathBuf, String>) -> String {
    files
        .values()
        .map(|t| {
            if t.ends_with('\n') || t.is_empty() {
                t.clone()
            } else {
                format!("{t}\n")
            }
        })
        .collect::<Vec<_>>()
        .join("---\n")
}

/// The local files the upgrade must leave as they are: the local-only file, and each base
/// file none of whose resources changes and to which upstream adds nothing.
fn untouched(c: &Case, s: &Sides, want: &BTreeMap<String, (String, String)>) -> BTreeSet<PathBuf> {
    let mut out = BTreeSet::new();
    for rel in s.local.keys() {
        let text = &s.local[rel];
        let now = resources_of(text).expect("local re-reads");
        let same = now.iter().all(|(n, v)| want.get(n) == Some(v));
        let j = (0..FILES).find(|&j| base_path(j) == *rel);
        let adds = j.is_some_and(|j| c.added.contains(&j));
        if same && !adds {
            out.insert(rel.clone());
        }
    }
    out
}

fn check_case(c: &Case) -> Result<(), TestCaseError> {
    let dir = tmp_dir("upgrade-props", "case");
    let s = sides(c);
    write_tree(&dir.join("original"), &s.original);
    write_tree(&dir.join("updated"), &s.updated);
    write_tree(&dir.join("local"), &s.local);
    let (want, conflict) = expected(c);
    let strategy = c.conflicts;
    let fails = conflict && strategy == "error";

    // Stdout: the model's resources.
    let printed = merge3(&dir, &[], strategy);
    let said = text(&printed.stderr);
    if fails {
        prop_assert_eq!(printed.status.code(), Some(1), "{}", said);
        prop_assert!(printed.stdout.is_empty(), "an error prints nothing");
        prop_assert!(said.contains("conflict"), "{}", said);
    } else {
        prop_assert_eq!(printed.status.code(), Some(0), "{}", said);
    }
    // Read on every core (each file ahead, in the smallest pieces): the same, byte for byte.
    let mut cut = Command::new(bin());
    cut.current_dir(&dir)
        .args([
            "merge3",
            "original",
            "updated",
            "local",
            "--conflicts",
            strategy,
        ])
        .env("KRM_MERGE_PIECES", "1");
    let cut = cut.output().expect("run krm-merge");
    prop_assert_eq!(
        (&cut.status.code(), &cut.stdout, &cut.stderr),
        (&printed.status.code(), &printed.stdout, &printed.stderr),
        "KRM_MERGE_PIECES=1 differs"
    );
    let stdout = text(&printed.stdout);
    if !fails {
        let got = resources_of(&stdout).map_err(TestCaseError::fail)?;
        prop_assert_eq!(&got, &want, "stdout\n{}", stdout);
    }

    // --output DIR: the same resources, local files untouched as they were, re-reading as
    // stdout printed; nothing but it written.
    let out = dir.join("out");
    let written = merge3(&dir, &["--output", "out"], strategy);
    prop_assert_eq!(
        written.status.code(),
        printed.status.code(),
        "{}",
        text(&written.stderr)
    );
    prop_assert_eq!(
        tree(&dir.join("local")),
        s.local.clone(),
        "--output wrote to LOCAL"
    );
    let keep = untouched(c, &s, &want);
    if fails {
        prop_assert!(!out.exists(), "--conflicts error wrote {}", out.display());
    } else {
        let files = tree(&out);
        let again = resources_of(&stream_of(&files)).map_err(TestCaseError::fail)?;
        prop_assert_eq!(&again, &want, "--output re-reads");
        check_files(c, &s, &files, &keep)?;
    }

    // --in-place: the same files as --output; untouched ones keep their modification time.
    let local = dir.join("local");
    let before = mtimes(&local);
    let in_place = merge3(&dir, &["--in-place"], strategy);
    prop_assert_eq!(
        in_place.status.code(),
        printed.status.code(),
        "{}",
        text(&in_place.stderr)
    );
    let after = tree(&local);
    if fails {
        prop_assert_eq!(&after, &s.local, "--conflicts error wrote in place");
    } else {
        prop_assert_eq!(&after, &tree(&out), "--in-place and --output differ");
        let times = mtimes(&local);
        for rel in &keep {
            prop_assert_eq!(times.get(rel), before.get(rel), "{} touched", rel.display());
        }
        // The same upgrade again, from its own result (ORIGINAL = UPDATED): nothing changes.
        fs::remove_dir_all(dir.join("original")).expect("rm");
        copy_dir(&dir.join("updated"), &dir.join("original"));
        let settled = mtimes(&local);
        let rerun = merge3(&dir, &["--in-place"], strategy);
        prop_assert_eq!(rerun.status.code(), Some(0), "{}", text(&rerun.stderr));
        prop_assert_eq!(&tree(&local), &after, "a rerun changed the package");
        prop_assert_eq!(&mtimes(&local), &settled, "a rerun touched a file");
    }
    no_temporaries(&dir)?;
    fs::remove_dir_all(&dir).expect("clean up");
    Ok(())
}

/// The files of an upgraded package: the untouched ones as they were; every resource left as
/// the local copy had it with its text as it was; every comment kept where its file is.
fn check_files(
    c: &Case,
    s: &Sides,
    files: &BTreeMap<PathBuf, String>,
    keep: &BTreeSet<PathBuf>,
) -> Result<(), TestCaseError> {
    for rel in keep {
        prop_assert_eq!(
            files.get(rel),
            s.local.get(rel),
            "{} changed",
            rel.display()
        );
    }
    let all = stream_of(files);
    let (want, _) = expected(c);
    for text in s.local.values() {
        for doc in text.split("---\n") {
            let Some(at) = doc.find("apiVersion:") else {
                continue;
            };
            let doc = &doc[at..];
            let Some(name) = doc.lines().nth(3).and_then(|l| l.strip_prefix("  name: ")) else {
                continue;
            };
            let now = resources_of(doc).map_err(TestCaseError::fail)?;
            if now.contains_key(name) && want.get(name) == now.get(name) {
                prop_assert!(all.contains(doc), "{} lost its text:\n{}", name, all);
            }
        }
    }
    for (rel, text) in &s.local {
        if text.starts_with('#') && files.contains_key(rel) {
            let first = text.lines().next().unwrap_or_default();
            prop_assert!(
                files[rel].contains(first),
                "{} lost its comment",
                rel.display()
            );
        }
    }
    Ok(())
}

fn no_temporaries(dir: &Path) -> Result<(), TestCaseError> {
    let left: Vec<_> = tree(dir)
        .into_keys()
        .filter(|p| p.iter().any(|c| c.to_string_lossy().starts_with(".krm")))
        .collect();
    prop_assert!(left.is_empty(), "temporaries left: {:?}", left);
    let names: Vec<_> = fs::read_dir(dir)
        .expect("read dir")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with(".krm"))
        .collect();
    prop_assert!(names.is_empty(), "temporary directories left: {:?}", names);
    Ok(())
}

proptest! {
    #![proptest_config(Config { cases: 64, ..Config::default() })]

    #[test]
    fn upgrades_keep_their_promises(c in case()) {
        check_case(&c)?;
    }
}

// ----- real write failures ----------------------------------------------------------------------

/// A package whose upgrade rewrites files of growing size (file `k` about `k + 1` KiB), removes
/// one (upstream deleted its one resource) and adds one (about 10 KiB) in a new directory.
fn sized_package(dir: &Path) {
    let pad = |k: usize| "x".repeat(1000 * (k + 1));
    let doc = |k: usize, u: &str| {
        format!(
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: s{k}\ndata:\n  u: \"{u}\"\n  pad: \"{}\"\n",
            pad(k)
        )
    };
    let mut original = BTreeMap::new();
    let mut updated = BTreeMap::new();
    // Names not in size order, so that the file written first is not the smallest.
    for k in 0..6 {
        let rel = PathBuf::from(format!("d{}/f{}.yaml", k % 2, (k * 7) % 6));
        original.insert(rel.clone(), doc(k, "o"));
        if k != 3 {
            updated.insert(rel, doc(k, "up"));
        }
    }
    updated.insert(PathBuf::from("new/added.yaml"), doc(9, "new"));
    write_tree(&dir.join("original"), &original);
    write_tree(&dir.join("updated"), &updated);
    write_tree(&dir.join("local"), &original);
}

/// `merge3` run by bash with `SIGXFSZ` ignored (inherited through `exec`) and a file size limit
/// of `kib` KiB (bash's `ulimit -f` counts 1024-byte blocks).
fn merge3_limited(dir: &Path, kib: u64, extra: &[&str]) -> Output {
    let mut cmd = Command::new("bash");
    cmd.current_dir(dir)
        .arg("-c")
        .arg(format!("trap '' XFSZ; ulimit -f {kib}; exec \"$0\" \"$@\""))
        .arg(bin())
        .args(["merge3", "original", "updated", "local"])
        .args(extra)
        .env_remove("KUSTOMIZE_PLUGIN_CONFIG_ROOT");
    cmd.output().expect("run bash")
}

/// Whatever file a write fails at — each limit lets a different number of the package's files
/// be written first — the package is wholly old, nothing added is left, no temporary either,
/// and the error names the file and says why; with room enough, the upgrade is whole.
#[test]
fn a_failing_write_leaves_the_package_wholly_old() {
    let dir = tmp_dir("upgrade-props", "fsize");
    sized_package(&dir);
    let local = dir.join("local");
    let old = tree(&local);
    let before = mtimes(&local);
    let mut failed_at = BTreeSet::new();
    for kib in 1..=10 {
        for extra in [&["--in-place"][..], &["--output", "out"][..]] {
            let out = merge3_limited(&dir, kib, extra);
            let said = text(&out.stderr);
            if kib >= 10 {
                assert_eq!(out.status.code(), Some(0), "{said}");
                continue;
            }
            assert_eq!(
                out.status.code(),
                Some(1),
                "limit {kib} KiB {extra:?}: {said}"
            );
            let line = said
                .lines()
                .find(|l| l.contains("too large for the file system"))
                .unwrap_or_else(|| panic!("limit {kib} KiB: no EFBIG said: {said}"));
            let named = line
                .split("error: ")
                .nth(1)
                .and_then(|l| l.split(": cannot").next())
                .unwrap_or_default()
                .to_owned();
            assert!(named.ends_with(".yaml"), "the error names the file: {said}");
            assert!(line.ends_with("nothing was written"), "{said}");
            failed_at.insert(named);
            assert_eq!(
                tree(&local),
                old,
                "limit {kib} KiB {extra:?}: LOCAL changed"
            );
            assert_eq!(
                mtimes(&local),
                before,
                "limit {kib} KiB {extra:?}: LOCAL touched"
            );
            assert!(
                !dir.join("out").exists(),
                "limit {kib} KiB: --output left a directory"
            );
            assert!(
                !local.join("new").exists(),
                "limit {kib} KiB: the new directory stays"
            );
            no_temporaries(&dir).expect("no temporaries");
        }
        if dir.join("out").exists() {
            fs::remove_dir_all(dir.join("out")).expect("rm out");
        }
        if kib >= 10 {
            // Succeeded in place: put LOCAL back for nothing more (the last limit).
            assert_ne!(
                tree(&local),
                old,
                "the upgrade with room enough changes LOCAL"
            );
        }
    }
    assert!(
        failed_at.len() >= 3,
        "the failure landed at too few files: {failed_at:?}"
    );
    fs::remove_dir_all(&dir).expect("clean up");
}

// ----- what the properties found ----------------------------------------------------------------

/// `p/f.yaml` as LOCAL has it after `merge3 --in-place` of packages holding only that file,
/// LOCAL's a copy of ORIGINAL's (`name`: the test's directory).
fn upgraded_file(name: &str, original: &str, updated: &str) -> String {
    let dir = tmp_dir("upgrade-props", name);
    for (side, text) in [
        ("original", original),
        ("updated", updated),
        ("local", original),
    ] {
        write_tree(
            &dir.join(side),
            &BTreeMap::from([(PathBuf::from("p/f.yaml"), text.to_owned())]),
        );
    }
    let out = merge3(&dir, &["--in-place"], "warn");
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let after = fs::read_to_string(dir.join("local/p/f.yaml")).expect("read");
    fs::remove_dir_all(&dir).expect("clean up");
    after
}

/// `# header` above a file's first `---` is outside every document: when upstream deletes the
/// file's first resource, the header stays with the rest of the file.
#[test]
fn a_header_comment_stays_when_the_first_resource_of_its_file_goes() {
    let header = "# Copyright the authors\n# vendored from upstream\n---\n";
    let both = format!(
        "{header}{}---\n{}",
        resource("b0", "o", "o"),
        resource("b1", "o", "o")
    );
    let one = format!("{header}{}", resource("b1", "o", "o"));
    assert_eq!(upgraded_file("header-first", &both, &one), one);
}

/// When upstream deletes every resource of a file and adds others to it, the local file keeps
/// its header above them (it is not removed and made anew).
#[test]
fn a_header_comment_stays_when_upstream_replaces_every_resource_of_its_file() {
    let header = "# Copyright the authors\n---\n";
    let before = format!("{header}{}", resource("b0", "o", "o"));
    let after = format!("{header}{}", resource("a0", "new", "new"));
    assert_eq!(upgraded_file("header-replaced", &before, &after), after);
}

/// A package larger than one read-ahead window (4 MiB of files read ahead on every core at a
/// time) upgrades as it does read whole on one thread, byte for byte: output, messages, exit.
#[test]
fn a_package_read_ahead_in_windows_upgrades_as_read_whole() {
    let dir = tmp_dir("upgrade-props", "windows");
    let pad = "y".repeat(4000);
    let doc = |i: usize, u: &str| {
        format!(
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c{i}\ndata:\n  u: \"{u}\"\n  pad: \"{pad}\"\n"
        )
    };
    let (mut original, mut updated, mut local) =
        (BTreeMap::new(), BTreeMap::new(), BTreeMap::new());
    for i in 0..1500 {
        let rel = PathBuf::from(format!("d{}/c{i}.yaml", i / 100));
        original.insert(rel.clone(), doc(i, "o"));
        if i % 50 != 7 {
            updated.insert(rel.clone(), doc(i, if i % 3 == 0 { "up" } else { "o" }));
        }
        // Every 9th changed locally: a conflict where upstream changed it too.
        local.insert(rel, doc(i, if i % 9 == 0 { "mine" } else { "o" }));
    }
    updated.insert(PathBuf::from("new/added.yaml"), doc(9999, "new"));
    write_tree(&dir.join("original"), &original);
    write_tree(&dir.join("updated"), &updated);
    write_tree(&dir.join("local"), &local);
    let run = |pieces: Option<&str>| {
        let mut cmd = Command::new(bin());
        cmd.current_dir(&dir)
            .args(["merge3", "original", "updated", "local", "--summary"]);
        match pieces {
            Some(p) => cmd.env("KRM_MERGE_PIECES", p),
            None => cmd.env_remove("KRM_MERGE_PIECES"),
        };
        cmd.output().expect("run krm-merge")
    };
    let whole = run(Some("whole"));
    assert_eq!(whole.status.code(), Some(0), "{}", text(&whole.stderr));
    let got = resources_of(&text(&whole.stdout)).expect("re-reads");
    assert_eq!(got.len(), 1500 - 30 + 1);
    assert_eq!(got["c9"].0, "up", "a conflict, upstream's side taken");
    assert!(!got.contains_key("c7"), "deleted upstream");
    let ahead = run(None);
    assert_eq!(
        (
            ahead.status.code(),
            text(&ahead.stdout),
            text(&ahead.stderr)
        ),
        (
            whole.status.code(),
            text(&whole.stdout),
            text(&whole.stderr)
        ),
        "read ahead in windows differs from read whole"
    );
    fs::remove_dir_all(&dir).expect("clean up");
}
