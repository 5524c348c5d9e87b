//! The YAML layer on arbitrary text: whatever parses must (1) be partitioned by its documents'
//! source texts, so an untouched document comes back byte for byte through `Document::text`;
//! (2) read back as the same data when written from its trees; (3) read back as the same data
//! when rewritten in canonical block style (`make_block`, the JSON-in path), which exercises
//! the emitter's quoting. Nothing may panic.
#![no_main]

use krm_merge::yaml::{self, Document, Node};
use libfuzzer_sys::fuzz_target;

fn roots<'d, 'a>(docs: &'d [Document<'a>]) -> Vec<&'d Node<'a>> {
    docs.iter().filter_map(|d| d.root.as_ref()).collect()
}

fn same(what: &str, src: &str, a: &[Document<'_>], out: &str) {
    let back = match yaml::parse_stream(out) {
        Ok(b) => b,
        Err(e) => panic!("{what}: the output does not parse: {e}\ninput:\n{src}\noutput:\n{out}"),
    };
    let (x, y) = (roots(a), roots(&back));
    assert_eq!(
        x.len(),
        y.len(),
        "{what}: document count\ninput:\n{src}\noutput:\n{out}"
    );
    for (p, q) in x.iter().zip(&y) {
        assert!(
            p.same_data(q),
            "{what}: data differs\ninput:\n{src}\noutput:\n{out}"
        );
    }
}

fuzz_target!(|data: &[u8]| {
    let Ok(src) = std::str::from_utf8(data) else {
        return;
    };
    let Ok(docs) = yaml::parse_stream(src) else {
        return;
    };
    let joined: String = docs.iter().map(|d| d.text).collect();
    assert_eq!(
        joined, src,
        "the documents' texts do not partition the input"
    );

    let mut out = String::new();
    yaml::emit_stream(&docs, &mut out);
    same("emit", src, &docs, &out);

    let mut block = docs.clone();
    for d in &mut block {
        if let Some(r) = d.root.as_mut() {
            r.make_block();
        }
    }
    let mut out = String::new();
    yaml::emit_stream(&block, &mut out);
    same("make_block", src, &docs, &out);
});
