//! The documents' commands, run as a reader would run them: every ` ```sh ` and ` ```console `
//! block of `README.md` and `doc/*.md`, with the output a `console` block shows compared; and
//! every relative link and anchor of the repository's documents resolving.
//!
//! Each document is cut at its headings. A section runs in a fresh clone of the repository's
//! files (a git repository, so that `git rev-parse HEAD` works; without the test data and the
//! fuzz targets, which no document uses), with this build's `krm-merge` first on `PATH` and a
//! `HOME` of its own, its blocks in order:
//!
//! * ` ```sh `: run by `sh -eu`, which must succeed;
//! * ` ```console `: `$ COMMAND` lines (a line ending in `\` goes on), each followed by the output
//!   it must print, stdout and stderr together;
//! * `<!-- file: PATH -->` before a block: the block is written to PATH before what follows;
//! * `<!-- needs: HOST, ... -->` before a block: the section runs only in the test for those
//!   hosts (kpt, kubectl, image, pre-commit), ignored where they are missing as the host tests
//!   are (support.rs, "hosts");
//! * `<!-- not run: REASON -->` before a block: not run (Helm, a cluster). Few, and the README's
//!   install and test commands among them are what `.ci/run` runs.
//!
//! `KRM_MERGE_UPDATE_EXPECTED=1` rewrites the outputs the `console` blocks show from what the
//! commands print; review the change before committing it.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

use crate::support::*;

/// The documents whose commands run: the README and the user's documents.
fn runnable_documents() -> Vec<PathBuf> {
    let mut docs = vec![root().join("README.md")];
    let mut guide: Vec<PathBuf> = fs::read_dir(root().join("doc"))
        .expect("doc/")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "md"))
        .collect();
    guide.sort();
    docs.extend(guide);
    docs
}

/// What a marker comment says about the block after it.
#[derive(Clone, Debug, PartialEq)]
enum Marker {
    None,
    File(String),
    Needs(BTreeSet<String>),
    NotRun(String),
}

/// One command of a `console` block and the lines of the document that show its output.
#[derive(Clone, Debug)]
struct Shown {
    command: String,
    /// The shown output: the document's lines `from..to` (0-based, `to` exclusive).
    from: usize,
    to: usize,
}

#[derive(Clone, Debug)]
struct Block {
    /// The line of the opening fence, 1-based, for messages.
    line: usize,
    lang: String,
    body: String,
    marker: Marker,
    shown: Vec<Shown>,
}

#[derive(Clone, Debug, Default)]
struct Section {
    heading: String,
    blocks: Vec<Block>,
}

impl Section {
    fn needs(&self) -> BTreeSet<String> {
        self.blocks
            .iter()
            .filter_map(|b| match &b.marker {
                Marker::Needs(n) => Some(n.clone()),
                _ => None,
            })
            .flatten()
            .collect()
    }
}

fn marker(line: &str) -> Option<Marker> {
    let inner = line
        .trim()
        .strip_prefix("<!--")?
        .strip_suffix("-->")?
        .trim();
    if let Some(path) = inner.strip_prefix("file:") {
        return Some(Marker::File(path.trim().to_owned()));
    }
    if let Some(hosts) = inner.strip_prefix("needs:") {
        return Some(Marker::Needs(
            hosts.split(',').map(|h| h.trim().to_owned()).collect(),
        ));
    }
    if let Some(reason) = inner.strip_prefix("not run:") {
        return Some(Marker::NotRun(reason.trim().to_owned()));
    }
    None
}

/// The sections of a document and their blocks.
fn sections(text: &str) -> Vec<Section> {
    let lines: Vec<&str> = text.lines().collect();
    let mut out = vec![Section::default()];
    let mut pending = Marker::None;
    let mut i = 0;
    while i < lines.len() {
        let line = lines[i];
        if line.starts_with('#') && line.trim_start_matches('#').starts_with(' ') {
            out.push(Section {
                heading: line.to_owned(),
                blocks: Vec::new(),
            });
            pending = Marker::None;
        } else if let Some(m) = marker(line) {
            pending = m;
        } else if let Some(lang) = line.strip_prefix("```") {
            let open = i;
            let mut end = i + 1;
            while end < lines.len() && lines[end] != "```" {
                end += 1;
            }
            assert!(
                end < lines.len(),
                "line {}: a fence that is not closed",
                open + 1
            );
            let body_lines = &lines[open + 1..end];
            let shown = if lang == "console" {
                console(body_lines, open + 1)
            } else {
                Vec::new()
            };
            out.last_mut().expect("a section").blocks.push(Block {
                line: open + 1,
                lang: lang.trim().to_owned(),
                body: body_lines.iter().map(|l| format!("{l}\n")).collect(),
                marker: std::mem::replace(&mut pending, Marker::None),
                shown,
            });
            i = end;
        } else if !line.trim().is_empty() {
            // A marker belongs to the block right after it.
            pending = Marker::None;
        }
        i += 1;
    }
    out
}

/// The commands of a console block (`lines` starts at document line `first`, 0-based).
fn console(lines: &[&str], first: usize) -> Vec<Shown> {
    let mut out: Vec<Shown> = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        let Some(cmd) = lines[i].strip_prefix("$ ") else {
            panic!(
                "line {}: a console block's first line is a command (`$ ...`)",
                first + i + 1
            );
        };
        let mut command = cmd.to_owned();
        while command.ends_with('\\') && i + 1 < lines.len() {
            i += 1;
            command.push('\n');
            command.push_str(lines[i]);
        }
        i += 1;
        let from = i;
        while i < lines.len() && !lines[i].starts_with("$ ") {
            i += 1;
        }
        out.push(Shown {
            command,
            from: first + from,
            to: first + i,
        });
    }
    out
}

// ----- running ----------------------------------------------------------------------------------

/// The repository's files, committed into a git repository made once per test process: what a
/// reader's clone holds, less the test data and the fuzz targets.
fn pristine() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let dir = tmp_dir("docs", "pristine");
        let listed = run(git(&root()).args([
            "ls-files",
            "--cached",
            "--others",
            "--exclude-standard",
            "-z",
        ]));
        assert!(listed.status.success(), "git ls-files");
        for file in text(&listed.stdout).split('\0').filter(|f| !f.is_empty()) {
            let skip = ["tests/data/", "tests/fixtures/", "fuzz/", "benches/"];
            let from = root().join(file);
            if skip.iter().any(|s| file.starts_with(s)) || !from.is_file() {
                continue;
            }
            let to = dir.join(file);
            fs::create_dir_all(to.parent().expect("parent")).expect("mkdir");
            fs::copy(&from, &to).unwrap_or_else(|e| panic!("{file}: {e}"));
        }
        for args in [
            &["init", "-q", "."][..],
            &["add", "-A"],
            &["commit", "-q", "-m", "the repository"],
        ] {
            assert!(run(git(&dir).args(args)).status.success(), "git {args:?}");
        }
        dir
    })
}

/// A directory whose only entry is `krm-merge`, this build's binary, to put first on PATH.
fn bin_dir() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let dir = tmp_dir("docs", "bin");
        std::os::unix::fs::symlink(bin(), dir.join("krm-merge")).expect("link");
        dir
    })
}

/// A shell in the section's directory, with the environment a reader of the documents has
/// (git reads no configuration of the machine's, as in `support::git`).
fn shell(dir: &Path, home: &Path) -> Command {
    let path = std::env::var_os("PATH").unwrap_or_default();
    let mut paths = vec![bin_dir().to_path_buf()];
    paths.extend(std::env::split_paths(&path));
    let mut c = Command::new("sh");
    c.current_dir(dir)
        .env("PATH", std::env::join_paths(paths).expect("PATH"))
        .env("HOME", home)
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_AUTHOR_NAME", "reader")
        .env("GIT_AUTHOR_EMAIL", "reader@example.com")
        .env("GIT_COMMITTER_NAME", "reader")
        .env("GIT_COMMITTER_EMAIL", "reader@example.com")
        .env_remove("KUSTOMIZE_PLUGIN_CONFIG_STRING")
        .env_remove("KUSTOMIZE_PLUGIN_CONFIG_ROOT")
        .env_remove("KRM_MERGE_LOG");
    c
}

/// What a `console` command printed where the document shows something else.
struct Mismatch {
    doc: PathBuf,
    shown: Shown,
    printed: String,
}

/// Runs one section in a fresh clone; returns the outputs that differ from the shown ones.
fn run_section(doc: &Path, number: usize, section: &Section) -> Vec<Mismatch> {
    let name = format!(
        "{}-{number}",
        doc.file_stem().expect("name").to_string_lossy()
    );
    let base = tmp_dir("docs", &name);
    let dir = base.join("clone");
    let home = base.join("home");
    fs::create_dir_all(&home).expect("home");
    let cloned = run(git(&base).args(["clone", "-q"]).arg(pristine()).arg(&dir));
    assert!(cloned.status.success(), "git clone");
    let place = |b: &Block| format!("{}:{} ({})", doc.display(), b.line, section.heading);
    let mut mismatches = Vec::new();
    for block in &section.blocks {
        if let Marker::File(path) = &block.marker {
            let to = dir.join(path);
            fs::create_dir_all(to.parent().expect("parent")).expect("mkdir");
            fs::write(&to, &block.body).expect("write");
            continue;
        }
        if matches!(block.marker, Marker::NotRun(_)) {
            continue;
        }
        match block.lang.as_str() {
            "sh" => {
                let out = run(shell(&dir, &home).arg("-euc").arg(&block.body));
                assert!(
                    out.status.success(),
                    "{}: the block failed:\n{}\nstdout: {}\nstderr: {}",
                    place(block),
                    block.body,
                    text(&out.stdout),
                    text(&out.stderr)
                );
            }
            "console" => {
                for shown in &block.shown {
                    let out = shell(&dir, &home)
                        .arg("-c")
                        .arg(format!("exec 2>&1\n{}", shown.command))
                        .output()
                        .expect("run sh");
                    mismatches.push(Mismatch {
                        doc: doc.to_path_buf(),
                        shown: shown.clone(),
                        printed: text(&out.stdout),
                    });
                }
            }
            _ => {}
        }
    }
    let _ = fs::remove_dir_all(&base);
    mismatches
}

/// Runs the sections whose hosts are `hosts` (none: the sections that need none), and compares
/// (or, when updating, rewrites) the outputs the documents show.
fn run_documents(hosts: &[&str]) {
    let want: BTreeSet<String> = hosts.iter().map(|h| h.to_string()).collect();
    let mut printed: Vec<Mismatch> = Vec::new();
    let mut ran = 0;
    for doc in runnable_documents() {
        let text = fs::read_to_string(&doc).expect("read");
        for (i, section) in sections(&text).iter().enumerate() {
            if section.needs() != want || !section.blocks.iter().any(runs) {
                continue;
            }
            ran += 1;
            printed.extend(run_section(&doc, i, section));
        }
    }
    assert!(ran > 0, "no section needs exactly {want:?}");
    let mut by_doc: BTreeMap<PathBuf, Vec<Mismatch>> = BTreeMap::new();
    for m in printed {
        by_doc.entry(m.doc.clone()).or_default().push(m);
    }
    let mut wrong = Vec::new();
    for (doc, mut outputs) in by_doc {
        let text = fs::read_to_string(&doc).expect("read");
        let mut lines: Vec<String> = text.lines().map(str::to_owned).collect();
        outputs.sort_by_key(|m| std::cmp::Reverse(m.shown.from));
        for m in &outputs {
            let shown = lines[m.shown.from..m.shown.to].join("\n");
            let printed = m.printed.trim_end_matches('\n');
            if shown != printed {
                wrong.push(format!(
                    "{}:{}: `{}` printed\n{printed}\n--- where the document shows\n{shown}",
                    doc.display(),
                    m.shown.from,
                    m.shown.command
                ));
                let new: Vec<String> = printed
                    .lines()
                    .filter(|_| !printed.is_empty())
                    .map(str::to_owned)
                    .collect();
                lines.splice(m.shown.from..m.shown.to, new);
            }
        }
        if updating() && !wrong.is_empty() {
            fs::write(&doc, lines.join("\n") + "\n").expect("write");
        }
    }
    if !updating() {
        assert!(
            wrong.is_empty(),
            "{}\n\n(KRM_MERGE_UPDATE_EXPECTED=1 rewrites the shown outputs)",
            wrong.join("\n\n")
        );
    }
}

fn runs(b: &Block) -> bool {
    !matches!(b.marker, Marker::NotRun(_)) && (b.lang == "sh" || b.lang == "console")
}

#[test]
fn commands_of_the_documents() {
    run_documents(&[]);
}

#[test]
#[cfg_attr(not(host_kpt), ignore = "needs kpt on PATH")]
fn commands_needing_kpt() {
    run_documents(&["kpt"]);
}

#[test]
#[cfg_attr(not(host_kubectl), ignore = "needs kubectl on PATH")]
fn commands_needing_kubectl() {
    run_documents(&["kubectl"]);
}

#[test]
#[cfg_attr(not(host_pre_commit), ignore = "needs pre-commit on PATH")]
fn commands_needing_pre_commit() {
    run_documents(&["pre-commit"]);
}

#[test]
#[cfg_attr(
    not(all(host_image, host_kpt, host_kubectl)),
    ignore = "needs podman, the image (tools/build-image.sh), kpt and kubectl"
)]
fn commands_needing_the_image() {
    run_documents(&["image"]);
    run_documents(&["image", "kpt"]);
    run_documents(&["image", "kubectl"]);
}

/// Every section runs in one of the tests above, and what is not run is little, with a reason;
/// the README's install and test commands, which no test can run, are what `.ci/run` runs.
#[test]
fn every_block_runs_somewhere_or_says_why_not() {
    let handled: BTreeSet<BTreeSet<String>> = [
        &[][..],
        &["kpt"],
        &["kubectl"],
        &["pre-commit"],
        &["image"],
        &["image", "kpt"],
        &["image", "kubectl"],
    ]
    .iter()
    .map(|hs| hs.iter().map(|h| h.to_string()).collect())
    .collect();
    let mut not_run = Vec::new();
    for doc in runnable_documents() {
        let text = fs::read_to_string(&doc).expect("read");
        for section in sections(&text) {
            assert!(
                handled.contains(&section.needs()),
                "{} ({}): no test runs sections needing {:?}",
                doc.display(),
                section.heading,
                section.needs()
            );
            for b in &section.blocks {
                if let Marker::NotRun(reason) = &b.marker {
                    assert!(!reason.is_empty(), "{}:{}: say why", doc.display(), b.line);
                    not_run.push(format!("{}:{}: {reason}", doc.display(), b.line));
                }
                if let Marker::File(path) = &b.marker {
                    assert!(
                        !path.starts_with('/') && !path.contains(".."),
                        "{}:{}: a file inside the clone",
                        doc.display(),
                        b.line
                    );
                }
            }
        }
    }
    assert!(
        not_run.len() <= 8,
        "too many blocks not run:\n{}",
        not_run.join("\n")
    );
    // The README's install and test commands: `.ci/run` runs each, as written.
    let readme = fs::read_to_string(root().join("README.md")).expect("README");
    let ci = fs::read_to_string(root().join(".ci/run")).expect(".ci/run");
    let mut found = 0;
    for section in sections(&readme) {
        for b in section.blocks {
            if matches!(b.marker, Marker::NotRun(_)) {
                for command in b.body.lines() {
                    assert!(
                        ci.lines().any(|l| l.trim() == command.trim()),
                        "README.md:{}: `.ci/run` does not run `{command}`",
                        b.line
                    );
                    found += 1;
                }
            }
        }
    }
    assert!(found >= 2, "the README's install and test commands");
    assert!(readme.contains("cargo test --locked"));
}

// ----- links ------------------------------------------------------------------------------------

/// GitHub's anchor for a heading: lower case, punctuation but `-` and `_` dropped, spaces as `-`.
fn anchor(heading: &str) -> String {
    heading
        .trim_start_matches('#')
        .trim()
        .to_lowercase()
        .chars()
        .filter(|c| c.is_alphanumeric() || *c == '-' || *c == '_' || *c == ' ')
        .map(|c| if c == ' ' { '-' } else { c })
        .collect()
}

fn anchors(text: &str) -> BTreeSet<String> {
    let mut fenced = false;
    let mut out = BTreeSet::new();
    for line in text.lines() {
        if line.starts_with("```") {
            fenced = !fenced;
        } else if !fenced && line.starts_with('#') {
            out.insert(anchor(line));
        }
    }
    out
}

/// The `](target)` links of a Markdown text, outside code.
fn links(text: &str) -> Vec<String> {
    let mut fenced = false;
    let mut out = Vec::new();
    for line in text.lines() {
        if line.starts_with("```") {
            fenced = !fenced;
            continue;
        }
        if fenced {
            continue;
        }
        let mut rest = line;
        while let Some(i) = rest.find("](") {
            rest = &rest[i + 2..];
            let end = rest.find(')').expect("a closed link");
            out.push(rest[..end].to_owned());
            rest = &rest[end..];
        }
    }
    out
}

/// Every document's relative links lead to a file of the repository, and their anchors to a
/// heading there; no document links outside the repository.
#[test]
fn the_documents_links_resolve() {
    let mut docs = runnable_documents();
    for extra in [
        "ARCHITECTURE.md",
        "CONTRIBUTING.md",
        "functions/krm-merge/README.md",
    ] {
        docs.push(root().join(extra));
    }
    let mut checked = 0;
    for doc in docs {
        let text = fs::read_to_string(&doc).expect("read");
        for link in links(&text) {
            assert!(
                !link.contains("://"),
                "{}: `{link}` leads outside the repository",
                doc.display()
            );
            let (path, frag) = link.split_once('#').unwrap_or((&link, ""));
            let target = if path.is_empty() {
                doc.clone()
            } else {
                doc.parent().expect("dir").join(path)
            };
            assert!(
                target.exists(),
                "{}: `{link}`: {} does not exist",
                doc.display(),
                target.display()
            );
            if !frag.is_empty() {
                let there = fs::read_to_string(&target).expect("a document");
                assert!(
                    anchors(&there).contains(frag),
                    "{}: `{link}`: no heading `#{frag}` in {}",
                    doc.display(),
                    target.display()
                );
            }
            checked += 1;
        }
    }
    assert!(checked > 50, "only {checked} links");
}

/// The parser itself: markers, sections, console commands and their shown output.
#[test]
fn the_block_parser_reads_markers_sections_and_outputs() {
    let doc = "# T\n\n<!-- file: a/b.yaml -->\n```yaml\nk: v\n```\n\n## S\n\n<!-- needs: kpt, image -->\n```console\n$ echo a \\\n  b\na b\n$ true\n```\n\ntext\n<!-- not run: needs Helm -->\n\nprose between\n```sh\nexit 1\n```\n";
    let s = sections(doc);
    assert_eq!(s.len(), 3);
    assert_eq!(s[1].blocks[0].marker, Marker::File("a/b.yaml".into()));
    assert_eq!(s[1].blocks[0].body, "k: v\n");
    let c = &s[2].blocks[0];
    assert_eq!(
        s[2].needs(),
        ["image", "kpt"].iter().map(|h| h.to_string()).collect()
    );
    assert_eq!(c.shown.len(), 2);
    assert_eq!(c.shown[0].command, "echo a \\\n  b");
    let lines: Vec<&str> = doc.lines().collect();
    assert_eq!(lines[c.shown[0].from..c.shown[0].to], ["a b"]);
    assert_eq!(c.shown[1].from, c.shown[1].to);
    // A marker followed by prose is dropped: the block after it runs.
    assert_eq!(s[2].blocks[1].marker, Marker::None);
    assert_eq!(
        anchor("### Migrate from kustomize `patches:`"),
        "migrate-from-kustomize-patches"
    );
    assert_eq!(
        anchor("## Why does Helm 4 not show krm-merge's error?"),
        "why-does-helm-4-not-show-krm-merges-error"
    );
}
