//! Tells the integration tests which hosts they can use, so that a test needing a missing host is
//! reported as ignored instead of passing without having run (tests/it/support.rs, "Hosts").
//!
//! It sets `--cfg host_kpt`, `--cfg host_kubectl` and `--cfg host_pre_commit` when `kpt`,
//! `kubectl` and `pre-commit` are on `PATH`, and
//! `--cfg host_image` when `podman` is on `PATH` and has the function's image
//! (`KRM_MERGE_IMAGE`, by default `localhost/krm-merge:dev`). With `KRM_MERGE_REQUIRE_HOSTS` set
//! (`.ci/run` sets it) it sets them all: nothing is ignored, and a missing host fails its tests.
//! The product does not look at these flags.
//!
//! It runs again when `PATH` or those variables change, and when podman's store of images does.

use std::env;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    for var in ["PATH", "KRM_MERGE_REQUIRE_HOSTS", "KRM_MERGE_IMAGE"] {
        println!("cargo:rerun-if-env-changed={var}");
    }
    let required = env::var_os("KRM_MERGE_REQUIRE_HOSTS").is_some();
    for (cfg, tool) in [
        ("host_kpt", "kpt"),
        ("host_kubectl", "kubectl"),
        ("host_pre_commit", "pre-commit"),
    ] {
        if required || on_path(tool).is_some() {
            println!("cargo:rustc-cfg={cfg}");
        }
    }
    if required || on_path("podman").is_some_and(|podman| has_image(&podman)) {
        println!("cargo:rustc-cfg=host_image");
    }
}

fn on_path(name: &str) -> Option<PathBuf> {
    let path = env::var_os("PATH")?;
    env::split_paths(&path)
        .map(|dir| dir.join(name))
        .find(|file| file.is_file())
}

/// Whether podman's store holds the image. The store's directory of images is watched, so that
/// building or removing the image runs this again. (Before podman's first image there is no
/// such directory to watch: then `touch build.rs` after building the image.)
fn has_image(podman: &Path) -> bool {
    let image =
        env::var("KRM_MERGE_IMAGE").unwrap_or_else(|_| "localhost/krm-merge:dev".to_owned());
    let podman_says = |args: &[&str]| {
        Command::new(podman)
            .args(args)
            .stdin(Stdio::null())
            .stderr(Stdio::null())
            .output()
            .ok()
            .filter(|out| out.status.success())
    };
    let store = podman_says(&[
        "info",
        "--format",
        "{{.Store.GraphRoot}}\n{{.Store.GraphDriverName}}",
    ]);
    if let Some(out) = store {
        let text = String::from_utf8_lossy(&out.stdout).into_owned();
        let mut lines = text.lines();
        if let (Some(root), Some(driver)) = (lines.next(), lines.next()) {
            let images = Path::new(root).join(format!("{driver}-images"));
            // A watched path that does not exist would run this script on every build.
            if images.is_dir() {
                println!("cargo:rerun-if-changed={}", images.display());
            }
        }
    }
    podman_says(&["image", "exists", &image]).is_some()
}
