//! Several cores give exactly one core's results. The input is read in pieces on every core
//! when it is large; `KRM_MERGE_PIECES` forces how it is cut (`whole`: one piece on one thread;
//! a size in bytes: pieces that small, at any input size). Whatever the cut, stdout, stderr, the
//! exit code and the `--results` file are the same, byte for byte.
//!
//! [`output`] runs a command both ways and compares: the fixture runner (`fixtures.rs`) runs
//! every fixture case through it, `hostile.rs` every hostile case; the tests here are the cases
//! that showed a difference (results of a large stream that lost their file, a rename error that
//! lost its resource) and a ResourceList and a stream read in pieces.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

use crate::support::*;

/// The cut that gives the most pieces an input of `len` bytes can be read in here: every place
/// a cut may fall, or 4 KB pieces for a large input (a million one-line documents as a million
/// pieces would measure the test's memory, not the function).
fn many(len: usize) -> &'static str {
    if len < 1 << 16 {
        "1"
    } else {
        "4096"
    }
}

/// A file for a run's `--results`, of this test process alone.
fn results_file() -> PathBuf {
    static N: AtomicUsize = AtomicUsize::new(0);
    std::env::temp_dir().join(format!(
        "krm-merge-pieces-{}-{}.yaml",
        std::process::id(),
        N.fetch_add(1, Ordering::Relaxed)
    ))
}

/// One run of `c` with `KRM_MERGE_PIECES=pieces`: its output, and its results file's text.
fn run_with(
    c: &mut assert_cmd::Command,
    pieces: &str,
    results: Option<&Path>,
) -> (std::process::Output, Option<String>) {
    if let Some(r) = results {
        let _ = std::fs::remove_file(r);
    }
    let out = c
        .env("KRM_MERGE_PIECES", pieces)
        .output()
        .expect("run krm-merge");
    let text = results.and_then(|r| std::fs::read_to_string(r).ok());
    (out, text)
}

/// `text` with each process's own `/proc/<pid>/` (where `/proc/self` resolves, which an error
/// may name) written `/proc/PID/`: two runs are two processes.
fn without_pids(text: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.windows(6).position(|w| w == b"/proc/") {
        out.extend_from_slice(&rest[..at + 6]);
        rest = &rest[at + 6..];
        let digits = rest.iter().take_while(|b| b.is_ascii_digit()).count();
        if digits > 0 {
            out.extend_from_slice(b"PID");
            rest = &rest[digits..];
        }
    }
    out.extend_from_slice(rest);
    out
}

/// Runs `c` (whose input is about `len` bytes) as one piece and as many, asserts that exit code,
/// stdout, stderr and the `--results` file (when `results` names the one its arguments give)
/// are the same, and returns the one-piece output.
pub fn output(
    c: &mut assert_cmd::Command,
    len: usize,
    results: Option<&Path>,
) -> std::process::Output {
    let (whole, whole_results) = run_with(c, "whole", results);
    let (cut, cut_results) = run_with(c, many(len), results);
    let say = |b: &[u8]| {
        String::from_utf8_lossy(b)
            .chars()
            .take(3000)
            .collect::<String>()
    };
    assert_eq!(
        whole.status.code(),
        cut.status.code(),
        "exit code, one piece and many\nstderr (one): {}\nstderr (many): {}",
        say(&whole.stderr),
        say(&cut.stderr)
    );
    assert!(
        without_pids(&whole.stderr) == without_pids(&cut.stderr),
        "stderr, one piece and many\n--- one\n{}\n--- many\n{}",
        say(&whole.stderr),
        say(&cut.stderr)
    );
    assert!(
        without_pids(&whole.stdout) == without_pids(&cut.stdout),
        "stdout, one piece and many\n--- one\n{}\n--- many\n{}",
        say(&whole.stdout),
        say(&cut.stdout)
    );
    let normal = |r: Option<String>| r.map(|t| without_pids(t.as_bytes()));
    assert_eq!(
        normal(whole_results),
        normal(cut_results),
        "--results, one piece and many"
    );
    if let Some(r) = results {
        let _ = std::fs::remove_file(r);
    }
    whole
}

/// The binary with `args` and raw `stdin`, in `dir`, run as one piece and as many (with
/// `--results` added in standalone mode, to compare it too): see [`output`].
pub fn run_in(args: &[&str], stdin: &[u8], dir: Option<&Path>) -> std::process::Output {
    let mut c = cmd();
    c.args(args).write_stdin(stdin.to_vec());
    if let Some(d) = dir {
        c.current_dir(d);
    }
    let standalone = args.contains(&"--config") && !args.iter().any(|a| a.starts_with("--results"));
    let results = standalone.then(results_file);
    if let Some(r) = &results {
        c.arg("--results").arg(r);
    }
    // The input's size: stdin and the files the arguments name.
    let file = |a: &&str| {
        let p = dir.map_or_else(|| PathBuf::from(a), |d| d.join(a));
        std::fs::metadata(p).map_or(0, |m| usize::try_from(m.len()).unwrap_or(usize::MAX))
    };
    let len = stdin.len() + args.iter().map(file).sum::<usize>();
    output(&mut c, len, results.as_deref())
}

/// [`run_in`], as an [`Out`].
pub fn krm_in(args: &[&str], stdin: &str, dir: Option<&Path>) -> Out {
    out_of(&run_in(args, stdin.as_bytes(), dir))
}

/// A stream of `n` ConfigMaps and Deployments of about 300 bytes each, the Deployments with a
/// list of containers.
fn stream(n: usize) -> String {
    let mut s = String::new();
    for i in 0..n {
        if i > 0 {
            s.push_str("---\n");
        }
        if i % 2 == 0 {
            s.push_str(&format!(
                "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c{i}\n  namespace: ns{}\ndata:\n  a: \"1\"\n  b: text of the config map number {i}\n",
                i % 7
            ));
        } else {
            s.push_str(&format!(
                "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: d{i}\nspec:\n  replicas: 1\n  template:\n    spec:\n      containers:\n      - name: app\n        image: app:{i}\n      - name: log\n        image: log:{i}\n"
            ));
        }
    }
    s
}

fn merge_fn(patches: &str) -> String {
    format!(
        "apiVersion: fn.krm-merge.dev/v1alpha1\nkind: Merge\nmetadata:\n  name: pieces\nspec:\n  patches:\n{patches}"
    )
}

/// A large stream read from a file: a warning about each resource a patch checks against its
/// schema, and an error that fails the run, name their file and its index in `--results` (an
/// index among the documents read, those deleted before it too), read
/// as one piece, in 4 KB pieces, and in the pieces the function picks on its own (over 1 MB).
#[test]
fn results_of_a_large_stream_name_their_file_however_it_is_cut() {
    let dir = tmp_dir("pieces", "located");
    let text = stream(8000);
    assert!(text.len() > 1 << 20);
    let file = dir.join("big.yaml");
    std::fs::write(&file, &text).expect("write");
    // A typo the schema check warns about, for each kind it is checked against (once per kind:
    // the first resource of each), and a JSON patch that fails on the last Deployment; the first
    // resource deleted, which leaves the index of the others in the file as it was.
    let cfg = dir.join("fn.yaml");
    std::fs::write(
        &cfg,
        merge_fn("  - target: {kind: ConfigMap, name: c0}\n    patch: '{$patch: delete}'\n  - target: {kind: Deployment}\n    patch: '{spec: {replica: 2}}'\n  - target: {kind: Deployment, name: d7999}\n    type: json6902\n    patch: '[{op: remove, path: /spec/nope}]'\n"),
    )
    .expect("write");
    let results = dir.join("results.yaml");
    let args = [
        "--config",
        cfg.to_str().expect("utf8"),
        file.to_str().expect("utf8"),
        "--results",
        results.to_str().expect("utf8"),
    ];
    let mut outs = Vec::new();
    for pieces in ["whole", "4096", "auto"] {
        let out = cmd()
            .args(args)
            .env("KRM_MERGE_PIECES", pieces)
            .output()
            .expect("run");
        let r = std::fs::read_to_string(&results).expect("results");
        outs.push((pieces, out.status.code(), text_of(&out.stderr), r));
    }
    let (_, code, stderr, r) = &outs[0];
    assert_eq!(*code, Some(1), "{stderr}");
    assert!(r.contains("replica") && r.contains("nope"), "{r}");
    let big = file.to_str().expect("utf8");
    assert_eq!(r.matches(&format!("path: {big}")).count(), 3, "{r}");
    assert!(r.contains("index: 7999"), "{r}");
    for other in &outs[1..] {
        assert_eq!(other.1, outs[0].1, "{}", other.0);
        assert_eq!(other.2, outs[0].2, "{}", other.0);
        assert_eq!(other.3, outs[0].3, "{}", other.0);
    }
}

fn text_of(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// A rename that gives a resource the identity of one in another piece is an error naming the
/// resource (and, in KRM mode, its file), at the same place among the results, however the
/// input is cut: as a stream and as a ResourceList.
#[test]
fn a_rename_onto_a_resource_of_another_piece_names_it() {
    let mut text = stream(3000);
    // The last resource takes the name of the first ConfigMap (same namespace).
    text.push_str("---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: last\n  namespace: ns0\n  annotations:\n    config.kubernetes.io/path: last.yaml\n");
    let config = merge_fn("  - target: {kind: ConfigMap, name: last}\n    type: json6902\n    patch: '[{op: replace, path: /metadata/name, value: c0}]'\n  - target: {kind: Deployment}\n    patch: '{spec: {replica: 2}}'\n");
    let dir = tmp_dir("pieces", "rename");
    let cfg = dir.join("fn.yaml");
    std::fs::write(&cfg, &config).expect("write");
    let out = krm_in(&["--config", cfg.to_str().expect("utf8")], &text, None);
    assert_eq!(out.code, 1, "{}", out.stderr);
    assert!(
        out.stderr
            .contains("two resources would have the same identity")
            && out.stderr.contains("ConfigMap ns0/c0"),
        "{}",
        out.stderr
    );
    let rl = resource_list(&text, node(&config));
    let out = krm_in(&[], &rl, None);
    assert_eq!(out.code, 1, "{}", out.stderr);
    let results = rl_results(&out.stdout);
    let rename = results
        .iter()
        .find(|r| {
            r["message"]
                .as_str()
                .is_some_and(|m| m.contains("same identity"))
        })
        .expect("the rename error");
    assert_eq!(rename["resourceRef"]["name"], "c0", "{rename}");
    assert_eq!(rename["file"]["path"], "last.yaml", "{rename}");
}

/// A ResourceList of more than 1 MB is read in pieces like a stream: the same items, whatever
/// the cut, and the same as the stream's documents.
#[test]
fn a_large_resource_list_is_read_in_pieces_with_the_streams_output() {
    let text = stream(8000);
    let config = merge_fn("  - target: {kind: Deployment}\n    patch: |\n      spec:\n        template:\n          spec:\n            containers:\n            - name: app\n              image: app:2\n  - target: {kind: ConfigMap, namespace: ns3}\n    patch: '$patch: delete'\n");
    let rl = resource_list(&text, node(&config));
    assert!(rl.len() > 1 << 20);
    let mut outs = Vec::new();
    for pieces in ["whole", "1", "20000", "auto"] {
        let out = cmd()
            .env("KRM_MERGE_PIECES", pieces)
            .write_stdin(rl.clone())
            .output()
            .expect("run");
        assert_eq!(
            out.status.code(),
            Some(0),
            "{pieces}: {}",
            text_of(&out.stderr)
        );
        outs.push(text_of(&out.stdout));
    }
    assert!(
        outs.iter().all(|o| *o == outs[0]),
        "the outputs differ by the cut"
    );
    let dir = tmp_dir("pieces", "rl");
    let cfg = dir.join("fn.yaml");
    std::fs::write(&cfg, &config).expect("write");
    let stream_out = krm(&["--config", cfg.to_str().expect("utf8")], &text);
    assert_eq!(stream_out.code, 0, "{}", stream_out.stderr);
    let items = rl_items(&outs[0]);
    assert_eq!(items, docs(&stream_out.stdout));
    let deleted = (0..8000).filter(|i| i % 2 == 0 && i % 7 == 3).count();
    assert_eq!(items.len(), 8000 - deleted);
}

/// A piece size that is not one is a usage error naming the variable; `whole`, `auto` and a
/// number of bytes are read.
#[test]
fn the_piece_size_is_read_or_refused() {
    let rl = resource_list(
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n",
        node(&merge_fn(
            "  - target: {kind: ConfigMap}\n    patch: '{data: {a: b}}'\n",
        )),
    );
    for bad in ["0", "-3", "many"] {
        let out = cmd()
            .env("KRM_MERGE_PIECES", bad)
            .write_stdin(rl.clone())
            .output()
            .expect("run");
        assert_eq!(out.status.code(), Some(2), "{bad}");
        assert!(text_of(&out.stderr).contains("KRM_MERGE_PIECES"), "{bad}");
        assert!(out.stdout.is_empty(), "{bad}");
    }
    let outs: Vec<String> = ["whole", "auto", "1", "65536"]
        .iter()
        .map(|p| {
            let out = cmd()
                .env("KRM_MERGE_PIECES", p)
                .write_stdin(rl.clone())
                .output()
                .expect("run");
            assert_eq!(out.status.code(), Some(0), "{p}");
            text_of(&out.stdout)
        })
        .collect();
    assert!(
        outs.iter().all(|o| *o == outs[0] && o.contains("a: b")),
        "{outs:?}"
    );
}

/// A ResourceList's items are cut into pieces even where they hold anchors: an alias of an
/// anchor in an earlier piece is an unknown anchor to its own piece's parser, and the items are
/// read again as one piece; anchors within a piece read as they read in the whole. One piece
/// and many give one output, byte for byte (a blank line with spaces after the functionConfig,
/// which a whole read would not keep, stays), and a patch of an anchored node reaches its
/// aliases' copies alike.
#[test]
fn anchors_among_a_resource_lists_items_read_the_same_in_pieces() {
    let cm = |name: &str, data: &str| {
        format!(
            "- apiVersion: v1\n  kind: ConfigMap\n  metadata:\n    name: {name}\n  data: {data}\n"
        )
    };
    let fc = "functionConfig:\n  apiVersion: fn.krm-merge.dev/v1alpha1\n  kind: Merge\n  metadata: {name: m}\n  spec:\n    patches:\n    - target: {kind: ConfigMap, name: a}\n      patch: '{data: {x: changed}}'\n  \n";
    let head = "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n";
    // Across items: the alias in b reads a's anchor.
    let across = format!(
        "{head}{}{}{}{fc}",
        cm("a", "&d {x: \"1\"}"),
        cm("b", "*d"),
        cm("c", "{y: \"&&\"}")
    );
    // Within items only, with a shell's `&&` besides.
    let within = format!(
        "{head}{}{}{}{fc}",
        cm("a", "{x: &v \"1\", w: *v}"),
        cm("b", "{x: &v \"2\", w: *v, cmd: a && b}"),
        cm("c", "{y: \"3\"}")
    );
    for (rl, b_reads) in [(across, "x: \"1\""), (within, "x: &v \"2\"")] {
        let out = out_of(&run_in(&[], rl.as_bytes(), None));
        assert_eq!(out.code, 0, "{}", out.stderr);
        assert!(out.stdout.contains("x: changed"), "{}", out.stdout);
        assert!(out.stdout.contains(b_reads), "{rl}\n---\n{}", out.stdout);
        assert!(
            out.stdout.contains("'{data: {x: changed}}'\n  \nresults:"),
            "{}",
            out.stdout
        );
    }
}
