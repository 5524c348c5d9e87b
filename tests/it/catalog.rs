//! The function's catalog entry (`functions/`) and the top-level package, checked end to end:
//!
//! * every example package under `functions/examples` is rendered twice by `kpt fn render`, once
//!   with its pipeline running the binary (`exec:`, always) and once running the image
//!   (`image:`, when podman and the image are there); after each render the package's `git diff`
//!   must be `.expected/diff.patch`, and the first render's results `.expected/results.yaml`;
//! * `functions/krm-merge/krm-function-definition.yaml` is generated from `krm-merge schema`;
//! * the README's mdtogo sections are `krm-merge --help`; `metadata.yaml` lists the examples;
//! * every functionConfig of the examples and of the documents validates against the schema, and
//!   against the definition's OpenAPI form of it;
//! * the top-level Kptfile's package holds the definition and the examples, nothing else.
//!
//! `KRM_MERGE_UPDATE_EXPECTED=1` rewrites the expected files and the definition from what the
//! real thing does; review the change before committing it.

use std::collections::BTreeSet;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::{json, Map, Value};

use crate::support::*;

fn examples() -> Vec<PathBuf> {
    let mut dirs: Vec<PathBuf> = fs::read_dir(root().join("functions/examples"))
        .expect("functions/examples")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.join("Kptfile").is_file())
        .collect();
    dirs.sort();
    assert!(dirs.len() >= 5, "{dirs:?}");
    dirs
}

fn read(p: &Path) -> String {
    fs::read_to_string(p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

fn name(p: &Path) -> String {
    p.file_name().expect("name").to_string_lossy().into_owned()
}

/// `.expected/config.yaml`: the subset of the kpt e2e runner's fields these examples use.
struct Expect {
    image: String,
    exit_code: i64,
}

fn expect(example: &Path) -> Expect {
    let cfg = docs(&read(&example.join(".expected/config.yaml")))
        .pop()
        .expect("config.yaml");
    let obj = cfg.as_object().expect("config.yaml is a mapping");
    for key in obj.keys() {
        assert!(
            ["testType", "image", "exitCode"].contains(&key.as_str()),
            "{}: the runner does not know `{key}`",
            example.display()
        );
    }
    assert_eq!(cfg["testType"], "render", "{}", example.display());
    Expect {
        image: cfg["image"].as_str().expect("image").to_owned(),
        exit_code: cfg["exitCode"].as_i64().unwrap_or(0),
    }
}

enum Mode {
    /// The Kptfile's `image:` replaced by `exec:` this build's binary.
    Exec,
    /// The image, under podman.
    Image,
}

/// Renders a copy of the example twice and compares each outcome with `.expected`.
fn check_example(kpt: &Path, example: &Path, mode: &Mode) {
    let ex = expect(example);
    let label = format!(
        "{} ({})",
        name(example),
        match mode {
            Mode::Exec => "exec",
            Mode::Image => "image",
        }
    );
    let tmp = tmp_dir("catalog", &label.replace([' ', '(', ')'], ""));
    let pkg = tmp.join(name(example));
    copy_dir(example, &pkg);
    let exec_line = format!("exec: {}", bin().display());
    let image_line = format!("image: {}", ex.image);
    if let Mode::Exec = mode {
        let kptfile = read(&pkg.join("Kptfile"));
        assert!(
            kptfile.contains(&image_line),
            "{label}: no `{image_line}` in the Kptfile"
        );
        fs::write(
            pkg.join("Kptfile"),
            kptfile.replace(&image_line, &exec_line),
        )
        .expect("write");
    }
    for args in [
        &["init", "-q"][..],
        &["add", "-A"],
        &["commit", "-q", "-m", "before"],
    ] {
        assert!(run(git(&pkg).args(args)).status.success());
    }
    // What kpt and git print names the binary in exec mode: say it as the image does.
    let normalize = |s: String| s.replace(&exec_line, &image_line);
    let expected_dir = example.join(".expected");
    for round in 0..2 {
        let results = tmp.join(format!("results-{round}"));
        fs::create_dir_all(&results).expect("results dir");
        let mut cmd = Command::new(kpt);
        cmd.args(["fn", "render", "--results-dir"])
            .arg(&results)
            .arg(&pkg)
            .env("KPT_FN_RUNTIME", "podman");
        match mode {
            Mode::Exec => cmd.arg("--allow-exec"),
            Mode::Image => cmd.args(["--image-pull-policy", "never"]),
        };
        let out = run(&mut cmd);
        assert_eq!(
            i64::from(out.status.code().unwrap_or(-1)),
            ex.exit_code,
            "{label} round {round}: {}",
            text(&out.stderr)
        );
        assert!(run(git(&pkg).args(["add", "-A"])).status.success());
        let diff = run(git(&pkg).args(["diff", "--cached", "--no-color", "--no-ext-diff"]));
        let diff = normalize(text(&diff.stdout));
        let got_results = normalize(read(&results.join("results.yaml")));
        if updating() {
            if round == 0 {
                fs::write(expected_dir.join("diff.patch"), &diff).expect("write");
                fs::write(expected_dir.join("results.yaml"), &got_results).expect("write");
            }
            continue;
        }
        assert_eq!(
            diff,
            read(&expected_dir.join("diff.patch")),
            "{label} round {round}: the package's diff"
        );
        // The first render's results are the example's; a second render may say less (a
        // merge3 conflict is resolved by then) but must not fail.
        if round == 0 {
            assert_eq!(
                got_results.trim_end(),
                read(&expected_dir.join("results.yaml")).trim_end(),
                "{label}: the results"
            );
        }
    }
}

#[test]
#[cfg_attr(not(host_kpt), ignore = "needs kpt on PATH")]
fn examples_render_as_expected_with_exec() {
    let kpt = host("kpt");
    for example in examples() {
        check_example(&kpt, &example, &Mode::Exec);
    }
}

#[test]
#[cfg_attr(
    not(all(host_kpt, host_image)),
    ignore = "needs kpt, podman and the image (tools/build-image.sh)"
)]
fn examples_render_as_expected_with_the_image() {
    let kpt = host("kpt");
    let (_, image) = podman_image();
    for example in examples() {
        assert_eq!(expect(&example).image, image, "{}", example.display());
        check_example(&kpt, &example, &Mode::Image);
    }
}

/// The documents of a YAML stream as text, sorted (the standalone filter writes them in input
/// order, kpt into files).
fn documents(stream: &str) -> Vec<String> {
    let mut d: Vec<String> = format!("\n{stream}")
        .split("\n---\n")
        .map(|s| s.trim_matches('\n').to_owned())
        .filter(|s| !s.is_empty())
        .collect();
    d.sort();
    d
}

/// The standalone filter, on the example's files and on stdin, gives the documents the
/// rendered package holds: `.expected/diff.patch` applied to the example.
#[test]
fn examples_through_the_standalone_filter() {
    for example in examples() {
        let tmp = tmp_dir("catalog", &format!("standalone-{}", name(&example)));
        let rendered = tmp.join("rendered");
        copy_dir(&example, &rendered);
        let apply = run(git(&rendered)
            .args(["apply", "--whitespace=nowarn"])
            .arg(example.join(".expected/diff.patch")));
        assert!(apply.status.success(), "{}", example.display());
        let resources = |dir: &Path| -> Vec<PathBuf> {
            let mut files: Vec<PathBuf> = fs::read_dir(dir)
                .expect("dir")
                .map(|e| e.expect("entry").path())
                .filter(|p| {
                    let n = name(p);
                    n.ends_with(".yaml") && n != "fn-config.yaml"
                })
                .collect();
            files.sort();
            files
        };
        let mut want: Vec<String> = resources(&rendered)
            .iter()
            .flat_map(|f| documents(&read(f)))
            .collect();
        want.sort();
        let config = example.join("fn-config.yaml");
        let config = config.to_str().expect("utf8");
        let files = resources(&example);
        let mut args = vec!["--config", config];
        args.extend(files.iter().map(|f| f.to_str().expect("utf8")));
        let from_files = krm(&args, "");
        assert_eq!(
            from_files.code,
            0,
            "{}: {}",
            example.display(),
            from_files.stderr
        );
        let stdin: Vec<String> = files.iter().map(|f| read(f)).collect();
        let from_stdin = krm(&["--config", config], &stdin.join("---\n"));
        assert_eq!(
            from_stdin.code,
            0,
            "{}: {}",
            example.display(),
            from_stdin.stderr
        );
        assert_eq!(
            from_files.stdout,
            from_stdin.stdout,
            "{}",
            example.display()
        );
        assert_eq!(documents(&from_files.stdout), want, "{}", example.display());
    }
}

// ----- the definition -----------------------------------------------------------------------

fn json_schema() -> Value {
    let out = Command::new(bin()).arg("schema").output().expect("schema");
    assert!(out.status.success());
    serde_json::from_slice(&out.stdout).expect("the schema is JSON")
}

/// The JSON Schema (draft 2020-12) that `krm-merge schema` prints, in the OpenAPI v3 dialect of
/// CustomResourceDefinitions that a `KRMFunctionDefinition` carries: `nullable` instead of a
/// `null` type, one type per schema (free-form values preserve unknown fields), `enum`
/// instead of `const`. `additionalProperties: false` stays: the function rejects unknown fields.
fn openapi(schema: &Value) -> Value {
    let Value::Object(m) = schema else {
        return schema.clone();
    };
    let mut out = Map::new();
    let mut nullable = false;
    for (key, value) in m {
        match (key.as_str(), value) {
            ("$schema", _) => {}
            ("type", Value::Array(types)) => {
                let real: Vec<&Value> = types.iter().filter(|t| *t != "null").collect();
                nullable |= real.len() < types.len();
                if real.len() == 1 {
                    out.insert("type".into(), real[0].clone());
                } else {
                    out.insert("x-kubernetes-preserve-unknown-fields".into(), json!(true));
                }
            }
            ("enum", Value::Array(values)) => {
                nullable |= values.iter().any(Value::is_null);
                let values: Vec<Value> = values.iter().filter(|v| !v.is_null()).cloned().collect();
                out.insert("enum".into(), Value::Array(values));
            }
            ("anyOf", Value::Array(branches)) => {
                let real: Vec<&Value> = branches
                    .iter()
                    .filter(|b| b.get("type") != Some(&json!("null")))
                    .collect();
                nullable |= real.len() < branches.len();
                match real.as_slice() {
                    [one] => {
                        if let Value::Object(inner) = openapi(one) {
                            for (k, v) in inner {
                                if k == "nullable" {
                                    nullable = true;
                                } else {
                                    out.entry(k).or_insert(v);
                                }
                            }
                        }
                    }
                    // A value of several types (a string, or the object itself).
                    _ => {
                        out.insert("x-kubernetes-preserve-unknown-fields".into(), json!(true));
                    }
                }
            }
            ("oneOf", Value::Array(branches))
                if branches.iter().all(|b| b.get("const").is_some()) =>
            {
                out.insert("type".into(), json!("string"));
                let values = branches.iter().map(|b| b["const"].clone()).collect();
                out.insert("enum".into(), Value::Array(values));
            }
            ("additionalProperties", Value::Bool(true)) => {
                out.insert("x-kubernetes-preserve-unknown-fields".into(), json!(true));
            }
            ("properties", Value::Object(props)) => {
                let props = props.iter().map(|(k, v)| (k.clone(), openapi(v))).collect();
                out.insert(key.clone(), Value::Object(props));
            }
            ("items", v) => {
                out.insert(key.clone(), openapi(v));
            }
            ("oneOf" | "allOf", Value::Array(branches)) => {
                out.insert(
                    key.clone(),
                    Value::Array(branches.iter().map(openapi).collect()),
                );
            }
            _ => {
                // Outer descriptions and defaults win over a branch's.
                out.insert(key.clone(), value.clone());
            }
        }
    }
    if nullable {
        out.insert("nullable".into(), json!(true));
    }
    Value::Object(out)
}

/// The generated definition file.
fn definition() -> String {
    let examples: Vec<Value> = examples()
        .iter()
        .map(|e| json!(format!("functions/examples/{}/README.md", name(e))))
        .collect();
    let mut schema = openapi(&json_schema());
    if let Value::Object(m) = &mut schema {
        m.remove("title");
    }
    let def = json!({
        "apiVersion": "config.kubernetes.io/v1alpha1",
        "kind": "KRMFunctionDefinition",
        "metadata": {
            "name": "merges.fn.krm-merge.dev",
            "annotations": {"config.kubernetes.io/local-config": "true"},
        },
        "spec": {
            "group": "fn.krm-merge.dev",
            "names": {"kind": "Merge"},
            "description": "Merge and patch the resources of a package: strategic merge, 3-way merge, JSON 6902, JSON merge patch and kubectl apply, keeping comments and styles.",
            "publisher": "krm-merge",
            "home": "functions/krm-merge/README.md",
            "tags": ["mutator"],
            "versions": [{
                "name": "v1alpha1",
                "usage": "functions/krm-merge/README.md",
                "examples": examples,
                "license": "Apache-2.0",
                "runtime": {"container": {"image": "localhost/krm-merge:dev"}},
                "schema": {"openAPIV3Schema": schema},
            }],
        },
    });
    let mut out = String::from(
        "# The functionConfig's schema as a KRMFunctionDefinition, generated from `krm-merge schema`\n\
         # by tests/it/catalog.rs: do not edit;\n\
         # `KRM_MERGE_UPDATE_EXPECTED=1 cargo test --test it catalog::` rewrites it.\n",
    );
    krm_merge::yaml::emit_document(
        &krm_merge::yaml::Document::new(krm_merge::yaml::from_json(&def)),
        &mut out,
    );
    out
}

const DEFINITION: &str = "functions/krm-merge/krm-function-definition.yaml";

#[test]
fn the_function_definition_is_generated_from_the_schema() {
    let want = definition();
    let path = root().join(DEFINITION);
    if updating() {
        fs::write(&path, &want).expect("write");
        return;
    }
    assert!(
        read(&path) == want,
        "{DEFINITION} is not what `krm-merge schema` gives: run \
         KRM_MERGE_UPDATE_EXPECTED=1 cargo test --test it catalog:: and review the change"
    );
}

// ----- the README and metadata ----------------------------------------------------------------

fn section<'a>(readme: &'a str, name: &str) -> &'a str {
    readme
        .split(&format!("<!--mdtogo:{name}-->"))
        .nth(1)
        .and_then(|s| s.split("<!--mdtogo-->").next())
        .unwrap_or_else(|| panic!("no mdtogo {name} section"))
        .trim()
}

#[test]
fn the_readme_sections_are_the_help() {
    let readme = read(&root().join("functions/krm-merge/README.md"));
    let help = text(
        &Command::new(bin())
            .arg("--help")
            .output()
            .expect("help")
            .stdout,
    );
    let (first, rest) = help.split_once('\n').expect("help lines");
    assert_eq!(
        Some(section(&readme, "Short")),
        first.strip_prefix("krm-merge: "),
        "the Short section is the first line of --help"
    );
    assert_eq!(
        section(&readme, "Long"),
        format!("```text\n{}\n```", rest.trim()),
        "the Long section is the rest of --help"
    );
    assert!(section(&readme, "Examples").contains("kpt fn eval"));
}

#[test]
fn the_metadata_lists_the_examples_and_the_image() {
    let meta = docs(&read(&root().join("functions/krm-merge/metadata.yaml")))
        .pop()
        .expect("metadata.yaml");
    let listed: BTreeSet<String> = meta["examplePackageURLs"]
        .as_array()
        .expect("examplePackageURLs")
        .iter()
        .map(|v| v.as_str().expect("a path").to_owned())
        .collect();
    let present: BTreeSet<String> = examples()
        .iter()
        .map(|e| format!("functions/examples/{}", name(e)))
        .collect();
    assert_eq!(listed, present);
    for example in examples() {
        assert!(expect(&example)
            .image
            .starts_with(&format!("{}:", meta["image"].as_str().expect("image"))));
        assert!(example.join("README.md").is_file(), "{}", example.display());
        assert_eq!(read(&example.join(".krmignore")).trim(), ".expected");
    }
}

// ----- schema validation ----------------------------------------------------------------------

/// Every Merge functionConfig the project shows: the examples' config files, the quickstart's,
/// and the YAML blocks of the documents (the README, the catalog entry's, `doc/*.md`).
fn documented_configs() -> Vec<(String, Value)> {
    let mut found = Vec::new();
    let mut files: Vec<PathBuf> = examples()
        .iter()
        .map(|e| e.join("fn-config.yaml"))
        .collect();
    files.push(root().join("examples/quickstart/fn.yaml"));
    for f in files {
        for d in docs(&read(&f)) {
            found.push((f.display().to_string(), d));
        }
    }
    let mut documents = vec![
        "README.md".to_owned(),
        "functions/krm-merge/README.md".to_owned(),
    ];
    for doc in fs::read_dir(root().join("doc")).expect("doc/") {
        let path = doc.expect("entry").path();
        if path.extension().is_some_and(|e| e == "md") {
            documents.push(format!("doc/{}", name(&path)));
        }
    }
    for readme in documents {
        let text = read(&root().join(&readme));
        for (i, block) in text.split("```yaml\n").skip(1).enumerate() {
            let block = block.split("\n```").next().expect("a block");
            if !block.contains("apiVersion: fn.krm-merge.dev/") {
                continue;
            }
            for d in docs(block) {
                found.push((format!("{readme}, YAML block {i}"), d));
            }
        }
    }
    let merges = found.iter().filter(|(_, d)| d["kind"] == "Merge").count();
    assert!(merges >= 9, "only {merges} configs found");
    found
        .into_iter()
        .filter(|(_, d)| d["kind"] == "Merge")
        .collect()
}

/// The definition's schema read as draft 4 JSON Schema, OpenAPI's `nullable` spelled out.
fn draft4(schema: &Value) -> Value {
    match schema {
        Value::Object(m) => {
            let mut out: Map<String, Value> =
                m.iter().map(|(k, v)| (k.clone(), draft4(v))).collect();
            if out.remove("nullable") == Some(json!(true)) {
                if let Some(t) = out.get("type").cloned() {
                    out.insert("type".into(), json!([t, "null"]));
                }
                if let Some(Value::Array(e)) = out.get_mut("enum") {
                    e.push(Value::Null);
                }
            }
            Value::Object(out)
        }
        Value::Array(a) => Value::Array(a.iter().map(draft4).collect()),
        other => other.clone(),
    }
}

fn validators() -> Vec<(&'static str, jsonschema::Validator)> {
    let def = docs(&read(&root().join(DEFINITION)))
        .pop()
        .expect("definition");
    let openapi = draft4(&def["spec"]["versions"][0]["schema"]["openAPIV3Schema"]);
    vec![
        (
            "krm-merge schema",
            jsonschema::validator_for(&json_schema()).expect("a valid schema"),
        ),
        (
            "the KRMFunctionDefinition",
            jsonschema::draft4::new(&openapi).expect("a valid draft 4 schema"),
        ),
    ]
}

#[test]
fn every_documented_config_validates_against_the_schema() {
    let validators = validators();
    for (place, config) in documented_configs() {
        for (which, v) in &validators {
            let errors: Vec<String> = v
                .iter_errors(&config)
                .map(|e| format!("{} at {}", e, e.instance_path()))
                .collect();
            assert!(errors.is_empty(), "{place} against {which}: {errors:#?}");
        }
    }
}

#[test]
fn the_schemas_reject_what_the_function_rejects() {
    let validators = validators();
    let base = json!({
        "apiVersion": "fn.krm-merge.dev/v1alpha1",
        "kind": "Merge",
        "metadata": {"name": "x"},
        "spec": {"patches": [{"patch": "kind: A", "target": {"kind": "A"}}]},
    });
    let bad: Vec<(&str, Value)> = vec![
        (
            "an unknown field",
            json!({"spec": {"patches": [{"patch": "a: b", "colour": "red"}]}}),
        ),
        (
            "an unknown type",
            json!({"spec": {"patches": [{"patch": "a: b", "type": "replace"}]}}),
        ),
        (
            "a bad option",
            json!({"spec": {"patches": [{"patch": "a: b", "options": {"newListItems": "middle"}}]}}),
        ),
        (
            "a number for a name",
            json!({"spec": {"patches": [{"patch": "a: b", "target": {"name": 5}}]}}),
        ),
        (
            "a patch list that is a map",
            json!({"spec": {"patches": {"patch": "a: b"}}}),
        ),
        ("another kind", json!({"kind": "Merger"})),
    ];
    for (v_name, v) in &validators {
        assert!(v.is_valid(&base), "{v_name} rejects a valid config");
        for (what, change) in &bad {
            let mut config = base.clone();
            for (k, val) in change.as_object().expect("map") {
                config[k] = val.clone();
            }
            assert!(!v.is_valid(&config), "{v_name} accepts {what}");
        }
    }
}

// ----- the top-level package ------------------------------------------------------------------

#[test]
#[cfg_attr(not(host_kpt), ignore = "needs kpt on PATH")]
fn the_top_level_package_holds_the_definition_and_the_examples() {
    let kpt = host("kpt");
    let out = run(Command::new(&kpt)
        .args(["fn", "source", "."])
        .current_dir(root()));
    assert!(out.status.success());
    let rl = docs(&text(&out.stdout)).pop().expect("a ResourceList");
    let mut paths: Vec<String> = rl["items"]
        .as_array()
        .expect("items")
        .iter()
        .map(|i| {
            i["metadata"]["annotations"]["internal.config.kubernetes.io/path"]
                .as_str()
                .expect("a path")
                .to_owned()
        })
        .collect();
    paths.sort();
    paths.dedup();
    let mut want = vec!["Kptfile".to_owned(), DEFINITION.to_owned()];
    for example in examples() {
        let dir = format!("functions/examples/{}", name(&example));
        for entry in fs::read_dir(&example).expect("example dir") {
            let file = name(&entry.expect("entry").path());
            if file == "Kptfile" || file.ends_with(".yaml") {
                want.push(format!("{dir}/{file}"));
            }
        }
    }
    want.sort();
    assert_eq!(paths, want);
}
