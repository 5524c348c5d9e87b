//! Reading JSON schemas into a [`Graph`]: the `openAPIV3Schema` of a CRD version and the
//! `definitions` of an OpenAPI v2 document (the format kustomize's `openapi:` field takes).
//!
//! Only what merging and checking patches need is read: `properties`, `items`,
//! `additionalProperties`, `$ref` (`#/definitions/NAME`, and a lone `allOf: [{$ref}]`), the merge
//! extensions, the `default` of list-map key fields, `x-kubernetes-group-version-kind` on
//! definitions, and for the shapes of values (`shape.rs`) `type`, `format: int-or-string`, the
//! types of `oneOf`/`anyOf` alternatives, `required`, `x-kubernetes-int-or-string`,
//! `x-kubernetes-preserve-unknown-fields` and `x-kubernetes-embedded-resource`. Everything else
//! (validation keywords, descriptions) is ignored. The shape keywords never cause errors: one
//! that is malformed says nothing (any value).
//!
//! Definitions are built from a work list, not by recursion, so a type that refers to itself (or
//! a long chain of types) neither loops nor grows the stack; inline nesting is bounded by
//! [`MAX_DEPTH`].

use crate::hash::HashMap;

use serde_json::{Map, Value};

use super::error::{Located, SchemaErrorKind};
use super::ext::{self, derive, Ext, Shape, ValueKind};
use super::graph::{Graph, Node, Slot};
use super::shape::{self, Val};

/// How deeply inline schemas may nest (each `properties`/`items`/`additionalProperties` step
/// counts one). Real CRDs stay far below; hostile input gets an error instead of a stack overflow.
pub(super) const MAX_DEPTH: usize = 200;

/// How many definitions that are only a `$ref` may be chained (bounds the work per reference).
const MAX_ALIASES: usize = 64;

const GVK: &str = "x-kubernetes-group-version-kind";
const REF_PREFIX: &str = "#/definitions/";
const PRESERVE: &str = "x-kubernetes-preserve-unknown-fields";
const EMBEDDED: &str = "x-kubernetes-embedded-resource";
const INT_OR_STRING: &str = "x-kubernetes-int-or-string";
/// Kubernetes' OpenAPI v2 documents declare Quantity `type: string`, yet the API takes numbers
/// there too (`cpu: 1`); its v3 definitions say `oneOf` string or number. The definition is
/// read as the v3 one says, wherever a document names it.
const QUANTITY: &str = "io.k8s.apimachinery.pkg.api.resource.Quantity";

type Obj = Map<String, Value>;

pub(super) struct Builder<'d, 'g> {
    graph: &'g mut Graph,
    /// The `definitions` `$ref`s resolve in; `None` for CRD schemas, which have no `$ref`.
    defs: Option<&'d Obj>,
    def_nodes: HashMap<&'d str, u32>,
    /// Definitions whose node exists but is not filled in yet.
    pending: Vec<(&'d str, u32)>,
    /// Every object keeps unknown fields (a v1beta1 CRD with `spec.preserveUnknownFields`).
    open: bool,
}

impl<'d, 'g> Builder<'d, 'g> {
    pub(super) fn new(graph: &'g mut Graph, defs: Option<&'d Obj>) -> Builder<'d, 'g> {
        Builder {
            graph,
            defs,
            def_nodes: HashMap::default(),
            pending: Vec::new(),
            open: false,
        }
    }

    /// Every object built from now on keeps unknown fields (is `open`).
    pub(super) fn preserving_unknown_fields(mut self) -> Self {
        self.open = true;
        self
    }

    /// Builds every definition, names it in the graph, and binds the definitions carrying
    /// `x-kubernetes-group-version-kind` (one object or a list of them) as roots.
    pub(super) fn definitions(mut self) -> Result<(), Located> {
        let Some(defs) = self.defs else {
            return Ok(());
        };
        let (mut names, mut roots) = (Vec::new(), Vec::new());
        for (name, body) in defs {
            let path = def_path(name);
            let body = body
                .as_object()
                .ok_or_else(|| wrong(&path, "a schema object"))?;
            let (_, canonical) = self.resolve(body, &path)?;
            let id = self.def_node(canonical.unwrap_or(name));
            names.push((name, id));
            for (i, gvk) in gvks(body.get(GVK)).enumerate() {
                let path = format!("{path}.{GVK}[{i}]");
                let (group, version, kind) = read_gvk(gvk, &path)?;
                roots.push((group, version, kind, id));
            }
        }
        self.finish()?;
        // Only a document that loaded whole becomes visible.
        for (name, id) in names {
            self.graph.name(name, id);
        }
        for (group, version, kind, id) in roots {
            if self.graph.bind_root(group, version, kind, id) {
                if let Some(node) = self.graph.node_mut(id) {
                    node.resource = true;
                }
            }
        }
        Ok(())
    }

    /// Builds the node of a root object schema (a CRD version's `openAPIV3Schema`); `None` when
    /// it declares no fields.
    pub(super) fn root(&mut self, schema: &'d Value, path: &str) -> Result<Option<u32>, Located> {
        let obj = schema
            .as_object()
            .ok_or_else(|| wrong(path, "a schema object"))?;
        let id = self.object_node(obj, path, 0, false)?;
        self.finish()?;
        if let Some(node) = id.and_then(|id| self.graph.node_mut(id)) {
            node.resource = true;
        }
        Ok(id)
    }

    /// Fills the definitions referenced so far, and those they reference.
    fn finish(&mut self) -> Result<(), Located> {
        while let Some((name, id)) = self.pending.pop() {
            let path = def_path(name);
            let body = self
                .defs
                .and_then(|d| d.get(name))
                .and_then(Value::as_object)
                .ok_or_else(|| Located::new(&path, SchemaErrorKind::UnresolvedRef(name.into())))?;
            let node = self.fill(body, &path, 0, true)?;
            if let Some(slot) = self.graph.node_mut(id) {
                *slot = node;
            }
        }
        Ok(())
    }

    /// The node of definition `name`, made (empty, filled by `finish`) on first use.
    fn def_node(&mut self, name: &'d str) -> u32 {
        if let Some(&id) = self.def_nodes.get(name) {
            return id;
        }
        let id = self.graph.add_node(Node::default());
        self.def_nodes.insert(name, id);
        self.pending.push((name, id));
        id
    }

    /// A node for an inline object schema, or `None` when it has neither `properties` nor a map
    /// value schema. `element`: the schema is a list's `items`, so its `x-kubernetes-map-type`
    /// is a fact about the element type (on a field it is the field's own metadata).
    fn object_node(
        &mut self,
        obj: &'d Obj,
        path: &str,
        depth: usize,
        element: bool,
    ) -> Result<Option<u32>, Located> {
        if !obj.contains_key("properties")
            && !obj
                .get("additionalProperties")
                .is_some_and(Value::is_object)
        {
            return Ok(None);
        }
        let node = self.fill(obj, path, depth, element)?;
        Ok(Some(self.graph.add_node(node)))
    }

    fn fill(
        &mut self,
        obj: &'d Obj,
        path: &str,
        depth: usize,
        type_level: bool,
    ) -> Result<Node, Located> {
        let ext =
            Ext::read(obj).map_err(|(key, kind)| Located::new(&format!("{path}.{key}"), kind))?;
        let mut node = Node {
            atomic: type_level && ext.map_type == Some(ext::MapType::Atomic),
            open: self.open || flag(obj, PRESERVE),
            resource: flag(obj, EMBEDDED),
            ..Node::default()
        };
        match obj.get("properties") {
            None => {}
            Some(Value::Object(props)) => {
                for (name, prop) in props {
                    let slot = self.slot(prop, &format!("{path}.properties.{name}"), depth + 1)?;
                    node.fields.insert(name.clone(), slot);
                }
            }
            Some(_) => return Err(wrong(&format!("{path}.properties"), "an object")),
        }
        if let Some(Value::Array(required)) = obj.get("required") {
            for name in required.iter().filter_map(Value::as_str) {
                if let Some(slot) = node.fields.get_mut(name) {
                    slot.required = true;
                }
            }
        }
        match obj.get("additionalProperties") {
            None | Some(Value::Bool(_)) => {}
            Some(add @ Value::Object(_)) => {
                node.additional =
                    Some(self.slot(add, &format!("{path}.additionalProperties"), depth + 1)?);
            }
            Some(_) => {
                return Err(wrong(
                    &format!("{path}.additionalProperties"),
                    "a boolean or a schema object",
                ))
            }
        }
        Ok(node)
    }

    /// The slot of a property (or map value) schema.
    fn slot(&mut self, schema: &'d Value, path: &str, depth: usize) -> Result<Slot, Located> {
        if depth > MAX_DEPTH {
            return Err(Located::new(path, SchemaErrorKind::TooDeep(MAX_DEPTH)));
        }
        let obj = schema
            .as_object()
            .ok_or_else(|| wrong(path, "a schema object"))?;
        let mut ext =
            Ext::read(obj).map_err(|(key, kind)| Located::new(&format!("{path}.{key}"), kind))?;
        let (body, def) = self.resolve(obj, path)?;
        let mut kind = ValueKind::of(body);
        if kind == ValueKind::Unknown {
            kind = ValueKind::of(obj);
        }
        if def.is_some() && kind == ValueKind::Array {
            // A named list type: its own list extensions apply where the property says nothing.
            let def_ext = Ext::read(body)
                .map_err(|(key, kind)| Located::new(&format!("{path}.{key}"), kind))?;
            ext = ext.or(def_ext);
        }
        let ref_atomic =
            def.is_some() && body.get(ext::MAP_TYPE).and_then(Value::as_str) == Some("atomic");

        let mut elem = ValueKind::Unknown;
        let mut elem_body: Option<&'d Obj> = None;
        let target = if kind == ValueKind::Array {
            match body.get("items").or_else(|| obj.get("items")) {
                Some(Value::Object(items)) => {
                    let items_path = format!("{path}.items");
                    let (ibody, idef) = self.resolve(items, &items_path)?;
                    elem = ValueKind::of(ibody);
                    elem_body = Some(ibody);
                    match idef {
                        Some(name) => Some(self.def_node(name)),
                        None if elem == ValueKind::Array => None, // a list of lists: no element position
                        None => self.object_node(ibody, &items_path, depth + 1, true)?,
                    }
                }
                _ => None,
            }
        } else {
            match def {
                Some(name) => Some(self.def_node(name)),
                None => self.object_node(body, path, depth + 1, false)?,
            }
        };

        let key_default = |key: &str| {
            elem_body
                .and_then(|b| b.get("properties"))
                .and_then(|p| p.get(key))
                .and_then(|p| p.get("default"))
                .and_then(ext::scalar_text)
        };
        let shape = Shape {
            kind,
            elem,
            ref_atomic,
            key_default: &key_default,
        };
        let meta = derive(&ext, &shape).map_err(|k| Located::new(path, k))?;
        Ok(Slot {
            meta,
            target,
            shape: self.shape(obj, depth),
            required: false,
        })
    }

    /// What the values of a property (or items, or map value) schema must be. The same rules as
    /// `shape_of` in `tools/gen_builtin_schema.py`, which writes the built-in layer's shapes:
    ///
    /// * a `$ref` to a definition with `properties` is an object of that type; to one without,
    ///   what the definition's own schema says (Time: a string);
    /// * `type: array` (or `items` without a type): a list of what `items` says (anything
    ///   without `items`);
    /// * `x-kubernetes-preserve-unknown-fields`: an object when it has `type: object` or
    ///   properties, else anything;
    /// * `x-kubernetes-int-or-string` or `format: int-or-string`: an integer or a string;
    /// * `type: object`, `properties` or a map value schema: an object;
    /// * a scalar `type`, or without one the types of the `oneOf`/`anyOf` alternatives:
    ///   string, integer, number, boolean; string and integer together are IntOrString, string
    ///   and number (Quantity) a string or a number; other mixtures anything;
    /// * nothing of these: anything.
    fn shape(&self, obj: &'d Obj, depth: usize) -> shape::Shape {
        let Ok((body, def)) = self.resolve(obj, "") else {
            return shape::Shape::ANY;
        };
        if def == Some(QUANTITY) {
            return shape::Shape::of(Val::Quantity);
        }
        if def.is_some() && body.get("properties").is_some_and(|p| !is_empty_object(p)) {
            return shape::Shape::of(Val::Object);
        }
        let types = types_of(body);
        if types.array || (types.none() && body.contains_key("items")) {
            return match body.get("items") {
                Some(Value::Object(items)) if depth < MAX_DEPTH => {
                    self.shape(items, depth + 1).listed()
                }
                _ => shape::Shape::ANY.listed(),
            };
        }
        let props = body.contains_key("properties");
        let map = body
            .get("additionalProperties")
            .is_some_and(Value::is_object);
        if flag(body, PRESERVE) {
            let val = if types.object || props || map {
                Val::Object
            } else {
                Val::Any
            };
            return shape::Shape::of(val);
        }
        if flag(body, INT_OR_STRING)
            || body.get("format").and_then(Value::as_str) == Some("int-or-string")
        {
            return shape::Shape::of(Val::IntOrString);
        }
        if types.object || props || map {
            return shape::Shape::of(Val::Object);
        }
        let types = if types.none() {
            alternative_types(body)
        } else {
            types
        };
        shape::Shape::of(types.scalar())
    }

    /// What `obj` stands for: follows `$ref` (and a lone `allOf: [{$ref}]`) through definitions
    /// that are themselves only references. Returns the schema reached and, when a reference was
    /// followed, the definition's name.
    fn resolve(&self, obj: &'d Obj, path: &str) -> Result<(&'d Obj, Option<&'d str>), Located> {
        let mut current = obj;
        let mut name = None;
        for _ in 0..=MAX_ALIASES {
            let Some(r) = ref_of(current) else {
                return Ok((current, name));
            };
            let r = r
                .as_str()
                .ok_or_else(|| wrong(&format!("{path}.$ref"), "a string"))?;
            let unsupported = || Located::new(path, SchemaErrorKind::UnsupportedRef(r.to_string()));
            let defs = self.defs.ok_or_else(unsupported)?;
            let key = r.strip_prefix(REF_PREFIX).ok_or_else(unsupported)?;
            let (key, body) = defs
                .get_key_value(unescape(key).as_ref())
                .ok_or_else(|| Located::new(path, SchemaErrorKind::UnresolvedRef(r.to_string())))?;
            current = body
                .as_object()
                .ok_or_else(|| wrong(&def_path(key), "a schema object"))?;
            name = Some(key.as_str());
        }
        let first = ref_of(obj).and_then(Value::as_str).unwrap_or_default();
        Err(Located::new(
            path,
            SchemaErrorKind::RefLoop(first.to_string(), MAX_ALIASES),
        ))
    }
}

/// A boolean extension that is `true`.
fn flag(obj: &Obj, key: &str) -> bool {
    obj.get(key) == Some(&Value::Bool(true))
}

fn is_empty_object(v: &Value) -> bool {
    v.as_object().is_some_and(Map::is_empty)
}

/// The JSON types a schema's `type` names (a string or a list), `null` aside.
#[derive(Clone, Copy, Debug, Default)]
struct Types {
    array: bool,
    object: bool,
    string: bool,
    integer: bool,
    number: bool,
    boolean: bool,
}

impl Types {
    fn none(self) -> bool {
        !(self.array || self.object || self.string || self.integer || self.number || self.boolean)
    }

    fn add(&mut self, t: &str) {
        match t {
            "array" => self.array = true,
            "object" => self.object = true,
            "string" => self.string = true,
            "integer" => self.integer = true,
            "number" => self.number = true,
            "boolean" => self.boolean = true,
            _ => {}
        }
    }

    /// The scalar these types allow together (see [`Builder::shape`]).
    fn scalar(self) -> Val {
        let Types {
            array,
            object,
            string,
            integer,
            number,
            boolean,
        } = self;
        if array || object || boolean && (string || integer || number) {
            return Val::Any;
        }
        match (string, integer, number, boolean) {
            (true, true, false, _) => Val::IntOrString,
            (true, _, true, _) => Val::Quantity,
            (true, false, false, _) => Val::String,
            (false, true, false, _) => Val::Integer,
            (false, _, true, _) => Val::Number,
            (false, false, false, true) => Val::Boolean,
            (false, false, false, false) => Val::Any,
        }
    }
}

fn types_of(obj: &Obj) -> Types {
    let mut types = Types::default();
    match obj.get("type") {
        Some(Value::String(t)) => types.add(t),
        Some(Value::Array(ts)) => ts
            .iter()
            .filter_map(Value::as_str)
            .for_each(|t| types.add(t)),
        _ => {}
    }
    types
}

/// The types of the `oneOf` and `anyOf` alternatives together.
fn alternative_types(obj: &Obj) -> Types {
    let mut types = Types::default();
    for key in ["oneOf", "anyOf"] {
        let alternatives = obj
            .get(key)
            .and_then(Value::as_array)
            .map_or(&[][..], Vec::as_slice);
        for alt in alternatives.iter().filter_map(Value::as_object) {
            let t = types_of(alt);
            types.array |= t.array;
            types.object |= t.object;
            types.string |= t.string;
            types.integer |= t.integer;
            types.number |= t.number;
            types.boolean |= t.boolean;
        }
    }
    types
}

/// The reference of a schema: `$ref`, or the `$ref` of a one-element `allOf` (how OpenAPI
/// generators attach a description or default to a reference).
fn ref_of(obj: &Obj) -> Option<&Value> {
    if let Some(r) = obj.get("$ref") {
        return Some(r);
    }
    match obj.get("allOf")?.as_array()?.as_slice() {
        [only] => only.get("$ref"),
        _ => None,
    }
}

/// JSON Pointer unescaping of one reference token (`~1` → `/`, `~0` → `~`).
fn unescape(token: &str) -> std::borrow::Cow<'_, str> {
    if token.contains('~') {
        token.replace("~1", "/").replace("~0", "~").into()
    } else {
        token.into()
    }
}

fn gvks(v: Option<&Value>) -> impl Iterator<Item = &Value> {
    let (one, many) = match v {
        Some(Value::Array(list)) => (None, list.as_slice()),
        Some(other) => (Some(other), &[][..]),
        None => (None, &[][..]),
    };
    one.into_iter().chain(many)
}

fn read_gvk<'v>(v: &'v Value, path: &str) -> Result<(&'v str, &'v str, &'v str), Located> {
    let obj = v
        .as_object()
        .ok_or_else(|| wrong(path, "an object with group, version, kind"))?;
    let get = |key: &'static str, required: bool| -> Result<&'v str, Located> {
        match obj.get(key) {
            Some(Value::String(s)) => Ok(s),
            None if !required => Ok(""),
            None => Err(Located::new(path, SchemaErrorKind::Missing(key))),
            Some(_) => Err(wrong(&format!("{path}.{key}"), "a string")),
        }
    };
    Ok((
        get("group", false)?,
        get("version", true)?,
        get("kind", true)?,
    ))
}

fn def_path(name: &str) -> String {
    format!("definitions[{name:?}]")
}

fn wrong(path: &str, expected: &'static str) -> Located {
    Located::new(path, SchemaErrorKind::WrongType { expected })
}
