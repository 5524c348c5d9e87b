//! YAML text cut by reading lines, without parsing: what shape a text has (a block
//! ResourceList, and where its `items` are; JSON or flow style; a stream), where a stream can be
//! cut between documents and a sequence between items, whether a sequence item starts at its
//! dash, whether a text may hold anchors. Each answer either holds by YAML's grammar (a `---`
//! line at column 0 is always a document marker; in a block mapping at column 0, a line at
//! column 0 that is not a comment, a dash or a marker is always a key) or is checked by the
//! caller against what the parser reads.
//!
//! What it must not do: build trees, or know anything of Kubernetes beyond the names of the
//! ResourceList's keys and that a list kind's name ends in `List`.

use std::ops::Range;

/// A block ResourceList's text cut by lines: its `items` apart from the rest.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct ListLayout {
    /// From the start of the `items:` line to the end of its block sequence: the next line at
    /// column 0 that is a key, or the end of the text.
    pub items: Range<usize>,
    /// How many entries of the mapping come before `items`.
    pub keys_before: usize,
    /// The column of the items' dashes.
    pub dash_col: usize,
}

/// What a text looks like, read by lines.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Shape {
    /// One block mapping at column 0 with `kind: ResourceList`, `items` a block sequence, no
    /// `results` yet, no directive and no other document: [`ListLayout`] says where its items are.
    ResourceList(ListLayout),
    /// One block mapping at column 0 whose kind is a list kind written plainly (`kind: List`,
    /// `kind: RoleList`: as `kubectl get -o yaml` prints what it gets), `items` a block
    /// sequence, no directive and no other document: [`ListLayout`] says where its items are.
    List(ListLayout),
    /// A ResourceList otherwise (flow style or JSON, `results` already there, `items` in flow
    /// style, a directive, `kind` written otherwise), or a text that starts with `{` or `[`.
    Other,
    /// Anything else: a stream of documents (a ResourceList among others is a resource there).
    Stream,
}

/// The shape of a text (see [`Shape`]).
pub(crate) fn shape(src: &str) -> Shape {
    let mut s = Scan {
        plain: true,
        ..Scan::default()
    };
    let b = src.as_bytes();
    let starts = std::iter::once(0).chain(memchr::memchr_iter(b'\n', b).map(|i| i + 1));
    for at in starts.take_while(|&at| at < b.len()) {
        // An indented line says nothing, but where the items' dashes are until that is known
        // (see `Scan::line`): most lines are skipped at their first byte.
        if b.get(at) == Some(&b' ') && !(s.in_items && s.dash_col.is_none()) {
            continue;
        }
        let end = b
            .get(at..)
            .and_then(|rest| memchr::memchr(b'\n', rest))
            .map_or(b.len(), |i| at + i + 1);
        let Some(line) = src.get(at..end) else {
            continue;
        };
        let body = if at == 0 {
            line.strip_prefix('\u{feff}').unwrap_or(line)
        } else {
            line
        };
        if !s.line(at, body) {
            return Shape::Stream;
        }
    }
    if let Some(items) = &mut s.items {
        if items.end == 0 {
            items.end = src.len();
        }
    }
    match (s.kind, s.plain, s.items, s.dash_col) {
        (Kind::Plain, true, Some(items), Some(dash_col)) => Shape::ResourceList(ListLayout {
            items,
            keys_before: s.keys_before,
            dash_col,
        }),
        (Kind::List, true, Some(items), Some(dash_col)) => Shape::List(ListLayout {
            items,
            keys_before: s.keys_before,
            dash_col,
        }),
        (Kind::None | Kind::List, ..) if !s.flow => Shape::Stream,
        _ => Shape::Other,
    }
}

/// Which `kind:` line was seen: `kind: ResourceList` as written by kpt and kyaml, or otherwise;
/// a list kind written plainly (`kind: List`); none of these.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
enum Kind {
    #[default]
    None,
    Plain,
    Other,
    List,
}

/// A list kind's name (`List`, `RoleList`; not `ResourceList`) written plainly: letters and
/// digits ending in `List`.
fn is_list_kind_name(value: &str) -> bool {
    value.ends_with("List")
        && value != "ResourceList"
        && value.bytes().all(|b| b.is_ascii_alphanumeric())
}

/// The state of [`shape`]'s reading.
#[derive(Debug, Default)]
struct Scan {
    content: bool,
    kind: Kind,
    /// Nothing seen yet that a block ResourceList read by items cannot hold.
    plain: bool,
    /// A text that starts with `{` or `[`.
    flow: bool,
    items: Option<Range<usize>>,
    in_items: bool,
    dash_col: Option<usize>,
    keys: usize,
    keys_before: usize,
}

/// The first byte of a line, a line break for an empty one.
fn first(line: &str) -> u8 {
    line.as_bytes().first().copied().unwrap_or(b'\n')
}

/// Whether the rest of a line after a key or marker is nothing but blanks and a comment.
fn rest_is_empty(rest: &str) -> bool {
    let t = rest.trim_start_matches([' ', '\t']);
    t.trim_end().is_empty() || (t.len() < rest.len() && t.starts_with('#'))
}

/// A `-` that starts a sequence item: followed by a blank or the line's end.
fn is_dash(body: &str) -> bool {
    body.starts_with('-')
        && matches!(
            body.as_bytes().get(1),
            None | Some(b' ' | b'\t' | b'\n' | b'\r')
        )
}

impl Scan {
    /// Reads one line (`at` its offset). False when the text is no single document.
    fn line(&mut self, at: usize, body: &str) -> bool {
        let c = first(body);
        if self.in_items {
            if matches!(c, b' ' | b'\t' | b'\n' | b'\r' | b'#') {
                if self.dash_col.is_none() {
                    let t = body.trim_start_matches(' ');
                    if !t.trim_end().is_empty() && !t.starts_with('#') {
                        self.dash_col = Some(body.len() - t.len());
                        self.plain &= is_dash(t);
                    }
                }
                return true;
            }
            if is_dash(body) {
                self.plain &= *self.dash_col.get_or_insert(0) == 0;
                return true;
            }
            self.in_items = false;
            if let Some(items) = &mut self.items {
                items.end = at;
            }
        }
        if matches!(c, b' ' | b'\t' | b'\n' | b'\r' | b'#') {
            return true;
        }
        if body.starts_with("---") || body.starts_with("...") {
            if self.content {
                // Another document follows, or an explicit end: a stream.
                return false;
            }
            self.plain &= body.starts_with("---") && rest_is_empty(&body[3..]);
            return true;
        }
        if !self.content && matches!(c, b'{' | b'[') {
            self.flow = true;
        }
        if c == b'%'
            || matches!(
                c,
                b'{' | b'[' | b'"' | b'\'' | b'?' | b'&' | b'*' | b'!' | b'|' | b'>' | b'-'
            )
        {
            self.plain = false;
            self.content |= c != b'%';
            return true;
        }
        self.content = true;
        let key = body.split(':').next().unwrap_or("");
        let rest = body.get(key.len() + 1..).unwrap_or("");
        if key == "kind" {
            let value = rest.trim().trim_matches(['"', '\'']);
            let value = value.split(" #").next().unwrap_or("").trim();
            if rest.trim_end() == " ResourceList" {
                self.kind = Kind::Plain;
            } else if value == "ResourceList" {
                self.kind = Kind::Other;
            } else if rest
                .trim_end()
                .strip_prefix(' ')
                .is_some_and(is_list_kind_name)
            {
                self.kind = Kind::List;
            }
        }
        if key == "items" {
            self.plain &= self.items.is_none() && rest_is_empty(rest);
            self.items = Some(at..0);
            self.in_items = true;
            self.keys_before = self.keys;
        }
        if key == "results" {
            self.plain = false;
        }
        self.keys += 1;
        true
    }
}

/// Where the items of a list kind are when it is the only item of a ResourceList's `items`
/// (`region`, its items' dashes at `dash_col`): how kpt passes a file of one `kind: List`. The
/// item's keys stand at `dash_col + 2`, the first on the dash's line; `items:` must be one of
/// the others, alone on its line, its block sequence on the lines after it. `None` when the
/// region holds more than one item, or the item is written otherwise (a tab, a flow or quoted
/// key or value at the key's column, anchors, tags, `items` twice or on the dash's line). The
/// layout's `keys_before` counts the item's keys before `items`.
pub(crate) fn only_item_list(
    src: &str,
    region: Range<usize>,
    dash_col: usize,
) -> Option<ListLayout> {
    let text = src.get(region.clone())?;
    let col = dash_col + 2;
    let b = text.as_bytes();
    // The lines after the `items:` line of the ResourceList (the first is the item's dash line).
    let starts = memchr::memchr_iter(b'\n', b).map(|i| i + 1);
    let mut dash_seen = false;
    let (mut items, mut in_items, mut inner_dash) = (None::<Range<usize>>, false, None);
    let (mut keys, mut keys_before) = (0, 0);
    for start in starts.take_while(|&i| i < b.len()) {
        // A line deeper than the keys says nothing once the items' dashes are known: most lines
        // are skipped at their first bytes.
        let deeper = b
            .get(start..=start + col)
            .is_some_and(|lead| lead.iter().all(|&c| c == b' '));
        if deeper && dash_seen && (inner_dash.is_some() || !in_items) {
            continue;
        }
        let end = memchr::memchr(b'\n', b.get(start..)?).map_or(b.len(), |i| start + i + 1);
        let (at, line) = (region.start + start, text.get(start..end)?);
        let body = line.trim_start_matches(' ');
        let indent = line.len() - body.len();
        if body.starts_with('\t') {
            return None;
        }
        if body.trim_end().is_empty() || body.starts_with('#') {
            continue;
        }
        if !dash_seen {
            // The item's first line: `- key: ...` at the dash's column.
            let first_key = body.get(1..)?.trim_start_matches(' ');
            if indent != dash_col || !is_dash(body) || body.len() - first_key.len() != 2 {
                return None;
            }
            if !starts_a_plain_key(first_key) || first_key.starts_with("items:") {
                return None;
            }
            dash_seen = true;
            keys += 1;
            continue;
        }
        if indent < col {
            return None;
        }
        if in_items {
            if indent > col || is_dash(body) {
                if indent == col && inner_dash.is_some_and(|d| d != col) {
                    return None;
                }
                if inner_dash.is_none() {
                    if !is_dash(body) {
                        return None;
                    }
                    inner_dash = Some(indent);
                }
                continue;
            }
            in_items = false;
            if let Some(items) = &mut items {
                items.end = at;
            }
        }
        if indent > col {
            continue;
        }
        if !starts_a_plain_key(body) {
            return None;
        }
        let key = body.split(':').next().unwrap_or("");
        if key == "items" {
            let rest = body.get("items:".len()..).unwrap_or("");
            if items.is_some() || !rest_is_empty(rest) {
                return None;
            }
            items = Some(at..0);
            in_items = true;
            keys_before = keys;
        }
        keys += 1;
    }
    let mut items = items?;
    if in_items {
        items.end = region.end;
    }
    let dash_col = inner_dash?;
    Some(ListLayout {
        items,
        keys_before,
        dash_col,
    })
}

/// Whether a line's content (after its indentation) starts a key written plainly: not a
/// comment, a dash, a flow or quoted node, an explicit key, an anchor, alias, tag or block
/// scalar indicator.
fn starts_a_plain_key(body: &str) -> bool {
    !matches!(
        first(body),
        b'{' | b'['
            | b'"'
            | b'\''
            | b'?'
            | b'&'
            | b'*'
            | b'!'
            | b'|'
            | b'>'
            | b'-'
            | b'#'
            | b'%'
            | b'@'
            | b'`'
            | b'\n'
            | b'\r'
    ) && body.contains(':')
}

/// `src` cut into pieces of at least `size` bytes each (the last may be smaller), each cut at the
/// start of a `---` line that follows a line of content. Such a line is always a document
/// marker (YAML forbids one inside any content), so every cut falls between two documents;
/// and as a line of content comes before it, no comment or blank line stands between the two
/// documents, which the parser could give to either.
pub(crate) fn cut_at_markers(src: &str, size: usize) -> Vec<&str> {
    cut_lines(src, size, |_, prev, line| {
        line.starts_with("---")
            && matches!(
                line.as_bytes().get(3),
                None | Some(b'\n' | b'\r' | b' ' | b'\t')
            )
            && is_content(prev)
            && !prev.starts_with('%')
            && !prev.starts_with("...")
    })
}

/// A sequence's text (a ResourceList's `items` entry, from its `items:` line) cut into pieces of
/// at least `size` bytes each, each cut at the start of an item: a line with its `-` at
/// `dash_col` that follows a line of content (so that no comment or blank line stands between
/// the items, which the parser could give to either). Not cut at all where an item holds an
/// explicit key (`? key`): the parser places a missing value at the next token, which may be the
/// next item's.
pub(crate) fn cut_items(text: &str, dash_col: usize, size: usize) -> Vec<&str> {
    // A `?` that starts a node: after the line's indentation and dashes, then a blank.
    let b = text.as_bytes();
    let explicit = memchr::memchr_iter(b'?', b).any(|i| {
        let line = b.get(..i).map_or(0, |before| {
            memchr::memrchr(b'\n', before).map_or(0, |n| n + 1)
        });
        let lead = b.get(line..i).unwrap_or_default();
        lead.iter().all(|c| matches!(c, b' ' | b'-'))
            && matches!(b.get(i + 1), None | Some(b' ' | b'\t' | b'\r' | b'\n'))
    });
    if explicit {
        return vec![text];
    }
    let is_item = |line: &str| {
        let body = line.trim_start_matches(' ');
        line.len() - body.len() == dash_col && is_dash(body)
    };
    // The first piece holds the `items:` line and at least one item.
    let mut offset = 0;
    let mut first_item = text.len();
    for line in text.split_inclusive('\n') {
        if is_item(line) {
            first_item = offset;
            break;
        }
        offset += line.len();
    }
    cut_lines(text, size, |at, prev, line| {
        at > first_item && is_item(line) && is_content(prev)
    })
}

/// A line that holds content: not blank, not only a comment.
fn is_content(line: &str) -> bool {
    let t = line.trim_start_matches([' ', '\t']);
    !t.trim_end().is_empty() && !t.starts_with('#')
}

/// `text` cut before lines that `cut(offset, previous line, line)` accepts, each piece at least
/// `size` bytes (the last may be smaller). Only the lines from `size` bytes past a cut on are
/// looked at, up to the next cut: the rest of the text is skipped.
fn cut_lines(text: &str, size: usize, cut: impl Fn(usize, &str, &str) -> bool) -> Vec<&str> {
    let b = text.as_bytes();
    // The start of the first line that starts at or after `from`.
    let line_at = |from: usize| -> Option<usize> {
        if from == 0 || b.get(from.checked_sub(1)?) == Some(&b'\n') {
            return (from < b.len()).then_some(from);
        }
        let nl = from + memchr::memchr(b'\n', b.get(from..)?)?;
        (nl + 1 < b.len()).then_some(nl + 1)
    };
    let mut pieces = Vec::new();
    let mut start = 0;
    let mut at = line_at(size.max(1));
    while let Some(pos) = at {
        let end = memchr::memchr(b'\n', b.get(pos..).unwrap_or_default())
            .map_or(b.len(), |i| pos + i + 1);
        let prev_start = pos
            .checked_sub(1)
            .and_then(|p| memchr::memrchr(b'\n', b.get(..p)?))
            .map_or(0, |i| i + 1);
        let (line, prev) = (text.get(pos..end), text.get(prev_start..pos));
        if let (Some(line), Some(prev), true) = (line, prev, pos > start) {
            if cut(pos, prev, line) {
                if let Some(piece) = text.get(start..pos) {
                    pieces.push(piece);
                    start = pos;
                    at = line_at(pos.saturating_add(size.max(1)));
                    continue;
                }
            }
        }
        at = line_at(end);
    }
    if let Some(last) = text
        .get(start..)
        .filter(|l| !l.is_empty() || pieces.is_empty())
    {
        pieces.push(last);
    }
    pieces
}

/// Whether an item's text (from the end of the item before it) starts, after blank lines and
/// comments, with its sequence's `-` at `dash_col`.
pub(crate) fn starts_at_its_dash(text: &str, dash_col: usize) -> bool {
    for line in text.lines() {
        let body = line.trim_start();
        if body.is_empty() || body.starts_with('#') {
            continue;
        }
        let indent = line.len() - body.len();
        return indent == dash_col
            && body.starts_with('-')
            && matches!(body.as_bytes().get(1), None | Some(b' ' | b'\t'));
    }
    false
}

/// The sequence indentation a tree sets for the rest of its document, as the parser reads it:
/// that of the first block sequence (with items) that completes as the value of a key in a
/// block mapping, the tree read in the parser's order (a collection completes after what it
/// holds). `None` when it holds none. (The parser reports a document's style as far as it has
/// read: see [`super::SplitItem::seq_indent`].)
pub(crate) fn first_seq_indent(node: &super::Node<'_>) -> Option<super::SeqIndent> {
    if node.is_flow() {
        return None;
    }
    if node.is_map() {
        return first_seq_indent_in(node.entries());
    }
    node.items().iter().find_map(first_seq_indent)
}

/// [`first_seq_indent`] of the entries of a block mapping.
pub(crate) fn first_seq_indent_in(entries: &[super::Entry<'_>]) -> Option<super::SeqIndent> {
    for e in entries {
        if let Some(found) = first_seq_indent(&e.value) {
            return Some(found);
        }
        if e.value.is_seq() && !e.value.is_flow() && !e.value.items().is_empty() {
            return Some(if e.value.layout().indent == 0 {
                super::SeqIndent::Compact
            } else {
                super::SeqIndent::Wide
            });
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cuts_fall_only_at_document_markers_after_content() {
        let src = "a: 1\n---\nb: '\n---x'\n---\nc: 3\n";
        assert_eq!(
            cut_at_markers(src, 1),
            ["a: 1\n", "---\nb: '\n---x'\n", "---\nc: 3\n"]
        );
        assert_eq!(
            cut_at_markers(src, 12),
            ["a: 1\n---\nb: '\n---x'\n", "---\nc: 3\n"]
        );
        assert_eq!(cut_at_markers("a: 1\nb: 2\n", 1), ["a: 1\nb: 2\n"]);
        // Not after a comment, a blank line, a directive or an end marker.
        let odd = "a: 1\n# c\n---\nb: 2\n\n---\nc: 3\n...\n%YAML 1.2\n---\nd: 4\n";
        assert_eq!(cut_at_markers(odd, 1), [odd]);
        let three = "a: 1\n---\nb: 2\n--- # c\nc: 3\n";
        assert_eq!(cut_at_markers(three, 1).concat(), three);
        assert_eq!(cut_at_markers("", 1), [""]);
    }

    #[test]
    fn items_are_cut_at_their_dashes() {
        let items = "items:\n- a: 1\n  b: 2\n- c: 3\n# c\n- d: 4\n-   e: 5\n";
        assert_eq!(
            cut_items(items, 0, 1),
            [
                "items:\n- a: 1\n  b: 2\n",
                "- c: 3\n# c\n- d: 4\n",
                "-   e: 5\n"
            ]
        );
        let wide = "items:\n  - a: 1\n  - b:\n    - x\n  - c: 3\n";
        assert_eq!(
            cut_items(wide, 2, 20),
            ["items:\n  - a: 1\n  - b:\n    - x\n", "  - c: 3\n"]
        );
        let explicit = "items:\n- ? a\n- b: 1\n";
        assert_eq!(cut_items(explicit, 0, 1), [explicit]);
    }

    #[test]
    fn shapes() {
        let rl = "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n- a: 1\n# c\n- b: 2\nfunctionConfig:\n  x: 1\n";
        let Shape::ResourceList(l) = shape(rl) else {
            panic!("{:?}", shape(rl))
        };
        assert_eq!(&rl[l.items.clone()], "items:\n- a: 1\n# c\n- b: 2\n");
        assert_eq!((l.keys_before, l.dash_col), (2, 0));
        let wide = "---\nkind: ResourceList\nitems:\n  - a: 1\n";
        let Shape::ResourceList(l) = shape(wide) else {
            panic!()
        };
        assert_eq!(
            (&wide[l.items.clone()], l.dash_col),
            ("items:\n  - a: 1\n", 2)
        );
        for other in [
            "kind: ResourceList\nitems: []\n",
            "kind: ResourceList\nitems:\n- a: 1\nresults: []\n",
            "kind: 'ResourceList'\nitems:\n- a: 1\n",
            "%YAML 1.2\n---\nkind: ResourceList\nitems:\n- a: 1\n",
            "{\"kind\": \"ResourceList\"}\n",
            "kind: ResourceList\nfunctionConfig: {}\n",
        ] {
            assert_eq!(shape(other), Shape::Other, "{other}");
        }
        let list =
            "apiVersion: v1\nitems:\n- a: 1\n- b: 2\nkind: List\nmetadata:\n  resourceVersion: ''";
        let Shape::List(l) = shape(list) else {
            panic!("{:?}", shape(list))
        };
        assert_eq!(&list[l.items.clone()], "items:\n- a: 1\n- b: 2\n");
        assert_eq!((l.keys_before, l.dash_col), (1, 0));
        assert!(matches!(
            shape("kind: RoleList\nitems:\n  - a: 1\n"),
            Shape::List(_)
        ));
        for stream in [
            "kind: ResourceList\nitems:\n- a: 1\n---\nkind: Other\n",
            "kind: List\nitems:\n- a: 1\n---\nkind: List\nitems: []\n",
            "kind: List\nitems: []\n",
            "kind: 'List'\nitems:\n- a: 1\n",
            "kind: List\nitems:\n- a: 1\nresults: []\n",
            "kind: My-List\nitems:\n- a: 1\n",
            "kind: ConfigMap\n",
            "- a\n",
        ] {
            assert_eq!(shape(stream), Shape::Stream, "{stream}");
        }
    }

    /// The items of a list kind that is a ResourceList's only item, as kpt passes a file of one
    /// `kind: List`; anything else is not.
    #[test]
    fn a_resource_lists_only_item_that_is_a_list_has_its_items_found() {
        let src = "kind: ResourceList\nitems:\n- apiVersion: v1\n  items:\n  - a: 1\n  # c\n  - b:\n    - x\n  kind: List\n  metadata: {}\nfunctionConfig: {}\n";
        let Shape::ResourceList(rl) = shape(src) else {
            panic!("{:?}", shape(src))
        };
        let inner = only_item_list(src, rl.items.clone(), rl.dash_col).expect("a list");
        assert_eq!(
            &src[inner.items.clone()],
            "  items:\n  - a: 1\n  # c\n  - b:\n    - x\n"
        );
        assert_eq!((inner.keys_before, inner.dash_col), (1, 2));
        // Wide dashes, the items last.
        let wide = "kind: ResourceList\nitems:\n  - kind: List\n    items:\n      - a: 1\n";
        let Shape::ResourceList(rl) = shape(wide) else {
            panic!()
        };
        let inner = only_item_list(wide, rl.items.clone(), rl.dash_col).expect("a list");
        assert_eq!(&wide[inner.items.clone()], "    items:\n      - a: 1\n");
        assert_eq!(inner.dash_col, 6);
        for not in [
            // Two items.
            "kind: ResourceList\nitems:\n- kind: List\n  items:\n  - a: 1\n- kind: List\n  items:\n  - b: 1\n",
            // `items` on the dash's line, twice, in flow style, with an anchor.
            "kind: ResourceList\nitems:\n- items:\n  - a: 1\n  kind: List\n",
            "kind: ResourceList\nitems:\n- kind: List\n  items:\n  - a: 1\n  items:\n  - b: 1\n",
            "kind: ResourceList\nitems:\n- kind: List\n  items: [a]\n",
            "kind: ResourceList\nitems:\n- kind: List\n  &a items:\n  - a: 1\n",
            // A continuation line at the keys' column.
            "kind: ResourceList\nitems:\n- kind: List\n  d: 'x\n  y'\n  items:\n  - a: 1\n",
        ] {
            let Shape::ResourceList(rl) = shape(not) else {
                panic!("{not}")
            };
            assert_eq!(only_item_list(not, rl.items.clone(), rl.dash_col), None, "{not}");
        }
    }
}
