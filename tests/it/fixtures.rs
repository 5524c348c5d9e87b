//! The fixture runner: every directory `tests/fixtures/<group>/<case>/` is one test,
//! `fixtures::<group>::<case>`, run through the binary and compared byte for byte.
//!
//! A case directory holds:
//!
//! * `config.yaml`: the functionConfig. Its leading comment says what the case shows or guards
//!   (with the upstream issue, for a regression).
//! * `input.yaml`: the resources, a plain YAML stream or a `ResourceList`. Without
//!   `config.yaml`, a `ResourceList` carrying its own `functionConfig` (the comment is then its
//!   leading one).
//! * `expected.yaml`: the exact stdout (empty for a failing standalone run: it writes nothing).
//! * `expected.stderr`: the exact stderr, when there is any; no file means no stderr.
//! * `expected.krm.stderr`: KRM mode's stderr, where it is not `expected.stderr` (see 4): KRM
//!   mode puts warnings in its results only, the standalone filter on stderr too.
//! * `case.yaml`, when the defaults do not fit: `exit` (the exit code, 0 by default),
//!   `idempotent: true` (the config run again on `expected.yaml` changes nothing).
//! * any other file the config names (`path:` patches are read relative to the case directory).
//!
//! The runner, in the case directory, runs each command twice, as one piece and as many
//! (`pieces.rs`: the same output, stderr and `--results` however the input is cut):
//!
//! 1. runs `krm-merge --config config.yaml input.yaml` (the standalone filter), or with no
//!    `config.yaml`, `krm-merge < input.yaml` (KRM mode), and compares the exit code with `exit`,
//!    stdout with `expected.yaml` and stderr with `expected.stderr`;
//! 2. for a case that exits 1, checks that nothing half done was written: the standalone
//!    filter writes nothing to stdout; KRM mode writes the `ResourceList` back as it came (its
//!    results follow);
//! 3. with `idempotent: true`, runs `krm-merge --config config.yaml` on `expected.yaml` and
//!    checks that its output is `expected.yaml` again;
//! 4. where `input.yaml` is a plain stream, runs the same case in KRM mode too: a
//!    `ResourceList` of the input's documents with `config.yaml` as its `functionConfig` on
//!    stdin. It must give the same exit code, the same stderr (or `expected.krm.stderr`, where
//!    KRM mode says it otherwise), and items that are the expected documents (for a failing
//!    case, the input's) as YAML trees: the same data, key order, comments, quoting and flow or
//!    block form; only the indentation differs, as the items sit under `items:`. The results are not compared (the
//!    stream has none to compare with); the cases that are about results have a `ResourceList`
//!    as their input, and their results are in `expected.yaml`.
//!
//! `KRM_MERGE_UPDATE_EXPECTED=1 cargo test --test it fixtures::` writes `expected.yaml`,
//! `expected.stderr` and `expected.krm.stderr` from what the binary does (deleting a stderr
//! file that is no longer wanted) instead of comparing them; the exit code, the unchanged input
//! of a failing case, idempotence and the KRM mode's items are still checked. Review the diff
//! before committing it.
//!
//! A new case is a directory and a line in the `fixtures!` list below; `every_case_is_listed`
//! fails while the two disagree. `tests/fixtures/README.md` says what each group holds.

use std::collections::BTreeSet;
use std::fs;
use std::path::{Path, PathBuf};

use krm_merge::yaml::{self, Node};
use serde_json::Value;

use crate::support::*;

/// One test per case: `fixtures::<group>::<case>` runs `tests/fixtures/<group>/<case>/`.
macro_rules! fixtures {
    ($($group:ident: [$($case:ident),* $(,)?]),* $(,)?) => {
        $(
            mod $group {
                $(
                    #[test]
                    fn $case() {
                        super::run_case(stringify!($group), stringify!($case));
                    }
                )*
            }
        )*

        /// The cases the tests above run, by group.
        const LISTED: &[(&str, &[&str])] = &[$((stringify!($group), &[$(stringify!($case)),*])),*];
    };
}

fixtures! {
    regressions: [
        kustomize_2825_crd_lists_merge_by_key_from_a_crd_in_the_input,
        kustomize_2825_without_the_crd_the_patch_list_replaces_the_list,
        kustomize_3513_ports_with_one_number_and_two_protocols,
        kustomize_3513_ports_under_kustomize_options_give_kustomize_output,
        kustomize_3157_env_order_is_kept,
        kustomize_2037_retain_keys,
        kustomize_2037_set_element_order,
        kustomize_2037_delete_from_primitive_list,
        merge2_patch_strategy_replace_on_a_map_replaces_it,
        merge2_delete_directive_removes_every_element_with_the_key,
        merge2_set_element_order_keeps_duplicates_together,
        merge2_set_element_order_must_agree_with_the_patch_list,
        json6902_copy_of_the_whole_document_into_a_member,
        multi_line_json_strings_from_a_patch_are_reindented_under_their_key_merge2,
        multi_line_json_strings_from_a_patch_are_reindented_under_their_key_jsonmerge,
        multi_line_json_strings_from_a_patch_are_reindented_under_their_key_merge3,
        an_item_ending_in_an_explicit_key_without_a_value_keeps_the_next_item_whole,
        an_item_ending_in_an_explicit_scalar_key_without_a_value_keeps_the_next_item_whole,
    ],
    builtin_kinds: [
        builtin_deployment_containers_env_and_volume_mounts_merge_by_key,
        builtin_statefulset_volume_claim_templates_are_replaced_and_containers_merge,
        builtin_statefulset_volume_claim_templates_are_replaced_also_with_inferred_keys,
        builtin_pod_containers_volumes_and_tolerations,
        builtin_service_ports_pair_on_port_and_protocol,
        builtin_job_and_cronjob_containers_merge_by_name,
        builtin_cluster_role_and_role_rules_are_replaced,
    ],
    merge3: [
        merge3_conflicts_name_the_field_and_both_values,
        merge3_conflicts_error_fails_the_run_and_changes_nothing,
    ],
    apply: [
        apply_merges_a_list_of_objects_as_the_kubectl_book_shows,
        apply_merges_a_list_of_primitives_as_the_kubectl_book_shows,
        apply_rewrites_the_last_applied_annotation_as_kubectl_does,
    ],
    checks: [
        a_glob_in_a_target_is_an_error_naming_what_it_selected,
        validation_warn_merges_a_typo_with_a_warning_naming_the_field_meant,
        a_lost_indentation_is_an_error_naming_where_the_field_belongs,
        strict_makes_schema_findings_errors,
        a_custom_resource_patch_is_checked_against_its_crd,
    ],
    wildcards: [
        at_containers_adds_an_env_var_to_every_container_of_every_workload,
        json6902_wildcard_sets_image_pull_policy_on_every_container,
        at_with_keys_and_wildcards_at_two_levels,
    ],
    style: [
        a_changed_string_keeps_its_quoting_through_every_patch_type,
        an_empty_flow_collection_helm_wrote_on_its_own_line_opens_as_a_block_there,
        a_merge3_conflict_won_by_upstream_drops_the_local_line_comment,
    ],
    keys: [
        a_patch_key_spelled_otherwise_is_the_resource_key_through_every_patch_type,
        kustomize_options_refuse_a_patch_key_spelled_otherwise,
    ],
    real_packages: [
        cert_manager_helm_output_keeps_every_byte_a_patch_does_not_change,
        kube_prometheus_list_kinds_are_patched_item_by_item,
    ],
    kustomize_parity: [
        crd_lists_are_replaced_with_kustomize_options,
        crd_lists_merge_by_key_by_default,
        crd_merge_keys_true_keeps_crd_keys_with_kustomize_options,
        a_target_selects_a_resource_by_the_name_it_had_before_a_patch_renamed_it,
        prepend_moves_merged_elements_only_when_one_key_is_in_use,
        prepend_keeps_merged_elements_in_place_when_two_keys_are_in_use,
        a_patch_that_empties_annotations_removes_them_and_leaves_labels_empty,
        a_json_patch_that_empties_annotations_removes_them,
        json6902_copy_and_test_read_a_missing_member_as_null_with_kustomize_options,
        json6902_copy_and_test_of_a_missing_member_fail_by_default,
        json6902_copy_from_a_missing_parent_fails_with_kustomize_options,
        json6902_under_missing_annotations_with_kustomize_options,
        json6902_under_missing_annotations_fails_by_default,
        patch_strings_that_yaml11_reads_as_another_type_are_quoted,
        json6902_move_into_its_own_child_with_kustomize_options,
        json6902_move_into_its_own_child_fails_by_default,
        inline_patch_text_is_trimmed_with_kustomize_options,
        inline_patch_text_keeps_its_final_line_break_by_default,
        patch_file_text_is_not_trimmed_with_kustomize_options,
        targeted_patch_metadata_nulls_are_strings_with_kustomize_options,
        targeted_patch_metadata_nulls_delete_by_default,
        untargeted_patch_metadata_nulls_delete_with_kustomize_options,
        json6902_yaml_values_are_read_as_yaml11_with_kustomize_options,
        json6902_yaml_values_are_read_as_yaml12_by_default,
        json6902_json_text_values_are_json_with_kustomize_options,
        json6902_infinity_is_not_a_json_number_with_kustomize_options,
        json6902_writes_empty_nulls_as_null_with_kustomize_options,
        json6902_keeps_empty_nulls_by_default,
        ports_delete_by_number_finds_the_tcp_port_by_default,
        kustomize_options_pair_ports_without_a_default_protocol_as_kyaml_does,
        ports_without_protocol_are_tcp_by_default,
        kustomize_options_lose_a_udp_port_paired_with_one_without_protocol,
        a_patch_that_changes_a_value_kind_replaces_it_by_default,
        kustomize_options_fail_a_patch_that_changes_a_value_kind,
        patch_directives_in_unkeyed_lists_apply_by_default,
        kustomize_options_keep_patch_directives_in_unkeyed_lists_as_data,
        a_replace_on_a_missing_list_gives_the_patch_elements_by_default,
        kustomize_options_keep_only_the_directive_of_a_replace_on_a_missing_list,
        entries_with_no_value_stay_by_default,
        kustomize_options_drop_entries_with_no_value_from_merged_maps,
        a_patch_of_deletions_leaves_an_empty_annotations_map_by_default,
        kustomize_options_leave_no_empty_annotations_map,
        a_merge_after_a_json_patch_walks_the_whole_resource_again,
    ],
}

fn fixtures_dir() -> PathBuf {
    root().join("tests/fixtures")
}

fn read(path: &Path) -> String {
    fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// What `case.yaml` says, or the defaults.
struct Case {
    exit: i32,
    idempotent: bool,
}

fn case_options(dir: &Path) -> Case {
    let mut case = Case {
        exit: 0,
        idempotent: false,
    };
    let path = dir.join("case.yaml");
    if !path.exists() {
        return case;
    }
    let doc = docs(&read(&path)).pop().unwrap_or(Value::Null);
    let Value::Object(fields) = doc else {
        panic!("{}: not a mapping", path.display());
    };
    for (key, value) in fields {
        match (key.as_str(), value) {
            ("exit", Value::Number(n)) => {
                case.exit = n
                    .as_i64()
                    .and_then(|n| i32::try_from(n).ok())
                    .expect("exit: an exit code")
            }
            ("idempotent", Value::Bool(b)) => case.idempotent = b,
            (key, value) => panic!("{}: unknown field {key}: {value}", path.display()),
        }
    }
    case
}

/// Whether `text` is one document holding a `ResourceList` (or a `List`) rather than a plain
/// stream of resources.
fn is_wrapped(text: &str) -> bool {
    let Ok(docs) = yaml::parse_stream(text) else {
        return false;
    };
    let roots: Vec<&Node<'_>> = docs.iter().filter_map(|d| d.root.as_ref()).collect();
    matches!(
        roots.as_slice(),
        [root] if matches!(root.str_at(&["kind"]), Some("ResourceList" | "List"))
    )
}

/// Compares `actual` with the file, or writes it when updating. An optional file that is absent
/// stands for empty text, and is not written for empty text.
fn expect_file(path: &Path, actual: &str, optional: bool) {
    if updating() {
        if optional && actual.is_empty() {
            if path.exists() {
                fs::remove_file(path).expect("remove");
            }
        } else {
            fs::write(path, actual).expect("write");
        }
        return;
    }
    let want = match fs::read_to_string(path) {
        Ok(text) => text,
        Err(_) if optional => String::new(),
        Err(e) => panic!(
            "{}: {e}; KRM_MERGE_UPDATE_EXPECTED=1 writes it",
            path.display()
        ),
    };
    if actual != want {
        let line = actual
            .lines()
            .zip(want.lines())
            .position(|(a, w)| a != w)
            .unwrap_or_else(|| actual.lines().count().min(want.lines().count()));
        panic!(
            "{} differs from the output, first at line {}\n--- expected\n{want}\n--- actual\n{actual}",
            path.display(),
            line + 1
        );
    }
}

/// The documents of a stream as trees with no borrowed text.
fn trees(text: &str) -> Vec<Node<'static>> {
    yaml::parse_stream(text)
        .unwrap_or_else(|e| panic!("not YAML: {e}\n{text}"))
        .into_iter()
        .filter_map(|d| d.root.map(Node::into_owned))
        .filter(|r| !is_empty_document(r))
        .collect()
}

fn run_case(group: &str, name: &str) {
    let dir = fixtures_dir().join(group).join(name);
    assert!(dir.is_dir(), "no case directory {}", dir.display());
    let case = case_options(&dir);
    let input = read(&dir.join("input.yaml"));
    let has_config = dir.join("config.yaml").is_file();
    let wrapped = is_wrapped(&input);
    let out = if has_config {
        crate::pieces::krm_in(&["--config", "config.yaml", "input.yaml"], "", Some(&dir))
    } else {
        assert!(
            wrapped,
            "{name}: without config.yaml the input must be a ResourceList with its functionConfig"
        );
        crate::pieces::krm_in(&[], &input, Some(&dir))
    };
    assert_eq!(
        out.code, case.exit,
        "{name}: the exit code (case.yaml says {})\nstderr: {}\nstdout: {}",
        case.exit, out.stderr, out.stdout
    );
    expect_file(&dir.join("expected.yaml"), &out.stdout, false);
    expect_file(&dir.join("expected.stderr"), &out.stderr, true);

    if case.exit == 1 {
        if has_config {
            assert_eq!(
                out.stdout, "",
                "{name}: a failed standalone run writes nothing to stdout"
            );
        } else {
            assert!(
                out.stdout.starts_with(&input),
                "{name}: a failed run in KRM mode writes its ResourceList back as it came\n{}",
                out.stdout
            );
        }
    }

    if case.idempotent {
        assert!(
            has_config && !wrapped,
            "{name}: idempotent is checked on plain streams"
        );
        let again = crate::pieces::krm_in(&["--config", "config.yaml"], &out.stdout, Some(&dir));
        assert_eq!(again.code, 0, "{name}: run again: {}", again.stderr);
        assert!(
            again.stdout == out.stdout,
            "{name}: run again on its output, the config changed it:\n{}",
            again.stdout
        );
    }

    if has_config && !wrapped {
        let config = node(&read(&dir.join("config.yaml")));
        let krm = crate::pieces::krm_in(&[], &resource_list(&input, config), Some(&dir));
        assert_eq!(
            krm.code, out.code,
            "{name}: KRM mode's exit code differs from the standalone filter's\n{}",
            krm.stderr
        );
        // Where KRM mode says it otherwise (a functionConfig error names the config file only
        // in the standalone filter), `expected.krm.stderr` holds what it says.
        let krm_stderr = dir.join("expected.krm.stderr");
        if updating() {
            // An empty file is kept: it says KRM mode prints nothing where the filter warns.
            if krm.stderr != out.stderr {
                expect_file(&krm_stderr, &krm.stderr, false);
            } else {
                expect_file(&krm_stderr, "", true);
            }
        } else if krm_stderr.exists() {
            expect_file(&krm_stderr, &krm.stderr, true);
        } else {
            assert_eq!(
                krm.stderr, out.stderr,
                "{name}: KRM mode's stderr differs from the standalone filter's"
            );
        }
        let list = node(&krm.stdout);
        let items = list.get("items").map(Node::items).unwrap_or_default();
        let want = trees(if case.exit == 1 { &input } else { &out.stdout });
        assert!(
            items.len() == want.len()
                && items.iter().zip(&want).all(|(a, b)| same_tree(a, b, true)),
            "{name}: KRM mode's items are not the expected documents\n--- KRM mode\n{}\n--- expected\n{}",
            krm.stdout,
            out.stdout
        );
    }
}

/// The case directories and the `fixtures!` list agree, and each case has its input.
#[test]
fn every_case_is_listed() {
    let listed: BTreeSet<String> = LISTED
        .iter()
        .flat_map(|(g, cases)| cases.iter().map(move |c| format!("{g}/{c}")))
        .collect();
    let mut present = BTreeSet::new();
    for group in fs::read_dir(fixtures_dir()).expect("tests/fixtures") {
        let group = group.expect("entry").path();
        if !group.is_dir() {
            continue;
        }
        for case in fs::read_dir(&group).expect("group") {
            let case = case.expect("entry").path();
            if !case.is_dir() {
                continue;
            }
            assert!(
                case.join("input.yaml").is_file(),
                "{}: no input.yaml",
                case.display()
            );
            let name = |p: &Path| p.file_name().expect("name").to_string_lossy().into_owned();
            present.insert(format!("{}/{}", name(&group), name(&case)));
        }
    }
    assert_eq!(
        listed, present,
        "the fixtures! list in tests/it/fixtures.rs and the directories under tests/fixtures"
    );
}
