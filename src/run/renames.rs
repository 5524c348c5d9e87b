//! Rename tracking: the identities of the resources written so far, to tell when a patch that
//! renames a resource gives it the identity of another (kustomize refuses that too).
//!
//! Identities are kept by a hash of apiVersion, kind, name and effective namespace, with the
//! identity a rename gave it, if one did. Two resources that came in with one identity are not
//! a patch's doing, and pass; one of them renamed is an error naming the later one.
//!
//! A share of the items read apart (a piece, on another thread) only logs the identities it
//! writes, in order, with where its results stood and the file an error names; the engine that
//! absorbs the share replays the log among the share's results ([`Renames::replay`]), so the
//! errors, their resources and their places among the results are exactly those of one reading
//! of all the items.
//!
//! What it must not do: select or change resources, or decide what an error does to the run.

use crate::hash::HashMap;
use crate::krm::{FnResult, Severity};
use crate::select::bookkeeping;
use crate::select::identity::Id;
use crate::yaml::Node;

/// A rename: the identity a resource had before a patch renamed it, and the one it has.
#[derive(Clone, Debug)]
struct Rename {
    from: Id<'static>,
    to: Id<'static>,
}

/// One identity a share wrote.
#[derive(Debug)]
pub struct Logged {
    hash: u64,
    /// Boxed: rarely there.
    renamed: Option<Box<Rename>>,
    /// How many results the share had when it wrote the resource: an error about it goes there.
    pub at: usize,
    /// The file an error about it names (kpt's path annotation; else the caller locates it).
    file: Option<(Box<str>, u64)>,
    /// Its namespace as written: an error names the resource so (identities compare by the
    /// effective namespace, which an absent one and `default` share).
    namespace: Box<str>,
}

/// The identities written so far (of one share of the items, or all).
#[derive(Debug, Default)]
pub struct Renames {
    written: HashMap<u64, Option<Box<Rename>>>,
    /// Kept by a share read apart instead of `written`: see the module documentation.
    log: Option<Vec<Logged>>,
}

impl Renames {
    /// Rename tracking for a share of the items read apart, which logs what it writes.
    pub fn for_share() -> Renames {
        Renames {
            log: Some(Vec::new()),
            ..Renames::default()
        }
    }

    /// Remembers the identity of a resource written out, `first` its identity before the first
    /// patch that changed it, `at` the number of results so far. An error about `node` when a
    /// rename gave it the identity of a resource written before (never for a share, which logs).
    pub fn note(
        &mut self,
        hasher: &crate::hash::State,
        node: &Node<'_>,
        first: Option<&Id<'static>>,
        at: usize,
    ) -> Option<FnResult> {
        let id = Id::of(node);
        let hash = identity_hash(hasher, &id);
        let renamed = first.filter(|f| !f.same(&id)).map(|f| {
            Box::new(Rename {
                from: f.clone(),
                to: id.into_owned(),
            })
        });
        if let Some(log) = &mut self.log {
            let file = bookkeeping::file_of(node).map(|(p, i)| (Box::from(p), i));
            log.push(Logged {
                hash,
                renamed,
                at,
                file,
                namespace: Box::from(Id::of(node).namespace.as_ref()),
            });
            return None;
        }
        let (message, _) = self.remember(hash, renamed)?;
        Some(FnResult::new(Severity::Error, message).about(node))
    }

    /// What a share logged, to [`Renames::replay`] among its results.
    pub fn take_log(&mut self) -> Vec<Logged> {
        self.log.take().unwrap_or_default()
    }

    /// One identity a share logged, as if written now: the error about it, if any.
    pub fn replay(&mut self, entry: Logged) -> Option<FnResult> {
        let Logged {
            hash,
            renamed,
            file,
            namespace,
            ..
        } = entry;
        let (message, mut id) = self.remember(hash, renamed)?;
        id.namespace = std::borrow::Cow::Owned(namespace.into_string());
        let mut r = FnResult::new(Severity::Error, message);
        r.resource = Some(id);
        r.file = file.map(|(p, i)| (p.into_string(), i));
        Some(r)
    }

    /// Adds an identity. When a rename makes it one with an identity written before: the error
    /// message, and that identity (one of the two was renamed to it).
    fn remember(
        &mut self,
        hash: u64,
        renamed: Option<Box<Rename>>,
    ) -> Option<(String, Id<'static>)> {
        let Some(other) = self.written.get(&hash) else {
            self.written.insert(hash, renamed);
            return None;
        };
        let id = match (&renamed, other) {
            (None, None) => return None, // two resources with one identity in the input
            (Some(r), _) | (None, Some(r)) => r.to.clone(),
        };
        let how = |r: &Option<Box<Rename>>| match r {
            Some(r) => format!("one renamed from {}", r.from),
            None => "one named so in the input".to_owned(),
        };
        let message = format!(
            "two resources would have the same identity: {} and {}; a patch may not give a \
             resource the apiVersion, kind, name and namespace of another",
            how(&renamed),
            how(other)
        );
        Some((message, id))
    }
}

/// The hash identities are kept by: one hasher for all the shares of a run, so that they agree.
fn identity_hash(hasher: &crate::hash::State, id: &Id<'_>) -> u64 {
    use std::hash::BuildHasher;
    hasher.hash_one((
        id.api_version.as_ref(),
        id.kind.as_ref(),
        id.name.as_ref(),
        id.effective_namespace(),
    ))
}
