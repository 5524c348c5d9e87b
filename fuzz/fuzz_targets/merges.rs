//! The walkers on arbitrary trees: the input is a YAML stream whose first three documents are
//! A, B and C (missing ones are empty mappings); the first byte picks the options. merge2 and
//! jsonmerge merge B into A, merge3 merges the change B -> C into A, apply applies B to A,
//! json6902 applies B's operations to A (when B reads as operations). No panic; every result
//! is written as YAML that reads back as the same tree; jsonmerge (RFC 7386) is idempotent.
//! Inputs whose own trees do not write back faithfully are skipped (see yaml_roundtrip).
#![no_main]

use krm_merge::merge::{apply, merge2, merge3};
use krm_merge::patch::{json6902, jsonmerge};
use krm_merge::schema::{Cursor, Schema};
use krm_merge::select::identity::Id;
use krm_merge::yaml::{self, EmitOptions, Node};
use libfuzzer_sys::fuzz_target;

fn check(what: &str, node: &Node<'_>) {
    let text = yaml::emit_node(node, EmitOptions::default());
    let back = match yaml::parse_stream(&text) {
        Ok(b) => b,
        Err(e) => panic!("{what}: the result does not parse: {e}\n{text}"),
    };
    let back = back
        .into_iter()
        .find_map(|d| d.root)
        .unwrap_or_else(Node::null);
    assert!(
        node.same_data(&back),
        "{what}: the result reads back differently\n{text}"
    );
}

fn writes_back(node: &Node<'_>) -> bool {
    let text = yaml::emit_node(node, EmitOptions::default());
    let mut block = node.clone();
    block.make_block();
    let block_text = yaml::emit_node(&block, EmitOptions::default());
    [text, block_text].iter().all(|t| {
        yaml::parse_stream(t)
            .ok()
            .and_then(|d| d.into_iter().find_map(|d| d.root))
            .is_some_and(|back| back.same_data(node))
    })
}

fn root(schema: &Schema, node: &Node<'_>) -> Cursor {
    let id = Id::of(node);
    let (g, v) = id.group_version();
    schema.root(g, v, &id.kind)
}

fuzz_target!(|data: &[u8]| {
    let Some((&flags, rest)) = data.split_first() else {
        return;
    };
    let Ok(src) = std::str::from_utf8(rest) else {
        return;
    };
    let Ok(docs) = yaml::parse_stream(src) else {
        return;
    };
    // Trees the emitter cannot write back faithfully are the yaml_roundtrip target's business:
    // this one is about the walkers.
    if !docs.iter().filter_map(|d| d.root.as_ref()).all(writes_back) {
        return;
    }
    let mut roots = docs.into_iter().filter_map(|d| d.root);
    let a = roots.next().unwrap_or_else(Node::map);
    let b = roots.next().unwrap_or_else(Node::map);
    let c = roots.next().unwrap_or_else(Node::map);
    let schema = Schema::builtin();
    let at = root(&schema, &a);
    let Ok(anchors) = yaml::anchors::anchors_of(&a) else {
        return;
    };
    let infer_keys = flags & 1 != 0;

    let opts = merge2::Options {
        new_items: if flags & 2 != 0 {
            merge2::NewItems::Prepend
        } else {
            merge2::NewItems::Append
        },
        infer_keys,
        kustomize: flags & 8 != 0,
    };
    let mut m = a.clone();
    if merge2::merge(&mut m, &b, &schema, at, &opts, &anchors).is_ok() {
        check("merge2", &m);
    }

    let mut m = a.clone();
    if jsonmerge::merge(&mut m, &b).is_ok() {
        check("jsonmerge", &m);
        let once = m.clone();
        if jsonmerge::merge(&mut m, &b).is_ok() {
            assert!(m.same_data(&once), "jsonmerge is not idempotent");
        }
    }

    let mut m = a.clone();
    let opts3 = merge3::Options { infer_keys };
    if merge3::merge(&mut m, &b, &c, &schema, at, &opts3, &anchors).is_ok() {
        check("merge3", &m);
    }

    let mut m = a.clone();
    if apply::apply(
        &mut m,
        &b,
        &schema,
        at,
        &apply::Options { infer_keys },
        &anchors,
    )
    .is_ok()
    {
        check("apply", &m);
    }

    if let Ok(ops) = json6902::parse_ops(&b) {
        let mut m = a.clone();
        let o = if flags & 4 != 0 {
            json6902::Options::kustomize()
        } else {
            json6902::Options::default()
        };
        match json6902::apply_with(&mut m, &ops, &o) {
            Ok(()) => check("json6902", &m),
            Err(_) => assert!(m.same_data(&a), "json6902 changed the document on error"),
        }
    }
});
