//! [`MemoryCache`]: the cache port on moka, bounded in bytes, each entry expiring at its own
//! deadline.
//!
//! Values and counters share one keyspace and one representation (a counter is its decimal
//! value, as in Redis), so `delete` removes either and `get` reads a counter as Redis would.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use agentgov_domain::ports::{Cache, Counter, MAX_MAXIMA_MEMBERS, Maxima, Raise};
use agentgov_domain::{DomainError, Result};
use async_trait::async_trait;
use moka::Expiry;
use moka::ops::compute::{CompResult, Op};

/// Default bound on the memory held by entries (keys, values and bookkeeping).
const DEFAULT_MAX_BYTES: u64 = 64 * 1024 * 1024;
/// Rough per-entry bookkeeping, so that many tiny entries still count against the bound.
const ENTRY_OVERHEAD: usize = 96;
/// TTLs are capped so that deadlines never overflow `Instant`.
const MAX_TTL: Duration = Duration::from_secs(10 * 365 * 24 * 3600);

#[derive(Clone)]
struct Entry {
    value: Arc<[u8]>,
    expires_at: Instant,
}

impl Entry {
    fn new(value: &[u8], ttl: Duration, now: Instant) -> Self {
        Self { value: value.into(), expires_at: now + ttl.min(MAX_TTL) }
    }

    fn is_live(&self, now: Instant) -> bool {
        now < self.expires_at
    }

    fn count(&self) -> Result<u64> {
        std::str::from_utf8(&self.value)
            .ok()
            .and_then(|s| s.parse().ok())
            .ok_or_else(|| DomainError::Internal("cache key holds a value that is not a counter".into()))
    }

    fn counter(&self, now: Instant) -> Result<Counter> {
        Ok(Counter { count: self.count()?, ttl: self.expires_at.saturating_duration_since(now) })
    }
}

/// Tells moka to drop each entry at the deadline it carries, however it was written.
struct Deadline;

impl Expiry<String, Entry> for Deadline {
    fn expire_after_create(&self, _key: &String, entry: &Entry, created_at: Instant) -> Option<Duration> {
        Some(entry.expires_at.saturating_duration_since(created_at))
    }

    fn expire_after_update(
        &self,
        _key: &String,
        entry: &Entry,
        updated_at: Instant,
        _remaining: Option<Duration>,
    ) -> Option<Duration> {
        Some(entry.expires_at.saturating_duration_since(updated_at))
    }
}

/// The in-process cache. Cloning shares the entries.
///
/// When full, moka evicts the least useful entries (TinyLFU), counters included: under memory
/// pressure a rate limit may restart its window, never grow without bound.
#[derive(Clone)]
pub struct MemoryCache {
    entries: moka::future::Cache<String, Entry>,
    /// The places of `hold_place`: per key, each holder's deadline. Few keys (one per tenant
    /// and kind), each with at most its cap of holders, so kept apart from the bounded
    /// entries, where eviction would free places that are still held.
    places: Arc<std::sync::Mutex<HashMap<String, HashMap<String, Instant>>>>,
}

impl MemoryCache {
    /// A cache holding at most 64 MiB.
    pub fn new() -> Self {
        Self::with_max_bytes(DEFAULT_MAX_BYTES)
    }

    /// A cache holding at most about `max_bytes` of keys and values.
    pub fn with_max_bytes(max_bytes: u64) -> Self {
        let entries = moka::future::Cache::builder()
            .max_capacity(max_bytes)
            .weigher(|key: &String, entry: &Entry| {
                u32::try_from(key.len() + entry.value.len() + ENTRY_OVERHEAD).unwrap_or(u32::MAX)
            })
            .expire_after(Deadline)
            .build();
        Self { entries, places: Arc::default() }
    }

    /// The live entry under `key`; moka may still hold an entry for a moment past its deadline.
    async fn live(&self, key: &str) -> Option<Entry> {
        self.entries.get(key).await.filter(|e| e.is_live(Instant::now()))
    }
}

impl Default for MemoryCache {
    fn default() -> Self {
        Self::new()
    }
}

impl std::fmt::Debug for MemoryCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MemoryCache").field("entries", &self.entries.entry_count()).finish()
    }
}

/// The members and values of a `raise`d key as an entry's bytes: `value,length,member`
/// after one another (a member may hold any character).
fn encode_maxima(members: &[(String, i64)]) -> Vec<u8> {
    let mut out = String::new();
    for (member, value) in members {
        out.push_str(&format!("{value},{},{member}", member.len()));
    }
    out.into_bytes()
}

fn decode_maxima(bytes: &[u8]) -> Result<Vec<(String, i64)>> {
    let bad = || DomainError::Internal("cache key holds a value that is not a set of maxima".into());
    let mut rest = std::str::from_utf8(bytes).map_err(|_| bad())?;
    let mut members = Vec::new();
    while !rest.is_empty() {
        let (value, tail) = rest.split_once(',').ok_or_else(bad)?;
        let (len, tail) = tail.split_once(',').ok_or_else(bad)?;
        let len: usize = len.parse().map_err(|_| bad())?;
        let member = tail.get(..len).ok_or_else(bad)?;
        members.push((member.to_owned(), value.parse().map_err(|_| bad())?));
        rest = &tail[len..];
    }
    Ok(members)
}

fn revoked_key(jti: &str) -> String {
    format!("revoked:{jti}")
}

#[async_trait]
impl Cache for MemoryCache {
    async fn get(&self, key: &str) -> Result<Option<Vec<u8>>> {
        Ok(self.live(key).await.map(|e| e.value.to_vec()))
    }

    async fn set(&self, key: &str, value: &[u8], ttl: Duration) -> Result<()> {
        self.entries.insert(key.to_owned(), Entry::new(value, ttl, Instant::now())).await;
        Ok(())
    }

    async fn delete(&self, key: &str) -> Result<()> {
        self.entries.invalidate(key).await;
        Ok(())
    }

    async fn take(&self, key: &str) -> Result<Option<Vec<u8>>> {
        // `remove` hands the entry to exactly one caller.
        Ok(self.entries.remove(key).await.filter(|e| e.is_live(Instant::now())).map(|e| e.value.to_vec()))
    }

    async fn incr(&self, key: &str, window: Duration) -> Result<Counter> {
        // The compute closure runs under moka's per-key lock: increments never race.
        let result = self
            .entries
            .entry_by_ref(key)
            .and_try_compute_with(|current| async move {
                let now = Instant::now();
                let next = match current.map(|e| e.into_value()).filter(|e| e.is_live(now)) {
                    // Keeps the deadline: the window is fixed at the first increment.
                    Some(e) => {
                        Entry { value: (e.count()? + 1).to_string().into_bytes().into(), expires_at: e.expires_at }
                    }
                    None => Entry::new(b"1", window, now),
                };
                Ok::<_, DomainError>(Op::Put(next))
            })
            .await?;
        match result {
            CompResult::Inserted(e) | CompResult::ReplacedWith(e) => e.into_value().counter(Instant::now()),
            _ => Err(DomainError::Internal("cache increment did not store a value".into())),
        }
    }

    async fn decr(&self, key: &str) -> Result<()> {
        // Under the same per-key lock as `incr`; an absent or expired counter stays absent.
        self.entries
            .entry_by_ref(key)
            .and_try_compute_with(|current| async move {
                let now = Instant::now();
                let op = match current.map(|e| e.into_value()).filter(|e| e.is_live(now)) {
                    Some(e) => {
                        let count = e.count()?.saturating_sub(1);
                        Op::Put(Entry { value: count.to_string().into_bytes().into(), expires_at: e.expires_at })
                    }
                    None => Op::Nop,
                };
                Ok::<_, DomainError>(op)
            })
            .await?;
        Ok(())
    }

    async fn get_counter(&self, key: &str) -> Result<Option<Counter>> {
        self.live(key).await.map(|e| e.counter(Instant::now())).transpose()
    }

    async fn hold_place(&self, key: &str, holder: &str, cap: u64, ttl: Duration) -> Result<bool> {
        let now = Instant::now();
        let mut places = self.places.lock().map_err(|_| DomainError::internal("cache places poisoned"))?;
        let held = places.entry(key.to_owned()).or_default();
        held.retain(|_, until| now < *until);
        let room = u64::try_from(held.len()).unwrap_or(u64::MAX) < cap;
        if held.contains_key(holder) || room {
            held.insert(holder.to_owned(), now + ttl.min(MAX_TTL));
            return Ok(true);
        }
        Ok(false)
    }

    async fn release_place(&self, key: &str, holder: &str) -> Result<()> {
        let mut places = self.places.lock().map_err(|_| DomainError::internal("cache places poisoned"))?;
        if let Some(held) = places.get_mut(key) {
            held.remove(holder);
            if held.is_empty() {
                places.remove(key);
            }
        }
        Ok(())
    }

    async fn raise(&self, raises: &[Raise], ttl: Duration) -> Result<()> {
        for r in raises {
            // Under moka's per-key lock, as `incr`: raises of one key never race.
            self.entries
                .entry_by_ref(r.key.as_str())
                .and_try_compute_with(|current| async move {
                    let now = Instant::now();
                    let mut members = match current.map(|e| e.into_value()).filter(|e| e.is_live(now)) {
                        Some(e) => decode_maxima(&e.value)?,
                        None => Vec::new(),
                    };
                    match members.iter_mut().find(|(m, _)| *m == r.member) {
                        Some((_, value)) => *value = (*value).max(r.value),
                        None => members.push((r.member.clone(), r.value)),
                    }
                    Ok::<_, DomainError>(Op::Put(Entry::new(&encode_maxima(&members), ttl, now)))
                })
                .await?;
        }
        Ok(())
    }

    async fn maxima(&self, key: &str) -> Result<Maxima> {
        let members = match self.live(key).await {
            Some(e) => decode_maxima(&e.value)?,
            None => Vec::new(),
        };
        Ok(if members.len() > MAX_MAXIMA_MEMBERS { Maxima::TooMany } else { Maxima::Members(members) })
    }

    async fn revoke_token(&self, jti: &str, ttl: Duration) -> Result<()> {
        self.set(&revoked_key(jti), b"1", ttl).await
    }

    async fn is_token_revoked(&self, jti: &str) -> Result<bool> {
        Ok(self.live(&revoked_key(jti)).await.is_some())
    }

    async fn ping(&self) -> Result<()> {
        Ok(())
    }

    fn backend(&self) -> &'static str {
        "memory"
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn memory_stays_bounded() {
        let cache = MemoryCache::with_max_bytes(64 * 1024);
        for i in 0..10_000 {
            cache.set(&format!("key-{i}"), &[0u8; 100], Duration::from_secs(60)).await.unwrap();
        }
        cache.entries.run_pending_tasks().await;
        assert!(cache.entries.weighted_size() <= 64 * 1024, "weighted size {}", cache.entries.weighted_size());
    }

    #[tokio::test]
    async fn a_counter_reads_as_its_decimal_value() {
        let cache = MemoryCache::new();
        cache.incr("c", Duration::from_secs(60)).await.unwrap();
        cache.incr("c", Duration::from_secs(60)).await.unwrap();
        assert_eq!(cache.get("c").await.unwrap().as_deref(), Some(&b"2"[..]));
    }

    #[tokio::test]
    async fn incrementing_a_non_counter_is_an_error_not_a_reset() {
        let cache = MemoryCache::new();
        cache.set("v", b"text", Duration::from_secs(60)).await.unwrap();
        assert!(matches!(cache.incr("v", Duration::from_secs(60)).await, Err(DomainError::Internal(_))));
        assert_eq!(cache.get("v").await.unwrap().as_deref(), Some(&b"text"[..]));
    }
}
