//! The `krm-merge` binary: arguments in, one mode run, an exit code out. The command line is
//! [`cli`]; everything it runs is the library's.

mod cli;

use std::io::{IsTerminal, Write};
use std::process::ExitCode;

/// The walkers recurse once per nesting level (at most `yaml::MAX_DEPTH`); this much stack
/// covers that with room to spare in any build: the whole test suite, whose deepest inputs
/// every patch type walks (tests/it/hostile.rs), passes in a debug build with 4 MiB. It is
/// reserved, not committed, but reserved address space counts against `ulimit -v`, and the
/// pool that reads pieces gives each of its threads as much (src/run/pieces.rs).
const STACK_BYTES: usize = 16 << 20;

fn main() -> ExitCode {
    let args: Vec<std::ffi::OsString> = std::env::args_os().skip(1).collect();
    let plugin_env = std::env::var_os("KUSTOMIZE_PLUGIN_CONFIG_ROOT").is_some()
        || std::env::var_os("KUSTOMIZE_PLUGIN_CONFIG_STRING").is_some();
    let colors = cli::Colors::choose(
        cli::ColorChoice::of_args(&args),
        std::io::stdout().is_terminal(),
        std::io::stderr().is_terminal(),
    );
    let mode = match cli::parse_args(&args, plugin_env) {
        cli::Parsed::Run(m) => m,
        cli::Parsed::Print(text) => {
            let (stdout, stderr) = (std::io::stdout(), std::io::stderr());
            let (mut out, mut err) = (stdout.lock(), stderr.lock());
            let mut io = cli::Io {
                stdout: &mut out,
                stderr: &mut err,
                stdout_is: cli::StdoutIs::probe(),
                color: colors,
            };
            return exit(io.out_code(text.as_bytes(), 0));
        }
        cli::Parsed::Usage(text) => {
            let (stdout, stderr) = (std::io::stdout(), std::io::stderr());
            let (mut out, mut err) = (stdout.lock(), stderr.lock());
            let mut io = cli::Io {
                stdout: &mut out,
                stderr: &mut err,
                stdout_is: cli::StdoutIs::probe(),
                color: colors,
            };
            // clap's message names the argument; it starts `error: ` like every other.
            io.text(&format!("krm-merge: {text}"));
            return ExitCode::from(2);
        }
    };
    let worker = std::thread::Builder::new()
        .stack_size(STACK_BYTES)
        .spawn(move || {
            let (stdout, stderr, stdin) = (std::io::stdout(), std::io::stderr(), std::io::stdin());
            let (mut out, mut err) = (stdout.lock(), stderr.lock());
            let terminal = stdin.is_terminal();
            let mut io = cli::Io {
                stdout: &mut out,
                stderr: &mut err,
                stdout_is: cli::StdoutIs::probe(),
                color: colors,
            };
            let stdin = cli::Stdin {
                read: &mut stdin.lock(),
                terminal,
            };
            cli::run(mode, stdin, &mut io)
        });
    let code = match worker.map(|w| w.join()) {
        Ok(Ok(code)) => code,
        // A panic is a bug; it must still end as a clear failure, never an abort.
        Ok(Err(_)) => {
            let _ = writeln!(
                std::io::stderr(),
                "krm-merge: internal error (please report it); nothing was changed"
            );
            1
        }
        Err(e) => {
            let _ = writeln!(std::io::stderr(), "krm-merge: cannot start: {e}");
            1
        }
    };
    exit(code)
}

fn exit(code: i32) -> ExitCode {
    ExitCode::from(u8::try_from(code).unwrap_or(1))
}
