//! The package after the run, as files: what `--in-place` changes, what `--output DIR` holds,
//! what `--diff` and `--check` show. All of them name a file the same way, and a new file gets
//! the same path in each: a resource a merge3 update adds is `<kind>_<name>.yaml` in the first
//! directory given, its name fitted to the file system's limit with a stable hash
//! ([`NewNames::Made`]), or, for `merge3` of two directories, at the path it has upstream
//! ([`NewNames::Upstream`]).
//!
//! What it must not do: write (that is [`super::writeback`]'s), or decide exit codes.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use krm_merge::run::package::{FileOutput, PackageOutput};

use super::files::Inputs;
use super::out;
use super::writeback::{self, Change, Content, OutFile};

/// How the files a run adds ([`PackageOutput::added`]) are named.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NewNames {
    /// Each is a name made from its resource: taken as it fits the file system, or with `-2`,
    /// `-3`... when a file has it already.
    Made,
    /// Each is a path relative to the package's directory (the resource's upstream file),
    /// taken as it is; the caller made sure no file is there.
    Upstream,
}

/// The name a file is shown by in diffs and messages.
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

/// The new files' paths for `--in-place`, `--diff` and `--check`: in the directory of
/// [`new_file_dir`], never over a file that exists, each name fitted to the file system.
fn new_file_paths(read: &Inputs, pkg: &PackageOutput, names: NewNames) -> Vec<PathBuf> {
    let dir = new_file_dir(read);
    if names == NewNames::Upstream {
        return pkg.added.iter().map(|n| dir.join(&n.name)).collect();
    }
    let max = writeback::name_max(&dir);
    let mut taken: BTreeSet<PathBuf> = BTreeSet::new();
    pkg.added
        .iter()
        .map(|n| {
            let (stem, ext) = n.name.rsplit_once('.').unwrap_or((&n.name, "yaml"));
            let mut path = dir.join(writeback::fit_name(&n.name, max));
            let mut k = 2;
            while path.exists() || taken.contains(&path) {
                path = dir.join(writeback::fit_name(&format!("{stem}-{k}.{ext}"), max));
                k += 1;
            }
            taken.insert(path.clone());
            path
        })
        .collect()
}

/// Each file that would change, and how: `changed`, `removed` or `created`.
pub fn changes(read: &Inputs, pkg: &PackageOutput, names: NewNames) -> Vec<(String, &'static str)> {
    let mut out = Vec::new();
    for (i, f) in pkg.files.iter().enumerate() {
        match f {
            FileOutput::Changed(_) => out.push((shown(read, i), "changed")),
            FileOutput::Emptied(_) => out.push((shown(read, i), "removed")),
            FileOutput::Unchanged | FileOutput::NotResources => {}
        }
    }
    for p in new_file_paths(read, pkg, names) {
        out.push((p.display().to_string(), "created"));
    }
    out
}

/// `--diff`: every change as a unified diff, file by file.
pub fn unified_diffs(read: &Inputs, pkg: &PackageOutput, names: NewNames) -> String {
    let mut text = String::new();
    for (i, f) in pkg.files.iter().enumerate() {
        let before = read.sources.get(i).map(|s| s.text.as_str());
        let name = shown(read, i);
        match f {
            FileOutput::Changed(after) => {
                text.push_str(&out::unified_diff(&name, before, Some(after)))
            }
            FileOutput::Emptied(_) => text.push_str(&out::unified_diff(&name, before, None)),
            FileOutput::Unchanged | FileOutput::NotResources => {}
        }
    }
    for (path, new) in new_file_paths(read, pkg, names).iter().zip(&pkg.added) {
        text.push_str(&out::unified_diff(
            &path.display().to_string(),
            None,
            Some(&new.text),
        ));
    }
    text
}

/// `--in-place`: each changed file rewritten, each emptied file removed, each new resource in a
/// file of its own; unchanged files are not touched.
pub fn in_place<'p>(read: &Inputs, pkg: &'p PackageOutput, names: NewNames) -> Vec<Change<'p>> {
    let mut changes = Vec::new();
    for (f, file) in pkg.files.iter().zip(&read.files) {
        let Some(path) = &file.path else { continue };
        match f {
            FileOutput::Changed(text) => changes.push(Change::Write {
                path: path.clone(),
                bytes: text.as_bytes(),
            }),
            FileOutput::Emptied(_) => changes.push(Change::Remove { path: path.clone() }),
            FileOutput::Unchanged | FileOutput::NotResources => {}
        }
    }
    for (path, new) in new_file_paths(read, pkg, names).into_iter().zip(&pkg.added) {
        changes.push(Change::Create {
            path,
            bytes: new.text.as_bytes(),
        });
    }
    changes
}

/// `--output DIR`: the whole package after the change. Every file read, at its place under DIR
/// (patched, or as it is), every other file of the directories read as it is (see
/// [`super::walk`]), and the new resources; none of an emptied file. Each keeps its source's
/// permission bits. `Err`: two files would go to one place.
pub fn output<'p>(
    dir: &Path,
    read: &'p Inputs,
    pkg: &'p PackageOutput,
    names: NewNames,
) -> Result<Vec<OutFile<'p>>, String> {
    let mode = |p: &Path| {
        std::fs::metadata(p)
            .ok()
            .map(|m| std::os::unix::fs::PermissionsExt::mode(&m.permissions()))
    };
    let mut files: Vec<OutFile<'p>> = Vec::new();
    for (i, file) in read.files.iter().enumerate() {
        let text = match pkg.files.get(i) {
            Some(FileOutput::NotResources) => read.sources.get(i).map(|s| s.text.as_str()),
            _ => pkg.text_of(&read.sources, i),
        };
        if let Some(t) = text {
            files.push(OutFile {
                rel: file.rel.clone(),
                content: Content::Bytes(t.as_bytes()),
                mode: file.path.as_deref().and_then(mode),
            });
        }
    }
    for (path, rel) in &read.others {
        files.push(OutFile {
            rel: rel.clone(),
            content: Content::Copy(path.clone()),
            mode: mode(path),
        });
    }
    let max = writeback::name_max(dir);
    for (n, new) in pkg.added.iter().enumerate() {
        if names == NewNames::Upstream {
            files.push(OutFile {
                rel: PathBuf::from(&new.name),
                content: Content::Bytes(new.text.as_bytes()),
                mode: None,
            });
            continue;
        }
        let mut rel = PathBuf::from(writeback::fit_name(&new.name, max));
        if files.iter().any(|f| f.rel == rel) {
            rel = PathBuf::from(writeback::fit_name(&format!("{n}-{}", new.name), max));
        }
        files.push(OutFile {
            rel,
            content: Content::Bytes(new.text.as_bytes()),
            mode: None,
        });
    }
    let mut seen = BTreeSet::new();
    for f in &files {
        if !seen.insert(&f.rel) {
            return Err(format!(
                "--output: two inputs would both be written to {}",
                dir.join(&f.rel).display()
            ));
        }
    }
    Ok(files)
}
