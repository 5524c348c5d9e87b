//! The arguments: what the process was asked to do, as a [`Mode`]. clap reads them ([`Cli`]);
//! [`parse_args`] turns what it read into a mode, checking only what the user typed: nothing
//! is opened or read here (except asking whether the one argument of a kustomize exec-plugin
//! call is a file).
//!
//! The command line, as `--help` shows it (and `kpt fn doc`, and the catalog README):
//!
//! * no arguments: the KRM function, a ResourceList on stdin;
//! * `--config FN [PATH...]`: the standalone filter; flags and paths in any order, `--` ends the
//!   options, `-` is stdin;
//! * `CONFIG` alone: kustomize's legacy exec plugin (kustomize sets
//!   `KUSTOMIZE_PLUGIN_CONFIG_ROOT`; without it, a regular file is taken as the config);
//! * `merge2`, `merge3`, `diff`, `schema`, `completions`, each with its own `--help`.
//!
//! Usage errors exit 2 and name the offending argument (clap's messages, with suggestions for
//! typos).

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use clap::{Args, CommandFactory, FromArgMatches, Parser, Subcommand, ValueEnum};
use krm_merge::config::{Conflicts, LoadRestrictor, PatchOptions};
use krm_merge::diff::package::{Format, PatchType};
use krm_merge::merge::merge2::NewItems;

/// What the process was asked to do.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Mode {
    /// A ResourceList on stdin, its functionConfig saying what to do (kpt, kustomize).
    Krm { restrictor: LoadRestrictor },
    /// `--config FN [PATH...]`: resources from files, directories or stdin.
    Standalone {
        config: PathBuf,
        inputs: Vec<Source>,
        write: Write,
        report: Report,
        /// Which files the config may load (`--load-restrictor`).
        restrictor: LoadRestrictor,
    },
    /// kustomize's legacy exec plugin: the config file is the only argument, stdin a stream.
    Plugin { config: PathBuf },
    /// `merge2 SRC DEST`.
    Merge2 {
        src: PathBuf,
        dest: PathBuf,
        opts: PatchOptions,
        report: Report,
    },
    /// `merge3 ORIGINAL UPDATED LOCAL`: each a file, a directory or `-` (once).
    Merge3 {
        original: Source,
        updated: Source,
        local: Source,
        opts: PatchOptions,
        /// What is done with LOCAL merged.
        write: Write,
        /// `--summary`: the counts said whatever `-v`.
        summary: bool,
        report: Report,
    },
    /// `schema`: the functionConfig's JSON Schema.
    Schema,
    /// `completions SHELL`: a completion script.
    Completions(Shell),
    /// `diff OLD NEW`: the patch that turns one version into the other.
    Diff(DiffRequest),
}

/// What `diff` was asked: see `krm-merge diff --help`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DiffRequest {
    /// OLD (BASE, or CURRENT with `--original`).
    pub old: Source,
    /// NEW (VARIANT, or MODIFIED with `--original`).
    pub new: Source,
    /// `--original LAST_APPLIED`: a three-way patch.
    pub original: Option<Source>,
    pub patch_type: PatchType,
    /// `--schema FILE`: an OpenAPI v2 document.
    pub schema: Option<PathBuf>,
    /// `--format`: what a package diff is written as (given: package mode).
    pub format: Option<Format>,
    /// `--package`: OLD and NEW are packages even when each holds one resource.
    pub package: bool,
    /// `--added FILE`: where the resources only NEW has go.
    pub added: Option<PathBuf>,
    /// `--infer-merge-keys`.
    pub infer_keys: bool,
    /// `--conflicts`: what a three-way conflict is.
    pub conflicts: Conflicts,
    pub report: Report,
}

/// Where the standalone filter reads resources.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Source {
    /// `-`, or no PATH at all.
    Stdin,
    /// A file or a directory.
    Path(PathBuf),
}

/// What the standalone filter does with its output.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Write {
    /// The resources as one YAML stream on stdout.
    Stdout,
    /// `--in-place`: each input file that changed is rewritten.
    InPlace,
    /// `--output DIR`: the package written to DIR, laid out as its files were.
    Output(PathBuf),
    /// `--diff` (and `--check` with it): a unified diff on stdout, nothing written.
    Diff { check: bool },
    /// `--check`: exit 1 when a file would change, nothing written.
    Check,
}

/// How much of the results people see, and where the results go as data.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Report {
    pub level: Level,
    /// `--results FILE`: the results as a KRM `results` list.
    pub results: Option<PathBuf>,
}

/// Which results reach stderr.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord)]
pub enum Level {
    /// `--quiet`: errors only.
    Quiet,
    /// Errors and warnings.
    #[default]
    Normal,
    /// `-v`: info results too.
    Verbose,
}

/// A shell `completions` writes a script for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Shell {
    Bash,
    Zsh,
    Fish,
    Powershell,
}

impl From<Shell> for clap_complete::Shell {
    fn from(s: Shell) -> Self {
        match s {
            Shell::Bash => clap_complete::Shell::Bash,
            Shell::Zsh => clap_complete::Shell::Zsh,
            Shell::Fish => clap_complete::Shell::Fish,
            Shell::Powershell => clap_complete::Shell::PowerShell,
        }
    }
}

/// What reading the arguments gave.
#[derive(Debug)]
pub enum Parsed {
    /// A mode to run.
    Run(Mode),
    /// `--help` or `--version`: this text on stdout, exit 0.
    Print(String),
    /// A usage error: clap's message (naming the argument) on stderr, exit 2.
    Usage(String),
}

const ABOUT: &str = "merge and patch the resources of a Kubernetes package (a KRM function).";

const USAGE: &str = "\
krm-merge                               read a ResourceList on stdin, apply its functionConfig,
                                          write the ResourceList to stdout (kpt, kustomize)
  krm-merge --config FN [PATH...]         apply FN to files, directories (read as kpt reads a
                                          package) or stdin (-); the result to stdout, or with
                                          --in-place, --output DIR, --diff, --check
  krm-merge CONFIG                        kustomize legacy exec plugin (stdin: a YAML stream)
  krm-merge merge2 SRC DEST               merge SRC into DEST (2-way strategic merge)
  krm-merge merge3 ORIGINAL UPDATED LOCAL merge the change ORIGINAL->UPDATED into LOCAL (3-way):
                                          upgrade a package (files, directories or -)
  krm-merge diff OLD NEW                  print the patch that turns OLD into NEW (resources,
                                          or packages: a Merge functionConfig)
  krm-merge schema                        print the JSON Schema of the functionConfig
  krm-merge completions SHELL             print a completion script (bash, zsh, fish, powershell)
  krm-merge --help | --version            (each command has its own --help)";

const FUNCTION_CONFIG: &str = "\
functionConfig (apiVersion: fn.krm-merge.dev/v1alpha1, kind: Merge):
  spec:
    patches:                  applied in order, each to the output of the previous
    - name: scale-web         optional: what messages call the patch (else patch[N])
      type: merge2            merge2 | json6902 | jsonmerge | merge3 | apply (or kustomize's names)
      patch: |                the patch (YAML or JSON, several documents allowed), or path: FILE
      original: |             merge3: the common ancestor (or originalPath: FILE)
      target:                 group, version, kind, name, namespace (anchored regexes),
        kind: Deployment      labelSelector, annotationSelector; omitted: the patch's own identity
      at: \"@containers\"       where in each resource: a field path with [*] and [k=v], or
                              @podTemplate, @podSpec, @containers (every workload kind)
      options: {newListItems: append, inferMergeKeys: true, allowNameChange: false,
                allowKindChange: false, conflicts: warn, compatibility: native,
                crdMergeKeys: true, validation: error}  (validation: warn lets schema
                              findings and glob-like targets through as warnings)
    failOn: error             or warning: every warning fails the run (kustomize exec plugins)
    schema:                   merge keys for kinds the built-in Kubernetes schema lacks
      openAPI: {path: FILE}   (or inline:), and/or
      mergeKeys: [{group: example.com, kind: Foo, path: spec.items, keys: [name]}]
      workloads: [{group: example.com, kind: App, podTemplate: spec.template}]
Also accepted: kustomize's PatchTransformer config, a kustomization's patches, patchesJson6902
and patchesStrategicMerge, and a ConfigMap (kpt fn eval -- key=value) with keys type, patch,
original, group, version, kind, name, namespace, labelSelector, annotationSelector, at, the
options, and failOn.

Results: in KRM mode inside the ResourceList; in every other mode each warning and error is one
line on stderr (info lines with -v, warnings silenced by -q), and --results FILE writes them all.

Exit status: 0 success, 1 an error result (nothing is written but the ResourceList in KRM mode)
or, with --check, a file that would change; 2 usage error.";

/// The command line.
#[derive(Debug, Parser)]
#[command(
    name = "krm-merge",
    version,
    about = ABOUT,
    after_help = FUNCTION_CONFIG,
    args_conflicts_with_subcommands = true,
    disable_help_subcommand = true,
    max_term_width = 100
)]
pub struct Cli {
    /// Apply this functionConfig to PATHs (or stdin), not a ResourceList's
    #[arg(short = 'c', long, value_name = "FN")]
    config: Option<PathBuf>,

    /// Files and directories (read as kpt reads a package); - is stdin
    #[arg(value_name = "PATH")]
    paths: Vec<PathBuf>,

    /// Rewrite each file that changed (atomically), leave the others alone
    #[arg(short = 'i', long, requires = "config", conflicts_with_all = ["output", "diff", "check"])]
    in_place: bool,

    /// Write the package to DIR (new or empty), laid out as its files were
    #[arg(short = 'o', long, value_name = "DIR", requires = "config", conflicts_with_all = ["diff", "check"])]
    output: Option<PathBuf>,

    /// Print what would change as a unified diff; write nothing
    #[arg(long, requires = "config")]
    diff: bool,

    /// Exit 1 when a file would change (0 otherwise); write nothing
    #[arg(long, requires = "config")]
    check: bool,

    /// Files the config may load: rootOnly (its tree; default) or none
    #[arg(
        long,
        value_name = "RULE",
        default_value = "rootOnly",
        hide_default_value = true,
        value_parser = parse_restrictor
    )]
    load_restrictor: LoadRestrictor,

    #[command(flatten)]
    report: ReportArgs,

    #[command(subcommand)]
    command: Option<Command>,
}

/// The options every mode but KRM mode shares: what reaches stderr, and the results file.
#[derive(Debug, Args)]
struct ReportArgs {
    /// Print errors only, no warnings
    #[arg(short, long, global = true, conflicts_with = "verbose")]
    quiet: bool,

    /// Print info results too
    #[arg(short, long, global = true)]
    verbose: bool,

    /// Write every result to FILE as a KRM results list
    #[arg(long, value_name = "FILE", global = true)]
    results: Option<PathBuf>,

    /// Colour output: auto (on a terminal, unless NO_COLOR), always, never
    #[arg(
        long,
        value_name = "WHEN",
        global = true,
        default_value = "auto",
        hide_default_value = true,
        hide_possible_values = true
    )]
    color: ColorArg,
}

/// `--color` (read again by [`super::out::ColorChoice::of_args`] before the arguments are parsed,
/// so that usage errors are coloured as asked too).
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum ColorArg {
    Auto,
    Always,
    Never,
}

impl ReportArgs {
    fn report(&self) -> Report {
        let level = if self.quiet {
            Level::Quiet
        } else if self.verbose {
            Level::Verbose
        } else {
            Level::Normal
        };
        Report {
            level,
            results: self.results.clone(),
        }
    }

    fn given(&self) -> bool {
        self.quiet || self.verbose || self.results.is_some()
    }
}

/// Where new list elements go (`newListItems`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum NewListItems {
    Append,
    Prepend,
}

/// What a three-way conflict of `diff --original` is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum ConflictsArg {
    Warn,
    Error,
}

/// What a merge3 conflict is (`conflicts`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum StrategyArg {
    /// Upstream's value is taken; a warning names the conflict
    Warn,
    /// Nothing is written; an error names each conflict
    Error,
    /// The local value is kept; a warning names the conflict
    Local,
    /// Upstream's value is taken, silently (-v shows the conflicts)
    Upstream,
}

impl From<StrategyArg> for Conflicts {
    fn from(s: StrategyArg) -> Conflicts {
        match s {
            StrategyArg::Warn => Conflicts::Warn,
            StrategyArg::Error => Conflicts::Error,
            StrategyArg::Local => Conflicts::Local,
            StrategyArg::Upstream => Conflicts::Upstream,
        }
    }
}

/// The patch type `diff` writes (`--type`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum DiffType {
    /// A strategic merge patch, as kubectl makes them
    Merge2,
    /// RFC 6902 operations
    Json6902,
    /// An RFC 7386 merge patch
    Jsonmerge,
}

/// What a package diff is written as (`--format`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum DiffFormat {
    /// A Merge functionConfig
    Merge,
    /// The patches: entries of a kustomization
    Kustomization,
}

/// The options of `merge2` and `merge3`: a patch's `options`.
#[derive(Debug, Args)]
struct MergeArgs {
    /// Where new list elements go
    #[arg(long, value_name = "WHERE", default_value = "append")]
    new_list_items: NewListItems,

    /// Replace lists no schema describes instead of pairing their elements by a guessed key
    #[arg(long)]
    no_infer_merge_keys: bool,
}

impl MergeArgs {
    fn options(&self) -> PatchOptions {
        PatchOptions {
            new_list_items: match self.new_list_items {
                NewListItems::Append => NewItems::Append,
                NewListItems::Prepend => NewItems::Prepend,
            },
            infer_merge_keys: !self.no_infer_merge_keys,
            ..PatchOptions::default()
        }
    }
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Merge SRC into DEST (2-way strategic merge), like kustomize cfg merge; DEST's documents,
    /// merged, on stdout
    #[command(
        long_about = "Merge SRC into DEST (2-way strategic merge), like kustomize cfg merge.\n\nTwo single documents merge whatever their names; otherwise documents pair by\napiVersion, kind, name and namespace. DEST's documents, merged, go to stdout;\non an error nothing does."
    )]
    Merge2 {
        /// The patch: one or more YAML documents
        #[arg(value_name = "SRC")]
        src: PathBuf,
        /// The resources to merge into
        #[arg(value_name = "DEST")]
        dest: PathBuf,
        #[command(flatten)]
        merge: MergeArgs,
    },
    /// Merge the change ORIGINAL -> UPDATED into LOCAL (3-way merge): upgrade a package, like
    /// kpt pkg update; LOCAL merged on stdout, or written back
    #[command(long_about = MERGE3_ABOUT)]
    Merge3 {
        /// The upstream version LOCAL came from: a file, a directory, or -
        #[arg(value_name = "ORIGINAL")]
        original: PathBuf,
        /// The new upstream version: a file, a directory, or -
        #[arg(value_name = "UPDATED")]
        updated: PathBuf,
        /// The local copy to merge into: a file, a directory (a package), or -
        #[arg(value_name = "LOCAL")]
        local: PathBuf,
        #[command(flatten)]
        merge: MergeArgs,
        /// What a conflict is
        #[arg(long, value_name = "WHAT", default_value = "warn")]
        conflicts: StrategyArg,
        /// Rewrite LOCAL's files that change (atomically), leave the others alone
        #[arg(short = 'i', long, conflicts_with_all = ["output", "diff", "check"])]
        in_place: bool,
        /// Write LOCAL merged to DIR (new or empty), laid out as its files are
        #[arg(short = 'o', long, value_name = "DIR", conflicts_with_all = ["diff", "check"])]
        output: Option<PathBuf>,
        /// Print what would change as a unified diff; write nothing
        #[arg(long)]
        diff: bool,
        /// Exit 1 when a file would change (0 otherwise); write nothing
        #[arg(long)]
        check: bool,
        /// End with what the merge did: resources updated, added, deleted, kept, conflicts
        #[arg(long)]
        summary: bool,
    },
    /// Print the patch that turns OLD into NEW: two resources (a patch), or two packages (a
    /// Merge functionConfig)
    #[command(long_about = DIFF_ABOUT, after_help = DIFF_AFTER)]
    Diff {
        /// The old version (BASE; with --original, the live object): a file, a directory, or -
        #[arg(value_name = "OLD")]
        old: PathBuf,
        /// The new version (VARIANT; with --original, the new configuration)
        #[arg(value_name = "NEW")]
        new: PathBuf,
        /// The patch type
        #[arg(long = "type", value_name = "TYPE", default_value = "merge2")]
        patch_type: DiffType,
        /// An OpenAPI v2 document (kustomize's openapi: format) with merge keys for more kinds
        #[arg(long, value_name = "FILE")]
        schema: Option<PathBuf>,
        /// Make the patch kubectl apply sends: LAST_APPLIED the configuration applied last, OLD
        /// the live object, NEW the new configuration (merge2 only)
        #[arg(long, value_name = "LAST_APPLIED", conflicts_with_all = ["format", "package", "added"])]
        original: Option<PathBuf>,
        /// With --original: what a conflict (a field the live object changed too) is
        #[arg(
            long,
            value_name = "WHAT",
            default_value = "warn",
            requires = "original"
        )]
        conflicts: ConflictsArg,
        /// Packages: write a Merge functionConfig, or a kustomization's patches: entries
        #[arg(long, value_name = "FORMAT")]
        format: Option<DiffFormat>,
        /// Read OLD and NEW as packages even when each holds one resource
        #[arg(long)]
        package: bool,
        /// Packages: write the resources only NEW has (no patch can make them) to FILE
        #[arg(long, value_name = "FILE")]
        added: Option<PathBuf>,
        /// Pair the elements of lists no schema describes by a guessed key (name, ...), as
        /// krm-merge's merge2 does unless told --no-infer-merge-keys; kubectl does not
        #[arg(long)]
        infer_merge_keys: bool,
    },
    /// Print the JSON Schema of the functionConfig
    Schema,
    /// Print a completion script for SHELL
    #[command(
        long_about = "Print a completion script for SHELL.\n\n  bash:       krm-merge completions bash > ~/.local/share/bash-completion/completions/krm-merge\n  zsh:        krm-merge completions zsh > \"${fpath[1]}/_krm-merge\"\n  fish:       krm-merge completions fish > ~/.config/fish/completions/krm-merge.fish\n  powershell: krm-merge completions powershell >> $PROFILE"
    )]
    Completions {
        #[arg(value_name = "SHELL")]
        shell: Shell,
    },
}

const MERGE3_ABOUT: &str = "\
Merge the change ORIGINAL -> UPDATED into LOCAL (3-way merge): upgrade a
locally edited package to a new upstream release, like kpt pkg update, from
any source: a release's install.yaml, helm template's output, a directory of
a git tag. Each of the three is a file, a stream, a List or ResourceList, a
directory (read as kpt reads a package), or - (one of them).

Resources pair by group, kind, namespace and name, wherever they are. Paired
resources merge field by field: what changed upstream is taken, what changed
locally stays. A resource upstream deleted is deleted (a conflict when LOCAL
changed it); one upstream added is added, as a new file (at its path in
UPDATED when UPDATED and LOCAL are directories); one LOCAL deleted stays
deleted; one only LOCAL has stays as it is. A Kptfile's upstream and
upstreamLock are left to kpt.

A conflict (both sides changed a field, or upstream deleted what LOCAL
changed) is, as --conflicts says: warn (upstream wins, a warning names the
file, the resource, the field and both values), error (nothing is written),
local (LOCAL's value wins, warned) or upstream (upstream wins, silently).

LOCAL merged goes to stdout as one stream; --in-place rewrites LOCAL's files,
--output DIR writes the package elsewhere, --diff shows the change, --check
says whether there is one; on an error nothing is written. --summary (or -v)
ends with the counts.";

const DIFF_ABOUT: &str = "\
Print the patch that turns OLD into NEW.

Two resources (a file or - each, holding one resource, and any
CustomResourceDefinitions whose merge keys the patch follows): the patch, with
OLD's apiVersion, kind, name and namespace at its top, so that it needs no
target. --type says which:

merge2 (the default): a strategic merge patch as kubectl makes them
(apimachinery's CreateTwoWayMergePatch): $setElementOrder, $patch: delete,
$deleteFromPrimitiveList and $retainKeys where the schema calls for them, null
for a removed field. Apply it with kubectl patch, or krm-merge merge2
--no-infer-merge-keys (inferMergeKeys: false); made with --infer-merge-keys,
with krm-merge's defaults. For kustomize, whose merge lacks these directives,
use --format kustomization.

json6902: RFC 6902 operations. Elements of lists with merge keys are addressed
by key (containers/[name=app]/image), so that the patch survives a reordering;
others by index.

jsonmerge: an RFC 7386 merge patch.

Values copied from NEW keep its comments and styles.

Three-way (--original LAST_APPLIED CURRENT MODIFIED): the patch kubectl apply
sends (CreateThreeWayMergePatch): CURRENT's changes to MODIFIED, and deletions
of what LAST_APPLIED set and MODIFIED no longer does. A field CURRENT changed
since LAST_APPLIED that the patch changes too is a conflict: a warning (the
patch overwrites it), or with --conflicts error an error.

Packages (a directory, read as kpt reads a package, or a stream holding several
resources, on either side; or --package, --format, --added): one patch per
changed resource, targeted at it by identity, in a Merge functionConfig, or with
--format kustomization as a kustomization's patches: entries made for kustomize
(strategic merge patches without the directives kustomize lacks, JSON patches
by index). A resource only in OLD gets a $patch: delete; one only in NEW is a
warning (a patch cannot create it; --added FILE gets it). Kptfiles and
local-config resources are not compared.";

const DIFF_AFTER: &str = "\
Merge keys come from the built-in Kubernetes schema, the
CustomResourceDefinitions among OLD and NEW (not for --format kustomization:
kustomize does not read them), and --schema FILE, which a Merge functionConfig
carries inline so that the function merges as the diff did.

When OLD and NEW hold the same data, nothing is printed.

Exit status: 0 the patch was written (warnings on stderr: what a patch cannot
say, a conflict); 1 the patch cannot be made (malformed input, a list element
without its merge key, a conflict with --conflicts error), nothing is written;
2 usage error.";

/// The clap command, for help, completions and the man page. The top-level help is laid out
/// by hand (its usage lists every mode); error messages show clap's own short usage.
pub fn command() -> clap::Command {
    Cli::command().help_template(format!(
        "krm-merge: {{about}}\n\nUsage:\n  {USAGE}\n\nOptions:\n{{options}}{{after-help}}"
    ))
}

/// Reads the arguments (without the program name). `plugin_env`: kustomize's
/// `KUSTOMIZE_PLUGIN_CONFIG_ROOT` or `KUSTOMIZE_PLUGIN_CONFIG_STRING` is set.
pub fn parse_args(args: &[OsString], plugin_env: bool) -> Parsed {
    let argv = std::iter::once(OsString::from("krm-merge")).chain(args.iter().cloned());
    let matches = match command().try_get_matches_from(argv) {
        Ok(m) => m,
        Err(e) => return clap_error(&e),
    };
    let cli = match Cli::from_arg_matches(&matches) {
        Ok(c) => c,
        Err(e) => return clap_error(&e),
    };
    match mode(cli, plugin_env) {
        Ok(m) => Parsed::Run(m),
        Err(e) => clap_error(&e),
    }
}

fn clap_error(e: &clap::Error) -> Parsed {
    use clap::error::ErrorKind;
    let text = e.render().to_string();
    match e.kind() {
        ErrorKind::DisplayHelp | ErrorKind::DisplayVersion => Parsed::Print(text),
        _ => Parsed::Usage(text),
    }
}

/// A usage error about what clap accepted but the modes do not.
fn usage(kind: clap::error::ErrorKind, msg: impl std::fmt::Display) -> clap::Error {
    command().error(kind, msg)
}

/// The mode the arguments ask for: a subcommand's, standalone mode with `--config FN`, or
/// without it KRM mode or a kustomize exec plugin call.
fn mode(mut cli: Cli, plugin_env: bool) -> Result<Mode, clap::Error> {
    let report = cli.report.report();
    if let Some(command) = cli.command.take() {
        return subcommand(command, report);
    }
    let Some(config) = cli.config.take() else {
        return without_config(&cli, plugin_env);
    };
    standalone(cli, config, report)
}

/// The plan of a subcommand.
fn subcommand(command: Command, report: Report) -> Result<Mode, clap::Error> {
    use clap::error::ErrorKind;
    Ok(match command {
        Command::Merge2 { src, dest, merge } => Mode::Merge2 {
            src,
            dest,
            opts: merge.options(),
            report,
        },
        Command::Merge3 {
            original,
            updated,
            local,
            merge,
            conflicts,
            in_place,
            output,
            diff,
            check,
            summary,
        } => {
            let (original, updated, local) = (source(original), source(updated), source(local));
            stdin_once([&original, &updated, &local])?;
            let write = write_to(in_place, output, diff, check);
            if matches!(write, Write::InPlace | Write::Output(_)) && local == Source::Stdin {
                return Err(usage(
                    ErrorKind::ArgumentConflict,
                    "--in-place and --output write LOCAL's files: give LOCAL as a file or a directory, not stdin",
                ));
            }
            Mode::Merge3 {
                original,
                updated,
                local,
                opts: PatchOptions {
                    conflicts: conflicts.into(),
                    ..merge.options()
                },
                write,
                summary,
                report,
            }
        }
        Command::Schema => Mode::Schema,
        Command::Completions { shell } => Mode::Completions(shell),
        Command::Diff {
            old,
            new,
            patch_type,
            schema,
            original,
            conflicts,
            format,
            package,
            added,
            infer_merge_keys,
        } => Mode::Diff(diff_request(
            old,
            new,
            original,
            DiffOptions {
                patch_type,
                schema,
                conflicts,
                format,
                package,
                added,
                infer_merge_keys,
            },
            report,
        )?),
    })
}

/// The plan without `--config` or a subcommand: KRM mode with no arguments, a kustomize
/// exec plugin call with one; anything else is a usage error (a mistyped subcommand gets
/// the one meant).
fn without_config(cli: &Cli, plugin_env: bool) -> Result<Mode, clap::Error> {
    use clap::error::ErrorKind;
    match &cli.paths[..] {
        [] if !cli.report.given() => Ok(Mode::Krm {
            restrictor: cli.load_restrictor,
        }),
        [] => Err(usage(
            ErrorKind::MissingRequiredArgument,
            "--quiet, --verbose and --results need --config FN (in KRM mode the results are in the ResourceList)",
        )),
        [only] if !cli.report.given() && is_plugin_call(only, plugin_env) => Ok(Mode::Plugin {
            config: only.clone(),
        }),
        [first, ..] => Err(match command_meant(first) {
            Some(meant) => usage(
                ErrorKind::InvalidSubcommand,
                format!(
                    "unrecognized subcommand '{}'\n\n  tip: a similar subcommand exists: \
                     '{meant}'",
                    first.display()
                ),
            ),
            None => usage(
                ErrorKind::MissingRequiredArgument,
                format!(
                    "'{}': a PATH needs --config FN (the functionConfig to apply to it)",
                    first.display()
                ),
            ),
        }),
    }
}

/// The plan of standalone mode: `config` applied to the PATHs (stdin when there are none),
/// written where the flags say.
fn standalone(cli: Cli, config: PathBuf, report: Report) -> Result<Mode, clap::Error> {
    use clap::error::ErrorKind;
    let inputs: Vec<Source> = if cli.paths.is_empty() {
        vec![Source::Stdin]
    } else {
        cli.paths
            .into_iter()
            .map(|p| {
                if p.as_os_str() == "-" {
                    Source::Stdin
                } else {
                    Source::Path(p)
                }
            })
            .collect()
    };
    stdin_once(&inputs)?;
    let write = write_to(cli.in_place, cli.output, cli.diff, cli.check);
    if matches!(write, Write::InPlace | Write::Output(_)) && inputs.contains(&Source::Stdin) {
        let flag = if write == Write::InPlace {
            "--in-place"
        } else {
            "--output"
        };
        return Err(usage(
            ErrorKind::ArgumentConflict,
            format!("{flag} writes files: give the files or directories as PATHs, not stdin"),
        ));
    }
    Ok(Mode::Standalone {
        config,
        inputs,
        write,
        report,
        restrictor: cli.load_restrictor,
    })
}

/// A usage error when stdin (`-`) is among `sources` more than once.
fn stdin_once<'s>(sources: impl IntoIterator<Item = &'s Source>) -> Result<(), clap::Error> {
    let stdins = sources.into_iter().filter(|s| **s == Source::Stdin).count();
    if stdins > 1 {
        return Err(usage(
            clap::error::ErrorKind::ArgumentConflict,
            "'-' (stdin) can be given once",
        ));
    }
    Ok(())
}

/// Where the output goes, from `--in-place`, `--output DIR`, `--diff` and `--check` (clap
/// refuses the combinations that conflict).
fn write_to(in_place: bool, output: Option<PathBuf>, diff: bool, check: bool) -> Write {
    if in_place {
        Write::InPlace
    } else if let Some(dir) = output {
        Write::Output(dir)
    } else if diff {
        Write::Diff { check }
    } else if check {
        Write::Check
    } else {
        Write::Stdout
    }
}

/// A path argument: `-` is stdin.
fn source(p: PathBuf) -> Source {
    if p.as_os_str() == "-" {
        Source::Stdin
    } else {
        Source::Path(p)
    }
}

/// The subcommand an argument that is no path was probably meant to be (`merg2` → `merge2`):
/// clap suggests for flags, but an argument that could be a PATH is never a subcommand to it.
fn command_meant(arg: &Path) -> Option<&'static str> {
    let text = arg.to_str()?;
    if arg.exists() || text.contains(['/', '.']) {
        return None;
    }
    krm_merge::schema::suggest::closest(text, COMMANDS.iter().copied())
}

/// The subcommands, as [`command_meant`] suggests them (a test keeps the list clap's).
const COMMANDS: &[&str] = &["merge2", "merge3", "diff", "schema", "completions"];

/// `--load-restrictor`: kustomize's names, and ours.
fn parse_restrictor(s: &str) -> Result<LoadRestrictor, String> {
    s.parse()
        .map_err(|e: krm_merge::config::BadLoadRestrictor| e.to_string())
}

/// A usage error about `diff`'s arguments, with `diff`'s usage line.
fn diff_usage(kind: clap::error::ErrorKind, msg: impl std::fmt::Display) -> clap::Error {
    let mut cmd = command();
    cmd.build();
    match cmd.find_subcommand_mut("diff") {
        Some(sub) => sub.error(kind, msg),
        None => usage(kind, msg),
    }
}

/// `diff`'s options, as clap read them.
struct DiffOptions {
    patch_type: DiffType,
    schema: Option<PathBuf>,
    conflicts: ConflictsArg,
    format: Option<DiffFormat>,
    package: bool,
    added: Option<PathBuf>,
    infer_merge_keys: bool,
}

/// `diff`'s arguments checked together.
fn diff_request(
    old: PathBuf,
    new: PathBuf,
    original: Option<PathBuf>,
    o: DiffOptions,
    report: Report,
) -> Result<DiffRequest, clap::Error> {
    use clap::error::ErrorKind;
    let (old, new, original) = (source(old), source(new), original.map(source));
    let stdins = [Some(&old), Some(&new), original.as_ref()]
        .iter()
        .filter(|s| **s == Some(&Source::Stdin))
        .count();
    if stdins > 1 {
        return Err(diff_usage(
            ErrorKind::ArgumentConflict,
            "'-' (stdin) can be given once",
        ));
    }
    let patch_type = match o.patch_type {
        DiffType::Merge2 => PatchType::Merge2,
        DiffType::Json6902 => PatchType::Json6902,
        DiffType::Jsonmerge => PatchType::JsonMerge,
    };
    let format = o.format.map(|f| match f {
        DiffFormat::Merge => Format::Merge,
        DiffFormat::Kustomization => Format::Kustomization,
    });
    if original.is_some() && patch_type != PatchType::Merge2 {
        return Err(diff_usage(
            ErrorKind::ArgumentConflict,
            "--original makes the strategic merge patch kubectl apply sends: --type merge2 only",
        ));
    }
    if format == Some(Format::Kustomization) {
        if patch_type == PatchType::JsonMerge {
            return Err(diff_usage(
                ErrorKind::ArgumentConflict,
                "--format kustomization: kustomize has no JSON merge patches (use --type merge2 or json6902)",
            ));
        }
        if o.infer_merge_keys {
            return Err(diff_usage(
                ErrorKind::ArgumentConflict,
                "--format kustomization: kustomize never infers merge keys (leave out --infer-merge-keys)",
            ));
        }
    }
    Ok(DiffRequest {
        old,
        new,
        original,
        patch_type,
        schema: o.schema,
        format,
        package: o.package,
        added: o.added,
        infer_keys: o.infer_merge_keys,
        conflicts: match o.conflicts {
            ConflictsArg::Warn => Conflicts::Warn,
            ConflictsArg::Error => Conflicts::Error,
        },
        report,
    })
}

/// kustomize runs a legacy exec plugin with its config file's path as the only argument, and
/// says so in its environment. Without that, one argument that is a regular file is taken as a
/// plugin config too (how the plugin is tried by hand).
fn is_plugin_call(arg: &Path, plugin_env: bool) -> bool {
    arg.as_os_str() != "-" && (plugin_env || arg.is_file())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(args: &[&str]) -> Parsed {
        let args: Vec<OsString> = args.iter().map(OsString::from).collect();
        parse_args(&args, false)
    }

    fn run(args: &[&str]) -> Mode {
        match parse(args) {
            Parsed::Run(m) => m,
            other => panic!("{args:?}: {other:?}"),
        }
    }

    fn usage_error(args: &[&str]) -> String {
        match parse(args) {
            Parsed::Usage(e) => e,
            other => panic!("{args:?}: {other:?}"),
        }
    }

    #[test]
    fn modes() {
        assert_eq!(
            run(&[]),
            Mode::Krm {
                restrictor: LoadRestrictor::RootOnly
            }
        );
        assert_eq!(run(&["schema"]), Mode::Schema);
        assert_eq!(
            run(&["completions", "bash"]),
            Mode::Completions(Shell::Bash)
        );
        assert!(matches!(parse(&["merge2", "--help"]), Parsed::Print(h) if h.contains("SRC")));
        assert!(matches!(parse(&["-V"]), Parsed::Print(v) if v.starts_with("krm-merge ")));
        let standalone = |inputs: Vec<Source>| Mode::Standalone {
            config: "fn.yaml".into(),
            inputs,
            write: Write::Stdout,
            report: Report::default(),
            restrictor: LoadRestrictor::RootOnly,
        };
        let paths = vec![Source::Path("a".into()), Source::Path("b".into())];
        assert_eq!(
            run(&["--config", "fn.yaml", "a", "b"]),
            standalone(paths.clone())
        );
        // Flags in any order; `--` ends the options; `-` is stdin.
        assert_eq!(
            run(&["a", "--config", "fn.yaml", "b"]),
            standalone(paths.clone())
        );
        assert_eq!(run(&["a", "b", "-c", "fn.yaml"]), standalone(paths));
        assert_eq!(
            run(&["--config=fn.yaml", "--", "--odd"]),
            standalone(vec![Source::Path("--odd".into())])
        );
        assert_eq!(run(&["--config=fn.yaml"]), standalone(vec![Source::Stdin]));
        assert_eq!(
            run(&["-", "-c", "fn.yaml"]),
            standalone(vec![Source::Stdin])
        );
    }

    #[test]
    fn writes_and_reports() {
        let Mode::Standalone { write, report, .. } = run(&[
            "pkg",
            "--in-place",
            "-q",
            "--config",
            "f",
            "--results",
            "r.yaml",
        ]) else {
            panic!("standalone");
        };
        assert_eq!(write, Write::InPlace);
        assert_eq!(report.level, Level::Quiet);
        assert_eq!(report.results, Some(PathBuf::from("r.yaml")));
        let write_of = |args: &[&str]| match run(args) {
            Mode::Standalone { write, .. } => write,
            m => panic!("{m:?}"),
        };
        assert_eq!(
            write_of(&["-c", "f", "p", "--diff", "--check"]),
            Write::Diff { check: true }
        );
        assert_eq!(write_of(&["-c", "f", "p", "--check"]), Write::Check);
        assert_eq!(
            write_of(&["-c", "f", "p", "-o", "out"]),
            Write::Output("out".into())
        );
        let Mode::Merge2 { report, .. } = run(&["merge2", "-v", "a", "b"]) else {
            panic!("merge2");
        };
        assert_eq!(report.level, Level::Verbose);
    }

    #[test]
    fn merge_options() {
        let Mode::Merge3 { opts, .. } = run(&[
            "merge3",
            "--new-list-items=prepend",
            "o",
            "u",
            "--conflicts",
            "error",
            "d",
            "--no-infer-merge-keys",
        ]) else {
            panic!("merge3");
        };
        assert_eq!(opts.new_list_items, NewItems::Prepend);
        assert_eq!(opts.conflicts, Conflicts::Error);
        assert!(!opts.infer_merge_keys);
    }

    #[test]
    fn diff_requests() {
        let Mode::Diff(req) = run(&["diff", "a.yaml", "-", "--type", "json6902", "-q"]) else {
            panic!("diff");
        };
        assert_eq!(req.old, Source::Path("a.yaml".into()));
        assert_eq!(req.new, Source::Stdin);
        assert_eq!(req.patch_type, PatchType::Json6902);
        assert_eq!(req.report.level, Level::Quiet);
        assert_eq!((req.original, req.format, req.package), (None, None, false));
        let Mode::Diff(req) = run(&[
            "diff",
            "--original",
            "last.yaml",
            "live.yaml",
            "new.yaml",
            "--conflicts=error",
            "--schema",
            "s.json",
        ]) else {
            panic!("diff");
        };
        assert_eq!(req.original, Some(Source::Path("last.yaml".into())));
        assert_eq!(req.conflicts, Conflicts::Error);
        assert_eq!(req.schema, Some(PathBuf::from("s.json")));
        let Mode::Diff(req) = run(&["diff", "base", "prod", "--format", "kustomization"]) else {
            panic!("diff");
        };
        assert_eq!(req.format, Some(Format::Kustomization));
        assert_eq!(req.patch_type, PatchType::Merge2);
        for (args, says) in [
            (&["diff", "a"][..], "<NEW>"),
            (&["diff", "-", "-"], "once"),
            (&["diff", "--original", "-", "-", "b"], "once"),
            (&["diff", "--type", "merge3", "a", "b"], "merge3"),
            (&["diff", "--conflicts", "error", "a", "b"], "--original"),
            (
                &["diff", "--original", "o", "--type", "json6902", "a", "b"],
                "merge2 only",
            ),
            (
                &["diff", "--original", "o", "--format", "merge", "a", "b"],
                "--format",
            ),
            (
                &[
                    "diff",
                    "--format",
                    "kustomization",
                    "--type",
                    "jsonmerge",
                    "a",
                    "b",
                ],
                "JSON merge",
            ),
            (
                &[
                    "diff",
                    "--format",
                    "kustomization",
                    "--infer-merge-keys",
                    "a",
                    "b",
                ],
                "infers",
            ),
        ] {
            let e = usage_error(args);
            assert!(e.contains(says), "{args:?}: {e}");
            // clap's own value errors show no usage; the others show diff's.
            assert!(
                args.contains(&"merge3") || e.contains("Usage: krm-merge diff"),
                "{args:?}: {e}"
            );
        }
    }

    #[test]
    fn subcommand_typos_get_the_command_meant() {
        let names: Vec<String> = Cli::command()
            .get_subcommands()
            .map(|c| c.get_name().to_owned())
            .collect();
        assert_eq!(names, COMMANDS);
        let e = usage_error(&["merg2", "a", "b"]);
        assert!(e.contains("'merg2'") && e.contains("'merge2'"), "{e}");
        let e = usage_error(&["shcema"]);
        assert!(e.contains("'schema'"), "{e}");
        // A path is a path: no command is suggested for it.
        assert!(!usage_error(&["merg2.yaml", "b"]).contains("subcommand"));
    }

    #[test]
    fn usage_errors_name_the_argument() {
        assert!(usage_error(&["merge2", "a"]).contains("<DEST>"));
        assert!(usage_error(&["--config"]).contains("--config"));
        let typo = usage_error(&["--confg", "fn.yaml"]);
        assert!(
            typo.contains("'--confg'") && typo.contains("--config"),
            "{typo}"
        );
        assert!(usage_error(&["merge2", "--conflicts", "maybe", "a", "b"]).contains("--conflicts"));
        assert!(usage_error(&["merge3", "--conflicts", "maybe", "a", "b", "c"]).contains("maybe"));
        assert!(usage_error(&["a.yaml", "b.yaml"]).contains("'a.yaml': a PATH needs --config"));
        assert!(usage_error(&["--in-place", "pkg"]).contains("--config"));
        assert!(usage_error(&["-c", "f", "--in-place"]).contains("not stdin"));
        assert!(usage_error(&["-c", "f", "-", "-"]).contains("once"));
        assert!(usage_error(&["-c", "f", "p", "--in-place", "--diff"]).contains("--diff"));
    }
}
