//! `krm-merge merge3 ORIGINAL UPDATED LOCAL`: a package upgraded from any source. Each side is a
//! file, a stream, a `List` or `ResourceList`, a directory read as kpt reads a package, or `-`;
//! ORIGINAL and UPDATED are read as documents ([`package::resources`]), LOCAL as the package
//! the run changes, through the library's merge3 update (`run/update.rs`: pairing by group,
//! kind, namespace and name, deletions, additions, conflicts); LOCAL's output is written as
//! `--config`'s is ([`super::deliver`]: stdout, `--in-place`, `--output`, `--diff`, `--check`,
//! all through the write-back transaction).
//!
//! What is the command line's here:
//!
//! * **What is read.** Every file of the three sides is listed before anything is read, and
//!   checked against what the run writes ([`super::guard`]). A file of ORIGINAL or UPDATED that
//!   LOCAL's directory holds too would be read as a local resource as well: refused (list it in
//!   LOCAL's `.krmignore`, or move it); with `--in-place`, so is a LOCAL file that is ORIGINAL
//!   or UPDATED (it would be rewritten).
//! * **One resource each.** Three files of one resource each (none a directory) merge whatever
//!   their names, as before packages (`kustomize cfg merge3` on three files); otherwise
//!   resources pair by identity.
//! * **Where added resources go** ([`place_added`]): when UPDATED and LOCAL are directories, at
//!   the path they have in UPDATED — in the local file at that path when ORIGINAL had that file
//!   too (kpt does the same), never in a file only LOCAL has (an error naming both); otherwise
//!   one new file per resource, named as the standalone filter names them.
//! * **What is said.** Each result is one line on stderr, naming the file where it is known
//!   (a conflict: the file, the resource, the field path, both values); `--summary` says the
//!   counts whatever `-v`.
//!
//! What it must not do: pair or merge resources (the library does), or write but through
//! [`super::deliver`].

use std::collections::{HashMap, HashSet};
use std::path::{Component, Path};

use krm_merge::config::{self, PatchKind, PatchOptions};
use krm_merge::krm::exit_code;
use krm_merge::krm::{FnResult, Severity};
use krm_merge::run::package::{self, FileOutput, NewFile, PackageOutput, Resource};
use krm_merge::run::pairing::Key;
use krm_merge::select::identity::Id;

use super::args::{Level, Report, Source, Write};
use super::emit::NewNames;
use super::files::{self, Inputs, Listing};
use super::walk::FileKey;
use super::{guard, writeback, Io, Stdin};

/// What `merge3` was asked.
pub struct Request<'a> {
    pub original: &'a Source,
    pub updated: &'a Source,
    pub local: &'a Source,
    pub opts: PatchOptions,
    pub write: &'a Write,
    /// `--summary`.
    pub summary: bool,
    pub report: &'a Report,
}

const WAITING: &str = "stdin is a terminal, and merge3 reads a side from it (-): pipe it in, or \
give a file or a directory";

/// The three sides, as named.
const SIDES: [&str; 3] = ["ORIGINAL", "UPDATED", "LOCAL"];

/// Runs `merge3`; returns the exit code.
pub fn run(req: &Request<'_>, stdin: Stdin<'_>, io: &mut Io<'_>) -> i32 {
    run_on(req, stdin, io, &writeback::Real)
}

/// [`run`], writing through `fs` (the tests' fails where they say).
fn run_on(req: &Request<'_>, stdin: Stdin<'_>, io: &mut Io<'_>, fs: &dyn writeback::Fs) -> i32 {
    let report = req.report;
    if let Write::Output(dir) = req.write {
        if let Err(e) = super::output_dir_is_free(dir) {
            return super::usage(io, &e);
        }
    }
    let sides = [req.original, req.updated, req.local];
    if stdin.terminal && sides.contains(&&Source::Stdin) {
        return super::usage(io, WAITING);
    }
    // Everything listed before anything is read; the three sides on every core.
    let list = |k: usize| {
        let copies = k == 2 && matches!(req.write, Write::Output(_));
        files::list_inputs(std::slice::from_ref(sides[k]), None, copies)
    };
    let (original, (updated, local)) =
        rayon::join(|| list(0), || rayon::join(|| list(1), || list(2)));
    let mut listings: Vec<Listing> = Vec::with_capacity(3);
    for listed in [original, updated, local] {
        match listed {
            Ok(l) => listings.push(l),
            Err(e) => return super::read_failed(io, report, e),
        }
    }
    let local_dir = match req.local {
        Source::Path(p) if p.is_dir() => Some(p.clone()),
        _ => None,
    };
    if *req.write == Write::InPlace {
        if let Some(what) = listings[2].not_rewritable() {
            return super::usage(
                io,
                &format!(
                    "--in-place: {what} cannot be written back (not a regular file); give LOCAL \
                     as files or a directory, or write the output elsewhere (stdout, --output DIR)"
                ),
            );
        }
    }
    if let Err(e) = shared_files(&listings, local_dir.is_some(), req.write) {
        return super::usage(io, &e);
    }
    let mut reads = guard::Reads::default();
    for l in &listings {
        reads.extend(&l.reads);
    }
    if let Err(e) = super::refuse_overwrites(&reads, req.write, report, io) {
        return super::usage(io, &e);
    }
    let mut budget = files::Budget::new(files::MAX_INPUT);
    let read = match files::read_all_listed(listings, stdin.read, &mut budget) {
        Ok(r) => r,
        Err(e) => return super::read_failed(io, report, e),
    };
    let [original, updated, local]: [Inputs; 3] = match read.try_into() {
        Ok(sides) => sides,
        Err(_) => return super::usage(io, "merge3 reads three sides"),
    };
    let mut results: Vec<FnResult> = [&original, &updated, &local]
        .iter()
        .flat_map(|side| side.reading_results())
        .collect();
    // The two upstream versions are read on two cores: each is a whole package's text.
    // Each with its resources named twice, on the same thread.
    let side = |k: usize, inputs: &Inputs| {
        let res = package::resources(&inputs.sources);
        let twice = duplicates(SIDES[k], inputs, &res.resources);
        (res, twice)
    };
    let ((o_res, o_twice), (u_res, u_twice)) =
        rayon::join(|| side(0, &original), || side(1, &updated));
    results.extend(o_res.results.iter().cloned());
    results.extend(u_res.results.iter().cloned());
    results.extend(o_twice);
    results.extend(u_twice);
    if exit_code(&results) != 0 {
        say(io, req, &results);
        return super::finish(io, report, &results, 1);
    }
    let directories = [req.original, req.updated, req.local]
        .iter()
        .any(|s| matches!(s, Source::Path(p) if p.is_dir()));
    let single = !directories
        && o_res.resources.len() <= 1
        && u_res.resources.len() == 1
        && local_resources(&local) == 1;
    // The documents move into the plan; what placing additions needs is each one's file.
    let u_files: Vec<usize> = u_res.resources.iter().map(|r| r.file).collect();
    let nodes = |r: Vec<Resource>| r.into_iter().map(|r| r.node).collect::<Vec<_>>();
    let plan = config::command_line(
        PatchKind::Merge3,
        nodes(u_res.resources),
        nodes(o_res.resources),
        req.opts,
        single,
    );
    let pieces = match super::pieces() {
        Ok(p) => p,
        Err(e) => return super::usage(io, &e),
    };
    let mut pkg = package::run_with(&local.sources, &plan, None, pieces);
    results.extend(pkg.results.iter().cloned());
    let names = match (&local_dir, updated_is_dir(req.updated)) {
        (Some(_), true) => {
            let upstream = Upstream {
                original: &original,
                updated: &updated,
                files: &u_files,
            };
            if let Err(e) = place_added(&mut pkg, &local, &upstream) {
                results.push(FnResult::new(Severity::Error, e));
            }
            NewNames::Upstream
        }
        _ => NewNames::Made,
    };
    say(io, req, &results);
    if exit_code(&results) != 0 {
        return super::finish(io, report, &results, 1);
    }
    let code = super::deliver(io, report, req.write, &local, &pkg, names, results, fs);
    // The process ends with this command: its trees (several times the input's size) are
    // given back by the exit, not freed node by node (a tenth of a large upgrade's time).
    std::mem::forget((pkg, plan, original, updated, local));
    code
}

fn updated_is_dir(s: &Source) -> bool {
    matches!(s, Source::Path(p) if p.is_dir())
}

/// The resources LOCAL's files hold, as the package run reads them.
fn local_resources(local: &Inputs) -> usize {
    package::resources(&local.sources).resources.len()
}

/// Refuses a file read both as ORIGINAL or UPDATED and as LOCAL's: in LOCAL's directory it would
/// be a local resource too; with `--in-place` it would be rewritten.
fn shared_files(listings: &[Listing], local_is_dir: bool, write: &Write) -> Result<(), String> {
    let Some((local, upstream)) = listings.split_last() else {
        return Ok(());
    };
    if !local_is_dir && *write != Write::InPlace {
        return Ok(());
    }
    // By the keys the listing looked at (each file looked at once).
    let local_keys: HashMap<FileKey, &Path> = local.file_keys().collect();
    for (side, listing) in SIDES.iter().zip(upstream) {
        for (key, p) in listing.file_keys() {
            if let Some(l) = local_keys.get(&key) {
                let why = if local_is_dir {
                    "LOCAL's directory holds it, and it would be read as a local resource too: \
                     move it out, or list it in LOCAL's .krmignore"
                } else {
                    "--in-place would rewrite it: write the output elsewhere (stdout, --output DIR)"
                };
                return Err(format!(
                    "{side} {} is LOCAL's {}: {why}",
                    p.display(),
                    l.display()
                ));
            }
        }
    }
    Ok(())
}

/// Two resources of one side with one key: an error naming both places.
fn duplicates(side: &str, inputs: &Inputs, resources: &[Resource]) -> Vec<FnResult> {
    let mut first: HashMap<Key<'_>, &Resource> = HashMap::new();
    let mut out = Vec::new();
    for r in resources {
        let key = Key::of_plain(&r.node);
        match first.get(&key) {
            Some(f) => out.push(FnResult::new(
                Severity::Error,
                format!(
                    "{side}: {} is twice: {} and {} (a version of a package holds each resource \
                     once)",
                    Id::of(&r.node),
                    place(inputs, f),
                    place(inputs, r)
                ),
            )),
            None => {
                first.insert(key, r);
            }
        }
    }
    out
}

/// `FILE document N`.
fn place(inputs: &Inputs, r: &Resource) -> String {
    let name = inputs.sources.get(r.file).map_or("?", |s| s.name.as_str());
    format!("{name} document {}", r.document)
}

/// ORIGINAL and UPDATED as read, for placing what UPDATED adds.
struct Upstream<'a> {
    original: &'a Inputs,
    updated: &'a Inputs,
    /// The file of each of UPDATED's resources (the update's documents, in order).
    files: &'a [usize],
}

/// Puts each resource the run added at the path its file has in UPDATED, relative to LOCAL's
/// directory: the resources of one upstream file in one file, in UPDATED's order. Where LOCAL
/// has a resource file at that path and ORIGINAL had it too, the resources go at its end (it
/// is the same upstream file); where something else is there (a file only LOCAL has, a file
/// that is not resources, a directory), that is an error naming both.
fn place_added(
    pkg: &mut PackageOutput,
    local: &Inputs,
    upstream: &Upstream<'_>,
) -> Result<(), String> {
    let Some(dir) = local.first_dir.clone() else {
        return Ok(());
    };
    // Grouped by upstream file, in the order the files first receive a resource.
    let mut groups: Vec<(usize, Vec<NewFile>)> = Vec::new();
    for new in std::mem::take(&mut pkg.added) {
        let file = new.from.and_then(|(_, d)| upstream.files.get(d).copied());
        let Some(file) = file else {
            return Err(format!(
                "{}: a resource added by no document of UPDATED",
                new.name
            ));
        };
        match groups.iter_mut().find(|(f, _)| *f == file) {
            Some((_, g)) => g.push(new),
            None => groups.push((file, vec![new])),
        }
    }
    // Each local file by its path in the package, looked up once per upstream file (the first
    // of a path, as a scan would find it).
    let mut local_rels: HashMap<&Path, usize> = HashMap::with_capacity(local.files.len());
    for (i, f) in local.files.iter().enumerate() {
        local_rels.entry(f.rel.as_path()).or_insert(i);
    }
    let original_rels: HashSet<&Path> = upstream
        .original
        .files
        .iter()
        .map(|f| f.rel.as_path())
        .collect();
    for (file, news) in groups {
        let (Some(source), Some(info)) = (
            upstream.updated.sources.get(file),
            upstream.updated.files.get(file),
        ) else {
            continue;
        };
        let rel = &info.rel;
        if rel.components().any(|c| !matches!(c, Component::Normal(_))) {
            return Err(format!(
                "{}: not a path inside a package ({})",
                source.name,
                rel.display()
            ));
        }
        let what = news
            .iter()
            .map(|n| resource_of(&n.text))
            .collect::<Vec<_>>()
            .join(", ");
        let target = dir.join(rel);
        let at = local_rels.get(rel.as_path()).copied();
        let resources_file = at.filter(|&i| {
            !matches!(pkg.files.get(i), Some(FileOutput::NotResources))
                && local.files.get(i).is_some_and(|f| f.path.is_some())
        });
        match resources_file {
            Some(i) if original_rels.contains(rel.as_path()) => {
                // A file whose every resource upstream deleted keeps what the deletions left
                // (its header comment) for what upstream put in it instead.
                let mut text = match &pkg.files[i] {
                    FileOutput::Emptied(left) => left.clone(),
                    _ => pkg.text_of(&local.sources, i).unwrap_or("").to_owned(),
                };
                for n in &news {
                    append(&mut text, &n.text);
                }
                pkg.files[i] = FileOutput::Changed(text);
            }
            _ if at.is_some() || std::fs::symlink_metadata(&target).is_ok() => {
                return Err(format!(
                    "{} ({what}, new upstream in {}) would go to {}, which {}; krm-merge never \
                     writes over a local file: move it, then merge again",
                    rel.display(),
                    source.name,
                    target.display(),
                    if resources_file.is_some() {
                        "is a file only LOCAL has"
                    } else {
                        "LOCAL holds already (not a file of its resources)"
                    },
                ));
            }
            _ => {
                let mut text = String::new();
                for n in &news {
                    append(&mut text, &n.text);
                }
                pkg.added.push(NewFile {
                    name: rel.to_string_lossy().into_owned(),
                    text,
                    from: None,
                });
            }
        }
    }
    Ok(())
}

/// `Kind name` of a resource written alone (for messages): its first `kind:` and `name:` lines.
fn resource_of(text: &str) -> String {
    let field = |k: &str| {
        text.lines()
            .map(str::trim)
            .find_map(|l| l.strip_prefix(k))
            .map(|v| v.trim().trim_matches(['"', '\'']).to_owned())
            .unwrap_or_default()
    };
    format!("{} {}", field("kind:"), field("name:"))
}

/// Appends a document to a stream's text.
fn append(text: &mut String, doc: &str) {
    if !text.trim().is_empty() {
        if !text.ends_with('\n') {
            text.push('\n');
        }
        if !doc.starts_with("---") {
            text.push_str("---\n");
        }
    } else {
        text.clear();
    }
    text.push_str(doc);
}

/// Says the results at the report's level, each on one line, naming its file where known;
/// `--summary` says the counts whatever the level.
fn say(io: &mut Io<'_>, req: &Request<'_>, results: &[FnResult]) {
    let level = req.report.level;
    for r in results {
        let summary = r.tags.iter().any(|(k, _)| k == "summary");
        let show = match r.severity {
            Severity::Error => true,
            Severity::Warning => level >= Level::Normal,
            Severity::Info => level >= Level::Verbose || (req.summary && summary),
        };
        if !show {
            continue;
        }
        let line = r.to_string();
        match &r.file {
            Some((file, _)) => {
                let sev = r.severity.as_str();
                let rest = line.strip_prefix(sev).unwrap_or(&line);
                io.line(&format!("{sev}: {file}{rest}"));
            }
            None => io.line(&line),
        }
    }
}

#[cfg(test)]
mod tests;
