//! Tenant policies: Rego modules evaluated by every policy check.

use time::OffsetDateTime;

use crate::ids::{PolicyId, TenantId, UserId};

/// A Rego policy of one tenant. The Rego contract (the input document and the rules a
/// module may define) is in `docs/policies.md`.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Policy {
    pub id: PolicyId,
    pub tenant_id: TenantId,
    /// Unique within the tenant.
    pub name: String,
    pub description: Option<String>,
    /// The module's source, as written (compiled on every create and update).
    pub rego: String,
    /// Only enabled policies take part in policy checks (`mode` `enforce` or `shadow`).
    pub enabled: bool,
    /// `enforce` (its outcomes decide), `shadow` (evaluated in every check, its outcomes
    /// recorded as `would_…` and never acted on) or `off` (not evaluated: `enabled` false).
    pub mode: PolicyMode,
    /// 1 at creation; one more on every update.
    pub version: i64,
    /// The user who created the policy; `null` once that user is deleted.
    pub created_by: Option<UserId>,
    #[serde(with = "time::serde::rfc3339")]
    pub created_at: OffsetDateTime,
    #[serde(with = "time::serde::rfc3339")]
    pub updated_at: OffsetDateTime,
}

string_enum! {
    /// How a policy takes part in checks.
    PolicyMode {
        Enforce => "enforce",
        Shadow => "shadow",
        Off => "off",
    }
}

impl PolicyMode {
    /// The mode of a policy stored as `enabled` and `shadow`.
    pub fn of(enabled: bool, shadow: bool) -> Self {
        match (enabled, shadow) {
            (false, _) => PolicyMode::Off,
            (true, true) => PolicyMode::Shadow,
            (true, false) => PolicyMode::Enforce,
        }
    }
}

/// The filters of `GET /policies`, validated.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PolicyFilter {
    pub enabled: Option<bool>,
}

impl PolicyFilter {
    /// Whether `policy` passes, as every adapter must decide it.
    pub fn matches(&self, policy: &Policy) -> bool {
        self.enabled.is_none_or(|e| policy.enabled == e)
    }
}
