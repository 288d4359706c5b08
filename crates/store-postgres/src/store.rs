//! The pool, connection checkout and the `Store` port's own methods.

use std::collections::BTreeMap;
use std::fmt;
use std::ops::{Deref, DerefMut};
use std::sync::Arc;
use std::time::Duration;

use agentgov_domain::ids::TenantId;
use agentgov_domain::ports::{HourlyKey, ResourceCounts, Store};
use agentgov_domain::{DomainError, Result};
use agentgov_store_common::HourlyRow;
use async_trait::async_trait;
use diesel::sql_types::{BigInt, Text, Uuid as SqlUuid};
use diesel::{QueryableByName, sql_query};
use diesel_async::pooled_connection::deadpool::{Object, Pool};
use diesel_async::pooled_connection::{
    AsyncDieselConnectionManager, ManagerConfig, PoolableConnection, RecyclingMethod,
};
use diesel_async::{AsyncConnection, AsyncPgConnection, RunQueryDsl};

use crate::error::{self, TxError};
use crate::repo::audit::KnownHeads;

/// How long a request waits for a pooled connection before the database counts as
/// unavailable (the pool has no runtime of its own, so the wait is bounded here).
const ACQUIRE_TIMEOUT: Duration = Duration::from_secs(5);

pub(crate) type Conn = Object<AsyncPgConnection>;

/// Connections reserved for audit appends.
const AUDIT_CONNECTIONS: usize = 2;

/// The PostgreSQL store. Cheap to clone: clones share the pools.
#[derive(Clone)]
pub struct PgStore {
    pool: Pool<AsyncPgConnection>,
    /// Audit appends get their own connections. A connection's I/O is driven by a task on
    /// the runtime that opened it; in the shared pool that is often a busy HTTP worker's,
    /// which left the audit writer's transaction waiting between statements (the batch
    /// commit is the append path's critical section). Opened lazily by the writer itself,
    /// these are driven on the writer's runtime.
    audit_pool: Pool<AsyncPgConnection>,
    /// The tenants known to have an audit head row, and the heads this process left.
    pub(crate) known_heads: Arc<KnownHeads>,
}

impl fmt::Debug for PgStore {
    // The URL may hold a password, so only the pool's shape is shown.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let status = self.pool.status();
        f.debug_struct("PgStore").field("max_size", &status.max_size).field("size", &status.size).finish()
    }
}

impl PgStore {
    /// Builds a pool of at most `max_connections` (at least one) and checks that one
    /// connection can be made. `Unavailable` when the database cannot be reached.
    pub async fn connect(url: &str, max_connections: usize) -> Result<PgStore> {
        let build = |size: usize| {
            // A checkout costs no round trip: diesel-async's default (`Verified`) ran
            // `SELECT 1` on every one, which on the audit writer's connection put a round
            // trip before every batch, on the append path's critical section. A connection
            // Postgres closed is still discarded at checkout (`is_broken` asks the client),
            // and one that failed in use answers 503 once and is discarded then.
            let mut config = ManagerConfig::default();
            config.recycling_method = RecyclingMethod::Fast;
            let manager = AsyncDieselConnectionManager::<AsyncPgConnection>::new_with_config(url, config);
            Pool::builder(manager)
                .max_size(size)
                .build()
                .map_err(|e| DomainError::Internal(format!("building the database pool: {e}")))
        };
        let store = PgStore {
            pool: build(max_connections.max(1))?,
            audit_pool: build(AUDIT_CONNECTIONS)?,
            known_heads: Arc::default(),
        };
        store.ping().await?;
        Ok(store)
    }

    /// A pooled connection; `Unavailable` if none can be had in time.
    pub(crate) async fn conn(&self) -> Result<Conn> {
        Self::checkout(&self.pool).await
    }

    /// A connection for an audit append's transaction; see [`TxConn`].
    pub(crate) async fn audit_tx_conn(&self) -> Result<TxConn> {
        Ok(TxConn(Some(Self::checkout(&self.audit_pool).await?)))
    }

    async fn checkout(pool: &Pool<AsyncPgConnection>) -> Result<Conn> {
        match tokio::time::timeout(ACQUIRE_TIMEOUT, pool.get()).await {
            Ok(Ok(conn)) => Ok(conn),
            Ok(Err(e)) => Err(error::pool(e)),
            Err(_) => Err(error::pool(format!("timed out after {ACQUIRE_TIMEOUT:?} waiting for a connection"))),
        }
    }

    /// A pooled connection for a transaction; see [`TxConn`].
    pub(crate) async fn tx_conn(&self) -> Result<TxConn> {
        Ok(TxConn(Some(self.conn().await?)))
    }
}

/// A pooled connection used for a transaction.
///
/// When the future running a diesel-async transaction is dropped midway (the client went
/// away), the transaction stays open on the connection, holding its locks (the tenant row of
/// the last-admin check) until the pool next recycles it. On drop, such a connection is
/// detached from the pool and closed instead, so Postgres rolls back at once.
pub(crate) struct TxConn(Option<Conn>);

impl Deref for TxConn {
    type Target = AsyncPgConnection;

    fn deref(&self) -> &AsyncPgConnection {
        match &self.0 {
            Some(conn) => conn,
            None => unreachable!("TxConn is only emptied in drop"),
        }
    }
}

impl DerefMut for TxConn {
    fn deref_mut(&mut self) -> &mut AsyncPgConnection {
        match &mut self.0 {
            Some(conn) => conn,
            None => unreachable!("TxConn is only emptied in drop"),
        }
    }
}

impl Drop for TxConn {
    fn drop(&mut self) {
        if let Some(mut conn) = self.0.take() {
            // `is_broken` is true while a transaction is open or after a failed rollback.
            if PoolableConnection::is_broken(&mut *conn) {
                tracing::warn!("dropping a database connection left inside a transaction");
                drop(Object::take(conn));
            }
        }
    }
}

#[derive(QueryableByName)]
struct CountsRow {
    #[diesel(sql_type = BigInt)]
    users: i64,
    #[diesel(sql_type = BigInt)]
    active_users: i64,
    #[diesel(sql_type = BigInt)]
    blocked_users: i64,
    #[diesel(sql_type = BigInt)]
    api_keys: i64,
}

const COUNTS_SQL: &str = "\
SELECT count(*) AS users,
       count(*) FILTER (WHERE status = 'active') AS active_users,
       count(*) FILTER (WHERE status = 'blocked') AS blocked_users,
       (SELECT count(*) FROM api_keys WHERE tenant_id = $1 AND revoked_at IS NULL) AS api_keys
FROM users WHERE tenant_id = $1";

fn count(n: i64) -> Result<u64> {
    u64::try_from(n).map_err(|_| DomainError::Internal(format!("negative count {n}")))
}

const ADD_HOURLY_SQL: &str = "\
INSERT INTO hourly_counts (tenant_id, metric, hour, label, count) VALUES ($1, $2, $3, $4, $5)
ON CONFLICT (tenant_id, metric, hour, label) DO UPDATE SET count = hourly_counts.count + excluded.count";

const HOURLY_SQL: &str =
    "SELECT hour, label, count FROM hourly_counts WHERE tenant_id = $1 AND metric = $2 AND hour >= $3";

#[async_trait]
impl Store for PgStore {
    async fn add_hourly_counts(&self, counts: &[(HourlyKey, i64)]) -> Result<()> {
        // One row per key, in one order: concurrent flushes lock rows alike and cannot deadlock.
        let mut merged: BTreeMap<HourlyKey, i64> = BTreeMap::new();
        for (key, count) in counts {
            *merged.entry(key.clone()).or_default() += count;
        }
        if merged.is_empty() {
            return Ok(());
        }
        let mut conn = self.tx_conn().await?;
        let conn: &mut AsyncPgConnection = &mut conn;
        conn.transaction(async move |conn| -> Result<(), TxError> {
            for (key, count) in merged {
                sql_query(ADD_HOURLY_SQL)
                    .bind::<SqlUuid, _>(key.tenant_id.as_uuid())
                    .bind::<Text, _>(key.metric)
                    .bind::<BigInt, _>(key.hour)
                    .bind::<Text, _>(key.label)
                    .bind::<BigInt, _>(count)
                    .execute(conn)
                    .await?;
            }
            Ok(())
        })
        .await
        .map_err(DomainError::from)
    }

    async fn hourly_counts(&self, tenant: TenantId, metric: &str, from_hour: i64) -> Result<Vec<(HourlyKey, i64)>> {
        let mut conn = self.conn().await?;
        let rows: Vec<HourlyRow> = sql_query(HOURLY_SQL)
            .bind::<SqlUuid, _>(tenant.as_uuid())
            .bind::<Text, _>(metric)
            .bind::<BigInt, _>(from_hour)
            .load(&mut conn)
            .await
            .map_err(error::db)?;
        Ok(rows.into_iter().map(|r| r.into_key(tenant, metric)).collect())
    }

    async fn ping(&self) -> Result<()> {
        let mut conn = self.conn().await?;
        sql_query("SELECT 1").execute(&mut conn).await.map_err(error::db)?;
        Ok(())
    }

    async fn count_resources(&self, tenant: TenantId) -> Result<ResourceCounts> {
        let mut conn = self.conn().await?;
        // One statement, so the four numbers come from one snapshot.
        let row: CountsRow = sql_query(COUNTS_SQL)
            .bind::<SqlUuid, _>(tenant.as_uuid())
            .get_result(&mut conn)
            .await
            .map_err(error::db)?;
        Ok(ResourceCounts {
            users: count(row.users)?,
            active_users: count(row.active_users)?,
            blocked_users: count(row.blocked_users)?,
            api_keys: count(row.api_keys)?,
        })
    }

    fn backend(&self) -> &'static str {
        "postgres"
    }
}
