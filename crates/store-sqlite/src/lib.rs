//! agentgov's embedded store: SQLite through diesel, one writer and a few readers.
//!
//! `SqliteStore::open` creates the file if needed, applies the pragmas (WAL, `busy_timeout`,
//! `synchronous = FULL`, foreign keys, temporary files in memory) to every connection and runs the embedded
//! migrations of `migrations/sqlite`. `synchronous = FULL` makes every commit durable when
//! it returns (the WAL is synced on each commit), which the audit log requires. WAL
//! checkpoints run on a thread of their own, not inside commits (`checkpoint.rs`). The
//! index of agent sessions' records is written in bulk when the store is its database's only
//! writer (`session_index.rs`).

mod checkpoint;
mod columns;
mod conn;
mod error;
mod repo;
mod rows;
mod schema;
mod session_index;
mod store;

use std::path::Path;
use std::sync::Arc;

use agentgov_domain::{DomainError, Result};
use diesel_migrations::{EmbeddedMigrations, MigrationHarness, embed_migrations};
use tokio::sync::Mutex;

use checkpoint::{CatchUp, Checkpointer};
pub use checkpoint::{CheckpointMode, WalState};
use conn::{Conn, Readers, connect, run};
use error::TxError;
use session_index::SessionIndex;
pub use session_index::{FLUSH_AT, Indexing};

const MIGRATIONS: EmbeddedMigrations = embed_migrations!("../../migrations/sqlite");

/// Read connections. Readers never wait for the writer (WAL), only for each other.
const READERS: usize = 4;

pub struct SqliteStore {
    writer: Writer,
    readers: Readers,
    sessions: Arc<SessionIndex>,
    _checkpointer: Checkpointer,
}

/// The one write connection, whose lock queues every write of the process (shared with the
/// session index's flushes).
#[derive(Clone)]
pub(crate) struct Writer {
    conn: Arc<Mutex<Conn>>,
    catch_up: CatchUp,
}

impl Writer {
    /// Runs `task` on the writer connection. Writes queue here, so they never meet
    /// "database is locked" from each other.
    pub(crate) async fn write<R, F>(&self, task: F) -> Result<R>
    where
        R: Send + 'static,
        F: FnOnce(&mut diesel::SqliteConnection) -> error::TxResult<R> + Send + 'static,
    {
        let mut conn = self.conn.lock().await;
        let catch_up = self.catch_up.take();
        run(&mut conn, move |c| {
            if catch_up {
                CatchUp::run(c);
            }
            task(c)
        })
        .await
    }
}

impl std::fmt::Debug for SqliteStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SqliteStore").field("readers", &READERS).finish_non_exhaustive()
    }
}

impl SqliteStore {
    /// Opens (creating it and its directory if needed) and migrates the database at `path`,
    /// which other processes may write too ([`Indexing::Immediate`]). Blocks while it
    /// migrates; call it at start-up.
    pub fn open(path: &Path) -> Result<SqliteStore> {
        Self::open_with(path, Indexing::Immediate)
    }

    /// [`open`](Self::open), with the session index written as `indexing` says:
    /// [`Indexing::Deferred`] only when no other process writes the database.
    pub fn open_with(path: &Path, indexing: Indexing) -> Result<SqliteStore> {
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).map_err(|e| {
                DomainError::Internal(format!("cannot create the database directory {}: {e}", dir.display()))
            })?;
        }
        let url = path
            .to_str()
            .ok_or_else(|| DomainError::Internal(format!("database path {} is not UTF-8", path.display())))?;

        let mut writer = connect(url)?;
        writer.run_pending_migrations(MIGRATIONS).map_err(migration_error)?;
        let sessions = Arc::new(SessionIndex::open(&mut writer, indexing).map_err(DomainError::from)?);
        let readers = (0..READERS).map(|_| connect(url).map(Conn::new)).collect::<Result<Vec<_>>>()?;
        let catch_up = CatchUp::default();
        let checkpointer = Checkpointer::start(url, catch_up.clone())?;
        Ok(SqliteStore {
            writer: Writer { conn: Arc::new(Mutex::new(Conn::new(writer))), catch_up },
            readers: Readers::new(readers),
            sessions,
            _checkpointer: checkpointer,
        })
    }

    /// Runs one WAL checkpoint now, on a read connection (the checkpoint thread runs them
    /// when the writer pauses; this is for tests and tools).
    pub async fn checkpoint(&self, mode: CheckpointMode) -> Result<WalState> {
        self.read(move |c| checkpoint::checkpoint(c, mode).map_err(TxError::Domain)).await
    }

    /// Applies the migrations not yet applied.
    pub async fn run_migrations(&self) -> Result<()> {
        self.write(|c| c.run_pending_migrations(MIGRATIONS).map(drop).map_err(|e| TxError::Domain(migration_error(e))))
            .await
    }

    /// Reverts every applied migration, leaving an empty database (for the up → down → up test).
    pub async fn revert_all_migrations(&self) -> Result<()> {
        self.write(|c| c.revert_all_migrations(MIGRATIONS).map(drop).map_err(|e| TxError::Domain(migration_error(e))))
            .await
    }

    /// Reverts the last applied migration and answers its name (for the upgrade tests, which
    /// fill a table of the schema before it, then apply it again).
    pub async fn revert_last_migration(&self) -> Result<String> {
        self.write(|c| {
            c.revert_last_migration(MIGRATIONS).map(|v| v.to_string()).map_err(|e| TxError::Domain(migration_error(e)))
        })
        .await
    }

    /// Runs `task` on a read connection.
    pub(crate) async fn read<R, F>(&self, task: F) -> Result<R>
    where
        R: Send + 'static,
        F: FnOnce(&mut diesel::SqliteConnection) -> error::TxResult<R> + Send + 'static,
    {
        let mut conn = self.readers.get().await?;
        run(&mut conn, task).await
    }

    /// Runs `task` on the writer connection ([`Writer::write`]).
    pub(crate) async fn write<R, F>(&self, task: F) -> Result<R>
    where
        R: Send + 'static,
        F: FnOnce(&mut diesel::SqliteConnection) -> error::TxResult<R> + Send + 'static,
    {
        self.writer.write(task).await
    }

    /// Runs `task` in a `BEGIN IMMEDIATE` transaction on the writer: committed if it
    /// returns `Ok`, rolled back otherwise.
    pub(crate) async fn transaction<R, F>(&self, task: F) -> Result<R>
    where
        R: Send + 'static,
        F: FnOnce(&mut diesel::SqliteConnection) -> error::TxResult<R> + Send + 'static,
    {
        self.write(move |c| c.immediate_transaction(task)).await
    }
}

fn migration_error(e: Box<dyn std::error::Error + Send + Sync>) -> DomainError {
    DomainError::Internal(format!("sqlite migrations failed: {e}"))
}
