//! Write-back's transaction under injected failures: whatever call fails, the files are all old
//! or all new, and no temporary is left.

use std::cell::Cell;
use std::collections::BTreeMap;
use std::os::unix::fs::{MetadataExt, PermissionsExt};

use proptest::prelude::*;

use super::*;

/// The real file system, with the `fail_at`-th call (from 0) failing.
pub struct Failing {
    /// The calls made so far.
    pub calls: Cell<usize>,
    fail_at: usize,
}

impl Failing {
    pub fn new(fail_at: usize) -> Failing {
        Failing {
            calls: Cell::new(0),
            fail_at,
        }
    }

    fn step(&self, what: &str) -> io::Result<()> {
        let n = self.calls.get();
        self.calls.set(n + 1);
        if n == self.fail_at {
            Err(io::Error::other(format!("injected failure in {what}")))
        } else {
            Ok(())
        }
    }
}

impl Fs for Failing {
    fn temp_file(&self, dir: &Path, mode: u32) -> io::Result<(File, TempPath)> {
        self.step("temp_file")?;
        Real.temp_file(dir, mode)
    }
    fn temp_dir(&self, parent: &Path) -> io::Result<TempDir> {
        self.step("temp_dir")?;
        Real.temp_dir(parent)
    }
    fn write(&self, file: &mut File, bytes: &[u8]) -> io::Result<()> {
        self.step("write")?;
        Real.write(file, bytes)
    }
    fn copy(&self, from: &Path, file: &mut File) -> io::Result<()> {
        self.step("copy")?;
        Real.copy(from, file)
    }
    fn keep_meta(&self, file: &File, like: &Metadata) -> io::Result<()> {
        self.step("keep_meta")?;
        Real.keep_meta(file, like)
    }
    fn set_mode(&self, file: &File, mode: u32) -> io::Result<()> {
        self.step("set_mode")?;
        Real.set_mode(file, mode)
    }
    fn create_dirs(&self, dir: &Path) -> io::Result<()> {
        self.step("create_dirs")?;
        Real.create_dirs(dir)
    }
    fn create_file(&self, path: &Path) -> io::Result<File> {
        self.step("create_file")?;
        Real.create_file(path)
    }
    fn sync(&self, dirs: &[PathBuf]) -> io::Result<()> {
        self.step("sync")?;
        Real.sync(dirs)
    }
    fn exchange(&self, a: &Path, b: &Path) -> io::Result<()> {
        self.step("exchange")?;
        Real.exchange(a, b)
    }
    fn rename_new(&self, from: &Path, to: &Path) -> io::Result<()> {
        self.step("rename_new")?;
        Real.rename_new(from, to)
    }
    fn rename(&self, from: &Path, to: &Path) -> io::Result<()> {
        self.step("rename")?;
        Real.rename(from, to)
    }
    fn remove_file(&self, path: &Path) -> io::Result<()> {
        self.step("remove_file")?;
        Real.remove_file(path)
    }
}

/// Every file under `root` (relative path → content and permission bits); panics on a
/// temporary.
pub fn tree(root: &Path) -> BTreeMap<PathBuf, (Vec<u8>, u32)> {
    fn walk(root: &Path, dir: &Path, out: &mut BTreeMap<PathBuf, (Vec<u8>, u32)>) {
        for e in fs::read_dir(dir).unwrap() {
            let e = e.unwrap();
            assert!(
                !is_temp_name(&e.file_name()),
                "a temporary is left: {}",
                e.path().display()
            );
            let meta = e.metadata().unwrap();
            if meta.is_dir() {
                walk(root, &e.path(), out);
            } else {
                let rel = e.path().strip_prefix(root).unwrap().to_path_buf();
                out.insert(rel, (fs::read(e.path()).unwrap(), meta.mode() & 0o7777));
            }
        }
    }
    let mut out = BTreeMap::new();
    if root.exists() {
        walk(root, root, &mut out);
    }
    out
}

fn scratch(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!(
        "krm-merge-writeback-{}-{name}-{}",
        std::process::id(),
        fastrand_name()
    ));
    let _ = fs::remove_dir_all(&d);
    fs::create_dir_all(&d).unwrap();
    d
}

fn fastrand_name() -> String {
    use std::sync::atomic::{AtomicUsize, Ordering};
    static N: AtomicUsize = AtomicUsize::new(0);
    N.fetch_add(1, Ordering::Relaxed).to_string()
}

/// What a random package and its changes are: files (name index, directory index, content,
/// mode) and, per file, what happens to it; plus new files.
#[derive(Clone, Debug)]
struct Case {
    files: Vec<(u8, String, u32)>,
    /// Per file: 0 unchanged, 1 rewritten, 2 removed.
    fate: Vec<u8>,
    added: Vec<(u8, String)>,
}

fn case() -> impl Strategy<Value = Case> {
    let file = (
        0u8..3,
        "[a-z]{0,12}",
        prop::sample::select(vec![0o600, 0o644, 0o640]),
    );
    (
        prop::collection::vec(file, 1..8),
        prop::collection::vec(0u8..3, 8),
        prop::collection::vec((0u8..3, "[a-z]{1,8}"), 0..3),
    )
        .prop_map(|(files, fate, added)| Case { files, fate, added })
}

fn lay_out(root: &Path, case: &Case) -> Vec<PathBuf> {
    case.files
        .iter()
        .enumerate()
        .map(|(i, (dir, text, mode))| {
            let d = root.join(format!("d{dir}"));
            fs::create_dir_all(&d).unwrap();
            let p = d.join(format!("f{i}.yaml"));
            fs::write(&p, text).unwrap();
            fs::set_permissions(&p, fs::Permissions::from_mode(*mode)).unwrap();
            p
        })
        .collect()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    /// In place: a failure at any call leaves the package wholly old, success makes it wholly
    /// new (modes kept), and no temporary is left either way. A new file may go to directories
    /// that do not exist yet: made for it, and gone again after a failure.
    #[test]
    fn in_place_is_all_or_nothing(case in case(), fail_at in 0usize..40) {
        let root = scratch("inplace");
        let paths = lay_out(&root, &case);
        let new_texts: Vec<Vec<u8>> = case.files.iter().map(|(_, t, _)| format!("new {t}\n").into_bytes()).collect();
        let mut changes = Vec::new();
        for (i, p) in paths.iter().enumerate() {
            match case.fate.get(i).copied().unwrap_or(0) {
                1 => changes.push(Change::Write { path: p.clone(), bytes: &new_texts[i] }),
                2 => changes.push(Change::Remove { path: p.clone() }),
                _ => {}
            }
        }
        // Directory 1 of the new files is new, two levels deep.
        let added: Vec<(PathBuf, Vec<u8>)> = case.added.iter().enumerate().map(|(i, (d, t))| {
            let dir = if *d == 1 { root.join("n1/deep") } else { root.join(format!("d{d}")) };
            (dir.join(format!("new{i}.yaml")), t.clone().into_bytes())
        }).collect();
        for (p, b) in &added {
            if !p.starts_with(root.join("n1")) {
                fs::create_dir_all(p.parent().unwrap()).unwrap();
            }
            changes.push(Change::Create { path: p.clone(), bytes: b });
        }
        let old = tree(&root);
        let mut new = old.clone();
        for c in &changes {
            match c {
                Change::Write { path, bytes } => {
                    let rel = path.strip_prefix(&root).unwrap().to_path_buf();
                    let mode = new[&rel].1;
                    new.insert(rel, (bytes.to_vec(), mode));
                }
                Change::Create { path, bytes } => {
                    let rel = path.strip_prefix(&root).unwrap().to_path_buf();
                    new.insert(rel, (bytes.to_vec(), 0o666 & !umask()));
                }
                Change::Remove { path } => {
                    new.remove(path.strip_prefix(&root).unwrap());
                }
            }
        }
        let fs = Failing::new(fail_at);
        let result = commit(&changes, &fs);
        let after = tree(&root);
        match &result {
            Ok(()) => prop_assert_eq!(&after, &new),
            Err(e) if e.committed => prop_assert_eq!(&after, &new, "{}", e),
            Err(e) => {
                prop_assert!(e.left.is_empty(), "{}", e);
                prop_assert_eq!(&after, &old, "{}", e);
                prop_assert!(!root.join("n1").exists(), "{}: the directories made stay", e);
            }
        }
        // Every failure injected before the end is a failure reported.
        if fail_at < fs.calls.get() {
            prop_assert!(result.is_err());
        }
        fs::remove_dir_all(&root).unwrap();
    }

    /// `--output`: a failure at any call leaves no directory (nor the parents made for it);
    /// success gives every file, with its mode.
    #[test]
    fn output_is_all_or_nothing(case in case(), fail_at in 0usize..40, exists in any::<bool>()) {
        let root = scratch("output");
        let src = root.join("src.txt");
        fs::write(&src, "copied\n").unwrap();
        let texts: Vec<Vec<u8>> = case.files.iter().map(|(_, t, _)| t.clone().into_bytes()).collect();
        let mut files: Vec<OutFile<'_>> = case.files.iter().enumerate().map(|(i, (d, _, mode))| OutFile {
            rel: PathBuf::from(format!("d{d}/f{i}.yaml")),
            content: Content::Bytes(&texts[i]),
            mode: Some(*mode),
        }).collect();
        files.push(OutFile { rel: "other/src.txt".into(), content: Content::Copy(src.clone()), mode: Some(0o755) });
        let dir = root.join("a/b/out");
        if exists {
            fs::create_dir_all(&dir).unwrap();
        }
        let fs_ = Failing::new(fail_at);
        let result = build_dir(&dir, &files, &fs_);
        match &result {
            Ok(()) | Err(Failed { committed: true, .. }) => {
                let got = tree(&dir);
                prop_assert_eq!(got.len(), files.len());
                prop_assert_eq!(&got[Path::new("other/src.txt")], &(b"copied\n".to_vec(), 0o755));
            }
            Err(e) => {
                prop_assert!(e.left.is_empty(), "{}", e);
                if exists {
                    prop_assert!(tree(&dir).is_empty());
                } else {
                    prop_assert!(!root.join("a").exists(), "{}", e);
                }
            }
        }
        // Nothing but the source file and what was asked for is there.
        let names: Vec<_> = fs::read_dir(&root).unwrap().map(|e| e.unwrap().file_name()).collect();
        prop_assert!(names.iter().all(|n| !is_temp_name(n)), "{:?}", names);
        fs::remove_dir_all(&root).unwrap();
    }
}

fn umask() -> u32 {
    let d = scratch("umask");
    let p = d.join("f");
    File::options()
        .write(true)
        .create_new(true)
        .open(&p)
        .unwrap();
    // create_new opens with 0666, less the umask.
    let m = fs::metadata(&p).unwrap().mode() & 0o777;
    fs::remove_dir_all(&d).unwrap();
    0o666 & !m
}

#[test]
fn owner_and_group_are_kept_as_root() {
    let d = scratch("owner");
    let p = d.join("f.yaml");
    fs::write(&p, "old\n").unwrap();
    fs::set_permissions(&p, fs::Permissions::from_mode(0o640)).unwrap();
    // A file the test made is its user's: root can give it away.
    if fs::metadata(&p).unwrap().uid() == 0 {
        std::os::unix::fs::chown(&p, Some(1234), Some(1234)).unwrap();
    }
    let before = fs::metadata(&p).unwrap();
    write_file(&p, b"new\n").unwrap();
    let after = fs::metadata(&p).unwrap();
    assert_eq!(fs::read(&p).unwrap(), b"new\n");
    assert_eq!(
        (after.uid(), after.gid(), after.mode() & 0o7777),
        (before.uid(), before.gid(), 0o640)
    );
    assert_ne!(after.ino(), before.ino(), "replaced by a rename");
    fs::remove_dir_all(&d).unwrap();
}

#[test]
fn hard_links_are_refused_and_long_names_rewritten() {
    let d = scratch("links");
    let a = d.join("a.yaml");
    fs::write(&a, "old\n").unwrap();
    fs::hard_link(&a, d.join("b.yaml")).unwrap();
    let long = d.join(format!("{}.yaml", "x".repeat(250)));
    fs::write(&long, "old\n").unwrap();
    let changes = [
        Change::Write {
            path: long.clone(),
            bytes: b"new\n",
        },
        Change::Write {
            path: a.clone(),
            bytes: b"new\n",
        },
    ];
    let e = commit(&changes, &Real).unwrap_err();
    assert!(e.to_string().contains("2 hard links"), "{e}");
    assert_eq!(fs::read(&long).unwrap(), b"old\n");
    commit(&changes[..1], &Real).unwrap();
    assert_eq!(fs::read(&long).unwrap(), b"new\n");
    fs::remove_dir_all(&d).unwrap();
}

#[test]
fn names_fit_the_file_system() {
    assert_eq!(fit_name("a.yaml", 255), "a.yaml");
    let long = format!("service_{}.yaml", "é".repeat(200));
    let fitted = fit_name(&long, 255);
    assert!(fitted.len() <= 255 && fitted.ends_with(".yaml"), "{fitted}");
    assert_eq!(fitted, fit_name(&long, 255), "stable");
    assert_ne!(fitted, fit_name(&format!("{long}x"), 255));
}
