//! Which files of a directory make the package, as kpt reads one (doc/GUIDE.md "Reading a
//! directory"): `*.yaml`, `*.yml`, `*.json` and `Kptfile`, recursively, in name order,
//! subpackages included; `.krmignore` honoured at the package's top and at each subpackage's
//! (a directory holding a `Kptfile`), its patterns covering only that package.
//!
//! Unlike kpt: files and directories whose names start with `.` are not read as resources
//! (`.git`, `.github`, kpt's `.expected`); `kustomization.yaml`, `kustomization.yml` and
//! `Kustomization` are kustomize's build files, not resources; the functionConfig file itself is
//! not read. Every other regular file of the package — those, the files `.krmignore` leaves out,
//! files of other names, dot files and the files of dot directories (but for `.git`, a
//! repository's store) — is [`Found::Other`]: not read, copied as it is by `--output`; those are
//! listed only when `--output` asks (otherwise dot directories and ignored directories are not
//! walked, as before). Nothing
//! that is not a regular file is ever opened: a FIFO, a socket or a device is skipped with a
//! warning that says what it is. Symbolic links are followed, but a directory is read once (a
//! link back to a parent, or two links to one directory, is skipped with a warning), and so is
//! a file of resources. A name the walk cannot look at (no permission to search its directory,
//! a path longer than the system takes) is an error, like a directory that cannot be listed:
//! never a package with files missing.
//!
//! What it must not do: read a file's content (only `.krmignore`s), or parse YAML.

use std::collections::HashMap;
use std::fs;
use std::os::unix::fs::{FileTypeExt, MetadataExt};
use std::path::{Path, PathBuf};

use super::files::{file_error, INPUT};

/// A file or directory, by device and inode: the same one through any link.
pub type FileKey = (u64, u64);

/// The key of a file's metadata.
pub fn key(meta: &fs::Metadata) -> FileKey {
    (meta.dev(), meta.ino())
}

/// What the walk found.
#[derive(Debug, PartialEq, Eq)]
pub enum Found {
    /// A file to read resources from; `kptfile`: it is a package's `Kptfile`.
    Resources {
        path: PathBuf,
        rel: PathBuf,
        kptfile: bool,
        /// The file, as the walk looked at it (no second look needed to compare it).
        key: FileKey,
    },
    /// Any other regular file of the package: not read as resources, copied as it is by
    /// `--output`.
    Other { path: PathBuf, rel: PathBuf },
}

/// The walk of one directory: its files, and what it skipped and why.
#[derive(Debug, Default)]
pub struct Walk {
    pub found: Vec<Found>,
    /// One line each, naming the path: skipped special files, links to what was already read.
    pub warnings: Vec<String>,
    /// Skipped on purpose (the functionConfig file), for `-v`.
    pub notes: Vec<String>,
}

/// Walks `root`. `seen` holds the files of resources and the directories already read (by this
/// walk and by the arguments before it), `config` the functionConfig file's key; `looked_at`
/// gets every directory and file the walk lists or reads (the package, for the check that
/// nothing written is one of them). `Err`: a directory that cannot be listed, a name that
/// cannot be looked at, or a `.krmignore` that cannot be read.
pub fn walk(
    root: &Path,
    seen: &mut HashMap<FileKey, PathBuf>,
    looked_at: &mut HashMap<FileKey, PathBuf>,
    config: Option<FileKey>,
    others: bool,
) -> Result<Walk, String> {
    let mut w = Walker {
        seen,
        looked_at,
        config,
        others,
        out: Walk::default(),
    };
    let meta = fs::metadata(root).map_err(|e| file_error(INPUT, root, &e))?;
    w.looked_at
        .entry(key(&meta))
        .or_insert_with(|| root.to_path_buf());
    if let Some(first) = w.seen.get(&key(&meta)) {
        w.out.warnings.push(format!(
            "{}: the directory {} already read; skipped",
            root.display(),
            first.display()
        ));
        return Ok(w.out);
    }
    w.seen.insert(key(&meta), root.to_path_buf());
    let ignore = w.ignore_of(root)?;
    w.dir(root, Path::new(""), &[(PathBuf::new(), ignore)], false)?;
    Ok(w.out)
}

struct Walker<'a> {
    seen: &'a mut HashMap<FileKey, PathBuf>,
    looked_at: &'a mut HashMap<FileKey, PathBuf>,
    config: Option<FileKey>,
    /// List the files that are not resources ([`Found::Other`]), for `--output`; without it,
    /// dot directories and the directories `.krmignore` leaves out are not walked at all.
    others: bool,
    out: Walk,
}

impl Walker<'_> {
    /// The `.krmignore` of directory `dir`, noted as read.
    fn ignore_of(&mut self, dir: &Path) -> Result<Ignore, String> {
        let path = dir.join(".krmignore");
        if let Ok(m) = fs::metadata(&path) {
            self.looked_at
                .entry(key(&m))
                .or_insert_with(|| path.clone());
        }
        Ignore::read(&path)
    }

    /// Reads directory `dir` (`rel` from the root). `ignores`: the `.krmignore` of the package
    /// `dir` is in, with the package's directory relative to the root (the last one applies).
    /// `hidden`: `dir` is a dot directory, or in one: its files are only copied.
    fn dir(
        &mut self,
        dir: &Path,
        rel: &Path,
        ignores: &[(PathBuf, Ignore)],
        hidden: bool,
    ) -> Result<(), String> {
        let mut names: Vec<std::ffi::OsString> = fs::read_dir(dir)
            .map_err(|e| file_error(INPUT, dir, &e))?
            .map(|e| e.map(|e| e.file_name()))
            .collect::<Result<_, _>>()
            .map_err(|e| file_error(INPUT, dir, &e))?;
        names.sort();
        for name in names {
            let name_str = name.to_str();
            let dot = name_str.is_none_or(|n| n.starts_with('.'));
            if name == ".git" || (dot && !self.others) {
                if name_str.is_none() {
                    self.out.warnings.push(format!(
                        "{}: a name that is not UTF-8; skipped",
                        dir.join(&name).display()
                    ));
                }
                continue;
            }
            let path = dir.join(&name);
            let rel = rel.join(&name);
            let meta = match fs::metadata(&path) {
                Ok(m) => m,
                Err(e) => {
                    if fs::symlink_metadata(&path).is_ok_and(|m| m.file_type().is_symlink()) {
                        self.out.warnings.push(format!(
                            "{}: a broken symbolic link; skipped",
                            path.display()
                        ));
                        continue;
                    }
                    return Err(file_error(INPUT, &path, &e));
                }
            };
            if name_str.is_none() && !hidden {
                self.out.warnings.push(format!(
                    "{}: a name that is not UTF-8; not read as resources",
                    path.display()
                ));
            }
            let (pkg_dir, ignore) = ignores
                .last()
                .map(|(d, i)| (d.as_path(), Some(i)))
                .unwrap_or((Path::new(""), None));
            let in_pkg = rel.strip_prefix(pkg_dir).unwrap_or(&rel);
            if meta.is_dir() {
                let subpackage = !hidden && !dot && path.join("Kptfile").is_file();
                // A pattern cannot ignore a subpackage (kpt); an ignored directory's files are
                // only copied (or, when nothing is copied, not walked).
                let ignored = !subpackage && ignore.is_some_and(|i| i.ignores(in_pkg, true));
                if ignored && !self.others {
                    continue;
                }
                self.looked_at
                    .entry(key(&meta))
                    .or_insert_with(|| path.clone());
                if let Some(first) = self.seen.get(&key(&meta)) {
                    self.out.warnings.push(format!(
                        "{}: a link to the directory {}, already read; skipped",
                        path.display(),
                        first.display()
                    ));
                    continue;
                }
                self.seen.insert(key(&meta), path.clone());
                if subpackage {
                    let mut inner = ignores.to_vec();
                    inner.push((rel.clone(), self.ignore_of(&path)?));
                    self.dir(&path, &rel, &inner, false)?;
                } else {
                    self.dir(&path, &rel, ignores, hidden || dot || ignored)?;
                }
                continue;
            }
            if let Some(what) = special(&meta) {
                self.out.warnings.push(format!(
                    "{}: {what}, not a regular file; skipped",
                    path.display()
                ));
                continue;
            }
            self.looked_at
                .entry(key(&meta))
                .or_insert_with(|| path.clone());
            let name_str = name_str.unwrap_or_default();
            let kptfile = name_str == "Kptfile";
            let kustomization = matches!(
                name_str,
                "kustomization.yaml" | "kustomization.yml" | "Kustomization"
            );
            let resource_name = kptfile
                || [".yaml", ".yml", ".json"]
                    .iter()
                    .any(|x| name_str.ends_with(x));
            let resources = !hidden
                && !dot
                && resource_name
                && !kustomization
                && !ignore.is_some_and(|i| i.ignores(in_pkg, false));
            if !resources {
                if self.others {
                    self.out.found.push(Found::Other { path, rel });
                }
                continue;
            }
            if Some(key(&meta)) == self.config {
                self.out.notes.push(format!(
                    "{}: the functionConfig file; skipped",
                    path.display()
                ));
                if self.others {
                    self.out.found.push(Found::Other { path, rel });
                }
                continue;
            }
            if let Some(first) = self.seen.get(&key(&meta)) {
                self.out.warnings.push(format!(
                    "{}: the same file as {} (a link); read once",
                    path.display(),
                    first.display()
                ));
                continue;
            }
            self.seen.insert(key(&meta), path.clone());
            let key = key(&meta);
            self.out.found.push(Found::Resources {
                path,
                rel,
                kptfile,
                key,
            });
        }
        Ok(())
    }
}

/// What a file that is not a regular file is, in words; `None` for a regular file.
pub fn special(meta: &fs::Metadata) -> Option<&'static str> {
    let t = meta.file_type();
    if t.is_file() {
        None
    } else if t.is_dir() {
        Some("a directory")
    } else if t.is_fifo() {
        Some("a FIFO (named pipe)")
    } else if t.is_socket() {
        Some("a socket")
    } else if t.is_char_device() {
        Some("a character device")
    } else if t.is_block_device() {
        Some("a block device")
    } else {
        Some("not a regular file")
    }
}

/// The patterns of a `.krmignore`: gitignore's syntax, matched by the `ignore` crate's gitignore
/// matcher (git's own rules: blank lines and `#` comments skipped, `!` negates, a trailing `/`
/// matches directories only, a pattern with a `/` elsewhere is anchored at the file's
/// directory, one without matches a name at any depth, `*`, `?` and `[...]` do not match `/`,
/// `**` does; the last pattern that matches decides).
#[derive(Clone, Debug)]
pub struct Ignore {
    matcher: ignore::gitignore::Gitignore,
}

impl Default for Ignore {
    fn default() -> Self {
        Ignore {
            matcher: ignore::gitignore::Gitignore::empty(),
        }
    }
}

impl Ignore {
    /// The `.krmignore` at `path`; no file is no pattern.
    fn read(path: &Path) -> Result<Ignore, String> {
        match fs::read_to_string(path) {
            Ok(text) => Ignore::parse(&text).map_err(|e| format!("{}: {e}", path.display())),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Ignore::default()),
            Err(e) => Err(file_error("", path, &e)),
        }
    }

    /// Reads patterns; `Err` names the line of a pattern that cannot be used.
    pub fn parse(text: &str) -> Result<Ignore, String> {
        // Paths are matched relative to the `.krmignore`'s directory, given as relative paths.
        let mut b = ignore::gitignore::GitignoreBuilder::new("");
        for (n, line) in text.lines().enumerate() {
            b.add_line(None, line)
                .map_err(|e| format!("line {}: {e}", n + 1))?;
        }
        let matcher = b.build().map_err(|e| e.to_string())?;
        Ok(Ignore { matcher })
    }

    /// Whether `rel` (relative to the `.krmignore`'s directory) is ignored.
    pub fn ignores(&self, rel: &Path, is_dir: bool) -> bool {
        self.matcher.matched(rel, is_dir).is_ignore()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ignores(patterns: &str, path: &str, dir: bool) -> bool {
        Ignore::parse(patterns)
            .unwrap()
            .ignores(Path::new(path), dir)
    }

    #[test]
    fn krmignore_patterns() {
        assert!(ignores("*.json", "a.json", false));
        assert!(ignores("*.json", "sub/a.json", false));
        assert!(!ignores("/*.json", "sub/a.json", false));
        assert!(ignores("/*.json", "a.json", false));
        assert!(ignores("tests/", "tests", true));
        assert!(!ignores("tests/", "tests", false));
        assert!(ignores("sub/x.yaml", "sub/x.yaml", false));
        assert!(!ignores("sub/x.yaml", "other/sub/x.yaml", false));
        assert!(ignores("**/gen", "a/b/gen", true));
        assert!(ignores("a/**/c.yaml", "a/b/d/c.yaml", false));
        assert!(ignores("a/**/c.yaml", "a/c.yaml", false));
        assert!(!ignores("*.yaml\n!keep.yaml", "keep.yaml", false));
        assert!(ignores("*.yaml\n!keep.yaml", "drop.yaml", false));
        assert!(ignores("[ab].yaml", "a.yaml", false));
        assert!(!ignores("[!ab].yaml", "a.yaml", false));
        assert!(ignores("?.yaml", "c.yaml", false));
        assert!(!ignores("# comment\n\n", "x", false));
        assert!(ignores("\\#x.yaml", "#x.yaml", false));
    }
}
