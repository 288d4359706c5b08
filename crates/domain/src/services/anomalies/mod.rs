//! Anomaly reports (spec 4.8): filed by agents, SDKs and people (`POST /anomalies/report`),
//! listed and counted, and labelled by analysts (`PUT /anomalies/{id}`), which is the
//! feedback the detector learns from. Every report is audited and published as
//! `anomaly.detected`.

mod detector;

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

pub(crate) use detector::CheckScore;
use detector::DetectorState;
pub use detector::{DetectorMetrics, DetectorRun, DetectorStatus, DetectorTrainRequest, DetectorTrained, warm_up};

use time::OffsetDateTime;

use super::agents::AgentService;
use super::audit::{AuditEvent, AuditLog, caller_actor};
use super::validate::{check_nonblank_description, parse_time};
use super::{Caller, Ports};
use crate::error::{DomainError, Result, Violations};
use crate::events::ANOMALY_DETECTED;
use crate::ids::{AgentId, AnomalyId};
use crate::model::{
    Actor, AnomalyFilter, AnomalyReport, AnomalySource, AnomalyStatus, AnomalyType, JsonObject, Permission, Role,
    Severity,
};
use crate::page::{Page, PageRequest};

const MAX_DESCRIPTION_LEN: usize = 2000;
const MAX_EVIDENCE_BYTES: usize = 64 * 1024;
/// The longest window `/anomalies/stats` counts over.
const MAX_STATS_DAYS: i64 = 90;
/// Agents `/anomalies/stats` names in `top_agents`.
const TOP_AGENTS: usize = 10;

/// The `source` a client may report, as the document states it.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[cfg_attr(feature = "openapi", schema(rename_all = "snake_case"))]
#[expect(dead_code, reason = "never built: it only names the values in the OpenAPI document")]
enum ReportSource {
    Manual,
    Guard,
}

/// `POST /anomalies/report`.
#[derive(Debug, Clone, serde::Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct NewAnomalyReport {
    /// The agent it is about (a UUID of the caller's tenant).
    #[cfg_attr(feature = "openapi", schema(format = Uuid))]
    pub agent_id: String,
    #[serde(rename = "type")]
    pub anomaly_type: AnomalyType,
    pub severity: Severity,
    /// From 0 to 1; by default from the severity (0.25, 0.5, 0.75, 0.95).
    #[cfg_attr(feature = "openapi", schema(minimum = 0, maximum = 1))]
    pub score: Option<f64>,
    /// What was seen; 1 to 2,000 characters.
    #[cfg_attr(
        feature = "openapi",
        schema(
            max_length = 2000,
            pattern = r"^[^\u0000-\u0008\u000b-\u001f\u007f-\u009f]*[^\s\u0000-\u001f\u007f-\u009f][^\u0000-\u0008\u000b-\u001f\u007f-\u009f]*$"
        )
    )]
    pub description: String,
    /// What backs it (events, features); at most 64 KiB of JSON.
    #[serde(default)]
    #[cfg_attr(feature = "openapi", schema(value_type = Object))]
    pub evidence: JsonObject,
    /// `manual` (default) or `guard`; `detector` is the server's own.
    #[cfg_attr(feature = "openapi", schema(value_type = Option<ReportSource>))]
    pub source: Option<AnomalySource>,
}

/// `PUT /anomalies/{id}`.
#[derive(Debug, Clone, serde::Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct AnomalyUpdate {
    /// `open`, `acknowledged`, `resolved` (a real anomaly, dealt with) or `false_positive`.
    pub status: AnomalyStatus,
}

/// The filters of `GET /anomalies` and `GET /anomalies/stats`, as sent.
#[derive(Debug, Clone, Default, serde::Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::IntoParams))]
#[serde(deny_unknown_fields)]
#[cfg_attr(feature = "openapi", into_params(parameter_in = Query))]
pub struct AnomalyParams {
    /// Page size, 1 to 500 (default 50); lists only.
    #[cfg_attr(feature = "openapi", param(minimum = 1, maximum = 500))]
    pub limit: Option<i64>,
    /// `next_cursor` of the previous page; lists only.
    #[cfg_attr(feature = "openapi", param(pattern = r"^([A-Za-z0-9_-]{21}[AQgw])?$"))]
    pub cursor: Option<String>,
    #[cfg_attr(feature = "openapi", param(format = Uuid))]
    pub agent_id: Option<String>,
    /// `unusual_action`, `unusual_resource`, `rate_spike`, `off_hours`, `denied_burst`,
    /// `guard_attack` or `manual`.
    #[serde(rename = "type")]
    #[cfg_attr(feature = "openapi", param(rename = "type", value_type = Option<crate::model::anomaly::AnomalyType>))]
    pub anomaly_type: Option<String>,
    /// `low`, `medium`, `high` or `critical`.
    #[cfg_attr(feature = "openapi", param(value_type = Option<crate::model::anomaly::Severity>))]
    pub severity: Option<String>,
    /// `open`, `acknowledged`, `resolved` or `false_positive`.
    #[cfg_attr(feature = "openapi", param(value_type = Option<crate::model::anomaly::AnomalyStatus>))]
    pub status: Option<String>,
    /// Reports created at or after this instant (RFC 3339). Stats: default 24 hours
    /// before `to`.
    #[cfg_attr(feature = "openapi", param(format = DateTime))]
    pub from: Option<String>,
    /// Reports created before this instant (RFC 3339). Stats: default now.
    #[cfg_attr(feature = "openapi", param(format = DateTime))]
    pub to: Option<String>,
    /// Stats only: `hour` (default) or `day`.
    #[cfg_attr(feature = "openapi", param(value_type = Option<Bucket>))]
    pub bucket: Option<String>,
}

impl AnomalyParams {
    fn filter(&self, v: &mut Violations) -> AnomalyFilter {
        // Read by the statistics only, but checked everywhere, as documented.
        if self.bucket.as_deref().is_some_and(|b| b != "hour" && b != "day") {
            v.add("bucket", "must be hour or day");
        }
        let agent_id = self.agent_id.as_deref().and_then(|a| {
            let parsed = a.trim().parse::<AgentId>().ok();
            v.check(parsed.is_some(), "agent_id", "must be a UUID");
            parsed
        });
        fn one_of<T: Copy>(
            v: &mut Violations,
            field: &str,
            text: Option<&str>,
            parse: fn(&str) -> Option<T>,
            all: &[T],
            name: fn(T) -> &'static str,
        ) -> Option<T> {
            let text = text?;
            let parsed = parse(text);
            if parsed.is_none() {
                let names: Vec<&str> = all.iter().map(|t| name(*t)).collect();
                v.add(field, format!("must be one of {}", names.join(", ")));
            }
            parsed
        }
        AnomalyFilter {
            agent_id,
            anomaly_type: one_of(
                v,
                "type",
                self.anomaly_type.as_deref(),
                AnomalyType::parse,
                AnomalyType::ALL,
                AnomalyType::as_str,
            ),
            severity: one_of(v, "severity", self.severity.as_deref(), Severity::parse, Severity::ALL, Severity::as_str),
            status: one_of(
                v,
                "status",
                self.status.as_deref(),
                AnomalyStatus::parse,
                AnomalyStatus::ALL,
                AnomalyStatus::as_str,
            ),
            from: parse_time(v, "from", self.from.as_deref()),
            to: parse_time(v, "to", self.to.as_deref()),
        }
    }
}

/// The width of a `series` bucket.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum Bucket {
    Hour,
    Day,
}

impl Bucket {
    fn hours(self) -> i64 {
        match self {
            Bucket::Hour => 1,
            Bucket::Day => 24,
        }
    }
}

/// One agent's count in `top_agents`.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct AgentCount {
    pub agent_id: AgentId,
    pub count: i64,
}

/// One bucket of `series`.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct SeriesPoint {
    /// The bucket's first instant.
    #[serde(with = "time::serde::rfc3339")]
    pub start: OffsetDateTime,
    pub count: i64,
    /// Per severity, every severity named.
    pub by_severity: BTreeMap<&'static str, i64>,
}

/// `GET /anomalies/stats`.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct AnomalyStats {
    #[serde(with = "time::serde::rfc3339")]
    pub from: OffsetDateTime,
    #[serde(with = "time::serde::rfc3339")]
    pub to: OffsetDateTime,
    pub bucket: Bucket,
    pub total: i64,
    /// Every severity, type and status named, with 0 for none.
    pub by_severity: BTreeMap<&'static str, i64>,
    pub by_type: BTreeMap<&'static str, i64>,
    pub by_status: BTreeMap<&'static str, i64>,
    /// The agents with the most reports (at most 10), most first.
    pub top_agents: Vec<AgentCount>,
    /// Every bucket from the one holding `from` to the one holding the instant before
    /// `to`, oldest first, empty ones included.
    pub series: Vec<SeriesPoint>,
}

fn zeros<T: Copy>(all: &[T], name: fn(T) -> &'static str) -> BTreeMap<&'static str, i64> {
    all.iter().map(|t| (name(*t), 0)).collect()
}

super::ports::repos!(Repos { anomalies: AnomalyRepo, audit: AuditRepo, jobs: JobQueue, models: ModelRegistry });
#[derive(Clone)]
pub struct AnomalyService {
    repos: Repos,
    ports: Ports,
    audit: AuditLog,
    agents: AgentService,
    detector: Arc<DetectorState>,
}

fn not_found(id: AnomalyId) -> DomainError {
    DomainError::not_found("anomaly report", id)
}

impl AnomalyService {
    pub(crate) fn new(
        ports: Ports,
        repos: Repos,
        audit: AuditLog,
        agents: AgentService,
        wake: futures::channel::mpsc::Sender<()>,
    ) -> Self {
        Self { ports, repos, audit, agents, detector: Arc::new(DetectorState::new(wake)) }
    }

    /// `POST /anomalies/report` (`anomalies:write`).
    pub async fn report(&self, caller: &Caller, req: NewAnomalyReport) -> Result<AnomalyReport> {
        caller.require_permission(Permission::AnomaliesWrite)?;
        let mut v = Violations::new();
        let agent_id = req.agent_id.trim().parse::<AgentId>().ok();
        v.check(agent_id.is_some(), "agent_id", "must be a UUID");
        if let Some(score) = req.score {
            v.check(score.is_finite() && (0.0..=1.0).contains(&score), "score", "must be between 0 and 1");
        }
        check_nonblank_description(&mut v, "description", &req.description, MAX_DESCRIPTION_LEN);
        super::validate::check_object(&mut v, "evidence", &req.evidence, MAX_EVIDENCE_BYTES);
        if req.source == Some(AnomalySource::Detector) {
            v.add("source", "`detector` is the server's own; report as `manual` or `guard`");
        }
        v.into_result()?;
        let agent_id = agent_id.ok_or_else(|| DomainError::invalid("agent_id", "must be a UUID"))?;
        let tenant = caller.tenant_id();
        let agent = self.agents.reported_agent(tenant, agent_id).await?;
        let now = self.ports.clock.now();
        let report = AnomalyReport {
            id: AnomalyId(self.ports.ids.new_id()),
            tenant_id: tenant,
            agent_id: agent.id,
            anomaly_type: req.anomaly_type,
            severity: req.severity,
            score: req.score.unwrap_or(match req.severity {
                Severity::Low => 0.25,
                Severity::Medium => 0.5,
                Severity::High => 0.75,
                Severity::Critical => 0.95,
            }),
            description: req.description.trim().to_owned(),
            evidence: req.evidence,
            source: req.source.unwrap_or(AnomalySource::Manual),
            status: AnomalyStatus::Open,
            model_version: None,
            reported_by: caller_actor(caller),
            status_changed_by: None,
            status_changed_at: None,
            created_at: now,
            updated_at: now,
        };
        self.file(report, caller_actor(caller)).await
    }

    /// Stores a new report, audits it (`anomaly.reported`, by `actor`) and publishes it.
    async fn file(&self, report: AnomalyReport, actor: Actor) -> Result<AnomalyReport> {
        let tenant = report.tenant_id;
        self.repos.anomalies.insert_anomaly(&report).await?;
        let mut event = AuditEvent::new(tenant, actor, "anomaly.reported")
            .action("report")
            .resource(format!("anomalies/{}", report.id))
            .details(serde_json::json!({
                "anomaly_id": report.id, "type": report.anomaly_type, "severity": report.severity,
                "score": report.score, "source": report.source,
            }));
        event.agent_id = Some(report.agent_id.as_uuid());
        event.risk_score = Some(report.score);
        self.audit.record(event).await?;
        let data = serde_json::to_value(&report).map_err(DomainError::internal)?;
        self.ports.announce(tenant, ANOMALY_DETECTED, data).await;
        Ok(report)
    }

    /// `GET /anomalies` (`anomalies:read`): newest first.
    pub async fn list(&self, caller: &Caller, params: &AnomalyParams) -> Result<Page<AnomalyReport>> {
        caller.require_permission(Permission::AnomaliesRead)?;
        let mut v = Violations::new();
        let filter = params.filter(&mut v);
        let page = match PageRequest::parse(params.limit, params.cursor.as_deref()) {
            Ok(page) => Some(page),
            Err(e) => {
                v.absorb(e)?;
                None
            }
        };
        v.into_result()?;
        let page = page.unwrap_or_default();
        self.repos.anomalies.list_anomalies(caller.tenant_id(), &filter, &page).await
    }

    /// `GET /anomalies/{id}` (`anomalies:read`).
    pub async fn get(&self, caller: &Caller, id: AnomalyId) -> Result<AnomalyReport> {
        caller.require_permission(Permission::AnomaliesRead)?;
        self.repos.anomalies.get_anomaly(caller.tenant_id(), id).await?.ok_or_else(|| not_found(id))
    }

    /// `PUT /anomalies/{id}` (analyst or higher): sets the status; the same status again
    /// changes nothing.
    pub async fn update(&self, caller: &Caller, id: AnomalyId, change: AnomalyUpdate) -> Result<AnomalyReport> {
        caller.require_role(Role::Analyst)?;
        caller.require_permission(Permission::AnomaliesWrite)?;
        let before = self.get(caller, id).await?;
        if before.status == change.status {
            return Ok(before);
        }
        let now = self.ports.clock.now();
        let after = AnomalyReport {
            status: change.status,
            status_changed_by: Some(caller_actor(caller)),
            status_changed_at: Some(now),
            updated_at: now,
            ..before.clone()
        };
        self.repos.anomalies.update_anomaly(&after).await?;
        let mut event = AuditEvent::new(caller.tenant_id(), caller_actor(caller), "anomaly.status_changed")
            .action("update")
            .resource(format!("anomalies/{id}"))
            .details(serde_json::json!({"anomaly_id": id, "before": before.status, "after": after.status}));
        event.agent_id = Some(after.agent_id.as_uuid());
        self.audit.record(event).await?;
        Ok(after)
    }

    /// `GET /anomalies/stats` (`anomalies:read`).
    pub async fn stats(&self, caller: &Caller, params: &AnomalyParams) -> Result<AnomalyStats> {
        caller.require_permission(Permission::AnomaliesRead)?;
        let mut v = Violations::new();
        let mut filter = params.filter(&mut v);
        let bucket = if params.bucket.as_deref() == Some("day") { Bucket::Day } else { Bucket::Hour };
        v.check(params.limit.is_none() && params.cursor.is_none(), "limit", "statistics are not paged");
        let to = filter.to.unwrap_or_else(|| self.ports.clock.now());
        let from = filter.from.unwrap_or(to - time::Duration::hours(24));
        if from >= to {
            v.add("from", "must be before to");
        } else if to - from > time::Duration::days(MAX_STATS_DAYS) {
            v.add("from", format!("the window is at most {MAX_STATS_DAYS} days"));
        }
        v.into_result()?;
        filter.from = Some(from);
        filter.to = Some(to);
        let counts = self.repos.anomalies.anomaly_counts(caller.tenant_id(), &filter).await?;

        let mut by_severity = zeros(Severity::ALL, Severity::as_str);
        let mut by_type = zeros(AnomalyType::ALL, AnomalyType::as_str);
        let mut by_status = zeros(AnomalyStatus::ALL, AnomalyStatus::as_str);
        let mut agents: HashMap<AgentId, i64> = HashMap::new();
        let width = bucket.hours();
        let first = (from.unix_timestamp().div_euclid(3600)).div_euclid(width);
        let last = ((to.unix_timestamp() * 1_000_000 + i64::from(to.microsecond()) - 1).div_euclid(3_600_000_000))
            .div_euclid(width);
        let mut series: Vec<SeriesPoint> = (first..=last)
            .map(|b| SeriesPoint {
                start: OffsetDateTime::from_unix_timestamp(b * width * 3600).unwrap_or(OffsetDateTime::UNIX_EPOCH),
                count: 0,
                by_severity: zeros(Severity::ALL, Severity::as_str),
            })
            .collect();
        let mut total = 0;
        for c in &counts {
            total += c.count;
            *by_severity.entry(c.severity.as_str()).or_default() += c.count;
            *by_type.entry(c.anomaly_type.as_str()).or_default() += c.count;
            *by_status.entry(c.status.as_str()).or_default() += c.count;
            *agents.entry(c.agent_id).or_default() += c.count;
            let slot = usize::try_from(c.hour.div_euclid(width) - first).ok().and_then(|i| series.get_mut(i));
            if let Some(point) = slot {
                point.count += c.count;
                *point.by_severity.entry(c.severity.as_str()).or_default() += c.count;
            }
        }
        let mut top_agents: Vec<AgentCount> =
            agents.into_iter().map(|(agent_id, count)| AgentCount { agent_id, count }).collect();
        top_agents.sort_by(|a, b| b.count.cmp(&a.count).then(a.agent_id.cmp(&b.agent_id)));
        top_agents.truncate(TOP_AGENTS);
        Ok(AnomalyStats { from, to, bucket, total, by_severity, by_type, by_status, top_agents, series })
    }
}

#[cfg(test)]
mod tests;
