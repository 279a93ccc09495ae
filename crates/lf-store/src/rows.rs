//! Conversions between stored values and domain types shared by both
//! backends, and the text of full-text queries. Reading back is strict: a
//! value the domain would refuse is a corrupt row (INTERNAL), never silently
//! patched up.

use lf_core::{LensId, LenserId, LfResult, ParamId, Reach, Timestamp, VersionId};
use lf_lens::{Description, Lens, LensStatus, Param, SearchQuery, Semver, Title, TypeHint, Visibility};
use uuid::Uuid;

use crate::error::corrupt;

/// A `lenses` row as both backends read it, before parsing.
pub(crate) struct LensRecord {
    pub id: Uuid,
    pub owner: Uuid,
    pub title: String,
    pub description: Option<String>,
    pub visibility: String,
    pub status: String,
    pub parent: Option<Uuid>,
    pub head: Uuid,
    pub head_semver: (i64, i64, i64),
    pub created_at: Timestamp,
    pub updated_at: Timestamp,
    pub archived_at: Option<Timestamp>,
}

impl LensRecord {
    pub fn into_lens(self) -> LfResult<Lens> {
        Ok(Lens {
            id: LensId::from_uuid(self.id),
            owner: LenserId::from_uuid(self.owner),
            title: Title::parse(self.title).map_err(|e| corrupt(format!("lenses.title: {e}")))?,
            description: self
                .description
                .map(Description::parse)
                .transpose()
                .map_err(|e| corrupt(format!("lenses.description: {e}")))?,
            visibility: visibility(&self.visibility)?,
            status: status(&self.status)?,
            parent_lens_id: self.parent.map(LensId::from_uuid),
            head_version_id: VersionId::from_uuid(self.head),
            head_semver: semver(self.head_semver)?,
            created_at: self.created_at,
            updated_at: self.updated_at,
            archived_at: self.archived_at,
        })
    }
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

/// A list of strings as the JSON array the schemas store.
pub(crate) fn json_strings(items: &[String]) -> String {
    serde_json::Value::from(items).to_string()
}

/// The FTS5 query of a search: every term of `q` as a quoted prefix term in
/// the text columns, all required, then the caller's reach and the visibility
/// filter as tokens of the `scope` column (see the SQLite migration).
///
/// Quoting makes every term a plain string to FTS5: no user text is ever read
/// as an operator, column filter or NEAR group, and the column filter keeps
/// terms from matching scope tokens.
///
/// `words[i]`, when given, is the one word of the index term `i` completes
/// to: that word is matched as it is, which finds the same lenses.
pub(crate) fn fts5_match(
    q: &SearchQuery,
    words: &[Option<String>],
    reach: Reach,
    visibility: Option<Visibility>,
) -> String {
    let mut out = String::from("{title description body} : (");
    for (i, term) in q.terms().iter().enumerate() {
        if i > 0 {
            out.push_str(" AND ");
        }
        let (text, prefix) = match words.get(i) {
            Some(Some(word)) => (word, false),
            _ => (term, true),
        };
        out.push('"');
        out.push_str(&text.replace('"', "\"\""));
        out.push_str(if prefix { "\"*" } else { "\"" });
    }
    out.push(')');
    if let Reach::Lenser(me) = reach {
        // "Not someone else's private lens" rather than "public, community
        // or mine": it costs in proportion to the private lenses, usually the
        // fewest.
        out.push_str(" NOT ({scope} : vprivate NOT {scope} : o");
        out.push_str(&me.as_uuid().simple().to_string());
        out.push(')');
    }
    if let Some(v) = visibility {
        out.push_str(" AND {scope} : v");
        out.push_str(v.as_str());
    }
    out
}

/// The `to_tsquery` input of `q`: each term a quoted lexeme matched as a
/// prefix (`'term':*`), all required. Quoting makes every term a lexeme, never
/// an operator.
pub(crate) fn tsquery(q: &SearchQuery) -> String {
    let mut out = String::new();
    for (i, term) in q.terms().iter().enumerate() {
        if i > 0 {
            out.push_str(" & ");
        }
        out.push('\'');
        out.push_str(&term.replace('\\', "\\\\").replace('\'', "''"));
        out.push_str("':*");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn search_terms_are_quoted_prefixes() {
        let q = SearchQuery::parse("Code-Review  \"x\" a OR b").unwrap();
        assert_eq!(
            fts5_match(&q, &[], Reach::Everything, None),
            r#"{title description body} : ("code"* AND "review"* AND "x"* AND "a"* AND "or"* AND "b"*)"#
        );
        let me = LenserId::from_uuid(Uuid::parse_str("0190f5a2-7c1e-7d3a-9b2c-5e8f1a2b3c4d").unwrap());
        assert_eq!(
            fts5_match(
                &SearchQuery::parse("x").unwrap(),
                &[],
                Reach::Lenser(me),
                Some(Visibility::Community)
            ),
            r#"{title description body} : ("x"*) NOT ({scope} : vprivate NOT {scope} : o0190f5a27c1e7d3a9b2c5e8f1a2b3c4d) AND {scope} : vcommunity"#
        );
        assert_eq!(tsquery(&q), "'code':* & 'review':* & 'x':* & 'a':* & 'or':* & 'b':*");
    }

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
