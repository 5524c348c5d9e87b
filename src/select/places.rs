//! Places inside a resource: where a patch's `at:` ([`Pattern`]) applies.
//!
//! What it is: [`find`] resolves a pattern on a resource, read-only, into the [`Place`]s it
//! names, in document order, each with its route (the positions that lead to it), its field
//! path for messages and its schema position; [`reach`] and [`remove`] then get at a place for
//! changing, turning the aliases on the way into copies of their anchored nodes.
//!
//! How a pattern resolves, part by part, from the resource's root or from each place of its
//! named start (`@containers`: the places [`Schema::pod_places`] gives for the resource's kind):
//!
//! * a field (`spec`) is the mapping's member; a missing one, or a `null` value, gives no place;
//! * `[*]` is every element of a list (an empty or missing list: no place);
//! * `[n]` is the element at that position, if the list has it;
//! * `[k=v,...]` is every element of a list whose fields `k` are scalars with the text `v`;
//!   applied to a mapping (after `[*]` or a start like `@containers`) it keeps the mapping only
//!   when its fields match, so `@containers[name=app]` is the containers called `app`;
//! * anything else — a field of a list or a scalar, an element of a mapping or a scalar — is an
//!   error naming the place: the resource is not what the pattern describes.
//!
//! Places are named as results name fields: an element of a list the schema keys is named by
//! its keys (`containers[name=app]`), others by position. Two places of which one holds the
//! other would make the second's route stale once the first changes: that is an error.
//!
//! **Bounds.** Each place found is spent from the patch's [`Budget`] on the resource, with what
//! the patch will add there: through aliases a few hundred bytes reach a million places, and a
//! patch put at each of them would need gigabytes. Past the budget, [`find`] stops with an error
//! naming the place where it ran out, before the places or the patch's copies take the memory.
//!
//! What it must not do: change anything on its own, select resources, or merge.

use crate::budget::{Added, Budget};
use crate::path::{Part, Path, Pattern, Seg};
use crate::schema::{Cursor, FieldMeta, ListMerge, Schema};
use crate::yaml::anchors::Anchors;
use crate::yaml::{Kind, Node};

/// One place a pattern names in a resource.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Place {
    /// How to get there from the root: at each level the index of the mapping's entry or of the
    /// list's item (aliases on the way read as their anchored nodes).
    pub route: Vec<usize>,
    /// The place as messages and results name it: `spec.template.spec.containers[name=app]`.
    pub path: Path,
    /// Its position in the schema, for the merges that apply there.
    pub cursor: Cursor,
}

/// A resource that does not have the shape a pattern describes.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("at {path}: {reason}")]
pub struct PlaceError {
    /// Where the pattern could not go on.
    pub path: Path,
    pub reason: String,
}

/// The places `pattern` names in `root`, a resource of the kind `group`/`version`/`kind` whose
/// schema position is `cursor`, in document order. Each place found is spent from `budget`,
/// with `per_place` bytes of growth (what the patch will add there, at most). See the module
/// documentation.
pub fn find(
    root: &Node<'_>,
    pattern: &Pattern,
    schema: &Schema,
    (group, version, kind): (&str, &str, &str),
    cursor: Cursor,
    budget: &mut Budget,
    per_place: usize,
) -> Result<Vec<Place>, PlaceError> {
    let bases = match pattern.start {
        None => vec![Vec::new()],
        Some(start) => schema.pod_places(group, version, kind, start),
    };
    let anchors = if root.has_alias() {
        Anchors::view(root)
    } else {
        Anchors::default()
    };
    let mut finder = Finder {
        schema,
        anchors: &anchors,
        route: Vec::new(),
        path: Vec::new(),
        out: Vec::new(),
        budget,
        per_place,
    };
    for base in bases {
        let parts: Vec<Part> = base
            .into_iter()
            .chain(pattern.parts.iter().cloned())
            .collect();
        finder.walk(root, &parts, cursor, None)?;
    }
    let mut places = finder.out;
    places.sort_by(|a, b| a.route.cmp(&b.route));
    places.dedup_by(|a, b| a.route == b.route);
    let nested = places.windows(2).find_map(|w| match w {
        [outer, inner] if inner.route.starts_with(&outer.route) => Some((outer, inner)),
        _ => None,
    });
    if let Some((outer, inner)) = nested {
        return Err(PlaceError {
            path: inner.path.clone(),
            reason: format!(
                "this place is inside another, {}: a patch applies at places apart",
                outer.path
            ),
        });
    }
    Ok(places)
}

struct Finder<'s, 'v, 'n, 'a> {
    schema: &'s Schema,
    anchors: &'v Anchors<&'n Node<'a>>,
    route: Vec<usize>,
    path: Vec<Seg>,
    out: Vec<Place>,
    budget: &'s mut Budget,
    per_place: usize,
}

impl<'a> Finder<'_, '_, '_, 'a> {
    /// Resolves `parts` below `node` (at `cursor`; `list` is the metadata of the list `node` is,
    /// when the last part was a field). Recursion is as deep as the pattern is long.
    fn walk(
        &mut self,
        node: &Node<'a>,
        parts: &[Part],
        cursor: Cursor,
        list: Option<&FieldMeta>,
    ) -> Result<(), PlaceError> {
        let node = self.anchors.follow(node);
        let Some((part, rest)) = parts.split_first() else {
            let spent = self
                .budget
                .place()
                .and_then(|()| self.budget.grow(self.per_place, Added::AtPlaces));
            if let Err(e) = spent {
                return Err(PlaceError {
                    path: Path(self.path.clone()),
                    reason: e.to_string(),
                });
            }
            self.out.push(Place {
                route: self.route.clone(),
                path: Path(self.path.clone()),
                cursor,
            });
            return Ok(());
        };
        if node.is_null() {
            return Ok(());
        }
        match (part, node.kind()) {
            (Part::Field(name), Kind::Map) => {
                let Some(i) = node.position(name) else {
                    return Ok(());
                };
                let Some(entry) = node.entries().get(i) else {
                    return Ok(());
                };
                let (meta, below) = self.schema.field(cursor, name);
                self.down(i, Seg::Field(name.clone()), |f| {
                    f.walk(&entry.value, rest, below, Some(&meta))
                })
            }
            (Part::Every, Kind::Seq) => {
                for (i, item) in node.items().iter().enumerate() {
                    let seg = self.element(item, i, list);
                    self.down(i, seg, |f| f.walk(item, rest, cursor, None))?;
                }
                Ok(())
            }
            (Part::Index(i), Kind::Seq) => match node.items().get(*i) {
                Some(item) => {
                    let seg = self.element(item, *i, list);
                    self.down(*i, seg, |f| f.walk(item, rest, cursor, None))
                }
                None => Ok(()),
            },
            (Part::Key(kv), Kind::Seq) => {
                for (i, item) in node.items().iter().enumerate() {
                    if self.matches(item, kv) {
                        let seg = self.element(item, i, list);
                        self.down(i, seg, |f| f.walk(item, rest, cursor, None))?;
                    }
                }
                Ok(())
            }
            (Part::Key(kv), Kind::Map) => {
                if self.matches(node, kv) {
                    self.walk(node, rest, cursor, None)
                } else {
                    Ok(())
                }
            }
            (part, found) => Err(PlaceError {
                path: Path(self.path.clone()),
                reason: format!(
                    "{} where the pattern needs {}",
                    describe(found),
                    match part {
                        Part::Field(name) => format!("a mapping with {name:?}"),
                        Part::Key(_) => "a list or a mapping to match".to_owned(),
                        Part::Every | Part::Index(_) => "a list".to_owned(),
                    }
                ),
            }),
        }
    }

    /// Runs `f` one step further down: child `i`, named `seg`.
    fn down(
        &mut self,
        i: usize,
        seg: Seg,
        f: impl FnOnce(&mut Self) -> Result<(), PlaceError>,
    ) -> Result<(), PlaceError> {
        self.route.push(i);
        self.path.push(seg);
        let done = f(self);
        self.route.pop();
        self.path.pop();
        done
    }

    /// How results name element `i` of a list: by the keys the schema gives the list when the
    /// element has them all as scalars, by position otherwise.
    fn element(&self, item: &Node<'_>, i: usize, list: Option<&FieldMeta>) -> Seg {
        let item = self.anchors.follow(item);
        if let Some(ListMerge::Map { keys }) = list.and_then(|m| m.list.as_ref()) {
            let values: Option<Vec<(String, String)>> = keys
                .iter()
                .map(|k| {
                    let v = item.get(&k.name).map(|n| self.anchors.follow(n));
                    v.and_then(Node::as_str)
                        .map(|v| (k.name.clone(), v.to_owned()))
                })
                .collect();
            if let Some(values) = values.filter(|v| !v.is_empty()) {
                return Seg::Key(values);
            }
        }
        Seg::Index(i)
    }

    /// A mapping whose fields `k` are scalars with the text `v`.
    fn matches(&self, item: &Node<'_>, kv: &[(String, String)]) -> bool {
        let item = self.anchors.follow(item);
        item.is_map()
            && kv.iter().all(|(k, v)| {
                item.get(k)
                    .map(|n| self.anchors.follow(n))
                    .and_then(Node::as_str)
                    .is_some_and(|text| text == v)
            })
    }
}

fn describe(kind: Kind) -> &'static str {
    match kind {
        Kind::Map => "a mapping",
        Kind::Seq => "a list",
        Kind::Scalar => "a scalar",
        Kind::Alias => "an alias without its anchor",
    }
}

/// The node at `route` from `root`, for changing: each alias on the way, and the node itself if
/// it is one, becomes a copy of its anchored node (from `anchors`, the resource's), so that a
/// change there changes that place only. Also says what those copies weigh
/// ([`Node::weight`]), which the caller charges to the patch's growth. `None` when the route
/// leads nowhere (it was found on another tree).
pub fn reach<'d, 'a>(
    root: &'d mut Node<'a>,
    route: &[usize],
    anchors: &Anchors<Node<'a>>,
) -> Option<(&'d mut Node<'a>, usize)> {
    let mut cur = root;
    let mut copied = 0;
    let mut materialize = |n: &mut Node<'a>| {
        if anchors.materialize(n) {
            copied += n.weight();
        }
    };
    for &i in route {
        materialize(cur);
        cur = if cur.is_map() {
            cur.entries_mut()?.get_mut(i).map(|e| &mut e.value)?
        } else {
            cur.items_mut()?.get_mut(i)?
        };
    }
    materialize(cur);
    Some((cur, copied))
}

/// Removes the place at `route` (not the root) from its mapping or list: what a strategic merge
/// patch's `$patch: delete` does at a place. False when the route leads nowhere.
pub fn remove<'a>(root: &mut Node<'a>, route: &[usize], anchors: &Anchors<Node<'a>>) -> bool {
    let Some((&last, parent)) = route.split_last() else {
        return false;
    };
    let Some((parent, _)) = reach(root, parent, anchors) else {
        return false;
    };
    if parent.is_map() {
        match parent.entries_mut() {
            Some(es) if last < es.len() => {
                es.remove(last);
                true
            }
            _ => false,
        }
    } else {
        match parent.items_mut() {
            Some(items) if last < items.len() => {
                items.remove(last);
                true
            }
            _ => false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::yaml::anchors::anchors_of;
    use crate::yaml::parse_stream;

    const DEPLOYMENT: &str = "\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  template:
    spec:
      initContainers:
      - name: init
      containers:
      - name: app
        env:
        - name: A
        - name: B
      - name: log
      volumes: []
";

    fn found(doc: &str, pattern: &str) -> Result<Vec<String>, String> {
        let root = parse_stream(doc).unwrap().remove(0).root.unwrap();
        let schema = Schema::builtin();
        let id = crate::select::identity::Id::of(&root);
        let (g, v) = id.group_version();
        let cursor = schema.root(g, v, &id.kind);
        let pattern: Pattern = pattern.parse().unwrap();
        find(
            &root,
            &pattern,
            &schema,
            (g, v, &id.kind),
            cursor,
            &mut Budget::new(),
            0,
        )
        .map(|ps| ps.iter().map(|p| p.path.to_string()).collect())
        .map_err(|e| e.to_string())
    }

    #[test]
    fn patterns_find_their_places_in_document_order() {
        assert_eq!(
            found(DEPLOYMENT, "@containers").unwrap(),
            [
                "spec.template.spec.initContainers[name=init]",
                "spec.template.spec.containers[name=app]",
                "spec.template.spec.containers[name=log]",
            ]
        );
        assert_eq!(
            found(DEPLOYMENT, "@containers[name=app].env[*]").unwrap(),
            [
                "spec.template.spec.containers[name=app].env[name=A]",
                "spec.template.spec.containers[name=app].env[name=B]",
            ]
        );
        assert_eq!(
            found(DEPLOYMENT, "spec.template.spec.containers[*].env[name=B]").unwrap(),
            ["spec.template.spec.containers[name=app].env[name=B]"]
        );
        assert_eq!(
            found(DEPLOYMENT, "spec.template.spec.containers[1]").unwrap(),
            ["spec.template.spec.containers[name=log]"]
        );
        assert_eq!(
            found(DEPLOYMENT, "@podSpec").unwrap(),
            ["spec.template.spec"]
        );
        assert_eq!(
            found(DEPLOYMENT, "@podTemplate").unwrap(),
            ["spec.template"]
        );
        // Nothing there: no place.
        for p in [
            "spec.template.spec.volumes[*]",
            "spec.nothing.x",
            "spec.template.spec.containers[9]",
            "@containers[name=none]",
            "metadata.labels",
        ] {
            assert_eq!(found(DEPLOYMENT, p).unwrap(), Vec::<String>::new(), "{p}");
        }
        let svc = "apiVersion: v1\nkind: Service\nmetadata: {name: s}\nspec: {ports: []}\n";
        assert!(found(svc, "@containers").unwrap().is_empty());
        // Elements of lists the schema does not key are named by position.
        let cm = "apiVersion: v1\nkind: ConfigMap\ndata:\n  l: [1, 2]\nx:\n- {a: 1}\n";
        assert_eq!(found(cm, "x[*]").unwrap(), ["x[0]"]);
    }

    #[test]
    fn a_resource_of_another_shape_is_an_error_naming_the_place() {
        assert_eq!(
            found(DEPLOYMENT, "metadata.name.x").unwrap_err(),
            "at metadata.name: a scalar where the pattern needs a mapping with \"x\""
        );
        assert_eq!(
            found(DEPLOYMENT, "spec[*]").unwrap_err(),
            "at spec: a mapping where the pattern needs a list"
        );
        assert_eq!(
            found(DEPLOYMENT, "spec.template.spec.containers.x").unwrap_err(),
            "at spec.template.spec.containers: a list where the pattern needs a mapping with \"x\""
        );
    }

    #[test]
    fn places_inside_one_another_are_refused() {
        let doc = "apiVersion: v1\nkind: ConfigMap\nx:\n- y: [{}]\n";
        let mut schema = Schema::builtin();
        schema.add_pod_holder(
            "",
            "ConfigMap",
            crate::schema::PodHolder::Spec,
            vec![Part::Field("x".into()), Part::Every],
        );
        schema.add_pod_holder(
            "",
            "ConfigMap",
            crate::schema::PodHolder::Spec,
            vec![
                Part::Field("x".into()),
                Part::Every,
                Part::Field("y".into()),
                Part::Every,
            ],
        );
        let root = parse_stream(doc).unwrap().remove(0).root.unwrap();
        let err = find(
            &root,
            &"@podSpec".parse().unwrap(),
            &schema,
            ("", "v1", "ConfigMap"),
            Cursor::default(),
            &mut Budget::new(),
            0,
        )
        .unwrap_err();
        assert_eq!(
            err.to_string(),
            "at x[0].y[0]: this place is inside another, x[0]: a patch applies at places apart"
        );
    }

    #[test]
    fn reaching_a_place_through_an_alias_copies_it_there() {
        let doc = "apiVersion: v1\nkind: ConfigMap\nbase: &b\n  k: 1\nuse: *b\n";
        let mut root = parse_stream(doc).unwrap().remove(0).root.unwrap();
        let schema = Schema::builtin();
        let places = find(
            &root,
            &"use".parse().unwrap(),
            &schema,
            ("", "v1", "ConfigMap"),
            Cursor::default(),
            &mut Budget::new(),
            0,
        )
        .unwrap();
        assert_eq!(places.len(), 1);
        let anchors = anchors_of(&root).unwrap();
        let (node, copied) = reach(&mut root, &places[0].route, &anchors).unwrap();
        assert!(copied > 0, "the alias became a copy");
        node.set("k", Node::plain("2"));
        assert_eq!(root.str_at(&["base", "k"]), Some("1"));
        assert_eq!(root.str_at(&["use", "k"]), Some("2"));
        assert!(remove(&mut root, &places[0].route, &anchors));
        assert!(root.get("use").is_none());
    }
}
