//! The command line: arguments into a [`Mode`] ([`args`]), files and stdin in ([`files`],
//! directories as packages by [`walk`]), the library's run, bytes and messages out ([`out`]).
//!
//! Exit codes: 0 success, 1 when any result has severity `error` (or, with `--check`, when a
//! file would change; or when the output cannot be written), 2 for usage errors.
//!
//! * **KRM mode** (no arguments) is the KRM Functions Specification's: the ResourceList comes
//!   back with its results inside, on an error too (the items as they came); each error is
//!   also one line on stderr, which is all kustomize shows of a function's failure.
//! * **Every other mode** (`--config`, the exec plugin, `merge2`, `merge3`, `diff`): each warning and
//!   error result is one line on stderr (info too with `-v`, errors only with `-q`),
//!   `--results FILE` writes them all; on an error **nothing** is written — no stdout, no file —
//!   so that a pipe never carries unpatched resources (kustomize discards an exec plugin's
//!   stdout when it fails anyway).
//!
//! What it must not do: merge, select or parse resources itself — that is the library's — or
//! hold state beyond one run.

mod args;
mod diff;
mod files;
mod out;
mod walk;

use std::collections::BTreeSet;
use std::io::Read;
use std::path::{Path, PathBuf};

use krm_merge::config::{self, LoadRestrictor, PatchKind, PatchOptions};
use krm_merge::error::exit_code;
use krm_merge::krm::{self, FnResult, Input, Severity};
use krm_merge::run::package::{self, FileOutput, PackageOutput};
use krm_merge::yaml::{self, Node};

pub use args::{command, parse_args, Mode, Parsed};
use args::{Level, Report, Source, Write};
use files::{ConfigFailure, Inputs, ReadFailure};
pub use out::Io;

/// Standard input, and whether it is a terminal (then nothing is piped in).
pub struct Stdin<'i> {
    pub read: &'i mut dyn Read,
    pub terminal: bool,
}

/// What is said when stdin is a terminal where input is expected.
const WAITING: &str = "stdin is a terminal, and krm-merge reads resources from it: pipe a \
ResourceList in (KRM mode), or give the functionConfig and the resources: krm-merge --config \
FN PATH... (see krm-merge --help)";

/// Runs a mode; returns the exit code.
pub fn run(mode: Mode, stdin: Stdin<'_>, io: &mut Io<'_>) -> i32 {
    match mode {
        Mode::Schema => {
            let s = serde_json::to_string_pretty(&config::json_schema()).unwrap_or_default();
            io.out_code(format!("{s}\n").as_bytes(), 0)
        }
        Mode::Completions(shell) => {
            let mut script = Vec::new();
            clap_complete::generate(
                clap_complete::Shell::from(shell),
                &mut command(),
                "krm-merge",
                &mut script,
            );
            io.out_code(&script, 0)
        }
        Mode::Diff(req) => diff::run(&req, stdin, io),
        Mode::Krm { restrictor } => {
            if stdin.terminal {
                return usage(io, WAITING);
            }
            let pieces = match pieces() {
                Ok(p) => p,
                Err(e) => return usage(io, &e),
            };
            let options = krm_merge::run::Options { restrictor, pieces };
            let output =
                match files::read_stdin(stdin.read, &mut files::Budget::new(files::MAX_INPUT)) {
                    Ok(src) => krm_merge::run::run_krm(&src, &options),
                    Err(e) => {
                        krm_merge::run::unreadable(FnResult::new(Severity::Error, e.message()))
                    }
                };
            for r in output
                .results
                .iter()
                .filter(|r| r.severity == Severity::Error)
            {
                io.line(&r.to_string());
            }
            io.out_code(
                output.text.as_bytes(),
                i32::from(exit_code(&output.results)),
            )
        }
        Mode::Standalone {
            config,
            inputs,
            write,
            report,
            restrictor,
        } => standalone(&config, &inputs, &write, &report, restrictor, stdin, io),
        Mode::Plugin { config } => {
            let root = std::env::var_os("KUSTOMIZE_PLUGIN_CONFIG_ROOT").map(PathBuf::from);
            // kustomize passes no flags to an exec plugin: its files stay in the kustomization's tree.
            let loaded =
                match files::load_config(&config, root.as_deref(), LoadRestrictor::RootOnly) {
                    Ok(l) => l,
                    Err(ConfigFailure::Unreadable(e)) => return usage(io, &e),
                    Err(ConfigFailure::Invalid(e)) => return failed(io, &Report::default(), e),
                };
            let inputs = [Source::Stdin];
            let read = if stdin.terminal {
                return usage(io, WAITING);
            } else {
                files::read_inputs(&inputs, stdin.read, None)
            };
            let read = match read {
                Ok(r) => r,
                Err(e) => return read_failed(io, &Report::default(), e),
            };
            let pieces = match pieces() {
                Ok(p) => p,
                Err(e) => return usage(io, &e),
            };
            let pkg = package::run_with(&read.sources, &loaded.plan, Some(&loaded.id), pieces);
            let report = Report::default();
            if let Some(code) = conclude(io, &report, &[], &pkg.results) {
                return code;
            }
            io.out_code(pkg.stream(&read.sources, |_| true).as_bytes(), 0)
        }
        Mode::Merge2 {
            src,
            dest,
            opts,
            report,
        } => merge_files(PatchKind::Merge2, &src, None, &dest, opts, &report, io),
        Mode::Merge3 {
            original,
            updated,
            dest,
            opts,
            report,
        } => merge_files(
            PatchKind::Merge3,
            &updated,
            Some(&original),
            &dest,
            opts,
            &report,
            io,
        ),
    }
}

/// How input is cut into pieces read on every core: `KRM_MERGE_PIECES`, `auto` (the default:
/// inputs over 1 MB in pieces of about 64 KB), `whole` (one piece, one thread) or a size in
/// bytes. Every setting gives the same output and results; it is there for tests and
/// measurements.
fn pieces() -> Result<krm_merge::run::Pieces, String> {
    match std::env::var_os("KRM_MERGE_PIECES") {
        None => Ok(krm_merge::run::Pieces::Auto),
        Some(v) => v
            .to_str()
            .ok_or_else(|| "not UTF-8".to_owned())
            .and_then(krm_merge::run::Pieces::parse)
            .map_err(|e| format!("error: KRM_MERGE_PIECES: {e}")),
    }
}

/// A usage error: its message, exit 2.
fn usage(io: &mut Io<'_>, msg: &str) -> i32 {
    io.line(msg);
    2
}

/// An error before any run: reported like a result (and written to `--results`), exit 1.
fn failed(io: &mut Io<'_>, report: &Report, msg: String) -> i32 {
    let results = [FnResult::new(Severity::Error, msg)];
    conclude(io, report, &[], &results).unwrap_or(1)
}

/// Input that could not be read: a usage error for a path that leads nowhere, else an error.
fn read_failed(io: &mut Io<'_>, report: &Report, e: ReadFailure) -> i32 {
    match e {
        ReadFailure::Usage(m) => usage(io, &m),
        other => failed(io, report, other.message()),
    }
}

/// Says what the results say at the report's level, writes `--results`, and tells whether the
/// run is over: `Some(exit code)` when an error (or a failed results file) ends it.
/// `reading`: warnings about the input that come before the run's results.
fn conclude(
    io: &mut Io<'_>,
    report: &Report,
    reading: &[FnResult],
    results: &[FnResult],
) -> Option<i32> {
    let all: Vec<FnResult> = reading.iter().chain(results).cloned().collect();
    io.report(&all, report.level);
    if let Some(path) = &report.results {
        let text = if all.is_empty() {
            "results: []\n".to_owned()
        } else {
            krm::results_block(&all)
        };
        if let Err(e) = out::write_atomic(path, text.as_bytes()) {
            io.line(&format!("error: --results: {e}"));
            return Some(1);
        }
    }
    (exit_code(&all) != 0).then_some(1)
}

/// `--config FN [PATH...]`.
fn standalone(
    config: &Path,
    inputs: &[Source],
    write: &Write,
    report: &Report,
    restrictor: LoadRestrictor,
    stdin: Stdin<'_>,
    io: &mut Io<'_>,
) -> i32 {
    if let Write::Output(dir) = write {
        if let Err(e) = output_dir_is_free(dir) {
            return usage(io, &e);
        }
    }
    let loaded = match files::load_config(config, None, restrictor) {
        Ok(l) => l,
        Err(ConfigFailure::Unreadable(e)) => return usage(io, &e),
        Err(ConfigFailure::Invalid(e)) => return failed(io, report, e),
    };
    if stdin.terminal && inputs.contains(&Source::Stdin) {
        return usage(io, WAITING);
    }
    let read = match files::read_inputs(inputs, stdin.read, loaded.key) {
        Ok(r) => r,
        Err(e) => return read_failed(io, report, e),
    };
    let mut reading: Vec<FnResult> = read
        .warnings
        .iter()
        .map(|w| FnResult::new(Severity::Warning, w.clone()))
        .collect();
    reading.extend(
        read.notes
            .iter()
            .map(|n| FnResult::new(Severity::Info, n.clone())),
    );
    let pieces = match pieces() {
        Ok(p) => p,
        Err(e) => return usage(io, &e),
    };
    let pkg = package::run_with(&read.sources, &loaded.plan, Some(&loaded.id), pieces);
    if let Some(code) = conclude(io, report, &reading, &pkg.results) {
        return code;
    }
    match write {
        Write::Stdout => {
            let text = pkg.stream(&read.sources, |i| {
                read.files.get(i).is_some_and(|f| !f.kptfile)
            });
            io.out_code(text.as_bytes(), 0)
        }
        Write::InPlace => write_in_place(&read, &pkg, io),
        Write::Output(dir) => write_output(dir, &read, &pkg, io),
        Write::Diff { check } => {
            let diff = unified_diffs(&read, &pkg);
            let code = if *check && pkg.changed() { 1 } else { 0 };
            io.out_code(diff.as_bytes(), code)
        }
        Write::Check => {
            let changes = changes(&read, &pkg);
            if report.level >= Level::Normal {
                for (name, what) in &changes {
                    io.line(&format!("{name}: would be {what}"));
                }
            }
            i32::from(!changes.is_empty())
        }
    }
}

/// The name a file is shown by in diffs and messages, and where a new file goes.
fn shown(read: &Inputs, i: usize) -> String {
    read.sources
        .get(i)
        .map(|s| s.name.clone())
        .unwrap_or_default()
}

/// Where `--in-place` puts a resource a patch added: the first directory given, else the
/// directory of the first file.
fn new_file_dir(read: &Inputs) -> PathBuf {
    read.first_dir
        .clone()
        .or_else(|| {
            read.files
                .iter()
                .find_map(|f| f.path.as_ref())
                .and_then(|p| p.parent().map(Path::to_path_buf))
        })
        .unwrap_or_else(|| PathBuf::from("."))
}

/// The new files' paths for `--in-place` and `--diff`: in `dir`, never over a file that exists.
fn new_file_paths(dir: &Path, pkg: &PackageOutput) -> Vec<PathBuf> {
    let mut taken: BTreeSet<PathBuf> = BTreeSet::new();
    pkg.added
        .iter()
        .map(|n| {
            let (stem, ext) = n.name.rsplit_once('.').unwrap_or((&n.name, "yaml"));
            let mut path = dir.join(&n.name);
            let mut k = 2;
            while path.exists() || taken.contains(&path) {
                path = dir.join(format!("{stem}-{k}.{ext}"));
                k += 1;
            }
            taken.insert(path.clone());
            path
        })
        .collect()
}

/// Each file that would change, and how: `changed`, `removed` or `created`.
fn changes(read: &Inputs, pkg: &PackageOutput) -> Vec<(String, &'static str)> {
    let mut out = Vec::new();
    for (i, f) in pkg.files.iter().enumerate() {
        match f {
            FileOutput::Changed(_) => out.push((shown(read, i), "changed")),
            FileOutput::Emptied => out.push((shown(read, i), "removed")),
            FileOutput::Unchanged | FileOutput::NotResources => {}
        }
    }
    let dir = new_file_dir(read);
    for p in new_file_paths(&dir, pkg) {
        out.push((p.display().to_string(), "created"));
    }
    out
}

/// `--diff`: every change as a unified diff, file by file.
fn unified_diffs(read: &Inputs, pkg: &PackageOutput) -> String {
    let mut text = String::new();
    for (i, f) in pkg.files.iter().enumerate() {
        let before = read.sources.get(i).map(|s| s.text.as_str());
        let name = shown(read, i);
        match f {
            FileOutput::Changed(after) => {
                text.push_str(&out::unified_diff(&name, before, Some(after)))
            }
            FileOutput::Emptied => text.push_str(&out::unified_diff(&name, before, None)),
            FileOutput::Unchanged | FileOutput::NotResources => {}
        }
    }
    let dir = new_file_dir(read);
    for (path, new) in new_file_paths(&dir, pkg).iter().zip(&pkg.added) {
        text.push_str(&out::unified_diff(
            &path.display().to_string(),
            None,
            Some(&new.text),
        ));
    }
    text
}

/// `--in-place`: each changed file rewritten atomically, each emptied file removed, each new
/// resource in a file of its own; unchanged files are not touched.
fn write_in_place(read: &Inputs, pkg: &PackageOutput, io: &mut Io<'_>) -> i32 {
    let mut code = 0;
    let mut fail = |io: &mut Io<'_>, e: String| {
        io.line(&format!("error: {e}"));
        code = 1;
    };
    for (f, file) in pkg.files.iter().zip(&read.files) {
        let Some(path) = &file.path else { continue };
        match f {
            FileOutput::Changed(text) => {
                if let Err(e) = out::write_atomic(path, text.as_bytes()) {
                    fail(io, e);
                }
            }
            FileOutput::Emptied => {
                if let Err(e) = std::fs::remove_file(path) {
                    fail(io, format!("{}: cannot remove: {e}", path.display()));
                }
            }
            FileOutput::Unchanged | FileOutput::NotResources => {}
        }
    }
    let dir = new_file_dir(read);
    for (path, new) in new_file_paths(&dir, pkg).iter().zip(&pkg.added) {
        if let Err(e) = out::write_atomic(path, new.text.as_bytes()) {
            fail(io, e);
        }
    }
    code
}

/// `--output DIR` must be a new or an empty directory.
fn output_dir_is_free(dir: &Path) -> Result<(), String> {
    match std::fs::read_dir(dir) {
        Ok(mut entries) => match entries.next() {
            None => Ok(()),
            Some(_) => Err(format!(
                "--output {}: the directory is not empty (krm-merge writes a package only to a new or empty directory)",
                dir.display()
            )),
        },
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(format!("--output {}: {e}", dir.display())),
    }
}

/// `--output DIR`: every file read, at its place under DIR (patched, or as it is when it is not
/// resources), the kustomize build files as they are, and the new resources; none of an
/// emptied file.
fn write_output(dir: &Path, read: &Inputs, pkg: &PackageOutput, io: &mut Io<'_>) -> i32 {
    let mut plan: Vec<(PathBuf, &[u8])> = Vec::new();
    for (i, file) in read.files.iter().enumerate() {
        let text = match pkg.files.get(i) {
            Some(FileOutput::NotResources) => read.sources.get(i).map(|s| s.text.as_str()),
            _ => pkg.text_of(&read.sources, i),
        };
        if let Some(t) = text {
            plan.push((dir.join(&file.rel), t.as_bytes()));
        }
    }
    let mut copies = Vec::new();
    for (path, rel) in &read.kustomizations {
        match std::fs::read(path) {
            Ok(bytes) => copies.push((dir.join(rel), bytes)),
            Err(e) => return failed(io, &Report::default(), format!("{}: {e}", path.display())),
        }
    }
    plan.extend(copies.iter().map(|(p, b)| (p.clone(), b.as_slice())));
    for (n, new) in pkg.added.iter().enumerate() {
        let mut path = dir.join(&new.name);
        if plan.iter().any(|(p, _)| *p == path) {
            path = dir.join(format!("{n}-{}", new.name));
        }
        plan.push((path, new.text.as_bytes()));
    }
    let mut seen = BTreeSet::new();
    for (p, _) in &plan {
        if !seen.insert(p.clone()) {
            return usage(
                io,
                &format!(
                    "--output: two inputs would both be written to {}",
                    p.display()
                ),
            );
        }
    }
    for (path, bytes) in plan {
        let made = path
            .parent()
            .map_or(Ok(()), std::fs::create_dir_all)
            .map_err(|e| format!("{}: {e}", path.display()))
            .and_then(|()| out::write_atomic(&path, bytes));
        if let Err(e) = made {
            io.line(&format!("error: {e}"));
            return 1;
        }
    }
    0
}

/// `merge2 SRC DEST` / `merge3 ORIGINAL UPDATED DEST`: DEST's documents, merged, on stdout.
///
/// Input that cannot be merged is an error (exit 1) that names the file and the place, and
/// nothing is written, as in every mode but KRM mode: malformed YAML in any of the
/// files, a DEST that is not resources, a SRC (or UPDATED, ORIGINAL) document that is not a
/// mapping (`null`, a scalar or a list would replace DEST or make it vanish, which the
/// functionConfig path refuses too), aliases in SRC that expand past the alias budget. SRC's
/// aliases are expanded and its anchors dropped, as the functionConfig's are.
fn merge_files(
    kind: PatchKind,
    patch: &Path,
    original: Option<&Path>,
    dest: &Path,
    opts: PatchOptions,
    report: &Report,
    io: &mut Io<'_>,
) -> i32 {
    let mut budget = files::Budget::new(files::MAX_INPUT);
    let mut read = |p: &Path| files::read_file(p, &mut budget);
    let texts = (read(patch), original.map(&mut read).transpose(), read(dest));
    let (patch_text, original_text, dest_text) = match texts {
        (Ok(p), Ok(o), Ok(d)) => (p, o, d),
        (Err(e), _, _) | (_, Err(e), _) | (_, _, Err(e)) => return read_failed(io, report, e),
    };
    let input = match Input::read(&dest_text) {
        Ok(i) => i,
        Err(e) => return failed(io, report, format!("{}: {e}", dest.display())),
    };
    let patch_docs = match patch_documents(&patch_text, &patch.display().to_string(), kind) {
        Ok(d) => d,
        Err(e) => return failed(io, report, e),
    };
    if kind == PatchKind::Merge2 && patch_docs.is_empty() {
        return failed(
            io,
            report,
            format!(
                "{}: no document (the file is empty, or only comments): nothing to merge",
                patch.display()
            ),
        );
    }
    let original_docs = match original.zip(original_text.as_deref()) {
        Some((p, t)) => match patch_documents(t, &p.display().to_string(), kind) {
            Ok(d) => d,
            Err(e) => return failed(io, report, e),
        },
        None => Vec::new(),
    };
    // A list kind's items are the resources: one `List` of one resource is a single document.
    let mut resources = 0;
    for item in &input.items {
        krm::for_each_resource(&item.node, &mut |_| resources += 1);
    }
    let single = patch_docs.len() == 1 && resources == 1 && original_docs.len() <= 1;
    let plan = config::command_line(kind, patch_docs, original_docs, opts, single);
    let output = krm_merge::run::run_input(&dest_text, input, &plan);
    if let Some(code) = conclude(io, report, &[], &output.results) {
        return code;
    }
    io.out_code(output.text.as_bytes(), 0)
}

/// The documents of a patch file: each a mapping, its aliases expanded and its anchors
/// dropped. Errors name the file (`what`), the document and its line.
fn patch_documents(text: &str, what: &str, kind: PatchKind) -> Result<Vec<Node<'static>>, String> {
    let parsed = yaml::parse_stream(text).map_err(|e| format!("{what}: malformed YAML: {e}"))?;
    let mut out = Vec::new();
    let mut offset = 0;
    let mut n = 0;
    for doc in parsed {
        let line = text.get(..offset).map_or(0, |s| s.matches('\n').count()) + 1;
        offset += doc.text.len();
        let Some(root) = doc.root else { continue };
        n += 1;
        if !root.is_map() {
            let found = match root.kind() {
                yaml::Kind::Seq => "a list",
                yaml::Kind::Alias => "an alias",
                _ if root.is_null() => "null",
                _ => "a scalar",
            };
            return Err(format!(
                "{what}: document {n} (from line {line}) is {found}; a {kind} patch is made of \
                 partial resources (mappings)"
            ));
        }
        let detached = yaml::anchors::detached(&root)
            .map_err(|e| format!("{what}: document {n} (from line {line}): {e}"))?
            .into_owned()
            .into_owned();
        out.push(detached);
    }
    Ok(out)
}
