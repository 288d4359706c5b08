use time::OffsetDateTime;

use super::RiskLevels;
use crate::ids::TenantId;

/// A customer organisation; every other record belongs to exactly one tenant.
#[derive(Debug, Clone, PartialEq, serde::Serialize, utoipa::ToSchema)]
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
        }
    }
}

/// What a tenant chose for itself (stored as JSON; a field left out follows the server).
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize, serde::Deserialize, utoipa::ToSchema)]
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
}

/// The settings a tenant's policy checks and agents use.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, utoipa::ToSchema)]
pub struct EffectiveSettings {
    pub approval_threshold: f64,
    pub risk_levels: RiskLevels,
}

impl Default for EffectiveSettings {
    /// The server's defaults unless configured otherwise: approval at 0.8, the calibrated
    /// risk levels.
    fn default() -> Self {
        Self { approval_threshold: 0.8, risk_levels: RiskLevels::default() }
    }
}
