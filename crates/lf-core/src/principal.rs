use crate::error::{LfError, LfResult};
use crate::id::LenserId;

/// A scope an access token carries.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Scope {
    Read,
    Write,
}

/// The scopes of a token. `write` implies nothing about `read`: both are set
/// for a full token.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct Scopes {
    pub read: bool,
    pub write: bool,
}

impl Scopes {
    pub const READ: Scopes = Scopes { read: true, write: false };
    pub const READ_WRITE: Scopes = Scopes { read: true, write: true };

    pub fn allows(&self, scope: Scope) -> bool {
        match scope {
            Scope::Read => self.read,
            Scope::Write => self.write,
        }
    }
}

/// Who is making a call. Every domain operation takes one.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Principal {
    /// A person authenticated over HTTP by a bearer token.
    Lenser { id: LenserId, scopes: Scopes },
    /// An AI Lenser acting for its owner: it reaches what its owner reaches.
    Agent { agent_id: LenserId, owner: LenserId },
    /// The local operator (stdio): sees everything; rows it creates are owned
    /// by `acting_as`, when set.
    Service { acting_as: Option<LenserId> },
}

/// What rows a principal may read. Stores turn this into a query predicate;
/// nothing is filtered after the fact.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reach {
    /// Every row that is not deleted.
    Everything,
    /// The lenser's own rows, whatever their visibility, plus public and
    /// community rows of everyone.
    Lenser(LenserId),
}

impl Principal {
    pub fn reach(&self) -> Reach {
        match self {
            Principal::Lenser { id, .. } => Reach::Lenser(*id),
            Principal::Agent { owner, .. } => Reach::Lenser(*owner),
            Principal::Service { .. } => Reach::Everything,
        }
    }

    /// The lenser who will own a row this principal creates.
    pub fn owner_for_create(&self) -> LfResult<LenserId> {
        match self {
            Principal::Lenser { id, .. } => Ok(*id),
            Principal::Agent { owner, .. } => Ok(*owner),
            Principal::Service { acting_as: Some(id) } => Ok(*id),
            Principal::Service { acting_as: None } => Err(LfError::missing_lenser()),
        }
    }

    /// The lenser this principal speaks for, when there is one.
    pub fn lenser(&self) -> Option<LenserId> {
        match self {
            Principal::Lenser { id, .. } => Some(*id),
            Principal::Agent { owner, .. } => Some(*owner),
            Principal::Service { acting_as } => *acting_as,
        }
    }

    /// Who a row this principal writes records as its actor: the agent
    /// itself for an agent (its owner owns what it creates), the lenser,
    /// or the lenser the service acts as.
    pub fn actor(&self) -> Option<LenserId> {
        match self {
            Principal::Agent { agent_id, .. } => Some(*agent_id),
            _ => self.lenser(),
        }
    }

    /// The AI Lenser this principal is, when it is one: what a row it writes
    /// records as its `agent` (the row's owner is still [`Self::owner_for_create`]).
    pub fn agent(&self) -> Option<LenserId> {
        match self {
            Principal::Agent { agent_id, .. } => Some(*agent_id),
            _ => None,
        }
    }

    /// Whether this principal may change a row owned by `owner`.
    pub fn may_write(&self, owner: LenserId) -> bool {
        match self {
            Principal::Service { .. } => true,
            _ => self.lenser() == Some(owner),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn service_without_lenser_cannot_own() {
        let p = Principal::Service { acting_as: None };
        assert_eq!(p.owner_for_create().unwrap_err().code(), crate::ErrorCode::MissingLenser);
        assert_eq!(p.reach(), Reach::Everything);
        assert!(p.may_write(LenserId::new()));
    }

    #[test]
    fn lenser_writes_own_rows_only() {
        let me = LenserId::new();
        let p = Principal::Lenser { id: me, scopes: Scopes::READ_WRITE };
        assert!(p.may_write(me));
        assert!(!p.may_write(LenserId::new()));
        assert_eq!(p.reach(), Reach::Lenser(me));
    }

    #[test]
    fn agent_reaches_as_its_owner() {
        let owner = LenserId::new();
        let p = Principal::Agent { agent_id: LenserId::new(), owner };
        assert_eq!(p.reach(), Reach::Lenser(owner));
        assert_eq!(p.owner_for_create().unwrap(), owner);
        assert_eq!(p.agent(), Some(p.actor().unwrap()));
        assert_eq!(Principal::Lenser { id: owner, scopes: Scopes::READ }.agent(), None);
    }
}
