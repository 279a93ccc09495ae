//! Who may do what with an agent. Each lenser is at most one thing to an
//! agent: its owner (the person who created it, exactly one), a co-owner
//! or an operator, both added by the owner.
//!
//! | permission                                        | owner | co_owner | operator |
//! |---------------------------------------------------|:-----:|:--------:|:--------:|
//! | `View`: profile, grants, action log, team runs, events | ✓ | ✓ | ✓ |
//! | `Act`: call a granted tool as the agent (`run_agent_action`) | ✓ | ✓ | ✓ |
//! | `CancelTeamRun`: stop an unfinished team run      | ✓     | ✓        | ✓        |
//! | `EditProfile`: the profile fields of `update_ai_lenser` | ✓ | ✓     |          |
//! | `ManageTools`: grant and revoke tools             | ✓     | ✓        |          |
//! | `DecideApproval`: approve or reject a team run    | ✓     | ✓        |          |
//! | `EditPolicy`: flags, daily caps, credit limit     | ✓     |          |          |
//! | `ManageMembers`: add and remove co-owners, operators | ✓  |          |          |
//! | `Archive`: retire the agent                       | ✓     |          |          |
//!
//! The policy and the members are the owner's alone: they decide what the
//! agent may spend and who answers for it. Operators run the agent but do
//! not change it; anyone who runs it may also stop it.
//!
//! Beside the roles, the service principal (stdio: the local operator) may
//! do everything, and an agent (`Principal::Agent`) may manage no agent,
//! itself included: the Agent tools are never granted. A lenser who is
//! nothing to an agent cannot see it at all (NOT_FOUND); one who can see
//! it but lacks the permission is FORBIDDEN.

use lf_core::{LfError, LfResult, Principal};

use crate::model::{Agent, Role};

/// What a use case needs to be allowed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Permission {
    View,
    Act,
    CancelTeamRun,
    EditProfile,
    ManageTools,
    DecideApproval,
    EditPolicy,
    ManageMembers,
    Archive,
}

impl Permission {
    /// Every permission, in the table's order.
    pub const ALL: [Permission; 9] = [
        Permission::View,
        Permission::Act,
        Permission::CancelTeamRun,
        Permission::EditProfile,
        Permission::ManageTools,
        Permission::DecideApproval,
        Permission::EditPolicy,
        Permission::ManageMembers,
        Permission::Archive,
    ];

    /// What the permission lets one do, for messages.
    pub const fn describe(self) -> &'static str {
        match self {
            Permission::View => "see this agent",
            Permission::Act => "act as this agent",
            Permission::CancelTeamRun => "cancel this agent's team runs",
            Permission::EditProfile => "change this agent's profile",
            Permission::ManageTools => "grant or revoke this agent's tools",
            Permission::DecideApproval => "approve or reject this agent's team runs",
            Permission::EditPolicy => "change this agent's policy (flags, daily caps, credit limit)",
            Permission::ManageMembers => "add or remove this agent's co-owners and operators",
            Permission::Archive => "archive this agent",
        }
    }
}

/// Whether `role` has `permission` (the table above).
pub const fn permits(role: Role, permission: Permission) -> bool {
    use Permission::*;
    match role {
        Role::Owner => true,
        Role::CoOwner => !matches!(permission, EditPolicy | ManageMembers | Archive),
        Role::Operator => matches!(permission, View | Act | CancelTeamRun),
    }
}

/// The roles that have `permission`, for messages.
pub fn roles_with(permission: Permission) -> Vec<&'static str> {
    Role::ALL.iter().filter(|r| permits(**r, permission)).map(|r| r.as_str()).collect()
}

/// Whether `p` may do `permission` to `agent`, which it has read (so can
/// see): FORBIDDEN naming the roles that may, otherwise.
pub fn require(p: &Principal, agent: &Agent, permission: Permission) -> LfResult<()> {
    let role = match p {
        Principal::Service { .. } => return Ok(()),
        Principal::Agent { .. } => {
            return Err(LfError::forbidden(format!(
                "An agent cannot {}: only the people it belongs to can.",
                permission.describe()
            )));
        }
        Principal::Lenser { id, .. } => agent.role_of(*id),
    };
    match role {
        Some(r) if permits(r, permission) => Ok(()),
        Some(r) => Err(LfError::forbidden(format!(
            "Only the agent's {} may {}; you are its {r}.",
            roles_with(permission).join(" or "),
            permission.describe()
        ))
        .with_detail("role", lf_core::Detail::Str(r.as_str().into()))),
        None => Err(crate::agent_not_found(agent.id)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use Permission::*;

    /// The table of the module docs, row by row: (owner, co_owner, operator).
    const TABLE: [(Permission, [bool; 3]); 9] = [
        (View, [true, true, true]),
        (Act, [true, true, true]),
        (CancelTeamRun, [true, true, true]),
        (EditProfile, [true, true, false]),
        (ManageTools, [true, true, false]),
        (DecideApproval, [true, true, false]),
        (EditPolicy, [true, false, false]),
        (ManageMembers, [true, false, false]),
        (Archive, [true, false, false]),
    ];

    #[test]
    fn the_table_is_what_permits_says() {
        assert_eq!(TABLE.map(|(p, _)| p), Permission::ALL);
        for (permission, row) in TABLE {
            for (role, allowed) in [Role::Owner, Role::CoOwner, Role::Operator].into_iter().zip(row) {
                assert_eq!(permits(role, permission), allowed, "{role} / {permission:?}");
            }
        }
    }

    #[test]
    fn the_docs_table_says_the_same() {
        let rows: Vec<(String, Vec<bool>)> = include_str!("roles.rs")
            .lines()
            .filter_map(|l| l.strip_prefix("//! | `"))
            .map(|l| {
                let cells: Vec<&str> = l.split('|').collect();
                let name = cells[0].split('`').next().unwrap().to_owned();
                (name, cells[1..4].iter().map(|c| c.contains('✓')).collect())
            })
            .collect();
        let expected: Vec<(String, Vec<bool>)> =
            TABLE.iter().map(|(p, row)| (format!("{p:?}"), row.to_vec())).collect();
        assert_eq!(rows, expected);
    }
}
