//! Lens rows, as both backends and SQLite's direct reader read and write
//! them: decoded by position in [`lens_columns`] order, bound in the order
//! of the statements' parameters. Reading back is strict: a value the
//! domain would refuse is a corrupt row (INTERNAL), never silently patched
//! up.

use lf_core::{LensId, LenserId, LfResult, ParamId, VersionId};
use lf_lens::{
    Description, Lens, LensPatch, LensStatus, LensVersion, Param, Semver, TemplateBody, Title, TypeHint,
    VersionSelector, VersionSummary, Visibility, version_not_found,
};
use uuid::Uuid;

use crate::dialect::{Bind, Columns};
use crate::error::corrupt;

/// The columns every lens read selects first, in this order: decoded by
/// position by [`lens`].
macro_rules! lens_columns {
    () => {
        "l.id, l.owner_id, l.title, l.description, l.visibility, l.status, l.parent_lens_id, \
         l.head_version_id, l.head_major, l.head_minor, l.head_patch, l.created_at, l.updated_at, \
         l.archived_at, l.agent_id"
    };
}
pub(crate) use lens_columns;

/// How many columns [`lens_columns`] names: a row's columns after them
/// start here.
const LENS_COLUMNS: usize = 15;

/// The lens in the first [`lens_columns`] of `row`.
pub(crate) fn lens(row: &impl Columns) -> LfResult<Lens> {
    Ok(Lens {
        id: LensId::from_uuid(row.value(0)?),
        owner: LenserId::from_uuid(row.value(1)?),
        title: Title::parse(row.value::<String>(2)?).map_err(|e| corrupt(format!("lenses.title: {e}")))?,
        description: row
            .value::<Option<String>>(3)?
            .map(Description::parse)
            .transpose()
            .map_err(|e| corrupt(format!("lenses.description: {e}")))?,
        visibility: visibility(row.text(4)?)?,
        status: status(row.text(5)?)?,
        parent_lens_id: row.value::<Option<Uuid>>(6)?.map(LensId::from_uuid),
        head_version_id: VersionId::from_uuid(row.value(7)?),
        head_semver: semver((row.value(8)?, row.value(9)?, row.value(10)?))?,
        created_at: row.time(11)?,
        updated_at: row.time(12)?,
        archived_at: row.opt_time(13)?,
        agent: row.value::<Option<Uuid>>(14)?.map(LenserId::from_uuid),
    })
}

/// Lens `id` and its version `which` from a row of `LENS_AND_*` (see
/// `sql::lens_and_version`): the lens's columns, then the version's. A
/// VERSION_NOT_FOUND error when the lens has no such version (the LEFT
/// JOIN's NULLs).
pub(crate) fn lens_and_version(
    row: &impl Columns,
    id: LensId,
    which: VersionSelector,
) -> LfResult<(Lens, LensVersion)> {
    let lens = lens(row)?;
    let v = LENS_COLUMNS;
    let Some(version_id) = row.value::<Option<Uuid>>(v)? else {
        return Err(version_not_found(id, which));
    };
    let version = LensVersion {
        id: VersionId::from_uuid(version_id),
        lens_id: id,
        semver: semver((row.value(v + 1)?, row.value(v + 2)?, row.value(v + 3)?))?,
        body: TemplateBody::from_trusted(row.value(v + 4)?),
        params: params_from_json(row.text(v + 7)?)?,
        changelog: row.value(v + 5)?,
        agent: row.value::<Option<Uuid>>(v + 8)?.map(LenserId::from_uuid),
        created_at: row.time(v + 6)?,
    };
    Ok((lens, version))
}

/// A row of `LIST_VERSIONS`.
pub(crate) fn summary(row: &impl Columns) -> LfResult<VersionSummary> {
    Ok(VersionSummary {
        id: VersionId::from_uuid(row.value(0)?),
        semver: semver((row.value(1)?, row.value(2)?, row.value(3)?))?,
        changelog: row.value(4)?,
        agent: row.value::<Option<Uuid>>(7)?.map(LenserId::from_uuid),
        created_at: row.time(5)?,
        params: params_from_json(row.text(6)?)?,
    })
}

pub(crate) fn visibility(s: &str) -> LfResult<Visibility> {
    Visibility::parse(s).map_err(|_| corrupt(format!("visibility {s:?}")))
}

pub(crate) fn status(s: &str) -> LfResult<LensStatus> {
    LensStatus::parse(s).map_err(|_| corrupt(format!("status {s:?}")))
}

pub(crate) fn semver((major, minor, patch): (i64, i64, i64)) -> LfResult<Semver> {
    let part = |n: i64| u32::try_from(n).map_err(|_| corrupt(format!("semver part {n}")));
    Ok(Semver { major: part(major)?, minor: part(minor)?, patch: part(patch)? })
}

pub(crate) fn semver_parts(v: Semver) -> (i64, i64, i64) {
    (v.major.into(), v.minor.into(), v.patch.into())
}

/// One parameter as the params aggregate of both backends spells it: `[id,
/// position, label, optional (0/1), type_hint, description, default, options]`.
/// An aggregate column loads a version with its parameters in one query.
type ParamJson = (String, i64, String, i64, Option<String>, Option<String>, Option<String>, Vec<String>);

/// The parameters of a version from the JSON array its query aggregated, in
/// body order.
pub(crate) fn params_from_json(json: &str) -> LfResult<Vec<Param>> {
    let mut rows: Vec<ParamJson> =
        serde_json::from_str(json).map_err(|e| corrupt(format!("version parameters: {e}")))?;
    // Aggregates promise no order; positions do.
    rows.sort_unstable_by_key(|r| r.1);
    rows.into_iter()
        .map(|(id, _, label, optional, type_hint, description, default, options)| {
            let id = Uuid::parse_str(&id).map_err(|e| corrupt(format!("parameter id {id:?}: {e}")))?;
            let type_hint = type_hint
                .map(|t| TypeHint::parse(&t).ok_or_else(|| corrupt(format!("type hint {t:?}"))))
                .transpose()?;
            Ok(Param {
                id: ParamId::from_uuid(id),
                label,
                optional: optional != 0,
                type_hint,
                description,
                default,
                options,
            })
        })
        .collect()
}

/// Binds the columns of a `lenses` row, `$1`..`$15` in [`lens_columns`]
/// order.
pub(crate) fn bind_lens<Q: Bind>(q: Q, lens: &Lens) -> Q {
    let (major, minor, patch) = semver_parts(lens.head_semver);
    q.put(lens.id.as_uuid())
        .put(lens.owner.as_uuid())
        .put(lens.title.as_str().to_owned())
        .put(lens.description.as_ref().map(|d| d.as_str().to_owned()))
        .put(lens.visibility.as_str().to_owned())
        .put(lens.status.as_str().to_owned())
        .put(lens.parent_lens_id.map(|p| p.as_uuid()))
        .put(lens.head_version_id.as_uuid())
        .put(major)
        .put(minor)
        .put(patch)
        .put_time(lens.created_at)
        .put_time(lens.updated_at)
        .put_opt_time(lens.archived_at)
        .put(lens.agent.map(|a| a.as_uuid()))
}

/// Binds the columns of a `lens_versions` row of lens `lens_id`, in table
/// order.
pub(crate) fn bind_version<Q: Bind>(q: Q, lens_id: LensId, v: &LensVersion) -> Q {
    let (major, minor, patch) = semver_parts(v.semver);
    q.put(v.id.as_uuid())
        .put(lens_id.as_uuid())
        .put(major)
        .put(minor)
        .put(patch)
        .put(v.body.as_str().to_owned())
        .put(v.changelog.clone())
        .put_time(v.created_at)
        .put(v.agent.map(|a| a.as_uuid()))
}

/// Binds a [`LensPatch`] as `sql::patch_set` takes it, `$1`..`$9`.
pub(crate) fn bind_patch<Q: Bind>(q: Q, p: &LensPatch) -> Q {
    q.put(p.title.as_ref().map(|t| t.as_str().to_owned()))
        .put(p.description.is_some())
        .put(p.description.as_ref().and_then(|d| d.as_ref()).map(|d| d.as_str().to_owned()))
        .put(p.visibility.map(|v| v.as_str().to_owned()))
        .put(p.status.map(|s| s.as_str().to_owned()))
        .put(p.archived_at.is_some())
        .put_opt_time(p.archived_at.flatten())
        .put_opt_time(p.deleted_at)
        .put_opt_time(p.updated_at)
}

/// Binds a move of lens `lens_id`'s head from `expected_head` to `version`
/// with `patch`, `$1`..`$15` as each backend's `MOVE_HEAD` takes them.
pub(crate) fn bind_move_head<Q: Bind>(
    q: Q,
    patch: &LensPatch,
    lens_id: LensId,
    expected_head: VersionId,
    version: &LensVersion,
) -> Q {
    let (major, minor, patch_part) = semver_parts(version.semver);
    bind_patch(q, patch)
        .put(lens_id.as_uuid())
        .put(expected_head.as_uuid())
        .put(version.id.as_uuid())
        .put(major)
        .put(minor)
        .put(patch_part)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn params_come_back_in_position_order() {
        let json = r#"[["0190f5a2-7c1e-7d3a-9b2c-5e8f1a2b3c4d",1,"B",1,null,null,"x",[]],
                       ["0190F5A27C1E7D3A9B2C5E8F1A2B3C4E",0,"A",0,"select","d",null,["p","q"]]]"#;
        let params = params_from_json(json).unwrap();
        assert_eq!(params.iter().map(|p| p.label.as_str()).collect::<Vec<_>>(), ["A", "B"]);
        assert_eq!(params[0].type_hint, Some(TypeHint::Select));
        assert_eq!(params[0].options, ["p", "q"]);
        assert!(params[1].optional && params[1].default.as_deref() == Some("x"));
        assert!(params_from_json(r#"[["x",0,"A",0,null,null,null,[]]]"#).is_err());
        assert!(
            params_from_json(r#"[["0190f5a2-7c1e-7d3a-9b2c-5e8f1a2b3c4d",0,"A",0,"nope",null,null,[]]]"#)
                .is_err()
        );
    }

    #[test]
    fn semver_parts_round_trip_and_refuse_out_of_range() {
        let v = Semver { major: u32::MAX, minor: 0, patch: 7 };
        assert_eq!(semver(semver_parts(v)).unwrap(), v);
        assert!(semver((-1, 0, 0)).is_err());
        assert!(semver((i64::from(u32::MAX) + 1, 0, 0)).is_err());
    }
}
