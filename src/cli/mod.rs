//! The command line: arguments into a [`Mode`] ([`args`]), files and stdin in ([`files`],
//! directories as packages by [`walk`]), every path written checked against every path read
//! before anything is read ([`guard`]), the library's run, the package as files ([`emit`]),
//! files written as one transaction ([`writeback`]), bytes and messages out ([`out`]); the
//! results file last, with any write failure in it.
//!
//! Exit codes: 0 success, 1 when any result has severity `error` (or, with `--check`, when a
//! file would change; or when the output cannot be written), 2 for usage errors (a path
//! written that the run reads among them).
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
mod emit;
mod files;
mod guard;
mod out;
mod upgrade;
mod walk;
mod writeback;

use std::io::Read;
use std::path::{Path, PathBuf};

use krm_merge::config::{self, LoadRestrictor, PatchKind, PatchOptions};
use krm_merge::krm::exit_code;
use krm_merge::krm::{self, FnResult, Input, Severity};
use krm_merge::run::package::{self, PackageOutput};

pub use args::{command, parse_args, Mode, Parsed};
use args::{Level, Report, Source, Write};
use files::{ConfigFailure, ReadFailure};
pub use out::{ColorChoice, Colors, Io, StdoutIs};

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
            let options = krm_merge::run::Options {
                restrictor,
                pieces,
                config_file: files::kpt_fn_config(),
            };
            let read = files::read_stdin(stdin.read, &mut files::Budget::new(files::MAX_INPUT));
            let output = match &read {
                Ok(src) => krm_merge::run::run_krm(src, &options),
                Err(e) => krm_merge::run::unreadable(FnResult::new(Severity::Error, e.message())),
            };
            for r in output
                .results
                .iter()
                .filter(|r| r.severity == Severity::Error)
            {
                io.line(&r.to_string());
            }
            let code = io.out_code(
                output.text.as_bytes(),
                i32::from(exit_code(&output.results)),
            );
            left_to_the_exit((read, output));
            code
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
                    Err(ConfigFailure::Invalid(e)) => return failed_all(io, &Report::default(), e),
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
        } => merge2(&src, &dest, opts, &report, io),
        Mode::Merge3 {
            original,
            updated,
            local,
            opts,
            write,
            summary,
            report,
        } => upgrade::run(
            &upgrade::Request {
                original: &original,
                updated: &updated,
                local: &local,
                opts,
                write: &write,
                summary,
                report: &report,
            },
            stdin,
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

/// A usage error: its message (`error: ...`), exit 2.
fn usage(io: &mut Io<'_>, msg: &str) -> i32 {
    if msg.starts_with("error: ") {
        io.line(msg);
    } else {
        io.line(&format!("error: {msg}"));
    }
    2
}

/// An error before any run: reported like a result (and written to `--results`), exit 1.
fn failed(io: &mut Io<'_>, report: &Report, msg: String) -> i32 {
    let results = [FnResult::new(Severity::Error, msg)];
    conclude(io, report, &[], &results).unwrap_or(1)
}

/// Errors before any run (every field of a config at fault): each reported like a result (and
/// written to `--results`), exit 1.
fn failed_all(io: &mut Io<'_>, report: &Report, messages: Vec<String>) -> i32 {
    let results: Vec<FnResult> = messages
        .into_iter()
        .map(|m| FnResult::new(Severity::Error, m))
        .collect();
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
    if record(io, report, &all) != 0 {
        return Some(1);
    }
    (exit_code(&all) != 0).then_some(1)
}

/// Writes `--results` (when asked): 0, or 1 when it cannot be written (said on stderr).
fn record(io: &mut Io<'_>, report: &Report, all: &[FnResult]) -> i32 {
    let Some(path) = &report.results else {
        return 0;
    };
    let text = if all.is_empty() {
        "results: []\n".to_owned()
    } else {
        krm::results_block(all)
    };
    match writeback::write_file(path, text.as_bytes()) {
        Ok(()) => 0,
        Err(e) => {
            io.line(&format!("error: --results {e}"));
            1
        }
    }
}

/// Ends a run whose output was written (or failed to be): `--results` last, with every result
/// and the failure; the exit code.
fn finish(io: &mut Io<'_>, report: &Report, results: &[FnResult], code: i32) -> i32 {
    match record(io, report, results) {
        0 => code,
        failed => failed,
    }
}

/// `--config FN [PATH...]`. Everything the run reads is listed (by metadata) and checked
/// against what it writes before anything is read; the results file is written last.
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
    // A missing config is said first (before a terminal where stdin is read).
    let config_key = match std::fs::metadata(config) {
        Ok(m) if m.is_dir() => return usage(io, &files::config_is_a_directory(config)),
        Ok(m) => Some(walk::key(&m)),
        Err(e) => return usage(io, &files::file_error(files::CONFIG, config, &e)),
    };
    if stdin.terminal && inputs.contains(&Source::Stdin) {
        return usage(io, WAITING);
    }
    let copies = matches!(write, Write::Output(_));
    let listing = match files::list_inputs(inputs, config_key, copies) {
        Ok(l) => l,
        Err(e) => return read_failed(io, report, e),
    };
    if *write == Write::InPlace {
        if let Some(what) = listing.not_rewritable() {
            return usage(
                io,
                &format!(
                    "--in-place: {what} cannot be written back (not a regular file); give \
                     files or directories, or write the output elsewhere (stdout, --output DIR)"
                ),
            );
        }
    }
    let mut reads = guard::Reads::default();
    reads.add(config);
    reads.extend(&listing.reads);
    if let Err(e) = refuse_overwrites(&reads, write, report, io) {
        return usage(io, &e);
    }
    let loaded = match files::load_config(config, None, restrictor) {
        Ok(l) => l,
        Err(ConfigFailure::Unreadable(e)) => return usage(io, &e),
        Err(ConfigFailure::Invalid(e)) => return failed_all(io, report, e),
    };
    for f in &loaded.files {
        reads.add(f);
    }
    if let Err(e) = refuse_overwrites(&reads, write, report, io) {
        return usage(io, &e);
    }
    let mut budget = files::Budget::new(files::MAX_INPUT);
    let read = match files::read_listed(listing, stdin.read, &mut budget) {
        Ok(r) => r,
        Err(e) => return read_failed(io, report, e),
    };
    let mut results: Vec<FnResult> = read.reading_results().collect();
    let pieces = match pieces() {
        Ok(p) => p,
        Err(e) => return usage(io, &e),
    };
    let pkg = package::run_with(&read.sources, &loaded.plan, Some(&loaded.id), pieces);
    results.extend(pkg.results.iter().cloned());
    // Under failOn: warning, a file left out of the reading fails the run too.
    krm_merge::run::escalate(loaded.plan.fail_on, &mut results);
    io.report(&results, report.level);
    if exit_code(&results) != 0 {
        return finish(io, report, &results, 1);
    }
    let code = deliver(
        io,
        report,
        write,
        &read,
        &pkg,
        emit::NewNames::Made,
        results,
        &writeback::Real,
    );
    left_to_the_exit(read);
    left_to_the_exit(pkg);
    code
}

/// Leaves a value the size of the input (its text, its output) to the process's exit, which
/// follows the run: the exit gives its memory back at once, where dropping it gives it back
/// page by page (a 60 MB package's input and output: 10 ms, against a run of 400). The command
/// line runs once per process; nothing here is read after it.
fn left_to_the_exit<T>(big: T) {
    std::mem::forget(big);
}

/// Writes a package run's output as `write` says, its results said already and none an
/// error: the stream on stdout (the `Kptfile` left out), the files rewritten or the package
/// built through the write-back transaction, the diff, or the check. A write that fails is one
/// more error result; the results file is written last. The exit code.
#[allow(clippy::too_many_arguments)]
fn deliver(
    io: &mut Io<'_>,
    report: &Report,
    write: &Write,
    read: &files::Inputs,
    pkg: &PackageOutput,
    names: emit::NewNames,
    mut results: Vec<FnResult>,
    fs: &dyn writeback::Fs,
) -> i32 {
    let written = match write {
        Write::Stdout => {
            let text = pkg.stream(&read.sources, |i| {
                read.files.get(i).is_some_and(|f| !f.kptfile)
            });
            to_stdout(io, text.as_bytes(), 0)
        }
        Write::InPlace => writeback::commit(&emit::in_place(read, pkg, names), fs)
            .map(|()| 0)
            .map_err(|e| Some(e.to_string())),
        Write::Output(dir) => match emit::output(dir, read, pkg, names) {
            Ok(files) => writeback::build_dir(dir, &files, fs)
                .map(|()| 0)
                .map_err(|e| Some(e.to_string())),
            Err(e) => Err(Some(e)),
        },
        Write::Diff { check } => {
            let diff = emit::unified_diffs(read, pkg, names);
            let code = i32::from(*check && pkg.changed());
            match io.diff(&diff) {
                Ok(()) => Ok(code),
                Err(out::WriteFailed::Closed) => Err(None),
                Err(out::WriteFailed::Error(e)) => Err(Some(format!(
                    "cannot write to stdout: {}",
                    krm_merge::error::io_reason(&e)
                ))),
            }
        }
        Write::Check => {
            let changes = emit::changes(read, pkg, names);
            if report.level >= Level::Normal {
                for (name, what) in &changes {
                    io.line(&format!("{name}: would be {what}"));
                }
            }
            Ok(i32::from(!changes.is_empty()))
        }
    };
    match written {
        Ok(code) => finish(io, report, &results, code),
        Err(message) => {
            if let Some(m) = message {
                let r = FnResult::new(Severity::Error, m);
                io.report(std::slice::from_ref(&r), report.level);
                results.push(r);
            } else {
                results.push(FnResult::new(
                    Severity::Error,
                    "cannot write to stdout: the reader went away",
                ));
            }
            finish(io, report, &results, 1)
        }
    }
}

/// Writes stdout's bytes: `Ok(code)`, or `Err` with what to say (`None` for a reader that went
/// away, which is said nowhere but in `--results`).
fn to_stdout(io: &mut Io<'_>, b: &[u8], code: i32) -> Result<i32, Option<String>> {
    match io.out(b) {
        Ok(()) => Ok(code),
        Err(out::WriteFailed::Closed) => Err(None),
        Err(out::WriteFailed::Error(e)) => Err(Some(format!(
            "cannot write to stdout: {}",
            krm_merge::error::io_reason(&e)
        ))),
    }
}

/// The paths `write` and `report` write, each checked against what the run reads.
fn refuse_overwrites(
    reads: &guard::Reads,
    write: &Write,
    report: &Report,
    io: &Io<'_>,
) -> Result<(), String> {
    if let Some(path) = &report.results {
        reads.refuse("--results", path)?;
    }
    match write {
        Write::Output(dir) => reads.refuse("--output", dir),
        Write::Stdout | Write::Diff { .. } => reads.refuse_stdout(&io.stdout_is),
        Write::InPlace | Write::Check => Ok(()),
    }
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
        Err(e) => Err(files::file_error("--output", dir, &e)),
    }
}

/// `merge2 SRC DEST`: DEST's documents, merged, on stdout.
///
/// Input that cannot be merged is an error (exit 1) that names the file and the place, and
/// nothing is written, as in every mode but KRM mode: malformed YAML in any of the
/// files, a DEST that is not resources, a SRC document that is not a mapping (`null`, a scalar
/// or a list would replace DEST or make it vanish, which the functionConfig path refuses too),
/// aliases in SRC that expand past the alias budget. SRC's aliases are expanded and its anchors
/// dropped, as the functionConfig's are.
fn merge2(patch: &Path, dest: &Path, opts: PatchOptions, report: &Report, io: &mut Io<'_>) -> i32 {
    let kind = PatchKind::Merge2;
    let mut reads = guard::Reads::default();
    for p in [patch, dest] {
        reads.add(p);
    }
    let refused = report
        .results
        .as_deref()
        .map_or(Ok(()), |r| reads.refuse("--results", r))
        .and_then(|()| reads.refuse_stdout(&io.stdout_is));
    if let Err(e) = refused {
        return usage(io, &e);
    }
    let mut budget = files::Budget::new(files::MAX_INPUT);
    let mut read = |role: &str, p: &Path| files::read_file(role, p, &mut budget);
    let (patch_text, dest_text) = match (read("SRC", patch), read("DEST", dest)) {
        (Ok(p), Ok(d)) => (p, d),
        (Err(e), _) | (_, Err(e)) => return read_failed(io, report, e),
    };
    let input = match Input::read(&dest_text) {
        Ok(i) => i,
        Err(e) => return failed(io, report, format!("{}: {e}", dest.display())),
    };
    let patch_docs = match config::patch_file(&patch_text, &patch.display().to_string(), kind) {
        Ok(d) => d,
        Err(e) => return failed(io, report, e.to_string()),
    };
    if patch_docs.is_empty() {
        return failed(
            io,
            report,
            format!(
                "{}: no document (the file is empty, or only comments): nothing to merge",
                patch.display()
            ),
        );
    }
    // A list kind's items are the resources: one `List` of one resource is a single document.
    let mut resources = 0;
    for item in &input.items {
        krm::for_each_resource(&item.node, &mut |_| resources += 1);
    }
    let single = patch_docs.len() == 1 && resources == 1;
    let plan = config::command_line(kind, patch_docs, Vec::new(), opts, single);
    let output = krm_merge::run::run_input(&dest_text, input, &plan);
    if let Some(code) = conclude(io, report, &[], &output.results) {
        return code;
    }
    io.out_code(output.text.as_bytes(), 0)
}
