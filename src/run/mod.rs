//! The run: text in, the plan run over the resources, text and results out — one entry point
//! per way the function is called.
//!
//! The stage's parts: how input is read, chosen once and parsed once (`read.rs`: a
//! ResourceList by its items, `items.rs`; a stream by its documents; anything else whole), in
//! pieces on every core where it is large (`pieces.rs`); the `engine` that loops over the
//! items and applies each step to each (`steps.rs`, one function per patch type, inside the
//! guard of `guard.rs` and `invariants.rs`), with its state in values of their own (the alias
//! state, `aliases.rs`; results and counts, `report.rs`; rename tracking, `renames.rs`); a
//! package's files read each on its own ([`package`]).
//!
//! * [`run_resource_list`] — KRM mode: a `ResourceList` whose `functionConfig` says what to do.
//!   The output is always a ResourceList carrying the results (the KRM Functions Specification).
//! * [`run_stream`] — a plan known before the resources are read (standalone and exec-plugin
//!   modes): a stream or a `ResourceList`, written back in the same form.
//! * [`run_input`] — a plan over input read whole (the `merge2` and `merge3` commands).
//!
//! Every way of reading gives the same output, list kinds (`RoleList`, ...) included: the engine
//! reads their items as resources wherever they come; and so does every way of cutting the
//! input into pieces ([`Pieces`]), results included.
//!
//! **All or nothing.** When any step fails, the output holds the items as they came in: a
//! stream's own text, a ResourceList's text with the results after it (or, read whole, its
//! items as they came, kept aside, with the results added) — never read again.
//!
//! What it must not do: touch files, stdin or stdout, or decide exit codes (the caller does,
//! from the results).

mod aliases;
pub(crate) mod engine;
mod guard;
mod invariants;
mod items;
pub mod package;
pub mod pairing;
mod pieces;
mod read;
mod renames;
mod report;
mod steps;
mod update;

pub(crate) use crate::krm::{FnResult, Severity};
pub use pieces::Pieces;
pub use report::escalate;

use crate::config::{self, Plan};
use crate::krm::{self, Input, ReadError, StreamOut};
use crate::select::bookkeeping;
use crate::select::identity::Id;
use crate::yaml::{Document, Node};
use engine::{Engine, Setup};
use read::{Documents, Parses, Reader, Reading, Stop};

/// What a run gives back: the text to write, and what happened.
#[derive(Debug)]
pub struct Output {
    /// The output: the patched resources, or on failure the input as it came (in KRM mode, a
    /// ResourceList with the results inside).
    pub text: String,
    /// Every result, errors included.
    pub results: Vec<FnResult>,
    /// How many bytes of input the YAML reader read: the input's size, each byte once, on the
    /// success path (more where it was read again: see the module documentation of reading).
    pub parsed: usize,
}

impl Output {
    fn new(text: impl Into<String>, results: Vec<FnResult>) -> Output {
        Output {
            text: text.into(),
            results,
            parsed: 0,
        }
    }

    /// Whether any result is an error: nothing was changed.
    pub fn failed(&self) -> bool {
        self.results.iter().any(|r| r.severity == Severity::Error)
    }
}

/// How a run reads its input besides the text: what the command line says.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Options {
    /// Which files a ResourceList's functionConfig may read (KRM mode: `--load-restrictor`).
    pub restrictor: config::LoadRestrictor,
    /// How the input is cut into pieces read on every core.
    pub pieces: Pieces,
    /// The functionConfig's file, when the caller knows it and the ResourceList does not say
    /// (`kpt fn eval --fn-config FILE`), with the identity of the config it holds: its `path:`
    /// files are read relative to it when the ResourceList's functionConfig has that identity.
    pub config_file: Option<(std::path::PathBuf, Id<'static>)>,
}

/// KRM mode: reads a ResourceList, applies its functionConfig, returns the ResourceList with its
/// results. Errors never lose the items: they come back as they came, with error results.
pub fn run_resource_list(src: &str) -> Output {
    run_krm(src, &Options::default())
}

/// [`run_resource_list`] with `options`. The functionConfig's files are read relative to its
/// own directory when kpt's path annotation names it (else the current directory), and confined
/// to the current directory's tree (the package root under kpt) unless the restrictor lifts it.
pub fn run_krm(src: &str, options: &Options) -> Output {
    let parses = Parses::default();
    let reader = Reader {
        pieces: options.pieces,
        parses: &parses,
    };
    let mut out = match Reading::of(src) {
        Reading::Items(_) => krm_items(src, options, reader),
        Reading::List(_) | Reading::Documents | Reading::Whole => None,
    }
    .unwrap_or_else(|| krm_whole(src, options, reader));
    out.parsed = parses.bytes();
    out
}

/// KRM mode for a block ResourceList, read by its items. `None`: read it whole.
fn krm_items(src: &str, options: &Options, reader: Reader<'_>) -> Option<Output> {
    let Reading::Items(layout) = Reading::of(src) else {
        return None;
    };
    let wrapper = items::wrapper(src, &layout, items::Around::ResourceList, reader)?;
    // Without a functionConfig, the whole read says so (as it says everything else).
    let fc = wrapper.function_config()?;
    let config_id = Id::of(fc).into_owned();
    // An invalid functionConfig: the whole read reports it, with the items as they came (and
    // reports first whatever else is wrong with them, which nothing here has read yet).
    let plan = config::plan_with(fc, &krm_load(fc, options)).ok()?;
    items_run(src, layout, &wrapper, &plan, Some(&config_id), reader, true)
}

/// A block ResourceList's items through `plan`: the input's text with the touched items
/// rewritten, the new ones after the last, and (with `results`) the results after it all; on
/// failure the input's text and the results. `None`: read it whole.
fn items_run(
    src: &str,
    layout: crate::yaml::split::ListLayout,
    wrapper: &items::Wrapper,
    plan: &Plan,
    config: Option<&Id<'static>>,
    reader: Reader<'_>,
    results: bool,
) -> Option<Output> {
    // The output's room is taken before anything is read, so that a lack of memory is found
    // here, as an error, rather than as an abort halfway through.
    let Some(StreamOut { text: out }) = StreamOut::try_for(src.len()) else {
        return Some(out_of_memory(src, krm::output_room(src.len())));
    };
    let mut setup = Setup::new(plan, config);
    let items = items::Items::cut(src, layout, wrapper, reader, &mut setup)?;
    let mut engine = Engine::new(&setup);
    engine.one_document();
    let mut read = items.run(&mut engine, out, reader, None)?;
    let end = engine.finish();
    if end.failed {
        drop(read);
        return Some(if results {
            with_results_after(src, end.results)
        } else {
            match copy_of(src) {
                Some(text) => Output::new(text, end.results),
                None => out_of_memory(src, src.len()),
            }
        });
    }
    items::write_added(&mut read, &end.added);
    let rest = src.get(read.rest..)?;
    let mut text = read.out;
    if text.try_reserve(rest.len() + 256).is_err() {
        return Some(out_of_memory(src, text.len() + rest.len()));
    }
    text.push_str(rest);
    if results && !end.results.is_empty() {
        if !text.ends_with('\n') {
            text.push('\n');
        }
        text.push_str(&krm::results_block(&end.results));
    }
    Some(Output::new(text, end.results))
}

/// The input as it came, with `results` after it (a block ResourceList without results).
fn with_results_after(src: &str, results: Vec<FnResult>) -> Output {
    let Some(mut text) = copy_of(src) else {
        return out_of_memory(src, src.len());
    };
    if !results.is_empty() {
        if !text.ends_with('\n') {
            text.push('\n');
        }
        text.push_str(&krm::results_block(&results));
    }
    Output::new(text, results)
}

/// KRM mode for input read whole.
fn krm_whole(src: &str, options: &Options, reader: Reader<'_>) -> Output {
    reader.parses.add(src);
    let input = match Input::read(src) {
        Ok(i) => i,
        Err(e @ ReadError::Shape(_)) => {
            // YAML, but not a ResourceList we can patch: it goes back as it came.
            let r = FnResult::new(Severity::Error, format!("stdin: {e}"));
            return match krm::with_results(src, std::slice::from_ref(&r)) {
                Some(text) => Output::new(text, vec![r]),
                None => unreadable(r),
            };
        }
        Err(e) => return unreadable(FnResult::new(Severity::Error, format!("stdin: {e}"))),
    };
    if !input.is_resource_list() {
        return unreadable(FnResult::new(
            Severity::Error,
            "stdin is not a ResourceList; to patch plain YAML give the functionConfig with --config FN.yaml",
        ));
    }
    let Some(fc) = input.function_config() else {
        // Nothing says what to patch: an error saying how to give it (an empty ConfigMap,
        // kpt's `function-input` without arguments, says the same when the plan is made).
        let r = FnResult::new(Severity::Error, report::NO_CONFIG);
        return written(input, vec![r]);
    };
    let config_id = Id::of(fc).into_owned();
    match config::plan_with(fc, &krm_load(fc, options)) {
        Ok(plan) => run_whole(src, input, &plan, Some(&config_id)),
        Err(errors) => written(input, invalid_config(&errors)),
    }
}

/// A functionConfig that does not validate: an error result per field at fault.
pub fn invalid_config(errors: &config::ConfigErrors) -> Vec<FnResult> {
    errors
        .iter()
        .map(|e| {
            FnResult::new(
                Severity::Error,
                format!("invalid functionConfig: {}", e.message),
            )
            .at_field(e.field.clone())
        })
        .collect()
}

/// KRM mode for input that is not text at all: an empty ResourceList carrying the error.
pub fn unreadable(error: FnResult) -> Output {
    let results = vec![error];
    Output::new(krm::results_only(&results), results)
}

/// Standalone and exec-plugin modes: `plan` applied to the resources of `src` (a stream, a
/// `List` or a ResourceList), written back in the same form. `config`: the functionConfig's
/// identity, when it may be among the resources.
pub fn run_stream(src: &str, plan: &Plan, config: Option<&Id<'static>>) -> Output {
    run_stream_with(src, plan, config, Pieces::Auto)
}

/// [`run_stream`], the input cut into pieces as `pieces` says.
pub fn run_stream_with(
    src: &str,
    plan: &Plan,
    config: Option<&Id<'static>>,
    pieces: Pieces,
) -> Output {
    let parses = Parses::default();
    let reader = Reader {
        pieces,
        parses: &parses,
    };
    let mut out = match Reading::of(src) {
        Reading::Items(layout) => items::wrapper(src, &layout, items::Around::ResourceList, reader)
            .and_then(|w| items_run(src, layout, &w, plan, config, reader, true)),
        // A list kind by its items is the package's reading (`package::run_with`, what the
        // command line runs); here it is a document.
        Reading::List(_) | Reading::Documents => Some(documents_run(src, plan, config, reader)),
        Reading::Whole => None,
    }
    .unwrap_or_else(|| whole_run(src, plan, config, reader));
    out.parsed = parses.bytes();
    out
}

/// A plain stream through `plan`, document by document.
fn documents_run(
    src: &str,
    plan: &Plan,
    config: Option<&Id<'static>>,
    reader: Reader<'_>,
) -> Output {
    let Some(out) = StreamOut::try_for(src.len()) else {
        return out_of_memory(src, krm::output_room(src.len()));
    };
    let mut setup = Setup::new(plan, config);
    let documents = Documents::cut(src, reader, &mut setup);
    let mut engine = Engine::new(&setup);
    let read = match documents.run(&mut engine, out, reader, None) {
        Ok(read) => read,
        // A ResourceList whose `kind` its lines did not show.
        Err(Stop::Wrapped) => return whole_run(src, plan, config, reader),
        // The items go back as they came: here, the text itself.
        Err(Stop::Read(e)) => {
            return Output::new(
                src,
                vec![FnResult::new(Severity::Error, format!("input: {e}"))],
            )
        }
    };
    let mut out = read.out;
    let end = engine.finish();
    // All or nothing: on failure the stream goes back as it came.
    if end.failed {
        drop(out);
        return match copy_of(src) {
            Some(text) => Output::new(text, end.results),
            None => out_of_memory(src, src.len()),
        };
    }
    for item in end.added {
        out.document(Document::new(item.node));
    }
    Output::new(out.text, end.results)
}

/// Input read whole through `plan`.
fn whole_run(src: &str, plan: &Plan, config: Option<&Id<'static>>, reader: Reader<'_>) -> Output {
    reader.parses.add(src);
    match Input::read(src) {
        Ok(input) => run_whole(src, input, plan, config),
        Err(e) => Output::new(
            src,
            vec![FnResult::new(Severity::Error, format!("input: {e}"))],
        ),
    }
}

/// `plan` applied to input read whole (the `merge2` and `merge3` commands).
pub fn run_input(src: &str, input: Input<'_>, plan: &Plan) -> Output {
    run_whole(src, input, plan, None)
}

/// [`run_input`]; `config`: the functionConfig's identity, when it may be among the resources.
pub fn run_input_with(
    src: &str,
    input: Input<'_>,
    plan: &Plan,
    config: Option<&Id<'static>>,
) -> Output {
    run_whole(src, input, plan, config)
}

/// Where a ResourceList's functionConfig reads its files in KRM mode, as the standalone filter
/// reads them, relative to the config file's directory, wherever the host says that is:
///
/// * kpt's annotations on the functionConfig (`kpt fn render`: its path in the package, and
///   the package's own directory, which need not be the current one): that directory, confined
///   to the package's tree;
/// * else the file kpt's `--fn-config` named, when the caller found it ([`Options::config_file`],
///   `kpt fn eval`, which annotates nothing): its directory, confined to its tree;
/// * else the current directory, and its tree (the package root when kpt runs there).
///
/// `--load-restrictor none` lifts the confinement.
fn krm_load(fc: &Node<'_>, options: &Options) -> config::Load {
    use config::BaseDir;
    let restrictor = options.restrictor;
    if let Some((dir, package)) = config_dir(fc) {
        let root = package
            .clone()
            .unwrap_or_else(|| std::path::PathBuf::from("."));
        let base = match package {
            Some(p) => p.join(&dir),
            None => dir,
        };
        return config::Load::new(Some(&base))
            .with_root(Some(&root))
            .restricted(restrictor)
            .based(BaseDir::KptAnnotation);
    }
    if let Some((file, _)) = options
        .config_file
        .as_ref()
        .filter(|(_, id)| Id::of(fc).same(id))
    {
        let dir = file
            .parent()
            .filter(|d| !d.as_os_str().is_empty())
            .unwrap_or(std::path::Path::new("."));
        return config::Load::new(Some(dir))
            .restricted(restrictor)
            .based(BaseDir::KptFnConfig);
    }
    config::Load::new(None)
        .with_root(Some(std::path::Path::new(".")))
        .restricted(restrictor)
        .based(BaseDir::Unknown)
}

/// The directory of the functionConfig's file when kpt says where it is (its path annotation,
/// relative to the package), and the package's directory when kpt says that too (an absolute
/// path: `kpt fn render` runs the function in its own current directory, not the package's).
fn config_dir(fc: &Node<'_>) -> Option<(std::path::PathBuf, Option<std::path::PathBuf>)> {
    let (path, _) = bookkeeping::file_of(fc)?;
    let dir = std::path::Path::new(path).parent()?;
    let dir = if dir.as_os_str().is_empty() {
        std::path::PathBuf::from(".")
    } else {
        dir.to_path_buf()
    };
    let package = fc
        .get_path(&["metadata", "annotations", PACKAGE_PATH])
        .and_then(Node::as_str)
        .map(std::path::PathBuf::from)
        .filter(|p| p.is_absolute());
    Some((dir, package))
}

/// The annotation `kpt fn render` gives every item and the functionConfig: the package's
/// directory, absolute.
const PACKAGE_PATH: &str = "internal.config.kubernetes.io/package-path";

/// `plan` applied to input held whole. A ResourceList's wrapper and items are kept aside as they
/// came, so that a failed run writes them back without reading the input again.
fn run_whole(src: &str, input: Input<'_>, plan: &Plan, config: Option<&Id<'static>>) -> Output {
    let Input { mut form, items } = input;
    let kept = match &form {
        krm::Form::Wrapped { doc, json } => Some((doc.clone(), *json, items.clone())),
        krm::Form::Stream { .. } => None,
    };
    let wrapper = match &mut form {
        krm::Form::Wrapped { doc, .. } => doc.root.as_mut(),
        krm::Form::Stream { .. } => None,
    };
    let run = engine::run_document(plan, items, config, wrapper);
    if run.failed {
        // All or nothing: the items as they came in. A stream is its own text.
        return match kept {
            None => Output::new(src, run.results),
            Some((doc, json, items)) => {
                let form = krm::Form::Wrapped { doc, json };
                written(Input { form, items }, run.results)
            }
        };
    }
    let text = krm::write_string(form, run.items, &run.results);
    Output::new(text, run.results)
}

/// A copy of `src`, or `None` when the memory for it is not there.
fn copy_of(src: &str) -> Option<String> {
    let mut text = String::new();
    text.try_reserve_exact(src.len()).ok()?;
    text.push_str(src);
    Some(text)
}

/// The run ends with an error, not an abort, when the output cannot be held: `needed` bytes
/// more than the memory allows (the input is held too). The input goes back as it came when it
/// can be copied; otherwise nothing is written but the error.
fn out_of_memory(src: &str, needed: usize) -> Output {
    let mib = |b: usize| b.div_ceil(1 << 20);
    let r = FnResult::new(
        Severity::Error,
        format!(
            "not enough memory to hold the output ({} MiB more, beside the {} MiB input); \
             nothing was changed",
            mib(needed),
            mib(src.len())
        ),
    );
    match copy_of(src) {
        Some(text) => Output::new(text, vec![r]),
        None => Output::new(String::new(), vec![r]),
    }
}

/// The input's items written back unchanged, with `results`.
fn written(input: Input<'_>, results: Vec<FnResult>) -> Output {
    let Input { form, items } = input;
    let text = krm::write_string(form, items, &results);
    Output::new(text, results)
}

/// The first document of `text`, owned: how the run's unit tests write a resource.
#[cfg(test)]
pub(crate) fn test_node(text: &str) -> crate::yaml::Node<'static> {
    crate::yaml::parse_stream(text)
        .unwrap()
        .remove(0)
        .root
        .unwrap()
        .into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::yaml::{self, parse_stream};

    const FN: &str = "apiVersion: fn.krm-merge.dev/v1alpha1\nkind: Merge\nmetadata: {name: m}\nspec:\n  patches:\n  - target: {kind: ConfigMap}\n    patch: '{data: {b: \"2\"}}'\n";

    fn reader(parses: &Parses) -> Reader<'_> {
        Reader {
            pieces: Pieces::Auto,
            parses,
        }
    }

    fn plan() -> Plan {
        let doc = parse_stream(FN).unwrap().remove(0).root.unwrap();
        config::plan(&doc, None).unwrap()
    }

    #[test]
    fn a_stream_is_patched_and_untouched_documents_are_copied() {
        let src = "# keep\napiVersion: v1\nkind: Secret\nmetadata: {name: s}\n---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\ndata:\n  a: \"1\"\n";
        let out = run_stream(src, &plan(), None);
        assert!(!out.failed(), "{:?}", out.results);
        assert!(out
            .text
            .starts_with("# keep\napiVersion: v1\nkind: Secret\nmetadata: {name: s}\n---\n"));
        assert!(
            out.text.ends_with("data:\n  a: \"1\"\n  b: \"2\"\n"),
            "{}",
            out.text
        );
        assert_eq!(
            out.results.last().map(|r| r.message.as_str()),
            Some("patch[0] (merge2): applied to 1 resource(s)")
        );
    }

    #[test]
    fn a_failed_run_gives_the_stream_back_as_it_came() {
        let src = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\ndata: [1]\n";
        let doc = parse_stream("apiVersion: fn.krm-merge.dev/v1alpha1\nkind: Merge\nspec:\n  patches:\n  - target: {kind: ConfigMap}\n    type: json6902\n    patch: '[{op: remove, path: /data/9}]'\n").unwrap().remove(0).root.unwrap();
        let plan = config::plan(&doc, None).unwrap();
        let out = run_stream(src, &plan, None);
        assert!(out.failed());
        assert_eq!(out.text, src);
    }

    #[test]
    fn the_resource_list_paths_agree() {
        let rl = format!(
            "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n- apiVersion: v1\n  kind: ConfigMap\n  metadata: {{name: c}}\n  data: {{a: \"1\"}}\nfunctionConfig:\n{}",
            FN.lines().map(|l| format!("  {l}\n")).collect::<String>()
        );
        let by_items = krm_items(&rl, &Options::default(), reader(&Parses::default()))
            .expect("a block ResourceList");
        let whole = run_whole(&rl, Input::read(&rl).unwrap(), &plan(), None);
        let data = |text: &str| {
            let doc = parse_stream(text).unwrap().remove(0).root.unwrap();
            yaml::to_json(doc.get("items").unwrap()).unwrap()
        };
        assert_eq!(data(&by_items.text), data(&whole.text));
        assert_eq!(run_resource_list(&rl).text, by_items.text);
    }

    #[test]
    fn not_a_resource_list_in_krm_mode_is_an_error_result() {
        let out = run_resource_list("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n");
        assert!(out.failed());
        assert!(out.text.contains("kind: ResourceList"), "{}", out.text);
    }

    /// The parse counter: a ResourceList with CRDs among its items, and a stream with CRDs, are
    /// parsed once, whole or in pieces; the CRDs are learned before any resource is merged.
    #[test]
    fn input_with_crds_is_parsed_once() {
        let crd = "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata:\n  name: foos.example.com\nspec:\n  group: example.com\n  names: {kind: Foo, plural: foos}\n  scope: Namespaced\n  versions:\n  - name: v1\n    served: true\n    storage: true\n    schema:\n      openAPIV3Schema:\n        type: object\n        properties:\n          spec:\n            type: object\n            properties:\n              ports:\n                type: array\n                x-kubernetes-list-type: map\n                x-kubernetes-list-map-keys: [port]\n                items:\n                  type: object\n                  properties:\n                    port: {type: integer}\n                    name: {type: string}\n";
        let foo = "apiVersion: example.com/v1\nkind: Foo\nmetadata:\n  name: f\nspec:\n  ports:\n  - port: 80\n    name: http\n  - port: 443\n    name: https\n";
        let fc = "apiVersion: fn.krm-merge.dev/v1alpha1\nkind: Merge\nmetadata: {name: m}\nspec:\n  patches:\n  - target: {kind: Foo}\n    patch: '{spec: {ports: [{port: 443, name: tls}]}}'\n";
        let indent = |t: &str, first: &str| {
            t.lines()
                .enumerate()
                .map(|(i, l)| format!("{}{l}\n", if i == 0 { first } else { "  " }))
                .collect::<String>()
        };
        // The resource comes before its CRD: the CRD must still be known first.
        let rl = format!(
            "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n{}{}functionConfig:\n{}",
            indent(foo, "- "),
            indent(crd, "- "),
            indent(fc, "  ")
        );
        let stream = format!("{foo}---\n{crd}");
        let doc = parse_stream(fc).unwrap().remove(0).root.unwrap();
        let plan = config::plan(&doc, None).unwrap();
        for pieces in [Pieces::Whole, Pieces::Size(1), Pieces::Auto] {
            let options = Options {
                pieces,
                ..Options::default()
            };
            let out = run_krm(&rl, &options);
            assert!(!out.failed(), "{:?}", out.results);
            assert_eq!(out.parsed, rl.len(), "{pieces:?}");
            // Merged by the CRD's key: both ports stay, 443 renamed.
            assert!(
                out.text.contains(
                    "    - port: 80\n      name: http\n    - port: 443\n      name: tls\n"
                ),
                "{}",
                out.text
            );
            let out = run_stream_with(&stream, &plan, None, pieces);
            assert!(!out.failed(), "{:?}", out.results);
            assert_eq!(out.parsed, stream.len(), "{pieces:?}");
            assert!(
                out.text
                    .contains("  - port: 80\n    name: http\n  - port: 443\n    name: tls\n"),
                "{}",
                out.text
            );
        }
    }
}
