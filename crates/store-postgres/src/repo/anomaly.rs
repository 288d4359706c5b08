//! Anomaly reports.
//!
//! Storage: a report keeps the columns its queries filter, order and group on (`tenant_id`,
//! `agent_id`, `anomaly_type`, `severity`, `status`, `created_at`) beside `body`, the JSON
//! text of the record's `Serialize` form, which leaves the tenant out; reading sets it from
//! the column. Every write sets those columns from the record it writes, so they never
//! disagree with `body`.
//!
//! An update locks the row (`FOR UPDATE`), keeps its stored `created_at` (column and body
//! alike) and writes the rest in the same transaction. The statistics are one `GROUP BY`
//! over the filtered rows, the hour being `floor(extract(epoch from created_at) / 3600)`.
//!
//! The detector's versions and trainings are the model registry's and the job queue's
//! (`jobs.rs`).

use agentgov_domain::ids::{AnomalyId, TenantId};
use agentgov_domain::model::{AnomalyCount, AnomalyFilter, AnomalyReport, AnomalyStatus, AnomalyType, Severity};
use agentgov_domain::page::{Page, PageRequest};
use agentgov_domain::ports::AnomalyRepo;
use agentgov_domain::{DomainError, Result};
use async_trait::async_trait;
use diesel::pg::Pg;
use diesel::prelude::*;
use diesel::query_builder::{BoxedSqlQuery, SqlQuery};
use diesel::sql_types::{BigInt, Text, Timestamptz, Uuid as SqlUuid};
use diesel_async::{AsyncConnection, AsyncPgConnection, RunQueryDsl};
use time::OffsetDateTime;
use uuid::Uuid;

use crate::error::{self, TxError};
use crate::rows::{AnomalyBodyRow, AnomalyRow};
use crate::schema::anomaly_reports;
use crate::store::PgStore;

use super::page_of;

fn not_found(id: AnomalyId) -> DomainError {
    DomainError::not_found("anomaly report", id)
}

/// The tenant's report `id`.
macro_rules! report {
    ($tenant:expr, $id:expr) => {
        anomaly_reports::table
            .filter(anomaly_reports::id.eq($id.as_uuid()))
            .filter(anomaly_reports::tenant_id.eq($tenant.as_uuid()))
    };
}

#[derive(QueryableByName)]
struct CountRow {
    #[diesel(sql_type = SqlUuid)]
    agent_id: Uuid,
    #[diesel(sql_type = Text)]
    anomaly_type: String,
    #[diesel(sql_type = Text)]
    severity: String,
    #[diesel(sql_type = Text)]
    status: String,
    #[diesel(sql_type = BigInt)]
    hour: i64,
    #[diesel(sql_type = BigInt)]
    count: i64,
}

fn unreadable(tenant: TenantId, column: &str, value: &str) -> DomainError {
    DomainError::Internal(format!("bad row in anomaly_reports (tenant {tenant}): {column} `{value}`"))
}

impl CountRow {
    fn into_count(self, tenant: TenantId) -> Result<AnomalyCount> {
        Ok(AnomalyCount {
            agent_id: self.agent_id.into(),
            anomaly_type: AnomalyType::parse(&self.anomaly_type)
                .ok_or_else(|| unreadable(tenant, "anomaly_type", &self.anomaly_type))?,
            severity: Severity::parse(&self.severity).ok_or_else(|| unreadable(tenant, "severity", &self.severity))?,
            status: AnomalyStatus::parse(&self.status).ok_or_else(|| unreadable(tenant, "status", &self.status))?,
            hour: self.hour,
            count: self.count,
        })
    }
}

/// The statistics query for `filter`: only the conditions of the filters given, numbered
/// and bound in the order they appear.
fn counts_query(tenant: TenantId, f: &AnomalyFilter) -> BoxedSqlQuery<'static, Pg, SqlQuery> {
    let mut sql = String::from(
        "SELECT agent_id, anomaly_type, severity, status, \
         floor(extract(epoch FROM created_at) / 3600)::bigint AS hour, count(*) AS count \
         FROM anomaly_reports WHERE tenant_id = $1",
    );
    let texts = [
        ("anomaly_type", f.anomaly_type.map(AnomalyType::as_str)),
        ("severity", f.severity.map(Severity::as_str)),
        ("status", f.status.map(AnomalyStatus::as_str)),
    ];
    let times = [(">=", f.from), ("<", f.to)];
    let mut n = 1;
    let mut next = || {
        n += 1;
        n
    };
    if f.agent_id.is_some() {
        sql.push_str(&format!(" AND agent_id = ${}", next()));
    }
    for (column, value) in &texts {
        if value.is_some() {
            sql.push_str(&format!(" AND {column} = ${}", next()));
        }
    }
    for (op, value) in &times {
        if value.is_some() {
            sql.push_str(&format!(" AND created_at {op} ${}", next()));
        }
    }
    sql.push_str(" GROUP BY agent_id, anomaly_type, severity, status, hour");
    let mut q = diesel::sql_query(sql).into_boxed::<Pg>().bind::<SqlUuid, _>(tenant.as_uuid());
    if let Some(agent) = f.agent_id {
        q = q.bind::<SqlUuid, _>(agent.as_uuid());
    }
    for text in texts.into_iter().filter_map(|(_, v)| v) {
        q = q.bind::<Text, _>(text);
    }
    for at in times.into_iter().filter_map(|(_, v)| v) {
        q = q.bind::<Timestamptz, _>(at);
    }
    q
}

#[async_trait]
impl AnomalyRepo for PgStore {
    async fn insert_anomaly(&self, report: &AnomalyReport) -> Result<()> {
        let row = AnomalyRow::try_from(report)?;
        let mut conn = self.conn().await?;
        // A missing tenant fails the foreign key, a taken id the primary key: `Conflict`.
        diesel::insert_into(anomaly_reports::table).values(&row).execute(&mut conn).await.map_err(error::db)?;
        Ok(())
    }

    async fn get_anomaly(&self, tenant: TenantId, id: AnomalyId) -> Result<Option<AnomalyReport>> {
        let mut conn = self.conn().await?;
        let row = report!(tenant, id)
            .select(AnomalyBodyRow::as_select())
            .first(&mut conn)
            .await
            .optional()
            .map_err(error::db)?;
        row.map(AnomalyReport::try_from).transpose()
    }

    async fn list_anomalies(
        &self,
        tenant: TenantId,
        filter: &AnomalyFilter,
        page: &PageRequest,
    ) -> Result<Page<AnomalyReport>> {
        // Newest first: `(tenant_id, id)` or `(tenant_id, agent_id, id)` answers in id order.
        let mut query = anomaly_reports::table
            .filter(anomaly_reports::tenant_id.eq(tenant.as_uuid()))
            .select(AnomalyBodyRow::as_select())
            .order(anomaly_reports::id.desc())
            .limit(page.fetch_limit())
            .into_boxed();
        if let Some(after) = page.after {
            query = query.filter(anomaly_reports::id.lt(after));
        }
        if let Some(agent) = filter.agent_id {
            query = query.filter(anomaly_reports::agent_id.eq(agent.as_uuid()));
        }
        if let Some(anomaly_type) = filter.anomaly_type {
            query = query.filter(anomaly_reports::anomaly_type.eq(anomaly_type.as_str()));
        }
        if let Some(severity) = filter.severity {
            query = query.filter(anomaly_reports::severity.eq(severity.as_str()));
        }
        if let Some(status) = filter.status {
            query = query.filter(anomaly_reports::status.eq(status.as_str()));
        }
        if let Some(from) = filter.from {
            query = query.filter(anomaly_reports::created_at.ge(from));
        }
        if let Some(to) = filter.to {
            query = query.filter(anomaly_reports::created_at.lt(to));
        }
        let mut conn = self.conn().await?;
        let rows: Vec<AnomalyBodyRow> = query.load(&mut conn).await.map_err(error::db)?;
        page_of(rows, page, |r: &AnomalyReport| r.id.as_uuid())
    }

    async fn update_anomaly(&self, report: &AnomalyReport) -> Result<()> {
        let (tenant, id) = (report.tenant_id, report.id);
        let report = report.clone();
        let mut conn = self.tx_conn().await?;
        let conn: &mut AsyncPgConnection = &mut conn;
        conn.transaction(async move |conn| -> Result<(), TxError> {
            // The row first: a concurrent update waits for this commit.
            let created: Option<OffsetDateTime> =
                report!(tenant, id).select(anomaly_reports::created_at).for_update().first(conn).await.optional()?;
            let Some(created_at) = created else { return Err(TxError::Domain(not_found(id))) };
            // `created_at` stays as stored, in the body too.
            let row = AnomalyRow::try_from(&AnomalyReport { created_at, ..report })?;
            diesel::update(report!(tenant, id))
                .set((
                    anomaly_reports::agent_id.eq(row.agent_id),
                    anomaly_reports::anomaly_type.eq(row.anomaly_type),
                    anomaly_reports::severity.eq(row.severity),
                    anomaly_reports::status.eq(row.status),
                    anomaly_reports::body.eq(row.body),
                ))
                .execute(conn)
                .await?;
            Ok(())
        })
        .await
        .map_err(DomainError::from)
    }

    async fn anomaly_counts(&self, tenant: TenantId, filter: &AnomalyFilter) -> Result<Vec<AnomalyCount>> {
        let query = counts_query(tenant, filter);
        let mut conn = self.conn().await?;
        let rows: Vec<CountRow> = query.load(&mut conn).await.map_err(error::db)?;
        rows.into_iter().map(|r| r.into_count(tenant)).collect()
    }
}
