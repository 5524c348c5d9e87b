//! A package: a set of files, each read on its own, one run of a plan over all their resources,
//! and the output file by file.
//!
//! * **Each file on its own.** A file is parsed alone, so a second file that starts with a byte
//!   order mark or a `%YAML` directive reads as it would alone, and an error names the file and
//!   the line and column in it.
//! * **One run.** The CRDs of every file are known before any resource is merged; then each
//!   file's resources go through one `Engine` (so a target that selects nothing anywhere is one
//!   warning, and a merge3 update sees the whole package), one resource's tree in memory at a
//!   time; a file of more than 1 MB is patched in pieces on every core (`run/pieces.rs`), with
//!   the same output and results as on one.
//! * **The output per file.** A file no patch changed is its own text, byte for byte
//!   ([`FileOutput::Unchanged`]); a changed file is its text with the touched documents
//!   rewritten and the deleted ones gone; a file whose every resource was deleted is
//!   [`FileOutput::Emptied`]; a resource a merge3 update adds is a new file named after it
//!   ([`NewFile`]). [`PackageOutput::stream`] joins them into the one YAML stream the standalone
//!   filter writes.
//! * **Strict files** (read from a directory, as kpt reads a package): a file any of whose
//!   documents is not a KRM resource (a mapping with `apiVersion` and `kind`) is left out
//!   with a warning naming it ([`FileOutput::NotResources`]). Empty documents (a trailing
//!   `---`, Helm's `# Source:` documents) hold nothing: they are skipped, and written back
//!   where they were. A file named by the user is read as given: a `ResourceList` is unwrapped,
//!   and written back in its form, without results, as it came when no item changed.
//! * **List kinds** (`List`, `RoleList`, ...) are documents whose items are the resources,
//!   wherever they are: patched one by one, the file keeps its list (see
//!   `krm::is_list_kind`); results about an item name the list's file and document.
//! * **All or nothing.** When any patch fails, or any file cannot be read, every output is
//!   [`FileOutput::Unchanged`] and there is no new file; the results say why.
//!
//! What it must not do: touch the file system (the caller reads and writes), decide which
//! files make a package, or decide exit codes.

use std::borrow::Cow;
use std::collections::HashMap;

use crate::config::Plan;
use crate::krm::{self, FnResult, Input, Item, Severity, StreamOut};
use crate::run::engine::{Engine, Setup};
use crate::run::items::{self, Around, Items};
use crate::run::pieces::Pieces;
use crate::run::read::{identity_key, Documents, Parses, Reader, Reading, Stop};
use crate::select::identity::Id;
use crate::yaml::{self, Document, Node};

/// The name of the source read from standard input.
pub(crate) const STDIN: &str = "stdin";

/// A file of the package, read.
#[derive(Clone, Debug)]
pub struct SourceFile {
    /// How results and messages name it: its path as the user gave it or as the walk found it,
    /// or `STDIN`.
    pub name: String,
    /// Its text.
    pub text: String,
    /// Read as kpt reads a package's file: every document must be a KRM resource, or the file
    /// is left out with a warning.
    pub strict: bool,
}

/// What became of one file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum FileOutput {
    /// No patch changed it (or the run failed): its text as it came.
    Unchanged,
    /// Its new text.
    Changed(String),
    /// Every resource in it was deleted: the file goes. What the deletions left (the comments
    /// outside the deleted documents: a header above the first `---`), for a caller that puts
    /// resources back in the file (a merge3 update's additions to it).
    Emptied(String),
    /// A strict file that is not all KRM resources: left out, with a warning.
    NotResources,
}

/// A resource a patch added (a merge3 update), as a file of its own.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NewFile {
    /// `<kind>_<name>.yaml` (kind in lower case, as kpt names files), with `-2`, `-3`... when
    /// that name is taken by another new file; characters other than letters, digits, `.`, `-`
    /// and `_` become `_`.
    pub name: String,
    /// The resource, as one YAML document.
    pub text: String,
    /// The step (its index in the plan) and the document of its `patch` it came from: where
    /// the caller knows the document's file, it may put the resource there instead.
    pub from: Option<(usize, usize)>,
}

/// A resource of a package read as documents, not run through a plan: one side of an update
/// (`krm-merge merge3 ORIGINAL UPDATED LOCAL`). Its aliases are expanded and its anchors
/// dropped, as a patch's are.
#[derive(Clone, Debug)]
pub struct Resource {
    /// The resource, its aliases expanded.
    pub node: Node<'static>,
    /// The file it is in (an index into the files read).
    pub file: usize,
    /// Its document in the file, from 1 (documents holding nothing are not counted).
    pub document: usize,
}

/// The resources of a package's files, and what reading them said.
#[derive(Clone, Debug, Default)]
pub struct Resources {
    /// The resources, file by file and document by document.
    pub resources: Vec<Resource>,
    /// A warning for each strict file left out (not all KRM resources), an error for each
    /// file that cannot be read (naming it, and the line and column).
    pub results: Vec<FnResult>,
}

/// Reads the resources of `files` as [`run_with`] reads them: a strict file must be all KRM
/// resources (else it is left out, with a warning); a file named by the user is a stream or a
/// `ResourceList` (unwrapped) of mappings; a list kind's items are resources, wherever it is;
/// empty documents hold nothing.
pub fn resources(files: &[SourceFile]) -> Resources {
    let parses = Parses::default();
    let reader = Reader {
        pieces: Pieces::Whole,
        parses: &parses,
    };
    let mut out = Resources::default();
    for (f, file) in files.iter().enumerate() {
        let roots: Result<Vec<Node<'_>>, String> = if file.strict {
            match strict_documents(file, reader, &mut out.results) {
                Some(docs) => Ok(docs.into_iter().filter_map(|d| d.root).collect()),
                None => continue,
            }
        } else {
            Input::read(&file.text)
                .map(|input| input.items.into_iter().map(|i| i.node).collect())
                .map_err(|e| e.to_string())
        };
        let roots = match roots {
            Ok(r) => r,
            Err(e) => {
                out.results.push(FnResult::new(
                    Severity::Error,
                    format!("{}: {e}", file.name),
                ));
                continue;
            }
        };
        for (n, root) in roots.into_iter().enumerate() {
            let detached = match yaml::anchors::detached(&root) {
                Ok(Cow::Borrowed(_)) => None,
                Ok(Cow::Owned(d)) => Some(d),
                Err(e) => {
                    out.results.push(FnResult::new(
                        Severity::Error,
                        format!("{}: document {}: {e}", file.name, n + 1),
                    ));
                    continue;
                }
            };
            let root = detached.unwrap_or(root);
            // A document that is one resource (most are) is moved, not copied: the cost of
            // an update's two sides is one parse each.
            if !krm::is_list_kind(&root) {
                out.resources.push(Resource {
                    node: root.into_owned(),
                    file: f,
                    document: n + 1,
                });
                continue;
            }
            krm::for_each_resource(&root, &mut |r| {
                out.resources.push(Resource {
                    node: r.clone().into_owned(),
                    file: f,
                    document: n + 1,
                });
            });
        }
    }
    out
}

/// What a run over a package gives back.
#[derive(Clone, Debug)]
pub struct PackageOutput {
    /// One per source file, in their order.
    pub files: Vec<FileOutput>,
    /// New resources, in the order they were made.
    pub added: Vec<NewFile>,
    /// Every result, errors included, the warnings about files left out first.
    pub results: Vec<FnResult>,
    /// How many bytes of the files the YAML reader read: their size, each byte once, on the
    /// success path.
    pub parsed: usize,
}

impl PackageOutput {
    /// Whether any result is an error: nothing changed.
    #[cfg(test)]
    pub(crate) fn failed(&self) -> bool {
        self.results.iter().any(|r| r.severity == Severity::Error)
    }

    /// Whether any file changed, went, or was added.
    pub fn changed(&self) -> bool {
        !self.added.is_empty()
            || self
                .files
                .iter()
                .any(|f| matches!(f, FileOutput::Changed(_) | FileOutput::Emptied(_)))
    }

    /// The text file `i` has after the run: `None` when it went or was left out.
    pub fn text_of<'s>(&'s self, sources: &'s [SourceFile], i: usize) -> Option<&'s str> {
        match (self.files.get(i)?, sources.get(i)) {
            (FileOutput::Unchanged, Some(s)) => Some(&s.text),
            (FileOutput::Changed(t), _) => Some(t),
            _ => None,
        }
    }

    /// The files' outputs as one YAML stream, in order, then the new resources: what the
    /// standalone filter writes. `include` chooses the files (by index). A file is separated
    /// from the one before by `---` (unless it starts with one), by `...` when it starts with a
    /// directive; a byte order mark at the start of a file after the first is dropped (a
    /// stream has one at most, at its start); files of only whitespace add nothing.
    pub fn stream<'s>(
        &'s self,
        sources: &'s [SourceFile],
        include: impl Fn(usize) -> bool,
    ) -> Cow<'s, str> {
        let texts: Vec<&str> = (0..sources.len())
            .filter(|&i| include(i))
            .filter_map(|i| self.text_of(sources, i))
            .chain(self.added.iter().map(|new| new.text.as_str()))
            .filter(|t| !t.bytes().all(|b| b.is_ascii_whitespace()))
            .collect();
        // One file (a stream on stdin, a Helm chart's output) is the stream as it is: no copy.
        if let [only] = texts[..] {
            return Cow::Borrowed(only);
        }
        let total: usize = texts.iter().map(|t| t.len() + 8).sum();
        let mut out = String::with_capacity(total);
        for text in texts {
            join(&mut out, text);
        }
        Cow::Owned(out)
    }
}

/// Appends one file's text (more than whitespace) to a stream.
fn join(out: &mut String, text: &str) {
    if out.is_empty() {
        out.push_str(text);
        return;
    }
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    if !out.ends_with('\n') {
        out.push('\n');
    }
    if starts_with_directive(text) {
        out.push_str("...\n");
    } else if !text.starts_with("---") {
        out.push_str("---\n");
    }
    out.push_str(text);
}

/// Whether the text's first line that is not a comment or blank is a `%` directive.
fn starts_with_directive(text: &str) -> bool {
    text.lines()
        .map(str::trim_start)
        .find(|l| !l.is_empty() && !l.starts_with('#'))
        .is_some_and(|l| l.starts_with('%'))
}

/// How a file is read, decided in pass one; the files that name CRDs (and the strict files
/// among them, which are checked whole) already read there.
enum Prepared<'s> {
    /// A strict file: its documents, when read ahead.
    Strict(Option<Vec<Document<'s>>>),
    /// A stream, cut into pieces.
    Documents(Documents<'s>),
    /// A block ResourceList, read by its items.
    Items(Items<'s>),
    /// A stream of one block list kind, read by its items.
    List(Items<'s>),
    /// Anything else, read whole: its input, when read ahead.
    Whole(Option<Input<'s>>),
    /// Left out (not resources) or broken: said in its checks.
    Skipped,
}

/// What pass two made of a file.
enum Patched<'s> {
    /// The file's new text, and how many resources it kept.
    Text(String, usize),
    /// A ResourceList read by its items: its new text.
    Items(String),
    /// A `ResourceList` read whole, its items patched (`read` of them came in).
    Wrapped {
        form: krm::Form<'s>,
        items: Vec<Item<'s>>,
        read: usize,
    },
    /// Left out or broken.
    Skipped,
}

/// [`run_with`], the pieces chosen by size (the tests' shorthand).
#[cfg(test)]
pub(crate) fn run(
    files: &[SourceFile],
    plan: &Plan,
    config: Option<&Id<'static>>,
) -> PackageOutput {
    run_with(files, plan, config, Pieces::Auto)
}

/// Runs `plan` over the resources of `files`, each file cut into pieces as `pieces` says.
/// `config`: the functionConfig's identity, when it may be among the resources (it is left
/// alone, as kpt passes it along).
pub fn run_with(
    files: &[SourceFile],
    plan: &Plan,
    config: Option<&Id<'static>>,
    pieces: Pieces,
) -> PackageOutput {
    let parses = Parses::default();
    let reader = Reader {
        pieces,
        parses: &parses,
    };
    let mut setup = Setup::new(plan, config);
    // What the strict files' checks said, by file; then the other files' read errors.
    let mut checks: Vec<Vec<FnResult>> = vec![Vec::new(); files.len()];
    let mut errors = Vec::new();

    // Pass one: how each file is read; the files (or pieces) that name CRDs read, and their
    // CRDs learned, before any resource is merged.
    let mut prepared: Vec<Prepared<'_>> = Vec::with_capacity(files.len());
    for (file, checks) in files.iter().zip(&mut checks) {
        prepared.push(prepare(file, reader, &mut setup, checks));
    }

    // The updates' documents checked against the schema (the CRDs learned) on every core.
    setup.check_ahead(reader.pieces);

    // Pass two: every resource through the engine, file by file; the strict files pass one
    // left read ahead on every core, a window at a time, when there are enough of them.
    let mut engine = Engine::new(&setup);
    let mut whence = Whence::default();
    let mut done: Vec<Patched<'_>> = Vec::with_capacity(files.len());
    let waiting: usize = files
        .iter()
        .zip(&prepared)
        .filter(|(_, p)| matches!(p, Prepared::Strict(None)))
        .map(|(f, _)| f.text.len())
        .sum();
    let mut ahead_to = if reader.pieces.size(waiting).is_some() {
        0
    } else {
        files.len()
    };
    for (i, file) in files.iter().enumerate() {
        if i == ahead_to {
            ahead_to = read_ahead(files, &mut prepared, &mut checks, i, reader);
        }
        let prep = std::mem::replace(&mut prepared[i], Prepared::Skipped);
        let patched = match prep {
            Prepared::Skipped => Ok(Patched::Skipped),
            Prepared::Strict(docs) => {
                let checks = checks.get_mut(i);
                strict_file(i, file, docs, &mut engine, &mut whence, reader, checks)
            }
            Prepared::Documents(docs) => {
                documents_file(i, file, docs, &mut engine, &mut whence, reader)
            }
            Prepared::Items(items) => items_file(file, items, &mut engine, reader),
            Prepared::List(items) => list_file(i, file, items, &mut engine, &mut whence, reader),
            Prepared::Whole(input) => whole_file(i, file, input, &mut engine, &mut whence, reader),
        };
        done.push(patched.unwrap_or_else(|e| {
            errors.push(FnResult::new(
                Severity::Error,
                format!("{}: {e}", file.name),
            ));
            Patched::Skipped
        }));
    }
    // A strict file whose check warned is not resources: left out.
    let left_out: Vec<bool> = done
        .iter()
        .zip(&checks)
        .map(|(d, c)| {
            matches!(d, Patched::Skipped) && c.iter().any(|r| r.severity == Severity::Warning)
        })
        .collect();
    // A file that could not be read may hold what a target was meant for.
    if !errors.is_empty()
        || checks
            .iter()
            .flatten()
            .any(|r| r.severity == Severity::Error)
    {
        engine.input_unread();
    }
    let mut end = engine.finish();
    // A package of one ResourceList (a function's message on stdin, a file of one) holds what
    // an update adds among its items, as a ResourceList read alone does.
    if let [Patched::Wrapped { items, .. }] = &mut done[..] {
        items.extend(std::mem::take(&mut end.added));
    }
    let mut results: Vec<FnResult> = checks.into_iter().flatten().collect();
    results.extend(errors);
    let mut run_results = end.results;
    for r in &mut run_results {
        whence.locate(r, files);
    }
    results.extend(run_results);
    // The warnings about files left out are warnings too.
    super::report::escalate(plan.fail_on, &mut results);
    let failed = end.failed || results.iter().any(|r| r.severity == Severity::Error);

    let outputs: Vec<FileOutput> = done
        .into_iter()
        .zip(files)
        .zip(left_out)
        .map(|((d, file), left_out)| {
            if left_out {
                return FileOutput::NotResources;
            }
            if failed {
                return FileOutput::Unchanged;
            }
            match d {
                Patched::Skipped => FileOutput::Unchanged,
                Patched::Text(t, kept) => file_output(&file.text, t, kept),
                // A ResourceList on stdin is a function's message, and carries the results
                // (`kpt fn source | krm-merge --config FN | kpt fn sink`); a file does not.
                Patched::Items(mut text) if file.name == STDIN => {
                    if !results.is_empty() {
                        if !text.ends_with('\n') {
                            text.push('\n');
                        }
                        text.push_str(&krm::results_block(&results));
                    }
                    file_output(&file.text, text, 1)
                }
                Patched::Items(text) => file_output(&file.text, text, 1),
                Patched::Wrapped { form, items, .. } if file.name == STDIN => {
                    let text = krm::write_string(form, items, &results);
                    file_output(&file.text, text, 1)
                }
                Patched::Wrapped { form, items, read } => {
                    wrapped_output(&file.text, form, items, read)
                }
            }
        })
        .collect();
    let added = if failed {
        Vec::new()
    } else {
        new_files(end.added)
    };
    PackageOutput {
        files: outputs,
        added,
        results,
        parsed: parses.bytes(),
    }
}

/// The most text [`read_ahead`] reads at once: the trees of a window are alive together (4 MiB:
/// as fast as a 10,000-file package read ahead whole, for a third of the memory that costs).
const AHEAD: usize = 4 << 20;

/// Reads the strict files from `from` on that pass one left (`Prepared::Strict(None)`), up to
/// [`AHEAD`] bytes of them, on every core, as pass two would read each (the same documents, the
/// same checks; a file that is not resources is `Skipped`, as pass two makes it). Returns where
/// the window ends; every file, when the pool could not be made (pass two reads them then).
fn read_ahead<'s>(
    files: &'s [SourceFile],
    prepared: &mut [Prepared<'s>],
    checks: &mut [Vec<FnResult>],
    from: usize,
    reader: Reader<'_>,
) -> usize {
    let mut window = Vec::new();
    let (mut bytes, mut end) = (0usize, from);
    while end < files.len() && bytes < AHEAD {
        if matches!(prepared[end], Prepared::Strict(None)) {
            window.push(end);
            bytes += files[end].text.len();
        }
        end += 1;
    }
    let read = crate::run::pieces::map(&window, |_, &i| {
        let mut said = Vec::new();
        let docs = strict_documents(&files[i], reader, &mut said);
        Some((docs, said))
    });
    let Some(read) = read else {
        return files.len();
    };
    for (i, (docs, said)) in window.into_iter().zip(read) {
        prepared[i] = match docs {
            Some(docs) => Prepared::Strict(Some(docs)),
            None => Prepared::Skipped,
        };
        checks[i].extend(said);
    }
    end
}

/// A file's output from its new text and the number of resources left in it.
fn file_output(before: &str, after: String, kept: usize) -> FileOutput {
    if after == before {
        FileOutput::Unchanged
    } else if kept > 0 {
        FileOutput::Changed(after)
    } else {
        FileOutput::Emptied(after)
    }
}

/// A `ResourceList` file's output: as it came when no patch changed or deleted an item (the
/// results go to the caller, never into the file), else written back in its form. It never
/// goes, even when every item did: the file is the list.
fn wrapped_output(
    before: &str,
    form: krm::Form<'_>,
    items: Vec<Item<'_>>,
    read: usize,
) -> FileOutput {
    if items.len() == read && items.iter().all(|i| !i.touched) {
        return FileOutput::Unchanged;
    }
    let after = krm::write_string(form, items, &[]);
    if after == before {
        FileOutput::Unchanged
    } else {
        FileOutput::Changed(after)
    }
}

/// Pass one for a file: how it is read; a strict file that names CRDs checked (every document a
/// KRM resource, else a warning and the file is left out; it parses, else an error) and its
/// CRDs learned, a stream's pieces that name CRDs read and learned, a file read whole that names
/// them read and learned.
fn prepare<'s>(
    file: &'s SourceFile,
    reader: Reader<'_>,
    setup: &mut Setup<'_>,
    checks: &mut Vec<FnResult>,
) -> Prepared<'s> {
    let src = file.text.as_str();
    let crds = src.contains("CustomResourceDefinition");
    if file.strict {
        if !crds {
            return Prepared::Strict(None);
        }
        return match strict_documents(file, reader, checks) {
            Some(docs) => {
                for d in &docs {
                    if let Some(root) = &d.root {
                        setup.learn_crds(root);
                    }
                }
                Prepared::Strict(Some(docs))
            }
            None => Prepared::Skipped,
        };
    }
    // A ResourceList takes what an update adds among its items: read whole (see `run_with`).
    let adds = setup
        .plan
        .steps
        .iter()
        .any(|s| matches!(s.action, crate::config::Action::Update { .. }));
    match Reading::of(src) {
        Reading::Documents => Prepared::Documents(Documents::cut(src, reader, setup)),
        Reading::List(layout) => match items::wrapper(src, &layout, Around::List, reader) {
            Some(w) => match Items::cut(src, layout, &w, reader, setup) {
                Some(items) => Prepared::List(items),
                None => Prepared::Documents(Documents::cut(src, reader, setup)),
            },
            None => Prepared::Documents(Documents::cut(src, reader, setup)),
        },
        Reading::Items(_) if adds => Prepared::Whole(None),
        Reading::Items(layout) => {
            let items = items::wrapper(src, &layout, items::Around::ResourceList, reader)
                .and_then(|w| Items::cut(src, layout, &w, reader, setup));
            match items {
                Some(items) => Prepared::Items(items),
                None => Prepared::Whole(None),
            }
        }
        Reading::Whole if crds => {
            reader.parses.add(src);
            // A read error is reported by pass two, which reads the file again.
            let input = Input::read(src).ok();
            for item in input.iter().flat_map(|i| &i.items) {
                setup.learn_crds(&item.node);
            }
            Prepared::Whole(input)
        }
        Reading::Whole => Prepared::Whole(None),
    }
}

/// A strict file's documents, every one a KRM resource (empty documents aside, which hold
/// nothing); `None`, said in `checks`, when one is not (a warning: the file is left out) or the
/// file does not parse (an error).
fn strict_documents<'s>(
    file: &'s SourceFile,
    reader: Reader<'_>,
    checks: &mut Vec<FnResult>,
) -> Option<Vec<Document<'s>>> {
    reader.parses.add(&file.text);
    let mut docs = Vec::new();
    let mut not_krm: Option<String> = None;
    let mut n = 0;
    let parsed = yaml::parse_each(&file.text, |mut d| {
        // An empty document (a trailing `---`, Helm's `# Source:` documents) holds nothing.
        krm::forget_empty(&mut d);
        if let Some(root) = &d.root {
            n += 1;
            if not_krm.is_none() {
                not_krm = not_a_resource(root).map(|why| format!("document {n} {why}"));
            }
        }
        docs.push(d);
    });
    match (parsed, not_krm) {
        (Err(e), _) => {
            checks.push(FnResult::new(
                Severity::Error,
                format!("{}: malformed YAML: {e}", file.name),
            ));
            None
        }
        (Ok(()), Some(why)) => {
            checks.push(FnResult::new(
                Severity::Warning,
                format!("{}: not a KRM resource file ({why}); left out", file.name),
            ));
            None
        }
        (Ok(()), None) => Some(docs),
    }
}

/// Why a document is not a KRM resource: `None` when it is one.
fn not_a_resource(root: &Node<'_>) -> Option<&'static str> {
    if !root.is_map() {
        return Some("is not a mapping");
    }
    let has = |k: &str| {
        root.get(k)
            .and_then(Node::as_str)
            .is_some_and(|s| !s.is_empty())
    };
    match (has("apiVersion"), has("kind")) {
        (true, true) => None,
        (false, true) => Some("has no apiVersion"),
        (true, false) => Some("has no kind"),
        (false, false) => Some("has no apiVersion and no kind"),
    }
}

/// Pass two for a strict file: checked (unless pass one did), then every document through the
/// engine (a ResourceList among them is a resource: the file is a package's).
fn strict_file<'s>(
    i: usize,
    file: &'s SourceFile,
    docs: Option<Vec<Document<'s>>>,
    engine: &mut Engine<'_>,
    whence: &mut Whence,
    reader: Reader<'_>,
    checks: Option<&mut Vec<FnResult>>,
) -> Result<Patched<'s>, krm::ReadError> {
    let docs = match docs {
        Some(docs) => docs,
        None => {
            let mut none = Vec::new();
            match strict_documents(file, reader, checks.unwrap_or(&mut none)) {
                Some(docs) => docs,
                None => return Ok(Patched::Skipped),
            }
        }
    };
    let mut out = StreamOut::for_input(&file.text);
    let (mut n, mut kept) = (0usize, 0usize);
    krm::stream_documents(
        |each| {
            docs.into_iter().for_each(each);
            Ok(())
        },
        false,
        &mut |item| {
            krm::for_each_resource(&item.node, &mut |r| whence.saw(r, i, n));
            n += 1;
            let item = engine.process(item);
            kept += usize::from(item.is_some());
            item
        },
        &mut out,
    )?;
    Ok(Patched::Text(out.text, kept))
}

/// Pass two for a stream: its pieces through the engine. One that turns out to be a
/// ResourceList whose `kind` its lines did not show is read whole.
fn documents_file<'s>(
    i: usize,
    file: &'s SourceFile,
    docs: Documents<'s>,
    engine: &mut Engine<'_>,
    whence: &mut Whence,
    reader: Reader<'_>,
) -> Result<Patched<'s>, krm::ReadError> {
    let out = StreamOut::for_input(&file.text);
    match docs.run(engine, out, reader, Some(&whence.hasher)) {
        Ok(read) => {
            for &(key, n) in &read.seen {
                whence.saw_key(key, i, n);
            }
            Ok(Patched::Text(read.out.text, read.kept))
        }
        Err(Stop::Wrapped) => whole_file(i, file, None, engine, whence, reader),
        Err(Stop::Read(e)) => Err(e),
    }
}

/// Pass two for a stream of one block list kind (`kubectl get -o yaml`'s): its items through
/// the engine as the engine reads a list kind's (`Items::run`), on every core where they are
/// many; the list's text with the touched items rewritten. Read as a document instead when it
/// cannot be read so, or when a patch deleted every item (which takes the list out of the
/// stream).
fn list_file<'s>(
    i: usize,
    file: &'s SourceFile,
    items: Items<'s>,
    engine: &mut Engine<'_>,
    whence: &mut Whence,
    reader: Reader<'_>,
) -> Result<Patched<'s>, krm::ReadError> {
    let src = file.text.as_str();
    let out = StreamOut::for_input(src).text;
    let Some(read) = items.run(engine, out, reader, Some(&whence.hasher)) else {
        // Its CRDs were learned in pass one.
        let docs = Documents::cut_known(src, reader);
        return documents_file(i, file, docs, engine, whence, reader);
    };
    for key in read.seen {
        whence.saw_key(key, i, 0);
    }
    let mut text = read.out;
    text.push_str(src.get(read.rest..).unwrap_or(""));
    Ok(Patched::Text(text, 1))
}

/// Pass two for a block ResourceList: its items through the engine, in the one document they
/// are. One that cannot be read so is read whole.
fn items_file<'s>(
    file: &'s SourceFile,
    items: Items<'s>,
    engine: &mut Engine<'_>,
    reader: Reader<'_>,
) -> Result<Patched<'s>, krm::ReadError> {
    let src = file.text.as_str();
    let out = StreamOut::for_input(src).text;
    engine.one_document();
    let read = items.run(engine, out, reader, None);
    engine.end_document();
    let Some(read) = read else {
        let mut none = Whence::default();
        return whole_file(0, file, None, engine, &mut none, reader);
    };
    let mut text = read.out;
    text.push_str(src.get(read.rest..).unwrap_or(""));
    Ok(Patched::Items(text))
}

/// Pass two for a file read whole: a ResourceList's items through the engine in their
/// document, written back in its form once the results are known; a stream's documents one by
/// one.
fn whole_file<'s>(
    i: usize,
    file: &'s SourceFile,
    input: Option<Input<'s>>,
    engine: &mut Engine<'_>,
    whence: &mut Whence,
    reader: Reader<'_>,
) -> Result<Patched<'s>, krm::ReadError> {
    let src = file.text.as_str();
    let input = match input {
        Some(input) => input,
        None => {
            reader.parses.add(src);
            Input::read(src)?
        }
    };
    let Input { mut form, items } = input;
    let read = items.len();
    match &mut form {
        krm::Form::Wrapped { doc, .. } => {
            let items = engine.process_document(items, doc.root.as_mut());
            Ok(Patched::Wrapped { form, items, read })
        }
        krm::Form::Stream { .. } => {
            let mut kept = Vec::with_capacity(read);
            for (n, item) in items.into_iter().enumerate() {
                krm::for_each_resource(&item.node, &mut |r| whence.saw(r, i, n));
                kept.extend(engine.process(item));
            }
            let count = kept.len();
            Ok(Patched::Text(krm::write_string(form, kept, &[]), count))
        }
    }
}

/// The new resources as files of their own.
fn new_files(items: Vec<Item<'static>>) -> Vec<NewFile> {
    let mut taken: Vec<String> = Vec::new();
    items
        .into_iter()
        .map(|item| {
            let id = Id::of(&item.node);
            let base = format!(
                "{}_{}",
                file_safe(&id.kind.to_ascii_lowercase()),
                file_safe(&id.name)
            );
            let mut name = format!("{base}.yaml");
            let mut n = 2;
            while taken.contains(&name) {
                name = format!("{base}-{n}.yaml");
                n += 1;
            }
            taken.push(name.clone());
            let mut text = String::new();
            let from = match item.origin {
                krm::Origin::New { step, document } => Some((step, document)),
                krm::Origin::Input(_) => None,
            };
            yaml::emit_document(&Document::new(item.node), &mut text);
            NewFile { name, text, from }
        })
        .collect()
}

/// A name that is one plain file name: letters, digits, `.`, `-` and `_`, not starting with
/// `.`; anything else becomes `_`.
fn file_safe(s: &str) -> String {
    let mut out: String = s
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_') {
                c
            } else {
                '_'
            }
        })
        .collect();
    if out.is_empty() || out.starts_with('.') {
        out.insert(0, '_');
    }
    out
}

/// Where each resource came from (file and document index), to name the file in results that
/// name a resource: `None` for an identity found in more than one place. Identities are kept
/// by a hash of their fields as written (what a result names), not by their text.
#[derive(Default)]
struct Whence {
    hasher: crate::hash::State,
    seen: HashMap<u64, Option<(usize, u64)>, crate::hash::State>,
}

impl Whence {
    fn saw(&mut self, node: &Node<'_>, file: usize, index: usize) {
        let key = identity_key(&self.hasher, &Id::of(node));
        self.saw_key(key, file, index);
    }

    fn saw_key(&mut self, key: u64, file: usize, index: usize) {
        let at = (file, u64::try_from(index).unwrap_or(u64::MAX));
        self.seen
            .entry(key)
            .and_modify(|e| *e = None)
            .or_insert(Some(at));
    }

    /// Names the file of a result about a resource, when the result does not say and the
    /// resource came from one place.
    fn locate(&self, r: &mut FnResult, files: &[SourceFile]) {
        if r.file.is_some() {
            return;
        }
        let Some(id) = &r.resource else { return };
        let key = identity_key(&self.hasher, id);
        if let Some(Some((f, index))) = self.seen.get(&key) {
            if let Some(file) = files.get(*f) {
                r.file = Some((file.name.clone(), *index));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config;

    fn plan(patches: &str) -> Plan {
        let text = format!(
            "apiVersion: fn.krm-merge.dev/v1alpha1\nkind: Merge\nmetadata: {{name: m}}\nspec:\n  patches:\n{patches}"
        );
        let doc = yaml::parse_stream(&text).unwrap().remove(0).root.unwrap();
        config::plan(&doc, None).unwrap()
    }

    fn file(name: &str, text: &str, strict: bool) -> SourceFile {
        SourceFile {
            name: name.into(),
            text: text.into(),
            strict,
        }
    }

    const CM: &str = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\ndata:\n  a: \"1\"\n";
    const SECRET: &str = "# keep\napiVersion: v1\nkind: Secret\nmetadata: {name: s}\n";

    #[test]
    fn each_file_is_its_own_output() {
        let files = [file("a.yaml", SECRET, true), file("b.yaml", CM, true)];
        let out = run(
            &files,
            &plan("  - target: {kind: ConfigMap}\n    patch: '{data: {b: \"2\"}}'\n"),
            None,
        );
        assert!(!out.failed(), "{:?}", out.results);
        assert_eq!(out.files[0], FileOutput::Unchanged);
        assert_eq!(
            out.files[1],
            FileOutput::Changed(format!("{CM}  b: \"2\"\n"))
        );
        assert_eq!(
            out.stream(&files, |_| true),
            format!("{SECRET}---\n{CM}  b: \"2\"\n")
        );
        assert!(out.changed());
    }

    #[test]
    fn a_file_is_parsed_alone_and_errors_name_it() {
        // A BOM and a directive at the start of a second file are fine alone.
        let files = [
            file("a.yaml", CM, false),
            file(
                "b.yaml",
                &format!("\u{feff}%YAML 1.2\n---\n{SECRET}"),
                false,
            ),
        ];
        let out = run(
            &files,
            &plan("  - target: {kind: Nope}\n    patch: 'a: 1'\n"),
            None,
        );
        assert!(!out.failed(), "{:?}", out.results);
        let stream = out.stream(&files, |_| true);
        assert_eq!(stream, format!("{CM}...\n%YAML 1.2\n---\n{SECRET}"));
        assert_eq!(yaml::parse_stream(&stream).unwrap().len(), 2);
        // A syntax error: its file, and its own line.
        let files = [
            file("a.yaml", CM, false),
            file("b.yaml", "a: 1\nb: [\n", false),
        ];
        let out = run(
            &files,
            &plan("  - target: {kind: Nope}\n    patch: 'a: 1'\n"),
            None,
        );
        assert!(out.failed());
        let msg = &out.results[0].message;
        assert!(
            msg.starts_with("b.yaml: ") && msg.contains("line 2, column 4"),
            "{msg}"
        );
        assert_eq!(out.files, [FileOutput::Unchanged, FileOutput::Unchanged]);
    }

    #[test]
    fn strict_files_that_are_not_resources_are_left_out() {
        let files = [
            file("a.yaml", SECRET, true),
            file("kustom.yaml", "resources:\n- a.yaml\n", true),
            file(
                "list.yaml",
                &format!(
                    "apiVersion: v1\nkind: ConfigMapList\nitems:\n- {}",
                    CM.replace('\n', "\n  ").trim_end()
                ),
                true,
            ),
        ];
        let out = run(
            &files,
            &plan("  - target: {kind: ConfigMap}\n    patch: '{metadata: {labels: {x: y}}}'\n"),
            None,
        );
        assert!(!out.failed(), "{:?}", out.results);
        assert_eq!(out.files[1], FileOutput::NotResources);
        assert_eq!(out.results[0].severity, Severity::Warning);
        assert!(
            out.results[0].message.starts_with(
                "kustom.yaml: not a KRM resource file (document 1 has no apiVersion and no kind)"
            ),
            "{}",
            out.results[0].message
        );
        // A list kind in a package file holds resources: the file keeps its list.
        assert!(
            matches!(&out.files[2], FileOutput::Changed(t) if t.starts_with("apiVersion: v1\nkind: ConfigMapList\nitems:\n- apiVersion: v1\n") && t.contains("    labels: {x: \"y\"}\n")),
            "{:?}",
            out.files[2]
        );
        assert_eq!(out.files[0], FileOutput::Unchanged);
        assert!(!out.stream(&files, |_| true).contains("resources:"));
    }

    #[test]
    fn deleted_resources_leave_their_file_and_an_emptied_file_goes() {
        let two = format!("{CM}---\n{SECRET}");
        let files = [
            file("two.yaml", &two, true),
            file(
                "one.yaml",
                SECRET.replace("name: s", "name: t").as_str(),
                true,
            ),
        ];
        let p = plan("  - target: {kind: Secret}\n    patch: '$patch: delete'\n");
        let out = run(&files, &p, None);
        assert!(!out.failed(), "{:?}", out.results);
        assert_eq!(out.files[0], FileOutput::Changed(CM.to_owned()));
        assert!(matches!(out.files[1], FileOutput::Emptied(_)));
    }

    #[test]
    fn resources_merge3_adds_are_new_files_and_results_name_files() {
        let files = [file("cm.yaml", CM, true)];
        let p = plan("  - type: merge3\n    original: |\n      apiVersion: v1\n      kind: ConfigMap\n      metadata: {name: c}\n    patch: |\n      apiVersion: v1\n      kind: ConfigMap\n      metadata: {name: c}\n      ---\n      apiVersion: v1\n      kind: Service\n      metadata: {name: web/x}\n");
        let out = run(&files, &p, None);
        assert!(!out.failed(), "{:?}", out.results);
        assert_eq!(out.added.len(), 1);
        assert_eq!(out.added[0].name, "service_web_x.yaml");
        assert!(out.added[0].text.contains("kind: Service"));
        // A failing patch: the error names the resource's file; nothing is output.
        let p = plan("  - target: {kind: ConfigMap}\n    type: json6902\n    patch: '[{op: remove, path: /nope}]'\n");
        let out = run(&files, &p, None);
        assert!(out.failed());
        let err = out
            .results
            .iter()
            .find(|r| r.severity == Severity::Error)
            .unwrap();
        assert_eq!(err.file, Some(("cm.yaml".to_owned(), 0)));
        assert_eq!(out.files, [FileOutput::Unchanged]);
        assert!(!out.changed());
    }

    #[test]
    fn file_names_are_plain() {
        assert_eq!(file_safe("../etc"), "_.._etc");
        assert_eq!(file_safe(""), "_");
        assert_eq!(file_safe("web-1.a_b"), "web-1.a_b");
    }
}
