//! The walkers on arbitrary trees: the input is a YAML stream whose first three documents are
//! A, B and C (missing ones are empty mappings); the first byte picks the options. merge2 and
//! jsonmerge merge B into A, merge3 merges the change B -> C into A, apply applies B to A,
//! json6902 applies B's operations to A (when B reads as operations). No panic; every result
//! is written as YAML that reads back as the same tree; jsonmerge (RFC 7386) is idempotent.
//! Inputs whose own trees do not write back faithfully are skipped (see yaml_roundtrip).
//!
//! When A has aliases, each walker also runs as the function runs it: A read by an anchor
//! `Scope` (its aliases marked and made copies), the result settled after the patch
//! and as it is written. That result must read back as YAML (no alias without its anchor) and
//! re-read to the intended data: what the same walker gives on A with its aliases expanded
//! (every node a patch does not select reads what it read).
#![no_main]

use krm_merge::merge::{apply, merge2, merge3, Context};
use krm_merge::patch::{json6902, jsonmerge};
use krm_merge::schema::{Cursor, Schema};
use krm_merge::select::identity::Id;
use krm_merge::yaml::anchors::{Scope, Settle};
use krm_merge::yaml::{self, EmitOptions, Node};
use libfuzzer_sys::fuzz_target;

fn check(what: &str, node: &Node<'_>) {
    // A walker alone may delete or replace an anchored node that an alias elsewhere names: the
    // function's anchor scope keeps those aliases, which `as_the_function_does` checks.
    if yaml::anchors::first_dangling(node).is_some() {
        return;
    }
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

/// A tree's data with its aliases expanded; `None` past a small budget (an alias bomb).
fn plain<'s>(node: &Node<'s>) -> Option<Node<'s>> {
    let mut n = node.clone();
    n.expand_aliases(100_000).ok()?;
    Some(n)
}

/// Runs `walk` on A as the engine does (scoped, settled, written) and on A's data, and checks
/// that both give the same data; a walker that fails on either is left alone.
fn as_the_function_does<'s>(
    what: &str,
    a: &Node<'s>,
    walk: impl Fn(&mut Node<'s>) -> bool,
) {
    if !a.has_alias() {
        return;
    }
    let Some(mut expanded) = plain(a) else {
        return;
    };
    krm_merge::yaml::anchors::strip_anchors(&mut expanded);
    if !walk(&mut expanded) {
        return;
    }
    let mut scoped = a.clone();
    let mut scope = Scope::new();
    let admitted = scope.admit(&mut scoped, false);
    if admitted.unresolved.is_some() {
        return;
    }
    // As the engine does before a resource's first patch: its aliases become copies (past the
    // alias budget they stay, and the walkers follow them).
    let _ = scope.localise_all(&mut scoped);
    if !walk(&mut scoped) {
        return;
    }
    let after_patch = Settle {
        document: false,
        untouched: false,
        revert: false,
    };
    let written = Settle {
        document: true,
        untouched: false,
        revert: true,
    };
    if scope.settle(&mut scoped, after_patch).is_err()
        || scope.settle(&mut scoped, written).is_err()
    {
        return;
    }
    let text = yaml::emit_node(&scoped, EmitOptions::default());
    let back = match yaml::parse_stream(&text) {
        Ok(b) => b.into_iter().find_map(|d| d.root).unwrap_or_else(Node::null),
        Err(e) => panic!("{what}, scoped: the result does not parse: {e}\n{text}"),
    };
    let Some(got) = plain(&back) else {
        return;
    };
    assert!(
        got.same_data(&expanded),
        "{what}: aliases change what the patch does\nscoped:\n{text}\nplain:\n{}",
        yaml::emit_node(&expanded, EmitOptions::default())
    );
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
    if merge2::merge(&mut m, &b, &Context::new(&schema, at, &anchors).with(opts)).is_ok() {
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
    let opts3 = merge3::Options {
        infer_keys,
        winner: if flags & 16 != 0 {
            merge3::Winner::Local
        } else {
            merge3::Winner::Upstream
        },
    };
    if merge3::merge(&mut m, &b, &c, &Context::new(&schema, at, &anchors).with(opts3)).is_ok() {
        check("merge3", &m);
    }

    let mut m = a.clone();
    if apply::apply(&mut m, &b, &Context::new(&schema, at, &anchors).with(apply::Options { infer_keys }))
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
        match json6902::patch_with(&mut m, &ops, &o, &mut json6902::Budget::new()) {
            Ok(_) => check("json6902", &m),
            Err(_) => assert!(m.same_data(&a), "json6902 changed the document on error"),
        }
        as_the_function_does("json6902", &a, |m| {
            json6902::patch_with(m, &ops, &o, &mut json6902::Budget::new()).is_ok()
        });
    }

    // The patches as the function hands them to the walkers: aliases expanded, anchors dropped.
    let (Ok(b), Ok(c)) = (
        yaml::anchors::detached(&b).map(|n| n.into_owned().into_owned()),
        yaml::anchors::detached(&c).map(|n| n.into_owned().into_owned()),
    ) else {
        return;
    };
    as_the_function_does("merge2", &a, |m| {
        let Ok(anchors) = yaml::anchors::anchors_of(m) else {
            return false;
        };
        merge2::merge(m, &b, &Context::new(&schema, at, &anchors).with(opts)).is_ok()
    });
    as_the_function_does("jsonmerge", &a, |m| jsonmerge::merge(m, &b).is_ok());
    as_the_function_does("merge3", &a, |m| {
        let Ok(anchors) = yaml::anchors::anchors_of(m) else {
            return false;
        };
        merge3::merge(m, &b, &c, &Context::new(&schema, at, &anchors).with(opts3)).is_ok()
    });
    as_the_function_does("apply", &a, |m| {
        let Ok(anchors) = yaml::anchors::anchors_of(m) else {
            return false;
        };
        apply::apply(m, &b, &Context::new(&schema, at, &anchors).with(apply::Options { infer_keys })).is_ok()
    });
});
