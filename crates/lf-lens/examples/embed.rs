//! lf-lens inside another Rust app: no server, no database, no async runtime
//! beyond `pollster::block_on`.
//!
//! ```text
//! cargo run -p lf-lens --example embed
//! ```
//!
//! 1. Parse a template and inspect its parameters, type hints and tokens.
//! 2. Create a lens on the in-memory store through `LensService`.
//! 3. Update it and watch the semver bump and the generated changelog.
//! 4. Run it with values, then without a required one (MISSING_PARAMS).

use std::error::Error;
use std::sync::Arc;

use lf_core::{Detail, ErrorCode, LenserId, Principal};
use lf_lens::{
    LensService, LensUpdate, MemoryLensStore, NewLens, ParamDeclaration, ParamValues, Template, TemplateBody,
    Title, VersionSelector, Visibility,
};
use pollster::block_on;

const BODY: &str = "You are a senior [[Language]] engineer. Review the following code for bugs, \
security issues and performance problems.\n\nCode:\n[[Code:textarea]]\n\nFocus area: [[FocusArea!]]\n\
Write \\[[Code]] where you quote the code back.";

fn main() -> Result<(), Box<dyn Error>> {
    // 1. The template grammar on its own: no service, no store.
    println!("== Parsing a template ==");
    let template = Template::parse(BODY);
    for p in template.params() {
        let kind = if p.optional { "optional" } else { "required" };
        let hint = p.type_hint.map_or("-".to_owned(), |t| t.to_string());
        println!("  {:<10} {kind:<9} type hint: {hint}", p.label);
    }
    println!("  raw tokens: {:?}", template.raw_tokens());
    println!("  token occurrences: {}", template.tokens().len());
    let preview = template.resolve(&["Rust", "fn main() {}", ""]);
    println!("  resolved directly:\n{}", indent(&preview));

    // 2. A lens service over the in-memory store. `acting_as` owns what the
    //    service creates; without one, create answers MISSING_LENSER.
    println!("\n== Creating a lens ==");
    let lenses = LensService::new(Arc::new(MemoryLensStore::new()));
    let me = Principal::Service { acting_as: Some(LenserId::new()) };
    let view = block_on(lenses.create(
        &me,
        NewLens {
            title: Title::parse("Code reviewer")?,
            description: None,
            body: TemplateBody::parse(BODY)?,
            visibility: Visibility::Private,
            params: vec![
                ParamDeclaration::new("FocusArea")
                    .description("What to look at first")
                    .options(["bugs", "security", "performance"])
                    .default_value("bugs"),
            ],
        },
    ))?;
    let id = view.lens.id;
    println!("  lens {id}");
    println!("  version {} ({}): {}", view.version.semver, view.version.id, view.version.changelog);

    // 3. A new optional parameter is a minor bump; the changelog is
    //    generated unless one is given.
    println!("\n== Updating it ==");
    let body = format!("{BODY}\nAnswer in a [[Tone!]] tone.");
    let out = block_on(
        lenses.update(&me, LensUpdate { body: Some(TemplateBody::parse(body)?), ..LensUpdate::new(id) }),
    )?;
    let bump = out.bump.map_or("none", |b| b.as_str());
    println!("  {} -> {} ({bump} bump)", out.previous_semver, out.version.semver);
    println!("  changelog: {}", out.version.changelog);
    for v in block_on(lenses.versions(&me, id))? {
        println!("  - {} with {} parameters: {}", v.semver, v.params.len(), v.changelog);
    }

    // 4. Running resolves the prompt; labels match case-insensitively and
    //    optional parameters fall back to their default or "".
    println!("\n== Running it ==");
    let values = ParamValues::new()
        .insert("language", "Rust")
        .insert("CODE", "fn main() { let x = 1 / 0; }")
        .insert("tone", "direct");
    let run = block_on(lenses.run(&me, id, VersionSelector::Head, &values, None))?;
    println!("  version {}, parameters used: {:?}", run.version.semver, run.params_used);
    println!("  about {} input tokens:\n{}", run.estimated_input_tokens, indent(&run.prompt));

    println!("\n== Running it without a required value ==");
    let partial = ParamValues::new().insert("Language", "Rust");
    match block_on(lenses.run(&me, id, VersionSelector::Head, &partial, None)) {
        Err(e) if e.code() == ErrorCode::MissingParams => {
            println!("  {}: {}", e.code(), e.message());
            let missing = e.details().iter().find_map(|(k, v)| match v {
                Detail::Strs(labels) if k == "missing" => Some(labels.clone()),
                _ => None,
            });
            println!("  details.missing = {:?}", missing.unwrap_or_default());
        }
        Err(e) => return Err(e.into()),
        Ok(_) => return Err("expected MISSING_PARAMS".into()),
    }

    // The first version is still there, with its own parameter list.
    let first = block_on(lenses.run(&me, id, VersionSelector::Semver(view.version.semver), &values, None))?;
    println!(
        "\n== Version {} still runs ==\n  {} characters",
        first.version.semver,
        first.prompt.chars().count()
    );
    Ok(())
}

fn indent(text: &str) -> String {
    text.lines().map(|l| format!("    | {l}")).collect::<Vec<_>>().join("\n")
}
