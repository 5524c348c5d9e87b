//! What the container and catalog tests share: finding the hosts (kpt, kubectl, podman) and the
//! function's image, temporary directories, running commands.
//!
//! A missing host or image skips the test with a message, as in `tests/hosts.rs`; with
//! `KRM_MERGE_REQUIRE_HOSTS=1` (set by `.ci/run`) it is a failure.
#![allow(dead_code)]

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// The image the container tests run: `KRM_MERGE_IMAGE`, or what `tools/build-image.sh` tags.
pub fn image_name() -> String {
    std::env::var("KRM_MERGE_IMAGE").unwrap_or_else(|_| "localhost/krm-merge:dev".to_owned())
}

pub fn required() -> bool {
    std::env::var_os("KRM_MERGE_REQUIRE_HOSTS").is_some()
}

/// The host binary, or `None` (test skipped) when it is missing and not required.
pub fn host(name: &str) -> Option<PathBuf> {
    let found = std::env::var_os("PATH")
        .into_iter()
        .flat_map(|p| std::env::split_paths(&p).collect::<Vec<_>>())
        .map(|d| d.join(name))
        .find(|p| p.is_file());
    if found.is_none() {
        assert!(
            !required(),
            "{name} is not on PATH, and KRM_MERGE_REQUIRE_HOSTS is set"
        );
        eprintln!("skipped: {name} is not on PATH");
    }
    found
}

/// podman and the function's image in its local store, or `None` (skipped) when either is
/// missing and not required.
pub fn podman_image() -> Option<(PathBuf, String)> {
    let podman = host("podman")?;
    let image = image_name();
    let exists = Command::new(&podman)
        .args(["image", "exists", &image])
        .status()
        .expect("run podman")
        .success();
    if !exists {
        assert!(
            !required(),
            "the image {image} is missing (build it with tools/build-image.sh), and \
             KRM_MERGE_REQUIRE_HOSTS is set"
        );
        eprintln!("skipped: no image {image}; build it with tools/build-image.sh");
        return None;
    }
    Some((podman, image))
}

pub fn tmp_dir(suite: &str, name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("krm-merge-{suite}-{}-{name}", std::process::id()));
    let _ = fs::remove_dir_all(&d);
    fs::create_dir_all(&d).expect("temp dir");
    d
}

/// Runs a command to its end; prints what it said when it failed.
pub fn run(cmd: &mut Command) -> Output {
    let out = cmd.output().unwrap_or_else(|e| panic!("run {cmd:?}: {e}"));
    if !out.status.success() {
        eprintln!(
            "{cmd:?} failed ({}):\nstdout: {}\nstderr: {}",
            out.status,
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    }
    out
}

pub fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// Copies a directory tree (files and directories; dot files included).
pub fn copy_dir(from: &Path, to: &Path) {
    fs::create_dir_all(to).expect("create dir");
    for entry in fs::read_dir(from).expect("read dir") {
        let entry = entry.expect("dir entry");
        let target = to.join(entry.file_name());
        if entry.file_type().expect("file type").is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            fs::copy(entry.path(), &target).expect("copy file");
        }
    }
}

/// The repository's root (where Cargo.toml is).
pub fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Whether `KRM_MERGE_UPDATE_EXPECTED=1` asks the tests to rewrite their expected files.
pub fn updating() -> bool {
    std::env::var("KRM_MERGE_UPDATE_EXPECTED").is_ok_and(|v| v == "1" || v == "true")
}

/// A `git` command that reads no user or system configuration.
pub fn git(dir: &Path) -> Command {
    let mut c = Command::new("git");
    c.current_dir(dir)
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_AUTHOR_NAME", "test")
        .env("GIT_AUTHOR_EMAIL", "test@example.com")
        .env("GIT_COMMITTER_NAME", "test")
        .env("GIT_COMMITTER_EMAIL", "test@example.com");
    c
}
