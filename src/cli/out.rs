//! Bytes out: stdout written and checked, one escaped line per message on stderr, and unified
//! diffs. (Files are written by [`super::writeback`].)
//!
//! **Every write is checked.** A failed or short write to stdout (a full disk, a closed file)
//! is a message on stderr and exit 1; a closed pipe (`| head`) is exit 1 without a message.
//! A stdout the shell closed (`>&-`) is an error as soon as something is written to it:
//! whether it was closed is looked at before `main` ([`STDOUT_CLOSED`]), since the Rust runtime
//! then puts `/dev/null` in its place, which is what `>/dev/null` gives too (and what the
//! writes would vanish into). **One line per message.** Control characters in a message (a
//! resource name holding a line break or an escape sequence) are written escaped (`\n`,
//! `\x1b`), so that a message is one line and never drives the terminal; the results
//! themselves (in a ResourceList, in `--results`) keep the exact text. **Diff headers** name a
//! file with control characters, `"` or `\` in its name C-quoted, as git does
//! (`--- "a/x\nb"`), so that a diff never names a file that was not changed.
//!
//! What it must not do: decide what to write, or exit.

use std::io::{self, Write};
use std::sync::atomic::{AtomicBool, Ordering};

use krm_merge::error::io_reason;
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
    /// What stdout is: closed, or a file (which must not be one the run reads).
    pub stdout_is: StdoutIs,
    /// Where colour is written.
    pub color: Colors,
}

/// `--color`: when messages and diffs are coloured.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum ColorChoice {
    /// On a terminal, unless `NO_COLOR` is set (the default).
    #[default]
    Auto,
    Always,
    Never,
}

impl ColorChoice {
    /// The choice `--color` (or `--color=`) makes among the arguments, before a `--`; the
    /// default when none. The value is checked by clap, which reads the same arguments.
    pub fn of_args(args: &[std::ffi::OsString]) -> ColorChoice {
        let mut choice = ColorChoice::Auto;
        let mut it = args.iter().map(|a| a.to_str().unwrap_or(""));
        while let Some(a) = it.next() {
            let value = match a {
                "--" => break,
                "--color" => it.next().unwrap_or(""),
                _ => match a.strip_prefix("--color=") {
                    Some(v) => v,
                    None => continue,
                },
            };
            choice = match value {
                "always" => ColorChoice::Always,
                "never" => ColorChoice::Never,
                _ => ColorChoice::Auto,
            };
        }
        choice
    }
}

/// Whether what goes to stdout and to stderr is coloured.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Colors {
    /// `--diff` coloured as `git diff` colours it.
    pub stdout: bool,
    /// `error:` and `warning:` in colour.
    pub stderr: bool,
}

impl Colors {
    /// What `choice` means for this process: `auto` colours what goes to a terminal, unless
    /// `NO_COLOR` is set to anything but the empty string (no-color.org); pipes and files get
    /// plain text.
    pub fn choose(choice: ColorChoice, stdout_tty: bool, stderr_tty: bool) -> Colors {
        let no_color = std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty());
        match choice {
            ColorChoice::Always => Colors {
                stdout: true,
                stderr: true,
            },
            ColorChoice::Never => Colors::default(),
            ColorChoice::Auto if no_color => Colors::default(),
            ColorChoice::Auto => Colors {
                stdout: stdout_tty,
                stderr: stderr_tty,
            },
        }
    }
}

const RED: &str = "\x1b[31m";
const GREEN: &str = "\x1b[32m";
const CYAN: &str = "\x1b[36m";
const BOLD: &str = "\x1b[1m";
const BOLD_RED: &str = "\x1b[1;31m";
const BOLD_YELLOW: &str = "\x1b[1;33m";
const RESET: &str = "\x1b[m";

/// A unified diff coloured as `git diff` colours one: file headers bold, hunk headers cyan,
/// removed lines red, added lines green.
pub fn color_diff(diff: &str) -> String {
    let mut out = String::with_capacity(diff.len() + diff.len() / 4);
    for line in diff.split_inclusive('\n') {
        let (text, end) = match line.strip_suffix('\n') {
            Some(t) => (t, "\n"),
            None => (line, ""),
        };
        let color = if text.starts_with("--- ") || text.starts_with("+++ ") {
            BOLD
        } else if text.starts_with("@@") {
            CYAN
        } else if text.starts_with('-') {
            RED
        } else if text.starts_with('+') {
            GREEN
        } else {
            ""
        };
        if color.is_empty() {
            out.push_str(line);
        } else {
            out.push_str(color);
            out.push_str(text);
            out.push_str(RESET);
            out.push_str(end);
        }
    }
    out
}

/// A message's severity in colour, when it starts with one (`error: `, `warning: `).
fn color_severity(msg: &str) -> std::borrow::Cow<'_, str> {
    for (word, color) in [("error:", BOLD_RED), ("warning:", BOLD_YELLOW)] {
        if let Some(rest) = msg.strip_prefix(word) {
            return std::borrow::Cow::Owned(format!("{color}{word}{RESET}{rest}"));
        }
    }
    std::borrow::Cow::Borrowed(msg)
}

/// Whether file descriptor 1 was closed when the process started (`>&-`). Set before `main`
/// by [`LOOK_AT_STDOUT`]: by `main`, the Rust runtime has put `/dev/null` (opened for reading
/// and writing) on a closed standard stream, which cannot be told from a `/dev/null` the
/// caller gave (Python's `subprocess.DEVNULL` is one).
static STDOUT_CLOSED: AtomicBool = AtomicBool::new(false);

/// Run by the C runtime with the program's other initialisers, before the Rust runtime's.
#[cfg(all(target_os = "linux", not(test)))]
#[used]
#[link_section = ".init_array"]
static LOOK_AT_STDOUT: extern "C" fn() = look_at_stdout;

#[cfg(all(target_os = "linux", not(test)))]
extern "C" fn look_at_stdout() {
    if rustix::fs::fcntl_getfl(rustix::stdio::stdout()).is_err() {
        STDOUT_CLOSED.store(true, Ordering::Relaxed);
    }
}

/// What the process's stdout is, found when it starts.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct StdoutIs {
    /// The shell closed it (`>&-`): writing to it is an error.
    pub closed: bool,
    /// A regular file that holds something, by device and inode. An empty one (what the shell's
    /// `>` leaves, `krm-merge diff base/ prod/ > base/fn-config.yaml`) is not: the run reads
    /// nothing from it, so writing it overwrites nothing the run read.
    pub file: Option<(u64, u64)>,
}

impl StdoutIs {
    /// Looks at the process's stdout.
    pub fn probe() -> StdoutIs {
        use std::os::fd::AsFd;
        let stdout = io::stdout();
        let fd = stdout.as_fd();
        let closed = STDOUT_CLOSED.load(Ordering::Relaxed);
        let Ok(stat) = rustix::fs::fstat(fd) else {
            return StdoutIs { closed, file: None };
        };
        let regular = rustix::fs::FileType::from_raw_mode(stat.st_mode)
            == rustix::fs::FileType::RegularFile
            && stat.st_size > 0;
        StdoutIs {
            closed,
            #[allow(clippy::useless_conversion)]
            file: regular.then(|| (u64::from(stat.st_dev), u64::from(stat.st_ino))),
        }
    }
}

impl Io<'_> {
    /// Writes bytes to stdout and flushes them.
    pub fn out(&mut self, b: &[u8]) -> Result<(), WriteFailed> {
        if self.stdout_is.closed && !b.is_empty() {
            return Err(WriteFailed::Error(io::Error::other(
                "stdout is closed (>&-)",
            )));
        }
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
                self.line(&format!("error: cannot write to stdout: {}", io_reason(&e)));
                1
            }
        }
    }

    /// One line on stderr: `krm-merge: ` and the message, escaped (and its severity in colour
    /// where stderr takes colour; the escaping comes first, so nothing the message quotes can
    /// write a colour).
    pub fn line(&mut self, msg: &str) {
        let escaped = escape(msg);
        let shown = if self.color.stderr {
            color_severity(&escaped)
        } else {
            escaped
        };
        // Nothing can be said about a stderr that cannot be written.
        let _ = writeln!(self.stderr, "krm-merge: {shown}");
    }

    /// Text on stderr as it is, its lines kept (clap's usage messages), other control
    /// characters escaped, the first line's severity in colour where stderr takes colour.
    pub fn text(&mut self, text: &str) {
        let escaped: String = text.split('\n').map(escape).collect::<Vec<_>>().join("\n");
        let shown = match escaped.strip_prefix("krm-merge: ") {
            Some(rest) if self.color.stderr => format!("krm-merge: {}", color_severity(rest)),
            _ => escaped,
        };
        let _ = self.stderr.write_all(shown.as_bytes());
        let _ = self.stderr.flush();
    }

    /// A diff on stdout, coloured where stdout takes colour.
    pub fn diff(&mut self, diff: &str) -> Result<(), WriteFailed> {
        if self.color.stdout {
            self.out(color_diff(diff).as_bytes())
        } else {
            self.out(diff.as_bytes())
        }
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

/// A unified diff from `before` to `after` (`None`: the file does not exist on that side),
/// with `a/` and `b/` headers as git writes them; empty when they are the same.
pub fn unified_diff(name: &str, before: Option<&str>, after: Option<&str>) -> String {
    let (old, new) = (before.unwrap_or(""), after.unwrap_or(""));
    if before.is_some() == after.is_some() && old == new {
        return String::new();
    }
    // `.` components say nothing and `git apply` refuses a name holding one (`a/./x.yaml`, as
    // `krm-merge ... . --diff` would name the package's files): dropped, as git's own diff of a
    // tree names them. `..` stays: it means something.
    let name: String = name
        .split('/')
        .filter(|c| !c.is_empty() && *c != ".")
        .collect::<Vec<_>>()
        .join("/");
    let a = if before.is_some() {
        quote_path(&format!("a/{name}"))
    } else {
        "/dev/null".to_owned()
    };
    let b = if after.is_some() {
        quote_path(&format!("b/{name}"))
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

/// A path as git writes it in a diff header: as it is, or C-quoted when it holds a control
/// character, `"` or `\` (`"a/x\nb"`; `\a \b \t \n \v \f \r \" \\`, other control
/// characters as three octal digits). Other characters stay as they are (git's
/// `core.quotePath=false`).
pub fn quote_path(p: &str) -> String {
    if !p.chars().any(|c| c.is_control() || c == '"' || c == '\\') {
        return p.to_owned();
    }
    let mut out = String::with_capacity(p.len() + 2);
    out.push('"');
    for c in p.chars() {
        match c {
            '\x07' => out.push_str("\\a"),
            '\x08' => out.push_str("\\b"),
            '\t' => out.push_str("\\t"),
            '\n' => out.push_str("\\n"),
            '\x0b' => out.push_str("\\v"),
            '\x0c' => out.push_str("\\f"),
            '\r' => out.push_str("\\r"),
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if c.is_control() => {
                let mut buf = [0; 4];
                for b in c.encode_utf8(&mut buf).bytes() {
                    out.push_str(&format!("\\{b:03o}"));
                }
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
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
            stdout_is: StdoutIs::default(),
            color: Colors::default(),
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
            stdout_is: StdoutIs::default(),
            color: Colors::default(),
        };
        assert_eq!(io.out_code(b"data", 0), 1);
        assert!(String::from_utf8(err)
            .unwrap()
            .contains("cannot write to stdout"));
    }

    #[test]
    fn colours() {
        assert_eq!(
            color_diff("--- a/x\n+++ b/x\n@@ -1 +1 @@\n-old\n+new\n same\n"),
            "\x1b[1m--- a/x\x1b[m\n\x1b[1m+++ b/x\x1b[m\n\x1b[36m@@ -1 +1 @@\x1b[m\n\
             \x1b[31m-old\x1b[m\n\x1b[32m+new\x1b[m\n same\n"
        );
        assert_eq!(color_severity("error: x"), "\x1b[1;31merror:\x1b[m x");
        assert_eq!(color_severity("warning: x"), "\x1b[1;33mwarning:\x1b[m x");
        assert_eq!(color_severity("x: error: y"), "x: error: y");
        let args = |a: &[&str]| a.iter().map(std::ffi::OsString::from).collect::<Vec<_>>();
        assert_eq!(
            ColorChoice::of_args(&args(&["--color", "never", "-c", "f"])),
            ColorChoice::Never
        );
        assert_eq!(
            ColorChoice::of_args(&args(&["--color=always"])),
            ColorChoice::Always
        );
        assert_eq!(
            ColorChoice::of_args(&args(&["--", "--color=always"])),
            ColorChoice::Auto
        );
        let never = Colors::choose(ColorChoice::Never, true, true);
        assert_eq!(never, Colors::default());
        let always = Colors::choose(ColorChoice::Always, false, false);
        assert!(always.stdout && always.stderr);
        // A message that carries an escape sequence cannot colour the terminal: it is escaped
        // before the severity is coloured.
        let mut err = Vec::new();
        let mut out = Vec::new();
        let mut io = Io {
            stdout: &mut out,
            stderr: &mut err,
            stdout_is: StdoutIs::default(),
            color: always,
        };
        io.line("error: name\x1b[31mred");
        assert_eq!(
            String::from_utf8(err).unwrap(),
            "krm-merge: \x1b[1;31merror:\x1b[m name\\x1b[31mred\n"
        );
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
        // A name with a line break cannot fake a header line.
        assert!(unified_diff("x\n+++ b/y", Some("k: v\n"), None)
            .starts_with("--- \"a/x\\n+++ b/y\"\n+++ /dev/null\n"));
        assert_eq!(quote_path("a/\"q\"\\\x1b"), "\"a/\\\"q\\\"\\\\\\033\"");
        assert_eq!(quote_path("a/é"), "a/é");
    }
}
