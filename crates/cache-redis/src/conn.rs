//! Pool construction and the translation of driver errors into the domain's.

use std::time::Duration;

use agentgov_domain::DomainError;
use deadpool::Runtime;
use deadpool::managed::{self, Metrics, RecycleError, RecycleResult};
use deadpool_redis::redis::aio::MultiplexedConnection;
use deadpool_redis::redis::{self, AsyncConnectionConfig, Client, RedisError};

/// Bound on opening a connection (TCP, handshake, AUTH) and on waiting for a pooled one.
pub(crate) const CONNECT_TIMEOUT: Duration = Duration::from_secs(2);
/// Bound on one command's round trip.
pub(crate) const RESPONSE_TIMEOUT: Duration = Duration::from_secs(2);
/// A pooled connection idle for longer is pinged before it is handed out again.
const PING_IDLE_AFTER: Duration = Duration::from_secs(1);

/// Opens multiplexed connections and checks a pooled one before handing it out again only
/// when it sat idle for longer than [`PING_IDLE_AFTER`]. deadpool-redis's own manager pings
/// at every checkout, a round trip more for every command; a connection in use breaks
/// loudly instead (an I/O error on its next command), and [`answer`] drops it from the
/// pool then.
pub(crate) struct Multiplexed {
    client: Client,
    config: AsyncConnectionConfig,
}

impl managed::Manager for Multiplexed {
    type Type = MultiplexedConnection;
    type Error = RedisError;

    async fn create(&self) -> Result<MultiplexedConnection, RedisError> {
        self.client.get_multiplexed_async_connection_with_config(&self.config).await
    }

    async fn recycle(&self, conn: &mut MultiplexedConnection, metrics: &Metrics) -> RecycleResult<RedisError> {
        if metrics.last_used() < PING_IDLE_AFTER {
            return Ok(());
        }
        let pong: String = redis::cmd("PING").query_async(conn).await?;
        if pong == "PONG" { Ok(()) } else { Err(RecycleError::message("invalid PING answer")) }
    }
}

pub(crate) type Pool = managed::Pool<Multiplexed>;
pub(crate) type Connection = managed::Object<Multiplexed>;
pub(crate) type PoolError = managed::PoolError<RedisError>;

/// A lazily connecting pool; no connection is attempted until the first command.
pub(crate) fn pool(url: &str, size: usize, service: &'static str) -> Result<Pool, DomainError> {
    let config = AsyncConnectionConfig::new()
        .set_connection_timeout(Some(CONNECT_TIMEOUT))
        .set_response_timeout(Some(RESPONSE_TIMEOUT));
    let client = Client::open(url).map_err(|e| invalid_url(service, &e))?;
    Pool::builder(Multiplexed { client, config })
        .max_size(size.max(1))
        .wait_timeout(Some(CONNECT_TIMEOUT))
        .create_timeout(Some(CONNECT_TIMEOUT))
        .recycle_timeout(Some(RESPONSE_TIMEOUT))
        .runtime(Runtime::Tokio1)
        .build()
        .map_err(|e| DomainError::internal(format!("{service}: cannot build the connection pool: {e}")))
}

/// A command's answer on `conn` in the domain's terms; a connection that failed is dropped
/// from its pool, so that the pool opens another rather than handing the broken one out.
pub(crate) fn answer<T>(
    service: &'static str,
    conn: Connection,
    result: redis::RedisResult<T>,
) -> Result<T, DomainError> {
    result.map_err(|e| {
        if is_connection_failure(&e) {
            drop(managed::Object::take(conn));
        }
        command_error(service, e)
    })
}

fn is_connection_failure(err: &RedisError) -> bool {
    err.is_io_error() || err.is_timeout() || err.is_connection_dropped() || err.is_connection_refusal()
}

/// The URL itself is never repeated: it may carry a password.
pub(crate) fn invalid_url(service: &'static str, err: &RedisError) -> DomainError {
    DomainError::internal(format!("{service}: invalid Redis URL: {err}"))
}

/// No connection to be had: Redis is down, unreachable, refusing us or too slow.
pub(crate) fn pool_error(service: &'static str, err: PoolError) -> DomainError {
    tracing::warn!(error = %err, "{service}: no Redis connection");
    DomainError::Unavailable(service.into())
}

/// Connection trouble is `Unavailable`; anything else Redis answered is a bug of ours.
pub(crate) fn command_error(service: &'static str, err: RedisError) -> DomainError {
    if is_connection_failure(&err) {
        tracing::warn!(error = %err, "{service}: Redis call failed");
        DomainError::Unavailable(service.into())
    } else {
        DomainError::internal(format!("{service}: {err}"))
    }
}

/// Milliseconds for `PX`/`PEXPIRE`: at least 1, since Redis rejects 0.
pub(crate) fn millis(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX).max(1)
}

/// A `PTTL` answer as a duration; negative answers (no key, no expiry) read as zero.
pub(crate) fn from_pttl(ms: i64) -> Duration {
    Duration::from_millis(u64::try_from(ms).unwrap_or(0))
}
