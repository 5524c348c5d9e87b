//! The fast YAML reader against `granit-parser` alone, on arbitrary text (a differential
//! target). The fast reader reads what real packages are made of and leaves the documents it
//! does not read to granit-parser; whatever the text, the result must be the one granit-parser
//! alone gives. Both read as Go reads: where the text holds one of the forms go-yaml reads and
//! YAML 1.2 refuses, granit-parser reads a copy with exactly that construct respelled in YAML
//! 1.2 (`src/yaml/granit.rs`); with none of them, it reads the text itself. So the two differ
//! by design on those forms only, and the comparison is with that reading:
//!
//! 1. the events the fast reader hands over, with granit's for the documents it leaves, are
//!    granit's events for the whole text, field for field, with no granit error before them
//!    (`check_fast_reader`);
//! 2. `parse_each` hands over the same documents (the same trees: values, styles, layout,
//!    comments, source texts) and ends with the same error, or none;
//! 3. `parse_split` on `items` (how a ResourceList is read item by item) hands over the same
//!    items with the same texts, and leaves the same documents and range, or the same error.
//!
//! Trees are compared through their `Debug` form, which shows every field.
#![no_main]

use krm_merge::yaml::{
    check_fast_reader, parse_each, parse_each_granit, parse_split, parse_split_granit,
};
use libfuzzer_sys::fuzz_target;

fn docs_with(
    src: &str,
    read: impl Fn(&str, &mut dyn FnMut(String)) -> Result<(), String>,
) -> (Vec<String>, Result<(), String>) {
    let mut docs = Vec::new();
    let end = read(src, &mut |d| docs.push(d));
    (docs, end)
}

fn split_with(
    src: &str,
    granit: bool,
) -> (Vec<String>, Result<String, String>) {
    let mut items = Vec::new();
    let mut each = |node: krm_merge::yaml::Node<'_>, info: krm_merge::yaml::SplitItem<'_>| {
        items.push(format!("{node:?} {:?} {} {:?}", info.text, info.dash_col, info.seq_indent));
    };
    let split = if granit {
        parse_split_granit(src, "items", &mut each)
    } else {
        parse_split(src, "items", &mut each)
    };
    let end = split
        .map(|s| format!("{:?} {:?}", s.docs, s.items))
        .map_err(|e| e.to_string());
    (items, end)
}

fuzz_target!(|data: &[u8]| {
    let Ok(src) = std::str::from_utf8(data) else {
        return;
    };
    if let Err(e) = check_fast_reader(src) {
        panic!("the fast reader's events: {e}\ninput: {src:?}");
    }
    let fast = docs_with(src, |s, f| {
        parse_each(s, |d| f(format!("{d:?}"))).map_err(|e| e.to_string())
    });
    let granit = docs_with(src, |s, f| {
        parse_each_granit(s, |d| f(format!("{d:?}"))).map_err(|e| e.to_string())
    });
    assert_eq!(fast, granit, "parse_each differs\ninput: {src:?}");
    assert_eq!(
        split_with(src, false),
        split_with(src, true),
        "parse_split differs\ninput: {src:?}"
    );
});
