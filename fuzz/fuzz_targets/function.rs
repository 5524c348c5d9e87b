//! The whole function, in memory: `krm_merge::run::run_krm` (KRM mode) on a ResourceList.
//!
//! The first byte chooses the input: even, the rest is stdin as it is (any text, any shape);
//! odd, the rest is a functionConfig, indented under `functionConfig:` of a ResourceList with a
//! few fixed items (with kpt's bookkeeping annotations, and an anchor one item shares with
//! another). Its other bits choose how the input is cut into pieces (`KRM_MERGE_PIECES`): as
//! one piece, or in pieces of 1 to 64 bytes (each at least one item or document). (Bytes that
//! are not UTF-8 never reach the library: the command line reports them.)
//!
//! Whatever comes in, no panic, and the promises of doc/GUIDE.md "Input and output" hold on the result:
//! * the output is a ResourceList that reads back as YAML (no alias without its anchor);
//! * the input in pieces gives exactly what it gives as one piece: the same text, the same
//!   results; and the same as a stream (`run_stream_with`), with the items of a stream;
//! * reading the input whole (`run_input_with` over `Input::read`) gives the same items as
//!   `run_krm` (item by item where it can): every way of reading agrees;
//! * the output re-reads to the intended data: the same input with its aliases expanded (every
//!   item then stands alone) gives the same items, as data, when both runs succeed;
//! * every item that came in with a `internal.config.kubernetes.io/path` goes out with exactly
//!   the bookkeeping annotations it came with, still a mapping, with a kind and a name when it
//!   had them; no item goes out with a path that leaves the package (`..`, `/`) unless an input
//!   item came with that very path;
//! * on an error result, the input's items come back as they came.
#![no_main]

use krm_merge::config;
use krm_merge::krm::Input;
use krm_merge::run::{
    run_input_with, run_krm, run_resource_list, run_stream_with, Options, Pieces,
};
use krm_merge::select::bookkeeping;
use krm_merge::select::identity::Id;
use krm_merge::yaml::{self, anchors, Document, Node};
use libfuzzer_sys::fuzz_target;

const ITEMS: &str = "\
apiVersion: config.kubernetes.io/v1
kind: ResourceList
items:
- apiVersion: apps/v1
  kind: Deployment
  metadata:
    name: web # the front end
    labels: &labels {app: web}
    annotations:
      config.kubernetes.io/path: web.yaml
      internal.config.kubernetes.io/path: web.yaml
      internal.config.kubernetes.io/index: '0'
  spec:
    replicas: 1
    template:
      metadata:
        labels: *labels
      spec:
        containers:
        - name: app
          image: nginx
          ports:
          - containerPort: 80
- apiVersion: v1
  kind: ConfigMap
  metadata:
    name: cfg
    namespace: prod
    labels: *labels
    annotations:
      internal.config.kubernetes.io/path: cfg.yaml
  data:
    key: 'value'
- apiVersion: example.com/v1
  kind: Foo
  metadata:
    name: foo
    annotations:
      internal.config.kubernetes.io/path: foo.yaml
      config.k8s.io/id: '3'
  spec:
    items: [{name: a, v: 1}, {name: b}]
functionConfig:
";

/// Nodes a check may expand aliases into: enough for any input the fuzzer writes that is not
/// an alias bomb, which is skipped.
const EXPAND: usize = 200_000;

/// The items of a ResourceList's text as data, its aliases read at the document's level (an
/// item may alias an earlier item's anchor). `None` when they do not expand within [`EXPAND`].
fn items(text: &str) -> Option<Vec<Node<'static>>> {
    let docs = yaml::parse_stream(text).unwrap_or_else(|e| panic!("does not parse: {e}\n{text}"));
    let mut root = docs.into_iter().find_map(|d| d.root)?.into_owned();
    root.expand_aliases(EXPAND).ok()?;
    Some(root.get("items").map(|i| i.items().to_vec()).unwrap_or_default())
}

fn same(a: &[Node<'_>], b: &[Node<'_>]) -> bool {
    a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x.same_data(y))
}

/// The input with every alias expanded and every anchor dropped, written back: each item then
/// stands alone. `None` when that does not apply (no aliases, no ResourceList, too large, or the
/// text does not read back as the same data).
fn expanded(src: &str) -> Option<String> {
    let docs = yaml::parse_stream(src).ok()?;
    let [doc] = &docs.iter().filter(|d| d.root.is_some()).collect::<Vec<_>>()[..] else {
        return None;
    };
    let root = doc.root.as_ref()?;
    if !root.has_alias() || root.str_at(&["kind"]) != Some("ResourceList") {
        return None;
    }
    let mut root = root.clone();
    root.expand_aliases(EXPAND).ok()?;
    anchors::strip_anchors(&mut root);
    root.make_block();
    let mut text = String::new();
    yaml::emit_document(&Document::new(root.clone()), &mut text);
    let back = yaml::parse_stream(&text).ok()?.into_iter().find_map(|d| d.root)?;
    back.same_data(&root).then_some(text)
}

/// Whether the items of a ResourceList's text read back as the same data written as a document
/// (the whole-input path's writer) and one by one as sequence items (the item-by-item path's).
fn writers_agree(text: &str) -> bool {
    fn read(t: &str) -> Option<Vec<Node<'static>>> {
        let root = yaml::parse_stream(t).ok()?.into_iter().find_map(|d| d.root)?;
        let list = root.get("items").unwrap_or(&root);
        Some(list.items().iter().map(|n| n.clone().into_owned()).collect())
    }
    let Some(nodes) = read(text) else {
        return false;
    };
    let mut whole = String::new();
    yaml::emit_document(&Document::new(Node::seq_of(nodes.clone())), &mut whole);
    let mut each = String::new();
    for n in &nodes {
        yaml::emit_seq_item(n, 0, yaml::EmitOptions::default(), &mut each);
    }
    match (read(&whole), read(&each)) {
        (Some(x), Some(y)) => same(&x, &nodes) && same(&y, &nodes),
        _ => nodes.is_empty(),
    }
}

/// The bookkeeping annotations of an item, as data.
fn kept(node: &Node<'_>) -> Vec<(String, Node<'static>)> {
    bookkeeping::bookkeeping(node)
        .into_iter()
        .filter_map(|e| Some((e.key.as_str()?.to_owned(), e.value.into_owned())))
        .collect()
}

fn path_of<'n>(node: &'n Node<'_>) -> Option<&'n str> {
    node.str_at(&["metadata", "annotations", bookkeeping::PATH])
}

fn named(node: &Node<'_>, path: &[&str]) -> bool {
    node.get_path(path)
        .is_some_and(|n| n.is_scalar() && !n.is_null() && n.as_str().is_some_and(|s| !s.is_empty()))
}

fuzz_target!(|data: &[u8]| {
    let Some((&mode, rest)) = data.split_first() else {
        return;
    };
    let input: Vec<u8> = if mode % 2 == 0 {
        rest.to_vec()
    } else {
        let mut v = ITEMS.as_bytes().to_vec();
        for line in rest.split(|b| *b == b'\n') {
            v.extend_from_slice(b"  ");
            v.extend_from_slice(line);
            v.push(b'\n');
        }
        v
    };
    let Ok(src) = std::str::from_utf8(&input) else {
        return;
    };
    let pieces = match mode >> 1 {
        0 => Pieces::Whole,
        n => Pieces::Size(usize::from(n % 64) + 1),
    };
    let whole = run_krm(src, &Options::default());
    let output = run_krm(
        src,
        &Options {
            pieces,
            ..Options::default()
        },
    );
    // As one piece or in pieces: the same, byte for byte, results included.
    assert_eq!(output.text, whole.text, "{pieces:?}\n{src}");
    assert_eq!(output.results, whole.results, "{pieces:?}\n{src}");
    let failed = output.failed();
    let out = output.text;
    let docs =
        yaml::parse_stream(&out).unwrap_or_else(|e| panic!("stdout does not parse: {e}\n{out}"));
    let root = docs
        .iter()
        .find_map(|d| d.root.as_ref())
        .unwrap_or_else(|| panic!("stdout has no document\n{out}"));
    assert_eq!(root.str_at(&["kind"]), Some("ResourceList"), "{out}");
    let Ok(before) = Input::read(src) else {
        return;
    };
    if !before.is_resource_list() {
        return;
    }
    if failed {
        let after: Vec<Node<'_>> = root
            .get("items")
            .map(|i| i.items().to_vec())
            .unwrap_or_default();
        // On error, the items as they came in.
        assert_eq!(
            before.items.len(),
            after.len(),
            "items lost on error\n{out}"
        );
        for (b, a) in before.items.iter().zip(&after) {
            assert!(b.node.same_data(a), "an item changed on error\n{out}");
        }
        return;
    }

    // Every way of reading gives the same items: the whole-input path.
    if let Some(fc) = before.function_config() {
        let base = bookkeeping::file_of(fc).and_then(|(p, _)| {
            let dir = std::path::Path::new(p).parent()?;
            Some(if dir.as_os_str().is_empty() {
                std::path::PathBuf::from(".")
            } else {
                dir.to_path_buf()
            })
        });
        if let Ok(plan) = config::plan(fc, base.as_deref()) {
            let id = Id::of(fc).into_owned();
            // The plan known first (standalone mode), as one piece and in pieces: the same.
            let one = run_stream_with(src, &plan, Some(&id), Pieces::Whole);
            let cut = run_stream_with(src, &plan, Some(&id), pieces);
            assert_eq!(one.text, cut.text, "{pieces:?}\n{src}");
            assert_eq!(one.results, cut.results, "{pieces:?}\n{src}");
            let Ok(again) = Input::read(src) else {
                return;
            };
            let whole = run_input_with(src, again, &plan, Some(&id));
            assert!(!whole.failed(), "read whole, the run fails\n{}", whole.text);
            // (Unless the two writers, a document's and an item's, disagree on the items:
            // that is the YAML layer's business.)
            if let (Some(x), Some(y), true) =
                (items(&out), items(&whole.text), writers_agree(&whole.text))
            {
                assert!(same(&x, &y), "read whole, other items\n{out}\n{}", whole.text);
            }
        }
    }

    // The intended data: the same with every alias expanded gives the same items.
    if let Some(text) = expanded(src) {
        let plain = run_resource_list(&text);
        if !plain.failed() {
            if let (Some(x), Some(y)) = (items(&out), items(&plain.text)) {
                assert!(
                    same(&x, &y),
                    "aliases change what the patches do\ninput:\n{src}\noutput:\n{out}\nexpanded:\n{}",
                    plain.text
                );
            }
        }
    }

    // Bookkeeping and identity, read through the output's aliases.
    let Some(out_items) = items(&out) else {
        return;
    };
    let Some(in_items) = items(src) else {
        return;
    };
    for b in &in_items {
        let Some(p) = path_of(b) else { continue };
        if in_items.iter().filter(|o| path_of(o) == Some(p)).count() > 1 {
            continue;
        }
        let object = named(b, &["kind"]) && named(b, &["metadata", "name"]);
        for a in out_items.iter().filter(|a| path_of(a) == Some(p)) {
            assert!(a.is_map(), "{p}: not a mapping\n{out}");
            let (ka, kb) = (kept(a), kept(b));
            assert!(
                ka.len() == kb.len()
                    && ka.iter().zip(&kb).all(|((k1, v1), (k2, v2))| k1 == k2 && v1.same_data(v2)),
                "{p}: bookkeeping annotations changed\n{out}"
            );
            if object {
                assert!(
                    named(a, &["kind"]) && named(a, &["metadata", "name"]),
                    "{p}: lost its kind or name\n{out}"
                );
                if named(b, &["apiVersion"]) {
                    assert!(named(a, &["apiVersion"]), "{p}: lost its apiVersion\n{out}");
                }
            }
        }
    }
    for a in &out_items {
        if let Some(p) = path_of(a) {
            if !in_items.iter().any(|b| path_of(b) == Some(p)) {
                assert!(
                    !p.contains('/') && !p.contains(".."),
                    "a new item's file leaves the package: {p}\n{out}"
                );
            }
        }
    }
});
