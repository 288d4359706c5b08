//! The rows both SQL stores read and write, written once: [`rows!`](crate::rows) expands
//! them in the store that invokes it, and the helpers below are what their conversions share.
//! Reading never panics: a value the domain cannot represent is an `Internal` error that
//! names the table and the row.

use agentgov_domain::model::{AuditHash, Permission};
use agentgov_domain::{DomainError, Result};
use serde_json::Value;

/// The error for a stored row the domain cannot read: `problem` in row `id` of `table`.
pub fn corrupt(table: &str, id: impl std::fmt::Display, problem: impl std::fmt::Display) -> DomainError {
    DomainError::Internal(format!("bad row in {table} (id {id}): {problem}"))
}

/// An unknown name in a text column, as `problem` for [`corrupt`].
pub fn unknown(what: &str, value: &str) -> String {
    format!("unknown {what} `{value}`")
}

/// A 32-byte audit hash from its column.
pub fn hash_of(bytes: &[u8]) -> std::result::Result<AuditHash, String> {
    AuditHash::from_slice(bytes).ok_or_else(|| format!("{} bytes, not 32", bytes.len()))
}

/// An agent's vector as stored: each `f32` little-endian, 4 bytes per dimension.
pub fn vector_bytes(vector: &[f32]) -> Vec<u8> {
    vector.iter().flat_map(|x| x.to_le_bytes()).collect()
}

/// A vector read back from [`vector_bytes`].
pub fn vector_of(bytes: &[u8]) -> std::result::Result<Vec<f32>, String> {
    let (dims, rest) = bytes.as_chunks::<4>();
    if !rest.is_empty() {
        return Err(format!("vector of {} bytes, not a whole number of f32", bytes.len()));
    }
    Ok(dims.iter().map(|d| f32::from_le_bytes(*d)).collect())
}

/// An API key's permissions as stored: a JSON array of their names.
pub fn permissions_value(permissions: &[Permission]) -> Value {
    Value::Array(permissions.iter().map(|p| Value::String(p.as_str().to_owned())).collect())
}

/// Permissions read back from [`permissions_value`].
pub fn parse_permissions(value: &Value) -> std::result::Result<Vec<Permission>, String> {
    let items = value.as_array().ok_or("permissions is not a JSON array")?;
    items
        .iter()
        .map(|item| item.as_str().ok_or_else(|| format!("permission `{item}` is not a string"))?.parse::<Permission>())
        .collect()
}

/// The stored text of a record kept as its `Serialize` form (`what`, for the error).
pub fn body_text<T: serde::Serialize>(record: &T, what: impl std::fmt::Display) -> Result<String> {
    serde_json::to_string(record).map_err(|e| DomainError::Internal(format!("encoding {what}: {e}")))
}

/// A record read back from [`body_text`]; `Internal` naming the row when it does not parse.
pub fn body_of<T: serde::de::DeserializeOwned>(table: &str, id: impl std::fmt::Display, body: &str) -> Result<T> {
    serde_json::from_str(body).map_err(|e| corrupt(table, id, format!("body: {e}")))
}

/// Converts every row, failing on the first unreadable one.
pub fn convert<R, T: TryFrom<R, Error = DomainError>>(rows: Vec<R>) -> Result<Vec<T>> {
    rows.into_iter().map(T::try_from).collect()
}

/// The row structs of the tables both stores share, with their conversions from and to the
/// domain's records, in a module `shared` whose items the invoking module re-exports. The
/// invoking crate provides `crate::schema` (the tables of [`tables!`](crate::tables)) and
/// `crate::columns`: `Backend` (the diesel backend) and the Rust types of the kinds of column
/// whose representation differs, `Id` (`From<Uuid>`, `Into<Uuid>`, `Copy`), `Micros` (the same
/// with `OffsetDateTime`) and `TextList` (the same with `Vec<String>`).
#[macro_export]
#[expect(clippy::crate_in_macro_def, reason = "`crate` is meant: the invoking store's `schema` and `columns`")]
macro_rules! rows {
    () => {
        pub(crate) use shared::*;

        mod shared {
            use agentgov_domain::ids::{AgentId, TenantId};
            use agentgov_domain::model::{
                Actor, ActorType, Agent, AgentEmbedding, AgentStatus, AgentVector, AnomalyReport, ApiKey, ApiKeyKind,
                AuditOrigin, AuditRecord, ChainHead, DiscoveryCandidate, PolicyMode, DiscoveryEvent, GuardFeedback,
                GuardFeedbackKind, GuardLabel, HitlRequest, Job, JobKind, JobStatus, JsonObject, JsonText, Lease,
                ModelKind, ModelVersion, Policy, RiskLevel, Role, SecretPurpose, Session, StoredModel, Tenant,
                TenantSecret, User, UserStatus,
            };
            use agentgov_domain::{DomainError, Result};
            use diesel::prelude::*;
            use serde_json::Value;
            use time::OffsetDateTime;
            use uuid::Uuid;

            use crate::columns::{Backend, Id, Micros, TextList};
            use crate::schema::{
                agent_embeddings, agents, anomaly_reports, api_keys, audit_heads, audit_records, discovery_candidates,
                discovery_events, guard_feedback, hitl_requests, jobs, model_versions, policies, sessions,
                tenant_secrets, tenants, users,
            };

            #[derive(Debug, Clone, Queryable, Selectable, Insertable)]
            #[diesel(table_name = tenants, check_for_backend(Backend))]
            pub(crate) struct TenantRow {
                pub id: Id,
                pub name: String,
                pub created_at: OffsetDateTime,
                pub settings: String,
                pub updated_at: OffsetDateTime,
            }

            impl TryFrom<&Tenant> for TenantRow {
                type Error = DomainError;
                fn try_from(t: &Tenant) -> Result<Self> {
                    Ok(Self {
                        id: Id::from(t.id.as_uuid()),
                        name: t.name.clone(),
                        created_at: t.created_at,
                        settings: $crate::rows::body_text(&t.settings, format_args!("the settings of tenant {}", t.id))?,
                        updated_at: t.updated_at,
                    })
                }
            }

            impl TryFrom<TenantRow> for Tenant {
                type Error = DomainError;
                fn try_from(r: TenantRow) -> Result<Self> {
                    let id = Uuid::from(r.id);
                    let settings = serde_json::from_str(&r.settings)
                        .map_err(|e| $crate::rows::corrupt("tenants", id, format_args!("settings: {e}")))?;
                    Ok(Self { id: id.into(), name: r.name, settings, created_at: r.created_at, updated_at: r.updated_at })
                }
            }

            /// No `Debug`: the row holds a secret.
            #[derive(Queryable, Selectable, Insertable)]
            #[diesel(table_name = tenant_secrets, check_for_backend(Backend))]
            pub(crate) struct TenantSecretRow {
                pub tenant_id: Id,
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
                        tenant_id: Id::from(s.tenant_id.as_uuid()),
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
                    let tenant = Uuid::from(r.tenant_id);
                    let purpose = SecretPurpose::parse(&r.purpose).ok_or_else(|| {
                        $crate::rows::corrupt("tenant_secrets", tenant, $crate::rows::unknown("purpose", &r.purpose))
                    })?;
                    Ok(TenantSecret {
                        tenant_id: tenant.into(),
                        purpose,
                        secret: r.secret,
                        previous: r.previous,
                        previous_until: r.previous_until,
                        require_timestamp: r.require_timestamp,
                        created_at: r.created_at,
                    })
                }
            }

            #[derive(Debug, Clone, Queryable, Selectable, Insertable)]
            #[diesel(table_name = users, check_for_backend(Backend))]
            pub(crate) struct UserRow {
                pub id: Id,
                pub tenant_id: Id,
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
                        id: Id::from(u.id.as_uuid()),
                        tenant_id: Id::from(u.tenant_id.as_uuid()),
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
                    let id = Uuid::from(r.id);
                    let role = r.role.parse::<Role>().map_err(|e| $crate::rows::corrupt("users", id, e))?;
                    let status = UserStatus::parse(&r.status)
                        .ok_or_else(|| $crate::rows::corrupt("users", id, $crate::rows::unknown("status", &r.status)))?;
                    Ok(Self {
                        id: id.into(),
                        tenant_id: Uuid::from(r.tenant_id).into(),
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
            #[diesel(table_name = sessions, check_for_backend(Backend))]
            pub(crate) struct SessionRow {
                pub id: Id,
                pub tenant_id: Id,
                pub user_id: Id,
                pub created_at: OffsetDateTime,
                pub expires_at: OffsetDateTime,
                pub revoked_at: Option<OffsetDateTime>,
            }

            impl From<&Session> for SessionRow {
                fn from(s: &Session) -> Self {
                    Self {
                        id: Id::from(s.id.as_uuid()),
                        tenant_id: Id::from(s.tenant_id.as_uuid()),
                        user_id: Id::from(s.user_id.as_uuid()),
                        created_at: s.created_at,
                        expires_at: s.expires_at,
                        revoked_at: s.revoked_at,
                    }
                }
            }

            impl From<SessionRow> for Session {
                fn from(r: SessionRow) -> Self {
                    Self {
                        id: Uuid::from(r.id).into(),
                        tenant_id: Uuid::from(r.tenant_id).into(),
                        user_id: Uuid::from(r.user_id).into(),
                        created_at: r.created_at,
                        expires_at: r.expires_at,
                        revoked_at: r.revoked_at,
                    }
                }
            }

            #[derive(Debug, Clone, Queryable, Selectable, Insertable)]
            #[diesel(table_name = api_keys, check_for_backend(Backend))]
            pub(crate) struct ApiKeyRow {
                pub id: Id,
                pub tenant_id: Id,
                pub user_id: Id,
                pub session_id: Option<Id>,
                pub name: String,
                pub prefix: String,
                pub key_hash: Vec<u8>,
                /// A JSON array of permission names, e.g. `["agents:read"]`.
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
                        id: Id::from(k.id.as_uuid()),
                        tenant_id: Id::from(k.tenant_id.as_uuid()),
                        user_id: Id::from(k.user_id.as_uuid()),
                        session_id: k.session_id.map(|s| Id::from(s.as_uuid())),
                        name: k.name.clone(),
                        prefix: k.prefix.clone(),
                        key_hash: k.key_hash.clone(),
                        permissions: $crate::rows::permissions_value(&k.permissions),
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
                    let id = Uuid::from(r.id);
                    let permissions =
                        $crate::rows::parse_permissions(&r.permissions).map_err(|e| $crate::rows::corrupt("api_keys", id, e))?;
                    let kind = ApiKeyKind::parse(&r.kind)
                        .ok_or_else(|| $crate::rows::corrupt("api_keys", id, $crate::rows::unknown("kind", &r.kind)))?;
                    Ok(Self {
                        id: id.into(),
                        tenant_id: Uuid::from(r.tenant_id).into(),
                        user_id: Uuid::from(r.user_id).into(),
                        name: r.name,
                        prefix: r.prefix,
                        key_hash: r.key_hash,
                        permissions,
                        kind,
                        session_id: r.session_id.map(|s| Uuid::from(s).into()),
                        created_at: r.created_at,
                        expires_at: r.expires_at,
                        last_used_at: r.last_used_at,
                        revoked_at: r.revoked_at,
                    })
                }
            }

            /// One record of the audit log. `None` is written as NULL (never as a column
            /// default), so a batch of rows goes in as one multi-row `INSERT`.
            #[derive(Debug, Clone, Queryable, Selectable, Insertable)]
            #[diesel(table_name = audit_records, check_for_backend(Backend))]
            #[diesel(treat_none_as_default_value = false)]
            pub(crate) struct AuditRecordRow {
                pub id: Id,
                pub tenant_id: Id,
                pub seq: i64,
                pub ts: Micros,
                pub actor_type: String,
                pub actor_id: String,
                pub event_type: String,
                pub agent_id: Option<Id>,
                pub action: Option<String>,
                pub resource: Option<String>,
                pub decision: Option<String>,
                pub risk_score: Option<f64>,
                /// The exact JSON text that was hashed; never re-serialised.
                pub details: String,
                pub prev_hash: Vec<u8>,
                pub hash: Vec<u8>,
                pub session_id: Option<String>,
            }

            impl From<&AuditRecord> for AuditRecordRow {
                fn from(r: &AuditRecord) -> Self {
                    Self {
                        id: Id::from(r.id.as_uuid()),
                        tenant_id: Id::from(r.tenant_id.as_uuid()),
                        seq: r.seq,
                        ts: Micros::from(r.timestamp),
                        actor_type: r.actor.kind.as_str().to_owned(),
                        actor_id: r.actor.id.clone(),
                        event_type: r.event_type.clone(),
                        agent_id: r.agent_id.map(Id::from),
                        action: r.action.clone(),
                        resource: r.resource.clone(),
                        decision: r.decision.clone(),
                        risk_score: r.risk_score,
                        details: r.details.as_str().to_owned(),
                        prev_hash: r.prev_hash.0.to_vec(),
                        hash: r.hash.0.to_vec(),
                        session_id: r.session_id.clone(),
                    }
                }
            }

            impl TryFrom<AuditRecordRow> for AuditRecord {
                type Error = DomainError;
                fn try_from(r: AuditRecordRow) -> Result<Self> {
                    let id = Uuid::from(r.id);
                    let bad = |problem: String| $crate::rows::corrupt("audit_records", id, problem);
                    let kind = ActorType::parse(&r.actor_type)
                        .ok_or_else(|| bad($crate::rows::unknown("actor type", &r.actor_type)))?;
                    let prev_hash = $crate::rows::hash_of(&r.prev_hash).map_err(|e| bad(format!("prev_hash: {e}")))?;
                    let hash = $crate::rows::hash_of(&r.hash).map_err(|e| bad(format!("hash: {e}")))?;
                    let details = JsonText::from_stored(r.details).map_err(|e| bad(format!("details: {e}")))?;
                    Ok(Self {
                        id: id.into(),
                        tenant_id: Uuid::from(r.tenant_id).into(),
                        seq: r.seq,
                        timestamp: r.ts.into(),
                        actor: Actor { kind, id: r.actor_id },
                        origin: AuditOrigin::of(&r.event_type),
                        event_type: r.event_type,
                        agent_id: r.agent_id.map(Uuid::from),
                        action: r.action,
                        resource: r.resource,
                        decision: r.decision,
                        risk_score: r.risk_score,
                        details,
                        session_id: r.session_id,
                        prev_hash,
                        hash,
                    })
                }
            }

            /// A tenant's chain head.
            #[derive(Debug, Clone, Queryable, Selectable, Insertable)]
            #[diesel(table_name = audit_heads, check_for_backend(Backend))]
            pub(crate) struct AuditHeadRow {
                pub tenant_id: Id,
                pub seq: i64,
                pub hash: Vec<u8>,
                pub ts: Micros,
            }

            impl AuditHeadRow {
                pub(crate) fn new(tenant: TenantId, head: &ChainHead) -> Self {
                    Self {
                        tenant_id: Id::from(tenant.as_uuid()),
                        seq: head.seq,
                        hash: head.hash.0.to_vec(),
                        ts: Micros::from(head.timestamp),
                    }
                }

                /// The head as stored; a placeholder row of seq 0 is the genesis head.
                pub(crate) fn head(&self) -> Result<ChainHead> {
                    if self.seq == 0 {
                        return Ok(ChainHead::GENESIS);
                    }
                    let hash = $crate::rows::hash_of(&self.hash)
                        .map_err(|e| $crate::rows::corrupt("audit_heads", Uuid::from(self.tenant_id), e))?;
                    Ok(ChainHead { seq: self.seq, hash, timestamp: self.ts.into() })
                }
            }

            /// A job of the queue.
            #[derive(Debug, Clone, Queryable, Selectable, Insertable)]
            #[diesel(table_name = jobs, check_for_backend(Backend))]
            #[diesel(treat_none_as_default_value = false)]
            pub(crate) struct JobRow {
                pub id: Id,
                pub tenant_id: Id,
                pub kind: String,
                pub requested_by_type: String,
                pub requested_by_id: String,
                pub status: String,
                pub progress: f64,
                pub error: Option<String>,
                pub params: Value,
                pub state: Value,
                pub created_at: Micros,
                pub started_at: Option<Micros>,
                pub finished_at: Option<Micros>,
                pub expires_at: Option<Micros>,
                pub attempts: i32,
                pub lease_token: Option<Id>,
                pub lease_until: Option<Micros>,
            }

            impl From<&Job> for JobRow {
                fn from(j: &Job) -> Self {
                    Self {
                        id: Id::from(j.id),
                        tenant_id: Id::from(j.tenant_id.as_uuid()),
                        kind: j.kind.as_str().to_owned(),
                        requested_by_type: j.requested_by.kind.as_str().to_owned(),
                        requested_by_id: j.requested_by.id.clone(),
                        status: j.status.as_str().to_owned(),
                        progress: j.progress,
                        error: j.error.clone(),
                        params: j.params.clone(),
                        state: j.state.clone(),
                        created_at: Micros::from(j.created_at),
                        started_at: j.started_at.map(Micros::from),
                        finished_at: j.finished_at.map(Micros::from),
                        expires_at: j.expires_at.map(Micros::from),
                        attempts: j.attempts,
                        lease_token: j.lease.map(|l| Id::from(l.token)),
                        lease_until: j.lease.map(|l| Micros::from(l.until)),
                    }
                }
            }

            impl TryFrom<JobRow> for Job {
                type Error = DomainError;
                fn try_from(r: JobRow) -> Result<Self> {
                    let id = Uuid::from(r.id);
                    let bad = |problem: String| $crate::rows::corrupt("jobs", id, problem);
                    let actor = ActorType::parse(&r.requested_by_type)
                        .ok_or_else(|| bad($crate::rows::unknown("actor type", &r.requested_by_type)))?;
                    let kind = JobKind::parse(&r.kind).ok_or_else(|| bad($crate::rows::unknown("kind", &r.kind)))?;
                    let status =
                        JobStatus::parse(&r.status).ok_or_else(|| bad($crate::rows::unknown("status", &r.status)))?;
                    let lease = match (r.lease_token, r.lease_until) {
                        (Some(token), Some(until)) => Some(Lease { token: token.into(), until: until.into() }),
                        _ => None,
                    };
                    Ok(Self {
                        id,
                        tenant_id: Uuid::from(r.tenant_id).into(),
                        kind,
                        requested_by: Actor { kind: actor, id: r.requested_by_id },
                        status,
                        progress: r.progress,
                        error: r.error,
                        params: r.params,
                        state: r.state,
                        created_at: r.created_at.into(),
                        started_at: r.started_at.map(Into::into),
                        finished_at: r.finished_at.map(Into::into),
                        expires_at: r.expires_at.map(Into::into),
                        attempts: r.attempts,
                        lease,
                    })
                }
            }

            /// A model version without its model.
            #[derive(Debug, Clone, Queryable, Selectable)]
            #[diesel(table_name = model_versions, check_for_backend(Backend))]
            pub(crate) struct ModelVersionRow {
                pub tenant_id: Id,
                pub kind: String,
                pub version: i32,
                pub active: bool,
                pub info: Value,
            }

            impl TryFrom<ModelVersionRow> for ModelVersion {
                type Error = DomainError;
                fn try_from(r: ModelVersionRow) -> Result<Self> {
                    let tenant = Uuid::from(r.tenant_id);
                    let kind = ModelKind::parse(&r.kind).ok_or_else(|| {
                        $crate::rows::corrupt("model_versions", tenant, $crate::rows::unknown("kind", &r.kind))
                    })?;
                    Ok(ModelVersion { tenant_id: tenant.into(), kind, version: r.version, active: r.active, info: r.info })
                }
            }

            /// A model version with its model.
            #[derive(Debug, Clone, Queryable, Selectable, Insertable)]
            #[diesel(table_name = model_versions, check_for_backend(Backend))]
            pub(crate) struct StoredModelRow {
                pub tenant_id: Id,
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
                        tenant_id: Id::from(v.tenant_id.as_uuid()),
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

            /// A registered agent; `permissions` and `metadata` hold a JSON object's text, kept
            /// verbatim.
            #[derive(Debug, Clone, Queryable, QueryableByName, Selectable, Insertable)]
            #[diesel(table_name = agents, check_for_backend(Backend))]
            #[diesel(treat_none_as_default_value = false)]
            pub(crate) struct AgentRow {
                pub id: Id,
                pub tenant_id: Id,
                pub name: String,
                pub agent_type: String,
                pub description: Option<String>,
                pub capabilities: TextList,
                pub permissions: String,
                pub status: String,
                pub predicted_type: String,
                pub risk: String,
                pub risk_score: f64,
                pub metadata: String,
                pub last_seen_at: Option<Micros>,
                pub created_at: Micros,
                pub updated_at: Micros,
            }

            impl TryFrom<&Agent> for AgentRow {
                type Error = DomainError;
                fn try_from(a: &Agent) -> Result<Self> {
                    Ok(Self {
                        id: Id::from(a.id.as_uuid()),
                        tenant_id: Id::from(a.tenant_id.as_uuid()),
                        name: a.name.clone(),
                        agent_type: a.agent_type.clone(),
                        description: a.description.clone(),
                        capabilities: TextList::from(a.capabilities.clone()),
                        permissions: $crate::rows::body_text(&a.permissions, format_args!("the permissions of agent {}", a.id))?,
                        status: a.status.as_str().to_owned(),
                        predicted_type: a.predicted_type.clone(),
                        risk: a.risk.as_str().to_owned(),
                        risk_score: a.risk_score,
                        metadata: $crate::rows::body_text(&a.metadata, format_args!("the metadata of agent {}", a.id))?,
                        last_seen_at: a.last_seen_at.map(Micros::from),
                        created_at: Micros::from(a.created_at),
                        updated_at: Micros::from(a.updated_at),
                    })
                }
            }

            impl TryFrom<AgentRow> for Agent {
                type Error = DomainError;
                fn try_from(r: AgentRow) -> Result<Self> {
                    let id = Uuid::from(r.id);
                    let bad = |problem: String| $crate::rows::corrupt("agents", id, problem);
                    let status =
                        AgentStatus::parse(&r.status).ok_or_else(|| bad($crate::rows::unknown("status", &r.status)))?;
                    let risk = RiskLevel::parse(&r.risk).ok_or_else(|| bad($crate::rows::unknown("risk", &r.risk)))?;
                    let permissions = serde_json::from_str::<JsonObject>(&r.permissions)
                        .map_err(|e| bad(format!("permissions: {e}")))?;
                    let metadata =
                        serde_json::from_str::<JsonObject>(&r.metadata).map_err(|e| bad(format!("metadata: {e}")))?;
                    Ok(Self {
                        id: id.into(),
                        tenant_id: Uuid::from(r.tenant_id).into(),
                        name: r.name,
                        agent_type: r.agent_type,
                        description: r.description,
                        capabilities: r.capabilities.into(),
                        permissions,
                        status,
                        predicted_type: r.predicted_type,
                        risk,
                        risk_score: r.risk_score,
                        metadata,
                        last_seen_at: r.last_seen_at.map(Into::into),
                        created_at: r.created_at.into(),
                        updated_at: r.updated_at.into(),
                    })
                }
            }

            /// An agent's embedding. `tenant_id` is the agent's, copied so that a tenant's
            /// vectors are read without a join.
            #[derive(Debug, Clone, Queryable, Selectable, Insertable)]
            #[diesel(table_name = agent_embeddings, check_for_backend(Backend))]
            pub(crate) struct AgentEmbeddingRow {
                pub agent_id: Id,
                pub tenant_id: Id,
                pub model: String,
                pub model_version: i32,
                pub text: String,
                /// See [`vector_bytes`]($crate::rows::vector_bytes).
                pub vector: Vec<u8>,
                pub refreshed_at: Micros,
            }

            impl AgentEmbeddingRow {
                pub(crate) fn of(tenant: TenantId, agent: AgentId, e: &AgentEmbedding) -> Self {
                    Self {
                        agent_id: Id::from(agent.as_uuid()),
                        tenant_id: Id::from(tenant.as_uuid()),
                        model: e.model.clone(),
                        model_version: e.model_version,
                        text: e.text.clone(),
                        vector: $crate::rows::vector_bytes(&e.vector),
                        refreshed_at: Micros::from(e.refreshed_at),
                    }
                }
            }

            impl TryFrom<AgentEmbeddingRow> for AgentEmbedding {
                type Error = DomainError;
                fn try_from(r: AgentEmbeddingRow) -> Result<Self> {
                    let vector = $crate::rows::vector_of(&r.vector)
                        .map_err(|e| $crate::rows::corrupt("agent_embeddings", Uuid::from(r.agent_id), e))?;
                    Ok(Self {
                        model: r.model,
                        model_version: r.model_version,
                        text: r.text,
                        vector,
                        refreshed_at: r.refreshed_at.into(),
                    })
                }
            }

            /// What the search index loads: the embedding without its text.
            #[derive(Debug, Clone, Queryable, Selectable)]
            #[diesel(table_name = agent_embeddings, check_for_backend(Backend))]
            pub(crate) struct AgentVectorRow {
                pub agent_id: Id,
                pub model: String,
                pub model_version: i32,
                pub vector: Vec<u8>,
            }

            impl TryFrom<AgentVectorRow> for AgentVector {
                type Error = DomainError;
                fn try_from(r: AgentVectorRow) -> Result<Self> {
                    let id = Uuid::from(r.agent_id);
                    let vector =
                        $crate::rows::vector_of(&r.vector).map_err(|e| $crate::rows::corrupt("agent_embeddings", id, e))?;
                    Ok(Self { id: id.into(), model: r.model, model_version: r.model_version, vector })
                }
            }

            #[derive(Debug, Clone, Queryable, Selectable, Insertable)]
            #[diesel(table_name = policies, check_for_backend(Backend))]
            #[diesel(treat_none_as_default_value = false)]
            pub(crate) struct PolicyRow {
                pub id: Id,
                pub tenant_id: Id,
                pub name: String,
                pub description: Option<String>,
                pub rego: String,
                pub enabled: bool,
                pub version: i64,
                pub created_by: Option<Id>,
                pub created_at: Micros,
                pub updated_at: Micros,
                pub shadow: bool,
            }

            impl From<&Policy> for PolicyRow {
                fn from(p: &Policy) -> Self {
                    Self {
                        id: Id::from(p.id.as_uuid()),
                        tenant_id: Id::from(p.tenant_id.as_uuid()),
                        name: p.name.clone(),
                        description: p.description.clone(),
                        rego: p.rego.clone(),
                        enabled: p.enabled,
                        version: p.version,
                        created_by: p.created_by.map(|u| Id::from(u.as_uuid())),
                        created_at: Micros::from(p.created_at),
                        updated_at: Micros::from(p.updated_at),
                        shadow: p.mode == PolicyMode::Shadow,
                    }
                }
            }

            impl From<PolicyRow> for Policy {
                fn from(r: PolicyRow) -> Self {
                    Self {
                        id: Uuid::from(r.id).into(),
                        tenant_id: Uuid::from(r.tenant_id).into(),
                        name: r.name,
                        description: r.description,
                        rego: r.rego,
                        enabled: r.enabled,
                        mode: PolicyMode::of(r.enabled, r.shadow),
                        version: r.version,
                        created_by: r.created_by.map(|u| Uuid::from(u).into()),
                        created_at: r.created_at.into(),
                        updated_at: r.updated_at.into(),
                    }
                }
            }

            /// Feedback on the Prompt Guard.
            #[derive(Debug, Clone, Queryable, Selectable, Insertable)]
            #[diesel(table_name = guard_feedback, check_for_backend(Backend))]
            #[diesel(treat_none_as_default_value = false)]
            pub(crate) struct GuardFeedbackRow {
                pub id: Id,
                pub tenant_id: Id,
                pub kind: String,
                pub label: String,
                pub validation_id: Option<Id>,
                pub text: String,
                pub created_by_type: String,
                pub created_by_id: String,
                pub created_at: Micros,
            }

            impl From<&GuardFeedback> for GuardFeedbackRow {
                fn from(f: &GuardFeedback) -> Self {
                    Self {
                        id: Id::from(f.id.as_uuid()),
                        tenant_id: Id::from(f.tenant_id.as_uuid()),
                        kind: f.kind.as_str().to_owned(),
                        label: f.label.as_str().to_owned(),
                        validation_id: f.validation_id.map(Id::from),
                        text: f.text.clone(),
                        created_by_type: f.created_by.kind.as_str().to_owned(),
                        created_by_id: f.created_by.id.clone(),
                        created_at: Micros::from(f.created_at),
                    }
                }
            }

            impl TryFrom<GuardFeedbackRow> for GuardFeedback {
                type Error = DomainError;
                fn try_from(r: GuardFeedbackRow) -> Result<Self> {
                    let id = Uuid::from(r.id);
                    let bad = |problem: String| $crate::rows::corrupt("guard_feedback", id, problem);
                    let kind =
                        GuardFeedbackKind::parse(&r.kind).ok_or_else(|| bad($crate::rows::unknown("kind", &r.kind)))?;
                    let label = GuardLabel::parse(&r.label).ok_or_else(|| bad($crate::rows::unknown("label", &r.label)))?;
                    let actor = ActorType::parse(&r.created_by_type)
                        .ok_or_else(|| bad($crate::rows::unknown("actor type", &r.created_by_type)))?;
                    Ok(Self {
                        id: id.into(),
                        tenant_id: Uuid::from(r.tenant_id).into(),
                        kind,
                        label,
                        validation_id: r.validation_id.map(Uuid::from),
                        text: r.text,
                        created_by: Actor { kind: actor, id: r.created_by_id },
                        created_at: r.created_at.into(),
                    })
                }
            }

            /// An approval request as written: `body` is the JSON text of its `Serialize` form
            /// (without the tenant); `agent_id`, `status`, `expires_at` and `callback_due_at`
            /// (`HitlRequest::callback_due_at`) are copies that queries filter and order on.
            #[derive(Debug, Clone, Insertable)]
            #[diesel(table_name = hitl_requests, check_for_backend(Backend))]
            #[diesel(treat_none_as_default_value = false)]
            pub(crate) struct HitlRow {
                pub id: Id,
                pub tenant_id: Id,
                pub agent_id: Id,
                pub status: String,
                pub expires_at: Micros,
                pub callback_due_at: Option<Micros>,
                pub body: String,
                /// `HitlRequest::callback_open`: what the tenant's quota of open callbacks counts.
                pub callback_open: bool,
                /// `HitlRequest::grant_open`: what spending an approval token is conditional on.
                pub grant_open: bool,
                /// `HitlRequest::escalate_at`: what the escalation scan finds due ones by.
                pub escalate_at: Option<Micros>,
            }

            impl TryFrom<&HitlRequest> for HitlRow {
                type Error = DomainError;
                fn try_from(r: &HitlRequest) -> Result<Self> {
                    Ok(Self {
                        id: Id::from(r.id.as_uuid()),
                        tenant_id: Id::from(r.tenant_id.as_uuid()),
                        agent_id: Id::from(r.agent_id.as_uuid()),
                        status: r.status.as_str().to_owned(),
                        expires_at: Micros::from(r.expires_at),
                        callback_due_at: r.callback_due_at().map(Micros::from),
                        // The approval token is served, never stored.
                        body: match r.approval_token {
                            None => $crate::rows::body_text(r, format_args!("approval request {}", r.id))?,
                            Some(_) => $crate::rows::body_text(
                                &HitlRequest { approval_token: None, ..r.clone() },
                                format_args!("approval request {}", r.id),
                            )?,
                        },
                        callback_open: r.callback_open(),
                        grant_open: r.grant_open(),
                        escalate_at: r.escalate_at().map(Micros::from),
                    })
                }
            }

            /// An anomaly report as written: `body` is the JSON text of its `Serialize` form
            /// (without the tenant); `agent_id`, `anomaly_type`, `severity`, `status` and
            /// `created_at` are copies that queries filter, order and group on.
            #[derive(Debug, Clone, Insertable)]
            #[diesel(table_name = anomaly_reports, check_for_backend(Backend))]
            #[diesel(treat_none_as_default_value = false)]
            pub(crate) struct AnomalyRow {
                pub id: Id,
                pub tenant_id: Id,
                pub agent_id: Id,
                pub anomaly_type: String,
                pub severity: String,
                pub status: String,
                pub created_at: Micros,
                pub body: String,
            }

            impl TryFrom<&AnomalyReport> for AnomalyRow {
                type Error = DomainError;
                fn try_from(r: &AnomalyReport) -> Result<Self> {
                    Ok(Self {
                        id: Id::from(r.id.as_uuid()),
                        tenant_id: Id::from(r.tenant_id.as_uuid()),
                        agent_id: Id::from(r.agent_id.as_uuid()),
                        anomaly_type: r.anomaly_type.as_str().to_owned(),
                        severity: r.severity.as_str().to_owned(),
                        status: r.status.as_str().to_owned(),
                        created_at: Micros::from(r.created_at),
                        body: $crate::rows::body_text(r, format_args!("anomaly report {}", r.id))?,
                    })
                }
            }

            $crate::body_row!(
                /// An approval request as read: its tenant and its body.
                HitlBodyRow, hitl_requests, HitlRequest
            );
            $crate::body_row!(
                /// An anomaly report as read: its tenant and its body.
                AnomalyBodyRow, anomaly_reports, AnomalyReport
            );
            $crate::body_row!(
                /// A discovery event as read: its tenant and its body.
                DiscoveryEventRow, discovery_events, DiscoveryEvent
            );
            $crate::body_row!(
                /// A discovery candidate as read: its tenant and its body (whose sample events
                /// leave the tenant out as well).
                DiscoveryCandidateRow, discovery_candidates, DiscoveryCandidate, |c: &mut DiscoveryCandidate| {
                    for event in &mut c.sample_events {
                        event.tenant_id = c.tenant_id;
                    }
                }
            );
        }
    };
}

/// A record kept as JSON text beside the columns queries use, as read: its id, its tenant
/// (which the stored text leaves out) and its body. Expanded by [`rows!`](crate::rows).
#[macro_export]
#[doc(hidden)]
macro_rules! body_row {
    ($(#[$doc:meta])* $row:ident, $table:ident, $record:ty $(, $fix:expr)?) => {
        $(#[$doc])*
        #[derive(Debug, Clone, Queryable, QueryableByName, Selectable)]
        #[diesel(table_name = $table, check_for_backend(Backend))]
        pub(crate) struct $row {
            pub id: Id,
            pub tenant_id: Id,
            pub body: String,
        }

        impl TryFrom<$row> for $record {
            type Error = DomainError;
            fn try_from(r: $row) -> Result<Self> {
                let mut record: $record = $crate::rows::body_of(stringify!($table), Uuid::from(r.id), &r.body)?;
                record.tenant_id = Uuid::from(r.tenant_id).into();
                $( ($fix)(&mut record); )?
                Ok(record)
            }
        }
    };
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn permissions_round_trip_through_json() {
        let perms = vec![Permission::AgentsRead, Permission::GuardManage];
        let value = permissions_value(&perms);
        assert_eq!(value, serde_json::json!(["agents:read", "guard:manage"]));
        assert_eq!(parse_permissions(&value).ok(), Some(perms));
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
        assert_eq!(vector_of(&bytes).ok(), Some(vector));
        assert_eq!(vector_of(&[]).ok(), Some(vec![]));
        assert!(vector_of(&[1, 2, 3]).is_err());
    }

    #[test]
    fn hashes_must_be_32_bytes() {
        assert!(hash_of(&[0; 32]).is_ok());
        assert!(hash_of(&[0; 31]).is_err());
    }
}
