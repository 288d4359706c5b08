//! Readiness, platform status and dashboard statistics.

use std::time::Instant;

use super::{Caller, Ports, ServerInfo};
use crate::error::{DomainError, Result};
use crate::model::Permission;
use crate::ports::ResourceCounts;

/// The health of one backing component.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, utoipa::ToSchema)]
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

#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, utoipa::ToSchema)]
pub struct Readiness {
    pub ready: bool,
    pub components: Vec<ComponentHealth>,
}

/// `GET /status`.
#[derive(Debug, Clone, serde::Serialize, utoipa::ToSchema)]
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
#[derive(Debug, Clone, serde::Serialize, utoipa::ToSchema)]
pub struct Stats {
    pub tenant_id: crate::ids::TenantId,
    #[serde(with = "time::serde::rfc3339")]
    pub generated_at: time::OffsetDateTime,
    pub counts: ResourceCounts,
    /// Records in the tenant's audit log (its chain's last sequence number).
    pub audit_records: i64,
}

#[derive(Clone)]
pub struct StatusService {
    ports: Ports,
    info: ServerInfo,
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
    pub fn new(ports: Ports, info: ServerInfo) -> Self {
        Self { ports, info }
    }

    /// Checks the database, the cache and the policy engine concurrently.
    pub async fn readiness(&self) -> Readiness {
        let db = async {
            let t = Instant::now();
            component("database", self.ports.store.backend(), t, self.ports.store.ping().await)
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
            .ports
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
        let counts = self.ports.store.count_resources(caller.tenant_id()).await?;
        let audit_records = self.ports.store.audit_head(caller.tenant_id()).await?.map_or(0, |h| h.seq);
        Ok(Stats { tenant_id: caller.tenant_id(), generated_at: self.ports.clock.now(), counts, audit_records })
    }
}
