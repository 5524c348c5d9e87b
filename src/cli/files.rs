//! Files and stdin in: the bytes the command line reads before the library sees text.
//!
//! What it must not do: parse resources or apply anything; it reads, checks that bytes are
//! text, and says which file or argument failed.

use std::io::Read;
use std::path::{Path, PathBuf};

use krm_merge::config::{self, Plan};
use krm_merge::error::NotUtf8;
use krm_merge::select::identity::Id;

/// Input that is not text: why, and its bytes (to give back as they came).
pub struct NotText {
    pub error: NotUtf8,
    pub bytes: Vec<u8>,
}

/// Reads all of stdin as text.
pub fn read_stdin(stdin: &mut dyn Read) -> Result<String, Unreadable> {
    let mut buf = Vec::new();
    if let Err(e) = stdin.read_to_end(&mut buf) {
        return Err(Unreadable::Io(format!("cannot read stdin: {e}")));
    }
    text(buf, "stdin").map_err(Unreadable::NotText)
}

/// Why input could not be read as text.
pub enum Unreadable {
    /// Reading failed.
    Io(String),
    /// The bytes are not UTF-8.
    NotText(NotText),
}

fn text(bytes: Vec<u8>, what: &str) -> Result<String, NotText> {
    NotUtf8::check(bytes, what).map_err(|(error, bytes)| NotText { error, bytes })
}

fn read_bytes(path: &Path) -> Result<Vec<u8>, String> {
    std::fs::read(path).map_err(|e| format!("{}: {e}", path.display()))
}

/// A file's text; `Err` names the file and what is wrong.
pub fn read_file(path: &Path) -> Result<String, String> {
    text(read_bytes(path)?, &path.display().to_string()).map_err(|e| e.error.to_string())
}

/// The resources of files and directories (YAML and JSON files, recursively, sorted), as one
/// stream. `Err` for a path that cannot be read (a usage error); `Ok(Err)` for files that are
/// not UTF-8, with the stream's bytes.
pub fn read_paths(paths: &[PathBuf]) -> Result<Result<String, NotText>, String> {
    let mut files = Vec::new();
    for p in paths {
        collect_files(p, &mut files)?;
    }
    let mut out: Vec<u8> = Vec::new();
    let mut bad: Option<NotUtf8> = None;
    for f in files {
        let bytes = read_bytes(&f)?;
        let text = match text(bytes, &f.display().to_string()) {
            Ok(t) => t.into_bytes(),
            Err(e) => {
                bad.get_or_insert(e.error);
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
        None => self::text(out, "the input"),
        Some(error) => Err(NotText { error, bytes: out }),
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
pub enum ConfigFailure {
    /// It cannot be read at all (missing, a directory, no permission): a usage error.
    Unreadable(String),
    /// It was read, but is not a valid functionConfig: an error like any other.
    Invalid(String),
}

/// Reads a functionConfig file into a plan and the config's identity; `root` is where its
/// `path:` files are (default: its directory).
pub fn load_config(path: &Path, root: Option<&Path>) -> Result<(Plan, Id<'static>), ConfigFailure> {
    let bytes = read_bytes(path).map_err(ConfigFailure::Unreadable)?;
    let invalid = |e: String| ConfigFailure::Invalid(format!("{}: {e}", path.display()));
    let text = text(bytes, &path.display().to_string())
        .map_err(|e| ConfigFailure::Invalid(e.error.to_string()))?;
    let docs = krm_merge::yaml::parse_stream(&text).map_err(|e| invalid(e.to_string()))?;
    let node = docs
        .iter()
        .find_map(|d| d.root.as_ref())
        .ok_or_else(|| invalid("no functionConfig in the file".into()))?;
    let dir = root
        .map(Path::to_path_buf)
        .or_else(|| path.parent().map(Path::to_path_buf));
    let plan = config::plan(node, dir.as_deref()).map_err(|e| invalid(e.to_string()))?;
    Ok((plan, Id::of(node).into_owned()))
}
