//! The container image end to end: `kpt fn eval --image`, `kpt fn render` with an `image:`
//! pipeline and `kpt fn doc` (all with `KPT_FN_RUNTIME=podman`), and `kubectl kustomize` with a
//! `container:` transformer through podman's docker compatibility.
//!
//! These tests need podman and the image `tools/build-image.sh` builds (`localhost/krm-merge:dev`,
//! or `KRM_MERGE_IMAGE`), and most of them kpt or kubectl. Where one is missing they are ignored;
//! with `KRM_MERGE_REQUIRE_HOSTS=1` (set by `.ci/run`, which builds the image first) its absence
//! is a failure (tests/it/support.rs, "hosts").
//!
//! The image counts as a host: build.rs asks podman whether its store holds the image when the
//! tests are built, and watches the store's directory of images, so that building or removing
//! the image builds the tests again. A missing image could instead fail the tests (everyone with
//! podman would have to build the image to see `cargo test` pass) or pass them (the silent pass
//! this replaces); asking podman costs a fraction of a second, and only when build.rs runs.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::support::*;

const DEPLOY: &str = "\
# the web tier
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  labels:
    app: web
spec:
  replicas: 1 # raised by the patch
  template:
    spec:
      containers:
        - name: app
          image: \"nginx:1.27\"
          ports: [{containerPort: 8080}]
";

const DEPLOY_PATCHED: &str = "\
# the web tier
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  labels:
    app: web
spec:
  replicas: 3 # raised by the patch
  template:
    spec:
      containers:
        - name: app
          image: \"nginx:1.27\"
          ports: [{containerPort: 8080}]
          env:
            - name: MODE
              value: production
";

const CONFIG: &str = "\
apiVersion: fn.krm-merge.dev/v1alpha1
kind: Merge
metadata:
  name: scale
  annotations:
    config.kubernetes.io/local-config: \"true\"
spec:
  patches:
  - target: {kind: Deployment}
    patch: |
      spec:
        replicas: 3
        template:
          spec:
            containers:
            - name: app
              env:
              - name: MODE
                value: production
";

/// A functionConfig whose JSON patch fails on the Deployment.
const FAILING: &str = "\
apiVersion: fn.krm-merge.dev/v1alpha1
kind: Merge
metadata:
  name: broken
  annotations:
    config.kubernetes.io/local-config: \"true\"
spec:
  patches:
  - type: json6902
    target: {kind: Deployment}
    patch: |
      - {op: remove, path: /spec/paused}
";

/// kpt, podman and the image.
fn kpt_and_image() -> (PathBuf, String) {
    let kpt = host("kpt");
    let (_, image) = podman_image();
    (kpt, image)
}

fn kpt(kpt: &Path, dir: &Path) -> Command {
    let mut c = Command::new(kpt);
    c.current_dir(dir).env("KPT_FN_RUNTIME", "podman");
    c
}

/// What kpt printed, stdout and stderr together (kpt writes its progress to stderr).
fn printed(out: &std::process::Output) -> String {
    format!("{}{}", text(&out.stdout), text(&out.stderr))
}

fn package(dir: &Path, kpt_bin: &Path) {
    fs::create_dir_all(dir).expect("package dir");
    assert!(run(kpt(kpt_bin, dir).args(["pkg", "init", "."]))
        .status
        .success());
    fs::write(dir.join("deploy.yaml"), DEPLOY).expect("write");
}

fn read(p: PathBuf) -> String {
    fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

#[test]
#[cfg_attr(
    not(host_image),
    ignore = "needs podman and the image (tools/build-image.sh)"
)]
fn the_image_is_this_build_static_and_unprivileged() {
    let (podman, image) = podman_image();
    let inspect = |format: &str| {
        let out = run(Command::new(&podman).args(["image", "inspect", "--format", format, &image]));
        assert!(out.status.success());
        text(&out.stdout).trim().to_owned()
    };
    assert_eq!(inspect("{{.Config.User}}"), "65534:65534");
    assert_eq!(
        inspect("{{json .Config.Entrypoint}}"),
        r#"["/usr/local/bin/krm-merge"]"#
    );
    let size: u64 = inspect("{{.Size}}").parse().expect("size");
    assert!(size < 16 << 20, "the image is {size} bytes");
    // Run as kpt and kustomize run it: as nobody, without network, stdin attached.
    for args in [&["--version"][..], &["--help"], &["schema"]] {
        let out = run(Command::new(&podman)
            .args(["run", "--rm", "-i", "--network", "none", "--user", "nobody"])
            .args(["--security-opt=no-new-privileges", &image])
            .args(args));
        assert!(out.status.success(), "{args:?}");
        let here = Command::new(bin())
            .args(args)
            .output()
            .expect("run krm-merge");
        assert_eq!(
            text(&out.stdout),
            text(&here.stdout),
            "`{args:?}` differs between {image} and this build: rebuild the image with \
             tools/build-image.sh"
        );
    }
}

/// The info result of the patch in round `round` of running the function twice: the second run
/// finds its change already made, which is how idempotence shows.
fn round_info(round: usize) -> &'static str {
    if round == 0 {
        "patch[0] (merge2): applied to 1 resource(s)"
    } else {
        "patch[0] (merge2): changed nothing: what it says is already so in the 1 resource it selects"
    }
}

#[test]
#[cfg_attr(
    not(all(host_kpt, host_image)),
    ignore = "needs kpt, podman and the image (tools/build-image.sh)"
)]
fn kpt_fn_eval_image() {
    let (kpt_bin, image) = kpt_and_image();
    let dir = tmp_dir("container", "eval");
    let pkg = dir.join("pkg");
    package(&pkg, &kpt_bin);
    let cfg = dir.join("fn.yaml");
    fs::write(&cfg, CONFIG).expect("write");
    let eval = |extra: &[&str]| {
        run(kpt(&kpt_bin, &pkg)
            .args([
                "fn",
                "eval",
                ".",
                "--image",
                &image,
                "--image-pull-policy",
                "never",
            ])
            .args(extra))
    };
    for round in 0..2 {
        let out = eval(&["--fn-config", cfg.to_str().expect("utf8")]);
        assert!(out.status.success(), "round {round}");
        let said = printed(&out);
        assert!(said.contains(&format!("[PASS] \"{image}\"")), "{said}");
        assert!(
            said.contains(&format!("[info]: {}", round_info(round))),
            "{said}"
        );
        assert_eq!(
            read(pkg.join("deploy.yaml")),
            DEPLOY_PATCHED,
            "round {round}"
        );
    }

    // The ConfigMap that `-- key=value` makes.
    let out = eval(&["--", "kind=Deployment", "patch=spec: {replicas: 5}"]);
    assert!(out.status.success());
    assert_eq!(
        read(pkg.join("deploy.yaml")),
        DEPLOY_PATCHED.replace("replicas: 3", "replicas: 5")
    );

    // A warning passes, printed as kpt prints results.
    let out = eval(&["--", "kind=CronJob", "patch=spec: {suspend: true}"]);
    assert!(out.status.success());
    let said = printed(&out);
    assert!(
        said.contains("[warning]: patch[0] (merge2): target {kind: CronJob} selects no resource"),
        "{said}"
    );

    // An error result: [FAIL], the result with its resource, our stderr line, exit code 1, and
    // no file written.
    fs::write(&cfg, FAILING).expect("write");
    let before = read(pkg.join("deploy.yaml"));
    let out = eval(&["--fn-config", cfg.to_str().expect("utf8")]);
    assert_eq!(out.status.code(), Some(1));
    let said = printed(&out);
    for line in [
        format!("[FAIL] \"{image}\""),
        "[error] apps/v1/Deployment/web: patch[0] (json6902): op 0 (remove /spec/paused): \
         path does not exist"
            .to_owned(),
        "\"krm-merge: error: Deployment web: patch[0] (json6902): op 0 (remove /spec/paused): \
         path does not exist\""
            .to_owned(),
        "Exit code: 1".to_owned(),
    ] {
        assert!(said.contains(&line), "missing {line:?} in:\n{said}");
    }
    assert_eq!(read(pkg.join("deploy.yaml")), before);
}

#[test]
#[cfg_attr(
    not(all(host_kpt, host_image)),
    ignore = "needs kpt, podman and the image (tools/build-image.sh)"
)]
fn kpt_fn_render_image_pipeline() {
    let (kpt_bin, image) = kpt_and_image();
    let dir = tmp_dir("container", "render");
    let pkg = dir.join("pkg");
    package(&pkg, &kpt_bin);
    fs::write(pkg.join("fn.yaml"), CONFIG).expect("write");
    let kptfile = read(pkg.join("Kptfile"));
    fs::write(
        pkg.join("Kptfile"),
        format!(
            "{kptfile}pipeline:\n  mutators:\n    - image: {image}\n      configPath: fn.yaml\n"
        ),
    )
    .expect("write");
    let results = dir.join("results");
    fs::create_dir_all(&results).expect("results dir");
    let render = || {
        run(kpt(&kpt_bin, &pkg)
            .args([
                "fn",
                "render",
                ".",
                "--image-pull-policy",
                "never",
                "--results-dir",
            ])
            .arg(&results))
    };
    for round in 0..2 {
        let out = render();
        assert!(out.status.success(), "round {round}");
        assert_eq!(
            read(pkg.join("deploy.yaml")),
            DEPLOY_PATCHED,
            "round {round}"
        );
        assert_eq!(read(pkg.join("fn.yaml")), CONFIG, "round {round}");
        let res = docs(&read(results.join("results.yaml")));
        assert_eq!(res[0]["exitCode"], 0);
        assert_eq!(res[0]["items"][0]["image"], image.as_str());
        assert_eq!(
            res[0]["items"][0]["results"][0]["message"],
            round_info(round)
        );
    }

    // A failing pipeline: render fails and writes nothing.
    fs::write(pkg.join("fn.yaml"), FAILING).expect("write");
    let out = render();
    assert_eq!(out.status.code(), Some(1));
    let said = printed(&out);
    assert!(said.contains(&format!("[FAIL] \"{image}\"")), "{said}");
    assert!(said.contains("Exit code: 1"), "{said}");
    assert_eq!(read(pkg.join("deploy.yaml")), DEPLOY_PATCHED);
    let res = docs(&read(results.join("results.yaml")));
    assert_eq!(res[0]["exitCode"], 1);
    assert_eq!(res[0]["items"][0]["results"][0]["severity"], "error");
    assert_eq!(
        res[0]["items"][0]["results"][0]["file"]["path"],
        "deploy.yaml"
    );
    assert_eq!(
        res[0]["items"][0]["stderr"],
        "krm-merge: error: Deployment web: patch[0] (json6902): op 0 (remove /spec/paused): \
         path does not exist"
    );
}

#[test]
#[cfg_attr(
    not(all(host_kpt, host_image)),
    ignore = "needs kpt, podman and the image (tools/build-image.sh)"
)]
fn kpt_fn_doc_shows_the_help() {
    let (kpt_bin, image) = kpt_and_image();
    let dir = tmp_dir("container", "doc");
    let out = run(kpt(&kpt_bin, &dir).args(["fn", "doc", "--image", &image]));
    assert!(out.status.success());
    let help = Command::new(bin()).arg("--help").output().expect("help");
    // kpt adds a line break of its own.
    assert_eq!(text(&out.stdout), format!("{}\n", text(&help.stdout)));
}

#[test]
#[cfg_attr(
    not(all(host_kubectl, host_image)),
    ignore = "needs kubectl, podman and the image (tools/build-image.sh)"
)]
fn kubectl_kustomize_container_transformer_through_podman() {
    let kubectl = host("kubectl");
    let (podman, image) = podman_image();
    let dir = tmp_dir("container", "kustomize");
    // kustomize runs `docker run ...`; podman answers to the same command line.
    let shim = dir.join("shim");
    fs::create_dir_all(&shim).expect("shim dir");
    std::os::unix::fs::symlink(&podman, shim.join("docker")).expect("symlink");
    let path = format!(
        "{}:{}",
        shim.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let k = dir.join("k");
    fs::create_dir_all(&k).expect("kustomization dir");
    fs::write(k.join("deploy.yaml"), DEPLOY).expect("write");
    let function = format!(
        "  annotations:\n    config.kubernetes.io/function: |\n      container:\n        image: {image}\n"
    );
    let with_function = |cfg: &str| {
        cfg.replace(
            "  annotations:\n    config.kubernetes.io/local-config: \"true\"\n",
            &function,
        )
    };
    fs::write(k.join("fn.yaml"), with_function(CONFIG)).expect("write");
    fs::write(
        k.join("kustomization.yaml"),
        "resources:\n- deploy.yaml\ntransformers:\n- fn.yaml\n",
    )
    .expect("write");
    let build = || {
        run(Command::new(&kubectl)
            .args(["kustomize", "--enable-alpha-plugins", "."])
            .env("PATH", &path)
            .current_dir(&k))
    };
    let out = build();
    assert!(out.status.success());
    let got = docs(&text(&out.stdout));
    assert_eq!(got.len(), 1, "{}", text(&out.stdout));
    assert_eq!(got[0]["spec"]["replicas"], 3);
    assert_eq!(
        got[0]["spec"]["template"]["spec"]["containers"][0]["env"][0]["value"],
        "production"
    );

    // A failing patch fails the build; our one-line error is what kustomize shows.
    fs::write(k.join("fn.yaml"), with_function(FAILING)).expect("write");
    let out = build();
    assert!(!out.status.success());
    let stderr = text(&out.stderr);
    assert!(
        stderr.contains(
            "krm-merge: error: Deployment web: patch[0] (json6902): op 0 (remove /spec/paused)"
        ),
        "{stderr}"
    );
}
