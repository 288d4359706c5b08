//! The authenticated caller of an operation, and what it may do.

use time::OffsetDateTime;

use crate::error::{DomainError, Result};
use crate::ids::{ApiKeyId, SessionId, TenantId};
use crate::model::{Permission, Role, User};
use crate::ports::TraceContext;

/// How the caller proved who they are.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Credential {
    /// A session JWT.
    Session { session_id: SessionId, expires_at: OffsetDateTime },
    /// An API key; `permissions` are the key's, already narrowed to its owner's current role.
    ApiKey { key_id: ApiKeyId, permissions: Vec<Permission> },
}

/// An authenticated caller: the user as stored now (current role and status), not as the
/// token remembered them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Caller {
    pub user: User,
    pub credential: Credential,
    /// The trace the request came in (its `traceparent`), which the decisions made for it
    /// join and their audit records keep.
    pub trace: Option<TraceContext>,
}

impl Caller {
    pub fn tenant_id(&self) -> TenantId {
        self.user.tenant_id
    }

    /// The request's trace id as 32 hex digits, as audit records keep it.
    pub fn trace_id(&self) -> Option<String> {
        self.trace.map(|t| t.trace_id_hex())
    }

    pub fn role(&self) -> Role {
        self.user.role
    }

    pub fn session_id(&self) -> Option<SessionId> {
        match self.credential {
            Credential::Session { session_id, .. } => Some(session_id),
            Credential::ApiKey { .. } => None,
        }
    }

    /// 403 unless the caller's current role is at least `min`.
    pub fn require_role(&self, min: Role) -> Result<()> {
        if self.role() >= min {
            Ok(())
        } else {
            Err(DomainError::Forbidden(format!("requires the {min} role or higher")))
        }
    }

    pub fn has_permission(&self, permission: Permission) -> bool {
        match &self.credential {
            Credential::Session { .. } => self.role().holds(permission),
            Credential::ApiKey { permissions, .. } => permissions.contains(&permission),
        }
    }

    /// 403 unless the caller holds `permission` (through their role, or their API key).
    pub fn require_permission(&self, permission: Permission) -> Result<()> {
        if self.has_permission(permission) {
            Ok(())
        } else {
            Err(DomainError::Forbidden(format!("requires the {permission} permission")))
        }
    }
}
