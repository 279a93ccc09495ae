//! The hosted original's test vectors (reference §2 and §6), run through
//! [`LensService`] on the [`MemoryLensStore`], plus the lens behaviour
//! DESIGN.md §5–§6 adds (semver, forks, visibility, archive and delete,
//! options, defaults, find-and-run, diffs).
//!
//! Where DESIGN.md decides otherwise than the original, the vector is adapted
//! and a comment says how. Adaptations common to every vector:
//! - The body is stored as written, with named tokens: the original rewrote
//!   tokens to `[[:<uuid>]]` refs, which here are plain text (a label starts
//!   with a letter, digit or `_`).
//! - A body has at least 50 characters, so the original's short bodies are
//!   padded with [`PAD`].

use std::fmt::Debug;
use std::sync::Arc;
use std::sync::atomic::{AtomicI64, Ordering};

use lf_core::{
    Clock, Detail, ErrorCode, LensId, LenserId, LfError, LfResult, PageRequest, Principal, Scopes, Timestamp,
    VersionId, WorkflowId,
};
use lf_lens::{
    Bump, Candidate, Changelog, Description, FindAndRun, ForkLens, LensFilter, LensService, LensStatus,
    LensUpdate, LensView, MemoryLensStore, NewLens, ParamChange, ParamDeclaration, ParamValues, Resolved,
    SearchQuery, Semver, TemplateBody, Title, TypeHint, UpdateOutcome, VersionSelector, Visibility,
    estimate_tokens,
};
use pollster::block_on;

/// Pads the original's short bodies to the 50-character minimum.
const PAD: &str = " Keep the answer short, plain and to the point.";

fn padded(s: &str) -> String {
    format!("{s}{PAD}")
}

/// A clock that moves 1 ms per reading, so listings have a strict order.
struct Tick(AtomicI64);

impl Clock for Tick {
    fn now(&self) -> Timestamp {
        Timestamp::from_micros(self.0.fetch_add(1_000, Ordering::Relaxed))
    }
}

/// A service on a fresh in-memory store, with two lensers.
struct World {
    store: Arc<MemoryLensStore>,
    lenses: LensService,
    alice: Principal,
    alice_id: LenserId,
    bob: Principal,
    bob_id: LenserId,
}

impl World {
    fn new() -> Self {
        let store = Arc::new(MemoryLensStore::new());
        let clock = Arc::new(Tick(AtomicI64::new(1_777_593_600_000_000)));
        let lenses = LensService::with_clock(store.clone(), clock);
        let (alice_id, bob_id) = (LenserId::new(), LenserId::new());
        Self {
            store,
            lenses,
            alice: Principal::Lenser { id: alice_id, scopes: Scopes::READ_WRITE },
            alice_id,
            bob: Principal::Lenser { id: bob_id, scopes: Scopes::READ_WRITE },
            bob_id,
        }
    }

    fn try_create(
        &self,
        p: &Principal,
        title: &str,
        body: &str,
        visibility: Visibility,
        params: Vec<ParamDeclaration>,
    ) -> LfResult<LensView> {
        block_on(self.lenses.create(
            p,
            NewLens {
                title: Title::parse(title).unwrap(),
                description: None,
                body: TemplateBody::parse(body).unwrap(),
                visibility,
                params,
            },
        ))
    }

    /// A lens of alice's.
    fn create(&self, title: &str, body: &str, visibility: Visibility) -> LensView {
        self.try_create(&self.alice, title, body, visibility, vec![]).unwrap()
    }

    fn run(&self, p: &Principal, id: LensId, values: &[(&str, &str)]) -> LfResult<Resolved> {
        self.run_version(p, id, VersionSelector::Head, values)
    }

    fn run_version(
        &self,
        p: &Principal,
        id: LensId,
        which: VersionSelector,
        values: &[(&str, &str)],
    ) -> LfResult<Resolved> {
        block_on(self.lenses.run(p, id, which, &vals(values), None))
    }

    fn update(&self, update: LensUpdate) -> LfResult<UpdateOutcome> {
        block_on(self.lenses.update(&self.alice, update))
    }

    /// Alice replaces the body of her lens.
    fn set_body(&self, id: LensId, body: &str) -> UpdateOutcome {
        self.update(LensUpdate { body: Some(TemplateBody::parse(body).unwrap()), ..LensUpdate::new(id) })
            .unwrap()
    }

    fn listed(&self, p: &Principal, filter: LensFilter) -> Vec<LensId> {
        let page = block_on(self.lenses.list(p, &filter, PageRequest::first(100))).unwrap();
        page.items.iter().map(|l| l.id).collect()
    }

    fn found(&self, p: &Principal, query: &str) -> Vec<LensId> {
        let q = SearchQuery::parse(query).unwrap();
        let page = block_on(self.lenses.search(p, &q, None, PageRequest::first(100))).unwrap();
        page.items.iter().map(|l| l.id).collect()
    }
}

fn vals(pairs: &[(&str, &str)]) -> ParamValues {
    ParamValues::parse("param_values", pairs.iter().copied()).unwrap()
}

fn code<T: Debug>(r: LfResult<T>) -> ErrorCode {
    r.unwrap_err().code()
}

fn detail<'a>(e: &'a LfError, key: &str) -> &'a Detail {
    e.details().iter().find(|(k, _)| k == key).map(|(_, v)| v).unwrap_or_else(|| panic!("no {key} in {e:?}"))
}

fn detail_strs(e: &LfError, key: &str) -> Vec<String> {
    match detail(e, key) {
        Detail::Strs(v) => v.clone(),
        other => panic!("{key} is {other:?}"),
    }
}

fn labels(view: &LensView) -> Vec<(&str, bool)> {
    view.version.params.iter().map(|p| (p.label.as_str(), p.optional)).collect()
}

// ---------------------------------------------------------------------------
// run_lens resolution (reference §6, lens-run.spec).

/// The original's Topic/Language/Tone vector with named tokens.
const REVIEW: &str = "Review [[Topic]] code in [[Language]] with tone [[Tone!]].";

#[test]
fn run_resolves_full_values() {
    let w = World::new();
    let lens = w.create("Reviewer", REVIEW, Visibility::Public);
    let r = w
        .run(&w.alice, lens.lens.id, &[("Topic", "TypeScript"), ("Language", "English"), ("Tone", "formal")])
        .unwrap();
    assert_eq!(r.prompt, "Review TypeScript code in English with tone formal.");
    assert_eq!(r.params_used, ["Topic", "Language", "Tone"]);
    assert_eq!(r.version.id, lens.version.id);
    assert_eq!(r.estimated_input_tokens, 13, "ceil(51 / 4)");
    assert_eq!(r.run_id, None);
}

#[test]
fn run_names_the_missing_required_label() {
    let w = World::new();
    let lens = w.create("Reviewer", REVIEW, Visibility::Public);
    let e = w.run(&w.alice, lens.lens.id, &[("Topic", "Go")]).unwrap_err();
    assert_eq!(e.code(), ErrorCode::MissingParams);
    assert_eq!(detail_strs(&e, "missing"), ["Language"]);
}

#[test]
fn run_resolves_a_missing_optional_to_empty() {
    let w = World::new();
    let lens = w.create("Reviewer", REVIEW, Visibility::Public);
    let r = w.run(&w.alice, lens.lens.id, &[("Topic", "Python"), ("Language", "French")]).unwrap();
    assert_eq!(r.prompt, "Review Python code in French with tone .");
    assert_eq!(r.params_used, ["Topic", "Language"]);
}

#[test]
fn run_matches_keys_case_insensitively_and_ignores_unknown_keys() {
    let w = World::new();
    let lens = w.create("Reviewer", REVIEW, Visibility::Public);
    let r = w
        .run(&w.alice, lens.lens.id, &[("topic", "Rust"), ("LANGUAGE", "German"), ("UnknownParam", "x")])
        .unwrap();
    assert_eq!(r.prompt, "Review Rust code in German with tone .");
    // The labels used are the lens's spelling, not the caller's.
    assert_eq!(r.params_used, ["Topic", "Language"]);
}

#[test]
fn an_exact_spelling_wins_over_a_case_insensitive_one() {
    let w = World::new();
    let lens = w.create("Reviewer", REVIEW, Visibility::Public);
    let r =
        w.run(&w.alice, lens.lens.id, &[("topic", "lower"), ("Topic", "exact"), ("Language", "Go")]).unwrap();
    assert_eq!(r.prompt, "Review exact code in Go with tone .");
}

#[test]
fn missing_params_lists_every_missing_label_in_body_order() {
    // Adaptation: the original listed them in label order (Language, Topic);
    // DESIGN.md §6 says body order.
    let w = World::new();
    let lens = w.create("Code reviewer", REVIEW, Visibility::Public);
    let e = w.run(&w.alice, lens.lens.id, &[]).unwrap_err();
    assert_eq!(e.code(), ErrorCode::MissingParams);
    assert_eq!(detail_strs(&e, "missing"), ["Topic", "Language"]);
    assert!(e.message().contains("Lens \"Code reviewer\" needs 2 more parameters"), "{}", e.message());
    assert!(e.message().contains("Ask the user for: Topic, Language."), "{}", e.message());
    assert!(e.message().contains("call run_lens again"), "{}", e.message());
    match detail(&e, "all_parameters") {
        Detail::List(all) => assert_eq!(all.len(), 3),
        other => panic!("all_parameters is {other:?}"),
    }
    assert_eq!(detail(&e, "lens_title"), &Detail::Str("Code reviewer".into()));
    assert_eq!(detail(&e, "lens_id"), &Detail::Str(lens.lens.id.to_string()));
}

#[test]
fn missing_params_with_one_label() {
    // Original: body `Hello [[:A]]`, param Name required, {} → missing ["Name"].
    let w = World::new();
    let lens = w.create("Greeter", &padded("Hello [[Name]]."), Visibility::Public);
    let e = w.run(&w.alice, lens.lens.id, &[]).unwrap_err();
    assert_eq!(e.code(), ErrorCode::MissingParams);
    assert_eq!(detail_strs(&e, "missing"), ["Name"]);
    assert!(e.message().contains("needs 1 more parameter before"), "{}", e.message());
}

#[test]
fn run_without_workflow_records_nothing() {
    // Original: `Hi [[:A]] in [[:B]]`, {Name:Sky, Lang:EN} → `Hi Sky in EN`,
    // persisted false, run_id null.
    let w = World::new();
    let lens = w.create("Greeter", &padded("Hi [[Name]] in [[Lang]]"), Visibility::Public);
    let r = w.run(&w.alice, lens.lens.id, &[("Name", "Sky"), ("Lang", "EN")]).unwrap();
    assert_eq!(r.prompt, padded("Hi Sky in EN"));
    assert_eq!(r.run_id, None);
    assert!(w.store.runs().is_empty());
}

#[test]
fn run_with_a_workflow_records_a_run() {
    let w = World::new();
    let lens = w.create("Greeter", &padded("Hi [[Name]] in [[Lang!]]"), Visibility::Public);
    let workflow = WorkflowId::new();
    let values = vals(&[("name", "Sky")]);
    let r =
        block_on(w.lenses.run(&w.bob, lens.lens.id, VersionSelector::Head, &values, Some(workflow))).unwrap();
    let run_id = r.run_id.expect("a tracked run has an id");
    let runs = w.store.runs();
    assert_eq!(runs.len(), 1);
    let run = &runs[0];
    assert_eq!(run.id, run_id);
    assert_eq!((run.lens_id, run.version_id, run.workflow_id), (lens.lens.id, lens.version.id, workflow));
    assert_eq!(run.lenser, Some(w.bob_id));
    assert_eq!(run.params_used, ["Name"]);
}

#[test]
fn a_refused_run_records_nothing() {
    let w = World::new();
    let lens = w.create("Greeter", &padded("Hi [[Name]]"), Visibility::Public);
    let r = block_on(w.lenses.run(
        &w.alice,
        lens.lens.id,
        VersionSelector::Head,
        &vals(&[]),
        Some(WorkflowId::new()),
    ));
    assert_eq!(code(r), ErrorCode::MissingParams);
    assert!(w.store.runs().is_empty());
}

#[test]
fn values_are_inserted_verbatim_and_never_resolved_again() {
    let w = World::new();
    let lens = w.create("Reviewer", REVIEW, Visibility::Public);
    let r = w.run(&w.alice, lens.lens.id, &[("Topic", "[[Language]]"), ("Language", r"\[[Tone]]")]).unwrap();
    assert_eq!(r.prompt, r"Review [[Language]] code in \[[Tone]] with tone .");
}

#[test]
fn estimate_tokens_counts_characters_not_bytes() {
    // Adaptation: the original counted UTF-16 units; DESIGN.md §6 says chars.
    assert_eq!(estimate_tokens(""), 0);
    assert_eq!(estimate_tokens("abcd"), 1);
    assert_eq!(estimate_tokens("abcde"), 2);
    assert_eq!(estimate_tokens(&"é".repeat(5)), 2, "5 chars, 10 bytes");
    assert_eq!(estimate_tokens(&"😀".repeat(4)), 1, "4 chars, 16 bytes, 8 UTF-16 units");

    let w = World::new();
    let lens = w.create("Multibyte", &padded("Écris un poème sur [[Thème]] 😀"), Visibility::Public);
    let r = w.run(&w.alice, lens.lens.id, &[("thème", "la mer")]).unwrap();
    let chars = r.prompt.chars().count() as u64;
    assert!(r.prompt.len() as u64 > chars);
    assert_eq!(r.estimated_input_tokens, chars.div_ceil(4));
}

// ---------------------------------------------------------------------------
// validate_lens_params (reference §6, lens-validate-params.spec).

#[test]
fn validate_matches_labels_case_insensitively() {
    let w = World::new();
    let lens = w.create("One param", &padded("Use [[A]]."), Visibility::Public);
    let v = block_on(w.lenses.validate_params(
        &w.alice,
        lens.lens.id,
        VersionSelector::Head,
        &vals(&[("a", "x")]),
    ))
    .unwrap();
    assert!(v.valid);
    assert!(v.missing.is_empty() && v.unknown.is_empty() && v.invalid.is_empty());
    assert_eq!((v.total_params, v.provided), (1, 1));
}

#[test]
fn validate_reports_missing_and_unknown() {
    let w = World::new();
    let lens = w.create("Two params", &padded("Use [[A]] and maybe [[B!]]."), Visibility::Public);
    let v = block_on(w.lenses.validate_params(
        &w.alice,
        lens.lens.id,
        VersionSelector::Head,
        &vals(&[("C", "x")]),
    ))
    .unwrap();
    assert!(!v.valid);
    assert_eq!(v.missing, ["A"]);
    assert_eq!(v.unknown, ["C"]);
    assert_eq!((v.total_params, v.provided), (2, 1));
}

#[test]
fn extract_and_validate_name_an_unterminated_token() {
    // Not in the original: the grammar keeps `[[Language` as text, so the
    // parameter the author meant does not exist; both reads say where it is.
    let w = World::new();
    let lens = w.create(
        "Reviewer",
        &padded("Please review this [[Language code carefully: [[Code]]"),
        Visibility::Public,
    );
    assert_eq!(labels(&lens), [("Code", false)]);
    let x = block_on(w.lenses.extract_params(&w.alice, lens.lens.id, VersionSelector::Head)).unwrap();
    let v = block_on(w.lenses.validate_params(
        &w.alice,
        lens.lens.id,
        VersionSelector::Head,
        &vals(&[("Code", "fn main() {}")]),
    ))
    .unwrap();
    assert!(v.valid, "valid: the values fill every parameter there is");
    for warnings in [&x.warnings, &v.warnings] {
        let found: Vec<_> = warnings.iter().map(|w| (w.offset, w.line, w.column, w.token.as_str())).collect();
        assert_eq!(found, [(19, 1, 20, "[[Language")]);
    }
    let clean = w.create("Clean", &padded("Review [[Code]]."), Visibility::Public);
    let x = block_on(w.lenses.extract_params(&w.alice, clean.lens.id, VersionSelector::Head)).unwrap();
    assert!(x.warnings.is_empty());
}

// ---------------------------------------------------------------------------
// extract_lens_params (reference §6, lens-extract-params.spec).

#[test]
fn extract_keeps_the_first_spelling_of_each_token() {
    // Adaptation: the original answered ["Name", "Lang"]; our raw tokens are
    // the tokens as written, brackets and markers included.
    let w = World::new();
    let lens = w.create("Greeter", &padded("Hello [[Name]] and [[Name]] in [[Lang!]]"), Visibility::Public);
    let x = block_on(w.lenses.extract_params(&w.alice, lens.lens.id, VersionSelector::Head)).unwrap();
    assert_eq!(x.raw_tokens, ["[[Name]]", "[[Lang!]]"]);
    assert_eq!(labels(&lens), [("Name", false), ("Lang", true)]);
    assert_eq!(x.version.id, lens.version.id);
}

#[test]
fn extract_trims_whitespace_and_reads_type_hints() {
    // Original (derived): [" Topic ", "topic", "Context:textarea",
    // "Notes:textarea"], `[[a!b]]` not matched. Adaptation: whitespace inside
    // the brackets is trimmed, so `[[ Topic ]]` and `[[topic]]` are one
    // parameter; `[[a!b]]` is a parameter labelled "a!b" (a `!` only marks
    // optional at the end).
    let w = World::new();
    let body = padded("[[ Topic ]] [[topic]] [[Context:textarea]] [[a!b]] [[Notes:textarea!]]");
    let lens = w.create("Mixed", &body, Visibility::Public);
    let x = block_on(w.lenses.extract_params(&w.alice, lens.lens.id, VersionSelector::Head)).unwrap();
    assert_eq!(x.raw_tokens, ["[[ Topic ]]", "[[Context:textarea]]", "[[a!b]]", "[[Notes:textarea!]]"]);
    let params: Vec<_> =
        x.version.params.iter().map(|p| (p.label.as_str(), p.optional, p.type_hint)).collect();
    assert_eq!(
        params,
        [
            ("Topic", false, None),
            ("Context", false, Some(TypeHint::Textarea)),
            ("a!b", false, None),
            ("Notes", true, Some(TypeHint::Textarea)),
        ]
    );
}

#[test]
fn stored_refs_are_plain_text() {
    // Original: `Hello [[:p1]] ...` mapped refs back to labels, and
    // `[[:missing-id]]` gave [":missing-id"]. Adaptation: no refs exist here;
    // a `:`-led token is text and resolves as written.
    let w = World::new();
    let body = padded("Hello [[:p1]] and [[:p1]] in [[:missing-id]]");
    let lens = w.create("Refs", &body, Visibility::Public);
    let x = block_on(w.lenses.extract_params(&w.alice, lens.lens.id, VersionSelector::Head)).unwrap();
    assert!(x.raw_tokens.is_empty());
    assert!(x.version.params.is_empty());
    assert_eq!(w.run(&w.alice, lens.lens.id, &[("p1", "x")]).unwrap().prompt, body);
}

#[test]
fn original_token_grammar_vectors_through_a_lens() {
    // Adaptation: the original normalised labels to lower case ("topic",
    // "input pdf"); here a label keeps its first spelling and matches case-
    // insensitively.
    let w = World::new();
    let body = "[[Topic]] [[Tone!]] [[Input PDF:file]] [[Notes:textarea!]] [[ratio:16]] \
                [[:11111111-2222-3333-4444-555555555555]] [[Attachment:file]] [[color-palette]] [[Visual Tone]]";
    let lens = w.create("Grammar", body, Visibility::Public);
    let params: Vec<_> =
        lens.version.params.iter().map(|p| (p.label.as_str(), p.optional, p.type_hint)).collect();
    assert_eq!(
        params,
        [
            ("Topic", false, None),
            ("Tone", true, None),
            ("Input PDF", false, Some(TypeHint::File)),
            ("Notes", true, Some(TypeHint::Textarea)),
            ("ratio:16", false, None),
            ("Attachment", false, Some(TypeHint::File)),
            ("color-palette", false, None),
            ("Visual Tone", false, None),
        ]
    );
    let keys: Vec<String> = lens.version.params.iter().map(|p| p.key()).collect();
    assert_eq!(keys[2], "input pdf");
    assert_eq!(keys[7], "visual tone");
}

#[test]
fn typed_and_spaced_tokens_of_one_label_are_one_parameter() {
    // The original's stored-token rewrite vector: label Topic rewrote
    // `[[Topic]]` and `[[ topic ! ]]` but not `[[Topic:textarea]]` or
    // `[[Topics]]`. Adaptation: a type hint is not part of the label, so
    // `[[Topic:textarea]]` is Topic too; the first occurrence (required, no
    // type) decides.
    let w = World::new();
    let body = "Write about [[Topic]] and [[ topic ! ]] but not [[Topic:textarea]] or [[Topics]]";
    let lens = w.create("Rewrite", body, Visibility::Public);
    assert_eq!(labels(&lens), [("Topic", false), ("Topics", false)]);
    assert_eq!(lens.version.params[0].type_hint, None);
    let r = w.run(&w.alice, lens.lens.id, &[("topic", "X"), ("Topics", "Y")]).unwrap();
    assert_eq!(r.prompt, "Write about X and X but not X or Y");
}

#[test]
fn labels_with_regex_metacharacters_are_plain_labels() {
    // Original: label `C++ Version`, `Use [[C++ Version!]] now` → one ref.
    let w = World::new();
    let lens = w.create("Meta", &padded("Use [[C++ Version!]] now."), Visibility::Public);
    assert_eq!(labels(&lens), [("C++ Version", true)]);
    let r = w.run(&w.alice, lens.lens.id, &[("c++ version", "17")]).unwrap();
    assert_eq!(r.prompt, padded("Use 17 now."));
    assert_eq!(w.run(&w.alice, lens.lens.id, &[]).unwrap().prompt, padded("Use  now."));
}

#[test]
fn escaped_brackets_are_literal() {
    let w = World::new();
    let lens = w.create("Escape", &padded(r"Write \[[Name]] literally, then [[Name]]."), Visibility::Public);
    assert_eq!(labels(&lens), [("Name", false)]);
    let r = w.run(&w.alice, lens.lens.id, &[("Name", "Ada")]).unwrap();
    assert_eq!(r.prompt, padded("Write [[Name]] literally, then Ada."));
}

// ---------------------------------------------------------------------------
// create_lens (spec example).

const SPEC_BODY: &str = "You are a senior [[Language]] engineer. Review the following code for bugs, security issues, and performance problems.\n\nCode:\n[[Code]]\n\nFocus area: [[FocusArea!]]";

#[test]
fn the_spec_create_lens_example() {
    let w = World::new();
    let view = w.create("Code reviewer", SPEC_BODY, Visibility::Public);
    assert_eq!(labels(&view), [("Language", false), ("Code", false), ("FocusArea", true)]);
    assert_eq!(view.version.semver, Semver::INITIAL);
    assert_eq!(view.version.semver.to_string(), "1.0.0");
    assert_eq!(view.version.changelog, "Initial version.");
    assert_eq!(view.version.body.as_str(), SPEC_BODY, "stored as written");
    assert_eq!(view.lens.owner, w.alice_id);
    assert_eq!(view.lens.status, LensStatus::Published);
    assert_eq!(view.lens.parent_lens_id, None);
    assert_eq!((view.lens.head_version_id, view.lens.head_semver), (view.version.id, Semver::INITIAL));

    let got = block_on(w.lenses.get(&w.bob, view.lens.id)).unwrap();
    assert_eq!(got, view);
    let r = w.run(&w.bob, view.lens.id, &[("language", "Rust"), ("code", "fn main() {}")]).unwrap();
    assert!(r.prompt.starts_with("You are a senior Rust engineer."));
    assert!(r.prompt.ends_with("Code:\nfn main() {}\n\nFocus area: "));
}

#[test]
fn create_needs_an_owner() {
    let w = World::new();
    let nobody = Principal::Service { acting_as: None };
    let r = w.try_create(&nobody, "Orphan", SPEC_BODY, Visibility::Public, vec![]);
    assert_eq!(code(r), ErrorCode::MissingLenser);

    let operator = Principal::Service { acting_as: Some(w.bob_id) };
    let view = w.try_create(&operator, "Operator's", SPEC_BODY, Visibility::Private, vec![]).unwrap();
    assert_eq!(view.lens.owner, w.bob_id);
}

#[test]
fn declarations_only_refine_the_body() {
    let w = World::new();
    let absent =
        w.try_create(&w.alice, "Bad", SPEC_BODY, Visibility::Public, vec![ParamDeclaration::new("Mood")]);
    let e = absent.unwrap_err();
    assert_eq!(e.code(), ErrorCode::InvalidArgument);
    assert!(e.message().contains("[[Mood]]"), "{}", e.message());

    let view = w
        .try_create(
            &w.alice,
            "Refined",
            SPEC_BODY,
            Visibility::Public,
            vec![ParamDeclaration::new("focusarea").description("What to look at first")],
        )
        .unwrap();
    let focus = &view.version.params[2];
    assert_eq!(focus.label, "FocusArea", "the body's spelling wins");
    assert_eq!(focus.description.as_deref(), Some("What to look at first"));
}

// ---------------------------------------------------------------------------
// update_lens: semver bumps (DESIGN.md §6; the original had none).

const V1: &str = "Explain [[Topic]] to a curious reader in a few short paragraphs.";

#[test]
fn semver_follows_the_parameter_schema() {
    let w = World::new();
    let id = w.create("Explainer", V1, Visibility::Public).lens.id;

    let steps: [(&str, &str, Bump, &str); 7] = [
        (
            "Explain [[Topic]] to a curious reader in three short paragraphs.",
            "1.0.1",
            Bump::Patch,
            "Changed the template body.",
        ),
        (
            "Explain [[Topic]] to a curious reader in three short paragraphs, in a [[Tone!]] tone.",
            "1.1.0",
            Bump::Minor,
            "Added optional parameter Tone; changed the template body.",
        ),
        (
            "Explain [[Topic]] to [[Audience]] in three short paragraphs, in a [[Tone!]] tone.",
            "2.0.0",
            Bump::Major,
            "Added required parameter Audience; changed the template body.",
        ),
        (
            "Explain [[Topic]] to [[Audience]] in three short paragraphs, plainly.",
            "3.0.0",
            Bump::Major,
            "Removed parameter Tone; changed the template body.",
        ),
        (
            "Explain [[Topic]] to [[Audience!]] in three short paragraphs, plainly.",
            "3.1.0",
            Bump::Minor,
            "Made parameter Audience optional; changed the template body.",
        ),
        (
            "Explain [[Topic]] to [[Audience]] in three short paragraphs, plainly.",
            "4.0.0",
            Bump::Major,
            "Made parameter Audience required; changed the template body.",
        ),
        (
            // A respelled label is the same parameter: a body change only.
            "Explain [[topic]] to [[AUDIENCE]] in three short paragraphs, plainly.",
            "4.0.1",
            Bump::Patch,
            "Changed the template body.",
        ),
    ];
    let mut previous = "1.0.0".to_owned();
    for (body, semver, bump, changelog) in steps {
        let out = w.set_body(id, body);
        assert_eq!(out.previous_semver.to_string(), previous, "{body}");
        assert_eq!(out.version.semver.to_string(), semver, "{body}");
        assert_eq!(out.bump, Some(bump), "{body}");
        assert_eq!(out.version.changelog, changelog, "{body}");
        assert_eq!((out.lens.head_version_id, out.lens.head_semver), (out.version.id, out.version.semver));
        previous = semver.to_owned();
    }
    let versions = block_on(w.lenses.versions(&w.alice, id)).unwrap();
    let semvers: Vec<String> = versions.iter().map(|v| v.semver.to_string()).collect();
    assert_eq!(
        semvers,
        ["4.0.1", "4.0.0", "3.1.0", "3.0.0", "2.0.0", "1.1.0", "1.0.1", "1.0.0"],
        "newest first"
    );
    // Each version keeps its own parameter list.
    assert_eq!(versions.last().unwrap().params.len(), 1);
    assert_eq!(versions[0].params.len(), 2);
    assert_eq!(versions[0].params[1].label, "AUDIENCE");
}

#[test]
fn declaring_a_parameter_optional_is_a_minor_bump() {
    let w = World::new();
    let body = "Explain [[Topic]] to [[Audience]] in a few short paragraphs, plainly.";
    let id = w.create("Explainer", body, Visibility::Public).lens.id;
    let out = w
        .update(LensUpdate {
            params: Some(vec![ParamDeclaration::new("audience").optional(true).default_value("everyone")]),
            ..LensUpdate::new(id)
        })
        .unwrap();
    assert_eq!(out.bump, Some(Bump::Minor));
    assert_eq!(out.version.semver.to_string(), "1.1.0");
    assert_eq!(out.version.changelog, "Made parameter Audience optional.");
    assert_eq!(out.version.body.as_str(), body);
    let r = w.run(&w.alice, id, &[("Topic", "tides")]).unwrap();
    assert_eq!(r.prompt, "Explain tides to everyone in a few short paragraphs, plainly.");
}

#[test]
fn a_metadata_update_keeps_declared_refinements() {
    // DESIGN.md §6: declarations refine the body's parameters, and a version
    // is made only when the body or parameters change. A title-only update
    // must therefore neither make a version nor undo a declared `optional`.
    let w = World::new();
    let body = "Explain [[Topic]] to [[Audience]] in a few short paragraphs, plainly.";
    let view = w
        .try_create(
            &w.alice,
            "Explainer",
            body,
            Visibility::Public,
            vec![ParamDeclaration::new("Audience").optional(true).default_value("everyone")],
        )
        .unwrap();
    let id = view.lens.id;
    assert_eq!(labels(&view), [("Topic", false), ("Audience", true)]);

    let out = w.update(LensUpdate {
        title: Some(Title::parse("Explainer, renamed").unwrap()),
        ..LensUpdate::new(id)
    });
    let out = out.unwrap();
    assert_eq!(out.bump, None, "a title change is not a new version: {:?}", out.version.changelog);
    assert_eq!(out.version.id, view.version.id);
    assert_eq!(out.lens.title.as_str(), "Explainer, renamed");
    let r = w.run(&w.alice, id, &[("Topic", "tides")]).unwrap();
    assert_eq!(r.prompt, "Explain tides to everyone in a few short paragraphs, plainly.");

    // Rewording the body keeps the declared flag and default too: a patch.
    let out = w.set_body(id, "Explain [[Topic]] to [[Audience]] in two short paragraphs, plainly.");
    assert_eq!(out.bump, Some(Bump::Patch), "{:?}", out.version.changelog);
    assert_eq!(
        labels(&LensView { lens: out.lens, version: out.version }),
        [("Topic", false), ("Audience", true)]
    );
    let r = w.run(&w.alice, id, &[("Topic", "tides")]).unwrap();
    assert_eq!(r.prompt, "Explain tides to everyone in two short paragraphs, plainly.");
}

#[test]
fn refining_a_parameter_is_a_patch() {
    let w = World::new();
    let id =
        w.create("Explainer", &padded("Explain [[Topic]] in a [[Tone!]] tone."), Visibility::Public).lens.id;
    let out = w
        .update(LensUpdate {
            params: Some(vec![ParamDeclaration::new("Tone").description("How it sounds")]),
            ..LensUpdate::new(id)
        })
        .unwrap();
    assert_eq!((out.bump, out.version.semver.to_string()), (Some(Bump::Patch), "1.0.1".to_owned()));
    assert_eq!(out.version.changelog, "Refined parameter Tone.");
    assert_eq!(out.version.params[1].description.as_deref(), Some("How it sounds"));
}

#[test]
fn an_unchanged_template_makes_no_version() {
    let w = World::new();
    let view = w.create("Explainer", V1, Visibility::Public);
    let id = view.lens.id;
    let out = w
        .update(LensUpdate {
            body: Some(TemplateBody::parse(V1).unwrap()),
            params: Some(vec![ParamDeclaration::new("Topic").optional(false)]),
            description: Some(Description::parse("Plain explanations").unwrap()),
            visibility: Some(Visibility::Community),
            ..LensUpdate::new(id)
        })
        .unwrap();
    assert_eq!(out.bump, None);
    assert_eq!(out.previous_semver, Semver::INITIAL);
    assert_eq!(out.version, view.version);
    assert_eq!(out.lens.visibility, Visibility::Community);
    assert_eq!(out.lens.description.as_ref().map(Description::as_str), Some("Plain explanations"));
    assert_eq!(block_on(w.lenses.versions(&w.alice, id)).unwrap().len(), 1);

    // A changelog with nothing to describe is a mistake the caller can fix.
    let with_changelog = w.update(LensUpdate {
        changelog: Some(Changelog::parse("Nothing really").unwrap()),
        ..LensUpdate::new(id)
    });
    assert_eq!(code(with_changelog), ErrorCode::InvalidArgument);
}

#[test]
fn an_explicit_changelog_is_stored() {
    let w = World::new();
    let id = w.create("Explainer", V1, Visibility::Public).lens.id;
    let out = w
        .update(LensUpdate {
            body: Some(TemplateBody::parse(format!("{V1} Use examples.")).unwrap()),
            changelog: Some(Changelog::parse("  Asked for examples  ").unwrap()),
            ..LensUpdate::new(id)
        })
        .unwrap();
    assert_eq!(out.version.changelog, "Asked for examples");
    let versions = block_on(w.lenses.versions(&w.alice, id)).unwrap();
    assert_eq!(versions[0].changelog, "Asked for examples");
    assert_eq!(versions[1].changelog, "Initial version.");
}

// ---------------------------------------------------------------------------
// Version pinning and diffs.

#[test]
fn an_old_version_runs_by_id_or_semver() {
    let w = World::new();
    let v1 = w.create("Explainer", V1, Visibility::Public);
    let id = v1.lens.id;
    w.set_body(id, "Explain [[Topic]] to [[Audience]] in a few short paragraphs.");

    // The head needs Audience; version 1.0.0 does not.
    assert_eq!(code(w.run(&w.bob, id, &[("Topic", "tides")])), ErrorCode::MissingParams);
    for which in [VersionSelector::Id(v1.version.id), VersionSelector::Semver(Semver::INITIAL)] {
        let r = w.run_version(&w.bob, id, which, &[("Topic", "tides")]).unwrap();
        assert_eq!(r.prompt, "Explain tides to a curious reader in a few short paragraphs.");
        assert_eq!(r.version.id, v1.version.id);
    }
    let head = w.run(&w.bob, id, &[("Topic", "tides"), ("Audience", "children")]).unwrap();
    assert_eq!(head.version.semver.to_string(), "2.0.0");

    let other = w.create("Other", V1, Visibility::Public);
    for which in [
        VersionSelector::Semver(Semver::parse("9.9.9").unwrap()),
        VersionSelector::Id(VersionId::new()),
        VersionSelector::Id(other.version.id),
    ] {
        assert_eq!(
            code(w.run_version(&w.bob, id, which, &[("Topic", "x")])),
            ErrorCode::NotFound,
            "{which:?}"
        );
    }
}

#[test]
fn diff_between_versions() {
    let w = World::new();
    let id = w
        .create(
            "Explainer",
            "Explain [[Topic]] to a curious reader.\nUse short paragraphs.",
            Visibility::Public,
        )
        .lens
        .id;
    w.set_body(id, "Explain [[Topic]] to a curious reader.\nUse short paragraphs in a [[Tone!]] tone.");
    let one = VersionSelector::Semver(Semver::INITIAL);
    let two = VersionSelector::Semver(Semver::parse("1.1.0").unwrap());

    let d = block_on(w.lenses.diff(&w.bob, id, one, two)).unwrap();
    assert_eq!(d.lens_id, id);
    assert_eq!((d.from.semver.to_string(), d.to.semver.to_string()), ("1.0.0".into(), "1.1.0".into()));
    assert_eq!(d.bump, Some(Bump::Minor));
    assert!(d.body_changed);
    assert_eq!(d.changes, [ParamChange::Added { label: "Tone".into(), optional: true }]);
    assert!(d.body_diff.contains("--- 1.0.0\n+++ 1.1.0\n"), "{}", d.body_diff);
    assert!(d.body_diff.contains("\n-Use short paragraphs."), "{}", d.body_diff);
    assert!(d.body_diff.contains("\n+Use short paragraphs in a [[Tone!]] tone."), "{}", d.body_diff);
    assert!(
        d.body_diff.contains("\n Explain [[Topic]] to a curious reader.\n"),
        "context line: {}",
        d.body_diff
    );

    // Backwards, the optional parameter is removed: major.
    let back = block_on(w.lenses.diff(&w.bob, id, two, one)).unwrap();
    assert_eq!(back.bump, Some(Bump::Major));
    assert_eq!(back.changes, [ParamChange::Removed { label: "Tone".into() }]);

    let same = block_on(w.lenses.diff(&w.bob, id, two, VersionSelector::Head)).unwrap();
    assert_eq!((same.bump, same.body_changed, same.body_diff.as_str()), (None, false, ""));
    assert!(same.changes.is_empty());
}

// ---------------------------------------------------------------------------
// fork_lens.

fn fork(w: &World, p: &Principal, source: LensId) -> LfResult<LensView> {
    block_on(w.lenses.fork(p, ForkLens { source, title: None, body: None, visibility: Visibility::Private }))
}

#[test]
fn fork_copies_the_head_body_and_parameters() {
    let w = World::new();
    let source = w
        .try_create(
            &w.alice,
            "Tone writer",
            &padded("Write about [[Topic]] in a [[Tone:select!]] tone."),
            Visibility::Public,
            vec![
                ParamDeclaration::new("Tone")
                    .description("How it sounds")
                    .options(["formal", "casual"])
                    .default_value("formal"),
            ],
        )
        .unwrap();
    let head =
        w.set_body(source.lens.id, &padded("Write about [[Topic]] briefly in a [[Tone:select!]] tone."));

    let forked = fork(&w, &w.bob, source.lens.id).unwrap();
    assert_eq!(forked.lens.owner, w.bob_id);
    assert_eq!(forked.lens.parent_lens_id, Some(source.lens.id));
    assert_eq!(forked.lens.title.as_str(), "Fork of Tone writer");
    assert_eq!(forked.lens.visibility, Visibility::Private);
    assert_eq!(forked.version.semver, Semver::INITIAL);
    assert_eq!(forked.version.body, head.version.body);
    assert_ne!(forked.lens.id, source.lens.id);
    assert_eq!(forked.version.params.len(), head.version.params.len());
    for (f, s) in forked.version.params.iter().zip(&head.version.params) {
        assert_ne!(f.id, s.id, "a fork has its own parameter rows");
        assert_eq!((&f.label, f.optional, f.type_hint), (&s.label, s.optional, s.type_hint));
        assert_eq!((&f.description, &f.default, &f.options), (&s.description, &s.default, &s.options));
    }
    let r = w.run(&w.bob, forked.lens.id, &[("Topic", "tea")]).unwrap();
    assert_eq!(r.prompt, padded("Write about tea briefly in a formal tone."));

    // The fork is bob's own: he can change it; the source is untouched.
    let out = block_on(w.lenses.update(
        &w.bob,
        LensUpdate {
            body: Some(TemplateBody::parse(padded("Only [[Topic]].")).unwrap()),
            ..LensUpdate::new(forked.lens.id)
        },
    ))
    .unwrap();
    assert_eq!(out.bump, Some(Bump::Major));
    let source_now = block_on(w.lenses.get(&w.alice, source.lens.id)).unwrap();
    assert_eq!(source_now.version, head.version);
}

#[test]
fn fork_with_a_body_infers_parameters_and_keeps_refinements() {
    let w = World::new();
    let source = w
        .try_create(
            &w.alice,
            "Tone writer",
            &padded("Write about [[Topic]] in a [[Tone!]] tone."),
            Visibility::Community,
            vec![ParamDeclaration::new("Tone").description("How it sounds")],
        )
        .unwrap();
    let forked = block_on(w.lenses.fork(
        &w.bob,
        ForkLens {
            source: source.lens.id,
            title: Some(Title::parse("My writer").unwrap()),
            body: Some(TemplateBody::parse(padded("Write a [[tone!]] poem about [[Season]].")).unwrap()),
            visibility: Visibility::Public,
        },
    ))
    .unwrap();
    assert_eq!(forked.lens.title.as_str(), "My writer");
    assert_eq!(labels(&forked), [("tone", true), ("Season", false)]);
    assert_eq!(forked.version.params[0].description.as_deref(), Some("How it sounds"));
}

#[test]
fn fork_reaches_only_what_the_caller_can_read() {
    let w = World::new();
    let public = w.create("Public", V1, Visibility::Public);
    let community = w.create("Community", V1, Visibility::Community);
    let private = w.create("Private", V1, Visibility::Private);
    assert!(fork(&w, &w.bob, public.lens.id).is_ok());
    assert!(fork(&w, &w.bob, community.lens.id).is_ok());
    assert_eq!(code(fork(&w, &w.bob, private.lens.id)), ErrorCode::NotFound);
    assert_eq!(code(fork(&w, &w.bob, LensId::new())), ErrorCode::NotFound);
    // The owner may fork her own private lens.
    assert_eq!(fork(&w, &w.alice, private.lens.id).unwrap().lens.parent_lens_id, Some(private.lens.id));
    // An agent forks with its owner's reach, for its owner.
    let agent = Principal::Agent { agent_id: LenserId::new(), owner: w.bob_id };
    assert_eq!(fork(&w, &agent, public.lens.id).unwrap().lens.owner, w.bob_id);
    assert_eq!(code(fork(&w, &agent, private.lens.id)), ErrorCode::NotFound);
    // stdio with no LENSERFIGHT_LENSER_ID: it can read everything but own nothing.
    let nobody = Principal::Service { acting_as: None };
    assert_eq!(code(fork(&w, &nobody, private.lens.id)), ErrorCode::MissingLenser);
}

// ---------------------------------------------------------------------------
// Visibility and ownership (DESIGN.md §5).

#[test]
fn another_lenser_may_read_but_not_change_a_readable_lens() {
    let w = World::new();
    for visibility in [Visibility::Public, Visibility::Community] {
        let id = w.create("Alice's", V1, visibility).lens.id;
        assert!(block_on(w.lenses.get(&w.bob, id)).is_ok());
        assert!(w.run(&w.bob, id, &[("Topic", "x")]).is_ok());

        let body = TemplateBody::parse(format!("{V1} More.")).unwrap();
        let update =
            block_on(w.lenses.update(&w.bob, LensUpdate { body: Some(body), ..LensUpdate::new(id) }));
        let e = update.unwrap_err();
        assert_eq!(e.code(), ErrorCode::Forbidden);
        assert!(e.message().contains("fork_lens"), "says what to do: {}", e.message());
        assert_eq!(code(block_on(w.lenses.archive(&w.bob, id))), ErrorCode::Forbidden);
        assert_eq!(code(block_on(w.lenses.restore(&w.bob, id))), ErrorCode::Forbidden);
        assert_eq!(code(block_on(w.lenses.delete(&w.bob, id, true))), ErrorCode::Forbidden);
        assert_eq!(
            code(block_on(w.lenses.set_visibility(&w.bob, id, Visibility::Private))),
            ErrorCode::Forbidden
        );
        // Nothing changed.
        let view = block_on(w.lenses.get(&w.alice, id)).unwrap();
        assert_eq!(
            (view.lens.visibility, view.lens.status, view.version.semver),
            (visibility, LensStatus::Published, Semver::INITIAL)
        );
    }
}

/// Every read and write of lens `id` by `p` answers NOT_FOUND.
fn assert_unreachable(w: &World, p: &Principal, id: LensId) {
    let head = VersionSelector::Head;
    let l = &w.lenses;
    let body = TemplateBody::parse(format!("{V1} More.")).unwrap();
    let results: Vec<(&str, ErrorCode)> = vec![
        ("get", code(block_on(l.get(p, id)))),
        ("view", code(block_on(l.view(p, id, VersionSelector::Semver(Semver::INITIAL))))),
        ("versions", code(block_on(l.versions(p, id)))),
        ("extract", code(block_on(l.extract_params(p, id, head)))),
        ("validate", code(block_on(l.validate_params(p, id, head, &vals(&[("Topic", "x")]))))),
        ("run", code(w.run(p, id, &[("Topic", "x")]))),
        ("diff", code(block_on(l.diff(p, id, head, head)))),
        ("update", code(block_on(l.update(p, LensUpdate { body: Some(body), ..LensUpdate::new(id) })))),
        ("archive", code(block_on(l.archive(p, id)))),
        ("restore", code(block_on(l.restore(p, id)))),
        ("set_visibility", code(block_on(l.set_visibility(p, id, Visibility::Public)))),
        ("delete", code(block_on(l.delete(p, id, true)))),
        ("fork", code(fork(w, p, id))),
    ];
    for (what, c) in results {
        assert_eq!(c, ErrorCode::NotFound, "{what}");
    }
    assert!(!w.listed(p, LensFilter { include_archived: true, ..LensFilter::default() }).contains(&id));
    assert!(!w.found(p, "explain").contains(&id));
}

#[test]
fn another_lenser_cannot_tell_a_private_lens_exists() {
    let w = World::new();
    let id = w.create("Secret", V1, Visibility::Private).lens.id;
    assert_unreachable(&w, &w.bob, id);
    // Its owner and the operator still see it.
    assert!(w.listed(&w.alice, LensFilter::default()).contains(&id));
    assert!(w.found(&Principal::Service { acting_as: None }, "explain").contains(&id));
}

#[test]
fn making_a_lens_private_hides_it_from_others() {
    let w = World::new();
    let id = w.create("Soon secret", V1, Visibility::Public).lens.id;
    assert!(w.found(&w.bob, "explain").contains(&id));
    let lens = block_on(w.lenses.set_visibility(&w.alice, id, Visibility::Private)).unwrap();
    assert_eq!(lens.visibility, Visibility::Private);
    assert_unreachable(&w, &w.bob, id);
    assert!(w.listed(&w.bob, LensFilter::default()).is_empty());
}

#[test]
fn the_operator_may_change_any_lens() {
    let w = World::new();
    let id = w.create("Alice's", V1, Visibility::Private).lens.id;
    let operator = Principal::Service { acting_as: None };
    let lens = block_on(w.lenses.set_visibility(&operator, id, Visibility::Community)).unwrap();
    assert_eq!((lens.visibility, lens.owner), (Visibility::Community, w.alice_id));
}

// ---------------------------------------------------------------------------
// archive_lens, restore_lens, delete_lens.

#[test]
fn archive_hides_from_listings_but_not_from_get() {
    let w = World::new();
    let id = w.create("Archivable", V1, Visibility::Public).lens.id;
    let kept = w.create("Kept", V1, Visibility::Public).lens.id;

    let archived = block_on(w.lenses.archive(&w.alice, id)).unwrap();
    assert_eq!(archived.status, LensStatus::Archived);
    let at = archived.archived_at.expect("archived_at is set");
    // Idempotent: archiving again keeps the first time.
    assert_eq!(block_on(w.lenses.archive(&w.alice, id)).unwrap().archived_at, Some(at));

    for p in [&w.alice, &w.bob] {
        assert_eq!(w.listed(p, LensFilter::default()), [kept]);
        assert_eq!(w.found(p, "explain"), [kept]);
        let all = w.listed(p, LensFilter { include_archived: true, ..LensFilter::default() });
        assert!(all.contains(&id) && all.contains(&kept));
        let only = w.listed(p, LensFilter { status: Some(LensStatus::Archived), ..LensFilter::default() });
        assert_eq!(only, [id]);
        let got = block_on(w.lenses.get(p, id)).unwrap();
        assert_eq!(got.lens.status, LensStatus::Archived);
        assert!(w.run(p, id, &[("Topic", "x")]).is_ok());
    }

    let restored = block_on(w.lenses.restore(&w.alice, id)).unwrap();
    assert_eq!((restored.status, restored.archived_at), (LensStatus::Published, None));
    assert!(w.listed(&w.bob, LensFilter::default()).contains(&id));
    assert!(w.found(&w.bob, "explain").contains(&id));
}

#[test]
fn delete_needs_confirmation_then_the_lens_is_gone_everywhere() {
    let w = World::new();
    let view = w.create("Doomed", V1, Visibility::Public);
    let id = view.lens.id;
    let e = block_on(w.lenses.delete(&w.alice, id, false)).unwrap_err();
    assert_eq!(e.code(), ErrorCode::ConfirmationRequired);
    assert!(e.message().contains("confirm: true"), "{}", e.message());
    assert!(block_on(w.lenses.get(&w.bob, id)).is_ok(), "not deleted without confirmation");

    let (lens, deleted_at) = block_on(w.lenses.delete(&w.alice, id, true)).unwrap();
    assert_eq!(lens.id, id);
    assert!(deleted_at >= view.lens.created_at);
    for p in [&w.alice, &w.bob, &Principal::Service { acting_as: Some(w.alice_id) }] {
        assert_unreachable(&w, p, id);
    }
}

// ---------------------------------------------------------------------------
// Options and defaults.

fn options_lens(w: &World) -> LensView {
    w.try_create(
        &w.alice,
        "Options",
        "Write in a [[Tone:select!]] tone about [[Tags:multiselect]], for [[Reader!]].",
        Visibility::Public,
        vec![
            ParamDeclaration::new("Tone").options(["formal", "casual"]).default_value("formal"),
            ParamDeclaration::new("Tags").options(["rust", "go", "python"]),
            ParamDeclaration::new("Reader").default_value("everyone"),
        ],
    )
    .unwrap()
}

#[test]
fn select_values_must_be_options() {
    let w = World::new();
    let id = options_lens(&w).lens.id;
    let r = w.run(&w.alice, id, &[("Tone", "casual"), ("Tags", "go")]).unwrap();
    assert_eq!(r.prompt, "Write in a casual tone about go, for everyone.");

    let e = w.run(&w.alice, id, &[("Tone", "rude"), ("Tags", "go")]).unwrap_err();
    assert_eq!(e.code(), ErrorCode::InvalidArgument);
    assert!(e.message().contains("\"formal\", \"casual\""), "{}", e.message());
    assert_eq!(detail(&e, "label"), &Detail::Str("Tone".into()));
    assert_eq!(detail_strs(&e, "options"), ["formal", "casual"]);
    // Options match exactly: case matters in values.
    assert_eq!(code(w.run(&w.alice, id, &[("Tone", "Formal"), ("Tags", "go")])), ErrorCode::InvalidArgument);
}

#[test]
fn multiselect_values_are_comma_separated_options() {
    let w = World::new();
    let id = options_lens(&w).lens.id;
    let r = w.run(&w.alice, id, &[("Tags", "rust, go,python")]).unwrap();
    assert_eq!(r.prompt, "Write in a formal tone about rust, go,python, for everyone.");
    let e = w.run(&w.alice, id, &[("Tags", "rust, java")]).unwrap_err();
    assert_eq!(e.code(), ErrorCode::InvalidArgument);
    assert!(e.message().contains("comma-separated"), "{}", e.message());

    let v = block_on(w.lenses.validate_params(
        &w.alice,
        id,
        VersionSelector::Head,
        &vals(&[("Tags", "rust, java"), ("Tone", "rude")]),
    ))
    .unwrap();
    assert!(!v.valid);
    let invalid: Vec<&str> = v.invalid.iter().map(|(l, _)| l.as_str()).collect();
    assert_eq!(invalid, ["Tone", "Tags"]);
    assert!(v.missing.is_empty() && v.unknown.is_empty());
}

#[test]
fn defaults_fill_optional_parameters_only() {
    let w = World::new();
    let id = options_lens(&w).lens.id;
    // A given value wins, even an empty one.
    let r = w.run(&w.alice, id, &[("Tags", "rust"), ("Reader", "")]).unwrap();
    assert_eq!(r.prompt, "Write in a formal tone about rust, for .");
    assert_eq!(r.params_used, ["Tags", "Reader"]);

    let body = "Write in a [[Tone:select!]] tone about [[Tags:multiselect]], for [[Reader!]].";
    let required_default = w.try_create(
        &w.alice,
        "Bad",
        body,
        Visibility::Public,
        vec![ParamDeclaration::new("Tags").default_value("go")],
    );
    let e = required_default.unwrap_err();
    assert_eq!(e.code(), ErrorCode::InvalidArgument);
    assert!(e.message().contains("required"), "{}", e.message());
    let default_not_an_option = w.try_create(
        &w.alice,
        "Bad",
        body,
        Visibility::Public,
        vec![ParamDeclaration::new("Tone").options(["formal"]).default_value("casual")],
    );
    assert_eq!(code(default_not_an_option), ErrorCode::InvalidArgument);
}

// ---------------------------------------------------------------------------
// search_lenses and find_and_run_lens.

#[test]
fn search_matches_every_word_somewhere() {
    // Original (derived): `  Code   Review ` → [code, review], matching a
    // lens whose title has "code" and content has "review". Adaptation: words
    // match word prefixes, and a query without words is refused rather than
    // matching everything.
    let w = World::new();
    let hit =
        w.create("Code helper", &padded("Please review this snippet carefully"), Visibility::Public).lens.id;
    w.create("Code helper without the other word", &padded("Please read this"), Visibility::Public);
    assert_eq!(SearchQuery::parse("  Code   Review ").unwrap().terms(), ["code", "review"]);
    assert_eq!(w.found(&w.bob, "  Code   Review "), [hit]);
    assert_eq!(w.found(&w.bob, "cod rev"), [hit], "prefixes");
    assert_eq!(code(SearchQuery::parse("   ")), ErrorCode::InvalidArgument);
}

fn find_and_run(w: &World, p: &Principal, query: &str, values: &[(&str, &str)]) -> FindAndRun {
    let q = SearchQuery::parse(query).unwrap();
    block_on(w.lenses.find_and_run(p, &q, query, &vals(values), None, VersionSelector::Head)).unwrap()
}

#[test]
fn find_and_run_answers_ready_needs_params_or_no_match() {
    let w = World::new();
    // Title matches weigh most, then description, then body.
    let best =
        w.create("Zebracode reviewer", &padded("Review this [[Code]] for [[Focus!]]"), Visibility::Public);
    let in_body =
        w.create("Plain reviewer", &padded("Also mentions zebracode in passing"), Visibility::Public);
    let in_description = block_on(w.lenses.create(
        &w.alice,
        NewLens {
            title: Title::parse("Described reviewer").unwrap(),
            description: Some(Description::parse("Good at zebracode").unwrap()),
            body: TemplateBody::parse(padded("Nothing to fill in")).unwrap(),
            visibility: Visibility::Public,
            params: vec![],
        },
    ))
    .unwrap();
    let expected_others = [
        Candidate { id: in_description.lens.id, title: "Described reviewer".into() },
        Candidate { id: in_body.lens.id, title: "Plain reviewer".into() },
    ];

    match find_and_run(&w, &w.bob, "zebracode", &[]) {
        FindAndRun::NeedsParams { view, missing, other_candidates } => {
            assert_eq!(view.lens.id, best.lens.id);
            assert_eq!(missing, ["Code"]);
            assert_eq!(other_candidates, expected_others);
        }
        other => panic!("expected needs_params, got {other:?}"),
    }
    match find_and_run(&w, &w.bob, "zebracode", &[("code", "x = 1")]) {
        FindAndRun::Ready { resolved, other_candidates } => {
            assert_eq!(resolved.lens.id, best.lens.id);
            assert_eq!(resolved.prompt, padded("Review this x = 1 for "));
            assert_eq!(resolved.params_used, ["Code"]);
            assert_eq!(resolved.estimated_input_tokens, estimate_tokens(&resolved.prompt));
            assert_eq!(other_candidates, expected_others);
        }
        other => panic!("expected ready, got {other:?}"),
    }
    match find_and_run(&w, &w.bob, "  Quokkas  ", &[]) {
        FindAndRun::NoMatch { query } => assert_eq!(query, "  Quokkas  "),
        other => panic!("expected no_match, got {other:?}"),
    }
}

#[test]
fn find_and_run_sees_only_what_the_caller_can_read() {
    let w = World::new();
    w.create("Secret zebracode", &padded("Nothing to fill in"), Visibility::Private);
    assert!(matches!(find_and_run(&w, &w.bob, "zebracode", &[]), FindAndRun::NoMatch { .. }));
    assert!(matches!(find_and_run(&w, &w.alice, "zebracode", &[]), FindAndRun::Ready { .. }));
}

#[test]
fn find_and_run_refuses_values_outside_options() {
    let w = World::new();
    let id = options_lens(&w).lens.id;
    assert!(w.found(&w.bob, "options").contains(&id));
    let q = SearchQuery::parse("options").unwrap();
    let r = block_on(w.lenses.find_and_run(
        &w.bob,
        &q,
        "options",
        &vals(&[("Tags", "java")]),
        None,
        VersionSelector::Head,
    ));
    assert_eq!(code(r), ErrorCode::InvalidArgument);
}

// ---------------------------------------------------------------------------
// The agent as actor (DESIGN §5): its owner owns what it writes, and every
// lens, version and run it writes names it.

#[test]
fn an_agent_is_recorded_on_what_it_writes_and_its_owner_owns_it() {
    let w = World::new();
    let agent_id = LenserId::new();
    let agent = Principal::Agent { agent_id, owner: w.alice_id };
    let made =
        w.try_create(&agent, "By an agent", &padded("About [[Topic]]"), Visibility::Private, vec![]).unwrap();
    assert_eq!(
        (made.lens.owner, made.lens.agent, made.version.agent),
        (w.alice_id, Some(agent_id), Some(agent_id))
    );

    let update = LensUpdate {
        body: Some(TemplateBody::parse(padded("On [[Topic]]")).unwrap()),
        ..LensUpdate::new(made.lens.id)
    };
    let by_agent = block_on(w.lenses.update(&agent, update.clone())).unwrap();
    assert_eq!(by_agent.version.agent, Some(agent_id), "the agent's version names it");
    let update = LensUpdate { body: Some(TemplateBody::parse(padded("Of [[Topic]]")).unwrap()), ..update };
    let by_owner = w.update(update).unwrap();
    assert_eq!(by_owner.version.agent, None, "the owner's version names no agent");
    assert_eq!(by_owner.lens.agent, Some(agent_id), "the lens still names the agent that created it");

    let forked = fork(&w, &agent, made.lens.id).unwrap();
    assert_eq!(
        (forked.lens.owner, forked.lens.agent, forked.version.agent),
        (w.alice_id, Some(agent_id), Some(agent_id))
    );
    let own = fork(&w, &w.alice, made.lens.id).unwrap();
    assert_eq!((own.lens.agent, own.version.agent), (None, None), "a person's fork names no agent");

    let workflow = Some(WorkflowId::new());
    let values = vals(&[("Topic", "tides")]);
    block_on(w.lenses.run(&agent, made.lens.id, VersionSelector::Head, &values, workflow)).unwrap();
    block_on(w.lenses.run(&w.alice, made.lens.id, VersionSelector::Head, &values, workflow)).unwrap();
    let runs: Vec<_> = w.store.runs().iter().map(|r| (r.lenser, r.agent)).collect();
    assert_eq!(runs, vec![(Some(w.alice_id), Some(agent_id)), (Some(w.alice_id), None)]);
}
