//! Field paths inside a resource, for messages and results: `spec.template.spec.containers[name=app].image`.
//!
//! A path names where something happened; it does no lookups and walks no trees. Errors build
//! their path while the stack unwinds ([`Path::within`]), so the happy path never allocates one.

use std::fmt;

/// One step of a [`Path`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Seg {
    /// A mapping key.
    Field(String),
    /// The list element whose key fields have these values (`[name=app]`, `[containerPort=80,protocol=TCP]`).
    Key(Vec<(String, String)>),
    /// A list element by position.
    Index(usize),
}

/// A path from a resource's root, outermost step first.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Path(pub Vec<Seg>);

impl Path {
    /// The root (an empty path).
    pub fn root() -> Path {
        Path(Vec::new())
    }

    /// This path with `seg` put in front: how an error learns where it happened as it travels
    /// up through the walkers.
    pub fn within(mut self, seg: Seg) -> Path {
        self.0.insert(0, seg);
        self
    }

    /// True at the root.
    pub fn is_root(&self) -> bool {
        self.0.is_empty()
    }

    /// A path of field names from the root: `["spec", "schema"]` is `spec.schema`.
    pub fn fields(names: &[&str]) -> Path {
        Path(names.iter().map(|n| Seg::field(n)).collect())
    }

    /// This path one field further down: `spec` then `patches` is `spec.patches`.
    pub fn field(&self, name: &str) -> Path {
        self.then(Seg::field(name))
    }

    /// This path one list element further down: `spec.patches` then `2` is `spec.patches[2]`.
    pub fn index(&self, i: usize) -> Path {
        self.then(Seg::Index(i))
    }

    fn then(&self, seg: Seg) -> Path {
        let mut p = self.clone();
        p.0.push(seg);
        p
    }
}

impl Seg {
    /// A field step.
    pub fn field(name: &str) -> Seg {
        Seg::Field(name.to_owned())
    }
}

fn needs_brackets(name: &str) -> bool {
    name.is_empty() || name.contains(['.', '[', ']', ' ', '='])
}

impl fmt::Display for Path {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.0.is_empty() {
            return f.write_str("(root)");
        }
        for (i, seg) in self.0.iter().enumerate() {
            match seg {
                // Keys with dots (annotations, labels) are written `[example.com/x]`.
                Seg::Field(name) if needs_brackets(name) => write!(f, "[{name}]")?,
                Seg::Field(name) => {
                    if i > 0 {
                        f.write_str(".")?;
                    }
                    f.write_str(name)?;
                }
                Seg::Key(kv) => {
                    f.write_str("[")?;
                    for (j, (k, v)) in kv.iter().enumerate() {
                        if j > 0 {
                            f.write_str(",")?;
                        }
                        write!(f, "{k}={v}")?;
                    }
                    f.write_str("]")?;
                }
                Seg::Index(n) => write!(f, "[{n}]")?,
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn displays_like_kubectl_field_paths() {
        let p = Path::root()
            .within(Seg::field("image"))
            .within(Seg::Key(vec![("name".into(), "app".into())]))
            .within(Seg::field("containers"))
            .within(Seg::field("spec"));
        assert_eq!(p.to_string(), "spec.containers[name=app].image");
        let p = Path(vec![
            Seg::field("metadata"),
            Seg::field("annotations"),
            Seg::field("example.com/x"),
        ]);
        assert_eq!(p.to_string(), "metadata.annotations[example.com/x]");
        assert_eq!(
            Path(vec![Seg::field("items"), Seg::Index(2)]).to_string(),
            "items[2]"
        );
        assert_eq!(Path::root().to_string(), "(root)");
    }
}
