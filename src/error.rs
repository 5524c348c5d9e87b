//! The errors of a run, one type per layer of the pipeline, each carrying where it happened, and
//! the one place where they become results.
//!
//! | layer | type | where it says it happened |
//! |---|---|---|
//! | bytes into text | [`NotUtf8`] | the file (or stdin), line and column |
//! | text into YAML | [`crate::yaml::ParseError`] | line and column |
//! | YAML into resources | [`crate::krm::ReadError`] | the document or item |
//! | the functionConfig into a plan | [`crate::config::ConfigError`] | the field path |
//! | a patch on a resource | `PatchFailure` | the patch index, the resource (and its file), the field path or the JSON patch operation |
//!
//! Each layer's error is made where the layer knows what went wrong and travels as a value to
//! the edge: the function's results (`PatchFailure::to_result`) and, at the command line, one
//! line on stderr and the exit code. Usage errors (arguments that make no sense) belong to the
//! command line, not to the library.
//!
//! What it must not do: print, exit, or decide what a failure means for the run (all or
//! nothing is the pipeline's rule).

use std::fmt;

use crate::budget::BudgetError;
use crate::config::{PatchKind, StepName};
use crate::krm::{FnResult, Severity};
use crate::merge::MergeError;
use crate::patch::json6902::PatchError;
use crate::patch::jsonmerge::MergePatchError;
use crate::path::Path;
use crate::select::identity::{Id, PreviousIdsError};
use crate::select::places::PlaceError;
use crate::yaml::anchors::AliasError;

/// Input that is not UTF-8 text: what it was and where its first invalid byte is.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{what}: invalid UTF-8 at line {line}, column {column}")]
pub struct NotUtf8 {
    /// `stdin`, or the file's path.
    pub what: String,
    /// 1-based line of the first invalid byte.
    pub line: usize,
    /// 1-based column (in bytes) of the first invalid byte.
    pub column: usize,
}

impl NotUtf8 {
    /// Reads `bytes` as text; on failure, the location of the first invalid byte and the bytes
    /// themselves (to give back as they came).
    pub fn check(bytes: Vec<u8>, what: &str) -> Result<String, (NotUtf8, Vec<u8>)> {
        String::from_utf8(bytes).map_err(|e| {
            let at = e.utf8_error().valid_up_to();
            let bytes = e.into_bytes();
            let before = bytes.get(..at).unwrap_or_default();
            let line_start = before
                .iter()
                .rposition(|b| *b == b'\n')
                .map_or(0, |p| p + 1);
            let err = NotUtf8 {
                what: what.to_owned(),
                line: before.iter().filter(|b| **b == b'\n').count() + 1,
                column: at - line_start + 1,
            };
            (err, bytes)
        })
    }
}

/// A patch that failed on one resource. The run fails with it: nothing is changed.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct PatchFailure {
    /// The patch's index in the functionConfig.
    pub step: usize,
    /// How messages name the patch (`patch[2]`, or its name).
    pub name: StepName,
    /// The patch's type.
    pub kind: PatchKind,
    /// The resource, as it was before the patch.
    pub resource: Id<'static>,
    /// The resource's file and index in it, when kpt said.
    pub file: Option<(String, u64)>,
    /// Which document of the patch, when the patch pairs documents with resources (a merge3
    /// update); counted from 1.
    pub document: Option<usize>,
    /// What went wrong.
    pub cause: Cause,
}

/// Why a patch failed on a resource: the walker's own typed error.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Cause {
    /// A strategic merge, a 3-way merge or `kubectl apply`'s merge (field path inside).
    Merge(MergeError),
    /// A JSON patch operation (operation index and pointer inside).
    Json6902(PatchError),
    /// A JSON merge patch.
    JsonMerge(MergePatchError),
    /// The resource's anchors cannot be copied where a merge into its aliases needs them.
    Anchors(AliasError),
    /// kustomize's build annotations on the resource disagree, so its original name is unknown.
    PreviousIds(PreviousIdsError),
    /// The resource does not have the shape the patch's `at:` describes.
    Place(PlaceError),
    /// The patch failed at one of the places its `at:` names (a JSON patch or a JSON merge
    /// patch: a merge's own error carries the whole path already).
    At { place: Path, cause: Box<Cause> },
    /// The patch would pass a bound on what it may cost on the resource (see
    /// [`crate::budget`]).
    Budget(BudgetError),
    /// The patch's result breaks a promise every patch keeps, whatever its type.
    Broken(Broken),
}

/// A patch's result that would break a promise every patch keeps on every resource (doc/GUIDE.md
/// "Selecting resources"), checked on the result whatever route the patch took.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub(crate) enum Broken {
    /// The resource would stop being a mapping (a JSON patch `replace ""` with a scalar).
    #[error("the result would be {found}, not a resource (a mapping)")]
    NotAResource { found: &'static str },
    /// A field that identifies the resource would be gone.
    #[error("the result would have no {field}; {rule}")]
    Removed { field: Path, rule: &'static str },
    /// A mapping that holds what a patch may not take would become something else.
    #[error("{field} would become {found}, and with it {what}")]
    Destroyed {
        field: Path,
        found: &'static str,
        what: String,
    },
}

impl Cause {
    /// The field the failure is about, when it is one.
    pub(crate) fn field(&self) -> Option<&Path> {
        match self {
            Cause::Merge(e) => Some(&e.path),
            Cause::Place(e) => Some(&e.path),
            Cause::At { place, .. } => Some(place),
            Cause::Broken(Broken::Removed { field, .. } | Broken::Destroyed { field, .. }) => {
                Some(field)
            }
            _ => None,
        }
    }
}

impl fmt::Display for Cause {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Cause::Merge(e) => e.kind.fmt(f),
            Cause::Json6902(e) => e.fmt(f),
            Cause::JsonMerge(e) => e.fmt(f),
            Cause::Anchors(e) => e.fmt(f),
            Cause::PreviousIds(e) => write!(f, "cannot tell the resource's original name: {e}"),
            Cause::Place(e) => e.fmt(f),
            Cause::At { place, cause } => write!(f, "at {place}: {cause}"),
            Cause::Budget(e) => e.fmt(f),
            Cause::Broken(e) => e.fmt(f),
        }
    }
}

impl fmt::Display for PatchFailure {
    /// `patch[1] (merge3): document 2: <cause>`; the resource and field are the result's.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} ({})", self.name, self.kind)?;
        if let Some(d) = self.document {
            write!(f, ": document {d}")?;
        }
        write!(f, ": {}", self.cause)
    }
}

impl PatchFailure {
    /// The failure as an error result naming the patch, the resource, its file and the field.
    pub(crate) fn to_result(&self) -> FnResult {
        let mut res =
            FnResult::new(Severity::Error, self.to_string()).tag("patch", self.step.to_string());
        if let StepName::Named(n) = &self.name {
            res = res.tag("patchName", n.clone());
        }
        res.resource = Some(self.resource.clone());
        res.file = self.file.clone();
        res.field = self.cause.field().cloned();
        res
    }
}

/// What an I/O error on a file says, in every message krm-merge writes: a few plain words
/// (`no such file`, `permission denied`), never the `(os error N)` of Rust's own text. Every
/// message about a file is `ROLE PATH: REASON` (`config fn.yaml: no such file`), the reason
/// from here.
pub fn io_reason(e: &std::io::Error) -> String {
    use std::io::ErrorKind as K;
    let plain = match e.kind() {
        K::NotFound => "no such file",
        K::PermissionDenied => "permission denied",
        K::IsADirectory => "a directory, not a file",
        K::NotADirectory => "a path through something that is not a directory",
        K::AlreadyExists => "already exists",
        K::StorageFull => "no space left on the device",
        K::ReadOnlyFilesystem => "a read-only file system",
        K::FileTooLarge => "too large for the file system",
        K::InvalidFilename => "not a valid file name (too long?)",
        K::CrossesDevices => "on another device",
        K::DirectoryNotEmpty => "a directory that is not empty",
        K::Interrupted => "interrupted",
        K::UnexpectedEof => "cut short",
        // ELOOP: its kind is not stable in the Rust this crate supports.
        _ if e.raw_os_error() == Some(rustix::io::Errno::LOOP.raw_os_error()) => {
            "a loop of symbolic links"
        }
        _ => "",
    };
    // An OS error, or one a library wrapped around it (tempfile adds the path it tried): the
    // plain words.
    if !plain.is_empty() && (e.raw_os_error().is_some() || e.to_string().contains(" (os error ")) {
        return plain.to_owned();
    }
    // An error made with a message of its own (io::Error::other), or a kind without words
    // above: its text, without the code Rust appends to an OS error's.
    let text = e.to_string();
    let text = match text.rfind(" (os error ") {
        Some(at) if text.ends_with(')') => text[..at].to_owned(),
        _ => text,
    };
    let mut chars = text.chars();
    match chars.next() {
        Some(c) if e.raw_os_error().is_some() => c.to_lowercase().chain(chars).collect(),
        _ if text.is_empty() && !plain.is_empty() => plain.to_owned(),
        _ => text,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn not_utf8_names_line_and_column() {
        let (e, bytes) = NotUtf8::check(b"a: 1\nb: \xff\n".to_vec(), "x.yaml").unwrap_err();
        assert_eq!(e.to_string(), "x.yaml: invalid UTF-8 at line 2, column 4");
        assert_eq!(bytes, b"a: 1\nb: \xff\n");
        assert_eq!(NotUtf8::check(b"ok".to_vec(), "x").unwrap(), "ok");
    }

    #[test]
    fn io_errors_are_said_in_plain_words() {
        use std::io::{Error, ErrorKind};
        assert_eq!(io_reason(&Error::from_raw_os_error(2)), "no such file");
        assert_eq!(
            io_reason(&Error::from_raw_os_error(13)),
            "permission denied"
        );
        assert_eq!(
            io_reason(&Error::from_raw_os_error(21)),
            "a directory, not a file"
        );
        // Kinds without words of their own keep the system's, without the code.
        let busy = io_reason(&Error::from_raw_os_error(16));
        assert!(!busy.contains("os error") && !busy.is_empty(), "{busy}");
        assert_eq!(
            io_reason(&Error::other("not a regular file")),
            "not a regular file"
        );
        let wrapped = Error::new(
            ErrorKind::NotFound,
            "No such file or directory (os error 2) at path \"/x/.tmp\"",
        );
        assert_eq!(io_reason(&wrapped), "no such file");
        assert_eq!(
            io_reason(&Error::new(ErrorKind::NotFound, "gone")),
            "gone",
            "a message of the caller's own is kept"
        );
    }

    #[test]
    fn a_failure_is_a_located_error_result() {
        let failure = PatchFailure {
            step: 2,
            name: StepName::Index(2),
            kind: PatchKind::Json6902,
            resource: Id::new("apps/v1", "Deployment", "web", "prod"),
            file: Some(("web.yaml".into(), 0)),
            document: None,
            cause: Cause::PreviousIds(PreviousIdsError {
                names: 2,
                namespaces: 1,
                kinds: 1,
            }),
        };
        let r = failure.to_result();
        assert_eq!(r.severity, Severity::Error);
        assert!(r
            .to_string()
            .starts_with("error: Deployment prod/web: patch[2] (json6902): cannot tell"));
        assert_eq!(r.tags, [("patch".to_owned(), "2".to_owned())]);
        assert_eq!(crate::krm::exit_code(&[r]), 1);
        assert_eq!(crate::krm::exit_code(&[]), 0);
    }
}
