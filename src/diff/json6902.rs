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
//! Mapping keys are paired as data (`key_text`): a field both versions have is addressed as
//! OLD spells it; a field only NEW has is added under the text of its key as data (a JSON
//! pointer makes a string key: `0x1` is added as `1`, the same key to Kubernetes). Fields that
//! go are removed before any is added.
//!
//! What the operations cost the engine is counted from above (`Cost`: the list elements key
//! selectors examine, the elements inserts and removes shift), and a collection is edited in
//! place only while its own operations cost at most `allowance` (eight times `n log n` for
//! `n` elements) and the whole patch stays within the engine's budgets: a keyed list reordered
//! through and through (20,000 containers, the odd ones first, would take 10,000 moves, each
//! reading the list) is edited by index instead, or replaced whole when that takes fewer
//! operations; a mapping whose removes would shift too much is replaced whole. So making the
//! patch and applying it stay O(n log n).
//!
//! With [`Options::kustomize`] no selector is written: kustomize's JSON patch library
//! (evanphx/json-patch) knows only indices, so every list is edited by index.
//!
//! JSON patches can say everything YAML data holds (nulls included): applying the patch to OLD
//! gives NEW exactly, as data. Values copied from NEW keep their comments and styles.
//!
//! What it must not do: apply the patch, or look at anything but the two nodes, the schema and
//! the options.

use crate::budget::{SCAN_BUDGET, SHIFT_BUDGET};
use crate::hash::{HashMap, HashSet};
use crate::merge::align::{self, key_values, ListKind};
use crate::patch::json6902::{Selector, Token};
use crate::schema::{Cursor, FieldMeta, MapKey, Schema};
use crate::yaml::{Entry, Kind, Node};

use super::nodes::{expanded, key_text, plain_copy, same, KeyIndex};
use super::{checked, verify, written, Diff, DiffError, Options};

/// The JSON patch (a list of operations) that turns `old` into `new`, resources of the kind at
/// `root` in `schema` (whose merge keys decide the keyed pointers).
pub fn diff<'n>(
    old: &Node<'_>,
    new: &Node<'n>,
    schema: &Schema,
    root: Cursor,
    opts: &Options,
) -> Result<Diff<'n>, DiffError> {
    let d = make(old, new, schema, root, opts)?;
    checked(old, new, d, verify::Engine::json6902(opts), schema, root)
}

/// [`diff`]'s operations, not yet checked (the package diff checks them as it writes them).
pub(super) fn make<'n>(
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
        cost: Cost::default(),
        here: 0,
    };
    g.value(&old, &new, &mut Vec::new(), &FieldMeta::default(), root);
    let changed = !g.ops.is_empty();
    Ok(Diff {
        patch: written(Node::seq_of(g.ops)),
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
    /// What the operations so far cost the engine, from above.
    cost: Cost,
    /// The list elements the key selectors of the current pointer examine (the lengths of the
    /// lists they choose in): what every operation below it pays again.
    here: usize,
}

/// What applying operations costs `json6902::apply`, in the units of its budgets: list elements
/// key selectors examine ([`SCAN_BUDGET`]), elements inserts and removes shift
/// ([`SHIFT_BUDGET`]). Counted from above (a list's length for a selector or a shift).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Cost {
    scans: usize,
    shifts: usize,
}

/// The most a collection of `n` elements may cost to edit in place (its operations, and those
/// below it): a small multiple of `n log n`, so that editing any resource stays O(n log n).
/// Past it the collection is replaced whole, or its elements edited by index.
fn allowance(n: usize) -> usize {
    let n = n.saturating_add(1);
    let log = usize::BITS - n.leading_zeros();
    n.saturating_mul(8).saturating_mul(log as usize + 1)
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
    /// An operation; its pointers pay for the selectors above them ([`Gen::here`]).
    fn op(
        &mut self,
        verb: &str,
        from: Option<&[String]>,
        path: &[String],
        value: Option<&Node<'n>>,
    ) {
        let pointers = if from.is_some() { 2 } else { 1 };
        self.charge(self.here.saturating_mul(pointers), 0);
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

    /// Counts what an operation costs; gives the sum.
    fn charge(&mut self, scans: usize, shifts: usize) -> usize {
        self.cost.scans = self.cost.scans.saturating_add(scans);
        self.cost.shifts = self.cost.shifts.saturating_add(shifts);
        scans.saturating_add(shifts)
    }

    /// Whether a collection of `n` elements whose own operations cost `own` may be edited in
    /// place: within [`allowance`], and the whole patch within the engine's budgets.
    fn affordable(&self, own: usize, n: usize) -> bool {
        own <= allowance(n) && self.cost.scans <= SCAN_BUDGET && self.cost.shifts <= SHIFT_BUDGET
    }

    /// Takes back the operations from `mark` on, and what they cost.
    fn undo(&mut self, mark: usize, before: Cost) {
        self.ops.truncate(mark);
        self.cost = before;
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

    /// Fields OLD has and NEW does not are removed first (a field NEW adds may have the text of
    /// one that goes: `"0x1"` after `0x1`), then NEW's fields added or changed. A field both
    /// have is named as OLD spells it (the engine finds a member by its text); a field only
    /// NEW has by its key as data ([`key_text`]: JSON pointers make string keys, so `0x1` is
    /// added as `1`, which Kubernetes reads as the same key). Replaced whole when its removes
    /// would shift more than [`allowance`] lets.
    fn map(&mut self, old: &Node<'_>, new: &Node<'n>, ptr: &mut Ptr, at: Cursor) {
        let (mark, before) = (self.ops.len(), self.cost);
        let new_index = KeyIndex::new(new);
        let last = old.entries().len().saturating_sub(1);
        let mut own = 0usize;
        for (p, oe) in old.entries().iter().enumerate() {
            if new_index.get(&oe.key).is_none() {
                let p_text = with(ptr, name(oe.key.as_str().unwrap_or_default()));
                // Removed front to back: the members after it move up.
                own = own.saturating_add(self.charge(0, last - p));
                self.op("remove", None, &p_text, None);
            }
        }
        let index = KeyIndex::new(old);
        for ne in new.entries() {
            match index.get(&ne.key) {
                None => {
                    let key = key_text(&ne.key).unwrap_or_default();
                    ptr.push(name(&key));
                    self.op("add", None, ptr, Some(&ne.value));
                }
                Some(oe) => {
                    let key = oe.key.as_str().unwrap_or_default();
                    ptr.push(name(key));
                    let (meta, child) = align::field(self.schema, at, key, &[&oe.key, &ne.key]);
                    self.value(&oe.value, &ne.value, ptr, &meta, child);
                }
            }
            ptr.pop();
        }
        // (The document itself is never replaced.)
        let n = old.entries().len().max(new.entries().len());
        if !ptr.is_empty() && !self.affordable(own, n) {
            self.undo(mark, before);
            self.op("replace", None, ptr, Some(new));
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
        let (mark, before) = (self.ops.len(), self.cost);
        let n = old.items().len().max(new.items().len());
        let own = keyed.and_then(|keys| self.keyed(old, new, ptr, &keys, at));
        let done = match own {
            Some(own) if self.affordable(own, n) => true,
            Some(_) => {
                // Too many moves, each reading the list and shifting it: by index instead.
                self.undo(mark, before);
                false
            }
            None => false,
        };
        if !done {
            self.positional(old, new, ptr, at, new.items().len() + 1);
            // Replacing the list says it in one operation, and costs least.
            if self.ops.len() - mark > new.items().len() + 1 || !self.affordable(0, n) {
                self.undo(mark, before);
                self.op("replace", None, ptr, Some(new));
            }
        }
    }

    /// Element by element, then `add` or `remove` at the end; it stops once it has made more
    /// than `most` operations (the caller then replaces the list).
    fn positional(
        &mut self,
        old: &Node<'_>,
        new: &Node<'n>,
        ptr: &mut Ptr,
        at: Cursor,
        most: usize,
    ) {
        let (oi, ni) = (old.items(), new.items());
        let (common, mark) = (oi.len().min(ni.len()), self.ops.len());
        for (i, (o, n)) in oi.iter().zip(ni).enumerate() {
            ptr.push(i.to_string());
            self.value(o, n, ptr, &FieldMeta::default(), at);
            ptr.pop();
            if self.ops.len() - mark > most {
                return;
            }
        }
        for (i, n) in ni.iter().enumerate().skip(common) {
            self.op("add", None, &with(ptr, i.to_string()), Some(n));
        }
        for i in (common..oi.len()).rev() {
            self.op("remove", None, &with(ptr, i.to_string()), None);
        }
    }

    /// Keyed pointers; what this list's own operations and selectors cost (the selector's
    /// scan again for every operation below it), or `None` (and no operation) when some
    /// element cannot be selected.
    fn keyed(
        &mut self,
        old: &Node<'_>,
        new: &Node<'n>,
        ptr: &mut Ptr,
        keys: &[MapKey],
        at: Cursor,
    ) -> Option<usize> {
        let (oi, ni) = (old.items(), new.items());
        let old_keys = oi
            .iter()
            .map(|i| key_values(i, keys))
            .collect::<Option<Vec<_>>>()?;
        let new_keys = ni
            .iter()
            .map(|i| key_values(i, keys))
            .collect::<Option<Vec<_>>>()?;
        let (Some(old_pos), Some(new_pos)) = (positions(&old_keys), positions(&new_keys)) else {
            return None;
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
                return None;
            }
            sels.push(fields);
        }
        if !selectors_unique(&sels, oi.iter().chain(ni), keys) {
            return None;
        }
        let tokens = sels
            .iter()
            .map(|f| selector(f))
            .collect::<Option<Vec<String>>>()?;
        // The order: the elements both have, by their places in OLD and NEW; of them, the
        // longest run already in NEW's order stays where it is (step 3).
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
        // What a selector here examines, and what an insert or a remove shifts, at most.
        let n = oi.len().max(ni.len());
        // What the removes, moves and adds alone cost: past the allowance, nothing is made.
        let moves = kept.len() - stays.len();
        let (removes, adds) = (oi.len() - kept.len(), ni.len() - kept.len());
        let direct = n.saturating_mul(2 * removes + 5 * moves + adds);
        if direct > allowance(n) {
            return Some(direct);
        }
        let mut own = 0usize;
        // 1. Elements NEW dropped.
        for (k, t) in old_keys.iter().zip(&tokens) {
            if !new_pos.contains_key(k.as_slice()) {
                own = own.saturating_add(self.charge(n, n));
                self.op("remove", None, &with(ptr, t.clone()), None);
            }
        }
        // 2. Elements both have, changed in place.
        for ((o, k), t) in oi.iter().zip(&old_keys).zip(&tokens) {
            if let Some(&j) = new_pos.get(k.as_slice()) {
                ptr.push(t.clone());
                self.here = self.here.saturating_add(n);
                let below = self.ops.len();
                self.value(o, &ni[j], ptr, &FieldMeta::default(), at);
                // Each operation below reads this list again, once or twice (`from`).
                own = own.saturating_add(n.saturating_mul(2 * (self.ops.len() - below)));
                self.here = self.here.saturating_sub(n);
                ptr.pop();
            }
        }
        // 3. Order: the longest run already in NEW's order stays, the others go to the end,
        //    then each element is put at its place in NEW's order.
        let mut moved: HashMap<usize, &String> = HashMap::default();
        for &(i, j) in &kept {
            if !stays.contains(&j) {
                if let Some(t) = tokens.get(i) {
                    own = own.saturating_add(self.charge(n, n));
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
        let n_max = n;
        for (j, (n, k)) in ni.iter().zip(&new_keys).enumerate() {
            let at_j = with(ptr, j.to_string());
            if !old_pos.contains_key(k.as_slice()) {
                own = own.saturating_add(self.charge(0, n_max));
                self.op("add", None, &at_j, Some(n));
            } else if let Some(t) = moved.get(&j) {
                own = own.saturating_add(self.charge(n_max, 2 * n_max));
                self.op("move", Some(&with(ptr, (*t).clone())), &at_j, None);
            }
        }
        Some(own)
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
