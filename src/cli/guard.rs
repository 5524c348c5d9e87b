//! Nothing the run reads is ever overwritten. Every file and directory a run reads or lists
//! (the functionConfig and the files it names, each input, every file and directory of the
//! packages walked, each `.krmignore`) is known by device and inode before its content is read;
//! every path the run will write (`--results`, `diff --added`, `--output DIR`, a stdout
//! redirected to a file) is compared with them — the same file through any symbolic or hard
//! link — and a match is a usage error (exit 2) before anything else is read. The temporary
//! files write-back makes are new names made with `O_EXCL` (see [`super::writeback`]), so they
//! are never a file that exists, and never one the run reads.
//!
//! What it must not do: read contents, or write.

use std::collections::HashMap;
use std::fs;
use std::path::{Path, PathBuf};

use super::out::StdoutIs;
use super::walk::{self, FileKey};

/// What the run reads, by key, with the path it was reached by.
#[derive(Debug, Default)]
pub struct Reads {
    keys: HashMap<FileKey, PathBuf>,
}

impl Reads {
    /// Notes a path the run reads (nothing when it does not exist: the read will say so).
    pub fn add(&mut self, path: &Path) {
        if let Ok(m) = fs::metadata(path) {
            self.keys
                .entry(walk::key(&m))
                .or_insert_with(|| path.to_path_buf());
        }
    }

    /// Notes what a listing found.
    pub fn extend(&mut self, keys: &HashMap<FileKey, PathBuf>) {
        for (k, p) in keys {
            self.keys.entry(*k).or_insert_with(|| p.clone());
        }
    }

    /// `Err` (the usage error's message) when `target`, which the run writes as `what`, is a
    /// file or directory the run reads.
    pub fn refuse(&self, what: &str, target: &Path) -> Result<(), String> {
        let Ok(m) = fs::metadata(target) else {
            return Ok(());
        };
        match self.keys.get(&walk::key(&m)) {
            Some(read) => Err(format!(
                "{what} {}: {}, which this run reads; krm-merge never writes over its input \
                 (choose another path)",
                target.display(),
                if read == target {
                    "an input".to_owned()
                } else {
                    format!("the same file as {}", read.display())
                }
            )),
            None => Ok(()),
        }
    }

    /// `Err` when stdout is a file the run reads that holds something (`krm-merge ... pkg/ >>
    /// pkg/a.yaml`); an empty one, as the shell's `>` leaves it, is not: see [`StdoutIs`].
    pub fn refuse_stdout(&self, stdout: &StdoutIs) -> Result<(), String> {
        match stdout.file.and_then(|k| self.keys.get(&k)) {
            Some(read) => Err(format!(
                "stdout is {}, a file this run reads; krm-merge never writes over its input \
                 (appending to it would mix the output into what it came from: write elsewhere)",
                read.display()
            )),
            None => Ok(()),
        }
    }
}
