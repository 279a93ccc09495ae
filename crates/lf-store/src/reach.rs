//! The caller's [`Reach`] as the statements bind it. Every read checks
//! reach in its `WHERE`, spelled one of two ways: with the caller's id or
//! NULL (lenses, workflows: `($2 IS NULL OR owner_id = $2 OR …)`), or with
//! a flag and an id (battles, agents: `($2 OR … = $3)`).

use lf_core::Reach;
use uuid::Uuid;

use sqlx::QueryBuilder;

use crate::dialect::{Bind, Dialect};

/// The caller's lenser id, or `None` (NULL) for a principal that reads
/// everything: the parameter of a `$n IS NULL OR …` check.
pub(crate) fn owner_or_null(reach: Reach) -> Option<Uuid> {
    match reach {
        Reach::Everything => None,
        Reach::Lenser(me) => Some(me.as_uuid()),
    }
}

/// Whether the caller reads everything, and its lenser id (nil when it
/// does): the parameters of a `$n OR … = $n+1` check.
pub(crate) fn everything_or_me(reach: Reach) -> (bool, Uuid) {
    match reach {
        Reach::Everything => (true, Uuid::nil()),
        Reach::Lenser(me) => (false, me.as_uuid()),
    }
}

/// Pushes `(everything OR <alias>.owner_id = me OR <alias>.visibility <>
/// 'private')`, [`everything_or_me`] bound: what a listing of owned rows
/// with visibility tiers (datasets, experiments) reads.
pub(crate) fn push_owned_or_shared<DB: Dialect>(qb: &mut QueryBuilder<DB>, alias: &str, reach: Reach) {
    let (everything, me) = everything_or_me(reach);
    DB::push_bind(qb.push("("), everything);
    DB::push_bind(qb.push(" OR ").push(alias).push(".owner_id = "), me);
    qb.push(" OR ").push(alias).push(".visibility <> 'private')");
}

/// Binds a reach, in either spelling, in the order of a statement's
/// parameters.
pub(crate) trait BindReach: Bind {
    /// [`owner_or_null`], one parameter.
    fn put_owner_or_null(self, reach: Reach) -> Self {
        self.put(owner_or_null(reach))
    }

    /// [`everything_or_me`], two parameters.
    fn put_everything_or_me(self, reach: Reach) -> Self {
        let (everything, me) = everything_or_me(reach);
        self.put(everything).put(me)
    }
}

impl<B: Bind> BindReach for B {}
