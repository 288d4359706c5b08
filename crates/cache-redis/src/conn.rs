//! Pool construction and the translation of driver errors into the domain's.

use std::time::Duration;

use agentgov_domain::DomainError;
use deadpool_redis::redis::{AsyncConnectionConfig, RedisError};
use deadpool_redis::{Manager, Pool, PoolError, Runtime};

/// Bound on opening a connection (TCP, handshake, AUTH) and on waiting for a pooled one.
pub(crate) const CONNECT_TIMEOUT: Duration = Duration::from_secs(2);
/// Bound on one command's round trip.
pub(crate) const RESPONSE_TIMEOUT: Duration = Duration::from_secs(2);

/// A lazily connecting pool; no connection is attempted until the first command.
pub(crate) fn pool(url: &str, size: usize, service: &'static str) -> Result<Pool, DomainError> {
    let config = AsyncConnectionConfig::new()
        .set_connection_timeout(Some(CONNECT_TIMEOUT))
        .set_response_timeout(Some(RESPONSE_TIMEOUT));
    let manager = Manager::new_with_config(url, config).map_err(|e| invalid_url(service, &e))?;
    Pool::builder(manager)
        .max_size(size.max(1))
        .wait_timeout(Some(CONNECT_TIMEOUT))
        .create_timeout(Some(CONNECT_TIMEOUT))
        .recycle_timeout(Some(RESPONSE_TIMEOUT))
        .runtime(Runtime::Tokio1)
        .build()
        .map_err(|e| DomainError::internal(format!("{service}: cannot build the connection pool: {e}")))
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
    if err.is_io_error() || err.is_timeout() || err.is_connection_dropped() || err.is_connection_refusal() {
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
