//! YAML text cut by reading lines, without parsing: where a block ResourceList keeps its
//! `functionConfig`, whether a sequence item starts at its dash, where a stream can be cut
//! between documents. Each answer is a guess that the caller checks against what the parser
//! reads (or that holds by YAML's grammar, as a `---` line between documents does).
//!
//! What it must not do: build trees, or know anything of Kubernetes beyond the names of the
//! ResourceList's keys.

/// The `functionConfig` entry of a block-style ResourceList, found by reading lines rather than
/// parsing, so the patches can be known before the items are read: the text from the
/// `functionConfig:` line to the next top-level key (or the end). `None` when the input does not
/// look like one block mapping with `kind: ResourceList` and a `functionConfig` key; the caller
/// must check what it found against the parsed document.
///
/// In a block mapping at column 0, every line that starts at column 0 with something other than
/// a comment, a sequence dash or a document marker is a top-level key: what nests inside is
/// indented, and so are block scalars and flow continuation lines.
pub fn probe_function_config(src: &str) -> Option<&str> {
    let mut start: Option<usize> = None;
    let mut found: Option<(usize, usize)> = None;
    let mut resource_list = false;
    let mut offset = 0;
    for line in src.split_inclusive('\n') {
        let at = offset;
        offset += line.len();
        let first = line.as_bytes().first().copied().unwrap_or(b'\n');
        if matches!(first, b' ' | b'\t' | b'#' | b'\n' | b'\r') {
            continue;
        }
        if line.starts_with("---") || line.starts_with("...") {
            if start.is_some() || found.is_some() || resource_list {
                // A marker after the content: another document follows, or an explicit end.
                return None;
            }
            continue;
        }
        if first == b'-' {
            continue;
        }
        if matches!(first, b'{' | b'[' | b'"' | b'\'' | b'?') {
            return None;
        }
        if let Some(s) = start.take() {
            found = Some((s, at));
        }
        let key = line.trim_end();
        if key == "kind: ResourceList" {
            resource_list = true;
        }
        if line.starts_with("functionConfig:")
            && line[15..].starts_with([' ', '\t', '\n', '\r', '#'])
        {
            if found.is_some() {
                return None;
            }
            start = Some(at);
        }
    }
    if let Some(s) = start {
        found = Some((s, src.len()));
    }
    let (s, e) = found?;
    resource_list.then(|| &src[s..e])
}

/// Whether an item's text (from the end of the item before it) starts, after blank lines and
/// comments, with its sequence's `-` at `dash_col`.
pub fn starts_at_its_dash(text: &str, dash_col: usize) -> bool {
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

/// `src` cut into about `n` pieces of about the same size, each cut at the start of a `---`
/// line. Such a line is always a document marker (YAML forbids one inside any content), so
/// every cut falls between two documents.
pub fn cut_at_markers(src: &str, n: usize) -> Vec<&str> {
    let mut pieces = Vec::with_capacity(n);
    let mut start = 0;
    for k in 1..n {
        let aim = src.len() / n * k;
        if aim <= start {
            continue;
        }
        let Some(at) = marker_at_or_after(src, aim) else {
            break;
        };
        if let Some(piece) = src.get(start..at).filter(|p| !p.is_empty()) {
            pieces.push(piece);
            start = at;
        }
    }
    if let Some(last) = src.get(start..) {
        pieces.push(last);
    }
    pieces
}

/// The start of the first `---` line (`---` then a blank or the line's end) after `from`.
fn marker_at_or_after(src: &str, from: usize) -> Option<usize> {
    let bytes = src.as_bytes();
    let mut from = (from..=src.len()).find(|&i| src.is_char_boundary(i))?;
    loop {
        let i = src.get(from..)?.find("\n---")?;
        let at = from + i + 1;
        if matches!(bytes.get(at + 3), None | Some(b'\n' | b'\r' | b' ' | b'\t')) {
            return Some(at);
        }
        from = at + 3;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cuts_fall_only_at_document_markers() {
        let src = "a: 1\n---\nb: '\n---x'\n---\nc: 3\n";
        assert_eq!(
            cut_at_markers(src, 2),
            ["a: 1\n---\nb: '\n---x'\n", "---\nc: 3\n"]
        );
        assert_eq!(cut_at_markers("a: 1\nb: 2\n", 4), ["a: 1\nb: 2\n"]);
        // More pieces asked for than there are documents: each cut once, none empty.
        let three = "a: 1\n---\nb: 2\n--- # c\nc: 3\n";
        assert_eq!(
            cut_at_markers(three, 20),
            ["a: 1\n", "---\nb: 2\n", "--- # c\nc: 3\n"]
        );
        assert_eq!(cut_at_markers(three, 20).concat(), three);
    }
}
