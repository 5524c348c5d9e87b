//! Patch documents and schema documents: read (inline text, inline nodes, files), parsed,
//! aliases expanded within the budget, and checked for the shape their use needs.
//!
//! What it must not do: read any file but those the config names, or decide what a step does
//! with its documents (`mod.rs` does).

use std::fs::{self, File};
use std::io::Read;
use std::path::PathBuf;

use serde_json::Value;

use super::{wire, ConfigError, PatchKind, ALIAS_BUDGET, MAX_FILE_BYTES, MAX_LOADED_BYTES};
use crate::error::io_reason;
use crate::patch::json6902::{self, PatchError, PatchErrorKind};
use crate::path::Path;
use crate::schema::{Schema, SchemaError};
use crate::yaml::{parse_stream, to_json, AliasError, Node};

/// Where a step's patch (or original) is.
pub(super) struct Source<'n> {
    /// The field that gave it (`spec.patches[0].patch`, `spec.patches[0].path`, `data.patch`).
    pub field: Path,
    pub content: Content<'n>,
}

pub(super) enum Content<'n> {
    /// A value in the config: a string of documents, or a mapping or list that is the document.
    Inline(&'n Node<'static>),
    /// A file, as written in the config.
    File(String),
}

/// A patch's documents, read.
pub(super) struct Loaded {
    /// The non-empty documents, aliases expanded.
    pub docs: Vec<Node<'static>>,
    /// Where they came from, for messages: `inline`, or the path as written.
    pub name: String,
    /// The text starts with `[` as kustomize sees it (inline text after its trimming, a file
    /// as it is): kustomize then reads a JSON patch as JSON, and otherwise converts it from
    /// YAML (see `kustomize.rs`). `false` for a patch given as a mapping or list in the config.
    pub bracket: bool,
}

/// Which files a functionConfig may load (`path:`, `originalPath:`,
/// `spec.schema.openAPI.path`): kustomize's load restrictor, under kustomize's names.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum LoadRestrictor {
    /// Only files that resolve, symlinks followed, inside the root directory's tree (kustomize's
    /// `LoadRestrictionsRootOnly`, its default and ours).
    #[default]
    RootOnly,
    /// Any file the process can read (kustomize's `LoadRestrictionsNone`).
    None,
}

impl LoadRestrictor {
    /// The name the command line takes: `rootOnly` or `none`.
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            LoadRestrictor::RootOnly => "rootOnly",
            LoadRestrictor::None => "none",
        }
    }
}

/// A value of `--load-restrictor` that is not one.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error(
    "unknown load restrictor {0:?} (expected rootOnly or none; kustomize's \
     LoadRestrictionsRootOnly and LoadRestrictionsNone are accepted too)"
)]
pub struct BadLoadRestrictor(pub String);

impl std::str::FromStr for LoadRestrictor {
    type Err = BadLoadRestrictor;

    /// `rootOnly` / `none`, or kustomize's `LoadRestrictionsRootOnly` /
    /// `LoadRestrictionsNone` (`kustomize build --load-restrictor`), in any letter case.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.to_ascii_lowercase().as_str() {
            "rootonly" | "loadrestrictionsrootonly" => Ok(LoadRestrictor::RootOnly),
            "none" | "loadrestrictionsnone" => Ok(LoadRestrictor::None),
            _ => Err(BadLoadRestrictor(s.to_owned())),
        }
    }
}

impl std::fmt::Display for LoadRestrictor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Where a functionConfig's files are read from, and which it may read.
///
/// * `base_dir`: relative paths are read from here (the functionConfig file's directory); `None`
///   reads them from the current directory.
/// * `root`: with [`LoadRestrictor::RootOnly`], every file must resolve (after `..` and
///   symlinks) inside this directory's tree; `None` means `base_dir` (or the current directory
///   when that is `None` too). Under kpt it is the package root, which may be above the
///   config's own directory.
///
/// [`Load::new`] gives the default: restricted to `base_dir`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Load {
    /// The directory relative paths start from (see above).
    pub base_dir: Option<PathBuf>,
    /// The directory tree files must stay inside (see above).
    pub root: Option<PathBuf>,
    /// Whether files outside `root` may be read (`--load-restrictor`).
    pub restrictor: LoadRestrictor,
    /// Where `base_dir` comes from, for messages about a file that is not there.
    pub base_is: BaseDir,
}

/// Where the directory relative paths are read from comes from: what a message about a missing
/// file says of it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum BaseDir {
    /// The functionConfig file's directory, named by the caller (standalone, the exec plugin).
    #[default]
    ConfigFile,
    /// The functionConfig file's directory as kpt's path annotations give it (`kpt fn render`).
    KptAnnotation,
    /// The directory of the file kpt's `--fn-config` named (`kpt fn eval`).
    KptFnConfig,
    /// The current directory: the host did not say where the functionConfig's file is.
    Unknown,
}

impl BaseDir {
    /// What a message says of the directory `dir` relative paths were read from.
    fn describe(self, dir: &std::path::Path) -> String {
        let shown = if dir.as_os_str().is_empty() {
            ".".to_owned()
        } else {
            dir.display().to_string()
        };
        match self {
            BaseDir::ConfigFile => format!("relative to the functionConfig's directory, {shown}"),
            BaseDir::KptAnnotation => format!(
                "relative to the functionConfig's directory, {shown}, as kpt's path annotations \
                 give it"
            ),
            BaseDir::KptFnConfig => {
                format!("relative to the directory of kpt's --fn-config, {shown}")
            }
            BaseDir::Unknown => "relative to the current directory: the host did not say where \
                 the functionConfig's file is (kpt says so for a Kptfile pipeline's configPath, \
                 and for kpt fn eval --fn-config)"
                .to_owned(),
        }
    }
}

impl Load {
    /// Files relative to `base_dir`, confined to its tree.
    pub fn new(base_dir: Option<&std::path::Path>) -> Load {
        Load {
            base_dir: base_dir.map(std::path::Path::to_path_buf),
            root: None,
            restrictor: LoadRestrictor::RootOnly,
            base_is: if base_dir.is_some() {
                BaseDir::ConfigFile
            } else {
                BaseDir::Unknown
            },
        }
    }

    /// The same, saying where `base_dir` came from (for messages).
    pub fn based(mut self, base_is: BaseDir) -> Load {
        self.base_is = base_is;
        self
    }

    /// The same with another restrictor.
    pub fn restricted(mut self, restrictor: LoadRestrictor) -> Load {
        self.restrictor = restrictor;
        self
    }

    /// The same with files confined to `root`'s tree rather than `base_dir`'s.
    pub(crate) fn with_root(mut self, root: Option<&std::path::Path>) -> Load {
        self.root = root.map(std::path::Path::to_path_buf);
        self
    }

    /// The directory files must stay in, as given.
    fn root_dir(&self) -> &std::path::Path {
        self.root
            .as_deref()
            .or(self.base_dir.as_deref())
            .filter(|d| !d.as_os_str().is_empty())
            .unwrap_or(std::path::Path::new("."))
    }
}

/// What reading a config needs across its fields: where files are, and the alias budget left.
pub(super) struct Ctx<'d> {
    load: &'d Load,
    budget: usize,
    /// The files read so far, by where they resolve: a file several entries name is read once.
    files: crate::hash::HashMap<PathBuf, std::rc::Rc<str>>,
    /// The bytes of file text given to patches so far, a file counting once per use (each use
    /// becomes a tree of its own): bounded by [`MAX_LOADED_BYTES`].
    loaded: u64,
}

impl<'d> Ctx<'d> {
    pub(super) fn new(load: &'d Load) -> Self {
        Ctx {
            load,
            budget: ALIAS_BUDGET,
            files: crate::hash::HashMap::default(),
            loaded: 0,
        }
    }

    /// The files read so far, where they resolve.
    pub(super) fn files_read(&self) -> Vec<PathBuf> {
        self.files.keys().cloned().collect()
    }

    /// Expands the aliases of `node`, charging the nodes it gains to the budget.
    pub(super) fn expand(&mut self, node: &mut Node<'_>, field: &Path) -> Result<(), ConfigError> {
        let before = node.node_count();
        match node.expand_aliases(before.saturating_add(self.budget)) {
            Ok(()) => {
                // The patch's anchors have done their work: carried into a resource they could
                // capture its aliases, and the walkers would copy the patch per item to drop them.
                crate::yaml::anchors::strip_anchors(node);
                let added = node.node_count().saturating_sub(before);
                self.budget = self.budget.saturating_sub(added);
                Ok(())
            }
            Err(AliasError::TooLarge(_) | AliasError::AnchorsTooLarge(_)) => Err(ConfigError::new(
                field.clone(),
                format!(
                    "expanding aliases would add more than {ALIAS_BUDGET} nodes to the \
                     functionConfig (an alias bomb?)"
                ),
            )),
            Err(e @ AliasError::Unknown(_)) => Err(ConfigError::new(field.clone(), e.to_string())),
        }
    }

    /// The non-empty documents of a patch. `trim_inline`: inline text loses the whitespace
    /// around it first, as kustomize's `patches:` field does to it (never to a file's text), so
    /// a `|` block that ends the patch loses its final line break.
    pub(super) fn load(
        &mut self,
        src: &Source<'_>,
        trim_inline: bool,
    ) -> Result<Loaded, ConfigError> {
        let field = &src.field;
        let inline = |docs, bracket| Loaded {
            docs,
            name: "inline".to_owned(),
            bracket,
        };
        let loaded = match &src.content {
            Content::Inline(n) if n.is_null() => inline(Vec::new(), false),
            Content::Inline(n) => match n.as_str() {
                Some(text) if trim_inline => {
                    let trimmed = text.trim();
                    let lead = &text[..text.len() - text.trim_start().len()];
                    let docs = self.documents_at(trimmed, field, None, Offset::of(lead))?;
                    inline(docs, trimmed.starts_with('['))
                }
                Some(text) => inline(self.documents(text, field, None)?, text.starts_with('[')),
                None => inline(vec![(*n).clone()], false),
            },
            Content::File(written) => {
                let (path, text) = self.read(written, field)?;
                let docs = self.documents(&text, field, Some(&path))?;
                if docs.is_empty() {
                    return Err(ConfigError::new(
                        field.clone(),
                        format!("{}: empty: no YAML or JSON document", path.display()),
                    ));
                }
                Loaded {
                    docs,
                    name: written.clone(),
                    bracket: text.starts_with('['),
                }
            }
        };
        if loaded.docs.is_empty() {
            return Err(ConfigError::new(
                field.clone(),
                "empty: no YAML or JSON document",
            ));
        }
        Ok(loaded)
    }

    /// The non-empty documents of a YAML stream (JSON is YAML), aliases expanded. Errors are
    /// located in `file`, or else in the inline text itself.
    fn documents(
        &mut self,
        text: &str,
        field: &Path,
        file: Option<&std::path::Path>,
    ) -> Result<Vec<Node<'static>>, ConfigError> {
        self.documents_at(text, field, file, Offset::default())
    }

    /// [`documents`](Self::documents) of text that starts `at` this far into the inline text
    /// the user wrote, so errors name the user's lines and columns.
    fn documents_at(
        &mut self,
        text: &str,
        field: &Path,
        file: Option<&std::path::Path>,
        at: Offset,
    ) -> Result<Vec<Node<'static>>, ConfigError> {
        let docs = parse_stream(text).map_err(|e| {
            let hint = syntax_hint(text, e.line, e.column)
                .map(|h| format!(" ({h})"))
                .unwrap_or_default();
            let message = match file {
                Some(path) => format!("{}: {e}{hint}", path.display()),
                None => {
                    let (line, column) = at.locate(e.line, e.column);
                    format!(
                        "line {line}, column {column} of the inline text: {}{hint}",
                        e.message
                    )
                }
            };
            ConfigError::new(field.clone(), message)
        })?;
        let mut out = Vec::new();
        // An empty document (`---` followed by nothing, or by `---`) may come as a null root.
        for doc in docs {
            if let Some(root) = doc.root.filter(|r| !r.is_null()) {
                let mut root = root.into_owned();
                self.expand(&mut root, field)?;
                out.push(root);
            }
        }
        Ok(out)
    }

    /// Reads the file a config field names: a regular file of UTF-8 text, bounded in size.
    fn read(
        &mut self,
        written: &str,
        field: &Path,
    ) -> Result<(PathBuf, std::rc::Rc<str>), ConfigError> {
        if written.is_empty() {
            return Err(ConfigError::new(field.clone(), "empty path"));
        }
        let path = match &self.load.base_dir {
            Some(dir) => dir.join(written),
            None => PathBuf::from(written),
        };
        let fail =
            |what: String| ConfigError::new(field.clone(), format!("{}: {what}", path.display()));
        // The file is opened where it resolves, so what was checked is what is read.
        let opened = match self.load.restrictor {
            LoadRestrictor::None => path.clone(),
            LoadRestrictor::RootOnly => self.confined(&path, written, field)?,
        };
        let key = fs::canonicalize(&opened).unwrap_or_else(|_| opened.clone());
        if let Some(text) = self.files.get(&key).cloned() {
            self.charge(text.len(), field)?;
            return Ok((path, text));
        }
        let meta = fs::metadata(&opened).map_err(|e| self.missing(written, &path, field, &e))?;
        if !meta.is_file() {
            return Err(fail("not a regular file".to_owned()));
        }
        let too_large = || fail(format!("larger than {MAX_FILE_BYTES} bytes"));
        if meta.len() > MAX_FILE_BYTES {
            return Err(too_large());
        }
        let mut bytes = Vec::new();
        File::open(&opened)
            .and_then(|f| f.take(MAX_FILE_BYTES + 1).read_to_end(&mut bytes))
            .map_err(|e| fail(format!("cannot read: {}", io_reason(&e))))?;
        if bytes.len() as u64 > MAX_FILE_BYTES {
            return Err(too_large());
        }
        let text = String::from_utf8(bytes).map_err(|e| {
            fail(format!(
                "not UTF-8 text (invalid byte at offset {})",
                e.utf8_error().valid_up_to()
            ))
        })?;
        let text: std::rc::Rc<str> = text.into();
        self.charge(text.len(), field)?;
        self.files.insert(key, text.clone());
        Ok((path, text))
    }

    /// Counts `bytes` of file text given to a patch against [`MAX_LOADED_BYTES`].
    fn charge(&mut self, bytes: usize, field: &Path) -> Result<(), ConfigError> {
        self.loaded = self.loaded.saturating_add(bytes as u64);
        if self.loaded > MAX_LOADED_BYTES {
            return Err(ConfigError::new(
                field.clone(),
                format!(
                    "the files the functionConfig names would give its patches more than \
                     {MAX_LOADED_BYTES} bytes together (a file named several times counts each \
                     time: every use is a tree of its own)"
                ),
            ));
        }
        Ok(())
    }

    /// Where `path` (as `written` in `field`) resolves, symlinks followed, when that is inside
    /// the root's tree ([`LoadRestrictor::RootOnly`]); otherwise an error saying which rule
    /// refused which file.
    fn confined(
        &self,
        path: &std::path::Path,
        written: &str,
        field: &Path,
    ) -> Result<PathBuf, ConfigError> {
        let root = self.load.root_dir();
        let fail = |what: String| ConfigError::new(field.clone(), what);
        let real_root = fs::canonicalize(root).map_err(|e| {
            fail(format!(
                "{written}: cannot resolve the directory files are loaded from, {}: {}",
                root.display(),
                io_reason(&e)
            ))
        })?;
        let real = fs::canonicalize(path).map_err(|e| self.missing(written, path, field, &e))?;
        if real.starts_with(&real_root) {
            return Ok(real);
        }
        Err(fail(format!(
            "{written}: refused by the load restrictor rootOnly: it resolves to {}, outside {} \
             (files are loaded only from the functionConfig's directory tree, as kustomize's \
             LoadRestrictionsRootOnly does; --load-restrictor none lifts this)",
            real.display(),
            real_root.display()
        )))
    }

    /// A file the config names that cannot be opened: the path as written, the reason, and
    /// for a relative path where it was looked for and why there.
    fn missing(
        &self,
        written: &str,
        path: &std::path::Path,
        field: &Path,
        e: &std::io::Error,
    ) -> ConfigError {
        let reason = io_reason(e);
        if std::path::Path::new(written).is_absolute() {
            return ConfigError::new(field.clone(), format!("{written}: {reason}"));
        }
        let dir = self.load.base_dir.clone().unwrap_or_default();
        let looked = if path.is_absolute() {
            path.to_path_buf()
        } else {
            std::env::current_dir()
                .map(|cwd| cwd.join(path))
                .unwrap_or_else(|_| path.to_path_buf())
        };
        ConfigError::new(
            field.clone(),
            format!(
                "{written}: {reason}: looked for {} ({})",
                looked.display(),
                self.load.base_is.describe(&dir)
            ),
        )
    }

    /// One JSON value from text: JSON read directly (large OpenAPI documents are JSON), else
    /// one YAML document.
    fn json_document(
        &mut self,
        text: &str,
        field: &Path,
        file: Option<&std::path::Path>,
    ) -> Result<Value, ConfigError> {
        let text = text.strip_prefix('\u{feff}').unwrap_or(text);
        if text.trim_start().starts_with('{') {
            if let Ok(v) = serde_json::from_str(text) {
                return Ok(v);
            }
        }
        let in_file = |message: String| match file {
            Some(path) => format!("{}: {message}", path.display()),
            None => message,
        };
        let docs = self.documents(text, field, file)?;
        match docs.as_slice() {
            [doc] => to_json(doc).map_err(|e| {
                ConfigError::new(field.clone(), in_file(format!("{}: {}", e.path, e.message)))
            }),
            [] => Err(ConfigError::new(
                field.clone(),
                in_file("empty: no document".to_owned()),
            )),
            more => Err(ConfigError::new(
                field.clone(),
                in_file(format!("expected one document, found {}", more.len())),
            )),
        }
    }
}

/// What to do about a YAML syntax error at `line` and `column` (1-based) of `text`, when the
/// text there shows a mistake YAML makes easy in a config: a JSON pointer's `[key=value]`
/// selector in a flow mapping (`{op: replace, path: /a/[name=x]/b}`), whose brackets YAML reads
/// as its own, or a value starting with `@` or a backquote (`at: @containers`), which YAML
/// reserves. Looks at that line only.
pub(crate) fn syntax_hint(text: &str, line: usize, column: usize) -> Option<String> {
    let l = text.lines().nth(line.checked_sub(1)?)?;
    let before: String = l.chars().take(column.saturating_sub(1)).collect();
    let at = l.chars().nth(column.saturating_sub(1));
    if let Some(open) = before.rfind('{') {
        let inside = &l[open..];
        if let Some(sel) = selector_in(inside) {
            return Some(format!(
                "{sel} in a flow mapping ({{...}}) reads as YAML's own brackets: quote the \
                 value, as in path: \"/spec/containers/{sel}/image\""
            ));
        }
    }
    match at {
        Some(c @ ('@' | '`')) => Some(format!(
            "YAML reserves {c} at the start of a plain value: quote it, as in at: \"@containers\""
        )),
        _ => None,
    }
}

/// The first `[key=value]` of `s`, as written.
fn selector_in(s: &str) -> Option<&str> {
    let start = s.find('[')?;
    let len = s[start..].find(']')?;
    let sel = &s[start..=start + len];
    sel.contains('=').then_some(sel)
}

/// Where a piece of text starts in the text it was cut from: whole lines before it, and the
/// characters before it on its first line.
#[derive(Clone, Copy, Default)]
pub(super) struct Offset {
    lines: usize,
    columns: usize,
}

impl Offset {
    /// The offset of the text that follows `lead`.
    fn of(lead: &str) -> Offset {
        let last_line = lead.rfind('\n').map_or(lead, |i| &lead[i + 1..]);
        Offset {
            lines: lead.matches('\n').count(),
            columns: last_line.chars().count(),
        }
    }

    /// A 1-based line and column of the cut text, in the whole text.
    fn locate(self, line: usize, column: usize) -> (usize, usize) {
        if line <= 1 {
            (line + self.lines, column + self.columns)
        } else {
            (line + self.lines, column)
        }
    }
}

/// How a document of several is named in messages.
fn which(docs: &[Node<'_>], i: usize) -> String {
    if docs.len() == 1 {
        "the patch".to_owned()
    } else {
        format!("document {}", i + 1)
    }
}

/// The type of a patch without `type`, as kustomize decides it: one list of mappings with `op`
/// is a JSON patch, mappings are a strategic merge patch.
pub(super) fn detect(docs: &[Node<'_>], field: &Path) -> Result<PatchKind, ConfigError> {
    if let [doc] = docs {
        if doc.is_seq() {
            let ops = doc.items().iter().all(|op| op.get("op").is_some());
            return if ops {
                Ok(PatchKind::Json6902)
            } else {
                Err(ConfigError::new(
                    field.clone(),
                    "a list, but not of JSON patch operations (mappings with op); a patch is \
                     a partial resource (a mapping) or a list of operations",
                ))
            };
        }
    }
    match docs.iter().position(|d| !d.is_map()) {
        None => Ok(PatchKind::Merge2),
        Some(i) => Err(ConfigError::new(
            field.clone(),
            format!(
                "{} is {}; a patch is a partial resource (a mapping) or one list of JSON patch \
                 operations",
                which(docs, i),
                &docs[i].describe()
            ),
        )),
    }
}

/// Checks that the documents have the shape `kind` reads.
pub(super) fn check_shape(
    kind: PatchKind,
    docs: &[Node<'_>],
    field: &Path,
) -> Result<(), ConfigError> {
    if kind == PatchKind::Json6902 {
        let ops = match docs {
            [doc] if doc.is_seq() => doc,
            [doc] => {
                return Err(ConfigError::new(
                    field.clone(),
                    format!(
                        "a json6902 patch is a list of operations, found {}",
                        doc.describe()
                    ),
                ))
            }
            _ => {
                return Err(ConfigError::new(
                    field.clone(),
                    format!(
                        "a json6902 patch is one list of operations, found {} documents",
                        docs.len()
                    ),
                ))
            }
        };
        let _ = ops;
        return Ok(());
    }
    match docs.iter().position(|d| !d.is_map()) {
        None => Ok(()),
        Some(i) => Err(ConfigError::new(
            field.clone(),
            format!(
                "{} is {}; a {kind} patch is made of partial resources (mappings)",
                which(docs, i),
                &docs[i].describe()
            ),
        )),
    }
}

/// The operations of a JSON patch, parsed once for the whole run. Errors name the operation's
/// field (`spec.patches[0].patch[2].path`). Members the RFC does not define are ignored, as it
/// says.
pub(super) fn operations(
    ops: &Node<'static>,
    field: &Path,
) -> Result<Vec<json6902::Op<'static>>, ConfigError> {
    json6902::parse_ops(ops).map_err(|e| op_error(ops, field, e))
}

/// A JSON patch operation that does not parse, as a config error on its field.
fn op_error(ops: &Node<'_>, field: &Path, e: PatchError) -> ConfigError {
    let at = field.index(e.op);
    let item = ops.items().get(e.op);
    let member = |name: &str| item.and_then(|i| i.get(name));
    let needs = |m: &str| match e.verb {
        Some(verb) => format!("missing {m} (a {verb} operation needs one)"),
        None => format!("missing {m}"),
    };
    match e.kind {
        PatchErrorKind::NotAMapping => ConfigError::new(
            at,
            format!(
                "expected an operation (a mapping with op and path), found {}",
                item.map_or("nothing", Node::describe)
            ),
        ),
        PatchErrorKind::MissingMember(m) => ConfigError::new(at, needs(m)),
        PatchErrorKind::NotAString("op") => ConfigError::new(
            at.field("op"),
            format!(
                "expected a string, found {}",
                member("op").map_or("nothing", Node::describe)
            ),
        ),
        PatchErrorKind::NotAString(m) => ConfigError::new(
            at.field(m),
            format!(
                "expected a string (a JSON pointer), found {}",
                member(m).map_or("nothing", Node::describe)
            ),
        ),
        PatchErrorKind::UnknownOp(name) => ConfigError::new(
            at.field("op"),
            format!(
                "unknown operation {name:?}; expected add, remove, replace, move, copy or test"
            ),
        ),
        PatchErrorKind::BadPointer(p) => {
            let key = if e.from { "from" } else { "path" };
            ConfigError::new(at.field(key), format!("{:?}: {p}", e.path))
        }
        other => ConfigError::new(at, other.to_string()),
    }
}

/// Without a target, each document selects the item with its own identity, so it must have one.
pub(super) fn check_identity(docs: &[Node<'_>], field: &Path) -> Result<(), ConfigError> {
    let named = |n: Option<&Node<'_>>| {
        n.is_some_and(|n| n.as_str().is_some_and(|s| !s.is_empty()) && !n.is_null())
    };
    for (i, doc) in docs.iter().enumerate() {
        let missing = if !named(doc.get("kind")) {
            "kind"
        } else if !named(doc.get_path(&["metadata", "name"])) {
            "metadata.name"
        } else {
            continue;
        };
        return Err(ConfigError::new(
            field.clone(),
            format!(
                "{} has no {missing}: without a target, each document patches the item with \
                 its own apiVersion, kind, namespace and name; give them, or give a target",
                which(docs, i)
            ),
        ));
    }
    Ok(())
}

/// Loads `spec.schema` into `schema`.
pub(super) fn load_schema(
    spec: &wire::SchemaSpec,
    schema: &mut Schema,
    ctx: &mut Ctx<'_>,
) -> Result<(), ConfigError> {
    if let Some(open_api) = &spec.open_api {
        let at = Path::fields(&["spec", "schema", "openAPI"]);
        let (field, doc) = match (&open_api.path, &open_api.inline) {
            (Some(_), Some(_)) => {
                return Err(ConfigError::new(
                    at.clone(),
                    "give either path or inline, not both",
                ))
            }
            (None, None) => return Err(ConfigError::new(at.clone(), "give path or inline")),
            (Some(written), None) => {
                let field = at.field("path");
                let (path, text) = ctx.read(written, &field)?;
                let doc = ctx.json_document(&text, &field, Some(&path))?;
                (field, doc)
            }
            (None, Some(Value::String(text))) => {
                let field = at.field("inline");
                let doc = ctx.json_document(text, &field, None)?;
                (field, doc)
            }
            (None, Some(doc)) => (at.field("inline"), doc.clone()),
        };
        if !doc.is_object() {
            return Err(ConfigError::new(
                field.clone(),
                "expected an OpenAPI v2 document (an object with definitions)",
            ));
        }
        schema
            .add_openapi_v2(&doc)
            .map_err(|e| ConfigError::new(field.clone(), located(&e)))?;
    }
    for (i, mk) in spec.merge_keys.iter().flatten().enumerate() {
        let at = Path::fields(&["spec", "schema", "mergeKeys"]).index(i);
        schema
            .add_merge_key(
                &mk.group,
                &mk.kind,
                &mk.path,
                mk.keys.clone(),
                mk.strategy.as_deref(),
            )
            .map_err(|e| ConfigError::new(at, located(&e)))?;
    }
    Ok(())
}

/// A schema error without its origin, which the field already names.
fn located(e: &SchemaError) -> String {
    if e.path.is_empty() {
        e.kind.to_string()
    } else {
        format!("{}: {}", e.path, e.kind)
    }
}
