//! The `Store` port's own methods on SQLite: ping, resource counts, hourly counters.

use agentgov_domain::ids::TenantId;
use agentgov_domain::model::UserStatus;
use agentgov_domain::ports::store::{HourlyKey, ResourceCounts, Store};
use agentgov_domain::{DomainError, Result};
use agentgov_store_common::HourlyRow;
use async_trait::async_trait;
use diesel::prelude::*;
use diesel::sql_types::{BigInt, Text};

use crate::SqliteStore;
use crate::rows::id_text;
use crate::schema::{api_keys, users};

const ADD_HOURLY_SQL: &str = "\
INSERT INTO hourly_counts (tenant_id, metric, hour, label, count) VALUES (?, ?, ?, ?, ?)
ON CONFLICT (tenant_id, metric, hour, label) DO UPDATE SET count = count + excluded.count";

const HOURLY_SQL: &str =
    "SELECT hour, label, count FROM hourly_counts WHERE tenant_id = ? AND metric = ? AND hour >= ?";

#[async_trait]
impl Store for SqliteStore {
    async fn add_hourly_counts(&self, counts: &[(HourlyKey, i64)]) -> Result<()> {
        if counts.is_empty() {
            return Ok(());
        }
        let counts = counts.to_vec();
        self.transaction(move |c| {
            for (key, count) in counts {
                diesel::sql_query(ADD_HOURLY_SQL)
                    .bind::<Text, _>(id_text(key.tenant_id.0))
                    .bind::<Text, _>(key.metric)
                    .bind::<BigInt, _>(key.hour)
                    .bind::<Text, _>(key.label)
                    .bind::<BigInt, _>(count)
                    .execute(c)?;
            }
            Ok(())
        })
        .await
    }

    async fn hourly_counts(&self, tenant: TenantId, metric: &str, from_hour: i64) -> Result<Vec<(HourlyKey, i64)>> {
        let metric = metric.to_owned();
        self.read(move |c| {
            let rows: Vec<HourlyRow> = diesel::sql_query(HOURLY_SQL)
                .bind::<Text, _>(id_text(tenant.0))
                .bind::<Text, _>(&metric)
                .bind::<BigInt, _>(from_hour)
                .load(c)?;
            Ok(rows.into_iter().map(|r| r.into_key(tenant, &metric)).collect())
        })
        .await
    }

    async fn ping(&self) -> Result<()> {
        self.read(|c| {
            diesel::sql_query("SELECT 1").execute(c)?;
            Ok(())
        })
        .await
    }

    async fn count_resources(&self, tenant: TenantId) -> Result<ResourceCounts> {
        let tenant = id_text(tenant.0);
        self.read(move |c| {
            c.transaction(|c| {
                let by_status: Vec<(String, i64)> = users::table
                    .filter(users::tenant_id.eq(&tenant))
                    .group_by(users::status)
                    .select((users::status, diesel::dsl::count_star()))
                    .load(c)?;
                let keys: i64 = api_keys::table
                    .filter(api_keys::tenant_id.eq(&tenant))
                    .filter(api_keys::revoked_at.is_null())
                    .count()
                    .get_result(c)?;
                let mut counts = ResourceCounts { api_keys: count(keys), ..ResourceCounts::default() };
                for (status, n) in by_status {
                    let n = count(n);
                    counts.users += n;
                    match UserStatus::parse(&status) {
                        Some(UserStatus::Active) => counts.active_users += n,
                        Some(UserStatus::Blocked) => counts.blocked_users += n,
                        None => return Err(DomainError::Internal(format!("unknown users.status {status:?}")).into()),
                    }
                }
                Ok(counts)
            })
        })
        .await
    }

    fn backend(&self) -> &'static str {
        "sqlite"
    }
}

/// SQL counts are never negative.
fn count(n: i64) -> u64 {
    u64::try_from(n).unwrap_or_default()
}
