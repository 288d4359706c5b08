//! Human-in-the-loop approval requests.
//!
//! Storage: a request keeps the columns its queries filter and order on (`tenant_id`,
//! `agent_id`, `status`, `expires_at`, and `callback_due_at`, the callback's due time
//! `HitlRequest::callback_due_at`, NULL when none is due) beside `body`, the JSON text of the
//! record's `Serialize` form, which leaves the tenant out; reading sets it from the column.
//! Every write sets those columns from the record it writes, so they never disagree with
//! `body`.
//!
//! Deciding a request is one conditional `UPDATE … WHERE status = 'pending'`. Postgres
//! re-checks such a condition on the row a concurrent writer left once it commits, so of two
//! racing decisions (an analyst's and the expiry job's) only the first applies. A callback
//! update locks the row (`FOR UPDATE`), checks that it is final and writes the new body in
//! the same transaction.
//!
//! The expiry and callback scans read every tenant's requests through the partial indexes
//! `hitl_requests_expiry_idx` (`WHERE status = 'pending'`) and `hitl_requests_callback_idx`
//! (`WHERE callback_due_at IS NOT NULL`).

use agentgov_domain::ids::{HitlId, TenantId};
use agentgov_domain::model::{HitlCallback, HitlFilter, HitlRequest, HitlStatus};
use agentgov_domain::page::{Page, PageRequest};
use agentgov_domain::ports::HitlRepo;
use agentgov_domain::ports::store::CALLBACK_LIMIT_REACHED;
use agentgov_domain::{DomainError, Result};
use async_trait::async_trait;
use diesel::dsl::sql;
use diesel::prelude::*;
use diesel::sql_types::{BigInt, Bool, Timestamptz};
use diesel_async::{AsyncConnection, AsyncPgConnection, RunQueryDsl};
use time::OffsetDateTime;

use crate::error::{self, TxError};
use crate::rows::{HitlBodyRow, HitlRow};
use crate::schema::{hitl_requests, tenants};
use crate::store::{Conn, PgStore};

use super::page_of;

const PENDING: &str = "pending";
const APPROVED: &str = "approved";

/// The condition of `hitl_requests_expiry_idx` as written there: a bound `status = $1`
/// would not let a generic plan use the partial index.
const IS_PENDING: &str = "status = 'pending'";
/// The condition of `hitl_requests_open_callbacks_idx`, likewise.
const IS_CALLBACK_OPEN: &str = "callback_open";

fn not_found(id: HitlId) -> DomainError {
    DomainError::not_found("approval request", id)
}

/// The tenant's request `id`.
macro_rules! request {
    ($tenant:expr, $id:expr) => {
        hitl_requests::table
            .filter(hitl_requests::id.eq($id.as_uuid()))
            .filter(hitl_requests::tenant_id.eq($tenant.as_uuid()))
    };
}

/// Whether a conditional write to request `id` applied (`updated` rows): `false` when the
/// request exists but its condition failed, `NotFound` when it does not exist.
async fn applied(conn: &mut Conn, tenant: TenantId, id: HitlId, updated: usize) -> Result<bool> {
    if updated > 0 {
        return Ok(true);
    }
    let present: bool =
        diesel::select(diesel::dsl::exists(request!(tenant, id))).get_result(conn).await.map_err(error::db)?;
    if present { Ok(false) } else { Err(not_found(id)) }
}

#[async_trait]
impl HitlRepo for PgStore {
    async fn insert_hitl(&self, request: &HitlRequest, max_open_callbacks: u64) -> Result<()> {
        let row = HitlRow::try_from(request)?;
        if !row.callback_open {
            let mut conn = self.conn().await?;
            // A missing tenant fails the foreign key, a taken id the primary key: `Conflict`.
            diesel::insert_into(hitl_requests::table).values(&row).execute(&mut conn).await.map_err(error::db)?;
            return Ok(());
        }
        let tenant = row.tenant_id;
        let mut conn = self.tx_conn().await?;
        let conn: &mut AsyncPgConnection = &mut conn;
        conn.transaction(async |conn| -> Result<(), TxError> {
            // The tenant row lock orders concurrent inserts with a callback, so the count and
            // the insert are one step (`FOR NO KEY UPDATE`: foreign-key checks elsewhere are
            // not blocked).
            let locked: Option<uuid::Uuid> =
                tenants::table.find(tenant).select(tenants::id).for_no_key_update().first(conn).await.optional()?;
            if locked.is_none() {
                return Err(TxError::Domain(DomainError::Conflict("tenant does not exist".into())));
            }
            let open: i64 = hitl_requests::table
                .filter(hitl_requests::tenant_id.eq(tenant))
                .filter(sql::<Bool>(IS_CALLBACK_OPEN))
                .count()
                .get_result(conn)
                .await?;
            if u64::try_from(open).unwrap_or(u64::MAX) >= max_open_callbacks {
                return Err(TxError::Domain(DomainError::Conflict(CALLBACK_LIMIT_REACHED.into())));
            }
            diesel::insert_into(hitl_requests::table).values(&row).execute(conn).await?;
            Ok(())
        })
        .await
        .map_err(DomainError::from)
    }

    async fn get_hitl(&self, tenant: TenantId, id: HitlId) -> Result<Option<HitlRequest>> {
        let mut conn = self.conn().await?;
        let row = request!(tenant, id)
            .select(HitlBodyRow::as_select())
            .first(&mut conn)
            .await
            .optional()
            .map_err(error::db)?;
        row.map(HitlRequest::try_from).transpose()
    }

    async fn list_hitl(&self, tenant: TenantId, filter: &HitlFilter, page: &PageRequest) -> Result<Page<HitlRequest>> {
        // Oldest first: `(tenant_id, status, id)` or `(tenant_id, id)` answers in id order.
        let mut query = hitl_requests::table
            .filter(hitl_requests::tenant_id.eq(tenant.as_uuid()))
            .select(HitlBodyRow::as_select())
            .order(hitl_requests::id.asc())
            .limit(page.fetch_limit())
            .into_boxed();
        if let Some(after) = page.after {
            query = query.filter(hitl_requests::id.gt(after));
        }
        if let Some(status) = filter.status {
            query = query.filter(hitl_requests::status.eq(status.as_str()));
        }
        if let Some(agent) = filter.agent_id {
            query = query.filter(hitl_requests::agent_id.eq(agent.as_uuid()));
        }
        let mut conn = self.conn().await?;
        let rows: Vec<HitlBodyRow> = query.load(&mut conn).await.map_err(error::db)?;
        page_of(rows, page, |r: &HitlRequest| r.id.as_uuid())
    }

    async fn decide_hitl(&self, request: &HitlRequest) -> Result<bool> {
        let (tenant, id) = (request.tenant_id, request.id);
        let row = HitlRow::try_from(request)?;
        let mut conn = self.conn().await?;
        // One statement: a concurrent writer holding the row is waited for, and the status
        // is checked again on the row it left.
        let updated = diesel::update(request!(tenant, id).filter(hitl_requests::status.eq(PENDING)))
            .set((
                hitl_requests::agent_id.eq(row.agent_id),
                hitl_requests::status.eq(row.status),
                hitl_requests::expires_at.eq(row.expires_at),
                hitl_requests::callback_due_at.eq(row.callback_due_at),
                hitl_requests::body.eq(row.body),
                hitl_requests::callback_open.eq(row.callback_open),
                hitl_requests::grant_open.eq(row.grant_open),
                hitl_requests::escalate_at.eq(row.escalate_at),
            ))
            .execute(&mut conn)
            .await
            .map_err(error::db)?;
        applied(&mut conn, tenant, id, updated).await
    }

    async fn expired_hitl(&self, now: OffsetDateTime, limit: i64) -> Result<Vec<HitlRequest>> {
        if limit <= 0 {
            return Ok(Vec::new());
        }
        let mut conn = self.conn().await?;
        let rows: Vec<HitlBodyRow> = hitl_requests::table
            .filter(sql::<Bool>(IS_PENDING))
            .filter(hitl_requests::expires_at.le(now))
            .order((hitl_requests::expires_at.asc(), hitl_requests::id.asc()))
            .limit(limit)
            .select(HitlBodyRow::as_select())
            .load(&mut conn)
            .await
            .map_err(error::db)?;
        rows.into_iter().map(HitlRequest::try_from).collect()
    }

    async fn due_hitl_callbacks(&self, now: OffsetDateTime, limit: i64, per_tenant: i64) -> Result<Vec<HitlRequest>> {
        if limit <= 0 || per_tenant <= 0 {
            return Ok(Vec::new());
        }
        let mut conn = self.conn().await?;
        // `callback_due_at <= $1` implies the partial index's `IS NOT NULL`. Each due
        // callback's turn is its place in its tenant's queue; the round takes turn 1 of every
        // tenant, then turn 2, and so on.
        let rows: Vec<HitlBodyRow> = diesel::sql_query(
            "SELECT id, tenant_id, body FROM ( \
               SELECT id, tenant_id, body, callback_due_at, ROW_NUMBER() OVER ( \
                 PARTITION BY tenant_id ORDER BY callback_due_at, id) AS turn \
               FROM hitl_requests WHERE callback_due_at <= $1) AS due \
             WHERE turn <= $2 ORDER BY turn, callback_due_at, id LIMIT $3",
        )
        .bind::<Timestamptz, _>(now)
        .bind::<BigInt, _>(per_tenant)
        .bind::<BigInt, _>(limit)
        .load(&mut conn)
        .await
        .map_err(error::db)?;
        rows.into_iter().map(HitlRequest::try_from).collect()
    }

    async fn update_hitl_callback(&self, tenant: TenantId, id: HitlId, callback: &HitlCallback) -> Result<()> {
        let callback = callback.clone();
        let mut conn = self.tx_conn().await?;
        let conn: &mut AsyncPgConnection = &mut conn;
        conn.transaction(async move |conn| -> Result<(), TxError> {
            // The row first: a concurrent decision or callback update waits for this commit.
            let row: Option<HitlBodyRow> =
                request!(tenant, id).select(HitlBodyRow::as_select()).for_update().first(conn).await.optional()?;
            let Some(row) = row else { return Err(TxError::Domain(not_found(id))) };
            let mut request = HitlRequest::try_from(row)?;
            if request.status == HitlStatus::Pending {
                return Err(TxError::Domain(DomainError::Conflict(
                    "the approval request is still pending: its callback is the decision's to set".into(),
                )));
            }
            request.callback = Some(callback);
            let row = HitlRow::try_from(&request)?;
            diesel::update(request!(tenant, id))
                .set((
                    hitl_requests::callback_due_at.eq(row.callback_due_at),
                    hitl_requests::body.eq(row.body),
                    hitl_requests::callback_open.eq(row.callback_open),
                ))
                .execute(conn)
                .await?;
            Ok(())
        })
        .await
        .map_err(DomainError::from)
    }

    async fn spend_hitl_grant(&self, request: &HitlRequest) -> Result<bool> {
        let (tenant, id) = (request.tenant_id, request.id);
        let row = HitlRow::try_from(request)?;
        let mut conn = self.conn().await?;
        // One statement: of racing spenders the first takes the row's lock, and the others
        // find `grant_open` false on the row it left.
        let target = request!(tenant, id).filter(hitl_requests::status.eq(APPROVED)).filter(hitl_requests::grant_open);
        let updated = diesel::update(target)
            .set((
                hitl_requests::body.eq(row.body),
                hitl_requests::grant_open.eq(row.grant_open),
                hitl_requests::callback_due_at.eq(row.callback_due_at),
                hitl_requests::callback_open.eq(row.callback_open),
            ))
            .execute(&mut conn)
            .await
            .map_err(error::db)?;
        applied(&mut conn, tenant, id, updated).await
    }

    async fn due_hitl_escalations(&self, now: OffsetDateTime, limit: i64) -> Result<Vec<HitlRequest>> {
        if limit <= 0 {
            return Ok(Vec::new());
        }
        let mut conn = self.conn().await?;
        // `escalate_at <= $1` implies the partial index's `IS NOT NULL`; the column is NULL
        // unless the request is pending.
        let rows: Vec<HitlBodyRow> = hitl_requests::table
            .filter(hitl_requests::escalate_at.le(now))
            .order((hitl_requests::escalate_at.asc(), hitl_requests::id.asc()))
            .limit(limit)
            .select(HitlBodyRow::as_select())
            .load(&mut conn)
            .await
            .map_err(error::db)?;
        rows.into_iter().map(HitlRequest::try_from).collect()
    }

    async fn escalate_hitl(&self, request: &HitlRequest, due: OffsetDateTime) -> Result<bool> {
        let (tenant, id) = (request.tenant_id, request.id);
        let row = HitlRow::try_from(request)?;
        let mut conn = self.conn().await?;
        // One statement: of racing holders the first takes the row's lock, and the others
        // find its `escalate_at` moved on.
        let target =
            request!(tenant, id).filter(hitl_requests::status.eq(PENDING)).filter(hitl_requests::escalate_at.eq(due));
        let updated = diesel::update(target)
            .set((hitl_requests::body.eq(row.body), hitl_requests::escalate_at.eq(row.escalate_at)))
            .execute(&mut conn)
            .await
            .map_err(error::db)?;
        applied(&mut conn, tenant, id, updated).await
    }
}
