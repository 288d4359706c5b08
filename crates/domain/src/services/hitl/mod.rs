//! Human-in-the-loop approvals (spec 4.9).
//!
//! A request is opened by an agent (`POST /hitl/request`) or by a policy check that needs
//! approval, and stays `pending` until an analyst approves or rejects it, its requester
//! cancels it, or it passes `expires_at`. Every transition is a conditional write on the
//! stored status (so two deciders, or a decider and the expiry job, never both win), is
//! audited durably, and is published on the bus (`hitl.requested`, `hitl.approved`, …).
//!
//! Background work (expiry, callbacks) runs on one replica at a time, the holder of the
//! `hitl` lease ([`HitlService::step`]). A request's callback is scheduled in the same write
//! as its final state, so an outcome is never lost between the decision and its delivery.
//!
//! Long-polls (`GET /hitl/status/{id}?wait=`) wait on [`HitlWatch`]: every replica's bus
//! follower hands each `hitl.*` event to [`HitlService::on_event`], which wakes the
//! waiters of that request, whichever replica changed it.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures::channel::{mpsc, oneshot};
use futures::future::{BoxFuture, Either};
use futures::stream::{BoxStream, FuturesUnordered};
use futures::{FutureExt, StreamExt};
use time::OffsetDateTime;

use super::agents::AgentService;
use super::audit::{AuditEvent, AuditLog, caller_actor};
use super::check::{CheckRequest, CheckResponse, action_context, check_agent_action, round_score};
use super::shares::{Place, Share, TenantShares};
use super::validate::{check_description, check_nonblank_description};
use super::{Caller, Ports};
use crate::error::{DomainError, Result, Violations};
use crate::events::{
    HITL_APPROVED, HITL_CALLBACK_FAILED, HITL_CANCELLED, HITL_ESCALATED, HITL_EXPIRED, HITL_REJECTED, HITL_REQUESTED,
};
use crate::ids::{AgentId, AuditId, HitlId, TenantId};
use crate::model::{
    Actor, Agent, ApprovalGrant, CallbackStatus, EffectiveSettings, HitlCallback, HitlEscalation, HitlFilter,
    HitlRequest, HitlStatus, JsonObject, Permission, PolicyMode, PolicyVersion, Role, SecretPurpose, TenantSecret,
    action_digest,
};
use crate::net::ReceiverPolicy;
use crate::page::{Page, PageRequest};
use crate::ports::{CallbackFailure, Event, PolicyModule};
use crate::secrets::{self, APPROVAL_AUDIENCE, ApprovalClaims, TOKEN_ISSUER, TokenCodec};

/// Longest approval window a request or a tenant may set: seven days.
pub const MAX_HITL_TIMEOUT_SECS: u32 = 604_800;
/// Longest long-poll of `GET /hitl/status/{id}?wait=`.
pub const MAX_WAIT_SECS: u32 = 60;
const MAX_REASON_LEN: usize = 2000;
const MAX_COMMENT_LEN: usize = 2000;
const MAX_URL_LEN: usize = 2048;
/// The lease of the replica that expires requests and sends callbacks.
const LEASE: &str = "hitl";
/// The window of the per-tenant callback rate limit.
const CALLBACK_RATE_WINDOW: Duration = Duration::from_secs(60);
/// What the tenant sees when a receiver answered, but not 2xx: never which status, so the
/// callbacks cannot tell one kind of listener from another.
pub const CALLBACK_NOT_2XX: &str = "receiver answered an error status";

/// What the HITL worker moves along when it is due.
#[derive(Debug, Clone, Copy)]
enum Due {
    /// A pending request past its `expires_at` becomes `expired`.
    Expiry,
    /// A pending request takes the next step of its escalation chain.
    Escalation,
}

/// Tunables of approvals.
#[derive(Debug, Clone)]
pub struct HitlSettings {
    /// How long the background worker's lease lasts; renewed after a third of it.
    pub lease_ttl: Duration,
    /// Requests expired per round of the worker.
    pub expiry_batch: i64,
    /// Callback attempts started per round, at most `callback_concurrency` at a time and at
    /// most `callback_concurrency_per_tenant` of one tenant at a time, taken in turns
    /// across tenants.
    pub callback_batch: i64,
    pub callback_concurrency: usize,
    pub callback_concurrency_per_tenant: usize,
    /// Requests of one tenant whose callback may still be sent (pending with a
    /// `callback_url`, or scheduled); a request with a callback past it answers 429.
    pub max_open_callbacks_per_tenant: u64,
    /// Attempts before a callback is given up.
    pub callback_max_attempts: u32,
    /// The wait after the first failed attempt; it doubles after each, up to the maximum.
    pub callback_backoff: Duration,
    pub callback_backoff_max: Duration,
    /// Long-polls waiting at once in this process; more answer 429.
    pub max_watchers: usize,
    /// Long-polls of one tenant waiting at once over every replica; more answer 429.
    pub max_long_polls_per_tenant: u64,
    /// Where callbacks may go: public addresses and the private ranges the operator allows
    /// (checked here on the URL when a request is opened; the sender checks the addresses
    /// it connects to).
    pub receivers: ReceiverPolicy,
    /// Callback attempts per tenant per minute, over every replica; more wait for the next
    /// window (not counted as attempts).
    pub callbacks_per_minute: u64,
    /// How long an approval token lasts after the approval; past it the token is refused and
    /// the action needs a new approval.
    pub approval_token_ttl: Duration,
}

impl Default for HitlSettings {
    fn default() -> Self {
        Self {
            lease_ttl: Duration::from_secs(15),
            expiry_batch: 200,
            callback_batch: 64,
            callback_concurrency: 8,
            callback_concurrency_per_tenant: 2,
            max_open_callbacks_per_tenant: 1000,
            callback_max_attempts: 8,
            callback_backoff: Duration::from_secs(2),
            callback_backoff_max: Duration::from_secs(300),
            max_watchers: 10_000,
            max_long_polls_per_tenant: 1000,
            receivers: ReceiverPolicy::default(),
            callbacks_per_minute: 120,
            approval_token_ttl: Duration::from_secs(300),
        }
    }
}

/// `POST /hitl/request`.
#[derive(Debug, Clone, serde::Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct NewHitlRequest {
    /// The agent that wants to act (a UUID of the caller's tenant).
    #[cfg_attr(feature = "openapi", schema(format = Uuid))]
    pub agent_id: String,
    /// 1 to 200 characters.
    #[cfg_attr(
        feature = "openapi",
        schema(
            min_length = 1,
            max_length = 200,
            pattern = r"^[^\u0000-\u001f\u007f-\u009f]*[^\s\u0000-\u001f\u007f-\u009f][^\u0000-\u001f\u007f-\u009f]*$"
        )
    )]
    pub action: String,
    /// 1 to 1,000 characters.
    #[cfg_attr(
        feature = "openapi",
        schema(
            min_length = 1,
            max_length = 1000,
            pattern = r"^[^\u0000-\u001f\u007f-\u009f]*[^\s\u0000-\u001f\u007f-\u009f][^\u0000-\u001f\u007f-\u009f]*$"
        )
    )]
    pub resource: String,
    /// Free-form facts for the approver; at most 16 KiB.
    #[serde(default)]
    #[cfg_attr(feature = "openapi", schema(value_type = Object))]
    pub context: JsonObject,
    /// Why approval is needed; 1 to 2,000 characters.
    #[cfg_attr(
        feature = "openapi",
        schema(
            max_length = 2000,
            pattern = r"^[^\u0000-\u0008\u000b-\u001f\u007f-\u009f]*[^\s\u0000-\u001f\u007f-\u009f][^\u0000-\u0008\u000b-\u001f\u007f-\u009f]*$"
        )
    )]
    pub reason: String,
    /// 1 to 604,800; the tenant's `hitl_timeout_secs` (an hour unless set) when left out.
    #[cfg_attr(feature = "openapi", schema(minimum = 1, maximum = 604800))]
    pub timeout_seconds: Option<i64>,
    /// `http` or `https` URL that receives the outcome as a signed POST. Its host must be
    /// public (loopback, private, link-local and other internal addresses, and names such
    /// as `localhost` or `*.internal`, are refused unless the operator allows the range).
    pub callback_url: Option<String>,
}

/// The optional body of `POST /hitl/approve/{id}`.
#[derive(Debug, Clone, Default, serde::Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct HitlApproval {
    /// At most 2,000 characters.
    #[cfg_attr(
        feature = "openapi",
        schema(max_length = 2000, pattern = r"^[^\u0000-\u0008\u000b-\u001f\u007f-\u009f]*$")
    )]
    pub comment: Option<String>,
    /// Approve an edited action: the context (the arguments) the agent must act with
    /// instead, at most 16 KiB. It is checked again under the tenant's policies first (a
    /// denial wins: 409, the request stays pending), and the approval token is bound to it.
    #[cfg_attr(feature = "openapi", schema(value_type = Option<Object>))]
    pub context: Option<JsonObject>,
}

/// The optional body of `POST /hitl/reject/{id}` and `/hitl/cancel/{id}`.
#[derive(Debug, Clone, Default, serde::Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct HitlDecision {
    /// At most 2,000 characters.
    #[cfg_attr(
        feature = "openapi",
        schema(max_length = 2000, pattern = r"^[^\u0000-\u0008\u000b-\u001f\u007f-\u009f]*$")
    )]
    pub comment: Option<String>,
}

/// The body of a callback: the final request as a feed event, `id` being the request's.
#[derive(serde::Serialize)]
struct CallbackBody<'a> {
    id: HitlId,
    #[serde(rename = "type")]
    event_type: &'static str,
    tenant_id: TenantId,
    #[serde(with = "time::serde::rfc3339")]
    ts: OffsetDateTime,
    data: &'a HitlRequest,
}

/// Resolves when the watched request changes (on any replica), or is dropped unresolved.
/// It holds one of the tenant's long-poll places until given back with
/// [`HitlService::end_watch`] (or until the place's TTL, if the waiter went away).
pub struct HitlWatch {
    receiver: oneshot::Receiver<()>,
    place: Option<Place>,
}

impl HitlWatch {
    /// Waits for a change of the request; returns at once if the watch was dropped.
    pub async fn changed(&mut self) {
        let _dropped_or_woken = (&mut self.receiver).await;
    }
}

/// The waiters of each request in this process.
#[derive(Default)]
struct Watchers {
    waiting: Mutex<HashMap<HitlId, Vec<oneshot::Sender<()>>>>,
}

impl Watchers {
    fn watch(&self, id: HitlId, max: usize) -> Result<HitlWatch> {
        let (sender, receiver) = oneshot::channel();
        let mut waiting = self.waiting.lock().map_err(|_| DomainError::internal("HITL watchers poisoned"))?;
        let list = waiting.entry(id).or_default();
        // Long-polls that ended leave their senders behind; drop them as we pass.
        list.retain(|s| !s.is_canceled());
        list.push(sender);
        let mut total: usize = waiting.values().map(Vec::len).sum();
        if total > max {
            // Waits that ended on other requests (timed out, or for ids that were never
            // found) are only left behind: drop them all before refusing anyone.
            waiting.retain(|_, list| {
                list.retain(|s| !s.is_canceled());
                !list.is_empty()
            });
            total = waiting.values().map(Vec::len).sum();
        }
        if total > max {
            if let Some(list) = waiting.get_mut(&id) {
                list.pop();
            }
            return Err(DomainError::RateLimited { retry_after: Duration::from_secs(1) });
        }
        Ok(HitlWatch { receiver, place: None })
    }

    fn wake(&self, id: HitlId) {
        let senders = match self.waiting.lock() {
            Ok(mut waiting) => waiting.remove(&id).unwrap_or_default(),
            Err(_) => return,
        };
        for sender in senders {
            let _gone = sender.send(());
        }
    }
}

/// The background worker's state: the lease it holds, and the ticks on which a round that
/// is still sending renews it and looks for newly due callbacks.
pub struct HitlWorker {
    lease_until: Option<OffsetDateTime>,
    ticks: BoxStream<'static, ()>,
}

impl HitlWorker {
    /// A worker whose long rounds renew the lease on each of `ticks` (the server's timer,
    /// a few times per lease TTL). When `ticks` ends, it stops ticking.
    pub fn with_ticks(ticks: impl futures::Stream<Item = ()> + Send + 'static) -> Self {
        Self { lease_until: None, ticks: ticks.chain(futures::stream::pending()).boxed() }
    }
}

impl Default for HitlWorker {
    /// A worker that never ticks: a round renews its lease only as its sends finish.
    fn default() -> Self {
        Self::with_ticks(futures::stream::empty())
    }
}

impl std::fmt::Debug for HitlWorker {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HitlWorker").field("lease_until", &self.lease_until).finish_non_exhaustive()
    }
}

/// What one round of the worker did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct HitlRound {
    /// Whether this replica holds the lease (else it did nothing).
    pub leader: bool,
    pub expired: usize,
    /// Escalation steps taken.
    pub escalated: usize,
    pub callbacks_sent: usize,
}

super::ports::repos!(Repos { hitl: HitlRepo, tenants: TenantRepo, leases: LeaseRepo, policies: PolicyRepo });
#[derive(Clone)]
pub struct HitlService {
    repos: Repos,
    ports: Ports,
    audit: AuditLog,
    agents: AgentService,
    defaults: EffectiveSettings,
    settings: HitlSettings,
    watchers: Arc<Watchers>,
    shares: TenantShares,
    /// This process's identity as a lease holder.
    holder: uuid::Uuid,
    /// Tells this process's worker that a callback was scheduled here.
    wake_worker: mpsc::Sender<()>,
    /// Signs and verifies approval tokens.
    tokens: TokenCodec,
}

/// Why a check's approval token was refused (the check is then denied, saying so).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TokenRefusal {
    /// Not signed by this service (or altered), or another tenant's.
    Invalid,
    Expired,
    /// Bound to another action (other arguments, resource, agent or policy versions).
    OtherAction,
    /// Spent by an earlier check.
    Used,
}

impl TokenRefusal {
    pub fn reason(&self) -> &'static str {
        match self {
            Self::Invalid => "the approval token is not valid",
            Self::Expired => "the approval token has expired; the action needs a new approval",
            Self::OtherAction => {
                "the approval token was granted for a different action (its arguments, resource, agent or \
                 the tenant's policies differ from what was approved)"
            }
            Self::Used => "the approval token was used already; an approval is good for one execution",
        }
    }
}

/// The versions of the enforced policies among `modules`: what an action digest binds.
pub(crate) fn enforced_versions(modules: &[PolicyModule]) -> Vec<PolicyVersion> {
    modules.iter().filter(|m| !m.shadow).map(|m| PolicyVersion { id: m.id, version: m.version }).collect()
}

fn not_found(id: HitlId) -> DomainError {
    DomainError::not_found("approval request", id)
}

fn secs(n: u64) -> time::Duration {
    time::Duration::seconds(i64::try_from(n).unwrap_or(i64::MAX))
}

impl HitlService {
    #[expect(clippy::too_many_arguments, reason = "the service's collaborators, each handed once at wiring")]
    pub(crate) fn new(
        ports: Ports,
        repos: Repos,
        audit: AuditLog,
        agents: AgentService,
        defaults: EffectiveSettings,
        settings: HitlSettings,
        wake_worker: mpsc::Sender<()>,
        tokens: TokenCodec,
    ) -> Self {
        let holder = ports.ids.new_id();
        let shares = TenantShares::new(ports.cache.clone(), ports.ids.clone());
        Self {
            ports,
            repos,
            audit,
            agents,
            defaults,
            settings,
            watchers: Arc::default(),
            shares,
            holder,
            wake_worker,
            tokens,
        }
    }

    /// `POST /hitl/request`: opens a pending request for the caller's agent.
    pub async fn request(&self, caller: &Caller, req: NewHitlRequest) -> Result<HitlRequest> {
        caller.require_permission(Permission::HitlRequest)?;
        let (agent_id, timeout, callback) = validate_request(&req, &self.settings.receivers)?;
        let tenant = caller.tenant_id();
        let agent = self.agents.reported_agent(tenant, agent_id).await?;
        let settings = match self.repos.tenants.get_tenant(tenant).await? {
            Some(t) => t.effective(&self.defaults),
            None => return Err(DomainError::not_found("tenant", tenant)),
        };
        let context = action_context(&agent, &req.context);
        let score = agentgov_detect::risk::assess_action(req.action.trim(), req.resource.trim(), &context).score;
        let risk_score = round_score(score);
        let versions: Vec<PolicyVersion> = self
            .repos
            .policies
            .enabled_policies(tenant)
            .await?
            .iter()
            .filter(|p| p.mode == PolicyMode::Enforce)
            .map(|p| PolicyVersion { id: p.id, version: p.version })
            .collect();
        let digest = action_digest(tenant, agent.id, &req.action, &req.resource, &req.context, &versions);
        let opened = Opened {
            digest,
            agent: &agent,
            action: req.action.trim().to_owned(),
            resource: req.resource.trim().to_owned(),
            context: req.context,
            reason: req.reason.trim().to_owned(),
            risk_score,
            decision_id: None,
            session_id: None,
            timeout_secs: timeout.unwrap_or(settings.hitl_timeout_secs),
            callback,
        };
        self.open(caller, opened, &settings).await
    }

    /// Opens the request a policy check asked for (its decision already recorded as
    /// `decision_id`), with the tenant's approval window, bound to the action's digest under
    /// the policy `versions` that judged it.
    #[expect(clippy::too_many_arguments, reason = "the check's parts, each a borrow of the caller's")]
    pub(crate) async fn open_for_check(
        &self,
        caller: &Caller,
        agent: &Agent,
        check: &CheckRequest,
        decided: &CheckResponse,
        decision_id: AuditId,
        settings: &EffectiveSettings,
        versions: &[PolicyVersion],
    ) -> Result<HitlRequest> {
        let digest =
            action_digest(caller.tenant_id(), agent.id, &check.action, &check.resource, &check.context, versions);
        let opened = Opened {
            digest,
            agent,
            action: check.action.trim().to_owned(),
            resource: check.resource.trim().to_owned(),
            context: check.context.clone(),
            reason: decided.reason.clone(),
            risk_score: decided.risk_score,
            decision_id: Some(decision_id),
            session_id: check.session_id.clone(),
            timeout_secs: settings.hitl_timeout_secs,
            callback: None,
        };
        self.open(caller, opened, settings).await
    }

    async fn open(&self, caller: &Caller, o: Opened<'_>, settings: &EffectiveSettings) -> Result<HitlRequest> {
        // The tenant's escalation chain, kept with the request (changing it later leaves the
        // requests already made as they were).
        let chain = match self.repos.tenants.get_tenant(caller.tenant_id()).await? {
            Some(t) => t.settings.hitl_escalation.unwrap_or_default(),
            None => return Err(DomainError::not_found("tenant", caller.tenant_id())),
        };
        let now = self.ports.clock.now();
        let request = HitlRequest {
            id: HitlId(self.ports.ids.new_id()),
            tenant_id: caller.tenant_id(),
            agent_id: o.agent.id,
            agent_name: o.agent.name.clone(),
            action: o.action,
            resource: o.resource,
            context: o.context,
            reason: o.reason,
            status: HitlStatus::Pending,
            risk_score: o.risk_score,
            risk: settings.risk_levels.level(o.risk_score),
            decision_id: o.decision_id,
            requested_by: caller_actor(caller),
            decided_by: None,
            decided_at: None,
            comment: None,
            callback: o.callback.map(HitlCallback::new),
            expires_at: now + secs(u64::from(o.timeout_secs)),
            created_at: now,
            updated_at: now,
            action_digest: Some(o.digest),
            approved_context: None,
            grant: None,
            approval_token: None,
            escalation: HitlEscalation::start(&chain, now),
            session_id: o.session_id,
        };
        let max = self.settings.max_open_callbacks_per_tenant;
        self.repos.hitl.insert_hitl(&request, max).await.map_err(|e| match e {
            DomainError::Conflict(m) if m == crate::ports::store::CALLBACK_LIMIT_REACHED => DomainError::quota(
                format!(
                    "the tenant already has {max} approval requests whose callback is still to be sent, \
                     its limit; wait for them to be decided and delivered, or leave out callback_url \
                     (the operator sets the limit: AGENTGOV_HITL_MAX_PENDING_CALLBACKS_PER_TENANT)"
                ),
                Duration::from_secs(30),
            ),
            other => other,
        })?;
        self.transitioned(&request, HITL_REQUESTED).await?;
        Ok(request)
    }

    /// Audits a transition (durably: the caller is answered only once it is recorded),
    /// publishes it, and wakes this process's long-polls at once.
    async fn transitioned(&self, request: &HitlRequest, event_type: &'static str) -> Result<()> {
        let actor = match event_type {
            HITL_REQUESTED => request.requested_by.clone(),
            HITL_ESCALATED => Actor::system("hitl_escalation"),
            _ => request.decided_by.clone().unwrap_or_else(|| Actor::system("hitl_expiry")),
        };
        let mut details = serde_json::json!({
            "hitl_request_id": request.id,
            "status": request.status,
            "reason": request.reason,
            "comment": request.comment,
            "decision_id": request.decision_id,
            "expires_at": fmt_time(request.expires_at),
            "callback_url": request.callback.as_ref().map(|c| &c.url),
            "action_digest": request.action_digest,
        });
        if let Some(grant) = &request.grant {
            details["approved_digest"] = serde_json::json!(grant.digest);
            details["approval_token_expires_at"] = serde_json::json!(fmt_time(grant.expires_at));
        }
        if let Some(edited) = &request.approved_context {
            details["approved_context"] = serde_json::json!(edited);
        }
        if event_type == HITL_EXPIRED || event_type == HITL_ESCALATED {
            // Which replica's worker expired or escalated it (the `hitl` lease holder).
            details["replica"] = serde_json::json!(self.holder);
        }
        if let Some(escalation) = request.escalation.as_ref().filter(|_| event_type == HITL_ESCALATED) {
            details["escalation_level"] = serde_json::json!(escalation.level);
            details["escalated_to"] = serde_json::json!(escalation.role);
        }
        let mut event = AuditEvent::new(request.tenant_id, actor, event_type)
            .action(request.action.clone())
            .resource(request.resource.clone())
            .details(details);
        event.agent_id = Some(request.agent_id.as_uuid());
        event.risk_score = Some(request.risk_score);
        event.session_id = request.session_id.clone();
        if request.status.is_final() {
            event.decision = Some(request.status.as_str().to_owned());
        }
        self.audit.record(event).await?;
        let data = serde_json::to_value(request).map_err(DomainError::internal)?;
        self.ports.announce(request.tenant_id, event_type, data).await;
        if event_type != HITL_ESCALATED {
            // Still pending: a long-poll waits on.
            self.watchers.wake(request.id);
        }
        if request.callback_due_at().is_some() {
            let _full_or_gone = self.wake_worker.clone().try_send(());
        }
        Ok(())
    }

    async fn stored(&self, tenant: TenantId, id: HitlId) -> Result<HitlRequest> {
        self.repos.hitl.get_hitl(tenant, id).await?.ok_or_else(|| not_found(id))
    }

    /// `GET /hitl/status/{id}`: with its approval token for a caller that may check.
    pub async fn get(&self, caller: &Caller, id: HitlId) -> Result<HitlRequest> {
        caller.require_permission(Permission::HitlRead)?;
        let request = self.stored(caller.tenant_id(), id).await?;
        if caller.has_permission(Permission::PoliciesCheck) { self.with_token(request) } else { Ok(request) }
    }

    /// `request` with its approval token when it has a grant still usable now.
    fn with_token(&self, request: HitlRequest) -> Result<HitlRequest> {
        let now = self.ports.clock.now();
        let Some(grant) = request.grant.as_ref().filter(|g| g.used_at.is_none() && g.expires_at > now) else {
            return Ok(request);
        };
        if request.status != HitlStatus::Approved {
            return Ok(request);
        }
        let claims = ApprovalClaims {
            sub: request.id,
            tid: request.tenant_id,
            dig: grant.digest.clone(),
            jti: grant.token_id,
            iat: request.decided_at.unwrap_or(request.updated_at).unix_timestamp(),
            exp: grant.expires_at.unix_timestamp(),
            iss: TOKEN_ISSUER.into(),
            aud: APPROVAL_AUDIENCE.into(),
        };
        let token = self.tokens.sign_approval(&claims)?;
        Ok(HitlRequest { approval_token: Some(token), ..request })
    }

    /// Redeems the approval `token` a check presented for the action whose digest is
    /// `digest`: `Ok(Ok(id))` when it is this tenant's, unexpired, bound to that digest and
    /// unused, then spent (unless `spend` is false: a dry run only looks); `Ok(Err(why))`
    /// when refused.
    pub(crate) async fn redeem(
        &self,
        tenant: TenantId,
        token: &str,
        digest: &str,
        spend: bool,
    ) -> Result<std::result::Result<HitlId, TokenRefusal>> {
        let now = self.ports.clock.now();
        let claims = match self.tokens.verify_approval(token, now) {
            Ok(claims) if claims.tid == tenant => claims,
            Ok(_) => return Ok(Err(TokenRefusal::Invalid)),
            Err(DomainError::Unauthorized(m)) if m.contains("expired") => return Ok(Err(TokenRefusal::Expired)),
            Err(_) => return Ok(Err(TokenRefusal::Invalid)),
        };
        let Some(request) = self.repos.hitl.get_hitl(tenant, claims.sub).await? else {
            return Ok(Err(TokenRefusal::Invalid));
        };
        let Some(grant) = request.grant.clone().filter(|g| g.token_id == claims.jti && g.digest == claims.dig) else {
            return Ok(Err(TokenRefusal::Invalid));
        };
        // Both are hex digests the caller can compute: nothing secret to time.
        if grant.digest != digest {
            return Ok(Err(TokenRefusal::OtherAction));
        }
        if grant.expires_at <= now {
            return Ok(Err(TokenRefusal::Expired));
        }
        if !request.grant_open() {
            return Ok(Err(TokenRefusal::Used));
        }
        if !spend {
            return Ok(Ok(request.id));
        }
        let spent =
            HitlRequest { grant: Some(ApprovalGrant { used_at: Some(now), ..grant }), updated_at: now, ..request };
        if !self.repos.hitl.spend_hitl_grant(&spent).await? {
            return Ok(Err(TokenRefusal::Used));
        }
        Ok(Ok(spent.id))
    }

    /// `GET /hitl/status/{id}?wait=`: the request, and while it is pending a watch that
    /// resolves when it changes. The watch is taken before the read, so a change made in
    /// between still wakes it. A watch holds one of the tenant's long-poll places over every
    /// replica for up to `wait` (429 past `max_long_polls_per_tenant`); give it back with
    /// [`HitlService::end_watch`].
    pub async fn watch(&self, caller: &Caller, id: HitlId, wait: Duration) -> Result<(HitlRequest, Option<HitlWatch>)> {
        caller.require_permission(Permission::HitlRead)?;
        let mut watch = self.watchers.watch(id, self.settings.max_watchers)?;
        let request = self.stored(caller.tenant_id(), id).await?;
        if request.status != HitlStatus::Pending {
            return Ok((request, None));
        }
        // Held a little past the wait, so an answer being written still counts.
        let ttl = wait.saturating_add(Duration::from_secs(5));
        watch.place = Some(self.shares.take(&self.long_polls(), caller.tenant_id(), ttl).await?);
        Ok((request, Some(watch)))
    }

    /// Gives back the long-poll place a watch holds.
    pub async fn end_watch(&self, watch: HitlWatch) {
        if let Some(place) = &watch.place {
            self.shares.give_back(place).await;
        }
    }

    fn long_polls(&self) -> Share {
        Share {
            kind: "long-poll",
            what: "long-polls (GET /hitl/status/{id}?wait=)",
            setting: "AGENTGOV_HITL_MAX_LONG_POLLS_PER_TENANT",
            cap: self.settings.max_long_polls_per_tenant,
        }
    }

    /// `GET /hitl/pending` (analyst or higher): the pending queue, oldest first.
    pub async fn pending(
        &self,
        caller: &Caller,
        limit: Option<i64>,
        cursor: Option<&str>,
    ) -> Result<Page<HitlRequest>> {
        caller.require_role(Role::Analyst)?;
        caller.require_permission(Permission::HitlRead)?;
        let page = PageRequest::parse(limit, cursor)?;
        let filter = HitlFilter { status: Some(HitlStatus::Pending), agent_id: None };
        self.repos.hitl.list_hitl(caller.tenant_id(), &filter, &page).await
    }

    /// `POST /hitl/approve/{id}` (analyst or higher) of the action as asked; the approval
    /// token is bound to the request's digest. An edited approval goes through
    /// `PolicyService::approve`, which checks the edit first.
    pub async fn approve(&self, caller: &Caller, id: HitlId, decision: HitlDecision) -> Result<HitlRequest> {
        caller.require_role(Role::Analyst)?;
        self.decide(caller, id, HitlStatus::Approved, decision.comment, None).await
    }

    /// Approves request `id` with its arguments edited to `context`, whose digest (under
    /// the policy versions that just checked it) is `digest`.
    pub(crate) async fn approve_edited(
        &self,
        caller: &Caller,
        id: HitlId,
        comment: Option<String>,
        context: JsonObject,
        digest: String,
    ) -> Result<HitlRequest> {
        caller.require_role(Role::Analyst)?;
        self.decide(caller, id, HitlStatus::Approved, comment, Some((context, digest))).await
    }

    /// The pending request `id`, for an approver about to edit it.
    pub(crate) async fn pending_request(&self, caller: &Caller, id: HitlId) -> Result<HitlRequest> {
        caller.require_role(Role::Analyst)?;
        let request = self.stored(caller.tenant_id(), id).await?;
        check_open(&request, self.ports.clock.now())?;
        Ok(request)
    }

    /// `POST /hitl/reject/{id}` (analyst or higher).
    pub async fn reject(&self, caller: &Caller, id: HitlId, decision: HitlDecision) -> Result<HitlRequest> {
        caller.require_role(Role::Analyst)?;
        self.decide(caller, id, HitlStatus::Rejected, decision.comment, None).await
    }

    /// `POST /hitl/cancel/{id}`: the requester (any holder of `hitl:request`) withdraws it.
    pub async fn cancel(&self, caller: &Caller, id: HitlId, decision: HitlDecision) -> Result<HitlRequest> {
        caller.require_permission(Permission::HitlRequest)?;
        self.decide(caller, id, HitlStatus::Cancelled, decision.comment, None).await
    }

    async fn decide(
        &self,
        caller: &Caller,
        id: HitlId,
        status: HitlStatus,
        comment: Option<String>,
        edited: Option<(JsonObject, String)>,
    ) -> Result<HitlRequest> {
        let comment = comment.map(|c| c.trim().to_owned()).filter(|c| !c.is_empty());
        if let Some(c) = &comment {
            let mut v = Violations::new();
            check_description(&mut v, "comment", c, MAX_COMMENT_LEN);
            v.into_result()?;
        }
        let before = self.stored(caller.tenant_id(), id).await?;
        let now = self.ports.clock.now();
        check_open(&before, now)?;
        let mut after = self.finalised(before, status, caller_actor(caller), comment, now);
        if status == HitlStatus::Approved {
            let (context, digest) = match edited {
                Some((context, digest)) => (Some(context), Some(digest)),
                None => (None, after.action_digest.clone()),
            };
            after.approved_context = context;
            // A request made before actions were bound has no digest, so no token.
            after.grant = digest.map(|digest| ApprovalGrant {
                digest,
                token_id: self.ports.ids.new_id(),
                expires_at: now
                    + time::Duration::try_from(self.settings.approval_token_ttl).unwrap_or(time::Duration::MINUTE),
                used_at: None,
            });
        }
        if !self.repos.hitl.decide_hitl(&after).await? {
            // Decided (or expired) by someone else between the read and the write.
            let current = self.stored(caller.tenant_id(), id).await?;
            return Err(already(&current));
        }
        self.transitioned(&after, event_type(status)).await?;
        Ok(after)
    }

    /// `request` in its final `status`, its callback (if any) scheduled now.
    fn finalised(
        &self,
        request: HitlRequest,
        status: HitlStatus,
        by: Actor,
        comment: Option<String>,
        now: OffsetDateTime,
    ) -> HitlRequest {
        let callback = request.callback.map(|c| HitlCallback {
            status: CallbackStatus::Scheduled,
            next_attempt_at: Some(now),
            ..c
        });
        HitlRequest {
            status,
            decided_by: Some(by),
            decided_at: Some(now),
            comment,
            callback,
            updated_at: now,
            ..request
        }
    }

    /// Forgets nothing but wakes the long-polls of a request changed on any replica.
    pub fn on_event(&self, event: &Event) {
        if event.event_type.starts_with("hitl.")
            && event.event_type != HITL_ESCALATED
            && let Some(id) = event.data.get("id").and_then(|v| v.as_str()).and_then(|s| s.parse().ok())
        {
            self.watchers.wake(id);
        }
    }

    /// One round of background work, on the holder of the `hitl` lease only: expires what
    /// is due, then sends the callbacks that are due.
    pub async fn step(&self, worker: &mut HitlWorker) -> Result<HitlRound> {
        if !self.keep_lease(worker).await? {
            return Ok(HitlRound::default());
        }
        let expired = self.expire_due().await?;
        let escalated = self.escalate_due().await?;
        let callbacks_sent = self.send_due_callbacks(worker).await?;
        Ok(HitlRound { leader: worker.lease_until.is_some(), expired, escalated, callbacks_sent })
    }

    /// Takes or renews the lease when it is not held or a third of it has passed.
    async fn keep_lease(&self, worker: &mut HitlWorker) -> Result<bool> {
        let now = self.ports.clock.now();
        let ttl = time::Duration::try_from(self.settings.lease_ttl).unwrap_or(time::Duration::seconds(15));
        if let Some(until) = worker.lease_until
            && until - now > ttl * 2 / 3
        {
            return Ok(true);
        }
        let until = now + ttl;
        let held = self.repos.leases.try_lease(LEASE, self.holder, now, until).await?;
        worker.lease_until = held.then_some(until);
        Ok(held)
    }

    /// Gives the lease up (on shutdown), so another replica takes over at once.
    pub async fn release(&self, worker: &mut HitlWorker) {
        if worker.lease_until.take().is_some()
            && let Err(e) = self.repos.leases.release_lease(LEASE, self.holder).await
        {
            tracing::warn!(error = %e, "could not release the HITL lease");
        }
    }

    /// Marks every pending request past its `expires_at` as `expired`.
    async fn expire_due(&self) -> Result<usize> {
        self.transition_due(Due::Expiry).await
    }

    /// Takes every escalation step that is due: the request moves one step along its chain
    /// (one conditional write, so of two holders one wins), and the step's role is notified
    /// by the `hitl.escalated` audit record and feed event. A request overdue by several
    /// steps takes one per round.
    async fn escalate_due(&self) -> Result<usize> {
        self.transition_due(Due::Escalation).await
    }

    /// Moves every request that is `due` along, a batch at a time while batches come back
    /// full: each with one conditional write (of two holders one wins), then audited and
    /// published. Returns how many moved.
    async fn transition_due(&self, due: Due) -> Result<usize> {
        let (mut moved, batch) = (0, self.settings.expiry_batch);
        loop {
            let now = self.ports.clock.now();
            let requests = match due {
                Due::Expiry => self.repos.hitl.expired_hitl(now, batch).await?,
                Due::Escalation => self.repos.hitl.due_hitl_escalations(now, batch).await?,
            };
            let full = requests.len() as i64 >= batch;
            for request in requests {
                let (after, event) = match due {
                    Due::Expiry => {
                        let after =
                            self.finalised(request, HitlStatus::Expired, Actor::system("hitl_expiry"), None, now);
                        (self.repos.hitl.decide_hitl(&after).await?.then_some(after), HITL_EXPIRED)
                    }
                    Due::Escalation => {
                        let (Some(at), Some(escalation)) = (request.escalate_at(), request.escalation.as_ref()) else {
                            continue;
                        };
                        let after = HitlRequest {
                            escalation: escalation.advanced(request.created_at, now),
                            updated_at: now,
                            ..request.clone()
                        };
                        (self.repos.hitl.escalate_hitl(&after, at).await?.then_some(after), HITL_ESCALATED)
                    }
                };
                if let Some(after) = after {
                    self.transitioned(&after, event).await?;
                    moved += 1;
                }
            }
            if !full {
                return Ok(moved);
            }
        }
    }

    /// Sends the callbacks that are due; each ends delivered, scheduled again with backoff,
    /// or given up. At most `callback_concurrency` attempts run at once, and at most
    /// `callback_concurrency_per_tenant` of one tenant, taken in turns across tenants; as
    /// one ends (and on each of the worker's ticks) the freed slot goes to what is due then,
    /// so a tenant whose receiver hangs holds its own slots, never another tenant's. The
    /// round starts at most `callback_batch` attempts and ends when they have. On each tick
    /// and each finished attempt the lease is renewed when due; a round that finds it lost
    /// stops at once (its attempts in flight are dropped: the new holder sends them again).
    async fn send_due_callbacks(&self, worker: &mut HitlWorker) -> Result<usize> {
        let per_tenant = self.settings.callback_concurrency_per_tenant.max(1);
        let concurrency = self.settings.callback_concurrency.max(1);
        let budget = usize::try_from(self.settings.callback_batch).unwrap_or(0);
        let mut in_flight: FuturesUnordered<BoxFuture<'_, (TenantId, HitlId, Result<()>)>> = FuturesUnordered::new();
        let mut busy: HashMap<TenantId, usize> = HashMap::new();
        let mut flying: std::collections::HashSet<HitlId> = std::collections::HashSet::new();
        let (mut started, mut finished) = (0usize, 0usize);
        let mut failure: Option<DomainError> = None;
        let mut look = true;
        loop {
            if look && failure.is_none() && started < budget && in_flight.len() < concurrency {
                let now = self.ports.clock.now();
                let per = i64::try_from(per_tenant).unwrap_or(i64::MAX);
                let due = self.repos.hitl.due_hitl_callbacks(now, self.settings.callback_batch, per).await?;
                for request in due {
                    if started >= budget || in_flight.len() >= concurrency {
                        break;
                    }
                    let (tenant, id) = (request.tenant_id, request.id);
                    let held = busy.entry(tenant).or_default();
                    // Still due in the store while its attempt runs: skip what is in flight.
                    if *held >= per_tenant || !flying.insert(id) {
                        continue;
                    }
                    *held += 1;
                    started += 1;
                    in_flight.push(self.send_callback(request).map(move |r| (tenant, id, r)).boxed());
                }
            }
            if in_flight.is_empty() {
                return failure.map_or(Ok(finished), Err);
            }
            let next = futures::future::select(in_flight.next(), worker.ticks.next()).await;
            look = true;
            match next {
                Either::Left((Some((tenant, id, result)), _)) => {
                    flying.remove(&id);
                    if let Some(held) = busy.get_mut(&tenant) {
                        *held = held.saturating_sub(1);
                    }
                    finished += 1;
                    if let Err(e) = result {
                        failure.get_or_insert(e);
                    }
                }
                // A tick (the ticks never end), or nothing in flight (not reached).
                Either::Left((None, _)) | Either::Right(_) => {}
            }
            if !self.keep_lease(worker).await? {
                tracing::warn!("the HITL lease was lost during a callback round; stopping it");
                return failure.map_or(Ok(finished), Err);
            }
        }
    }

    async fn send_callback(&self, request: HitlRequest) -> Result<()> {
        let Some(callback) = request.callback.clone() else { return Ok(()) };
        if let Some(wait) = self.callback_rate_limited(request.tenant_id).await? {
            // Over the tenant's rate: postponed to the next window, not an attempt.
            let later = HitlCallback { next_attempt_at: Some(self.ports.clock.now() + wait), ..callback };
            return self.repos.hitl.update_hitl_callback(request.tenant_id, request.id, &later).await;
        }
        let body = self.callback_body(&request)?;
        let headers = self.callback_headers(&request, &body).await?;
        let outcome = self.ports.callbacks.post(&callback.url, &headers, &body).await;
        let now = self.ports.clock.now();
        let attempts = callback.attempts.saturating_add(1);
        let next = match outcome {
            Ok(status) if (200..300).contains(&status) => HitlCallback {
                status: CallbackStatus::Delivered,
                attempts,
                next_attempt_at: None,
                delivered_at: Some(now),
                last_error: None,
                ..callback
            },
            failed => {
                // The operator's log has the detail; the tenant sees only the kind.
                let (error, give_up) = match failed {
                    Ok(status) => {
                        tracing::warn!(tenant = %request.tenant_id, hitl_request_id = %request.id,
                            host = %url_host(&callback.url), attempt = attempts, status,
                            "HITL callback failed: the receiver did not answer 2xx");
                        (CALLBACK_NOT_2XX, false)
                    }
                    Err(e) => {
                        tracing::warn!(tenant = %request.tenant_id, hitl_request_id = %request.id,
                            host = %url_host(&callback.url), attempt = attempts, error = %e.detail,
                            "HITL callback failed");
                        // A receiver the policy refuses is refused on every attempt.
                        (e.kind.coarse(), e.kind == CallbackFailure::Refused)
                    }
                };
                if give_up || attempts >= self.settings.callback_max_attempts {
                    HitlCallback {
                        status: CallbackStatus::Failed,
                        attempts,
                        next_attempt_at: None,
                        last_error: Some(error.to_owned()),
                        ..callback
                    }
                } else {
                    HitlCallback {
                        status: CallbackStatus::Scheduled,
                        attempts,
                        next_attempt_at: Some(now + self.backoff(attempts)),
                        last_error: Some(error.to_owned()),
                        ..callback
                    }
                }
            }
        };
        self.repos.hitl.update_hitl_callback(request.tenant_id, request.id, &next).await?;
        if next.status == CallbackStatus::Failed {
            let event = AuditEvent::new(request.tenant_id, Actor::system("hitl_callback"), HITL_CALLBACK_FAILED)
                .action("callback")
                .resource(format!("hitl/{}", request.id))
                .details(serde_json::json!({
                    "hitl_request_id": request.id, "callback_url": next.url,
                    "attempts": next.attempts, "last_error": next.last_error,
                }));
            self.audit.record_after(event).await;
        }
        Ok(())
    }

    /// The headers of one attempt, signed with the tenant's callback secret (made now if the
    /// tenant predates them): `X-Webhook-Signature: sha256=…` with the current key, and
    /// `X-Webhook-Timestamp-Signature: t=…,v1=…` over this attempt's time, with a `v1` for
    /// the replaced key too during its rotation grace.
    async fn callback_headers(&self, request: &HitlRequest, body: &[u8]) -> Result<[(&'static str, String); 5]> {
        let now = self.ports.clock.now();
        let secret = match self.repos.tenants.get_tenant_secret(request.tenant_id, SecretPurpose::Callback).await? {
            Some(secret) => secret,
            None => {
                let fresh = TenantSecret::generate(request.tenant_id, SecretPurpose::Callback, false, now)?;
                self.repos.tenants.add_tenant_secret(&fresh).await?
            }
        };
        Ok([
            ("content-type", "application/json".to_owned()),
            ("x-webhook-signature", secrets::sign_plain(&secret.secret, body)),
            (
                "x-webhook-timestamp-signature",
                secrets::sign_timestamped(&secret.keys_at(now), now.unix_timestamp(), body),
            ),
            ("x-webhook-id", request.id.to_string()),
            ("x-webhook-event", event_type(request.status).to_owned()),
        ])
    }

    /// Counts an attempt against the tenant's callback rate; `Some(wait)` (the time left in
    /// the window) when the tenant is past it.
    async fn callback_rate_limited(&self, tenant: TenantId) -> Result<Option<time::Duration>> {
        let counter = self.ports.cache.incr(&format!("hitl-callbacks:{tenant}"), CALLBACK_RATE_WINDOW).await?;
        if counter.count <= self.settings.callbacks_per_minute {
            return Ok(None);
        }
        let wait = counter.ttl.max(Duration::from_millis(100));
        Ok(Some(time::Duration::try_from(wait).unwrap_or(time::Duration::MINUTE)))
    }

    /// The wait after `attempts` failed attempts: the base, doubled each time, capped.
    fn backoff(&self, attempts: u32) -> time::Duration {
        let base = self.settings.callback_backoff;
        let doubled = base.saturating_mul(1u32 << attempts.saturating_sub(1).min(20));
        time::Duration::try_from(doubled.min(self.settings.callback_backoff_max)).unwrap_or(time::Duration::MAX)
    }

    /// The signed body of a request's callback: the same bytes on every attempt.
    fn callback_body(&self, request: &HitlRequest) -> Result<Vec<u8>> {
        // The requester resumes with the token; its grant's expiry bounds it.
        let data = self.with_token(HitlRequest { callback: None, ..request.clone() })?;
        let body = CallbackBody {
            id: request.id,
            event_type: event_type(request.status),
            tenant_id: request.tenant_id,
            ts: request.decided_at.unwrap_or(request.updated_at),
            data: &data,
        };
        serde_json::to_vec(&body).map_err(DomainError::internal)
    }
}

/// What opening a request needs beyond the caller.
struct Opened<'a> {
    agent: &'a Agent,
    /// The action digest ([`action_digest`]).
    digest: String,
    action: String,
    resource: String,
    context: JsonObject,
    reason: String,
    risk_score: f64,
    decision_id: Option<AuditId>,
    session_id: Option<String>,
    timeout_secs: u32,
    callback: Option<String>,
}

fn event_type(status: HitlStatus) -> &'static str {
    match status {
        HitlStatus::Pending => HITL_REQUESTED,
        HitlStatus::Approved => HITL_APPROVED,
        HitlStatus::Rejected => HITL_REJECTED,
        HitlStatus::Expired => HITL_EXPIRED,
        HitlStatus::Cancelled => HITL_CANCELLED,
    }
}

fn fmt_time(t: OffsetDateTime) -> String {
    t.format(&time::format_description::well_known::Rfc3339).unwrap_or_default()
}

/// 409 for a request that can no longer be decided.
fn already(request: &HitlRequest) -> DomainError {
    DomainError::Conflict(format!("approval request {} is already {}", request.id, request.status.as_str()))
}

/// `Ok` while the request can still be decided at `now`.
fn check_open(request: &HitlRequest, now: OffsetDateTime) -> Result<()> {
    if request.status.is_final() {
        return Err(already(request));
    }
    if request.expires_at <= now {
        return Err(DomainError::Conflict(format!(
            "approval request {} expired at {}",
            request.id,
            fmt_time(request.expires_at)
        )));
    }
    Ok(())
}

/// Validates `POST /hitl/request`: the agent id, the window and the callback URL.
fn validate_request(
    req: &NewHitlRequest,
    receivers: &ReceiverPolicy,
) -> Result<(AgentId, Option<u32>, Option<String>)> {
    let mut v = Violations::new();
    let agent_id = check_agent_action(&mut v, &req.agent_id, &req.action, &req.resource, &req.context);
    check_nonblank_description(&mut v, "reason", &req.reason, MAX_REASON_LEN);
    let timeout = match req.timeout_seconds {
        None => None,
        Some(t) => match u32::try_from(t) {
            Ok(t) if (1..=MAX_HITL_TIMEOUT_SECS).contains(&t) => Some(t),
            _ => {
                v.add("timeout_seconds", format!("must be between 1 and {MAX_HITL_TIMEOUT_SECS}"));
                None
            }
        },
    };
    let callback = match req.callback_url.as_deref().map(str::trim) {
        None | Some("") => None,
        Some(url) => match check_callback_url(url, receivers) {
            Ok(()) => Some(url.to_owned()),
            Err(message) => {
                v.add("callback_url", message);
                None
            }
        },
    };
    v.into_result()?;
    let agent_id = agent_id.ok_or_else(|| DomainError::invalid("agent_id", "must be a UUID"))?;
    Ok((agent_id, timeout, callback))
}

/// A callback URL: absolute `http` or `https` with a host, no credentials, no fragment, and
/// a host the receiver policy allows (an address literal by its rule; a name unless it can
/// only be local). The sender checks again on the addresses the name resolves to.
fn check_callback_url(raw: &str, receivers: &ReceiverPolicy) -> std::result::Result<(), String> {
    if raw.len() > MAX_URL_LEN {
        return Err(format!("must be at most {MAX_URL_LEN} characters"));
    }
    let url = url::Url::parse(raw).map_err(|e| format!("is not a URL: {e}"))?;
    if !matches!(url.scheme(), "http" | "https") {
        return Err("must be an http or https URL".into());
    }
    if url.host_str().is_none_or(str::is_empty) {
        return Err("must name a host".into());
    }
    if !url.username().is_empty() || url.password().is_some() {
        return Err("must not carry credentials; the body is signed instead".into());
    }
    if url.fragment().is_some() {
        return Err("must not have a fragment".into());
    }
    receivers.check_url(&url).map_err(|refusal| refusal.to_string())
}

/// The host of a callback URL, for the operator's log (its path and query may hold a token).
fn url_host(raw: &str) -> String {
    url::Url::parse(raw).ok().and_then(|u| u.host_str().map(str::to_owned)).unwrap_or_default()
}

#[cfg(test)]
mod tests;
