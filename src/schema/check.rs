//! Checking a patch against the schema of a kind it is applied to: fields the kind does not
//! have, values of the wrong type, required fields a patch removes.
//!
//! What it is: pure functions from a [`Schema`], a kind and a patch (a strategic-merge or JSON
//! merge patch document, [`check_patch`]; or JSON 6902 operations, [`check_json6902`]) to a list
//! of [`Finding`]s. What it must not do: change or apply anything, decide how serious a finding
//! is (the caller makes them warnings, or errors under `options.strict`), or say anything about
//! kinds no layer knows the fields of (no findings for them).
//!
//! # Rules
//!
//! * A kind's fields are those of every layer that describes its types (built-in, CRDs, declared
//!   OpenAPI documents; `mergeKeys` declarations describe no types). A field is unknown when
//!   every layer with an object type at its place lacks it; a value has the wrong type when no
//!   layer's type takes it. Any layer that takes anything there (a free-form object, a map, an
//!   object that preserves unknown fields) silences the others.
//! * `metadata` is an ObjectMeta in every kind, whatever a CRD's schema says of it; `apiVersion`
//!   and `kind` are strings.
//! * Scalars are read as YAML 1.2 does (`"3"` is a string, `3` an integer); where a boolean or a
//!   number is expected, plain text that YAML 1.1 (Kubernetes' own reader) takes for one
//!   (`yes`, `0777`) is accepted too.
//! * Strategic-merge directives are skipped: `$patch`, `$retainKeys`, `$setElementOrder/…`,
//!   `$deleteFromPrimitiveList/…`. A `null` value, or a map with `$patch: delete`, removes its
//!   field: the field must exist, and removing one its object lists as `required` is a finding
//!   ([`FindingKind::RemovesRequired`]: `spec` of a Deployment, `containers` of a PodSpec).
//!   List elements are checked against the element type.
//! * JSON 6902: each operation's `path` (and `from`) is walked; indexes, `-` and `[k=v]`
//!   selectors step into a list's elements; `add`/`replace` values are checked like patch
//!   values; `remove`, `move` away from, and a `null` put in, a required field are findings.
//!   `test` operations are not checked.
//!
//! # Suggestions
//!
//! An unknown field gets the closest known field at its place by edit distance
//! (`spec.replcas` → `replicas`, see `suggest.rs`); failing that, the nearest place below it
//! (then anywhere in the kind) where a field of exactly that name exists: a top-level `replicas`
//! in a Deployment patch (an indentation lost) → `spec.replicas`.
//!
//! # Cost
//!
//! One pass over the patch with O(log n) lookups per key. Suggestions cost more (a search of the
//! kind's types), so only the first [`MAX_SUGGESTIONS`] unknown fields of a call get one, and each
//! search visits at most [`MAX_SEARCH`] types.

use std::collections::VecDeque;
use std::fmt;

use crate::hash::HashSet;
use crate::path::pointer::{Pointer, PointerUse, Token};
use crate::path::{Path, Seg};
use crate::yaml::scalar::{self, Resolved};
use crate::yaml::{Node, ScalarStyle};

use super::shape::{self, Shape, Val};
use super::suggest;
use super::{Cursor, FieldMeta, ListMerge, Schema};

/// How many unknown fields of one call get a suggestion.
pub(super) const MAX_SUGGESTIONS: usize = 64;

/// How many types one search for a misplaced field visits.
pub(super) const MAX_SEARCH: usize = 4096;

/// A kind: API group (`""` for the core group), version, kind.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Gvk<'a> {
    pub group: &'a str,
    pub version: &'a str,
    pub kind: &'a str,
}

impl<'a> Gvk<'a> {
    /// From an `apiVersion` (`apps/v1`, `v1`) and a kind.
    pub fn new(api_version: &'a str, kind: &'a str) -> Gvk<'a> {
        let (group, version) = api_version.split_once('/').unwrap_or(("", api_version));
        Gvk {
            group,
            version,
            kind,
        }
    }
}

/// Something wrong with a patch, and where.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Finding {
    /// Where in the patched resource: `spec.replcas`, `spec.template.spec.containers[name=app].imag`.
    /// List elements are named by their merge keys when the list has them and the element
    /// carries them, else by their position in the patch (or, for JSON 6902, by the pointer's
    /// token: `[0]`, `-`, `[name=app]`).
    pub path: Path,
    pub kind: FindingKind,
}

/// What is wrong.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum FindingKind {
    /// The patch sets (or removes) a field the kind does not have.
    UnknownField {
        /// The field's name (the last step of the path).
        field: String,
        /// The kind the patch is checked against, e.g. `Deployment`.
        of_kind: String,
        suggestion: Option<Suggestion>,
    },
    /// The patch gives a field a value of another type (`spec: replicas` where `spec` is an
    /// object).
    WrongType {
        expected: ValueType,
        found: ValueType,
    },
    /// The patch removes (`null`, `$patch: delete`, a JSON 6902 `remove`) a field its object
    /// requires.
    RemovesRequired { field: String, of_kind: String },
}

/// A field the unknown one may have meant.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Suggestion {
    /// A field with a close name at the same place: `replicas` for `replcas`.
    Similar(String),
    /// A field of the same name elsewhere in the kind, by its path from the resource's root with
    /// `[]` for "any element of the list": `spec.replicas`,
    /// `spec.template.spec.containers[].image`.
    Elsewhere(String),
}

/// A type of value, as a finding names it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ValueType {
    /// A map (with fields, or with any keys).
    Object,
    List,
    String,
    Integer,
    /// Any number (integer or not).
    Number,
    Boolean,
    /// An integer or a string (`targetPort: 8080`, `targetPort: http`).
    IntOrString,
    /// A string or a number (resource quantities: `500m`, `1`, `0.5`).
    Quantity,
}

/// A finding of one JSON 6902 operation.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OpFinding {
    /// The operation's position in the patch, from 0.
    pub op: usize,
    pub finding: Finding,
}

impl fmt::Display for ValueType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            ValueType::Object => "an object",
            ValueType::List => "a list",
            ValueType::String => "a string",
            ValueType::Integer => "an integer",
            ValueType::Number => "a number",
            ValueType::Boolean => "a boolean",
            ValueType::IntOrString => "an integer or a string",
            ValueType::Quantity => "a quantity (a string or a number)",
        })
    }
}

impl fmt::Display for Suggestion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Suggestion::Similar(s) | Suggestion::Elsewhere(s) => write!(f, "`{s}`"),
        }
    }
}

/// `` `spec.replcas`: unknown field of Deployment; did you mean `replicas`? ``
impl fmt::Display for Finding {
    /// `` `spec.replcas`: unknown field of Deployment; did you mean `replicas`? ``
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "`{}`: {}", self.path, self.kind)
    }
}

impl fmt::Display for FindingKind {
    /// What is wrong, without the place: `unknown field of Deployment; did you mean `replicas`?`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FindingKind::UnknownField {
                of_kind,
                suggestion,
                ..
            } => {
                write!(f, "unknown field of {of_kind}")?;
                match suggestion {
                    Some(s) => write!(f, "; did you mean {s}?"),
                    None => Ok(()),
                }
            }
            FindingKind::WrongType { expected, found } => {
                write!(f, "expected {expected}, found {found}")
            }
            FindingKind::RemovesRequired { field, of_kind } => {
                write!(f, "removes `{field}`, which {of_kind} requires")
            }
        }
    }
}

/// Checks a strategic-merge or JSON merge patch document against `kind`. No findings when no
/// layer of `schema` knows the kind's fields.
pub fn check_patch(schema: &Schema, kind: Gvk<'_>, patch: &Node<'_>) -> Vec<Finding> {
    let mut w = Walker::new(schema, kind);
    let (root, cursor) = (w.root, w.cursor);
    w.value(&root, patch, cursor, &FieldMeta::default());
    w.findings
}

/// Checks JSON 6902 operations against `kind` (see the module documentation): each operation
/// given as what it does at each of its pointers (`json6902::Op::pointers`), so that the schema,
/// plain data, needs nothing of the patch but its pointers. No findings when no layer of
/// `schema` knows the kind's fields.
pub fn check_json6902<'o, 'n: 'o>(
    schema: &Schema,
    kind: Gvk<'_>,
    ops: impl IntoIterator<Item = impl IntoIterator<Item = (&'o Pointer, PointerUse<&'o Node<'n>>)>>,
) -> Vec<OpFinding> {
    let mut w = Walker::new(schema, kind);
    let mut out = Vec::new();
    if w.root.is_unknown() {
        return out;
    }
    for (i, uses) in ops.into_iter().enumerate() {
        for (pointer, used) in uses {
            match used {
                PointerUse::Put(value) => w.pointer(pointer, Some(value), false),
                PointerUse::Remove => w.pointer(pointer, None, true),
                PointerUse::Receive | PointerUse::Read => w.pointer(pointer, None, false),
                // `test` operations are not checked (see the module documentation).
                PointerUse::Compare => {}
            }
        }
        out.extend(
            w.findings
                .drain(..)
                .map(|finding| OpFinding { op: i, finding }),
        );
    }
    out
}

// ----- positions -----------------------------------------------------------------------------

/// The layers that know types, in the order of precedence for messages.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Layer {
    Builtin,
    Crds,
    OpenApi,
}

const LAYERS: [Layer; 3] = [Layer::Builtin, Layer::Crds, Layer::OpenApi];

/// What a value must be in one layer: its shape, the layer's node for the object inside the
/// lists (if any), and whether its field is required.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Expect {
    shape: Shape,
    node: Option<u32>,
    required: bool,
}

impl Expect {
    fn object(node: u32) -> Expect {
        Expect {
            shape: Shape::of(Val::Object),
            node: Some(node),
            required: false,
        }
    }

    fn scalar(val: Val) -> Expect {
        Expect {
            shape: Shape::of(val),
            node: None,
            required: false,
        }
    }

    fn is_object(&self) -> bool {
        self.shape.lists == 0 && self.shape.val == Val::Object
    }

    /// How a finding names what this expects.
    fn value_type(&self) -> ValueType {
        if self.shape.lists > 0 {
            return ValueType::List;
        }
        match self.shape.val {
            Val::Any | Val::Object => ValueType::Object,
            Val::String => ValueType::String,
            Val::Integer => ValueType::Integer,
            Val::Number => ValueType::Number,
            Val::Boolean => ValueType::Boolean,
            Val::IntOrString => ValueType::IntOrString,
            Val::Quantity => ValueType::Quantity,
        }
    }

    /// The same value one list level down.
    fn element(self) -> Option<Expect> {
        let lists = self.shape.lists.checked_sub(1)?;
        Some(Expect {
            shape: Shape {
                lists,
                val: self.shape.val,
            },
            node: self.node,
            required: false,
        })
    }
}

/// A position in every layer at once; `None`: the layer knows no type here.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Pos([Option<Expect>; 3]);

impl Pos {
    fn is_unknown(&self) -> bool {
        self.0.iter().all(Option::is_none)
    }

    fn layers(&self) -> impl Iterator<Item = (Layer, Expect)> + '_ {
        LAYERS
            .iter()
            .zip(self.0.iter())
            .filter_map(|(l, e)| e.map(|e| (*l, e)))
    }

    fn set(&mut self, layer: Layer, e: Expect) {
        if let Some(slot) = self.0.get_mut(layer as usize) {
            *slot = Some(e);
        }
    }

    fn required(&self) -> bool {
        self.layers().any(|(_, e)| e.required)
    }

    /// Keeps the layers `keep` accepts, transformed.
    fn filter_map(&self, keep: impl Fn(Expect) -> Option<Expect>) -> Pos {
        Pos(self.0.map(|e| e.and_then(&keep)))
    }
}

/// What the layers say about one key of an object.
enum Child {
    /// Some layer knows the key: what its value must be.
    Known(Pos),
    /// Some layer takes any key here, or none knows objects here: nothing to check below.
    Free,
    /// Every layer with an object here lacks the key.
    Unknown,
}

/// What one layer says about a key.
enum KeyIn {
    Known(Expect),
    /// `metadata` of a whole object: ObjectMeta, from the built-in layer.
    Meta,
    Open,
    Unknown,
}

// ----- the walk ------------------------------------------------------------------------------

struct Walker<'s> {
    schema: &'s Schema,
    kind: String,
    root: Pos,
    cursor: Cursor,
    path: Vec<Seg>,
    findings: Vec<Finding>,
    suggestions_left: usize,
}

/// Deeper patches are not checked below this (parsed YAML cannot nest deeper; this bounds the
/// recursion for trees built otherwise).
const MAX_NESTING: usize = crate::yaml::MAX_DEPTH + 8;

impl<'s> Walker<'s> {
    fn new(schema: &'s Schema, k: Gvk<'_>) -> Walker<'s> {
        let mut root = Pos::default();
        if let Some(n) = shape::root(k.group, k.version, k.kind) {
            root.set(Layer::Builtin, Expect::object(n));
        }
        if let Some(n) = schema.crds.root(k.group, k.version, k.kind) {
            root.set(Layer::Crds, Expect::object(n));
        }
        if let Some(n) = schema.openapi.root(k.group, k.version, k.kind) {
            root.set(Layer::OpenApi, Expect::object(n));
        }
        Walker {
            schema,
            kind: k.kind.to_string(),
            root,
            cursor: schema.root(k.group, k.version, k.kind),
            path: Vec::new(),
            findings: Vec::new(),
            suggestions_left: MAX_SUGGESTIONS,
        }
    }

    fn push(&mut self, kind: FindingKind) {
        self.findings.push(Finding {
            path: Path(self.path.clone()),
            kind,
        });
    }

    /// Checks `node`, the value at the current path, against `pos`. `cursor` and `meta` are the
    /// merge schema's position and metadata for it (to name list elements by their keys).
    fn value(&mut self, pos: &Pos, node: &Node<'_>, cursor: Cursor, meta: &FieldMeta) {
        if self.path.len() > MAX_NESTING || pos.is_unknown() {
            return;
        }
        if pos.layers().any(|(_, e)| e.shape == Shape::ANY) {
            return;
        }
        let found = if node.is_seq() {
            ValueType::List
        } else if node.is_map() {
            ValueType::Object
        } else {
            match node.resolved() {
                None | Some(Resolved::Null) => return, // an alias, or nothing
                Some(r) => scalar_type(r),
            }
        };
        let accepted = pos.filter_map(|e| accepts(e, found, node).then_some(e));
        if accepted.is_unknown() {
            if let Some((_, e)) = pos.layers().next() {
                let expected = e.value_type();
                self.push(FindingKind::WrongType { expected, found });
            }
            return;
        }
        match found {
            ValueType::List => self.list(&accepted, node, cursor, meta),
            ValueType::Object => self.map(&accepted, node, cursor),
            _ => {}
        }
    }

    fn list(&mut self, pos: &Pos, node: &Node<'_>, cursor: Cursor, meta: &FieldMeta) {
        let elements = pos.filter_map(Expect::element);
        let keys: &[_] = match &meta.list {
            Some(ListMerge::Map { keys }) => keys,
            _ => &[],
        };
        for (i, item) in node.items().iter().enumerate() {
            self.path.push(element_seg(item, i, keys));
            self.value(&elements, item, cursor, &FieldMeta::default());
            self.path.pop();
        }
    }

    fn map(&mut self, pos: &Pos, node: &Node<'_>, cursor: Cursor) {
        let objects = pos.filter_map(|e| e.is_object().then_some(e));
        if objects.is_unknown() {
            return;
        }
        for entry in node.entries() {
            let Some(key) = entry.key.as_str() else {
                continue;
            };
            if is_directive(key) {
                continue;
            }
            let removes = entry.value.is_null() || deletes(&entry.value);
            match self.child(&objects, key) {
                Child::Free => {}
                Child::Unknown => self.unknown(&objects, key),
                Child::Known(child) => {
                    self.path.push(Seg::field(key));
                    if removes {
                        if child.required() {
                            self.push(self.removes_required(key));
                        }
                    } else {
                        let (meta, next) = self.schema.field(cursor, key);
                        self.value(&child, &entry.value, next, &meta);
                    }
                    self.path.pop();
                }
            }
        }
    }

    fn removes_required(&self, key: &str) -> FindingKind {
        FindingKind::RemovesRequired {
            field: key.to_string(),
            of_kind: self.kind.clone(),
        }
    }

    /// Walks a JSON 6902 pointer; at its end checks `value` (`add`, `replace`), or that a
    /// required field is not removed (`removes`, or a `null` value).
    fn pointer(&mut self, pointer: &Pointer, value: Option<&Node<'_>>, removes: bool) {
        self.path.clear();
        let mut pos = self.root;
        let tokens = pointer.tokens();
        for (j, token) in tokens.iter().enumerate() {
            let last = j + 1 == tokens.len();
            let elements = pos.filter_map(Expect::element);
            let seg = match token {
                Token::Index(i) => Some(Seg::Index(*i)),
                Token::End => Some(Seg::Field("-".to_string())),
                Token::Select(s) => Some(Seg::Key(s.fields().to_vec())),
                // Every element: a key that names none (shown `[]`, any element).
                Token::Every => Some(Seg::Key(Vec::new())),
                Token::Name(_) => None,
            };
            if let (false, Some(seg)) = (elements.is_unknown(), seg) {
                self.path.push(seg);
                pos = elements;
                continue;
            }
            let objects = pos.filter_map(|e| e.is_object().then_some(e));
            if objects.is_unknown() {
                return; // a scalar, a list stepped into by name, or nothing known
            }
            let name = match token {
                Token::Name(s) => s.clone(),
                Token::Index(i) => i.to_string(),
                Token::End => "-".to_string(),
                Token::Select(s) => s.to_string(),
                Token::Every => token.to_string(),
            };
            match self.child(&objects, &name) {
                Child::Free => return,
                Child::Unknown => {
                    self.unknown(&objects, &name);
                    return;
                }
                Child::Known(child) => {
                    self.path.push(Seg::Field(name.clone()));
                    let nulls = value.is_some_and(Node::is_null);
                    if last && (removes || nulls) && child.required() {
                        self.push(self.removes_required(&name));
                    }
                    pos = child;
                }
            }
        }
        if let Some(v) = value.filter(|v| !v.is_null()) {
            self.value(&pos, v, Cursor::default(), &FieldMeta::default());
        }
    }

    // ----- keys -------------------------------------------------------------------------------

    fn child(&self, objects: &Pos, key: &str) -> Child {
        let mut out = Pos::default();
        let (mut open, mut closed) = (false, false);
        for (layer, e) in objects.layers() {
            match self.key_in(layer, e.node, key) {
                KeyIn::Known(x) => out.set(layer, x),
                KeyIn::Meta => out.set(Layer::Builtin, Expect::object(shape::object_meta())),
                KeyIn::Open => open = true,
                KeyIn::Unknown => closed = true,
            }
        }
        if open {
            Child::Free
        } else if !out.is_unknown() {
            Child::Known(out)
        } else if closed {
            Child::Unknown
        } else {
            Child::Free
        }
    }

    fn key_in(&self, layer: Layer, node: Option<u32>, key: &str) -> KeyIn {
        let Some(node) = node else {
            return KeyIn::Open;
        };
        let graph = match layer {
            Layer::Builtin => {
                let found = shape::field(node, key).or_else(|| shape::value(node));
                return match found {
                    Some(s) => KeyIn::Known(Expect {
                        shape: s.shape,
                        node: s.node,
                        required: s.required,
                    }),
                    None if shape::is_closed(node) => KeyIn::Unknown,
                    None => KeyIn::Open,
                };
            }
            Layer::Crds => &self.schema.crds,
            Layer::OpenApi => &self.schema.openapi,
        };
        let Some(n) = graph.node(node) else {
            return KeyIn::Open;
        };
        if n.resource {
            match key {
                "metadata" => return KeyIn::Meta,
                "apiVersion" | "kind" if !n.fields.contains_key(key) => {
                    return KeyIn::Known(Expect::scalar(Val::String))
                }
                _ => {}
            }
        }
        match n.fields.get(key).or(n.additional.as_ref()) {
            Some(slot) => KeyIn::Known(Expect {
                shape: slot.shape,
                node: slot.target,
                required: slot.required,
            }),
            None if n.open || n.fields.is_empty() => KeyIn::Open,
            None => KeyIn::Unknown,
        }
    }

    // ----- suggestions ------------------------------------------------------------------------

    fn unknown(&mut self, objects: &Pos, key: &str) {
        let suggestion = match self.suggestions_left.checked_sub(1) {
            Some(left) => {
                self.suggestions_left = left;
                self.suggest(objects, key)
            }
            None => None,
        };
        self.path.push(Seg::field(key));
        self.push(FindingKind::UnknownField {
            field: key.to_string(),
            of_kind: self.kind.clone(),
            suggestion,
        });
        self.path.pop();
    }

    fn suggest(&self, objects: &Pos, key: &str) -> Option<Suggestion> {
        let mut names: Vec<&str> = Vec::new();
        for (layer, e) in objects.layers() {
            let Some(node) = e.node else { continue };
            match self.graph(layer) {
                None => names.extend(shape::fields(node).map(|(n, _)| n)),
                Some(g) => {
                    if let Some(n) = g.node(node) {
                        names.extend(n.fields.keys().map(String::as_str));
                        if n.resource {
                            names.extend(["apiVersion", "kind", "metadata"]);
                        }
                    }
                }
            }
        }
        if let Some(similar) = suggest::closest(key, names) {
            return Some(Suggestion::Similar(similar.to_string()));
        }
        let here = schema_path(&self.path);
        if let Some(below) = self.search(objects, key) {
            return Some(Suggestion::Elsewhere(join(&here, &below)));
        }
        if self.path.is_empty() {
            return None;
        }
        let root = self.root;
        self.search(&root, key).map(Suggestion::Elsewhere)
    }

    fn graph(&self, layer: Layer) -> Option<&'s super::graph::Graph> {
        match layer {
            Layer::Builtin => None,
            Layer::Crds => Some(&self.schema.crds),
            Layer::OpenApi => Some(&self.schema.openapi),
        }
    }

    /// The nearest place below `from` (breadth first, fields in name order) where a field is
    /// called `key`, as a path relative to `from`.
    fn search(&self, from: &Pos, key: &str) -> Option<String> {
        let mut best: Option<(usize, String)> = None;
        for (layer, e) in from.layers() {
            let Some(start) = e.node.filter(|_| e.shape.val == Val::Object) else {
                continue;
            };
            if let Some((depth, path)) = self.search_layer(layer, start, key) {
                if best.as_ref().is_none_or(|(d, _)| depth < *d) {
                    best = Some((depth, path));
                }
            }
        }
        best.map(|(_, p)| p)
    }

    fn search_layer(&self, layer: Layer, start: u32, key: &str) -> Option<(usize, String)> {
        // Steps: (parent step, field name, the field is a list); step 0 is the start.
        let mut steps: Vec<(usize, &str, bool)> = vec![(0, "", false)];
        let mut queue = VecDeque::from([(start, 0usize)]);
        let mut seen = HashSet::default();
        seen.insert(start);
        let graph = self.graph(layer);
        while let Some((node, step)) = queue.pop_front() {
            let children: Vec<(&str, Option<u32>, bool)> = match graph {
                None => shape::fields(node)
                    .map(|(n, s)| (n, s.node, s.shape.lists > 0))
                    .collect(),
                Some(g) => g.node(node).map_or_else(Vec::new, |n| {
                    n.fields
                        .iter()
                        .map(|(k, s)| (k.as_str(), s.target, s.shape.lists > 0))
                        .collect()
                }),
            };
            for (name, target, list) in children {
                if name == key {
                    steps.push((step, name, list));
                    return Some(render(&steps, steps.len() - 1));
                }
                if let Some(t) = target {
                    if seen.len() < MAX_SEARCH && seen.insert(t) {
                        steps.push((step, name, list));
                        queue.push_back((t, steps.len() - 1));
                    }
                }
            }
        }
        None
    }
}

/// The path to step `at`, and its depth: `spec.template.spec.containers[].image`.
fn render(steps: &[(usize, &str, bool)], at: usize) -> (usize, String) {
    let mut chain = Vec::new();
    let mut i = at;
    while i != 0 {
        let Some(&(parent, name, list)) = steps.get(i) else {
            break;
        };
        chain.push((name, list));
        i = parent;
    }
    chain.reverse();
    let mut out = String::new();
    let last = chain.len().saturating_sub(1);
    for (j, (name, list)) in chain.iter().enumerate() {
        if j > 0 {
            out.push('.');
        }
        out.push_str(name);
        if *list && j < last {
            out.push_str("[]");
        }
    }
    (chain.len(), out)
}

/// A patch path as a schema path: fields by name, any list element as `[]`.
fn schema_path(path: &[Seg]) -> String {
    let mut out = String::new();
    for seg in path {
        match seg {
            Seg::Field(name) => {
                if !out.is_empty() {
                    out.push('.');
                }
                out.push_str(name);
            }
            Seg::Key(_) | Seg::Index(_) => out.push_str("[]"),
        }
    }
    out
}

fn join(here: &str, below: &str) -> String {
    if here.is_empty() {
        below.to_string()
    } else {
        format!("{here}.{below}")
    }
}

/// How a finding names a list element: by its merge keys when it has them all as scalars,
/// else by position.
fn element_seg(item: &Node<'_>, i: usize, keys: &[super::MapKey]) -> Seg {
    if !keys.is_empty() {
        let values: Option<Vec<(String, String)>> = keys
            .iter()
            .map(|k| {
                let v = item.get(&k.name)?.as_str()?;
                Some((k.name.clone(), v.to_string()))
            })
            .collect();
        if let Some(kv) = values {
            return Seg::Key(kv);
        }
    }
    Seg::Index(i)
}

/// Strategic-merge directive keys, which are no fields.
fn is_directive(key: &str) -> bool {
    key == "$patch"
        || key == "$retainKeys"
        || key.starts_with("$setElementOrder/")
        || key.starts_with("$deleteFromPrimitiveList/")
}

/// A map holding `$patch: delete`: its field is removed.
fn deletes(value: &Node<'_>) -> bool {
    value.get("$patch").and_then(Node::as_str) == Some("delete")
}

fn scalar_type(r: Resolved<'_>) -> ValueType {
    match r {
        Resolved::Str(_) | Resolved::Null => ValueType::String,
        Resolved::Bool(_) => ValueType::Boolean,
        Resolved::Int(_) => ValueType::Integer,
        Resolved::Float(_) => ValueType::Number,
    }
}

/// Whether a value of type `found` (the node `node`) is what `e` expects.
fn accepts(e: Expect, found: ValueType, node: &Node<'_>) -> bool {
    if e.shape.lists > 0 {
        return found == ValueType::List;
    }
    // Plain text a YAML 1.1 reader takes for a boolean or a number (`yes`, `0777`).
    let yaml11 = || {
        node.style() == Some(ScalarStyle::Plain)
            && node.tag().is_none()
            && node.as_str().is_some_and(scalar::yaml11_lookalike)
    };
    match e.shape.val {
        Val::Any => true,
        Val::Object => found == ValueType::Object,
        Val::String => found == ValueType::String,
        Val::Integer => found == ValueType::Integer || (found == ValueType::String && yaml11()),
        Val::Number => {
            matches!(found, ValueType::Integer | ValueType::Number)
                || (found == ValueType::String && yaml11())
        }
        Val::Boolean => found == ValueType::Boolean || (found == ValueType::String && yaml11()),
        Val::IntOrString => matches!(found, ValueType::Integer | ValueType::String),
        Val::Quantity => matches!(
            found,
            ValueType::Integer | ValueType::Number | ValueType::String
        ),
    }
}
