//! What every merge walker is given besides the nodes it merges: the [`Context`] of one merge
//! into one resource.
//!
//! What it must not do: hold the nodes, or decide anything; it is a value the caller fills in
//! (the run, from the step and the item) and the walkers read.

use crate::schema::{Cursor, Schema};
use crate::yaml::anchors::Anchors;
use crate::yaml::Node;

/// The context of a merge into one resource: the schema and the node's place in it, the
/// resource's anchored nodes, and the walker's options (`O`: [`super::merge2::Options`],
/// [`super::merge3::Options`] or [`super::apply::Options`]; `()` before a walker is chosen).
///
/// ```
/// use krm_merge::merge::{merge2, Context};
/// use krm_merge::schema::Schema;
///
/// let schema = Schema::builtin();
/// let anchors = Default::default();
/// let cx = Context::new(&schema, schema.root("apps", "v1", "Deployment"), &anchors)
///     .with(merge2::Options::default());
/// # let _ = cx;
/// ```
#[derive(Clone, Copy)]
pub struct Context<'c, 'a, O = ()> {
    /// The schema the merge follows: which lists are keyed, by what, and how they merge.
    pub schema: &'c Schema,
    /// The schema's position of the node merged into: the resource's kind
    /// ([`Schema::root`]), or a place in it.
    pub root: Cursor,
    /// The anchored nodes of the resource merged into
    /// ([`crate::yaml::anchors::anchors_of`]): a merge into an alias replaces that alias with a
    /// copy of its anchored node, so that the merge changes this place only.
    pub anchors: &'c Anchors<Node<'a>>,
    /// How to merge.
    pub opts: O,
    /// What is known of the resource's shape before the merge.
    pub(crate) shape: Shape,
}

/// What is known of a resource's shape before a merge.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Shape {
    /// Nothing: it is as it was written, or as a change left it.
    Unknown,
    /// It is as kyaml's walk leaves it: a strategic merge with kustomize's options, with the
    /// same schema and at its root, was the last change made to it. Another such merge then
    /// need not walk what its patch does not mention (it would change nothing there).
    KyamlSettled,
}

impl<'c, 'a> Context<'c, 'a> {
    /// The context of a merge into the resource whose kind is at `root` in `schema` and whose
    /// anchored nodes are `anchors` (the default, no anchors, for a resource without aliases);
    /// give the walker's options with [`Context::with`].
    pub fn new(schema: &'c Schema, root: Cursor, anchors: &'c Anchors<Node<'a>>) -> Self {
        Context {
            schema,
            root,
            anchors,
            opts: (),
            shape: Shape::Unknown,
        }
    }
}

impl<'c, 'a, O> Context<'c, 'a, O> {
    /// The same context with the options `opts`.
    pub fn with<P>(self, opts: P) -> Context<'c, 'a, P> {
        Context {
            schema: self.schema,
            root: self.root,
            anchors: self.anchors,
            opts,
            shape: self.shape,
        }
    }

    /// The same context for a merge into the node at `place` in the schema (a place inside the
    /// resource, found from its root). What is known of the resource's shape is about its root,
    /// so it is forgotten.
    pub fn at(self, place: Cursor) -> Self {
        Context {
            root: place,
            shape: Shape::Unknown,
            ..self
        }
    }

    /// The same context, for a resource known to be as kyaml's walk leaves it (see
    /// [`Shape::KyamlSettled`]).
    pub(crate) fn kyaml_settled(self) -> Self {
        Context {
            shape: Shape::KyamlSettled,
            ..self
        }
    }
}
