//! Function results: what a run says about what it did, in the KRM Functions Specification's
//! `results` shape, and as the one line per result people read on stderr.
//!
//! What it must not do: decide what happened (the engine does) or write anything.

use std::fmt;

use crate::path::Path;
use crate::select::bookkeeping;
use crate::select::identity::Id;
use crate::yaml::{self, Node};

/// Severity of a [`FnResult`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Severity {
    /// The function failed (the run's exit status is non-zero).
    Error,
    /// Something the user should know; the run still succeeds.
    Warning,
    /// For information only.
    Info,
}

impl Severity {
    /// The severity as results write it: `error`, `warning`, `info`.
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Error => "error",
            Severity::Warning => "warning",
            Severity::Info => "info",
        }
    }
}

/// One entry of a ResourceList's `results` (KRM Functions Specification).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FnResult {
    /// `severity`.
    pub severity: Severity,
    /// `message`: what happened, for people.
    pub message: String,
    /// The resource it is about (`resourceRef`).
    pub resource: Option<Id<'static>>,
    /// `field.path`, e.g. `spec.template.spec.containers[name=app].image`.
    pub field: Option<Path>,
    /// `field.currentValue` / `field.proposedValue`, as YAML text of a scalar.
    pub current: Option<String>,
    /// `field.proposedValue`.
    pub proposed: Option<String>,
    /// `file.path` and `file.index`.
    pub file: Option<(String, u64)>,
    /// `tags`, in order.
    pub tags: Vec<(String, String)>,
}

impl FnResult {
    /// A result with only a severity and a message; the `at_*` methods add the rest.
    pub fn new(severity: Severity, message: impl Into<String>) -> Self {
        FnResult {
            severity,
            message: message.into(),
            resource: None,
            field: None,
            current: None,
            proposed: None,
            file: None,
            tags: Vec::new(),
        }
    }

    /// Names the resource (and its file, when kpt said where it lives).
    pub fn about(mut self, node: &Node<'_>) -> Self {
        self.resource = Some(Id::of(node).into_owned());
        self.file = bookkeeping::file_of(node).map(|(p, i)| (p.to_owned(), i));
        self
    }

    /// Names the field (`field.path`).
    pub fn at_field(mut self, path: Path) -> Self {
        self.field = Some(path);
        self
    }

    /// Adds these tags, in order.
    pub fn tags(mut self, tags: Vec<(String, String)>) -> Self {
        self.tags.extend(tags);
        self
    }

    pub(crate) fn tag(mut self, k: &str, v: impl Into<String>) -> Self {
        self.tags.push((k.to_owned(), v.into()));
        self
    }

    /// The result as a `results` entry.
    pub(crate) fn to_node(&self) -> Node<'static> {
        let mut n = Node::map();
        n.set("message", Node::string(self.message.clone()));
        n.set("severity", Node::string(self.severity.as_str()));
        if let Some(r) = &self.resource {
            let mut rr = Node::map();
            rr.set("apiVersion", Node::string(r.api_version.to_string()));
            rr.set("kind", Node::string(r.kind.to_string()));
            rr.set("name", Node::string(r.name.to_string()));
            if !r.namespace.is_empty() {
                rr.set("namespace", Node::string(r.namespace.to_string()));
            }
            n.set("resourceRef", rr);
        }
        if let Some(path) = &self.field {
            let mut f = Node::map();
            f.set("path", Node::string(path.to_string()));
            if let Some(c) = &self.current {
                f.set("currentValue", value_node(c));
            }
            if let Some(p) = &self.proposed {
                f.set("proposedValue", value_node(p));
            }
            n.set("field", f);
        }
        if let Some((path, index)) = &self.file {
            let mut f = Node::map();
            f.set("path", Node::string(path.clone()));
            if *index != 0 {
                f.set("index", Node::plain(index.to_string()));
            }
            n.set("file", f);
        }
        if !self.tags.is_empty() {
            let mut t = Node::map();
            for (k, v) in &self.tags {
                t.set(k, Node::string(v.clone()));
            }
            n.set("tags", t);
        }
        n
    }
}

/// A value given as one line of YAML, as a node of that value (`5` stays a number); text that
/// does not read as one value stays a string.
fn value_node(text: &str) -> Node<'static> {
    let parsed = yaml::parse_stream(text).ok().filter(|d| d.len() == 1);
    let root = parsed
        .and_then(|d| d.into_iter().next())
        .and_then(|d| d.root);
    match root {
        Some(mut n) if n.alias_name().is_none() => {
            n.make_block();
            n.into_owned()
        }
        _ => Node::string(text.to_owned()),
    }
}

/// The exit code results call for: 1 when any has severity `error`, else 0. (The library never
/// exits; the binary exits with this.)
pub fn exit_code(results: &[FnResult]) -> u8 {
    u8::from(results.iter().any(|r| r.severity == Severity::Error))
}

impl fmt::Display for FnResult {
    /// One line, as stderr shows it: `error: Deployment web: spec.replicas: message`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: ", self.severity.as_str())?;
        if let Some(r) = &self.resource {
            write!(f, "{r}: ")?;
        }
        if let Some(p) = &self.field {
            write!(f, "{p}: ")?;
        }
        f.write_str(&self.message.replace('\n', " "))
    }
}
