//! The physical floor of any YAML tool built on granit-parser: read a file and run the parser
//! over it, events only, no tree (used by tools/bench.py to put krm-merge's numbers in context).

use granit_parser::{Event, Options, Parser};

fn main() {
    let path = std::env::args().nth(1).expect("usage: parse_events FILE");
    let src = std::fs::read_to_string(&path).expect("readable UTF-8 file");
    let mut opts = Options::default();
    opts.emit_anchor_events = true;
    let mut events = 0usize;
    for item in Parser::new_from_str_with_options(&src, opts) {
        match item {
            Ok((Event::StreamEnd, _)) => break,
            Ok(_) => events += 1,
            Err(e) => panic!("{e}"),
        }
    }
    println!("{events}");
}
