//! Registered agents: what they are, what they may do, how risky that is, and the
//! embedding that semantic search ranks them by.

use time::OffsetDateTime;

use crate::ids::{AgentId, TenantId};

/// An agent's lifecycle state as stored. An `active` agent that has not been seen for the
/// configured time is *reported* as `inactive` (see [`Agent::effective_status`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum AgentStatus {
    Active,
    Inactive,
    Suspended,
}

impl AgentStatus {
    pub const ALL: [AgentStatus; 3] = [AgentStatus::Active, AgentStatus::Inactive, AgentStatus::Suspended];

    pub fn as_str(self) -> &'static str {
        match self {
            AgentStatus::Active => "active",
            AgentStatus::Inactive => "inactive",
            AgentStatus::Suspended => "suspended",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|v| v.as_str() == s)
    }
}

/// A risk level: by default `low` (< 0.3), `medium` (< 0.6), `high` (< 0.85), `critical`;
/// a tenant may move the bounds ([`RiskLevels`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize, serde::Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum RiskLevel {
    Low,
    Medium,
    High,
    Critical,
}

impl RiskLevel {
    pub const ALL: [RiskLevel; 4] = [RiskLevel::Low, RiskLevel::Medium, RiskLevel::High, RiskLevel::Critical];

    pub fn as_str(self) -> &'static str {
        match self {
            RiskLevel::Low => "low",
            RiskLevel::Medium => "medium",
            RiskLevel::High => "high",
            RiskLevel::Critical => "critical",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|v| v.as_str() == s)
    }

    /// The level of a score in [0, 1] by the default bounds (a tenant may set its own: see
    /// [`RiskLevels`]).
    pub fn of_score(score: f64) -> Self {
        RiskLevels::default().level(score)
    }
}

/// Where the levels above `low` begin: a score below `medium` is low, below `high` medium,
/// below `critical` high, and the rest critical. Each is above the one before, within (0, 1].
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct RiskLevels {
    #[cfg_attr(feature = "openapi", schema(exclusive_minimum = 0, maximum = 1))]
    pub medium: f64,
    #[cfg_attr(feature = "openapi", schema(exclusive_minimum = 0, maximum = 1))]
    pub high: f64,
    #[cfg_attr(feature = "openapi", schema(exclusive_minimum = 0, maximum = 1))]
    pub critical: f64,
}

impl Default for RiskLevels {
    /// The bounds the built-in risk models are calibrated against (0.3, 0.6, 0.85).
    fn default() -> Self {
        let [medium, high, critical] = agentgov_detect::risk::LEVEL_BOUNDS;
        Self { medium, high, critical }
    }
}

impl RiskLevels {
    pub fn level(&self, score: f64) -> RiskLevel {
        if score < self.medium {
            RiskLevel::Low
        } else if score < self.high {
            RiskLevel::Medium
        } else if score < self.critical {
            RiskLevel::High
        } else {
            RiskLevel::Critical
        }
    }

    /// Each level with the scores it covers: at or above the first bound (none for `low`)
    /// and below the second (none for `critical`). For stores that re-level in SQL.
    pub fn bands(&self) -> [(RiskLevel, Option<f64>, Option<f64>); 4] {
        [
            (RiskLevel::Low, None, Some(self.medium)),
            (RiskLevel::Medium, Some(self.medium), Some(self.high)),
            (RiskLevel::High, Some(self.high), Some(self.critical)),
            (RiskLevel::Critical, Some(self.critical), None),
        ]
    }

    /// Why these bounds cannot be used, if they cannot.
    pub fn problem(&self) -> Option<&'static str> {
        let bounds = [self.medium, self.high, self.critical];
        if bounds.iter().any(|b| !b.is_finite() || *b <= 0.0 || *b > 1.0) {
            Some("each bound must be above 0 and at most 1")
        } else if !(self.medium < self.high && self.high < self.critical) {
            Some("must rise: medium < high < critical")
        } else {
            None
        }
    }
}

/// A JSON object, as agents' `permissions` and `metadata` are.
pub type JsonObject = serde_json::Map<String, serde_json::Value>;

/// A registered agent.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Agent {
    pub id: AgentId,
    pub tenant_id: TenantId,
    /// Unique within the tenant.
    pub name: String,
    /// The type the registrant declared, e.g. `llm`.
    #[serde(rename = "type")]
    pub agent_type: String,
    pub description: Option<String>,
    pub capabilities: Vec<String>,
    /// What the agent may touch, e.g. `{"payments": "write", "crm": ["read"]}`.
    #[cfg_attr(feature = "openapi", schema(value_type = Object))]
    pub permissions: JsonObject,
    pub status: AgentStatus,
    /// The type inferred from name, description and capabilities by the built-in classifier.
    pub predicted_type: String,
    pub risk: RiskLevel,
    /// From 0 to 1.
    pub risk_score: f64,
    #[cfg_attr(feature = "openapi", schema(value_type = Object))]
    pub metadata: JsonObject,
    /// The last heartbeat; `null` before the first.
    #[serde(with = "time::serde::rfc3339::option")]
    pub last_seen_at: Option<OffsetDateTime>,
    #[serde(with = "time::serde::rfc3339")]
    pub created_at: OffsetDateTime,
    #[serde(with = "time::serde::rfc3339")]
    pub updated_at: OffsetDateTime,
}

impl Agent {
    /// The status to report: an `active` agent not seen (nor created) since `stale_before`
    /// is `inactive`.
    pub fn effective_status(&self, stale_before: Option<OffsetDateTime>) -> AgentStatus {
        match stale_before {
            Some(cutoff) if self.status == AgentStatus::Active && self.last_seen_or_created() < cutoff => {
                AgentStatus::Inactive
            }
            _ => self.status,
        }
    }

    pub fn last_seen_or_created(&self) -> OffsetDateTime {
        self.last_seen_at.unwrap_or(self.created_at)
    }
}

/// The embedding stored with an agent.
#[derive(Debug, Clone, PartialEq)]
pub struct AgentEmbedding {
    /// The embedding model's name and version, e.g. `agentgov-hashing` 1.
    pub model: String,
    pub model_version: i32,
    /// The text that was embedded.
    pub text: String,
    /// Unit length; its length is the model's dimensions.
    pub vector: Vec<f32>,
    pub refreshed_at: OffsetDateTime,
}

/// One agent's stored vector, for the in-process search index.
#[derive(Debug, Clone, PartialEq)]
pub struct AgentVector {
    pub id: AgentId,
    pub model: String,
    pub model_version: i32,
    pub vector: Vec<f32>,
}

/// The filters of `GET /agents`, validated.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct AgentFilter {
    pub agent_type: Option<String>,
    /// Compared with the *effective* status (see `stale_before`).
    pub status: Option<AgentStatus>,
    pub risk: Option<RiskLevel>,
    /// Agents whose capabilities include this one exactly.
    pub capability: Option<String>,
    /// An `active` agent not seen (nor created) since this instant counts as `inactive`.
    pub stale_before: Option<OffsetDateTime>,
}

impl AgentFilter {
    /// Whether `agent` passes, as every adapter must decide it.
    pub fn matches(&self, agent: &Agent) -> bool {
        self.agent_type.as_ref().is_none_or(|t| &agent.agent_type == t)
            && self.status.is_none_or(|s| agent.effective_status(self.stale_before) == s)
            && self.risk.is_none_or(|r| agent.risk == r)
            && self.capability.as_ref().is_none_or(|c| agent.capabilities.contains(c))
    }
}

/// What a heartbeat changes.
#[derive(Debug, Clone, PartialEq)]
pub struct Heartbeat {
    pub at: OffsetDateTime,
    /// Replaces the stored status when given.
    pub status: Option<AgentStatus>,
    /// Replaces the stored metadata when given.
    pub metadata: Option<JsonObject>,
    /// Replaces the stored embedding when given; otherwise only its `refreshed_at` moves
    /// to `at`.
    pub embedding: Option<AgentEmbedding>,
}
