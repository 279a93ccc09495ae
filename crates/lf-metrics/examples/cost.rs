//! What counting costs a call: the report of a tool call (through lf-core's
//! meter, before and after the process's metrics are installed) and of an
//! HTTP request, each timed over two million calls. Run it in release
//! mode: `cargo run --release -p lf-metrics --example cost`.

use std::hint::black_box;
use std::time::{Duration, Instant};

use lf_core::meter::meter;

const TOOLS: [&str; 8] =
    ["get_lens", "run_lens", "list_lenses", "create_lens", "get_battle", "run_workflow", "search", "fetch"];

const N: u32 = 2_000_000;

/// Nanoseconds a call of `report` takes, the second of two runs.
fn timed(report: impl Fn(&'static str, Duration)) -> f64 {
    let run = || {
        let began = Instant::now();
        for i in 0..N {
            report(black_box(TOOLS[i as usize % TOOLS.len()]), Duration::from_micros(u64::from(i % 500)));
        }
        began.elapsed()
    };
    run();
    run().as_nanos() as f64 / f64::from(N)
}

fn main() {
    let tool_call = |tool, took| meter().tool_call(tool, black_box("ok"), took);
    let none = timed(tool_call);
    lf_metrics::install();
    let counted = timed(tool_call);
    let request =
        timed(|_, took| lf_metrics::metrics().http_request(black_box("/mcp"), black_box(200), took));
    println!("a tool call's report: {none:.1} ns with no meter, {counted:.1} ns counted");
    println!("an HTTP request's report: {request:.1} ns");
}
