//! The statements of [`lf_workflow::WorkflowStore`] and the code that runs
//! them, the same on both backends but for the few spelled twice (a reach
//! PostgreSQL must cast, a row lock SQLite takes by other means). The store
//! supplies the connection, the read snapshot or the write transaction
//! (see `workflow/mod.rs`).
//!
//! Visibility is part of every read's `WHERE`: a workflow is *readable*
//! by its owner or when it is not private ([`reach_2`]), *listed* to its
//! owner or when it is public ([`push_from`]). A version is written whole
//! (its row, its nodes, its edges) inside the caller's transaction, and a
//! new head is set only after [`LOCK_WORKFLOW`] read the head the caller
//! expected.

use lf_core::{LenserId, LfError, LfResult, Page, PageRequest, Reach, SearchQuery, WorkflowId};
use lf_workflow::{
    VersionSelector, VersionSummary, Workflow, WorkflowFilter, WorkflowPatch, WorkflowVersion,
    WorkflowVersionId, workflow_head_moved, workflow_not_found, workflow_version_not_found,
};
use sqlx::QueryBuilder;
use uuid::Uuid;

use super::rows::{
    WORKFLOW_COLUMNS, bind_edge, bind_node, bind_patch, bind_workflow, edge, node, summary, version_columns,
    version_head, workflow, workflow_columns,
};
use crate::dialect::{
    Bind, Columns, Conn, Dialect, Spellings, all_rows, execute, insert, query, row_of, spelled,
};
use crate::error::map_db_err;
use crate::page::{listing, push_words};
use crate::reach::BindReach;

/// Whether the caller may read workflow `w`: `$2` is the caller's lenser
/// id, or NULL for a principal that reads everything. Unlisted workflows
/// are readable by anyone who has their id.
macro_rules! reach_2 {
    (sqlite) => {
        "($2 IS NULL OR w.owner_id = $2 OR w.visibility <> 'private')"
    };
    (postgres) => {
        "($2::uuid IS NULL OR w.owner_id = $2 OR w.visibility <> 'private')"
    };
}

const INSERT_WORKFLOW: &str = concat!(
    "INSERT INTO workflows (",
    // The columns without their `w.` prefix.
    "id, owner_id, title, description, visibility, head_version_id, head_version, created_at, updated_at, \
     archived_at, agent_id, public_runs",
    ") VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)"
);
const INSERT_VERSION: &str = "INSERT INTO workflow_versions \
     (id, workflow_id, number, changelog, created_by, created_at, agent_id) \
     VALUES ($1, $2, $3, $4, $5, $6, $7)";
const INSERT_NODE: &str = "INSERT INTO workflow_nodes \
     (id, version_id, ordinal, step_key, kind, name, node_type, lens_id, lens_version_id, parameters, config, \
     connector_provider, connector_ref, connector_capability, position_x, position_y) \
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16)";
const INSERT_EDGE: &str = "INSERT INTO workflow_edges \
     (id, version_id, ordinal, from_node_id, output_key, to_node_id, input_parameter, condition, merge_strategy) \
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)";

/// A version's nodes and edges, in ordinal order (ids break ties, should a
/// caller give two the same ordinal).
const NODES: &str = "SELECT id, ordinal, step_key, kind, name, node_type, lens_id, lens_version_id, parameters, \
     config, connector_provider, connector_ref, connector_capability, position_x, position_y \
     FROM workflow_nodes WHERE version_id = $1 ORDER BY ordinal, id";
const EDGES: &str = "SELECT id, ordinal, from_node_id, output_key, to_node_id, input_parameter, condition, \
     merge_strategy FROM workflow_edges WHERE version_id = $1 ORDER BY ordinal, id";

macro_rules! get_workflow {
    ($b:tt) => {
        concat!("SELECT ", workflow_columns!(), " FROM workflows w WHERE w.id = $1 AND ", reach_2!($b))
    };
}
const GET_WORKFLOW: Spellings = spelled!(get_workflow);

/// Workflow `$1` of reach `$2` and one of its versions, chosen by `$join`
/// (`$3` its number or id), in one query: the workflow's columns, then
/// the version's. The LEFT JOIN tells a missing workflow (no row) from a
/// missing version (a row of NULLs).
macro_rules! workflow_and_version {
    ($b:tt, $join:tt) => {
        concat!(
            "SELECT ",
            workflow_columns!(),
            ", ",
            version_columns!(),
            " FROM workflows w LEFT JOIN workflow_versions v ON ",
            $join,
            " WHERE w.id = $1 AND ",
            reach_2!($b)
        )
    };
}
const WITH_HEAD: Spellings = spelled!(workflow_and_version, "v.id = w.head_version_id");
const WITH_NUMBER: Spellings = spelled!(workflow_and_version, "v.workflow_id = w.id AND v.number = $3");
const WITH_ID: Spellings = spelled!(workflow_and_version, "v.workflow_id = w.id AND v.id = $3");

macro_rules! list_versions {
    ($b:tt) => {
        concat!(
            "SELECT ",
            version_columns!(),
            ", (SELECT count(*) FROM workflow_nodes n WHERE n.version_id = v.id) AS node_count, \
             (SELECT count(*) FROM workflow_edges e WHERE e.version_id = v.id) AS edge_count \
             FROM workflows w JOIN workflow_versions v ON v.workflow_id = w.id WHERE w.id = $1 AND ",
            reach_2!($b),
            " ORDER BY v.number DESC"
        )
    };
}
const LIST_VERSIONS: Spellings = spelled!(list_versions);

/// The head of workflow `$1`, its row locked until the transaction ends.
/// SQLite locks no rows: the write transaction's `BEGIN IMMEDIATE` already
/// holds the database's write lock.
const LOCK_WORKFLOW: Spellings = Spellings {
    sqlite: "SELECT head_version_id, owner_id FROM workflows WHERE id = $1",
    postgres: "SELECT head_version_id, owner_id FROM workflows WHERE id = $1 FOR UPDATE",
};

/// A [`WorkflowPatch`] as assignments, `$2`..`$9` bound by
/// [`bind_patch`]; a NULL (or a false flag) leaves the column as it is.
macro_rules! patch_set {
    () => {
        "title = coalesce($2, title), \
         description = CASE WHEN $3 THEN $4 ELSE description END, \
         visibility = coalesce($5, visibility), \
         archived_at = CASE WHEN $6 THEN $7 ELSE archived_at END, \
         updated_at = coalesce($8, updated_at), \
         public_runs = coalesce($9, public_runs)"
    };
}
const UPDATE: &str = concat!("UPDATE workflows SET ", patch_set!(), " WHERE id = $1");
/// A patch and the new head, `$10` its id and `$11` its number.
const MOVE_HEAD: &str = concat!(
    "UPDATE workflows SET ",
    patch_set!(),
    ", head_version_id = $10, head_version = $11 WHERE id = $1"
);

/// Inserts version `v` whole: its row, its nodes, its edges. A taken id or
/// number is CONFLICT saying which.
async fn insert_version<C: Conn>(conn: &mut C, v: &WorkflowVersion) -> LfResult<()> {
    let q = query::<C::Database>(INSERT_VERSION)
        .put(v.id.as_uuid())
        .put(v.workflow_id.as_uuid())
        .put(i64::from(v.number))
        .put(v.changelog.clone())
        .put(v.created_by.as_uuid())
        .put_time(v.created_at)
        .put(v.agent.map(|a| a.as_uuid()));
    insert(conn, q, || {
        format!(
            "workflow {} already has version {}, or version id {} is taken",
            v.workflow_id, v.number, v.id
        )
    })
    .await?;
    for n in &v.nodes {
        insert(conn, bind_node(query(INSERT_NODE), v.id, n), || format!("node id {} is taken", n.id)).await?;
    }
    for e in &v.edges {
        insert(conn, bind_edge(query(INSERT_EDGE), v.id, e), || format!("edge id {} is taken", e.id)).await?;
    }
    Ok(())
}

pub(crate) async fn create_workflow<C: Conn>(
    conn: &mut C,
    w: &Workflow,
    first: &WorkflowVersion,
) -> LfResult<()> {
    insert(conn, bind_workflow(query::<C::Database>(INSERT_WORKFLOW), w), || {
        format!("workflow {} already exists", w.id)
    })
    .await?;
    insert_version(conn, first).await?;
    super::triggers::sync_triggers(conn, w.owner, first).await
}

pub(crate) async fn get_workflow<C: Conn>(conn: &mut C, reach: Reach, id: WorkflowId) -> LfResult<Workflow> {
    let q = query(GET_WORKFLOW.of::<C::Database>()).put(id.as_uuid()).put_owner_or_null(reach);
    row_of(conn, q, workflow).await?.ok_or_else(|| workflow_not_found(id))
}

/// Workflow `id` and its version `which`, nodes and edges included; run it
/// in a read snapshot, so that the three queries see one state.
pub(crate) async fn get_workflow_and_version<C: Conn>(
    conn: &mut C,
    reach: Reach,
    id: WorkflowId,
    which: VersionSelector,
) -> LfResult<(Workflow, WorkflowVersion)> {
    let (sql, number, version_id): (&Spellings, Option<i64>, Option<Uuid>) = match which {
        VersionSelector::Head => (&WITH_HEAD, None, None),
        VersionSelector::Number(n) => (&WITH_NUMBER, Some(i64::from(n)), None),
        VersionSelector::Id(v) => (&WITH_ID, None, Some(v.as_uuid())),
    };
    let q = query::<C::Database>(sql.of::<C::Database>()).put(id.as_uuid()).put_owner_or_null(reach);
    let q = match (number, version_id) {
        (Some(n), _) => q.put(n),
        (_, Some(v)) => q.put(v),
        _ => q,
    };
    let found = row_of(conn, q, |row| Ok((workflow(row)?, version_head(row, WORKFLOW_COLUMNS)?)));
    let (w, head) = found.await?.ok_or_else(|| workflow_not_found(id))?;
    let head = head.ok_or_else(|| workflow_version_not_found(id, which))?;
    let nodes = all_rows(conn, NODES, head.id.as_uuid(), node).await?;
    let edges = all_rows(conn, EDGES, head.id.as_uuid(), edge).await?;
    let version = WorkflowVersion {
        id: head.id,
        workflow_id: id,
        number: head.number,
        changelog: head.changelog,
        created_by: head.created_by,
        agent: head.agent,
        created_at: head.created_at,
        nodes,
        edges,
    };
    Ok((w, version))
}

pub(crate) async fn list_versions<C: Conn>(
    conn: &mut C,
    reach: Reach,
    id: WorkflowId,
) -> LfResult<Vec<VersionSummary>> {
    let rows = query::<C::Database>(LIST_VERSIONS.of::<C::Database>())
        .put(id.as_uuid())
        .put_owner_or_null(reach)
        .fetch_all(conn.exec())
        .await
        .map_err(map_db_err)?;
    // Every workflow has a version: no rows means no readable workflow.
    if rows.is_empty() {
        return Err(workflow_not_found(id));
    }
    rows.iter().map(summary).collect()
}

/// Which workflows a listing covers: `list_workflows`'s filter or
/// `search_workflows`'s words.
#[derive(Clone, Copy)]
pub(crate) enum Listing<'a> {
    List(&'a WorkflowFilter),
    Search(&'a SearchQuery),
}

/// The `FROM … WHERE` of a listing. Its text depends only on which filters
/// are set (and how many words a search has), so each backend's statement
/// cache holds one statement per shape.
fn push_from<DB: Dialect>(qb: &mut QueryBuilder<DB>, reach: Reach, listing: Listing<'_>) {
    qb.push(" FROM workflows w WHERE ");
    let include_archived = matches!(listing, Listing::List(f) if f.include_archived);
    qb.push(if include_archived { "TRUE" } else { "w.archived_at IS NULL" });
    if let Reach::Lenser(me) = reach {
        DB::push_bind(qb.push(" AND (w.owner_id = "), me.as_uuid()).push(" OR w.visibility = 'public')");
    }
    match listing {
        Listing::List(filter) => {
            if let Some(v) = filter.visibility {
                DB::push_bind(qb.push(" AND w.visibility = "), v.as_str().to_owned());
            }
            if let Some(o) = filter.owner {
                DB::push_bind(qb.push(" AND w.owner_id = "), o.as_uuid());
            }
        }
        Listing::Search(q) => push_words(qb, q, ["w.title", "w.description"]),
    }
}

pub(crate) async fn list_workflows<C: Conn>(
    conn: &mut C,
    reach: Reach,
    listing_of: Listing<'_>,
    page: PageRequest,
) -> LfResult<Page<Workflow>> {
    let select = concat!("SELECT ", workflow_columns!());
    let from = |qb: &mut QueryBuilder<C::Database>| push_from(qb, reach, listing_of);
    listing(conn, select, from, " ORDER BY w.created_at DESC, w.id DESC", page, workflow).await
}

pub(crate) async fn append_version<C: Conn>(
    conn: &mut C,
    id: WorkflowId,
    expected_head: WorkflowVersionId,
    version: &WorkflowVersion,
    patch: &WorkflowPatch,
) -> LfResult<()> {
    let q = query(LOCK_WORKFLOW.of::<C::Database>()).put(id.as_uuid());
    let locked = row_of(conn, q, |row| Ok((row.value::<Uuid>("head_version_id")?, row.value("owner_id")?)));
    let (head, owner) = locked.await?.ok_or_else(|| workflow_not_found(id))?;
    let owner = LenserId::from_uuid(owner);
    if head != expected_head.as_uuid() {
        return Err(workflow_head_moved(id));
    }
    if version.workflow_id != id {
        return Err(LfError::conflict(format!(
            "version {} belongs to workflow {}, not to workflow {id}",
            version.id, version.workflow_id
        )));
    }
    insert_version(conn, version).await?;
    let q = bind_patch(query::<C::Database>(MOVE_HEAD).put(id.as_uuid()), patch)
        .put(version.id.as_uuid())
        .put(i64::from(version.number));
    execute(conn, q).await?;
    super::triggers::sync_triggers(conn, owner, version).await
}

pub(crate) async fn update_workflow<C: Conn>(
    conn: &mut C,
    id: WorkflowId,
    patch: &WorkflowPatch,
) -> LfResult<()> {
    let changed = execute(conn, bind_patch(query::<C::Database>(UPDATE).put(id.as_uuid()), patch)).await?;
    if changed == 0 {
        return Err(workflow_not_found(id));
    }
    Ok(())
}
