//! The arguments: what the process was asked to do, as a [`Mode`]. Reading them checks only
//! what the user typed; nothing is opened or read here.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use krm_merge::config::{Conflicts, PatchOptions};
use krm_merge::merge::merge2::NewItems;

/// What the process was asked to do.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Mode {
    /// A ResourceList on stdin, its functionConfig saying what to do (kpt, kustomize).
    Krm,
    /// `--config FN.yaml [PATH...]`: resources from files, directories or stdin.
    Standalone {
        config: PathBuf,
        paths: Vec<PathBuf>,
    },
    /// kustomize's legacy exec plugin: the config file is the only argument, stdin a stream.
    Plugin {
        config: PathBuf,
    },
    /// `merge2 SRC DEST`.
    Merge2 {
        src: PathBuf,
        dest: PathBuf,
        opts: PatchOptions,
    },
    /// `merge3 ORIGINAL UPDATED DEST`.
    Merge3 {
        original: PathBuf,
        updated: PathBuf,
        dest: PathBuf,
        opts: PatchOptions,
    },
    /// `schema`: the functionConfig's JSON Schema.
    Schema,
    Help,
    Version,
}

/// Arguments that make no sense.
#[derive(Debug, PartialEq, Eq, thiserror::Error)]
#[error("{0}\nRun 'krm-merge --help' for usage.")]
pub struct UsageError(pub String);

pub const USAGE: &str = "\
krm-merge: merge and patch the resources of a Kubernetes package (a KRM function).

Usage:
  krm-merge                               read a ResourceList on stdin, apply its functionConfig,
                                          write the ResourceList to stdout (kpt, kustomize)
  krm-merge --config FN.yaml [PATH...]    apply FN.yaml to the YAML files or directories PATH
                                          (or to stdin), write the result to stdout
  krm-merge CONFIG                        kustomize legacy exec plugin (stdin: a YAML stream)
  krm-merge merge2 SRC DEST               merge SRC into DEST (2-way strategic merge)
  krm-merge merge3 ORIGINAL UPDATED DEST  merge the change ORIGINAL->UPDATED into DEST (3-way)
  krm-merge schema                        print the JSON Schema of the functionConfig
  krm-merge --help | --version

Options of merge2 and merge3:
  --new-list-items append|prepend         where new list elements go (default append)
  --no-infer-merge-keys                   replace lists no schema describes
  --conflicts warn|error                  merge3: what a conflict is (default warn)

functionConfig (apiVersion: fn.krm-merge.dev/v1alpha1, kind: Merge):
  spec:
    patches:                  applied in order, each to the output of the previous
    - type: merge2            merge2 | json6902 | jsonmerge | merge3 | apply (or kustomize's names)
      patch: |                the patch (YAML or JSON, several documents allowed), or path: FILE
      original: |             merge3: the common ancestor (or originalPath: FILE)
      target:                 group, version, kind, name, namespace (anchored regexes),
        kind: Deployment      labelSelector, annotationSelector; omitted: the patch's own identity
      options: {newListItems: append, inferMergeKeys: true, allowNameChange: false,
                allowKindChange: false, conflicts: warn}
    schema:                   merge keys for kinds the built-in Kubernetes schema lacks
      openAPI: {path: FILE}   (or inline:), and/or
      mergeKeys: [{group: example.com, kind: Foo, path: spec.items, keys: [name]}]
Also accepted: kustomize's PatchTransformer config, and a ConfigMap (kpt fn eval -- key=value)
with keys type, patch, original, group, version, kind, name, namespace, labelSelector,
annotationSelector.

Exit status: 0 success, 1 an error result (the output is still written), 2 usage error.
";

fn arg_str(a: &OsString) -> Result<&str, UsageError> {
    a.to_str()
        .ok_or_else(|| UsageError(format!("argument {a:?} is not valid UTF-8")))
}

/// Reads the arguments (without the program name). `plugin_env`: kustomize's
/// `KUSTOMIZE_PLUGIN_CONFIG_STRING` is set.
pub fn parse_args(args: &[OsString], plugin_env: bool) -> Result<Mode, UsageError> {
    let strs: Vec<&str> = args.iter().map(arg_str).collect::<Result<_, _>>()?;
    if strs.iter().any(|a| *a == "--help" || *a == "-h") {
        return Ok(Mode::Help);
    }
    if strs.iter().any(|a| *a == "--version" || *a == "-V") {
        return Ok(Mode::Version);
    }
    match strs.first().copied() {
        None => Ok(Mode::Krm),
        Some("schema") if strs.len() == 1 => Ok(Mode::Schema),
        Some("merge2") => {
            let (files, opts) = merge_args(&strs[1..])?;
            match files[..] {
                [src, dest] => Ok(Mode::Merge2 {
                    src: src.into(),
                    dest: dest.into(),
                    opts,
                }),
                _ => Err(UsageError("merge2 takes two files: SRC DEST".into())),
            }
        }
        Some("merge3") => {
            let (files, opts) = merge_args(&strs[1..])?;
            match files[..] {
                [original, updated, dest] => Ok(Mode::Merge3 {
                    original: original.into(),
                    updated: updated.into(),
                    dest: dest.into(),
                    opts,
                }),
                _ => Err(UsageError(
                    "merge3 takes three files: ORIGINAL UPDATED DEST".into(),
                )),
            }
        }
        Some("--config") | Some("-c") => match strs.get(1) {
            Some(cfg) => Ok(Mode::Standalone {
                config: cfg.into(),
                paths: strs[2..].iter().map(PathBuf::from).collect(),
            }),
            None => Err(UsageError("--config needs a file".into())),
        },
        Some(a) if a.starts_with("--config=") => Ok(Mode::Standalone {
            config: a.trim_start_matches("--config=").into(),
            paths: strs[1..].iter().map(PathBuf::from).collect(),
        }),
        Some(a)
            if strs.len() == 1 && !a.starts_with('-') && (plugin_env || Path::new(a).is_file()) =>
        {
            Ok(Mode::Plugin { config: a.into() })
        }
        Some(a) if a.starts_with('-') => Err(UsageError(format!("unknown option {a}"))),
        Some(a) => Err(UsageError(format!("unknown command or missing file {a:?}"))),
    }
}

fn merge_args<'s>(args: &[&'s str]) -> Result<(Vec<&'s str>, PatchOptions), UsageError> {
    let mut opts = PatchOptions::default();
    let mut files = Vec::new();
    let mut it = args.iter();
    while let Some(&a) = it.next() {
        let (name, inline) = match a.split_once('=') {
            Some((n, v)) if a.starts_with("--") => (n, Some(v)),
            _ => (a, None),
        };
        let mut value = |flag: &str| -> Result<&'s str, UsageError> {
            inline
                .or_else(|| it.next().copied())
                .ok_or_else(|| UsageError(format!("{flag} needs a value")))
        };
        match name {
            "--new-list-items" => {
                opts.new_list_items = match value(name)? {
                    "append" => NewItems::Append,
                    "prepend" => NewItems::Prepend,
                    v => {
                        return Err(UsageError(format!(
                            "--new-list-items: {v:?} is not append or prepend"
                        )))
                    }
                }
            }
            "--no-infer-merge-keys" => opts.infer_merge_keys = false,
            "--conflicts" => {
                opts.conflicts = match value(name)? {
                    "warn" => Conflicts::Warn,
                    "error" => Conflicts::Error,
                    v => {
                        return Err(UsageError(format!(
                            "--conflicts: {v:?} is not warn or error"
                        )))
                    }
                }
            }
            _ if a.starts_with('-') && a.len() > 1 => {
                return Err(UsageError(format!("unknown option {a}")))
            }
            _ => files.push(a),
        }
    }
    Ok((files, opts))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(args: &[&str]) -> Result<Mode, UsageError> {
        let args: Vec<OsString> = args.iter().map(OsString::from).collect();
        parse_args(&args, false)
    }

    #[test]
    fn modes() {
        assert_eq!(parse(&[]), Ok(Mode::Krm));
        assert_eq!(parse(&["schema"]), Ok(Mode::Schema));
        assert_eq!(parse(&["merge2", "--help"]), Ok(Mode::Help));
        assert_eq!(parse(&["-V"]), Ok(Mode::Version));
        assert_eq!(
            parse(&["--config", "fn.yaml", "a", "b"]),
            Ok(Mode::Standalone {
                config: "fn.yaml".into(),
                paths: vec!["a".into(), "b".into()]
            })
        );
        assert_eq!(
            parse(&["--config=fn.yaml"]),
            Ok(Mode::Standalone {
                config: "fn.yaml".into(),
                paths: Vec::new()
            })
        );
    }

    #[test]
    fn merge_options() {
        let Ok(Mode::Merge3 { opts, .. }) = parse(&[
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
    fn usage_errors_name_the_argument() {
        let err = |args: &[&str]| parse(args).unwrap_err().0;
        assert_eq!(err(&["merge2", "a"]), "merge2 takes two files: SRC DEST");
        assert_eq!(err(&["--config"]), "--config needs a file");
        assert_eq!(err(&["--frobnicate"]), "unknown option --frobnicate");
        assert_eq!(
            err(&["merge2", "--conflicts", "maybe", "a", "b"]),
            "--conflicts: \"maybe\" is not warn or error"
        );
    }
}
