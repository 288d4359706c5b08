//! agentgov's Redis adapters: the cache port (values, rate-limit counters, revoked tokens)
//! and the event bus over pub/sub, shared by every replica.
//!
//! Connections are opened lazily with short connect and response timeouts, so a dead Redis
//! answers `DomainError::Unavailable` within seconds instead of hanging a request.

mod bus;
mod cache;
mod conn;

pub use bus::RedisBus;
pub use cache::RedisCache;
