//! Which audit records belong to an agent session: the table `audit_session_seqs` (tenant,
//! session, `seq`), and, for a store that is its database's only writer, the entries not
//! written to it yet, kept in memory and written in bulk off the commit path.
//!
//! Why not an index on `audit_records`: its entries are ordered by session, so with
//! thousands of sessions at once each record of a commit lands on an index page of its own,
//! and SQLite's WAL takes whole pages. Measured alone, that doubled the system time of an
//! append (BENCHMARKS.md, "Sessions on and off"). Written in bulk, sorted, the entries of a
//! session share pages: a flush of [`FLUSH_AT`] records over 4,096 sessions writes about one
//! page per 16 entries.
//!
//! How the two parts stay whole:
//! - `audit_session_indexed` holds, per tenant, a `seq` up to which every record of the
//!   tenant that names a session has its entry in the table.
//! - [`Indexing::Immediate`] writes the entries and that mark in the append's own
//!   transaction, so any number of processes may share the file.
//! - [`Indexing::Deferred`] keeps the entries of the records committed since the last flush
//!   (the tail), in commit order: the writer adds them under its lock as each append
//!   commits. Once [`FLUSH_AT`] records have been appended, a task writes them in slices of
//!   [`SLICE`] entries (each its own short transaction through the writer's queue, so
//!   appends wait for one slice at most), drops each slice from the tail once it is
//!   committed, and moves the marks last. A read takes the session's `seq`s from both the
//!   table and the tail, so it sees each record once whatever the flush has done. Opening
//!   the store reads the records past the marks back into the tail; a crash loses nothing.
//!   Only one process may then write the database: another's records would have no entry
//!   until it wrote them itself.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard};

use agentgov_domain::ids::TenantId;
use agentgov_domain::model::{AuditRecord, SeqOrder};
use diesel::prelude::*;
use diesel::sql_types::{BigInt, Text};
use diesel::upsert::excluded;
use diesel::{QueryableByName, SqliteConnection, sql_query};
use uuid::Uuid;

use crate::Writer;
use crate::columns::id_text;
use crate::error::TxResult;
use crate::schema::{audit_records, audit_session_indexed, audit_session_seqs};

/// When the store writes its session entries.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Indexing {
    /// In each append's transaction: other processes may write the database too.
    Immediate,
    /// In bulk, after every `flush_at` appended records; the store is the database's only
    /// writer (the embedded server without Redis).
    Deferred { flush_at: usize },
}

/// Records appended between flushes of the deferred index. Also the most records a store
/// reads back when it opens (plus those appended during a flush).
pub const FLUSH_AT: usize = 65_536;
/// Entries written per transaction of a flush.
const SLICE: usize = 2_048;

/// One record of a session.
#[derive(Debug, Clone)]
struct Entry {
    tenant: TenantId,
    session: Arc<str>,
    seq: i64,
}

pub(crate) struct SessionIndex {
    indexing: Indexing,
    tail: Mutex<Tail>,
}

/// The deferred entries, by session (what reads see) and in commit order (what the next
/// flush writes).
#[derive(Default)]
struct Tail {
    /// Every entry not yet in the table, `seq` ascending per session.
    sessions: HashMap<TenantId, HashMap<Arc<str>, Vec<i64>>>,
    /// The entries the next flush takes.
    pending: Vec<Entry>,
    /// Each tenant's last appended `seq` among the records `pending` covers: its mark once
    /// they are written.
    heads: HashMap<TenantId, i64>,
    /// Records appended since the last flush began.
    appended: usize,
    flushing: bool,
}

impl Tail {
    fn push(&mut self, tenant: TenantId, session: &str, seq: i64) {
        let sessions = self.sessions.entry(tenant).or_default();
        // One allocation of the id per session, shared by its entries.
        let session = match sessions.get_key_value(session) {
            Some((kept, _)) => kept.clone(),
            None => Arc::from(session),
        };
        sessions.entry(session.clone()).or_default().push(seq);
        self.pending.push(Entry { tenant, session, seq });
    }
}

/// What a flush writes: the pending entries, sorted as the table is, and the marks.
struct Flush {
    entries: Vec<Entry>,
    heads: HashMap<TenantId, i64>,
}

#[derive(QueryableByName)]
struct Unindexed {
    #[diesel(sql_type = Text)]
    tenant_id: String,
    #[diesel(sql_type = BigInt)]
    mark: i64,
    #[diesel(sql_type = BigInt)]
    head: i64,
}

impl SessionIndex {
    /// Opens the index on a migrated database: the records past each tenant's mark are read
    /// back, into the tail ([`Indexing::Deferred`]) or into the table.
    pub(crate) fn open(c: &mut SqliteConnection, indexing: Indexing) -> TxResult<SessionIndex> {
        let index = SessionIndex { indexing, tail: Mutex::new(Tail::default()) };
        match indexing {
            Indexing::Immediate => c.immediate_transaction(|c| {
                let (entries, heads, _) = behind(c)?;
                let entries = entries.into_iter().map(|(tenant, s, seq)| Entry { tenant, session: s.into(), seq });
                let mut flush = Flush { entries: entries.collect(), heads };
                flush.sort();
                write_slice(c, &flush.entries, Some(&flush.heads))
            })?,
            Indexing::Deferred { .. } => {
                let (entries, heads, appended) = behind(c)?;
                let mut tail = index.lock();
                for (tenant, session, seq) in entries {
                    tail.push(tenant, &session, seq);
                }
                tail.appended = appended;
                tail.heads = heads;
            }
        }
        Ok(index)
    }

    fn lock(&self) -> MutexGuard<'_, Tail> {
        self.tail.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Inside an append's transaction: with [`Indexing::Immediate`], writes the records'
    /// entries and moves their tenants' marks.
    pub(crate) fn appending(&self, c: &mut SqliteConnection, records: &[AuditRecord]) -> TxResult<()> {
        if self.indexing != Indexing::Immediate {
            return Ok(());
        }
        let mut heads = HashMap::new();
        let mut entries = Vec::new();
        for r in records {
            heads.insert(r.tenant_id, r.seq);
            if let Some(session) = &r.session_id {
                entries.push(Entry { tenant: r.tenant_id, session: Arc::from(session.as_str()), seq: r.seq });
            }
        }
        write_slice(c, &entries, Some(&heads))
    }

    /// After an append committed, under the writer's lock (so that the tail follows commit
    /// order): with [`Indexing::Deferred`], keeps the records' entries. True when a flush
    /// is due; the caller then runs [`spawn_flush`].
    pub(crate) fn committed(&self, records: &[AuditRecord]) -> bool {
        let Indexing::Deferred { flush_at } = self.indexing else { return false };
        let mut tail = self.lock();
        for r in records {
            tail.heads.insert(r.tenant_id, r.seq);
            if let Some(session) = &r.session_id {
                tail.push(r.tenant_id, session, r.seq);
            }
        }
        tail.appended += records.len();
        tail.appended >= flush_at && !tail.flushing
    }

    /// Begins a flush if one is due and none runs: takes every pending entry, sorted, and
    /// the marks they reach. The entries stay visible to reads until
    /// [`flushed`](Self::flushed).
    fn begin(&self) -> Option<Flush> {
        let Indexing::Deferred { flush_at } = self.indexing else { return None };
        let mut tail = self.lock();
        if tail.flushing || tail.appended < flush_at {
            return None;
        }
        tail.flushing = true;
        tail.appended = 0;
        let mut flush = Flush { entries: std::mem::take(&mut tail.pending), heads: std::mem::take(&mut tail.heads) };
        drop(tail);
        flush.sort();
        Some(flush)
    }

    /// Drops committed entries from the tail.
    fn flushed(&self, entries: &[Entry]) {
        let mut tail = self.lock();
        // The entries are sorted by session: each run of one session is a prefix of its
        // seqs in the tail (newer records came after the flush began).
        for run in entries.chunk_by(|a, b| a.tenant == b.tenant && a.session == b.session) {
            let (Some(first), Some(last)) = (run.first(), run.last()) else { continue };
            let Some(sessions) = tail.sessions.get_mut(&first.tenant) else { continue };
            if let Some(seqs) = sessions.get_mut(&first.session) {
                let n = seqs.partition_point(|s| *s <= last.seq);
                seqs.drain(..n);
                if seqs.is_empty() {
                    sessions.remove(&first.session);
                }
            }
            if sessions.is_empty() {
                tail.sessions.remove(&first.tenant);
            }
        }
    }

    /// Ends a flush. After a failure, `unwritten` goes back to the pending entries with the
    /// marks, and the next try waits for the next `flush_at` records.
    fn done(&self, unwritten: Option<Flush>) {
        let mut tail = self.lock();
        tail.flushing = false;
        if let Some(rest) = unwritten {
            let newer = std::mem::replace(&mut tail.pending, rest.entries);
            tail.pending.extend(newer);
            for (tenant, seq) in rest.heads {
                let head = tail.heads.entry(tenant).or_insert(seq);
                *head = (*head).max(seq);
            }
            tail.appended = 0;
        }
    }

    /// Up to `limit` `seq`s of the session's records in `order`, strictly after `after`.
    pub(crate) fn seqs(
        &self,
        c: &mut SqliteConnection,
        tenant: TenantId,
        session: &str,
        order: SeqOrder,
        after: Option<i64>,
        limit: usize,
    ) -> TxResult<Vec<i64>> {
        // The tail first: an entry a flush commits meanwhile is then read from the table
        // too, never from neither.
        let tail: Vec<i64> = {
            let tail = self.lock();
            let seqs = tail.sessions.get(&tenant).and_then(|s| s.get(session));
            seqs.map(|seqs| match (order, after) {
                (SeqOrder::Asc, Some(a)) => seqs.iter().copied().filter(|s| *s > a).take(limit).collect(),
                (SeqOrder::Asc, None) => seqs.iter().copied().take(limit).collect(),
                (SeqOrder::Desc, Some(a)) => seqs.iter().rev().copied().filter(|s| *s < a).take(limit).collect(),
                (SeqOrder::Desc, None) => seqs.iter().rev().copied().take(limit).collect(),
            })
            .unwrap_or_default()
        };
        let mut q = audit_session_seqs::table
            .filter(audit_session_seqs::tenant_id.eq(id_text(tenant.0)))
            .filter(audit_session_seqs::session_id.eq(session))
            .select(audit_session_seqs::seq)
            .limit(i64::try_from(limit).unwrap_or(i64::MAX))
            .into_boxed();
        q = match (order, after) {
            (SeqOrder::Asc, Some(a)) => q.filter(audit_session_seqs::seq.gt(a)),
            (SeqOrder::Desc, Some(a)) => q.filter(audit_session_seqs::seq.lt(a)),
            (_, None) => q,
        };
        q = match order {
            SeqOrder::Asc => q.order(audit_session_seqs::seq.asc()),
            SeqOrder::Desc => q.order(audit_session_seqs::seq.desc()),
        };
        let mut seqs: Vec<i64> = q.load(c)?;
        if !tail.is_empty() {
            seqs.extend(tail);
            match order {
                SeqOrder::Asc => seqs.sort_unstable(),
                SeqOrder::Desc => seqs.sort_unstable_by(|a, b| b.cmp(a)),
            }
            seqs.dedup();
            seqs.truncate(limit);
        }
        Ok(seqs)
    }
}

/// The records of sessions past each tenant's mark (tenant, session, `seq`), the tenants'
/// heads, and how many records of any kind lie past the marks.
type Behind = (Vec<(TenantId, String, i64)>, HashMap<TenantId, i64>, usize);

fn behind(c: &mut SqliteConnection) -> TxResult<Behind> {
    let tenants: Vec<Unindexed> = sql_query(
        "SELECT h.tenant_id, COALESCE(i.seq, 0) AS mark, h.seq AS head FROM audit_heads h \
         LEFT JOIN audit_session_indexed i ON i.tenant_id = h.tenant_id WHERE h.seq > COALESCE(i.seq, 0)",
    )
    .load(c)?;
    let (mut entries, mut heads, mut appended) = (Vec::new(), HashMap::new(), 0);
    for t in tenants {
        let Ok(uuid) = Uuid::parse_str(&t.tenant_id) else { continue };
        let tenant = TenantId(uuid);
        let rows: Vec<(i64, Option<String>)> = audit_records::table
            .filter(audit_records::tenant_id.eq(&t.tenant_id))
            .filter(audit_records::seq.gt(t.mark))
            .filter(audit_records::session_id.is_not_null())
            .order(audit_records::seq.asc())
            .select((audit_records::seq, audit_records::session_id))
            .load(c)?;
        entries.extend(rows.into_iter().filter_map(|(seq, s)| s.map(|s| (tenant, s, seq))));
        heads.insert(tenant, t.head);
        appended += usize::try_from(t.head - t.mark).unwrap_or_default();
    }
    Ok((entries, heads, appended))
}

impl Flush {
    /// In the table's order, so that a slice's entries of one session share pages.
    fn sort(&mut self) {
        self.entries.sort_unstable_by(|a, b| (a.tenant, &a.session, a.seq).cmp(&(b.tenant, &b.session, b.seq)));
    }
}

/// When a flush is due and none runs, writes the pending entries on a task of its own, in
/// transactions of [`SLICE`] entries through `writer` (the store's writer queue, so appends
/// wait for one slice at most), dropping each slice from the tail once committed, and the
/// marks with the last slice; again while another is due. On an error the entries not
/// written go back for the next flush.
pub(crate) fn spawn_flush(index: Arc<SessionIndex>, writer: Writer) {
    tokio::spawn(async move {
        // A task that finds a flush running or none due ends here; one whose append's
        // spawn never ran leaves the flush to the next append.
        while let Some(Flush { mut entries, heads }) = index.begin() {
            loop {
                let rest = entries.split_off(entries.len().min(SLICE));
                let last = rest.is_empty();
                let slice = std::mem::replace(&mut entries, rest);
                // A copy goes to the writer: the slice comes back to the pending entries if
                // the write fails in any way.
                let (written, marks) = (slice.clone(), last.then(|| heads.clone()));
                let result =
                    writer.write(move |c| c.immediate_transaction(|c| write_slice(c, &written, marks.as_ref()))).await;
                match result {
                    Ok(()) => index.flushed(&slice),
                    Err(e) => {
                        tracing::warn!(error = %e, "writing the session index failed; the next flush retries");
                        let mut unwritten = slice;
                        unwritten.append(&mut entries);
                        index.done(Some(Flush { entries: unwritten, heads }));
                        return;
                    }
                }
                if last {
                    break;
                }
            }
            index.done(None);
        }
    });
}

/// Entries, and the marks if given, in the caller's transaction.
fn write_slice(c: &mut SqliteConnection, entries: &[Entry], heads: Option<&HashMap<TenantId, i64>>) -> TxResult<()> {
    write_entries(c, entries)?;
    heads.map_or(Ok(()), |heads| write_marks(c, heads))
}

fn write_entries(c: &mut SqliteConnection, entries: &[Entry]) -> TxResult<()> {
    // A table of the tenant's text ids, made once per call.
    let mut tenants: HashMap<TenantId, String> = HashMap::new();
    for e in entries {
        let tenant = tenants.entry(e.tenant).or_insert_with(|| id_text(e.tenant.0));
        // `OR IGNORE`: a flush a crash cut short leaves entries the next one writes again.
        diesel::insert_or_ignore_into(audit_session_seqs::table)
            .values((
                audit_session_seqs::tenant_id.eq(tenant.as_str()),
                audit_session_seqs::session_id.eq(&*e.session),
                audit_session_seqs::seq.eq(e.seq),
            ))
            .execute(c)?;
    }
    Ok(())
}

fn write_marks(c: &mut SqliteConnection, heads: &HashMap<TenantId, i64>) -> TxResult<()> {
    for (tenant, seq) in heads {
        diesel::insert_into(audit_session_indexed::table)
            .values((audit_session_indexed::tenant_id.eq(id_text(tenant.0)), audit_session_indexed::seq.eq(seq)))
            .on_conflict(audit_session_indexed::tenant_id)
            .do_update()
            .set(audit_session_indexed::seq.eq(excluded(audit_session_indexed::seq)))
            .execute(c)?;
    }
    Ok(())
}
