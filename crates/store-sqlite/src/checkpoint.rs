//! WAL checkpoints off the commit path.
//!
//! By default SQLite checkpoints inside the commit that takes the WAL past 1,000 pages: that
//! commit copies the WAL into the database file and syncs it before it returns, so every
//! request waiting on it (a batch of audit appends) waits tens of milliseconds longer. Hand-run
//! at 64 connections, those commits were the slow 6% of policy checks (p99 11.8 ms against
//! 7.6 ms without them).
//!
//! So every connection turns automatic checkpoints off (`wal_autocheckpoint = 0`, in
//! `conn::PRAGMAS`) and a thread of the store's own, on a connection of its own, runs
//! `PASSIVE` checkpoints (when: below). Each copies what it can without waiting for the writer
//! or readers, and once one has copied everything the next write starts the WAL over.
//!
//! A writer that never pauses keeps that from happening: new frames arrive while the
//! checkpoint copies, and a write that began before the copy finished does not start the WAL
//! over. Once the WAL passes [`CATCH_UP_PAGES`] the thread asks the writer to catch up
//! ([`CatchUp`]): the next write first runs a passive checkpoint itself, which has only the
//! frames since the thread's last round to copy, and then starts the WAL over. That write
//! waits for one short copy (every second or so under the heaviest load), not for a
//! `RESTART` checkpoint's busy-handler sleeps or a hand-over between threads.
//! `journal_size_limit` then truncates the file.
//!
//! A checkpoint costs the commits made meanwhile even off their path: the copy and the sync of
//! the database file share the disk with the WAL syncs of the commits. So while the writer is
//! busy the thread defers: it checkpoints in the first round that follows a round without any
//! write ([`data_version`]), and during an unbroken run of writes only once the WAL file has passed
//! [`DEFER_BYTES`] or [`DEFER_AT_MOST`] has gone by since its last checkpoint, the defaults of
//! PostgreSQL's `max_wal_size` and `checkpoint_timeout`. A burst of writes then meets no
//! checkpoint at all, and the quiet moment after it copies what the burst wrote. Under 200,000
//! policy checks at 64 connections (three alternating pairs, BENCHMARKS.md) p99 fell from
//! 10.2–10.7 ms, with a checkpoint every 200 ms, to 8.2–8.5 ms. The cost: the WAL may hold
//! up to about 1 GiB, which a restart after a crash reads once to rebuild its index, and a
//! checkpoint after a long burst copies that much at once.
//!
//! Dropping the store stops the thread and closes its connection; SQLite checkpoints as the
//! last connection closes.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, RecvTimeoutError, Sender};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use agentgov_domain::{DomainError, Result};
use diesel::sql_types::{BigInt, Integer};
use diesel::{QueryableByName, RunQueryDsl, SqliteConnection, sql_query};

use crate::conn::connect;

/// How often the thread looks at the writer and, unless it defers, checkpoints.
const INTERVAL: Duration = Duration::from_millis(200);
/// While the writer is busy, the thread defers checkpoints until the WAL file passes this
/// size (1 GiB)...
const DEFER_BYTES: u64 = 1 << 30;
/// ...or this long after its last checkpoint.
const DEFER_AT_MOST: Duration = Duration::from_secs(300);
/// WAL pages after a passive checkpoint beyond which the writer is asked to catch up:
/// 16,384 pages of 4 KiB, 64 MiB.
const CATCH_UP_PAGES: i32 = 16_384;

/// Before asking the writer, the thread copies again at once up to this many times, until a
/// pass finds at most [`CATCH_UP_RESIDUE`] new pages.
const CATCH_UP_PASSES: usize = 4;
const CATCH_UP_RESIDUE: i32 = 64;

/// Set by the checkpoint thread when the writer should checkpoint before its next write.
#[derive(Debug, Clone, Default)]
pub(crate) struct CatchUp(Arc<AtomicBool>);

impl CatchUp {
    fn request(&self) {
        self.0.store(true, Ordering::Relaxed);
    }

    /// Whether the writer should catch up now; the request is taken.
    pub(crate) fn take(&self) -> bool {
        self.0.swap(false, Ordering::Relaxed)
    }

    /// On the writer's connection, before its write: copies what the checkpoint thread has
    /// not, so the write starts the WAL over.
    pub(crate) fn run(conn: &mut SqliteConnection) {
        if let Err(e) = checkpoint(conn, CheckpointMode::Passive) {
            tracing::warn!(error = %e, "sqlite checkpoint before a write failed");
        }
    }
}

/// `PRAGMA data_version` on the thread's connection: it changes whenever another connection
/// commits, so two equal readings a round apart mean the writer was idle in between.
fn data_version(conn: &mut SqliteConnection) -> Result<i64> {
    #[derive(QueryableByName)]
    struct DataVersion {
        #[diesel(sql_type = BigInt)]
        data_version: i64,
    }
    sql_query("PRAGMA data_version")
        .get_result::<DataVersion>(conn)
        .map(|v| v.data_version)
        .map_err(|e| DomainError::Internal(format!("sqlite data_version failed: {e}")))
}

/// Whether the thread checkpoints in this round, and what it has seen so far.
#[derive(Debug)]
struct Deferral {
    /// `data_version` at the previous round.
    version: i64,
    /// When the thread last checkpointed.
    last: Instant,
}

impl Deferral {
    fn new(version: i64, now: Instant) -> Self {
        Self { version, last: now }
    }

    /// True if the writer wrote nothing since the previous round, or the WAL file is past
    /// [`DEFER_BYTES`], or the last checkpoint is [`DEFER_AT_MOST`] old. The WAL file's size
    /// is the size of what it holds: SQLite truncates it to `journal_size_limit` (64 MiB) as
    /// it starts over, and only appends until the next start.
    fn due(&mut self, version: i64, wal_bytes: u64, now: Instant) -> bool {
        let idle = version == self.version;
        self.version = version;
        let due = idle || wal_bytes > DEFER_BYTES || now.duration_since(self.last) >= DEFER_AT_MOST;
        if due {
            self.last = now;
        }
        due
    }
}

/// What `PRAGMA wal_checkpoint` answers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, QueryableByName)]
pub struct WalState {
    /// 1 if the checkpoint could not finish because it would have had to wait.
    #[diesel(sql_type = Integer)]
    pub busy: i32,
    /// Pages in the WAL.
    #[diesel(sql_type = Integer, column_name = log)]
    pub wal_pages: i32,
    /// Pages of the WAL copied into the database file.
    #[diesel(sql_type = Integer, column_name = checkpointed)]
    pub copied_pages: i32,
}

/// Which `wal_checkpoint` mode to run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CheckpointMode {
    /// Copies what it can without waiting for anyone.
    Passive,
    /// Waits for the writer (and readers of the WAL), copies everything, and makes the next
    /// write start the WAL over.
    Restart,
}

/// Runs one checkpoint on `conn`.
pub(crate) fn checkpoint(conn: &mut SqliteConnection, mode: CheckpointMode) -> Result<WalState> {
    let sql = match mode {
        CheckpointMode::Passive => "PRAGMA wal_checkpoint(PASSIVE)",
        CheckpointMode::Restart => "PRAGMA wal_checkpoint(RESTART)",
    };
    sql_query(sql).get_result(conn).map_err(|e| DomainError::Internal(format!("sqlite checkpoint failed: {e}")))
}

/// The checkpoint thread; dropping this stops it and waits until its connection is closed.
#[derive(Debug)]
pub(crate) struct Checkpointer {
    stop: Option<Sender<()>>,
    thread: Option<JoinHandle<()>>,
}

impl Checkpointer {
    /// Opens the thread's connection to `url` and starts it; it asks the writer to catch up
    /// through `catch_up`.
    pub(crate) fn start(url: &str, catch_up: CatchUp) -> Result<Self> {
        let mut conn = connect(url)?;
        let wal = std::path::PathBuf::from(format!("{url}-wal"));
        let (stop, stopped) = mpsc::channel::<()>();
        let thread = std::thread::Builder::new()
            .name("sqlite-checkpoint".into())
            .spawn(move || {
                let mut deferral = Deferral::new(data_version(&mut conn).unwrap_or(0), Instant::now());
                // Only a drop of the sender ends the wait early: nothing is ever sent.
                while let Err(RecvTimeoutError::Timeout) = stopped.recv_timeout(INTERVAL) {
                    // No WAL file yet (nothing written since it was removed): nothing to copy.
                    // An unreadable data_version counts as a write: the bounds still apply.
                    let wal_bytes = std::fs::metadata(&wal).map_or(0, |m| m.len());
                    let version = data_version(&mut conn).unwrap_or(deferral.version.wrapping_add(1));
                    if deferral.due(version, wal_bytes, Instant::now()) {
                        run_once(&mut conn, &catch_up, CATCH_UP_PAGES);
                    }
                }
            })
            .map_err(|e| DomainError::Internal(format!("cannot start the sqlite checkpoint thread: {e}")))?;
        Ok(Self { stop: Some(stop), thread: Some(thread) })
    }
}

impl Drop for Checkpointer {
    fn drop(&mut self) {
        drop(self.stop.take());
        if let Some(thread) = self.thread.take()
            && thread.join().is_err()
        {
            tracing::warn!("the sqlite checkpoint thread panicked");
        }
    }
}

/// One round: a passive checkpoint, and a request to the writer to catch up if the WAL has
/// more than `catch_up_pages` pages.
fn run_once(conn: &mut SqliteConnection, catch_up: &CatchUp, catch_up_pages: i32) {
    match checkpoint(conn, CheckpointMode::Passive) {
        Ok(state) if state.wal_pages > catch_up_pages => {
            // Copy again at once, until a pass finds only a few new frames: the writer then
            // has only the frames of the last moment left to copy.
            let mut last = state;
            for _ in 0..CATCH_UP_PASSES {
                match checkpoint(conn, CheckpointMode::Passive) {
                    Ok(now) if now.wal_pages - last.wal_pages <= CATCH_UP_RESIDUE => break,
                    Ok(now) => last = now,
                    Err(e) => return tracing::warn!(error = %e, "sqlite checkpoint failed"),
                }
            }
            tracing::debug!(wal_pages = last.wal_pages, "the WAL is large; the writer catches up");
            catch_up.request();
        }
        Ok(_) => {}
        Err(e) => tracing::warn!(error = %e, "sqlite checkpoint failed"),
    }
}

#[cfg(test)]
mod tests {

    use diesel::sql_query;

    use super::*;
    use crate::SqliteStore;

    /// A passive checkpoint, retried while the store's thread runs one (one runs at a time).
    fn passive(conn: &mut SqliteConnection) -> WalState {
        for _ in 0..100 {
            let state = checkpoint(conn, CheckpointMode::Passive).unwrap();
            if state.busy == 0 {
                return state;
            }
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        panic!("every checkpoint was busy for 2 s");
    }

    /// Rounds that find the writer idle checkpoint; rounds that find it busy defer until the
    /// WAL or the wait grows too large.
    #[test]
    fn checkpoints_wait_for_the_writer_to_pause() {
        let start = Instant::now();
        let small = 64 << 20;
        let mut deferral = Deferral::new(0, start);
        assert!(deferral.due(0, small, start + INTERVAL), "idle since the start");
        assert!(!deferral.due(5, small, start + 2 * INTERVAL), "busy");
        assert!(!deferral.due(9, small, start + 3 * INTERVAL), "still busy");
        assert!(deferral.due(9, small, start + 4 * INTERVAL), "paused");
        assert!(!deferral.due(10, DEFER_BYTES, start + 5 * INTERVAL), "busy, the WAL at the limit");
        assert!(deferral.due(11, DEFER_BYTES + 1, start + 6 * INTERVAL), "busy, the WAL past it");
        assert!(!deferral.due(12, small, start + 7 * INTERVAL), "busy again, the WAL started over");

        // A writer that never pauses still gets a checkpoint every `DEFER_AT_MOST`.
        let checkpointed = start + 6 * INTERVAL;
        assert!(!deferral.due(13, small, checkpointed + DEFER_AT_MOST - INTERVAL));
        assert!(deferral.due(14, small, checkpointed + DEFER_AT_MOST));
        assert!(!deferral.due(15, small, checkpointed + DEFER_AT_MOST + INTERVAL), "the wait starts over");
    }

    /// A write through the store changes the `data_version` the thread reads.
    #[test]
    fn a_write_changes_the_data_version_the_thread_reads() {
        let dir = tempfile::TempDir::new().unwrap();
        let path = dir.path().join("writes.db");
        let store = SqliteStore::open(&path).unwrap();
        let runtime = tokio::runtime::Builder::new_current_thread().build().unwrap();
        let mut conn = connect(path.to_str().unwrap()).unwrap();
        let before = data_version(&mut conn).unwrap();
        assert_eq!(data_version(&mut conn).unwrap(), before, "no write, no change");
        runtime.block_on(store.write(|c| Ok(sql_query("CREATE TABLE t (x INTEGER)").execute(c)?))).unwrap();
        assert_ne!(data_version(&mut conn).unwrap(), before);
    }

    /// A large WAL makes the next write catch up, and that write starts the WAL over.
    #[test]
    fn catching_up_lets_the_next_write_start_the_wal_over() {
        let dir = tempfile::TempDir::new().unwrap();
        let url = dir.path().join("catch-up.db").to_str().unwrap().to_owned();
        let store = SqliteStore::open(std::path::Path::new(&url)).unwrap();
        let runtime = tokio::runtime::Builder::new_current_thread().build().unwrap();
        let write = |rows: usize| {
            runtime
                .block_on(store.write(move |c| {
                    sql_query("CREATE TABLE IF NOT EXISTS filler (blob BLOB)").execute(c)?;
                    for _ in 0..rows {
                        sql_query("INSERT INTO filler VALUES (randomblob(3000))").execute(c)?;
                    }
                    Ok(())
                }))
                .unwrap();
        };
        write(200);

        let mut conn = connect(&url).unwrap();
        let before = passive(&mut conn);
        assert!(before.wal_pages > 200, "{before:?}");
        run_once(&mut conn, &store.writer.catch_up, 0);
        assert!(store.writer.catch_up.0.load(Ordering::Relaxed), "requested");
        write(1);
        assert!(!store.writer.catch_up.0.load(Ordering::Relaxed), "taken by the write");
        let after = passive(&mut conn);
        assert!(after.wal_pages < 10, "the WAL did not start over: {before:?} then {after:?}");
    }
}
