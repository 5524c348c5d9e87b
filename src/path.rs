//! Field paths inside a resource, for messages and results: `spec.template.spec.containers[name=app].image`;
//! and [`Pattern`]s, the paths with `[*]` and named starts that say where a patch applies (`at:`).
//!
//! A path names where something happened, a pattern where something is to happen; neither does
//! lookups or walks trees (`select::places` resolves patterns). JSON patch's pointers, which
//! the schema check reads as well as the patch, are in [`pointer`](mod@pointer). Errors build
//! their path while the stack unwinds ([`Path::within`]), so the happy path never allocates one.

use std::fmt;

pub mod pointer;

/// One step of a [`Path`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Seg {
    /// A mapping key.
    Field(String),
    /// The list element whose key fields have these values (`[name=app]`, `[containerPort=80,protocol=TCP]`).
    Key(Vec<(String, String)>),
    /// A list element by position.
    Index(usize),
}

/// A path from a resource's root, outermost step first.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Path(pub Vec<Seg>);

impl Path {
    /// The root (an empty path).
    pub fn root() -> Path {
        Path(Vec::new())
    }

    /// This path with `seg` put in front: how an error learns where it happened as it travels
    /// up through the walkers.
    pub fn within(mut self, seg: Seg) -> Path {
        self.0.insert(0, seg);
        self
    }

    /// True at the root.
    pub fn is_root(&self) -> bool {
        self.0.is_empty()
    }

    /// A path of field names from the root: `["spec", "schema"]` is `spec.schema`.
    pub fn fields(names: &[&str]) -> Path {
        Path(names.iter().map(|n| Seg::field(n)).collect())
    }

    /// This path one field further down: `spec` then `patches` is `spec.patches`.
    pub fn field(&self, name: &str) -> Path {
        self.then(Seg::field(name))
    }

    /// This path one list element further down: `spec.patches` then `2` is `spec.patches[2]`.
    pub fn index(&self, i: usize) -> Path {
        self.then(Seg::Index(i))
    }

    fn then(&self, seg: Seg) -> Path {
        let mut p = self.clone();
        p.0.push(seg);
        p
    }
}

impl Seg {
    /// A field step.
    pub fn field(name: &str) -> Seg {
        Seg::Field(name.to_owned())
    }
}

fn needs_brackets(name: &str) -> bool {
    name.is_empty() || name.contains(['.', '[', ']', ' ', '='])
}

impl fmt::Display for Path {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.0.is_empty() {
            return f.write_str("(root)");
        }
        for (i, seg) in self.0.iter().enumerate() {
            match seg {
                // Keys with dots (annotations, labels) are written `[example.com/x]`.
                Seg::Field(name) if needs_brackets(name) => write!(f, "[{name}]")?,
                Seg::Field(name) => {
                    if i > 0 {
                        f.write_str(".")?;
                    }
                    f.write_str(name)?;
                }
                Seg::Key(kv) => {
                    f.write_str("[")?;
                    for (j, (k, v)) in kv.iter().enumerate() {
                        if j > 0 {
                            f.write_str(",")?;
                        }
                        write!(f, "{k}={v}")?;
                    }
                    f.write_str("]")?;
                }
                Seg::Index(n) => write!(f, "[{n}]")?,
            }
        }
        Ok(())
    }
}

// ----- patterns: where a patch applies -------------------------------------------------------

/// Where inside each selected resource a patch applies (a patch's `at:`): a field path in the
/// syntax of [`Path`]'s display, extended with `[*]`, from the resource's root or from a named
/// starting point: `spec.template.spec.containers[name=app]`, `spec.volumes[*]`,
/// `@containers.env`.
///
/// Syntax: an optional start (`@podTemplate`, `@podSpec`, `@containers`, see [`Start`]), then
/// parts. A name is a field (`spec`, `.template` after another part); a name with `.`, `[`,
/// `]`, `=`, a space, or none at all is written in brackets (`[example.com/x]`). In brackets,
/// `*` is every element of a list, digits an index, `key=value` pairs separated by `,` select
/// elements by their fields; a backslash escapes `\`, `]`, `,` and `=` there. The text written
/// back ([`Display`](fmt::Display)) parses to the same pattern.
///
/// ```
/// use krm_merge::path::{Part, Pattern, Start};
/// let p: Pattern = "@containers.env[name=CA]".parse().unwrap();
/// assert_eq!(p.start, Some(Start::Containers));
/// assert_eq!(p.parts, [Part::Field("env".into()), Part::Key(vec![("name".into(), "CA".into())])]);
/// assert_eq!(p.to_string(), "@containers.env[name=CA]");
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Pattern {
    /// Where the parts start from: a named place of the resource's kind, or its root (`None`).
    pub start: Option<Start>,
    /// The parts, outermost first; none with a start (the named places themselves).
    pub parts: Vec<Part>,
}

/// The named starting points of a [`Pattern`]: the pod inside a workload, wherever its kind
/// keeps it (found from the schema).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Start {
    /// `@podTemplate`: each pod template (a PodTemplateSpec: its `metadata` and `spec`).
    PodTemplate,
    /// `@podSpec`: each pod spec (a PodSpec), in a pod template or directly (a Pod's `spec`).
    PodSpec,
    /// `@containers`: every element of `containers` and `initContainers` of each pod spec.
    Containers,
}

impl Start {
    /// Every start, in the order of their names' documentation.
    pub const ALL: [Start; 3] = [Start::PodTemplate, Start::PodSpec, Start::Containers];

    /// The name after `@`.
    pub fn name(self) -> &'static str {
        match self {
            Start::PodTemplate => "podTemplate",
            Start::PodSpec => "podSpec",
            Start::Containers => "containers",
        }
    }

    /// What one place of this start is called in messages: `container`.
    pub fn place(self) -> &'static str {
        match self {
            Start::PodTemplate => "pod template",
            Start::PodSpec => "pod spec",
            Start::Containers => "container",
        }
    }
}

/// One part of a [`Pattern`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Part {
    /// A mapping's member.
    Field(String),
    /// The elements of a list whose fields have these scalar values; applied to a mapping, the
    /// mapping itself when its fields have them.
    Key(Vec<(String, String)>),
    /// A list element by position.
    Index(usize),
    /// `[*]`: every element of a list.
    Every,
}

/// Text that is not a [`Pattern`]: why, and at which byte.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{reason} (at byte {at})")]
pub struct PatternError {
    pub at: usize,
    pub reason: String,
}

impl Pattern {
    /// What one of its places is called in messages: its start's name (`container`) when the
    /// parts after it only filter (`@containers[name=app]`), else `place`.
    pub fn place_noun(&self) -> &'static str {
        match self.start {
            Some(start) if self.parts.iter().all(|p| matches!(p, Part::Key(_))) => start.place(),
            _ => "place",
        }
    }
}

impl std::str::FromStr for Pattern {
    type Err = PatternError;

    fn from_str(s: &str) -> Result<Pattern, PatternError> {
        let err = |at: usize, reason: &str| PatternError {
            at,
            reason: reason.to_owned(),
        };
        if s.is_empty() {
            return Err(err(
                0,
                "empty: give a field path, or a start such as @containers",
            ));
        }
        let mut pos = 0;
        let mut start = None;
        if let Some(rest) = s.strip_prefix('@') {
            let len = rest.find(['.', '[']).unwrap_or(rest.len());
            let name = rest.get(..len).unwrap_or_default();
            let found = Start::ALL.into_iter().find(|st| st.name() == name);
            start = Some(found.ok_or_else(|| PatternError {
                at: 0,
                reason: format!(
                    "unknown start @{name}; known: {}",
                    Start::ALL.map(|st| format!("@{}", st.name())).join(", ")
                ),
            })?);
            pos = 1 + len;
        }
        let mut parts = Vec::new();
        let bytes = s.as_bytes();
        while pos < s.len() {
            let first = pos == 0;
            match bytes.get(pos) {
                Some(b'[') => {
                    let (part, next) = bracket(s, pos)?;
                    parts.push(part);
                    pos = next;
                }
                Some(b'.') if !first => {
                    let (name, next) = dotted(s, pos + 1)?;
                    parts.push(Part::Field(name));
                    pos = next;
                }
                Some(b'.') => return Err(err(pos, "a path starts with a name, not '.'")),
                Some(_) if first => {
                    let (name, next) = dotted(s, pos)?;
                    parts.push(Part::Field(name));
                    pos = next;
                }
                _ => return Err(err(pos, "expected '.' or '['")),
            }
        }
        Ok(Pattern { start, parts })
    }
}

/// A name after `.` (or at the start), up to the next `.` or `[`.
fn dotted(s: &str, from: usize) -> Result<(String, usize), PatternError> {
    let rest = s.get(from..).unwrap_or_default();
    let len = rest.find(['.', '[']).unwrap_or(rest.len());
    let name = rest.get(..len).unwrap_or_default();
    let err = |reason: &str| PatternError {
        at: from,
        reason: reason.to_owned(),
    };
    if name.is_empty() {
        return Err(err("expected a field name"));
    }
    if let Some(i) = name.find([']', ' ', '=']) {
        return Err(PatternError {
            at: from + i,
            reason: "a name with ']', '=' or a space is written in brackets: [a b]".to_owned(),
        });
    }
    Ok((name.to_owned(), from + len))
}

/// The part in brackets at `from` (`s[from]` is `[`) and the position after its `]`.
fn bracket(s: &str, from: usize) -> Result<(Part, usize), PatternError> {
    let err = |at: usize, reason: &str| PatternError {
        at,
        reason: reason.to_owned(),
    };
    // Pieces split at unescaped `,` and `=`, with the separators.
    let mut pieces: Vec<(String, Option<char>)> = Vec::new();
    let mut cur = String::new();
    let mut escaped_any = false;
    let mut chars = s
        .get(from + 1..)
        .unwrap_or_default()
        .char_indices()
        .map(|(i, c)| (i + from + 1, c));
    let end = loop {
        let Some((i, c)) = chars.next() else {
            return Err(err(s.len(), "missing the closing ']'"));
        };
        match c {
            '\\' => match chars.next() {
                Some((_, e @ ('\\' | ']' | ',' | '='))) => {
                    cur.push(e);
                    escaped_any = true;
                }
                _ => return Err(err(i, r"'\' must be followed by \, ], ',' or '='")),
            },
            ',' | '=' => pieces.push((std::mem::take(&mut cur), Some(c))),
            ']' => {
                pieces.push((std::mem::take(&mut cur), None));
                break i + 1;
            }
            _ => cur.push(c),
        }
    };
    let part = match pieces.as_slice() {
        [(text, None)] if text == "*" && !escaped_any => Part::Every,
        [(text, None)] if !escaped_any && is_index(text) => {
            Part::Index(text.parse().map_err(|_| err(from, "index too large"))?)
        }
        [(text, None)] if !text.is_empty() => Part::Field(text.clone()),
        [(_, None)] => return Err(err(from, "empty brackets")),
        _ => Part::Key(key_pairs(&pieces).ok_or_else(|| {
            err(
                from,
                "expected key=value pairs separated by ',' (escape ',' and '=' in names)",
            )
        })?),
    };
    Ok((part, end))
}

/// `key=value,...` from pieces split at `=` and `,`; `None` when they are not such pairs or a
/// key is empty or repeated.
fn key_pairs(pieces: &[(String, Option<char>)]) -> Option<Vec<(String, String)>> {
    let mut out: Vec<(String, String)> = Vec::new();
    for pair in pieces.chunks(2) {
        let [(key, Some('=')), (value, sep)] = pair else {
            return None;
        };
        if key.is_empty() || *sep == Some('=') || out.iter().any(|(k, _)| k == key) {
            return None;
        }
        out.push((key.clone(), value.clone()));
    }
    Some(out)
}

/// Digits without a leading zero.
fn is_index(text: &str) -> bool {
    !text.is_empty()
        && text.bytes().all(|b| b.is_ascii_digit())
        && (text == "0" || !text.starts_with('0'))
}

/// Writes `s` with `\`, `]`, `,` and `=` escaped, for the inside of brackets.
fn escaped(f: &mut fmt::Formatter<'_>, s: &str) -> fmt::Result {
    for c in s.chars() {
        if matches!(c, '\\' | ']' | ',' | '=') {
            f.write_str("\\")?;
        }
        write!(f, "{c}")?;
    }
    Ok(())
}

impl fmt::Display for Pattern {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(start) = self.start {
            write!(f, "@{}", start.name())?;
        }
        for (i, part) in self.parts.iter().enumerate() {
            match part {
                Part::Field(name) if needs_brackets(name) || name.contains('\\') => {
                    f.write_str("[")?;
                    escaped(f, name)?;
                    f.write_str("]")?;
                }
                Part::Field(name) => {
                    if i > 0 || self.start.is_some() {
                        f.write_str(".")?;
                    }
                    f.write_str(name)?;
                }
                Part::Key(kv) => {
                    f.write_str("[")?;
                    for (j, (k, v)) in kv.iter().enumerate() {
                        if j > 0 {
                            f.write_str(",")?;
                        }
                        escaped(f, k)?;
                        f.write_str("=")?;
                        escaped(f, v)?;
                    }
                    f.write_str("]")?;
                }
                Part::Index(n) => write!(f, "[{n}]")?,
                Part::Every => f.write_str("[*]")?,
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn displays_like_kubectl_field_paths() {
        let p = Path::root()
            .within(Seg::field("image"))
            .within(Seg::Key(vec![("name".into(), "app".into())]))
            .within(Seg::field("containers"))
            .within(Seg::field("spec"));
        assert_eq!(p.to_string(), "spec.containers[name=app].image");
        let p = Path(vec![
            Seg::field("metadata"),
            Seg::field("annotations"),
            Seg::field("example.com/x"),
        ]);
        assert_eq!(p.to_string(), "metadata.annotations[example.com/x]");
        assert_eq!(
            Path(vec![Seg::field("items"), Seg::Index(2)]).to_string(),
            "items[2]"
        );
        assert_eq!(Path::root().to_string(), "(root)");
    }

    #[test]
    fn patterns_parse_and_print() {
        use Part::*;
        let f = |s: &str| Field(s.to_owned());
        let key =
            |kv: &[(&str, &str)]| Key(kv.iter().map(|(k, v)| ((*k).into(), (*v).into())).collect());
        let ok: &[(&str, Option<Start>, Vec<Part>)] = &[
            ("spec", None, vec![f("spec")]),
            (
                "spec.template.spec.containers[name=app]",
                None,
                vec![
                    f("spec"),
                    f("template"),
                    f("spec"),
                    f("containers"),
                    key(&[("name", "app")]),
                ],
            ),
            (
                "spec.containers[*].env[*]",
                None,
                vec![f("spec"), f("containers"), Every, f("env"), Every],
            ),
            ("items[2].x", None, vec![f("items"), Index(2), f("x")]),
            (
                "metadata.annotations[example.com/x]",
                None,
                vec![f("metadata"), f("annotations"), f("example.com/x")],
            ),
            (
                "ports[containerPort=80,protocol=TCP]",
                None,
                vec![
                    f("ports"),
                    key(&[("containerPort", "80"), ("protocol", "TCP")]),
                ],
            ),
            (r"x[a\=b]", None, vec![f("x"), f("a=b")]),
            (r"x[k=a\,b\]]", None, vec![f("x"), key(&[("k", "a,b]")])]),
            ("x[k=]", None, vec![f("x"), key(&[("k", "")])]),
            ("x[a b]", None, vec![f("x"), f("a b")]),
            ("[a.b].c", None, vec![f("a.b"), f("c")]),
            ("x.*", None, vec![f("x"), f("*")]),
            ("x.01", None, vec![f("x"), f("01")]),
            ("x[01]", None, vec![f("x"), f("01")]),
            ("@containers", Some(Start::Containers), vec![]),
            (
                "@podSpec.volumes[*]",
                Some(Start::PodSpec),
                vec![f("volumes"), Every],
            ),
            (
                "@podTemplate[metadata]",
                Some(Start::PodTemplate),
                vec![f("metadata")],
            ),
            (
                "@containers[name=app].env",
                Some(Start::Containers),
                vec![key(&[("name", "app")]), f("env")],
            ),
        ];
        for (text, start, parts) in ok {
            let p: Pattern = text.parse().unwrap_or_else(|e| panic!("{text}: {e}"));
            assert_eq!((&p.start, &p.parts), (start, parts), "{text}");
            let back: Pattern = p.to_string().parse().unwrap();
            assert_eq!(back, p, "{text} -> {p}");
        }
        let bad = [
            ("", "empty"),
            (
                "@pods",
                "unknown start @pods; known: @podTemplate, @podSpec, @containers",
            ),
            ("@containersx", "unknown start"),
            (".spec", "starts with a name"),
            ("spec.", "expected a field name"),
            ("spec..x", "expected a field name"),
            ("spec[*", "missing the closing"),
            ("spec[]", "empty brackets"),
            ("spec[a=b=c]", "key=value"),
            ("spec[a=1,a=2]", "key=value"),
            ("spec[=1]", "key=value"),
            ("spec[a,b]", "key=value"),
            (r"spec[a\x]", r"'\' must be followed"),
            ("spec x", "written in brackets"),
            ("spec[*]x", "expected '.' or '['"),
            ("x[]y]", "empty brackets"),
            ("x[99999999999999999999999]", "index too large"),
        ];
        for (text, msg) in bad {
            let e = text.parse::<Pattern>().unwrap_err();
            assert!(e.to_string().contains(msg), "{text}: {e}");
        }
        // Names that need brackets are written in them, escaped.
        let p = Pattern {
            start: None,
            parts: vec![
                Field("a=b".into()),
                Field(r"c\d".into()),
                Field("*".into()),
                Key(vec![("k,".into(), "v]".into())]),
            ],
        };
        assert_eq!(p.to_string(), r"[a\=b][c\\d].*[k\,=v\]]");
        assert_eq!(p.to_string().parse::<Pattern>().unwrap(), p);
    }
}
