//! Micro-benchmarks of the pieces a run is made of: parse, emit, selection, the merge walkers
//! (`wide`: 10,000 elements, paired by hash), the whole function on an in-memory stream, and
//! patch generation (`diff`: a Pod of 20,000 containers reordered, each patch type made and
//! checked).
//! `cargo bench --bench core` (add `-- parse` to run one group). For whole-process numbers
//! against kubectl kustomize see tools/bench.py.

#[path = "support/gen.rs"]
mod gen;

use criterion::{criterion_group, criterion_main, BatchSize, Criterion, Throughput};
use krm_merge::merge::merge3;
use krm_merge::merge::{merge2, Context};
use krm_merge::patch::json6902;
use krm_merge::schema::Schema;
use krm_merge::select::identity::Meta;
use krm_merge::select::target::{Target, TargetSpec};
use krm_merge::yaml::{self, Node};

/// A Deployment of the generated packages, as a tree.
fn deployment() -> Node<'static> {
    let text = gen::resource(0);
    yaml::parse_stream(&text)
        .expect("generated YAML")
        .remove(0)
        .root
        .expect("a resource")
        .into_owned()
}

fn doc(text: &str) -> Node<'static> {
    yaml::parse_stream(text)
        .expect("YAML")
        .remove(0)
        .root
        .expect("a document")
        .into_owned()
}

fn parse_and_emit(c: &mut Criterion) {
    let stream = gen::stream(1000);
    let mut g = c.benchmark_group("yaml");
    g.throughput(Throughput::Bytes(stream.len() as u64));
    // The read path every command takes: the fast reader (src/yaml/fast.rs) feeding the tree
    // builder; then the same trees from granit-parser alone, which the fast reader leaves
    // anything unusual to, and the fast reader's events without trees (its own cost).
    g.bench_function("parse 1000 resources", |b| {
        b.iter(|| yaml::parse_stream(&stream).expect("YAML"))
    });
    g.bench_function("parse 1000 resources, granit-parser alone", |b| {
        b.iter(|| yaml::parse_stream_granit(&stream).expect("YAML"))
    });
    g.bench_function("fast reader events, 1000 resources", |b| {
        b.iter(|| yaml::fast_reader_events(&stream))
    });
    // A ResourceList read item by item, as KRM mode reads it (`- # comment` items).
    let list = gen::resource_list(
        1000,
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: f\n",
    );
    g.throughput(Throughput::Bytes(list.len() as u64));
    g.bench_function("split a ResourceList of 1000 items", |b| {
        b.iter(|| {
            let mut n = 0;
            yaml::parse_split(&list, "items", &mut |_, _| n += 1).expect("YAML");
            n
        })
    });
    g.throughput(Throughput::Bytes(stream.len() as u64));
    let docs = yaml::parse_stream(&stream).expect("YAML");
    g.bench_function("emit 1000 resources from trees", |b| {
        b.iter(|| {
            let mut out = String::with_capacity(stream.len());
            yaml::emit_stream(&docs, &mut out);
            out
        })
    });
    g.finish();
}

fn selection(c: &mut Criterion) {
    let stream = gen::stream(1000);
    let docs = yaml::parse_stream(&stream).expect("YAML");
    let roots: Vec<&Node<'_>> = docs.iter().filter_map(|d| d.root.as_ref()).collect();
    let spec = TargetSpec {
        kind: Some("Deployment".into()),
        name: Some("app-(1|2)[0-9]*".into()),
        label_selector: Some("tier in (backend,frontend),app.kubernetes.io/name!=app-7".into()),
        ..TargetSpec::default()
    };
    let target = Target::compile(&spec).expect("valid target");
    let mut g = c.benchmark_group("selection");
    g.throughput(Throughput::Elements(roots.len() as u64));
    g.bench_function("target over 1000 resources", |b| {
        b.iter(|| {
            roots
                .iter()
                .filter(|r| target.matches(&Meta::of(r)).unwrap_or(false))
                .count()
        })
    });
    g.finish();
}

fn walkers(c: &mut Criterion) {
    let schema = Schema::builtin();
    let root = schema.root("apps", "v1", "Deployment");
    let dest = deployment();
    let patch = doc(
        "spec:\n  replicas: 3\n  template:\n    spec:\n      containers:\n      - name: c0\n        image: x:2\n        env:\n        - name: ENV_VAR_1\n          value: changed\n        - name: NEW\n          value: \"1\"\n      - name: sidecar\n        image: proxy:1\n",
    );
    let mut g = c.benchmark_group("walkers");
    g.bench_function("merge2 a Deployment", |b| {
        b.iter_batched(
            || dest.clone(),
            |mut d| {
                merge2::merge(
                    &mut d,
                    &patch,
                    &Context::new(&schema, root, &Default::default())
                        .with(merge2::Options::default()),
                )
                .expect("merges")
            },
            BatchSize::SmallInput,
        )
    });
    let original = dest.clone();
    let mut updated = dest.clone();
    merge2::merge(
        &mut updated,
        &patch,
        &Context::new(&schema, root, &Default::default()).with(merge2::Options::default()),
    )
    .expect("merges");
    let local = doc(&gen::resource(0).replace("replicas: 1", "replicas: 7"));
    g.bench_function("merge3 a Deployment", |b| {
        b.iter_batched(
            || local.clone(),
            |mut d| {
                merge3::merge(
                    &mut d,
                    &original,
                    &updated,
                    &Context::new(&schema, root, &Default::default())
                        .with(merge3::Options::default()),
                )
                .expect("merges")
            },
            BatchSize::SmallInput,
        )
    });
    let ops_node = doc(
        "- op: replace\n  path: /spec/template/spec/containers/[name=c0]/image\n  value: x:3\n- op: add\n  path: /spec/template/spec/containers/0/args/-\n  value: --debug\n- op: remove\n  path: /metadata/annotations/description\n- op: test\n  path: /kind\n  value: Deployment\n",
    );
    let ops = json6902::parse_ops(&ops_node).expect("ops");
    g.bench_function("json6902 4 ops on a Deployment", |b| {
        b.iter_batched(
            || dest.clone(),
            |mut d| json6902::patch(&mut d, &ops).expect("applies"),
            BatchSize::SmallInput,
        )
    });
    g.finish();
}

/// Merges and patches of 10,000 elements, paired by hash (at the old cost, by scan,
/// these took seconds each). `examples/merge_scaling.rs` (`tools/bench.py --scaling`)
/// takes the same cases to a million.
fn wide(c: &mut Criterion) {
    let n = 10_000;
    let schema = Schema::builtin();
    let cm = schema.root("", "v1", "ConfigMap");
    let deploy = schema.root("apps", "v1", "Deployment");
    let mut map = String::from("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: m\ndata:\n");
    let mut map_patch = String::from("data:\n");
    let mut ops = String::new();
    let mut env = String::from("apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: d\nspec:\n  template:\n    spec:\n      containers:\n      - name: app\n        env:\n");
    let mut env_patch = String::from(
        "spec:\n  template:\n    spec:\n      containers:\n      - name: app\n        env:\n",
    );
    for i in 0..n {
        map.push_str(&format!("  k{i}: v{i}\n"));
        map_patch.push_str(&format!("  k{}: new\n", i + n / 2));
        ops.push_str(&format!(
            "- {{op: add, path: /data/k{}, value: new}}\n",
            i + n / 2
        ));
        env.push_str(&format!("        - name: E{i}\n          value: v{i}\n"));
        env_patch.push_str(&format!(
            "        - name: E{}\n          value: new\n",
            i + n / 2
        ));
    }
    let (map, map_patch, env, env_patch) = (doc(&map), doc(&map_patch), doc(&env), doc(&env_patch));
    let ops = json6902::parse_ops(&doc(&ops)).expect("ops");
    let opts = merge2::Options::default();
    let mut g = c.benchmark_group("wide");
    g.sample_size(20);
    g.throughput(Throughput::Elements(n as u64));
    g.bench_function("merge2 a map of 10000 keys", |b| {
        b.iter_batched(
            || map.clone(),
            |mut d| {
                merge2::merge(
                    &mut d,
                    &map_patch,
                    &Context::new(&schema, cm, &Default::default()).with(opts),
                )
            },
            BatchSize::LargeInput,
        )
    });
    g.bench_function("merge2 an env list of 10000", |b| {
        b.iter_batched(
            || env.clone(),
            |mut d| {
                merge2::merge(
                    &mut d,
                    &env_patch,
                    &Context::new(&schema, deploy, &Default::default()).with(opts),
                )
            },
            BatchSize::LargeInput,
        )
    });
    g.bench_function("jsonmerge a map of 10000 keys", |b| {
        b.iter_batched(
            || map.clone(),
            |mut d| krm_merge::patch::jsonmerge::merge(&mut d, &map_patch),
            BatchSize::LargeInput,
        )
    });
    g.bench_function("json6902 10000 adds to a map of 10000 keys", |b| {
        b.iter_batched(
            || map.clone(),
            |mut d| json6902::patch(&mut d, &ops),
            BatchSize::LargeInput,
        )
    });
    // One operation at the 10,000 places a `[*]` selects: a member added to each element, and
    // one taken from each (the places are walked from the root one by one).
    let mut list = String::from("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: l\nlist:\n");
    for i in 0..n {
        list.push_str(&format!("- name: e{i}\n  value: v{i}\n"));
    }
    let list = doc(&list);
    let fan = json6902::parse_ops(&doc(
        "- {op: add, path: '/list/[*]/image', value: x:1}\n- {op: remove, path: '/list/[*]/value'}\n",
    ))
    .expect("ops");
    // The same reached through aliases (kept, as a library caller hands them): 10,000 places
    // under lists of lists that are aliases of one another.
    let aliased = doc(
        "l0: &l0 [{}, {}, {}, {}, {}, {}, {}, {}, {}, {}]\nl1: &l1 [*l0, *l0, *l0, *l0, *l0, *l0, *l0, *l0, *l0, *l0]\nl2: &l2 [*l1, *l1, *l1, *l1, *l1, *l1, *l1, *l1, *l1, *l1]\ntop: [*l2, *l2, *l2, *l2, *l2, *l2, *l2, *l2, *l2, *l2]\n",
    );
    let through = json6902::parse_ops(&doc(
        "- {op: add, path: '/top/[*]/[*]/[*]/[*]/image', value: x:1}\n",
    ))
    .expect("ops");
    g.bench_function("json6902 [*] add at 10000 places through aliases", |b| {
        b.iter_batched(
            || aliased.clone(),
            |mut d| json6902::patch(&mut d, &through).expect("applies"),
            BatchSize::LargeInput,
        )
    });
    g.bench_function("json6902 [*] add and remove at 10000 places", |b| {
        b.iter_batched(
            || list.clone(),
            |mut d| json6902::patch(&mut d, &fan).expect("applies"),
            BatchSize::LargeInput,
        )
    });
    g.finish();
}

fn function(c: &mut Criterion) {
    let stream = gen::stream(1000);
    let config = yaml::parse_stream(
        "apiVersion: fn.krm-merge.dev/v1alpha1\nkind: Merge\nmetadata:\n  name: bench\nspec:\n  patches:\n  - target: {kind: Deployment}\n    patch: |\n      metadata:\n        labels:\n          env: prod\n  - type: json6902\n    target: {kind: Service}\n    patch: '[{op: remove, path: /spec/ports/1}]'\n  - target: {kind: ConfigMap, name: config-1.*}\n    patch: 'data: {LOG_LEVEL: debug}'\n",
    )
    .expect("config parses")
    .remove(0)
    .root
    .expect("a config");
    let plan = krm_merge::config::plan(&config, None).expect("config validates");
    let mut g = c.benchmark_group("function");
    g.throughput(Throughput::Bytes(stream.len() as u64));
    g.sample_size(20);
    g.bench_function("stream of 1000 resources, 3 patches", |b| {
        b.iter(|| {
            let out = krm_merge::run::run_stream(&stream, &plan, None);
            assert!(!out.failed(), "{:?}", out.results);
            out.text
        })
    });
    g.finish();
}

/// `krm-merge diff`'s library calls on a Pod of 20,000 containers whose odd ones move first
/// (10,000 moves by key), each patch made and then checked by applying it (the rule of
/// `diff::verify`): linear in the list, whatever form the patch takes.
fn diff(c: &mut Criterion) {
    use krm_merge::diff::{json6902 as json_diff, jsonmerge as merge_diff, three_way, two_way};
    let n = 20_000;
    let pod = |order: &mut dyn Iterator<Item = usize>| {
        let mut s =
            String::from("apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\nspec:\n  containers:\n");
        for i in order {
            s.push_str(&format!("  - name: c{i}\n    image: img:{i}\n"));
        }
        doc(&s)
    };
    let old = pod(&mut (0..n));
    let new = pod(&mut (1..n).step_by(2).chain((0..n).step_by(2)));
    let schema = Schema::builtin();
    let root = schema.root("", "v1", "Pod");
    let opts = krm_merge::diff::Options::default();
    let mut g = c.benchmark_group("diff");
    g.sample_size(10);
    g.throughput(Throughput::Elements(n as u64));
    g.bench_function("merge2, 20000 containers reordered", |b| {
        b.iter(|| two_way::diff(&old, &new, &schema, root, &opts).expect("diff"))
    });
    g.bench_function("json6902, 20000 containers reordered", |b| {
        b.iter(|| json_diff::diff(&old, &new, &schema, root, &opts).expect("diff"))
    });
    g.bench_function("jsonmerge, 20000 containers reordered", |b| {
        b.iter(|| merge_diff::diff(&old, &new, &opts).expect("diff"))
    });
    g.bench_function("three-way, 20000 containers reordered", |b| {
        b.iter(|| three_way::diff(Some(&old), &old, &new, &schema, root, &opts).expect("diff"))
    });
    g.finish();
}

criterion_group!(
    benches,
    parse_and_emit,
    selection,
    walkers,
    wide,
    function,
    diff
);
criterion_main!(benches);
