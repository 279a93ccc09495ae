//! Parse and resolve throughput of lens templates, in bytes of body per
//! second, from 100 B to 1 MB.
//!
//! ```text
//! cargo bench -p lf-lens --bench resolve -- --warm-up-time 1 --measurement-time 3
//! ```
//!
//! Cases:
//! - `typical/<size>`: prose with one token every 100 bytes (10,000 tokens
//!   at 1 MB) over 20 distinct labels, the shape of a real lens;
//! - `distinct/<size>`: the same density, every token a new parameter;
//! - `no_tokens/1MB`: prose only;
//! - `bracket_soup/1MB`: `[`, `]`, `[[`, `]]`, `\[[`, `!`, `:` and unclosed
//!   tokens, the worst case for the scanner;
//! - `service/<case>`: `LensService::resolve` on a stored version at the
//!   largest body allowed (100,000 characters), including value lookup.

use std::hint::black_box;
use std::sync::Arc;

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use lf_core::{LenserId, Principal};
use lf_lens::{
    LensService, LensView, MemoryLensStore, NewLens, ParamValues, Template, TemplateBody, Title, Visibility,
};

const KB: usize = 1_000;
const MB: usize = 1_000_000;
const SIZES: [(usize, &str); 5] =
    [(100, "100B"), (KB, "1KB"), (10 * KB, "10KB"), (100 * KB, "100KB"), (MB, "1MB")];
const BYTES_PER_TOKEN: usize = 100;

const PROSE: &str = "You are a careful reviewer. Read the following material, note every claim, \
check it against what you know, and explain your reasoning step by step. ";

/// A deterministic pseudo-random sequence (a 64-bit LCG), so every run
/// measures the same bodies.
struct Lcg(u64);

impl Lcg {
    fn next(&mut self, below: usize) -> usize {
        self.0 = self.0.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
        ((self.0 >> 33) as usize) % below
    }
}

/// Prose of `size` bytes with one token per [`BYTES_PER_TOKEN`] bytes;
/// `label(i)` names the i-th token. Returns the body and its token count.
fn body_with_tokens(size: usize, label: impl Fn(usize) -> String) -> (String, usize) {
    let mut body = String::with_capacity(size + 64);
    let mut prose = PROSE.chars().cycle();
    let mut tokens = 0;
    while body.len() < size {
        if body.len() >= (tokens + 1) * BYTES_PER_TOKEN - BYTES_PER_TOKEN / 2 {
            let optional = if tokens % 3 == 2 { "!" } else { "" };
            body.push_str(&format!("[[{}{optional}]]", label(tokens)));
            tokens += 1;
        } else {
            body.push(prose.next().unwrap_or(' '));
        }
    }
    (body, tokens)
}

fn prose(size: usize) -> String {
    PROSE.chars().cycle().take(size).collect()
}

fn bracket_soup(size: usize) -> String {
    const PIECES: [&str; 14] =
        ["[", "]", "[[", "]]", "\\[[", "!", ":", " ", "word", "[[a", "[[Label", "[[x]", "\n", "[[ :text]]"];
    let mut rng = Lcg(42);
    let mut body = String::with_capacity(size + 16);
    while body.len() < size {
        body.push_str(PIECES[rng.next(PIECES.len())]);
    }
    body
}

/// One value per parameter, about 10 bytes each.
fn values(t: &Template<'_>) -> Vec<String> {
    (0..t.params().len()).map(|i| format!("value-{i:04}")).collect()
}

fn parse_and_resolve(body: &str) -> String {
    let t = Template::parse(body);
    let values = values(&t);
    t.resolve(&values)
}

fn bench_template(c: &mut Criterion) {
    let mut group = c.benchmark_group("parse_resolve");
    let mut case = |name: &str, size_name: &str, body: String| {
        group.throughput(Throughput::Bytes(body.len() as u64));
        group.bench_with_input(BenchmarkId::new(name, size_name), &body, |b, body| {
            b.iter(|| parse_and_resolve(black_box(body)))
        });
    };
    for (size, name) in SIZES {
        let (body, _) = body_with_tokens(size, |i| format!("Param{}", i % 20));
        case("typical", name, body);
    }
    for (size, name) in SIZES {
        let (body, _) = body_with_tokens(size, |i| format!("Param{i}"));
        case("distinct", name, body);
    }
    case("no_tokens", "1MB", prose(MB));
    case("bracket_soup", "1MB", bracket_soup(MB));
    group.finish();
}

/// A stored version of about `size` bytes and the values that fill it.
fn stored(size: usize, label: impl Fn(usize) -> String) -> (LensView, ParamValues) {
    let service = LensService::new(Arc::new(MemoryLensStore::new()));
    let me = Principal::Service { acting_as: Some(LenserId::new()) };
    let (body, _) = body_with_tokens(size, label);
    let view = pollster::block_on(service.create(
        &me,
        NewLens {
            title: Title::parse("Benchmark").expect("a valid title"),
            description: None,
            body: TemplateBody::parse(body).expect("a body within bounds"),
            visibility: Visibility::Private,
            params: vec![],
        },
    ))
    .expect("create succeeds");
    let values = view
        .version
        .params
        .iter()
        .enumerate()
        .fold(ParamValues::new(), |v, (i, p)| v.insert(p.label.to_lowercase(), format!("value-{i:04}")));
    (view, values)
}

fn bench_service(c: &mut Criterion) {
    let mut group = c.benchmark_group("service_resolve");
    let max = TemplateBody::MAX_CHARS - 100;
    let cases = [
        ("20_params", stored(max, |i| format!("Param{}", i % 20))),
        ("500_params", stored(max, |i| format!("Param{}", i % 500))),
    ];
    for (name, (view, values)) in &cases {
        group.throughput(Throughput::Bytes(view.version.body.as_str().len() as u64));
        group.bench_function(BenchmarkId::new(*name, "100KB"), |b| {
            b.iter(|| LensService::resolve(&view.lens, &view.version, black_box(values)).expect("resolves"))
        });
    }
    group.finish();
}

criterion_group!(benches, bench_template, bench_service);
criterion_main!(benches);
