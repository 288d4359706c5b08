//! Row structs, one per table, and their conversions to and from the domain's records.
//! Reading never panics: a value the domain cannot represent becomes `Internal`.

use agentgov_domain::ids::{AgentId, TenantId};
use agentgov_domain::model::{
    Actor, ActorType, Agent, AgentEmbedding, AgentStatus, AgentVector, AnomalyReport, ApiKey, ApiKeyKind, AuditHash,
    AuditOrigin, AuditRecord, ChainHead, DiscoveryCandidate, DiscoveryEvent, GuardFeedback, GuardFeedbackKind,
    GuardLabel, HitlRequest, Job, JobKind, JobStatus, JsonObject, JsonText, Lease, ModelKind, ModelVersion, Permission,
    Policy, RiskLevel, Role, SecretPurpose, Session, StoredModel, Tenant, TenantSecret, User, UserStatus,
};
use agentgov_domain::{DomainError, Result};
use diesel::prelude::*;
use serde_json::Value;
use time::OffsetDateTime;
use uuid::Uuid;

use crate::schema::{
    agent_embeddings, agents, anomaly_reports, api_keys, audit_heads, audit_records, discovery_candidates,
    discovery_events, guard_feedback, hitl_requests, jobs, model_versions, policies, sessions, tenant_secrets, tenants,
    users,
};

#[derive(Debug, Clone, Queryable, Selectable, Insertable)]
#[diesel(table_name = tenants, check_for_backend(diesel::pg::Pg))]
pub(crate) struct TenantRow {
    pub id: Uuid,
    pub name: String,
    pub created_at: OffsetDateTime,
    pub settings: String,
    pub updated_at: OffsetDateTime,
}

impl TryFrom<&Tenant> for TenantRow {
    type Error = DomainError;
    fn try_from(t: &Tenant) -> Result<Self> {
        Ok(Self {
            id: t.id.as_uuid(),
            name: t.name.clone(),
            created_at: t.created_at,
            settings: serde_json::to_string(&t.settings)
                .map_err(|e| DomainError::Internal(format!("encoding the settings of tenant {}: {e}", t.id)))?,
            updated_at: t.updated_at,
        })
    }
}

impl TryFrom<TenantRow> for Tenant {
    type Error = DomainError;
    fn try_from(r: TenantRow) -> Result<Self> {
        let settings = serde_json::from_str(&r.settings).map_err(|e| corrupt("tenants", r.id, e))?;
        Ok(Self { id: r.id.into(), name: r.name, settings, created_at: r.created_at, updated_at: r.updated_at })
    }
}

/// No `Debug`: the row holds a secret.
#[derive(Queryable, Selectable, Insertable)]
#[diesel(table_name = tenant_secrets, check_for_backend(diesel::pg::Pg))]
pub(crate) struct TenantSecretRow {
    pub tenant_id: Uuid,
    pub purpose: String,
    pub secret: String,
    pub previous: Option<String>,
    pub previous_until: Option<OffsetDateTime>,
    pub require_timestamp: bool,
    pub created_at: OffsetDateTime,
}

impl From<&TenantSecret> for TenantSecretRow {
    fn from(s: &TenantSecret) -> Self {
        Self {
            tenant_id: s.tenant_id.as_uuid(),
            purpose: s.purpose.as_str().to_owned(),
            secret: s.secret.clone(),
            previous: s.previous.clone(),
            previous_until: s.previous_until,
            require_timestamp: s.require_timestamp,
            created_at: s.created_at,
        }
    }
}

impl TryFrom<TenantSecretRow> for TenantSecret {
    type Error = DomainError;
    fn try_from(r: TenantSecretRow) -> Result<Self> {
        Ok(TenantSecret {
            tenant_id: r.tenant_id.into(),
            purpose: SecretPurpose::parse(&r.purpose)
                .ok_or_else(|| corrupt("tenant_secrets", r.tenant_id, format!("unknown purpose `{}`", r.purpose)))?,
            secret: r.secret,
            previous: r.previous,
            previous_until: r.previous_until,
            require_timestamp: r.require_timestamp,
            created_at: r.created_at,
        })
    }
}

#[derive(Debug, Clone, Queryable, Selectable, Insertable)]
#[diesel(table_name = users, check_for_backend(diesel::pg::Pg))]
pub(crate) struct UserRow {
    pub id: Uuid,
    pub tenant_id: Uuid,
    pub email: String,
    pub name: Option<String>,
    pub role: String,
    pub status: String,
    pub password_hash: Option<String>,
    pub created_at: OffsetDateTime,
    pub updated_at: OffsetDateTime,
    pub last_login_at: Option<OffsetDateTime>,
}

impl From<&User> for UserRow {
    fn from(u: &User) -> Self {
        Self {
            id: u.id.as_uuid(),
            tenant_id: u.tenant_id.as_uuid(),
            email: u.email.clone(),
            name: u.name.clone(),
            role: u.role.as_str().to_owned(),
            status: u.status.as_str().to_owned(),
            password_hash: u.password_hash.clone(),
            created_at: u.created_at,
            updated_at: u.updated_at,
            last_login_at: u.last_login_at,
        }
    }
}

impl TryFrom<UserRow> for User {
    type Error = DomainError;

    fn try_from(r: UserRow) -> Result<Self> {
        let role = r.role.parse::<Role>().map_err(|e| corrupt("users", r.id, e))?;
        let status = UserStatus::parse(&r.status)
            .ok_or_else(|| corrupt("users", r.id, format!("unknown status `{}`", r.status)))?;
        Ok(Self {
            id: r.id.into(),
            tenant_id: r.tenant_id.into(),
            email: r.email,
            name: r.name,
            role,
            status,
            password_hash: r.password_hash,
            created_at: r.created_at,
            updated_at: r.updated_at,
            last_login_at: r.last_login_at,
        })
    }
}

#[derive(Debug, Clone, Queryable, Selectable, Insertable)]
#[diesel(table_name = sessions, check_for_backend(diesel::pg::Pg))]
pub(crate) struct SessionRow {
    pub id: Uuid,
    pub tenant_id: Uuid,
    pub user_id: Uuid,
    pub created_at: OffsetDateTime,
    pub expires_at: OffsetDateTime,
    pub revoked_at: Option<OffsetDateTime>,
}

impl From<&Session> for SessionRow {
    fn from(s: &Session) -> Self {
        Self {
            id: s.id.as_uuid(),
            tenant_id: s.tenant_id.as_uuid(),
            user_id: s.user_id.as_uuid(),
            created_at: s.created_at,
            expires_at: s.expires_at,
            revoked_at: s.revoked_at,
        }
    }
}

impl From<SessionRow> for Session {
    fn from(r: SessionRow) -> Self {
        Self {
            id: r.id.into(),
            tenant_id: r.tenant_id.into(),
            user_id: r.user_id.into(),
            created_at: r.created_at,
            expires_at: r.expires_at,
            revoked_at: r.revoked_at,
        }
    }
}

#[derive(Debug, Clone, Queryable, Selectable, Insertable)]
#[diesel(table_name = api_keys, check_for_backend(diesel::pg::Pg))]
pub(crate) struct ApiKeyRow {
    pub id: Uuid,
    pub tenant_id: Uuid,
    pub user_id: Uuid,
    pub session_id: Option<Uuid>,
    pub name: String,
    pub prefix: String,
    pub key_hash: Vec<u8>,
    /// A JSON array of permission strings, e.g. `["agents:read"]`.
    pub permissions: Value,
    pub kind: String,
    pub created_at: OffsetDateTime,
    pub expires_at: Option<OffsetDateTime>,
    pub last_used_at: Option<OffsetDateTime>,
    pub revoked_at: Option<OffsetDateTime>,
}

impl From<&ApiKey> for ApiKeyRow {
    fn from(k: &ApiKey) -> Self {
        Self {
            id: k.id.as_uuid(),
            tenant_id: k.tenant_id.as_uuid(),
            user_id: k.user_id.as_uuid(),
            session_id: k.session_id.map(|s| s.as_uuid()),
            name: k.name.clone(),
            prefix: k.prefix.clone(),
            key_hash: k.key_hash.clone(),
            permissions: Value::Array(k.permissions.iter().map(|p| Value::String(p.as_str().to_owned())).collect()),
            kind: k.kind.as_str().to_owned(),
            created_at: k.created_at,
            expires_at: k.expires_at,
            last_used_at: k.last_used_at,
            revoked_at: k.revoked_at,
        }
    }
}

impl TryFrom<ApiKeyRow> for ApiKey {
    type Error = DomainError;

    fn try_from(r: ApiKeyRow) -> Result<Self> {
        let permissions = parse_permissions(&r.permissions).map_err(|e| corrupt("api_keys", r.id, e))?;
        let kind = ApiKeyKind::parse(&r.kind)
            .ok_or_else(|| corrupt("api_keys", r.id, format!("unknown kind `{}`", r.kind)))?;
        Ok(Self {
            id: r.id.into(),
            tenant_id: r.tenant_id.into(),
            user_id: r.user_id.into(),
            name: r.name,
            prefix: r.prefix,
            key_hash: r.key_hash,
            permissions,
            kind,
            session_id: r.session_id.map(Into::into),
            created_at: r.created_at,
            expires_at: r.expires_at,
            last_used_at: r.last_used_at,
            revoked_at: r.revoked_at,
        })
    }
}

/// Read only: appends insert whole batches as arrays (see `repo/audit.rs`).
#[derive(Debug, Clone, Queryable, Selectable)]
#[diesel(table_name = audit_records, check_for_backend(diesel::pg::Pg))]
pub(crate) struct AuditRecordRow {
    pub id: Uuid,
    pub tenant_id: Uuid,
    pub seq: i64,
    pub ts: OffsetDateTime,
    pub actor_type: String,
    pub actor_id: String,
    pub event_type: String,
    pub agent_id: Option<Uuid>,
    pub action: Option<String>,
    pub resource: Option<String>,
    pub decision: Option<String>,
    pub risk_score: Option<f64>,
    /// The exact JSON text that was hashed; never re-serialised.
    pub details: String,
    pub prev_hash: Vec<u8>,
    pub hash: Vec<u8>,
}

impl TryFrom<AuditRecordRow> for AuditRecord {
    type Error = DomainError;

    fn try_from(r: AuditRecordRow) -> Result<Self> {
        let bad = |problem: String| corrupt("audit_records", r.id, problem);
        let kind =
            ActorType::parse(&r.actor_type).ok_or_else(|| bad(format!("unknown actor type `{}`", r.actor_type)))?;
        let prev_hash = hash_of(&r.prev_hash).map_err(|e| bad(format!("prev_hash: {e}")))?;
        let hash = hash_of(&r.hash).map_err(|e| bad(format!("hash: {e}")))?;
        let details = JsonText::from_stored(r.details).map_err(|e| bad(format!("details: {e}")))?;
        Ok(Self {
            id: r.id.into(),
            tenant_id: r.tenant_id.into(),
            seq: r.seq,
            timestamp: r.ts,
            actor: Actor { kind, id: r.actor_id },
            origin: AuditOrigin::of(&r.event_type),
            event_type: r.event_type,
            agent_id: r.agent_id,
            action: r.action,
            resource: r.resource,
            decision: r.decision,
            risk_score: r.risk_score,
            details,
            prev_hash,
            hash,
        })
    }
}

#[derive(Debug, Clone, Queryable, Selectable)]
#[diesel(table_name = audit_heads, check_for_backend(diesel::pg::Pg))]
pub(crate) struct AuditHeadRow {
    pub tenant_id: Uuid,
    pub seq: i64,
    pub hash: Vec<u8>,
    pub ts: OffsetDateTime,
}

impl AuditHeadRow {
    /// The head as stored; the placeholder row an append inserts for a new tenant (seq 0)
    /// is the genesis head.
    pub(crate) fn head(&self) -> Result<ChainHead> {
        if self.seq == 0 {
            return Ok(ChainHead::GENESIS);
        }
        let hash = hash_of(&self.hash).map_err(|e| corrupt("audit_heads", self.tenant_id, e))?;
        Ok(ChainHead { seq: self.seq, hash, timestamp: self.ts })
    }
}

fn hash_of(bytes: &[u8]) -> std::result::Result<AuditHash, String> {
    AuditHash::from_slice(bytes).ok_or_else(|| format!("{} bytes, not 32", bytes.len()))
}

#[derive(Debug, Clone, Queryable, Selectable, Insertable)]
#[diesel(table_name = jobs, check_for_backend(diesel::pg::Pg))]
pub(crate) struct JobRow {
    pub id: Uuid,
    pub tenant_id: Uuid,
    pub kind: String,
    pub requested_by_type: String,
    pub requested_by_id: String,
    pub status: String,
    pub progress: f64,
    pub error: Option<String>,
    pub params: Value,
    pub state: Value,
    pub created_at: OffsetDateTime,
    pub started_at: Option<OffsetDateTime>,
    pub finished_at: Option<OffsetDateTime>,
    pub expires_at: Option<OffsetDateTime>,
    pub attempts: i32,
    pub lease_token: Option<Uuid>,
    pub lease_until: Option<OffsetDateTime>,
}

impl From<&Job> for JobRow {
    fn from(j: &Job) -> Self {
        Self {
            id: j.id,
            tenant_id: j.tenant_id.as_uuid(),
            kind: j.kind.as_str().to_owned(),
            requested_by_type: j.requested_by.kind.as_str().to_owned(),
            requested_by_id: j.requested_by.id.clone(),
            status: j.status.as_str().to_owned(),
            progress: j.progress,
            error: j.error.clone(),
            params: j.params.clone(),
            state: j.state.clone(),
            created_at: j.created_at,
            started_at: j.started_at,
            finished_at: j.finished_at,
            expires_at: j.expires_at,
            attempts: j.attempts,
            lease_token: j.lease.map(|l| l.token),
            lease_until: j.lease.map(|l| l.until),
        }
    }
}

impl TryFrom<JobRow> for Job {
    type Error = DomainError;

    fn try_from(r: JobRow) -> Result<Self> {
        let bad = |problem: String| corrupt("jobs", r.id, problem);
        let actor = ActorType::parse(&r.requested_by_type)
            .ok_or_else(|| bad(format!("unknown actor type `{}`", r.requested_by_type)))?;
        let kind = JobKind::parse(&r.kind).ok_or_else(|| bad(format!("unknown kind `{}`", r.kind)))?;
        let status = JobStatus::parse(&r.status).ok_or_else(|| bad(format!("unknown status `{}`", r.status)))?;
        let lease = match (r.lease_token, r.lease_until) {
            (Some(token), Some(until)) => Some(Lease { token, until }),
            _ => None,
        };
        Ok(Self {
            id: r.id,
            tenant_id: r.tenant_id.into(),
            kind,
            requested_by: Actor { kind: actor, id: r.requested_by_id },
            status,
            progress: r.progress,
            error: r.error,
            params: r.params,
            state: r.state,
            created_at: r.created_at,
            started_at: r.started_at,
            finished_at: r.finished_at,
            expires_at: r.expires_at,
            attempts: r.attempts,
            lease,
        })
    }
}

/// A model version without its model.
#[derive(Debug, Clone, Queryable, Selectable)]
#[diesel(table_name = model_versions, check_for_backend(diesel::pg::Pg))]
pub(crate) struct ModelVersionRow {
    pub tenant_id: Uuid,
    pub kind: String,
    pub version: i32,
    pub active: bool,
    pub info: Value,
}

impl TryFrom<ModelVersionRow> for ModelVersion {
    type Error = DomainError;

    fn try_from(r: ModelVersionRow) -> Result<Self> {
        let kind = ModelKind::parse(&r.kind)
            .ok_or_else(|| corrupt("model_versions", r.tenant_id, format!("unknown kind `{}`", r.kind)))?;
        Ok(ModelVersion { tenant_id: r.tenant_id.into(), kind, version: r.version, active: r.active, info: r.info })
    }
}

/// A model version with its model.
#[derive(Debug, Clone, Queryable, Selectable, Insertable)]
#[diesel(table_name = model_versions, check_for_backend(diesel::pg::Pg))]
pub(crate) struct StoredModelRow {
    pub tenant_id: Uuid,
    pub kind: String,
    pub version: i32,
    pub active: bool,
    pub info: Value,
    pub model: Vec<u8>,
}

impl From<&StoredModel> for StoredModelRow {
    fn from(m: &StoredModel) -> Self {
        let v = &m.version;
        Self {
            tenant_id: v.tenant_id.as_uuid(),
            kind: v.kind.as_str().to_owned(),
            version: v.version,
            active: v.active,
            info: v.info.clone(),
            model: m.model.clone(),
        }
    }
}

impl TryFrom<StoredModelRow> for StoredModel {
    type Error = DomainError;

    fn try_from(r: StoredModelRow) -> Result<Self> {
        let info = ModelVersionRow {
            tenant_id: r.tenant_id,
            kind: r.kind,
            version: r.version,
            active: r.active,
            info: r.info,
        };
        Ok(StoredModel { version: info.try_into()?, model: r.model })
    }
}

/// Also read by name, from the heartbeat's statement (see `repo/agents.rs`).
#[derive(Debug, Clone, Queryable, QueryableByName, Selectable, Insertable)]
#[diesel(table_name = agents, check_for_backend(diesel::pg::Pg))]
pub(crate) struct AgentRow {
    pub id: Uuid,
    pub tenant_id: Uuid,
    pub name: String,
    pub agent_type: String,
    pub description: Option<String>,
    pub capabilities: Vec<String>,
    /// A JSON object's text, kept verbatim.
    pub permissions: String,
    pub status: String,
    pub predicted_type: String,
    pub risk: String,
    pub risk_score: f64,
    /// A JSON object's text, kept verbatim.
    pub metadata: String,
    pub last_seen_at: Option<OffsetDateTime>,
    pub created_at: OffsetDateTime,
    pub updated_at: OffsetDateTime,
}

impl TryFrom<&Agent> for AgentRow {
    type Error = DomainError;

    fn try_from(a: &Agent) -> Result<Self> {
        Ok(Self {
            id: a.id.as_uuid(),
            tenant_id: a.tenant_id.as_uuid(),
            name: a.name.clone(),
            agent_type: a.agent_type.clone(),
            description: a.description.clone(),
            capabilities: a.capabilities.clone(),
            permissions: json_text(&a.permissions, "permissions", a.id)?,
            status: a.status.as_str().to_owned(),
            predicted_type: a.predicted_type.clone(),
            risk: a.risk.as_str().to_owned(),
            risk_score: a.risk_score,
            metadata: json_text(&a.metadata, "metadata", a.id)?,
            last_seen_at: a.last_seen_at,
            created_at: a.created_at,
            updated_at: a.updated_at,
        })
    }
}

impl TryFrom<AgentRow> for Agent {
    type Error = DomainError;

    fn try_from(r: AgentRow) -> Result<Self> {
        let bad = |problem: String| corrupt("agents", r.id, problem);
        let status = AgentStatus::parse(&r.status).ok_or_else(|| bad(format!("unknown status `{}`", r.status)))?;
        let risk = RiskLevel::parse(&r.risk).ok_or_else(|| bad(format!("unknown risk `{}`", r.risk)))?;
        let permissions =
            serde_json::from_str::<JsonObject>(&r.permissions).map_err(|e| bad(format!("permissions: {e}")))?;
        let metadata = serde_json::from_str::<JsonObject>(&r.metadata).map_err(|e| bad(format!("metadata: {e}")))?;
        Ok(Self {
            id: r.id.into(),
            tenant_id: r.tenant_id.into(),
            name: r.name,
            agent_type: r.agent_type,
            description: r.description,
            capabilities: r.capabilities,
            permissions,
            status,
            predicted_type: r.predicted_type,
            risk,
            risk_score: r.risk_score,
            metadata,
            last_seen_at: r.last_seen_at,
            created_at: r.created_at,
            updated_at: r.updated_at,
        })
    }
}

/// The text of an agent's JSON object column.
pub(crate) fn json_text(object: &JsonObject, field: &str, agent: AgentId) -> Result<String> {
    serde_json::to_string(object)
        .map_err(|e| DomainError::Internal(format!("encoding the {field} of agent {agent}: {e}")))
}

#[derive(Debug, Clone, Queryable, Selectable, Insertable)]
#[diesel(table_name = agent_embeddings, check_for_backend(diesel::pg::Pg))]
pub(crate) struct AgentEmbeddingRow {
    pub agent_id: Uuid,
    pub tenant_id: Uuid,
    pub model: String,
    pub model_version: i32,
    pub text: String,
    /// Little-endian f32, 4 bytes per dimension.
    pub vector: Vec<u8>,
    pub refreshed_at: OffsetDateTime,
}

impl AgentEmbeddingRow {
    pub(crate) fn of(tenant: TenantId, agent: AgentId, e: &AgentEmbedding) -> Self {
        Self {
            agent_id: agent.as_uuid(),
            tenant_id: tenant.as_uuid(),
            model: e.model.clone(),
            model_version: e.model_version,
            text: e.text.clone(),
            vector: vector_bytes(&e.vector),
            refreshed_at: e.refreshed_at,
        }
    }
}

impl TryFrom<AgentEmbeddingRow> for AgentEmbedding {
    type Error = DomainError;

    fn try_from(r: AgentEmbeddingRow) -> Result<Self> {
        let vector = vector_of(&r.vector).map_err(|e| corrupt("agent_embeddings", r.agent_id, e))?;
        Ok(Self { model: r.model, model_version: r.model_version, text: r.text, vector, refreshed_at: r.refreshed_at })
    }
}

/// What the search index loads: the embedding without its text.
#[derive(Debug, Clone, Queryable, Selectable)]
#[diesel(table_name = agent_embeddings, check_for_backend(diesel::pg::Pg))]
pub(crate) struct AgentVectorRow {
    pub agent_id: Uuid,
    pub model: String,
    pub model_version: i32,
    pub vector: Vec<u8>,
}

impl TryFrom<AgentVectorRow> for AgentVector {
    type Error = DomainError;

    fn try_from(r: AgentVectorRow) -> Result<Self> {
        let vector = vector_of(&r.vector).map_err(|e| corrupt("agent_embeddings", r.agent_id, e))?;
        Ok(Self { id: r.agent_id.into(), model: r.model, model_version: r.model_version, vector })
    }
}

pub(crate) fn vector_bytes(vector: &[f32]) -> Vec<u8> {
    vector.iter().flat_map(|x| x.to_le_bytes()).collect()
}

fn vector_of(bytes: &[u8]) -> std::result::Result<Vec<f32>, String> {
    let (dims, rest) = bytes.as_chunks::<4>();
    if !rest.is_empty() {
        return Err(format!("vector of {} bytes, not a whole number of f32", bytes.len()));
    }
    Ok(dims.iter().map(|d| f32::from_le_bytes(*d)).collect())
}

fn parse_permissions(value: &Value) -> std::result::Result<Vec<Permission>, String> {
    let items = value.as_array().ok_or("permissions is not a JSON array")?;
    items
        .iter()
        .map(|item| item.as_str().ok_or_else(|| format!("permission `{item}` is not a string"))?.parse::<Permission>())
        .collect()
}

#[derive(Debug, Clone, Queryable, Selectable, Insertable)]
#[diesel(table_name = policies, check_for_backend(diesel::pg::Pg))]
#[diesel(treat_none_as_default_value = false)]
pub(crate) struct PolicyRow {
    pub id: Uuid,
    pub tenant_id: Uuid,
    pub name: String,
    pub description: Option<String>,
    pub rego: String,
    pub enabled: bool,
    pub version: i64,
    pub created_by: Option<Uuid>,
    pub created_at: OffsetDateTime,
    pub updated_at: OffsetDateTime,
}

impl From<&Policy> for PolicyRow {
    fn from(p: &Policy) -> Self {
        Self {
            id: p.id.as_uuid(),
            tenant_id: p.tenant_id.as_uuid(),
            name: p.name.clone(),
            description: p.description.clone(),
            rego: p.rego.clone(),
            enabled: p.enabled,
            version: p.version,
            created_by: p.created_by.map(|u| u.as_uuid()),
            created_at: p.created_at,
            updated_at: p.updated_at,
        }
    }
}

impl From<PolicyRow> for Policy {
    fn from(r: PolicyRow) -> Self {
        Self {
            id: r.id.into(),
            tenant_id: r.tenant_id.into(),
            name: r.name,
            description: r.description,
            rego: r.rego,
            enabled: r.enabled,
            version: r.version,
            created_by: r.created_by.map(Into::into),
            created_at: r.created_at,
            updated_at: r.updated_at,
        }
    }
}

#[derive(Debug, Clone, Queryable, Selectable, Insertable)]
#[diesel(table_name = guard_feedback, check_for_backend(diesel::pg::Pg))]
#[diesel(treat_none_as_default_value = false)]
pub(crate) struct GuardFeedbackRow {
    pub id: Uuid,
    pub tenant_id: Uuid,
    pub kind: String,
    pub label: String,
    pub validation_id: Option<Uuid>,
    pub text: String,
    pub created_by_type: String,
    pub created_by_id: String,
    pub created_at: OffsetDateTime,
}

impl From<&GuardFeedback> for GuardFeedbackRow {
    fn from(f: &GuardFeedback) -> Self {
        Self {
            id: f.id.as_uuid(),
            tenant_id: f.tenant_id.as_uuid(),
            kind: f.kind.as_str().to_owned(),
            label: f.label.as_str().to_owned(),
            validation_id: f.validation_id,
            text: f.text.clone(),
            created_by_type: f.created_by.kind.as_str().to_owned(),
            created_by_id: f.created_by.id.clone(),
            created_at: f.created_at,
        }
    }
}

impl TryFrom<GuardFeedbackRow> for GuardFeedback {
    type Error = DomainError;

    fn try_from(r: GuardFeedbackRow) -> Result<Self> {
        let bad = |problem: String| corrupt("guard_feedback", r.id, problem);
        let kind = GuardFeedbackKind::parse(&r.kind).ok_or_else(|| bad(format!("unknown kind `{}`", r.kind)))?;
        let label = GuardLabel::parse(&r.label).ok_or_else(|| bad(format!("unknown label `{}`", r.label)))?;
        let actor = ActorType::parse(&r.created_by_type)
            .ok_or_else(|| bad(format!("unknown actor type `{}`", r.created_by_type)))?;
        Ok(Self {
            id: r.id.into(),
            tenant_id: r.tenant_id.into(),
            kind,
            label,
            validation_id: r.validation_id,
            text: r.text,
            created_by: Actor { kind: actor, id: r.created_by_id },
            created_at: r.created_at,
        })
    }
}

/// A discovery event as read: its tenant and the JSON text of the record (which leaves
/// the tenant out). Read only: events are inserted as arrays (see `repo/discovery.rs`).
#[derive(Debug, Clone, Queryable, Selectable)]
#[diesel(table_name = discovery_events, check_for_backend(diesel::pg::Pg))]
pub(crate) struct DiscoveryEventRow {
    pub id: Uuid,
    pub tenant_id: Uuid,
    pub body: String,
}

impl TryFrom<DiscoveryEventRow> for DiscoveryEvent {
    type Error = DomainError;

    fn try_from(r: DiscoveryEventRow) -> Result<Self> {
        let mut event: DiscoveryEvent =
            serde_json::from_str(&r.body).map_err(|e| corrupt("discovery_events", r.id, format!("body: {e}")))?;
        event.tenant_id = r.tenant_id.into();
        Ok(event)
    }
}

/// The stored text of an event: its `Serialize` form, without the tenant.
pub(crate) fn event_body(event: &DiscoveryEvent) -> Result<String> {
    serde_json::to_string(event)
        .map_err(|e| DomainError::Internal(format!("encoding discovery event {}: {e}", event.id)))
}

/// A candidate as read, as [`DiscoveryEventRow`]. Written through arrays or by column.
#[derive(Debug, Clone, Queryable, Selectable)]
#[diesel(table_name = discovery_candidates, check_for_backend(diesel::pg::Pg))]
pub(crate) struct DiscoveryCandidateRow {
    pub id: Uuid,
    pub tenant_id: Uuid,
    pub body: String,
}

impl TryFrom<DiscoveryCandidateRow> for DiscoveryCandidate {
    type Error = DomainError;

    fn try_from(r: DiscoveryCandidateRow) -> Result<Self> {
        let mut candidate: DiscoveryCandidate =
            serde_json::from_str(&r.body).map_err(|e| corrupt("discovery_candidates", r.id, format!("body: {e}")))?;
        candidate.tenant_id = r.tenant_id.into();
        // Its sample events are the tenant's too, and their stored form leaves it out as well.
        for event in &mut candidate.sample_events {
            event.tenant_id = candidate.tenant_id;
        }
        Ok(candidate)
    }
}

/// The stored text of a candidate: its `Serialize` form, without the tenant.
pub(crate) fn candidate_body(candidate: &DiscoveryCandidate) -> Result<String> {
    serde_json::to_string(candidate)
        .map_err(|e| DomainError::Internal(format!("encoding discovery candidate {}: {e}", candidate.id)))
}

/// An approval request as written: `body` is the JSON text of its `Serialize` form (without
/// the tenant); `agent_id`, `status`, `expires_at` and `callback_due_at`
/// (`HitlRequest::callback_due_at`) are copies that queries filter and order on.
#[derive(Debug, Clone, Insertable)]
#[diesel(table_name = hitl_requests, check_for_backend(diesel::pg::Pg))]
#[diesel(treat_none_as_default_value = false)]
pub(crate) struct HitlRow {
    pub id: Uuid,
    pub tenant_id: Uuid,
    pub agent_id: Uuid,
    pub status: String,
    pub expires_at: OffsetDateTime,
    pub callback_due_at: Option<OffsetDateTime>,
    pub body: String,
    /// `HitlRequest::callback_open`: what the tenant's quota of open callbacks counts.
    pub callback_open: bool,
}

impl TryFrom<&HitlRequest> for HitlRow {
    type Error = DomainError;

    fn try_from(r: &HitlRequest) -> Result<Self> {
        Ok(Self {
            id: r.id.as_uuid(),
            tenant_id: r.tenant_id.as_uuid(),
            agent_id: r.agent_id.as_uuid(),
            status: r.status.as_str().to_owned(),
            expires_at: r.expires_at,
            callback_due_at: r.callback_due_at(),
            body: serde_json::to_string(r)
                .map_err(|e| DomainError::Internal(format!("encoding approval request {}: {e}", r.id)))?,
            callback_open: r.callback_open(),
        })
    }
}

/// An approval request as read: its tenant and its body, as [`DiscoveryEventRow`].
#[derive(Debug, Clone, Queryable, QueryableByName, Selectable)]
#[diesel(table_name = hitl_requests, check_for_backend(diesel::pg::Pg))]
pub(crate) struct HitlBodyRow {
    pub id: Uuid,
    pub tenant_id: Uuid,
    pub body: String,
}

impl TryFrom<HitlBodyRow> for HitlRequest {
    type Error = DomainError;

    fn try_from(r: HitlBodyRow) -> Result<Self> {
        let mut request: HitlRequest =
            serde_json::from_str(&r.body).map_err(|e| corrupt("hitl_requests", r.id, format!("body: {e}")))?;
        request.tenant_id = r.tenant_id.into();
        Ok(request)
    }
}

/// An anomaly report as written: `body` is the JSON text of its `Serialize` form (without
/// the tenant); `agent_id`, `anomaly_type`, `severity`, `status` and `created_at` are copies
/// that queries filter, order and group on.
#[derive(Debug, Clone, Insertable)]
#[diesel(table_name = anomaly_reports, check_for_backend(diesel::pg::Pg))]
#[diesel(treat_none_as_default_value = false)]
pub(crate) struct AnomalyRow {
    pub id: Uuid,
    pub tenant_id: Uuid,
    pub agent_id: Uuid,
    pub anomaly_type: String,
    pub severity: String,
    pub status: String,
    pub created_at: OffsetDateTime,
    pub body: String,
}

impl TryFrom<&AnomalyReport> for AnomalyRow {
    type Error = DomainError;

    fn try_from(r: &AnomalyReport) -> Result<Self> {
        Ok(Self {
            id: r.id.as_uuid(),
            tenant_id: r.tenant_id.as_uuid(),
            agent_id: r.agent_id.as_uuid(),
            anomaly_type: r.anomaly_type.as_str().to_owned(),
            severity: r.severity.as_str().to_owned(),
            status: r.status.as_str().to_owned(),
            created_at: r.created_at,
            body: serde_json::to_string(r)
                .map_err(|e| DomainError::Internal(format!("encoding anomaly report {}: {e}", r.id)))?,
        })
    }
}

/// An anomaly report as read: its tenant and its body, as [`HitlBodyRow`].
#[derive(Debug, Clone, Queryable, Selectable)]
#[diesel(table_name = anomaly_reports, check_for_backend(diesel::pg::Pg))]
pub(crate) struct AnomalyBodyRow {
    pub id: Uuid,
    pub tenant_id: Uuid,
    pub body: String,
}

impl TryFrom<AnomalyBodyRow> for AnomalyReport {
    type Error = DomainError;

    fn try_from(r: AnomalyBodyRow) -> Result<Self> {
        let mut report: AnomalyReport =
            serde_json::from_str(&r.body).map_err(|e| corrupt("anomaly_reports", r.id, format!("body: {e}")))?;
        report.tenant_id = r.tenant_id.into();
        Ok(report)
    }
}

fn corrupt(table: &str, id: Uuid, problem: impl std::fmt::Display) -> DomainError {
    DomainError::Internal(format!("bad row in {table} (id {id}): {problem}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn permissions_round_trip_through_json() {
        let perms = vec![Permission::AgentsRead, Permission::GuardManage];
        let value = Value::Array(perms.iter().map(|p| Value::String(p.as_str().to_owned())).collect());
        assert_eq!(value, serde_json::json!(["agents:read", "guard:manage"]));
        assert_eq!(parse_permissions(&value).unwrap(), perms);
    }

    #[test]
    fn bad_stored_permissions_are_errors_not_panics() {
        assert!(parse_permissions(&serde_json::json!({"a": 1})).is_err());
        assert!(parse_permissions(&serde_json::json!([1])).is_err());
        assert!(parse_permissions(&serde_json::json!(["root:all"])).is_err());
    }

    #[test]
    fn vectors_round_trip_through_bytes() {
        let vector = vec![0.5, -1.25, f32::MIN_POSITIVE, 0.0];
        let bytes = vector_bytes(&vector);
        assert_eq!(bytes.len(), 16);
        assert_eq!(&bytes[..4], &0.5f32.to_le_bytes());
        assert_eq!(vector_of(&bytes).unwrap(), vector);
        assert!(vector_of(&[]).unwrap().is_empty());
        assert!(vector_of(&[1, 2, 3]).is_err());
    }

    #[test]
    fn bad_stored_agent_json_becomes_internal() {
        let row = AgentRow {
            id: Uuid::now_v7(),
            tenant_id: Uuid::now_v7(),
            name: "bot".into(),
            agent_type: "llm".into(),
            description: None,
            capabilities: vec![],
            permissions: "{}".into(),
            status: "active".into(),
            predicted_type: "llm".into(),
            risk: "low".into(),
            risk_score: 0.1,
            metadata: "[1]".into(),
            last_seen_at: None,
            created_at: OffsetDateTime::UNIX_EPOCH,
            updated_at: OffsetDateTime::UNIX_EPOCH,
        };
        assert!(matches!(Agent::try_from(row.clone()), Err(DomainError::Internal(_))), "not an object");
        let row = AgentRow { metadata: "{".into(), ..row };
        assert!(matches!(Agent::try_from(row.clone()), Err(DomainError::Internal(_))), "not JSON");
        let row = AgentRow { metadata: "{}".into(), risk: "extreme".into(), ..row };
        assert!(matches!(Agent::try_from(row), Err(DomainError::Internal(_))), "unknown risk");
    }

    #[test]
    fn bad_stored_role_becomes_internal() {
        let row = UserRow {
            id: Uuid::now_v7(),
            tenant_id: Uuid::now_v7(),
            email: "a@example.com".into(),
            name: None,
            role: "root".into(),
            status: "active".into(),
            password_hash: None,
            created_at: OffsetDateTime::UNIX_EPOCH,
            updated_at: OffsetDateTime::UNIX_EPOCH,
            last_login_at: None,
        };
        assert!(matches!(User::try_from(row), Err(DomainError::Internal(_))));
    }
}
