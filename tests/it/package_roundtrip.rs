//! Generated packages (benches/support/gen.rs: Deployments, Services, ConfigMaps with comments,
//! quoting, flow values and block scalars) come back byte for byte when no patch touches them,
//! as a plain stream and as a ResourceList laid out the way kpt writes one; and a patch that
//! touches some changes only the lines it must.

#[path = "../../benches/support/gen.rs"]
mod gen;

use crate::support::*;

const NOTHING: &str = "apiVersion: fn.krm-merge.dev/v1alpha1\nkind: Merge\nmetadata:\n  name: nothing\nspec:\n  patches:\n  - target: {kind: Nope}\n    patch: 'metadata: {labels: {x: y}}'\n";

const SCALE: &str = "apiVersion: fn.krm-merge.dev/v1alpha1\nkind: Merge\nmetadata:\n  name: scale\nspec:\n  patches:\n  - target: {kind: Deployment, name: app-1.*}\n    patch: |\n      spec:\n        replicas: 9\n";

fn config_file(name: &str, text: &str) -> String {
    let dir = std::env::temp_dir().join(format!("krm-merge-pkg-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let p = dir.join(name);
    std::fs::write(&p, text).expect("write");
    p.display().to_string()
}

#[test]
fn untouched_stream_is_byte_identical() {
    let stream = gen::stream(2000);
    let out = krm(
        &["--config", &config_file("nothing.yaml", NOTHING)],
        &stream,
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(out.stdout == stream, "the stream changed");
}

#[test]
fn untouched_resource_list_is_byte_identical() {
    let rl = gen::resource_list(2000, NOTHING);
    let out = krm(&[], &rl);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let items = out
        .stdout
        .split_once("results:")
        .map_or(out.stdout.as_str(), |(a, _)| a);
    assert!(items == rl, "the ResourceList changed");
}

#[test]
fn a_patch_changes_only_its_lines() {
    let stream = gen::stream(400);
    let out = krm(&["--config", &config_file("scale.yaml", SCALE)], &stream);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let (before, after): (Vec<&str>, Vec<&str>) =
        (stream.lines().collect(), out.stdout.lines().collect());
    assert_eq!(before.len(), after.len());
    let changed: Vec<(&str, &str)> = before
        .iter()
        .zip(&after)
        .filter(|(a, b)| a != b)
        .map(|(a, b)| (*a, *b))
        .collect();
    // app-1, app-100..101, app-104..105, app-108..109, ... : Deployments are i % 4 in {0, 1}.
    let expected = (0..400)
        .filter(|i| i % 4 < 2 && i.to_string().starts_with('1'))
        .count();
    assert_eq!(changed.len(), expected, "{changed:?}");
    assert!(
        changed
            .iter()
            .all(|(a, b)| a.starts_with("  replicas: ") && *b == "  replicas: 9"),
        "{changed:?}"
    );
}
