//! The statements of [`lf_eval::dataset::DatasetStore`], the same on both
//! backends, and the binding and decoding of their rows. Reach is
//! `($n OR d.owner_id = $n+1 OR d.visibility <> 'private')`.

use lf_core::{Description, LenserId, LfError, LfResult, Page, PageRequest, Reach, Timestamp};
use lf_eval::dataset::{
    Case, CaseInput, Dataset, DatasetId, DatasetName, DatasetVersion, JsonObject, Visibility,
    dataset_archived, dataset_moved, dataset_not_found, dataset_taken,
};
use serde_json::Value;
use sqlx::QueryBuilder;

use crate::dialect::{Bind, Columns, Conn, Dialect, execute, query, row_of, rows_of};
use crate::error::{conflict_or, map_db_err};
use crate::page::listing;
use crate::reach::BindReach;
use crate::workflow::rows::{object, valid};

const SELECT: &str = "SELECT d.id, d.owner_id, d.name, d.description, d.visibility, d.version, d.case_count, \
     d.created_at, d.updated_at, d.archived_at";
const INSERT: &str = "INSERT INTO datasets (id, owner_id, name, description, visibility, version, case_count, \
     created_at, updated_at, archived_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)";
const BY_ID: &str = "SELECT d.id, d.owner_id, d.name, d.description, d.visibility, d.version, d.case_count, \
     d.created_at, d.updated_at, d.archived_at FROM datasets d \
     WHERE d.id = $1 AND ($2 OR d.owner_id = $3 OR d.visibility <> 'private')";
const INSERT_VERSION: &str = "INSERT INTO dataset_versions (dataset_id, version, case_count, created_at, \
     created_by, agent_id) VALUES ($1, $2, $3, $4, $5, $6)";
const VERSION: &str = "SELECT v.dataset_id, v.version, v.case_count, v.created_at, v.created_by, v.agent_id \
     FROM dataset_versions v JOIN datasets d ON d.id = v.dataset_id \
     WHERE v.dataset_id = $1 AND v.version = $2 AND ($3 OR d.owner_id = $4 OR d.visibility <> 'private')";
/// The live dataset's latest version moves on only from the one before.
const MOVE_ON: &str = "UPDATE datasets SET version = $3, case_count = $4, updated_at = $5 \
     WHERE id = $1 AND owner_id = $2 AND version = $6 AND archived_at IS NULL";
const ARCHIVE: &str = "UPDATE datasets SET archived_at = $3, updated_at = $3 \
     WHERE id = $1 AND owner_id = $2 AND archived_at IS NULL";
const STATE: &str = "SELECT archived_at FROM datasets WHERE id = $1 AND owner_id = $2";
/// A page of a version's cases by key: positions `$5` to `$6`, within the
/// version's `case_count`.
const CASES: &str = "SELECT c.position, c.added_in, c.prompt, c.inputs, c.expected, c.assertions, c.tags, \
     c.metadata FROM dataset_cases c JOIN datasets d ON d.id = c.dataset_id \
     WHERE c.dataset_id = $1 AND ($2 OR d.owner_id = $3 OR d.visibility <> 'private') \
     AND c.position >= $4 AND c.position <= $5 ORDER BY c.position";
const INSERT_CASES: &str = "INSERT INTO dataset_cases (dataset_id, position, added_in, prompt, inputs, \
     expected, assertions, tags, metadata) VALUES ";
/// Rows a case insert carries: 9 parameters each, under both backends' limits.
const CASES_PER_INSERT: usize = 500;

fn number(n: i64, column: &str) -> LfResult<u32> {
    valid(u32::try_from(n), column)
}

fn dataset(row: &impl Columns) -> LfResult<Dataset> {
    Ok(Dataset {
        id: DatasetId::from_uuid(row.value("id")?),
        owner: LenserId::from_uuid(row.value("owner_id")?),
        name: valid(DatasetName::parse(row.text("name")?), "datasets.name")?,
        description: valid(Description::parse(row.text("description")?), "datasets.description")?,
        visibility: valid(Visibility::parse(row.text("visibility")?), "datasets.visibility")?,
        version: number(row.value("version")?, "datasets.version")?,
        case_count: number(row.value("case_count")?, "datasets.case_count")?,
        created_at: row.time("created_at")?,
        updated_at: row.time("updated_at")?,
        archived_at: row.opt_time("archived_at")?,
    })
}

fn version_row(row: &impl Columns) -> LfResult<DatasetVersion> {
    Ok(DatasetVersion {
        dataset: DatasetId::from_uuid(row.value("dataset_id")?),
        version: number(row.value("version")?, "dataset_versions.version")?,
        case_count: number(row.value("case_count")?, "dataset_versions.case_count")?,
        created_at: row.time("created_at")?,
        created_by: LenserId::from_uuid(row.value("created_by")?),
        agent: row.value::<Option<uuid::Uuid>>("agent_id")?.map(LenserId::from_uuid),
    })
}

fn json(text: &str, column: &str) -> LfResult<Value> {
    valid(serde_json::from_str(text), column)
}

fn case(row: &impl Columns) -> LfResult<Case> {
    let input = match row.value::<Option<String>>("prompt")? {
        Some(p) => CaseInput::Prompt(p),
        None => {
            let inputs: Option<String> = row.value("inputs")?;
            CaseInput::Inputs(object(inputs.as_deref().unwrap_or("{}"), "dataset_cases.inputs")?)
        }
    };
    let list = |column: &str| -> LfResult<Vec<Value>> {
        match json(row.text(column)?, column)? {
            Value::Array(items) => Ok(items),
            _ => valid(Err("not a list"), column),
        }
    };
    let assertions = list("assertions")?
        .into_iter()
        .map(|v| match v {
            Value::Object(o) => Ok(o),
            _ => valid(Err("not an object"), "dataset_cases.assertions"),
        })
        .collect::<LfResult<Vec<JsonObject>>>()?;
    let tags = list("tags")?
        .into_iter()
        .map(|v| match v {
            Value::String(s) => Ok(s),
            _ => valid(Err("not text"), "dataset_cases.tags"),
        })
        .collect::<LfResult<Vec<String>>>()?;
    Ok(Case {
        position: number(row.value("position")?, "dataset_cases.position")?,
        added_in: number(row.value("added_in")?, "dataset_cases.added_in")?,
        input,
        expected: row
            .value::<Option<String>>("expected")?
            .map(|e| json(&e, "dataset_cases.expected"))
            .transpose()?,
        assertions,
        tags,
        metadata: object(row.text("metadata")?, "dataset_cases.metadata")?,
    })
}

async fn insert_version<C: Conn>(conn: &mut C, v: &DatasetVersion) -> LfResult<()> {
    let q = query::<C::Database>(INSERT_VERSION)
        .put(v.dataset.as_uuid())
        .put(i64::from(v.version))
        .put(i64::from(v.case_count))
        .put_time(v.created_at)
        .put(v.created_by.as_uuid())
        .put(v.agent.map(|a| a.as_uuid()));
    q.execute(conn.exec()).await.map_err(conflict_or(dataset_moved))?;
    Ok(())
}

/// Inserts `cases` at positions from `first`, added in `version`, a few
/// hundred rows a statement.
async fn insert_cases<C: Conn>(
    conn: &mut C,
    id: DatasetId,
    first: u32,
    version: u32,
    cases: &[Case],
) -> LfResult<()> {
    for (chunk, at) in cases.chunks(CASES_PER_INSERT).zip((0..).step_by(CASES_PER_INSERT)) {
        let mut qb = QueryBuilder::<C::Database>::new(INSERT_CASES);
        for (i, c) in chunk.iter().enumerate() {
            let (prompt, inputs) = match &c.input {
                CaseInput::Prompt(p) => (Some(p.clone()), None),
                CaseInput::Inputs(o) => (None, Some(Value::Object(o.clone()).to_string())),
            };
            let assertions: Vec<Value> = c.assertions.iter().cloned().map(Value::Object).collect();
            qb.push(if i == 0 { "(" } else { ", (" });
            C::Database::push_bind(&mut qb, id.as_uuid());
            C::Database::push_bind(qb.push(", "), i64::from(first) + (at + i) as i64);
            C::Database::push_bind(qb.push(", "), i64::from(version));
            C::Database::push_bind(qb.push(", "), prompt);
            C::Database::push_bind(qb.push(", "), inputs);
            C::Database::push_bind(qb.push(", "), c.expected.as_ref().map(Value::to_string));
            C::Database::push_bind(qb.push(", "), Value::Array(assertions).to_string());
            C::Database::push_bind(qb.push(", "), serde_json::json!(c.tags).to_string());
            C::Database::push_bind(qb.push(", "), Value::Object(c.metadata.clone()).to_string());
            qb.push(")");
        }
        qb.build().execute(conn.exec()).await.map_err(map_db_err)?;
    }
    Ok(())
}

pub(crate) async fn add<C: Conn>(
    conn: &mut C,
    d: &Dataset,
    v: &DatasetVersion,
    cases: &[Case],
) -> LfResult<()> {
    let q = query::<C::Database>(INSERT)
        .put(d.id.as_uuid())
        .put(d.owner.as_uuid())
        .put(d.name.as_str().to_owned())
        .put(d.description.as_str().to_owned())
        .put(d.visibility.as_str().to_owned())
        .put(i64::from(d.version))
        .put(i64::from(d.case_count))
        .put_time(d.created_at)
        .put_time(d.updated_at)
        .put_opt_time(d.archived_at);
    q.execute(conn.exec()).await.map_err(conflict_or(|| dataset_taken(&d.name)))?;
    insert_version(conn, v).await?;
    insert_cases(conn, d.id, 1, v.version, cases).await
}

pub(crate) async fn add_version<C: Conn>(
    conn: &mut C,
    owner: LenserId,
    v: &DatasetVersion,
    cases: &[Case],
) -> LfResult<()> {
    let before = v.version.checked_sub(1).ok_or_else(dataset_moved)?;
    let moved = query::<C::Database>(MOVE_ON)
        .put(v.dataset.as_uuid())
        .put(owner.as_uuid())
        .put(i64::from(v.version))
        .put(i64::from(v.case_count))
        .put_time(v.created_at)
        .put(i64::from(before));
    if execute(conn, moved).await? != 1 {
        return Err(why_not(conn, owner, v.dataset, dataset_moved).await);
    }
    let first = v.case_count - cases.len() as u32 + 1;
    insert_version(conn, v).await?;
    insert_cases(conn, v.dataset, first, v.version, cases).await
}

/// Why a write to the owner's dataset `id` changed nothing: NOT_FOUND when
/// the owner has none, CONFLICT when it is archived, else `otherwise()`.
async fn why_not<C: Conn>(
    conn: &mut C,
    owner: LenserId,
    id: DatasetId,
    otherwise: fn() -> LfError,
) -> LfError {
    let state =
        row_of(conn, query(STATE).put(id.as_uuid()).put(owner.as_uuid()), |r| r.opt_time("archived_at"))
            .await;
    match state {
        Err(e) => e,
        Ok(None) => dataset_not_found(&id.to_string()),
        Ok(Some(Some(_))) => dataset_archived(),
        Ok(Some(None)) => otherwise(),
    }
}

pub(crate) async fn by_id<C: Conn>(conn: &mut C, reach: Reach, id: DatasetId) -> LfResult<Option<Dataset>> {
    row_of(conn, query(BY_ID).put(id.as_uuid()).put_everything_or_me(reach), dataset).await
}

pub(crate) async fn list<C: Conn>(
    conn: &mut C,
    reach: Reach,
    include_archived: bool,
    page: PageRequest,
) -> LfResult<Page<Dataset>> {
    let from = |qb: &mut QueryBuilder<C::Database>| {
        qb.push(" FROM datasets d WHERE ");
        if !include_archived {
            qb.push("d.archived_at IS NULL AND ");
        }
        crate::reach::push_owned_or_shared(qb, "d", reach);
    };
    listing(conn, SELECT, from, " ORDER BY d.name, d.id", page, dataset).await
}

pub(crate) async fn version<C: Conn>(
    conn: &mut C,
    reach: Reach,
    id: DatasetId,
    version: u32,
) -> LfResult<Option<DatasetVersion>> {
    let q = query(VERSION).put(id.as_uuid()).put(i64::from(version)).put_everything_or_me(reach);
    row_of(conn, q, version_row).await
}

pub(crate) async fn cases<C: Conn>(
    conn: &mut C,
    reach: Reach,
    v: &DatasetVersion,
    page: PageRequest,
) -> LfResult<Vec<Case>> {
    let first = page.offset().saturating_add(1);
    let last = (page.offset() + u64::from(page.limit())).min(u64::from(v.case_count));
    if first > last {
        return Ok(Vec::new());
    }
    let q =
        query(CASES).put(v.dataset.as_uuid()).put_everything_or_me(reach).put(first as i64).put(last as i64);
    rows_of(conn, q, case).await
}

pub(crate) async fn archive<C: Conn>(
    conn: &mut C,
    owner: LenserId,
    id: DatasetId,
    at: Timestamp,
) -> LfResult<()> {
    let q = query::<C::Database>(ARCHIVE).put(id.as_uuid()).put(owner.as_uuid()).put_time(at);
    if execute(conn, q).await? == 1 {
        return Ok(());
    }
    Err(why_not(conn, owner, id, dataset_archived).await)
}
