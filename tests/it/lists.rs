//! A stream of one list kind (`kind: List`, as `kubectl get -o yaml` prints what it gets) is read
//! by its items, in pieces on every core, as a ResourceList's are; a list among other documents
//! is read as a document. The two readings must give one output: stdout, stderr, the exit code
//! and the `--results` file, byte for byte.
//!
//! Each case is a random list (kubectl's key order or another, compact or indented dashes,
//! ConfigMaps, Deployments, Services and lists inside it, comments between items, the list kpt's
//! path annotation or local-config) through a random set of patches (merges that write new
//! sequences, deletions of some or every item, a JSON patch that fails the run), run as the only
//! document and then with an untouched document after it, which makes the stream one the
//! function reads by documents: the outputs must differ by that document alone. Each run is
//! itself made as one piece and as many (`pieces.rs`). A list that is a ResourceList's only item
//! (how kpt passes a file of one list) is read by its own items too, when the ResourceList is
//! read in pieces: there one piece and many are the two readings.

use proptest::prelude::*;

use crate::pieces;
use crate::support::*;

/// An item of the list.
#[derive(Clone, Debug)]
enum Member {
    ConfigMap(usize),
    Deployment(usize),
    Service(usize),
    /// A list of ConfigMaps inside the list.
    Inner(Vec<usize>),
}

/// How the list is written.
#[derive(Clone, Debug)]
struct List {
    members: Vec<Member>,
    /// kubectl's order (`apiVersion`, `items`, `kind`, `metadata`), or `kind` first.
    kubectl_order: bool,
    /// Items indented under `items:` (`  - `) rather than at its column.
    wide: bool,
    /// A comment line after this many items.
    comment_after: Option<usize>,
    /// kpt's path annotation on the list, and whether it is local-config.
    path: bool,
    local: bool,
}

fn member() -> impl Strategy<Value = Member> {
    prop_oneof![
        3 => (0usize..6).prop_map(Member::ConfigMap),
        3 => (0usize..6).prop_map(Member::Deployment),
        2 => (0usize..6).prop_map(Member::Service),
        1 => prop::collection::vec(0usize..6, 0..3).prop_map(Member::Inner),
    ]
}

fn list() -> impl Strategy<Value = List> {
    (
        prop::collection::vec(member(), 1..14),
        any::<bool>(),
        any::<bool>(),
        prop::option::of(0usize..14),
        any::<bool>(),
        prop::bool::weighted(0.25),
    )
        .prop_map(
            |(members, kubectl_order, wide, comment_after, path, local)| List {
                members,
                kubectl_order,
                wide,
                comment_after,
                path,
                local,
            },
        )
}

/// `text` (a resource at column 0) as an item at `dash` columns, its lines under its `- `.
fn item(text: &str, dash: usize, out: &mut String) {
    for (k, line) in text.lines().enumerate() {
        let lead = if k == 0 { "- " } else { "  " };
        out.push_str(&format!("{}{lead}{line}\n", " ".repeat(dash)));
    }
}

fn config_map(i: usize) -> String {
    format!(
        "apiVersion: v1\ndata:\n  a: \"{i}\"\n  text: |\n    line one\n    line two\nkind: ConfigMap\nmetadata:\n  name: cm-{i}\n  namespace: ns\n"
    )
}

fn member_text(m: &Member) -> String {
    match m {
        Member::ConfigMap(i) => config_map(*i),
        Member::Deployment(i) => format!(
            "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  labels:\n    app: d{i}\n  name: d-{i}\n  namespace: ns\nspec:\n  template:\n    spec:\n      containers:\n      - image: app:{i}\n        name: app\n        ports:\n        - containerPort: 80\n      - image: log:{i}\n        name: log\n"
        ),
        Member::Service(i) => format!(
            "apiVersion: v1\nkind: Service\nmetadata:\n  name: s-{i}\n  namespace: ns\nspec:\n  ports: [{{port: 80, name: http}}]\n  selector:\n    app: d{i}\n"
        ),
        Member::Inner(cms) => {
            let mut s = String::from("apiVersion: v1\nitems:\n");
            for &i in cms {
                item(&config_map(i), 0, &mut s);
            }
            if cms.is_empty() {
                s = String::from("apiVersion: v1\nitems: []\n");
            }
            s.push_str("kind: ConfigMapList\n");
            s
        }
    }
}

fn list_text(l: &List) -> String {
    let dash = if l.wide { 2 } else { 0 };
    let mut items = String::from("items:\n");
    for (k, m) in l.members.iter().enumerate() {
        if l.comment_after == Some(k) {
            items.push_str(&format!("{}# after {k} items\n", " ".repeat(dash)));
        }
        item(&member_text(m), dash, &mut items);
    }
    let mut metadata = String::from("metadata:\n");
    if l.path || l.local {
        metadata.push_str("  annotations:\n");
        if l.local {
            metadata.push_str("    config.kubernetes.io/local-config: \"true\"\n");
        }
        if l.path {
            metadata.push_str("    config.kubernetes.io/path: all.yaml\n");
        }
    }
    metadata.push_str("  resourceVersion: \"\"\n");
    if l.kubectl_order {
        format!("apiVersion: v1\n{items}kind: List\n{metadata}")
    } else {
        format!("kind: List\napiVersion: v1\n{metadata}{items}")
    }
}

/// The patches a case may draw.
const PATCHES: &[&str] = &[
    // New sequences: written in the document's style.
    "  - target: {kind: Deployment}\n    patch: |\n      spec:\n        template:\n          spec:\n            containers:\n            - name: app\n              image: app:new\n              args: [--a, --b]\n            - name: side\n              image: side:1\n              env:\n              - {name: A, value: b}\n",
    "  - target: {kind: ConfigMap, name: cm-[0-2]}\n    patch: '$patch: delete'\n",
    "  - target: {kind: ConfigMap}\n    patch: '$patch: delete'\n",
    "  - target: {kind: Service}\n    type: json6902\n    patch: '[{op: add, path: /metadata/labels, value: {x: y}}, {op: add, path: /spec/ports/-, value: {port: 443, name: tls}}]'\n",
    "  - target: {kind: Service, name: s-5}\n    type: json6902\n    patch: '[{op: remove, path: /spec/missing}]'\n",
    "  - target: {kind: ConfigMap, name: cm-4}\n    patch: |\n      metadata:\n        finalizers:\n        - a\n        - b\n",
    "  - target: {kind: Deployment, name: d-3}\n    patch: |\n      metadata:\n        name: d-renamed\n",
    // No kind named: not the items of a local-config list.
    "  - target: {namespace: ns}\n    patch: '{metadata: {annotations: {seen: \"yes\"}}}'\n",
];

fn config(picked: &[bool]) -> String {
    let mut s = String::from(
        "apiVersion: fn.krm-merge.dev/v1alpha1\nkind: Merge\nmetadata:\n  name: lists\nspec:\n  patches:\n",
    );
    let mut any = false;
    for (p, _) in PATCHES.iter().zip(picked).filter(|(_, on)| **on) {
        s.push_str(p);
        any = true;
    }
    if !any {
        s.push_str(PATCHES[0]);
    }
    s
}

/// The document put after the list: untouched by every patch above.
const AFTER: &str = "---\napiVersion: v1\nkind: Namespace\nmetadata:\n  name: after\n";

proptest! {
    #![proptest_config(ProptestConfig { cases: 40, ..ProptestConfig::default() })]

    #[test]
    fn a_list_by_its_items_reads_as_the_list_as_a_document(
        l in list(),
        picked in prop::collection::vec(prop::bool::weighted(0.4), PATCHES.len()),
    ) {
        let dir = tmp_dir("lists", "case");
        std::fs::write(dir.join("fn.yaml"), config(&picked)).expect("config");
        let text = list_text(&l);
        std::fs::write(dir.join("list.yaml"), &text).expect("list");
        std::fs::write(dir.join("both.yaml"), format!("{text}{AFTER}")).expect("both");
        let args = |file| ["--config", "fn.yaml", file];
        let alone = out_of(&pieces::run_in(&args("list.yaml"), b"", Some(&dir)));
        let both = out_of(&pieces::run_in(&args("both.yaml"), b"", Some(&dir)));
        let stdin = out_of(&pieces::run_in(&["--config", "fn.yaml"], text.as_bytes(), Some(&dir)));
        prop_assert_eq!(alone.code, both.code, "{}\n{}", alone.stderr, both.stderr);
        // A target that selects nothing may be told of the document after the list.
        let said = |t: &str| -> String {
            t.replace("both.yaml", "list.yaml")
                .lines()
                .map(|l| format!("{}\n", l.split("; did you mean").next().unwrap_or(l)))
                .collect()
        };
        prop_assert_eq!(said(&alone.stderr), said(&both.stderr));
        let expected = match both.stdout.strip_suffix(AFTER) {
            Some(list) => list.to_owned(),
            // Every item deleted: the list went, the document after it stays.
            None => both.stdout.replacen(&AFTER[4..], "", 1),
        };
        prop_assert_eq!(&alone.stdout, &expected, "input:\n{}", text);
        prop_assert_eq!(stdin.code, alone.code);
        prop_assert_eq!(&stdin.stdout, &alone.stdout);
        let _ = std::fs::remove_dir_all(&dir);
    }
}

/// `list` as the only item of a ResourceList (how kpt passes a file of one list), its items'
/// dashes at `dash`, with `config` as its functionConfig.
fn resource_list(list: &str, dash: usize, config: &str) -> String {
    let mut s = String::from("apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n");
    item(list, dash, &mut s);
    s.push_str("functionConfig:\n");
    for line in config.lines() {
        s.push_str(&format!("  {line}\n"));
    }
    s
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 40, ..ProptestConfig::default() })]

    /// The list as a ResourceList's only item is read by its own items when the ResourceList is
    /// cut into pieces, and as an item (the engine's reading of a list kind) when it is read as
    /// one piece: `pieces::run_in` compares the two.
    #[test]
    fn a_list_that_is_a_resource_lists_only_item_reads_the_same_by_its_items(
        l in list(),
        picked in prop::collection::vec(prop::bool::weighted(0.4), PATCHES.len()),
        wide in any::<bool>(),
    ) {
        let rl = resource_list(&list_text(&l), if wide { 2 } else { 0 }, &config(&picked));
        let out = out_of(&pieces::run_in(&[], rl.as_bytes(), None));
        prop_assert!(out.code == 0 || out.code == 1, "{}", out.stderr);
        prop_assert!(out.stdout.contains("kind: ResourceList"), "{}", out.stdout);
    }
}

/// A list that comes as JSON or in flow style, or among other documents, is read whole or as a
/// document, not by its items: the same patch gives each what it gives a list read as a document.
#[test]
fn a_list_not_in_block_style_is_read_as_a_document() {
    let dir = tmp_dir("lists", "flow");
    std::fs::write(dir.join("fn.yaml"), config(&[true])).expect("config");
    let deployment = "{apiVersion: apps/v1, kind: Deployment, metadata: {name: d-1}, spec: {template: {spec: {containers: [{name: app, image: app:1}]}}}}";
    for text in [
        format!("apiVersion: v1\nkind: List\nitems: [{deployment}]\n"),
        format!("{{apiVersion: v1, kind: List, items: [{deployment}]}}\n"),
    ] {
        let out = krm_in(&["--config", "fn.yaml"], &text, Some(&dir));
        assert_eq!(out.code, 0, "{}", out.stderr);
        assert!(out.stdout.contains("image: app:new"), "{}", out.stdout);
        assert!(out.stdout.contains("kind: List"), "{}", out.stdout);
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// A ResourceList whose every item a patch deletes is written whole (`items: []`) whether it is
/// read by its items, in one piece or many, or whole; so is one whose only item is a list that
/// loses every item.
#[test]
fn a_resource_list_that_loses_every_item_says_items_empty() {
    let delete = "apiVersion: fn.krm-merge.dev/v1alpha1\nkind: Merge\nmetadata:\n  name: lists\nspec:\n  patches:\n  - target: {kind: ConfigMap}\n    patch: '$patch: delete'\n";
    let mut items = String::from("items:\n");
    for cm in [config_map(1), config_map(2)] {
        item(&cm, 0, &mut items);
    }
    let list = format!("apiVersion: v1\n{items}kind: List\n");
    let plain = format!(
        "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\n{items}functionConfig:\n{}",
        delete
            .lines()
            .map(|l| format!("  {l}\n"))
            .collect::<String>()
    );
    for rl in [plain, resource_list(&list, 0, delete)] {
        let out = out_of(&pieces::run_in(&[], rl.as_bytes(), None));
        assert_eq!(out.code, 0, "{}", out.stderr);
        assert!(
            out.stdout.contains("\nitems: []\n"),
            "{rl}\n---\n{}",
            out.stdout
        );
    }
}
