//! Readiness, platform status and dashboard statistics.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Instant;

use time::OffsetDateTime;

use super::counts::{PendingCounts, hour_of, hour_start};
use super::{Caller, Ports};
use crate::error::{DomainError, Result};
use crate::ids::TenantId;
use crate::model::Permission;
use crate::ports::{HourlyKey, ResourceCounts, Store};

/// The `metric` of the store's hourly counts that counts answered checks by decision.
pub const DECISIONS_METRIC: &str = "policy.decision";
/// The decisions a check can reach, each named in [`DecisionStats`].
const DECISIONS: [&str; 3] = ["allow", "deny", "require_approval"];
/// The hours [`DecisionStats`] covers.
const DECISION_WINDOW_HOURS: i64 = 24;

/// The checks' decisions counted in this process, added to the store's hourly counts every
/// few seconds ([`StatusService::flush_counts`]).
#[derive(Debug, Default)]
pub struct HourlyCounter(PendingCounts<HourlyKey>);

impl HourlyCounter {
    pub fn add(&self, tenant: TenantId, metric: &str, at: OffsetDateTime, label: &str) {
        self.0.add(HourlyKey {
            tenant_id: tenant,
            metric: metric.to_owned(),
            hour: hour_of(at),
            label: label.to_owned(),
        });
    }

    async fn flush(&self, store: &dyn Store) -> Result<()> {
        self.0.flush(async |counts| store.add_hourly_counts(counts).await).await
    }

    /// The tenant's counts of `metric` from `from_hour` on: the store's and this process's
    /// not yet flushed.
    async fn read(
        &self,
        store: &dyn Store,
        tenant: TenantId,
        metric: &str,
        from_hour: i64,
    ) -> Result<Vec<(HourlyKey, i64)>> {
        let mut rows = store.hourly_counts(tenant, metric, from_hour).await?;
        rows.extend(self.0.matching(|k| k.tenant_id == tenant && k.metric == metric && k.hour >= from_hour));
        Ok(rows)
    }
}

/// Answered checks (each a `policy.decision` record) over the last 24 hours.
#[derive(Debug, Clone, serde::Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct DecisionStats {
    pub window_hours: i64,
    pub total: i64,
    /// Per decision (`allow`, `deny`, `require_approval`), each named.
    pub by_decision: BTreeMap<String, i64>,
    /// Every hour of the window, oldest first, empty ones included.
    pub series: Vec<DecisionHour>,
}

/// One hour of [`DecisionStats`].
#[derive(Debug, Clone, serde::Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct DecisionHour {
    /// The hour's first instant.
    #[serde(with = "time::serde::rfc3339")]
    pub hour: OffsetDateTime,
    pub total: i64,
    pub by_decision: BTreeMap<String, i64>,
}

impl DecisionStats {
    fn of(rows: Vec<(HourlyKey, i64)>, from_hour: i64) -> Self {
        let zeros = || -> BTreeMap<String, i64> { DECISIONS.iter().map(|d| ((*d).to_owned(), 0)).collect() };
        let mut series: Vec<DecisionHour> = (from_hour..from_hour + DECISION_WINDOW_HOURS)
            .map(|h| DecisionHour { hour: hour_start(h), total: 0, by_decision: zeros() })
            .collect();
        let mut by_decision = zeros();
        for (key, n) in rows {
            *by_decision.entry(key.label.clone()).or_insert(0) += n;
            if let Some(hour) = usize::try_from(key.hour - from_hour).ok().and_then(|i| series.get_mut(i)) {
                hour.total += n;
                *hour.by_decision.entry(key.label).or_insert(0) += n;
            }
        }
        let total = by_decision.values().sum();
        DecisionStats { window_hours: DECISION_WINDOW_HOURS, total, by_decision, series }
    }
}

/// Facts about the running server, for `/status`.
#[derive(Debug, Clone)]
pub struct ServerInfo {
    pub version: &'static str,
    /// "embedded" or "distributed".
    pub mode: &'static str,
    pub started_at: time::OffsetDateTime,
}

/// The health of one backing component.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ComponentHealth {
    /// `database`, `cache` or `policy_engine`.
    pub name: &'static str,
    /// The adapter behind it (`sqlite`, `postgres`, `memory`, `redis`, `regorus`).
    pub backend: &'static str,
    pub up: bool,
    pub latency_ms: u64,
    /// Why it is down; never internals.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Readiness {
    pub ready: bool,
    pub components: Vec<ComponentHealth>,
}

/// `GET /status`.
#[derive(Debug, Clone, serde::Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct PlatformStatus {
    /// `ok`, or `degraded` when a component is down.
    pub status: &'static str,
    pub version: &'static str,
    /// `embedded` or `distributed`.
    pub mode: &'static str,
    pub uptime_seconds: u64,
    pub tenant: crate::model::Tenant,
    pub components: Vec<ComponentHealth>,
}

/// `GET /stats`: counts of the caller's tenant's resources.
#[derive(Debug, Clone, serde::Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Stats {
    pub tenant_id: crate::ids::TenantId,
    #[serde(with = "time::serde::rfc3339")]
    pub generated_at: time::OffsetDateTime,
    pub counts: ResourceCounts,
    /// Records in the tenant's audit log (its chain's last sequence number).
    pub audit_records: i64,
    /// Answered checks over the last 24 hours, per hour and decision.
    pub decisions: DecisionStats,
}

#[derive(Clone)]
pub struct StatusService {
    ports: Ports,
    /// The whole store: the status reports on it as one component (its backend, whether it
    /// answers) besides reading the tenant, its resources and its hourly counts.
    store: Arc<dyn Store>,
    info: ServerInfo,
    /// Shared with the policy service, which counts every answered check.
    counts: Arc<HourlyCounter>,
}

fn component(name: &'static str, backend: &'static str, started: Instant, result: Result<()>) -> ComponentHealth {
    let error = result.err().map(|e| match e {
        DomainError::Unavailable(what) => format!("{what} is unreachable"),
        _ => "check failed".to_owned(),
    });
    ComponentHealth {
        name,
        backend,
        up: error.is_none(),
        latency_ms: u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX),
        error,
    }
}

impl StatusService {
    pub fn new(ports: Ports, store: Arc<dyn Store>, info: ServerInfo, counts: Arc<HourlyCounter>) -> Self {
        Self { ports, store, info, counts }
    }

    /// Adds the counts gathered since the last flush to the store (run every few seconds).
    pub async fn flush_counts(&self) -> Result<()> {
        self.counts.flush(self.store.as_ref()).await
    }

    /// Checks the database, the cache and the policy engine concurrently.
    pub async fn readiness(&self) -> Readiness {
        let db = async {
            let t = Instant::now();
            component("database", self.store.backend(), t, self.store.ping().await)
        };
        let cache = async {
            let t = Instant::now();
            component("cache", self.ports.cache.backend(), t, self.ports.cache.ping().await)
        };
        let (db, cache) = futures::join!(db, cache);
        let t = Instant::now();
        let policy = component("policy_engine", self.ports.policy.name(), t, self.ports.policy.self_test());
        let components = vec![db, cache, policy];
        Readiness { ready: components.iter().all(|c| c.up), components }
    }

    /// Needs `stats:read`.
    pub async fn status(&self, caller: &Caller) -> Result<PlatformStatus> {
        caller.require_permission(Permission::StatsRead)?;
        let tenant = self
            .store
            .get_tenant(caller.tenant_id())
            .await?
            .ok_or_else(|| DomainError::not_found("tenant", caller.tenant_id()))?;
        let readiness = self.readiness().await;
        let uptime = self.ports.clock.now() - self.info.started_at;
        Ok(PlatformStatus {
            status: if readiness.ready { "ok" } else { "degraded" },
            version: self.info.version,
            mode: self.info.mode,
            uptime_seconds: u64::try_from(uptime.whole_seconds()).unwrap_or(0),
            tenant,
            components: readiness.components,
        })
    }

    /// Needs `stats:read`.
    pub async fn stats(&self, caller: &Caller) -> Result<Stats> {
        caller.require_permission(Permission::StatsRead)?;
        let counts = self.store.count_resources(caller.tenant_id()).await?;
        let audit_records = self.store.audit_head(caller.tenant_id()).await?.map_or(0, |h| h.seq);
        let now = self.ports.clock.now();
        let from_hour = hour_of(now) - (DECISION_WINDOW_HOURS - 1);
        let rows = self.counts.read(self.store.as_ref(), caller.tenant_id(), DECISIONS_METRIC, from_hour).await?;
        let decisions = DecisionStats::of(rows, from_hour);
        Ok(Stats { tenant_id: caller.tenant_id(), generated_at: now, counts, audit_records, decisions })
    }
}
