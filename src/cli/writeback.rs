//! Write-back: the emit stage's file side. Every file the command line writes — `--in-place`,
//! `--output DIR`, `--results FILE`, `diff --added FILE` — is written here, as one transaction
//! with one rule:
//!
//! 1. **Prepare.** Each new file is written to a temporary file beside its target: a short
//!    name (`.krm` and six random characters, so a legal 255-byte name stays rewritable), made
//!    with `O_EXCL`, so it is never a file that exists — never one the run reads. A replaced
//!    file's temporary gets its mode, owner and group (as root, a file owned by 1234:1234 stays
//!    so; a user who cannot give the file its owner back gets an error, not a file that changed
//!    hands). A symbolic link is written through: its target is replaced, the link stays. A file
//!    with more than one hard link is refused (see [`Failed`]): renaming a new file over one name
//!    would split it from its other names, and rewriting its content in place could not be
//!    undone.
//! 2. **Sync** once per file system (`syncfs` on Linux; elsewhere each file is synced as it is
//!    written): the new contents are on disk before any rename makes them visible.
//! 3. **Commit.** The temporaries are renamed into place. A replaced file is swapped with its
//!    temporary (`renameat2(RENAME_EXCHANGE)`), so its old content stays under the temporary
//!    name until the end; a new file is renamed without replacing anything
//!    (`RENAME_NOREPLACE`); a removed file is renamed to a temporary name.
//! 4. **On any failure** — in any step, at any file — the renames already made are undone in
//!    reverse order, every temporary is removed, and the error names the file that failed.
//! 5. **Finish.** The temporaries, which now hold the old contents, are removed, and the
//!    directories synced (again once per file system).
//!
//! The guarantee: after the run every file is old or new, never a part of either; a failure
//! leaves every file old. A crash (power loss, `SIGKILL`) during step 3 is the only window where
//! some files can be new and others old: the old contents are then still in the `.krm*` files
//! beside them. On a file system without `RENAME_EXCHANGE` (NFS) a replaced file is renamed
//! over, which cannot be undone: a rename failing after it leaves the files before it new,
//! and the error says so.
//!
//! `--output DIR` is built the same way in a temporary directory beside `DIR`, synced, and
//! renamed into place: a failure leaves no directory.
//!
//! The file system is reached through [`Fs`], so that the tests can make any step fail.
//!
//! What it must not do: decide what to write (the caller's plan), or read the package.

use std::fmt;
use std::fs::{self, File, Metadata};
use std::io::{self, Write};
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};

use tempfile::{TempDir, TempPath};

/// The prefix of every temporary name: short, hidden, recognisable.
pub const TEMP_PREFIX: &str = ".krm";
/// Random characters after the prefix: 62^6 names, retried on a clash.
const TEMP_RANDOM: usize = 6;

/// One file to write or remove.
#[derive(Clone, Debug)]
pub enum Change<'a> {
    /// `bytes` at `path`: the file there replaced (mode, owner and group kept; a symbolic link
    /// written through), or a new file when there is none.
    Write { path: PathBuf, bytes: &'a [u8] },
    /// A new file at `path`; a file there by the time of the rename is a failure, never
    /// replaced.
    Create { path: PathBuf, bytes: &'a [u8] },
    /// The file at `path` removed (a symbolic link: the link).
    Remove { path: PathBuf },
}

/// One file of a directory `--output` builds.
#[derive(Clone, Debug)]
pub struct OutFile<'a> {
    /// Where it goes, relative to the directory.
    pub rel: PathBuf,
    pub content: Content<'a>,
    /// Its permission bits (the source file's), or the default for a new file.
    pub mode: Option<u32>,
}

/// What an [`OutFile`] holds.
#[derive(Clone, Debug)]
pub enum Content<'a> {
    Bytes(&'a [u8]),
    /// A copy of this file, as it is.
    Copy(PathBuf),
}

/// A write-back that failed: nothing was changed (unless `left` says otherwise).
#[derive(Debug)]
pub struct Failed {
    /// The file at fault.
    pub path: PathBuf,
    /// What could not be done to it: `write`, `replace`, `remove`, ...
    pub what: String,
    pub error: io::Error,
    /// What could not be put back, when an undo failed too (or could not be made): one line
    /// each. Empty: every file is as it was (unless `committed`).
    pub left: Vec<String>,
    /// Every file was written and renamed into place; only the last sync failed.
    pub committed: bool,
}

impl fmt::Display for Failed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}: cannot {}: {}",
            self.path.display(),
            self.what,
            krm_merge::error::io_reason(&self.error)
        )?;
        if self.committed {
            write!(f, "; every file is written, but may not be on disk yet")
        } else if self.left.is_empty() {
            write!(f, "; nothing was written")
        } else {
            write!(f, "; and then {}", self.left.join("; "))
        }
    }
}

fn failed(path: &Path, what: impl Into<String>, error: io::Error) -> Failed {
    Failed {
        path: path.to_path_buf(),
        what: what.into(),
        error,
        left: Vec::new(),
        committed: false,
    }
}

/// The file system as write-back uses it. [`Real`] is the file system; the tests wrap it to make
/// any call fail.
pub trait Fs {
    /// A new empty file in `dir` with a short name no file has, permissions `mode` (less the
    /// umask); open for writing.
    fn temp_file(&self, dir: &Path, mode: u32) -> io::Result<(File, TempPath)>;
    /// A new empty directory beside `target`, permissions 0777 less the umask.
    fn temp_dir(&self, parent: &Path) -> io::Result<TempDir>;
    /// `bytes` into `file`.
    fn write(&self, file: &mut File, bytes: &[u8]) -> io::Result<()>;
    /// The content of the file at `from` into `file`.
    fn copy(&self, from: &Path, file: &mut File) -> io::Result<()>;
    /// `file` given `like`'s owner, group and permission bits.
    fn keep_meta(&self, file: &File, like: &Metadata) -> io::Result<()>;
    /// `file`'s permission bits.
    fn set_mode(&self, file: &File, mode: u32) -> io::Result<()>;
    /// A directory (and its parents).
    fn create_dirs(&self, dir: &Path) -> io::Result<()>;
    /// A new file (it must not exist), permissions 0666 less the umask.
    fn create_file(&self, path: &Path) -> io::Result<File>;
    /// What was written to the files of these directories, on disk.
    fn sync(&self, dirs: &[PathBuf]) -> io::Result<()>;
    /// Swaps two names atomically. `ErrorKind::Unsupported` where the file system cannot.
    fn exchange(&self, a: &Path, b: &Path) -> io::Result<()>;
    /// Renames `from` to `to`, which must not exist.
    fn rename_new(&self, from: &Path, to: &Path) -> io::Result<()>;
    /// Renames `from` over `to`.
    fn rename(&self, from: &Path, to: &Path) -> io::Result<()>;
    fn remove_file(&self, path: &Path) -> io::Result<()>;
}

/// The real file system.
pub struct Real;

fn temp_builder() -> tempfile::Builder<'static, 'static> {
    let mut b = tempfile::Builder::new();
    b.prefix(TEMP_PREFIX).suffix("").rand_bytes(TEMP_RANDOM);
    b
}

impl Fs for Real {
    fn temp_file(&self, dir: &Path, mode: u32) -> io::Result<(File, TempPath)> {
        let t = temp_builder()
            .permissions(fs::Permissions::from_mode(mode))
            .tempfile_in(dir)?;
        Ok(t.into_parts())
    }

    fn temp_dir(&self, parent: &Path) -> io::Result<TempDir> {
        temp_builder()
            .permissions(fs::Permissions::from_mode(0o777))
            .tempdir_in(parent)
    }

    fn write(&self, file: &mut File, bytes: &[u8]) -> io::Result<()> {
        file.write_all(bytes)?;
        sync_each(file)
    }

    fn copy(&self, from: &Path, file: &mut File) -> io::Result<()> {
        io::copy(&mut File::open(from)?, file)?;
        sync_each(file)
    }

    fn keep_meta(&self, file: &File, like: &Metadata) -> io::Result<()> {
        let now = file.metadata()?;
        let owner_differs = (now.uid(), now.gid()) != (like.uid(), like.gid());
        if owner_differs {
            // Before the mode: a change of owner clears the set-user-ID and set-group-ID bits.
            std::os::unix::fs::fchown(file, Some(like.uid()), Some(like.gid()))?;
        }
        // Each change of an inode is a journal entry: none where the file was made right.
        if owner_differs || now.mode() & 0o7777 != like.mode() & 0o7777 {
            file.set_permissions(fs::Permissions::from_mode(like.mode() & 0o7777))?;
        }
        Ok(())
    }

    fn set_mode(&self, file: &File, mode: u32) -> io::Result<()> {
        file.set_permissions(fs::Permissions::from_mode(mode & 0o7777))
    }

    fn create_dirs(&self, dir: &Path) -> io::Result<()> {
        fs::create_dir_all(dir)
    }

    fn create_file(&self, path: &Path) -> io::Result<File> {
        File::options().write(true).create_new(true).open(path)
    }

    fn sync(&self, dirs: &[PathBuf]) -> io::Result<()> {
        sync_file_systems(dirs)
    }

    fn exchange(&self, a: &Path, b: &Path) -> io::Result<()> {
        rename_flags(a, b, Rename::Exchange)
    }

    fn rename_new(&self, from: &Path, to: &Path) -> io::Result<()> {
        match rename_flags(from, to, Rename::NoReplace) {
            // Where the file system cannot, a hard link refuses an existing name too (the
            // temporary's name then stays, and goes with it).
            Err(e) if e.kind() == io::ErrorKind::Unsupported => fs::hard_link(from, to),
            other => other,
        }
    }

    fn rename(&self, from: &Path, to: &Path) -> io::Result<()> {
        fs::rename(from, to)
    }

    fn remove_file(&self, path: &Path) -> io::Result<()> {
        fs::remove_file(path)
    }
}

/// Where one `syncfs` per file system covers every file (Linux), a file is not synced on its
/// own; elsewhere it is, as it is written.
fn sync_each(file: &File) -> io::Result<()> {
    if cfg!(target_os = "linux") {
        Ok(())
    } else {
        file.sync_all()
    }
}

/// Syncs what was written under `dirs`: on Linux one `syncfs` per file system they are on,
/// elsewhere each directory.
fn sync_file_systems(dirs: &[PathBuf]) -> io::Result<()> {
    let mut devices = std::collections::BTreeSet::new();
    for d in dirs {
        let dir = File::open(d)?;
        #[cfg(target_os = "linux")]
        {
            if devices.insert(dir.metadata()?.dev()) {
                rustix::fs::syncfs(&dir)?;
            }
        }
        #[cfg(not(target_os = "linux"))]
        {
            let _ = &mut devices;
            dir.sync_all()?;
        }
    }
    Ok(())
}

enum Rename {
    Exchange,
    NoReplace,
}

#[cfg(any(target_os = "linux", target_os = "android"))]
fn rename_flags(a: &Path, b: &Path, how: Rename) -> io::Result<()> {
    use rustix::fs::{renameat_with, RenameFlags, CWD};
    let flags = match how {
        Rename::Exchange => RenameFlags::EXCHANGE,
        Rename::NoReplace => RenameFlags::NOREPLACE,
    };
    renameat_with(CWD, a, CWD, b, flags).map_err(|e| {
        // EINVAL: the file system does not take the flag; ENOSYS: the kernel does not.
        if e == rustix::io::Errno::INVAL || e == rustix::io::Errno::NOSYS {
            io::Error::new(io::ErrorKind::Unsupported, e)
        } else {
            io::Error::from(e)
        }
    })
}

#[cfg(not(any(target_os = "linux", target_os = "android")))]
fn rename_flags(_: &Path, _: &Path, _: Rename) -> io::Result<()> {
    Err(io::Error::new(
        io::ErrorKind::Unsupported,
        "renameat2 is Linux's",
    ))
}

/// The directory a file is in (`.` for a bare name).
fn dir_of(path: &Path) -> PathBuf {
    match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    }
}

/// A prepared change: the temporary that holds the new content, or the old after the commit.
enum Step {
    Replace { target: PathBuf, temp: TempPath },
    Create { target: PathBuf, temp: TempPath },
    Remove { target: PathBuf, trash: TempPath },
}

impl Step {
    fn target(&self) -> &Path {
        match self {
            Step::Replace { target, .. }
            | Step::Create { target, .. }
            | Step::Remove { target, .. } => target,
        }
    }
}

/// How a committed step is undone.
enum Done {
    /// Swapped: swap again.
    Swapped,
    /// Renamed over the old file (no exchange on this file system): cannot be undone.
    Overwritten,
    /// A new file: remove it.
    Created,
    /// Moved to the trash name: move it back.
    Trashed,
}

/// Writes every change, or none: see the module's documentation. A new file's directories
/// that do not exist are made first, and removed again when the change fails.
pub fn commit(changes: &[Change<'_>], fs: &dyn Fs) -> Result<(), Failed> {
    let mut made: Vec<PathBuf> = Vec::new();
    for c in changes {
        if let Change::Create { path, .. } = c {
            let dir = dir_of(path);
            let missing = missing_ancestors(&dir);
            if missing.is_empty() {
                continue;
            }
            if let Err(e) = fs.create_dirs(&dir) {
                remove_dirs(&made);
                return Err(failed(path, "create its directory", e));
            }
            made.extend(missing);
        }
    }
    let result = commit_in(changes, fs);
    if matches!(&result, Err(f) if !f.committed) {
        remove_dirs(&made);
    }
    result
}

/// Removes directories a failed commit made, innermost first (each only if empty).
fn remove_dirs(made: &[PathBuf]) {
    let mut dirs: Vec<&PathBuf> = made.iter().collect();
    dirs.sort_by_key(|d| std::cmp::Reverse(d.components().count()));
    for d in dirs {
        let _ = fs::remove_dir(d);
    }
}

fn commit_in(changes: &[Change<'_>], fs: &dyn Fs) -> Result<(), Failed> {
    let Some(first) = changes.first() else {
        return Ok(());
    };
    let mut steps = Vec::with_capacity(changes.len());
    for c in changes {
        steps.push(prepare(c, fs)?);
    }
    // A failure from here on drops `steps`, which removes every temporary.
    let mut dirs: Vec<PathBuf> = steps.iter().map(|s| dir_of(s.target())).collect();
    dirs.sort();
    dirs.dedup();
    let first = match first {
        Change::Write { path, .. } | Change::Create { path, .. } | Change::Remove { path } => path,
    };
    fs.sync(&dirs)
        .map_err(|e| failed(first, "sync the new files", e))?;
    let mut done: Vec<Done> = Vec::with_capacity(steps.len());
    for step in &steps {
        match commit_one(step, fs) {
            Ok(d) => done.push(d),
            Err((what, e)) => {
                let mut f = failed(step.target(), what, e);
                f.left = undo(&steps, &done, fs);
                return Err(f);
            }
        }
    }
    // The temporaries hold the old contents and the removed files: dropped, they go.
    drop(steps);
    fs.sync(&dirs).map_err(|e| Failed {
        committed: true,
        ..failed(first, "sync the directories", e)
    })
}

/// Writes one file, as a transaction of one change: `Write` (replace or create).
pub fn write_file(path: &Path, bytes: &[u8]) -> Result<(), Failed> {
    commit(
        &[Change::Write {
            path: path.to_path_buf(),
            bytes,
        }],
        &Real,
    )
}

fn prepare(change: &Change<'_>, fs: &dyn Fs) -> Result<Step, Failed> {
    match change {
        Change::Write { path, bytes } => {
            // A symbolic link is written through: its target is what is replaced.
            let target = match fs::canonicalize(path) {
                Ok(t) => t,
                Err(e) if e.kind() == io::ErrorKind::NotFound => path.clone(),
                Err(e) => return Err(failed(path, "write", e)),
            };
            match fs::metadata(&target) {
                Ok(meta) => replace(path, target, &meta, bytes, fs),
                Err(e) if e.kind() == io::ErrorKind::NotFound => create(path, bytes, fs),
                Err(e) => Err(failed(path, "write", e)),
            }
        }
        Change::Create { path, bytes } => create(path, bytes, fs),
        Change::Remove { path } => {
            fs::symlink_metadata(path).map_err(|e| failed(path, "remove", e))?;
            let (_, trash) = fs
                .temp_file(&dir_of(path), 0o600)
                .map_err(|e| failed(path, "remove (a temporary file beside it)", e))?;
            Ok(Step::Remove {
                target: path.clone(),
                trash,
            })
        }
    }
}

fn replace(
    shown: &Path,
    target: PathBuf,
    meta: &Metadata,
    bytes: &[u8],
    fs: &dyn Fs,
) -> Result<Step, Failed> {
    if !meta.is_file() {
        return Err(failed(
            shown,
            "write",
            io::Error::other("not a regular file"),
        ));
    }
    if meta.nlink() > 1 {
        return Err(failed(
            shown,
            "write",
            io::Error::other(format!(
                "it has {} hard links, and replacing it would split it from its other names \
                 (krm-merge replaces a file by renaming a new one over it); refused",
                meta.nlink()
            )),
        ));
    }
    // Made with the file's permission bits (less the umask; set exactly after): most often
    // nothing is left to change.
    let (mut file, temp) = fs
        .temp_file(&dir_of(&target), meta.mode() & 0o777)
        .map_err(|e| failed(shown, "write (a temporary file beside it)", e))?;
    fs.write(&mut file, bytes)
        .and_then(|()| fs.keep_meta(&file, meta))
        .map_err(|e| failed(shown, "write", e))?;
    Ok(Step::Replace { target, temp })
}

fn create(path: &Path, bytes: &[u8], fs: &dyn Fs) -> Result<Step, Failed> {
    let (mut file, temp) = fs
        .temp_file(&dir_of(path), 0o666)
        .map_err(|e| failed(path, "create (a temporary file beside it)", e))?;
    fs.write(&mut file, bytes)
        .map_err(|e| failed(path, "create", e))?;
    Ok(Step::Create {
        target: path.to_path_buf(),
        temp,
    })
}

fn commit_one(step: &Step, fs: &dyn Fs) -> Result<Done, (&'static str, io::Error)> {
    match step {
        Step::Replace { target, temp } => match fs.exchange(temp, target) {
            Ok(()) => Ok(Done::Swapped),
            Err(e) if e.kind() == io::ErrorKind::Unsupported => fs
                .rename(temp, target)
                .map(|()| Done::Overwritten)
                .map_err(|e| ("replace", e)),
            Err(e) => Err(("replace", e)),
        },
        Step::Create { target, temp } => fs
            .rename_new(temp, target)
            .map(|()| Done::Created)
            .map_err(|e| ("create", e)),
        Step::Remove { target, trash } => fs
            .rename(target, trash)
            .map(|()| Done::Trashed)
            .map_err(|e| ("remove", e)),
    }
}

/// Undoes the committed steps (`done`, the first of `steps`), last first. Returns what could not
/// be put back.
fn undo(steps: &[Step], done: &[Done], fs: &dyn Fs) -> Vec<String> {
    let mut left = Vec::new();
    for (step, d) in steps.iter().zip(done).rev() {
        let r = match (step, d) {
            (Step::Replace { target, temp }, Done::Swapped) => fs.exchange(temp, target),
            (Step::Replace { target, .. }, Done::Overwritten) => {
                left.push(format!(
                    "{} was already replaced (this file system cannot swap files, so it cannot \
                     be put back)",
                    target.display()
                ));
                continue;
            }
            (Step::Create { target, .. }, Done::Created) => fs.remove_file(target),
            (Step::Remove { target, trash }, Done::Trashed) => fs.rename(trash, target),
            _ => continue,
        };
        if let Err(e) = r {
            left.push(format!(
                "{} could not be put back ({})",
                step.target().display(),
                krm_merge::error::io_reason(&e)
            ));
        }
    }
    left
}

/// Builds directory `dir` (new, or empty) with `files`: in a temporary directory beside it,
/// synced, renamed into place. A failure leaves no directory (and removes the parents it made).
pub fn build_dir(dir: &Path, files: &[OutFile<'_>], fs: &dyn Fs) -> Result<(), Failed> {
    let parent = dir_of(dir);
    let made = missing_ancestors(&parent);
    let result = build_dir_in(dir, &parent, files, fs);
    if result.is_err() {
        for d in made.iter().rev() {
            let _ = fs::remove_dir(d);
        }
    }
    result
}

/// The directories of `dir` and above that do not exist, outermost first.
fn missing_ancestors(dir: &Path) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = dir
        .ancestors()
        .filter(|d| !d.as_os_str().is_empty())
        .take_while(|d| fs::symlink_metadata(d).is_err())
        .map(Path::to_path_buf)
        .collect();
    out.reverse();
    out
}

fn build_dir_in(
    dir: &Path,
    parent: &Path,
    files: &[OutFile<'_>],
    fs: &dyn Fs,
) -> Result<(), Failed> {
    fs.create_dirs(parent)
        .map_err(|e| failed(parent, "create the directory", e))?;
    let existing = fs::metadata(dir).ok();
    let temp = fs
        .temp_dir(parent)
        .map_err(|e| failed(dir, "create (a temporary directory beside it)", e))?;
    for f in files {
        let path = temp.path().join(&f.rel);
        let shown = dir.join(&f.rel);
        if let Some(d) = path.parent() {
            fs.create_dirs(d)
                .map_err(|e| failed(&shown, "create its directory", e))?;
        }
        let mut file = fs
            .create_file(&path)
            .map_err(|e| failed(&shown, "create", e))?;
        match &f.content {
            Content::Bytes(b) => fs.write(&mut file, b),
            Content::Copy(from) => fs.copy(from, &mut file),
        }
        .and_then(|()| f.mode.map_or(Ok(()), |m| fs.set_mode(&file, m)))
        .map_err(|e| failed(&shown, "write", e))?;
    }
    if let Some(meta) = &existing {
        // The empty directory given keeps its mode, owner and group.
        let top = File::open(temp.path()).and_then(|t| fs.keep_meta(&t, meta));
        top.map_err(|e| failed(dir, "write", e))?;
    }
    fs.sync(&[temp.path().to_path_buf()])
        .map_err(|e| failed(dir, "sync the new files", e))?;
    let renamed = if existing.is_some() {
        // Over the empty directory (a directory that filled since is `ENOTEMPTY`).
        fs.rename(temp.path(), dir)
    } else {
        fs.rename_new(temp.path(), dir)
    };
    renamed.map_err(|e| failed(dir, "create", e))?;
    // Renamed: nothing is left at the temporary's name for the drop to remove.
    let _ = temp.keep();
    fs.sync(&[parent.to_path_buf()]).map_err(|e| Failed {
        committed: true,
        ..failed(dir, "sync", e)
    })
}

/// The longest file name the file system that holds `dir` takes (255 where it does not say).
pub fn name_max(dir: &Path) -> usize {
    let mut at = dir;
    // The directory may not exist yet: ask the nearest one that does.
    loop {
        if let Ok(v) = rustix::fs::statvfs(at) {
            return usize::try_from(v.f_namemax).unwrap_or(255).max(16);
        }
        match at.parent() {
            Some(p) if !p.as_os_str().is_empty() => at = p,
            _ => return 255,
        }
    }
}

/// `name` fitted to `max` bytes: as it is when it fits, else cut (at a character boundary) and
/// given `-` and a stable hash of the whole name (16 hexadecimal digits) before its extension.
pub fn fit_name(name: &str, max: usize) -> String {
    if name.len() <= max {
        return name.to_owned();
    }
    let (stem, ext) = match name.rsplit_once('.') {
        Some((s, e)) if !s.is_empty() && e.len() <= 16 => (s, format!(".{e}")),
        _ => (name, String::new()),
    };
    let hash = format!("-{:016x}", fnv1a(name.as_bytes()));
    let room = max.saturating_sub(hash.len() + ext.len());
    let mut cut = room.min(stem.len());
    while !stem.is_char_boundary(cut) {
        cut -= 1;
    }
    format!("{}{hash}{ext}", &stem[..cut])
}

/// FNV-1a, 64 bits: stable across runs, versions and platforms.
fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}

/// Whether a name is one of write-back's temporaries.
#[cfg(test)]
pub fn is_temp_name(name: &std::ffi::OsStr) -> bool {
    name.to_str()
        .is_some_and(|n| n.len() == TEMP_PREFIX.len() + TEMP_RANDOM && n.starts_with(TEMP_PREFIX))
}

#[cfg(test)]
mod tests;
#[cfg(test)]
pub use tests::{tree, Failing};
