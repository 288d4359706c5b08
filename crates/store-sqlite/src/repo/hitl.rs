//! Human-in-the-loop approval requests on SQLite.
//!
//! A request is stored as the JSON text of its `Serialize` form (`body`, which leaves out
//! `tenant_id`) beside the columns that SQL filters and orders on: id, tenant, agent,
//! `status`, `expires_at` and `callback_due_at` (the callback's due time,
//! `HitlRequest::callback_due_at`; NULL when none is due), timestamps as unix microseconds.
//! Every write sets those columns from the record it writes, so they never disagree with
//! `body`. Reading, `body` is parsed and `tenant_id` set from its column.
//!
//! Reads go to the reader connections; every write runs in a `BEGIN IMMEDIATE` transaction
//! on the single writer. A decision is one `UPDATE … WHERE status = 'pending'`, so of two
//! racing decisions only the first applies; a callback update reads the row, checks that it
//! is final and writes it back in one transaction. The expiry and callback scans walk the
//! partial indexes `hitl_requests_expiry_idx` and `hitl_requests_callback_idx`, across
//! tenants.

use agentgov_domain::ids::{HitlId, TenantId};
use agentgov_domain::model::audit::unix_micros;
use agentgov_domain::model::{HitlCallback, HitlFilter, HitlRequest, HitlStatus};
use agentgov_domain::page::{Page, PageRequest};
use agentgov_domain::ports::store::{CALLBACK_LIMIT_REACHED, HitlRepo};
use agentgov_domain::{DomainError, Result};
use async_trait::async_trait;
use diesel::dsl::sql;
use diesel::prelude::*;
use diesel::sql_types::{BigInt, Bool};
use time::OffsetDateTime;

use crate::SqliteStore;
use crate::columns::Id;
use crate::error::TxError;
use crate::repo::check_tenant;
use crate::rows::{HitlBodyRow, HitlRow, convert, id_text};
use crate::schema::hitl_requests;

const PENDING: &str = "pending";
const APPROVED: &str = "approved";

/// The condition of `hitl_requests_expiry_idx` as written there: SQLite uses a partial
/// index only for a query that states its condition, and a bound `status = ?` does not.
const IS_PENDING: &str = "status = 'pending'";
/// The condition of `hitl_requests_open_callbacks_idx`, likewise.
const IS_CALLBACK_OPEN: &str = "callback_open";

fn not_found(id: HitlId) -> DomainError {
    DomainError::not_found("approval request", id)
}

/// The tenant's request `id`.
macro_rules! request {
    ($tenant:expr, $id:expr) => {
        hitl_requests::table.filter(hitl_requests::id.eq($id)).filter(hitl_requests::tenant_id.eq($tenant))
    };
}

/// Whether a conditional write to the request (`n` rows) applied: `false` when the request
/// exists but its condition failed, `NotFound` when it does not exist.
fn applied(c: &mut diesel::SqliteConnection, tenant: &Id, key: &Id, id: HitlId, n: usize) -> Result<bool, TxError> {
    if n > 0 {
        return Ok(true);
    }
    let exists: i64 = request!(tenant, key).count().get_result(c)?;
    if exists == 0 { Err(TxError::Domain(not_found(id))) } else { Ok(false) }
}

#[async_trait]
impl HitlRepo for SqliteStore {
    async fn insert_hitl(&self, request: &HitlRequest, max_open_callbacks: u64) -> Result<()> {
        let row = HitlRow::try_from(request)?;
        self.transaction(move |c| {
            // Names a missing tenant (the foreign key would fail the insert too, unnamed).
            check_tenant(c, row.tenant_id)?;
            if row.callback_open {
                // The writer's lock makes the count and the insert one step.
                let open: i64 = hitl_requests::table
                    .filter(hitl_requests::tenant_id.eq(&row.tenant_id))
                    .filter(sql::<Bool>(IS_CALLBACK_OPEN))
                    .count()
                    .get_result(c)?;
                if u64::try_from(open).unwrap_or(u64::MAX) >= max_open_callbacks {
                    return Err(TxError::Domain(DomainError::Conflict(CALLBACK_LIMIT_REACHED.into())));
                }
            }
            // A taken id fails the primary key: `Conflict`.
            diesel::insert_into(hitl_requests::table).values(&row).execute(c)?;
            Ok(())
        })
        .await
    }

    async fn get_hitl(&self, tenant: TenantId, id: HitlId) -> Result<Option<HitlRequest>> {
        let (tenant, id) = (id_text(tenant.0), id_text(id.0));
        self.read(move |c| {
            let row = request!(tenant, id).select(HitlBodyRow::as_select()).first(c).optional()?;
            Ok(row.map(HitlRequest::try_from).transpose()?)
        })
        .await
    }

    async fn list_hitl(&self, tenant: TenantId, filter: &HitlFilter, page: &PageRequest) -> Result<Page<HitlRequest>> {
        let (tenant, status, agent) = (id_text(tenant.0), filter.status, filter.agent_id.map(|a| id_text(a.0)));
        let (after, limit) = (page.after.map(id_text), page.fetch_limit());
        let rows = self
            .read(move |c| {
                let mut q = hitl_requests::table
                    .filter(hitl_requests::tenant_id.eq(tenant))
                    .select(HitlBodyRow::as_select())
                    .order(hitl_requests::id.asc())
                    .limit(limit)
                    .into_boxed();
                if let Some(status) = status {
                    q = q.filter(hitl_requests::status.eq(status.as_str()));
                }
                if let Some(agent) = agent {
                    q = q.filter(hitl_requests::agent_id.eq(agent));
                }
                if let Some(after) = after {
                    q = q.filter(hitl_requests::id.gt(after));
                }
                Ok(convert(q.load(c)?)?)
            })
            .await?;
        Ok(Page::from_rows(rows, page, |r: &HitlRequest| r.id.0))
    }

    async fn decide_hitl(&self, request: &HitlRequest) -> Result<bool> {
        let (row, id) = (HitlRow::try_from(request)?, request.id);
        self.transaction(move |c| {
            let target = request!(&row.tenant_id, &row.id);
            let n = diesel::update(target.filter(hitl_requests::status.eq(PENDING)))
                .set((
                    hitl_requests::agent_id.eq(&row.agent_id),
                    hitl_requests::status.eq(&row.status),
                    hitl_requests::expires_at.eq(row.expires_at),
                    hitl_requests::callback_due_at.eq(row.callback_due_at),
                    hitl_requests::body.eq(&row.body),
                    hitl_requests::callback_open.eq(row.callback_open),
                    hitl_requests::grant_open.eq(row.grant_open),
                    hitl_requests::escalate_at.eq(row.escalate_at),
                ))
                .execute(c)?;
            applied(c, &row.tenant_id, &row.id, id, n)
        })
        .await
    }

    async fn expired_hitl(&self, now: OffsetDateTime, limit: i64) -> Result<Vec<HitlRequest>> {
        if limit <= 0 {
            return Ok(Vec::new());
        }
        let now = unix_micros(now);
        self.read(move |c| {
            let rows = hitl_requests::table
                .filter(sql::<Bool>(IS_PENDING))
                .filter(hitl_requests::expires_at.le(now))
                .order((hitl_requests::expires_at.asc(), hitl_requests::id.asc()))
                .limit(limit)
                .select(HitlBodyRow::as_select())
                .load(c)?;
            Ok(convert(rows)?)
        })
        .await
    }

    async fn due_hitl_callbacks(&self, now: OffsetDateTime, limit: i64, per_tenant: i64) -> Result<Vec<HitlRequest>> {
        if limit <= 0 || per_tenant <= 0 {
            return Ok(Vec::new());
        }
        let now = unix_micros(now);
        self.read(move |c| {
            // `callback_due_at <= ?` implies the partial index's `IS NOT NULL`. Each due
            // callback's turn is its place in its tenant's queue; the round takes turn 1 of
            // every tenant, then turn 2, and so on.
            let rows: Vec<HitlBodyRow> = diesel::sql_query(
                "SELECT id, tenant_id, body FROM ( \
                   SELECT tenant_id, body, callback_due_at, id, ROW_NUMBER() OVER ( \
                     PARTITION BY tenant_id ORDER BY callback_due_at, id) AS turn \
                   FROM hitl_requests WHERE callback_due_at <= ?) \
                 WHERE turn <= ? ORDER BY turn, callback_due_at, id LIMIT ?",
            )
            .bind::<BigInt, _>(now)
            .bind::<BigInt, _>(per_tenant)
            .bind::<BigInt, _>(limit)
            .load(c)?;
            Ok(convert(rows)?)
        })
        .await
    }

    async fn update_hitl_callback(&self, tenant: TenantId, id: HitlId, callback: &HitlCallback) -> Result<()> {
        let (tenant_text, id_text) = (id_text(tenant.0), id_text(id.0));
        let callback = callback.clone();
        self.transaction(move |c| {
            let target = request!(&tenant_text, &id_text);
            let row = target.select(HitlBodyRow::as_select()).first(c).optional()?;
            let Some(row) = row else { return Err(TxError::Domain(not_found(id))) };
            let mut request = HitlRequest::try_from(row)?;
            if request.status == HitlStatus::Pending {
                return Err(TxError::Domain(DomainError::Conflict(
                    "the approval request is still pending: its callback is the decision's to set".into(),
                )));
            }
            request.callback = Some(callback);
            let row = HitlRow::try_from(&request)?;
            diesel::update(target)
                .set((
                    hitl_requests::callback_due_at.eq(row.callback_due_at),
                    hitl_requests::body.eq(&row.body),
                    hitl_requests::callback_open.eq(row.callback_open),
                ))
                .execute(c)?;
            Ok(())
        })
        .await
    }

    async fn spend_hitl_grant(&self, request: &HitlRequest) -> Result<bool> {
        let (row, id) = (HitlRow::try_from(request)?, request.id);
        self.transaction(move |c| {
            let target = request!(&row.tenant_id, &row.id);
            let n = diesel::update(target.filter(hitl_requests::status.eq(APPROVED)).filter(hitl_requests::grant_open))
                .set((
                    hitl_requests::body.eq(&row.body),
                    hitl_requests::grant_open.eq(row.grant_open),
                    hitl_requests::callback_due_at.eq(row.callback_due_at),
                    hitl_requests::callback_open.eq(row.callback_open),
                ))
                .execute(c)?;
            applied(c, &row.tenant_id, &row.id, id, n)
        })
        .await
    }

    async fn due_hitl_escalations(&self, now: OffsetDateTime, limit: i64) -> Result<Vec<HitlRequest>> {
        if limit <= 0 {
            return Ok(Vec::new());
        }
        let now = unix_micros(now);
        self.read(move |c| {
            // `escalate_at <= ?` implies the partial index's `IS NOT NULL`; the column is
            // NULL unless the request is pending.
            let rows = hitl_requests::table
                .filter(hitl_requests::escalate_at.le(now))
                .order((hitl_requests::escalate_at.asc(), hitl_requests::id.asc()))
                .limit(limit)
                .select(HitlBodyRow::as_select())
                .load(c)?;
            Ok(convert(rows)?)
        })
        .await
    }

    async fn escalate_hitl(&self, request: &HitlRequest, due: OffsetDateTime) -> Result<bool> {
        let (row, id, due) = (HitlRow::try_from(request)?, request.id, unix_micros(due));
        self.transaction(move |c| {
            let target = request!(&row.tenant_id, &row.id);
            let n = diesel::update(
                target.filter(hitl_requests::status.eq(PENDING)).filter(hitl_requests::escalate_at.eq(due)),
            )
            .set((hitl_requests::body.eq(&row.body), hitl_requests::escalate_at.eq(row.escalate_at)))
            .execute(c)?;
            applied(c, &row.tenant_id, &row.id, id, n)
        })
        .await
    }
}
