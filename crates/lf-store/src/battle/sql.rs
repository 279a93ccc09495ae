//! The statements of [`lf_battle::BattleStore`] and the code that runs them,
//! the same on both backends but for two statements spelled twice
//! ([`LOCK_BATTLE`], [`INSERT_RESULT`]). The store supplies the connection,
//! the read transaction or the write transaction (see `battle/mod.rs`).
//!
//! Every write begins by reading the battle's status with
//! [`LOCK_BATTLE`]: on PostgreSQL a `SELECT … FOR UPDATE`, so
//! writes to one battle take turns and each sees what the one before it
//! committed; on SQLite the `BEGIN IMMEDIATE` of the write transaction
//! already serializes every write. The checks the contract asks for (the
//! status, the contender count of a slot, the contenders a row names) then
//! read a battle nobody else can change until the transaction ends. The
//! unique constraints and composite foreign keys of the schema hold the same
//! rules again should a caller bypass the store.

use futures_util::TryStreamExt;
use lf_battle::{
    AnswerCostRecord, AnswerError, Battle, BattleFilter, BattleResult, BattleSheet, BattleStatus,
    BattleSummary, BattleType, Contender, ContenderVotes, CostMean, HistoryFilter, JudgeError, Standing,
    StoredSubmission, StoredVote, Submission, Verdict, Vote, VotePick, VoteTally, battle_not_found,
    contender_not_found, status_moved,
};
use lf_core::{
    BattleId, ContenderId, LenserId, LfError, LfResult, Page, PageRequest, Reach, SearchQuery, SubmissionId,
    Timestamp, VoteId,
};
use sqlx::QueryBuilder;
use uuid::Uuid;

use super::rows::{
    answer_cost, answer_error, battle, battle_columns, battle_result, bind_answer_cost, bind_battle,
    bind_contender, bind_standing, bind_submission, bind_verdict, bind_vote, contender, cost_mean,
    judge_error, pick_id, standing, status, submission, verdict,
};
use crate::dialect::{
    Bind, Columns, Conn, Dialect, Spellings, all_rows, execute, insert, query, row_of, rows_of,
};
use crate::error::map_db_err;
use crate::page;
use crate::reach::BindReach;

/// Whether the caller may read battle `b`: `$2` is true for a principal
/// that reads everything, `$3` the caller's lenser id otherwise. A draft is
/// its creator's alone.
macro_rules! reach_2_3 {
    () => {
        "($2 OR b.status <> 'draft' OR b.creator_id = $3)"
    };
}

/// The status of battle `$1`, its row locked until the transaction ends.
/// SQLite locks no rows: the write transaction's `BEGIN IMMEDIATE` already
/// holds the database's write lock.
const LOCK_BATTLE: Spellings = Spellings {
    sqlite: "SELECT status FROM battles WHERE id = $1",
    postgres: "SELECT status FROM battles WHERE id = $1 FOR UPDATE",
};

/// Writes the `battle_results` row of battle `$1` from its standings,
/// contenders and submissions (`entries` as the `0004_battle_results.sql`
/// migrations describe, plus each answer's characters and markdown marks,
/// [`lf_battle::Style`], null without an answer).
const INSERT_RESULT: Spellings = Spellings {
    sqlite: "INSERT INTO battle_results (battle_id, battle_type, closed_at, entries, tags) \
         SELECT b.id, b.battle_type, coalesce(b.closed_at, b.updated_at), \
         (SELECT json_group_array(json_array(c.contender_type, lower(hex(c.reference_id)), s.rank, c.display_name, \
         length(a.text), length(a.text) - length(replace(replace(replace(replace(a.text, '#', ''), '*', ''), '`', ''), '|', '')))) \
         FROM battle_standings s JOIN battle_contenders c ON c.battle_id = s.battle_id AND c.id = s.contender_id \
         LEFT JOIN battle_submissions a ON a.battle_id = s.battle_id AND a.contender_id = s.contender_id \
         WHERE s.battle_id = b.id), b.tags FROM battles b WHERE b.id = $1",
    postgres: "INSERT INTO battle_results (battle_id, battle_type, closed_at, entries, tags) \
         SELECT b.id, b.battle_type, coalesce(b.closed_at, b.updated_at), \
         coalesce((SELECT json_agg(json_build_array(c.contender_type, c.reference_id, s.rank, c.display_name, \
         length(a.text), length(a.text) - length(replace(replace(replace(replace(a.text, '#', ''), '*', ''), '`', ''), '|', '')))) \
         FROM battle_standings s JOIN battle_contenders c ON c.battle_id = s.battle_id AND c.id = s.contender_id \
         LEFT JOIN battle_submissions a ON a.battle_id = s.battle_id AND a.contender_id = s.contender_id \
         WHERE s.battle_id = b.id)::text, '[]'), b.tags FROM battles b WHERE b.id = $1",
};

const INSERT_BATTLE: &str = concat!(
    "INSERT INTO battles (",
    // The columns without their `b.` prefix.
    "id, title, task_prompt, battle_type, judging_mode, max_contenders, ai_judge_model_key, rubric, \
     auto_check, creator_id, status, winner_id, created_at, updated_at, closed_at, agent_id, tags",
    ") VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17)"
);
const GET_BATTLE: &str =
    concat!("SELECT ", battle_columns!(), " FROM battles b WHERE b.id = $1 AND ", reach_2_3!());
const SET_STATUS: &str = "UPDATE battles SET status = $2, updated_at = $3 WHERE id = $1";
const CLOSE: &str =
    "UPDATE battles SET status = $2, winner_id = $3, closed_at = $4, updated_at = $4 WHERE id = $1";

/// Battles in executing whose every contender has a submission (one
/// contender at least), oldest first: after `($2, $3)` unless `$1`, at most
/// `$4`. The status index (`battles_status_newest`) finds them.
const ANSWERED_EXECUTING: &str = concat!(
    "SELECT ",
    battle_columns!(),
    " FROM battles b WHERE b.status = 'executing' \
     AND ($1 OR b.created_at > $2 OR (b.created_at = $2 AND b.id > $3)) \
     AND EXISTS (SELECT 1 FROM battle_contenders c WHERE c.battle_id = b.id) \
     AND NOT EXISTS (SELECT 1 FROM battle_contenders c WHERE c.battle_id = b.id AND NOT EXISTS \
     (SELECT 1 FROM battle_submissions s WHERE s.battle_id = c.battle_id AND s.contender_id = c.id)) \
     ORDER BY b.created_at, b.id LIMIT $4"
);

const CONTENDER_IDS: &str = "SELECT id FROM battle_contenders WHERE battle_id = $1";
/// How many contenders battle `$1` has, and whether reference `$2` is one.
const SLOT_CHECK: &str = "SELECT count(*) AS n, count(CASE WHEN reference_id = $2 THEN 1 END) AS same_ref \
     FROM battle_contenders WHERE battle_id = $1";
const INSERT_CONTENDER: &str = "INSERT INTO battle_contenders \
     (id, battle_id, slot, display_name, contender_type, reference_id, owner_id, joined_at, agent_id) \
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)";
const CONTENDERS: &str = "SELECT id, battle_id, slot, display_name, contender_type, reference_id, owner_id, \
     joined_at, agent_id FROM battle_contenders WHERE battle_id = $1 ORDER BY slot";

/// Contender `$2` of battle `$1` (no row: not one of its) and its
/// submission's id and `created_at` (NULLs: none yet).
const SUBMISSION_OF: &str = "SELECT s.id, s.created_at FROM battle_contenders c \
     LEFT JOIN battle_submissions s ON s.battle_id = c.battle_id AND s.contender_id = c.id \
     WHERE c.battle_id = $1 AND c.id = $2";
const INSERT_SUBMISSION: &str = "INSERT INTO battle_submissions \
     (id, battle_id, contender_id, text, submitted_by, created_at, updated_at) \
     VALUES ($1, $2, $3, $4, $5, $6, $7)";
const REPLACE_SUBMISSION: &str = "UPDATE battle_submissions SET text = $3, submitted_by = $4, updated_at = $5 \
     WHERE battle_id = $1 AND contender_id = $2";
const WITHOUT_SUBMISSION: &str = "SELECT count(*) AS n FROM battle_contenders c WHERE c.battle_id = $1 \
     AND NOT EXISTS (SELECT 1 FROM battle_submissions s WHERE s.battle_id = c.battle_id AND s.contender_id = c.id)";
const SUBMISSIONS: &str = "SELECT s.id, s.battle_id, s.contender_id, s.text, s.submitted_by, s.created_at, \
     s.updated_at FROM battle_submissions s JOIN battle_contenders c ON c.id = s.contender_id \
     WHERE s.battle_id = $1 ORDER BY c.slot";

const VOTE_OF: &str = "SELECT id, created_at FROM battle_votes WHERE battle_id = $1 AND voter_id = $2";
const PICK_OF: &str = "SELECT pick_contender_id FROM battle_votes WHERE battle_id = $1 AND voter_id = $2";
const INSERT_VOTE: &str = "INSERT INTO battle_votes \
     (id, battle_id, voter_id, pick_contender_id, rationale, created_at, updated_at) \
     VALUES ($1, $2, $3, $4, $5, $6, $7)";
const REPLACE_VOTE: &str = "UPDATE battle_votes SET pick_contender_id = $3, rationale = $4, updated_at = $5 \
     WHERE battle_id = $1 AND voter_id = $2";
const TALLY: &str = "SELECT pick_contender_id, count(*) AS n FROM battle_votes WHERE battle_id = $1 GROUP BY pick_contender_id";

const DELETE_VERDICTS: &str = "DELETE FROM battle_verdicts WHERE battle_id = $1";
const INSERT_VERDICT: &str = "INSERT INTO battle_verdicts \
     (battle_id, contender_id, verdict, score, criteria, reasoning, model, position_consistent, created_at) \
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)";
const VERDICTS: &str = "SELECT v.battle_id, v.contender_id, v.verdict, v.score, v.criteria, v.reasoning, \
     v.model, v.position_consistent, v.created_at FROM battle_verdicts v \
     JOIN battle_contenders c ON c.id = v.contender_id WHERE v.battle_id = $1 ORDER BY c.slot";

const INSERT_JUDGE_ERROR: &str =
    "INSERT INTO battle_judge_errors (battle_id, model, message, at) VALUES ($1, $2, $3, $4)";
const JUDGE_ERRORS: &str =
    "SELECT battle_id, model, message, at FROM battle_judge_errors WHERE battle_id = $1 ORDER BY at, seq";

const INSERT_ANSWER_ERROR: &str = "INSERT INTO battle_answer_errors \
     (battle_id, contender_id, run_id, message, at) VALUES ($1, $2, $3, $4, $5)";
const ANSWER_ERRORS: &str = "SELECT battle_id, contender_id, run_id, message, at FROM battle_answer_errors \
     WHERE battle_id = $1 ORDER BY at, seq";

/// Forgets the cost recorded for contender `$2` of battle `$1` (`$2` NULL:
/// the judge's), before recording it again.
const DELETE_COST: Spellings = Spellings {
    sqlite: "DELETE FROM battle_answer_costs WHERE battle_id = $1 AND contender_id IS $2",
    postgres: "DELETE FROM battle_answer_costs WHERE battle_id = $1 AND contender_id IS NOT DISTINCT FROM $2",
};
const INSERT_COST: &str = "INSERT INTO battle_answer_costs (battle_id, contender_id, profile_id, endpoint, \
     model, first_byte_ms, total_ms, input_tokens, output_tokens, tokens_estimated, cost_usd, finish_reason, at) \
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)";
/// The costs that stand (a contender's for its submission as it is):
/// contenders' by slot, then the judge's.
const COSTS: &str = "SELECT k.battle_id, k.contender_id, k.profile_id, k.endpoint, k.model, k.first_byte_ms, \
     k.total_ms, k.input_tokens, k.output_tokens, k.tokens_estimated, k.cost_usd, k.finish_reason, k.at \
     FROM battle_answer_costs k LEFT JOIN battle_contenders c ON c.battle_id = k.battle_id AND c.id = k.contender_id \
     LEFT JOIN battle_submissions s ON s.battle_id = k.battle_id AND s.contender_id = k.contender_id \
     WHERE k.battle_id = $1 AND (k.contender_id IS NULL OR s.updated_at = k.at) ORDER BY coalesce(c.slot, 26)";
/// Per contender reference, over closed or published battles (of type `$2`
/// unless `$1`): the mean cost and total latency of the costs recorded for
/// the submissions that stand.
const COST_MEANS: &str = "SELECT c.contender_type, c.reference_id, count(*) AS answers, \
     CAST(avg(k.cost_usd) AS DOUBLE PRECISION) AS mean_cost_usd, \
     CAST(avg(k.total_ms) AS DOUBLE PRECISION) AS mean_total_ms \
     FROM battle_answer_costs k \
     JOIN battle_contenders c ON c.battle_id = k.battle_id AND c.id = k.contender_id \
     JOIN battle_submissions s ON s.battle_id = k.battle_id AND s.contender_id = k.contender_id AND s.updated_at = k.at \
     JOIN battles b ON b.id = k.battle_id \
     WHERE b.status IN ('closed', 'published') AND ($1 OR b.battle_type = $2) \
     GROUP BY c.contender_type, c.reference_id";

const INSERT_STANDING: &str = "INSERT INTO battle_standings \
     (battle_id, contender_id, position, rank, score, votes) VALUES ($1, $2, $3, $4, $5, $6)";
const STANDINGS: &str = "SELECT contender_id, position, rank, score, votes FROM battle_standings \
     WHERE battle_id = $1 ORDER BY position";

/// Every closed or published battle (of type `$2` unless `$1`), its
/// standings in one JSON text (see the `0004_battle_results.sql`
/// migrations).
pub(crate) const CLOSED_RESULTS: &str = "SELECT battle_id, battle_type, closed_at, entries, tags FROM battle_results WHERE ($1 OR battle_type = $2)";
const DELETE_RESULT: &str = "DELETE FROM battle_results WHERE battle_id = $1";
const RESULTS_VERSION: &str = "SELECT version FROM battle_results_version WHERE id = 1";

/// The status of battle `id`, its row locked for the rest of the
/// transaction; NOT_FOUND when there is no such battle.
async fn lock_battle<C: Conn>(conn: &mut C, id: BattleId) -> LfResult<BattleStatus> {
    let q = query(LOCK_BATTLE.of::<C::Database>()).put(id.as_uuid());
    row_of(conn, q, |row| status(&row.value::<String>("status")?)).await?.ok_or_else(|| battle_not_found(id))
}

/// CONFLICT unless `now` is one of the `accepted` statuses.
fn expect(id: BattleId, now: BattleStatus, accepted: &[BattleStatus]) -> LfResult<()> {
    if accepted.contains(&now) { Ok(()) } else { Err(status_moved(id, now)) }
}

/// The ids of battle `id`'s contenders.
async fn contender_ids<C: Conn>(conn: &mut C, id: BattleId) -> LfResult<Vec<ContenderId>> {
    let rows = query::<C::Database>(CONTENDER_IDS)
        .put(id.as_uuid())
        .fetch_all(conn.exec())
        .await
        .map_err(map_db_err)?;
    rows.iter().map(|r| r.value("id").map(ContenderId::from_uuid)).collect()
}

/// NOT_FOUND for the first of `named` that is not one of battle `id`'s
/// contenders.
async fn all_contenders_of<C: Conn>(
    conn: &mut C,
    id: BattleId,
    named: impl IntoIterator<Item = ContenderId>,
) -> LfResult<()> {
    let ids = contender_ids(conn, id).await?;
    match named.into_iter().find(|c| !ids.contains(c)) {
        Some(stranger) => Err(contender_not_found(id, stranger)),
        None => Ok(()),
    }
}

pub(crate) async fn create_battle<C: Conn>(conn: &mut C, b: &Battle) -> LfResult<()> {
    insert(conn, bind_battle(query::<C::Database>(INSERT_BATTLE), b), || {
        format!("battle {} already exists", b.id)
    })
    .await?;
    if b.status.has_results() {
        // Created closed (imports, fixtures): results without standings.
        execute(conn, query(INSERT_RESULT.of::<C::Database>()).put(b.id.as_uuid())).await?;
    }
    Ok(())
}

pub(crate) async fn get_battle<C: Conn>(conn: &mut C, reach: Reach, id: BattleId) -> LfResult<Battle> {
    let q = query(GET_BATTLE).put(id.as_uuid()).put_everything_or_me(reach);
    row_of(conn, q, battle).await?.ok_or_else(|| battle_not_found(id))
}

/// The sheet of battle `id`; run it in a read transaction, so that every
/// query sees one snapshot.
pub(crate) async fn get_sheet<C: Conn>(conn: &mut C, reach: Reach, id: BattleId) -> LfResult<BattleSheet> {
    let battle = get_battle(conn, reach, id).await?;
    let contenders = all_rows(conn, CONTENDERS, id.as_uuid(), contender).await?;
    let submissions = all_rows(conn, SUBMISSIONS, id.as_uuid(), submission).await?;
    let counts = all_rows(conn, TALLY, id.as_uuid(), |row| {
        Ok((row.value::<Option<Uuid>>("pick_contender_id")?, row.value::<i64>("n")?))
    })
    .await?;
    let verdicts = all_rows(conn, VERDICTS, id.as_uuid(), verdict).await?;
    let judge_errors = all_rows(conn, JUDGE_ERRORS, id.as_uuid(), judge_error).await?;
    let answer_errors = all_rows(conn, ANSWER_ERRORS, id.as_uuid(), answer_error).await?;
    let standings = all_rows(conn, STANDINGS, id.as_uuid(), standing).await?;
    let votes = tally(&contenders, &counts);
    Ok(BattleSheet {
        battle,
        contenders,
        submissions,
        votes,
        verdicts,
        judge_errors,
        answer_errors,
        standings,
    })
}

/// The tally of `counts` (votes per picked contender, `None` for ties) for
/// `contenders` in slot order.
fn tally(contenders: &[Contender], counts: &[(Option<Uuid>, i64)]) -> VoteTally {
    let count_of = |pick: Option<Uuid>| {
        counts.iter().find(|(p, _)| *p == pick).map_or(0, |(_, n)| u32::try_from(*n).unwrap_or(u32::MAX))
    };
    VoteTally {
        per_contender: contenders
            .iter()
            .map(|c| ContenderVotes { contender_id: c.id, votes: count_of(Some(c.id.as_uuid())) })
            .collect(),
        ties: count_of(None),
        total: counts.iter().map(|(_, n)| u32::try_from(*n).unwrap_or(u32::MAX)).sum(),
    }
}

pub(crate) async fn add_contender<C: Conn>(
    conn: &mut C,
    c: &Contender,
    expected: BattleStatus,
) -> LfResult<()> {
    let now = lock_battle(conn, c.battle_id).await?;
    expect(c.battle_id, now, &[expected])?;
    let row = query::<C::Database>(SLOT_CHECK)
        .put(c.battle_id.as_uuid())
        .put(c.reference.as_uuid())
        .fetch_one(conn.exec())
        .await
        .map_err(map_db_err)?;
    let (n, same_ref) = (row.value::<i64>("n")?, row.value::<i64>("same_ref")?);
    if n != c.slot.index() as i64 || same_ref > 0 {
        return Err(LfError::conflict(format!(
            "slot {} or this contender reference was taken in battle {} meanwhile. Read the battle again and retry.",
            c.slot, c.battle_id
        )));
    }
    insert(conn, bind_contender(query::<C::Database>(INSERT_CONTENDER), c), || {
        format!("contender {} already exists", c.id)
    })
    .await
}

pub(crate) async fn set_status<C: Conn>(
    conn: &mut C,
    id: BattleId,
    from: BattleStatus,
    to: BattleStatus,
    at: Timestamp,
) -> LfResult<()> {
    let now = lock_battle(conn, id).await?;
    expect(id, now, &[from])?;
    execute(conn, query(SET_STATUS).put(id.as_uuid()).put(to.as_str().to_owned()).put_time(at)).await?;
    if from.has_results() && !to.has_results() {
        execute(conn, query(DELETE_RESULT).put(id.as_uuid())).await?;
    }
    Ok(())
}

pub(crate) async fn answered_executing<C: Conn>(
    conn: &mut C,
    after: Option<(Timestamp, BattleId)>,
    limit: u32,
) -> LfResult<Vec<Battle>> {
    let (at, id) = after.unwrap_or((Timestamp::from_micros(0), BattleId::from_uuid(Uuid::nil())));
    let q =
        query(ANSWERED_EXECUTING).put(after.is_none()).put_time(at).put(id.as_uuid()).put(i64::from(limit));
    rows_of(conn, q, battle).await
}

pub(crate) async fn put_submission<C: Conn>(
    conn: &mut C,
    s: &Submission,
    advance_to: Option<BattleStatus>,
    cost: Option<&lf_core::AnswerCost>,
) -> LfResult<StoredSubmission> {
    let id = s.battle_id;
    let mut now = lock_battle(conn, id).await?;
    let existing = query::<C::Database>(SUBMISSION_OF)
        .put(id.as_uuid())
        .put(s.contender_id.as_uuid())
        .fetch_optional(conn.exec())
        .await
        .map_err(map_db_err)?
        .ok_or_else(|| contender_not_found(id, s.contender_id))?;
    expect(id, now, &[BattleStatus::Open, BattleStatus::Executing])?;
    let (stored, replaced) = match existing.value::<Option<Uuid>>("id")? {
        Some(first) => {
            let q = query(REPLACE_SUBMISSION)
                .put(id.as_uuid())
                .put(s.contender_id.as_uuid())
                .put(s.text.as_str().to_owned())
                .put(s.submitted_by.map(|l| l.as_uuid()))
                .put_time(s.updated_at);
            execute(conn, q).await?;
            let created_at = existing.time("created_at")?;
            (Submission { id: SubmissionId::from_uuid(first), created_at, ..s.clone() }, true)
        }
        None => {
            insert(conn, bind_submission(query::<C::Database>(INSERT_SUBMISSION), s), || {
                format!("submission {} already exists", s.id)
            })
            .await?;
            (s.clone(), false)
        }
    };
    if let Some(cost) = cost {
        let k = AnswerCostRecord {
            battle_id: id,
            contender_id: Some(s.contender_id),
            cost: cost.clone(),
            at: s.updated_at,
        };
        write_cost(conn, &k).await?;
    }
    if let Some(to) = advance_to
        && now == BattleStatus::Executing
    {
        let missing: i64 = query::<C::Database>(WITHOUT_SUBMISSION)
            .put(id.as_uuid())
            .fetch_one(conn.exec())
            .await
            .map_err(map_db_err)?
            .value("n")?;
        if missing == 0 {
            let q = query(SET_STATUS).put(id.as_uuid()).put(to.as_str().to_owned()).put_time(s.updated_at);
            execute(conn, q).await?;
            now = to;
        }
    }
    Ok(StoredSubmission { submission: stored, replaced, status: now })
}

pub(crate) async fn put_vote<C: Conn>(conn: &mut C, v: &Vote) -> LfResult<StoredVote> {
    let id = v.battle_id;
    let now = lock_battle(conn, id).await?;
    if let VotePick::Contender(pick) = v.pick {
        all_contenders_of(conn, id, [pick]).await?;
    }
    expect(id, now, &[BattleStatus::Voting])?;
    let existing = query::<C::Database>(VOTE_OF)
        .put(id.as_uuid())
        .put(v.voter.as_uuid())
        .fetch_optional(conn.exec())
        .await
        .map_err(map_db_err)?;
    match existing {
        Some(first) => {
            let q = query(REPLACE_VOTE)
                .put(id.as_uuid())
                .put(v.voter.as_uuid())
                .put(pick_id(v.pick))
                .put(v.rationale.as_ref().map(|r| r.as_str().to_owned()))
                .put_time(v.updated_at);
            execute(conn, q).await?;
            let vote = Vote {
                id: VoteId::from_uuid(first.value("id")?),
                created_at: first.time("created_at")?,
                ..v.clone()
            };
            Ok(StoredVote { vote, replaced: true })
        }
        None => {
            insert(conn, bind_vote(query::<C::Database>(INSERT_VOTE), v), || {
                format!("vote {} already exists", v.id)
            })
            .await?;
            Ok(StoredVote { vote: v.clone(), replaced: false })
        }
    }
}

/// What `voter` picked in battle `id` (read within `reach`), if they voted.
pub(crate) async fn vote_of<C: Conn>(
    conn: &mut C,
    reach: Reach,
    id: BattleId,
    voter: LenserId,
) -> LfResult<Option<VotePick>> {
    get_battle(conn, reach, id).await?;
    let row = query::<C::Database>(PICK_OF)
        .put(id.as_uuid())
        .put(voter.as_uuid())
        .fetch_optional(conn.exec())
        .await
        .map_err(map_db_err)?;
    row.map(|r| {
        Ok(match r.value::<Option<Uuid>>("pick_contender_id")? {
            Some(c) => VotePick::Contender(ContenderId::from_uuid(c)),
            None => VotePick::Tie,
        })
    })
    .transpose()
}

pub(crate) async fn put_verdicts<C: Conn>(
    conn: &mut C,
    id: BattleId,
    verdicts: &[Verdict],
    cost: Option<&AnswerCostRecord>,
) -> LfResult<()> {
    let now = lock_battle(conn, id).await?;
    if let Some(v) = verdicts.iter().find(|v| v.battle_id != id) {
        return Err(contender_not_found(id, v.contender_id));
    }
    all_contenders_of(conn, id, verdicts.iter().map(|v| v.contender_id)).await?;
    expect(id, now, &[BattleStatus::Scoring])?;
    execute(conn, query(DELETE_VERDICTS).put(id.as_uuid())).await?;
    for v in verdicts {
        let q = bind_verdict(query(INSERT_VERDICT), v);
        insert(conn, q, || format!("two verdicts for contender {} of battle {id}", v.contender_id)).await?;
    }
    if let Some(k) = cost {
        write_cost(conn, &AnswerCostRecord { battle_id: id, contender_id: None, ..k.clone() }).await?;
    }
    Ok(())
}

pub(crate) async fn add_judge_error<C: Conn>(conn: &mut C, e: &JudgeError) -> LfResult<()> {
    let now = lock_battle(conn, e.battle_id).await?;
    expect(e.battle_id, now, &[BattleStatus::Scoring])?;
    let q = query(INSERT_JUDGE_ERROR)
        .put(e.battle_id.as_uuid())
        .put(e.model.clone())
        .put(e.message.clone())
        .put_time(e.at);
    execute(conn, q).await?;
    Ok(())
}

pub(crate) async fn add_answer_error<C: Conn>(conn: &mut C, e: &AnswerError) -> LfResult<()> {
    lock_battle(conn, e.battle_id).await?;
    all_contenders_of(conn, e.battle_id, [e.contender_id]).await?;
    let q = query(INSERT_ANSWER_ERROR)
        .put(e.battle_id.as_uuid())
        .put(e.contender_id.as_uuid())
        .put(e.run_id.clone())
        .put(e.message.clone())
        .put_time(e.at);
    execute(conn, q).await?;
    Ok(())
}

pub(crate) async fn put_answer_cost<C: Conn>(conn: &mut C, k: &AnswerCostRecord) -> LfResult<()> {
    lock_battle(conn, k.battle_id).await?;
    all_contenders_of(conn, k.battle_id, k.contender_id).await?;
    write_cost(conn, k).await
}

/// Writes `k`, replacing the cost recorded for its contender (or judge)
/// before; the battle is locked and the contender checked by the caller.
async fn write_cost<C: Conn>(conn: &mut C, k: &AnswerCostRecord) -> LfResult<()> {
    let q = query(DELETE_COST.of::<C::Database>())
        .put(k.battle_id.as_uuid())
        .put(k.contender_id.map(|c| c.as_uuid()));
    execute(conn, q).await?;
    execute(conn, bind_answer_cost(query(INSERT_COST), k)).await?;
    Ok(())
}

pub(crate) async fn answer_costs<C: Conn>(
    conn: &mut C,
    reach: Reach,
    id: BattleId,
) -> LfResult<Vec<AnswerCostRecord>> {
    get_battle(conn, reach, id).await?;
    all_rows(conn, COSTS, id.as_uuid(), answer_cost).await
}

pub(crate) async fn cost_means<C: Conn>(
    conn: &mut C,
    battle_type: Option<BattleType>,
) -> LfResult<Vec<CostMean>> {
    let q = query::<C::Database>(COST_MEANS)
        .put(battle_type.is_none())
        .put(battle_type.map_or("", |t| t.as_str()).to_owned());
    rows_of(conn, q, cost_mean).await
}

pub(crate) async fn close_battle<C: Conn>(
    conn: &mut C,
    id: BattleId,
    standings: &[Standing],
    winner: Option<ContenderId>,
    at: Timestamp,
) -> LfResult<()> {
    let now = lock_battle(conn, id).await?;
    all_contenders_of(conn, id, standings.iter().map(|s| s.contender_id).chain(winner)).await?;
    expect(id, now, &[BattleStatus::Scoring])?;
    let q = query(CLOSE)
        .put(id.as_uuid())
        .put(BattleStatus::Closed.as_str().to_owned())
        .put(winner.map(|w| w.as_uuid()))
        .put_time(at);
    execute(conn, q).await?;
    for s in standings {
        let q = bind_standing(query(INSERT_STANDING), id, s);
        insert(conn, q, || {
            format!(
                "two standings for contender {} or position {} of battle {id}",
                s.contender_id, s.position
            )
        })
        .await?;
    }
    execute(conn, query(INSERT_RESULT.of::<C::Database>()).put(id.as_uuid())).await?;
    Ok(())
}

/// Every closed or published battle's results (of type `battle_type` when
/// given), each row decoded as it arrives: the rows of every closed battle
/// are never held at once. (SQLite's store reads them on a direct reader instead:
/// `sqlite_direct::closed_results`.)
pub(crate) async fn closed_results<C: Conn>(
    conn: &mut C,
    battle_type: Option<BattleType>,
) -> LfResult<Vec<BattleResult>> {
    let mut rows = query::<C::Database>(CLOSED_RESULTS)
        .put(battle_type.is_none())
        .put(battle_type.map_or("", |t| t.as_str()).to_owned())
        .fetch(conn.exec());
    let mut results = Vec::new();
    while let Some(row) = rows.try_next().await.map_err(map_db_err)? {
        results.push(battle_result(&row)?);
    }
    Ok(results)
}

pub(crate) async fn results_version<C: Conn>(conn: &mut C) -> LfResult<i64> {
    let row = query::<C::Database>(RESULTS_VERSION).fetch_one(conn.exec()).await.map_err(map_db_err)?;
    row.value("version")
}

/// Which battles a listing covers: `list_battles`'s filter,
/// `battle_history`'s, or `search_battles`'s words.
#[derive(Clone, Copy)]
pub(crate) enum Listing<'a> {
    List(&'a BattleFilter),
    History(&'a HistoryFilter),
    Search(&'a SearchQuery),
}

/// The `FROM … WHERE` of a listing. Its text depends only on which filters
/// are set (and how many words a search has), so each backend's statement
/// cache holds one statement per shape.
fn push_from<DB: Dialect>(qb: &mut QueryBuilder<DB>, reach: Reach, listing: Listing<'_>) {
    qb.push(" FROM battles b WHERE ");
    let status = match listing {
        Listing::List(f) => {
            match f.status {
                Some(_) => qb.push("TRUE"),
                None => qb.push("b.status <> 'archived'"),
            };
            if let Some(t) = f.battle_type {
                DB::push_bind(qb.push(" AND b.battle_type = "), t.as_str().to_owned());
            }
            if let Some(c) = f.creator {
                DB::push_bind(qb.push(" AND b.creator_id = "), c.as_uuid());
            }
            f.status
        }
        Listing::History(f) => {
            let me = f.lenser.as_uuid();
            DB::push_bind(qb.push("(b.creator_id = "), me);
            qb.push(" OR EXISTS (SELECT 1 FROM battle_contenders c WHERE c.battle_id = b.id AND c.reference_id = ");
            DB::push_bind(qb, me).push("))");
            f.status
        }
        Listing::Search(q) => {
            qb.push("b.status <> 'archived'");
            page::push_words(qb, q, ["b.title", "b.task_prompt"]);
            None
        }
    };
    if let Some(s) = status {
        DB::push_bind(qb.push(" AND b.status = "), s.as_str().to_owned());
    }
    if let Reach::Lenser(me) = reach {
        DB::push_bind(qb.push(" AND (b.status <> 'draft' OR b.creator_id = "), me.as_uuid()).push(")");
    }
}

/// A page of battles with their contender and vote counts, newest first.
pub(crate) async fn list<C: Conn>(
    conn: &mut C,
    reach: Reach,
    listing: Listing<'_>,
    page: PageRequest,
) -> LfResult<Page<BattleSummary>> {
    let select = concat!(
        "SELECT ",
        battle_columns!(),
        ", (SELECT count(*) FROM battle_contenders c WHERE c.battle_id = b.id) AS contenders, \
         (SELECT count(*) FROM battle_votes v WHERE v.battle_id = b.id) AS votes"
    );
    let from = |qb: &mut QueryBuilder<C::Database>| push_from(qb, reach, listing);
    page::listing(conn, select, from, " ORDER BY b.created_at DESC, b.id DESC", page, summary).await
}

fn summary<R: Columns>(row: &R) -> LfResult<BattleSummary> {
    let count = |column: &str| {
        let n = row.value::<i64>(column)?;
        u32::try_from(n).map_err(|_| crate::error::corrupt(format!("{column}: {n}")))
    };
    Ok(BattleSummary { battle: battle(row)?, contenders: count("contenders")?, votes: count("votes")? })
}
