//! Writes the man pages, `doc/krm-merge.1` and one `doc/krm-merge-COMMAND.1` per command, from
//! the command line's definition (`src/cli/args.rs`), so that they say what `--help` says.
//!
//! ```sh
//! cargo run --features man --bin gen-man              # writes doc/*.1
//! cargo run --features man --bin gen-man -- --check   # exit 1 when a committed page is stale (.ci/run)
//! ```

#[path = "../src/cli/args.rs"]
#[allow(dead_code)]
mod args;

use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// Every page: its file name and its text.
fn pages() -> std::io::Result<Vec<(String, Vec<u8>)>> {
    let mut cmd = args::command();
    // Global options (-q, -v, --results) reach the commands' definitions once built.
    cmd.build();
    let source = format!("krm-merge {}", env!("CARGO_PKG_VERSION"));
    let render = |c: clap::Command| -> std::io::Result<Vec<u8>> {
        let mut out = Vec::new();
        clap_mangen::Man::new(c)
            .date("")
            .source(source.clone())
            .render(&mut out)?;
        Ok(out)
    };
    let mut pages = vec![("krm-merge.1".to_owned(), render(cmd.clone())?)];
    for sub in cmd.get_subcommands().filter(|s| !s.is_hide_set()) {
        let name = format!("krm-merge-{}", sub.get_name());
        let page = render(
            sub.clone()
                .display_name(name.clone())
                .bin_name(name.clone()),
        )?;
        pages.push((format!("{name}.1"), page));
    }
    Ok(pages)
}

fn main() -> ExitCode {
    let dir: PathBuf = Path::new(env!("CARGO_MANIFEST_DIR")).join("doc");
    let pages = match pages() {
        Ok(p) => p,
        Err(e) => {
            eprintln!("gen-man: {e}");
            return ExitCode::FAILURE;
        }
    };
    let check = std::env::args().any(|a| a == "--check");
    let mut ok = true;
    for (name, page) in pages {
        let path = dir.join(&name);
        if check {
            if std::fs::read(&path).ok().as_deref() != Some(page.as_slice()) {
                eprintln!(
                    "gen-man: {} is not current: run cargo run --features man --bin gen-man",
                    path.display()
                );
                ok = false;
            }
            continue;
        }
        let written = std::fs::create_dir_all(&dir).and_then(|()| std::fs::write(&path, &page));
        if let Err(e) = written {
            eprintln!("gen-man: {}: {e}", path.display());
            ok = false;
        }
    }
    if ok {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}
