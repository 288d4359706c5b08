//! The Prompt Guard's feedback and hourly statistics on SQLite (its versions and trainings
//! are the model registry's and the job queue's, `jobs.rs`).

use agentgov_domain::ids::TenantId;
use agentgov_domain::model::{GuardFeedback, GuardStatsKey};
use agentgov_domain::ports::store::GuardRepo;
use agentgov_domain::{DomainError, Result};
use agentgov_store_common::GuardStatsRow;
use async_trait::async_trait;
use diesel::SqliteConnection;
use diesel::prelude::*;
use diesel::sql_types::{BigInt, Text};
use diesel::upsert::excluded;

use crate::SqliteStore;
use crate::columns::Id;
use crate::error::{TxError, TxResult};
use crate::rows::{GuardFeedbackRow, convert, id_text};
use crate::schema::{guard_feedback, guard_stats, tenants};

/// SQLite's foreign-key error does not say which key failed, so the tenant is checked first
/// and its absence named; the writer's lock keeps it until the commit.
pub(crate) fn check_tenant(c: &mut SqliteConnection, tenant: Id) -> TxResult<()> {
    let n: i64 = tenants::table.filter(tenants::id.eq(tenant)).count().get_result(c)?;
    if n == 0 { Err(TxError::Domain(DomainError::Conflict("tenant does not exist".into()))) } else { Ok(()) }
}

/// Summed in SQL; `CAST` because diesel types `SUM` of a `BigInt` as `Numeric`.
const STATS_SQL: &str = "\
SELECT hour, verdict, bucket, CAST(SUM(count) AS INTEGER) AS total
FROM guard_stats WHERE tenant_id = ? AND hour >= ?
GROUP BY hour, verdict, bucket";

#[async_trait]
impl GuardRepo for SqliteStore {
    async fn insert_guard_feedback(&self, feedback: &GuardFeedback) -> Result<()> {
        let row = GuardFeedbackRow::from(feedback);
        self.transaction(move |c| {
            check_tenant(c, row.tenant_id)?;
            diesel::insert_into(guard_feedback::table).values(&row).execute(c)?;
            Ok(())
        })
        .await
    }

    async fn list_guard_feedback(&self, tenant: TenantId, limit: i64) -> Result<Vec<GuardFeedback>> {
        let tenant = id_text(tenant.0);
        self.read(move |c| {
            let rows = guard_feedback::table
                .filter(guard_feedback::tenant_id.eq(tenant))
                .order(guard_feedback::id.asc())
                .limit(limit.max(0))
                .select(GuardFeedbackRow::as_select())
                .load(c)?;
            Ok(convert(rows)?)
        })
        .await
    }

    async fn add_guard_stats(&self, counts: &[(GuardStatsKey, i64)]) -> Result<()> {
        if counts.is_empty() {
            return Ok(());
        }
        let counts = counts.to_vec();
        self.transaction(move |c| {
            for (key, count) in counts {
                diesel::insert_into(guard_stats::table)
                    .values((
                        guard_stats::tenant_id.eq(id_text(key.tenant_id.0)),
                        guard_stats::hour.eq(key.hour),
                        guard_stats::verdict.eq(key.verdict.as_str()),
                        guard_stats::bucket.eq(key.bucket),
                        guard_stats::count.eq(count),
                    ))
                    .on_conflict((guard_stats::tenant_id, guard_stats::hour, guard_stats::verdict, guard_stats::bucket))
                    .do_update()
                    .set(guard_stats::count.eq(guard_stats::count + excluded(guard_stats::count)))
                    .execute(c)?;
            }
            Ok(())
        })
        .await
    }

    async fn guard_stats(&self, tenant: TenantId, from_hour: i64) -> Result<Vec<(GuardStatsKey, i64)>> {
        let tenant_id = tenant;
        let tenant = id_text(tenant.0);
        self.read(move |c| {
            let rows: Vec<GuardStatsRow> =
                diesel::sql_query(STATS_SQL).bind::<Text, _>(tenant).bind::<BigInt, _>(from_hour).load(c)?;
            rows.into_iter().map(|r| r.into_key(tenant_id)).collect::<Result<Vec<_>>>().map_err(TxError::Domain)
        })
        .await
    }
}
