//! Cache port: TTL keys, windowed counters (rate limits), expiring places (per-tenant caps
//! on what stays open), per-member maxima (the agent sessions' marks) and the revoked-token
//! set.
//! Shared by every replica in production (Redis), in-process when embedded.

use std::time::Duration;

use async_trait::async_trait;

use crate::error::Result;

/// A windowed counter after an increment.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Counter {
    pub count: u64,
    /// Time until the window ends and the counter is forgotten.
    pub ttl: Duration,
}

/// One member's value to raise under a key ([`Cache::raise`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Raise {
    pub key: String,
    pub member: String,
    pub value: i64,
}

/// Most members [`Cache::maxima`] reads under one key; past it the key reads as
/// [`Maxima::TooMany`].
pub const MAX_MAXIMA_MEMBERS: usize = 64;

/// What [`Cache::maxima`] read under a key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Maxima {
    /// Every member with its value (none when the key is absent or expired).
    Members(Vec<(String, i64)>),
    /// More than [`MAX_MAXIMA_MEMBERS`] members.
    TooMany,
}

#[async_trait]
pub trait Cache: Send + Sync {
    async fn get(&self, key: &str) -> Result<Option<Vec<u8>>>;
    async fn set(&self, key: &str, value: &[u8], ttl: Duration) -> Result<()>;
    async fn delete(&self, key: &str) -> Result<()>;
    /// Reads and deletes a key at once: of concurrent takes, at most one gets the value
    /// (single-use tokens). `None` when absent or expired.
    async fn take(&self, key: &str) -> Result<Option<Vec<u8>>>;
    /// Adds one to a counter. The window starts at the first increment and lasts `window`;
    /// later increments do not extend it.
    async fn incr(&self, key: &str, window: Duration) -> Result<Counter>;
    /// Takes one back from a counter (a reservation made with `incr` that turned out not to
    /// count, e.g. a login that succeeded). Atomic like `incr`; keeps the window; never goes
    /// below zero and never creates an absent or expired counter.
    async fn decr(&self, key: &str) -> Result<()>;
    /// The counter's current value without changing it; `None` when absent or expired.
    async fn get_counter(&self, key: &str) -> Result<Option<Counter>>;
    /// Holds one of at most `cap` places under `key` for `holder` until `ttl` from now (a
    /// counting semaphore whose places expire, so a holder that dies frees its place). A
    /// holder that already holds a place renews it, whatever the count. True when `holder`
    /// holds a place afterwards. Atomic: of holders racing for the last place, one wins.
    async fn hold_place(&self, key: &str, holder: &str, cap: u64, ttl: Duration) -> Result<bool>;
    /// Gives up `holder`'s place under `key` (a no-op when it holds none).
    async fn release_place(&self, key: &str, holder: &str) -> Result<()>;
    /// Raises each member's value under its key to at least `value` (a maximum per member
    /// that never goes down; an absent member is added with `value`), and keeps each key
    /// until `ttl` after this call. Each raise is atomic; the batch is one round trip.
    /// Values are exact up to 2^53.
    async fn raise(&self, raises: &[Raise], ttl: Duration) -> Result<()>;
    /// The members under `key` with their values.
    async fn maxima(&self, key: &str) -> Result<Maxima>;
    /// Marks a token id revoked for `ttl` (its remaining lifetime).
    async fn revoke_token(&self, jti: &str, ttl: Duration) -> Result<()>;
    async fn is_token_revoked(&self, jti: &str) -> Result<bool>;
    /// Cheap round trip proving the cache answers.
    async fn ping(&self) -> Result<()>;
    /// "memory" or "redis", for `/status`.
    fn backend(&self) -> &'static str;
}
