//! The audit log and export jobs on SQLite.
//!
//! Appends run in one `BEGIN IMMEDIATE` transaction on the single writer, which also locks
//! out other processes: each tenant's head is read, the entries are sealed on it, the
//! records go in as multi-row inserts of fixed sizes (statements prepared once per
//! connection) and each head row is updated, or inserted on a tenant's first append. With
//! WAL and `synchronous = FULL`, the commit is durable when `append_audit` returns.
//!
//! Scans are keyset queries on the `(tenant_id, seq)` unique index. Export jobs change
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

#[async_trait]
impl AuditRepo for SqliteStore {
    async fn append_audit(&self, entries: Vec<AuditEntry>) -> Result<Vec<AuditRecord>> {
        if entries.is_empty() {
            return Ok(Vec::new());
        }
        self.transaction(move |c| {
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
                        .set((
                            audit_heads::seq.eq(row.seq),
                            audit_heads::hash.eq(&row.hash),
                            audit_heads::ts.eq(row.ts),
                        ))
                        .execute(c)?;
                } else {
                    diesel::insert_into(audit_heads::table).values(&row).execute(c)?;
                }
            }
            Ok(records)
        })
        .await
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
        let filter = filter.clone();
        self.read(move |c| Ok(convert(scanned(tenant, filter, &scan).select(AuditRecordRow::as_select()).load(c)?)?))
            .await
    }

    async fn scan_audit_seqs(&self, tenant: TenantId, filter: &AuditFilter, scan: AuditScan) -> Result<Vec<i64>> {
        let filter = filter.clone();
        self.read(move |c| Ok(scanned(tenant, filter, &scan).select(audit_records::seq).load(c)?)).await
    }

    async fn count_audit(&self, tenant: TenantId, filter: &AuditFilter) -> Result<u64> {
        let filter = filter.clone();
        self.read(move |c| {
            let n: i64 = filtered(tenant, filter).count().get_result(c)?;
            Ok(u64::try_from(n).unwrap_or_default())
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
