//! SIEM forwarding (spec 4.13): every audit record, at least once, in order per tenant, to
//! each configured sink.
//!
//! The audit log is the outbox. Each sink keeps, per tenant, a cursor in the store: the last
//! `seq` it delivered (or passed over because its filter does not want it). The forwarder of
//! a sink reads the records after the cursor in batches, sends the ones its filter keeps,
//! and only then moves the cursor, so a crash between the two sends a batch again rather
//! than losing it. Requests never wait on a SIEM: they append to the audit log as always,
//! and a sink that is down only lets its queue (head minus cursor) grow.
//!
//! Each sink is forwarded by exactly one replica at a time, the holder of the lease
//! `siem:<sink name>`; the server runs one loop per sink around [`SiemService::step`].

use std::sync::Arc;
use std::time::{Duration, Instant};

use serde::Serialize;
use time::OffsetDateTime;
use uuid::Uuid;

use super::{Caller, Ports};
use crate::error::{DomainError, Result};
use crate::ids::{AuditId, TenantId};
use crate::model::{
    Actor, ActorType, AuditFilter, AuditHash, AuditOrigin, AuditRecord, AuditScan, JsonText, Role, SeqOrder,
    SiemSinkState,
};
pub use crate::ports::siem::{SiemFilter, SiemRoute};

/// Tunables of forwarding.
#[derive(Debug, Clone)]
pub struct SiemSettings {
    /// Most records read (and sent) per tenant in one step.
    pub batch: u32,
    /// How long a forwarder's lease lasts; it is renewed after a third of it.
    pub lease_ttl: Duration,
    /// How long a forwarder with nothing to send waits before it looks again.
    pub poll: Duration,
    /// The first wait after a failed delivery; it doubles on each further failure…
    pub backoff_min: Duration,
    /// …up to this.
    pub backoff_max: Duration,
}

impl Default for SiemSettings {
    fn default() -> Self {
        Self {
            batch: 500,
            lease_ttl: Duration::from_secs(30),
            poll: Duration::from_millis(500),
            backoff_min: Duration::from_secs(1),
            backoff_max: Duration::from_secs(60),
        }
    }
}

/// Who may see and test the forwarding: the platform operator (`X-Admin-Key`) or a Super
/// Admin signed in with a session JWT.
pub enum Operator {
    AdminKey,
    User(Box<Caller>),
}

impl Operator {
    fn authorize(&self) -> Result<()> {
        match self {
            Operator::AdminKey => Ok(()),
            Operator::User(caller) if caller.session_id().is_some() => caller.require_role(Role::SuperAdmin),
            Operator::User(_) => Err(DomainError::Forbidden("requires a Super Admin session or the admin key".into())),
        }
    }
}

/// A sink as `GET /siem/status` shows it. The operator (`X-Admin-Key`) sees the sink's
/// platform-wide state; a tenant's Super Admin sees what concerns its own tenant only: the
/// sink's filter and its tenant's backlog, never the destination, the totals over every
/// tenant or the last error (which another tenant's records may have caused).
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct SinkStatus {
    /// The configured name.
    pub name: String,
    /// `syslog-tcp`, `syslog-udp`, `syslog-tls` or `splunk-hec`.
    pub kind: &'static str,
    /// Where it sends, credentials masked. The operator only.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub destination: Option<String>,
    /// What each record is written as: `cef`, `json` or `ocsf`.
    pub format: &'static str,
    /// Event types sent (empty: all).
    pub event_types: Vec<String>,
    pub min_severity: u8,
    /// Audit records not yet examined: over every tenant for the operator, of the caller's
    /// tenant for a Super Admin.
    pub queue_depth: u64,
    /// A Super Admin only: the last `seq` of its tenant's log the sink has forwarded or
    /// passed over by its filter.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cursor: Option<i64>,
    /// Records delivered since the sink was first configured. The operator only.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub forwarded_total: Option<u64>,
    /// Records in delivery attempts that failed (each retry counts again). The operator only.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub failed_total: Option<u64>,
    /// The operator only.
    #[serde(with = "time::serde::rfc3339::option", skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "openapi", schema(value_type = Option<String>, format = DateTime))]
    pub last_success_at: Option<OffsetDateTime>,
    /// The operator only.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub last_error: Option<String>,
    /// The operator only.
    #[serde(with = "time::serde::rfc3339::option", skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "openapi", schema(value_type = Option<String>, format = DateTime))]
    pub last_error_at: Option<OffsetDateTime>,
}

/// `GET /siem/status`.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct SiemStatus {
    /// Whether any sink is configured.
    pub enabled: bool,
    /// `platform` for the operator, `tenant` for a tenant's Super Admin.
    pub scope: &'static str,
    pub sinks: Vec<SinkStatus>,
}

/// One sink's answer to the test event.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct SinkTestResult {
    pub name: String,
    pub kind: &'static str,
    /// Where it sends, credentials masked. The operator only.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub destination: Option<String>,
    /// Whether the sink took the event.
    pub ok: bool,
    /// How long the send took, in milliseconds.
    pub latency_ms: f64,
    /// Why it failed: the sink's own error for the operator; for a tenant's Super Admin
    /// only that it failed (the error can name the destination).
    pub error: Option<String>,
}

/// `POST /siem/test`.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct SiemTestReport {
    /// The id of the test event (`siem.test`), to find it in the SIEM. It is not part of
    /// any tenant's audit log.
    pub event_id: Uuid,
    pub results: Vec<SinkTestResult>,
}

/// What one forwarding step did, which tells the loop how long to wait.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Step {
    /// Another replica holds the sink's lease.
    NotLeader,
    /// Nothing to forward.
    Idle,
    /// Records were forwarded or passed over; there may be more.
    Progressed,
    /// The sink refused or could not be reached; wait before trying again.
    Failed,
}

/// A forwarder loop's own state: its lease and whether its sink is registered.
#[derive(Debug, Default)]
pub struct Forwarder {
    /// When the lease we hold runs out; `None` when we do not hold it.
    held_until: Option<OffsetDateTime>,
    registered: bool,
    /// Consecutive failures, for the backoff.
    failures: u32,
}

impl Forwarder {
    /// How long to wait after `step` answered `Step::Failed`: `backoff_min` doubled for each
    /// failure in a row, at most `backoff_max`.
    pub fn backoff(&self, settings: &SiemSettings) -> Duration {
        let doublings = self.failures.saturating_sub(1).min(20);
        settings.backoff_min.saturating_mul(1 << doublings).min(settings.backoff_max)
    }
}

super::ports::repos!(Repos { siem: SiemRepo, audit: AuditRepo, leases: LeaseRepo });
#[derive(Clone)]
pub struct SiemService {
    repos: Repos,
    ports: Ports,
    routes: Arc<[SiemRoute]>,
    settings: SiemSettings,
    /// This process's identity as a lease holder.
    holder: Uuid,
}

impl SiemService {
    pub fn new(ports: Ports, repos: Repos, routes: Vec<SiemRoute>, settings: SiemSettings) -> Self {
        let holder = ports.ids.new_id();
        Self { ports, repos, routes: routes.into(), settings, holder }
    }

    pub fn routes(&self) -> &[SiemRoute] {
        &self.routes
    }

    pub fn settings(&self) -> &SiemSettings {
        &self.settings
    }

    fn lease_name(route: &SiemRoute) -> String {
        format!("siem:{}", route.name)
    }

    /// `GET /siem/status`: every sink with its totals, read from the store (so any replica
    /// answers the same); for a tenant's Super Admin, only its own tenant's backlog.
    pub async fn status(&self, who: &Operator) -> Result<SiemStatus> {
        who.authorize()?;
        let mut sinks = Vec::with_capacity(self.routes.len());
        let tenant = match who {
            Operator::AdminKey => None,
            Operator::User(caller) => Some(caller.tenant_id()),
        };
        for route in self.routes.iter() {
            let status = SinkStatus {
                name: route.name.clone(),
                kind: route.sink.kind(),
                destination: None,
                format: route.sink.format(),
                event_types: route.filter.event_types.clone(),
                min_severity: route.filter.min_severity,
                queue_depth: 0,
                cursor: None,
                forwarded_total: None,
                failed_total: None,
                last_success_at: None,
                last_error: None,
                last_error_at: None,
            };
            sinks.push(match tenant {
                None => {
                    let state = self.repos.siem.siem_sink_state(&route.name).await?;
                    SinkStatus {
                        destination: Some(route.sink.destination()),
                        queue_depth: state.queue_depth,
                        forwarded_total: Some(state.forwarded),
                        failed_total: Some(state.failed),
                        last_success_at: state.last_success_at,
                        last_error: state.last_error,
                        last_error_at: state.last_error_at,
                        ..status
                    }
                }
                Some(tenant) => {
                    let backlog = self.repos.siem.siem_backlog(&route.name).await?;
                    let (cursor, depth) = match backlog.iter().find(|b| b.tenant_id == tenant) {
                        Some(b) => (b.cursor, u64::try_from(b.head - b.cursor).unwrap_or(0)),
                        // Not behind: the sink has passed the tenant's head.
                        None => (self.repos.audit.audit_head(tenant).await?.map_or(0, |h| h.seq), 0),
                    };
                    SinkStatus { queue_depth: depth, cursor: Some(cursor), ..status }
                }
            });
        }
        let scope = if tenant.is_some() { "tenant" } else { "platform" };
        Ok(SiemStatus { enabled: !self.routes.is_empty(), scope, sinks })
    }

    /// Each configured sink's name and totals, for the process's metrics: no permission is
    /// checked, so nothing here may name a destination or carry a credential.
    pub async fn states(&self) -> Result<Vec<(&str, SiemSinkState)>> {
        let mut states = Vec::with_capacity(self.routes.len());
        for route in self.routes.iter() {
            states.push((route.name.as_str(), self.repos.siem.siem_sink_state(&route.name).await?));
        }
        Ok(states)
    }

    /// `POST /siem/test`: one `siem.test` event through every sink at once (each gives up
    /// after its own timeout). Filters do not apply. 409 when no sink is configured.
    pub async fn test(&self, who: &Operator) -> Result<SiemTestReport> {
        who.authorize()?;
        if self.routes.is_empty() {
            return Err(DomainError::Conflict(
                "no SIEM sink is configured: add one to `siem_sinks` (see docs/siem.md)".into(),
            ));
        }
        let record = self.test_record(who);
        let operator = matches!(who, Operator::AdminKey);
        let sends = self.routes.iter().map(|route| {
            let record = std::slice::from_ref(&record);
            async move {
                let started = Instant::now();
                let error = route.sink.send(record).await.err().map(|e| {
                    if operator {
                        e.to_string()
                    } else {
                        tracing::warn!(sink = %route.name, error = %e, "a Super Admin's SIEM test event was not delivered");
                        "the sink did not take the test event; the operator sees why in GET /siem/status".to_owned()
                    }
                });
                SinkTestResult {
                    name: route.name.clone(),
                    kind: route.sink.kind(),
                    destination: operator.then(|| route.sink.destination()),
                    ok: error.is_none(),
                    latency_ms: started.elapsed().as_secs_f64() * 1000.0,
                    error,
                }
            }
        });
        let results = futures::future::join_all(sends).await;
        tracing::info!(
            event_id = %record.id.0,
            ok = results.iter().filter(|r| r.ok).count(),
            failed = results.iter().filter(|r| !r.ok).count(),
            "SIEM test event sent"
        );
        Ok(SiemTestReport { event_id: record.id.0, results })
    }

    /// The test event: a record of its own, outside every chain (`seq` 0, zero hashes).
    fn test_record(&self, who: &Operator) -> AuditRecord {
        let (tenant, actor) = match who {
            Operator::AdminKey => (TenantId(Uuid::nil()), Actor::system("admin_key")),
            Operator::User(caller) => (caller.tenant_id(), Actor::new(ActorType::User, caller.user.id)),
        };
        AuditRecord {
            id: AuditId(self.ports.ids.new_id()),
            tenant_id: tenant,
            seq: 0,
            timestamp: self.ports.clock.now(),
            actor,
            event_type: "siem.test".into(),
            session_id: None,
            origin: AuditOrigin::Service,
            agent_id: None,
            action: Some("test".into()),
            resource: Some("siem".into()),
            decision: None,
            risk_score: None,
            details: JsonText::from_value(&serde_json::json!({
                "message": "agentgov SIEM test event: delivery works",
            })),
            prev_hash: AuditHash([0; 32]),
            hash: AuditHash([0; 32]),
        }
    }

    /// Takes or renews the sink's lease when it is not held or a third of it has passed.
    /// False when another replica holds it.
    pub async fn keep_lease(&self, route: &SiemRoute, state: &mut Forwarder) -> Result<bool> {
        let now = self.ports.clock.now();
        let ttl = self.settings.lease_ttl;
        let renew_at = state.held_until.map(|until| until - ttl * 2 / 3);
        if renew_at.is_some_and(|at| now < at) {
            return Ok(true);
        }
        let until = now + ttl;
        let held = self.repos.leases.try_lease(&Self::lease_name(route), self.holder, now, until).await?;
        if held && state.held_until.is_none() {
            tracing::info!(sink = %route.name, "this replica forwards the SIEM sink");
        }
        state.held_until = held.then_some(until);
        Ok(held)
    }

    /// Lets another replica take the sink over at once (on shutdown).
    pub async fn release(&self, route: &SiemRoute, state: &mut Forwarder) {
        if state.held_until.take().is_some()
            && let Err(e) = self.repos.leases.release_lease(&Self::lease_name(route), self.holder).await
        {
            tracing::warn!(sink = %route.name, error = %e, "could not release the SIEM lease");
        }
    }

    /// One round of forwarding for `route`: under its lease, one batch for each tenant with
    /// records past the sink's cursor, sent in `seq` order; the cursor moves only after the
    /// sink took the batch. Stops at the first failure, which is recorded.
    pub async fn step(&self, route: &SiemRoute, state: &mut Forwarder) -> Result<Step> {
        if !self.keep_lease(route, state).await? {
            return Ok(Step::NotLeader);
        }
        if !state.registered {
            if self.repos.siem.register_siem_sink(&route.name, route.from_latest, self.ports.clock.now()).await? {
                tracing::info!(sink = %route.name, from_latest = route.from_latest, "new SIEM sink registered");
            }
            state.registered = true;
        }
        let backlog = self.repos.siem.siem_backlog(&route.name).await?;
        let mut progressed = false;
        for tenant in backlog {
            if !self.keep_lease(route, state).await? {
                return Ok(Step::NotLeader);
            }
            let scan = AuditScan { order: SeqOrder::Asc, after_seq: Some(tenant.cursor), limit: self.settings.batch };
            let records = self.repos.audit.scan_audit(tenant.tenant_id, &AuditFilter::default(), scan).await?;
            let Some(last) = records.last().map(|r| r.seq) else { continue };
            let wanted: Vec<AuditRecord> = records.into_iter().filter(|r| route.filter.matches(r)).collect();
            if !wanted.is_empty()
                && let Err(e) = route.sink.send(&wanted).await
            {
                state.failures = state.failures.saturating_add(1);
                let error = e.to_string();
                tracing::warn!(sink = %route.name, tenant = %tenant.tenant_id, %error, records = wanted.len(),
                    "SIEM delivery failed; it will be retried");
                let count = wanted.len() as u64;
                self.repos.siem.record_siem_failure(&route.name, count, &error, self.ports.clock.now()).await?;
                return Ok(Step::Failed);
            }
            state.failures = 0;
            let now = self.ports.clock.now();
            self.repos.siem.advance_siem_cursor(&route.name, tenant.tenant_id, last, wanted.len() as u64, now).await?;
            progressed = true;
        }
        Ok(if progressed { Step::Progressed } else { Step::Idle })
    }
}

#[cfg(test)]
mod tests;
