//! Row structs and their conversions to and from the domain records. Reading never panics:
//! a value the domain cannot represent is an `Internal` error naming the column.

use agentgov_domain::ids::{AgentId, TenantId};
use agentgov_domain::model::audit::{from_unix_micros, unix_micros};
use agentgov_domain::model::{
    Actor, ActorType, Agent, AgentEmbedding, AgentStatus, AgentVector, AnomalyReport, ApiKey, ApiKeyKind, AuditHash,
    AuditOrigin, AuditRecord, ChainHead, DiscoveryCandidate, DiscoveryEvent, GuardFeedback, GuardFeedbackKind,
    GuardLabel, HitlRequest, Job, JobKind, JobStatus, JsonObject, JsonText, Lease, ModelKind, ModelVersion, Permission,
    Policy, RiskLevel, Role, SecretPurpose, Session, StoredModel, Tenant, TenantSecret, User, UserStatus,
};
use agentgov_domain::{DomainError, Result};
use diesel::prelude::*;
use time::OffsetDateTime;
use uuid::Uuid;

use crate::schema::{
    agent_embeddings, agents, anomaly_reports, api_keys, audit_heads, audit_records, discovery_candidates,
    discovery_events, guard_feedback, hitl_requests, jobs, model_versions, policies, sessions, tenant_secrets, tenants,
    users,
};

fn bad(column: &str, value: &str) -> DomainError {
    DomainError::Internal(format!("unreadable stored value in {column}: {value:?}"))
}

pub(crate) fn parse_id<T: From<Uuid>>(column: &str, value: &str) -> Result<T> {
    Uuid::parse_str(value).map(T::from).map_err(|_| bad(column, value))
}

/// Ids are stored lower-case and hyphenated, so that text order is id order.
pub(crate) fn id_text(id: Uuid) -> String {
    id.hyphenated().to_string()
}

#[derive(Debug, Queryable, Selectable, Insertable)]
#[diesel(table_name = tenants, check_for_backend(diesel::sqlite::Sqlite))]
pub(crate) struct TenantRow {
    pub id: String,
    pub name: String,
    pub created_at: OffsetDateTime,
    pub settings: String,
    pub updated_at: OffsetDateTime,
}

impl TryFrom<&Tenant> for TenantRow {
    type Error = DomainError;
    fn try_from(t: &Tenant) -> Result<Self> {
        Ok(Self {
            id: id_text(t.id.0),
            name: t.name.clone(),
            created_at: t.created_at,
            settings: serde_json::to_string(&t.settings).map_err(DomainError::internal)?,
            updated_at: t.updated_at,
        })
    }
}

impl TryFrom<TenantRow> for Tenant {
    type Error = DomainError;
    fn try_from(r: TenantRow) -> Result<Self> {
        Ok(Tenant {
            id: parse_id("tenants.id", &r.id)?,
            name: r.name,
            settings: serde_json::from_str(&r.settings).map_err(|_| bad("tenants.settings", &r.settings))?,
            created_at: r.created_at,
            updated_at: r.updated_at,
        })
    }
}

/// No `Debug`: the row holds a secret.
#[derive(Queryable, Selectable, Insertable)]
#[diesel(table_name = tenant_secrets, check_for_backend(diesel::sqlite::Sqlite))]
pub(crate) struct TenantSecretRow {
    pub tenant_id: String,
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
            tenant_id: id_text(s.tenant_id.0),
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
            tenant_id: parse_id("tenant_secrets.tenant_id", &r.tenant_id)?,
            purpose: SecretPurpose::parse(&r.purpose).ok_or_else(|| bad("tenant_secrets.purpose", &r.purpose))?,
            secret: r.secret,
            previous: r.previous,
            previous_until: r.previous_until,
            require_timestamp: r.require_timestamp,
            created_at: r.created_at,
        })
    }
}

#[derive(Debug, Queryable, Selectable, Insertable)]
#[diesel(table_name = users, check_for_backend(diesel::sqlite::Sqlite))]
pub(crate) struct UserRow {
    pub id: String,
    pub tenant_id: String,
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
            id: id_text(u.id.0),
            tenant_id: id_text(u.tenant_id.0),
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
        Ok(User {
            id: parse_id("users.id", &r.id)?,
            tenant_id: parse_id("users.tenant_id", &r.tenant_id)?,
            role: r.role.parse::<Role>().map_err(|_| bad("users.role", &r.role))?,
            status: UserStatus::parse(&r.status).ok_or_else(|| bad("users.status", &r.status))?,
            email: r.email,
            name: r.name,
            password_hash: r.password_hash,
            created_at: r.created_at,
            updated_at: r.updated_at,
            last_login_at: r.last_login_at,
        })
    }
}

#[derive(Debug, Queryable, Selectable, Insertable)]
#[diesel(table_name = sessions, check_for_backend(diesel::sqlite::Sqlite))]
pub(crate) struct SessionRow {
    pub id: String,
    pub tenant_id: String,
    pub user_id: String,
    pub created_at: OffsetDateTime,
    pub expires_at: OffsetDateTime,
    pub revoked_at: Option<OffsetDateTime>,
}

impl From<&Session> for SessionRow {
    fn from(s: &Session) -> Self {
        Self {
            id: id_text(s.id.0),
            tenant_id: id_text(s.tenant_id.0),
            user_id: id_text(s.user_id.0),
            created_at: s.created_at,
            expires_at: s.expires_at,
            revoked_at: s.revoked_at,
        }
    }
}

impl TryFrom<SessionRow> for Session {
    type Error = DomainError;
    fn try_from(r: SessionRow) -> Result<Self> {
        Ok(Session {
            id: parse_id("sessions.id", &r.id)?,
            tenant_id: parse_id("sessions.tenant_id", &r.tenant_id)?,
            user_id: parse_id("sessions.user_id", &r.user_id)?,
            created_at: r.created_at,
            expires_at: r.expires_at,
            revoked_at: r.revoked_at,
        })
    }
}

#[derive(Debug, Queryable, Selectable, Insertable)]
#[diesel(table_name = api_keys, check_for_backend(diesel::sqlite::Sqlite))]
pub(crate) struct ApiKeyRow {
    pub id: String,
    pub tenant_id: String,
    pub user_id: String,
    pub session_id: Option<String>,
    pub name: String,
    pub prefix: String,
    pub key_hash: Vec<u8>,
    pub permissions: String,
    pub kind: String,
    pub created_at: OffsetDateTime,
    pub expires_at: Option<OffsetDateTime>,
    pub last_used_at: Option<OffsetDateTime>,
    pub revoked_at: Option<OffsetDateTime>,
}

impl TryFrom<&ApiKey> for ApiKeyRow {
    type Error = DomainError;
    fn try_from(k: &ApiKey) -> Result<Self> {
        let permissions: Vec<&str> = k.permissions.iter().map(|p| p.as_str()).collect();
        Ok(Self {
            id: id_text(k.id.0),
            tenant_id: id_text(k.tenant_id.0),
            user_id: id_text(k.user_id.0),
            session_id: k.session_id.map(|s| id_text(s.0)),
            name: k.name.clone(),
            prefix: k.prefix.clone(),
            key_hash: k.key_hash.clone(),
            permissions: serde_json::to_string(&permissions).map_err(DomainError::internal)?,
            kind: k.kind.as_str().to_owned(),
            created_at: k.created_at,
            expires_at: k.expires_at,
            last_used_at: k.last_used_at,
            revoked_at: k.revoked_at,
        })
    }
}

impl TryFrom<ApiKeyRow> for ApiKey {
    type Error = DomainError;
    fn try_from(r: ApiKeyRow) -> Result<Self> {
        let permissions: Vec<Permission> =
            serde_json::from_str(&r.permissions).map_err(|_| bad("api_keys.permissions", &r.permissions))?;
        Ok(ApiKey {
            id: parse_id("api_keys.id", &r.id)?,
            tenant_id: parse_id("api_keys.tenant_id", &r.tenant_id)?,
            user_id: parse_id("api_keys.user_id", &r.user_id)?,
            session_id: r.session_id.as_deref().map(|s| parse_id("api_keys.session_id", s)).transpose()?,
            kind: ApiKeyKind::parse(&r.kind).ok_or_else(|| bad("api_keys.kind", &r.kind))?,
            permissions,
            name: r.name,
            prefix: r.prefix,
            key_hash: r.key_hash,
            created_at: r.created_at,
            expires_at: r.expires_at,
            last_used_at: r.last_used_at,
            revoked_at: r.revoked_at,
        })
    }
}

/// A job's lease from its `lease_token` and `lease_until` columns (none unless both are set).
fn lease(table: &str, token: Option<String>, until: Option<i64>) -> Result<Option<Lease>> {
    match (token, until) {
        (Some(token), Some(until)) => Ok(Some(Lease {
            token: parse_id(&format!("{table}.lease_token"), &token)?,
            until: instant(&format!("{table}.lease_until"), until)?,
        })),
        _ => Ok(None),
    }
}

fn instant(column: &str, micros: i64) -> Result<OffsetDateTime> {
    from_unix_micros(micros).ok_or_else(|| bad(column, &micros.to_string()))
}

fn hash(column: &str, bytes: &[u8]) -> Result<AuditHash> {
    AuditHash::from_slice(bytes).ok_or_else(|| bad(column, &hex_text(bytes)))
}

fn hex_text(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// One record of the audit log. `None` is written as NULL (never as a column default), so
/// a batch of rows goes in as one multi-row `INSERT`.
#[derive(Debug, Queryable, Selectable, Insertable)]
#[diesel(table_name = audit_records, check_for_backend(diesel::sqlite::Sqlite))]
#[diesel(treat_none_as_default_value = false)]
pub(crate) struct AuditRow {
    pub id: String,
    pub tenant_id: String,
    pub seq: i64,
    pub ts: i64,
    pub actor_type: String,
    pub actor_id: String,
    pub event_type: String,
    pub agent_id: Option<String>,
    pub action: Option<String>,
    pub resource: Option<String>,
    pub decision: Option<String>,
    pub risk_score: Option<f64>,
    pub details: String,
    pub prev_hash: Vec<u8>,
    pub hash: Vec<u8>,
}

impl From<&AuditRecord> for AuditRow {
    fn from(r: &AuditRecord) -> Self {
        Self {
            id: id_text(r.id.0),
            tenant_id: id_text(r.tenant_id.0),
            seq: r.seq,
            ts: unix_micros(r.timestamp),
            actor_type: r.actor.kind.as_str().to_owned(),
            actor_id: r.actor.id.clone(),
            event_type: r.event_type.clone(),
            agent_id: r.agent_id.map(id_text),
            action: r.action.clone(),
            resource: r.resource.clone(),
            decision: r.decision.clone(),
            risk_score: r.risk_score,
            // The exact text that was hashed; never re-serialised.
            details: r.details.as_str().to_owned(),
            prev_hash: r.prev_hash.0.to_vec(),
            hash: r.hash.0.to_vec(),
        }
    }
}

impl TryFrom<AuditRow> for AuditRecord {
    type Error = DomainError;
    fn try_from(r: AuditRow) -> Result<Self> {
        let kind = ActorType::parse(&r.actor_type).ok_or_else(|| bad("audit_records.actor_type", &r.actor_type))?;
        Ok(AuditRecord {
            id: parse_id("audit_records.id", &r.id)?,
            tenant_id: parse_id("audit_records.tenant_id", &r.tenant_id)?,
            seq: r.seq,
            timestamp: instant("audit_records.ts", r.ts)?,
            actor: Actor { kind, id: r.actor_id },
            origin: AuditOrigin::of(&r.event_type),
            event_type: r.event_type,
            agent_id: r.agent_id.as_deref().map(|a| parse_id("audit_records.agent_id", a)).transpose()?,
            action: r.action,
            resource: r.resource,
            decision: r.decision,
            risk_score: r.risk_score,
            details: JsonText::from_stored(r.details).map_err(|e| bad("audit_records.details", &e.to_string()))?,
            prev_hash: hash("audit_records.prev_hash", &r.prev_hash)?,
            hash: hash("audit_records.hash", &r.hash)?,
        })
    }
}

/// A tenant's chain head.
#[derive(Debug, Queryable, Selectable, Insertable)]
#[diesel(table_name = audit_heads, check_for_backend(diesel::sqlite::Sqlite))]
pub(crate) struct HeadRow {
    pub tenant_id: String,
    pub seq: i64,
    pub hash: Vec<u8>,
    pub ts: i64,
}

impl HeadRow {
    pub(crate) fn new(tenant: Uuid, head: &ChainHead) -> Self {
        Self { tenant_id: id_text(tenant), seq: head.seq, hash: head.hash.0.to_vec(), ts: unix_micros(head.timestamp) }
    }
}

impl TryFrom<HeadRow> for ChainHead {
    type Error = DomainError;
    fn try_from(r: HeadRow) -> Result<Self> {
        Ok(ChainHead {
            seq: r.seq,
            hash: hash("audit_heads.hash", &r.hash)?,
            timestamp: instant("audit_heads.ts", r.ts)?,
        })
    }
}

/// A job of the queue; timestamps are unix microseconds, `params` and `state` JSON text.
#[derive(Debug, Queryable, Selectable, Insertable)]
#[diesel(table_name = jobs, check_for_backend(diesel::sqlite::Sqlite))]
#[diesel(treat_none_as_default_value = false)]
pub(crate) struct JobRow {
    pub id: String,
    pub tenant_id: String,
    pub kind: String,
    pub requested_by_type: String,
    pub requested_by_id: String,
    pub status: String,
    pub progress: f64,
    pub error: Option<String>,
    pub params: String,
    pub state: String,
    pub created_at: i64,
    pub started_at: Option<i64>,
    pub finished_at: Option<i64>,
    pub expires_at: Option<i64>,
    pub attempts: i32,
    pub lease_token: Option<String>,
    pub lease_until: Option<i64>,
}

impl From<&Job> for JobRow {
    fn from(j: &Job) -> Self {
        Self {
            id: id_text(j.id),
            tenant_id: id_text(j.tenant_id.0),
            kind: j.kind.as_str().to_owned(),
            requested_by_type: j.requested_by.kind.as_str().to_owned(),
            requested_by_id: j.requested_by.id.clone(),
            status: j.status.as_str().to_owned(),
            progress: j.progress,
            error: j.error.clone(),
            params: j.params.to_string(),
            state: j.state.to_string(),
            created_at: unix_micros(j.created_at),
            started_at: j.started_at.map(unix_micros),
            finished_at: j.finished_at.map(unix_micros),
            expires_at: j.expires_at.map(unix_micros),
            attempts: j.attempts,
            lease_token: j.lease.map(|l| id_text(l.token)),
            lease_until: j.lease.map(|l| unix_micros(l.until)),
        }
    }
}

impl TryFrom<JobRow> for Job {
    type Error = DomainError;
    fn try_from(r: JobRow) -> Result<Self> {
        let kind = ActorType::parse(&r.requested_by_type)
            .ok_or_else(|| bad("jobs.requested_by_type", &r.requested_by_type))?;
        let json = |column: &str, text: &str| serde_json::from_str(text).map_err(|_| bad(column, text));
        let optional = |column: &str, v: Option<i64>| v.map(|v| instant(column, v)).transpose();
        Ok(Job {
            id: parse_id("jobs.id", &r.id)?,
            tenant_id: parse_id("jobs.tenant_id", &r.tenant_id)?,
            kind: JobKind::parse(&r.kind).ok_or_else(|| bad("jobs.kind", &r.kind))?,
            requested_by: Actor { kind, id: r.requested_by_id },
            status: JobStatus::parse(&r.status).ok_or_else(|| bad("jobs.status", &r.status))?,
            progress: r.progress,
            error: r.error,
            params: json("jobs.params", &r.params)?,
            state: json("jobs.state", &r.state)?,
            created_at: instant("jobs.created_at", r.created_at)?,
            started_at: optional("jobs.started_at", r.started_at)?,
            finished_at: optional("jobs.finished_at", r.finished_at)?,
            expires_at: optional("jobs.expires_at", r.expires_at)?,
            attempts: r.attempts,
            lease: lease("jobs", r.lease_token, r.lease_until)?,
        })
    }
}

/// A model version without its model.
#[derive(Debug, Queryable, Selectable)]
#[diesel(table_name = model_versions, check_for_backend(diesel::sqlite::Sqlite))]
pub(crate) struct ModelVersionRow {
    pub tenant_id: String,
    pub kind: String,
    pub version: i32,
    pub active: bool,
    pub info: String,
}

impl TryFrom<ModelVersionRow> for ModelVersion {
    type Error = DomainError;
    fn try_from(r: ModelVersionRow) -> Result<Self> {
        Ok(ModelVersion {
            tenant_id: parse_id("model_versions.tenant_id", &r.tenant_id)?,
            kind: ModelKind::parse(&r.kind).ok_or_else(|| bad("model_versions.kind", &r.kind))?,
            version: r.version,
            active: r.active,
            info: serde_json::from_str(&r.info).map_err(|_| bad("model_versions.info", &r.info))?,
        })
    }
}

/// A model version with its model.
#[derive(Debug, Queryable, Selectable, Insertable)]
#[diesel(table_name = model_versions, check_for_backend(diesel::sqlite::Sqlite))]
pub(crate) struct StoredModelRow {
    pub tenant_id: String,
    pub kind: String,
    pub version: i32,
    pub active: bool,
    pub info: String,
    pub model: Vec<u8>,
}

impl From<&StoredModel> for StoredModelRow {
    fn from(m: &StoredModel) -> Self {
        let v = &m.version;
        Self {
            tenant_id: id_text(v.tenant_id.0),
            kind: v.kind.as_str().to_owned(),
            version: v.version,
            active: v.active,
            info: v.info.to_string(),
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

/// The stored text of a JSON object column.
pub(crate) fn object_text(object: &JsonObject) -> Result<String> {
    serde_json::to_string(object).map_err(DomainError::internal)
}

/// Reads a JSON object column; anything else is an `Internal` error.
fn object_of(column: &str, text: &str) -> Result<JsonObject> {
    serde_json::from_str(text).map_err(|_| bad(column, text))
}

/// A registered agent; timestamps are unix microseconds, so the staleness filter compares
/// them in SQL, and the JSON columns hold `serde_json` text.
#[derive(Debug, Queryable, Selectable, Insertable)]
#[diesel(table_name = agents, check_for_backend(diesel::sqlite::Sqlite))]
#[diesel(treat_none_as_default_value = false)]
pub(crate) struct AgentRow {
    pub id: String,
    pub tenant_id: String,
    pub name: String,
    pub agent_type: String,
    pub description: Option<String>,
    pub capabilities: String,
    pub permissions: String,
    pub status: String,
    pub predicted_type: String,
    pub risk: String,
    pub risk_score: f64,
    pub metadata: String,
    pub last_seen_at: Option<i64>,
    pub created_at: i64,
    pub updated_at: i64,
}

impl TryFrom<&Agent> for AgentRow {
    type Error = DomainError;
    fn try_from(a: &Agent) -> Result<Self> {
        Ok(Self {
            id: id_text(a.id.0),
            tenant_id: id_text(a.tenant_id.0),
            name: a.name.clone(),
            agent_type: a.agent_type.clone(),
            description: a.description.clone(),
            capabilities: serde_json::to_string(&a.capabilities).map_err(DomainError::internal)?,
            permissions: object_text(&a.permissions)?,
            status: a.status.as_str().to_owned(),
            predicted_type: a.predicted_type.clone(),
            risk: a.risk.as_str().to_owned(),
            risk_score: a.risk_score,
            metadata: object_text(&a.metadata)?,
            last_seen_at: a.last_seen_at.map(unix_micros),
            created_at: unix_micros(a.created_at),
            updated_at: unix_micros(a.updated_at),
        })
    }
}

impl TryFrom<AgentRow> for Agent {
    type Error = DomainError;
    fn try_from(r: AgentRow) -> Result<Self> {
        Ok(Agent {
            id: parse_id("agents.id", &r.id)?,
            tenant_id: parse_id("agents.tenant_id", &r.tenant_id)?,
            capabilities: serde_json::from_str(&r.capabilities)
                .map_err(|_| bad("agents.capabilities", &r.capabilities))?,
            permissions: object_of("agents.permissions", &r.permissions)?,
            status: AgentStatus::parse(&r.status).ok_or_else(|| bad("agents.status", &r.status))?,
            risk: RiskLevel::parse(&r.risk).ok_or_else(|| bad("agents.risk", &r.risk))?,
            metadata: object_of("agents.metadata", &r.metadata)?,
            last_seen_at: r.last_seen_at.map(|t| instant("agents.last_seen_at", t)).transpose()?,
            created_at: instant("agents.created_at", r.created_at)?,
            updated_at: instant("agents.updated_at", r.updated_at)?,
            name: r.name,
            agent_type: r.agent_type,
            description: r.description,
            predicted_type: r.predicted_type,
            risk_score: r.risk_score,
        })
    }
}

/// An agent's vector as stored: each `f32` little-endian, 4 bytes per dimension.
pub(crate) fn vector_bytes(vector: &[f32]) -> Vec<u8> {
    vector.iter().flat_map(|x| x.to_le_bytes()).collect()
}

fn vector_of(column: &str, bytes: &[u8]) -> Result<Vec<f32>> {
    let chunks = bytes.chunks_exact(4);
    if !chunks.remainder().is_empty() {
        return Err(bad(column, &format!("{} bytes, not a whole number of f32", bytes.len())));
    }
    Ok(chunks.map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect())
}

/// An agent's embedding. `tenant_id` is the agent's, copied so that a tenant's vectors are
/// read without a join.
#[derive(Debug, Queryable, Selectable, Insertable)]
#[diesel(table_name = agent_embeddings, check_for_backend(diesel::sqlite::Sqlite))]
pub(crate) struct EmbeddingRow {
    pub agent_id: String,
    pub tenant_id: String,
    pub model: String,
    pub model_version: i32,
    pub text: String,
    pub vector: Vec<u8>,
    pub refreshed_at: i64,
}

impl EmbeddingRow {
    pub(crate) fn new(tenant: TenantId, agent: AgentId, e: &AgentEmbedding) -> Self {
        Self {
            agent_id: id_text(agent.0),
            tenant_id: id_text(tenant.0),
            model: e.model.clone(),
            model_version: e.model_version,
            text: e.text.clone(),
            vector: vector_bytes(&e.vector),
            refreshed_at: unix_micros(e.refreshed_at),
        }
    }
}

impl TryFrom<EmbeddingRow> for AgentEmbedding {
    type Error = DomainError;
    fn try_from(r: EmbeddingRow) -> Result<Self> {
        Ok(AgentEmbedding {
            vector: vector_of("agent_embeddings.vector", &r.vector)?,
            refreshed_at: instant("agent_embeddings.refreshed_at", r.refreshed_at)?,
            model: r.model,
            model_version: r.model_version,
            text: r.text,
        })
    }
}

/// The part of an embedding the search index loads.
#[derive(Debug, Queryable, Selectable)]
#[diesel(table_name = agent_embeddings, check_for_backend(diesel::sqlite::Sqlite))]
pub(crate) struct VectorRow {
    pub agent_id: String,
    pub model: String,
    pub model_version: i32,
    pub vector: Vec<u8>,
}

impl TryFrom<VectorRow> for AgentVector {
    type Error = DomainError;
    fn try_from(r: VectorRow) -> Result<Self> {
        Ok(AgentVector {
            id: parse_id("agent_embeddings.agent_id", &r.agent_id)?,
            vector: vector_of("agent_embeddings.vector", &r.vector)?,
            model: r.model,
            model_version: r.model_version,
        })
    }
}

/// A tenant policy; timestamps are unix microseconds, as in the agent tables.
#[derive(Debug, Queryable, Selectable, Insertable)]
#[diesel(table_name = policies, check_for_backend(diesel::sqlite::Sqlite))]
#[diesel(treat_none_as_default_value = false)]
pub(crate) struct PolicyRow {
    pub id: String,
    pub tenant_id: String,
    pub name: String,
    pub description: Option<String>,
    pub rego: String,
    pub enabled: bool,
    pub version: i64,
    pub created_by: Option<String>,
    pub created_at: i64,
    pub updated_at: i64,
}

impl From<&Policy> for PolicyRow {
    fn from(p: &Policy) -> Self {
        Self {
            id: id_text(p.id.0),
            tenant_id: id_text(p.tenant_id.0),
            name: p.name.clone(),
            description: p.description.clone(),
            rego: p.rego.clone(),
            enabled: p.enabled,
            version: p.version,
            created_by: p.created_by.map(|u| id_text(u.0)),
            created_at: unix_micros(p.created_at),
            updated_at: unix_micros(p.updated_at),
        }
    }
}

impl TryFrom<PolicyRow> for Policy {
    type Error = DomainError;
    fn try_from(r: PolicyRow) -> Result<Self> {
        Ok(Policy {
            id: parse_id("policies.id", &r.id)?,
            tenant_id: parse_id("policies.tenant_id", &r.tenant_id)?,
            created_by: r.created_by.map(|u| parse_id("policies.created_by", &u)).transpose()?,
            created_at: instant("policies.created_at", r.created_at)?,
            updated_at: instant("policies.updated_at", r.updated_at)?,
            name: r.name,
            description: r.description,
            rego: r.rego,
            enabled: r.enabled,
            version: r.version,
        })
    }
}

/// Feedback on the Prompt Guard; `created_at` is unix microseconds.
#[derive(Debug, Queryable, Selectable, Insertable)]
#[diesel(table_name = guard_feedback, check_for_backend(diesel::sqlite::Sqlite))]
#[diesel(treat_none_as_default_value = false)]
pub(crate) struct GuardFeedbackRow {
    pub id: String,
    pub tenant_id: String,
    pub kind: String,
    pub label: String,
    pub validation_id: Option<String>,
    pub text: String,
    pub created_by_type: String,
    pub created_by_id: String,
    pub created_at: i64,
}

impl From<&GuardFeedback> for GuardFeedbackRow {
    fn from(f: &GuardFeedback) -> Self {
        Self {
            id: id_text(f.id.0),
            tenant_id: id_text(f.tenant_id.0),
            kind: f.kind.as_str().to_owned(),
            label: f.label.as_str().to_owned(),
            validation_id: f.validation_id.map(id_text),
            text: f.text.clone(),
            created_by_type: f.created_by.kind.as_str().to_owned(),
            created_by_id: f.created_by.id.clone(),
            created_at: unix_micros(f.created_at),
        }
    }
}

impl TryFrom<GuardFeedbackRow> for GuardFeedback {
    type Error = DomainError;
    fn try_from(r: GuardFeedbackRow) -> Result<Self> {
        let kind = ActorType::parse(&r.created_by_type)
            .ok_or_else(|| bad("guard_feedback.created_by_type", &r.created_by_type))?;
        Ok(GuardFeedback {
            id: parse_id("guard_feedback.id", &r.id)?,
            tenant_id: parse_id("guard_feedback.tenant_id", &r.tenant_id)?,
            kind: GuardFeedbackKind::parse(&r.kind).ok_or_else(|| bad("guard_feedback.kind", &r.kind))?,
            label: GuardLabel::parse(&r.label).ok_or_else(|| bad("guard_feedback.label", &r.label))?,
            validation_id: r
                .validation_id
                .as_deref()
                .map(|v| parse_id("guard_feedback.validation_id", v))
                .transpose()?,
            text: r.text,
            created_by: Actor { kind, id: r.created_by_id },
            created_at: instant("guard_feedback.created_at", r.created_at)?,
        })
    }
}

/// A discovery event: `body` is the JSON text of its `Serialize` form, which leaves out
/// `tenant_id` (the column).
#[derive(Debug, Queryable, Selectable, Insertable)]
#[diesel(table_name = discovery_events, check_for_backend(diesel::sqlite::Sqlite))]
pub(crate) struct DiscoveryEventRow {
    pub id: String,
    pub tenant_id: String,
    pub disposition: String,
    pub body: String,
}

impl TryFrom<&DiscoveryEvent> for DiscoveryEventRow {
    type Error = DomainError;
    fn try_from(e: &DiscoveryEvent) -> Result<Self> {
        Ok(Self {
            id: id_text(e.id.0),
            tenant_id: id_text(e.tenant_id.0),
            disposition: e.disposition.as_str().to_owned(),
            body: serde_json::to_string(e).map_err(DomainError::internal)?,
        })
    }
}

/// What reading an event needs: its tenant and its body.
#[derive(Debug, Queryable, Selectable)]
#[diesel(table_name = discovery_events, check_for_backend(diesel::sqlite::Sqlite))]
pub(crate) struct DiscoveryEventBody {
    pub tenant_id: String,
    pub body: String,
}

impl TryFrom<DiscoveryEventBody> for DiscoveryEvent {
    type Error = DomainError;
    fn try_from(r: DiscoveryEventBody) -> Result<Self> {
        let mut event: DiscoveryEvent =
            serde_json::from_str(&r.body).map_err(|_| bad("discovery_events.body", &r.body))?;
        event.tenant_id = parse_id("discovery_events.tenant_id", &r.tenant_id)?;
        Ok(event)
    }
}

/// A discovery candidate: `body` is the JSON text of its `Serialize` form (without
/// `tenant_id`, its own or its sample events'), `status` a copy of its status that SQL
/// filters on.
#[derive(Debug, Queryable, Selectable, Insertable)]
#[diesel(table_name = discovery_candidates, check_for_backend(diesel::sqlite::Sqlite))]
pub(crate) struct CandidateRow {
    pub id: String,
    pub tenant_id: String,
    pub status: String,
    pub body: String,
}

impl CandidateRow {
    /// `candidate` as a row of `tenant` (whatever its own `tenant_id`).
    pub(crate) fn new(tenant: TenantId, candidate: &DiscoveryCandidate) -> Result<Self> {
        Ok(Self {
            id: id_text(candidate.id.0),
            tenant_id: id_text(tenant.0),
            status: candidate.status.as_str().to_owned(),
            body: serde_json::to_string(candidate).map_err(DomainError::internal)?,
        })
    }
}

/// What reading a candidate needs: its tenant and its body.
#[derive(Debug, Queryable, Selectable)]
#[diesel(table_name = discovery_candidates, check_for_backend(diesel::sqlite::Sqlite))]
pub(crate) struct CandidateBody {
    pub tenant_id: String,
    pub body: String,
}

impl TryFrom<CandidateBody> for DiscoveryCandidate {
    type Error = DomainError;
    fn try_from(r: CandidateBody) -> Result<Self> {
        let mut candidate: DiscoveryCandidate =
            serde_json::from_str(&r.body).map_err(|_| bad("discovery_candidates.body", &r.body))?;
        candidate.tenant_id = parse_id("discovery_candidates.tenant_id", &r.tenant_id)?;
        // Its sample events are the tenant's too (their JSON leaves the tenant out as well).
        for event in &mut candidate.sample_events {
            event.tenant_id = candidate.tenant_id;
        }
        Ok(candidate)
    }
}

/// An approval request: `body` is the JSON text of its `Serialize` form (without
/// `tenant_id`); `agent_id`, `status`, `expires_at` and the callback's due time
/// (`HitlRequest::callback_due_at`, unix microseconds) are copies SQL filters and orders on.
#[derive(Debug, Queryable, Selectable, Insertable)]
#[diesel(table_name = hitl_requests, check_for_backend(diesel::sqlite::Sqlite))]
#[diesel(treat_none_as_default_value = false)]
pub(crate) struct HitlRow {
    pub id: String,
    pub tenant_id: String,
    pub agent_id: String,
    pub status: String,
    pub expires_at: i64,
    pub callback_due_at: Option<i64>,
    pub body: String,
    /// `HitlRequest::callback_open`: what the tenant's quota of open callbacks counts.
    pub callback_open: bool,
}

impl TryFrom<&HitlRequest> for HitlRow {
    type Error = DomainError;
    fn try_from(r: &HitlRequest) -> Result<Self> {
        Ok(Self {
            id: id_text(r.id.0),
            tenant_id: id_text(r.tenant_id.0),
            agent_id: id_text(r.agent_id.0),
            status: r.status.as_str().to_owned(),
            expires_at: unix_micros(r.expires_at),
            callback_due_at: r.callback_due_at().map(unix_micros),
            body: serde_json::to_string(r).map_err(DomainError::internal)?,
            callback_open: r.callback_open(),
        })
    }
}

/// What reading an approval request needs: its tenant and its body.
#[derive(Debug, Queryable, QueryableByName, Selectable)]
#[diesel(table_name = hitl_requests, check_for_backend(diesel::sqlite::Sqlite))]
pub(crate) struct HitlBody {
    pub tenant_id: String,
    pub body: String,
}

impl TryFrom<HitlBody> for HitlRequest {
    type Error = DomainError;
    fn try_from(r: HitlBody) -> Result<Self> {
        let mut request: HitlRequest = serde_json::from_str(&r.body).map_err(|_| bad("hitl_requests.body", &r.body))?;
        request.tenant_id = parse_id("hitl_requests.tenant_id", &r.tenant_id)?;
        Ok(request)
    }
}

/// An anomaly report: `body` is the JSON text of its `Serialize` form (without
/// `tenant_id`); `agent_id`, `anomaly_type`, `severity`, `status` and `created_at` (unix
/// microseconds) are copies SQL filters and groups on.
#[derive(Debug, Queryable, Selectable, Insertable)]
#[diesel(table_name = anomaly_reports, check_for_backend(diesel::sqlite::Sqlite))]
pub(crate) struct AnomalyRow {
    pub id: String,
    pub tenant_id: String,
    pub agent_id: String,
    pub anomaly_type: String,
    pub severity: String,
    pub status: String,
    pub created_at: i64,
    pub body: String,
}

impl TryFrom<&AnomalyReport> for AnomalyRow {
    type Error = DomainError;
    fn try_from(r: &AnomalyReport) -> Result<Self> {
        Ok(Self {
            id: id_text(r.id.0),
            tenant_id: id_text(r.tenant_id.0),
            agent_id: id_text(r.agent_id.0),
            anomaly_type: r.anomaly_type.as_str().to_owned(),
            severity: r.severity.as_str().to_owned(),
            status: r.status.as_str().to_owned(),
            created_at: unix_micros(r.created_at),
            body: serde_json::to_string(r).map_err(DomainError::internal)?,
        })
    }
}

/// What reading an anomaly report needs: its tenant and its body.
#[derive(Debug, Queryable, Selectable)]
#[diesel(table_name = anomaly_reports, check_for_backend(diesel::sqlite::Sqlite))]
pub(crate) struct AnomalyBody {
    pub tenant_id: String,
    pub body: String,
}

impl TryFrom<AnomalyBody> for AnomalyReport {
    type Error = DomainError;
    fn try_from(r: AnomalyBody) -> Result<Self> {
        let mut report: AnomalyReport =
            serde_json::from_str(&r.body).map_err(|_| bad("anomaly_reports.body", &r.body))?;
        report.tenant_id = parse_id("anomaly_reports.tenant_id", &r.tenant_id)?;
        Ok(report)
    }
}

/// Converts every row, failing on the first unreadable one.
pub(crate) fn convert<R, T: TryFrom<R, Error = DomainError>>(rows: Vec<R>) -> Result<Vec<T>> {
    rows.into_iter().map(T::try_from).collect()
}
