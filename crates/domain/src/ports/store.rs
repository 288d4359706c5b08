//! Repository ports. Every query is scoped by tenant except the few look-ups that
//! authentication needs before a tenant is known (by email, by key prefix).
//!
//! Adapters translate their driver's errors: a unique violation becomes `Conflict`, a lost
//! connection `Unavailable`. Behaviour is pinned by `agentgov-store-conformance`.

use async_trait::async_trait;
use time::OffsetDateTime;

use crate::error::Result;
use crate::ids::{
    AgentId, AnomalyId, ApiKeyId, AuditId, CandidateId, ClusterJobId, DiscoveryEventId, HitlId, PolicyId, SessionId,
    TenantId, UserId,
};
use crate::model::{
    Agent, AgentEmbedding, AgentFilter, AgentVector, AnomalyCount, AnomalyFilter, AnomalyReport, ApiKey, AuditEntry,
    AuditFilter, AuditRecord, AuditScan, CandidateFilter, CandidateStatus, ChainHead, ClusterOutcome,
    DiscoveryCandidate, DiscoveryEvent, GuardFeedback, GuardStatsKey, Heartbeat, HitlCallback, HitlFilter, HitlRequest,
    Job, JobEnd, JobKind, ModelKind, ModelVersion, Policy, PolicyFilter, RiskLevels, SecretPurpose, Session,
    SiemBacklog, SiemSinkState, StoredModel, Tenant, TenantSecret, User,
};
use crate::page::{Page, PageRequest};

#[async_trait]
pub trait TenantRepo: Send + Sync {
    /// Creates a tenant with its first admin user, API key and callback secret, all or
    /// nothing. `Conflict` when the tenant name or the email is taken.
    async fn create_tenant(&self, tenant: &Tenant, admin: &User, key: &ApiKey, secret: &TenantSecret) -> Result<()>;
    async fn get_tenant(&self, id: TenantId) -> Result<Option<Tenant>>;
    /// Newest first.
    async fn list_tenants(&self, page: &PageRequest) -> Result<Page<Tenant>>;
    /// Stores the tenant's `name`, `settings` and `updated_at`, and in the same transaction
    /// sets the `risk` of each of its agents to the level of its `risk_score` by `levels`;
    /// answers how many agents changed level. `NotFound` when there is no such tenant,
    /// `Conflict` when the name is taken.
    async fn update_tenant(&self, tenant: &Tenant, levels: &RiskLevels) -> Result<u64>;
    async fn get_tenant_secret(&self, tenant: TenantId, purpose: SecretPurpose) -> Result<Option<TenantSecret>>;
    /// Stores `secret`, replacing the tenant's secret for the same purpose. `NotFound` when
    /// there is no such tenant.
    async fn put_tenant_secret(&self, secret: &TenantSecret) -> Result<()>;
    /// Stores `secret` unless the tenant already has one for its purpose, and answers the
    /// one in force (of two concurrent calls, both answer the same). `NotFound` when there
    /// is no such tenant.
    async fn add_tenant_secret(&self, secret: &TenantSecret) -> Result<TenantSecret>;
    /// Removes the tenant's secret for `purpose`; false when it had none.
    async fn delete_tenant_secret(&self, tenant: TenantId, purpose: SecretPurpose) -> Result<bool>;
}

#[async_trait]
pub trait UserRepo: Send + Sync {
    /// `Conflict` when the email is taken (in any tenant).
    async fn insert_user(&self, user: &User) -> Result<()>;
    async fn get_user(&self, tenant: TenantId, id: UserId) -> Result<Option<User>>;
    /// Platform-wide look-up by lower-cased email, for login.
    async fn find_user_by_email(&self, email: &str) -> Result<Option<User>>;
    /// Newest first.
    async fn list_users(&self, tenant: TenantId, page: &PageRequest) -> Result<Page<User>>;
    /// Replaces every mutable field (email, name, role, status, password hash, timestamps).
    /// `NotFound` if absent; `Conflict` if the email is taken, or if the change would leave
    /// the tenant without an active admin (checked atomically with the write).
    async fn update_user(&self, user: &User) -> Result<()>;
    /// Deletes the user with their API keys and sessions. `NotFound` if absent; `Conflict`
    /// if they are the tenant's last active admin (checked atomically).
    async fn delete_user(&self, tenant: TenantId, id: UserId) -> Result<()>;
    /// The user of the tenant linked to the SSO identity `(issuer, subject)` (the ID token's
    /// `iss` and `sub`), if any.
    async fn find_user_by_sso_identity(&self, tenant: TenantId, issuer: &str, subject: &str) -> Result<Option<User>>;
    /// The `sub` the user is linked to at `issuer`, if any (a user has at most one per issuer).
    async fn sso_subject_of(&self, tenant: TenantId, user: UserId, issuer: &str) -> Result<Option<String>>;
    /// Links the user to `(issuer, subject)`. `NotFound` if the user is not the tenant's;
    /// `Conflict` if that identity is linked in the tenant already, or the user already has a
    /// link at `issuer` (checked atomically). Deleting the user deletes their links.
    async fn link_sso_identity(
        &self,
        tenant: TenantId,
        user: UserId,
        issuer: &str,
        subject: &str,
        at: OffsetDateTime,
    ) -> Result<()>;
}

#[async_trait]
pub trait ApiKeyRepo: Send + Sync {
    async fn insert_api_key(&self, key: &ApiKey) -> Result<()>;
    /// Platform-wide look-up by the key's visible prefix, for authentication.
    async fn find_api_key_by_prefix(&self, prefix: &str) -> Result<Option<ApiKey>>;
    async fn get_api_key(&self, tenant: TenantId, id: ApiKeyId) -> Result<Option<ApiKey>>;
    /// Keys not revoked, newest first; only `user`'s when given.
    async fn list_api_keys(&self, tenant: TenantId, user: Option<UserId>, page: &PageRequest) -> Result<Page<ApiKey>>;
    /// Sets `revoked_at`. `NotFound` if absent or already revoked.
    async fn revoke_api_key(&self, tenant: TenantId, id: ApiKeyId, at: OffsetDateTime) -> Result<()>;
    /// Records use; callers throttle how often.
    async fn touch_api_key(&self, id: ApiKeyId, at: OffsetDateTime) -> Result<()>;
}

#[async_trait]
pub trait SessionRepo: Send + Sync {
    /// Stores the session and its session-bound API key, and sets the user's
    /// `last_login_at` to the session's `created_at`, all or nothing.
    async fn insert_session(&self, session: &Session, key: Option<&ApiKey>) -> Result<()>;
    async fn get_session(&self, tenant: TenantId, id: SessionId) -> Result<Option<Session>>;
    /// Revokes the session and its API key. `NotFound` if absent or already revoked.
    async fn revoke_session(&self, tenant: TenantId, id: SessionId, at: OffsetDateTime) -> Result<()>;
    /// Revokes every live session of the user (and their keys) except `keep`; returns the
    /// ids revoked.
    async fn revoke_user_sessions(
        &self,
        tenant: TenantId,
        user: UserId,
        keep: Option<SessionId>,
        at: OffsetDateTime,
    ) -> Result<Vec<SessionId>>;
}

/// The audit log. Append-only: there is no update or delete.
#[async_trait]
pub trait AuditRepo: Send + Sync {
    /// Appends `entries` in one transaction, all or nothing, and returns the records in the
    /// same order. Entries of one tenant are chained in the order given, each sealed with
    /// [`ChainHead::seal`] on the tenant's stored head, which is read and advanced inside the
    /// transaction (locked against concurrent appends from other processes). Durable when
    /// this returns.
    async fn append_audit(&self, entries: Vec<AuditEntry>) -> Result<Vec<AuditRecord>>;
    async fn get_audit(&self, tenant: TenantId, id: AuditId) -> Result<Option<AuditRecord>>;
    /// Up to `scan.limit` records of the tenant passing `filter`, in `scan.order` of `seq`,
    /// strictly after `scan.after_seq`.
    async fn scan_audit(&self, tenant: TenantId, filter: &AuditFilter, scan: AuditScan) -> Result<Vec<AuditRecord>>;
    /// The `seq` of each record [`scan_audit`](Self::scan_audit) returns, without reading
    /// the records (an agent session's catch-up: usually its own records, already known).
    async fn scan_audit_seqs(&self, tenant: TenantId, filter: &AuditFilter, scan: AuditScan) -> Result<Vec<i64>>;
    /// How many records of the tenant pass `filter`.
    async fn count_audit(&self, tenant: TenantId, filter: &AuditFilter) -> Result<u64>;
    /// The tenant's chain head as stored; `None` before the first append.
    async fn audit_head(&self, tenant: TenantId) -> Result<Option<ChainHead>>;
}

/// The one job queue, shared by every replica: audit exports, guard and anomaly detector
/// trainings and discovery clusterings are jobs of one table keyed by [`JobKind`], with one
/// lease protocol. A worker claims a job under a random `token` until `lease_until`, renews
/// the lease while it works, and finishes it; a job whose lease ran out is claimed again (and
/// `attempts` counts the claims). Every write by a worker is refused (`Conflict`, writing
/// nothing) once the job is no longer `running` under its token: cancelled, or taken over.
#[async_trait]
pub trait JobQueue: Send + Sync {
    /// Stores a queued job. [`JOB_LIMIT_REACHED`] when the tenant already has `max_active`
    /// jobs of its kind `queued` or `running` (checked atomically with the insert);
    /// `Conflict` when the id is taken or the tenant does not exist.
    async fn enqueue_job(&self, job: &Job, max_active: u64) -> Result<()>;
    /// A job by id, whatever its tenant and kind (callers check both).
    async fn get_job(&self, id: uuid::Uuid) -> Result<Option<Job>>;
    /// The tenant's oldest job of `kind` that is `queued` or `running`, if any.
    async fn active_job(&self, tenant: TenantId, kind: JobKind) -> Result<Option<Job>>;
    /// Claims a job of one of `kinds` that is `queued`, or `running` with a lease that ended
    /// before `now`: of the tenants with one, the tenant with the fewest jobs running under a
    /// live lease goes first (so one tenant's backlog never holds another's job back), and its
    /// oldest job (by id). Sets it `running` under `token` until `lease_until`, sets
    /// `started_at` to `now` if unset, adds one to `attempts`, resets `progress` and `state`
    /// and drops any chunks an earlier attempt wrote. Atomic: two workers never claim the
    /// same job.
    async fn claim_job(
        &self,
        kinds: &[JobKind],
        now: OffsetDateTime,
        token: uuid::Uuid,
        lease_until: OffsetDateTime,
    ) -> Result<Option<Job>>;
    /// Records `progress` (and `state`, when given) and extends the lease, if the job is
    /// still `running` under `token`; `Conflict` otherwise.
    async fn renew_job(
        &self,
        id: uuid::Uuid,
        token: uuid::Uuid,
        progress: f64,
        state: Option<&serde_json::Value>,
        lease_until: OffsetDateTime,
    ) -> Result<()>;
    /// Stores chunk `index` of the job's output (replacing one written before), if the job
    /// is still `running` under `token`; `Conflict`, writing nothing, otherwise. The worker
    /// reports what it wrote with [`JobQueue::renew_job`].
    async fn put_job_chunk(&self, id: uuid::Uuid, token: uuid::Uuid, index: i32, data: Vec<u8>) -> Result<()>;
    /// Chunk `index` of the tenant's job's output; `None` if absent.
    async fn job_chunk(&self, tenant: TenantId, id: uuid::Uuid, index: i32) -> Result<Option<Vec<u8>>>;
    /// Ends the job held under `token` as `end` says and clears the lease; `Conflict`,
    /// writing nothing, if it is not `running` under `token`.
    async fn finish_job(&self, id: uuid::Uuid, token: uuid::Uuid, end: &JobEnd) -> Result<()>;
    /// Cancels the tenant's `queued` or `running` job of `kind` at `now` (clearing its
    /// lease); answers it as cancelled, or `None` when there was none.
    async fn cancel_job(&self, tenant: TenantId, kind: JobKind, now: OffsetDateTime) -> Result<Option<Job>>;
    /// Deletes every job whose `expires_at` is before `now`, with its chunks; returns how
    /// many.
    async fn purge_expired_jobs(&self, now: OffsetDateTime) -> Result<u64>;
}

/// The versions of the models that training jobs produce (the guard's, the anomaly
/// detector's), per tenant and [`ModelKind`]. A tenant's versions of a kind are numbered 1,
/// 2, 3… in the order stored; at most one is active, and none active (version 0) means the
/// kind's default.
#[async_trait]
pub trait ModelRegistry: Send + Sync {
    /// The tenant's versions of `kind`, newest first, without their models.
    async fn list_models(&self, tenant: TenantId, kind: ModelKind) -> Result<Vec<ModelVersion>>;
    /// One version with its model.
    async fn get_model(&self, tenant: TenantId, kind: ModelKind, version: i32) -> Result<Option<StoredModel>>;
    /// The active version of `kind`; 0 when none is.
    async fn active_model(&self, tenant: TenantId, kind: ModelKind) -> Result<i32>;
    /// Makes `version` the only active one (0: none, always `true`); `false`, changing
    /// nothing, when the tenant has no such version.
    async fn activate_model(&self, tenant: TenantId, kind: ModelKind, version: i32) -> Result<bool>;
    /// In one transaction, if the job is `running` under `token`: stores `model` as its
    /// tenant's next version of the model's kind (highest stored + 1; the given `version`,
    /// `active` and `tenant_id` are ignored), makes it the only active one, and completes the
    /// job at `now` with progress 1, state `{"model_version": <version>}` and no lease.
    /// Answers the version; `Conflict`, writing nothing, otherwise.
    async fn complete_training(
        &self,
        job: uuid::Uuid,
        token: uuid::Uuid,
        now: OffsetDateTime,
        model: &StoredModel,
    ) -> Result<i32>;
}

/// The agent registry. Every agent is stored with its embedding.
///
/// The *index version* of a tenant is a number that changes (within the same transaction)
/// whenever one of its agents is inserted or deleted or has its embedding vector replaced;
/// the in-process search index reloads when it differs from the version it was built at.
#[async_trait]
pub trait AgentRepo: Send + Sync {
    /// `Conflict("agent name already taken")` when the tenant has an agent of that name;
    /// `Conflict` when the tenant does not exist.
    async fn insert_agent(&self, agent: &Agent, embedding: &AgentEmbedding) -> Result<()>;
    async fn get_agent(&self, tenant: TenantId, id: AgentId) -> Result<Option<Agent>>;
    /// The tenant's agents among `ids`, in no particular order; unknown ids are skipped.
    async fn get_agents(&self, tenant: TenantId, ids: &[AgentId]) -> Result<Vec<Agent>>;
    /// Newest first, passing `filter` (as [`AgentFilter::matches`] decides).
    async fn list_agents(&self, tenant: TenantId, filter: &AgentFilter, page: &PageRequest) -> Result<Page<Agent>>;
    /// Replaces every mutable field (all but id, tenant and `created_at`) and the embedding.
    /// `NotFound` if absent; `Conflict("agent name already taken")` on a duplicate name.
    async fn update_agent(&self, agent: &Agent, embedding: &AgentEmbedding) -> Result<()>;
    /// Deletes the agent and its embedding. `NotFound` if absent.
    async fn delete_agent(&self, tenant: TenantId, id: AgentId) -> Result<()>;
    /// Applies a heartbeat atomically: `last_seen_at` and `updated_at` become `beat.at`,
    /// status and metadata are replaced when given, and the embedding is replaced when
    /// given or else has its `refreshed_at` set to `beat.at`. The agent after the change;
    /// `None` if absent.
    async fn heartbeat_agent(&self, tenant: TenantId, id: AgentId, beat: &Heartbeat) -> Result<Option<Agent>>;
    async fn get_agent_embedding(&self, tenant: TenantId, id: AgentId) -> Result<Option<AgentEmbedding>>;
    /// Every stored vector of the tenant's agents, in no particular order.
    async fn agent_vectors(&self, tenant: TenantId) -> Result<Vec<AgentVector>>;
    /// The tenant's index version; 0 before its first agent.
    async fn agent_index_version(&self, tenant: TenantId) -> Result<i64>;
}

/// Tenant policies.
#[async_trait]
pub trait PolicyRepo: Send + Sync {
    /// `Conflict("policy name already taken")` when the tenant has a policy of that name;
    /// [`POLICY_LIMIT_REACHED`] when it already has `max_per_tenant` policies (checked
    /// atomically with the insert); `Conflict` when the tenant does not exist.
    async fn insert_policy(&self, policy: &Policy, max_per_tenant: u64) -> Result<()>;
    async fn get_policy(&self, tenant: TenantId, id: PolicyId) -> Result<Option<Policy>>;
    /// Newest first, passing `filter` (as [`PolicyFilter::matches`] decides).
    async fn list_policies(&self, tenant: TenantId, filter: &PolicyFilter, page: &PageRequest) -> Result<Page<Policy>>;
    /// Every enabled policy of the tenant, oldest first (the order checks evaluate them in).
    async fn enabled_policies(&self, tenant: TenantId) -> Result<Vec<Policy>>;
    /// Replaces name, description, rego, enabled, version and `updated_at` if the stored
    /// version is `policy.version - 1` (optimistic concurrency). `NotFound` if absent;
    /// `Conflict("policy was changed concurrently")` if the stored version differs;
    /// `Conflict("policy name already taken")` on a duplicate name.
    async fn update_policy(&self, policy: &Policy) -> Result<()>;
    /// `NotFound` if absent.
    async fn delete_policy(&self, tenant: TenantId, id: PolicyId) -> Result<()>;
}

/// The `Conflict` message of [`PolicyRepo::insert_policy`] past the tenant's limit.
pub const POLICY_LIMIT_REACHED: &str = "policy limit reached";
/// The `Conflict` message of [`JobQueue::enqueue_job`] past the tenant's limit.
pub const JOB_LIMIT_REACHED: &str = "job limit reached";
/// The `Conflict` message of [`HitlRepo::insert_hitl`] past the tenant's open callbacks.
pub const CALLBACK_LIMIT_REACHED: &str = "open callback limit reached";

/// Counts of a tenant's resources, for `/stats`.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ResourceCounts {
    pub users: u64,
    pub active_users: u64,
    pub blocked_users: u64,
    /// API keys not revoked (standard and session keys).
    pub api_keys: u64,
}

/// One tenant's count of one thing in one hour: `metric` names what is counted
/// (`policy.decision`), `label` the value counted (`allow`, `deny`, `require_approval`).
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct HourlyKey {
    pub tenant_id: TenantId,
    pub metric: String,
    /// Unix time / 3600.
    pub hour: i64,
    pub label: String,
}

/// The Prompt Guard's feedback and statistics (its versions are in the [`ModelRegistry`],
/// its trainings in the [`JobQueue`]).
#[async_trait]
pub trait GuardRepo: Send + Sync {
    async fn insert_guard_feedback(&self, feedback: &GuardFeedback) -> Result<()>;
    /// The tenant's feedback, oldest first (by id), at most `limit` (none when `limit` ≤ 0),
    /// with texts.
    async fn list_guard_feedback(&self, tenant: TenantId, limit: i64) -> Result<Vec<GuardFeedback>>;

    /// Adds each count to its key's total (creating it at zero); a key given twice adds
    /// both. All or nothing: `Conflict` when a key's tenant does not exist.
    async fn add_guard_stats(&self, counts: &[(GuardStatsKey, i64)]) -> Result<()>;
    /// The tenant's totals per verdict and latency bucket over the hours `from_hour` and
    /// later, in no particular order.
    async fn guard_stats(&self, tenant: TenantId, from_hour: i64) -> Result<Vec<(GuardStatsKey, i64)>>;
}

/// Shadow-agent discovery: ingested events and candidates (its clusterings are jobs of the
/// [`JobQueue`]).
#[async_trait]
pub trait DiscoveryRepo: Send + Sync {
    /// Stores the events (of any tenants) in one transaction, all or nothing. `Conflict`
    /// when an id is taken or a tenant does not exist.
    async fn insert_discovery_events(&self, events: &[DiscoveryEvent]) -> Result<()>;
    /// Up to `limit` of the tenant's `shadow` events with an id greater than `after`, by id
    /// ascending.
    async fn scan_shadow_events(
        &self,
        tenant: TenantId,
        after: Option<DiscoveryEventId>,
        limit: i64,
    ) -> Result<Vec<DiscoveryEvent>>;
    /// The tenant's events among `ids`, in no particular order; unknown ids are skipped.
    async fn get_discovery_events(&self, tenant: TenantId, ids: &[DiscoveryEventId]) -> Result<Vec<DiscoveryEvent>>;

    async fn get_candidate(&self, tenant: TenantId, id: CandidateId) -> Result<Option<DiscoveryCandidate>>;
    /// Newest first (by id), passing `filter`.
    async fn list_candidates(
        &self,
        tenant: TenantId,
        filter: &CandidateFilter,
        page: &PageRequest,
    ) -> Result<Page<DiscoveryCandidate>>;
    /// Every candidate of the tenant that is `confirmed` or `dismissed`, in no particular
    /// order.
    async fn decided_candidates(&self, tenant: TenantId) -> Result<Vec<DiscoveryCandidate>>;
    /// Replaces the stored candidate (every field but id and tenant) with `candidate` if its
    /// stored status is `expected`; answers whether it did. `NotFound` when absent.
    async fn update_candidate(&self, candidate: &DiscoveryCandidate, expected: CandidateStatus) -> Result<bool>;

    /// In one transaction, if the job is `running` under `token`: inserts each upsert that
    /// does not exist, replaces each that exists and is still `pending` (skipping decided
    /// ones), deletes each removed candidate that is still `pending`, and marks the job
    /// `completed` at `now` with progress 1, `outcome.summary` and no lease. Answers the ids
    /// of the candidates it inserted. `Conflict`, writing nothing, otherwise.
    async fn complete_cluster_job(
        &self,
        id: ClusterJobId,
        token: uuid::Uuid,
        now: OffsetDateTime,
        outcome: &ClusterOutcome,
    ) -> Result<Vec<CandidateId>>;
}

/// Anomaly reports.
#[async_trait]
pub trait AnomalyRepo: Send + Sync {
    /// `Conflict` when the id is taken or the tenant does not exist.
    async fn insert_anomaly(&self, report: &AnomalyReport) -> Result<()>;
    async fn get_anomaly(&self, tenant: TenantId, id: AnomalyId) -> Result<Option<AnomalyReport>>;
    /// The tenant's reports passing `filter`, newest first (by id).
    async fn list_anomalies(
        &self,
        tenant: TenantId,
        filter: &AnomalyFilter,
        page: &PageRequest,
    ) -> Result<Page<AnomalyReport>>;
    /// Replaces the stored report (every field but id, tenant and `created_at`).
    /// `NotFound` when absent.
    async fn update_anomaly(&self, report: &AnomalyReport) -> Result<()>;
    /// The tenant's reports passing `filter`, counted per agent, type, severity, status
    /// and hour of `created_at`, in no particular order.
    async fn anomaly_counts(&self, tenant: TenantId, filter: &AnomalyFilter) -> Result<Vec<AnomalyCount>>;
}

/// Human-in-the-loop approval requests. Only a `pending` request changes; the expiry and
/// callback scans read every tenant's requests, for the background work of one replica.
#[async_trait]
pub trait HitlRepo: Send + Sync {
    /// `Conflict` when the id is taken or the tenant does not exist;
    /// [`CALLBACK_LIMIT_REACHED`] when the request has an open callback
    /// ([`HitlRequest::callback_open`]) and the tenant already has `max_open_callbacks`
    /// requests with one (checked atomically with the insert).
    async fn insert_hitl(&self, request: &HitlRequest, max_open_callbacks: u64) -> Result<()>;
    async fn get_hitl(&self, tenant: TenantId, id: HitlId) -> Result<Option<HitlRequest>>;
    /// The tenant's requests passing `filter`, oldest first (by id).
    async fn list_hitl(&self, tenant: TenantId, filter: &HitlFilter, page: &PageRequest) -> Result<Page<HitlRequest>>;
    /// Replaces the stored request (every field but id and tenant) with `request` if its
    /// stored status is `pending`; answers whether it did. `NotFound` when absent.
    async fn decide_hitl(&self, request: &HitlRequest) -> Result<bool>;
    /// Up to `limit` `pending` requests of any tenant whose `expires_at` is at or before
    /// `now`, soonest expiry first.
    async fn expired_hitl(&self, now: OffsetDateTime, limit: i64) -> Result<Vec<HitlRequest>>;
    /// Up to `limit` requests whose callback is due ([`HitlRequest::callback_due_at`]) at or
    /// before `now`, at most `per_tenant` of each tenant, taken in turns across tenants: every
    /// tenant's soonest first (soonest, then id), then every tenant's second, and so on. So
    /// one tenant's backlog never fills a round ahead of another tenant's callback.
    async fn due_hitl_callbacks(&self, now: OffsetDateTime, limit: i64, per_tenant: i64) -> Result<Vec<HitlRequest>>;
    /// Replaces the request's callback with `callback` if its stored status is final (the
    /// callback of a pending request is the decision's to set). `NotFound` when absent,
    /// `Conflict` when still pending.
    async fn update_hitl_callback(&self, tenant: TenantId, id: HitlId, callback: &HitlCallback) -> Result<()>;
    /// Spends an approval token: replaces the stored request (every field but id and tenant)
    /// with `request`, its grant marked used, if the stored one is approved with its grant
    /// unused ([`HitlRequest::grant_open`]); answers whether it did. Of racing spenders, on
    /// any replica, one wins. `NotFound` when absent.
    async fn spend_hitl_grant(&self, request: &HitlRequest) -> Result<bool>;
    /// Up to `limit` `pending` requests of any tenant whose next escalation step is due
    /// ([`HitlRequest::escalate_at`]) at or before `now`, soonest first (then by id).
    async fn due_hitl_escalations(&self, now: OffsetDateTime, limit: i64) -> Result<Vec<HitlRequest>>;
    /// Takes an escalation step: replaces the stored request (every field but id and tenant)
    /// with `request` if the stored one is `pending` with its next step due at `due`;
    /// answers whether it did (of racing holders, one wins). `NotFound` when absent.
    async fn escalate_hitl(&self, request: &HitlRequest, due: OffsetDateTime) -> Result<bool>;
}

/// Named leases for the background work that must run on exactly one replica at a time
/// (SIEM forwarding, HITL expiry). A holder renews its lease before it runs out; a replica
/// that dies leaves it to expire, and another takes it over.
#[async_trait]
pub trait LeaseRepo: Send + Sync {
    /// Takes the lease `name` for `holder` until `until` when it is free, expired
    /// (`lease_until <= now`) or already `holder`'s (a renewal). True when `holder` holds it
    /// afterwards. Atomic across processes: of holders racing for a free lease, one wins.
    async fn try_lease(
        &self,
        name: &str,
        holder: uuid::Uuid,
        now: OffsetDateTime,
        until: OffsetDateTime,
    ) -> Result<bool>;
    /// Gives the lease up if `holder` holds it (a no-op otherwise).
    async fn release_lease(&self, name: &str, holder: uuid::Uuid) -> Result<()>;
}

/// How far each SIEM sink (by its configured name) has forwarded each tenant's audit log,
/// and its delivery totals. The audit log itself is the outbox: a sink's cursor is the last
/// `seq` it delivered (or passed over by its filter) per tenant.
#[async_trait]
pub trait SiemRepo: Send + Sync {
    /// Registers `sink` if it is new and answers whether it was. A new sink starts every
    /// existing tenant at `0` (the whole history is forwarded), or with `from_latest` at the
    /// tenant's current head. A registered sink is left as it is.
    async fn register_siem_sink(&self, sink: &str, from_latest: bool, now: OffsetDateTime) -> Result<bool>;
    /// Every tenant whose chain head is past the sink's cursor (0 where it has none), in
    /// tenant id order.
    async fn siem_backlog(&self, sink: &str) -> Result<Vec<SiemBacklog>>;
    /// Moves the sink's cursor for `tenant` to `seq` (never backwards: a smaller `seq` leaves
    /// it), adds `forwarded` to its total and, when `forwarded > 0`, stamps the last success.
    async fn advance_siem_cursor(
        &self,
        sink: &str,
        tenant: TenantId,
        seq: i64,
        forwarded: u64,
        at: OffsetDateTime,
    ) -> Result<()>;
    /// Adds `failed` to the sink's failed total and records the error and its time.
    async fn record_siem_failure(&self, sink: &str, failed: u64, error: &str, at: OffsetDateTime) -> Result<()>;
    /// The sink's totals and queue depth; zeroes (and the whole log as its queue) for a sink
    /// never registered.
    async fn siem_sink_state(&self, sink: &str) -> Result<SiemSinkState>;
}

/// Everything a store adapter provides.
#[async_trait]
pub trait Store:
    TenantRepo
    + UserRepo
    + ApiKeyRepo
    + SessionRepo
    + AuditRepo
    + JobQueue
    + ModelRegistry
    + AgentRepo
    + PolicyRepo
    + GuardRepo
    + DiscoveryRepo
    + HitlRepo
    + AnomalyRepo
    + LeaseRepo
    + SiemRepo
{
    /// Cheap round trip proving the database answers.
    async fn ping(&self) -> Result<()>;
    async fn count_resources(&self, tenant: TenantId) -> Result<ResourceCounts>;
    /// Adds each count to its key's total (creating it at zero); a key given twice adds
    /// both. All or nothing: `Conflict` when a key's tenant does not exist.
    async fn add_hourly_counts(&self, counts: &[(HourlyKey, i64)]) -> Result<()>;
    /// The tenant's totals of `metric` per hour and label over the hours `from_hour` and
    /// later, in no particular order.
    async fn hourly_counts(&self, tenant: TenantId, metric: &str, from_hour: i64) -> Result<Vec<(HourlyKey, i64)>>;
    /// "sqlite" or "postgres", for `/status`.
    fn backend(&self) -> &'static str;
}
