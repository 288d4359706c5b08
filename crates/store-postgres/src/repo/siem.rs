//! Named leases and SIEM forwarding state.
//!
//! A lease is taken by one `INSERT … ON CONFLICT (name) DO UPDATE … WHERE` the row is the
//! holder's own or has expired, `RETURNING` the holder: a row comes back exactly when the
//! holder holds the lease afterwards. Of holders racing for a free lease, the others wait on
//! the first one's insert and then find its row, valid and not theirs; of holders racing for
//! an expired one, Postgres re-checks the condition on the row the first one left. Either
//! way one wins.
//!
//! Registering a sink inserts its row (`ON CONFLICT DO NOTHING`: a replica registering it at
//! the same time waits, then finds it) and, in the same transaction, its cursors at the
//! tenants' heads when it starts from the latest. A cursor only moves forward
//! (`GREATEST(old, new)` in the upsert) and its sink's totals are added to in the same
//! transaction. The backlog and the queue depth are each one statement joining
//! `audit_heads` to the sink's cursors (absent: 0), so they read one snapshot.

use agentgov_domain::ids::TenantId;
use agentgov_domain::model::{SiemBacklog, SiemSinkState};
use agentgov_domain::ports::store::{LeaseRepo, SiemRepo};
use agentgov_domain::{DomainError, Result};
use agentgov_store_common::{read_count, stored_count};
use async_trait::async_trait;
use diesel::prelude::*;
use diesel::sql_query;
use diesel::sql_types::{BigInt, Nullable, Text, Timestamptz, Uuid as SqlUuid};
use diesel_async::{AsyncConnection, AsyncPgConnection, RunQueryDsl};
use time::OffsetDateTime;
use uuid::Uuid;

use crate::error::{self, TxError};
use crate::schema::{leases, siem_sinks};
use crate::store::PgStore;

/// Takes the lease unless another holder's is still valid; answers a row when taken.
const TRY_LEASE_SQL: &str = "\
INSERT INTO leases (name, holder, lease_until) VALUES ($1, $2, $3)
ON CONFLICT (name) DO UPDATE SET holder = excluded.holder, lease_until = excluded.lease_until
WHERE leases.holder = excluded.holder OR leases.lease_until <= $4
RETURNING holder";

/// Starts a new sink at every tenant's current head.
const CURSORS_AT_HEADS_SQL: &str = "\
INSERT INTO siem_cursors (sink, tenant_id, last_seq)
SELECT $1, tenant_id, seq FROM audit_heads
ON CONFLICT (sink, tenant_id) DO UPDATE SET last_seq = GREATEST(siem_cursors.last_seq, excluded.last_seq)";

/// Every tenant whose head is past the sink's cursor, in tenant id order.
const BACKLOG_SQL: &str = "\
SELECT h.tenant_id, COALESCE(c.last_seq, 0) AS cursor, h.seq AS head
FROM audit_heads h
LEFT JOIN siem_cursors c ON c.tenant_id = h.tenant_id AND c.sink = $1
WHERE h.seq > COALESCE(c.last_seq, 0)
ORDER BY h.tenant_id";

/// Moves the cursor forward, never back. A missing tenant fails the foreign key.
const ADVANCE_CURSOR_SQL: &str = "\
INSERT INTO siem_cursors (sink, tenant_id, last_seq) VALUES ($1, $2, $3)
ON CONFLICT (sink, tenant_id) DO UPDATE SET last_seq = GREATEST(siem_cursors.last_seq, excluded.last_seq)";

/// Adds to the sink's forwarded total (creating its row if missing); the last success is
/// stamped only when the new row's is (records were forwarded).
const ADD_FORWARDED_SQL: &str = "\
INSERT INTO siem_sinks (name, created_at, forwarded, failed, last_success_at) VALUES ($1, $2, $3, 0, $4)
ON CONFLICT (name) DO UPDATE SET
    forwarded = siem_sinks.forwarded + excluded.forwarded,
    last_success_at = COALESCE(excluded.last_success_at, siem_sinks.last_success_at)";

/// Adds to the sink's failed total (creating its row if missing) and records the error.
const ADD_FAILED_SQL: &str = "\
INSERT INTO siem_sinks (name, created_at, forwarded, failed, last_error, last_error_at) VALUES ($1, $2, 0, $3, $4, $2)
ON CONFLICT (name) DO UPDATE SET
    failed = siem_sinks.failed + excluded.failed,
    last_error = excluded.last_error,
    last_error_at = excluded.last_error_at";

/// The sink's row (all NULL when it has none) and its queue depth, in one statement.
/// `SUM` of `BIGINT` is `NUMERIC`, hence the cast.
const STATE_SQL: &str = "\
SELECT s.forwarded, s.failed, s.last_success_at, s.last_error, s.last_error_at,
       (SELECT COALESCE(SUM(h.seq - COALESCE(c.last_seq, 0)), 0)::BIGINT
        FROM audit_heads h
        LEFT JOIN siem_cursors c ON c.tenant_id = h.tenant_id AND c.sink = $1
        WHERE h.seq > COALESCE(c.last_seq, 0)) AS queue_depth
FROM (SELECT 1) AS q
LEFT JOIN siem_sinks s ON s.name = $1";

#[derive(QueryableByName)]
struct HolderRow {
    #[diesel(sql_type = SqlUuid)]
    holder: Uuid,
}

#[derive(QueryableByName)]
struct BacklogRow {
    #[diesel(sql_type = SqlUuid)]
    tenant_id: Uuid,
    #[diesel(sql_type = BigInt)]
    cursor: i64,
    #[diesel(sql_type = BigInt)]
    head: i64,
}

#[derive(QueryableByName)]
struct StateRow {
    #[diesel(sql_type = Nullable<BigInt>)]
    forwarded: Option<i64>,
    #[diesel(sql_type = Nullable<BigInt>)]
    failed: Option<i64>,
    #[diesel(sql_type = Nullable<Timestamptz>)]
    last_success_at: Option<OffsetDateTime>,
    #[diesel(sql_type = Nullable<Text>)]
    last_error: Option<String>,
    #[diesel(sql_type = Nullable<Timestamptz>)]
    last_error_at: Option<OffsetDateTime>,
    #[diesel(sql_type = BigInt)]
    queue_depth: i64,
}

impl TryFrom<StateRow> for SiemSinkState {
    type Error = DomainError;

    fn try_from(r: StateRow) -> Result<Self> {
        Ok(SiemSinkState {
            forwarded: read_count("siem_sinks.forwarded", r.forwarded)?,
            failed: read_count("siem_sinks.failed", r.failed)?,
            last_success_at: r.last_success_at,
            last_error: r.last_error,
            last_error_at: r.last_error_at,
            queue_depth: read_count("queue depth", Some(r.queue_depth))?,
        })
    }
}

#[async_trait]
impl LeaseRepo for PgStore {
    async fn try_lease(&self, name: &str, holder: Uuid, now: OffsetDateTime, until: OffsetDateTime) -> Result<bool> {
        let mut conn = self.conn().await?;
        let taken: Option<HolderRow> = sql_query(TRY_LEASE_SQL)
            .bind::<Text, _>(name)
            .bind::<SqlUuid, _>(holder)
            .bind::<Timestamptz, _>(until)
            .bind::<Timestamptz, _>(now)
            .get_result(&mut conn)
            .await
            .optional()
            .map_err(error::db)?;
        Ok(taken.is_some_and(|r| r.holder == holder))
    }

    async fn release_lease(&self, name: &str, holder: Uuid) -> Result<()> {
        let mut conn = self.conn().await?;
        diesel::delete(leases::table.filter(leases::name.eq(name)).filter(leases::holder.eq(holder)))
            .execute(&mut conn)
            .await
            .map_err(error::db)?;
        Ok(())
    }
}

#[async_trait]
impl SiemRepo for PgStore {
    async fn register_siem_sink(&self, sink: &str, from_latest: bool, now: OffsetDateTime) -> Result<bool> {
        let sink = sink.to_owned();
        let mut conn = self.tx_conn().await?;
        let conn: &mut AsyncPgConnection = &mut conn;
        conn.transaction(async move |conn| -> Result<bool, TxError> {
            let inserted = diesel::insert_into(siem_sinks::table)
                .values((siem_sinks::name.eq(&sink), siem_sinks::created_at.eq(now)))
                .on_conflict_do_nothing()
                .execute(conn)
                .await?
                > 0;
            if inserted && from_latest {
                sql_query(CURSORS_AT_HEADS_SQL).bind::<Text, _>(&sink).execute(conn).await?;
            }
            Ok(inserted)
        })
        .await
        .map_err(DomainError::from)
    }

    async fn siem_backlog(&self, sink: &str) -> Result<Vec<SiemBacklog>> {
        let mut conn = self.conn().await?;
        let rows: Vec<BacklogRow> =
            sql_query(BACKLOG_SQL).bind::<Text, _>(sink).load(&mut conn).await.map_err(error::db)?;
        Ok(rows
            .into_iter()
            .map(|r| SiemBacklog { tenant_id: TenantId(r.tenant_id), cursor: r.cursor, head: r.head })
            .collect())
    }

    async fn advance_siem_cursor(
        &self,
        sink: &str,
        tenant: TenantId,
        seq: i64,
        forwarded: u64,
        at: OffsetDateTime,
    ) -> Result<()> {
        let sink = sink.to_owned();
        let count = stored_count(forwarded)?;
        let success = (forwarded > 0).then_some(at);
        let mut conn = self.tx_conn().await?;
        let conn: &mut AsyncPgConnection = &mut conn;
        conn.transaction(async move |conn| -> Result<(), TxError> {
            sql_query(ADD_FORWARDED_SQL)
                .bind::<Text, _>(&sink)
                .bind::<Timestamptz, _>(at)
                .bind::<BigInt, _>(count)
                .bind::<Nullable<Timestamptz>, _>(success)
                .execute(conn)
                .await?;
            // A missing tenant fails `siem_cursors_tenant_id_fkey`: `Conflict`.
            sql_query(ADVANCE_CURSOR_SQL)
                .bind::<Text, _>(&sink)
                .bind::<SqlUuid, _>(tenant.as_uuid())
                .bind::<BigInt, _>(seq)
                .execute(conn)
                .await?;
            Ok(())
        })
        .await
        .map_err(DomainError::from)
    }

    async fn record_siem_failure(&self, sink: &str, failed: u64, error: &str, at: OffsetDateTime) -> Result<()> {
        let count = stored_count(failed)?;
        let mut conn = self.conn().await?;
        sql_query(ADD_FAILED_SQL)
            .bind::<Text, _>(sink)
            .bind::<Timestamptz, _>(at)
            .bind::<BigInt, _>(count)
            .bind::<Text, _>(error)
            .execute(&mut conn)
            .await
            .map_err(error::db)?;
        Ok(())
    }

    async fn siem_sink_state(&self, sink: &str) -> Result<SiemSinkState> {
        let mut conn = self.conn().await?;
        let row: StateRow =
            sql_query(STATE_SQL).bind::<Text, _>(sink).get_result(&mut conn).await.map_err(error::db)?;
        SiemSinkState::try_from(row)
    }
}
