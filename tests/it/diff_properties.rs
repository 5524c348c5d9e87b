//! Property tests of patch generation: for generated resource pairs, the patch
//! `diff` makes, applied to OLD by the walker of its type, gives NEW as data — strategic merge
//! (`merge2`), JSON patch (`json6902::patch`) and JSON merge patch (`jsonmerge::merge`), with
//! and without schema (kind `Thing` with no schema, with kyaml's inferred keys and without, and
//! with `spec.items` declared as a list keyed by `name`); the three-way patch with ORIGINAL =
//! CURRENT gives MODIFIED; and for generated packages, running the `Merge` functionConfig the
//! package diff writes on BASE gives VARIANT.
//!
//! The patches made for kustomize (`Options::kustomize`, the kustomization format) are applied as
//! kustomize applies them (kustomize's options, which reproduce kyaml's merge and kustomize's
//! JSON patch library).
//!
//! A sample of the same pairs and packages goes through the binary: `krm-merge diff`, then the
//! patch or config run by `krm-merge --config` (`--schema` standing for the declared keys).
//!
//! Where NEW holds nulls a strategic merge or merge patch cannot write, the diff must say so
//! (a warning) and the round trip is checked only without nulls; JSON patches always round trip.
//!
//! The generated resources are `gen.rs`'s (resources as people write them: comments, styles,
//! flow collections, keyed lists), which `properties.rs` shares.

use krm_merge::config;
use krm_merge::diff::{self, package, three_way, two_way, DiffErrorKind, Options, WarningKind};
use krm_merge::merge::{merge2, Context};
use krm_merge::patch::{json6902, jsonmerge};
use krm_merge::schema::{Cursor, Schema};
use krm_merge::yaml::{self, Node};
use proptest::prelude::*;
use proptest::test_runner::Config;

use crate::gen::{emit, mutate_fields, parse, resource, spec, val, Field, Rng, Scalar, Val};

// ----- helpers ------------------------------------------------------------------------------

/// A tree as Kubernetes reads it (mapping keys as the text of their values: `0x1` is `1`),
/// which is what a patch must give.
fn json(node: &Node<'_>) -> serde_json::Value {
    crate::diff_roundtrip::as_kubernetes(node)
}

/// A document with its mapping keys as written (`0x1`, not `1`) and its scalars as data: what
/// a patch must give where its engine pairs keys as data and gives the result the patch's
/// spelling (strategic merge without kustomize's options, JSON merge patch).
fn spelled(n: &Node<'_>) -> serde_json::Value {
    if n.is_map() {
        let m = n.entries().iter().map(|e| {
            let key = e.key.as_str().expect("a scalar key").to_owned();
            (key, spelled(&e.value))
        });
        return serde_json::Value::Object(m.collect());
    }
    if n.is_seq() {
        return serde_json::Value::Array(n.items().iter().map(spelled).collect());
    }
    json(n)
}

// ----- respelled keys and large reorders ----------------------------------------------------

/// Spellings of one key as data: numbers, booleans and null, each written several ways.
const SPELLINGS: &[&[&str]] = &[
    &["1", "0x1", "1.0", "+1", "0o1"],
    &["2", "0x2", "2.0", "0o2"],
    &["true", "True", "TRUE"],
    &["false", "False", "FALSE"],
    &["null", "~", "Null", "NULL"],
];

fn family(key: &str) -> Option<&'static [&'static str]> {
    SPELLINGS.iter().copied().find(|f| f.contains(&key))
}

/// Adds to `fs`, and to the maps below it, fields whose keys are numbers, booleans or null
/// (at most one of each family a map), spelled as `rng` picks.
fn with_typed_keys(fs: &mut Vec<Field>, rng: &mut Rng, pool: &[Val]) {
    for f in fs.iter_mut() {
        match &mut f.val {
            Val::Map(inner) => with_typed_keys(inner, rng, pool),
            Val::Seq(items) => {
                for item in items {
                    if let Val::Map(inner) = item {
                        with_typed_keys(inner, rng, pool);
                    }
                }
            }
            _ => {}
        }
    }
    for spellings in SPELLINGS {
        if rng.below(3) == 0 && !fs.iter().any(|f| spellings.contains(&f.key.as_str())) {
            let val = match pool.get(rng.below(pool.len())) {
                Some(v) => v.clone(),
                None => Val::S(Scalar::Word("v".into())),
            };
            fs.push(Field {
                key: spellings[rng.below(spellings.len())].to_owned(),
                val,
                line: None,
                head: None,
            });
        }
    }
}

/// Spells the number, boolean and null keys of `fs` and the maps below it another way, each
/// with even odds: the same keys as data.
fn respell(fs: &mut [Field], rng: &mut Rng) {
    for f in fs {
        if let Some(spellings) = family(&f.key) {
            if rng.below(2) == 0 {
                f.key = spellings[rng.below(spellings.len())].to_owned();
            }
        }
        match &mut f.val {
            Val::Map(inner) => respell(inner, rng),
            Val::Seq(items) => {
                for item in items {
                    if let Val::Map(inner) = item {
                        respell(inner, rng);
                    }
                }
            }
            _ => {}
        }
    }
}

/// A spec with a list keyed by `name` of `n` elements, and the same reordered (`how`: reversed,
/// odd ones first, rotated, shuffled, or pairs swapped), with a few elements changed, dropped
/// and added.
fn reordered(n: usize, how: usize, seed: u64) -> (Vec<Field>, Vec<Field>) {
    let element = |i: usize, v: &str| {
        Val::Map(vec![
            Field {
                key: "name".into(),
                val: Val::S(Scalar::Word(format!("e{i}"))),
                line: None,
                head: None,
            },
            Field {
                key: "value".into(),
                val: Val::S(Scalar::Word(v.to_owned())),
                line: None,
                head: None,
            },
        ])
    };
    let mut order: Vec<usize> = (0..n).collect();
    let mut rng = Rng(seed | 1);
    match how % 5 {
        0 => order.reverse(),
        1 => order = (1..n).step_by(2).chain((0..n).step_by(2)).collect(),
        2 => order.rotate_left(n / 3),
        3 => {
            for i in (1..n).rev() {
                order.swap(i, rng.below(i + 1));
            }
        }
        _ => {
            for pair in order.chunks_mut(2) {
                pair.reverse();
            }
        }
    }
    let changed = rng.below(n.max(1));
    let mut new_items: Vec<Val> = order
        .iter()
        .filter(|&&i| i != rng.below(n.max(1)) || i == changed)
        .map(|&i| element(i, if i == changed { "changed" } else { "v" }))
        .collect();
    new_items.push(element(n, "added"));
    let spec = |items: Vec<Val>| {
        vec![Field {
            key: "items".into(),
            val: Val::Seq(items),
            line: None,
            head: None,
        }]
    };
    (
        spec((0..n).map(|i| element(i, "v")).collect()),
        spec(new_items),
    )
}

/// Whether a null is anywhere in the tree.
fn has_null(n: &Node<'_>) -> bool {
    n.is_null() || n.entries().iter().any(|e| has_null(&e.value)) || n.items().iter().any(has_null)
}

/// The schemas the properties run with: none (kind Thing is unknown), and `spec.items`
/// declared as a list merged by `name`.
fn schemas() -> Vec<(&'static str, Schema)> {
    let mut declared = Schema::builtin();
    declared
        .add_merge_key(
            "example.com",
            "Thing",
            "spec.items",
            vec!["name".into()],
            Some("merge"),
        )
        .expect("declaration");
    vec![
        ("no schema", Schema::builtin()),
        ("declared keys", declared),
    ]
}

fn root(schema: &Schema) -> Cursor {
    schema.root("example.com", "v1", "Thing")
}

/// An updated version of a spec: values replaced from `pool`, fields and keyed elements
/// removed and added, recursively.
fn updated(o: &[Field], pool: &[Val], seed: u64) -> Vec<Field> {
    let mut u = o.to_vec();
    mutate_fields(&mut u, &mut Rng(seed | 1), pool);
    u
}

/// Checks the three patch types for one pair; `exact`: NEW has no null, so every patch must
/// round trip without warnings.
fn check_pair(old: &Node<'static>, new: &Node<'static>) -> Result<(), TestCaseError> {
    let exact = !has_null(new);
    for (label, schema) in schemas() {
        for infer in [false, true] {
            let opts = Options {
                infer_keys: infer,
                identity: true,
                kustomize: false,
            };
            let what = format!("{label}, infer {infer}");
            // Strategic merge.
            match two_way::diff(old, new, &schema, root(&schema), &opts) {
                Ok(d) => {
                    prop_assert!(
                        !exact || d.warnings.is_empty(),
                        "{}: warnings {:?}",
                        what,
                        d.warnings
                    );
                    let mut got = old.clone();
                    merge2::merge(
                        &mut got,
                        &d.patch,
                        &Context::new(&schema, root(&schema), &Default::default())
                            .with(opts.merge2_options()),
                    )
                    .map_err(|e| {
                        TestCaseError::fail(format!(
                            "{what}: merge2 fails: {e}\n{}",
                            emit(&d.patch)
                        ))
                    })?;
                    if d.warnings.is_empty() {
                        prop_assert_eq!(
                            json(&got),
                            json(new),
                            "{}: merge2 patch\n{}",
                            what,
                            emit(&d.patch)
                        );
                    }
                    if exact && d.warnings.is_empty() {
                        prop_assert_eq!(
                            spelled(&got),
                            spelled(new),
                            "{}: merge2 patch, keys as NEW spells them\n{}",
                            what,
                            emit(&d.patch)
                        );
                    }
                    // The patch changes nothing exactly when the two are the same data with
                    // their keys spelled alike.
                    let differ = json(old) != json(new) || spelled(old) != spelled(new);
                    prop_assert_eq!(d.changed, differ, "{}", what);
                }
                // A keyed list whose elements lack `name` (declared keys only).
                Err(e) => prop_assert!(
                    label == "declared keys" && matches!(e.kind, DiffErrorKind::MissingKey(_)),
                    "{}: {}",
                    what,
                    e
                ),
            }
            // Three-way, nothing changed live: the same result.
            if let Ok(d) = three_way::diff(Some(old), old, new, &schema, root(&schema), &opts) {
                prop_assert!(d.conflicts.is_empty(), "{}: {:?}", what, d.conflicts);
                if d.warnings.is_empty() {
                    let mut got = old.clone();
                    merge2::merge(
                        &mut got,
                        &d.patch,
                        &Context::new(&schema, root(&schema), &Default::default())
                            .with(opts.merge2_options()),
                    )
                    .map_err(|e| {
                        TestCaseError::fail(format!(
                            "{what}: merge2 fails on the three-way patch: {e}"
                        ))
                    })?;
                    prop_assert_eq!(
                        json(&got),
                        json(new),
                        "{}: three-way patch\n{}",
                        what,
                        emit(&d.patch)
                    );
                }
            }
            if infer {
                check_kustomize_flavour(old, new, &schema, label, exact)?;
            }
            // JSON patch: always exact.
            let d = diff::json6902::diff(old, new, &schema, root(&schema), &opts)
                .expect("json6902 diff");
            let ops = json6902::parse_ops(&d.patch).expect("operations read back");
            let mut got = old.clone();
            json6902::patch(&mut got, &ops).map_err(|e| {
                TestCaseError::fail(format!("{what}: json6902 fails: {e}\n{}", emit(&d.patch)))
            })?;
            prop_assert_eq!(
                json(&got),
                json(new),
                "{}: json6902 patch\n{}",
                what,
                emit(&d.patch)
            );
        }
    }
    // JSON merge patch (no schema).
    let d = diff::jsonmerge::diff(old, new, &Options::default()).expect("jsonmerge diff");
    prop_assert!(
        !exact || d.warnings.is_empty(),
        "jsonmerge warnings {:?}",
        d.warnings
    );
    let mut got = old.clone();
    jsonmerge::merge(&mut got, &d.patch).expect("jsonmerge applies");
    if d.warnings.is_empty() {
        prop_assert_eq!(json(&got), json(new), "jsonmerge patch\n{}", emit(&d.patch));
    }
    if exact && d.warnings.is_empty() {
        prop_assert_eq!(
            spelled(&got),
            spelled(new),
            "jsonmerge patch, keys as NEW spells them\n{}",
            emit(&d.patch)
        );
    }
    Ok(())
}

/// The patches made for kustomize (`Options::kustomize`), applied as kustomize applies them
/// (merge2 with kustomize's options, which reproduce kyaml's merge; JSON patches with
/// kustomize's library's choices): NEW, unless a warning says why not; a strategic merge patch
/// may be refused only where a declared key is missing from an element.
fn check_kustomize_flavour(
    old: &Node<'static>,
    new: &Node<'static>,
    schema: &Schema,
    label: &str,
    exact: bool,
) -> Result<(), TestCaseError> {
    let opts = Options {
        infer_keys: false,
        identity: true,
        kustomize: true,
    };
    let apply = |patch: &Node<'static>| {
        let mut got = old.clone();
        merge2::merge(
            &mut got,
            patch,
            &Context::new(schema, root(schema), &Default::default()).with(opts.merge2_options()),
        )
        .map(|_| got)
    };
    // kyaml walks the whole resource: where it fails on OLD itself (a scalar in a list merged
    // by key), kustomize can patch nothing in it.
    if apply(&Node::map()).is_err() {
        return Ok(());
    }
    match two_way::diff(old, new, schema, root(schema), &opts) {
        Ok(d) => {
            let got = apply(&d.patch.clone().into_owned()).map_err(|e| {
                TestCaseError::fail(format!(
                    "{label}, kustomize: merge2 fails: {e}\n{}",
                    emit(&d.patch)
                ))
            })?;
            if d.warnings.is_empty() {
                prop_assert_eq!(
                    json(&got),
                    json(new),
                    "{}, kustomize: merge2 patch\n{}",
                    label,
                    emit(&d.patch)
                );
            } else {
                // Nulls kyaml drops; elements without their key, which kyaml regroups.
                prop_assert!(
                    d.warnings.iter().all(|w| match w.kind {
                        WarningKind::NullNotKept => !exact,
                        WarningKind::KyamlRegroups => label == "declared keys",
                        WarningKind::IdentityChanged => false,
                    }),
                    "{}: {:?}",
                    label,
                    d.warnings
                );
            }
        }
        Err(e) => prop_assert!(
            label == "declared keys"
                && matches!(
                    e.kind,
                    DiffErrorKind::Kustomize(_) | DiffErrorKind::MissingKey(_)
                ),
            "{}, kustomize: {}",
            label,
            e
        ),
    }
    let d = diff::json6902::diff(old, new, schema, root(schema), &opts).expect("json6902 diff");
    let text = emit(&d.patch);
    prop_assert!(!text.contains("/["), "a selector for kustomize:\n{}", text);
    let ops = json6902::parse_ops(&d.patch).expect("operations read back");
    let mut got = old.clone();
    json6902::patch_with(
        &mut got,
        &ops,
        &json6902::Options::kustomize(),
        &mut json6902::Budget::new(),
    )
    .map_err(|e| TestCaseError::fail(format!("{label}, kustomize: json6902 fails: {e}\n{text}")))?;
    prop_assert_eq!(
        json(&got),
        json(new),
        "{}, kustomize: json6902 patch\n{}",
        label,
        text
    );
    Ok(())
}

/// A kustomization's `patches:` (as the package diff writes them) as the `Merge` config that
/// applies them as kustomize does: each entry with kustomize's options, its type left to
/// detection (a list of operations is a JSON patch, as kustomize decides).
pub fn kustomize_config(patches: &Node<'_>) -> Node<'static> {
    let entries = patches
        .get("patches")
        .map(|p| p.items().to_vec())
        .unwrap_or_default()
        .into_iter()
        .map(|e| {
            let mut e = e.into_owned();
            let mut o = Node::map();
            o.set("newListItems", Node::string("prepend"));
            o.set("inferMergeKeys", Node::plain("false"));
            e.set("options", o);
            e
        })
        .collect();
    let mut spec = Node::map();
    spec.set("patches", Node::seq_of(entries));
    let mut c = yaml::parse_stream(
        "apiVersion: fn.krm-merge.dev/v1alpha1\nkind: Merge\nmetadata: {name: k}\n",
    )
    .expect("config")
    .remove(0)
    .root
    .expect("a document")
    .into_owned();
    c.set("spec", spec);
    c
}

/// Runs a package diff's config on BASE, written as a stream, through the library's pipeline.
fn run_config(config: &Node<'_>, base: &[Node<'static>]) -> Result<Vec<serde_json::Value>, String> {
    let plan = config::plan(config, None).map_err(|e| e.to_string())?;
    let docs: Vec<yaml::Document<'_>> = base.iter().cloned().map(yaml::Document::new).collect();
    let mut stream = String::new();
    yaml::emit_stream(&docs, &mut stream);
    let out = krm_merge::run_stream(&stream, &plan, None);
    if out.failed() {
        return Err(format!("{:?}", out.results));
    }
    Ok(yaml::parse_stream(&out.text)
        .map_err(|e| e.to_string())?
        .into_iter()
        .filter_map(|d| d.root)
        .map(|n| json(&n))
        .collect())
}

proptest! {
    #![proptest_config(Config { cases: 128, ..Config::default() })]

    /// Without nulls every patch type round trips, with and without schema.
    #[test]
    fn diff_then_apply_gives_new(o in spec(false), pool in prop::collection::vec(val(false), 1..4), seed in any::<u64>()) {
        let u = updated(&o, &pool, seed);
        let old = parse(&resource("r", &o, &None));
        let new = parse(&resource("r", &u, &None));
        check_pair(&old, &new)?;
    }

    /// With nulls: JSON patches round trip; the others round trip or say why not.
    #[test]
    fn diff_then_apply_with_nulls(o in spec(true), pool in prop::collection::vec(val(true), 1..4), seed in any::<u64>()) {
        let u = updated(&o, &pool, seed);
        let old = parse(&resource("r", &o, &None));
        let new = parse(&resource("r", &u, &None));
        check_pair(&old, &new)?;
    }

    /// Keys that are numbers, booleans or null, spelled one way in OLD and maybe another in
    /// NEW (`1` and `0x1`, `true` and `TRUE`, `null` and `~`): one key as data, so every patch
    /// type round trips as it does without them.
    #[test]
    fn respelled_keys_round_trip(o in spec(false), pool in prop::collection::vec(val(false), 1..4), seed in any::<u64>()) {
        let mut rng = Rng(seed | 1);
        let mut o = o;
        with_typed_keys(&mut o, &mut rng, &pool);
        let mut u = updated(&o, &pool, seed);
        respell(&mut u, &mut rng);
        let old = parse(&resource("r", &o, &None));
        let new = parse(&resource("r", &u, &None));
        check_pair(&old, &new)?;
    }

    /// Two unrelated resources (lists reordered, kinds changed, everything at once).
    #[test]
    fn diff_of_unrelated_resources_round_trips(o in spec(false), n in spec(false)) {
        let old = parse(&resource("r", &o, &None));
        let new = parse(&resource("r", &n, &None));
        check_pair(&old, &new)?;
    }

    /// A package diff, run as a functionConfig on BASE, gives VARIANT (without the resources
    /// only VARIANT has, which it reports), for each patch type.
    #[test]
    fn package_diff_then_function_gives_variant(
        specs in prop::collection::vec(spec(false), 1..5),
        pool in prop::collection::vec(val(false), 1..4),
        seed in any::<u64>(),
        drop in any::<prop::sample::Index>(),
        add in any::<bool>(),
    ) {
        let base: Vec<Node<'static>> = specs
            .iter()
            .enumerate()
            .map(|(i, s)| parse(&resource(&format!("r{i}"), s, &None)))
            .collect();
        let dropped = drop.index(specs.len() + 1);
        let mut variant: Vec<Node<'static>> = specs
            .iter()
            .enumerate()
            .filter(|(i, _)| *i != dropped)
            .map(|(i, s)| parse(&resource(&format!("r{i}"), &updated(s, &pool, seed.wrapping_add(i as u64)), &None)))
            .collect();
        if add {
            variant.push(parse(&resource("extra", &specs[0], &None)));
        }
        let want: Vec<serde_json::Value> = variant
            .iter()
            .filter(|v| v.str_at(&["metadata", "name"]) != Some("extra"))
            .map(json)
            .collect();
        for ty in [package::PatchType::Merge2, package::PatchType::Json6902, package::PatchType::JsonMerge] {
            for infer in [false, true] {
                let opts = package::PackageOptions {
                    patch_type: ty,
                    diff: Options { infer_keys: infer, identity: true, kustomize: false },
                    ..Default::default()
                };
                let d = package::diff(&base, &variant, &Schema::builtin(), &opts).expect("package diff");
                prop_assert_eq!(d.added.len(), usize::from(add));
                let got = run_config(&d.config, &base)
                    .map_err(|e| TestCaseError::fail(format!("{ty:?}: {e}\n{}", emit(&d.config))))?;
                prop_assert_eq!(&got, &want, "{:?}, infer {}\n{}", ty, infer, emit(&d.config));
            }
            if ty == package::PatchType::JsonMerge {
                continue;
            }
            // The kustomization's `patches:`, applied as kustomize applies them.
            let opts = package::PackageOptions {
                patch_type: ty,
                format: package::Format::Kustomization,
                ..Default::default()
            };
            let d = package::diff(&base, &variant, &Schema::builtin(), &opts).expect("package diff");
            let config = kustomize_config(&d.config);
            let got = run_config(&config, &base)
                .map_err(|e| TestCaseError::fail(format!("{ty:?}, kustomization: {e}\n{}", emit(&d.config))))?;
            prop_assert_eq!(&got, &want, "{:?}, kustomization\n{}", ty, emit(&d.config));
        }
    }
}

proptest! {
    #![proptest_config(Config { cases: 10, ..Config::default() })]

    /// A list of up to 1,000 elements merged by `name`, reordered as a whole (reversed, odd
    /// ones first, rotated, shuffled, pairs swapped), with an element changed, some dropped,
    /// one added: every patch type round trips, and the JSON patch applies within the engine's
    /// budgets (key selectors that each read the list are not spent on a thousand moves).
    #[test]
    fn large_reorders_round_trip(n in 50usize..1000, how in 0usize..5, seed in any::<u64>()) {
        let (o, u) = reordered(n, how, seed);
        let old = parse(&resource("r", &o, &None));
        let new = parse(&resource("r", &u, &None));
        check_pair(&old, &new)?;
    }
}

// ----- through the binary -------------------------------------------------------------------

/// `spec.items` of kind Thing declared as a list merged by `name`, as the OpenAPI v2 document
/// `--schema` takes (the declaration the in-process properties make).
fn declared_openapi() -> serde_json::Value {
    serde_json::json!({"definitions": {"thing": {
        "type": "object",
        "x-kubernetes-group-version-kind": [{"group": "example.com", "version": "v1", "kind": "Thing"}],
        "properties": {"spec": {"type": "object", "properties": {"items": {
            "type": "array",
            "x-kubernetes-patch-merge-key": "name",
            "x-kubernetes-patch-strategy": "merge"}}}}}}})
}

/// A `Merge` config holding one patch of `ty` for the Thing, with the patch's key inference,
/// and the declared schema when `declared`.
fn config_for(ty: &str, patch: &str, infer: bool, declared: bool) -> String {
    let mut spec = serde_json::json!({"patches": [{
        "type": ty,
        "target": {"kind": "Thing"},
        // The generated values are of any type: the schema check's findings stay warnings.
        "options": {"inferMergeKeys": infer, "validation": "warn"},
        "patch": patch,
    }]});
    if declared {
        spec["schema"] = serde_json::json!({"openAPI": {"inline": declared_openapi()}});
    }
    let config = serde_json::json!({
        "apiVersion": "fn.krm-merge.dev/v1alpha1", "kind": "Merge",
        "metadata": {"name": "apply"}, "spec": spec,
    });
    crate::support::yaml_text(&yaml::from_json(&config))
}

/// One pair through `krm-merge diff` in each type, with and without `--infer-merge-keys` and
/// `--schema`, each patch applied to OLD by `krm-merge --config`: NEW, unless the diff warned
/// (a null it cannot say) or refused (a declared key missing from an element).
fn check_pair_through_the_binary(old: &str, new: &str) -> Result<(), TestCaseError> {
    let dir = crate::support::tmp_dir("diff-props", "pair");
    let file = |name: &str, text: &str| -> String {
        let p = dir.join(name);
        std::fs::write(&p, text).expect("write");
        p.to_str().expect("utf8").to_owned()
    };
    let (old_file, new_file) = (file("old.yaml", old), file("new.yaml", new));
    let schema_file = file("schema.json", &declared_openapi().to_string());
    let want = json(&parse(new));
    for declared in [false, true] {
        for (ty, infer) in [
            ("merge2", false),
            ("merge2", true),
            ("json6902", false),
            ("json6902", true),
            ("jsonmerge", false),
        ] {
            let mut args = vec!["diff", "--type", ty];
            if infer {
                args.push("--infer-merge-keys");
            }
            if declared {
                args.extend(["--schema", schema_file.as_str()]);
            }
            args.extend([old_file.as_str(), new_file.as_str()]);
            let what = format!("{ty}, infer {infer}, declared {declared}");
            let out = crate::support::krm(&args, "");
            if out.code == 1 && declared && out.stderr.contains("merge key") {
                continue;
            }
            prop_assert_eq!(out.code, 0, "{}: {}", what, out.stderr);
            if out.stdout.is_empty() {
                prop_assert_eq!(json(&parse(old)), want.clone(), "{}: no patch", what);
                continue;
            }
            let fn_file = file("fn.yaml", &config_for(ty, &out.stdout, infer, declared));
            let applied = crate::support::krm(&["--config", &fn_file, &old_file], "");
            prop_assert_eq!(
                applied.code,
                0,
                "{}: {}\n{}",
                what,
                applied.stderr,
                out.stdout
            );
            if !out.stderr.contains("warning:") {
                prop_assert_eq!(
                    json(&parse(&applied.stdout)),
                    want.clone(),
                    "{}: patch\n{}",
                    what,
                    out.stdout
                );
            }
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
    Ok(())
}

proptest! {
    #![proptest_config(Config { cases: 24, ..Config::default() })]

    /// A sample of the pairs above, through the binary: `krm-merge diff`, then the patch run
    /// by `krm-merge --config` on OLD, gives NEW.
    #[test]
    fn binary_diff_then_apply_gives_new(o in spec(true), pool in prop::collection::vec(val(true), 1..4), seed in any::<u64>()) {
        // Half of them with number, boolean and null keys, maybe spelled anew.
        let mut rng = Rng(seed | 1);
        let mut o = o;
        let typed = rng.below(2) == 0;
        if typed {
            with_typed_keys(&mut o, &mut rng, &pool);
        }
        let mut u = updated(&o, &pool, seed);
        if typed {
            respell(&mut u, &mut rng);
        }
        check_pair_through_the_binary(&resource("r", &o, &None), &resource("r", &u, &None))?;
    }

    /// A sample of generated packages through the binary: `krm-merge diff BASE VARIANT` (two
    /// directories), its config run by `krm-merge --config` on BASE, gives VARIANT without the
    /// resources only it has, which `--added` holds.
    #[test]
    fn binary_package_diff_then_function_gives_variant(
        specs in prop::collection::vec(spec(false), 1..5),
        pool in prop::collection::vec(val(false), 1..4),
        seed in any::<u64>(),
        drop in any::<prop::sample::Index>(),
        add in any::<bool>(),
    ) {
        let dir = crate::support::tmp_dir("diff-props", "package");
        let (base, variant) = (dir.join("base"), dir.join("variant"));
        std::fs::create_dir_all(&base).expect("dir");
        std::fs::create_dir_all(&variant).expect("dir");
        let dropped = drop.index(specs.len() + 1);
        let mut want = Vec::new();
        for (i, s) in specs.iter().enumerate() {
            let name = format!("r{i}");
            std::fs::write(base.join(format!("{name}.yaml")), resource(&name, s, &None)).expect("write");
            if i != dropped {
                let text = resource(&name, &updated(s, &pool, seed.wrapping_add(i as u64)), &None);
                want.push(json(&parse(&text)));
                std::fs::write(variant.join(format!("{name}.yaml")), text).expect("write");
            }
        }
        let extra = resource("extra", &specs[0], &None);
        if add {
            std::fs::write(variant.join("extra.yaml"), &extra).expect("write");
        }
        let (b, v) = (base.to_str().expect("utf8"), variant.to_str().expect("utf8"));
        let added = dir.join("added.yaml");
        for ty in ["merge2", "json6902", "jsonmerge"] {
            let out = crate::support::krm(
                &["diff", "--type", ty, b, v, "--added", added.to_str().expect("utf8")],
                "",
            );
            prop_assert_eq!(out.code, 0, "{}: {}", ty, out.stderr);
            let added_docs = crate::support::docs(&std::fs::read_to_string(&added).expect("added"));
            prop_assert_eq!(added_docs.len(), usize::from(add));
            if out.stdout.is_empty() {
                let base_docs: Vec<serde_json::Value> = specs
                    .iter()
                    .enumerate()
                    .map(|(i, s)| json(&parse(&resource(&format!("r{i}"), s, &None))))
                    .collect();
                prop_assert_eq!(&base_docs, &want, "{}: no patch", ty);
                continue;
            }
            let fn_file = dir.join("fn.yaml");
            std::fs::write(&fn_file, &out.stdout).expect("write");
            let run = crate::support::krm(&["--config", fn_file.to_str().expect("utf8"), b], "");
            prop_assert_eq!(run.code, 0, "{}: {}\n{}", ty, run.stderr, out.stdout);
            prop_assert_eq!(crate::support::docs(&run.stdout), want.clone(), "{}\n{}", ty, out.stdout);
        }
        let _ = std::fs::remove_dir_all(&dir);
    }
}
