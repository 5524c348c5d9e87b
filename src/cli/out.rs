//! Bytes out: stdout written and checked, one escaped line per message on stderr, files
//! written atomically, and unified diffs.
//!
//! **Every write is checked.** A failed or short write to stdout (a full disk, a closed file)
//! is a message on stderr and exit 1; a closed pipe (`| head`) is exit 1 without a message.
//! **One line per message.** Control characters in a message (a resource name holding a line
//! break or an escape sequence) are written escaped (`\n`, `\x1b`), so that a message is one
//! line and never drives the terminal; the results themselves (in a ResourceList, in
//! `--results`) keep the exact text. **Atomic files.** A file is written to a temporary file in
//! its own directory, flushed to disk and renamed over the old one, which keeps its
//! permissions: a reader sees the old file or the new one, never a part.
//!
//! What it must not do: decide what to write, or exit.

use std::fs;
use std::io::{self, Write};
use std::path::{Path, PathBuf};

use krm_merge::krm::{FnResult, Severity};

use super::args::Level;

/// Writing to stdout failed.
#[derive(Debug)]
pub enum WriteFailed {
    /// The reader went away (EPIPE): nothing to say.
    Closed,
    /// Anything else: said on stderr.
    Error(io::Error),
}

/// Where the process writes.
pub struct Io<'o> {
    pub stdout: &'o mut dyn Write,
    pub stderr: &'o mut dyn Write,
}

impl Io<'_> {
    /// Writes bytes to stdout and flushes them.
    pub fn out(&mut self, b: &[u8]) -> Result<(), WriteFailed> {
        let r = self.stdout.write_all(b).and_then(|()| self.stdout.flush());
        r.map_err(|e| {
            if e.kind() == io::ErrorKind::BrokenPipe {
                WriteFailed::Closed
            } else {
                WriteFailed::Error(e)
            }
        })
    }

    /// Writes stdout's bytes; the exit code: `ok` when they were written, 1 when not (said on
    /// stderr, but for a closed pipe).
    pub fn out_code(&mut self, b: &[u8], ok: i32) -> i32 {
        match self.out(b) {
            Ok(()) => ok,
            Err(WriteFailed::Closed) => 1,
            Err(WriteFailed::Error(e)) => {
                self.line(&format!("error: cannot write to stdout: {e}"));
                1
            }
        }
    }

    /// One line on stderr: `krm-merge: ` and the message, escaped.
    pub fn line(&mut self, msg: &str) {
        // Nothing can be said about a stderr that cannot be written.
        let _ = writeln!(self.stderr, "krm-merge: {}", escape(msg));
    }

    /// Text on stderr as it is, its lines kept (clap's usage messages), other control
    /// characters escaped.
    pub fn text(&mut self, text: &str) {
        let escaped: String = text.split('\n').map(escape).collect::<Vec<_>>().join("\n");
        let _ = self.stderr.write_all(escaped.as_bytes());
        let _ = self.stderr.flush();
    }

    /// The results people see at `level`: each error, each warning unless quiet, each info
    /// result when verbose; one line each.
    pub fn report(&mut self, results: &[FnResult], level: Level) {
        for r in results {
            let show = match r.severity {
                Severity::Error => true,
                Severity::Warning => level >= Level::Normal,
                Severity::Info => level >= Level::Verbose,
            };
            if show {
                self.line(&r.to_string());
            }
        }
    }
}

/// `s` with its control characters (C0, DEL, C1) and the bidirectional overrides escaped.
pub fn escape(s: &str) -> std::borrow::Cow<'_, str> {
    let bad =
        |c: char| c.is_control() || matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}');
    if !s.chars().any(bad) {
        return std::borrow::Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 8);
    for c in s.chars() {
        match c {
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if bad(c) && (c as u32) < 0x100 => out.push_str(&format!("\\x{:02x}", c as u32)),
            c if bad(c) => out.push_str(&format!("\\u{{{:x}}}", c as u32)),
            c => out.push(c),
        }
    }
    std::borrow::Cow::Owned(out)
}

/// Writes `bytes` to `path` atomically: a temporary file in the same directory, synced, then
/// renamed over `path`. An existing file keeps its permissions; a symbolic link is written
/// through (its target is replaced, the link stays). `Err` names the path.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<(), String> {
    let say = |e: io::Error| format!("{}: cannot write: {e}", path.display());
    let target = match fs::canonicalize(path) {
        Ok(t) => t,
        Err(e) if e.kind() == io::ErrorKind::NotFound => path.to_path_buf(),
        Err(e) => return Err(say(e)),
    };
    let dir = match target.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let name = target
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let perms = fs::metadata(&target).ok().map(|m| m.permissions());
    let (tmp, mut file) = temp_file(&dir, &name).map_err(say)?;
    let written = (|| {
        file.write_all(bytes)?;
        if let Some(p) = perms {
            file.set_permissions(p)?;
        }
        file.sync_all()?;
        drop(file);
        fs::rename(&tmp, &target)
    })();
    if let Err(e) = written {
        let _ = fs::remove_file(&tmp);
        return Err(say(e));
    }
    Ok(())
}

/// A new temporary file beside `name` in `dir`, never one that exists.
fn temp_file(dir: &Path, name: &str) -> io::Result<(PathBuf, fs::File)> {
    let pid = std::process::id();
    let mut n = 0u32;
    loop {
        let tmp = dir.join(format!(".{name}.krm-merge-{pid}-{n}.tmp"));
        match fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&tmp)
        {
            Ok(f) => return Ok((tmp, f)),
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists && n < 1000 => n += 1,
            Err(e) => return Err(e),
        }
    }
}

/// A unified diff from `before` to `after` (`None`: the file does not exist on that side),
/// with `a/` and `b/` headers as git writes them; empty when they are the same.
pub fn unified_diff(name: &str, before: Option<&str>, after: Option<&str>) -> String {
    let (old, new) = (before.unwrap_or(""), after.unwrap_or(""));
    if before.is_some() == after.is_some() && old == new {
        return String::new();
    }
    let name = name.trim_start_matches('/');
    let a = if before.is_some() {
        format!("a/{name}")
    } else {
        "/dev/null".to_owned()
    };
    let b = if after.is_some() {
        format!("b/{name}")
    } else {
        "/dev/null".to_owned()
    };
    let diff = similar::TextDiff::from_lines(old, new);
    let mut text = diff
        .unified_diff()
        .context_radius(3)
        .header(&a, &b)
        .to_string();
    if text.is_empty() {
        // Created or removed empty: headers alone say it.
        text = format!("--- {a}\n+++ {b}\n");
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_are_one_line() {
        assert_eq!(escape("plain: ok"), "plain: ok");
        assert_eq!(escape("a\nb\x1b[31mc\u{7f}"), "a\\nb\\x1b[31mc\\x7f");
        assert_eq!(escape("x\u{202e}y"), "x\\u{202e}y");
        let mut err = Vec::new();
        let mut out = Vec::new();
        let mut io = Io {
            stdout: &mut out,
            stderr: &mut err,
        };
        io.line("error: ConfigMap evil\n\x1b[2Jname: bad");
        assert_eq!(
            String::from_utf8(err).unwrap(),
            "krm-merge: error: ConfigMap evil\\n\\x1b[2Jname: bad\n"
        );
    }

    #[test]
    fn a_failed_write_is_an_error() {
        struct Full;
        impl Write for Full {
            fn write(&mut self, _: &[u8]) -> io::Result<usize> {
                Err(io::Error::new(io::ErrorKind::StorageFull, "no space left"))
            }
            fn flush(&mut self) -> io::Result<()> {
                Ok(())
            }
        }
        let (mut full, mut err) = (Full, Vec::new());
        let mut io = Io {
            stdout: &mut full,
            stderr: &mut err,
        };
        assert_eq!(io.out_code(b"data", 0), 1);
        assert!(String::from_utf8(err)
            .unwrap()
            .contains("cannot write to stdout"));
    }

    #[test]
    fn diffs() {
        assert_eq!(unified_diff("a.yaml", Some("x\n"), Some("x\n")), "");
        assert_eq!(
            unified_diff("a.yaml", Some("x\ny\n"), Some("x\nz\n")),
            "--- a/a.yaml\n+++ b/a.yaml\n@@ -1,2 +1,2 @@\n x\n-y\n+z\n"
        );
        assert!(unified_diff("n.yaml", None, Some("k: v\n"))
            .starts_with("--- /dev/null\n+++ b/n.yaml\n"));
        assert!(unified_diff("g.yaml", Some("k: v\n"), None).contains("+++ /dev/null\n"));
    }
}
