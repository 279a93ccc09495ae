//! Properties of the token grammar (DESIGN.md §6): parsing never panics,
//! extraction and resolution agree, generated bodies parse and resolve exactly
//! as a reference model says, and pathological inputs cost work linear in
//! their length.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

use lf_lens::template::{MAX_LABEL_CHARS, MAX_WARNINGS, label_key, lint};
use lf_lens::{Template, TypeHint};
use proptest::prelude::*;

// ---------------------------------------------------------------------------
// Counting allocations, per thread, so a work bound can be asserted without
// timing anything.

struct CountingAlloc;

thread_local! {
    static ALLOCS: Cell<(u64, u64)> = const { Cell::new((0, 0)) };
}

fn count(bytes: usize) {
    // `try_with`: the allocator may run while this thread's locals are torn down.
    let _ = ALLOCS.try_with(|c| {
        let (n, b) = c.get();
        c.set((n + 1, b + bytes as u64));
    });
}

// SAFETY: every call is forwarded unchanged to the system allocator; the
// counter is a const-initialised thread-local `Cell`, which never allocates.
unsafe impl GlobalAlloc for CountingAlloc {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        count(layout.size());
        // SAFETY: same contract as the caller's.
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: same contract as the caller's.
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        count(new_size);
        // SAFETY: same contract as the caller's.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: CountingAlloc = CountingAlloc;

/// Runs `f` and returns its result with the number of allocations it made on
/// this thread and the bytes they asked for.
fn allocations<T>(f: impl FnOnce() -> T) -> (T, u64, u64) {
    let (n0, b0) = ALLOCS.with(Cell::get);
    let out = f();
    let (n1, b1) = ALLOCS.with(Cell::get);
    (out, n1 - n0, b1 - b0)
}

// ---------------------------------------------------------------------------
// Invariants that hold for any body.

/// The body with every token removed and every `\[[` turned into `[[`: what
/// resolution with no values must give. Every `\[[` outside a token is an
/// escape, and no token is preceded by a backslash, so replacing within each
/// text run is exact.
fn without_tokens(t: &Template<'_>) -> String {
    let body = t.body();
    let mut out = String::new();
    let mut at = 0;
    for tok in t.tokens() {
        out.push_str(&body[at..tok.span.0].replace("\\[[", "[["));
        at = tok.span.1;
    }
    out.push_str(&body[at..].replace("\\[[", "[["));
    out
}

fn marker(i: usize) -> String {
    format!("\u{1}P{i}\u{2}")
}

/// Checks everything the grammar promises about any parse of `body`.
fn check_invariants(body: &str) {
    let t = Template::parse(body);
    assert_eq!(t.body(), body);

    // Tokens: in order, disjoint, exactly as written, well-formed labels.
    let mut last_end = 0;
    for tok in t.tokens() {
        let (start, end) = tok.span;
        assert!(last_end <= start && start < end && end <= body.len(), "{tok:?}");
        last_end = end;
        assert_eq!(&body[start..end], tok.raw);
        assert!(tok.raw.starts_with("[[") && tok.raw.ends_with("]]"), "{tok:?}");
        assert!(!body[..start].ends_with('\\'), "an escaped [[ became a token: {tok:?}");
        let inner = &tok.raw[2..tok.raw.len() - 2];
        assert!(!inner.contains(['[', ']', '\n', '\r']), "{tok:?}");
        assert!(inner.contains(tok.label));
        let first = tok.label.chars().next().expect("labels are not empty");
        assert!(first.is_alphanumeric() || first == '_', "{tok:?}");
        assert_eq!(tok.label, tok.label.trim(), "labels are trimmed");
        assert!(tok.label.chars().count() <= MAX_LABEL_CHARS);
        assert_eq!(t.params()[tok.param].key, label_key(tok.label));
    }

    // Parameters: the distinct keys of the tokens, in order of first
    // appearance, spelled and flagged as their first token.
    let mut expected_keys: Vec<String> = Vec::new();
    let mut first_tokens = Vec::new();
    for tok in t.tokens() {
        let key = label_key(tok.label);
        if !expected_keys.contains(&key) {
            expected_keys.push(key);
            first_tokens.push(tok);
        }
    }
    let keys: Vec<&str> = t.params().iter().map(|p| p.key.as_str()).collect();
    assert_eq!(keys, expected_keys);
    for (p, tok) in t.params().iter().zip(&first_tokens) {
        assert_eq!((p.label.as_str(), p.optional, p.type_hint), (tok.label, tok.optional, tok.type_hint));
    }
    let raw: Vec<&str> = first_tokens.iter().map(|tok| tok.raw).collect();
    assert_eq!(t.raw_tokens(), raw);

    // Resolution with no values removes the tokens and nothing else.
    let expected = without_tokens(&t);
    assert_eq!(t.resolve::<&str>(&[]), expected);
    let empties = vec![""; t.params().len()];
    assert_eq!(t.resolve(&empties), expected);

    // Resolution with a distinct marker per parameter puts each marker
    // exactly where that parameter's tokens were.
    if !body.contains('\u{1}') {
        let markers: Vec<String> = (0..t.params().len()).map(marker).collect();
        let out = t.resolve(&markers);
        for (i, m) in markers.iter().enumerate() {
            let occurrences = t.tokens().iter().filter(|tok| tok.param == i).count();
            assert_eq!(out.matches(m.as_str()).count(), occurrences, "marker of {:?}", t.params()[i].label);
        }
        assert_eq!(out.matches('\u{1}').count(), t.tokens().len());
    }

    // Warnings: each names, in body order, an opening `[[` that is not
    // escaped, lies outside every token and is not closed before the end
    // of its line, with a label after it; offsets, lines and columns count
    // characters.
    let warnings = t.warnings();
    assert!(warnings.len() <= MAX_WARNINGS);
    let mut last = None;
    for w in &warnings {
        let at = body.char_indices().nth(w.offset).map_or(body.len(), |(i, _)| i);
        assert!(body[at..].starts_with("[[") && !body[..at].ends_with('\\'), "{w:?}");
        assert!(t.tokens().iter().all(|tok| at + 2 <= tok.span.0 || at >= tok.span.1), "{w:?}");
        assert_eq!(w.line, body[..at].matches('\n').count() + 1);
        let line_start = body[..at].rfind('\n').map_or(0, |i| i + 1);
        assert_eq!(w.column, body[line_start..at].chars().count() + 1);
        let rest = &body[at + 2..];
        let stop = rest.find(['[', ']', '\n', '\r']).unwrap_or(rest.len());
        assert!(!rest[stop..].starts_with(']'), "closed on its line: {w:?}");
        assert!(w.token.starts_with("[[") && rest.trim_start().starts_with(&w.token[2..]), "{w:?}");
        assert!(last < Some(w.offset), "in body order");
        last = Some(w.offset);
    }
}

const TYPE_NAMES: [(&str, TypeHint); 17] = [
    ("text", TypeHint::Text),
    ("textarea", TypeHint::Textarea),
    ("json", TypeHint::Json),
    ("number", TypeHint::Number),
    ("integer", TypeHint::Integer),
    ("float", TypeHint::Float),
    ("decimal", TypeHint::Decimal),
    ("boolean", TypeHint::Boolean),
    ("select", TypeHint::Select),
    ("multiselect", TypeHint::Multiselect),
    ("array", TypeHint::Array),
    ("url", TypeHint::Url),
    ("date", TypeHint::Date),
    ("datetime", TypeHint::Datetime),
    ("file", TypeHint::File),
    ("files", TypeHint::Files),
    ("connector", TypeHint::Connector),
];

/// A piece of text the grammar cares about.
fn soup_piece() -> impl Strategy<Value = String> {
    prop_oneof![
        3 => prop::sample::select(vec!["[[", "]]", "\\[[", "[", "]"]).prop_map(str::to_owned),
        3 => prop::sample::select(vec![
            "\\", "!", ":", " ", "\n", "\r", "\t", "\u{a0}", "\u{3000}", "é", "ß", "İ", "漢", "😀", "a", "Z",
            "_", "0", "-",
        ])
        .prop_map(str::to_owned),
        1 => prop::sample::select(TYPE_NAMES.map(|(n, _)| n).to_vec()).prop_map(str::to_owned),
        1 => "[a-zA-Z ]{1,6}",
        1 => (98usize..103).prop_map(|n| "x".repeat(n)),
    ]
}

/// Strings made of the pieces the grammar cares about.
fn bracket_soup() -> impl Strategy<Value = String> {
    prop::collection::vec(soup_piece(), 0..80).prop_map(|v| v.concat())
}

/// Well-formed bodies with soup pieces inserted at random places: near
/// misses of every construct.
fn mutated() -> impl Strategy<Value = String> {
    let insertions = prop::collection::vec((any::<prop::sample::Index>(), soup_piece()), 1..6);
    (generated(), insertions).prop_map(|((chunks, _), insertions)| {
        let mut body = render(&chunks);
        for (at, piece) in insertions {
            let bounds: Vec<usize> = body.char_indices().map(|(i, _)| i).chain([body.len()]).collect();
            body.insert_str(bounds[at.index(bounds.len())], &piece);
        }
        body
    })
}

fn any_body() -> impl Strategy<Value = String> {
    prop_oneof![any::<String>(), bracket_soup(), mutated()]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn parse_never_panics_and_invariants_hold(body in any_body()) {
        check_invariants(&body);
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn a_forgotten_close_is_named(
        before in "[^\\[\\]\\\\]{0,40}",
        label in "[A-Za-z_é][A-Za-z0-9_é]{0,20}",
        after in "( [^\\[\\]\n\r]{0,30})?",
    ) {
        let body = format!("{before}[[{label}{after}");
        let w = lint(&body);
        prop_assert_eq!(w.len(), 1, "{:?}", body);
        prop_assert_eq!(w[0].offset, before.chars().count());
        prop_assert_eq!(&w[0].token, &format!("[[{label}"));
    }

    #[test]
    fn invariants_hold_on_any_prefix_and_suffix(body in any_body(), cut in any::<prop::sample::Index>()) {
        // Cutting anywhere (on a char boundary) leaves unterminated tokens and
        // dangling escapes behind.
        let bounds: Vec<usize> = body.char_indices().map(|(i, _)| i).chain([body.len()]).collect();
        let at = bounds[cut.index(bounds.len())];
        check_invariants(&body[at..]);
        check_invariants(&body[..at]);
    }
}

// ---------------------------------------------------------------------------
// A grammar of bodies whose parse and resolution are known in advance.

/// A parameter as a token declares it.
#[derive(Clone, Debug, PartialEq)]
struct Decl {
    label: String,
    optional: bool,
    type_hint: Option<TypeHint>,
}

/// The inside of a well-formed token and what it declares.
#[derive(Clone, Debug)]
struct Inner {
    text: String,
    decl: Decl,
}

#[derive(Clone, Debug)]
enum Chunk {
    /// No brackets; a backslash only before a letter or a space.
    Text(String),
    Token(Inner),
    /// `\[[...]]`: the inside of a token, or of something that is not one.
    Escaped {
        inner: String,
        decl: Option<Decl>,
    },
    LoneOpen,
    /// `[[` and text that never gets closed.
    Unterminated(String),
    /// Bracketed text that is not a token.
    NotToken(String),
}

/// Bracketed texts that are not tokens, each starting with `[[` and ending
/// with something other than a backslash.
fn not_tokens() -> Vec<String> {
    let mut v: Vec<String> = [
        "[[]]",
        "[[   ]]",
        "[[\u{3000}]]",
        "[[!]]",
        "[[ ! ]]",
        "[[-x]]",
        "[[ :text]]",
        "[[:text!]]",
        "[[ : Text ! ]]",
        "[[a\nb]]",
        "[[a\rb]]",
        "[[a]b]]",
        "[[a]",
        "[[:11111111-2222-3333-4444-555555555555]]",
        "[[.hidden]]",
        "[[😀]]",
    ]
    .map(str::to_owned)
    .to_vec();
    v.push(format!("[[{}]]", "a".repeat(MAX_LABEL_CHARS + 1)));
    v.push(format!("[[ {}! ]]", "é".repeat(MAX_LABEL_CHARS + 1)));
    v
}

fn text() -> impl Strategy<Value = String> {
    prop_oneof![
        3 => "[a-zA-Z0-9 .,:!\n-]{0,10}",
        1 => "([^\\[\\]\\\\]|\\\\[a-z ]){0,8}",
    ]
}

fn whitespace() -> impl Strategy<Value = String> {
    "[ \t\u{a0}\u{3000}]{0,2}"
}

/// Labels that survive trimming and carry no `!` or type suffix of their own.
fn base_label() -> impl Strategy<Value = String> {
    let short = "[A-Za-z0-9_éßЯ漢][A-Za-z0-9 _.,:!'\\\\éßЯ漢-]{0,14}";
    // Up to the longest label allowed, counted in characters, not bytes.
    let long = (MAX_LABEL_CHARS - 3..=MAX_LABEL_CHARS).prop_map(|n| format!("L{}", "é".repeat(n - 1)));
    prop_oneof![9 => short, 1 => long].prop_filter("label is not what it parses to", |l| {
        let suffix_is_type = l
            .rfind(':')
            .is_some_and(|c| TYPE_NAMES.iter().any(|(n, _)| n.eq_ignore_ascii_case(l[c + 1..].trim())));
        l.trim() == l && !l.ends_with('!') && !suffix_is_type
    })
}

/// A token's inside for `label`, with random whitespace, type hint spelling
/// and optional marker.
fn inner_for(label: String) -> impl Strategy<Value = Inner> {
    (
        any::<bool>(),
        prop::option::of((0..TYPE_NAMES.len(), any::<bool>(), whitespace(), whitespace())),
        prop::array::uniform3(whitespace()),
    )
        .prop_map(move |(optional, hint, [lead, tail, before_bang])| {
            let mut text = format!("{lead}{label}");
            let mut type_hint = None;
            if let Some((i, upper, before, after)) = hint {
                let (name, t) = TYPE_NAMES[i];
                let name = if upper { name.to_uppercase() } else { name.to_owned() };
                text.push_str(&format!("{before}:{after}{name}"));
                type_hint = Some(t);
            }
            if optional {
                text.push_str(&format!("{before_bang}!"));
            }
            text.push_str(&tail);
            Inner { text, decl: Decl { label: label.clone(), optional, type_hint } }
        })
}

/// A label from `pool`, respelled: as is, upper case or lower case.
fn spelled(pool: Vec<String>) -> impl Strategy<Value = String> {
    (prop::sample::select(pool), 0..3u8).prop_map(|(l, case)| match case {
        0 => l,
        1 => l.to_uppercase(),
        _ => l.to_lowercase(),
    })
}

fn chunk(pool: Vec<String>) -> impl Strategy<Value = Chunk> {
    let token = spelled(pool.clone()).prop_flat_map(inner_for);
    let escaped_token = spelled(pool).prop_flat_map(inner_for);
    prop_oneof![
        4 => text().prop_map(Chunk::Text),
        4 => token.prop_map(Chunk::Token),
        1 => escaped_token.prop_map(|i| Chunk::Escaped { inner: i.text, decl: Some(i.decl) }),
        1 => prop::sample::select(not_tokens())
            .prop_map(|n| Chunk::Escaped { inner: n[2..].to_owned(), decl: None }),
        1 => Just(Chunk::LoneOpen),
        1 => text().prop_map(Chunk::Unterminated),
        1 => prop::sample::select(not_tokens()).prop_map(Chunk::NotToken),
    ]
}

/// Chunks over a small pool of labels (so tokens repeat), and values.
fn generated() -> impl Strategy<Value = (Vec<Chunk>, Vec<String>)> {
    prop::collection::vec(base_label(), 1..5).prop_flat_map(|pool| {
        (prop::collection::vec(chunk(pool), 0..24), prop::collection::vec(text(), 0..8))
    })
}

fn render(chunks: &[Chunk]) -> String {
    chunks
        .iter()
        .map(|c| match c {
            Chunk::Text(s) => s.clone(),
            Chunk::Token(i) => format!("[[{}]]", i.text),
            // For a not-token, `inner` keeps whatever closing it had.
            Chunk::Escaped { inner, decl: Some(_) } => format!("\\[[{inner}]]"),
            Chunk::Escaped { inner, decl: None } => format!("\\[[{inner}"),
            Chunk::LoneOpen => "[".to_owned(),
            Chunk::Unterminated(s) => format!("[[{s}"),
            Chunk::NotToken(s) => s.clone(),
        })
        .collect()
}

/// Adds `decl` to `params` unless a parameter with its key is there already.
fn declare(params: &mut Vec<Decl>, decl: &Decl) -> usize {
    let key = decl.label.to_lowercase();
    match params.iter().position(|p| p.label.to_lowercase() == key) {
        Some(i) => i,
        None => {
            params.push(decl.clone());
            params.len() - 1
        }
    }
}

/// What the reference model expects of a generated body.
struct Expected {
    params: Vec<Decl>,
    raw_tokens: Vec<String>,
    tokens: usize,
    resolved: String,
    /// The parameters of `resolved` when parsed again: only the escaped tokens.
    reparsed: Vec<Decl>,
}

fn model(chunks: &[Chunk], values: &[String]) -> Expected {
    let mut params: Vec<Decl> = Vec::new();
    let mut raw_tokens = Vec::new();
    let mut tokens = 0;
    let mut resolved = String::new();
    let mut reparsed = Vec::new();
    for c in chunks {
        match c {
            Chunk::Text(s) => resolved.push_str(s),
            Chunk::Token(inner) => {
                let before = params.len();
                let i = declare(&mut params, &inner.decl);
                if params.len() > before {
                    raw_tokens.push(format!("[[{}]]", inner.text));
                }
                tokens += 1;
                resolved.push_str(values.get(i).map_or("", String::as_str));
            }
            Chunk::Escaped { inner, decl } => {
                if let Some(decl) = decl {
                    resolved.push_str(&format!("[[{inner}]]"));
                    declare(&mut reparsed, decl);
                } else {
                    resolved.push_str(&format!("[[{inner}"));
                }
            }
            Chunk::LoneOpen => resolved.push('['),
            Chunk::Unterminated(s) => resolved.push_str(&format!("[[{s}")),
            Chunk::NotToken(s) => resolved.push_str(s),
        }
    }
    Expected { params, raw_tokens, tokens, resolved, reparsed }
}

fn decls(t: &Template<'_>) -> Vec<Decl> {
    t.params()
        .iter()
        .map(|p| Decl { label: p.label.clone(), optional: p.optional, type_hint: p.type_hint })
        .collect()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(384))]

    #[test]
    fn generated_bodies_parse_and_resolve_as_the_model_says((chunks, values) in generated()) {
        let body = render(&chunks);
        let expected = model(&chunks, &values);
        let t = Template::parse(&body);

        prop_assert_eq!(decls(&t), expected.params);
        prop_assert_eq!(t.tokens().len(), expected.tokens);
        prop_assert_eq!(t.raw_tokens(), expected.raw_tokens);
        let resolved = t.resolve(&values);
        prop_assert_eq!(&resolved, &expected.resolved);

        // With token-free values nothing is left to resolve, except the
        // escaped tokens, which come out as literal tokens.
        let again = Template::parse(&resolved);
        prop_assert_eq!(decls(&again), expected.reparsed);
        check_invariants(&body);
    }
}

// ---------------------------------------------------------------------------
// Pathological inputs: exact results, and allocations bounded by the length.

/// One pathological body, what parsing it must find, and what resolving its
/// one parameter (if any) with "v" must give.
struct Case {
    name: &'static str,
    body: String,
    tokens: usize,
    params: usize,
    resolved: String,
}

fn cases(n: usize) -> Vec<Case> {
    let same = |name, body: String| Case { name, resolved: body.clone(), body, tokens: 0, params: 0 };
    vec![
        same("[[ repeated", "[[".repeat(n)),
        same("[[a repeated", "[[a".repeat(n)),
        same("[[[ repeated", "[[[".repeat(n)),
        same("[[ repeated, then ]]", "[[".repeat(n) + "]]"),
        same("]] repeated", "]]".repeat(n)),
        same("[[x] repeated", "[[x]".repeat(n)),
        same("[[!]] repeated", "[[!]]".repeat(n)),
        same("one long label", format!("[[{}]]", "a".repeat(n))),
        same("one long unterminated token", format!("[[{}", "a ".repeat(n))),
        same("newline-broken tokens", "[[a\nb]]".repeat(n)),
        Case {
            name: "[[ repeated, then x]]",
            body: "[[".repeat(n) + "x]]",
            tokens: 1,
            params: 1,
            resolved: "[[".repeat(n - 1) + "v",
        },
        Case {
            name: "\\[[ repeated",
            body: "\\[[".repeat(n),
            tokens: 0,
            params: 0,
            resolved: "[[".repeat(n),
        },
        Case {
            name: "[[x]] repeated",
            body: "[[x]]".repeat(n),
            tokens: n,
            params: 1,
            resolved: "v".repeat(n),
        },
        Case {
            name: "[[[x]]] repeated",
            body: "[[[x]]]".repeat(n),
            tokens: n,
            params: 1,
            resolved: "[v]".repeat(n),
        },
        Case {
            name: "padded token",
            body: format!("[[{}x{}]]", " ".repeat(n), " ".repeat(n)),
            tokens: 1,
            params: 1,
            resolved: "v".to_owned(),
        },
    ]
}

#[test]
fn pathological_inputs_give_exact_results_with_linear_allocation() {
    for n in [1_000, 10_000, 100_000] {
        for case in cases(n) {
            let (t, allocs, bytes) = allocations(|| Template::parse(&case.body));
            let what = format!("{} at n = {n}", case.name);
            assert_eq!(t.tokens().len(), case.tokens, "{what}");
            assert_eq!(t.params().len(), case.params, "{what}");
            assert_eq!(t.resolve(&["v"]), case.resolved, "{what}");
            // A segment and a token per token, grown by doubling, plus one key
            // per token: tens of bytes per byte of body at most, and a few
            // allocations per token plus a logarithmic number of regrowths.
            let len = case.body.len() as u64;
            assert!(bytes <= 64 * len + 4096, "{what}: {bytes} bytes allocated for {len} bytes of body");
            assert!(
                allocs <= 2 * case.tokens as u64 + 64,
                "{what}: {allocs} allocations for {} tokens",
                case.tokens
            );
        }
    }
}

#[test]
fn many_distinct_parameters_are_found_in_order() {
    // 5,000 distinct labels in 5,000 tokens, then all of them again in
    // another spelling: one parameter each, first spelling kept.
    let n = 5_000;
    let first: String = (0..n).map(|i| format!("[[p{i}]]")).collect();
    let again: String = (0..n).map(|i| format!("[[ P{i}! ]]")).collect();
    let body = first + &again;
    let t = Template::parse(&body);
    assert_eq!(t.tokens().len(), 2 * n);
    assert_eq!(t.params().len(), n);
    assert!(t.params().iter().enumerate().all(|(i, p)| p.label == format!("p{i}") && !p.optional));
    let values: Vec<String> = (0..n).map(|i| format!("<{i}>")).collect();
    let expected: String = (0..2 * n).map(|i| format!("<{}>", i % n)).collect();
    assert_eq!(t.resolve(&values), expected);
}
