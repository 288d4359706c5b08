//! Shadow-agent discovery (spec 4.5): ingesting what gateways, proxies and log sources
//! see, clustering the unattributed activity into candidates, and confirming (registering)
//! or dismissing them.
//!
//! **Ingest.** Each event is validated and given a disposition: `attributed` when the
//! source names a registered agent of the tenant, or when it matches the fingerprint of a
//! confirmed candidate (then it belongs to that candidate's agent); `suppressed` when it
//! matches a dismissed candidate; else `shadow`. Decided candidates are kept in process per
//! tenant (dropped on every decision, here and, through the bus, on every replica).
//!
//! **Clustering** is an asynchronous job stored like a training task: any replica's worker
//! claims it under a lease (`claim_clustering`), streams the tenant's shadow events page by
//! page into an `agentgov_detect::discovery::Aggregator` (`next_page` / `ClusterRun::absorb`,
//! CPU-bound: the caller runs it off the async threads), clusters them
//! (`ClusterRun::cluster`) leaving out events that match decided candidates, and stores the
//! candidates (`finish_clustering`): a cluster whose fingerprint matches a pending candidate
//! updates it (same id), a new one is created and published as `discovery.candidate`, and
//! pending candidates no cluster matches any more are removed.
//!
//! **Decisions.** Confirming claims the candidate first (pending → confirmed, with the id the
//! agent will have), then registers the agent through `AgentService`; if registration fails
//! the claim is undone. So two concurrent confirmations create exactly one agent.

#[cfg(test)]
mod tests;

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use agentgov_detect::classify::TypeClassifier;
use agentgov_detect::discovery::{self as detect, Aggregator, Clustering, Field, Observation, Params, Profile};
use serde::{Deserialize, Serialize};
use time::OffsetDateTime;
use time::format_description::well_known::Rfc3339;
use uuid::Uuid;

use super::agents::{AgentRequest, AgentService};
use super::audit::{AuditEvent, AuditLog, caller_actor};
use super::jobs::{self, ClaimedJob, KindSettings};
use super::snapshots::Snapshots;
use super::validate::{check_description, check_object, check_text};
use super::{Caller, Ports};
use crate::error::{DomainError, FieldError, Result, Violations};
use crate::events::{DISCOVERY_CANDIDATE, DISCOVERY_DECIDED};
use crate::ids::{AgentId, CandidateId, ClusterJobId, DiscoveryEventId, TenantId};
use crate::model::{
    Agent, AgentStatus, CandidateFilter, CandidateStatus, ClusterJob, ClusterOutcome, ClusterSummary,
    DiscoveryCandidate, DiscoveryEvent, EventDisposition, Fingerprint, FingerprintValue, JobEnd, JobStatus, JobView,
    JsonObject, Permission,
};
use crate::page::{Page, PageRequest};
use crate::ports::Event;

/// Most events in one batch.
pub const MAX_BATCH: usize = 10_000;
/// Most tool calls in one event.
pub const MAX_TOOL_CALLS: usize = 64;
/// Largest `attributes` object, as JSON.
pub const MAX_ATTRIBUTES_BYTES: usize = 16 * 1024;
/// How far in the future a timestamp may be (clock skew between a source and us).
const MAX_FUTURE: time::Duration = time::Duration::minutes(5);
/// Events read per page while clustering.
const SCAN_PAGE: i64 = 10_000;
/// How long a confirmation waits for the agent another request is registering.
const CONFIRM_WAIT: time::Duration = time::Duration::seconds(5);
/// Most look-ups while waiting (a bound even when the clock does not move).
const CONFIRM_POLLS: usize = 20_000;

/// Sample events kept with a candidate.
const SAMPLES: usize = detect::SAMPLES;

/// Tunables of discovery.
#[derive(Debug, Clone)]
pub struct DiscoverySettings {
    /// How long a tenant's decided candidates are kept without a change being announced.
    pub cache_ttl: Duration,
    /// A clustering job's lease; renewed as it reads.
    pub job_lease: Duration,
    /// A job gives up after this many attempts (a worker that died each time).
    pub job_max_attempts: i32,
    pub params: Params,
    /// Clustering reads the events received within this window (older ones are kept but no
    /// longer grouped), so its cost stays bounded as events accumulate.
    pub window: Duration,
}

impl Default for DiscoverySettings {
    fn default() -> Self {
        Self {
            cache_ttl: Duration::from_secs(60),
            job_lease: Duration::from_secs(60),
            job_max_attempts: 3,
            params: Params::default(),
            window: Duration::from_secs(30 * 86_400),
        }
    }
}

/// One observed event (`POST /discovery/ingest`, and each item of a batch).
#[derive(Debug, Clone, Default, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct IngestEvent {
    /// Who saw it (a gateway, proxy or log source): 1 to 100 characters.
    pub source: String,
    /// When it was seen (RFC 3339); default: when it is ingested. At most 5 minutes ahead.
    pub timestamp: Option<String>,
    /// The machine (host name), at most 255 characters.
    pub host: Option<String>,
    /// The client's IPv4 or IPv6 address.
    pub ip: Option<String>,
    /// The HTTP user agent, at most 1,024 characters.
    pub user_agent: Option<String>,
    /// The process command line, at most 1,024 characters.
    pub process: Option<String>,
    /// The URL or path called (e.g. an LLM API), at most 2,048 characters.
    pub endpoint: Option<String>,
    /// The model asked for, at most 200 characters.
    pub model: Option<String>,
    /// Names of the tools the call used; at most 64, each 1 to 200 characters.
    #[serde(default)]
    pub tool_calls: Vec<String>,
    /// A fingerprint (e.g. a hash) of the API key used, at most 200 characters; never the key.
    pub api_key_fingerprint: Option<String>,
    /// The registered agent, when the source knows it (a UUID).
    pub agent_id: Option<String>,
    /// Anything else the source reports; a JSON object of at most 16 KiB.
    #[serde(default)]
    #[cfg_attr(feature = "openapi", schema(value_type = Object))]
    pub attributes: JsonObject,
}

/// `POST /discovery/ingest/batch`.
#[derive(Debug, Clone, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct IngestBatch {
    /// 1 to 10,000 events, each as for `/discovery/ingest` (an `IngestEvent`); invalid ones
    /// (of any JSON value) are reported and the rest kept, so the list takes any value.
    #[cfg_attr(feature = "openapi", schema(value_type = Vec<Value>, min_items = 1, max_items = 10000))]
    pub events: Vec<serde_json::Value>,
}

/// An event that was not kept, and why.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ItemError {
    /// Its position in `events` (from 0).
    pub index: usize,
    pub errors: Vec<FieldError>,
}

/// The answer of `POST /discovery/ingest/batch`.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct IngestReport {
    /// Events stored.
    pub accepted: usize,
    /// Events refused (listed in `errors`).
    pub rejected: usize,
    /// Of those stored: attributed to a registered agent, suppressed by a dismissed
    /// candidate, or shadow activity for clustering.
    pub attributed: usize,
    pub suppressed: usize,
    pub shadow: usize,
    pub errors: Vec<ItemError>,
}

/// Overrides when confirming a candidate (each defaults to the suggestion).
#[derive(Debug, Clone, Default, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct ConfirmRequest {
    #[cfg_attr(
        feature = "openapi",
        schema(
            min_length = 1,
            max_length = 200,
            pattern = r"^[^\u0000-\u001f\u007f-\u009f]*[^\s\u0000-\u001f\u007f-\u009f][^\u0000-\u001f\u007f-\u009f]*$"
        )
    )]
    pub name: Option<String>,
    #[serde(rename = "type")]
    #[cfg_attr(
        feature = "openapi",
        schema(
            min_length = 1,
            max_length = 50,
            pattern = r"^[^\u0000-\u001f\u007f-\u009f]*[^\s\u0000-\u001f\u007f-\u009f][^\u0000-\u001f\u007f-\u009f]*$"
        )
    )]
    pub agent_type: Option<String>,
    #[cfg_attr(feature = "openapi", schema(schema_with = crate::services::agents::capabilities_schema, nullable))]
    pub capabilities: Option<Vec<String>>,
    #[cfg_attr(
        feature = "openapi",
        schema(max_length = 2000, pattern = r"^[^\u0000-\u0008\u000b-\u001f\u007f-\u009f]*$")
    )]
    pub description: Option<String>,
}

/// `POST /discovery/candidates/{id}/dismiss`.
#[derive(Debug, Clone, Default, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct DismissRequest {
    /// Why (at most 1,000 characters).
    #[cfg_attr(
        feature = "openapi",
        schema(max_length = 1000, pattern = r"^[^\u0000-\u0008\u000b-\u001f\u007f-\u009f]*$")
    )]
    pub reason: Option<String>,
}

/// The answer of a confirmation: the agent, and whether this request registered it.
#[derive(Debug, Clone)]
pub struct Confirmed {
    pub agent: Agent,
    /// `false` when the candidate had been confirmed before (the same agent is answered).
    pub created: bool,
}

/// `GET /discovery/candidates` query.
#[derive(Debug, Clone, Default, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::IntoParams))]
#[cfg_attr(feature = "openapi", into_params(parameter_in = Query))]
pub struct CandidateListParams {
    /// `pending`, `confirmed` or `dismissed`.
    pub status: Option<String>,
}

/// A decided candidate's fingerprint, for matching events as they arrive.
struct Decided {
    id: CandidateId,
    status: CandidateStatus,
    agent_id: Option<AgentId>,
    profile: Profile,
}

super::ports::repos!(Repos { discovery: DiscoveryRepo, agents: AgentRepo, jobs: JobQueue });
#[derive(Clone)]
pub struct DiscoveryService {
    inner: Arc<Inner>,
}

struct Inner {
    repos: Repos,
    ports: Ports,
    log: AuditLog,
    agents: AgentService,
    settings: DiscoverySettings,
    decided: Snapshots<TenantId, Arc<Vec<Decided>>>,
    classifier: TypeClassifier,
    wake: futures::channel::mpsc::Sender<()>,
}

/// A claimed clustering job, read (`absorb`) and clustered (`cluster`) off the async
/// threads.
pub struct ClusterRun {
    pub job: ClusterJob,
    token: Uuid,
    aggregator: Mutex<Aggregator>,
    /// Where reading stopped.
    after: Mutex<Option<DiscoveryEventId>>,
    exclude: Vec<Profile>,
    params: Params,
    started: Instant,
}

impl ClusterRun {
    /// Adds a page of events to the aggregate (CPU-bound).
    pub fn absorb(&self, events: &[DiscoveryEvent]) {
        let mut agg = self.aggregator.lock().unwrap_or_else(|e| e.into_inner());
        for e in events {
            let agent = e.agent_id.map(|a| a.to_string());
            agg.add(&observation(e, agent.as_deref()), e.observed_at.unix_timestamp(), e.id.0.as_u128());
        }
    }

    /// Clusters what was read (CPU-bound).
    pub fn cluster(&self) -> Clustering {
        let agg = self.aggregator.lock().unwrap_or_else(|e| e.into_inner());
        detect::cluster(&agg, &self.params, &self.exclude)
    }

    /// Events read so far.
    pub fn events(&self) -> u64 {
        self.aggregator.lock().unwrap_or_else(|e| e.into_inner()).events()
    }
}

fn observation<'a>(e: &'a DiscoveryEvent, agent: Option<&'a str>) -> Observation<'a> {
    Observation {
        source: &e.source,
        host: e.host.as_deref(),
        ip: e.ip.as_deref(),
        user_agent: e.user_agent.as_deref(),
        process: e.process.as_deref(),
        endpoint: e.endpoint.as_deref(),
        model: e.model.as_deref(),
        tool_calls: &e.tool_calls,
        api_key_fingerprint: e.api_key_fingerprint.as_deref(),
        agent_id: agent,
    }
}

/// A candidate's fingerprint as the API shows it.
fn fingerprint_of(profile: &Profile) -> Fingerprint {
    Fingerprint(
        Field::ALL
            .iter()
            .filter(|f| !profile.get(**f).is_empty())
            .map(|f| {
                let values =
                    profile.get(*f).iter().map(|(v, share)| FingerprintValue { value: v.clone(), share: *share });
                (f.name().to_owned(), values.collect())
            })
            .collect(),
    )
}

/// A stored fingerprint as a profile to match against.
fn profile_of(c: &DiscoveryCandidate) -> Profile {
    let mut p = Profile { events: c.event_count.max(0) as u64, ..Profile::default() };
    for (name, values) in &c.fingerprint.0 {
        if let Some(field) = Field::parse(name) {
            p.set(field, values.iter().map(|v| (v.value.clone(), v.share)).collect());
        }
    }
    p
}

/// The field a serde error names (`unknown field `x``, `missing field `x``), if any.
fn named_field(message: &str) -> Option<String> {
    ["unknown field `", "missing field `"]
        .iter()
        .find_map(|p| message.strip_prefix(p))
        .and_then(|rest| rest.split_once('`'))
        .map(|(name, _)| name.to_owned())
}

fn opt_text(v: &mut Violations, field: &str, value: Option<&str>, max: usize) {
    if let Some(value) = value {
        check_text(v, field, value, max);
    }
}

fn utc(at: OffsetDateTime) -> OffsetDateTime {
    at.to_offset(time::UtcOffset::UTC)
}

impl DiscoveryService {
    pub fn new(
        ports: Ports,
        repos: Repos,
        log: AuditLog,
        agents: AgentService,
        settings: DiscoverySettings,
        wake: futures::channel::mpsc::Sender<()>,
    ) -> Self {
        let decided = Snapshots::new(settings.cache_ttl, 10_000);
        let classifier = TypeClassifier::builtin();
        Self { inner: Arc::new(Inner { ports, repos, log, agents, settings, decided, classifier, wake }) }
    }

    fn ports(&self) -> &Ports {
        &self.inner.ports
    }

    fn repos(&self) -> &Repos {
        &self.inner.repos
    }

    /// A bus event from any replica: a decision drops the tenant's decided candidates.
    pub fn on_event(&self, event: &Event) {
        if event.event_type == DISCOVERY_DECIDED {
            self.inner.decided.invalidate(&event.tenant_id);
        }
    }

    /// Drops every tenant's decided candidates (after missed announcements).
    pub fn forget_decided(&self) {
        self.inner.decided.invalidate_all();
    }

    /// The tenant's decided candidates: kept in process, else loaded.
    async fn decided(&self, tenant: TenantId) -> Result<Arc<Vec<Decided>>> {
        if let Some(d) = self.inner.decided.get(&tenant) {
            return Ok(d);
        }
        let generation = self.inner.decided.generation();
        let decided: Vec<Decided> = self
            .repos()
            .discovery
            .decided_candidates(tenant)
            .await?
            .into_iter()
            .map(|c| Decided { id: c.id, status: c.status, agent_id: c.agent_id, profile: profile_of(&c) })
            .collect();
        let decided = Arc::new(decided);
        self.inner.decided.insert(tenant, decided.clone(), generation);
        Ok(decided)
    }

    /// Validates one event into the record to store (disposition still `shadow`).
    fn parse_event(&self, tenant: TenantId, raw: IngestEvent, now: OffsetDateTime) -> Result<DiscoveryEvent> {
        let mut v = Violations::new();
        check_text(&mut v, "source", &raw.source, 100);
        let observed_at = match raw.timestamp.as_deref() {
            None => now,
            Some(t) => match OffsetDateTime::parse(t, &Rfc3339) {
                Ok(at) if at > now + MAX_FUTURE => {
                    v.add("timestamp", "must not be more than 5 minutes in the future");
                    now
                }
                Ok(at) => utc(at),
                Err(_) => {
                    v.add("timestamp", "must be an RFC 3339 date-time, e.g. 2026-11-23T10:00:00Z");
                    now
                }
            },
        };
        opt_text(&mut v, "host", raw.host.as_deref(), 255);
        if let Some(ip) = raw.ip.as_deref()
            && !detect::normalize::is_ip(ip)
        {
            v.add("ip", "must be an IPv4 or IPv6 address");
        }
        opt_text(&mut v, "user_agent", raw.user_agent.as_deref(), 1024);
        opt_text(&mut v, "process", raw.process.as_deref(), 1024);
        opt_text(&mut v, "endpoint", raw.endpoint.as_deref(), 2048);
        opt_text(&mut v, "model", raw.model.as_deref(), 200);
        if raw.tool_calls.len() > MAX_TOOL_CALLS {
            v.add("tool_calls", "at most 64 tool calls");
        }
        for (i, t) in raw.tool_calls.iter().enumerate().take(MAX_TOOL_CALLS) {
            check_text(&mut v, &format!("tool_calls[{i}]"), t, 200);
        }
        if let Some(fp) = raw.api_key_fingerprint.as_deref() {
            check_text(&mut v, "api_key_fingerprint", fp, 200);
            if !agentgov_detect::guard::leak::secrets(fp).is_empty() {
                v.add(
                    "api_key_fingerprint",
                    "looks like a secret: send a fingerprint (e.g. a hash) of the key, never the key",
                );
            }
        }
        let agent_id = match raw.agent_id.as_deref().map(str::parse::<AgentId>) {
            None => None,
            Some(Ok(id)) => Some(id),
            Some(Err(_)) => {
                v.add("agent_id", "must be a UUID");
                None
            }
        };
        check_object(&mut v, "attributes", &raw.attributes, MAX_ATTRIBUTES_BYTES);
        let observed =
            [&raw.host, &raw.ip, &raw.user_agent, &raw.process, &raw.endpoint, &raw.model, &raw.api_key_fingerprint]
                .iter()
                .any(|f| f.is_some())
                || !raw.tool_calls.is_empty()
                || agent_id.is_some();
        if !observed {
            v.add("host", "an event must carry at least one observed attribute (host, ip, user_agent, process, endpoint, model, tool_calls, api_key_fingerprint or agent_id)");
        }
        v.into_result()?;
        let trim = |s: Option<String>| s.map(|s| s.trim().to_owned());
        Ok(DiscoveryEvent {
            id: DiscoveryEventId(self.ports().ids.new_id()),
            tenant_id: tenant,
            source: raw.source.trim().to_owned(),
            observed_at,
            received_at: now,
            host: trim(raw.host),
            ip: trim(raw.ip),
            user_agent: trim(raw.user_agent),
            process: trim(raw.process),
            endpoint: trim(raw.endpoint),
            model: trim(raw.model),
            tool_calls: raw.tool_calls.into_iter().map(|t| t.trim().to_owned()).collect(),
            api_key_fingerprint: trim(raw.api_key_fingerprint),
            agent_id,
            attributes: raw.attributes,
            disposition: EventDisposition::Shadow,
            attributed_agent_id: None,
            candidate_id: None,
        })
    }

    /// Sets each event's disposition: the registered agent it names, else the decided
    /// candidate it matches, else shadow.
    async fn attribute(&self, tenant: TenantId, events: &mut [DiscoveryEvent]) -> Result<()> {
        let named: Vec<AgentId> =
            events.iter().filter_map(|e| e.agent_id).collect::<HashSet<_>>().into_iter().collect();
        let registered: HashSet<AgentId> = if named.is_empty() {
            HashSet::new()
        } else {
            self.repos().agents.get_agents(tenant, &named).await?.into_iter().map(|a| a.id).collect()
        };
        let decided = self.decided(tenant).await?;
        let min = self.inner.settings.params.min_similarity;
        for e in events.iter_mut() {
            if let Some(agent) = e.agent_id.filter(|a| registered.contains(a)) {
                e.disposition = EventDisposition::Attributed;
                e.attributed_agent_id = Some(agent);
                continue;
            }
            if decided.is_empty() {
                continue;
            }
            let agent = e.agent_id.map(|a| a.to_string());
            let profile = observation(e, agent.as_deref()).profile();
            let best = decided
                .iter()
                .map(|d| (d, profile.similarity(&d.profile)))
                .filter(|(_, sim)| *sim >= min)
                .max_by(|a, b| a.1.total_cmp(&b.1));
            if let Some((d, _)) = best {
                e.candidate_id = Some(d.id);
                match d.status {
                    CandidateStatus::Confirmed => {
                        e.disposition = EventDisposition::Attributed;
                        e.attributed_agent_id = d.agent_id;
                    }
                    _ => e.disposition = EventDisposition::Suppressed,
                }
            }
        }
        Ok(())
    }

    /// `POST /discovery/ingest`: stores one event (202).
    pub async fn ingest(&self, caller: &Caller, raw: IngestEvent) -> Result<DiscoveryEvent> {
        caller.require_permission(Permission::DiscoveryWrite)?;
        let tenant = caller.tenant_id();
        let mut events = vec![self.parse_event(tenant, raw, self.ports().clock.now())?];
        self.attribute(tenant, &mut events).await?;
        self.repos().discovery.insert_discovery_events(&events).await?;
        events.pop().ok_or_else(|| DomainError::internal("one event was stored"))
    }

    /// `POST /discovery/ingest/batch`: stores the valid events, reports the others; 422
    /// when none is valid.
    pub async fn ingest_batch(&self, caller: &Caller, batch: IngestBatch) -> Result<IngestReport> {
        caller.require_permission(Permission::DiscoveryWrite)?;
        if batch.events.is_empty() || batch.events.len() > MAX_BATCH {
            return Err(DomainError::invalid("events", "must hold 1 to 10,000 events"));
        }
        let tenant = caller.tenant_id();
        let now = self.ports().clock.now();
        let mut errors = Vec::new();
        let mut events = Vec::with_capacity(batch.events.len());
        for (index, value) in batch.events.into_iter().enumerate() {
            let parsed = serde_json::from_value::<IngestEvent>(value)
                .map_err(|e| {
                    let message = e.to_string();
                    DomainError::invalid(named_field(&message).unwrap_or_default(), message)
                })
                .and_then(|raw| self.parse_event(tenant, raw, now));
            match parsed {
                Ok(event) => events.push(event),
                Err(DomainError::Validation(errs)) => errors.push(ItemError { index, errors: errs }),
                Err(other) => return Err(other),
            }
        }
        if events.is_empty() {
            let all = errors
                .into_iter()
                .flat_map(|item| {
                    item.errors.into_iter().map(move |e| {
                        let field = if e.field.is_empty() {
                            format!("events[{}]", item.index)
                        } else {
                            format!("events[{}].{}", item.index, e.field)
                        };
                        FieldError { field, ..e }
                    })
                })
                .take(100)
                .collect();
            return Err(DomainError::Validation(all));
        }
        self.attribute(tenant, &mut events).await?;
        self.repos().discovery.insert_discovery_events(&events).await?;
        let count = |d: EventDisposition| events.iter().filter(|e| e.disposition == d).count();
        Ok(IngestReport {
            accepted: events.len(),
            rejected: errors.len(),
            attributed: count(EventDisposition::Attributed),
            suppressed: count(EventDisposition::Suppressed),
            shadow: count(EventDisposition::Shadow),
            errors,
        })
    }

    /// `POST /discovery/cluster`: queues a clustering job (202); while one is queued or
    /// running, answers that one.
    pub async fn start_clustering(&self, caller: &Caller) -> Result<ClusterJob> {
        caller.require_permission(Permission::DiscoveryWrite)?;
        let tenant = caller.tenant_id();
        let repos = self.repos();
        if let Some(job) = jobs::active::<ClusterJob>(repos.jobs.as_ref(), tenant).await? {
            return Ok(job);
        }
        let job = ClusterJob {
            id: ClusterJobId(self.ports().ids.new_id()),
            tenant_id: tenant,
            requested_by: caller_actor(caller),
            status: JobStatus::Queued,
            progress: 0.0,
            error: None,
            summary: None,
            created_at: self.ports().clock.now(),
            started_at: None,
            finished_at: None,
            attempts: 0,
            lease: None,
        };
        match repos.jobs.enqueue_job(&job.to_job(), 1).await {
            Ok(()) => {}
            // Another request queued one meanwhile: answer it.
            Err(DomainError::Conflict(_)) => {
                return jobs::active::<ClusterJob>(repos.jobs.as_ref(), tenant)
                    .await?
                    .ok_or_else(|| DomainError::Conflict("a clustering job was just queued; try again".into()));
            }
            Err(e) => return Err(e),
        }
        let event = AuditEvent::new(tenant, caller_actor(caller), "discovery.cluster.requested")
            .action("cluster")
            .resource(format!("discovery/cluster/{}", job.id))
            .details(serde_json::json!({"job_id": job.id}));
        self.inner.log.record_after(event).await;
        let _ = self.inner.wake.clone().try_send(());
        Ok(job)
    }

    /// `GET /discovery/cluster/{id}`.
    pub async fn cluster_status(&self, caller: &Caller, id: ClusterJobId) -> Result<ClusterJob> {
        caller.require_permission(Permission::DiscoveryRead)?;
        jobs::get(self.repos().jobs.as_ref(), Some(caller.tenant_id()), id.0)
            .await?
            .ok_or_else(|| DomainError::not_found("clustering job", id))
    }

    /// `GET /discovery/candidates`: newest first.
    pub async fn list(
        &self,
        caller: &Caller,
        params: &CandidateListParams,
        limit: Option<i64>,
        cursor: Option<&str>,
    ) -> Result<Page<DiscoveryCandidate>> {
        caller.require_permission(Permission::DiscoveryRead)?;
        let mut v = Violations::new();
        let page = PageRequest::parse(limit, cursor).or_else(|e| v.absorb(e).map(|()| PageRequest::default()))?;
        let status = match params.status.as_deref() {
            None => None,
            Some(s) => {
                let parsed = CandidateStatus::parse(s);
                v.check(parsed.is_some(), "status", "must be pending, confirmed or dismissed");
                parsed
            }
        };
        v.into_result()?;
        self.repos().discovery.list_candidates(caller.tenant_id(), &CandidateFilter { status }, &page).await
    }

    /// `GET /discovery/candidates/{id}`.
    pub async fn get(&self, caller: &Caller, id: CandidateId) -> Result<DiscoveryCandidate> {
        caller.require_permission(Permission::DiscoveryRead)?;
        self.stored(caller.tenant_id(), id).await
    }

    async fn stored(&self, tenant: TenantId, id: CandidateId) -> Result<DiscoveryCandidate> {
        self.repos().discovery.get_candidate(tenant, id).await?.ok_or_else(|| DomainError::not_found("candidate", id))
    }

    /// `POST /discovery/candidates/{id}/confirm`: registers the candidate as an agent.
    /// Repeating it answers the same agent; a dismissed candidate is 409.
    pub async fn confirm(&self, caller: &Caller, id: CandidateId, req: ConfirmRequest) -> Result<Confirmed> {
        caller.require_permission(Permission::DiscoveryWrite)?;
        caller.require_permission(Permission::AgentsWrite)?;
        let tenant = caller.tenant_id();
        let candidate = self.stored(tenant, id).await?;
        match candidate.status {
            CandidateStatus::Pending => {}
            CandidateStatus::Confirmed => return self.already_confirmed(caller, &candidate).await,
            CandidateStatus::Dismissed => {
                return Err(DomainError::Conflict(format!("candidate {id} was dismissed; it cannot be confirmed")));
            }
        }
        let mut v = Violations::new();
        opt_text(&mut v, "name", req.name.as_deref(), 200);
        opt_text(&mut v, "type", req.agent_type.as_deref(), 50);
        if let Some(d) = req.description.as_deref() {
            check_description(&mut v, "description", d, 2000);
        }
        v.into_result()?;
        let now = self.ports().clock.now();
        let agent_id = AgentId(self.ports().ids.new_id());
        let mut claimed = candidate.clone();
        claimed.status = CandidateStatus::Confirmed;
        claimed.agent_id = Some(agent_id);
        claimed.decided_by = Some(caller_actor(caller));
        claimed.decided_at = Some(now);
        claimed.updated_at = now;
        if !self.repos().discovery.update_candidate(&claimed, CandidateStatus::Pending).await? {
            // Decided meanwhile by someone else: answer as if this request came second.
            let now_stored = self.stored(tenant, id).await?;
            return match now_stored.status {
                CandidateStatus::Confirmed => self.already_confirmed(caller, &now_stored).await,
                _ => Err(DomainError::Conflict(format!("candidate {id} was dismissed; it cannot be confirmed"))),
            };
        }
        let mut metadata = JsonObject::new();
        metadata.insert("discovered_from".into(), serde_json::json!(candidate.id));
        metadata.insert("discovery_event_count".into(), serde_json::json!(candidate.event_count));
        let request = AgentRequest {
            name: req.name.unwrap_or_else(|| candidate.suggested_name.clone()),
            agent_type: req.agent_type.unwrap_or_else(|| candidate.suggested_type.clone()),
            description: req
                .description
                .or_else(|| Some(format!("Discovered from {} observed events", candidate.event_count))),
            capabilities: req.capabilities.unwrap_or_else(|| candidate.capabilities.clone()),
            permissions: JsonObject::new(),
            metadata,
            status: Some(AgentStatus::Active),
        };
        let agent = match self.inner.agents.register_as(caller, agent_id, request).await {
            Ok(agent) => agent,
            Err(e) => {
                // Undo the claim so the candidate can be confirmed again (e.g. with another name).
                let mut undo = candidate.clone();
                undo.updated_at = self.ports().clock.now();
                if let Err(undo_err) = self.repos().discovery.update_candidate(&undo, CandidateStatus::Confirmed).await
                {
                    tracing::error!(candidate = %id, error = %undo_err, "could not undo a failed confirmation");
                }
                return Err(e);
            }
        };
        self.decided_changed(tenant).await;
        let event = AuditEvent::new(tenant, caller_actor(caller), "discovery.candidate.confirmed")
            .action("confirm")
            .resource(format!("discovery/candidates/{id}"))
            .details(serde_json::json!({
                "candidate_id": id, "agent_id": agent.id, "name": agent.name, "event_count": candidate.event_count,
            }));
        let mut event = event;
        event.agent_id = Some(agent.id.as_uuid());
        self.inner.log.record_after(event).await;
        Ok(Confirmed { agent, created: true })
    }

    /// The agent a confirmed candidate became. Another request may have claimed the
    /// candidate and still be registering its agent: wait for it (up to
    /// `CONFIRM_WAIT`), answering 409 only if the agent never appears or the claim is
    /// undone.
    async fn already_confirmed(&self, caller: &Caller, candidate: &DiscoveryCandidate) -> Result<Confirmed> {
        let tenant = caller.tenant_id();
        let deadline = self.ports().clock.now() + CONFIRM_WAIT;
        let mut current = candidate.clone();
        for _ in 0..CONFIRM_POLLS {
            let agent_id = match (current.status, current.agent_id) {
                (CandidateStatus::Confirmed, Some(agent_id)) => agent_id,
                (CandidateStatus::Dismissed, _) => {
                    return Err(DomainError::Conflict(format!(
                        "candidate {} was dismissed; it cannot be confirmed",
                        candidate.id
                    )));
                }
                _ => {
                    return Err(DomainError::Conflict(format!(
                        "candidate {} is being confirmed by another request that failed; try again",
                        candidate.id
                    )));
                }
            };
            match self.inner.agents.reported_agent(tenant, agent_id).await {
                Ok(agent) => return Ok(Confirmed { agent, created: false }),
                Err(DomainError::NotFound { .. }) => {}
                Err(e) => return Err(e),
            }
            if self.ports().clock.now() > deadline {
                break;
            }
            super::YieldNow(false).await;
            current = self.stored(tenant, candidate.id).await?;
        }
        Err(DomainError::Conflict(format!(
            "candidate {} was confirmed as agent {}, which does not exist (deleted since)",
            candidate.id,
            current.agent_id.map(|a| a.to_string()).unwrap_or_default()
        )))
    }

    /// `POST /discovery/candidates/{id}/dismiss`: future matching events are suppressed.
    /// Repeating it answers the candidate; a confirmed candidate is 409.
    pub async fn dismiss(&self, caller: &Caller, id: CandidateId, req: DismissRequest) -> Result<DiscoveryCandidate> {
        caller.require_permission(Permission::DiscoveryWrite)?;
        let tenant = caller.tenant_id();
        let mut v = Violations::new();
        if let Some(r) = req.reason.as_deref() {
            check_description(&mut v, "reason", r, 1000);
        }
        v.into_result()?;
        let candidate = self.stored(tenant, id).await?;
        match candidate.status {
            CandidateStatus::Pending => {}
            CandidateStatus::Dismissed => return Ok(candidate),
            CandidateStatus::Confirmed => {
                return Err(DomainError::Conflict(format!("candidate {id} was confirmed; it cannot be dismissed")));
            }
        }
        let now = self.ports().clock.now();
        let mut dismissed = candidate;
        dismissed.status = CandidateStatus::Dismissed;
        dismissed.reason = req.reason.map(|r| r.trim().to_owned()).filter(|r| !r.is_empty());
        dismissed.decided_by = Some(caller_actor(caller));
        dismissed.decided_at = Some(now);
        dismissed.updated_at = now;
        if !self.repos().discovery.update_candidate(&dismissed, CandidateStatus::Pending).await? {
            let now_stored = self.stored(tenant, id).await?;
            return match now_stored.status {
                CandidateStatus::Dismissed => Ok(now_stored),
                _ => Err(DomainError::Conflict(format!("candidate {id} was confirmed; it cannot be dismissed"))),
            };
        }
        self.decided_changed(tenant).await;
        let event = AuditEvent::new(tenant, caller_actor(caller), "discovery.candidate.dismissed")
            .action("dismiss")
            .resource(format!("discovery/candidates/{id}"))
            .details(serde_json::json!({"candidate_id": id, "reason": dismissed.reason}));
        self.inner.log.record_after(event).await;
        Ok(dismissed)
    }

    async fn decided_changed(&self, tenant: TenantId) {
        self.inner.decided.invalidate(&tenant);
        self.ports().announce(tenant, DISCOVERY_DECIDED, serde_json::json!({})).await;
    }

    /// How the job queue treats clusterings.
    pub(crate) fn job_settings(&self) -> KindSettings {
        let s = &self.inner.settings;
        KindSettings { lease: s.job_lease, max_attempts: s.job_max_attempts, keep_for: None }
    }

    /// Prepares a claimed clustering (of kind `clustering`): the window of shadow events to
    /// read and the decided candidates whose events are left out.
    pub async fn begin_clustering(&self, claimed: ClaimedJob) -> Result<ClusterRun> {
        let job = ClusterJob::from_job(claimed.job)?;
        let exclude = self.repos().discovery.decided_candidates(job.tenant_id).await?.iter().map(profile_of).collect();
        Ok(ClusterRun {
            job,
            token: claimed.token,
            aggregator: Mutex::new(Aggregator::new()),
            after: Mutex::new(Some(self.window_start(self.ports().clock.now()))),
            exclude,
            params: self.inner.settings.params,
            started: Instant::now(),
        })
    }

    /// The smallest event id of the window ending at `now`: ids are UUID v7, ordered by the
    /// time they were received.
    fn window_start(&self, now: OffsetDateTime) -> DiscoveryEventId {
        let start = now - self.inner.settings.window;
        let millis = u64::try_from(start.unix_timestamp_nanos() / 1_000_000).unwrap_or(0);
        DiscoveryEventId(uuid::Builder::from_unix_timestamp_millis(millis, &[0; 10]).into_uuid())
    }

    /// The next page of the job's shadow events (empty at the end); renews the lease.
    /// `Conflict` when the lease was lost.
    pub async fn next_page(&self, run: &ClusterRun) -> Result<Vec<DiscoveryEvent>> {
        let after = *run.after.lock().unwrap_or_else(|e| e.into_inner());
        let page = self.repos().discovery.scan_shadow_events(run.job.tenant_id, after, SCAN_PAGE).await?;
        if let Some(last) = page.last() {
            *run.after.lock().unwrap_or_else(|e| e.into_inner()) = Some(last.id);
        }
        // Reading is most of the work: progress moves from 0.05 towards 0.8 as pages arrive.
        let read = run.events() as f64 + page.len() as f64;
        let progress = 0.05 + 0.75 * (read / (read + 100_000.0));
        let until = self.ports().clock.now() + self.inner.settings.job_lease;
        self.repos().jobs.renew_job(run.job.id.0, run.token, progress, None, until).await?;
        Ok(page)
    }

    /// Stores what clustering found as candidates and completes the job.
    pub async fn finish_clustering(&self, run: &ClusterRun, clustering: Clustering) -> Result<()> {
        let tenant = run.job.tenant_id;
        let repos = self.repos();
        let now = self.ports().clock.now();
        let min = self.inner.settings.params.min_similarity;
        // Every pending candidate, to update instead of duplicating.
        let mut pending = Vec::new();
        let mut page = PageRequest::first(500);
        loop {
            let found = repos
                .discovery
                .list_candidates(tenant, &CandidateFilter { status: Some(CandidateStatus::Pending) }, &page)
                .await?;
            pending.extend(found.items);
            match found.next_cursor {
                Some(c) => page = PageRequest::parse(Some(500), Some(&c))?,
                None => break,
            }
        }
        let profiles: Vec<Profile> = pending.iter().map(profile_of).collect();
        let mut taken = vec![false; pending.len()];
        // Samples of every cluster, fetched at once.
        let sample_ids: Vec<DiscoveryEventId> = clustering
            .clusters
            .iter()
            .flat_map(|c| c.samples.iter().map(|r| DiscoveryEventId(Uuid::from_u128(*r))))
            .collect();
        let samples: HashMap<DiscoveryEventId, DiscoveryEvent> =
            repos.discovery.get_discovery_events(tenant, &sample_ids).await?.into_iter().map(|e| (e.id, e)).collect();
        let mut upserts = Vec::with_capacity(clustering.clusters.len());
        let mut updated = 0i64;
        for cluster in &clustering.clusters {
            let best = profiles
                .iter()
                .enumerate()
                .filter(|(i, _)| !taken[*i])
                .map(|(i, p)| (i, p.similarity(&cluster.profile)))
                .filter(|(_, sim)| *sim >= min)
                .max_by(|a, b| a.1.total_cmp(&b.1));
            let existing = best.map(|(i, _)| {
                taken[i] = true;
                &pending[i]
            });
            if existing.is_some() {
                updated += 1;
            }
            let suggestion = detect::infer::suggest(&cluster.profile);
            let prediction = self.inner.classifier.predict(
                &suggestion.name,
                Some(&suggestion.description),
                &suggestion.capabilities,
            );
            let suggested_type = if prediction.label == "other" { "llm" } else { prediction.label };
            let at = |secs: i64| OffsetDateTime::from_unix_timestamp(secs).unwrap_or(now);
            upserts.push(DiscoveryCandidate {
                id: existing.map_or_else(|| CandidateId(self.ports().ids.new_id()), |c| c.id),
                tenant_id: tenant,
                status: CandidateStatus::Pending,
                suggested_name: suggestion.name,
                suggested_type: suggested_type.to_owned(),
                capabilities: suggestion.capabilities,
                confidence: detect::infer::confidence(cluster),
                event_count: cluster.events as i64,
                first_seen: at(cluster.first),
                last_seen: at(cluster.last),
                fingerprint: fingerprint_of(&cluster.profile),
                sample_events: cluster
                    .samples
                    .iter()
                    .filter_map(|r| samples.get(&DiscoveryEventId(Uuid::from_u128(*r))).cloned())
                    .take(SAMPLES)
                    .collect(),
                agent_id: None,
                reason: None,
                decided_by: None,
                decided_at: None,
                job_id: Some(run.job.id),
                created_at: existing.map_or(now, |c| c.created_at),
                updated_at: now,
            });
        }
        let removed: Vec<CandidateId> = pending.iter().zip(&taken).filter(|(_, t)| !**t).map(|(c, _)| c.id).collect();
        let summary = ClusterSummary {
            events: (run.events() as i64) - clustering.excluded_events as i64,
            noise_events: clustering.noise_events as i64,
            matched_decided: clustering.excluded_events as i64,
            candidates_created: upserts.len() as i64 - updated,
            candidates_updated: updated,
            candidates_removed: removed.len() as i64,
            duration_ms: run.started.elapsed().as_millis().min(i64::MAX as u128) as i64,
        };
        let outcome = ClusterOutcome { upserts, removed, summary };
        let completed = repos.discovery.complete_cluster_job(run.job.id, run.token, now, &outcome).await;
        // Another worker holds it now: keep nothing.
        let Some(inserted) = jobs::unless_lost(completed)? else { return Ok(()) };
        let inserted: HashSet<CandidateId> = inserted.into_iter().collect();
        for c in outcome.upserts.iter().filter(|c| inserted.contains(&c.id)) {
            let data = serde_json::json!({
                "candidate_id": c.id, "suggested_name": c.suggested_name, "suggested_type": c.suggested_type,
                "capabilities": c.capabilities, "confidence": c.confidence, "event_count": c.event_count,
                "first_seen": c.first_seen.format(&Rfc3339).ok(), "last_seen": c.last_seen.format(&Rfc3339).ok(),
            });
            self.ports().announce(tenant, DISCOVERY_CANDIDATE, data).await;
        }
        let event = AuditEvent::new(tenant, run.job.requested_by.clone(), "discovery.clustered")
            .action("cluster")
            .resource(format!("discovery/cluster/{}", run.job.id))
            .details_of(&outcome.summary);
        self.inner.log.record_after(event).await;
        Ok(())
    }

    /// Marks the job failed (the worker could not finish it).
    pub async fn fail_clustering(&self, run: &ClusterRun, error: &str) -> Result<()> {
        let end = JobEnd::failed(self.ports().clock.now(), error);
        jobs::unless_lost(self.repos().jobs.finish_job(run.job.id.0, run.token, &end).await).map(drop)
    }
}
