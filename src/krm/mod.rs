//! The KRM function wire format: a `ResourceList` or a plain stream of YAML documents read
//! into items, and the same form written back with results.
//!
//! Reading accepts any `apiVersion` of `ResourceList` (`config.kubernetes.io/v1`, `v1beta1`,
//! `v1alpha1`), in YAML or JSON, and writes it back as block YAML. Untouched documents of a
//! stream are written back byte for byte. A list kind (`List`, `RoleList`, ...: see
//! `is_list_kind`) is one item wherever it comes, a document or a ResourceList's item; the
//! engine reads its items as resources and it is written back as a list.
//!
//! What it must not do: merge, select, run a plan (`crate::run` does), or decide exit codes.

mod result;

pub use result::{exit_code, FnResult, Severity};

use crate::select::identity::Id;
use crate::yaml::{self, Document, Node, ParseError};

/// Where an item came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Origin {
    /// The n-th item of the input.
    Input(usize),
    /// Made by a patch: document `document` of step `step`, a merge3 update, adds it.
    New {
        /// The step (its index in the plan) whose update adds it.
        step: usize,
        /// Its document in the step's `updated`, from 0.
        document: usize,
    },
}

/// A resource being processed.
#[derive(Clone, Debug)]
pub struct Item<'a> {
    /// The resource's tree.
    pub node: Node<'a>,
    /// Where the resource came from, which says where it is written back.
    pub origin: Origin,
    /// A patch was applied to it: it is written from its tree, not copied from the input.
    pub touched: bool,
    /// Its identity before the first patch that changed it (kustomize's "original id"): later
    /// patches without a target still find it by its old name.
    pub first_id: Option<Id<'static>>,
}

/// How the items came in, which is how they go out.
#[derive(Debug)]
pub enum Form<'a> {
    /// A plain stream of documents; item `n` came from `docs[item_docs[n]]`, whose tree it took.
    Stream {
        /// Every document of the stream, resources' trees taken out.
        docs: Vec<Document<'a>>,
        /// For each item, the index in `docs` of the document it came from.
        item_docs: Vec<usize>,
    },
    /// A `ResourceList`, whose `items` were taken out; `json`: it was JSON (or flow YAML) and
    /// is written back as block YAML. (A `List` is a document of a stream, whose items the
    /// engine reads as resources: see `is_list_kind`.)
    Wrapped {
        /// The `ResourceList` document, its `items` taken out.
        doc: Document<'a>,
        /// It was JSON (or flow YAML).
        json: bool,
    },
}

/// A parsed input.
#[derive(Debug)]
pub struct Input<'a> {
    /// What the input was, to write the items back the same way.
    pub form: Form<'a>,
    /// The resources, in input order.
    pub items: Vec<Item<'a>>,
}

/// Input that cannot be read as resources.
#[derive(Debug, thiserror::Error)]
pub enum ReadError {
    #[error("malformed YAML: {0}")]
    /// The input is not YAML.
    Yaml(#[from] ParseError),
    #[error("{0}")]
    /// The input is YAML but not resources (e.g. `items` is not a list); says why.
    Shape(String),
}

impl<'a> Input<'a> {
    /// Reads a ResourceList or a plain stream of documents (a `List` among them is one
    /// document, whose items the engine reads as resources).
    pub fn read(src: &'a str) -> Result<Input<'a>, ReadError> {
        let mut docs = yaml::parse_stream(src)?;
        docs.iter_mut().for_each(forget_empty);
        let content: Vec<usize> = (0..docs.len())
            .filter(|&i| docs[i].root.is_some())
            .collect();
        if let [only] = content[..] {
            let wrapped = docs[only]
                .root
                .as_ref()
                .is_some_and(|r| r.is_map() && r.str_at(&["kind"]) == Some("ResourceList"));
            if wrapped {
                let mut doc = docs.swap_remove(only);
                let Some(root) = doc.root.as_mut() else {
                    return Err(ReadError::Shape("the ResourceList has no content".into()));
                };
                let json = root.is_flow();
                let items = match root.get("items") {
                    None => Vec::new(),
                    Some(i) if i.is_null() => Vec::new(),
                    Some(i) if i.is_seq() => {
                        let list = root
                            .get_mut("items")
                            .and_then(Node::items_mut)
                            .map(std::mem::take)
                            .unwrap_or_default();
                        list.into_iter()
                            .enumerate()
                            .map(|(n, node)| Item {
                                node,
                                origin: Origin::Input(n),
                                touched: false,
                                first_id: None,
                            })
                            .collect()
                    }
                    Some(_) => {
                        return Err(ReadError::Shape("ResourceList items must be a list".into()))
                    }
                };
                for (n, item) in items.iter().enumerate() {
                    if !item.node.is_map() {
                        return Err(ReadError::Shape(format!(
                            "items[{n}] is not a resource (a mapping)"
                        )));
                    }
                }
                return Ok(Input {
                    form: Form::Wrapped { doc, json },
                    items,
                });
            }
        }
        Input::stream(src, docs, content)
    }

    fn stream(
        src: &'a str,
        mut docs: Vec<Document<'a>>,
        content: Vec<usize>,
    ) -> Result<Input<'a>, ReadError> {
        let mut items = Vec::with_capacity(content.len());
        let mut offset = 0;
        let mut next = 0;
        for &i in &content {
            offset += docs[next..i].iter().map(|d| d.text.len()).sum::<usize>();
            next = i;
            let Some(root) = docs[i].root.take() else {
                continue;
            };
            if !root.is_map() {
                let line = src.get(..offset).map_or(0, |s| s.matches('\n').count()) + 1;
                return Err(ReadError::Shape(format!(
                    "document {} (from line {line}) is not a resource (a mapping)",
                    items.len() + 1
                )));
            }
            items.push(Item {
                node: root,
                origin: Origin::Input(items.len()),
                touched: false,
                first_id: None,
            });
        }
        Ok(Input {
            form: Form::Stream {
                docs,
                item_docs: content,
            },
            items,
        })
    }

    /// The `functionConfig` of a ResourceList.
    pub fn function_config(&self) -> Option<&Node<'a>> {
        match &self.form {
            Form::Wrapped { doc, .. } => doc
                .root
                .as_ref()
                .and_then(|r| r.get("functionConfig"))
                .filter(|n| !n.is_null()),
            Form::Stream { .. } => None,
        }
    }

    /// Whether the input is a ResourceList.
    pub fn is_resource_list(&self) -> bool {
        matches!(self.form, Form::Wrapped { .. })
    }
}

/// Whether a document is a list kind, whose items are resources (kustomize's reading, which
/// flattens them): a mapping whose `kind` ends with `List` (`List`, `RoleList`,
/// `ConfigMapList`, ... but not the KRM wrapper `ResourceList`) and that has `items`, a list (or
/// `null`: no items). A `*List` kind without `items`, or with `items` of another shape, is a
/// resource like any other; so is one whose `items` list carries an anchor (its aliases would
/// read the list as patched).
pub(crate) fn is_list_kind(node: &Node<'_>) -> bool {
    if !node.is_map() {
        return false;
    }
    let kind = node.get("kind").and_then(Node::as_string).unwrap_or("");
    kind.ends_with("List")
        && kind != "ResourceList"
        && node
            .get("items")
            .is_some_and(|i| (i.is_seq() && i.anchor().is_none()) || i.is_null())
}

/// The resources a document holds, taken out: the document itself, or, for a list kind
/// (`is_list_kind`), its items, those of nested lists taken out too. An item that is not a
/// mapping is an error naming it.
pub fn into_resources(node: Node<'_>) -> Result<Vec<Node<'_>>, String> {
    let mut out = Vec::new();
    take_resources(node, &mut out)?;
    Ok(out)
}

/// The error for item `k` of the list kind `list`, which is not a mapping.
pub(crate) fn not_a_resource(list: &Node<'_>, k: usize) -> String {
    let id = crate::select::identity::Id::of(list);
    format!("{id}: items[{k}] is not a resource (a mapping)")
}

fn take_resources<'a>(mut node: Node<'a>, out: &mut Vec<Node<'a>>) -> Result<(), String> {
    if !is_list_kind(&node) {
        out.push(node);
        return Ok(());
    }
    let items = node
        .get_mut("items")
        .and_then(Node::items_mut)
        .map(std::mem::take)
        .unwrap_or_default();
    for (k, item) in items.into_iter().enumerate() {
        if !item.is_map() {
            return Err(not_a_resource(&node, k));
        }
        take_resources(item, out)?;
    }
    Ok(())
}

/// Calls `f` with each resource a document holds: the document itself, or, for a list kind
/// (`is_list_kind`), each mapping among its items, those of nested lists included.
pub fn for_each_resource<'n, 'a>(node: &'n Node<'a>, f: &mut dyn FnMut(&'n Node<'a>)) {
    if !is_list_kind(node) {
        f(node);
        return;
    }
    for item in node.get("items").map(Node::items).unwrap_or_default() {
        if item.is_map() {
            for_each_resource(item, f);
        }
    }
}

/// The items written back in the form they came in, with `results` added to a ResourceList.
pub(crate) fn write_string(form: Form<'_>, items: Vec<Item<'_>>, results: &[FnResult]) -> String {
    match form {
        Form::Stream { docs, item_docs } => write_stream(docs, &item_docs, items),
        Form::Wrapped { mut doc, json } => {
            let Some(root) = doc.root.as_mut() else {
                return String::new();
            };
            let nodes: Vec<Node<'_>> = items.into_iter().map(|i| i.node).collect();
            if root.get("items").is_some_and(Node::is_seq) {
                if let Some(list) = root.get_mut("items").and_then(Node::items_mut) {
                    *list = nodes;
                }
            } else {
                root.set("items", Node::seq_of(nodes));
            }
            if !results.is_empty() {
                let new: Vec<Node<'_>> = results.iter().map(FnResult::to_node).collect();
                match root.get_mut("results").and_then(Node::items_mut) {
                    Some(list) => list.extend(new),
                    None => {
                        root.set("results", Node::seq_of(new));
                    }
                }
            }
            if json {
                root.make_block();
            }
            let mut text = String::new();
            yaml::emit_document(&doc, &mut text);
            text
        }
    }
}

/// A stream written document by document: untouched ones as their source text, the others from
/// their trees.
fn write_stream(docs: Vec<Document<'_>>, item_docs: &[usize], items: Vec<Item<'_>>) -> String {
    let mut by_input: Vec<Option<Item<'_>>> = Vec::new();
    let mut new = Vec::new();
    for item in items {
        match item.origin {
            Origin::Input(n) => {
                if by_input.len() <= n {
                    by_input.resize_with(n + 1, || None);
                }
                by_input[n] = Some(item);
            }
            Origin::New { .. } => new.push(item),
        }
    }
    let mut text = StreamOut::default();
    let mut n = 0;
    for (i, mut doc) in docs.into_iter().enumerate() {
        if item_docs.get(n) != Some(&i) {
            text.source(doc.text);
            continue;
        }
        let item = by_input.get_mut(n).and_then(Option::take);
        n += 1;
        match item {
            None => text.source(comments_before_marker(doc.text)),
            Some(item) if !item.touched => text.source(doc.text),
            Some(item) => {
                doc.root = Some(item.node);
                text.document(doc);
            }
        }
    }
    for item in new {
        text.document(Document::new(item.node));
    }
    text.text
}

/// A YAML stream being written: documents copied from the source, or written from their trees
/// with the `---` YAML needs between documents.
#[derive(Debug, Default)]
pub(crate) struct StreamOut {
    pub text: String,
}

impl StreamOut {
    /// A stream about the size of `src`: one allocation instead of doublings, whose copies would
    /// briefly hold the output three times over.
    pub(crate) fn for_input(src: &str) -> StreamOut {
        StreamOut {
            text: String::with_capacity(output_room(src.len())),
        }
    }

    /// [`StreamOut::for_input`] for an output of about `len` bytes, or `None` when the memory
    /// is not there: the caller reports that, where a failed allocation would abort the process.
    pub(crate) fn try_for(len: usize) -> Option<StreamOut> {
        let mut text = String::new();
        text.try_reserve_exact(output_room(len)).ok()?;
        Some(StreamOut { text })
    }

    /// Appends source text as it is.
    pub(crate) fn source(&mut self, text: &str) {
        self.text.push_str(text);
    }

    /// Appends a document written from its tree. What its source text holds before its content
    /// up to its `---` line (blank lines, comments, directives, the marker and a comment on it)
    /// is copied as it is: the separator and the blank lines around it are the neighbour's as
    /// much as this document's, and a patch never changes them.
    pub(crate) fn document(&mut self, mut doc: Document<'_>) {
        if !self.text.is_empty() && !self.text.ends_with('\n') {
            self.text.push('\n');
        }
        if let Some(len) = source_prefix(doc.text) {
            self.text.push_str(&doc.text[..len]);
            doc.pre.clear();
            doc.directives.clear();
            doc.start = None;
            doc.bom = false;
        } else if !self.text.is_empty() {
            doc.set_explicit_start();
        }
        yaml::emit_document(&doc, &mut self.text);
    }
}

/// The length of a document's source text up to the end of its `---` line, when what comes
/// before that line is only blank lines, comments, directives and a byte order mark, and
/// nothing but a comment follows the marker on its line (the root starts on a later line).
/// `None` when the document has no such line: then its tree says everything.
fn source_prefix(text: &str) -> Option<usize> {
    let mut offset = 0;
    for line in text.split_inclusive('\n') {
        let start = offset;
        offset += line.len();
        let body = line
            .strip_prefix('\u{feff}')
            .filter(|_| start == 0)
            .unwrap_or(line);
        let trimmed = body.trim_start_matches([' ', '\t']);
        if trimmed.trim_end().is_empty() || trimmed.starts_with('#') || body.starts_with('%') {
            continue;
        }
        let rest = body.strip_prefix("---")?;
        let after = rest.trim_start_matches([' ', '\t']);
        let ends =
            after.trim_end().is_empty() || (after.len() < rest.len() && after.starts_with('#'));
        return ends.then_some(offset);
    }
    None
}

/// What a deleted document leaves: the comment lines (and blank lines among them) before its
/// `---` line, which are outside every document (a file's header above its first `---`, a
/// comment between two documents), so not the deleted resource's; nothing when there is no
/// such comment, or when a directive (`%YAML`) is among them (the document's own).
fn comments_before_marker(text: &str) -> &str {
    let Some(end) = source_prefix(text) else {
        return "";
    };
    let prefix = &text[..end];
    let mut start_of_marker = 0;
    let mut comment = false;
    for line in prefix.split_inclusive('\n') {
        let body = line.trim_start_matches(['\u{feff}', ' ', '\t']);
        if body.starts_with("---") {
            break;
        }
        if line.starts_with('%') {
            return "";
        }
        comment |= body.starts_with('#');
        start_of_marker += line.len();
    }
    if comment {
        &text[..start_of_marker]
    } else {
        ""
    }
}

/// The room an output written from an input of `len` bytes is given at once: the input's size
/// and an eighth (patches rarely grow a package by more; past it the buffer grows in place).
pub(crate) fn output_room(len: usize) -> usize {
    len.saturating_add(len / 8).saturating_add(64)
}

/// How [`stream_documents`] ended.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Streamed {
    /// Every document went through.
    Done,
    /// The input is one `ResourceList`: read it with [`Input::read`] instead.
    Wrapped,
}

/// A document written as nothing (`---` and then no content, comments aside: its root is an
/// empty plain scalar without tag or anchor) is legal YAML and holds no resource: it gets no
/// root, so the readers skip it (its text, comments included, is still written back). A null
/// written out (`~`, `null`, `!!null`) is content, and not a resource.
pub(crate) fn forget_empty(doc: &mut Document<'_>) {
    let nothing = doc.root.as_ref().is_some_and(|r| {
        r.as_str() == Some("")
            && r.style() == Some(yaml::ScalarStyle::Plain)
            && r.tag().is_none()
            && r.anchor().is_none()
    });
    if nothing {
        doc.root = None;
    }
}

/// What a document holds: its root, or nothing for an empty document (`forget_empty`).
pub fn content(mut doc: Document<'_>) -> Option<Node<'_>> {
    forget_empty(&mut doc);
    doc.root
}

/// Reads a plain stream document by document, `docs` handing its argument one at a time
/// (parsed as they come, or read before): each resource goes to `process` as soon as it is
/// there, and what comes back (or the document's own text, when `process` did not touch it) is
/// written to `out`; a resource `process` drops is not written. One document's tree is alive at
/// a time. `wrappers`: a first document that is a ResourceList alone is a wrapper
/// ([`Streamed::Wrapped`]; else a resource: the stream goes on past these documents).
pub(crate) fn stream_documents<'a>(
    docs: impl FnOnce(&mut dyn FnMut(Document<'a>)) -> Result<(), ParseError>,
    wrappers: bool,
    process: &mut dyn FnMut(Item<'a>) -> Option<Item<'a>>,
    out: &mut StreamOut,
) -> Result<Streamed, ReadError> {
    let mut n = 0usize;
    let mut shape: Option<ReadError> = None;
    // A first document that looks like a wrapper waits: alone, it is one.
    let mut held: Option<Document<'a>> = None;
    let mut handle = |mut doc: Document<'a>,
                      out: &mut StreamOut,
                      n: &mut usize,
                      shape: &mut Option<ReadError>| {
        let Some(root) = doc.root.take() else {
            out.source(doc.text);
            return;
        };
        if !root.is_map() {
            if shape.is_none() {
                *shape = Some(ReadError::Shape(format!(
                    "document {} is not a resource (a mapping)",
                    *n + 1
                )));
            }
            return;
        }
        let item = Item {
            node: root,
            origin: Origin::Input(*n),
            touched: false,
            first_id: None,
        };
        *n += 1;
        match process(item) {
            None => out.source(comments_before_marker(doc.text)),
            Some(item) if !item.touched => out.source(doc.text),
            Some(item) => {
                doc.root = Some(item.node);
                out.document(doc);
            }
        }
    };
    let mut seen_content = false;
    docs(&mut |mut doc| {
        if shape.is_some() {
            return;
        }
        forget_empty(&mut doc);
        let is_wrapper = wrappers
            && doc
                .root
                .as_ref()
                .is_some_and(|r| r.is_map() && r.str_at(&["kind"]) == Some("ResourceList"));
        if doc.root.is_some() && !seen_content && is_wrapper {
            seen_content = true;
            held = Some(doc);
            return;
        }
        if doc.root.is_some() {
            seen_content = true;
        }
        if let Some(h) = held.take() {
            handle(h, out, &mut n, &mut shape);
        }
        handle(doc, out, &mut n, &mut shape);
    })?;
    if let Some(e) = shape {
        return Err(e);
    }
    if held.is_some() {
        return Ok(Streamed::Wrapped);
    }
    Ok(Streamed::Done)
}

/// A ResourceList that could not be read as one (an item is not a resource, `items` is not a
/// list), written back as it came with `results` added: `None` when the input is not one
/// YAML mapping.
pub(crate) fn with_results(src: &str, results: &[FnResult]) -> Option<String> {
    let mut docs = yaml::parse_stream(src).ok()?;
    docs.retain(|d| d.root.is_some());
    let [doc] = &mut docs[..] else {
        return None;
    };
    let root = doc.root.as_mut().filter(|r| r.is_map())?;
    let new: Vec<Node<'_>> = results.iter().map(FnResult::to_node).collect();
    match root.get_mut("results").and_then(Node::items_mut) {
        Some(list) => list.extend(new),
        None => {
            root.set("results", Node::seq_of(new));
        }
    }
    if root.is_flow() {
        root.make_block();
    }
    let mut text = String::new();
    yaml::emit_document(doc, &mut text);
    Some(text)
}

/// A `results:` entry for the end of a ResourceList.
pub fn results_block(results: &[FnResult]) -> String {
    let mut rl = Node::map();
    rl.set(
        "results",
        Node::seq_of(results.iter().map(FnResult::to_node).collect()),
    );
    let mut out = String::new();
    yaml::emit_document(&Document::new(rl), &mut out);
    out
}

/// An empty ResourceList carrying results: what goes out when the input could not be read.
pub(crate) fn results_only(results: &[FnResult]) -> String {
    let mut root = Node::map();
    root.set("apiVersion", Node::string("config.kubernetes.io/v1"));
    root.set("kind", Node::string("ResourceList"));
    root.set("items", Node::seq());
    root.set(
        "results",
        Node::seq_of(results.iter().map(FnResult::to_node).collect()),
    );
    let mut out = String::new();
    yaml::emit_document(&Document::new(root), &mut out);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each document of `src` written from its tree when `touched(i)`, else as its text.
    fn rewrite(src: &str, touched: impl Fn(usize) -> bool) -> String {
        let mut out = StreamOut::default();
        for (i, doc) in yaml::parse_stream(src).unwrap().into_iter().enumerate() {
            if touched(i) {
                out.document(doc);
            } else {
                out.source(doc.text);
            }
        }
        out.text
    }

    /// A patched document after an untouched one that ends with a blank
    /// line lost that line (4 of the 42 untouched documents of cert-manager's Helm output).
    #[test]
    fn the_separator_and_the_blank_lines_around_it_stay() {
        for src in [
            "a: 1\n\n---\nb: 2\n",
            "a: 1\n\n\n---\n\n# grant the role\nb: 2\n",
            "a: 1\n\n# licence\n\n--- # second\nb: 2\n",
            "a: 1\n...\n%YAML 1.2\n---\nb: 2\n",
            "\u{feff}\n---\nb: 2\n",
            "---\nb: 2\n\n---\nc: 3\n\n",
        ] {
            for mask in 0..8u32 {
                let out = rewrite(src, |i| mask & (1 << i) != 0);
                assert_eq!(out, src, "documents {mask:b} written from their trees");
            }
        }
        // No `---` line of its own: the tree says where the document starts.
        assert_eq!(source_prefix("--- {a: 1}\n"), None);
        assert_eq!(source_prefix("--- |\n  x\n"), None);
        assert_eq!(source_prefix("b: 2\n"), None);
        assert_eq!(source_prefix("---#x\n"), None);
        assert_eq!(source_prefix("\n--- # c\nb: 2\n"), Some(9));
    }
}
