//! Anomaly reports on SQLite.
//!
//! A report is stored as the JSON text of its `Serialize` form (`body`, which leaves out
//! `tenant_id`) beside the columns that SQL filters, orders and groups on: id, tenant,
//! agent, `anomaly_type`, `severity`, `status` and `created_at` (unix microseconds). Every
//! write sets those columns from the record it writes, so they never disagree with `body`.
//! Reading, `body` is parsed and `tenant_id` set from its column.
//!
//! Reads go to the reader connections; every write runs in a `BEGIN IMMEDIATE` transaction
//! on the single writer. An update keeps the stored `created_at` (column and body alike).
//! The statistics are one `GROUP BY` over the filtered rows, the hour being
//! `created_at / 3600000000` (whole hours since the Unix epoch).
//!
//! The detector's versions and trainings are the model registry's and the job queue's
//! (`jobs.rs`).

use agentgov_domain::ids::{AnomalyId, TenantId};
use agentgov_domain::model::audit::{from_unix_micros, unix_micros};
use agentgov_domain::model::{AnomalyCount, AnomalyFilter, AnomalyReport, AnomalyStatus, AnomalyType, Severity};
use agentgov_domain::page::{Page, PageRequest};
use agentgov_domain::ports::store::AnomalyRepo;
use agentgov_domain::{DomainError, Result};
use async_trait::async_trait;
use diesel::prelude::*;
use diesel::sql_types::{BigInt, Text};
use diesel::sqlite::Sqlite;

use crate::SqliteStore;
use crate::columns::Id;
use crate::error::TxError;
use crate::repo::check_tenant;
use crate::rows::{AnomalyBodyRow, AnomalyRow, convert, id_text};
use crate::schema::anomaly_reports;

fn not_found(id: AnomalyId) -> DomainError {
    DomainError::not_found("anomaly report", id)
}

/// The tenant's report `id`.
macro_rules! report {
    ($tenant:expr, $id:expr) => {
        anomaly_reports::table.filter(anomaly_reports::id.eq($id)).filter(anomaly_reports::tenant_id.eq($tenant))
    };
}

/// An `AnomalyFilter` as the column values it compares with.
#[derive(Debug, Clone, Default)]
struct Bounds {
    agent_id: Option<String>,
    anomaly_type: Option<&'static str>,
    severity: Option<&'static str>,
    status: Option<&'static str>,
    from: Option<i64>,
    to: Option<i64>,
}

impl From<&AnomalyFilter> for Bounds {
    fn from(f: &AnomalyFilter) -> Self {
        Self {
            agent_id: f.agent_id.map(|a| id_text(a.0)),
            anomaly_type: f.anomaly_type.map(AnomalyType::as_str),
            severity: f.severity.map(Severity::as_str),
            status: f.status.map(AnomalyStatus::as_str),
            from: f.from.map(unix_micros),
            to: f.to.map(unix_micros),
        }
    }
}

#[derive(QueryableByName)]
struct CountRow {
    #[diesel(sql_type = Text)]
    agent_id: Id,
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

fn unreadable(column: &str, value: &str) -> DomainError {
    DomainError::Internal(format!("unreadable stored value in anomaly_reports.{column}: {value:?}"))
}

impl TryFrom<CountRow> for AnomalyCount {
    type Error = DomainError;
    fn try_from(r: CountRow) -> Result<Self> {
        Ok(AnomalyCount {
            agent_id: r.agent_id.0.into(),
            anomaly_type: AnomalyType::parse(&r.anomaly_type)
                .ok_or_else(|| unreadable("anomaly_type", &r.anomaly_type))?,
            severity: Severity::parse(&r.severity).ok_or_else(|| unreadable("severity", &r.severity))?,
            status: AnomalyStatus::parse(&r.status).ok_or_else(|| unreadable("status", &r.status))?,
            hour: r.hour,
            count: r.count,
        })
    }
}

/// The statistics query for `bounds`: only the conditions of the filters given, bound in
/// the order they appear.
fn counts_query(
    tenant: String,
    b: Bounds,
) -> diesel::query_builder::BoxedSqlQuery<'static, Sqlite, diesel::query_builder::SqlQuery> {
    let mut sql = String::from(
        "SELECT agent_id, anomaly_type, severity, status, created_at / 3600000000 AS hour, COUNT(*) AS count \
         FROM anomaly_reports WHERE tenant_id = ?",
    );
    let conditions = [
        (b.agent_id.is_some(), " AND agent_id = ?"),
        (b.anomaly_type.is_some(), " AND anomaly_type = ?"),
        (b.severity.is_some(), " AND severity = ?"),
        (b.status.is_some(), " AND status = ?"),
        (b.from.is_some(), " AND created_at >= ?"),
        (b.to.is_some(), " AND created_at < ?"),
    ];
    for (given, condition) in conditions {
        if given {
            sql.push_str(condition);
        }
    }
    sql.push_str(" GROUP BY agent_id, anomaly_type, severity, status, hour");
    let mut q = diesel::sql_query(sql).into_boxed::<Sqlite>().bind::<Text, _>(tenant);
    if let Some(agent) = b.agent_id {
        q = q.bind::<Text, _>(agent);
    }
    for text in [b.anomaly_type, b.severity, b.status].into_iter().flatten() {
        q = q.bind::<Text, _>(text);
    }
    for micros in [b.from, b.to].into_iter().flatten() {
        q = q.bind::<BigInt, _>(micros);
    }
    q
}

#[async_trait]
impl AnomalyRepo for SqliteStore {
    async fn insert_anomaly(&self, report: &AnomalyReport) -> Result<()> {
        let row = AnomalyRow::try_from(report)?;
        self.transaction(move |c| {
            // Names a missing tenant (the foreign key would fail the insert too, unnamed).
            check_tenant(c, row.tenant_id)?;
            // A taken id fails the primary key: `Conflict`.
            diesel::insert_into(anomaly_reports::table).values(&row).execute(c)?;
            Ok(())
        })
        .await
    }

    async fn get_anomaly(&self, tenant: TenantId, id: AnomalyId) -> Result<Option<AnomalyReport>> {
        let (tenant, id) = (id_text(tenant.0), id_text(id.0));
        self.read(move |c| {
            let row = report!(tenant, id).select(AnomalyBodyRow::as_select()).first(c).optional()?;
            Ok(row.map(AnomalyReport::try_from).transpose()?)
        })
        .await
    }

    async fn list_anomalies(
        &self,
        tenant: TenantId,
        filter: &AnomalyFilter,
        page: &PageRequest,
    ) -> Result<Page<AnomalyReport>> {
        let (tenant, b) = (id_text(tenant.0), Bounds::from(filter));
        let (after, limit) = (page.after.map(id_text), page.fetch_limit());
        let rows = self
            .read(move |c| {
                let mut q = anomaly_reports::table
                    .filter(anomaly_reports::tenant_id.eq(tenant))
                    .select(AnomalyBodyRow::as_select())
                    .order(anomaly_reports::id.desc())
                    .limit(limit)
                    .into_boxed();
                if let Some(agent) = b.agent_id {
                    q = q.filter(anomaly_reports::agent_id.eq(agent));
                }
                if let Some(anomaly_type) = b.anomaly_type {
                    q = q.filter(anomaly_reports::anomaly_type.eq(anomaly_type));
                }
                if let Some(severity) = b.severity {
                    q = q.filter(anomaly_reports::severity.eq(severity));
                }
                if let Some(status) = b.status {
                    q = q.filter(anomaly_reports::status.eq(status));
                }
                if let Some(from) = b.from {
                    q = q.filter(anomaly_reports::created_at.ge(from));
                }
                if let Some(to) = b.to {
                    q = q.filter(anomaly_reports::created_at.lt(to));
                }
                if let Some(after) = after {
                    q = q.filter(anomaly_reports::id.lt(after));
                }
                Ok(convert(q.load(c)?)?)
            })
            .await?;
        Ok(Page::from_rows(rows, page, |r: &AnomalyReport| r.id.0))
    }

    async fn update_anomaly(&self, report: &AnomalyReport) -> Result<()> {
        let (tenant, id) = (id_text(report.tenant_id.0), id_text(report.id.0));
        let report = report.clone();
        self.transaction(move |c| {
            let target = report!(&tenant, &id);
            let created: Option<i64> = target.select(anomaly_reports::created_at).first(c).optional()?;
            let Some(created) = created else { return Err(TxError::Domain(not_found(report.id))) };
            // `created_at` stays as stored, in the body too.
            let created_at = from_unix_micros(created)
                .ok_or_else(|| unreadable("created_at", &created.to_string()))
                .map_err(TxError::Domain)?;
            let row = AnomalyRow::try_from(&AnomalyReport { created_at, ..report })?;
            diesel::update(target)
                .set((
                    anomaly_reports::agent_id.eq(&row.agent_id),
                    anomaly_reports::anomaly_type.eq(&row.anomaly_type),
                    anomaly_reports::severity.eq(&row.severity),
                    anomaly_reports::status.eq(&row.status),
                    anomaly_reports::body.eq(&row.body),
                ))
                .execute(c)?;
            Ok(())
        })
        .await
    }

    async fn anomaly_counts(&self, tenant: TenantId, filter: &AnomalyFilter) -> Result<Vec<AnomalyCount>> {
        let query = counts_query(id_text(tenant.0), Bounds::from(filter));
        self.read(move |c| {
            let rows: Vec<CountRow> = query.load(c)?;
            Ok(convert(rows)?)
        })
        .await
    }
}
