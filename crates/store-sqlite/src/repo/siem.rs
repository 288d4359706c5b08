//! Named leases and SIEM forwarding state on SQLite.
//!
//! A lease is taken by one upsert, `INSERT … ON CONFLICT (name) DO UPDATE … WHERE` the row is
//! the holder's own or has expired: it writes a row (one change) exactly when the holder
//! holds the lease afterwards. Writes queue on the single writer, and another process's
//! writer waits for the file lock, so of racing holders one wins.
//!
//! A sink's cursors and totals are written in `BEGIN IMMEDIATE` transactions on the writer;
//! a cursor only moves forward (`max(old, new)` in the upsert). The backlog and the queue
//! depth are each one statement joining `audit_heads` to the sink's cursors (absent: 0), so
//! they read one snapshot. Timestamps are unix microseconds, the holder is UUID text.

use agentgov_domain::ids::TenantId;
use agentgov_domain::model::audit::unix_micros;
use agentgov_domain::model::{SiemBacklog, SiemSinkState};
use agentgov_domain::ports::store::{LeaseRepo, SiemRepo};
use agentgov_domain::{DomainError, Result};
use agentgov_store_common::{read_count, stored_count};
use async_trait::async_trait;
use diesel::prelude::*;
use diesel::sql_query;
use diesel::sql_types::{BigInt, Nullable, Text};
use time::OffsetDateTime;
use uuid::Uuid;

use crate::SqliteStore;
use crate::columns::{Id, Micros};
use crate::repo::check_tenant;
use crate::rows::id_text;
use crate::schema::{leases, siem_sinks};

/// Takes the lease unless another holder's is still valid; one change when taken.
const TRY_LEASE_SQL: &str = "\
INSERT INTO leases (name, holder, lease_until) VALUES (?, ?, ?)
ON CONFLICT (name) DO UPDATE SET holder = excluded.holder, lease_until = excluded.lease_until
WHERE leases.holder = excluded.holder OR leases.lease_until <= ?";

/// Starts a new sink at every tenant's current head. (`WHERE true`: SQLite needs it to tell
/// the upsert clause from a join in `INSERT … SELECT`.)
const CURSORS_AT_HEADS_SQL: &str = "\
INSERT INTO siem_cursors (sink, tenant_id, last_seq)
SELECT ?, tenant_id, seq FROM audit_heads WHERE true
ON CONFLICT (sink, tenant_id) DO UPDATE SET last_seq = max(siem_cursors.last_seq, excluded.last_seq)";

/// Every tenant whose head is past the sink's cursor, in tenant id order (UUID text sorts
/// as the UUID).
const BACKLOG_SQL: &str = "\
SELECT h.tenant_id AS tenant_id, COALESCE(c.last_seq, 0) AS cursor, h.seq AS head
FROM audit_heads h
LEFT JOIN siem_cursors c ON c.tenant_id = h.tenant_id AND c.sink = ?
WHERE h.seq > COALESCE(c.last_seq, 0)
ORDER BY h.tenant_id";

/// Moves the cursor forward, never back.
const ADVANCE_CURSOR_SQL: &str = "\
INSERT INTO siem_cursors (sink, tenant_id, last_seq) VALUES (?, ?, ?)
ON CONFLICT (sink, tenant_id) DO UPDATE SET last_seq = max(siem_cursors.last_seq, excluded.last_seq)";

/// Adds to the sink's forwarded total (creating its row if missing); the last success is
/// stamped only when the new row's is (records were forwarded).
const ADD_FORWARDED_SQL: &str = "\
INSERT INTO siem_sinks (name, created_at, forwarded, failed, last_success_at) VALUES (?, ?, ?, 0, ?)
ON CONFLICT (name) DO UPDATE SET
    forwarded = siem_sinks.forwarded + excluded.forwarded,
    last_success_at = COALESCE(excluded.last_success_at, siem_sinks.last_success_at)";

/// Adds to the sink's failed total (creating its row if missing) and records the error.
const ADD_FAILED_SQL: &str = "\
INSERT INTO siem_sinks (name, created_at, forwarded, failed, last_error, last_error_at) VALUES (?, ?, 0, ?, ?, ?)
ON CONFLICT (name) DO UPDATE SET
    failed = siem_sinks.failed + excluded.failed,
    last_error = excluded.last_error,
    last_error_at = excluded.last_error_at";

/// The sink's row (all NULL when it has none) and its queue depth, in one statement.
const STATE_SQL: &str = "\
SELECT s.forwarded AS forwarded, s.failed AS failed, s.last_success_at AS last_success_at,
       s.last_error AS last_error, s.last_error_at AS last_error_at,
       (SELECT COALESCE(SUM(h.seq - COALESCE(c.last_seq, 0)), 0)
        FROM audit_heads h
        LEFT JOIN siem_cursors c ON c.tenant_id = h.tenant_id AND c.sink = q.name
        WHERE h.seq > COALESCE(c.last_seq, 0)) AS queue_depth
FROM (SELECT ? AS name) AS q
LEFT JOIN siem_sinks s ON s.name = q.name";

#[derive(QueryableByName)]
struct BacklogRow {
    #[diesel(sql_type = Text)]
    tenant_id: Id,
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
    #[diesel(sql_type = Nullable<BigInt>)]
    last_success_at: Option<Micros>,
    #[diesel(sql_type = Nullable<Text>)]
    last_error: Option<String>,
    #[diesel(sql_type = Nullable<BigInt>)]
    last_error_at: Option<Micros>,
    #[diesel(sql_type = BigInt)]
    queue_depth: i64,
}

impl From<BacklogRow> for SiemBacklog {
    fn from(r: BacklogRow) -> Self {
        SiemBacklog { tenant_id: r.tenant_id.0.into(), cursor: r.cursor, head: r.head }
    }
}

impl TryFrom<StateRow> for SiemSinkState {
    type Error = DomainError;

    fn try_from(r: StateRow) -> Result<Self> {
        Ok(SiemSinkState {
            forwarded: read_count("siem_sinks.forwarded", r.forwarded)?,
            failed: read_count("siem_sinks.failed", r.failed)?,
            last_success_at: r.last_success_at.map(Into::into),
            last_error: r.last_error,
            last_error_at: r.last_error_at.map(Into::into),
            queue_depth: read_count("queue depth", Some(r.queue_depth))?,
        })
    }
}

#[async_trait]
impl LeaseRepo for SqliteStore {
    async fn try_lease(&self, name: &str, holder: Uuid, now: OffsetDateTime, until: OffsetDateTime) -> Result<bool> {
        let (name, holder) = (name.to_owned(), id_text(holder));
        let (now, until) = (unix_micros(now), unix_micros(until));
        self.write(move |c| {
            let n = sql_query(TRY_LEASE_SQL)
                .bind::<Text, _>(name)
                .bind::<Text, _>(holder)
                .bind::<BigInt, _>(until)
                .bind::<BigInt, _>(now)
                .execute(c)?;
            Ok(n > 0)
        })
        .await
    }

    async fn release_lease(&self, name: &str, holder: Uuid) -> Result<()> {
        let (name, holder) = (name.to_owned(), id_text(holder));
        self.write(move |c| {
            diesel::delete(leases::table.filter(leases::name.eq(name)).filter(leases::holder.eq(holder))).execute(c)?;
            Ok(())
        })
        .await
    }
}

#[async_trait]
impl SiemRepo for SqliteStore {
    async fn register_siem_sink(&self, sink: &str, from_latest: bool, now: OffsetDateTime) -> Result<bool> {
        let (sink, now) = (sink.to_owned(), unix_micros(now));
        self.transaction(move |c| {
            let inserted = diesel::insert_into(siem_sinks::table)
                .values((siem_sinks::name.eq(&sink), siem_sinks::created_at.eq(now)))
                .on_conflict_do_nothing()
                .execute(c)?
                > 0;
            if inserted && from_latest {
                sql_query(CURSORS_AT_HEADS_SQL).bind::<Text, _>(&sink).execute(c)?;
            }
            Ok(inserted)
        })
        .await
    }

    async fn siem_backlog(&self, sink: &str) -> Result<Vec<SiemBacklog>> {
        let sink = sink.to_owned();
        self.read(move |c| {
            let rows: Vec<BacklogRow> = sql_query(BACKLOG_SQL).bind::<Text, _>(sink).load(c)?;
            Ok(rows.into_iter().map(SiemBacklog::from).collect())
        })
        .await
    }

    async fn advance_siem_cursor(
        &self,
        sink: &str,
        tenant: TenantId,
        seq: i64,
        forwarded: u64,
        at: OffsetDateTime,
    ) -> Result<()> {
        let (sink, tenant_id, tenant) = (sink.to_owned(), tenant.as_uuid(), id_text(tenant.0));
        let (count, at) = (stored_count(forwarded)?, unix_micros(at));
        let success = (forwarded > 0).then_some(at);
        self.transaction(move |c| {
            // Names a missing tenant (the foreign key would fail the insert too, unnamed).
            check_tenant(c, Id(tenant_id))?;
            sql_query(ADD_FORWARDED_SQL)
                .bind::<Text, _>(&sink)
                .bind::<BigInt, _>(at)
                .bind::<BigInt, _>(count)
                .bind::<Nullable<BigInt>, _>(success)
                .execute(c)?;
            sql_query(ADVANCE_CURSOR_SQL)
                .bind::<Text, _>(&sink)
                .bind::<Text, _>(&tenant)
                .bind::<BigInt, _>(seq)
                .execute(c)?;
            Ok(())
        })
        .await
    }

    async fn record_siem_failure(&self, sink: &str, failed: u64, error: &str, at: OffsetDateTime) -> Result<()> {
        let (sink, error) = (sink.to_owned(), error.to_owned());
        let (count, at) = (stored_count(failed)?, unix_micros(at));
        self.write(move |c| {
            sql_query(ADD_FAILED_SQL)
                .bind::<Text, _>(sink)
                .bind::<BigInt, _>(at)
                .bind::<BigInt, _>(count)
                .bind::<Text, _>(error)
                .bind::<BigInt, _>(at)
                .execute(c)?;
            Ok(())
        })
        .await
    }

    async fn siem_sink_state(&self, sink: &str) -> Result<SiemSinkState> {
        let sink = sink.to_owned();
        self.read(move |c| {
            let row: StateRow = sql_query(STATE_SQL).bind::<Text, _>(sink).get_result(c)?;
            Ok(SiemSinkState::try_from(row)?)
        })
        .await
    }
}
