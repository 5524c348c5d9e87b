//! `krm-merge diff OLD NEW`: the patch that turns one version into another, for two resources
//! (a patch on stdout), for three (`--original`: the patch `kubectl apply` sends), or for two
//! packages (a `Merge` functionConfig or a kustomization's `patches:`). The patches are the
//! library's ([`krm_merge::diff`]); this reads the inputs, builds the schema, decides which
//! case it is, and says what happened.
//!
//! * **Reading.** Each side is a file, `-` (stdin) or a directory, read as the standalone
//!   filter reads it ([`files::read_inputs`], directories by [`super::walk`] as kpt reads a
//!   package); all sides share one input budget. A file (or stdin) may be a stream, a `List`
//!   or a ResourceList.
//! * **Which case.** Packages when either side is a directory, or holds more than one
//!   resource, or `--package`, `--format` or `--added` is given. Otherwise each side holds one
//!   resource — one document, or one besides CustomResourceDefinitions, which then only teach
//!   merge keys — and the patch is between those.
//! * **The schema.** The built-in one; the CRDs among OLD's documents, then NEW's (a kind keeps
//!   the first schema, as the function run on OLD sees OLD's), except for the kustomization
//!   format, since kustomize does not read CRDs; `--schema FILE`, which a `Merge` config
//!   then carries inline.
//! * **Packages** leave out the `Kptfile` and `local-config` resources of both sides (the
//!   function passes them along untouched; the config written is one): said with `-v`.
//! * **Output.** Nothing when nothing changed. On an error nothing is written, neither stdout
//!   nor `--added`.
//!
//! What it must not do: make patches (the library does), or apply them.

use std::path::Path;

use krm_merge::config::Conflicts;
use krm_merge::diff::package::{self, Format, PackageOptions, PackageWarningKind, PatchType};
use krm_merge::diff::three_way::{self, Conflict};
use krm_merge::diff::{json6902, jsonmerge, two_way, DiffError, Options, Warning};
use krm_merge::krm::exit_code;
use krm_merge::krm::{self, FnResult, Input, Severity};
use krm_merge::schema::Schema;
use krm_merge::select::bookkeeping::is_bookkeeping_item;
use krm_merge::select::identity::Id;
use krm_merge::yaml::{self, Document, Node};

use super::args::{DiffRequest, Source};
use super::files::{self, Budget, ReadFailure};
use super::{conclude, guard, read_failed, usage, writeback, Io, Stdin, WAITING};

/// The most a `--schema` file may hold, as a `spec.schema.openAPI.path` file.
const MAX_SCHEMA: u64 = files::MAX_CONFIG;

/// One side of the diff, read: its documents, and what reading it had to say.
struct Side {
    /// How messages name it: `OLD (path)`.
    label: String,
    /// A directory was given.
    dir: bool,
    docs: Vec<Node<'static>>,
}

/// Runs `diff`; returns the exit code.
pub fn run(req: &DiffRequest, stdin: Stdin<'_>, io: &mut Io<'_>) -> i32 {
    let uses_stdin = [Some(&req.old), Some(&req.new), req.original.as_ref()]
        .into_iter()
        .any(|s| s == Some(&Source::Stdin));
    if uses_stdin && stdin.terminal {
        return usage(io, WAITING);
    }
    if let Err(e) = refuse_overwrites(req, io) {
        return usage(io, &e);
    }
    let mut reading: Vec<FnResult> = Vec::new();
    let mut budget = Budget::new(files::MAX_INPUT);
    let mut read = |which: &str, source: &Source, reading: &mut Vec<FnResult>| {
        read_side(which, source, &mut *stdin.read, &mut budget, reading)
    };
    let original = match req.original.as_ref() {
        Some(s) => match read("LAST_APPLIED", s, &mut reading) {
            Ok(side) => Some(side),
            Err(e) => return read_failed(io, &req.report, e),
        },
        None => None,
    };
    let (old_name, new_name) = if original.is_some() {
        ("CURRENT", "MODIFIED")
    } else {
        ("OLD", "NEW")
    };
    let old = match read(old_name, &req.old, &mut reading) {
        Ok(s) => s,
        Err(e) => return read_failed(io, &req.report, e),
    };
    let new = match read(new_name, &req.new, &mut reading) {
        Ok(s) => s,
        Err(e) => return read_failed(io, &req.report, e),
    };
    let kustomization = req.format == Some(Format::Kustomization);
    let mut schema = Schema::builtin();
    if !kustomization {
        let sides = original.iter().chain([&old, &new]);
        for crd in sides.flat_map(|s| s.docs.iter()).filter(|d| is_crd(d)) {
            let loaded = yaml::to_json(crd)
                .map_err(|e| e.to_string())
                .and_then(|v| schema.add_crd(&v).map_err(|e| e.to_string()));
            if let Err(e) = loaded {
                reading.push(
                    FnResult::new(
                        Severity::Warning,
                        format!("CRD not used for merge keys: {e}"),
                    )
                    .about(crd),
                );
            }
        }
    }
    let spec_schema = match &req.schema {
        Some(path) => match load_schema(path, &mut schema) {
            Ok(doc) => Some(doc),
            Err(Failure::Usage(m)) => return usage(io, &m),
            Err(Failure::Error(m)) => return failed(io, req, &reading, m),
        },
        None => None,
    };
    if let Some(original) = original {
        let sides = [&original, &old, &new];
        let [Some(o), Some(c), Some(m)] = sides.map(single) else {
            let which = sides
                .into_iter()
                .find(|s| single(s).is_none())
                .map(|s| s.label.clone())
                .unwrap_or_default();
            let msg = format!(
                "diff --original: {which} is not one resource (a three-way patch is made between three versions of one resource)"
            );
            return failed(io, req, &reading, msg);
        };
        reading.extend(crds_differ(&old, &new));
        return three(req, [o, c, m], &schema, reading, io);
    }
    let forced = req.package || req.format.is_some() || req.added.is_some();
    match (forced, single(&old), single(&new)) {
        (false, Some(o), Some(n)) => {
            reading.extend(crds_differ(&old, &new));
            two(req, o, n, &schema, reading, io)
        }
        _ => packages_diff(req, &old, &new, &schema, spec_schema, reading, io),
    }
}

/// `--added`, `--results` and stdout checked against every file the sides (and `--schema`)
/// are read from, listed before anything is read.
fn refuse_overwrites(req: &DiffRequest, io: &Io<'_>) -> Result<(), String> {
    let mut reads = guard::Reads::default();
    for side in [Some(&req.old), Some(&req.new), req.original.as_ref()]
        .into_iter()
        .flatten()
    {
        if let Ok(listed) = files::list_inputs(std::slice::from_ref(side), None, false) {
            reads.extend(&listed.reads);
        }
    }
    if let Some(schema) = &req.schema {
        reads.add(schema);
    }
    if let Some(added) = &req.added {
        reads.refuse("--added", added)?;
    }
    if let Some(results) = &req.report.results {
        reads.refuse("--results", results)?;
    }
    reads.refuse_stdout(&io.stdout_is)
}

/// Reads one side.
fn read_side(
    which: &str,
    source: &Source,
    stdin: &mut dyn std::io::Read,
    budget: &mut Budget,
    reading: &mut Vec<FnResult>,
) -> Result<Side, ReadFailure> {
    let (label, dir) = match source {
        Source::Stdin => (format!("{which} (stdin)"), false),
        Source::Path(p) => (
            format!("{which} ({})", p.display()),
            std::fs::metadata(p).is_ok_and(|m| m.is_dir()),
        ),
    };
    let inputs = files::read_inputs_within(std::slice::from_ref(source), stdin, None, budget)?;
    reading.extend(inputs.reading_results());
    let mut docs = Vec::new();
    for file in &inputs.sources {
        if file.strict {
            // A package's file: every document a KRM resource, or the file is left out (as
            // the function reads a package).
            let parsed = yaml::parse_stream(&file.text)
                .map_err(|e| ReadFailure::Error(format!("{}: malformed YAML: {e}", file.name)))?;
            let roots: Vec<Node<'static>> = parsed
                .into_iter()
                .filter_map(krm::content)
                .map(Node::into_owned)
                .collect();
            match roots.iter().position(|r| !is_resource(r)) {
                Some(n) => reading.push(FnResult::new(
                    Severity::Warning,
                    format!(
                        "{}: not a KRM resource file (document {} is not a mapping with apiVersion and kind); left out",
                        file.name,
                        n + 1
                    ),
                )),
                None => {
                    for root in roots {
                        // A list kind's items are the resources, as the function reads them.
                        let found = krm::into_resources(root)
                            .map_err(|e| ReadFailure::Error(format!("{}: {e}", file.name)))?;
                        docs.extend(found);
                    }
                }
            }
            continue;
        }
        let input = Input::read(&file.text)
            .map_err(|e| ReadFailure::Error(format!("{}: {e}", file.name)))?;
        for (n, item) in input.items.into_iter().enumerate() {
            if !item.node.is_map() {
                return Err(ReadFailure::Error(format!(
                    "{}: document {} is not a resource (a mapping)",
                    file.name,
                    n + 1
                )));
            }
            let found = krm::into_resources(item.node)
                .map_err(|e| ReadFailure::Error(format!("{}: {e}", file.name)))?;
            docs.extend(found.into_iter().map(Node::into_owned));
        }
    }
    Ok(Side { label, dir, docs })
}

fn is_resource(n: &Node<'_>) -> bool {
    let has = |k: &str| n.str_at(&[k]).is_some_and(|s| !s.is_empty());
    n.is_map() && has("apiVersion") && has("kind")
}

fn is_crd(n: &Node<'_>) -> bool {
    let id = Id::of(n);
    id.kind == "CustomResourceDefinition" && id.api_version.starts_with("apiextensions.k8s.io/")
}

/// The one resource of a side that is not a directory: its only document, or its only
/// document besides CRDs.
fn single(side: &Side) -> Option<&Node<'static>> {
    if side.dir {
        return None;
    }
    if let [only] = side.docs.as_slice() {
        return Some(only);
    }
    let mut others = side.docs.iter().filter(|d| !is_crd(d));
    match (others.next(), others.next()) {
        (Some(one), None) => Some(one),
        _ => None,
    }
}

/// Why an input other than the sides could not be used.
enum Failure {
    /// A path that leads nowhere: exit 2.
    Usage(String),
    /// Read, but not usable: exit 1.
    Error(String),
}

/// Reads `--schema FILE` into the schema; the document, for a `Merge` config to carry.
fn load_schema(path: &Path, schema: &mut Schema) -> Result<Node<'static>, Failure> {
    let shown = path.display();
    let text = match files::read_file("--schema", path, &mut Budget::new(MAX_SCHEMA)) {
        Ok(t) => t,
        Err(ReadFailure::Usage(m)) => return Err(Failure::Usage(m)),
        Err(e) => return Err(Failure::Error(format!("--schema {}", e.message()))),
    };
    let text = text.strip_prefix('\u{feff}').unwrap_or(&text);
    let parsed: Result<serde_json::Value, String> = match serde_json::from_str(text) {
        Ok(v) => Ok(v),
        Err(_) => match yaml::parse_stream(text) {
            Ok(docs) => {
                let roots: Vec<_> = docs.into_iter().filter_map(|d| d.root).collect();
                match roots.as_slice() {
                    [one] => yaml::to_json(one).map_err(|e| e.to_string()),
                    [] => Err("empty: no document".to_owned()),
                    more => Err(format!("expected one document, found {}", more.len())),
                }
            }
            Err(e) => Err(e.to_string()),
        },
    };
    let doc = parsed.map_err(|e| Failure::Error(format!("--schema {shown}: {e}")))?;
    if !doc.is_object() {
        return Err(Failure::Error(format!(
            "--schema {shown}: expected an OpenAPI v2 document (an object with definitions)"
        )));
    }
    schema
        .add_openapi_v2(&doc)
        .map_err(|e| Failure::Error(format!("--schema {shown}: {e}")))?;
    Ok(yaml::from_json(&doc).into_owned())
}

/// An error before any patch: reported (with what reading said), exit 1.
fn failed(io: &mut Io<'_>, req: &DiffRequest, reading: &[FnResult], msg: String) -> i32 {
    let results = [FnResult::new(Severity::Error, msg)];
    conclude(io, &req.report, reading, &results).unwrap_or(1)
}

/// The result for a patch that cannot be made.
fn diff_error(resource: &Node<'_>, e: &DiffError) -> FnResult {
    let r = FnResult::new(Severity::Error, e.kind.to_string()).about(resource);
    if e.path.0.is_empty() {
        r
    } else {
        r.at_field(e.path.clone())
    }
}

/// The result for what a patch cannot say.
fn warning(resource: Id<'static>, w: &Warning) -> FnResult {
    let mut r = FnResult::new(Severity::Warning, w.kind.to_string()).at_field(w.path.clone());
    r.resource = Some(resource);
    r
}

/// The diff options `diff` makes patches with.
fn options(req: &DiffRequest) -> Options {
    Options {
        infer_keys: req.infer_keys,
        identity: true,
        kustomize: false,
    }
}

/// The schema's position of a resource's kind.
fn root_of(schema: &Schema, node: &Node<'_>) -> krm_merge::schema::Cursor {
    let id = Id::of(node);
    let (g, v) = id.group_version();
    schema.root(g, v, &id.kind)
}

/// A warning when the CRDs beside the two resources differ: the patch says nothing of them.
fn crds_differ(old: &Side, new: &Side) -> Option<FnResult> {
    let crds = |s: &Side| -> Vec<serde_json::Value> {
        let mut v: Vec<serde_json::Value> = s
            .docs
            .iter()
            .filter(|d| is_crd(d) && s.docs.len() > 1)
            .filter_map(|d| yaml::to_json(d).ok())
            .collect();
        v.sort_by_key(|x| x.to_string());
        v
    };
    (crds(old) != crds(new)).then(|| {
        FnResult::new(
            Severity::Warning,
            format!(
                "the CustomResourceDefinitions beside the resources of {} and {} differ; the patch is the resource's only (--package diffs them too)",
                old.label, new.label
            ),
        )
    })
}

/// Two resources.
fn two(
    req: &DiffRequest,
    old: &Node<'static>,
    new: &Node<'static>,
    schema: &Schema,
    reading: Vec<FnResult>,
    io: &mut Io<'_>,
) -> i32 {
    let opts = options(req);
    let root = root_of(schema, old);
    let made = match req.patch_type {
        PatchType::Merge2 => two_way::diff(old, new, schema, root, &opts),
        PatchType::Json6902 => json6902::diff(old, new, schema, root, &opts),
        PatchType::JsonMerge => jsonmerge::diff(old, new, &opts),
    };
    let d = match made {
        Ok(d) => d,
        Err(e) => return conclude(io, &req.report, &reading, &[diff_error(old, &e)]).unwrap_or(1),
    };
    let id = Id::of(old).into_owned();
    let mut results: Vec<FnResult> = d.warnings.iter().map(|w| warning(id.clone(), w)).collect();
    results.extend(summary(
        &results,
        &id,
        d.changed,
        &format!("a {} patch", req.patch_type.as_str()),
    ));
    if let Some(code) = conclude(io, &req.report, &reading, &results) {
        return code;
    }
    if !d.changed {
        return 0;
    }
    io.out_code(patch_text(&d.patch).as_bytes(), 0)
}

/// The info result that says what is written, unless an error in `results` says nothing is.
fn summary(results: &[FnResult], id: &Id<'_>, changed: bool, what: &str) -> Option<FnResult> {
    if results.iter().any(|r| r.severity == Severity::Error) {
        return None;
    }
    let mut r = FnResult::new(
        Severity::Info,
        if changed {
            format!("{what} on stdout")
        } else {
            "the two versions hold the same data: no patch".to_owned()
        },
    );
    r.resource = Some(id.clone().into_owned());
    Some(r)
}

/// A patch as the one YAML document written, as the library checked it.
fn patch_text(patch: &Node<'_>) -> String {
    krm_merge::diff::patch_text(patch)
}

/// The result for a three-way conflict.
fn conflict(resource: &Id<'static>, c: &Conflict, severity: Severity) -> FnResult {
    let mut r = FnResult::new(severity, c.message()).at_field(c.path.clone());
    r.resource = Some(resource.clone());
    r.current = c.current.clone();
    r.proposed = c.patch.clone();
    r
}

/// Three versions: the patch `kubectl apply` sends.
fn three(
    req: &DiffRequest,
    [o, c, m]: [&Node<'static>; 3],
    schema: &Schema,
    reading: Vec<FnResult>,
    io: &mut Io<'_>,
) -> i32 {
    let root = root_of(schema, c);
    let d = match three_way::diff(Some(o), c, m, schema, root, &options(req)) {
        Ok(d) => d,
        Err(e) => return conclude(io, &req.report, &reading, &[diff_error(c, &e)]).unwrap_or(1),
    };
    let id = Id::of(c).into_owned();
    // `diff --conflicts` takes `warn` and `error` only: kubectl's patch overwrites the live value.
    let severity = if req.conflicts == Conflicts::Error {
        Severity::Error
    } else {
        Severity::Warning
    };
    let mut results: Vec<FnResult> = d.warnings.iter().map(|w| warning(id.clone(), w)).collect();
    results.extend(d.conflicts.iter().map(|c| conflict(&id, c, severity)));
    results.extend(summary(&results, &id, d.changed, "a three-way patch"));
    if let Some(code) = conclude(io, &req.report, &reading, &results) {
        return code;
    }
    if !d.changed {
        return 0;
    }
    io.out_code(patch_text(&d.patch).as_bytes(), 0)
}

/// Two packages: a `Merge` config or a kustomization's `patches:`.
fn packages_diff(
    req: &DiffRequest,
    old: &Side,
    new: &Side,
    schema: &Schema,
    spec_schema: Option<Node<'static>>,
    mut reading: Vec<FnResult>,
    io: &mut Io<'_>,
) -> i32 {
    let mut kept = |side: &Side| -> Vec<Node<'static>> {
        side.docs
            .iter()
            .filter(|d| {
                let skip = is_bookkeeping_item(d);
                if skip {
                    reading.push(
                        FnResult::new(
                            Severity::Info,
                            format!(
                                "{}: a Kptfile or local-config resource; not compared",
                                side.label
                            ),
                        )
                        .about(d),
                    );
                }
                !skip
            })
            .cloned()
            .collect()
    };
    let (base, variant) = (kept(old), kept(new));
    let opts = PackageOptions {
        patch_type: req.patch_type,
        format: req.format.unwrap_or_default(),
        diff: options(req),
        spec_schema: spec_schema.map(|doc| {
            let mut open_api = Node::map();
            open_api.set("inline", doc);
            let mut s = Node::map();
            s.set("openAPI", open_api);
            s
        }),
    };
    let d = match package::diff(&base, &variant, schema, &opts) {
        Ok(d) => d,
        Err(e) => {
            let r = match &e {
                package::PackageError::Diff { id, source } => {
                    let mut r = FnResult::new(Severity::Error, source.kind.to_string());
                    r.resource = Some(id.as_ref().clone());
                    if source.path.0.is_empty() {
                        r
                    } else {
                        r.at_field(source.path.clone())
                    }
                }
                other => FnResult::new(Severity::Error, other.to_string()),
            };
            return conclude(io, &req.report, &reading, &[r]).unwrap_or(1);
        }
    };
    let mut results: Vec<FnResult> = d
        .warnings
        .iter()
        .map(|w| match &w.kind {
            PackageWarningKind::Patch(pw) => warning(w.resource.clone(), pw),
            PackageWarningKind::Added => {
                let mut r = FnResult::new(
                    Severity::Warning,
                    match &req.added {
                        Some(f) => format!(
                            "only in {}: a patch cannot create a resource; written to {}",
                            new.label,
                            f.display()
                        ),
                        None => format!(
                            "only in {}: a patch cannot create a resource (--added FILE writes it)",
                            new.label
                        ),
                    },
                );
                r.resource = Some(w.resource.clone());
                r
            }
        })
        .collect();
    results.push(FnResult::new(
        Severity::Info,
        format!(
            "{} resource(s) patched, {} deleted, {} only in {}",
            d.changed,
            d.deleted,
            d.added.len(),
            new.label
        ),
    ));
    // `--added` before `--results`, so that the results hold its failure: results are written
    // last, as for every other file the command line writes.
    if let Some(file) = req.added.as_ref().filter(|_| exit_code(&results) == 0) {
        let docs: Vec<Document<'_>> = d.added.iter().cloned().map(Document::new).collect();
        let mut text = String::new();
        yaml::emit_stream(&docs, &mut text);
        if let Err(e) = writeback::write_file(file, text.as_bytes()) {
            results.push(FnResult::new(Severity::Error, format!("--added {e}")));
        }
    }
    if let Some(code) = conclude(io, &req.report, &reading, &results) {
        return code;
    }
    if d.changed + d.deleted == 0 {
        return 0;
    }
    io.out_code(patch_text(&d.config).as_bytes(), 0)
}
