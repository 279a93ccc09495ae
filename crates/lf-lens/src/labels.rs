//! Labels: named pointers to a lens's versions (`production`, `staging`),
//! moved to roll out and moved back to roll back, every move recorded.
//!
//! Rules, all here and in [`crate::LensService`]'s label use cases:
//! - a name ([`LabelName`], in lf-core: workflows name labels too) is `[a-z0-9_-]{1,32}`; `latest` is reserved: it always means the
//!   head, reads accept it, nothing sets or removes it;
//! - `production` is protected on every lens; the owner may protect more;
//! - a protected label is moved or removed by the owner only (an AI Lenser
//!   acting for the owner needs its policy's `can_move_protected_labels`);
//!   any other label by whoever may change the lens;
//! - a move records who made it, when, and from which version to which; the
//!   store applies a move and its record in one transaction, checking the
//!   protection it finds there, so of two racing moves both are recorded,
//!   in order, and the later one wins.

use lf_core::{
    Detail, DomainEvent, ErrorCode, EventKind, LabelName, LensId, LenserId, LfError, LfResult, Page,
    PageRequest, Principal, Timestamp, VersionId,
};

use crate::model::{Lens, Semver, VersionSelector, Visibility};
use crate::service::LensService;

/// A version as a label points at it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct VersionRef {
    pub id: VersionId,
    pub semver: Semver,
}

/// A label of a lens and the version it points at.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LensLabel {
    pub lens_id: LensId,
    pub name: LabelName,
    pub version: VersionRef,
    /// Protected by the owner, or `production`.
    pub protected: bool,
    /// Who moved it last: the lenser, and the AI Lenser acting for them.
    pub moved_by: Option<LenserId>,
    pub moved_by_agent: Option<LenserId>,
    pub moved_at: Timestamp,
}

/// One recorded move of a label. `from` is `None` when the label was new,
/// `to` is `None` when it was removed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LabelMove {
    /// Increases with every move the store records: the history's order.
    pub seq: i64,
    pub lens_id: LensId,
    pub label: LabelName,
    pub from: Option<VersionRef>,
    pub to: Option<VersionRef>,
    pub by: Option<LenserId>,
    pub by_agent: Option<LenserId>,
    pub at: Timestamp,
}

/// A move for the store to apply: point `label` at `to` (or remove it),
/// recording the move.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LabelChange {
    pub lens_id: LensId,
    pub label: LabelName,
    /// The version to point at (of this lens: the store checks), or `None`
    /// to remove the label.
    pub to: Option<VersionId>,
    /// Mark the label protected or not; `None` keeps what it is (a new
    /// label starts unprotected, `production` is always protected).
    pub protect: Option<bool>,
    /// Whether the mover may move a protected label. The store checks the
    /// protection it finds in the same transaction.
    pub may_move_protected: bool,
    pub by: Option<LenserId>,
    pub by_agent: Option<LenserId>,
    pub at: Timestamp,
}

impl LensLabel {
    /// The label as read: `production` is protected whatever its stored
    /// flag says.
    pub fn as_read(self) -> Self {
        LensLabel { protected: self.protected || self.name.always_protected(), ..self }
    }
}

impl LabelChange {
    /// Why the change may not go ahead on the label as stored (`current`,
    /// with its own flag): [`LabelChanged::Protected`] or
    /// [`LabelChanged::Missing`]; `None` when it may. The same rule for
    /// every store, applied under the store's lock.
    pub fn refused(&self, current: Option<&LensLabel>) -> Option<LabelChanged> {
        let protected = self.label.always_protected() || current.is_some_and(|l| l.protected);
        if protected && !self.may_move_protected {
            return Some(LabelChanged::Protected);
        }
        (self.to.is_none() && current.is_none()).then_some(LabelChanged::Missing)
    }

    /// The label as the change leaves it, with its stored flag (`None`:
    /// removed), from the label as stored and the version `to` names. A
    /// label left where it points keeps who moved it last.
    pub fn after(&self, current: Option<&LensLabel>, to: Option<VersionRef>) -> Option<LensLabel> {
        let version = to?;
        let protected = self.protect.unwrap_or(current.is_some_and(|l| l.protected));
        Some(match current {
            Some(now) if now.version == version => LensLabel { protected, ..now.clone() },
            _ => LensLabel {
                lens_id: self.lens_id,
                name: self.label,
                version,
                protected,
                moved_by: self.by,
                moved_by_agent: self.by_agent,
                moved_at: self.at,
            },
        })
    }

    /// The record of this change as the store applied it: `seq` its place
    /// in the history, `from` what the label pointed at before.
    pub fn record(&self, seq: i64, from: Option<VersionRef>, to: Option<VersionRef>) -> LabelMove {
        LabelMove {
            seq,
            lens_id: self.lens_id,
            label: self.label,
            from,
            to,
            by: self.by,
            by_agent: self.by_agent,
            at: self.at,
        }
    }
}

/// What the store made of a [`LabelChange`].
#[derive(Clone, Debug, PartialEq, Eq)]
#[allow(clippy::large_enum_variant, reason = "one per change, read at once; a box would buy nothing")]
pub enum LabelChanged {
    /// Applied. `record` is the move recorded (`None` when the label already
    /// pointed at `to`: a change of protection alone, or nothing, is not a
    /// move); `label` is the label after it (`None` when removed).
    Done { record: Option<LabelMove>, label: Option<LensLabel> },
    /// The label is protected and the mover may not move protected labels:
    /// nothing changed.
    Protected,
    /// There is no such label to remove: nothing changed.
    Missing,
}

/// A label to set: point `label` at the version `version` names, and mark
/// it protected or not when `protect` says.
#[derive(Clone, Debug)]
pub struct SetLabel {
    pub lens_id: LensId,
    pub label: LabelName,
    pub version: VersionSelector,
    pub protect: Option<bool>,
}

/// What setting a label did: the label as it is now, and the move recorded
/// (`None` when it already pointed there).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LabelSet {
    pub lens: Lens,
    pub label: LensLabel,
    pub moved: Option<LabelMove>,
}

impl LensService {
    /// Sets a label (a new one, or a move: a move back is the rollback).
    /// `agent_may_move_protected` is the policy of the AI Lenser when `p`
    /// is one (`can_move_protected_labels`); it is not read otherwise.
    pub async fn set_label(
        &self,
        p: &Principal,
        set: SetLabel,
        agent_may_move_protected: bool,
    ) -> LfResult<LabelSet> {
        let lens = self.store.get_lens(p.reach(), set.lens_id).await?;
        let may_move_protected = may_move_protected(p, &lens, agent_may_move_protected)?;
        if set.label.is_latest() {
            return Err(LabelName::settable("label", LabelName::LATEST).unwrap_err());
        }
        if set.protect == Some(false) && set.label.always_protected() {
            return Err(LfError::invalid_argument(
                "production is protected on every lens: it cannot be unprotected. Use another label for versions anyone who can edit the lens may move.",
            )
            .with_field("protected"));
        }
        if set.protect.is_some() && !may_move_protected {
            return Err(refused(p, &lens, set.label, "mark labels protected or not"));
        }
        let version = self.version(p, lens.id, set.version).await?;
        let change = self.change(p, lens.id, set.label, Some(version.id), set.protect, may_move_protected);
        match self.store.change_label(&change).await? {
            LabelChanged::Done { record, label: Some(label) } => {
                if let Some(record) = &record {
                    self.tell_moved(&lens, record);
                }
                Ok(LabelSet { lens, label, moved: record })
            }
            LabelChanged::Protected => Err(refused(p, &lens, set.label, "move it")),
            LabelChanged::Done { label: None, .. } | LabelChanged::Missing => {
                Err(LfError::internal(format!("label {} was set but not read back", set.label)))
            }
        }
    }

    /// Removes a label, recording it as a move to no version.
    pub async fn remove_label(
        &self,
        p: &Principal,
        lens_id: LensId,
        label: LabelName,
        agent_may_move_protected: bool,
    ) -> LfResult<LabelMove> {
        let lens = self.store.get_lens(p.reach(), lens_id).await?;
        let may_move_protected = may_move_protected(p, &lens, agent_may_move_protected)?;
        if label.is_latest() {
            return Err(LabelName::settable("label", LabelName::LATEST).unwrap_err());
        }
        let change = self.change(p, lens.id, label, None, None, may_move_protected);
        match self.store.change_label(&change).await? {
            LabelChanged::Done { record: Some(record), .. } => {
                self.tell_moved(&lens, &record);
                Ok(record)
            }
            LabelChanged::Protected => Err(refused(p, &lens, label, "remove it")),
            LabelChanged::Missing | LabelChanged::Done { record: None, .. } => {
                Err(self.label_not_found(p, lens_id, label).await)
            }
        }
    }

    /// The labels of a lens the caller can read, by name.
    pub async fn labels(&self, p: &Principal, lens_id: LensId) -> LfResult<Vec<LensLabel>> {
        self.store.list_labels(p.reach(), lens_id).await
    }

    /// The recorded moves of a readable lens's labels, newest first.
    pub async fn label_history(
        &self,
        p: &Principal,
        lens_id: LensId,
        label: Option<LabelName>,
        page: PageRequest,
    ) -> LfResult<Page<LabelMove>> {
        self.store.label_history(p.reach(), lens_id, label, page).await
    }

    fn change(
        &self,
        p: &Principal,
        lens_id: LensId,
        label: LabelName,
        to: Option<VersionId>,
        protect: Option<bool>,
        may_move_protected: bool,
    ) -> LabelChange {
        LabelChange {
            lens_id,
            label,
            to,
            protect,
            may_move_protected,
            by: p.lenser(),
            by_agent: p.agent(),
            at: self.now(),
        }
    }

    fn tell_moved(&self, lens: &Lens, record: &LabelMove) {
        let id = |v: Option<VersionRef>| v.map_or_else(String::new, |v| v.id.to_string());
        let semver = |v: Option<VersionRef>| v.map_or_else(String::new, |v| v.semver.to_string());
        self.events.publish(
            DomainEvent::new(EventKind::LensLabelMoved, lens.owner, lens.visibility != Visibility::Private)
                .with("lens_id", lens.id.to_string())
                .with("title", lens.title.as_str())
                .with("label", record.label.as_str())
                .with("from_version_id", id(record.from))
                .with("from_semver", semver(record.from))
                .with("to_version_id", id(record.to))
                .with("to_semver", semver(record.to)),
        );
    }

    /// NOT_FOUND for a label the lens does not have, naming those it has
    /// (the lens's own NOT_FOUND when it is not readable).
    pub(crate) async fn label_not_found(&self, p: &Principal, lens_id: LensId, label: LabelName) -> LfError {
        let labels = match self.store.list_labels(p.reach(), lens_id).await {
            Ok(labels) => labels,
            Err(e) => return e,
        };
        let names: Vec<String> = labels.iter().map(|l| l.name.to_string()).collect();
        let has = if names.is_empty() {
            "it has no labels yet (set one with set_lens_label)".to_owned()
        } else {
            format!("its labels are {}", names.join(", "))
        };
        LfError::new(
            ErrorCode::NotFound,
            format!("Lens {lens_id} has no label {label}: {has}, and latest always names the head."),
        )
        .with_field("label")
        .with_detail("labels", Detail::Strs(names))
    }

    /// The error of a read of `which` that failed with `e`: a missing label
    /// is explained, anything else is as it was.
    pub(crate) async fn explain_missing(
        &self,
        p: &Principal,
        id: LensId,
        which: VersionSelector,
        e: LfError,
    ) -> LfError {
        match which {
            VersionSelector::Label(label) if e.code() == ErrorCode::NotFound => {
                self.label_not_found(p, id, label).await
            }
            _ => e,
        }
    }
}

/// Whether `p` may move `lens`'s protected labels; FORBIDDEN when it may
/// not change the lens at all.
fn may_move_protected(p: &Principal, lens: &Lens, agent_may_move_protected: bool) -> LfResult<bool> {
    if !p.may_write(lens.owner) {
        return Err(LfError::forbidden(format!(
            "Lens {} belongs to another lenser: only its owner (lenser {}) may move its labels. Use fork_lens to make your own copy.",
            lens.id, lens.owner
        )));
    }
    Ok(match p {
        Principal::Agent { .. } => agent_may_move_protected,
        Principal::Lenser { .. } | Principal::Service { .. } => true,
    })
}

/// The refusal of a change to a protected label, naming who may make it.
fn refused(p: &Principal, lens: &Lens, label: LabelName, what: &str) -> LfError {
    let who = format!("only the lens's owner (lenser {})", lens.owner);
    let message = match p {
        Principal::Agent { .. } => format!(
            "Label {label} of lens {} is protected: {who} may {what}, or an AI Lenser acting for the owner whose policy has can_move_protected_labels on (the owner turns it on with update_ai_lenser).",
            lens.id
        ),
        _ => format!("Label {label} of lens {} is protected: {who} may {what}.", lens.id),
    };
    LfError::permission_denied(message)
        .with_field("label")
        .with_detail("owner", Detail::Str(lens.owner.to_string()))
}
