//! JSON patch creation (RFC 6902): the operations that turn OLD into NEW, for
//! `json6902::patch` to run.
//!
//! Mappings give `add` for a field only NEW has, `remove` for one only OLD has, and the
//! operations of each changed field; other values that changed are `replace`d. Lists whose
//! elements have merge keys (from the schema, or inferred with [`Options::infer_keys`]) are
//! edited through keyed pointers, so the patch survives a reordering of the list it is applied
//! to: `remove /spec/containers/[name=old]`, `replace /spec/containers/[name=app]/image`, then
//! `move` and `add` by index to give NEW's order (the elements already in order, a longest
//! increasing run of them, stay; the others are moved). A selector names the key fields an
//! element has on both sides and must pick exactly one element wherever the patch runs; when
//! one cannot, the list is edited by index. Other lists are edited by index (element by element,
//! then `add` or `remove` at the end), or replaced whole when that takes fewer operations.
//!
//! With [`Options::kustomize`] no selector is written: kustomize's JSON patch library
//! (evanphx/json-patch) knows only indices, so every list is edited by index.
//!
//! JSON patches can say everything YAML data holds (nulls included): applying the patch to OLD
//! gives NEW exactly, as data. Values copied from NEW keep their comments and styles.
//!
//! What it must not do: apply the patch, or look at anything but the two nodes, the schema and
//! the options.

use crate::hash::{HashMap, HashSet};
use crate::merge::align::{self, key_values, ListKind};
use crate::patch::json6902::{Selector, Token};
use crate::schema::{Cursor, FieldMeta, MapKey, Schema};
use crate::yaml::{Entry, Kind, Node};

use super::nodes::{expanded, plain_copy, same};
use super::{Diff, DiffError, Options};

/// The JSON patch (a list of operations) that turns `old` into `new`, resources of the kind at
/// `root` in `schema` (whose merge keys decide the keyed pointers).
pub fn diff<'n>(
    old: &Node<'_>,
    new: &Node<'n>,
    schema: &Schema,
    root: Cursor,
    opts: &Options,
) -> Result<Diff<'n>, DiffError> {
    let (old, new) = (expanded(old)?, expanded(new)?);
    let mut g = Gen {
        schema,
        infer: opts.infers(),
        selectors: !opts.kustomize,
        ops: Vec::new(),
    };
    g.value(&old, &new, &mut Vec::new(), &FieldMeta::default(), root);
    let changed = !g.ops.is_empty();
    Ok(Diff {
        patch: Node::seq_of(g.ops),
        changed,
        warnings: Vec::new(),
    })
}

struct Gen<'s, 'n> {
    schema: &'s Schema,
    infer: bool,
    /// Keyed pointers (`[name=app]`) where list elements have merge keys; without them (for
    /// kustomize, whose JSON patch library has none) every list is edited by index.
    selectors: bool,
    ops: Vec<Node<'n>>,
}

/// A pointer as its tokens, each already escaped for RFC 6901.
type Ptr = Vec<String>;

fn text(ptr: &[String]) -> String {
    ptr.iter().map(|t| format!("/{t}")).collect()
}

fn name(key: &str) -> String {
    Token::Name(key.to_owned()).to_string()
}

fn with(ptr: &[String], token: String) -> Ptr {
    let mut p = ptr.to_vec();
    p.push(token);
    p
}

/// The selector token `[k=v,...]` for these fields.
fn selector(fields: &[(String, String)]) -> Option<String> {
    let esc = |s: &str| {
        let mut o = String::with_capacity(s.len());
        for c in s.chars() {
            if matches!(c, '\\' | ']' | ',' | '=') {
                o.push('\\');
            }
            o.push(c);
        }
        o
    };
    let body: Vec<String> = fields
        .iter()
        .map(|(k, v)| format!("{}={}", esc(k), esc(v)))
        .collect();
    let sel: Selector = format!("[{}]", body.join(",")).parse().ok()?;
    (sel.fields() == fields).then(|| Token::Select(sel).to_string())
}

impl<'n> Gen<'_, 'n> {
    fn op(
        &mut self,
        verb: &str,
        from: Option<&[String]>,
        path: &[String],
        value: Option<&Node<'n>>,
    ) {
        let mut entries = vec![Entry::new("op", Node::string(verb.to_owned()))];
        if let Some(f) = from {
            entries.push(Entry::new("from", Node::string(text(f))));
        }
        entries.push(Entry::new("path", Node::string(text(path))));
        if let Some(v) = value {
            entries.push(Entry::new("value", plain_copy(v)));
        }
        self.ops.push(Node::map_of(entries));
    }

    fn value(
        &mut self,
        old: &Node<'_>,
        new: &Node<'n>,
        ptr: &mut Ptr,
        meta: &FieldMeta,
        at: Cursor,
    ) {
        match (old.kind(), new.kind()) {
            (Kind::Map, Kind::Map) if keys_are_text(old) && keys_are_text(new) => {
                self.map(old, new, ptr, at)
            }
            (Kind::Seq, Kind::Seq) => self.list(old, new, ptr, meta, at),
            _ => {
                if !same(old, new) {
                    self.op("replace", None, ptr, Some(new));
                }
            }
        }
    }

    fn map(&mut self, old: &Node<'_>, new: &Node<'n>, ptr: &mut Ptr, at: Cursor) {
        let index = align::FieldIndex::new(Some(old));
        for ne in new.entries() {
            let key = ne.key.as_str().unwrap_or_default();
            ptr.push(name(key));
            match index.get(&ne.key) {
                None => self.op("add", None, ptr, Some(&ne.value)),
                Some(oe) => {
                    let (meta, child) = align::field(self.schema, at, key, &[&oe.key, &ne.key]);
                    self.value(&oe.value, &ne.value, ptr, &meta, child);
                }
            }
            ptr.pop();
        }
        let new_index = align::FieldIndex::new(Some(new));
        for oe in old.entries() {
            if new_index.get(&oe.key).is_none() {
                let p = with(ptr, name(oe.key.as_str().unwrap_or_default()));
                self.op("remove", None, &p, None);
            }
        }
    }

    fn list(
        &mut self,
        old: &Node<'_>,
        new: &Node<'n>,
        ptr: &mut Ptr,
        meta: &FieldMeta,
        at: Cursor,
    ) {
        if same(old, new) {
            return;
        }
        let keyed = match align::list_kind(meta, self.infer, &[old, new], |_| false) {
            ListKind::Keyed(keys)
                if self.selectors && old.items().iter().chain(new.items()).all(Node::is_map) =>
            {
                Some(keys)
            }
            _ => None,
        };
        let mark = self.ops.len();
        let done = keyed.is_some_and(|keys| self.keyed(old, new, ptr, &keys, at));
        if !done {
            self.positional(old, new, ptr, at);
            // Replacing the list says it in one operation.
            if self.ops.len() - mark > new.items().len() + 1 {
                self.ops.truncate(mark);
                self.op("replace", None, ptr, Some(new));
            }
        }
    }

    /// Element by element, then `add` or `remove` at the end.
    fn positional(&mut self, old: &Node<'_>, new: &Node<'n>, ptr: &mut Ptr, at: Cursor) {
        let (oi, ni) = (old.items(), new.items());
        let common = oi.len().min(ni.len());
        for (i, (o, n)) in oi.iter().zip(ni).enumerate() {
            ptr.push(i.to_string());
            self.value(o, n, ptr, &FieldMeta::default(), at);
            ptr.pop();
        }
        for (i, n) in ni.iter().enumerate().skip(common) {
            self.op("add", None, &with(ptr, i.to_string()), Some(n));
        }
        for i in (common..oi.len()).rev() {
            self.op("remove", None, &with(ptr, i.to_string()), None);
        }
    }

    /// Keyed pointers; `false` (and no operation) when some element cannot be selected.
    fn keyed(
        &mut self,
        old: &Node<'_>,
        new: &Node<'n>,
        ptr: &mut Ptr,
        keys: &[MapKey],
        at: Cursor,
    ) -> bool {
        let (oi, ni) = (old.items(), new.items());
        let Some(old_keys) = oi
            .iter()
            .map(|i| key_values(i, keys))
            .collect::<Option<Vec<_>>>()
        else {
            return false;
        };
        let Some(new_keys) = ni
            .iter()
            .map(|i| key_values(i, keys))
            .collect::<Option<Vec<_>>>()
        else {
            return false;
        };
        let (Some(old_pos), Some(new_pos)) = (positions(&old_keys), positions(&new_keys)) else {
            return false;
        };
        // Each element of OLD is selected by the key fields it has on both sides.
        let mut sels: Vec<Vec<(String, String)>> = Vec::with_capacity(oi.len());
        for (o, k) in oi.iter().zip(&old_keys) {
            let n = new_pos.get(k.as_slice()).map(|&j| &ni[j]);
            let fields: Vec<(String, String)> = keys
                .iter()
                .filter_map(|mk| {
                    let v = scalar_text(o, &mk.name)?;
                    match n {
                        Some(n) if scalar_text(n, &mk.name)? != v => None,
                        _ => Some((mk.name.clone(), v.to_owned())),
                    }
                })
                .collect();
            if fields.is_empty() {
                return false;
            }
            sels.push(fields);
        }
        if !selectors_unique(&sels, oi.iter().chain(ni), keys) {
            return false;
        }
        let Some(tokens) = sels
            .iter()
            .map(|f| selector(f))
            .collect::<Option<Vec<String>>>()
        else {
            return false;
        };
        // 1. Elements NEW dropped.
        for (k, t) in old_keys.iter().zip(&tokens) {
            if !new_pos.contains_key(k.as_slice()) {
                self.op("remove", None, &with(ptr, t.clone()), None);
            }
        }
        // 2. Elements both have, changed in place.
        for ((o, k), t) in oi.iter().zip(&old_keys).zip(&tokens) {
            if let Some(&j) = new_pos.get(k.as_slice()) {
                ptr.push(t.clone());
                self.value(o, &ni[j], ptr, &FieldMeta::default(), at);
                ptr.pop();
            }
        }
        // 3. Order: the longest run already in NEW's order stays, the others go to the end,
        //    then each element is put at its place in NEW's order.
        let kept: Vec<(usize, usize)> = old_keys
            .iter()
            .enumerate()
            .filter_map(|(i, k)| new_pos.get(k.as_slice()).map(|&j| (i, j)))
            .collect();
        let stays: HashSet<usize> =
            longest_increasing(&kept.iter().map(|&(_, j)| j).collect::<Vec<_>>())
                .into_iter()
                .filter_map(|x| kept.get(x).map(|&(_, j)| j))
                .collect();
        let mut moved: HashMap<usize, &String> = HashMap::default();
        for &(i, j) in &kept {
            if !stays.contains(&j) {
                if let Some(t) = tokens.get(i) {
                    self.op(
                        "move",
                        Some(&with(ptr, t.clone())),
                        &with(ptr, "-".to_owned()),
                        None,
                    );
                    moved.insert(j, t);
                }
            }
        }
        for (j, (n, k)) in ni.iter().zip(&new_keys).enumerate() {
            let at_j = with(ptr, j.to_string());
            if !old_pos.contains_key(k.as_slice()) {
                self.op("add", None, &at_j, Some(n));
            } else if let Some(t) = moved.get(&j) {
                self.op("move", Some(&with(ptr, (*t).clone())), &at_j, None);
            }
        }
        true
    }
}

fn keys_are_text(map: &Node<'_>) -> bool {
    map.entries().iter().all(|e| e.key.as_str().is_some())
}

fn scalar_text<'x>(item: &'x Node<'_>, field: &str) -> Option<&'x str> {
    item.get(field)
        .filter(|v| v.is_scalar() && !v.is_null())
        .and_then(Node::as_str)
}

/// Positions by key, or `None` when two elements share a key.
fn positions(keys: &[Vec<String>]) -> Option<HashMap<&[String], usize>> {
    let mut m: HashMap<&[String], usize> = HashMap::default();
    for (i, k) in keys.iter().enumerate() {
        if m.insert(k.as_slice(), i).is_some() {
            return None;
        }
    }
    Some(m)
}

/// Whether each selector matches exactly one element (by key) among all versions of the list's
/// elements, which is all the list can hold while the patch runs.
fn selectors_unique<'x>(
    sels: &[Vec<(String, String)>],
    elements: impl Iterator<Item = &'x Node<'x>> + Clone,
    keys: &[MapKey],
) -> bool {
    // The field sets in use, and for each the values every element shows for them.
    let sets: HashSet<Vec<&str>> = sels
        .iter()
        .map(|f| f.iter().map(|(k, _)| k.as_str()).collect())
        .collect();
    // (field names, their values) -> the keys of the elements showing them.
    type Shown<'f> = HashMap<(Vec<&'f str>, Vec<&'f str>), HashSet<Vec<String>>>;
    let mut seen: Shown<'_> = HashMap::default();
    for e in elements {
        let Some(key) = key_values(e, keys) else {
            return false;
        };
        for set in &sets {
            let values: Option<Vec<&str>> = set.iter().map(|f| scalar_text(e, f)).collect();
            if let Some(values) = values {
                seen.entry((set.clone(), values))
                    .or_default()
                    .insert(key.clone());
            }
        }
    }
    sels.iter().all(|f| {
        let set: Vec<&str> = f.iter().map(|(k, _)| k.as_str()).collect();
        let values: Vec<&str> = f.iter().map(|(_, v)| v.as_str()).collect();
        seen.get(&(set, values)).is_some_and(|ks| ks.len() == 1)
    })
}

/// Positions (into `seq`) of a longest strictly increasing subsequence, in O(n log n).
fn longest_increasing(seq: &[usize]) -> Vec<usize> {
    // tails[l]: the position of the smallest last value of an increasing run of length l + 1.
    let mut tails: Vec<usize> = Vec::new();
    let mut prev: Vec<Option<usize>> = vec![None; seq.len()];
    for (i, &v) in seq.iter().enumerate() {
        let l = tails.partition_point(|&t| seq.get(t).is_some_and(|&tv| tv < v));
        prev[i] = l.checked_sub(1).and_then(|p| tails.get(p).copied());
        if l == tails.len() {
            tails.push(i);
        } else {
            tails[l] = i;
        }
    }
    let mut out = Vec::with_capacity(tails.len());
    let mut at = tails.last().copied();
    while let Some(i) = at {
        out.push(i);
        at = prev.get(i).copied().flatten();
    }
    out.reverse();
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::patch::json6902;
    use crate::yaml::{emit_node, to_json};

    use crate::diff::test_node as n;

    /// The operations as `op path [from]` lines, after checking they turn `old` into `new`.
    fn run(old: &str, new: &str, root: (&str, &str, &str), infer: bool) -> String {
        let (old, new) = (n(old), n(new));
        let schema = Schema::builtin();
        let opts = Options {
            infer_keys: infer,
            identity: true,
            kustomize: false,
        };
        let d = diff(
            &old,
            &new,
            &schema,
            schema.root(root.0, root.1, root.2),
            &opts,
        )
        .unwrap();
        let ops = json6902::parse_ops(&d.patch).unwrap();
        let mut applied = old.clone();
        json6902::patch(&mut applied, &ops)
            .unwrap_or_else(|e| panic!("{e}\n{}", emit_node(&d.patch, Default::default())));
        assert_eq!(
            to_json(&applied).unwrap(),
            to_json(&new).unwrap(),
            "{}",
            emit_node(&d.patch, Default::default())
        );
        d.patch
            .items()
            .iter()
            .map(|o| {
                let f = |k: &str| o.get(k).and_then(Node::as_str).unwrap_or("").to_owned();
                format!("{} {} {}", f("op"), f("path"), f("from"))
                    .trim_end()
                    .to_owned()
            })
            .collect::<Vec<_>>()
            .join("\n")
    }

    const POD: (&str, &str, &str) = ("", "v1", "Pod");

    #[test]
    fn keyed_pointers_for_keyed_lists() {
        let head = "spec:\n  containers:\n";
        let ops = run(
            &format!("{head}  - name: a\n    image: a:1\n  - name: b\n  - name: c\n"),
            &format!("{head}  - name: c\n  - name: a\n    image: a:2\n  - name: d\n"),
            POD,
            false,
        );
        assert_eq!(
            ops,
            "remove /spec/containers/[name=b]\nreplace /spec/containers/[name=a]/image\nmove /spec/containers/- /spec/containers/[name=a]\nmove /spec/containers/1 /spec/containers/[name=a]\nadd /spec/containers/2"
        );
    }

    #[test]
    fn ports_select_by_the_key_fields_they_have() {
        let head = "spec:\n  containers:\n  - name: a\n    ports:\n";
        let ops = run(
            &format!("{head}    - containerPort: 80\n    - containerPort: 80\n      protocol: UDP\n"),
            &format!("{head}    - containerPort: 80\n      name: http\n    - containerPort: 80\n      protocol: UDP\n"),
            POD,
            false,
        );
        // `[containerPort=80]` would pick both: that list is edited by index.
        assert_eq!(ops, "add /spec/containers/[name=a]/ports/0/name");
    }

    #[test]
    fn other_lists_by_index_and_escaped_names() {
        let ops = run(
            "metadata:\n  annotations:\n    a/b~c: x\nargs: [a, b, c]\n",
            "metadata:\n  annotations:\n    a/b~c: y\nargs: [a, d]\n",
            ("example.com", "v1", "Thing"),
            false,
        );
        assert_eq!(
            ops,
            "replace /metadata/annotations/a~1b~0c\nreplace /args/1\nremove /args/2"
        );
        // Selector values are escaped.
        let ops = run(
            "kind: T\nitems:\n- {name: 'a,b]'}\n- {name: c}\n",
            "kind: T\nitems:\n- {name: c}\n",
            ("", "v1", "T"),
            true,
        );
        assert_eq!(ops, "remove /items/[name=a\\,b\\]]");
    }

    #[test]
    fn nulls_and_kind_changes() {
        let ops = run(
            "a: {b: 1}\nc: [1]\n",
            "a: null\nc: {d: null}\n",
            ("", "v1", "T"),
            false,
        );
        assert_eq!(ops, "replace /a\nreplace /c");
    }

    #[test]
    fn longest_increasing_run() {
        assert_eq!(longest_increasing(&[2, 0, 1, 3]), [1, 2, 3]);
        assert_eq!(longest_increasing(&[]), Vec::<usize>::new());
        assert_eq!(longest_increasing(&[3, 2, 1]).len(), 1);
    }
}
