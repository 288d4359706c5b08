//! The audit log: one hash chain per tenant, appended under a lock on the tenant's head row
//! so that replicas sharing the database take turns.

use std::collections::HashMap;
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
use diesel::sql_types::{Array, BigInt, Bool, Bytea, Double, Nullable, Text, Timestamptz, Untyped, Uuid as SqlUuid};
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
    async fn append_audit(&self, mut entries: Vec<AuditEntry>) -> Result<Vec<AuditRecord>> {
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
        let known = &self.known_heads;
        let unseen = known.unseen(&tenants);
        if !unseen.is_empty() {
            sql_query(ENSURE_HEADS_SQL).bind::<Array<SqlUuid>, _>(&unseen).execute(conn).await.map_err(error::db)?;
            known.seen(&unseen);
        }
        // Usually this process appended last to every tenant of the batch: one statement
        // seals the batch onto the heads it left, unless another replica moved one since.
        if let Some(heads) = known.heads(&tenants) {
            let expected = head_columns(&heads);
            let (records, heads) = seal(entries, heads)?;
            let appended = AppendUnmoved::new(RecordColumns::of(&records), head_columns(&heads), expected)
                .get_result::<bool>(conn)
                .await;
            match appended {
                Ok(true) => {
                    known.advance(heads);
                    return Ok(records);
                }
                // Moved: nothing was written; the locking path reads the heads and seals
                // the entries again onto them.
                Ok(false) => entries = records.into_iter().map(AuditEntry::from).collect(),
                Err(e) => {
                    known.forget_heads(&tenants);
                    return Err(error::db(e));
                }
            }
        }
        let locked = &tenants;
        let appended = conn
            .transaction(async move |conn| -> Result<(Vec<AuditRecord>, HashMap<Uuid, ChainHead>), TxError> {
                // Locked in tenant order, so appends that share tenants take turns without
                // deadlocking.
                let rows = lock_heads(conn, locked).await?;
                if rows.len() < locked.len() {
                    // A tenant deleted since its head was seen: its head went with it.
                    known.forget(locked);
                    return Err(DomainError::Conflict("tenant not found".into()).into());
                }
                let mut heads = HashMap::with_capacity(rows.len());
                for row in &rows {
                    heads.insert(row.tenant_id, row.head()?);
                }
                let (records, heads) = seal(entries, heads)?;
                AppendLocked::new(RecordColumns::of(&records), head_columns(&heads)).execute(conn).await?;
                Ok((records, heads))
            })
            .await;
        match appended {
            Ok((records, heads)) => {
                known.advance(heads);
                Ok(records)
            }
            Err(e) => {
                known.forget_heads(&tenants);
                Err(DomainError::from(e))
            }
        }
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
        let query = scanned(tenant, filter, &scan).select(AuditRecordRow::as_select());
        let mut conn = self.conn().await?;
        let rows: Vec<AuditRecordRow> = query.load(&mut conn).await.map_err(error::db)?;
        rows.into_iter().map(AuditRecord::try_from).collect()
    }

    async fn scan_audit_seqs(&self, tenant: TenantId, filter: &AuditFilter, scan: AuditScan) -> Result<Vec<i64>> {
        let query = scanned(tenant, filter, &scan).select(audit_records::seq);
        let mut conn = self.conn().await?;
        query.load(&mut conn).await.map_err(error::db)
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

/// The rows of a scan: the tenant's passing `filter`, in `scan.order` after `scan.after_seq`.
fn scanned<'a>(tenant: TenantId, filter: &'a AuditFilter, scan: &AuditScan) -> audit_records::BoxedQuery<'a, Pg> {
    let mut query = filtered(tenant, filter).limit(i64::from(scan.limit));
    if let Some((low, high)) = seq_window(filter, scan) {
        query = query.filter(audit_records::seq.between(low, high));
    }
    match (scan.order, scan.after_seq) {
        (SeqOrder::Asc, None) => query.order(audit_records::seq.asc()),
        (SeqOrder::Asc, Some(after)) => query.filter(audit_records::seq.gt(after)).order(audit_records::seq.asc()),
        (SeqOrder::Desc, None) => query.order(audit_records::seq.desc()),
        (SeqOrder::Desc, Some(after)) => query.filter(audit_records::seq.lt(after)).order(audit_records::seq.desc()),
    }
}

/// The `seq` range an oldest-first scan can return at most, when only `seq` narrows it: a
/// chain's `seq` runs 1, 2, 3… without gaps, so the `limit` rows after `after_seq` are
/// exactly the next `limit` numbers (fewer past the head). Bounding the range keeps the read
/// at `limit` rows whatever plan Postgres picks: on a table without statistics yet (right
/// after a burst of appends) `seq > $n ORDER BY seq LIMIT $m` alone is planned as a bitmap
/// scan of the tenant's whole remaining range plus a sort, for every page of an export or
/// every batch of SIEM forwarding. (Newest first has no such bound: the head is not known
/// here, and a cursor above it must still find the newest rows.)
fn seq_window(f: &AuditFilter, scan: &AuditScan) -> Option<(i64, i64)> {
    let only_seq = f.agent_id.is_none()
        && f.event_type.is_none()
        && f.action.is_none()
        && f.decision.is_none()
        && f.actor_type.is_none()
        && f.actor_id.is_none()
        && f.from.is_none()
        && f.to.is_none()
        && f.session_id.is_none();
    if !only_seq || scan.limit == 0 || scan.order != SeqOrder::Asc {
        return None;
    }
    let first = scan.after_seq.map_or(1, |a| a.saturating_add(1)).max(f.min_seq.unwrap_or(1)).max(1);
    Some((first, first.saturating_add(i64::from(scan.limit) - 1)))
}

/// Seals `entries` onto `heads` (one per tenant of the batch), in order.
fn seal(
    entries: Vec<AuditEntry>,
    mut heads: HashMap<Uuid, ChainHead>,
) -> Result<(Vec<AuditRecord>, HashMap<Uuid, ChainHead>)> {
    let mut records = Vec::with_capacity(entries.len());
    for entry in entries {
        let tenant = entry.tenant_id;
        let head = heads
            .get_mut(&tenant.as_uuid())
            .ok_or_else(|| DomainError::Internal(format!("no audit head for tenant {tenant}")))?;
        records.push(head.seal(entry));
    }
    Ok((records, heads))
}

/// What this process knows of the tenants' audit heads: that a head row exists (see
/// [`ENSURE_HEADS_SQL`]), and, once it has appended, the head it left, which another
/// replica may have moved since (an append checks, see [`APPEND_UNMOVED_SQL`]).
#[derive(Default)]
pub(crate) struct KnownHeads(Mutex<HashMap<Uuid, Option<ChainHead>>>);

impl KnownHeads {
    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<Uuid, Option<ChainHead>>> {
        self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The tenants not known to have a head row.
    fn unseen(&self, tenants: &[Uuid]) -> Vec<Uuid> {
        let known = self.lock();
        tenants.iter().filter(|t| !known.contains_key(t)).copied().collect()
    }

    fn seen(&self, tenants: &[Uuid]) {
        let mut known = self.lock();
        for t in tenants {
            known.entry(*t).or_insert(None);
        }
    }

    /// The heads this process left for every one of `tenants`, if it knows them all.
    fn heads(&self, tenants: &[Uuid]) -> Option<HashMap<Uuid, ChainHead>> {
        let known = self.lock();
        tenants.iter().map(|t| known.get(t).copied().flatten().map(|h| (*t, h))).collect()
    }

    fn advance(&self, heads: HashMap<Uuid, ChainHead>) {
        let mut known = self.lock();
        for (t, h) in heads {
            known.insert(t, Some(h));
        }
    }

    /// After a failed append: whether it took effect is unknown, so the heads are read
    /// afresh next time.
    fn forget_heads(&self, tenants: &[Uuid]) {
        let mut known = self.lock();
        for t in tenants {
            if let Some(head) = known.get_mut(t) {
                *head = None;
            }
        }
    }

    /// Forgets the head rows too (their tenants were deleted).
    fn forget(&self, tenants: &[Uuid]) {
        let mut known = self.lock();
        for t in tenants {
            known.remove(t);
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
    if let Some(session) = &f.session_id {
        query = query.filter(audit_records::session_id.eq(session));
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

/// The batch's rows, `$1` to `$16`: one array per column.
macro_rules! unnest_records {
    () => {
        "SELECT * FROM unnest($1::uuid[], $2::uuid[], $3::bigint[], $4::timestamptz[], $5::text[], $6::text[],
                         $7::text[], $8::uuid[], $9::text[], $10::text[], $11::text[], $12::float8[], $13::text[],
                         $14::bytea[], $15::bytea[], $16::text[])"
    };
}

/// The columns `unnest_records!` fills.
macro_rules! record_columns {
    () => {
        "audit_records (id, tenant_id, seq, ts, actor_type, actor_id, event_type, agent_id, action, resource,
                               decision, risk_score, details, prev_hash, hash, session_id)"
    };
}

/// The heads after the batch, `$17` to `$20`.
macro_rules! new_heads {
    () => {
        "unnest($17::uuid[], $18::bigint[], $19::bytea[], $20::timestamptz[]) AS u (tenant_id, seq, hash, ts)"
    };
}

/// Inserts a whole batch in one statement of one array per column, inside the transaction
/// that locked the heads: the statement text is the same for every batch size (prepared
/// once per connection, see [`Append`]), and its parameters are far from Postgres's limit
/// of 65535 whatever the batch size (a multi-row `VALUES` list needs 15 per row, and
/// chunks). Faster than `VALUES` lists from batches of a few rows up.
///
/// The heads advance in the same statement (a data-modifying CTE): one round trip less
/// per batch.
const APPEND_LOCKED_SQL: &str = concat!(
    "WITH inserted AS (\n    INSERT INTO ",
    record_columns!(),
    "\n    ",
    unnest_records!(),
    "\n)\nUPDATE audit_heads AS h SET seq = u.seq, hash = u.hash, ts = u.ts\nFROM ",
    new_heads!(),
    "\nWHERE h.tenant_id = u.tenant_id"
);

/// The whole append in one statement and one round trip (no `BEGIN`, no `COMMIT`: a
/// statement is atomic), for a batch sealed onto the heads this process left: it locks
/// the heads in tenant order (as the locking path does), and only if each is still the
/// expected one (`$21` to `$23`) inserts the records and advances the heads. It answers
/// whether it did; if not, nothing was written and the locking path takes over.
const APPEND_UNMOVED_SQL: &str = concat!(
    "WITH locked AS (
    SELECT tenant_id, seq, hash FROM audit_heads WHERE tenant_id = ANY($21::uuid[])
    ORDER BY tenant_id FOR UPDATE
), unmoved AS (
    SELECT count(*) = cardinality($21::uuid[]) AS ok
    FROM locked JOIN unnest($21::uuid[], $22::bigint[], $23::bytea[]) AS e (tenant_id, seq, hash) USING (tenant_id)
    WHERE locked.seq = e.seq AND locked.hash = e.hash
), inserted AS (
    INSERT INTO ",
    record_columns!(),
    "\n    ",
    unnest_records!(),
    "\n    WHERE (SELECT ok FROM unmoved)
), advanced AS (
    UPDATE audit_heads AS h SET seq = u.seq, hash = u.hash, ts = u.ts
    FROM ",
    new_heads!(),
    "\n    WHERE h.tenant_id = u.tenant_id AND (SELECT ok FROM unmoved)
)
SELECT ok FROM unmoved"
);

/// An append statement with its parameters, as a query type of its own: `sql_query` is
/// prepared anew on every call (one more round trip per batch), while a static query id
/// lets diesel cache the prepared statement per connection.
struct Append<'a, S> {
    c: RecordColumns<'a>,
    heads: HeadColumns,
    /// The heads the batch was sealed onto (`APPEND_UNMOVED_SQL` only).
    expected: HeadColumns,
    sql: std::marker::PhantomData<S>,
}

/// Which statement an [`Append`] runs.
trait AppendSql: 'static {
    const SQL: &'static str;
    type SqlType;
}

struct Locked;
struct Unmoved;

impl AppendSql for Locked {
    const SQL: &'static str = APPEND_LOCKED_SQL;
    type SqlType = Untyped;
}

impl AppendSql for Unmoved {
    const SQL: &'static str = APPEND_UNMOVED_SQL;
    type SqlType = Bool;
}

type AppendLocked<'a> = Append<'a, Locked>;
type AppendUnmoved<'a> = Append<'a, Unmoved>;

impl<'a> AppendLocked<'a> {
    fn new(c: RecordColumns<'a>, heads: HeadColumns) -> Self {
        Append { c, heads, expected: HeadColumns::default(), sql: std::marker::PhantomData }
    }
}

impl<'a> AppendUnmoved<'a> {
    fn new(c: RecordColumns<'a>, heads: HeadColumns, expected: HeadColumns) -> Self {
        Append { c, heads, expected, sql: std::marker::PhantomData }
    }
}

impl<S: AppendSql> QueryId for Append<'_, S> {
    type QueryId = Append<'static, S>;
    const HAS_STATIC_QUERY_ID: bool = true;
}

impl<S: AppendSql> Query for Append<'_, S> {
    type SqlType = S::SqlType;
}

impl<S: AppendSql> QueryFragment<Pg> for Append<'_, S> {
    fn walk_ast<'b>(&'b self, mut out: AstPass<'_, 'b, Pg>) -> QueryResult<()> {
        // The SQL's `$n` placeholders, in order, become the binds below (one bind per
        // occurrence).
        let mut pieces = S::SQL.split('$');
        out.push_sql(pieces.next().unwrap_or_default());
        for piece in pieces {
            let digits = piece.bytes().take_while(u8::is_ascii_digit).count();
            let (c, h, e) = (&self.c, &self.heads, &self.expected);
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
                "16" => out.push_bind_param::<Array<Nullable<Text>>, _>(&c.session_id)?,
                "17" => out.push_bind_param::<Array<SqlUuid>, _>(&h.0)?,
                "18" => out.push_bind_param::<Array<BigInt>, _>(&h.1)?,
                "19" => out.push_bind_param::<Array<Bytea>, _>(&h.2)?,
                "20" => out.push_bind_param::<Array<Timestamptz>, _>(&h.3)?,
                "21" => out.push_bind_param::<Array<SqlUuid>, _>(&e.0)?,
                "22" => out.push_bind_param::<Array<BigInt>, _>(&e.1)?,
                "23" => out.push_bind_param::<Array<Bytea>, _>(&e.2)?,
                other => {
                    return Err(diesel::result::Error::QueryBuilderError(
                        format!("an audit append statement has no parameter ${other}").into(),
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
    session_id: Vec<Option<&'a str>>,
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
            c.session_id.push(r.session_id.as_deref());
        }
        c
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn asc(after: Option<i64>, limit: u32) -> AuditScan {
        AuditScan { order: SeqOrder::Asc, after_seq: after, limit }
    }

    #[test]
    fn oldest_first_scans_narrowed_only_by_seq_read_one_window() {
        let none = AuditFilter::default();
        assert_eq!(seq_window(&none, &asc(None, 500)), Some((1, 500)));
        assert_eq!(seq_window(&none, &asc(Some(1000), 500)), Some((1001, 1500)));
        assert_eq!(seq_window(&none, &asc(Some(-5), 2)), Some((1, 2)), "seq starts at 1");
        let from = AuditFilter { min_seq: Some(2000), max_seq: Some(2100), ..AuditFilter::default() };
        assert_eq!(seq_window(&from, &asc(Some(10), 500)), Some((2000, 2499)), "min_seq above the cursor");
        assert_eq!(seq_window(&from, &asc(Some(2050), 500)), Some((2051, 2550)));
        assert_eq!(seq_window(&none, &asc(Some(i64::MAX - 1), 500)), Some((i64::MAX, i64::MAX)));
        assert_eq!(seq_window(&none, &asc(Some(1), 0)), None);
        let newest_first = AuditScan { order: SeqOrder::Desc, after_seq: Some(100), limit: 50 };
        assert_eq!(seq_window(&none, &newest_first), None, "the head is not known here");
        let typed = AuditFilter { event_type: Some("agent.action".into()), ..AuditFilter::default() };
        assert_eq!(seq_window(&typed, &asc(Some(1), 500)), None, "other filters leave gaps");
    }
}
