//! The hosts of `integrations/` and `.pre-commit-hooks.yaml`, each run as its host runs it, and
//! the image's supply-chain data:
//!
//! * the Helm plugin's command as Helm 4 runs a `postrenderer/v1` plugin (its `plugin.yaml`
//!   read, the command expanded with `HELM_PLUGIN_DIR`, `--post-renderer-args` appended, the
//!   rendered chart on stdin), and its script as Helm 3 runs a post-renderer;
//! * the Argo CD plugin's `generate` as `argocd-cmp-server` runs it (no shell, in the
//!   Application's directory of a copy of the repository, with Argo CD's variables), its
//!   discovery, and its sidecar patch applied to a repo server;
//! * the pre-commit hooks, run by `pre-commit` itself on a repository made here;
//! * the SBOM `tools/sbom.py` writes, against Cargo.lock and the crates the built binary holds;
//!   the labels `tools/build-image.sh` gives; and the image's labels and SBOM where podman and
//!   the image are.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use serde_json::Value;

use crate::support::*;

fn read(p: &Path) -> String {
    fs::read_to_string(p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

/// One YAML document of a file, as data.
fn document(p: &Path) -> Value {
    docs(&read(p)).pop().expect("a document")
}

/// A directory whose only entry is `krm-merge`, this build's binary: PATH for the hosts.
fn path_with_krm_merge(dir: &Path) -> std::ffi::OsString {
    let bin_dir = dir.join("bin");
    fs::create_dir_all(&bin_dir).expect("bin");
    let link = bin_dir.join("krm-merge");
    if !link.exists() {
        std::os::unix::fs::symlink(bin(), &link).expect("link");
    }
    let mut paths = vec![bin_dir];
    paths.extend(std::env::split_paths(
        &std::env::var_os("PATH").unwrap_or_default(),
    ));
    std::env::join_paths(paths).expect("PATH")
}

/// Runs `cmd` with `stdin`, to its end.
fn run_with_stdin(cmd: &mut Command, stdin: &str) -> std::process::Output {
    use std::io::Write;
    let mut child = cmd
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("{cmd:?}: {e}"));
    let mut input = child.stdin.take().expect("stdin");
    let text = stdin.to_owned();
    let writer = std::thread::spawn(move || {
        let _ = input.write_all(text.as_bytes());
    });
    let out = child.wait_with_output().expect("wait");
    writer.join().expect("writer");
    out
}

const FN: &str = "\
apiVersion: fn.krm-merge.dev/v1alpha1
kind: Merge
metadata:
  name: web
spec:
  patches:
  - target: {kind: Deployment}
    patch: |
      spec:
        replicas: 3
";

const BROKEN_FN: &str = "\
apiVersion: fn.krm-merge.dev/v1alpha1
kind: Merge
metadata:
  name: broken
spec:
  patches:
  - target: {kind: Deployment}
    type: json6902
    patch: '[{op: remove, path: /spec/paused}]'
";

// ----- Helm -------------------------------------------------------------------------------------

/// What `helm template` writes: a `---` and a `# Source:` comment before each template, and
/// templates that rendered nothing left as empty documents.
const RENDERED: &str = "\
---
# Source: web/templates/service.yaml
apiVersion: v1
kind: Service
metadata:
  name: release-web
  labels:
    helm.sh/chart: web-0.1.0
spec:
  ports:
    - port: 80
---
# Source: web/templates/optional.yaml
---
# Source: web/templates/deployment.yaml
apiVersion: apps/v1
kind: Deployment
metadata:
  name: release-web
spec:
  replicas: 1 # the chart's default
  template:
    spec:
      containers:
        - name: web
          image: \"nginx:1.25\"
";

fn plugin_dir() -> PathBuf {
    root().join("integrations/helm/krm-merge")
}

/// Go's `os.Expand` as Helm's `PrepareCommands` calls it: `$NAME` and `${NAME}` from `env`,
/// unknown names empty.
fn go_expand(s: &str, env: &BTreeMap<&str, String>) -> String {
    let mut out = String::new();
    let mut rest = s;
    while let Some(i) = rest.find('$') {
        out.push_str(&rest[..i]);
        rest = &rest[i + 1..];
        let (name, after) = if let Some(r) = rest.strip_prefix('{') {
            let end = r.find('}').expect("a closed ${");
            (&r[..end], &r[end + 1..])
        } else {
            let end = rest
                .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                .unwrap_or(rest.len());
            (&rest[..end], &rest[end..])
        };
        out.push_str(env.get(name).map_or("", String::as_str));
        rest = after;
    }
    out.push_str(rest);
    out
}

/// The plugin as Helm 4 installs it (`helm plugin install DIR` links DIR into the plugins
/// directory) and runs it: `plugin.yaml` read and checked as Helm's loader checks a v1 plugin,
/// the command of the platform's `platformCommand` split on spaces and expanded, the
/// `--post-renderer-args` appended, `HELM_PLUGIN_NAME` and `HELM_PLUGIN_DIR` added to helm's
/// environment, helm's working directory, the rendered chart on stdin.
fn helm4_post_render(
    work: &Path,
    args: &[&str],
    extra_env: &[(&str, &str)],
) -> std::process::Output {
    let meta = document(&plugin_dir().join("plugin.yaml"));
    assert_eq!(meta["apiVersion"], "v1");
    assert_eq!(meta["type"], "postrenderer/v1");
    assert_eq!(meta["runtime"], "subprocess");
    let name = meta["name"].as_str().expect("name");
    assert!(
        !name.is_empty()
            && name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-'),
        "Helm's plugin name rule: {name}"
    );
    let version = meta["version"].as_str().expect("version");
    assert_eq!(version.split('.').count(), 3, "semver: {version}");
    let allowed: BTreeSet<&str> = [
        "apiVersion",
        "type",
        "name",
        "version",
        "runtime",
        "runtimeConfig",
        "sourceURL",
        "config",
    ]
    .into();
    for key in meta.as_object().expect("a mapping").keys() {
        assert!(
            allowed.contains(key.as_str()),
            "not a field of Helm's v1 plugin.yaml: {key}"
        );
    }
    let commands = meta["runtimeConfig"]["platformCommand"]
        .as_array()
        .expect("platformCommand");
    // Helm takes the first entry whose os and arch are empty or match: here the only one.
    let cmd = commands
        .iter()
        .find(|c| {
            c.get("os").is_none_or(|o| o == "linux") && c.get("arch").is_none_or(|a| a == "amd64")
        })
        .expect("a command for linux");
    let plugins = work.join("plugins");
    fs::create_dir_all(&plugins).expect("plugins");
    let installed = plugins.join(name);
    if !installed.exists() {
        std::os::unix::fs::symlink(plugin_dir(), &installed).expect("install");
    }
    let mut env: BTreeMap<&str, String> = BTreeMap::new();
    env.insert("HELM_PLUGIN_NAME", name.to_owned());
    env.insert("HELM_PLUGIN_DIR", installed.display().to_string());
    let parts: Vec<String> = cmd["command"]
        .as_str()
        .expect("command")
        .split(' ')
        .map(|p| go_expand(p, &env))
        .collect();
    let mut argv: Vec<String> = parts[1..].to_vec();
    if let Some(a) = cmd.get("args").and_then(Value::as_array) {
        argv.extend(a.iter().map(|a| go_expand(a.as_str().expect("arg"), &env)));
    }
    argv.extend(args.iter().map(|a| a.to_string()));
    let mut c = Command::new(&parts[0]);
    c.args(&argv)
        .current_dir(work)
        .env("PATH", path_with_krm_merge(work))
        .env_remove("KRM_MERGE_LOG")
        .env_remove("KRM_MERGE");
    for (k, v) in &env {
        c.env(k, v);
    }
    for (k, v) in extra_env {
        c.env(k, v);
    }
    run_with_stdin(&mut c, RENDERED)
}

#[test]
fn helm4_runs_the_plugin_as_a_post_renderer() {
    let work = tmp_dir("integrations", "helm4");
    fs::write(work.join("fn.yaml"), FN).expect("write");
    let out = helm4_post_render(&work, &["fn.yaml"], &[]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    // Helm 4 refuses a post-renderer's output that is only white space; this is the chart, its
    // comments and empty documents kept, one line changed.
    assert_eq!(
        text(&out.stdout),
        RENDERED.replace(
            "replicas: 1 # the chart's default",
            "replicas: 3 # the chart's default"
        )
    );
    // More --post-renderer-args go to krm-merge: -q silences the warning of a target that
    // selects nothing.
    fs::write(
        work.join("none.yaml"),
        FN.replace("kind: Deployment}", "kind: StatefulSet}"),
    )
    .expect("write");
    let loud = helm4_post_render(&work, &["none.yaml"], &[]);
    assert!(loud.status.success());
    assert!(
        text(&loud.stderr).contains("warning"),
        "{}",
        text(&loud.stderr)
    );
    assert_eq!(text(&loud.stdout), RENDERED);
    let quiet = helm4_post_render(&work, &["none.yaml", "-q"], &[]);
    assert!(quiet.status.success());
    assert_eq!(text(&quiet.stderr), "");
}

#[test]
fn helm4_gets_nothing_from_a_failing_patch_and_the_log_keeps_the_message() {
    let work = tmp_dir("integrations", "helm4-fail");
    fs::write(work.join("broken.yaml"), BROKEN_FN).expect("write");
    let log = work.join("krm-merge.log");
    let out = helm4_post_render(
        &work,
        &["broken.yaml"],
        &[("KRM_MERGE_LOG", log.to_str().expect("path"))],
    );
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(text(&out.stdout), "", "Helm must install nothing");
    // Helm 4 drops the plugin's stderr: the message is in the log.
    assert_eq!(text(&out.stderr), "");
    let logged = read(&log);
    assert!(logged.contains("patch[0] (json6902)"), "{logged}");
    assert!(logged.contains("release-web"), "{logged}");
    // No functionConfig named: a usage error that says what to give.
    let none = helm4_post_render(&work, &[], &[]);
    assert_eq!(none.status.code(), Some(2));
    assert!(text(&none.stderr).contains("--post-renderer-args"));
}

/// Helm 3 runs the post-renderer's path with `--post-renderer-args`, in helm's directory.
#[test]
fn helm3_runs_the_script_as_a_post_renderer() {
    let work = tmp_dir("integrations", "helm3");
    fs::write(work.join("fn.yaml"), FN).expect("write");
    let mut c = Command::new(plugin_dir().join("post-render.sh"));
    c.arg("fn.yaml")
        .current_dir(&work)
        .env("PATH", path_with_krm_merge(&work))
        .env_remove("KRM_MERGE_LOG");
    let out = run_with_stdin(&mut c, RENDERED);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(text(&out.stdout).contains("replicas: 3 # the chart's default"));
    // KRM_MERGE names the binary when it is not on PATH.
    let mut c = Command::new(plugin_dir().join("post-render.sh"));
    c.arg("fn.yaml")
        .current_dir(&work)
        .env("PATH", "/usr/bin:/bin")
        .env("KRM_MERGE", bin());
    let out = run_with_stdin(&mut c, RENDERED);
    assert!(out.status.success(), "{}", text(&out.stderr));
    // Helm 3 shows a failing post-renderer's stderr: the message is there.
    fs::write(work.join("broken.yaml"), BROKEN_FN).expect("write");
    let mut c = Command::new(plugin_dir().join("post-render.sh"));
    c.arg("broken.yaml")
        .current_dir(&work)
        .env("PATH", path_with_krm_merge(&work))
        .env_remove("KRM_MERGE_LOG");
    let out = run_with_stdin(&mut c, RENDERED);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(text(&out.stdout), "");
    assert!(text(&out.stderr).contains("patch[0] (json6902)"));
}

// ----- Argo CD ----------------------------------------------------------------------------------

fn argocd() -> PathBuf {
    root().join("integrations/argocd")
}

const APP_RESOURCES: &str = "\
# The web app, as the repository holds it.
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  replicas: 1
  template:
    spec:
      containers:
      - name: app
        image: registry.example.com/web:1.0
---
apiVersion: v1
kind: Service
metadata:
  name: web
spec:
  ports:
  - port: 80
";

/// The repository as the repo server sends it to the sidecar: a copy in a work directory of
/// its own, the Application at `apps/web`.
fn argocd_repo(name: &str, config: &str) -> (PathBuf, PathBuf) {
    let work = tmp_dir("integrations", name)
        .join("_cmp_server")
        .join("a1b2c");
    let app = work.join("apps/web");
    fs::create_dir_all(&app).expect("app");
    fs::write(app.join("resources.yaml"), APP_RESOURCES).expect("write");
    fs::write(app.join("krm-merge.yaml"), config).expect("write");
    fs::write(app.join("README.md"), "not a resource\n").expect("write");
    fs::create_dir_all(work.join("apps/other")).expect("other");
    fs::write(work.join("apps/other/x.yaml"), APP_RESOURCES).expect("write");
    (work, app)
}

/// `generate` as argocd-cmp-server runs it: the command and its args executed without a
/// shell, in the Application's directory, with the sidecar's environment and Argo CD's
/// variables (the build environment, `plugin.env` as `ARGOCD_ENV_*`, parameters as
/// `PARAM_*` and `ARGOCD_APP_PARAMETERS`).
fn argocd_generate(app: &Path) -> std::process::Output {
    let plugin = document(&argocd().join("plugin.yaml"));
    let gen = &plugin["spec"]["generate"];
    let mut argv: Vec<String> = gen["command"]
        .as_array()
        .expect("command")
        .iter()
        .chain(gen["args"].as_array().into_iter().flatten())
        .map(|v| v.as_str().expect("a string").to_owned())
        .collect();
    // The image's binary, here this build's.
    assert_eq!(argv[0], "/usr/local/bin/krm-merge");
    argv[0] = bin().display().to_string();
    let mut c = Command::new(&argv[0]);
    c.args(&argv[1..])
        .current_dir(app)
        .env_clear()
        // What the image's environment and the pod give the sidecar.
        .env(
            "PATH",
            "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
        )
        .env("HOME", "/home/argocd")
        .env("ARGOCD_APP_NAME", "web")
        .env("ARGOCD_APP_NAMESPACE", "web")
        .env("ARGOCD_APP_PROJECT_NAME", "default")
        .env(
            "ARGOCD_APP_REVISION",
            "f913b6cbf58aa5ae5ca1f8a2b149477aebcbd9d8",
        )
        .env("ARGOCD_APP_REVISION_SHORT", "f913b6c")
        .env("ARGOCD_APP_REVISION_SHORT_8", "f913b6cb")
        .env(
            "ARGOCD_APP_SOURCE_REPO_URL",
            "https://git.example.com/apps.git",
        )
        .env("ARGOCD_APP_SOURCE_PATH", "apps/web")
        .env("ARGOCD_APP_SOURCE_TARGET_REVISION", "HEAD")
        .env("KUBE_VERSION", "1.33.0")
        .env("KUBE_API_VERSIONS", "v1,apps/v1")
        .env("ARGOCD_ENV_FOO", "bar")
        .env(
            "ARGOCD_APP_PARAMETERS",
            r#"[{"name":"mode","string":"fast"}]"#,
        )
        .env("PARAM_MODE", "fast")
        .stdin(Stdio::null());
    c.output().expect("run the generate command")
}

#[test]
fn argocd_generate_runs_krm_merge_in_the_app_directory() {
    let config = FN.replace(
        "target: {kind: Deployment}",
        "target: {kind: Deployment, name: web}",
    );
    let (work, app) = argocd_repo("argocd", &config);
    let plugin = document(&argocd().join("plugin.yaml"));
    assert_eq!(plugin["apiVersion"], "argoproj.io/v1alpha1");
    assert_eq!(plugin["kind"], "ConfigManagementPlugin");
    assert_eq!(plugin["metadata"]["name"], "krm-merge");
    // Discovery: the fileName glob, in the Application's directory only.
    let file_name = plugin["spec"]["discover"]["fileName"]
        .as_str()
        .expect("fileName");
    assert!(app.join(file_name).is_file());
    assert!(!work.join("apps/other").join(file_name).exists());
    // The image runs the binary the command names.
    assert!(read(&root().join("Dockerfile")).contains("ENTRYPOINT [\"/usr/local/bin/krm-merge\"]"));
    let out = argocd_generate(&app);
    assert!(out.status.success(), "{}", text(&out.stderr));
    // What Argo CD gets: Kubernetes objects only (the config and the README left out), the
    // Deployment patched, the app's other directory not read.
    let stdout = text(&out.stdout);
    assert_eq!(
        stdout,
        APP_RESOURCES.replace("replicas: 1", "replicas: 3"),
        "{}",
        text(&out.stderr)
    );
    for d in docs(&stdout) {
        assert!(
            d["apiVersion"].is_string()
                && d["kind"].is_string()
                && d["metadata"]["name"].is_string()
        );
    }
    // The repository's copy is left as it came.
    assert_eq!(read(&app.join("resources.yaml")), APP_RESOURCES);
}

#[test]
fn argocd_generate_fails_with_the_message_on_stderr() {
    let (_, app) = argocd_repo("argocd-fail", BROKEN_FN);
    let out = argocd_generate(&app);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(text(&out.stdout), "");
    let stderr = text(&out.stderr);
    assert!(
        stderr.contains("Deployment web: patch[0] (json6902)"),
        "{stderr}"
    );
}

/// The sidecar patch, applied to a repo server as Argo CD's manifests declare it, gives the
/// container Argo CD's documentation requires.
#[test]
fn argocd_sidecar_patch_makes_the_cmp_sidecar() {
    let dir = tmp_dir("integrations", "argocd-sidecar");
    let repo_server = "\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: argocd-repo-server
  namespace: argocd
spec:
  template:
    spec:
      initContainers:
      - name: copyutil
        image: quay.io/argoproj/argocd:v3.5.1
        volumeMounts:
        - {name: var-files, mountPath: /var/run/argocd}
      containers:
      - name: argocd-repo-server
        image: quay.io/argoproj/argocd:v3.5.1
        volumeMounts:
        - {name: plugins, mountPath: /home/argocd/cmp-server/plugins}
        - {name: var-files, mountPath: /var/run/argocd}
      volumes:
      - {name: var-files, emptyDir: {}}
      - {name: plugins, emptyDir: {}}
";
    let dest = dir.join("repo-server.yaml");
    fs::write(&dest, repo_server).expect("write");
    let patch = argocd().join("repo-server-patch.yaml");
    let out = krm(
        &[
            "merge2",
            patch.to_str().expect("path"),
            dest.to_str().expect("path"),
        ],
        "",
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    let d = docs(&out.stdout).pop().expect("the Deployment");
    let spec = &d["spec"]["template"]["spec"];
    let containers = spec["containers"].as_array().expect("containers");
    assert_eq!(containers.len(), 2);
    assert_eq!(containers[0]["name"], "argocd-repo-server");
    let side = &containers[1];
    assert_eq!(side["name"], "krm-merge");
    assert_eq!(
        side["command"],
        serde_json::json!(["/var/run/argocd/argocd-cmp-server"])
    );
    assert_eq!(side["securityContext"]["runAsUser"], 999);
    assert_eq!(side["securityContext"]["runAsNonRoot"], true);
    let mounts: BTreeMap<String, &Value> = side["volumeMounts"]
        .as_array()
        .expect("mounts")
        .iter()
        .map(|m| (m["mountPath"].as_str().expect("path").to_owned(), m))
        .collect();
    assert_eq!(mounts["/var/run/argocd"]["name"], "var-files");
    assert_eq!(mounts["/home/argocd/cmp-server/plugins"]["name"], "plugins");
    let config = mounts["/home/argocd/cmp-server/config/plugin.yaml"];
    assert_eq!(config["subPath"], "plugin.yaml");
    // A /tmp of its own, not the repo server's.
    assert_ne!(mounts["/tmp"]["name"], "tmp");
    let volumes: BTreeMap<String, &Value> = spec["volumes"]
        .as_array()
        .expect("volumes")
        .iter()
        .map(|v| (v["name"].as_str().expect("name").to_owned(), v))
        .collect();
    for m in mounts.values() {
        assert!(
            volumes.contains_key(m["name"].as_str().expect("name")),
            "{m}"
        );
    }
    // The ConfigMap the documented `kubectl create configmap` makes holds plugin.yaml.
    assert_eq!(
        volumes[config["name"].as_str().expect("name")]["configMap"]["name"],
        "krm-merge-cmp"
    );
}

// ----- pre-commit -------------------------------------------------------------------------------

/// A hook repository holding this working tree's `.pre-commit-hooks.yaml`: a `language:
/// system` hook takes nothing else from its repository.
fn hook_repo(dir: &Path) -> (PathBuf, String) {
    let repo = dir.join("hooks");
    fs::create_dir_all(&repo).expect("hooks");
    fs::copy(
        root().join(".pre-commit-hooks.yaml"),
        repo.join(".pre-commit-hooks.yaml"),
    )
    .expect("copy");
    for args in [
        &["init", "-q", "."][..],
        &["add", "-A"],
        &["commit", "-q", "-m", "hooks"],
    ] {
        assert!(run(git(&repo).args(args)).status.success());
    }
    let rev = text(&run(git(&repo).args(["rev-parse", "HEAD"])).stdout)
        .trim()
        .to_owned();
    (repo, rev)
}

fn pre_commit(dir: &Path, repo: &Path, args: &[&str]) -> std::process::Output {
    Command::new(host("pre-commit"))
        .args(args)
        .current_dir(repo)
        .env("PATH", path_with_krm_merge(dir))
        .env("PRE_COMMIT_HOME", dir.join("pre-commit-home"))
        .env("HOME", dir)
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .stdin(Stdio::null())
        .output()
        .expect("run pre-commit")
}

#[test]
#[cfg_attr(not(host_pre_commit), ignore = "needs pre-commit on PATH")]
fn pre_commit_runs_the_hooks() {
    let dir = tmp_dir("integrations", "pre-commit");
    let (hooks, rev) = hook_repo(&dir);
    let user = dir.join("user");
    copy_dir(&root().join("examples/quickstart"), &user.join("deploy"));
    let original = read(&user.join("deploy/resources.yaml"));
    let config = |id: &str| {
        format!(
            "repos:\n- repo: {}\n  rev: {rev}\n  hooks:\n  - id: {id}\n    args: [--config, deploy/fn.yaml, deploy/]\n",
            hooks.display()
        )
    };
    fs::write(
        user.join(".pre-commit-config.yaml"),
        config("krm-merge-check"),
    )
    .expect("write");
    for args in [&["init", "-q", "."][..], &["add", "-A"]] {
        assert!(run(git(&user).args(args)).status.success());
    }
    // The check fails, shows the diff, and changes nothing.
    let out = pre_commit(&dir, &user, &["run", "--all-files"]);
    let said = text(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{said}{}", text(&out.stderr));
    assert!(said.contains("krm-merge --check"), "{said}");
    assert!(said.contains("Failed"), "{said}");
    assert!(said.contains("+  replicas: 3"), "{said}");
    assert!(said.contains("--- a/deploy/resources.yaml"), "{said}");
    assert_eq!(read(&user.join("deploy/resources.yaml")), original);
    // The in-place hook writes the change; pre-commit fails it for having changed files.
    fs::write(user.join(".pre-commit-config.yaml"), config("krm-merge")).expect("write");
    assert!(run(git(&user).args(["add", "-A"])).status.success());
    let out = pre_commit(&dir, &user, &["run", "--all-files"]);
    let said = text(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{said}");
    assert!(said.contains("files were modified by this hook"), "{said}");
    let cmd_out = Command::new(bin())
        .args(["--config", "fn.yaml", "resources.yaml"])
        .current_dir(root().join("examples/quickstart"))
        .output()
        .expect("run");
    assert_eq!(
        read(&user.join("deploy/resources.yaml")),
        text(&cmd_out.stdout)
    );
    // Once patched, both hooks pass.
    assert!(run(git(&user).args(["add", "-A"])).status.success());
    for id in ["krm-merge", "krm-merge-check"] {
        fs::write(user.join(".pre-commit-config.yaml"), config(id)).expect("write");
        assert!(run(git(&user).args(["add", "-A"])).status.success());
        let out = pre_commit(&dir, &user, &["run", "--all-files"]);
        assert!(out.status.success(), "{id}: {}", text(&out.stdout));
        assert!(text(&out.stdout).contains("Passed"));
    }
    // A commit that touches no YAML does not run them.
    assert!(run(git(&user).args(["commit", "-q", "-m", "patched"]))
        .status
        .success());
    fs::write(user.join("notes.txt"), "x\n").expect("write");
    assert!(run(git(&user).args(["add", "notes.txt"])).status.success());
    let out = pre_commit(&dir, &user, &["run"]);
    assert!(out.status.success());
    assert!(
        text(&out.stdout).contains("Skipped"),
        "{}",
        text(&out.stdout)
    );
}

// ----- supply chain -----------------------------------------------------------------------------

fn sbom() -> Value {
    let out = run(Command::new("python3")
        .arg(root().join("tools/sbom.py"))
        .args(["--created", "2026-01-01T00:00:00Z"])
        .current_dir(root()));
    assert!(out.status.success(), "tools/sbom.py: {}", text(&out.stderr));
    serde_json::from_slice(&out.stdout).expect("JSON")
}

/// `(name, version) -> checksum` of Cargo.lock's registry packages.
fn lock() -> BTreeMap<(String, String), String> {
    let mut out = BTreeMap::new();
    for block in read(&root().join("Cargo.lock"))
        .split("[[package]]")
        .skip(1)
    {
        let field = |k: &str| {
            block
                .lines()
                .find_map(|l| l.strip_prefix(&format!("{k} = \"")))
                .map(|v| v.trim_end_matches('"').to_owned())
        };
        if let (Some(n), Some(v), Some(c)) = (field("name"), field("version"), field("checksum")) {
            out.insert((n, v), c);
        }
    }
    out
}

/// The registry crates whose sources a binary names (panic locations, and debug information
/// where there is some, hold their paths): crates that are in it for sure. (The binary the
/// tests run is built with the dev-dependencies' features too, so only the image's release
/// binary is the one the SBOM describes.)
fn crates_in(binary: &Path) -> BTreeSet<(String, String)> {
    let bytes = fs::read(binary).expect("the binary");
    let hay = String::from_utf8_lossy(&bytes);
    let mut out = BTreeSet::new();
    let mut rest: &str = &hay;
    while let Some(i) = rest.find("index.crates.io-") {
        rest = &rest[i + "index.crates.io-".len()..];
        let Some(slash) = rest.find('/') else { break };
        let after = &rest[slash + 1..];
        let end = after
            .find(|c: char| !(c.is_ascii_alphanumeric() || "-_.+".contains(c)))
            .unwrap_or(after.len());
        let dir = &after[..end];
        // NAME-VERSION: the version starts after the last '-' followed by a digit.
        if let Some(cut) = dir
            .char_indices()
            .filter(|(i, c)| *c == '-' && dir[i + 1..].starts_with(|d: char| d.is_ascii_digit()))
            .map(|(i, _)| i)
            .next_back()
        {
            out.insert((dir[..cut].to_owned(), dir[cut + 1..].to_owned()));
        }
    }
    out
}

#[test]
fn the_sbom_lists_the_binarys_crates_as_cargo_lock_pins_them() {
    let bom = sbom();
    assert_eq!(bom["bomFormat"], "CycloneDX");
    assert_eq!(bom["specVersion"], "1.5");
    assert_eq!(bom["metadata"]["timestamp"], "2026-01-01T00:00:00Z");
    let manifest = read(&root().join("Cargo.toml"));
    let root_c = &bom["metadata"]["component"];
    assert_eq!(root_c["name"], "krm-merge");
    assert!(manifest.contains(&format!(
        "version = \"{}\"",
        root_c["version"].as_str().expect("v")
    )));
    let lock = lock();
    let mut required = BTreeSet::new();
    let mut refs = BTreeSet::from([root_c["bom-ref"].as_str().expect("ref").to_owned()]);
    for c in bom["components"].as_array().expect("components") {
        let key = (
            c["name"].as_str().expect("name").to_owned(),
            c["version"].as_str().expect("version").to_owned(),
        );
        let checksum = lock
            .get(&key)
            .unwrap_or_else(|| panic!("{key:?} is not in Cargo.lock"));
        assert_eq!(c["hashes"][0]["alg"], "SHA-256");
        assert_eq!(&c["hashes"][0]["content"], checksum, "{key:?}");
        assert_eq!(c["purl"], format!("pkg:cargo/{}@{}", key.0, key.1));
        assert!(
            c["licenses"][0]["expression"].is_string(),
            "{key:?} has no license"
        );
        refs.insert(c["bom-ref"].as_str().expect("ref").to_owned());
        match c["scope"].as_str() {
            Some("required") => {
                required.insert(key);
            }
            Some("excluded") => {}
            other => panic!("{key:?}: scope {other:?}"),
        }
    }
    // The dependencies of Cargo.toml are there; the dev-dependencies and the optional man page
    // generator are not; proc-macros only run at build time.
    let names: BTreeMap<String, String> = bom["components"]
        .as_array()
        .expect("components")
        .iter()
        .map(|c| {
            (
                c["name"].as_str().expect("n").to_owned(),
                c["scope"].as_str().expect("s").to_owned(),
            )
        })
        .collect();
    for dep in [
        "granit-parser",
        "regex",
        "serde_json",
        "clap",
        "similar",
        "schemars",
    ] {
        assert_eq!(
            names.get(dep).map(String::as_str),
            Some("required"),
            "{dep}"
        );
    }
    for dev in [
        "criterion",
        "proptest",
        "jsonschema",
        "assert_cmd",
        "json-patch",
        "clap_mangen",
    ] {
        assert!(!names.contains_key(dev), "{dev} is not in the binary");
    }
    assert_eq!(
        names.get("serde_derive").map(String::as_str),
        Some("excluded")
    );
    // The graph names only listed components.
    for d in bom["dependencies"].as_array().expect("dependencies") {
        assert!(refs.contains(d["ref"].as_str().expect("ref")));
        for on in d["dependsOn"].as_array().expect("dependsOn") {
            assert!(refs.contains(on.as_str().expect("ref")), "{on}");
        }
    }
    // The same inputs give the same file.
    assert_eq!(sbom(), bom);
}

/// The labels `tools/build-image.sh` gives, from a repository laid out as a clone: the
/// version, the commit (dirty or not), the time (`SOURCE_DATE_EPOCH`), the license, and the
/// origin without its credentials.
#[test]
fn the_image_labels_say_what_was_built() {
    let dir = tmp_dir("integrations", "labels");
    fs::create_dir_all(dir.join("tools")).expect("tools");
    fs::copy(
        root().join("tools/build-image.sh"),
        dir.join("tools/build-image.sh"),
    )
    .expect("copy");
    fs::copy(root().join("Cargo.toml"), dir.join("Cargo.toml")).expect("copy");
    for args in [
        &["init", "-q", "."][..],
        &["add", "-A"],
        &["commit", "-q", "-m", "x"],
    ] {
        assert!(run(git(&dir).args(args)).status.success());
    }
    let head = text(&run(git(&dir).args(["rev-parse", "HEAD"])).stdout)
        .trim()
        .to_owned();
    let labels = |origin: Option<&str>| -> BTreeMap<String, String> {
        let _ = run(git(&dir).args(["remote", "remove", "origin"]));
        if let Some(o) = origin {
            assert!(run(git(&dir).args(["remote", "add", "origin", o]))
                .status
                .success());
        }
        let out = run(Command::new("bash")
            .arg(dir.join("tools/build-image.sh"))
            .arg("--print-labels")
            .env("SOURCE_DATE_EPOCH", "1767225600")
            .env("GIT_CONFIG_GLOBAL", "/dev/null"));
        assert!(out.status.success(), "{}", text(&out.stderr));
        text(&out.stdout)
            .lines()
            .map(|l| {
                let (k, v) = l.split_once('=').expect("KEY=VALUE");
                (
                    k.strip_prefix("org.opencontainers.image.")
                        .expect("an OCI key")
                        .to_owned(),
                    v.to_owned(),
                )
            })
            .collect()
    };
    let l = labels(Some("https://builder:s3cret@git.example.com/krm-merge.git"));
    let manifest = read(&root().join("Cargo.toml"));
    assert!(manifest.contains(&format!("version = \"{}\"", l["version"])));
    assert!(manifest.contains(&format!("license = \"{}\"", l["licenses"])));
    assert_eq!(l["title"], "krm-merge");
    assert_eq!(l["revision"], head);
    assert_eq!(l["created"], "2026-01-01T00:00:00Z");
    assert_eq!(l["source"], "https://git.example.com/krm-merge.git");
    assert!(!l.values().any(|v| v.contains("s3cret")));
    assert!(l["description"].contains("KRM function"));
    // A local origin says nothing to whoever pulls the image; a changed tree is dirty.
    let local = labels(Some("/home/someone/krm-merge"));
    assert!(!local.contains_key("source"));
    fs::write(dir.join("Cargo.toml"), manifest + "\n").expect("write");
    assert_eq!(labels(None)["revision"], format!("{head}-dirty"));
}

/// The image built from this tree carries the labels and the SBOM.
#[test]
#[cfg_attr(
    not(host_image),
    ignore = "needs podman and the image (tools/build-image.sh)"
)]
fn the_image_carries_its_labels_and_sbom() {
    let (podman, image) = podman_image();
    let inspect = |format: &str| {
        let out = run(Command::new(&podman).args(["image", "inspect", "--format", format, &image]));
        assert!(out.status.success());
        text(&out.stdout).trim().to_owned()
    };
    let label = |k: &str| {
        inspect(&format!(
            "{{{{index .Labels \"org.opencontainers.image.{k}\"}}}}"
        ))
    };
    let manifest = read(&root().join("Cargo.toml"));
    assert!(manifest.contains(&format!("version = \"{}\"", label("version"))));
    assert!(manifest.contains(&format!("license = \"{}\"", label("licenses"))));
    let head = text(&run(git(&root()).args(["rev-parse", "HEAD"])).stdout)
        .trim()
        .to_owned();
    assert!(
        label("revision").starts_with(&head),
        "the image was built from {}, this tree is {head}: rebuild it with tools/build-image.sh",
        label("revision")
    );
    assert!(label("created").ends_with('Z'));
    let dir = tmp_dir("integrations", "image-sbom");
    let created = run(Command::new(&podman).args(["create", &image]));
    assert!(created.status.success());
    let id = text(&created.stdout).trim().to_owned();
    let copied = run(Command::new(&podman)
        .args([
            "cp",
            &format!("{id}:/usr/share/doc/krm-merge/sbom.cdx.json"),
        ])
        .arg(dir.join("sbom.json")));
    let _ = run(Command::new(&podman).args(["rm", &id]));
    assert!(copied.status.success());
    let in_image: Value = serde_json::from_str(&read(&dir.join("sbom.json"))).expect("JSON");
    assert_eq!(in_image["components"], sbom()["components"]);
    // Every crate the image's binary names is in its SBOM, as linked into it.
    let copied = run(Command::new(&podman).args(["create", &image]));
    let id = text(&copied.stdout).trim().to_owned();
    let got = run(Command::new(&podman)
        .args(["cp", &format!("{id}:/usr/local/bin/krm-merge")])
        .arg(dir.join("krm-merge")));
    let _ = run(Command::new(&podman).args(["rm", &id]));
    assert!(got.status.success());
    let required: BTreeSet<(String, String)> = in_image["components"]
        .as_array()
        .expect("components")
        .iter()
        .filter(|c| c["scope"] == "required")
        .map(|c| {
            (
                c["name"].as_str().expect("name").to_owned(),
                c["version"].as_str().expect("version").to_owned(),
            )
        })
        .collect();
    let linked = crates_in(&dir.join("krm-merge"));
    assert!(linked.len() >= 10, "{linked:?}");
    for k in &linked {
        assert!(
            required.contains(k),
            "{k:?} is in the binary but not required in the SBOM"
        );
    }
    assert_eq!(
        in_image["metadata"]["timestamp"].as_str(),
        Some(label("created").as_str())
    );
}
