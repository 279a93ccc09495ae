//! The statements of [`lf_workflow::profile::ModelProfileStore`], the same
//! on both backends, and the binding and decoding of a `model_profiles`
//! row. Reach is `($n OR owner_id = $n+1 OR a live public row)`.

use lf_core::{LenserId, LfError, LfResult, ModelProfileId, Page, PageRequest, Reach, Timestamp};
use lf_workflow::profile::{
    Endpoint, ModelProfile, Parameters, Prices, ProfileName, ProfileVisibility, profile_not_found,
    profile_taken,
};
use sqlx::QueryBuilder;

use crate::dialect::{Bind, Columns, Conn, Dialect, query, row_of};
use crate::error::conflict_or;
use crate::page::listing;
use crate::reach::{BindReach, everything_or_me};
use crate::workflow::rows::{object, object_text, valid};

const SELECT: &str = "SELECT id, owner_id, name, endpoint, model, parameters, price_per_million_input, \
     price_per_million_output, visibility, created_at, updated_at, archived_at";
const INSERT: &str = "INSERT INTO model_profiles (id, owner_id, name, endpoint, model, parameters, \
     price_per_million_input, price_per_million_output, visibility, created_at, updated_at, archived_at) \
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)";
const BY_ID: &str = "SELECT id, owner_id, name, endpoint, model, parameters, price_per_million_input, \
     price_per_million_output, visibility, created_at, updated_at, archived_at FROM model_profiles \
     WHERE id = $1 AND ($2 OR owner_id = $3 OR (visibility = 'public' AND archived_at IS NULL))";
const BY_NAME: &str = "SELECT id, owner_id, name, endpoint, model, parameters, price_per_million_input, \
     price_per_million_output, visibility, created_at, updated_at, archived_at FROM model_profiles \
     WHERE owner_id = $1 AND name = $2 AND archived_at IS NULL";
const UPDATE: &str = "UPDATE model_profiles SET name = $3, endpoint = $4, model = $5, parameters = $6, \
     price_per_million_input = $7, price_per_million_output = $8, visibility = $9, updated_at = $10, \
     archived_at = $11 WHERE id = $1 AND owner_id = $2 AND updated_at = $12";
const EXISTS: &str = "SELECT 1 FROM model_profiles WHERE id = $1 AND owner_id = $2";

fn profile(row: &impl Columns) -> LfResult<ModelProfile> {
    let parameters = object(row.text("parameters")?, "model_profiles.parameters")?;
    Ok(ModelProfile {
        id: ModelProfileId::from_uuid(row.value("id")?),
        owner: LenserId::from_uuid(row.value("owner_id")?),
        name: valid(ProfileName::parse(row.text("name")?), "model_profiles.name")?,
        endpoint: valid(Endpoint::parse(row.text("endpoint")?), "model_profiles.endpoint")?,
        model: row.text("model")?.to_owned(),
        parameters: valid(Parameters::from_object(&parameters), "model_profiles.parameters")?,
        prices: valid(
            Prices::new(row.value("price_per_million_input")?, row.value("price_per_million_output")?),
            "model_profiles.prices",
        )?,
        visibility: valid(ProfileVisibility::parse(row.text("visibility")?), "model_profiles.visibility")?,
        created_at: row.time("created_at")?,
        updated_at: row.time("updated_at")?,
        archived_at: row.opt_time("archived_at")?,
    })
}

/// Binds what an insert and an update both write after the key, from
/// `name` to `visibility`.
fn bind_fields<Q: Bind>(q: Q, p: &ModelProfile) -> Q {
    q.put(p.name.as_str().to_owned())
        .put(p.endpoint.as_wire())
        .put(p.model.clone())
        .put(object_text(&p.parameters.to_object()))
        .put(p.prices.per_million_input)
        .put(p.prices.per_million_output)
        .put(p.visibility.as_str().to_owned())
}

pub(crate) async fn add<C: Conn>(conn: &mut C, p: &ModelProfile) -> LfResult<()> {
    let q = bind_fields(query::<C::Database>(INSERT).put(p.id.as_uuid()).put(p.owner.as_uuid()), p)
        .put_time(p.created_at)
        .put_time(p.updated_at)
        .put_opt_time(p.archived_at);
    q.execute(conn.exec()).await.map_err(conflict_or(|| profile_taken(&p.name)))?;
    Ok(())
}

pub(crate) async fn by_id<C: Conn>(
    conn: &mut C,
    reach: Reach,
    id: ModelProfileId,
) -> LfResult<Option<ModelProfile>> {
    row_of(conn, query(BY_ID).put(id.as_uuid()).put_everything_or_me(reach), profile).await
}

pub(crate) async fn by_name<C: Conn>(
    conn: &mut C,
    owner: LenserId,
    name: &ProfileName,
) -> LfResult<Option<ModelProfile>> {
    row_of(conn, query(BY_NAME).put(owner.as_uuid()).put(name.as_str().to_owned()), profile).await
}

pub(crate) async fn list<C: Conn>(
    conn: &mut C,
    reach: Reach,
    page: PageRequest,
) -> LfResult<Page<ModelProfile>> {
    let from = |qb: &mut QueryBuilder<C::Database>| {
        let (everything, me) = everything_or_me(reach);
        qb.push(" FROM model_profiles WHERE archived_at IS NULL AND (");
        C::Database::push_bind(qb, everything);
        C::Database::push_bind(qb.push(" OR owner_id = "), me).push(" OR visibility = 'public')");
    };
    listing(conn, SELECT, from, " ORDER BY name, id", page, profile).await
}

pub(crate) async fn save<C: Conn>(conn: &mut C, p: &ModelProfile, expected: Timestamp) -> LfResult<()> {
    let q = bind_fields(query::<C::Database>(UPDATE).put(p.id.as_uuid()).put(p.owner.as_uuid()), p)
        .put_time(p.updated_at)
        .put_opt_time(p.archived_at)
        .put_time(expected);
    let changed = q.execute(conn.exec()).await.map_err(conflict_or(|| profile_taken(&p.name)))?;
    if C::Database::rows_affected(changed) == 1 {
        return Ok(());
    }
    let exists = row_of(conn, query(EXISTS).put(p.id.as_uuid()).put(p.owner.as_uuid()), |_| Ok(())).await?;
    match exists {
        Some(()) => Err(LfError::conflict("the model profile changed meanwhile: read it again and retry")),
        None => Err(profile_not_found("profile_id", &p.id.to_string())),
    }
}
