use time::OffsetDateTime;

use super::RiskLevels;
use crate::ids::TenantId;

/// A customer organisation; every other record belongs to exactly one tenant.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Tenant {
    pub id: TenantId,
    /// Unique across the server.
    pub name: String,
    /// The tenant's own choices; what it leaves out follows the server's defaults.
    pub settings: TenantSettings,
    #[serde(with = "time::serde::rfc3339")]
    pub created_at: OffsetDateTime,
    #[serde(with = "time::serde::rfc3339")]
    pub updated_at: OffsetDateTime,
}

impl Tenant {
    /// The values in force: the tenant's own, or `defaults` where it has none.
    pub fn effective(&self, defaults: &EffectiveSettings) -> EffectiveSettings {
        EffectiveSettings {
            approval_threshold: self.settings.approval_threshold.unwrap_or(defaults.approval_threshold),
            risk_levels: self.settings.risk_levels.unwrap_or(defaults.risk_levels),
            hitl_timeout_secs: self.settings.hitl_timeout_secs.unwrap_or(defaults.hitl_timeout_secs),
        }
    }
}

/// What a tenant chose for itself (stored as JSON; a field left out follows the server).
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize, serde::Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct TenantSettings {
    /// A policy check whose risk score is at or above this needs approval (0 < t ≤ 1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub approval_threshold: Option<f64>,
    /// Where the risk levels begin, for policy checks and the agent registry.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub risk_levels: Option<RiskLevels>,
    /// The Prompt Guard blocks a text scoring at or above this (0 < t < 1), over the
    /// threshold its model was calibrated with.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub guard_threshold: Option<f64>,
    /// How long an approval request waits for a decision before it expires, in seconds,
    /// when the request names no `timeout_seconds` (1 to 604,800).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hitl_timeout_secs: Option<u32>,
    /// Who is notified as an approval request keeps waiting: up to five steps, each a role
    /// and the seconds after the request was made (rising). Requests keep the chain they
    /// were made under.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hitl_escalation: Option<Vec<super::EscalationStep>>,
}

/// The settings a tenant's policy checks and agents use.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct EffectiveSettings {
    pub approval_threshold: f64,
    pub risk_levels: RiskLevels,
    /// The approval window of a request that names none, in seconds.
    pub hitl_timeout_secs: u32,
}

impl Default for EffectiveSettings {
    /// The server's defaults unless configured otherwise: approval at 0.8, the calibrated
    /// risk levels, an hour to decide an approval request.
    fn default() -> Self {
        Self { approval_threshold: 0.8, risk_levels: RiskLevels::default(), hitl_timeout_secs: 3600 }
    }
}

string_enum! {
    /// What a tenant's signing secret is for: `callback` signs the HITL callbacks sent to
    /// its receivers; `webhook` (optional) is the key its senders sign `POST
    /// /webhooks/agent` with, instead of the server's `WEBHOOK_SECRET`.
    SecretPurpose {
        Callback => "callback",
        Webhook => "webhook",
    }
}

/// A tenant's signing secret (HMAC-SHA256 key). The value is shown once, when it is made;
/// it is kept because an HMAC cannot be checked against a hash of its key.
#[derive(Clone, PartialEq)]
pub struct TenantSecret {
    pub tenant_id: TenantId,
    pub purpose: SecretPurpose,
    /// `whsec_` and 43 base64url characters; its UTF-8 bytes are the key.
    pub secret: String,
    /// The secret this one replaced, still signing (callbacks) or accepted (webhook) until
    /// `previous_until`, so receivers and senders can switch without a gap.
    pub previous: Option<String>,
    pub previous_until: Option<OffsetDateTime>,
    /// Webhook only: refuse the untimestamped `sha256=` form for this tenant.
    pub require_timestamp: bool,
    pub created_at: OffsetDateTime,
}

impl std::fmt::Debug for TenantSecret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TenantSecret")
            .field("tenant_id", &self.tenant_id)
            .field("purpose", &self.purpose)
            .field("previous_until", &self.previous_until)
            .field("require_timestamp", &self.require_timestamp)
            .field("created_at", &self.created_at)
            .finish_non_exhaustive()
    }
}

impl TenantSecret {
    /// A new random key (`whsec_…`) for `tenant`, replacing nothing.
    pub fn generate(
        tenant: TenantId,
        purpose: SecretPurpose,
        require_timestamp: bool,
        now: OffsetDateTime,
    ) -> crate::Result<Self> {
        Ok(Self {
            tenant_id: tenant,
            purpose,
            secret: crate::secrets::generate_tenant_secret()?,
            previous: None,
            previous_until: None,
            require_timestamp,
            created_at: now,
        })
    }

    /// The keys in force at `now`: the current one, then the previous one in its grace.
    pub fn keys_at(&self, now: OffsetDateTime) -> Vec<&str> {
        let mut keys = vec![self.secret.as_str()];
        if let (Some(previous), Some(until)) = (&self.previous, self.previous_until)
            && now < until
        {
            keys.push(previous);
        }
        keys
    }
}
