//! The command line: arguments into a [`Mode`] ([`args`]), files and stdin in ([`files`]), the
//! library's pipeline run, bytes and one line per error out.
//!
//! Exit codes: 0 success, 1 when any result has severity `error` (the output is still written),
//! 2 for usage errors. Every error result is also one line on stderr, which is all kustomize
//! shows of a function's failure.
//!
//! What it must not do: merge, select or read resources itself — that is the library's — or
//! hold state beyond one run.

mod args;
mod files;

use std::io::{Read, Write};

use krm_merge::config::{self, PatchKind, PatchOptions};
use krm_merge::error::exit_code;
use krm_merge::krm::{self, FnResult, Input, Output, Severity};
use krm_merge::select::identity::Id;
use krm_merge::yaml::{self, Node};

pub use args::{parse_args, Mode};
use files::{ConfigFailure, NotText, Unreadable};

/// Where the process writes.
pub struct Io<'o> {
    pub stdout: &'o mut dyn Write,
    pub stderr: &'o mut dyn Write,
}

impl Io<'_> {
    fn out(&mut self, s: &str) {
        self.bytes(s.as_bytes());
    }

    fn bytes(&mut self, b: &[u8]) {
        // A closed stdout (`| head`) is not our failure to report.
        let _ = self.stdout.write_all(b);
        let _ = self.stdout.flush();
    }

    fn err(&mut self, s: &str) {
        let _ = writeln!(self.stderr, "krm-merge: {s}");
    }

    /// One stderr line per error result; the exit code the results call for.
    fn finish(&mut self, results: &[FnResult]) -> i32 {
        for r in results.iter().filter(|r| r.severity == Severity::Error) {
            self.err(&r.to_string());
        }
        i32::from(exit_code(results))
    }

    /// Writes a run's output and reports its errors.
    fn output(&mut self, out: &Output) -> i32 {
        self.out(&out.text);
        self.finish(&out.results)
    }
}

/// Runs a mode; returns the exit code.
pub fn run(mode: Mode, stdin: &mut dyn Read, io: &mut Io<'_>) -> i32 {
    match mode {
        Mode::Help => {
            io.out(args::USAGE);
            0
        }
        Mode::Version => {
            io.out(&format!("krm-merge {}\n", env!("CARGO_PKG_VERSION")));
            0
        }
        Mode::Schema => {
            let s = serde_json::to_string_pretty(&config::json_schema()).unwrap_or_default();
            io.out(&s);
            io.out("\n");
            0
        }
        Mode::Krm => {
            match files::read_stdin(stdin) {
                Ok(src) => io.output(&krm::run_resource_list(&src)),
                Err(Unreadable::Io(message)) => io.output(&krm::pipeline::unreadable(
                    FnResult::new(Severity::Error, message),
                )),
                Err(Unreadable::NotText(e)) => io.output(&krm::pipeline::unreadable(
                    FnResult::new(Severity::Error, e.error.to_string()),
                )),
            }
        }
        Mode::Standalone { config, paths } => {
            let plan = files::load_config(&config, None);
            if let Err(ConfigFailure::Unreadable(e)) = &plan {
                return usage(io, e);
            }
            let src = if paths.is_empty() {
                files::read_stdin(stdin)
            } else {
                match files::read_paths(&paths) {
                    Ok(s) => s.map_err(Unreadable::NotText),
                    Err(e) => return usage(io, &e),
                }
            };
            run_stream(plan, src, io)
        }
        Mode::Plugin { config } => {
            let root =
                std::env::var_os("KUSTOMIZE_PLUGIN_CONFIG_ROOT").map(std::path::PathBuf::from);
            let plan = files::load_config(&config, root.as_deref());
            if let Err(ConfigFailure::Unreadable(e)) = &plan {
                return usage(io, e);
            }
            run_stream(plan, files::read_stdin(stdin), io)
        }
        Mode::Merge2 { src, dest, opts } => {
            let (src_text, dest_text) = match (files::read_file(&src), files::read_file(&dest)) {
                (Ok(a), Ok(b)) => (a, b),
                (Err(e), _) | (_, Err(e)) => return usage(io, &e),
            };
            merge_files(PatchKind::Merge2, &src_text, None, &dest_text, opts, io)
        }
        Mode::Merge3 {
            original,
            updated,
            dest,
            opts,
        } => {
            let texts = (
                files::read_file(&original),
                files::read_file(&updated),
                files::read_file(&dest),
            );
            let (o, u, d) = match texts {
                (Ok(o), Ok(u), Ok(d)) => (o, u, d),
                (Err(e), _, _) | (_, Err(e), _) | (_, _, Err(e)) => return usage(io, &e),
            };
            merge_files(PatchKind::Merge3, &u, Some(&o), &d, opts, io)
        }
    }
}

/// A stream mode (standalone, exec plugin) once the config and the input are read. When either
/// cannot be used, the input goes back as it came — the bytes themselves when they are not
/// UTF-8 — with the error, and the exit code is 1.
fn run_stream(
    plan: Result<(krm_merge::config::Plan, Id<'static>), ConfigFailure>,
    src: Result<String, Unreadable>,
    io: &mut Io<'_>,
) -> i32 {
    let mut errors = Vec::new();
    if let Err(ConfigFailure::Invalid(e) | ConfigFailure::Unreadable(e)) = &plan {
        errors.push(FnResult::new(Severity::Error, e.clone()));
    }
    match (plan, src) {
        (Ok((plan, id)), Ok(src)) => io.output(&krm::run_stream(&src, &plan, Some(&id))),
        (_, Ok(src)) => {
            io.out(&src);
            io.finish(&errors)
        }
        (_, Err(Unreadable::NotText(NotText { error, bytes }))) => {
            io.bytes(&bytes);
            errors.push(FnResult::new(Severity::Error, error.to_string()));
            io.finish(&errors)
        }
        (_, Err(Unreadable::Io(message))) => {
            errors.push(FnResult::new(Severity::Error, message));
            io.finish(&errors)
        }
    }
}

fn usage(io: &mut Io<'_>, msg: &str) -> i32 {
    io.err(msg);
    2
}

/// `merge2 SRC DEST` / `merge3 ORIGINAL UPDATED DEST`: DEST's documents, merged, on stdout.
///
/// Input that cannot be merged is an error (exit 1) that names the file and the place, and DEST
/// goes back as it came, as every other malformed input does: malformed YAML in any of the
/// files, a DEST that is not resources, a SRC (or UPDATED, ORIGINAL) document that is not a
/// mapping (`null`, a scalar or a list would replace DEST or make it vanish, which the
/// functionConfig path refuses too), aliases in SRC that expand past the alias budget. SRC's
/// aliases are expanded and its anchors dropped, as the functionConfig's are.
fn merge_files(
    kind: PatchKind,
    patch: &str,
    original: Option<&str>,
    dest: &str,
    opts: PatchOptions,
    io: &mut Io<'_>,
) -> i32 {
    let refuse = |io: &mut Io<'_>, message: String| {
        io.out(dest);
        io.finish(&[FnResult::new(Severity::Error, message)])
    };
    let input = match Input::read(dest) {
        Ok(i) => i,
        Err(e) => return refuse(io, format!("DEST: {e}")),
    };
    let what = if kind == PatchKind::Merge2 {
        "SRC"
    } else {
        "UPDATED"
    };
    let patch_docs = match patch_documents(patch, what, kind) {
        Ok(d) => d,
        Err(e) => return refuse(io, e),
    };
    if kind == PatchKind::Merge2 && patch_docs.is_empty() {
        return refuse(
            io,
            "SRC: no document (the file is empty, or only comments): nothing to merge".to_owned(),
        );
    }
    let original_docs = match original.map(|o| patch_documents(o, "ORIGINAL", kind)) {
        Some(Ok(d)) => d,
        Some(Err(e)) => return refuse(io, e),
        None => Vec::new(),
    };
    let single = patch_docs.len() == 1 && input.items.len() == 1 && original_docs.len() <= 1;
    let plan = config::command_line(kind, patch_docs, original_docs, opts, single);
    io.output(&krm::run_input(dest, input, &plan))
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
