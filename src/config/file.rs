//! The files the command line hands the config stage as text: a functionConfig file
//! (`--config FILE`), read into its one document ([`config_file`]) or told apart from other
//! files ([`config_form_of_file`]), and the patch file of
//! `krm-merge merge2 SRC DEST`, read into the documents its step applies ([`patch_file`]): each
//! a mapping, its aliases expanded and its anchors dropped, as the functionConfig's patches are.
//!
//! What it must not do: read the files (the command line does, within its budgets), or decide
//! what an empty patch file means (the command says).

use std::fmt;

use super::source::syntax_hint;
use super::{kustomization, ConfigForm, PatchKind, API_VERSION, KIND};
use crate::yaml::anchors::{self, AliasError};
use crate::yaml::{self, Kind, Node, ParseError};

/// Why a functionConfig file gives no functionConfig. Displays without the file's name, which
/// the caller puts first.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ConfigFileError {
    /// The text is not YAML; `hint` says what to do when the place shows a mistake YAML makes
    /// easy in a config: a JSON pointer's `[key=value]` in a flow mapping, a plain value
    /// starting with `@` or a backquote.
    #[error("{error}{}", hint.as_ref().map(|h| format!(" ({h})")).unwrap_or_default())]
    Malformed {
        /// Where and why it does not read.
        error: ParseError,
        /// What to do about it, when the place shows it.
        hint: Option<String>,
    },
    /// No document, or only empty ones.
    #[error("no functionConfig in the file")]
    Empty,
    /// More than one document.
    #[error(
        "more than one document: a functionConfig file holds one (put every patch in its \
         spec.patches)"
    )]
    MoreThanOne,
}

/// The functionConfig in the text of a functionConfig file: its one document (empty documents
/// aside). A second one is an error rather than a config silently ignored.
pub fn config_file(text: &str) -> Result<Node<'_>, ConfigFileError> {
    let docs = yaml::parse_stream(text).map_err(|error| ConfigFileError::Malformed {
        hint: syntax_hint(text, error.line, error.column),
        error,
    })?;
    let mut roots = docs.into_iter().filter_map(|d| d.root);
    let node = roots.next().ok_or(ConfigFileError::Empty)?;
    if roots.next().is_some() {
        return Err(ConfigFileError::MoreThanOne);
    }
    Ok(node)
}

/// What the file `name` (its name in its directory) holding `text` is, when its first document
/// is a functionConfig: a `Merge` config, a `PatchTransformer`, or a kustomization with patch
/// fields (named as kustomize names its file, or of kind `Kustomization`). `None` for any other
/// file. For saying which file of a directory given as the config was meant.
pub fn config_form_of_file(name: &str, text: &str) -> Option<ConfigForm> {
    let docs = yaml::parse_stream(text).ok()?;
    let root = docs.into_iter().find_map(|d| d.root)?;
    let kind = root.get("kind").and_then(|k| k.as_str());
    let api_version = root.get("apiVersion").and_then(|v| v.as_str());
    match (api_version, kind) {
        (Some(API_VERSION), Some(KIND)) => Some(ConfigForm::Merge),
        (_, Some("PatchTransformer")) => Some(ConfigForm::PatchTransformer),
        (_, Some("Kustomization")) | (_, None)
            if kustomization::FILES.contains(&name) || kind == Some("Kustomization") =>
        {
            kustomization::patch_fields()
                .iter()
                .any(|f| root.get(f).is_some())
                .then_some(ConfigForm::Kustomization)
        }
        _ => None,
    }
}

/// Why a patch file gives no documents to apply. Each names the file; a document's also says
/// which (counted from 1, empty documents not counted) and the line it starts on.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum PatchFileError {
    /// The text is not YAML.
    #[error("{file}: malformed YAML: {error}")]
    Malformed {
        /// The file, as messages name it.
        file: String,
        /// Where and why it does not read.
        error: ParseError,
    },
    /// A document is not a mapping.
    #[error(
        "{file}: document {document} (from line {line}) is {found}; a {kind} patch is made of \
         partial resources (mappings)"
    )]
    NotAMapping {
        /// The file, as messages name it.
        file: String,
        /// Which document, from 1.
        document: usize,
        /// The line it starts on, from 1.
        line: usize,
        /// What it is instead.
        found: Found,
        /// The patch's type.
        kind: PatchKind,
    },
    /// A document's aliases cannot be expanded.
    #[error("{file}: document {document} (from line {line}): {error}")]
    Aliases {
        /// The file, as messages name it.
        file: String,
        /// Which document, from 1.
        document: usize,
        /// The line it starts on, from 1.
        line: usize,
        /// Why they cannot.
        error: AliasError,
    },
}

/// What a patch document that is not a mapping is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Found {
    /// A list.
    List,
    /// An alias (its anchor is not in the document).
    Alias,
    /// `null`.
    Null,
    /// Any other scalar.
    Scalar,
}

impl fmt::Display for Found {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Found::List => "a list",
            Found::Alias => "an alias",
            Found::Null => "null",
            Found::Scalar => "a scalar",
        })
    }
}

/// The documents of the patch file `text` (named `file` in errors) for a patch of `kind`: each
/// a mapping, its aliases expanded and its anchors dropped. Empty documents are skipped; a file
/// with none gives no documents.
pub fn patch_file(
    text: &str,
    file: &str,
    kind: PatchKind,
) -> Result<Vec<Node<'static>>, PatchFileError> {
    let parsed = yaml::parse_stream(text).map_err(|error| PatchFileError::Malformed {
        file: file.to_owned(),
        error,
    })?;
    let mut out = Vec::new();
    let mut offset = 0;
    let mut document = 0;
    for doc in parsed {
        let line = text.get(..offset).map_or(0, |s| s.matches('\n').count()) + 1;
        offset += doc.text.len();
        let Some(root) = doc.root else { continue };
        document += 1;
        if !root.is_map() {
            let found = match root.kind() {
                Kind::Seq => Found::List,
                Kind::Alias => Found::Alias,
                _ if root.is_null() => Found::Null,
                _ => Found::Scalar,
            };
            return Err(PatchFileError::NotAMapping {
                file: file.to_owned(),
                document,
                line,
                found,
                kind,
            });
        }
        let detached = anchors::detached(&root)
            .map_err(|error| PatchFileError::Aliases {
                file: file.to_owned(),
                document,
                line,
                error,
            })?
            .into_owned()
            .into_owned();
        out.push(detached);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn error(text: &str) -> String {
        patch_file(text, "src.yaml", PatchKind::Merge2)
            .unwrap_err()
            .to_string()
    }

    #[test]
    fn each_error_names_the_file_the_document_and_its_line() {
        assert_eq!(
            error("a: 1\n---\n# two\n[x]\n"),
            "src.yaml: document 2 (from line 2) is a list; a merge2 patch is made of partial \
             resources (mappings)"
        );
        assert_eq!(
            error("# a comment\n~\n"),
            "src.yaml: document 1 (from line 1) is null; a merge2 patch is made of partial \
             resources (mappings)"
        );
        assert_eq!(
            error("a: [\n"),
            "src.yaml: malformed YAML: line 1, column 4: unclosed bracket '['"
        );
        // Ten levels of ten aliases each: far past the alias budget.
        let mut bomb = String::from("a: 1\n---\nl0: &l0 [x]\n");
        for i in 1..10 {
            let prev = format!("*l{}", i - 1);
            bomb += &format!("l{i}: &l{i} [{}]\n", vec![prev; 10].join(", "));
        }
        let got = error(&bomb);
        assert!(
            got.starts_with("src.yaml: document 2 (from line 2): "),
            "{got}"
        );
    }

    #[test]
    fn documents_come_detached_and_a_file_of_comments_has_none() {
        let docs =
            patch_file("---\na: &x {b: 1}\nc: *x\n", "src.yaml", PatchKind::Merge2).expect("reads");
        assert_eq!(docs.len(), 1);
        assert!(!docs[0].has_alias() && !docs[0].has_anchor());
        assert!(patch_file("# only a comment\n", "f", PatchKind::Merge2)
            .expect("reads")
            .is_empty());
    }

    #[test]
    fn a_config_file_holds_one_document() {
        let node = config_file("# the config\n---\nkind: Merge\n").expect("reads");
        assert_eq!(node.str_at(&["kind"]), Some("Merge"));
        let message = |text| config_file(text).unwrap_err().to_string();
        assert_eq!(message("# nothing\n"), "no functionConfig in the file");
        assert_eq!(
            message("kind: A\n---\nkind: B\n"),
            "more than one document: a functionConfig file holds one (put every patch in its \
             spec.patches)"
        );
        let malformed = message("spec:\n  at: @containers\n");
        assert!(
            malformed.starts_with("line 2, column 7: ")
                && malformed.ends_with(
                    " (YAML reserves @ at the start of a plain value: quote it, as in at: \
                     \"@containers\")"
                ),
            "{malformed}"
        );
    }

    #[test]
    fn a_config_file_is_told_apart_by_its_form_and_name() {
        let merge = "apiVersion: fn.krm-merge.dev/v1alpha1\nkind: Merge\nspec: {}\n";
        let form = config_form_of_file;
        assert_eq!(form("fn.yaml", merge), Some(ConfigForm::Merge));
        assert_eq!(
            form("p.yaml", "apiVersion: builtin\nkind: PatchTransformer\n"),
            Some(ConfigForm::PatchTransformer)
        );
        let patches = "patches:\n- path: p.yaml\n";
        assert_eq!(
            form("kustomization.yaml", patches),
            Some(ConfigForm::Kustomization)
        );
        // Without kustomize's name, a kustomization says its kind; without patches it is none.
        assert_eq!(form("other.yaml", patches), None);
        assert_eq!(
            form("other.yaml", &format!("kind: Kustomization\n{patches}")),
            Some(ConfigForm::Kustomization)
        );
        assert_eq!(form("kustomization.yaml", "resources: [a.yaml]\n"), None);
        assert_eq!(form("cm.yaml", "apiVersion: v1\nkind: ConfigMap\n"), None);
        assert_eq!(form("bad.yaml", "a: [\n"), None);
    }
}
