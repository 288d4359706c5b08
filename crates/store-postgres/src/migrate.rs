//! Embedded migrations, run through diesel's sync harness on a blocking thread.
//!
//! diesel-async 0.9 offers `AsyncMigrationHarness`, but it uses `block_in_place`, which
//! panics on a current-thread runtime (actix's workers, `#[tokio::test]`). Instead a pooled
//! connection is wrapped in `AsyncConnectionWrapper` and driven from `spawn_blocking`.
//!
//! Several replicas may migrate at start-up: a session advisory lock, keyed by the schema,
//! makes them take turns; the later ones then find nothing pending.

use std::error::Error;

use agentgov_domain::{DomainError, Result};
use diesel::RunQueryDsl;
use diesel_async::async_connection_wrapper::AsyncConnectionWrapper;
use diesel_async::pooled_connection::deadpool::Object;
use diesel_migrations::{EmbeddedMigrations, MigrationHarness, embed_migrations};

use crate::store::{Conn, PgStore};

const MIGRATIONS: EmbeddedMigrations = embed_migrations!("../../migrations/postgres");

/// `pg_advisory_lock(class, key)`: a fixed class for agentgov's migrations ("agv" in ASCII)
/// and the current schema's hash as key, so separate schemas migrate independently.
const LOCK_SQL: &str = "SELECT pg_advisory_lock(6383478, hashtext(coalesce(current_schema(), '')))";
const UNLOCK_SQL: &str = "SELECT pg_advisory_unlock(6383478, hashtext(coalesce(current_schema(), '')))";

type Wrapper = AsyncConnectionWrapper<Conn>;
type BoxError = Box<dyn Error + Send + Sync>;

impl PgStore {
    /// Applies every pending migration. Safe to call from several replicas at once.
    pub async fn run_migrations(&self) -> Result<()> {
        self.with_harness("running migrations", |h| {
            let applied = h.run_pending_migrations(MIGRATIONS)?;
            for version in applied {
                tracing::info!(%version, "applied migration");
            }
            Ok(())
        })
        .await
    }

    /// Reverts every applied migration, leaving an empty schema. For the up/down/up test
    /// and `agentgov migrate --revert`; destroys all data.
    pub async fn revert_all_migrations(&self) -> Result<()> {
        self.with_harness("reverting migrations", |h| {
            let reverted = h.revert_all_migrations(MIGRATIONS)?;
            for version in reverted {
                tracing::info!(%version, "reverted migration");
            }
            Ok(())
        })
        .await
    }

    /// Reverts the last applied migration and answers its version (for the upgrade tests,
    /// which fill a table of the schema before it, then apply it again).
    pub async fn revert_last_migration(&self) -> Result<String> {
        self.with_harness("reverting a migration", |h| Ok(h.revert_last_migration(MIGRATIONS)?.to_string())).await
    }

    async fn with_harness<T, F>(&self, what: &'static str, work: F) -> Result<T>
    where
        T: Send + 'static,
        F: FnOnce(&mut Wrapper) -> std::result::Result<T, BoxError> + Send + 'static,
    {
        let conn = self.conn().await?;
        let task = tokio::task::spawn_blocking(move || {
            // Inside `spawn_blocking` the wrapper finds the runtime's handle and blocks on it.
            let mut wrapper = Wrapper::from(conn);
            diesel::sql_query(LOCK_SQL).execute(&mut wrapper)?;
            let result = work(&mut wrapper);
            if let Err(e) = diesel::sql_query(UNLOCK_SQL).execute(&mut wrapper) {
                // Closing the session is the other way to release the lock.
                tracing::warn!(error = %e, "advisory unlock failed; closing the connection");
                drop(Object::take(wrapper.into_inner()));
            }
            result
        });
        match task.await {
            Ok(result) => result.map_err(|e| DomainError::Internal(format!("{what}: {e}"))),
            Err(join) => Err(DomainError::Internal(format!("{what}: task failed: {join}"))),
        }
    }
}
