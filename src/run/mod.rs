//! The run: text in, the plan run over the resources, text and results out — one entry point
//! per way the function is called, each choosing how to read its input.
//!
//! The stage's parts: the [`engine`] that loops over the items and applies each step to each
//! (`steps.rs`, one function per patch type, inside the guard of `guard.rs` and
//! `invariants.rs`), with its state in values of their own (the alias state, `aliases.rs`; the
//! results and counts, `report.rs`; rename tracking, `renames.rs`); a large stream read in
//! pieces on every core (`pieces.rs`); a package's files read each on its own ([`package`]).
//!
//! * [`run_resource_list`] — KRM mode: a `ResourceList` whose `functionConfig` says what to do.
//!   The output is always a ResourceList carrying the results (the KRM Functions Specification).
//! * [`run_stream`] — a plan known before the resources are read (standalone and exec-plugin
//!   modes): a stream or a `ResourceList`, written back in the same form.
//! * [`run_input`] — a plan over input read whole (the `merge2` and `merge3` commands).
//!
//! **How input is read.** The fastest way that applies: a block-style ResourceList item by item
//! and a plain stream document by document, with one resource's tree in memory at a time and
//! untouched items copied as text; a large stream in pieces on every core (`krm/parallel.rs`);
//! anything else (JSON, flow style, existing results) read whole with
//! [`Input::read`]. Every way gives the same output, list kinds (`RoleList`, ...) included: the
//! engine reads their items as resources wherever they come.
//!
//! **All or nothing.** When any step fails, the output holds the items as they came in: a
//! stream's own text, a ResourceList's items unchanged (with the results added).
//!
//! What it must not do: touch files, stdin or stdout, or decide exit codes (the caller does,
//! from the results).

mod aliases;
pub mod engine;
mod guard;
mod invariants;
pub mod package;
mod pieces;
mod renames;
mod report;
mod steps;

pub use crate::krm::{FnResult, Severity};

use crate::config::{self, Plan};
use crate::krm::{self, Input, ReadError, StreamOut, Streamed};
use crate::select::bookkeeping;
use crate::select::identity::Id;
use crate::yaml::split::{probe_function_config, starts_at_its_dash};
use crate::yaml::{self, parse_each, parse_split, parse_stream, Document, EmitOptions, Node};
use engine::{Engine, Setup};

/// What a run gives back: the text to write, and what happened.
#[derive(Debug)]
pub struct Output {
    /// The output: the patched resources, or on failure the input as it came (in KRM mode, a
    /// ResourceList with the results inside).
    pub text: String,
    /// Every result, errors included.
    pub results: Vec<FnResult>,
}

impl Output {
    fn new(text: impl Into<String>, results: Vec<FnResult>) -> Output {
        Output {
            text: text.into(),
            results,
        }
    }

    /// Whether any result is an error: nothing was changed.
    pub fn failed(&self) -> bool {
        self.results.iter().any(|r| r.severity == Severity::Error)
    }
}

/// KRM mode: reads a ResourceList, applies its functionConfig, returns the ResourceList with its
/// results. Errors never lose the items: they come back as they came, with error results.
pub fn run_resource_list(src: &str) -> Output {
    run_resource_list_with(src, config::LoadRestrictor::RootOnly)
}

/// [`run_resource_list`] with the functionConfig's files (`path:`, ...) restricted as
/// `restrictor` says: the command line's `--load-restrictor`. The files are read relative to
/// the functionConfig's own directory when kpt's path annotation names it (else the current
/// directory), and confined to the current directory's tree: the package root under kpt.
pub fn run_resource_list_with(src: &str, restrictor: config::LoadRestrictor) -> Output {
    if let Some(out) = resource_list_by_items(src, restrictor) {
        return out;
    }
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
        // As with an empty ConfigMap (kpt's `function-input` without arguments): nothing to do.
        let r = FnResult::new(
            Severity::Info,
            "the ResourceList has no functionConfig: nothing to do",
        );
        return written(input, vec![r]);
    };
    let config_id = Id::of(fc).into_owned();
    match config::plan_with(fc, &krm_load(fc, restrictor)) {
        Ok(plan) => run_whole(src, input, &plan, Some(&config_id)),
        Err(e) => {
            let r = FnResult::new(
                Severity::Error,
                format!("invalid functionConfig: {}", e.message),
            )
            .at_field(e.field.clone());
            written(input, vec![r])
        }
    }
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
    // The patches are known before the resources are read, so they are applied to each resource
    // as it is parsed: one tree in memory at a time, untouched documents copied as text.
    let mut setup = Setup::new(plan, config);
    learn_crds(src, &mut setup, |src, setup| {
        // Parse errors are reported by the pass that follows.
        let _ = parse_each(src, |d| {
            if let Some(root) = d.root.as_ref() {
                setup.learn_crds(root);
            }
        });
    });
    let mut engine = Engine::new(&setup);
    let (mut out, streamed) = match pieces::stream(src, &mut engine) {
        Some(done) => (done.out, Ok(Streamed::Done)),
        None => {
            // The output's room is taken before anything is read, so that a lack of memory is
            // found here, as an error, rather than as an abort halfway through.
            let Some(mut out) = StreamOut::try_for(src.len()) else {
                return out_of_memory(src, krm::output_room(src.len()));
            };
            let streamed = krm::stream_items(src, &mut |item| engine.process(item), &mut out);
            (out, streamed)
        }
    };
    match streamed {
        // The items go back as they came: here, the text itself.
        Err(e) => Output::new(
            src,
            vec![FnResult::new(Severity::Error, format!("input: {e}"))],
        ),
        Ok(Streamed::Wrapped) => match Input::read(src) {
            Ok(input) => run_whole(src, input, plan, config),
            Err(e) => Output::new(
                src,
                vec![FnResult::new(Severity::Error, format!("input: {e}"))],
            ),
        },
        Ok(Streamed::Done) => {
            let end = engine.finish();
            for item in end.added {
                out.document(Document::new(item.node));
            }
            // All or nothing: on failure the stream goes back as it came.
            if end.failed {
                drop(out);
                return match copy_of(src) {
                    Some(text) => Output::new(text, end.results),
                    None => out_of_memory(src, src.len()),
                };
            }
            Output::new(out.text, end.results)
        }
    }
}

/// `plan` applied to input read whole (the `merge2` and `merge3` commands).
pub fn run_input(src: &str, input: Input<'_>, plan: &Plan) -> Output {
    run_whole(src, input, plan, None)
}

/// Learns the CRDs of the input before any resource is merged, when there may be some: the
/// schema must know them all first. `scan` gives the setup each document it reads.
fn learn_crds<'s, 'p>(
    src: &'s str,
    setup: &mut Setup<'p>,
    scan: impl FnOnce(&'s str, &mut Setup<'p>),
) {
    // A cheap test first: most packages have no CRD, and the scan reads everything.
    if src.contains("CustomResourceDefinition") {
        scan(src, setup);
    }
}

/// The ResourceList read item by item: the functionConfig is found first (by reading lines,
/// then checked against the parse), each item goes through the patches as soon as it is parsed,
/// and the output is the input's text with the touched items rewritten and the results added.
/// One item's tree is in memory at a time. `None` when the input is not a block-style
/// ResourceList this can handle (JSON, existing results, several documents, a functionConfig
/// that does not validate): the caller reads it whole, which also reports errors with the items.
fn resource_list_by_items(src: &str, restrictor: config::LoadRestrictor) -> Option<Output> {
    let fc_text = probe_function_config(src)?;
    let fc_docs = parse_stream(fc_text).ok()?;
    let fc = fc_docs.first()?.root.as_ref()?.get("functionConfig")?;
    if fc.is_null() {
        return None;
    }
    let config_id = Id::of(fc).into_owned();
    let plan = config::plan_with(fc, &krm_load(fc, restrictor)).ok()?;
    let mut setup = Setup::new(&plan, Some(&config_id));
    learn_crds(src, &mut setup, |src, setup| {
        let _ = parse_split(src, "items", &mut |node, _| setup.learn_crds(&node));
    });
    let mut engine = Engine::new(&setup);
    engine.one_document();
    // Room for the whole output, taken first (see `run_stream`); the text around the items is
    // put in the same buffer at the end.
    let Some(StreamOut { text: mut out }) = StreamOut::try_for(src.len()) else {
        return Some(out_of_memory(src, krm::output_room(src.len())));
    };
    let mut layout: Option<(usize, EmitOptions)> = None;
    let mut n = 0;
    let mut not_a_resource = false;
    let mut misread = false;
    let split = parse_split(src, "items", &mut |node, info| {
        if !starts_at_its_dash(info.text, info.dash_col) {
            // The item's text does not start at its `-`: a line of the item before it went
            // with this one (an explicit key's `:` alone on its line), and writing either
            // item from its tree, or dropping it, would leave that line behind.
            misread = true;
        }
        if !node.is_map() {
            // Reported by the whole-input path, which names the item.
            not_a_resource = true;
            return;
        }
        let opts = EmitOptions {
            seq_indent: info.seq_indent,
        };
        layout = Some((info.dash_col, opts));
        let item = krm::Item {
            node,
            origin: krm::Origin::Input(n),
            touched: false,
            first_id: None,
        };
        n += 1;
        match engine.process(item) {
            None => {}
            Some(it) if !it.touched => out.push_str(info.text),
            Some(it) => yaml::emit_seq_item(&it.node, info.dash_col, opts, &mut out),
        }
    })
    .ok()?;
    if not_a_resource || misread {
        return None;
    }
    let [doc] = &split.docs[..] else { return None };
    let root = doc.root.as_ref()?;
    // Anchors outside the items may be aliased by them or alias theirs: the whole-input path
    // reads the document around the items too.
    let is_plain_rl = root.is_map()
        && !root.has_anchor()
        && !root.has_alias()
        && !root.is_flow()
        && root.str_at(&["kind"]) == Some("ResourceList")
        && root.get("results").is_none()
        && !doc.end
        && root.get("functionConfig").is_some_and(|f| f.same_data(fc));
    let range = split.items.filter(|_| is_plain_rl)?;
    if !wrapper_around(src, &range, root) {
        return None;
    }
    let (dash_col, opts) = layout?;
    let end = engine.finish();
    for item in &end.added {
        yaml::emit_seq_item(&item.node, dash_col, opts, &mut out);
    }
    let mut whole = if end.failed {
        // All or nothing: the items as they came in.
        drop(out);
        match copy_of(src) {
            Some(text) => text,
            None => return Some(out_of_memory(src, src.len())),
        }
    } else {
        let (head, tail) = (&src[..range.start], &src[range.end..]);
        if out.try_reserve(head.len() + tail.len() + 256).is_err() {
            return Some(out_of_memory(src, out.len() + head.len() + tail.len()));
        }
        out.insert_str(0, head);
        out.push_str(tail);
        out
    };
    if !end.results.is_empty() {
        if !whole.ends_with('\n') {
            whole.push('\n');
        }
        whole.push_str(&krm::results_block(&end.results));
    }
    Some(Output::new(whole, end.results))
}

/// Whether the text around the items' range holds the ResourceList's other keys as the parse
/// read them: the output is that text around the written items, so a range that ran into the
/// next key (a last item ending in an explicit key without a value took the `key:` line after
/// it) would drop that key. Then the whole-input path reads it instead. Costs a parse of the
/// wrapper's own text.
fn wrapper_around(src: &str, range: &std::ops::Range<usize>, root: &Node<'_>) -> bool {
    let (Some(before), Some(after)) = (src.get(..range.start), src.get(range.end..)) else {
        return false;
    };
    let around = format!("{before}{after}");
    let Ok(docs) = parse_stream(&around) else {
        return false;
    };
    let Some(read) = docs.iter().find_map(|d| d.root.as_ref()) else {
        return false;
    };
    let others = |n: &Node<'_>| {
        n.entries()
            .iter()
            .filter(|e| e.key.as_str() != Some("items"))
            .count()
    };
    let mut theirs = read
        .entries()
        .iter()
        .filter(|e| e.key.as_str() != Some("items"));
    others(read) == others(root)
        && root
            .entries()
            .iter()
            .filter(|e| e.key.as_str() != Some("items"))
            .all(|y| {
                theirs
                    .next()
                    .is_some_and(|x| x.key.same_data(&y.key) && x.value.same_data(&y.value))
            })
}

/// Where a ResourceList's functionConfig reads its files in KRM mode: relative to its own
/// file's directory when kpt says where that is (its path annotation, relative to the package
/// root, which is the current directory), else relative to the current directory; and, unless
/// `restrictor` lifts it, confined to the current directory's tree: the package root under kpt,
/// and, with no file known, the only directory the host named.
fn krm_load(fc: &Node<'_>, restrictor: config::LoadRestrictor) -> config::Load {
    config::Load::new(config_dir(fc).as_deref())
        .with_root(Some(std::path::Path::new(".")))
        .restricted(restrictor)
}

/// The directory of the functionConfig's file when kpt says where it is: where its `path:`
/// files are.
fn config_dir(fc: &Node<'_>) -> Option<std::path::PathBuf> {
    let (path, _) = bookkeeping::file_of(fc)?;
    let dir = std::path::Path::new(path).parent()?;
    Some(if dir.as_os_str().is_empty() {
        std::path::PathBuf::from(".")
    } else {
        dir.to_path_buf()
    })
}

/// `plan` applied to input held whole.
fn run_whole(src: &str, input: Input<'_>, plan: &Plan, config: Option<&Id<'static>>) -> Output {
    let Input { mut form, items } = input;
    let wrapper = match &mut form {
        krm::Form::Wrapped { doc, .. } => doc.root.as_mut(),
        krm::Form::Stream { .. } => None,
    };
    let run = engine::run_document(plan, items, config, wrapper);
    if run.failed {
        // All or nothing: the items as they came in. A stream is its own text.
        if matches!(form, krm::Form::Stream { .. }) {
            return Output::new(src, run.results);
        }
        return match Input::read(src) {
            Ok(fresh) => written(fresh, run.results),
            Err(_) => Output::new(src, run.results),
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

#[cfg(test)]
mod tests {
    use super::*;

    const FN: &str = "apiVersion: fn.krm-merge.dev/v1alpha1\nkind: Merge\nmetadata: {name: m}\nspec:\n  patches:\n  - target: {kind: ConfigMap}\n    patch: '{data: {b: \"2\"}}'\n";

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
        let by_items = resource_list_by_items(&rl, config::LoadRestrictor::RootOnly)
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
}
