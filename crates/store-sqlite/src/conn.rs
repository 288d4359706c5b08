//! Connections: one writer behind an async mutex (SQLite has a single writer) and a few
//! readers (WAL lets them read while the writer writes).
//!
//! Each operation runs as one synchronous diesel closure on a blocking thread, through
//! `SyncConnectionWrapper::spawn_blocking`, so a transaction never spans an `.await`: a
//! cancelled request cannot leave a transaction open, and there is one thread hop per
//! operation rather than per statement. The wrapper is built with `TokioBlocking`, which
//! spawns on whichever runtime calls it: actix-web runs one current-thread runtime per
//! worker, where diesel-async's default spawner (bound to the runtime that built the
//! connection, and calling `block_in_place` when a query future is dropped) would panic.

use std::error::Error;
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicUsize, Ordering};

use agentgov_domain::{DomainError, Result};
use diesel::connection::SimpleConnection;
use diesel::{Connection, SqliteConnection};
use diesel_async::sync_connection_wrapper::{SpawnBlocking, SyncConnectionWrapper};
use tokio::sync::{Mutex, MutexGuard};

use crate::error::{TxError, TxResult, unavailable};

/// Set on every connection. `busy_timeout` comes first: it covers other connections and
/// processes (`agentgov migrate`, the checkpoint of a store closing) holding the lock, also
/// while `journal_mode` is set, which is a property of the file but cheap to answer.
/// `synchronous = FULL` syncs the WAL on every commit, so a committed write (an audit
/// record above all) survives a power loss, not only a crash of the process. No commit
/// checkpoints: the store's checkpoint thread does (`checkpoint.rs`), and the WAL file is
/// truncated to 64 MiB when it starts over. Temporary files are kept in memory: an append's
/// multi-row `INSERT` inside its transaction keeps a statement journal, which otherwise
/// spills past 64 KiB into a temporary file created, written and deleted on every commit.
const PRAGMAS: &str = "PRAGMA busy_timeout = 5000; \
                       PRAGMA journal_mode = WAL; \
                       PRAGMA synchronous = FULL; \
                       PRAGMA foreign_keys = ON; \
                       PRAGMA wal_autocheckpoint = 0; \
                       PRAGMA journal_size_limit = 67108864; \
                       PRAGMA temp_store = MEMORY;";

/// Spawns blocking tasks on the current tokio runtime.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct TokioBlocking;

type BoxedTask<'a, R> = Pin<Box<dyn Future<Output = std::result::Result<R, Box<dyn Error + Send + Sync>>> + Send + 'a>>;

impl SpawnBlocking for TokioBlocking {
    fn spawn_blocking<'a, R>(&mut self, task: impl FnOnce() -> R + Send + 'static) -> BoxedTask<'a, R>
    where
        R: Send + 'static,
    {
        Box::pin(async move { tokio::task::spawn_blocking(task).await.map_err(|e| Box::new(e) as Box<_>) })
    }

    fn get_runtime() -> Self {
        TokioBlocking
    }
}

pub(crate) type Conn = SyncConnectionWrapper<SqliteConnection, TokioBlocking>;

/// Opens a connection with agentgov's pragmas, synchronously.
pub(crate) fn connect(url: &str) -> Result<SqliteConnection> {
    let mut conn = SqliteConnection::establish(url).map_err(unavailable)?;
    conn.batch_execute(PRAGMAS).map_err(crate::error::from_diesel)?;
    Ok(conn)
}

/// Runs `task` on a blocking thread with the connection.
pub(crate) async fn run<R, F>(conn: &mut Conn, task: F) -> Result<R>
where
    R: Send + 'static,
    F: FnOnce(&mut SqliteConnection) -> TxResult<R> + Send + 'static,
{
    // `spawn_blocking` wants a diesel result; the task's own outcome rides inside it.
    match conn.spawn_blocking(move |c| Ok(task(c))).await {
        Ok(outcome) => outcome.map_err(DomainError::from),
        Err(e) => Err(DomainError::from(TxError::Db(e))),
    }
}

/// A fixed set of read connections; a read takes a free one, or waits for one in turn.
pub(crate) struct Readers {
    conns: Vec<Mutex<Conn>>,
    next: AtomicUsize,
}

impl Readers {
    pub(crate) fn new(conns: Vec<Conn>) -> Self {
        Self { conns: conns.into_iter().map(Mutex::new).collect(), next: AtomicUsize::new(0) }
    }

    pub(crate) async fn get(&self) -> Result<MutexGuard<'_, Conn>> {
        let n = self.conns.len();
        if n == 0 {
            return Err(DomainError::Internal("sqlite store has no read connections".into()));
        }
        let start = self.next.fetch_add(1, Ordering::Relaxed) % n;
        for i in 0..n {
            if let Ok(guard) = self.conns[(start + i) % n].try_lock() {
                return Ok(guard);
            }
        }
        Ok(self.conns[start].lock().await)
    }
}

#[cfg(test)]
mod tests {

    use diesel::sql_types::Integer;
    use diesel::{QueryableByName, RunQueryDsl, sql_query};

    use super::*;

    #[derive(QueryableByName)]
    struct Synchronous {
        #[diesel(sql_type = Integer)]
        synchronous: i32,
    }

    #[derive(QueryableByName)]
    struct AutoCheckpoint {
        #[diesel(sql_type = Integer)]
        wal_autocheckpoint: i32,
    }

    #[derive(QueryableByName)]
    struct TempStore {
        #[diesel(sql_type = Integer)]
        temp_store: i32,
    }

    #[test]
    fn every_connection_gets_the_pragmas() {
        let dir = tempfile::TempDir::new().unwrap();
        let mut conn = connect(dir.path().join("pragmas.db").to_str().unwrap()).unwrap();
        // Commits never checkpoint: the store's checkpoint thread does.
        let pages: AutoCheckpoint = sql_query("PRAGMA wal_autocheckpoint").get_result(&mut conn).unwrap();
        assert_eq!(pages.wal_autocheckpoint, 0);
        // 2 is FULL: the WAL is synced on every commit, so a committed append is durable.
        let mode: Synchronous = sql_query("PRAGMA synchronous").get_result(&mut conn).unwrap();
        assert_eq!(mode.synchronous, 2);
        // 2 is MEMORY: statement journals are never written to a temporary file.
        let store: TempStore = sql_query("PRAGMA temp_store").get_result(&mut conn).unwrap();
        assert_eq!(store.temp_store, 2);
    }
}
