//! Property tests on generated resources (the trees of `gen.rs`: small random YAML trees
//! written as YAML text the way people write it), merged and patched — through the library's
//! walkers and, for a few properties, through the binary.
//!
//! The json6902-vs-json-patch differential is in `json6902_suite.rs`; the properties of patch
//! generation are in `diff_properties.rs`. Case counts keep the module well under a minute in a
//! debug build.

use krm_merge::merge::{apply, merge2, merge3, Context};
use krm_merge::patch::{json6902, jsonmerge};
use krm_merge::schema::{Cursor, Schema};
use krm_merge::select::identity::Id;
use krm_merge::yaml::{self, Node};
use proptest::prelude::*;
use proptest::test_runner::Config;

use crate::gen::{
    comment, emit, json, mutate_fields, parse, resource, spec, val, write_value, Field, Rng, Val,
};
use crate::support::krm;

// ----- helpers ------------------------------------------------------------------------------

/// A patch for `name`: identity, then `spec`.
fn patch_doc(name: &str, spec: &[Field]) -> String {
    resource(name, spec, &None)
}

fn root(schema: &Schema, node: &Node<'_>) -> Cursor {
    let id = Id::of(node);
    let (g, v) = id.group_version();
    schema.root(g, v, &id.kind)
}

fn do_merge2(dest: &Node<'static>, patch: &Node<'static>) -> Option<Node<'static>> {
    let schema = Schema::builtin();
    let mut d = dest.clone();
    let anchors = krm_merge::yaml::anchors::anchors_of(&d).ok()?;
    let opts = merge2::Options::default();
    merge2::merge(
        &mut d,
        patch,
        &Context::new(&schema, root(&schema, dest), &anchors).with(opts),
    )
    .ok()?;
    Some(d)
}

fn do_jsonmerge(dest: &Node<'static>, patch: &Node<'static>) -> Option<Node<'static>> {
    let mut d = dest.clone();
    jsonmerge::merge(&mut d, patch).ok()?;
    Some(d)
}

fn do_apply(dest: &Node<'static>, patch: &Node<'static>) -> Option<Node<'static>> {
    let schema = Schema::builtin();
    let mut d = dest.clone();
    let anchors = krm_merge::yaml::anchors::anchors_of(&d).ok()?;
    let opts = apply::Options { infer_keys: true };
    apply::apply(
        &mut d,
        patch,
        &Context::new(&schema, root(&schema, dest), &anchors).with(opts),
    )
    .ok()?;
    Some(d)
}

fn do_merge3(
    dest: &Node<'static>,
    original: &Node<'static>,
    updated: &Node<'static>,
) -> Option<Node<'static>> {
    let schema = Schema::builtin();
    let mut d = dest.clone();
    let anchors = krm_merge::yaml::anchors::anchors_of(&d).ok()?;
    let opts = merge3::Options::default();
    merge3::merge(
        &mut d,
        original,
        updated,
        &Context::new(&schema, root(&schema, dest), &anchors).with(opts),
    )
    .ok()?;
    Some(d)
}

/// No empty map or list anywhere in `v`.
fn no_empties(v: &Val) -> bool {
    match v {
        Val::Map(fs) => !fs.is_empty() && fs.iter().all(|f| no_empties(&f.val)),
        Val::Seq(items) => !items.is_empty() && items.iter().all(no_empties),
        Val::Flow(ws) => !ws.is_empty(),
        Val::S(_) => true,
    }
}

// ----- through the binary -------------------------------------------------------------------

fn run_bin(args: &[&str], stdin: &str) -> (i32, String, String) {
    let out = krm(args, stdin);
    (out.code, out.stdout, out.stderr)
}

/// A Merge functionConfig with one patch (`patch` and maybe `original` as block text).
fn config(kind: &str, target: &str, patch: &str, original: Option<&str>) -> String {
    let block = |t: &str| -> String { t.lines().map(|l| format!("      {l}\n")).collect() };
    let mut s = format!(
        "apiVersion: fn.krm-merge.dev/v1alpha1\nkind: Merge\nmetadata:\n  name: prop\nspec:\n  patches:\n  - type: {kind}\n{target}    patch: |\n{}",
        block(patch)
    );
    if let Some(o) = original {
        s.push_str(&format!("    original: |\n{}", block(o)));
    }
    s
}

/// `krm-merge --config` on `stream` with `config`, from a directory of this case's own.
fn filter(config: &str, stream: &str) -> (i32, String, String) {
    use std::sync::atomic::{AtomicUsize, Ordering};
    static N: AtomicUsize = AtomicUsize::new(0);
    let d = std::env::temp_dir().join(format!(
        "krm-merge-prop-{}-{}",
        std::process::id(),
        N.fetch_add(1, Ordering::Relaxed)
    ));
    std::fs::create_dir_all(&d).expect("temp dir");
    std::fs::write(d.join("fn.yaml"), config).expect("config");
    let r = run_bin(
        &["--config", &d.join("fn.yaml").display().to_string()],
        stream,
    );
    let _ = std::fs::remove_dir_all(&d);
    r
}

// ----- properties ---------------------------------------------------------------------------

proptest! {
    #![proptest_config(Config { cases: 96, ..Config::default() })]

    /// The generated YAML reads back byte for byte and as the same data.
    #[test]
    fn written_back_from_its_tree_yaml_is_unchanged(s in spec(true), c in comment()) {
        let text = resource("r", &s, &c);
        let docs = yaml::parse_stream(&text).expect("parses");
        let mut out = String::new();
        yaml::emit_stream(&docs, &mut out);
        prop_assert_eq!(&out, &text);
        let back = parse(&out);
        prop_assert!(back.same_data(docs[0].root.as_ref().expect("root")));
    }

    /// Merging a resource into itself changes nothing (without nulls, which delete).
    #[test]
    fn merge2_of_a_resource_into_itself_changes_nothing(s in spec(false), c in comment()) {
        let r = parse(&resource("r", &s, &c));
        let m = do_merge2(&r, &r).expect("merges");
        prop_assert!(m.same_data(&r), "{}", emit(&m));
        prop_assert_eq!(emit(&m), emit(&r));
        let j = do_jsonmerge(&r, &r).expect("merges");
        prop_assert!(j.same_data(&r), "{}", emit(&j));
    }

    /// merge2, jsonmerge and apply, applied again to their own output, change nothing.
    #[test]
    fn merge2_jsonmerge_and_apply_are_idempotent(d in spec(true), p in spec(true)) {
        let dest = parse(&resource("r", &d, &None));
        let patch = parse(&patch_doc("r", &p));
        for (what, f) in [
            ("merge2", do_merge2 as fn(&Node<'static>, &Node<'static>) -> Option<Node<'static>>),
            ("jsonmerge", do_jsonmerge),
            ("apply", do_apply),
        ] {
            let Some(once) = f(&dest, &patch) else { continue };
            let twice = f(&once, &patch).expect("applies again");
            prop_assert_eq!(json(&twice), json(&once), "{}", what);
            prop_assert_eq!(emit(&twice), emit(&once), "{}", what);
        }
    }

    /// merge3 with the same original and updated, applied again to its output, changes
    /// nothing.
    #[test]
    fn merge3_is_idempotent(o in spec(true), pool in prop::collection::vec(val(true), 1..4), seed in any::<u64>(), local in any::<u64>()) {
        let mut u = o.clone();
        mutate_fields(&mut u, &mut Rng(seed | 1), &pool);
        let mut d = o.clone();
        mutate_fields(&mut d, &mut Rng(local | 1), &pool);
        let (original, updated, dest) = (
            parse(&resource("r", &o, &None)),
            parse(&resource("r", &u, &None)),
            parse(&resource("r", &d, &None)),
        );
        if let Some(once) = do_merge3(&dest, &original, &updated) {
            let twice = do_merge3(&once, &original, &updated).expect("merges again");
            prop_assert_eq!(json(&twice), json(&once));
            prop_assert_eq!(emit(&twice), emit(&once));
        }
    }

    /// Nothing changed upstream: the resource does not change, to the byte.
    #[test]
    fn merge3_without_an_upstream_change_keeps_the_resource(o in spec(true), pool in prop::collection::vec(val(true), 1..4), seed in any::<u64>()) {
        let mut d = o.clone();
        mutate_fields(&mut d, &mut Rng(seed | 1), &pool);
        let original = parse(&resource("r", &o, &None));
        let dest = parse(&resource("r", &d, &Some("local".into())));
        let m = do_merge3(&dest, &original, &original).expect("merges");
        prop_assert_eq!(emit(&m), emit(&dest));
    }

    /// Merging the change into the original itself gives the updated version (as data).
    /// Except for empty collections: as in kyaml, a map or list that upstream deleted and that
    /// is already empty stays (merge3.rs says so), so the trees here hold none.
    #[test]
    fn merge3_into_the_original_gives_the_update(o in spec(false), pool in prop::collection::vec(val(false), 1..4), seed in any::<u64>()) {
        prop_assume!(o.iter().all(|f| no_empties(&f.val)));
        let pool: Vec<Val> = pool.into_iter().filter(no_empties).collect();
        let mut u = o.clone();
        mutate_fields(&mut u, &mut Rng(seed | 1), &pool);
        let original = parse(&resource("r", &o, &None));
        let updated = parse(&resource("r", &u, &None));
        let m = do_merge3(&original, &original, &updated).expect("merges");
        prop_assert_eq!(json(&m), json(&updated), "{}", emit(&m));
    }

    /// json6902: adding a member or an element and removing it again is the identity.
    #[test]
    fn json6902_add_then_remove_is_the_identity(s in spec(true), v in val(true), seed in any::<u64>()) {
        let r = parse(&resource("r", &s, &None));
        // A random container of the resource, and a place in it.
        let mut rng = Rng(seed | 1);
        let mut path = String::new();
        let mut at = &r;
        loop {
            let children: Vec<(String, &Node<'static>)> = if at.is_map() {
                at.entries().iter().filter_map(|e| Some((e.key.as_str()?.replace('~', "~0").replace('/', "~1"), &e.value))).collect()
            } else {
                at.items().iter().enumerate().map(|(i, n)| (i.to_string(), n)).collect()
            };
            let containers: Vec<_> = children.into_iter().filter(|(_, n)| n.is_map() || n.is_seq()).collect();
            if containers.is_empty() || rng.below(3) == 0 {
                break;
            }
            let (k, n) = &containers[rng.below(containers.len())];
            path.push('/');
            path.push_str(k);
            at = n;
        }
        let place = if at.is_map() {
            "zz-new".to_owned()
        } else {
            rng.below(at.items().len() + 1).to_string()
        };
        let value = {
            let mut t = String::from("v:");
            write_value(&v, &None, 0, &mut t);
            parse(&t).get("v").cloned().expect("value")
        };
        let mut ops = Node::seq();
        let op = |verb: &str, value: Option<Node<'static>>| {
            let mut o = Node::map();
            o.set("op", Node::string(verb.to_owned()));
            o.set("path", Node::string(format!("{path}/{place}")));
            if let Some(v) = value {
                o.set("value", v);
            }
            o
        };
        if let Some(items) = ops.items_mut() {
            items.push(op("add", Some(value)));
            items.push(op("remove", None));
        }
        let parsed = json6902::parse_ops(&ops).expect("operations");
        let mut m = r.clone();
        json6902::patch(&mut m, &parsed).expect("applies");
        prop_assert!(m.same_data(&r));
        prop_assert_eq!(emit(&m), emit(&r));
    }
}

proptest! {
    #![proptest_config(Config { cases: 16, ..Config::default() })]

    /// Through the binary: each patch type run again on its own output changes nothing.
    #[test]
    fn through_the_binary_a_second_run_changes_nothing(d in spec(true), p in spec(true), pool in prop::collection::vec(val(true), 1..3), seed in any::<u64>()) {
        let stream = format!("{}---\n{}", resource("r", &d, &Some("first".into())), resource("other", &p, &None));
        let patch = patch_doc("r", &p);
        let mut u = d.clone();
        mutate_fields(&mut u, &mut Rng(seed | 1), &pool);
        let updated = patch_doc("r", &u);
        let original = resource("r", &d, &None);
        let target = "    target: {kind: Thing, name: r}\n";
        for cfg in [
            config("merge2", target, &patch, None),
            config("jsonmerge", target, &patch, None),
            config("apply", target, &patch, None),
            config("merge3", "", &updated, Some(&original)),
        ] {
            let (code, once, err) = filter(&cfg, &stream);
            if code != 0 {
                // A patch the walkers refuse (say, a scalar where a keyed list is) is not
                // what this property is about.
                prop_assert_eq!(code, 1, "{}", err);
                prop_assert_eq!(&once, &stream);
                continue;
            }
            let (code, twice, err) = filter(&cfg, &once);
            prop_assert_eq!(code, 0, "{}", err);
            prop_assert_eq!(&twice, &once, "{}", cfg);
        }
    }

    /// Through the binary: items no patch selects come out byte for byte, in a stream and in
    /// a ResourceList.
    #[test]
    fn through_the_binary_unselected_items_are_unchanged(specs in prop::collection::vec((spec(true), comment()), 2..6), p in spec(true), pick in any::<prop::sample::Index>()) {
        let docs: Vec<String> = specs.iter().enumerate().map(|(i, (s, c))| resource(&format!("r{i}"), s, c)).collect();
        let chosen = pick.index(docs.len());
        let stream = docs.join("---\n");
        let target = format!("    target: {{kind: Thing, name: r{chosen}}}\n");
        let cfg = config("merge2", &target, &patch_doc("x", &p), None);
        let (code, out, err) = filter(&cfg, &stream);
        if code == 0 {
            let before = yaml::parse_stream(&stream).expect("input");
            let after = yaml::parse_stream(&out).expect("output");
            prop_assert_eq!(before.len(), after.len());
            for (i, (b, a)) in before.iter().zip(&after).enumerate() {
                if i != chosen {
                    prop_assert_eq!(a.text, b.text, "document {}", i);
                }
            }
        } else {
            prop_assert_eq!(&out, &stream, "{}", err);
        }
        // A ResourceList, read item by item: unselected items keep their text.
        let items: String = docs
            .iter()
            .map(|d| d.lines().enumerate().map(|(i, l)| if i == 0 { format!("- {l}\n") } else { format!("  {l}\n") }).collect::<String>())
            .collect();
        let cfg_block: String = cfg.lines().map(|l| format!("  {l}\n")).collect();
        let input = format!("apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n{items}functionConfig:\n{cfg_block}");
        let (code, out, err) = run_bin(&[], &input);
        prop_assert!(code == 0 || code == 1, "{}", err);
        let texts = |src: &str| -> Vec<String> {
            let mut t = Vec::new();
            yaml::parse_split(src, "items", &mut |_, item| t.push(item.text.to_owned())).expect("splits");
            t
        };
        let (before, after) = (texts(&input), texts(&out));
        prop_assert_eq!(before.len(), after.len());
        for (i, (b, a)) in before.iter().zip(&after).enumerate() {
            if i != chosen || code == 1 {
                prop_assert_eq!(a, b, "item {}", i);
            }
        }
    }
}
