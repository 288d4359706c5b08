//! The shared connections, and the translation of driver errors into the domain's.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use agentgov_domain::DomainError;
use deadpool_redis::redis::aio::{ConnectionManager, ConnectionManagerConfig};
use deadpool_redis::redis::{self, Client, RedisError};

/// Bound on opening a connection (TCP, handshake, AUTH).
pub(crate) const CONNECT_TIMEOUT: Duration = Duration::from_secs(2);
/// Bound on one command's round trip.
pub(crate) const RESPONSE_TIMEOUT: Duration = Duration::from_secs(2);

/// Multiplexed connections every caller shares (redis-rs's `ConnectionManager`): each one
/// TCP connection carrying the commands of all concurrent callers, written and read in
/// batches (one system call for many commands under load, where a pool lending a
/// connection to one caller at a time pays one per command), and opened again by itself
/// after it failed. Commands go to the connections in turn. Cloning shares them.
#[derive(Clone)]
pub(crate) struct Connections {
    shared: Arc<[ConnectionManager]>,
    next: Arc<AtomicUsize>,
}

impl Connections {
    /// `count` connections (at least one) to `url`, opened at their first command: an
    /// unreachable Redis shows then, a malformed URL here.
    pub(crate) fn new(url: &str, count: usize, service: &'static str) -> Result<Self, DomainError> {
        let client = Client::open(url).map_err(|e| invalid_url(service, &e))?;
        // One retry of a failed connect (redis-rs's default is six, with growing delays): a
        // command for a Redis that is down fails as `Unavailable` within a few seconds.
        let config = ConnectionManagerConfig::new()
            .set_connection_timeout(Some(CONNECT_TIMEOUT))
            .set_response_timeout(Some(RESPONSE_TIMEOUT))
            .set_number_of_retries(1);
        let shared = (0..count.max(1))
            .map(|_| ConnectionManager::new_lazy_with_config(client.clone(), config.clone()))
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| DomainError::internal(format!("{service}: cannot set up a Redis connection: {e}")))?;
        Ok(Self { shared: shared.into(), next: Arc::default() })
    }

    /// The next connection in turn.
    pub(crate) fn next(&self) -> ConnectionManager {
        let i = self.next.fetch_add(1, Ordering::Relaxed) % self.shared.len();
        self.shared[i].clone()
    }

    pub(crate) fn count(&self) -> usize {
        self.shared.len()
    }
}

/// A command's answer in the domain's terms.
pub(crate) fn answer<T>(service: &'static str, result: redis::RedisResult<T>) -> Result<T, DomainError> {
    result.map_err(|e| command_error(service, e))
}

fn is_connection_failure(err: &RedisError) -> bool {
    err.is_io_error() || err.is_timeout() || err.is_connection_dropped() || err.is_connection_refusal()
}

/// The URL itself is never repeated: it may carry a password.
pub(crate) fn invalid_url(service: &'static str, err: &RedisError) -> DomainError {
    DomainError::internal(format!("{service}: invalid Redis URL: {err}"))
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
