//! The audit log and export jobs on SQLite.
//!
//! Appends run in one `BEGIN IMMEDIATE` transaction on the single writer, which also locks
//! out other processes: each tenant's head is read, the entries are sealed on it, the
//! records go in as multi-row inserts of fixed sizes (statements prepared once per
//! connection) and each head row is updated, or inserted on a tenant's first append. With
//! WAL and `synchronous = FULL`, the commit is durable when `append_audit` returns.
//!
//! Scans are keyset queries on the `(tenant_id, seq)` unique index; a scan of one agent
//! session's records takes their `seq`s from the session index (`session_index.rs`) first. Export jobs change
//! state only inside write transactions, and a worker's writes are conditioned on its lease
//! token, so a worker that lost its lease gets `Conflict` and writes nothing.

use std::collections::HashMap;
use std::collections::hash_map::Entry;

use agentgov_domain::ids::{AuditId, TenantId};
use agentgov_domain::model::{AuditEntry, AuditFilter, AuditRecord, AuditScan, ChainHead, SeqOrder};
use agentgov_domain::ports::store::AuditRepo;
use agentgov_domain::{DomainError, Result};
use async_trait::async_trait;
use diesel::SqliteConnection;
use diesel::prelude::*;
use diesel::sqlite::Sqlite;
use time::OffsetDateTime;

use crate::SqliteStore;
use crate::error::{TxError, TxResult};
use crate::rows::{AuditHeadRow, AuditRecordRow, convert, id_text};
use crate::schema::{audit_heads, audit_records};
use crate::session_index::{self, SessionIndex};

/// The first whole microsecond at or after `t`. Stored timestamps are whole microseconds,
/// so `ts >= t` is `ts >= ceil(t)` and `ts < t` is `ts < ceil(t)`, also when a filter's
/// bound carries nanoseconds (as `AuditFilter::matches` compares them).
pub(crate) fn ceil_micros(t: OffsetDateTime) -> i64 {
    let nanos = t.unix_timestamp_nanos();
    let micros = nanos.div_euclid(1_000) + i128::from(nanos.rem_euclid(1_000) != 0);
    i64::try_from(micros).unwrap_or(if micros < 0 { i64::MIN } else { i64::MAX })
}

/// The rows of a scan: the tenant's passing `filter`, in `scan.order` after `scan.after_seq`.
fn scanned(tenant: TenantId, mut filter: AuditFilter, scan: &AuditScan) -> audit_records::BoxedQuery<'static, Sqlite> {
    // The cursor is folded into the filter's bound on the same side: with two lower (or
    // upper) bounds on `seq`, SQLite seeks on one and scans from there, so every page of a
    // long range would re-read the range from its start.
    if let Some(after) = scan.after_seq {
        match scan.order {
            SeqOrder::Asc => {
                filter.min_seq =
                    Some(filter.min_seq.map_or(after.saturating_add(1), |m| m.max(after.saturating_add(1))))
            }
            SeqOrder::Desc => {
                filter.max_seq =
                    Some(filter.max_seq.map_or(after.saturating_sub(1), |m| m.min(after.saturating_sub(1))))
            }
        }
    }
    let q = filtered(tenant, filter).limit(i64::from(scan.limit));
    match scan.order {
        SeqOrder::Asc => q.order(audit_records::seq.asc()),
        SeqOrder::Desc => q.order(audit_records::seq.desc()),
    }
}

/// Records of one agent session a scan reads at a time: their `seq`s from the session
/// index, then the records among them that pass the rest of the filter.
const CANDIDATES: usize = 500;

/// [`scanned`]'s rows, loaded by `load`; when `filter` names a session, its records found
/// through the session index (`CANDIDATES` at a time) rather than by reading the tenant's.
fn in_session<T>(
    c: &mut SqliteConnection,
    sessions: &SessionIndex,
    tenant: TenantId,
    filter: AuditFilter,
    scan: &AuditScan,
    load: impl Fn(&mut SqliteConnection, audit_records::BoxedQuery<'static, Sqlite>) -> QueryResult<Vec<T>>,
) -> TxResult<Vec<T>> {
    let Some(session) = filter.session_id.clone() else { return Ok(load(c, scanned(tenant, filter, scan))?) };
    let limit = usize::try_from(scan.limit).unwrap_or(usize::MAX);
    let mut out = Vec::new();
    let mut pages = SessionPages::new(&filter, scan.order, scan.after_seq);
    // Bounds on `seq` stay out of the SQL: beside `seq IN (…)`, SQLite would scan the
    // tenant's range instead of looking the candidates up.
    let rest = AuditFilter { min_seq: None, max_seq: None, ..filter };
    while out.len() < limit {
        let Some(seqs) = pages.next(c, sessions, tenant, &session)? else { break };
        if seqs.is_empty() {
            continue;
        }
        let page = AuditScan { limit: u32::try_from(limit - out.len()).unwrap_or(u32::MAX), after_seq: None, ..*scan };
        out.extend(load(c, scanned(tenant, rest.clone(), &page).filter(audit_records::seq.eq_any(seqs)))?);
    }
    Ok(out)
}

/// A session's `seq`s in pages of [`CANDIDATES`], in a scan's order, within the filter's
/// bounds on `seq`.
struct SessionPages {
    order: SeqOrder,
    after: Option<i64>,
    min: Option<i64>,
    max: Option<i64>,
    done: bool,
}

impl SessionPages {
    fn new(filter: &AuditFilter, order: SeqOrder, after: Option<i64>) -> Self {
        // The bound on the scan's side starts the cursor.
        let after = match order {
            SeqOrder::Asc => after.max(filter.min_seq.map(|m| m.saturating_sub(1))),
            SeqOrder::Desc => match (after, filter.max_seq.map(|m| m.saturating_add(1))) {
                (Some(a), Some(b)) => Some(a.min(b)),
                (a, b) => a.or(b),
            },
        };
        Self { order, after, min: filter.min_seq, max: filter.max_seq, done: false }
    }

    /// The next page (possibly empty when the bounds leave none of it), or `None` at the end.
    fn next(
        &mut self,
        c: &mut SqliteConnection,
        sessions: &SessionIndex,
        tenant: TenantId,
        session: &str,
    ) -> TxResult<Option<Vec<i64>>> {
        if self.done {
            return Ok(None);
        }
        let seqs = sessions.seqs(c, tenant, session, self.order, self.after, CANDIDATES)?;
        let Some(&last) = seqs.last() else { return Ok(None) };
        let (min, max) = (self.min.unwrap_or(i64::MIN), self.max.unwrap_or(i64::MAX));
        let beyond = match self.order {
            SeqOrder::Asc => last > max,
            SeqOrder::Desc => last < min,
        };
        self.done = beyond || seqs.len() < CANDIDATES;
        self.after = Some(last);
        Ok(Some(seqs.into_iter().filter(|s| (min..=max).contains(s)).collect()))
    }
}

/// The tenant's records passing `filter`, as a boxed query to refine.
fn filtered(tenant: TenantId, filter: AuditFilter) -> audit_records::BoxedQuery<'static, Sqlite> {
    let mut q = audit_records::table.filter(audit_records::tenant_id.eq(id_text(tenant.0))).into_boxed();
    let AuditFilter {
        agent_id,
        event_type,
        action,
        decision,
        actor_type,
        actor_id,
        from,
        to,
        min_seq,
        max_seq,
        session_id,
    } = filter;
    if let Some(session) = session_id {
        q = q.filter(audit_records::session_id.eq(session));
    }
    if let Some(agent) = agent_id {
        q = q.filter(audit_records::agent_id.eq(id_text(agent)));
    }
    if let Some(event_type) = event_type {
        q = q.filter(audit_records::event_type.eq(event_type));
    }
    if let Some(action) = action {
        q = q.filter(audit_records::action.eq(action));
    }
    if let Some(decision) = decision {
        q = q.filter(audit_records::decision.eq(decision));
    }
    if let Some(kind) = actor_type {
        q = q.filter(audit_records::actor_type.eq(kind.as_str()));
    }
    if let Some(actor) = actor_id {
        q = q.filter(audit_records::actor_id.eq(actor));
    }
    if let Some(from) = from {
        q = q.filter(audit_records::ts.ge(ceil_micros(from)));
    }
    if let Some(to) = to {
        q = q.filter(audit_records::ts.lt(ceil_micros(to)));
    }
    if let Some(min) = min_seq {
        q = q.filter(audit_records::seq.ge(min));
    }
    if let Some(max) = max_seq {
        q = q.filter(audit_records::seq.le(max));
    }
    q
}

/// Inserts `rows` as multi-row `INSERT`s of fixed sizes (64, 16, 4, then 1): diesel
/// prepares a statement of a fixed row count once per connection and reuses it, where a
/// statement sized to each batch would be parsed again for every batch. (One statement per
/// row would be slower still: each execution rebuilds the `actor_type` check's `IN` list.)
fn insert_records(c: &mut SqliteConnection, mut rows: Vec<AuditRecordRow>) -> TxResult<()> {
    macro_rules! in_chunks_of {
        ($($n:literal),*) => {$(
            while rows.len() >= $n {
                let rest = rows.split_off($n);
                let chunk: [AuditRecordRow; $n] = std::mem::replace(&mut rows, rest)
                    .try_into()
                    .map_err(|_| TxError::Domain(DomainError::Internal("audit insert chunk size".into())))?;
                diesel::insert_into(audit_records::table).values(chunk).execute(c)?;
            }
        )*};
    }
    in_chunks_of!(64, 16, 4, 1);
    Ok(())
}

fn load_head(c: &mut SqliteConnection, tenant: TenantId) -> TxResult<Option<ChainHead>> {
    // Not `.first()`: its `LIMIT ?` makes SQLite re-prepare the statement on every new
    // binding (the planner reads a bound LIMIT), once per batch; the key finds one row.
    let row = audit_heads::table.find(id_text(tenant.0)).select(AuditHeadRow::as_select()).get_result(c).optional()?;
    Ok(row.map(|r| r.head()).transpose()?)
}

/// One append's transaction: the records sealed on their tenants' heads, inserted, the heads
/// moved, and (immediate indexing) the session index written.
fn append(c: &mut SqliteConnection, sessions: &SessionIndex, entries: Vec<AuditEntry>) -> TxResult<Vec<AuditRecord>> {
    // Heads are read inside the transaction, which holds SQLite's write lock.
    // Each tenant's head, and whether its row exists yet.
    let mut heads: HashMap<TenantId, (ChainHead, bool)> = HashMap::new();
    let mut records = Vec::with_capacity(entries.len());
    for entry in entries {
        let (head, _) = match heads.entry(entry.tenant_id) {
            Entry::Occupied(head) => head.into_mut(),
            Entry::Vacant(slot) => slot.insert(match load_head(c, entry.tenant_id)? {
                Some(head) => (head, true),
                None => (ChainHead::GENESIS, false),
            }),
        };
        records.push(head.seal(entry));
    }
    insert_records(c, records.iter().map(AuditRecordRow::from).collect())?;
    // A plain `UPDATE` (or `INSERT` for a first append) is prepared once per
    // connection; diesel prepares an upsert anew every time.
    for (tenant, (head, exists)) in &heads {
        let row = AuditHeadRow::new(*tenant, head);
        if *exists {
            diesel::update(audit_heads::table.find(&row.tenant_id))
                .set((audit_heads::seq.eq(row.seq), audit_heads::hash.eq(&row.hash), audit_heads::ts.eq(row.ts)))
                .execute(c)?;
        } else {
            diesel::insert_into(audit_heads::table).values(&row).execute(c)?;
        }
    }
    sessions.appending(c, &records)?;
    Ok(records)
}

#[async_trait]
impl AuditRepo for SqliteStore {
    async fn append_audit(&self, entries: Vec<AuditEntry>) -> Result<Vec<AuditRecord>> {
        if entries.is_empty() {
            return Ok(Vec::new());
        }
        let sessions = self.sessions.clone();
        let (records, flush) = self
            .write(move |c| {
                let records = c.immediate_transaction(|c| append(c, &sessions, entries))?;
                // Still under the writer's lock: the session index's tail follows commit order.
                let flush = sessions.committed(&records);
                Ok((records, flush))
            })
            .await?;
        if flush {
            session_index::spawn_flush(self.sessions.clone(), self.writer.clone());
        }
        Ok(records)
    }

    async fn get_audit(&self, tenant: TenantId, id: AuditId) -> Result<Option<AuditRecord>> {
        let (tenant, id) = (id_text(tenant.0), id_text(id.0));
        self.read(move |c| {
            let row = audit_records::table
                .filter(audit_records::id.eq(id))
                .filter(audit_records::tenant_id.eq(tenant))
                .select(AuditRecordRow::as_select())
                .first(c)
                .optional()?;
            Ok(row.map(AuditRecord::try_from).transpose()?)
        })
        .await
    }

    async fn scan_audit(&self, tenant: TenantId, filter: &AuditFilter, scan: AuditScan) -> Result<Vec<AuditRecord>> {
        let (filter, sessions) = (filter.clone(), self.sessions.clone());
        self.read(move |c| {
            let rows =
                in_session(c, &sessions, tenant, filter, &scan, |c, q| q.select(AuditRecordRow::as_select()).load(c))?;
            Ok(convert(rows)?)
        })
        .await
    }

    async fn scan_audit_seqs(&self, tenant: TenantId, filter: &AuditFilter, scan: AuditScan) -> Result<Vec<i64>> {
        let (filter, sessions) = (filter.clone(), self.sessions.clone());
        self.read(move |c| {
            if let Some(session) = filter.session_id.as_deref()
                && (AuditFilter { session_id: None, ..filter.clone() }) == AuditFilter::default()
            {
                // The index's `seq`s are the answer (an agent session's catch-up).
                let limit = usize::try_from(scan.limit).unwrap_or(usize::MAX);
                return sessions.seqs(c, tenant, session, scan.order, scan.after_seq, limit);
            }
            in_session(c, &sessions, tenant, filter, &scan, |c, q| q.select(audit_records::seq).load(c))
        })
        .await
    }

    async fn count_audit(&self, tenant: TenantId, filter: &AuditFilter) -> Result<u64> {
        let (filter, sessions) = (filter.clone(), self.sessions.clone());
        self.read(move |c| {
            let Some(session) = filter.session_id.clone() else {
                let n: i64 = filtered(tenant, filter).count().get_result(c)?;
                return Ok(u64::try_from(n).unwrap_or_default());
            };
            let mut n = 0;
            let mut pages = SessionPages::new(&filter, SeqOrder::Asc, None);
            let rest = AuditFilter { min_seq: None, max_seq: None, ..filter };
            while let Some(seqs) = pages.next(c, &sessions, tenant, &session)? {
                if seqs.is_empty() {
                    continue;
                }
                let page: i64 =
                    filtered(tenant, rest.clone()).filter(audit_records::seq.eq_any(seqs)).count().get_result(c)?;
                n += u64::try_from(page).unwrap_or_default();
            }
            Ok(n)
        })
        .await
    }

    async fn audit_head(&self, tenant: TenantId) -> Result<Option<ChainHead>> {
        self.read(move |c| load_head(c, tenant)).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn filter_bounds_round_up_to_whole_microseconds() {
        let at = |nanos: i128| OffsetDateTime::from_unix_timestamp_nanos(nanos).unwrap_or(OffsetDateTime::UNIX_EPOCH);
        assert_eq!(ceil_micros(at(5_000)), 5);
        assert_eq!(ceil_micros(at(5_001)), 6);
        assert_eq!(ceil_micros(at(5_999)), 6);
        assert_eq!(ceil_micros(at(-5_000)), -5);
        assert_eq!(ceil_micros(at(-5_500)), -5);
        assert_eq!(ceil_micros(at(0)), 0);
    }
}
