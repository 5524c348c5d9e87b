//! Writes a generated package to stdout: `gen_package N [stream|rl]` (see benches/support/gen.rs).

#[path = "../benches/support/gen.rs"]
mod gen;

fn main() {
    let mut args = std::env::args().skip(1);
    let n: usize = args.next().and_then(|a| a.parse().ok()).unwrap_or(1000);
    let text = match args.next().as_deref() {
        Some("rl") => gen::resource_list(
            n,
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: function-input\ndata: {}\n",
        ),
        _ => gen::stream(n),
    };
    print!("{text}");
}
