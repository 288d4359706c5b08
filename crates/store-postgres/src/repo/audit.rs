//! The audit log: one hash chain per tenant, appended under a lock on the tenant's head row
//! so that replicas sharing the database take turns.

use std::collections::{HashMap, HashSet};
use std::sync::{Mutex, PoisonError};

use agentgov_domain::ids::{AuditId, TenantId};
use agentgov_domain::model::{AuditEntry, AuditFilter, AuditRecord, AuditScan, ChainHead, SeqOrder};
use agentgov_domain::ports::AuditRepo;
use agentgov_domain::{DomainError, Result};
use async_trait::async_trait;
use diesel::pg::Pg;
use diesel::prelude::*;
use diesel::query_builder::{AstPass, Query, QueryFragment, QueryId};
use diesel::sql_query;
use diesel::sql_types::{Array, BigInt, Bytea, Double, Nullable, Text, Timestamptz, Untyped, Uuid as SqlUuid};
use diesel_async::{AsyncConnection, AsyncPgConnection, RunQueryDsl};
use time::OffsetDateTime;
use uuid::Uuid;

use crate::error::{self, TxError};
use crate::rows::{AuditHeadRow, AuditRecordRow};
use crate::schema::{audit_heads, audit_records};
use crate::store::PgStore;

/// Gives each tenant a head row to lock: a placeholder (seq 0, the genesis hash) before a
/// tenant's first append, which [`AuditRepo::audit_head`] does not report. It runs in a
/// statement of its own, before the append's transaction: creating a head inside the
/// transaction, after locking the heads that already exist, could deadlock two appends
/// (each holding a head the other's insert or lock waits for). A missing tenant fails the
/// foreign key (`Conflict`).
const ENSURE_HEADS_SQL: &str = "\
INSERT INTO audit_heads (tenant_id, seq, hash, ts)
SELECT t, 0, decode(repeat('00', 32), 'hex'), 'epoch' FROM unnest($1::uuid[]) AS t
ON CONFLICT (tenant_id) DO NOTHING";

#[async_trait]
impl AuditRepo for PgStore {
    async fn append_audit(&self, entries: Vec<AuditEntry>) -> Result<Vec<AuditRecord>> {
        if entries.is_empty() {
            return Ok(Vec::new());
        }
        // Sorted, so that every transaction inserts and locks head rows in the same order
        // and concurrent appends to several tenants cannot deadlock.
        let mut tenants: Vec<Uuid> = entries.iter().map(|e| e.tenant_id.as_uuid()).collect();
        tenants.sort_unstable();
        tenants.dedup();
        let mut conn = self.audit_tx_conn().await?;
        let conn: &mut AsyncPgConnection = &mut conn;
        // Heads are created once per tenant and never removed but with their tenant, so a
        // tenant this process has seen a head for needs no statement here.
        let unseen = self.heads_seen.unseen(&tenants);
        if !unseen.is_empty() {
            sql_query(ENSURE_HEADS_SQL).bind::<Array<SqlUuid>, _>(&unseen).execute(conn).await.map_err(error::db)?;
            self.heads_seen.insert(&unseen);
        }
        let heads_seen = &self.heads_seen;
        conn.transaction(async move |conn| -> Result<Vec<AuditRecord>, TxError> {
            // Locked in tenant order, so appends that share tenants take turns without
            // deadlocking.
            let rows = lock_heads(conn, &tenants).await?;
            if rows.len() < tenants.len() {
                // A tenant deleted since its head was seen: its head went with it.
                heads_seen.forget(&tenants);
                return Err(DomainError::Conflict("tenant not found".into()).into());
            }
            let mut heads = HashMap::with_capacity(rows.len());
            for row in &rows {
                heads.insert(row.tenant_id, row.head()?);
            }

            let mut records = Vec::with_capacity(entries.len());
            for entry in entries {
                let tenant = entry.tenant_id;
                let head = heads
                    .get_mut(&tenant.as_uuid())
                    .ok_or_else(|| DomainError::Internal(format!("no audit head locked for tenant {tenant}")))?;
                records.push(head.seal(entry));
            }

            insert_records_and_advance_heads(conn, &records, &heads).await?;
            Ok(records)
        })
        .await
        .map_err(DomainError::from)
    }

    async fn get_audit(&self, tenant: TenantId, id: AuditId) -> Result<Option<AuditRecord>> {
        let mut conn = self.conn().await?;
        let row = audit_records::table
            .filter(audit_records::id.eq(id.as_uuid()))
            .filter(audit_records::tenant_id.eq(tenant.as_uuid()))
            .select(AuditRecordRow::as_select())
            .first(&mut conn)
            .await
            .optional()
            .map_err(error::db)?;
        row.map(AuditRecord::try_from).transpose()
    }

    async fn scan_audit(&self, tenant: TenantId, filter: &AuditFilter, scan: AuditScan) -> Result<Vec<AuditRecord>> {
        let mut query = filtered(tenant, filter).select(AuditRecordRow::as_select()).limit(i64::from(scan.limit));
        query = match (scan.order, scan.after_seq) {
            (SeqOrder::Asc, None) => query.order(audit_records::seq.asc()),
            (SeqOrder::Asc, Some(after)) => query.filter(audit_records::seq.gt(after)).order(audit_records::seq.asc()),
            (SeqOrder::Desc, None) => query.order(audit_records::seq.desc()),
            (SeqOrder::Desc, Some(after)) => {
                query.filter(audit_records::seq.lt(after)).order(audit_records::seq.desc())
            }
        };
        let mut conn = self.conn().await?;
        let rows: Vec<AuditRecordRow> = query.load(&mut conn).await.map_err(error::db)?;
        rows.into_iter().map(AuditRecord::try_from).collect()
    }

    async fn count_audit(&self, tenant: TenantId, filter: &AuditFilter) -> Result<u64> {
        let mut conn = self.conn().await?;
        let n: i64 = filtered(tenant, filter).count().get_result(&mut conn).await.map_err(error::db)?;
        u64::try_from(n).map_err(|_| DomainError::Internal(format!("negative count {n}")))
    }

    async fn audit_head(&self, tenant: TenantId) -> Result<Option<ChainHead>> {
        let mut conn = self.conn().await?;
        let row = audit_heads::table
            .find(tenant.as_uuid())
            .select(AuditHeadRow::as_select())
            .first(&mut conn)
            .await
            .optional()
            .map_err(error::db)?;
        // A placeholder row (seq 0) is only ever visible inside the append that made it.
        Ok(row.map(|r| r.head()).transpose()?.filter(|h| h.seq > 0))
    }
}

/// The tenants this process knows to have a head row (see [`ENSURE_HEADS_SQL`]).
#[derive(Default)]
pub(crate) struct HeadsSeen(Mutex<HashSet<Uuid>>);

impl HeadsSeen {
    fn unseen(&self, tenants: &[Uuid]) -> Vec<Uuid> {
        let seen = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        tenants.iter().filter(|t| !seen.contains(t)).copied().collect()
    }

    fn insert(&self, tenants: &[Uuid]) {
        self.0.lock().unwrap_or_else(PoisonError::into_inner).extend(tenants.iter().copied());
    }

    fn forget(&self, tenants: &[Uuid]) {
        let mut seen = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        for t in tenants {
            seen.remove(t);
        }
    }
}

/// Locks the head rows of `tenants` (sorted) for the rest of the transaction.
async fn lock_heads(conn: &mut AsyncPgConnection, tenants: &[Uuid]) -> QueryResult<Vec<AuditHeadRow>> {
    audit_heads::table
        .filter(audit_heads::tenant_id.eq_any(tenants))
        .order(audit_heads::tenant_id)
        .select(AuditHeadRow::as_select())
        .for_update()
        .load(conn)
        .await
}

/// The tenant's records passing `filter`, in no particular order yet.
fn filtered<'a>(tenant: TenantId, f: &'a AuditFilter) -> audit_records::BoxedQuery<'a, Pg> {
    let mut query = audit_records::table.filter(audit_records::tenant_id.eq(tenant.as_uuid())).into_boxed();
    if let Some(agent) = f.agent_id {
        query = query.filter(audit_records::agent_id.eq(agent));
    }
    if let Some(event_type) = &f.event_type {
        query = query.filter(audit_records::event_type.eq(event_type));
    }
    if let Some(action) = &f.action {
        query = query.filter(audit_records::action.eq(action));
    }
    if let Some(decision) = &f.decision {
        query = query.filter(audit_records::decision.eq(decision));
    }
    if let Some(kind) = f.actor_type {
        query = query.filter(audit_records::actor_type.eq(kind.as_str()));
    }
    if let Some(actor) = &f.actor_id {
        query = query.filter(audit_records::actor_id.eq(actor));
    }
    if let Some(from) = f.from {
        query = query.filter(audit_records::ts.ge(from));
    }
    if let Some(to) = f.to {
        query = query.filter(audit_records::ts.lt(to));
    }
    if let Some(min) = f.min_seq {
        query = query.filter(audit_records::seq.ge(min));
    }
    if let Some(max) = f.max_seq {
        query = query.filter(audit_records::seq.le(max));
    }
    query
}

type HeadColumns = (Vec<Uuid>, Vec<i64>, Vec<Vec<u8>>, Vec<OffsetDateTime>);

/// The advanced heads as one array per column, for `ADVANCE_HEADS_SQL`.
fn head_columns(heads: &HashMap<Uuid, ChainHead>) -> HeadColumns {
    let mut columns: HeadColumns = Default::default();
    for (tenant, head) in heads {
        columns.0.push(*tenant);
        columns.1.push(head.seq);
        columns.2.push(head.hash.0.to_vec());
        columns.3.push(head.timestamp);
    }
    columns
}

/// Inserts a whole batch in one statement of one array per column: the statement text is
/// the same for every batch size (prepared once per connection, see [`InsertRecords`]),
/// and its 19 parameters are far from Postgres's limit of 65535 whatever the batch size (a
/// multi-row `VALUES` list needs 15 per row, and chunks). Faster than `VALUES` lists from batches of a few rows up.
///
/// The heads advance in the same statement (a data-modifying CTE): one round trip less
/// per batch.
const INSERT_RECORDS_SQL: &str = "\
WITH inserted AS (
    INSERT INTO audit_records (id, tenant_id, seq, ts, actor_type, actor_id, event_type, agent_id, action, resource,
                               decision, risk_score, details, prev_hash, hash)
    SELECT * FROM unnest($1::uuid[], $2::uuid[], $3::bigint[], $4::timestamptz[], $5::text[], $6::text[],
                         $7::text[], $8::uuid[], $9::text[], $10::text[], $11::text[], $12::float8[], $13::text[],
                         $14::bytea[], $15::bytea[])
)
UPDATE audit_heads AS h SET seq = u.seq, hash = u.hash, ts = u.ts
FROM unnest($16::uuid[], $17::bigint[], $18::bytea[], $19::timestamptz[]) AS u (tenant_id, seq, hash, ts)
WHERE h.tenant_id = u.tenant_id";

async fn insert_records_and_advance_heads(
    conn: &mut AsyncPgConnection,
    records: &[AuditRecord],
    heads: &HashMap<Uuid, ChainHead>,
) -> QueryResult<usize> {
    InsertRecords { c: RecordColumns::of(records), heads: head_columns(heads) }.execute(conn).await
}

/// [`INSERT_RECORDS_SQL`] with its parameters, as a query type of its own: `sql_query` is
/// prepared anew on every call (one more round trip per batch), while a static query id
/// lets diesel cache the prepared statement per connection.
struct InsertRecords<'a> {
    c: RecordColumns<'a>,
    heads: HeadColumns,
}

impl QueryId for InsertRecords<'_> {
    type QueryId = InsertRecords<'static>;
    const HAS_STATIC_QUERY_ID: bool = true;
}

impl Query for InsertRecords<'_> {
    type SqlType = Untyped;
}

impl QueryFragment<Pg> for InsertRecords<'_> {
    fn walk_ast<'b>(&'b self, mut out: AstPass<'_, 'b, Pg>) -> QueryResult<()> {
        // The SQL's `$n` placeholders, in order, become the binds below.
        let mut pieces = INSERT_RECORDS_SQL.split('$');
        out.push_sql(pieces.next().unwrap_or_default());
        for piece in pieces {
            let digits = piece.bytes().take_while(u8::is_ascii_digit).count();
            let (c, h) = (&self.c, &self.heads);
            match &piece[..digits] {
                "1" => out.push_bind_param::<Array<SqlUuid>, _>(&c.id)?,
                "2" => out.push_bind_param::<Array<SqlUuid>, _>(&c.tenant_id)?,
                "3" => out.push_bind_param::<Array<BigInt>, _>(&c.seq)?,
                "4" => out.push_bind_param::<Array<Timestamptz>, _>(&c.ts)?,
                "5" => out.push_bind_param::<Array<Text>, _>(&c.actor_type)?,
                "6" => out.push_bind_param::<Array<Text>, _>(&c.actor_id)?,
                "7" => out.push_bind_param::<Array<Text>, _>(&c.event_type)?,
                "8" => out.push_bind_param::<Array<Nullable<SqlUuid>>, _>(&c.agent_id)?,
                "9" => out.push_bind_param::<Array<Nullable<Text>>, _>(&c.action)?,
                "10" => out.push_bind_param::<Array<Nullable<Text>>, _>(&c.resource)?,
                "11" => out.push_bind_param::<Array<Nullable<Text>>, _>(&c.decision)?,
                "12" => out.push_bind_param::<Array<Nullable<Double>>, _>(&c.risk_score)?,
                "13" => out.push_bind_param::<Array<Text>, _>(&c.details)?,
                "14" => out.push_bind_param::<Array<Bytea>, _>(&c.prev_hash)?,
                "15" => out.push_bind_param::<Array<Bytea>, _>(&c.hash)?,
                "16" => out.push_bind_param::<Array<SqlUuid>, _>(&h.0)?,
                "17" => out.push_bind_param::<Array<BigInt>, _>(&h.1)?,
                "18" => out.push_bind_param::<Array<Bytea>, _>(&h.2)?,
                "19" => out.push_bind_param::<Array<Timestamptz>, _>(&h.3)?,
                other => {
                    return Err(diesel::result::Error::QueryBuilderError(
                        format!("INSERT_RECORDS_SQL has no parameter ${other}").into(),
                    ));
                }
            }
            out.push_sql(&piece[digits..]);
        }
        Ok(())
    }
}

/// The columns of `audit_records`, one array each, borrowed from the sealed records.
/// `details` is the hashed JSON text verbatim.
#[derive(Default)]
struct RecordColumns<'a> {
    id: Vec<Uuid>,
    tenant_id: Vec<Uuid>,
    seq: Vec<i64>,
    ts: Vec<OffsetDateTime>,
    actor_type: Vec<&'static str>,
    actor_id: Vec<&'a str>,
    event_type: Vec<&'a str>,
    agent_id: Vec<Option<Uuid>>,
    action: Vec<Option<&'a str>>,
    resource: Vec<Option<&'a str>>,
    decision: Vec<Option<&'a str>>,
    risk_score: Vec<Option<f64>>,
    details: Vec<&'a str>,
    prev_hash: Vec<&'a [u8]>,
    hash: Vec<&'a [u8]>,
}

impl<'a> RecordColumns<'a> {
    fn of(records: &'a [AuditRecord]) -> Self {
        let mut c = Self::default();
        for r in records {
            c.id.push(r.id.as_uuid());
            c.tenant_id.push(r.tenant_id.as_uuid());
            c.seq.push(r.seq);
            c.ts.push(r.timestamp);
            c.actor_type.push(r.actor.kind.as_str());
            c.actor_id.push(&r.actor.id);
            c.event_type.push(&r.event_type);
            c.agent_id.push(r.agent_id);
            c.action.push(r.action.as_deref());
            c.resource.push(r.resource.as_deref());
            c.decision.push(r.decision.as_deref());
            c.risk_score.push(r.risk_score);
            c.details.push(r.details.as_str());
            c.prev_hash.push(&r.prev_hash.0);
            c.hash.push(&r.hash.0);
        }
        c
    }
}
