//! Patch targets: which resources a patch applies to, chosen exactly as kustomize's `patches:`
//! chooses them (`types.SelectorRegex` and `resWrangler.Select`).
//!
//! A [`TargetSpec`] is what the user writes (`group`, `version`, `kind`, `name`, `namespace`,
//! `labelSelector`, `annotationSelector`, all optional). [`Target::compile`] checks it once and
//! turns it into a [`Target`], which tests resources seen through a [`Meta`]:
//!
//! - **Patterns are anchored regular expressions.** Each of group, version, kind, name and
//!   namespace is compiled as `^(?:PATTERN)$`, so `name: eb` does not select `web` and
//!   `kind: Deploy.*` selects `Deployment`. An absent or empty pattern selects everything.
//!   Globs are not supported: `foo*` is `fo` followed by any number of `o`, and `*foo` is an
//!   error. Because the pattern is pasted between `^(?:` and `)$` as in kustomize, a pattern
//!   that closes the group early (`a)|(b`) is accepted and means what the pasted text says.
//! - **Group, version and kind** are compared with the resource's current values only.
//! - **Name and namespace** are compared with the current values and with the *original* ones:
//!   the first entries of kustomize's build annotations
//!   `internal.config.kubernetes.io/previousNames` and `.../previousNamespaces`, which kustomize
//!   fills as it renames resources. Names in between are not compared, as in kustomize.
//! - **The namespace compared is the effective namespace**: `_non_namespaceable_` for the
//!   cluster-scoped kinds kustomize knows (see [`is_cluster_scoped`](crate::select::identity::is_cluster_scoped)), else `default` when the
//!   namespace is empty, else the namespace. So `namespace: default` selects namespaced
//!   resources without a namespace (and unknown kinds, which count as namespaced), but no
//!   ClusterRole; `namespace: .*` selects ClusterRoles too.
//! - **Selectors** (see [`crate::select::labels`]) are matched against labels and annotations.
//!
//! Rust's `regex` and Go's `regexp` both implement RE2 syntax with matching in linear time, and
//! they agree on the ASCII text Kubernetes names are made of. Where they differ:
//! - `\d`, `\w`, `\s` and `\b` are Unicode-aware here and ASCII-only in Go (on ASCII input they
//!   agree, except that `\s` also matches a vertical tab here);
//! - some syntax means something else: `[a-z&&b]` is an intersection here (only `b`) and in Go
//!   a class of `a`-`z` and `&`; `\<` and `\>` are word boundaries here, literal `<`, `>` in Go;
//! - only Rust's `regex` accepts `(?x)`, nested repetitions (`a**`) and repetition counts over
//!   1000; only Go accepts `\Q...\E`, octal escapes (`\101`) and nesting deeper than 250 groups;
//! - a pattern whose compiled form exceeds [`REGEX_SIZE_LIMIT`] bytes is an error here, so a
//!   hostile pattern cannot take unbounded memory. Unicode classes are large (`\w` alone is
//!   about 50 KB), so `[\w-]{1,63}` fits but `\w{100}` does not.
//!
//! This module knows nothing of YAML and does no I/O: the caller describes each resource with
//! plain strings.

use std::fmt;

use regex::{Regex, RegexBuilder};
use serde::Deserialize;

use crate::select::identity::{Id, Meta, PreviousIdsError};
use crate::select::labels::{self, Selector};

/// The largest compiled size, in bytes, of one target pattern (`RegexBuilder::size_limit`).
pub const REGEX_SIZE_LIMIT: usize = 4 << 20;

/// A patch target as written in the functionConfig (and in kustomize's `patches[].target`).
///
/// Every field is optional; an absent or empty field places no condition. The five first are
/// regular expressions (anchored when compiled), the two last are label selector strings.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct TargetSpec {
    /// API group (the part of `apiVersion` before `/`; empty for the core group).
    pub group: Option<String>,
    /// API version (the part of `apiVersion` after `/`, or all of it).
    pub version: Option<String>,
    /// Kind.
    pub kind: Option<String>,
    /// `metadata.name`, current or original.
    pub name: Option<String>,
    /// Effective namespace, current or original.
    pub namespace: Option<String>,
    /// A label selector over `metadata.labels`.
    pub label_selector: Option<String>,
    /// A label selector over `metadata.annotations`.
    pub annotation_selector: Option<String>,
}

/// A compiled [`TargetSpec`]: anchored regular expressions and parsed selectors.
///
/// [`Target::default`] selects every resource, like `target: {}`.
#[derive(Debug, Clone, Default)]
pub struct Target {
    spec: TargetSpec,
    group: Option<Pattern>,
    version: Option<Pattern>,
    kind: Option<Pattern>,
    name: Option<Pattern>,
    namespace: Option<Pattern>,
    label_selector: Selector,
    annotation_selector: Selector,
}

/// A field of a [`TargetSpec`], named as the user writes it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TargetField {
    /// `group`
    Group,
    /// `version`
    Version,
    /// `kind`
    Kind,
    /// `name`
    Name,
    /// `namespace`
    Namespace,
    /// `labelSelector`
    LabelSelector,
    /// `annotationSelector`
    AnnotationSelector,
}

/// Why a [`TargetSpec`] does not compile: the field, and what is wrong with it.
///
/// Displays as `name: invalid regex "*foo": repetition operator missing expression`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{field}: {kind}")]
pub struct TargetError {
    /// The field at fault.
    pub field: TargetField,
    /// What is wrong with it.
    pub kind: TargetErrorKind,
}

/// What is wrong with a field of a [`TargetSpec`]. Long patterns are shortened in messages.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum TargetErrorKind {
    /// The pattern is not a valid regular expression.
    #[error("invalid regex {}: {message}", Abbrev(.pattern))]
    InvalidRegex {
        /// The pattern as written.
        pattern: String,
        /// The regex parser's explanation.
        message: String,
    },
    /// The compiled pattern would exceed [`REGEX_SIZE_LIMIT`].
    #[error("regex {} is too large: compiled, it exceeds {limit} bytes", Abbrev(.pattern))]
    RegexTooLarge {
        /// The pattern as written.
        pattern: String,
        /// The limit it exceeds, in bytes.
        limit: usize,
    },
    /// The selector string does not parse.
    #[error("invalid selector {}: {source}", Abbrev(.selector))]
    InvalidSelector {
        /// The selector as written.
        selector: String,
        /// The parse error.
        source: labels::ParseError,
    },
}

impl Target {
    /// Compiles a spec: anchors and compiles the patterns, parses the selectors. The first
    /// field that fails, in the order of [`TargetSpec`]'s fields, is reported.
    pub fn compile(spec: &TargetSpec) -> Result<Target, TargetError> {
        Ok(Target {
            spec: spec.clone(),
            group: pattern(TargetField::Group, spec.group.as_deref())?,
            version: pattern(TargetField::Version, spec.version.as_deref())?,
            kind: pattern(TargetField::Kind, spec.kind.as_deref())?,
            name: pattern(TargetField::Name, spec.name.as_deref())?,
            namespace: pattern(TargetField::Namespace, spec.namespace.as_deref())?,
            label_selector: selector(TargetField::LabelSelector, spec.label_selector.as_deref())?,
            annotation_selector: selector(
                TargetField::AnnotationSelector,
                spec.annotation_selector.as_deref(),
            )?,
        })
    }

    /// Compiles a spec as [`Target::compile`] does, and on failure says what is wrong with every
    /// field that fails, not only the first.
    pub fn compile_all(spec: &TargetSpec) -> Result<Target, Vec<TargetError>> {
        let mut errors = Vec::new();
        let mut p = |field, text: &Option<String>| {
            pattern(field, text.as_deref())
                .map_err(|e| errors.push(e))
                .ok()
                .flatten()
        };
        let group = p(TargetField::Group, &spec.group);
        let version = p(TargetField::Version, &spec.version);
        let kind = p(TargetField::Kind, &spec.kind);
        let name = p(TargetField::Name, &spec.name);
        let namespace = p(TargetField::Namespace, &spec.namespace);
        let mut s = |field, text: &Option<String>| {
            selector(field, text.as_deref())
                .map_err(|e| errors.push(e))
                .unwrap_or_default()
        };
        let label_selector = s(TargetField::LabelSelector, &spec.label_selector);
        let annotation_selector = s(TargetField::AnnotationSelector, &spec.annotation_selector);
        if !errors.is_empty() {
            return Err(errors);
        }
        Ok(Target {
            spec: spec.clone(),
            group,
            version,
            kind,
            name,
            namespace,
            label_selector,
            annotation_selector,
        })
    }

    /// The spec this target was compiled from.
    pub fn spec(&self) -> &TargetSpec {
        &self.spec
    }

    /// Whether the resource's type (group, version, kind) matches: what most targets name, and
    /// what rules most resources out, without reading their names, labels or annotations (no
    /// earlier name changes a type). [`Target::matches`] asks it first.
    pub fn matches_type(&self, id: &Id<'_>) -> bool {
        let (group, version) = id.group_version();
        is_match(&self.kind, &id.kind)
            && is_match(&self.group, group)
            && is_match(&self.version, version)
    }

    /// Whether this target selects the resource, by kustomize's rules (see the module doc).
    ///
    /// Fails only when the resource's build annotations are inconsistent
    /// ([`Meta::original_id`]) and the target compares names or namespaces, the only
    /// use of them (kustomize reads them for every resource, and panics).
    /// The type is compared first, so most resources are ruled out without more work.
    pub fn matches(&self, resource: &Meta<'_>) -> Result<bool, PreviousIdsError> {
        if !self.matches_type(&resource.id) {
            return Ok(false);
        }
        // The original name and namespace only matter when a pattern asks for them.
        if self.name.is_some() || self.namespace.is_some() {
            let original = resource.original_id()?;
            let name_ok = match &self.name {
                None => true,
                Some(_) => {
                    is_match(&self.name, &resource.id.name)
                        || original
                            .as_ref()
                            .is_some_and(|o| is_match(&self.name, &o.name))
                }
            };
            if !name_ok {
                return Ok(false);
            }
            if self.namespace.is_some() {
                let current = resource.id.effective_namespace();
                let original_namespace = original.as_ref().map_or(current, Id::effective_namespace);
                if !(is_match(&self.namespace, current)
                    || is_match(&self.namespace, original_namespace))
                {
                    return Ok(false);
                }
            }
        }
        Ok(self.label_selector.matches(|k| resource.label(k))
            && self.annotation_selector.matches(|k| resource.annotation(k)))
    }
}

/// A resource a target that selects nothing nearly selected: it differs from the target in one
/// field only, and the way a slip of the keyboard makes it differ. Said with "selects no
/// resource" (`did you mean kind: Deployment (Deployment web)?`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NearMiss {
    /// The field that differs.
    pub field: TargetField,
    /// What the resource has there.
    pub value: String,
    /// The resource, as messages name it (`Deployment prod/web`).
    pub resource: String,
}

impl fmt::Display for NearMiss {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let value = if is_plain(&self.value) {
            self.value.clone()
        } else {
            format!("{:?}", self.value)
        };
        write!(
            f,
            "did you mean {}: {value} ({})?",
            self.field, self.resource
        )
    }
}

impl Target {
    /// Whether this target, which does not select the resource, nearly does: every field
    /// matches but one, and that one is a kind written in another case or one edit away, a name
    /// one edit away (both as plain text: a pattern says what it means), or a namespace (the
    /// resource is in another). Labels and annotations must match. The cost is a few
    /// comparisons and, for a name, one linear pass.
    pub fn near_miss(&self, resource: &Meta<'_>) -> Option<NearMiss> {
        let id = &resource.id;
        let (group, version) = id.group_version();
        if !is_match(&self.group, group) || !is_match(&self.version, version) {
            return None;
        }
        let kind_ok = is_match(&self.kind, &id.kind);
        let name_ok = is_match(&self.name, &id.name);
        let namespace = id.effective_namespace();
        let ns_ok = is_match(&self.namespace, namespace);
        let selectors_ok = self.label_selector.matches(|k| resource.label(k))
            && self.annotation_selector.matches(|k| resource.annotation(k));
        if !selectors_ok {
            return None;
        }
        let near = |p: &Option<Pattern>, actual: &str| match p {
            Some(Pattern::Text(t)) => one_edit_apart(t, actual),
            _ => false,
        };
        let (field, value) = match (kind_ok, name_ok, ns_ok) {
            (false, true, true) if near(&self.kind, &id.kind) => (TargetField::Kind, &*id.kind),
            (true, false, true) if near(&self.name, &id.name) => (TargetField::Name, &*id.name),
            (true, true, false) if !namespace.is_empty() => (TargetField::Namespace, namespace),
            _ => return None,
        };
        Some(NearMiss {
            field,
            value: value.to_owned(),
            resource: id.to_string(),
        })
    }
}

/// Whether `a` becomes `b` by changing the case of letters and at most one insertion,
/// deletion, substitution or swap of two neighbours. Linear.
fn one_edit_apart(a: &str, b: &str) -> bool {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    if a.len().abs_diff(b.len()) > 1 {
        return false;
    }
    let eq = |x: u8, y: u8| x.eq_ignore_ascii_case(&y);
    let start = a.iter().zip(b).take_while(|(x, y)| eq(**x, **y)).count();
    if start == a.len() && start == b.len() {
        return true;
    }
    let (ra, rb) = (&a[start..], &b[start..]);
    let same = |x: &[u8], y: &[u8]| x.len() == y.len() && x.iter().zip(y).all(|(p, q)| eq(*p, *q));
    // Substitution, insertion, deletion, swap.
    (ra.len() == rb.len() && same(&ra[1..], &rb[1..]))
        || (rb.len() == ra.len() + 1 && same(ra, &rb[1..]))
        || (ra.len() == rb.len() + 1 && same(&ra[1..], rb))
        || (ra.len() == rb.len()
            && ra.len() >= 2
            && eq(ra[0], rb[1])
            && eq(ra[1], rb[0])
            && same(&ra[2..], &rb[2..]))
}

impl TargetField {
    /// The field's name as the user writes it (`labelSelector`).
    pub fn as_str(self) -> &'static str {
        match self {
            TargetField::Group => "group",
            TargetField::Version => "version",
            TargetField::Kind => "kind",
            TargetField::Name => "name",
            TargetField::Namespace => "namespace",
            TargetField::LabelSelector => "labelSelector",
            TargetField::AnnotationSelector => "annotationSelector",
        }
    }
}

impl fmt::Display for TargetField {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Prints the fields that are set, in flow style: `{kind: Deployment, name: web-.*}`, or `{}`.
/// Values that YAML would misread are double-quoted.
impl fmt::Display for TargetSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let fields = [
            (TargetField::Group, &self.group),
            (TargetField::Version, &self.version),
            (TargetField::Kind, &self.kind),
            (TargetField::Name, &self.name),
            (TargetField::Namespace, &self.namespace),
            (TargetField::LabelSelector, &self.label_selector),
            (TargetField::AnnotationSelector, &self.annotation_selector),
        ];
        f.write_str("{")?;
        let set = fields
            .iter()
            .filter_map(|(field, v)| Some((field, v.as_deref().filter(|v| !v.is_empty())?)));
        for (i, (field, value)) in set.enumerate() {
            if i > 0 {
                f.write_str(", ")?;
            }
            if is_plain(value) {
                write!(f, "{field}: {value}")?;
            } else {
                write!(f, "{field}: {value:?}")?;
            }
        }
        f.write_str("}")
    }
}

/// Prints like its [`TargetSpec`].
impl fmt::Display for Target {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.spec.fmt(f)
    }
}

/// Whether a value can be printed unquoted inside a YAML flow mapping.
fn is_plain(s: &str) -> bool {
    let starts_ok = s
        .chars()
        .next()
        .is_some_and(|c| !"-?:,[]{}#&*!|>'\"%@`".contains(c));
    starts_ok
        && s.trim() == s
        && !s.contains(|c: char| ",[]{}".contains(c) || c.is_control())
        && !s.contains(": ")
        && !s.contains(" #")
}

/// An absent pattern matches everything.
fn is_match(pattern: &Option<Pattern>, s: &str) -> bool {
    pattern.as_ref().is_none_or(|p| p.is_match(s))
}

/// A field's pattern, compiled. Most patterns are plain names (`Deployment`, `apps`, `v1`),
/// which match exactly the text they are: those are compared as text, without building an
/// automaton for them (for every target, at every start) or running one on every resource.
#[derive(Debug, Clone)]
enum Pattern {
    Text(String),
    Regex(Regex),
}

impl Pattern {
    fn is_match(&self, s: &str) -> bool {
        match self {
            Pattern::Text(t) => t == s,
            Pattern::Regex(re) => re.is_match(s),
        }
    }
}

/// Whether `^(?:p)$` matches `p` itself and nothing else: ASCII letters and digits, and
/// punctuation that has no meaning in a regular expression outside a class.
fn is_plain_text(p: &str) -> bool {
    p.bytes().all(|b| {
        b.is_ascii_alphanumeric()
            || matches!(
                b,
                b'-' | b'_' | b'/' | b':' | b'@' | b'=' | b',' | b'%' | b'!' | b'<' | b'>' | b';'
            )
    })
}

/// A pattern that reads as a shell glob rather than the regular expression it is: `web-*`
/// (which matches `web`, `web-`, `web--`, but not `web-frontend`). Returns the regular
/// expression the user probably meant (`web-.*`), or `None` when the pattern is not glob-like.
///
/// Glob-like: a `*` that stands after a character that a regex repetition rarely follows in a
/// name pattern (`-`, `_`, `/`, a letter, a digit, or the start), and no regex syntax besides
/// `*`, `?` and `.` (dots are common in names and groups, and a glob's `.` is a literal).
pub fn glob_lookalike(pattern: &str) -> Option<String> {
    const REGEX_ONLY: &[char] = &['(', ')', '[', ']', '{', '}', '|', '^', '$', '+', '\\'];
    if !pattern.contains('*') || pattern.contains(REGEX_ONLY) || pattern.contains(".*") {
        return None;
    }
    let mut meant = String::with_capacity(pattern.len() + 4);
    for c in pattern.chars() {
        match c {
            '*' => meant.push_str(".*"),
            '?' => meant.push('.'),
            '.' => meant.push_str("\\."),
            c => meant.push(c),
        }
    }
    Some(meant)
}

impl TargetSpec {
    /// The patterns of this spec that look like globs, with the regex each probably meant.
    pub fn glob_lookalikes(&self) -> Vec<(TargetField, &str, String)> {
        [
            (TargetField::Group, &self.group),
            (TargetField::Version, &self.version),
            (TargetField::Kind, &self.kind),
            (TargetField::Name, &self.name),
            (TargetField::Namespace, &self.namespace),
        ]
        .into_iter()
        .filter_map(|(field, p)| {
            let p = p.as_deref()?;
            glob_lookalike(p).map(|meant| (field, p, meant))
        })
        .collect()
    }
}

/// Compiles a pattern as kustomize does: `^(?:PATTERN)$`; absent or empty means "any".
fn pattern(field: TargetField, pattern: Option<&str>) -> Result<Option<Pattern>, TargetError> {
    let Some(p) = pattern.filter(|p| !p.is_empty()) else {
        return Ok(None);
    };
    if is_plain_text(p) {
        return Ok(Some(Pattern::Text(p.to_owned())));
    }
    let compiled = RegexBuilder::new(&format!("^(?:{p})$"))
        .size_limit(REGEX_SIZE_LIMIT)
        .build();
    let pattern = p.to_string();
    compiled.map(|re| Some(Pattern::Regex(re))).map_err(|e| {
        let kind = match e {
            regex::Error::CompiledTooBig(limit) => {
                TargetErrorKind::RegexTooLarge { pattern, limit }
            }
            regex::Error::Syntax(text) => TargetErrorKind::InvalidRegex {
                pattern,
                message: syntax_message(&text),
            },
            other => TargetErrorKind::InvalidRegex {
                pattern,
                message: other.to_string(),
            },
        };
        TargetError { field, kind }
    })
}

/// The regex crate formats a syntax error as several lines (the anchored pattern, a caret line
/// and `error: MESSAGE`); keep the message, which is what a user can act on.
fn syntax_message(text: &str) -> String {
    let message = text
        .lines()
        .rev()
        .find_map(|line| line.strip_prefix("error: "));
    message.unwrap_or(text).trim().to_string()
}

/// Parses a selector; absent means "everything", like the empty string.
fn selector(field: TargetField, s: Option<&str>) -> Result<Selector, TargetError> {
    let Some(s) = s else {
        return Ok(Selector::default());
    };
    s.parse().map_err(|source| TargetError {
        field,
        kind: TargetErrorKind::InvalidSelector {
            selector: s.to_string(),
            source,
        },
    })
}

/// Shortens a user string for an error message, quoted.
struct Abbrev<'a>(&'a str);

impl fmt::Display for Abbrev<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        const MAX_CHARS: usize = 80;
        match self.0.char_indices().nth(MAX_CHARS) {
            Some((cut, _)) => {
                let head = self.0.get(..cut).unwrap_or_default();
                write!(f, "{head:?}... ({} bytes)", self.0.len())
            }
            None => write!(f, "{:?}", self.0),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::select::identity::{PREVIOUS_KINDS, PREVIOUS_NAMES, PREVIOUS_NAMESPACES};

    fn s(x: &str) -> Option<String> {
        Some(x.to_string())
    }

    /// A spec with one field set.
    fn one(field: TargetField, value: &str) -> TargetSpec {
        let mut spec = TargetSpec::default();
        let slot = match field {
            TargetField::Group => &mut spec.group,
            TargetField::Version => &mut spec.version,
            TargetField::Kind => &mut spec.kind,
            TargetField::Name => &mut spec.name,
            TargetField::Namespace => &mut spec.namespace,
            TargetField::LabelSelector => &mut spec.label_selector,
            TargetField::AnnotationSelector => &mut spec.annotation_selector,
        };
        *slot = s(value);
        spec
    }

    fn compile(spec: &TargetSpec) -> Target {
        Target::compile(spec).unwrap()
    }

    fn compile_err(spec: &TargetSpec) -> String {
        Target::compile(spec).unwrap_err().to_string()
    }

    fn view<'a>(
        api_version: &'a str,
        kind: &'a str,
        namespace: &'a str,
        name: &'a str,
    ) -> Meta<'a> {
        Meta {
            id: Id::new(api_version, kind, name, namespace),
            ..Meta::default()
        }
    }

    fn selects(spec: &TargetSpec, resource: &Meta<'_>) -> bool {
        compile(spec).matches(resource).unwrap()
    }

    const DEPLOY: (&str, &str) = ("apps/v1", "Deployment");
    const CLUSTER_ROLE: (&str, &str) = ("rbac.authorization.k8s.io/v1", "ClusterRole");
    const WIDGET: (&str, &str) = ("example.com/v1", "Widget");

    #[test]
    fn globs_are_told_apart_from_regexes() {
        assert_eq!(glob_lookalike("web-*").as_deref(), Some("web-.*"));
        assert_eq!(glob_lookalike("*-web").as_deref(), Some(".*-web"));
        assert_eq!(glob_lookalike("app?.example.com").as_deref(), None);
        assert_eq!(
            glob_lookalike("*.example.com").as_deref(),
            Some(".*\\.example\\.com")
        );
        for regex in [
            "web-.*",
            "web-[a-z]*",
            "(web)*",
            "web",
            "a|b*",
            "x\\d*",
            "web+",
        ] {
            assert_eq!(glob_lookalike(regex), None, "{regex}");
        }
        let spec = TargetSpec {
            kind: s("Deployment"),
            name: s("web-*"),
            ..TargetSpec::default()
        };
        assert_eq!(
            spec.glob_lookalikes(),
            vec![(TargetField::Name, "web-*", "web-.*".to_owned())]
        );
    }

    /// A pattern compared as text matches exactly what its anchored regular expression does.
    #[test]
    fn plain_text_patterns_match_what_their_regex_matches() {
        let patterns = [
            "Deployment",
            "apps",
            "v1",
            "app-1",
            "team_a",
            "a/b",
            "x:y@z",
            "k=v,w",
            "50%!",
            "<a>;",
            "app.1",
            "app-1.*",
            "a|b",
            "a+",
            "(?i)a",
            "[a-b]",
            "a{2}",
            "^a",
            "a$",
            "a\\d",
        ];
        let candidates = [
            "Deployment",
            "deployment",
            "apps",
            "app",
            "appsx",
            "v1",
            "v1beta1",
            "app-1",
            "app-1x",
            "app-11",
            "appx1",
            "team_a",
            "a/b",
            "x:y@z",
            "k=v,w",
            "50%!",
            "<a>;",
            "a",
            "b",
            "aa",
            "A",
            "a-b",
            "",
            "app.1",
        ];
        for p in patterns {
            let compiled = pattern(TargetField::Name, Some(p)).unwrap().unwrap();
            assert_eq!(
                matches!(compiled, Pattern::Text(_)),
                is_plain_text(p),
                "{p}"
            );
            let re = Regex::new(&format!("^(?:{p})$")).unwrap();
            for c in candidates.iter().chain([&p]) {
                assert_eq!(compiled.is_match(c), re.is_match(c), "{p} on {c}");
            }
        }
        for p in ["app.1", "app-1.*", "a|b", "(?i)a", "a\\d"] {
            assert!(!is_plain_text(p), "{p}");
        }
    }

    #[test]
    fn patterns_are_anchored() {
        use TargetField::*;
        let cases: &[(TargetField, &str, &str, bool)] = &[
            (Name, "web", "web", true),
            (Name, "eb", "web", false),
            (Name, "we", "web", false),
            (Name, "web.*", "web", true),
            (Name, "web.*", "web-2", true),
            (Name, "web|api", "api", true),
            (Name, "web|api", "webapi", false),
            (Name, "", "anything", true),
            // Not a glob: `foo*` is `fo` then any number of `o`.
            (Name, "foo*", "fo", true),
            (Name, "foo*", "foooo", true),
            (Name, "foo*", "foobar", false),
            // The pattern is pasted between `^(?:` and `)$`, as in kustomize.
            (Name, "a)|(b", "abc", true),
            (Name, "a)|(b", "cab", true),
            (Name, "a)|(b", "cat", false),
            (Kind, "Deploy.*", "Deployment", true),
            (Kind, "deployment", "Deployment", false),
            (Kind, "(?i)deployment", "Deployment", true),
            (Kind, "Deploy", "Deployment", false),
            (Group, "apps", "apps", true),
            (Group, "app", "apps", false),
            (Group, "apps", "", false),
            (Version, "v1.*", "v1beta1", true),
            (Version, "v1", "v1beta1", false),
            (Namespace, "prod|staging", "staging", true),
            (Namespace, "prod", "production", false),
        ];
        for &(field, pattern, value, want) in cases {
            let api_version = match field {
                Group => format!("{value}/v1"),
                Version => format!("example.com/{value}"),
                _ => "example.com/v1".to_owned(),
            };
            let mut r = view(&api_version, "Widget", "ns", "n");
            match field {
                Kind => r.id.kind = value.into(),
                Name => r.id.name = value.into(),
                Namespace => r.id.namespace = value.into(),
                _ => {}
            }
            assert_eq!(
                selects(&one(field, pattern), &r),
                want,
                "{field}: {pattern:?} on {value:?}"
            );
        }
    }

    #[test]
    fn absent_and_empty_fields_select_everything() {
        let resources = [
            view(DEPLOY.0, DEPLOY.1, "", "web"),
            view(CLUSTER_ROLE.0, CLUSTER_ROLE.1, "", "admin"),
            view("v1", "Namespace", "", "prod"),
            view("", "", "", ""),
        ];
        let empty = TargetSpec {
            group: s(""),
            version: s(""),
            kind: s(""),
            name: s(""),
            namespace: s(""),
            label_selector: s(""),
            annotation_selector: s(" "),
        };
        for r in &resources {
            assert!(selects(&TargetSpec::default(), r), "{r:?}");
            assert!(selects(&empty, r), "{r:?}");
            assert_eq!(Target::default().matches(r), Ok(true), "{r:?}");
        }
    }

    #[test]
    fn namespace_is_the_effective_namespace() {
        let cases: &[((&str, &str), &str, &str, bool)] = &[
            (DEPLOY, "", "default", true),
            (DEPLOY, "default", "default", true),
            (DEPLOY, "prod", "default", false),
            (DEPLOY, "prod", "prod", true),
            (DEPLOY, "", "", true), // no pattern
            // Unknown kinds count as namespaced.
            (WIDGET, "", "default", true),
            (WIDGET, "", "_non_namespaceable_", false),
            // Cluster-scoped kinds have kustomize's placeholder, whatever metadata.namespace says.
            (CLUSTER_ROLE, "", "default", false),
            (CLUSTER_ROLE, "", ".*", true),
            (CLUSTER_ROLE, "", "_non_namespaceable_", true),
            (CLUSTER_ROLE, "prod", "prod", false),
            (CLUSTER_ROLE, "prod", "default", false),
            (("v1", "Namespace"), "", "default", false),
            (("v1", "Namespace"), "", ".*", true),
            // kustomize looks kinds up by apiVersion: this version is not in its table.
            (
                ("rbac.authorization.k8s.io/v1alpha1", "ClusterRole"),
                "",
                "default",
                true,
            ),
            (("v2", "Namespace"), "", "default", true),
        ];
        for &((api_version, kind), namespace, pattern, want) in cases {
            let r = view(api_version, kind, namespace, "x");
            let spec = one(TargetField::Namespace, pattern);
            assert_eq!(
                selects(&spec, &r),
                want,
                "{api_version} {kind} in {namespace:?}: {pattern:?}"
            );
        }
    }

    #[test]
    fn gvk_combined() {
        let spec = TargetSpec {
            group: s("apps"),
            version: s("v1"),
            kind: s("Deploy.*"),
            name: s("web.*"),
            ..TargetSpec::default()
        };
        let cases: &[(Meta<'_>, bool)] = &[
            (view("apps/v1", "Deployment", "", "web"), true),
            (view("apps/v1", "Deployment", "prod", "web-2"), true),
            (view("apps/v1beta1", "Deployment", "", "web"), false),
            (view("extensions/v1", "Deployment", "", "web"), false),
            (view("apps/v1", "StatefulSet", "", "web"), false),
            (view("apps/v1", "Deployment", "", "api"), false),
        ];
        for (r, want) in cases {
            assert_eq!(selects(&spec, r), *want, "{r:?}");
        }
    }

    /// kustomize's build annotations for a resource renamed twice (`web` -> `p-web` -> `p-web-s`)
    /// and moved from no namespace to `prod`.
    const RENAMED: &[(&str, &str)] = &[
        (PREVIOUS_NAMES, "web,p-web"),
        (PREVIOUS_NAMESPACES, "default,default"),
        (PREVIOUS_KINDS, "Deployment,Deployment"),
    ];

    #[test]
    fn names_and_namespaces_match_the_original_too() {
        let mut r = view(DEPLOY.0, DEPLOY.1, "prod", "p-web-s");
        r.annotations = RENAMED.to_vec();
        let cases: &[(TargetField, &str, bool)] = &[
            (TargetField::Name, "p-web-s", true),
            (TargetField::Name, "web", true),
            (TargetField::Name, "p-web", false), // only the oldest name counts
            (TargetField::Name, "other", false),
            (TargetField::Namespace, "prod", true),
            (TargetField::Namespace, "default", true),
            (TargetField::Namespace, "staging", false),
        ];
        for &(field, pattern, want) in cases {
            assert_eq!(
                selects(&one(field, pattern), &r),
                want,
                "{field}: {pattern:?}"
            );
        }
        // Name and namespace are checked separately: the original name with the current
        // namespace is selected.
        let spec = TargetSpec {
            name: s("web"),
            namespace: s("prod"),
            ..TargetSpec::default()
        };
        assert!(selects(&spec, &r));
    }

    #[test]
    fn original_identity_details() {
        // The kind only ever matches the current kind.
        let mut r = view("apps/v1", "StatefulSet", "", "db");
        let annotations = [
            (PREVIOUS_NAMES, "old-db"),
            (PREVIOUS_NAMESPACES, ""),
            (PREVIOUS_KINDS, "Deployment"),
        ];
        r.annotations = annotations.to_vec();
        assert!(!selects(&one(TargetField::Kind, "Deployment"), &r));
        assert!(selects(&one(TargetField::Name, "old-db"), &r));
        // An empty recorded namespace counts as `default`.
        assert!(selects(&one(TargetField::Namespace, "default"), &r));

        // A cluster-scoped resource keeps the placeholder it was recorded with...
        let mut cr = view(CLUSTER_ROLE.0, CLUSTER_ROLE.1, "", "p-admin");
        let recorded = [
            (PREVIOUS_NAMES, "admin"),
            (PREVIOUS_NAMESPACES, "_non_namespaceable_"),
            (PREVIOUS_KINDS, "ClusterRole"),
        ];
        cr.annotations = recorded.to_vec();
        assert!(!selects(&one(TargetField::Namespace, "default"), &cr));
        // ...but the original identity is built without scope information, as in kustomize.
        let unrecorded = [(PREVIOUS_NAMES, "admin")];
        cr.annotations = unrecorded.to_vec();
        assert!(selects(&one(TargetField::Namespace, "default"), &cr));

        // Only previousNames makes an original identity.
        let no_names = [(PREVIOUS_NAMESPACES, "a"), (PREVIOUS_KINDS, "K")];
        r.annotations = no_names.to_vec();
        assert_eq!(r.original_id(), Ok(None));
        let names_only = [(PREVIOUS_NAMES, "a")];
        r.annotations = names_only.to_vec();
        assert_eq!(r.original_id(), Ok(Some(Id::new("", "", "a", ""))));
    }

    #[test]
    fn inconsistent_build_annotations_are_an_error() {
        let mut r = view(DEPLOY.0, DEPLOY.1, "", "web");
        let bad = [
            (PREVIOUS_NAMES, "a,b"),
            (PREVIOUS_NAMESPACES, "x"),
            (PREVIOUS_KINDS, "K,K"),
        ];
        r.annotations = bad.to_vec();
        let err = PreviousIdsError {
            names: 2,
            namespaces: 1,
            kinds: 2,
        };
        // Only a target that compares names or namespaces needs the original ones.
        assert_eq!(Target::default().matches(&r), Ok(true));
        assert_eq!(
            compile(&one(TargetField::Kind, "Nope")).matches(&r),
            Ok(false)
        );
        assert_eq!(
            compile(&one(TargetField::Name, "web")).matches(&r),
            Err(err.clone())
        );
        assert_eq!(
            compile(&one(TargetField::Namespace, ".*")).matches(&r),
            Err(err.clone())
        );
        assert_eq!(
            err.to_string(),
            "annotations internal.config.kubernetes.io/previousNames, \
             internal.config.kubernetes.io/previousNamespaces and \
             internal.config.kubernetes.io/previousKinds list 2, 1 and 2 entries; \
             they must list as many"
        );
        let missing = [(PREVIOUS_NAMES, "a,b")];
        r.annotations = missing.to_vec();
        assert_eq!(
            r.original_id(),
            Err(PreviousIdsError {
                names: 2,
                namespaces: 1,
                kinds: 1
            })
        );
    }

    #[test]
    fn label_and_annotation_selectors() {
        let web_labels = [("app", "web"), ("tier", "fe")];
        let web2_labels = [("app", "web2")];
        let be_labels = [("app", "web"), ("tier", "be")];
        let team = [("team", "a"), ("example.com/owner", "x")];
        let mk = |labels: &[(&'static str, &'static str)],
                  annotations: &[(&'static str, &'static str)]| Meta {
            labels: labels.to_vec(),
            annotations: annotations.to_vec(),
            ..view(DEPLOY.0, DEPLOY.1, "", "n")
        };
        let cases: &[(TargetSpec, Meta<'_>, bool)] = &[
            (
                one(TargetField::LabelSelector, "app in (web,web2),tier!=be"),
                mk(&web_labels, &[]),
                true,
            ),
            (
                one(TargetField::LabelSelector, "app in (web,web2),tier!=be"),
                mk(&web2_labels, &[]),
                true,
            ),
            (
                one(TargetField::LabelSelector, "app in (web,web2),tier!=be"),
                mk(&be_labels, &[]),
                false,
            ),
            (
                one(TargetField::LabelSelector, "team"),
                mk(&web_labels, &team),
                false,
            ),
            (
                one(TargetField::AnnotationSelector, "team"),
                mk(&web_labels, &team),
                true,
            ),
            (
                one(TargetField::AnnotationSelector, "team"),
                mk(&web_labels, &[]),
                false,
            ),
            (
                one(TargetField::AnnotationSelector, "team=a,example.com/owner"),
                mk(&[], &team),
                true,
            ),
            (
                one(TargetField::AnnotationSelector, "!team"),
                mk(&[], &team),
                false,
            ),
            (
                one(TargetField::AnnotationSelector, "app"),
                mk(&web_labels, &[]),
                false,
            ),
        ];
        for (spec, r, want) in cases {
            assert_eq!(selects(spec, r), *want, "{spec} on {r:?}");
        }
    }

    #[test]
    fn compile_errors_name_the_field() {
        use TargetField::*;
        let cases: &[(TargetField, &str, &str)] = &[
            (Name, "*foo", "name: invalid regex \"*foo\": repetition operator missing expression"),
            (Group, "(", "group: invalid regex \"(\": unclosed group"),
            (
                Version,
                "v[2-1]",
                "version: invalid regex \"v[2-1]\": invalid character class range, \
                 the start must be <= the end",
            ),
            (Kind, r"\pFoo", r#"kind: invalid regex "\\pFoo": Unicode property not found"#),
            (
                Namespace,
                r"(a)\1",
                r#"namespace: invalid regex "(a)\\1": backreferences are not supported"#,
            ),
            (
                Name,
                "(?=a)",
                "name: invalid regex \"(?=a)\": look-around, including look-ahead and look-behind, \
                 is not supported",
            ),
            (
                LabelSelector,
                "env in (prod",
                "labelSelector: invalid selector \"env in (prod\": found end of string, \
                 expected ',' or ')' (at offset 12)",
            ),
            (
                AnnotationSelector,
                "owner=a@b.com",
                "annotationSelector: invalid selector \"owner=a@b.com\": invalid value \"a@b.com\" \
                 for key \"owner\": a value must be empty or consist of letters, digits, '-', '_' \
                 and '.', and start and end with a letter or digit (at offset 6)",
            ),
        ];
        for &(field, value, want) in cases {
            assert_eq!(compile_err(&one(field, value)), want, "{field}: {value:?}");
        }

        // The first bad field in spec order is reported.
        let spec = TargetSpec {
            kind: s("("),
            name: s("*"),
            label_selector: s(","),
            ..TargetSpec::default()
        };
        assert_eq!(
            compile_err(&spec),
            "kind: invalid regex \"(\": unclosed group"
        );
        let err = Target::compile(&spec).unwrap_err();
        assert_eq!(err.field, Kind);
        assert!(matches!(err.kind, TargetErrorKind::InvalidRegex { .. }));

        // Long patterns are shortened.
        let long = format!("({}", "a".repeat(100));
        let want = format!(
            "name: invalid regex \"({}\"... (101 bytes): unclosed group",
            "a".repeat(79)
        );
        assert_eq!(compile_err(&one(Name, &long)), want);
    }

    #[test]
    fn huge_patterns_are_errors() {
        let cases = [r"\w{100}", "a{1000}{1000}", r"(\pL{63}){2}"];
        for pattern in cases {
            let err = Target::compile(&one(TargetField::Name, pattern)).unwrap_err();
            assert_eq!(
                err.kind,
                TargetErrorKind::RegexTooLarge {
                    pattern: pattern.into(),
                    limit: REGEX_SIZE_LIMIT
                },
                "{pattern}"
            );
        }
        assert_eq!(
            compile_err(&one(TargetField::Name, r"\w{100}")),
            r#"name: regex "\\w{100}" is too large: compiled, it exceeds 4194304 bytes"#
        );
        // Realistic patterns, Unicode classes included, stay well within the limit.
        for pattern in [
            r"[\w-]{1,63}",
            ".{1,253}",
            r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*",
        ] {
            assert!(
                Target::compile(&one(TargetField::Name, pattern)).is_ok(),
                "{pattern}"
            );
        }
    }

    #[test]
    fn matching_takes_linear_time() {
        // A backtracking engine needs about 2^n steps here; RE2-style engines are linear.
        let target = compile(&one(TargetField::Name, "(a+)+$"));
        let name = format!("{}!", "a".repeat(100_000));
        let r = view(DEPLOY.0, DEPLOY.1, "", &name);
        assert_eq!(target.matches(&r), Ok(false));
        let name = "a".repeat(100_000);
        let r = view(DEPLOY.0, DEPLOY.1, "", &name);
        assert_eq!(target.matches(&r), Ok(true));
    }

    #[test]
    fn display() {
        let cases: &[(TargetSpec, &str)] = &[
            (TargetSpec::default(), "{}"),
            (
                TargetSpec {
                    kind: s("Deployment"),
                    name: s("web-.*"),
                    ..TargetSpec::default()
                },
                "{kind: Deployment, name: web-.*}",
            ),
            (
                TargetSpec {
                    name: s(""),
                    namespace: s("prod|staging"),
                    ..TargetSpec::default()
                },
                "{namespace: prod|staging}",
            ),
            (
                TargetSpec {
                    group: s("apps"),
                    version: s("v1"),
                    kind: s("Deployment"),
                    name: s("web"),
                    namespace: s("prod"),
                    label_selector: s("env in (prod),tier!=cache"),
                    annotation_selector: s("team=payments"),
                },
                "{group: apps, version: v1, kind: Deployment, name: web, namespace: prod, \
                 labelSelector: \"env in (prod),tier!=cache\", annotationSelector: team=payments}",
            ),
            (one(TargetField::Name, "*foo"), r#"{name: "*foo"}"#),
            (one(TargetField::Name, " web"), r#"{name: " web"}"#),
            (one(TargetField::Name, "a: b"), r#"{name: "a: b"}"#),
            (one(TargetField::Name, "a\"b"), r#"{name: a"b}"#),
            (one(TargetField::Name, "x{2}"), r#"{name: "x{2}"}"#),
            (
                one(TargetField::LabelSelector, "!app"),
                r#"{labelSelector: "!app"}"#,
            ),
        ];
        for (spec, want) in cases {
            assert_eq!(spec.to_string(), *want);
        }
        let target = compile(&TargetSpec {
            kind: s("Deployment"),
            name: s("web-.*"),
            ..TargetSpec::default()
        });
        assert_eq!(target.to_string(), "{kind: Deployment, name: web-.*}");
        assert_eq!(target.spec().name.as_deref(), Some("web-.*"));
    }

    #[test]
    fn spec_deserializes_from_camel_case_only() {
        let spec: TargetSpec = serde_json::from_str(
            r#"{"kind": "Deployment", "labelSelector": "a=b", "annotationSelector": null}"#,
        )
        .unwrap();
        assert_eq!(
            spec,
            TargetSpec {
                kind: s("Deployment"),
                label_selector: s("a=b"),
                ..TargetSpec::default()
            }
        );
        assert_eq!(
            serde_json::from_str::<TargetSpec>("{}").unwrap(),
            TargetSpec::default()
        );
        for bad in [
            r#"{"label_selector": "a"}"#,
            r#"{"names": "a"}"#,
            r#"{"name": 5}"#,
        ] {
            assert!(serde_json::from_str::<TargetSpec>(bad).is_err(), "{bad}");
        }
        let err = serde_json::from_str::<TargetSpec>(r#"{"label_selector": "a"}"#).unwrap_err();
        assert!(
            err.to_string()
                .starts_with("unknown field `label_selector`"),
            "{err}"
        );
    }
}
