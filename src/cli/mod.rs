//! The command line: arguments into a [`Mode`], then each mode's I/O around the library.
//!
//! Exit codes: 0 success, 1 when any result has severity `error` (the output is still written),
//! 2 for usage errors. Every error result is also one line on stderr, which is all kustomize
//! shows of a function's failure.

use std::ffi::OsString;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};

use crate::config::{self, PatchKind, PatchOptions, PatchStep, Plan};
use crate::krm::engine::{self, Engine};
use crate::krm::{self, FnResult, Input, Severity, StreamOut, Streamed};
use crate::select::identity::Id;

/// What the process was asked to do.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Mode {
    /// A ResourceList on stdin, its functionConfig saying what to do (kpt, kustomize).
    Krm,
    /// `--config FN.yaml [PATH...]`: resources from files, directories or stdin.
    Standalone {
        config: PathBuf,
        paths: Vec<PathBuf>,
    },
    /// kustomize's legacy exec plugin: the config file is the only argument, stdin a stream.
    Plugin {
        config: PathBuf,
    },
    /// `merge2 SRC DEST`.
    Merge2 {
        src: PathBuf,
        dest: PathBuf,
        opts: PatchOptions,
    },
    /// `merge3 ORIGINAL UPDATED DEST`.
    Merge3 {
        original: PathBuf,
        updated: PathBuf,
        dest: PathBuf,
        opts: PatchOptions,
    },
    /// `schema`: the functionConfig's JSON Schema.
    Schema,
    Help,
    Version,
}

/// Arguments that make no sense.
#[derive(Debug, PartialEq, Eq, thiserror::Error)]
#[error("{0}\nRun 'krm-merge --help' for usage.")]
pub struct UsageError(pub String);

pub const USAGE: &str = "\
krm-merge: merge and patch the resources of a Kubernetes package (a KRM function).

Usage:
  krm-merge                               read a ResourceList on stdin, apply its functionConfig,
                                          write the ResourceList to stdout (kpt, kustomize)
  krm-merge --config FN.yaml [PATH...]    apply FN.yaml to the YAML files or directories PATH
                                          (or to stdin), write the result to stdout
  krm-merge CONFIG                        kustomize legacy exec plugin (stdin: a YAML stream)
  krm-merge merge2 SRC DEST               merge SRC into DEST (2-way strategic merge)
  krm-merge merge3 ORIGINAL UPDATED DEST  merge the change ORIGINAL->UPDATED into DEST (3-way)
  krm-merge schema                        print the JSON Schema of the functionConfig
  krm-merge --help | --version

Options of merge2 and merge3:
  --new-list-items append|prepend         where new list elements go (default append)
  --no-infer-merge-keys                   replace lists no schema describes
  --conflicts warn|error                  merge3: what a conflict is (default warn)

functionConfig (apiVersion: fn.krm-merge.dev/v1alpha1, kind: Merge):
  spec:
    patches:                  applied in order, each to the output of the previous
    - type: merge2            merge2 | json6902 | jsonmerge | merge3 | apply (or kustomize's names)
      patch: |                the patch (YAML or JSON, several documents allowed), or path: FILE
      original: |             merge3: the common ancestor (or originalPath: FILE)
      target:                 group, version, kind, name, namespace (anchored regexes),
        kind: Deployment      labelSelector, annotationSelector; omitted: the patch's own identity
      options: {newListItems: append, inferMergeKeys: true, allowNameChange: false,
                allowKindChange: false, conflicts: warn}
    schema:                   merge keys for kinds the built-in Kubernetes schema lacks
      openAPI: {path: FILE}   (or inline:), and/or
      mergeKeys: [{group: example.com, kind: Foo, path: spec.items, keys: [name]}]
Also accepted: kustomize's PatchTransformer config, and a ConfigMap (kpt fn eval -- key=value)
with keys type, patch, original, group, version, kind, name, namespace, labelSelector,
annotationSelector.

Exit status: 0 success, 1 an error result (the output is still written), 2 usage error.
";

fn arg_str(a: &OsString) -> Result<&str, UsageError> {
    a.to_str()
        .ok_or_else(|| UsageError(format!("argument {a:?} is not valid UTF-8")))
}

/// Reads the arguments (without the program name). `plugin_env`: kustomize's
/// `KUSTOMIZE_PLUGIN_CONFIG_STRING` is set.
pub fn parse_args(args: &[OsString], plugin_env: bool) -> Result<Mode, UsageError> {
    let strs: Vec<&str> = args.iter().map(arg_str).collect::<Result<_, _>>()?;
    if strs.iter().any(|a| *a == "--help" || *a == "-h") {
        return Ok(Mode::Help);
    }
    if strs.iter().any(|a| *a == "--version" || *a == "-V") {
        return Ok(Mode::Version);
    }
    match strs.first().copied() {
        None => Ok(Mode::Krm),
        Some("schema") if strs.len() == 1 => Ok(Mode::Schema),
        Some("merge2") => {
            let (files, opts) = merge_args(&strs[1..])?;
            match files[..] {
                [src, dest] => Ok(Mode::Merge2 {
                    src: src.into(),
                    dest: dest.into(),
                    opts,
                }),
                _ => Err(UsageError("merge2 takes two files: SRC DEST".into())),
            }
        }
        Some("merge3") => {
            let (files, opts) = merge_args(&strs[1..])?;
            match files[..] {
                [original, updated, dest] => Ok(Mode::Merge3 {
                    original: original.into(),
                    updated: updated.into(),
                    dest: dest.into(),
                    opts,
                }),
                _ => Err(UsageError(
                    "merge3 takes three files: ORIGINAL UPDATED DEST".into(),
                )),
            }
        }
        Some("--config") | Some("-c") => match strs.get(1) {
            Some(cfg) => Ok(Mode::Standalone {
                config: cfg.into(),
                paths: strs[2..].iter().map(PathBuf::from).collect(),
            }),
            None => Err(UsageError("--config needs a file".into())),
        },
        Some(a) if a.starts_with("--config=") => Ok(Mode::Standalone {
            config: a.trim_start_matches("--config=").into(),
            paths: strs[1..].iter().map(PathBuf::from).collect(),
        }),
        Some(a)
            if strs.len() == 1 && !a.starts_with('-') && (plugin_env || Path::new(a).is_file()) =>
        {
            Ok(Mode::Plugin { config: a.into() })
        }
        Some(a) if a.starts_with('-') => Err(UsageError(format!("unknown option {a}"))),
        Some(a) => Err(UsageError(format!("unknown command or missing file {a:?}"))),
    }
}

fn merge_args<'s>(args: &[&'s str]) -> Result<(Vec<&'s str>, PatchOptions), UsageError> {
    let mut opts = PatchOptions::default();
    let mut files = Vec::new();
    let mut it = args.iter();
    while let Some(&a) = it.next() {
        let (name, inline) = match a.split_once('=') {
            Some((n, v)) if a.starts_with("--") => (n, Some(v)),
            _ => (a, None),
        };
        let mut value = |flag: &str| -> Result<&'s str, UsageError> {
            inline
                .or_else(|| it.next().copied())
                .ok_or_else(|| UsageError(format!("{flag} needs a value")))
        };
        match name {
            "--new-list-items" => {
                opts.new_list_items = match value(name)? {
                    "append" => config::NewListItems::Append,
                    "prepend" => config::NewListItems::Prepend,
                    v => {
                        return Err(UsageError(format!(
                            "--new-list-items: {v:?} is not append or prepend"
                        )))
                    }
                }
            }
            "--no-infer-merge-keys" => opts.infer_merge_keys = false,
            "--conflicts" => {
                opts.conflicts = match value(name)? {
                    "warn" => config::Conflicts::Warn,
                    "error" => config::Conflicts::Error,
                    v => {
                        return Err(UsageError(format!(
                            "--conflicts: {v:?} is not warn or error"
                        )))
                    }
                }
            }
            _ if a.starts_with('-') && a.len() > 1 => {
                return Err(UsageError(format!("unknown option {a}")))
            }
            _ => files.push(a),
        }
    }
    Ok((files, opts))
}

/// Where the process writes.
pub struct Io<'o> {
    pub stdout: &'o mut dyn Write,
    pub stderr: &'o mut dyn Write,
}

impl Io<'_> {
    fn out(&mut self, s: &str) {
        // A closed stdout (`| head`) is not our failure to report.
        let _ = self.stdout.write_all(s.as_bytes());
        let _ = self.stdout.flush();
    }

    fn err(&mut self, s: &str) {
        let _ = writeln!(self.stderr, "krm-merge: {s}");
    }

    /// One stderr line per error result; the exit code the results call for.
    fn finish(&mut self, results: &[FnResult]) -> i32 {
        let mut code = 0;
        for r in results.iter().filter(|r| r.severity == Severity::Error) {
            self.err(&r.to_string());
            code = 1;
        }
        code
    }
}

/// Runs a mode; returns the exit code.
pub fn run(mode: Mode, stdin: &mut dyn Read, io: &mut Io<'_>) -> i32 {
    match mode {
        Mode::Help => {
            io.out(USAGE);
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
        Mode::Krm => match read_stdin(stdin) {
            Ok(src) => run_krm(&src, io),
            Err(e) => fail_unreadable(io, e.message, true),
        },
        Mode::Standalone { config, paths } => {
            let plan = load_config(&config, None);
            if let Err(ConfigFailure::Unreadable(e)) = &plan {
                return usage(io, e);
            }
            let src = if paths.is_empty() {
                read_stdin(stdin)
            } else {
                match read_paths(&paths) {
                    Ok(s) => s,
                    Err(e) => return usage(io, &e),
                }
            };
            run_stream(plan, src, io)
        }
        Mode::Plugin { config } => {
            let root = std::env::var_os("KUSTOMIZE_PLUGIN_CONFIG_ROOT").map(PathBuf::from);
            let plan = load_config(&config, root.as_deref());
            if let Err(ConfigFailure::Unreadable(e)) = &plan {
                return usage(io, e);
            }
            run_stream(plan, read_stdin(stdin), io)
        }
        Mode::Merge2 { src, dest, opts } => {
            let (src_text, dest_text) = match (read_file(&src), read_file(&dest)) {
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
            let texts = (read_file(&original), read_file(&updated), read_file(&dest));
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
    plan: Result<(Plan, Option<Id<'static>>), ConfigFailure>,
    src: Result<String, NotText>,
    io: &mut Io<'_>,
) -> i32 {
    let mut errors = Vec::new();
    if let Err(ConfigFailure::Invalid(e) | ConfigFailure::Unreadable(e)) = &plan {
        errors.push(FnResult::new(Severity::Error, e.clone()));
    }
    match (plan, src) {
        (Ok((plan, id)), Ok(src)) => run_with_plan(&src, &plan, id.as_ref(), io),
        (_, Ok(src)) => {
            io.out(&src);
            io.finish(&errors)
        }
        (_, Err(not_text)) => {
            let _ = write_bytes(io, &not_text.bytes);
            errors.push(FnResult::new(Severity::Error, not_text.message));
            io.finish(&errors)
        }
    }
}

fn write_bytes(io: &mut Io<'_>, bytes: &[u8]) -> std::io::Result<()> {
    io.stdout.write_all(bytes)?;
    io.stdout.flush()
}

fn usage(io: &mut Io<'_>, msg: &str) -> i32 {
    io.err(msg);
    2
}

/// The input is not text we can read at all.
fn fail_unreadable(io: &mut Io<'_>, msg: String, krm: bool) -> i32 {
    let r = FnResult::new(Severity::Error, msg);
    if krm {
        io.out(&krm::results_only(std::slice::from_ref(&r)));
    }
    io.finish(&[r])
}

/// Input that is not text: why, and its bytes (to give back as they came).
struct NotText {
    message: String,
    bytes: Vec<u8>,
}

fn read_stdin(stdin: &mut dyn Read) -> Result<String, NotText> {
    let mut buf = Vec::new();
    if let Err(e) = stdin.read_to_end(&mut buf) {
        return Err(NotText {
            message: format!("cannot read stdin: {e}"),
            bytes: buf,
        });
    }
    utf8(buf, "stdin")
}

fn utf8(buf: Vec<u8>, what: &str) -> Result<String, NotText> {
    String::from_utf8(buf).map_err(|e| {
        let at = e.utf8_error().valid_up_to();
        let bytes = e.into_bytes();
        let before = bytes.get(..at).unwrap_or_default();
        let line = before.iter().filter(|b| **b == b'\n').count() + 1;
        let col = at
            - before
                .iter()
                .rposition(|b| *b == b'\n')
                .map_or(0, |p| p + 1)
            + 1;
        NotText {
            message: format!("{what}: invalid UTF-8 at line {line}, column {col}"),
            bytes,
        }
    })
}

fn read_bytes(path: &Path) -> Result<Vec<u8>, String> {
    std::fs::read(path).map_err(|e| format!("{}: {e}", path.display()))
}

fn read_file(path: &Path) -> Result<String, String> {
    utf8(read_bytes(path)?, &path.display().to_string()).map_err(|e| e.message)
}

/// The resources of files and directories (YAML and JSON files, recursively, sorted), as one
/// stream. `Err` for a path that cannot be read (a usage error); `Ok(Err)` for files that are
/// not UTF-8, with the stream's bytes.
fn read_paths(paths: &[PathBuf]) -> Result<Result<String, NotText>, String> {
    let mut files = Vec::new();
    for p in paths {
        collect_files(p, &mut files)?;
    }
    let mut out: Vec<u8> = Vec::new();
    let mut bad: Option<String> = None;
    for f in files {
        let bytes = read_bytes(&f)?;
        let text = match utf8(bytes, &f.display().to_string()) {
            Ok(t) => t.into_bytes(),
            Err(e) => {
                bad.get_or_insert(e.message);
                e.bytes
            }
        };
        if text.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        if !out.is_empty() {
            if !out.ends_with(b"\n") {
                out.push(b'\n');
            }
            if !text.starts_with(b"---") {
                out.extend_from_slice(b"---\n");
            }
        }
        out.extend_from_slice(&text);
    }
    Ok(match bad {
        None => String::from_utf8(out).map_err(|e| NotText {
            message: "the input is not UTF-8".into(),
            bytes: e.into_bytes(),
        }),
        Some(message) => Err(NotText {
            message,
            bytes: out,
        }),
    })
}

fn collect_files(p: &Path, out: &mut Vec<PathBuf>) -> Result<(), String> {
    if p.is_dir() {
        let mut entries: Vec<PathBuf> = std::fs::read_dir(p)
            .map_err(|e| format!("{}: {e}", p.display()))?
            .filter_map(|e| e.ok().map(|e| e.path()))
            .collect();
        entries.sort();
        for e in entries {
            let hidden = e
                .file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with('.'));
            if hidden {
                continue;
            }
            if e.is_dir() {
                collect_files(&e, out)?;
            } else if e
                .extension()
                .and_then(|x| x.to_str())
                .is_some_and(|x| matches!(x, "yaml" | "yml" | "json"))
            {
                out.push(e);
            }
        }
        Ok(())
    } else if p.is_file() {
        out.push(p.to_path_buf());
        Ok(())
    } else {
        Err(format!("{}: no such file or directory", p.display()))
    }
}

/// Why a functionConfig file gave no plan.
enum ConfigFailure {
    /// It cannot be read at all (missing, a directory, no permission): a usage error.
    Unreadable(String),
    /// It was read, but is not a valid functionConfig: an error like any other.
    Invalid(String),
}

/// Reads a functionConfig file; `root` is where its `path:` files are (default: its directory).
fn load_config(
    path: &Path,
    root: Option<&Path>,
) -> Result<(Plan, Option<Id<'static>>), ConfigFailure> {
    let bytes = read_bytes(path).map_err(ConfigFailure::Unreadable)?;
    let invalid = |e: String| ConfigFailure::Invalid(format!("{}: {e}", path.display()));
    let text =
        utf8(bytes, &path.display().to_string()).map_err(|e| ConfigFailure::Invalid(e.message))?;
    let docs = crate::yaml::parse_stream(&text).map_err(|e| invalid(e.to_string()))?;
    let node = docs
        .iter()
        .find_map(|d| d.root.as_ref())
        .ok_or_else(|| invalid("no functionConfig in the file".into()))?;
    let dir = root
        .map(Path::to_path_buf)
        .or_else(|| path.parent().map(Path::to_path_buf));
    let plan = config::plan(node, dir.as_deref()).map_err(|e| invalid(e.to_string()))?;
    Ok((plan, Some(Id::of(node).into_owned())))
}

fn run_krm(src: &str, io: &mut Io<'_>) -> i32 {
    if let Some(code) = run_krm_split(src, io) {
        return code;
    }
    let input = match Input::read(src) {
        Ok(i) => i,
        Err(e @ krm::ReadError::Shape(_)) => {
            // YAML, but not a ResourceList we can patch: it goes back as it came.
            let r = FnResult::new(Severity::Error, format!("stdin: {e}"));
            return match krm::with_results(src, std::slice::from_ref(&r)) {
                Some(text) => {
                    io.out(&text);
                    io.finish(&[r])
                }
                None => fail_unreadable(io, r.message, true),
            };
        }
        Err(e) => return fail_unreadable(io, format!("stdin: {e}"), true),
    };
    if !input.is_resource_list() {
        let r = FnResult::new(
            Severity::Error,
            "stdin is not a ResourceList; to patch plain YAML give the functionConfig with --config FN.yaml",
        );
        io.out(&krm::results_only(std::slice::from_ref(&r)));
        return io.finish(&[r]);
    }
    let Some(fc) = input.function_config() else {
        // As with an empty ConfigMap (kpt's `function-input` without arguments): nothing to do.
        let r = FnResult::new(
            Severity::Info,
            "the ResourceList has no functionConfig: nothing to do",
        );
        return write_back(input, vec![r], io);
    };
    let base = resource_dir(fc);
    let config_id = Id::of(fc).into_owned();
    match config::plan(fc, base.as_deref()) {
        Ok(plan) => run_with_input(src, input, &plan, Some(&config_id), io),
        Err(e) => {
            let r = FnResult::new(
                Severity::Error,
                format!("invalid functionConfig: {}", e.message),
            )
            .at_field(e.field.clone());
            write_back(input, vec![r], io)
        }
    }
}

/// The ResourceList read item by item: the functionConfig is found first (by reading lines,
/// then checked against the parse), each item goes through the patches as soon as it is parsed,
/// and the output is the input's text with the touched items rewritten and the results added.
/// One item's tree is in memory at a time. `None` when the input is not a block-style
/// ResourceList this can handle (JSON, existing results, several documents): the caller reads
/// it whole.
fn run_krm_split(src: &str, io: &mut Io<'_>) -> Option<i32> {
    use crate::yaml::{emit_seq_item, parse_split, parse_stream, EmitOptions};
    let fc_text = krm::probe_function_config(src)?;
    let fc_docs = parse_stream(fc_text).ok()?;
    let fc = fc_docs.first()?.root.as_ref()?.get("functionConfig")?;
    if fc.is_null() {
        return None;
    }
    let base = resource_dir(fc);
    let config_id = Id::of(fc).into_owned();
    // A functionConfig that does not validate is reported by the whole-input path, with the
    // items to write back.
    let plan = config::plan(fc, base.as_deref()).ok()?;
    let mut engine = Engine::new(&plan, Some(&config_id));
    if src.contains("CustomResourceDefinition") {
        // Every CRD must be known before any resource is merged: a first pass collects them.
        let _ = parse_split(src, "items", &mut |node, _| {
            if engine::is_crd(&node) {
                engine.add_crd(&node);
            }
        });
    }
    let mut out = String::with_capacity(src.len() + src.len() / 8 + 64);
    let mut layout: Option<(usize, EmitOptions)> = None;
    let mut n = 0;
    let mut not_a_resource = false;
    let split = parse_split(src, "items", &mut |node, info| {
        if !node.is_map() {
            // Reported by the whole-input path, which names the item.
            not_a_resource = true;
            return;
        }
        let opts = EmitOptions {
            seq_indent: info.seq_indent,
        };
        layout = Some((info.dash_col, opts));
        let item = krm::Item {
            node,
            origin: krm::Origin::Input(n),
            touched: false,
            first_id: None,
        };
        n += 1;
        match engine.process(item) {
            None => {}
            Some(it) if !it.touched => out.push_str(info.text),
            Some(it) => emit_seq_item(&it.node, info.dash_col, opts, &mut out),
        }
    })
    .ok()?;
    if not_a_resource {
        return None;
    }
    let [doc] = &split.docs[..] else { return None };
    let root = doc.root.as_ref()?;
    let is_plain_rl = root.is_map()
        && !root.is_flow()
        && root.str_at(&["kind"]) == Some("ResourceList")
        && root.get("results").is_none()
        && !doc.end
        && root.get("functionConfig").is_some_and(|f| f.same_data(fc));
    let range = split.items.filter(|_| is_plain_rl)?;
    let (dash_col, opts) = layout?;
    let finish = engine.finish();
    for item in &finish.new_items {
        emit_seq_item(&item.node, dash_col, opts, &mut out);
    }
    let mut whole = String::with_capacity(src.len() + out.len() / 8 + 256);
    if finish.failed {
        // All or nothing: the items as they came in.
        whole.push_str(src);
    } else {
        whole.push_str(&src[..range.start]);
        whole.push_str(&out);
        whole.push_str(&src[range.end..]);
    }
    if !finish.results.is_empty() {
        if !whole.ends_with('\n') {
            whole.push('\n');
        }
        whole.push_str(&krm::results_block(&finish.results));
    }
    io.out(&whole);
    Some(io.finish(&finish.results))
}

/// The directory of the functionConfig's file when kpt says where it is.
fn resource_dir(fc: &crate::yaml::Node<'_>) -> Option<PathBuf> {
    let (path, _) = crate::select::bookkeeping::file_of(fc)?;
    let dir = Path::new(path).parent()?;
    Some(if dir.as_os_str().is_empty() {
        PathBuf::from(".")
    } else {
        dir.to_path_buf()
    })
}

fn run_with_plan(src: &str, plan: &Plan, config: Option<&Id<'static>>, io: &mut Io<'_>) -> i32 {
    // The patches are known before the resources are read, so they are applied to each resource
    // as it is parsed: one tree in memory at a time, untouched documents copied as text.
    let mut engine = Engine::new(plan, config);
    if src.contains("CustomResourceDefinition") {
        // Every CRD must be known before any resource is merged: a first pass collects them.
        // (Parse errors are reported by the pass that follows.)
        let _ = crate::yaml::parse_each(src, |d| {
            if let Some(r) = d.root.as_ref().filter(|r| engine::is_crd(r)) {
                engine.add_crd(r);
            }
        });
    }
    let (out, streamed) = match stream_in_two(src, &mut engine) {
        Some(out) => (out, Ok(Streamed::Done)),
        None => {
            let mut out = StreamOut::for_input(src);
            let streamed = krm::stream_items(src, &mut |item| engine.process(item), &mut out);
            (out, streamed)
        }
    };
    let mut out = out;
    match streamed {
        Err(e) => {
            // The items go back as they came: here, the text itself.
            io.out(src);
            io.finish(&[FnResult::new(Severity::Error, format!("input: {e}"))])
        }
        Ok(Streamed::Wrapped) => match Input::read(src) {
            Ok(input) => run_with_input(src, input, plan, config, io),
            Err(e) => {
                io.out(src);
                io.finish(&[FnResult::new(Severity::Error, format!("input: {e}"))])
            }
        },
        Ok(Streamed::Done) => {
            let finish = engine.finish();
            for item in finish.new_items {
                out.document(crate::yaml::Document::new(item.node));
            }
            // All or nothing: on failure the stream goes back as it came.
            io.out(if finish.failed { src } else { &out.text });
            io.finish(&finish.results)
        }
    }
}

/// A large stream on a machine with a second core: cut at a `---` line near the middle, each
/// half read and patched on its own thread (resources are independent; the counts are added up
/// after). `None` when that does not apply or a half is not plain resources (a parse error, a
/// wrapper): the caller reads the whole stream on one thread, which also reports errors with
/// their true lines.
fn stream_in_two(src: &str, engine: &mut Engine<'_>) -> Option<StreamOut> {
    const WORTH_IT: usize = 1 << 20;
    let cores = std::thread::available_parallelism().map_or(1, usize::from);
    if src.len() < WORTH_IT || cores < 2 {
        return None;
    }
    let cut = halfway(src)?;
    let (first, second) = src.split_at(cut);
    let mut other = engine.fork();
    let (a, b) = std::thread::scope(|s| {
        let b = s.spawn(|| {
            let mut out = StreamOut::for_input(second);
            let r = krm::stream_items(second, &mut |item| other.process(item), &mut out);
            (r, out)
        });
        let mut out = StreamOut::for_input(first);
        let r = krm::stream_items(first, &mut |item| engine.process(item), &mut out);
        ((r, out), b.join())
    });
    let (Ok(Streamed::Done), mut out) = a else {
        return None;
    };
    let Ok((Ok(Streamed::Done), rest)) = b else {
        return None;
    };
    engine.absorb(other);
    out.source(&rest.text);
    Some(out)
}

/// The start of a `---` line at or after the middle of `src`. A line that starts with `---`
/// and then a space or the line's end is always a document marker: YAML forbids one inside any
/// content, so cutting there splits the stream between two documents.
fn halfway(src: &str) -> Option<usize> {
    let mid = src.len() / 2;
    let bytes = src.as_bytes();
    let mut from = mid;
    while let Some(i) = src.get(from..)?.find("\n---") {
        let at = from + i + 1;
        if matches!(bytes.get(at + 3), None | Some(b'\n' | b'\r' | b' ' | b'\t')) {
            return Some(at);
        }
        from = at + 3;
    }
    None
}

fn run_with_input(
    src: &str,
    input: Input<'_>,
    plan: &Plan,
    config: Option<&Id<'static>>,
    io: &mut Io<'_>,
) -> i32 {
    let Input { form, items } = input;
    let run = engine::run(plan, items, config);
    if run.failed {
        // All or nothing: the items as they came in. A stream is its own text.
        if matches!(form, krm::Form::Stream { .. }) {
            io.out(src);
            return io.finish(&run.results);
        }
        return match Input::read(src) {
            Ok(fresh) => write_back(fresh, run.results, io),
            Err(_) => {
                io.out(src);
                io.finish(&run.results)
            }
        };
    }
    // A closed stdout (`| head`) is not a failure of ours to report.
    let _ = krm::write(form, run.items, &run.results, io.stdout).and_then(|()| io.stdout.flush());
    io.finish(&run.results)
}

/// Writes the input's items unchanged with `results`.
fn write_back(input: Input<'_>, results: Vec<FnResult>, io: &mut Io<'_>) -> i32 {
    let Input { form, items } = input;
    let _ = krm::write(form, items, &results, io.stdout).and_then(|()| io.stdout.flush());
    io.finish(&results)
}

/// `merge2 SRC DEST` / `merge3 ORIGINAL UPDATED DEST`: DEST's documents, merged, on stdout.
fn merge_files(
    kind: PatchKind,
    patch: &str,
    original: Option<&str>,
    dest: &str,
    opts: PatchOptions,
    io: &mut Io<'_>,
) -> i32 {
    let docs = |text: &str, what: &str| -> Result<Vec<crate::yaml::Node<'static>>, String> {
        let parsed = crate::yaml::parse_stream(text).map_err(|e| format!("{what}: {e}"))?;
        Ok(parsed
            .into_iter()
            .filter_map(|d| d.root)
            .map(crate::yaml::Node::into_owned)
            .collect())
    };
    let patch_docs = match docs(
        patch,
        if kind == PatchKind::Merge2 {
            "SRC"
        } else {
            "UPDATED"
        },
    ) {
        Ok(d) => d,
        Err(e) => return usage(io, &e),
    };
    let original_docs = match original.map(|o| docs(o, "ORIGINAL")).transpose() {
        Ok(d) => d.unwrap_or_default(),
        Err(e) => return usage(io, &e),
    };
    let input = match Input::read(dest) {
        Ok(i) => i,
        Err(e) => return usage(io, &format!("DEST: {e}")),
    };
    // Two single documents merge directly, whatever their names (like `kustomize cfg merge`
    // on one file each); otherwise documents pair by identity.
    let single = patch_docs.len() == 1 && input.items.len() == 1 && original_docs.len() <= 1;
    let target = if single {
        Some(crate::select::target::Target::default())
    } else {
        None
    };
    let step = PatchStep {
        index: 0,
        kind,
        patch: patch_docs,
        original: original_docs,
        target,
        options: opts,
        source: "command line".into(),
    };
    let plan = Plan {
        steps: vec![step],
        schema: crate::schema::Schema::builtin(),
        form: config::ConfigForm::Merge,
    };
    run_with_input(dest, input, &plan, None, io)
}
