//! Who may do what to a lens, through `LfServer::call`, on the in-memory
//! store and on SQLite.
//!
//! The matrix: every Lens tool and the Search tools × {the owner A, another
//! lenser B, the Service principal} × a lens of A's that is {private,
//! community, public}. Each cell
//! runs on a fresh lens of its own, its expectation comes from `MATRIX`, and
//! every mismatch is collected before the test fails, so one run shows the
//! whole picture.
//!
//! A second matrix does the same for every Workflow tool (and the Search
//! tools) on a workflow of A's that is {private, unlisted, public}, and
//! for the run tools on a run A started of it.
//!
//! The property: random sequences of tool calls by random principals over a
//! few lenses never show a lenser the title or template of a lens it may not
//! read, in any tool result.

use std::collections::HashSet;
use std::time::Instant;

use lf_core::{LensId, LenserId, Principal, Reach};
use lf_lens::{Lens, LensStatus, VersionSelector};
use lf_tests::{Caller, Reply, StoreKind, TestStore, all_lenses, all_versions, call, item_ids, lenser};
use lf_workflow::engine::RunStatus;
use lf_workflow::run::Run;
use proptest::prelude::*;
use proptest::test_runner::{Config, TestCaseError, TestRunner};
use serde_json::{Value, json};

/// What a principal gets from a tool on a lens.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Want {
    /// A success (and, for a write, the change made).
    Ok,
    /// A listing that includes the lens.
    Listed,
    /// A listing that leaves the lens out.
    Hidden,
    NotFound,
    Forbidden,
}

use Want::{Forbidden, Hidden, Listed, NotFound};

impl Want {
    /// The error code a cell wanting this answers; `None`: a success.
    fn code(self) -> Option<&'static str> {
        match self {
            NotFound => Some("NOT_FOUND"),
            Forbidden => Some("FORBIDDEN"),
            _ => None,
        }
    }
}

const OK: Want = Want::Ok;

/// Tiers of the lens, in the order of each row's inner arrays.
const TIERS: [&str; 3] = ["private", "community", "public"];

/// Who calls, in the order of each row's outer array.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Who {
    Owner,
    Other,
    Service,
}

const WHO: [Who; 3] = [Who::Owner, Who::Other, Who::Service];

/// tool → [owner A, other lenser B, Service] × [private, community, public].
#[rustfmt::skip]
const MATRIX: &[(&str, [[Want; 3]; 3])] = &[
    //                        A: priv comm  pub       B: priv      comm       pub          Service: priv comm pub
    ("list_lenses",          [[Listed, Listed, Listed], [Hidden,   Listed,    Listed],    [Listed, Listed, Listed]]),
    ("search_lenses",        [[Listed, Listed, Listed], [Hidden,   Listed,    Listed],    [Listed, Listed, Listed]]),
    ("get_lens",             [[OK, OK, OK],             [NotFound, OK,        OK],        [OK, OK, OK]]),
    ("list_lens_versions",   [[OK, OK, OK],             [NotFound, OK,        OK],        [OK, OK, OK]]),
    ("get_lens_version",     [[OK, OK, OK],             [NotFound, OK,        OK],        [OK, OK, OK]]),
    ("extract_lens_params",  [[OK, OK, OK],             [NotFound, OK,        OK],        [OK, OK, OK]]),
    ("validate_lens_params", [[OK, OK, OK],             [NotFound, OK,        OK],        [OK, OK, OK]]),
    ("create_lens",          [[OK, OK, OK],             [OK,       OK,        OK],        [OK, OK, OK]]),
    ("update_lens",          [[OK, OK, OK],             [NotFound, Forbidden, Forbidden], [OK, OK, OK]]),
    ("fork_lens",            [[OK, OK, OK],             [NotFound, OK,        OK],        [OK, OK, OK]]),
    ("set_lens_visibility",  [[OK, OK, OK],             [NotFound, Forbidden, Forbidden], [OK, OK, OK]]),
    ("run_lens",             [[OK, OK, OK],             [NotFound, OK,        OK],        [OK, OK, OK]]),
    ("find_and_run_lens",    [[Listed, Listed, Listed], [Hidden,   Listed,    Listed],    [Listed, Listed, Listed]]),
    ("archive_lens",         [[OK, OK, OK],             [NotFound, Forbidden, Forbidden], [OK, OK, OK]]),
    ("delete_lens",          [[OK, OK, OK],             [NotFound, Forbidden, Forbidden], [OK, OK, OK]]),
    ("restore_lens",         [[OK, OK, OK],             [NotFound, Forbidden, Forbidden], [OK, OK, OK]]),
    ("diff_lens_versions",   [[OK, OK, OK],             [NotFound, OK,        OK],        [OK, OK, OK]]),
    ("list_lens_labels",     [[OK, OK, OK],             [NotFound, OK,        OK],        [OK, OK, OK]]),
    ("set_lens_label",       [[OK, OK, OK],             [NotFound, Forbidden, Forbidden], [OK, OK, OK]]),
    ("remove_lens_label",    [[OK, OK, OK],             [NotFound, Forbidden, Forbidden], [OK, OK, OK]]),
    ("search",               [[Listed, Listed, Listed], [Hidden,   Listed,    Listed],    [Listed, Listed, Listed]]),
    ("fetch",                [[OK, OK, OK],             [NotFound, OK,        OK],        [OK, OK, OK]]),
];

fn body(marker: &str) -> String {
    format!(
        "Write a short note about [[Topic]] for {marker}, in a [[Tone!]] tone. Keep it to three sentences."
    )
}

fn full_values() -> Value {
    json!({"Topic": "tides", "Tone": "calm"})
}

/// A fresh lens of A's for one cell: two versions (1.0.0, 1.1.0), its title,
/// description and template all carrying `marker`.
struct CellLens {
    id: String,
    marker: String,
}

/// What one cell's call did: its reply, the ids listed (list_lenses pages
/// through), and the cell's lens before and after (None: unreadable).
struct Observed {
    reply: Reply,
    listed: Option<Vec<String>>,
    before: Option<(Lens, usize)>,
    after: Option<(Lens, usize)>,
}

struct Matrix<'a> {
    store: &'a TestStore,
    owner: LenserId,
    other: LenserId,
    service_lenser: LenserId,
    next_marker: usize,
}

async fn must(caller: &Caller, tool: &str, args: Value) -> Value {
    let reply = call(caller, tool, args).await.unwrap_or_else(|e| panic!("setup {tool}: {e}"));
    assert!(!reply.is_error, "setup {tool} failed: {}", reply.value);
    reply.value
}

impl Matrix<'_> {
    async fn caller(&self, who: Who) -> Caller {
        self.store.caller(self.principal(who)).await
    }

    fn principal(&self, who: Who) -> Principal {
        match who {
            Who::Owner => lenser(self.owner),
            Who::Other => lenser(self.other),
            Who::Service => Principal::Service { acting_as: Some(self.service_lenser) },
        }
    }

    fn lenser_of(&self, who: Who) -> LenserId {
        match who {
            Who::Owner => self.owner,
            Who::Other => self.other,
            Who::Service => self.service_lenser,
        }
    }

    fn marker(&mut self) -> String {
        self.next_marker += 1;
        // Fixed width: search matches word prefixes, and no marker may be a prefix of another.
        format!("zq{:05}zq", self.next_marker)
    }

    async fn cell_lens(&mut self, tier: &str) -> CellLens {
        let marker = self.marker();
        let a = self.caller(Who::Owner).await;
        let created = must(
            &a,
            "create_lens",
            json!({
                "title": format!("Note writer {marker}"), "template_body": body(&marker),
                "description": format!("Notes by {marker}"), "visibility": tier,
            }),
        )
        .await;
        let id = created["id"].as_str().expect("an id").to_owned();
        let v2 = format!("{} Sign it [[Signature!]].", body(&marker));
        must(&a, "update_lens", json!({"lens_id": id, "template_body": v2})).await;
        CellLens { id, marker }
    }

    async fn snapshot(&self, id: &str) -> Option<(Lens, usize)> {
        let id = LensId::parse("lens_id", id).expect("a lens id");
        let store = self.store.store();
        let lens = store.get_lens(Reach::Everything, id).await.ok()?;
        let versions = store.list_versions(Reach::Everything, id).await.ok()?.len();
        Some((lens, versions))
    }

    /// The lens's labels and the versions they point at (None: unreadable).
    async fn labels(&self, id: &str) -> Option<Vec<(String, String)>> {
        let id = LensId::parse("lens_id", id).expect("a lens id");
        let labels = self.store.store().list_labels(Reach::Everything, id).await.ok()?;
        Some(labels.iter().map(|l| (l.name.to_string(), l.version.semver.to_string())).collect())
    }

    /// Every id `list_lenses` shows the caller, paged through from `args`.
    async fn listed_ids(&self, server: &Caller, args: Value) -> Result<(Reply, Vec<String>), String> {
        let mut ids = Vec::new();
        loop {
            let mut page_args = args.clone();
            page_args["offset"] = json!(ids.len());
            let reply = call(server, "list_lenses", page_args).await?;
            if reply.is_error {
                return Ok((reply, ids));
            }
            let page = item_ids(&reply.value);
            let more = reply.value["has_more"] == true && !page.is_empty();
            ids.extend(page);
            if !more {
                return Ok((reply, ids));
            }
        }
    }

    /// Runs one cell; the mismatches found, if any.
    async fn cell(&mut self, tool: &str, who: Who, tier: &str, want: Want) -> Vec<String> {
        let lens = self.cell_lens(tier).await;
        if tool == "restore_lens" {
            must(&self.caller(Who::Owner).await, "archive_lens", json!({"lens_id": lens.id})).await;
        }
        if tool == "remove_lens_label" {
            let set = json!({"lens_id": lens.id, "label": "staging", "version": "1.0.0"});
            must(&self.caller(Who::Owner).await, "set_lens_label", set).await;
        }
        let labels_before = self.labels(&lens.id).await;
        let server = self.caller(who).await;
        let before = self.snapshot(&lens.id).await;
        let id = lens.id.clone();
        let other_tier = match tier {
            "private" => "public",
            "community" => "private",
            _ => "community",
        };
        let args = match tool {
            "list_lenses" => json!({"limit": 100}),
            "search_lenses" => json!({"query": lens.marker}),
            "find_and_run_lens" => json!({"query": lens.marker, "param_values": full_values()}),
            "get_lens" | "list_lens_versions" | "extract_lens_params" | "archive_lens" | "restore_lens" => {
                json!({"lens_id": id})
            }
            "get_lens_version" => json!({"lens_id": id, "semver": "1.0.0"}),
            "validate_lens_params" => json!({"lens_id": id, "values": full_values()}),
            "create_lens" => json!({
                "title": format!("Created {}", lens.marker), "template_body": body(&lens.marker), "visibility": tier,
            }),
            "update_lens" => json!({"lens_id": id, "title": "Renamed note writer"}),
            "fork_lens" => json!({"source_lens_id": id}),
            "set_lens_visibility" => json!({"lens_id": id, "visibility": other_tier}),
            "run_lens" => json!({"lens_id": id, "param_values": full_values()}),
            "delete_lens" => json!({"lens_id": id, "confirm": true}),
            "diff_lens_versions" => json!({"lens_id": id, "from": "1.0.0"}),
            "list_lens_labels" => json!({"lens_id": id}),
            "set_lens_label" => json!({"lens_id": id, "label": "staging", "version": "1.0.0"}),
            "remove_lens_label" => json!({"lens_id": id, "label": "staging"}),
            "search" => json!({"query": lens.marker}),
            "fetch" => json!({"id": format!("lens:{id}")}),
            _ => return vec![format!("no arguments for {tool}: add them to Matrix::cell")],
        };
        let answer = match tool {
            "list_lenses" => self.listed_ids(&server, args).await.map(|(r, ids)| (r, Some(ids))),
            _ => call(&server, tool, args).await.map(|r| (r, None)),
        };
        let (reply, listed) = match answer {
            Ok(a) => a,
            Err(e) => return vec![e],
        };
        let after = self.snapshot(&lens.id).await;
        let labels_after = self.labels(&lens.id).await;
        let seen = Observed { reply, listed, before, after };
        let mut out = self.judge(tool, who, want, &lens, &seen);
        // Labels are beside the lens's row: a label tool that succeeded
        // changed them, and nothing else did.
        if let (Some(before), Some(after)) = (&labels_before, &labels_after) {
            let moves = want == Want::Ok && matches!(tool, "set_lens_label" | "remove_lens_label");
            if moves == (before == after) {
                out.push(format!("labels {before:?} became {after:?}"));
            }
        }
        if (want == NotFound || want == Hidden) && shown_text(&seen.reply).contains(&lens.marker) {
            out.push(format!("the reply shows the hidden lens's content: {}", seen.reply.brief()));
        }
        out
    }

    /// How `seen` differs from `want`.
    fn judge(&self, tool: &str, who: Who, want: Want, lens: &CellLens, seen: &Observed) -> Vec<String> {
        let Observed { reply, listed, before, after } = seen;
        let (before, after) = (before.as_ref(), after.as_ref());
        let mut out = Vec::new();
        let code = reply.code();
        let expected_code = want.code();
        if code != expected_code {
            out.push(format!("answered {} ({})", code.unwrap_or("success"), reply.brief()));
            return out;
        }
        let shows_lens = match tool {
            "list_lenses" => listed.as_ref().is_some_and(|ids| ids.contains(&lens.id)),
            "search_lenses" => item_ids(&reply.value).contains(&lens.id),
            "search" => reply.value["results"]
                .as_array()
                .is_some_and(|hits| hits.iter().any(|h| h["id"] == format!("lens:{}", lens.id).as_str())),
            "find_and_run_lens" => {
                reply.value["status"] == "ready" && reply.value["lens_id"] == lens.id.as_str()
            }
            _ => false,
        };
        match want {
            Listed if !shows_lens => out.push(format!("the lens is not in the result: {}", reply.brief())),
            Hidden if shows_lens => out.push("the lens is in the result".to_owned()),
            _ => {}
        }
        if want == Hidden && tool == "find_and_run_lens" && reply.value["status"] != "no_match" {
            out.push(format!("status {}, expected no_match", reply.value["status"]));
        }
        let changed = before != after;
        let writes = matches!(
            tool,
            "update_lens" | "set_lens_visibility" | "archive_lens" | "delete_lens" | "restore_lens"
        );
        if want != Want::Ok || !writes {
            if changed {
                out.push("the lens changed".to_owned());
            }
        } else {
            let after_lens = after.map(|(l, _)| l);
            let done = match tool {
                "update_lens" => after_lens.is_some_and(|l| l.title.as_str() == "Renamed note writer"),
                "set_lens_visibility" => {
                    after_lens.is_some_and(|l| Some(l.visibility) != before.map(|(b, _)| b.visibility))
                }
                "archive_lens" => after_lens.is_some_and(|l| l.status == LensStatus::Archived),
                "restore_lens" => after_lens.is_some_and(|l| l.status == LensStatus::Published),
                "delete_lens" => after.is_none(),
                _ => true,
            };
            if !done {
                out.push(format!("the change was not made: {after_lens:?}"));
            }
        }
        if want == Want::Ok && matches!(tool, "create_lens" | "fork_lens") {
            let owner = self.lenser_of(who).to_string();
            if reply.value["lenser_id"] != owner.as_str() {
                out.push(format!("the new lens is owned by {}, not the caller", reply.value["lenser_id"]));
            }
            if tool == "fork_lens" && reply.value["parent_lens_id"] != lens.id.as_str() {
                out.push(format!("the fork's parent is {}", reply.value["parent_lens_id"]));
            }
        }
        out
    }
}

/// Everything a reply shows but the caller's own query, which
/// find_and_run_lens echoes when nothing matched.
fn shown_text(reply: &Reply) -> String {
    let mut shown = reply.value.clone();
    if let Some(o) = shown.as_object_mut() {
        o.remove("query");
    }
    let mut text = shown.to_string();
    for t in reply.texts.iter().skip(1) {
        text.push_str(t);
    }
    text
}

/// What a matrix is about: lenses (tiers private, community, public) or
/// workflows (private, unlisted, public).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Subject {
    Lens,
    Workflow,
}

impl Subject {
    fn table(self) -> &'static [(&'static str, [[Want; 3]; 3])] {
        match self {
            Subject::Lens => MATRIX,
            Subject::Workflow => WORKFLOW_MATRIX,
        }
    }
    fn tiers(self) -> [&'static str; 3] {
        match self {
            Subject::Lens => TIERS,
            Subject::Workflow => WORKFLOW_TIERS,
        }
    }
    /// The tool groups whose every tool is in its matrix.
    fn groups(self) -> &'static [&'static str] {
        match self {
            Subject::Lens => &["lens", "search"],
            Subject::Workflow => &["workflow", "search"],
        }
    }
    /// What a cell's row is called.
    fn noun(self) -> &'static str {
        match self {
            Subject::Lens => "lens",
            Subject::Workflow => "workflow",
        }
    }
}

async fn matrix(kind: StoreKind, subject: Subject) {
    let started = Instant::now();
    let store = TestStore::open(kind).await;
    let mut m = Matrix {
        store: &store,
        owner: LenserId::new(),
        other: LenserId::new(),
        service_lenser: LenserId::new(),
        next_marker: 0,
    };
    let (noun, table) = (subject.noun(), subject.table());
    let mut mismatches = Vec::new();
    let mut cells = 0;
    // Over HTTP every caller signs in as a lenser: there is no Service.
    let callers = if kind == StoreKind::Http { 2 } else { 3 };
    // Visibility tiers are a matter of the subject: the matrix covers every
    // tool of its groups (search and fetch in both, as they read either).
    let tools: Vec<_> =
        store.catalog().tools().iter().filter(|t| subject.groups().contains(&t.group.id)).collect();
    for tool in &tools {
        let Some((_, row)) = table.iter().find(|(name, _)| *name == tool.name) else {
            mismatches.push(format!("{}: no row in the {noun} matrix", tool.name));
            continue;
        };
        for (who, wants) in WHO.iter().zip(row).take(callers) {
            for (tier, want) in subject.tiers().iter().zip(wants) {
                cells += 1;
                let problems = match subject {
                    Subject::Lens => m.cell(tool.name, *who, tier, *want).await,
                    Subject::Workflow => m.workflow_cell(tool.name, *who, tier, *want).await,
                };
                for problem in problems {
                    mismatches.push(format!(
                        "{} by {who:?} on a {tier} {noun} (want {want:?}): {problem}",
                        tool.name
                    ));
                }
            }
        }
    }
    for (name, _) in table {
        if store.catalog().get(name).is_none() {
            mismatches.push(format!("{name}: in the {noun} matrix but not in the catalog"));
        }
    }
    println!(
        "{noun} visibility matrix on {}: {cells} cells ({} tools × {callers} principals × 3 tiers), {} mismatches, {:.1}s",
        kind.as_str(),
        tools.len(),
        mismatches.len(),
        started.elapsed().as_secs_f64()
    );
    assert!(
        mismatches.is_empty(),
        "{} mismatches on {}:\n{}",
        mismatches.len(),
        kind.as_str(),
        mismatches.join("\n")
    );
    assert_eq!(cells, tools.len() * callers * 3);
}

#[tokio::test]
async fn visibility_matrix_on_the_memory_store() {
    matrix(StoreKind::Memory, Subject::Lens).await;
}

#[tokio::test]
async fn visibility_matrix_on_sqlite() {
    matrix(StoreKind::Sqlite, Subject::Lens).await;
}

/// The same matrix for two users A and B, each with a bearer token of their
/// own, over a real lf-mcp-http.
#[tokio::test]
async fn visibility_matrix_over_http() {
    matrix(StoreKind::Http, Subject::Lens).await;
}

// ---------------------------------------------------------------- property

/// The callers of a sequence: three lensers and the Service principal.
const ACTORS: usize = 4;
const SERVICE: u8 = 3;

#[derive(Clone, Debug)]
enum Action {
    Create {
        who: u8,
        tier: u8,
    },
    Update {
        who: u8,
        lens: u8,
        tier: Option<u8>,
        new_body: bool,
    },
    SetVisibility {
        who: u8,
        lens: u8,
        tier: u8,
    },
    Fork {
        who: u8,
        lens: u8,
        tier: u8,
        new_body: bool,
    },
    Archive {
        who: u8,
        lens: u8,
    },
    Restore {
        who: u8,
        lens: u8,
    },
    Delete {
        who: u8,
        lens: u8,
    },
    /// One of the by-id reads: get, versions, a version, extract, validate, run, diff.
    Read {
        who: u8,
        lens: u8,
        tool: u8,
    },
    List {
        who: u8,
        include_archived: bool,
    },
    Search {
        who: u8,
        lens: u8,
    },
    FindAndRun {
        who: u8,
        lens: u8,
    },
}

fn action() -> impl Strategy<Value = Action> {
    let who = 0..ACTORS as u8;
    let tier = 0..3u8;
    prop_oneof![
        2 => (who.clone(), tier.clone()).prop_map(|(who, tier)| Action::Create { who, tier }),
        2 => (who.clone(), any::<u8>(), proptest::option::of(tier.clone()), any::<bool>())
            .prop_map(|(who, lens, tier, new_body)| Action::Update { who, lens, tier, new_body }),
        3 => (who.clone(), any::<u8>(), tier.clone())
            .prop_map(|(who, lens, tier)| Action::SetVisibility { who, lens, tier }),
        2 => (who.clone(), any::<u8>(), tier.clone(), any::<bool>())
            .prop_map(|(who, lens, tier, new_body)| Action::Fork { who, lens, tier, new_body }),
        1 => (who.clone(), any::<u8>()).prop_map(|(who, lens)| Action::Archive { who, lens }),
        1 => (who.clone(), any::<u8>()).prop_map(|(who, lens)| Action::Restore { who, lens }),
        1 => (who.clone(), any::<u8>()).prop_map(|(who, lens)| Action::Delete { who, lens }),
        6 => (who.clone(), any::<u8>(), 0..7u8).prop_map(|(who, lens, tool)| Action::Read { who, lens, tool }),
        2 => (who.clone(), any::<bool>()).prop_map(|(who, include_archived)| Action::List { who, include_archived }),
        2 => (who.clone(), any::<u8>()).prop_map(|(who, lens)| Action::Search { who, lens }),
        2 => (who, any::<u8>()).prop_map(|(who, lens)| Action::FindAndRun { who, lens }),
    ]
}

/// One random sequence: its store, callers, lenses and markers.
struct World {
    store: TestStore,
    lensers: [LenserId; ACTORS],
    /// Every lens created, deleted ones included, oldest first, with the
    /// marker its title carries (a fork carries its source's).
    lenses: Vec<(String, String)>,
    /// Every marker issued, including those of refused calls.
    markers: Vec<String>,
}

impl World {
    fn principal(&self, who: u8) -> Principal {
        let id = self.lensers[who as usize];
        if who == SERVICE { Principal::Service { acting_as: Some(id) } } else { lenser(id) }
    }

    fn fresh_marker(&mut self) -> String {
        let m = format!("zq{:05}zq", self.markers.len());
        self.markers.push(m.clone());
        m
    }

    fn lens(&self, i: u8) -> &(String, String) {
        &self.lenses[i as usize % self.lenses.len()]
    }

    /// The call `action` makes: caller, tool, arguments, and the marker of
    /// the lens it creates, if it creates one.
    fn request(&mut self, action: &Action) -> (u8, &'static str, Value, Option<String>) {
        let tier = |t: u8| TIERS[t as usize % 3];
        match *action {
            Action::Create { who, tier: t } => {
                let m = self.fresh_marker();
                let args = json!({
                    "title": format!("Lens {m}"), "template_body": body(&m),
                    "description": format!("About {m}"), "visibility": tier(t),
                });
                (who, "create_lens", args, Some(m))
            }
            Action::Update { who, lens, tier: t, new_body } => {
                let mut args = json!({"lens_id": self.lens(lens).0});
                if let Some(t) = t {
                    args["visibility"] = json!(tier(t));
                }
                if new_body {
                    args["template_body"] = json!(body(&self.fresh_marker()));
                }
                (who, "update_lens", args, None)
            }
            Action::SetVisibility { who, lens, tier: t } => (
                who,
                "set_lens_visibility",
                json!({"lens_id": self.lens(lens).0, "visibility": tier(t)}),
                None,
            ),
            Action::Fork { who, lens, tier: t, new_body } => {
                let (id, marker) = self.lens(lens).clone();
                let mut args = json!({"source_lens_id": id, "visibility": tier(t)});
                if new_body {
                    args["template_body"] = json!(body(&self.fresh_marker()));
                }
                (who, "fork_lens", args, Some(marker))
            }
            Action::Archive { who, lens } => {
                (who, "archive_lens", json!({"lens_id": self.lens(lens).0}), None)
            }
            Action::Restore { who, lens } => {
                (who, "restore_lens", json!({"lens_id": self.lens(lens).0}), None)
            }
            Action::Delete { who, lens } => {
                (who, "delete_lens", json!({"lens_id": self.lens(lens).0, "confirm": true}), None)
            }
            Action::Read { who, lens, tool } => {
                let id = &self.lens(lens).0;
                let (name, args) = match tool % 7 {
                    0 => ("get_lens", json!({"lens_id": id})),
                    1 => ("list_lens_versions", json!({"lens_id": id})),
                    2 => ("get_lens_version", json!({"lens_id": id, "semver": "1.0.0"})),
                    3 => ("extract_lens_params", json!({"lens_id": id})),
                    4 => ("validate_lens_params", json!({"lens_id": id, "values": {"Topic": "x"}})),
                    // Tone only: a MISSING_PARAMS names the lens too.
                    5 => ("run_lens", json!({"lens_id": id, "param_values": {"Tone": "dry"}})),
                    _ => ("diff_lens_versions", json!({"lens_id": id, "from": "1.0.0"})),
                };
                (who, name, args, None)
            }
            Action::List { who, include_archived } => {
                (who, "list_lenses", json!({"limit": 100, "include_archived": include_archived}), None)
            }
            Action::Search { who, lens } => {
                (who, "search_lenses", json!({"query": self.lens(lens).1, "limit": 100}), None)
            }
            Action::FindAndRun { who, lens } => {
                (who, "find_and_run_lens", json!({"query": self.lens(lens).1}), None)
            }
        }
    }

    /// Markers of lenses `me` may read: its own and every non-private one,
    /// in any of their versions.
    async fn readable_markers(&self, me: LenserId) -> HashSet<String> {
        let store = self.store.store().as_ref();
        let mut text = String::new();
        for lens in all_lenses(store, Reach::Everything).await {
            if lens.owner != me && lens.visibility == lf_lens::Visibility::Private {
                continue;
            }
            text.push_str(lens.title.as_str());
            text.push_str(lens.description.as_ref().map_or("", |d| d.as_str()));
            for v in all_versions(store, &lens).await {
                text.push_str(v.body.as_str());
                text.push_str(&v.changelog);
            }
        }
        self.markers.iter().filter(|m| text.contains(m.as_str())).cloned().collect()
    }
}

async fn run_sequence(kind: StoreKind, actions: Vec<Action>) -> Result<(), String> {
    let mut w = World {
        store: TestStore::open(kind).await,
        lensers: [LenserId::new(), LenserId::new(), LenserId::new(), LenserId::new()],
        lenses: Vec::new(),
        markers: Vec::new(),
    };
    // Every sequence starts with lenses of each tier by three lensers.
    let seeds = [(0, 0), (0, 1), (1, 0), (1, 2), (2, 1)].map(|(who, tier)| Action::Create { who, tier });
    for (step, action) in seeds.iter().chain(&actions).enumerate() {
        let (who, tool, args, new_marker) = w.request(action);
        let server = w.store.server(w.principal(who));
        let reply = call(&server, tool, args).await.map_err(|e| format!("step {step} {action:?}: {e}"))?;
        if reply.code() == Some("INTERNAL") {
            return Err(format!("step {step} {action:?}: INTERNAL"));
        }
        if tool == "create_lens" && reply.is_error {
            return Err(format!("step {step} {action:?}: {}", reply.brief()));
        }
        if let (Some(marker), false) = (new_marker, reply.is_error) {
            w.lenses.push((reply.str("id").to_owned(), marker));
        }
        if who == SERVICE {
            continue;
        }
        let allowed = w.readable_markers(w.lensers[who as usize]).await;
        let haystack = shown_text(&reply);
        for m in w.markers.iter().filter(|m| !allowed.contains(*m)) {
            if haystack.contains(m.as_str()) {
                return Err(format!(
                    "step {step}: {action:?} ({tool}) showed lenser {who} the content {m} of a lens it may not read: {}",
                    reply.brief()
                ));
            }
        }
    }
    Ok(())
}

fn no_private_leaks(kind: StoreKind, cases: u32) {
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("a runtime");
    let config = Config { cases, failure_persistence: None, ..Config::default() };
    let mut runner = TestRunner::new(config);
    let strategy = proptest::collection::vec(action(), 1..30);
    let result = runner
        .run(&strategy, |actions| rt.block_on(run_sequence(kind, actions)).map_err(TestCaseError::fail));
    if let Err(e) = result {
        panic!("a lenser read another's private lens on {}: {e}", kind.as_str());
    }
}

#[test]
fn no_lenser_reads_another_private_lens_on_the_memory_store() {
    no_private_leaks(StoreKind::Memory, 128);
}

#[test]
fn no_lenser_reads_another_private_lens_on_sqlite() {
    no_private_leaks(StoreKind::Sqlite, 24);
}

/// The version history is part of a lens's content: an old template stays
/// private with the lens.
#[tokio::test]
async fn old_versions_stay_private() {
    let store = TestStore::open(StoreKind::Memory).await;
    let (a, b) = (LenserId::new(), LenserId::new());
    let (sa, sb) = (Caller::from(store.server(lenser(a))), Caller::from(store.server(lenser(b))));
    let lens = must(
        &sa,
        "create_lens",
        json!({"title": "Old", "template_body": body("zqoldzq"), "visibility": "private"}),
    )
    .await;
    let id = lens["id"].as_str().expect("an id");
    must(&sa, "update_lens", json!({"lens_id": id, "template_body": body("zqnewzq")})).await;
    let head = store
        .store()
        .get_version(Reach::Lenser(a), LensId::parse("lens_id", id).expect("an id"), VersionSelector::Head)
        .await;
    assert_eq!(head.expect("the owner reads the head").semver.to_string(), "1.0.1");
    for (tool, args) in [
        ("get_lens_version", json!({"lens_id": id, "semver": "1.0.0"})),
        ("diff_lens_versions", json!({"lens_id": id, "from": "1.0.0"})),
    ] {
        let reply = call(&sb, tool, args.clone()).await.expect("a tool result");
        assert_eq!(reply.code(), Some("NOT_FOUND"), "{tool}");
        assert!(!reply.contains("zqoldzq") && !reply.contains("zqnewzq"), "{tool}");
        let own = call(&sa, tool, args).await.expect("a tool result");
        assert!(!own.is_error && own.contains("zqoldzq"), "{tool}: the owner reads the old version");
    }
}

// ---------------------------------------------------------------- workflows

/// Tiers of a workflow, in the order of each row's inner arrays.
const WORKFLOW_TIERS: [&str; 3] = ["private", "unlisted", "public"];

/// Workflow tool → [owner A, other lenser B, Service] × [private, unlisted, public].
#[rustfmt::skip]
const WORKFLOW_MATRIX: &[(&str, [[Want; 3]; 3])] = &[
    //                               A: priv unl pub          B: priv      unl        pub          Service
    ("list_workflows",              [[Listed, Listed, Listed], [Hidden,   Hidden,    Listed],    [Listed, Listed, Listed]]),
    ("get_workflow",                [[OK, OK, OK],             [NotFound, OK,        OK],        [OK, OK, OK]]),
    ("get_workflow_graph",          [[OK, OK, OK],             [NotFound, OK,        OK],        [OK, OK, OK]]),
    ("describe_workflow",           [[OK, OK, OK],             [NotFound, OK,        OK],        [OK, OK, OK]]),
    // The node catalog is everyone's: it shows nothing of any workflow.
    ("list_workflow_node_types",    [[OK, OK, OK],             [OK,       OK,        OK],        [OK, OK, OK]]),
    ("describe_workflow_node_type", [[OK, OK, OK],             [OK,       OK,        OK],        [OK, OK, OK]]),
    ("validate_workflow",           [[OK, OK, OK],             [NotFound, OK,        OK],        [OK, OK, OK]]),
    ("create_workflow",             [[OK, OK, OK],             [OK,       OK,        OK],        [OK, OK, OK]]),
    ("update_workflow",             [[OK, OK, OK],             [NotFound, Forbidden, Forbidden], [OK, OK, OK]]),
    ("archive_workflow",            [[OK, OK, OK],             [NotFound, Forbidden, Forbidden], [OK, OK, OK]]),
    // On a workflow whose trigger is a webhook's: its secret is its owner's.
    ("rotate_webhook_secret",       [[OK, OK, OK],             [NotFound, Forbidden, Forbidden], [OK, OK, OK]]),
    // Each lists their own: A's ref is A's alone.
    ("list_connections",            [[OK, OK, OK],             [OK,       OK,        OK],        [OK, OK, OK]]),
    ("search",                      [[Listed, Listed, Listed], [Hidden,   Hidden,    Listed],    [Listed, Listed, Listed]]),
    ("fetch",                       [[OK, OK, OK],             [NotFound, OK,        OK],        [OK, OK, OK]]),
    // The run tools, on a run A started: whoever reads the workflow may
    // start one (with a saved connection of their own of the ref its step
    // names) and lists its runs, but A's run is A's (its starter's and the
    // workflow owner's): to B it does not exist, as the workflow has no
    // public runs. Only A and the operator control A's run.
    ("run_workflow",                [[OK, OK, OK],             [NotFound, OK,        OK],        [OK, OK, OK]]),
    ("get_workflow_run_status",     [[OK, OK, OK],             [NotFound, NotFound,  NotFound],  [OK, OK, OK]]),
    ("get_workflow_run_logs",       [[OK, OK, OK],             [NotFound, NotFound,  NotFound],  [OK, OK, OK]]),
    ("summarize_workflow",          [[OK, OK, OK],             [NotFound, NotFound,  NotFound],  [OK, OK, OK]]),
    ("list_workflow_runs",          [[Listed, Listed, Listed], [NotFound, Hidden,    Hidden],    [Listed, Listed, Listed]]),
    ("retry_workflow",              [[OK, OK, OK],             [NotFound, NotFound,  NotFound],  [OK, OK, OK]]),
    ("cancel_workflow_run",         [[OK, OK, OK],             [NotFound, NotFound,  NotFound],  [OK, OK, OK]]),
];

/// The tools of the workflow matrix that act on a run: their cells run in
/// [`Matrix::run_cell`].
const RUN_TOOLS: &[&str] = &[
    "run_workflow",
    "get_workflow_run_status",
    "get_workflow_run_logs",
    "summarize_workflow",
    "list_workflow_runs",
    "retry_workflow",
    "cancel_workflow_run",
];

/// A fresh workflow of A's for one cell: version 1 and version 2, its title
/// and its saved connection's ref carrying `marker`.
struct CellWorkflow {
    id: String,
    marker: String,
}

impl Matrix<'_> {
    async fn cell_workflow(&mut self, tier: &str) -> CellWorkflow {
        let marker = self.marker();
        let connection = format!("slack-{marker}");
        self.store.save_connection(self.owner, "slack", &connection).await;
        let a = self.caller(Who::Owner).await;
        let (steps, connections) = workflow_steps(&connection);
        let created = must(
            &a,
            "create_workflow",
            json!({"title": format!("Flow {marker}"), "visibility": tier, "steps": steps, "connections": connections}),
        )
        .await;
        let id = created["id"].as_str().expect("an id").to_owned();
        let (steps, connections) = workflow_steps(&connection);
        must(&a, "update_workflow", json!({"workflow_id": id, "steps": steps, "connections": connections}))
            .await;
        CellWorkflow { id, marker }
    }

    /// The workflow and how many versions it has, as stored.
    async fn workflow_snapshot(&self, id: &str) -> Option<(lf_workflow::Workflow, usize)> {
        let id = lf_core::WorkflowId::parse("workflow_id", id).expect("a workflow id");
        let store = self.store.workflows();
        let w = store.get_workflow(Reach::Everything, id).await.ok()?;
        Some((w, store.list_versions(Reach::Everything, id).await.ok()?.len()))
    }

    /// Every id `list_workflows` shows the caller, paged through.
    async fn listed_workflows(&self, server: &Caller) -> Result<(Reply, Vec<String>), String> {
        let mut ids = Vec::new();
        loop {
            let reply = call(server, "list_workflows", json!({"limit": 100, "offset": ids.len()})).await?;
            if reply.is_error {
                return Ok((reply, ids));
            }
            let page = item_ids(&reply.value);
            let more = reply.value["has_more"] == true && !page.is_empty();
            ids.extend(page);
            if !more {
                return Ok((reply, ids));
            }
        }
    }

    /// Every connection ref `list_connections` shows the caller, paged
    /// through: the matrix saves one a cell, more than a page.
    async fn listed_connections(&self, server: &Caller) -> Result<(Reply, Vec<String>), String> {
        let mut refs = Vec::new();
        loop {
            let reply = call(server, "list_connections", json!({"limit": 100, "offset": refs.len()})).await?;
            let page: Vec<String> = reply.value["items"]
                .as_array()
                .map(|items| {
                    items.iter().filter_map(|c| c["connection_ref"].as_str().map(str::to_owned)).collect()
                })
                .unwrap_or_default();
            let more = reply.value["has_more"] == true && !page.is_empty();
            refs.extend(page);
            if reply.is_error || !more {
                return Ok((reply, refs));
            }
        }
    }

    /// Runs one cell of the workflow matrix; the mismatches found, if any.
    async fn workflow_cell(&mut self, tool: &str, who: Who, tier: &str, want: Want) -> Vec<String> {
        if RUN_TOOLS.contains(&tool) {
            return self.run_cell(tool, who, tier, want).await;
        }
        let w = self.cell_workflow(tier).await;
        if tool == "rotate_webhook_secret" {
            let (mut steps, connections) = workflow_steps(&format!("slack-{}", w.marker));
            steps[0]["node_type"] = json!("webhook_trigger");
            let a = self.caller(Who::Owner).await;
            must(
                &a,
                "update_workflow",
                json!({"workflow_id": w.id, "steps": steps, "connections": connections}),
            )
            .await;
        }
        let server = self.caller(who).await;
        let before = self.workflow_snapshot(&w.id).await;
        let id = w.id.clone();
        let other_tier = if tier == "public" { "private" } else { "public" };
        let args = match tool {
            "get_workflow" | "describe_workflow" => json!({"workflow_id": id}),
            "get_workflow_graph" | "validate_workflow" => json!({"workflow_id": id, "version": 1}),
            "list_workflow_node_types" => json!({}),
            "describe_workflow_node_type" => json!({"type": "slack_notify"}),
            "create_workflow" => json!({"title": format!("Created {}", w.marker), "visibility": tier}),
            "update_workflow" => {
                json!({"workflow_id": id, "title": "Renamed flow", "visibility": other_tier})
            }
            "archive_workflow" => json!({"workflow_id": id, "confirm": true}),
            "rotate_webhook_secret" => json!({"workflow_id": id}),
            "list_workflows" => json!({}),
            "list_connections" => json!({"limit": 100}),
            "search" => json!({"query": w.marker}),
            "fetch" => json!({"id": format!("workflow:{id}")}),
            _ => return vec![format!("no arguments for {tool}: add them to Matrix::workflow_cell")],
        };
        let answer = match tool {
            "list_workflows" => self.listed_workflows(&server).await.map(|(r, ids)| (r, Some(ids))),
            "list_connections" => self.listed_connections(&server).await.map(|(r, refs)| (r, Some(refs))),
            "search" => call(&server, tool, args).await.map(|r| {
                let hits = r.value["results"].as_array().cloned().unwrap_or_default();
                let ids = hits
                    .iter()
                    .filter_map(|h| h["id"].as_str()?.strip_prefix("workflow:").map(str::to_owned));
                let ids = ids.collect();
                (r, Some(ids))
            }),
            _ => call(&server, tool, args).await.map(|r| (r, None)),
        };
        let (reply, listed) = match answer {
            Ok(a) => a,
            Err(e) => return vec![e],
        };
        let after = self.workflow_snapshot(&w.id).await;
        let mut out = Vec::new();
        let code = reply.code();
        let expected = want.code();
        if code != expected {
            return vec![format!("answered {} ({})", code.unwrap_or("success"), reply.brief())];
        }
        let shows = listed.as_ref().is_some_and(|ids| ids.contains(&w.id));
        match want {
            Listed if !shows => out.push(format!("the workflow is not listed: {}", reply.brief())),
            Hidden if shows => out.push("the workflow is listed".to_owned()),
            _ => {}
        }
        let shown = shown_text(&reply);
        if matches!(want, NotFound | Hidden) && shown.contains(&w.marker) {
            out.push(format!("the reply shows the hidden workflow: {}", reply.brief()));
        }
        // Only those who may change a workflow read its connection refs.
        if who == Who::Other && tool != "create_workflow" && shown.contains(&format!("slack-{}", w.marker)) {
            out.push(format!("the reply shows the owner's connection ref: {}", reply.brief()));
        }
        let lists_ref = listed.as_ref().is_some_and(|refs| refs.contains(&format!("slack-{}", w.marker)));
        if tool == "list_connections" && (who == Who::Owner) != lists_ref {
            out.push(format!("{who:?} lists A's connection ref: {}", reply.brief()));
        }
        let secret = reply.value["webhook"]["secret"].as_str().is_some_and(|s| s.starts_with("lfwh_"));
        if tool == "rotate_webhook_secret" && secret != (want == Want::Ok) {
            out.push(format!("the answer's secret does not fit {want:?}: {}", reply.brief()));
        }
        let writes = matches!(tool, "update_workflow" | "archive_workflow");
        if want == Want::Ok && writes {
            let done = match tool {
                "update_workflow" => after.as_ref().is_some_and(|(a, _)| {
                    a.title.as_str() == "Renamed flow"
                        && Some(a.visibility) != before.as_ref().map(|(b, _)| b.visibility)
                }),
                _ => after.as_ref().is_some_and(|(a, _)| a.archived_at.is_some()),
            };
            if !done {
                out.push(format!("the change was not made: {after:?}"));
            }
        } else if before != after {
            out.push("the workflow changed".to_owned());
        }
        if want == Want::Ok
            && tool == "create_workflow"
            && reply.value["lenser_id"] != self.lenser_of(who).to_string().as_str()
        {
            out.push(format!("the new workflow is owned by {}, not the caller", reply.value["lenser_id"]));
        }
        if want == Want::Ok && tool == "get_workflow_graph" {
            let refs = reply.value["nodes"][2]["connector"]["connection_ref"].clone();
            let hidden = who == Who::Other;
            if (refs == "[redacted]") != hidden || reply.value["connection_refs_redacted"] != hidden {
                out.push(format!("connection ref {refs} for {who:?}"));
            }
            if reply.value["nodes"][1]["parameters"]["Topic"] != "tides" {
                out.push("the lens step's parameter assignments are not shown".to_owned());
            }
        }
        out
    }
}

/// The runs of a workflow, with their node results, as stored.
async fn runs_of(store: &TestStore, workflow: &str) -> Vec<Run> {
    let id = lf_core::WorkflowId::parse("workflow_id", workflow).expect("a workflow id");
    lf_tests::all_runs(store.runs().as_ref(), id).await
}

impl Matrix<'_> {
    /// Runs one cell of a run tool on a run of a fresh workflow of A's,
    /// started by A with the cell's marker in its inputs (and failed, for
    /// retry_workflow); the mismatches found, if any.
    async fn run_cell(&mut self, tool: &str, who: Who, tier: &str, want: Want) -> Vec<String> {
        let w = self.cell_workflow(tier).await;
        let a = self.caller(Who::Owner).await;
        let started =
            must(&a, "run_workflow", json!({"workflow_id": w.id, "inputs": {"note": w.marker}})).await;
        let run = started["id"].as_str().expect("a run id").to_owned();
        if self.store.runs_itself() {
            // The server's runner takes it to its pause: wait for that, so
            // that the cell sees one state.
            let id = lf_workflow::run::RunId::parse("run_id", &run).expect("a run id");
            let mut paused = false;
            for _ in 0..500 {
                let r = self.store.runs().load_run(id).await.expect("the run");
                if r.state.slots.values().any(|n| n.wake_at.is_some()) {
                    paused = true;
                    break;
                }
                tokio::time::sleep(std::time::Duration::from_millis(10)).await;
            }
            assert!(paused, "the server's runner did not take run {run} to its pause");
        }
        if tool == "retry_workflow" {
            self.store.end_run(&run, RunStatus::Failed).await;
        }
        if tool == "run_workflow" && who != Who::Owner {
            // A run opens its starter's saved connections, never A's: the
            // caller saves one of the same ref to run A's workflow.
            self.store.save_connection(self.lenser_of(who), "slack", &format!("slack-{}", w.marker)).await;
        }
        let before = runs_of(self.store, &w.id).await;
        let server = self.caller(who).await;
        let args = match tool {
            "run_workflow" | "list_workflow_runs" => json!({"workflow_id": w.id}),
            "cancel_workflow_run" => json!({"run_id": run, "confirm": true}),
            _ => json!({"run_id": run}),
        };
        let reply = match call(&server, tool, args).await {
            Ok(r) => r,
            Err(e) => return vec![e],
        };
        let after = runs_of(self.store, &w.id).await;
        let code = reply.code();
        let expected = want.code();
        if code != expected {
            return vec![format!("answered {} ({})", code.unwrap_or("success"), reply.brief())];
        }
        let mut out = Vec::new();
        if want == NotFound && shown_text(&reply).contains(&w.marker) {
            out.push(format!("the reply shows the hidden run: {}", reply.brief()));
        }
        let me = self.lenser_of(who).to_string();
        let new_runs: Vec<&Run> = after.iter().filter(|r| !before.iter().any(|b| b.id == r.id)).collect();
        let changed = match (want, tool) {
            (Want::Ok, "run_workflow") => {
                let made = new_runs
                    .iter()
                    .any(|r| r.id.to_string() == reply.str("id") && r.started_by.to_string() == me);
                if !made || after.len() != before.len() + 1 {
                    out.push(format!("no run started by the caller: {}", reply.brief()));
                }
                true
            }
            (Want::Ok, "retry_workflow") => {
                let made = new_runs.iter().any(|r| {
                    r.parent_run_id.map(|p| p.to_string()) == Some(run.clone())
                        && r.started_by.to_string() == me
                });
                if !made || after.len() != before.len() + 1 {
                    out.push(format!("no retry started by the caller: {}", reply.brief()));
                }
                true
            }
            (Want::Ok, "cancel_workflow_run") => {
                let asked = after
                    .iter()
                    .find(|r| r.id.to_string() == run)
                    .and_then(|r| r.cancel_requested_by.clone());
                if asked.as_deref() != Some(me.as_str()) {
                    out.push(format!("the cancel was not recorded as the caller's: {asked:?}"));
                }
                true
            }
            _ => false,
        };
        if !changed && before != after {
            out.push("the workflow's runs changed".to_owned());
        }
        match (want, tool) {
            (Listed, _) if !item_ids(&reply.value).contains(&run) => {
                out.push(format!("the run is not listed: {}", reply.brief()));
            }
            (Hidden, _)
                if item_ids(&reply.value).contains(&run) || shown_text(&reply).contains(&w.marker) =>
            {
                out.push("the run is listed".to_owned())
            }
            (Want::Ok, "get_workflow_run_status") if reply.str("id") != run => {
                out.push(format!("another run's status: {}", reply.brief()));
            }
            (Want::Ok, "get_workflow_run_logs")
                if reply.value["run"]["metadata"]["inputs"]["note"] != w.marker.as_str() =>
            {
                out.push(format!("the log does not show the run's inputs: {}", reply.brief()));
            }
            (Want::Ok, "summarize_workflow") if reply.str("run_id") != run => {
                out.push(format!("another run's summary: {}", reply.brief()));
            }
            _ => {}
        }
        out
    }
}

/// A trigger, a lens-free AI step (so that no lens tier is involved) and a
/// Slack post through `connection`; the second step assigns `Topic`.
fn workflow_steps(connection: &str) -> (Value, Value) {
    let steps = json!([
        {"key": "start", "kind": "trigger", "name": "Start", "node_type": "manual_trigger"},
        {"key": "write", "kind": "tool", "name": "Write", "node_type": "prompt_template",
         "parameters": {"Topic": "tides"}, "config": {"template": "A note about [[Topic]]."}},
        {"key": "post", "kind": "tool", "name": "Post", "node_type": "slack_notify", "config": {"text": "[[input]]"},
         "connector": {"provider": "slack", "connection_ref": connection}},
        // Where a run waits, so that a server that runs it (over HTTP) holds
        // it still while a cell looks at it.
        {"key": "pause", "kind": "tool", "name": "Pause", "node_type": "wait_delay", "config": {"delay_ms": 600_000}}
    ]);
    let connections = json!([
        {"from_step": "start", "to_step": "pause", "input_parameter": "input"},
        {"from_step": "pause", "to_step": "write", "input_parameter": "input"},
        {"from_step": "write", "output_key": "text", "to_step": "post", "input_parameter": "input"}
    ]);
    (steps, connections)
}

#[tokio::test]
async fn workflow_visibility_matrix_on_the_memory_store() {
    matrix(StoreKind::Memory, Subject::Workflow).await;
}

#[tokio::test]
async fn workflow_visibility_matrix_on_sqlite() {
    matrix(StoreKind::Sqlite, Subject::Workflow).await;
}

/// The workflow matrix for two users A and B with bearer tokens of their
/// own, over a real lf-mcp-http on the SQLite file.
#[tokio::test]
async fn workflow_visibility_matrix_over_http() {
    matrix(StoreKind::Http, Subject::Workflow).await;
}

/// A lens step may name only a lens its author can read: B's workflow over
/// each of A's lenses, by tier.
#[tokio::test]
async fn a_lens_step_names_only_a_readable_lens() {
    let store = TestStore::open(StoreKind::Memory).await;
    let (a, b) = (LenserId::new(), LenserId::new());
    let (sa, sb) = (Caller::from(store.server(lenser(a))), Caller::from(store.server(lenser(b))));
    for (tier, readable) in [("private", false), ("community", true), ("public", true)] {
        let lens = must(
            &sa,
            "create_lens",
            json!({"title": "Notes", "template_body": body("zqlenszq"), "visibility": tier}),
        )
        .await;
        let blueprint = |title: &str| {
            json!({"title": title, "steps": [
                {"key": "start", "kind": "trigger", "name": "Start", "node_type": "manual_trigger"},
                {"key": "note", "kind": "lens", "name": "Note", "lens_id": lens["id"], "parameters": {"Topic": "tides"}}
            ], "connections": [{"from_step": "start", "to_step": "note", "input_parameter": "Tone"}]})
        };
        let own = call(&sa, "create_workflow", blueprint("A's")).await.expect("a tool result");
        assert!(!own.is_error, "A uses A's {tier} lens: {}", own.brief());
        let reply = call(&sb, "create_workflow", blueprint("B's")).await.expect("a tool result");
        if readable {
            assert!(!reply.is_error, "B uses A's {tier} lens: {}", reply.brief());
        } else {
            assert_eq!(reply.code(), Some("NOT_FOUND"), "B names A's private lens: {}", reply.brief());
            assert!(!reply.contains("zqlenszq"));
        }
    }
    let listed = all_workflows_of(&store, b).await;
    assert_eq!(listed, 2, "B's refused workflow was not written");
}

async fn all_workflows_of(store: &TestStore, who: LenserId) -> usize {
    lf_tests::all_workflows(store.workflows().as_ref(), Reach::Everything)
        .await
        .iter()
        .filter(|w| w.owner == who)
        .count()
}

// ---------------------------------------------------------------- agents

/// What someone is to the agent of a cell: its owner A, a co-owner, an
/// operator, a stranger (someone else entirely), or the Service principal.
const AGENT_ROLES: [&str; 5] = ["owner", "co_owner", "operator", "stranger", "service"];

/// Want::Forbidden for a lenser who is nothing: PERMISSION_DENIED, which
/// `start_agent_team_run` answers every lenser (the service role only).
const DENIED: Want = Want::Forbidden;

/// Every Agent tool but `create_ai_lenser` (no one's agent yet) × who the
/// caller is to the agent, from lf-agent's roles table: a stranger never
/// learns the agent exists.
const AGENT_MATRIX: &[(&str, [Want; 5])] = &[
    ("list_ai_lensers", [Listed, Listed, Listed, Hidden, Listed]),
    ("get_ai_lenser", [OK, OK, OK, NotFound, OK]),
    ("list_agent_tools", [OK, OK, OK, NotFound, OK]),
    ("list_agent_run_events", [OK, OK, OK, NotFound, OK]),
    ("list_agent_actions", [OK, OK, OK, NotFound, OK]),
    ("update_ai_lenser", [OK, OK, Forbidden, NotFound, OK]),
    ("assign_agent_tool", [OK, OK, Forbidden, NotFound, OK]),
    ("run_agent_action", [OK, OK, OK, NotFound, OK]),
    ("start_agent_team_run", [DENIED, DENIED, DENIED, DENIED, OK]),
    ("archive_ai_lenser", [OK, Forbidden, Forbidden, NotFound, OK]),
    ("revoke_agent_tool", [OK, OK, Forbidden, NotFound, OK]),
    ("cancel_agent_run", [OK, OK, OK, NotFound, OK]),
    ("set_ai_lenser_member", [OK, Forbidden, Forbidden, NotFound, OK]),
    ("decide_agent_approval", [OK, OK, Forbidden, NotFound, OK]),
];

/// One cell's agent: A's, with a co-owner and an operator, granted
/// get_lens, with a team run awaiting approval and a private lens of A's.
struct CellAgent {
    agent: String,
    team_run: String,
    workflow: String,
    lens: String,
    people: [LenserId; 4],
}

async fn cell_agent(store: &TestStore, n: usize) -> CellAgent {
    let people = [LenserId::new(), LenserId::new(), LenserId::new(), LenserId::new()];
    let a = store.caller(lenser(people[0])).await;
    let created =
        must(&a, "create_ai_lenser", json!({"handle": format!("cell_bot_{n}"), "display_name": "Cell bot"}))
            .await;
    let agent = created["ai_lenser_id"].as_str().unwrap().to_owned();
    for (who, role) in [(people[1], "co_owner"), (people[2], "operator")] {
        must(
            &a,
            "set_ai_lenser_member",
            json!({"ai_lenser_id": agent, "lenser_id": who.to_string(), "role": role}),
        )
        .await;
    }
    must(&a, "assign_agent_tool", json!({"ai_lenser_id": agent, "tool_id": "get_lens"})).await;
    let lens = must(
        &a,
        "create_lens",
        json!({"title": format!("Cell notes {n}"), "template_body": body("agent"), "visibility": "private"}),
    )
    .await;
    let workflow = must(
        &a,
        "create_workflow",
        json!({"title": "Cell flow", "visibility": "private",
            "steps": [{"key": "start", "kind": "trigger", "name": "Start", "node_type": "manual_trigger"},
                      {"key": "log", "kind": "tool", "name": "Log", "node_type": "noop"}],
            "connections": [{"from_step": "start", "to_step": "log", "input_parameter": "input"}]}),
    )
    .await;
    let workflow = workflow["id"].as_str().unwrap().to_owned();
    // The service role starts team runs; over HTTP it is the tests' own server on the same database.
    let service = Caller::Local(store.server(Principal::Service { acting_as: Some(people[0]) }));
    let run = must(
        &service,
        "start_agent_team_run",
        json!({"ai_lenser_id": agent, "workflow_id": workflow, "policy": "approval_required"}),
    )
    .await;
    CellAgent {
        agent,
        team_run: run["team_run_id"].as_str().unwrap().to_owned(),
        workflow,
        lens: lens["id"].as_str().unwrap().to_owned(),
        people,
    }
}

fn agent_args(tool: &str, c: &CellAgent) -> Value {
    let agent = &c.agent;
    match tool {
        "list_ai_lensers" => json!({"limit": 100}),
        "get_ai_lenser" | "list_agent_tools" | "list_agent_actions" => json!({"ai_lenser_id": agent}),
        "list_agent_run_events" => json!({"ai_lenser_id": agent, "run_id": c.team_run}),
        "update_ai_lenser" => json!({"ai_lenser_id": agent, "patch": {"bio": "Changed."}}),
        "assign_agent_tool" => json!({"ai_lenser_id": agent, "tool_id": "list_lenses"}),
        "run_agent_action" => {
            json!({"ai_lenser_id": agent, "action_type": "get_lens", "metadata": {"lens_id": c.lens}})
        }
        "start_agent_team_run" => json!({"ai_lenser_id": agent, "workflow_id": c.workflow}),
        "archive_ai_lenser" => json!({"ai_lenser_id": agent, "confirm": true}),
        "revoke_agent_tool" => json!({"ai_lenser_id": agent, "tool_id": "get_lens"}),
        "cancel_agent_run" => json!({"ai_lenser_id": agent, "team_run_id": c.team_run}),
        "set_ai_lenser_member" => {
            json!({"ai_lenser_id": agent, "lenser_id": LenserId::new().to_string(), "role": "operator"})
        }
        "decide_agent_approval" => {
            json!({"ai_lenser_id": agent, "team_run_id": c.team_run, "decision": "reject"})
        }
        other => panic!("no arguments for {other}"),
    }
}

async fn agent_matrix(kind: StoreKind) {
    let started = Instant::now();
    let store = TestStore::open(kind).await;
    let agent_tools: Vec<&str> =
        store.catalog().tools().iter().filter(|t| t.group.id == "agent").map(|t| t.name).collect();
    let covered: Vec<&str> = AGENT_MATRIX.iter().map(|(t, _)| *t).chain(["create_ai_lenser"]).collect();
    for t in &agent_tools {
        assert!(covered.contains(t), "{t} has no row in AGENT_MATRIX");
    }
    let mut failures = Vec::new();
    let (mut n, mut ran) = (0, 0);
    for (tool, row) in AGENT_MATRIX {
        for (who, want) in AGENT_ROLES.iter().zip(row) {
            n += 1;
            let cell = cell_agent(&store, n).await;
            let principal = match *who {
                "service" => Principal::Service { acting_as: None },
                "owner" => lenser(cell.people[0]),
                "co_owner" => lenser(cell.people[1]),
                "operator" => lenser(cell.people[2]),
                _ => lenser(cell.people[3]),
            };
            if kind == StoreKind::Http && *who == "service" {
                continue; // over HTTP every caller is a lenser
            }
            ran += 1;
            let caller = store.caller(principal).await;
            let before = store.digest().await;
            let reply = match call(&caller, tool, agent_args(tool, &cell)).await {
                Ok(r) => r,
                Err(e) => {
                    failures.push(format!("{tool} / {who}: {e}"));
                    continue;
                }
            };
            let handle = format!("cell_bot_{n}");
            let got = match (*want, reply.code()) {
                (Listed | Hidden, None) => {
                    let listed = reply.value["items"]
                        .as_array()
                        .is_some_and(|items| items.iter().any(|i| i["ai_lenser_id"] == json!(cell.agent)));
                    if listed == (*want == Listed) { None } else { Some(format!("listed: {listed}")) }
                }
                (Want::Ok, None) => None,
                (w, Some(code)) if w.code() == Some(code) => None,
                (w, Some("PERMISSION_DENIED")) if w == DENIED => None,
                (_, code) => Some(format!("answered {}", code.unwrap_or("a success"))),
            };
            if let Some(why) = got {
                failures.push(format!("{tool} / {who}: wanted {want:?}, {why}: {}", reply.brief()));
            }
            if *who == "stranger" && reply.contains(&handle) {
                failures.push(format!("{tool} / stranger: the reply names @{handle}"));
            }
            if reply.is_error && store.digest().await != before {
                failures.push(format!("{tool} / {who}: refused, yet the store changed"));
            }
        }
    }
    println!("agent matrix on {}: {ran} cells in {:.1}s", kind.as_str(), started.elapsed().as_secs_f64());
    assert!(failures.is_empty(), "{} of {ran} agent cells failed:\n{}", failures.len(), failures.join("\n"));
}

#[tokio::test]
async fn agent_matrix_on_the_memory_store() {
    agent_matrix(StoreKind::Memory).await;
}

#[tokio::test]
async fn agent_matrix_on_sqlite() {
    agent_matrix(StoreKind::Sqlite).await;
}

#[tokio::test]
async fn agent_matrix_over_http() {
    agent_matrix(StoreKind::Http).await;
}
