//! A patch file given on the command line (`krm-merge merge2 SRC DEST`'s SRC), read into the
//! documents a step applies: each a mapping, its aliases expanded and its anchors dropped, as
//! the functionConfig's patches are.
//!
//! What it must not do: read the file (the command line does, within its budget), or decide
//! what an empty file means (the command says).

use std::fmt;

use super::PatchKind;
use crate::yaml::anchors::{self, AliasError};
use crate::yaml::{self, Kind, Node, ParseError};

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
}
