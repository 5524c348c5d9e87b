//! Files and stdin in: the bytes the command line reads before the library sees text, and the
//! set of files the standalone filter reads (each path as the user gave it, a directory as kpt
//! reads a package: [`super::walk`]).
//!
//! **Bounded.** Everything read is held in memory, so the input (stdin and every file
//! together) may hold at most [`MAX_INPUT`] bytes, and a functionConfig file
//! [`MAX_CONFIG`]: a file's size is known before it is read, stdin is read in steps, and memory
//! is reserved fallibly, so input too large to hold ends in an error naming it, never in an
//! allocation failure. **Only regular files** are opened, except a pipe the user names
//! (`<(command)`), read like stdin; a socket or a device is refused, saying what it is. **Each
//! file once**, however many paths lead to it.
//!
//! What it must not do: parse resources or apply anything; it reads, checks that bytes are
//! text, and says which file or argument failed.

use std::collections::HashMap;
use std::fs;
use std::io::Read;
use std::path::{Path, PathBuf};

use krm_merge::config::{self, ConfigForm, LoadRestrictor, Plan};
use krm_merge::error::{io_reason, NotUtf8};
use krm_merge::krm::{FnResult, Severity};
use krm_merge::run::package::SourceFile;
use krm_merge::select::identity::Id;

use super::args::Source;
use super::walk::{self, FileKey, Found};

/// The most the input (stdin and all files together) may hold: 1 GiB.
pub const MAX_INPUT: u64 = 1 << 30;
/// The most a functionConfig file may hold: 64 MiB, as a `path:` patch file.
pub const MAX_CONFIG: u64 = 64 << 20;

/// How messages name a file of resources given on the command line (see [`file_error`]).
pub const INPUT: &str = "input";
/// How messages name the functionConfig file.
pub const CONFIG: &str = "config";

/// Why input could not be read.
#[derive(Debug)]
pub enum ReadFailure {
    /// A path that does not lead to something readable (missing, a socket, no permission): a
    /// usage error.
    Usage(String),
    /// It was read, but is not text or is too large: an error.
    Error(String),
    /// The bytes are not UTF-8 (KRM mode gives them back in its error ResourceList).
    NotText(NotUtf8),
}

impl ReadFailure {
    pub fn message(&self) -> String {
        match self {
            ReadFailure::Usage(m) | ReadFailure::Error(m) => m.clone(),
            ReadFailure::NotText(e) => e.to_string(),
        }
    }
}

/// How much more input may be read.
pub struct Budget {
    left: u64,
    max: u64,
}

impl Budget {
    pub fn new(max: u64) -> Budget {
        Budget { left: max, max }
    }

    fn take(&mut self, n: u64, what: &str) -> Result<(), ReadFailure> {
        if n > self.left {
            return Err(ReadFailure::Error(format!(
                "{what}: too large: the input may hold at most {} in all (krm-merge holds it in memory)",
                human(self.max)
            )));
        }
        self.left -= n;
        Ok(())
    }
}

fn human(n: u64) -> String {
    if n >= 1 << 30 && n % (1 << 30) == 0 {
        format!("{} GiB", n >> 30)
    } else if n >= 1 << 20 && n % (1 << 20) == 0 {
        format!("{} MiB", n >> 20)
    } else {
        format!("{n} bytes")
    }
}

/// Reads from `r` to its end, within the budget, reserving memory fallibly. `hint`: the size
/// expected (a file's), so that one reservation does.
fn read_bounded(
    r: &mut dyn Read,
    (what, io_what): (&str, &str),
    hint: u64,
    budget: &mut Budget,
) -> Result<Vec<u8>, ReadFailure> {
    const STEP: usize = 1 << 20;
    let mut buf: Vec<u8> = Vec::new();
    let first = usize::try_from(hint.min(budget.left)).unwrap_or(usize::MAX);
    reserve(&mut buf, first.saturating_add(1), what)?;
    loop {
        if buf.len() == buf.capacity() {
            let more = buf.len().clamp(STEP, 64 * STEP);
            reserve(&mut buf, more, what)?;
        }
        // Up to the room reserved, into memory not written before (filling it with zeros first
        // would cost as much as the read); fewer bytes than that room means the end.
        let room = buf.capacity() - buf.len();
        let limit = u64::try_from(room).unwrap_or(u64::MAX);
        let got = (&mut *r).take(limit).read_to_end(&mut buf).map_err(|e| {
            ReadFailure::Usage(format!("{io_what}: cannot read: {}", io_reason(&e)))
        })?;
        budget.take(u64::try_from(got).unwrap_or(u64::MAX), what)?;
        if got < room {
            return Ok(buf);
        }
    }
}

fn reserve(buf: &mut Vec<u8>, n: usize, what: &str) -> Result<(), ReadFailure> {
    buf.try_reserve(n)
        .map_err(|_| ReadFailure::Error(format!("{what}: cannot hold {} more bytes in memory", n)))
}

fn text(bytes: Vec<u8>, what: &str) -> Result<String, ReadFailure> {
    NotUtf8::check(bytes, what).map_err(|(e, _)| ReadFailure::NotText(e))
}

/// Reads all of stdin as text.
pub fn read_stdin(stdin: &mut dyn Read, budget: &mut Budget) -> Result<String, ReadFailure> {
    let bytes = read_bounded(stdin, ("stdin", "stdin"), 0, budget)?;
    text(bytes, "stdin")
}

/// A file's text, within the budget. A pipe is read like stdin; anything else that is not a
/// regular file is refused, saying what it is. `role` says which file it is in messages
/// (`config`, `input`: see [`file_error`]).
pub fn read_file(role: &str, path: &Path, budget: &mut Budget) -> Result<String, ReadFailure> {
    // What the file holds is said of the file (`x.yaml: invalid UTF-8 ...`, as a resource's
    // malformed YAML is); what the system says of it, of the file in its role.
    let what = path.display().to_string();
    let meta = fs::metadata(path).map_err(|e| ReadFailure::Usage(file_error(role, path, &e)))?;
    let fifo = std::os::unix::fs::FileTypeExt::is_fifo(&meta.file_type());
    if let Some(kind) = walk::special(&meta).filter(|_| !fifo) {
        return Err(ReadFailure::Usage(format!(
            "{}: {kind}, not a file of resources",
            named(role, path)
        )));
    }
    if !fifo {
        budget.take(meta.len(), &what)?;
    }
    let mut f = fs::File::open(path).map_err(|e| ReadFailure::Usage(file_error(role, path, &e)))?;
    let bytes = if fifo {
        read_bounded(&mut f, (&what, &named(role, path)), 0, budget)?
    } else {
        // The size was taken from the budget already; a file that grows while it is read is
        // cut at what the budget allows.
        let mut room = Budget {
            left: budget.left.saturating_add(meta.len()),
            max: budget.max,
        };
        let bytes = read_bounded(&mut f, (&what, &named(role, path)), meta.len(), &mut room)?;
        let extra = u64::try_from(bytes.len())
            .unwrap_or(u64::MAX)
            .saturating_sub(meta.len());
        budget.take(extra, &what)?;
        bytes
    };
    text(bytes, &what)
}

/// The files the standalone filter reads: the library's sources, and for each where it is
/// on disk (for `--in-place`, `--output` and the diff).
#[derive(Debug, Default)]
pub struct Inputs {
    pub sources: Vec<SourceFile>,
    pub files: Vec<InputFile>,
    /// The other files of the directories read (not resources), for `--output` to copy: each
    /// path and its place relative to the directory given.
    pub others: Vec<(PathBuf, PathBuf)>,
    /// Paths skipped, one line each (warnings).
    pub warnings: Vec<String>,
    /// Paths skipped on purpose, for `-v`.
    pub notes: Vec<String>,
    /// The first directory given, where `--in-place` puts new files (else the first file's).
    pub first_dir: Option<PathBuf>,
}

/// Where a source is on disk.
#[derive(Debug)]
pub struct InputFile {
    /// `None` for stdin.
    pub path: Option<PathBuf>,
    /// The path under `--output DIR`: relative to the directory given, or the file's name.
    pub rel: PathBuf,
    /// A package's `Kptfile`: read and written back, but not part of the stdout stream.
    pub kptfile: bool,
}

/// The inputs as listed before anything is read: what will be read, in order, and every file
/// and directory looked at (by metadata: nothing but `.krmignore`s is read to list them).
#[derive(Debug, Default)]
pub struct Listing {
    entries: Vec<Entry>,
    others: Vec<(PathBuf, PathBuf)>,
    warnings: Vec<String>,
    notes: Vec<String>,
    first_dir: Option<PathBuf>,
    /// Every file and directory the run reads or lists, by key: what nothing may overwrite.
    pub reads: HashMap<FileKey, PathBuf>,
}

#[derive(Debug)]
enum Entry {
    Stdin,
    File {
        path: PathBuf,
        rel: PathBuf,
        /// Found in a directory (read as kpt reads a package's file), not named.
        strict: bool,
        kptfile: bool,
        /// The file as listed.
        key: FileKey,
    },
}

impl Listing {
    /// What the listing says beside its entries, as the start of the inputs read from them; and
    /// the entries, to read.
    fn into_inputs(self) -> (Inputs, Vec<Entry>) {
        let inputs = Inputs {
            others: self.others,
            warnings: self.warnings,
            notes: self.notes,
            first_dir: self.first_dir,
            ..Inputs::default()
        };
        (inputs, self.entries)
    }

    /// The files listed to be read as resources (stdin aside), in order.
    pub fn files(&self) -> impl Iterator<Item = &Path> {
        self.entries.iter().filter_map(|e| match e {
            Entry::Stdin => None,
            Entry::File { path, .. } => Some(path.as_path()),
        })
    }

    /// Each file listed to be read as resources, by key, with its path, in order.
    pub fn file_keys(&self) -> impl Iterator<Item = (FileKey, &Path)> {
        self.entries.iter().filter_map(|e| match e {
            Entry::Stdin => None,
            Entry::File { path, key, .. } => Some((*key, path.as_path())),
        })
    }

    /// The files given by name (not found in a directory) that are not regular files (a pipe,
    /// `/dev/stdin`), and whether stdin is read: what cannot be written back.
    pub fn not_rewritable(&self) -> Option<String> {
        for e in &self.entries {
            match e {
                Entry::Stdin => return Some("stdin".to_owned()),
                Entry::File { path, .. } => {
                    let regular = fs::metadata(path).is_ok_and(|m| m.is_file());
                    if !regular {
                        return Some(path.display().to_string());
                    }
                }
            }
        }
        None
    }
}

/// Reads the inputs in the order given. `config`: the functionConfig file's key, which is
/// never read as resources.
pub fn read_inputs(
    inputs: &[Source],
    stdin: &mut dyn Read,
    config: Option<FileKey>,
) -> Result<Inputs, ReadFailure> {
    read_inputs_within(inputs, stdin, config, &mut Budget::new(MAX_INPUT))
}

/// [`read_inputs`], within what is left of a budget shared with other reads (`diff`'s sides).
pub fn read_inputs_within(
    inputs: &[Source],
    stdin: &mut dyn Read,
    config: Option<FileKey>,
    budget: &mut Budget,
) -> Result<Inputs, ReadFailure> {
    read_listed(list_inputs(inputs, config, false)?, stdin, budget)
}

/// Lists the inputs: each path as given, each directory walked as kpt reads a package. Nothing
/// is read but `.krmignore`s. `config`: the functionConfig file's key, never read as resources.
/// `others`: list the directories' other files too, for `--output` to copy.
pub fn list_inputs(
    inputs: &[Source],
    config: Option<FileKey>,
    others: bool,
) -> Result<Listing, ReadFailure> {
    let mut seen: HashMap<FileKey, PathBuf> = HashMap::new();
    let mut out = Listing::default();
    for input in inputs {
        let p = match input {
            Source::Stdin => {
                out.entries.push(Entry::Stdin);
                continue;
            }
            Source::Path(p) => p,
        };
        let meta = fs::metadata(p).map_err(|e| ReadFailure::Usage(file_error(INPUT, p, &e)))?;
        if meta.is_dir() {
            out.first_dir.get_or_insert_with(|| p.clone());
            let w = walk::walk(p, &mut seen, &mut out.reads, config, others)
                .map_err(ReadFailure::Usage)?;
            out.warnings.extend(w.warnings);
            out.notes.extend(w.notes);
            for f in w.found {
                match f {
                    Found::Resources {
                        path,
                        rel,
                        kptfile,
                        key,
                    } => out.entries.push(Entry::File {
                        path,
                        rel,
                        strict: true,
                        kptfile,
                        key,
                    }),
                    Found::Other { path, rel } => out.others.push((path, rel)),
                }
            }
            continue;
        }
        let k = walk::key(&meta);
        if Some(k) == config {
            out.notes
                .push(format!("{}: the functionConfig file; skipped", p.display()));
            continue;
        }
        if let Some(first) = seen.get(&k).filter(|_| meta.is_file()) {
            out.warnings.push(format!(
                "{}: the same file as {}; read once",
                p.display(),
                first.display()
            ));
            continue;
        }
        if meta.is_file() {
            seen.insert(k, p.clone());
            out.reads.entry(k).or_insert_with(|| p.clone());
        }
        let rel = p
            .file_name()
            .map(PathBuf::from)
            .unwrap_or_else(|| p.clone());
        out.entries.push(Entry::File {
            path: p.clone(),
            rel,
            strict: false,
            kptfile: false,
            key: k,
        });
    }
    Ok(out)
}

/// Reads what [`list_inputs`] listed, in order.
pub fn read_listed(
    listing: Listing,
    stdin: &mut dyn Read,
    budget: &mut Budget,
) -> Result<Inputs, ReadFailure> {
    let (mut out, entries) = listing.into_inputs();
    read_entries(&mut out, entries, stdin, budget, |path, budget| {
        read_file(INPUT, path, budget)
    })?;
    Ok(out)
}

/// Reads `entries` into `inputs`, in order: stdin as it comes, each file's text from
/// `file_text` (given the budget, which it charges).
fn read_entries(
    inputs: &mut Inputs,
    entries: Vec<Entry>,
    stdin: &mut dyn Read,
    budget: &mut Budget,
    mut file_text: impl FnMut(&Path, &mut Budget) -> Result<String, ReadFailure>,
) -> Result<(), ReadFailure> {
    for e in entries {
        match e {
            Entry::Stdin => {
                let text = read_stdin(stdin, budget)?;
                let rel = PathBuf::from("stdin");
                inputs.push("stdin".into(), text, false, None, rel, false);
            }
            Entry::File {
                path,
                rel,
                strict,
                kptfile,
                ..
            } => {
                let text = file_text(&path, budget)?;
                let name = path.display().to_string();
                inputs.push(name, text, strict, Some(path), rel, kptfile);
            }
        }
    }
    Ok(())
}

/// Reads what several [`list_inputs`] listed (`merge3`'s three sides), within one budget, as
/// [`read_listed`] reads each in turn would: the regular files on every core (opened, read
/// and checked as text), then, in the listings' order, their sizes taken from the budget and
/// everything else read (stdin, a pipe, and a file the first pass left: one larger than what
/// the budget had, one it could not look at), so that the first failure in that order is the
/// one said, in the words [`read_file`] says it.
///
/// Memory stays within the budget: each file's size is reserved before it is read (a file
/// that grows while it is read aside, as for [`read_file`]).
pub fn read_all_listed(
    listings: Vec<Listing>,
    stdin: &mut dyn Read,
    budget: &mut Budget,
) -> Result<Vec<Inputs>, ReadFailure> {
    use rayon::prelude::*;
    use std::sync::atomic::{AtomicU64, Ordering};

    let paths: Vec<&Path> = listings.iter().flat_map(Listing::files).collect();
    let (left, reserve) = (budget.left, AtomicU64::new(budget.left));
    // `None`: left for the pass in order.
    let early: Vec<Option<Early>> = paths
        .par_iter()
        .map(|path| {
            let meta = fs::metadata(path).ok()?;
            if !meta.is_file() {
                return None;
            }
            let len = meta.len();
            reserve
                .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |left| {
                    left.checked_sub(len)
                })
                .ok()?;
            Some(read_regular(path, len, left))
        })
        .collect();
    let mut early = early.into_iter();
    let mut out = Vec::with_capacity(listings.len());
    for listing in listings {
        let (mut inputs, entries) = listing.into_inputs();
        read_entries(
            &mut inputs,
            entries,
            stdin,
            budget,
            |path, budget| match early.next().flatten() {
                Some(Early { len, read }) => {
                    let name = path.display().to_string();
                    budget.take(len, &name)?;
                    let (text, got) = read?;
                    budget.take(got.saturating_sub(len), &name)?;
                    text
                }
                None => read_file(INPUT, path, budget),
            },
        )?;
        out.push(inputs);
    }
    Ok(out)
}

/// A regular file read ahead by [`read_all_listed`]: its size when looked at, and its text (or
/// why not) with the bytes read.
struct Early {
    len: u64,
    read: Result<(Result<String, ReadFailure>, u64), ReadFailure>,
}

/// Reads a regular file of `len` bytes (it may have grown since: up to `left`, what the budget
/// had).
fn read_regular(path: &Path, len: u64, left: u64) -> Early {
    let what = path.display().to_string();
    let read = fs::File::open(path)
        .map_err(|e| ReadFailure::Usage(file_error(INPUT, path, &e)))
        .and_then(|mut f| {
            let mut room = Budget { left, max: left };
            read_bounded(&mut f, (&what, &named(INPUT, path)), len, &mut room)
        })
        .map(|bytes| {
            let got = u64::try_from(bytes.len()).unwrap_or(u64::MAX);
            (text(bytes, &what), got)
        });
    Early { len, read }
}

impl Inputs {
    /// What reading said, as results: a warning per file left out, an info line per file
    /// skipped on purpose.
    pub fn reading_results(&self) -> impl Iterator<Item = FnResult> + '_ {
        let warnings = self.warnings.iter();
        let notes = self.notes.iter();
        warnings
            .map(|w| FnResult::new(Severity::Warning, w.clone()))
            .chain(notes.map(|n| FnResult::new(Severity::Info, n.clone())))
    }

    fn push(
        &mut self,
        name: String,
        text: String,
        strict: bool,
        path: Option<PathBuf>,
        rel: PathBuf,
        kptfile: bool,
    ) {
        self.sources.push(SourceFile { name, text, strict });
        self.files.push(InputFile { path, rel, kptfile });
    }
}

/// An I/O error on a file, as every message about one says it: `ROLE PATH: REASON`
/// (`config fn.yaml: no such file`, `input k8s/: permission denied`); the role says which of
/// the files the run reads or writes it is (empty: the path alone). The reason is
/// [`io_reason`]'s, or `a broken symbolic link` for a link that leads nowhere.
pub fn file_error(role: &str, p: &Path, e: &std::io::Error) -> String {
    let reason = if e.kind() == std::io::ErrorKind::NotFound
        && fs::symlink_metadata(p).is_ok_and(|m| m.file_type().is_symlink())
    {
        "a broken symbolic link".to_owned()
    } else {
        io_reason(e)
    };
    format!("{}: {reason}", named(role, p))
}

/// `ROLE PATH`, or the path alone without a role.
pub fn named(role: &str, p: &Path) -> String {
    if role.is_empty() {
        p.display().to_string()
    } else {
        format!("{role} {}", p.display())
    }
}

/// The message for `--config DIR`: the config is a file, and the files directly in DIR that
/// look like one (a `Merge`, a `PatchTransformer`, a kustomization with patches), read as far
/// as their first document; files over 1 MiB are not looked at.
pub fn config_is_a_directory(dir: &Path) -> String {
    const LOOKED_AT: u64 = 1 << 20;
    const SHOWN: usize = 5;
    let mut names: Vec<PathBuf> = fs::read_dir(dir)
        .map(|entries| entries.filter_map(|e| e.ok().map(|e| e.path())).collect())
        .unwrap_or_default();
    names.sort();
    let mut found = Vec::new();
    for path in names {
        let Some(name) = path.file_name().and_then(|n| n.to_str()) else {
            continue;
        };
        let yaml =
            [".yaml", ".yml", ".json"].iter().any(|e| name.ends_with(e)) || name == "Kustomization";
        let small = fs::metadata(&path).is_ok_and(|m| m.is_file() && m.len() <= LOOKED_AT);
        if !yaml || !small {
            continue;
        }
        let Ok(text) = fs::read_to_string(&path) else {
            continue;
        };
        let what = match config::config_form_of_file(name, &text) {
            Some(ConfigForm::Merge) => "kind Merge",
            Some(ConfigForm::PatchTransformer) => "a PatchTransformer",
            Some(ConfigForm::Kustomization) => "a kustomization with patches",
            _ => continue,
        };
        found.push(format!("{} ({what})", path.display()));
    }
    let head = format!(
        "{} {}: a directory; --config takes the functionConfig's file (the resources are the \
         PATHs)",
        CONFIG,
        dir.display()
    );
    match found.len() {
        0 => format!(
            "{head}, and no file directly in it looks like one (kind Merge, a PatchTransformer, \
             or a kustomization with patches)"
        ),
        1 => format!("{head}: {} looks like one", found[0]),
        n if n <= SHOWN => format!("{head}: {} look like one", found.join(", ")),
        n => format!(
            "{head}: {} and {} more look like one",
            found[..SHOWN].join(", "),
            n - SHOWN
        ),
    }
}

/// The file `kpt fn eval --fn-config FILE` named, when kpt is the process that started this
/// one, and the identity of the config in it. kpt passes a functionConfig from `--fn-config`
/// without saying where its file is (no path annotation), so its `path:` files could only be
/// read relative to kpt's current directory; this finds the file in kpt's own arguments
/// (Linux's `/proc`), relative to kpt's current directory, and reads its first document's
/// identity, which the run compares with the ResourceList's functionConfig before it reads
/// anything relative to that file. `None` anywhere else, and for anything that does not fit.
pub fn kpt_fn_config() -> Option<(PathBuf, Id<'static>)> {
    let parent = std::os::unix::process::parent_id();
    let proc = PathBuf::from(format!("/proc/{parent}"));
    let cmdline = fs::read(proc.join("cmdline")).ok()?;
    let args: Vec<&[u8]> = cmdline.split(|b| *b == 0).collect();
    let program = std::str::from_utf8(args.first()?).ok()?;
    let is_kpt = Path::new(program).file_name().is_some_and(|n| n == "kpt");
    let words: Vec<&str> = args
        .iter()
        .filter_map(|a| std::str::from_utf8(a).ok())
        .collect();
    let evaluates = words.windows(2).any(|w| w == ["fn", "eval"]);
    if !is_kpt || !evaluates {
        return None;
    }
    let named = words.iter().enumerate().find_map(|(i, w)| {
        if *w == "--fn-config" {
            words.get(i + 1).copied()
        } else {
            w.strip_prefix("--fn-config=")
        }
    })?;
    let file = fs::read_link(proc.join("cwd")).ok()?.join(named);
    let meta = fs::metadata(&file).ok()?;
    if !meta.is_file() || meta.len() > MAX_CONFIG {
        return None;
    }
    let text = fs::read_to_string(&file).ok()?;
    let docs = krm_merge::yaml::parse_stream(&text).ok()?;
    let root = docs.iter().find_map(|d| d.root.as_ref())?;
    Some((file, Id::of(root).into_owned()))
}

/// Why a functionConfig file gave no plan.
pub enum ConfigFailure {
    /// It cannot be read at all (missing, a directory, no permission): a usage error.
    Unreadable(String),
    /// It was read, but is not a valid functionConfig: errors like any other, one per field
    /// at fault.
    Invalid(Vec<String>),
}

/// A functionConfig read into a plan: the plan, the config's identity, and the files its fields
/// named (`path:`, `originalPath:`, a schema's), which the run reads too.
pub struct Loaded {
    pub plan: Plan,
    pub id: Id<'static>,
    pub files: Vec<PathBuf>,
}

/// Reads a functionConfig file into a plan; `root` is where its `path:` files are (default:
/// its directory), and `restrictor` says whether they must stay inside that tree. The file holds
/// one document: a second one is an error rather than a config silently ignored.
pub fn load_config(
    path: &Path,
    root: Option<&Path>,
    restrictor: LoadRestrictor,
) -> Result<Loaded, ConfigFailure> {
    let text = match read_file(CONFIG, path, &mut Budget::new(MAX_CONFIG)) {
        Ok(t) => t,
        Err(ReadFailure::Usage(m)) => return Err(ConfigFailure::Unreadable(m)),
        Err(e) => return Err(ConfigFailure::Invalid(vec![e.message()])),
    };
    let invalid = |e: String| ConfigFailure::Invalid(vec![format!("{}: {e}", path.display())]);
    let node = config::config_file(&text).map_err(|e| invalid(e.to_string()))?;
    let dir = root
        .map(Path::to_path_buf)
        .or_else(|| path.parent().map(Path::to_path_buf));
    let load = config::Load::new(dir.as_deref()).restricted(restrictor);
    let (plan, files) = config::plan_reading(&node, &load).map_err(|errors| {
        ConfigFailure::Invalid(
            errors
                .iter()
                .map(|e| format!("{}: {e}", path.display()))
                .collect(),
        )
    })?;
    Ok(Loaded {
        plan,
        id: Id::of(&node).into_owned(),
        files,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reading_is_bounded() {
        let mut budget = Budget::new(10);
        let mut input: &[u8] = b"0123456789";
        assert_eq!(read_stdin(&mut input, &mut budget).unwrap(), "0123456789");
        let mut more: &[u8] = b"x";
        let err = read_stdin(&mut more, &mut budget).unwrap_err().message();
        assert!(err.starts_with("stdin: too large"), "{err}");
        let mut big = std::io::repeat(b'a').take(3 << 20);
        let err = read_stdin(&mut big, &mut Budget::new(2 << 20))
            .unwrap_err()
            .message();
        assert!(err.contains("at most 2 MiB"), "{err}");
    }

    /// Reading three listings at once says what reading them in turn says: the same texts, or
    /// the same first failure (the file past the budget, a file not text, a special file).
    #[test]
    fn reading_listings_at_once_is_reading_them_in_turn() {
        let dir = std::env::temp_dir().join(format!("krm-merge-files-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        for (side, files) in [
            (
                "a",
                &[("x.yaml", &b"a: 1\n"[..]), ("y.yaml", b"b: 22222\n")][..],
            ),
            ("b", &[("z.yaml", &b"\xff\xfe\n"[..])][..]),
            ("c", &[("w.yaml", &b"c: 3\n"[..])][..]),
        ] {
            fs::create_dir_all(dir.join(side)).unwrap();
            for (name, bytes) in files {
                fs::write(dir.join(side).join(name), bytes).unwrap();
            }
        }
        let list = |sides: &[&str]| -> Vec<Listing> {
            sides
                .iter()
                .map(|s| {
                    let src = if *s == "dev" {
                        Source::Path(PathBuf::from("/dev/null"))
                    } else {
                        Source::Path(dir.join(s))
                    };
                    list_inputs(&[src], None, false).unwrap()
                })
                .collect()
        };
        let said = |r: Result<Vec<Inputs>, ReadFailure>| match r {
            Ok(inputs) => Ok(inputs
                .iter()
                .map(|i| {
                    i.sources
                        .iter()
                        .map(|s| (s.name.clone(), s.text.clone()))
                        .collect()
                })
                .collect::<Vec<Vec<_>>>()),
            Err(e) => Err(e.message()),
        };
        for sides in [&["a", "c"][..], &["a", "b", "c"], &["c", "dev", "b"]] {
            for max in [0, 3, 5, 6, 12, 16, 100] {
                let at_once = said(read_all_listed(
                    list(sides),
                    &mut &b""[..],
                    &mut Budget::new(max),
                ));
                let mut budget = Budget::new(max);
                let in_turn = said(
                    list(sides)
                        .into_iter()
                        .map(|l| read_listed(l, &mut &b""[..], &mut budget))
                        .collect(),
                );
                assert_eq!(at_once, in_turn, "{sides:?} within {max} bytes");
            }
        }
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn special_files_say_what_they_are() {
        let err = read_file(INPUT, Path::new("/dev/null"), &mut Budget::new(10))
            .unwrap_err()
            .message();
        assert_eq!(
            err,
            "input /dev/null: a character device, not a file of resources"
        );
    }
}
