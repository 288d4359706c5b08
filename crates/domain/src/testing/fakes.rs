//! Small fakes of the cache, bus, clock, id and policy ports.

use std::collections::HashMap;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use async_trait::async_trait;
use time::OffsetDateTime;
use uuid::Uuid;

use crate::error::{DomainError, Result};
use crate::ports::{Cache, Clock, Counter, Event, EventBus, EventStream, IdGen, PolicyEngine};

/// A clock that only moves when told to.
#[derive(Debug)]
pub struct FixedClock(Mutex<OffsetDateTime>);

impl FixedClock {
    pub fn new(at: OffsetDateTime) -> Self {
        Self(Mutex::new(crate::ports::clock::truncate_to_micros(at)))
    }

    pub fn advance(&self, by: Duration) {
        let mut t = self.0.lock().unwrap_or_else(|e| e.into_inner());
        *t += by;
    }
}

impl Default for FixedClock {
    fn default() -> Self {
        Self::new(OffsetDateTime::from_unix_timestamp(1_790_000_000).unwrap_or(OffsetDateTime::UNIX_EPOCH))
    }
}

impl Clock for FixedClock {
    fn now(&self) -> OffsetDateTime {
        *self.0.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// UUID v7-shaped ids that increase by one each call, so order is deterministic.
#[derive(Debug, Default)]
pub struct SeqIds(AtomicU64);

impl IdGen for SeqIds {
    fn new_id(&self) -> Uuid {
        let n = self.0.fetch_add(1, Ordering::SeqCst) + 1;
        uuid::Builder::from_unix_timestamp_millis(1_790_000_000_000 + n, &[0; 10]).into_uuid()
    }
}

/// A cache whose entries never expire by themselves; TTLs are recorded, not enforced.
#[derive(Debug, Default)]
pub struct FakeCache {
    values: Mutex<HashMap<String, Vec<u8>>>,
    counters: Mutex<HashMap<String, Counter>>,
    down: std::sync::atomic::AtomicBool,
}

impl FakeCache {
    /// Makes every call answer `Unavailable`, as a dead Redis would.
    pub fn set_down(&self, down: bool) {
        self.down.store(down, Ordering::SeqCst);
    }

    fn up(&self) -> Result<()> {
        if self.down.load(Ordering::SeqCst) { Err(DomainError::Unavailable("cache".into())) } else { Ok(()) }
    }
}

#[async_trait]
impl Cache for FakeCache {
    async fn get(&self, key: &str) -> Result<Option<Vec<u8>>> {
        self.up()?;
        Ok(self.values.lock().unwrap_or_else(|e| e.into_inner()).get(key).cloned())
    }
    async fn set(&self, key: &str, value: &[u8], _ttl: Duration) -> Result<()> {
        self.up()?;
        self.values.lock().unwrap_or_else(|e| e.into_inner()).insert(key.to_owned(), value.to_vec());
        Ok(())
    }
    async fn delete(&self, key: &str) -> Result<()> {
        self.up()?;
        self.values.lock().unwrap_or_else(|e| e.into_inner()).remove(key);
        self.counters.lock().unwrap_or_else(|e| e.into_inner()).remove(key);
        Ok(())
    }
    async fn incr(&self, key: &str, window: Duration) -> Result<Counter> {
        self.up()?;
        let mut counters = self.counters.lock().unwrap_or_else(|e| e.into_inner());
        let c = counters.entry(key.to_owned()).or_insert(Counter { count: 0, ttl: window });
        c.count += 1;
        Ok(*c)
    }
    async fn get_counter(&self, key: &str) -> Result<Option<Counter>> {
        self.up()?;
        Ok(self.counters.lock().unwrap_or_else(|e| e.into_inner()).get(key).copied())
    }
    async fn revoke_token(&self, jti: &str, ttl: Duration) -> Result<()> {
        self.set(&format!("revoked:{jti}"), b"1", ttl).await
    }
    async fn is_token_revoked(&self, jti: &str) -> Result<bool> {
        Ok(self.get(&format!("revoked:{jti}")).await?.is_some())
    }
    async fn ping(&self) -> Result<()> {
        self.up()
    }
    fn backend(&self) -> &'static str {
        "fake"
    }
}

/// A bus that records what was published; subscriptions see nothing.
#[derive(Debug, Default)]
pub struct FakeBus {
    pub published: Mutex<Vec<Event>>,
}

#[async_trait]
impl EventBus for FakeBus {
    async fn publish(&self, event: &Event) -> Result<()> {
        self.published.lock().unwrap_or_else(|e| e.into_inner()).push(event.clone());
        Ok(())
    }
    async fn subscribe(&self) -> Result<EventStream> {
        Ok(Box::pin(futures::stream::empty()))
    }
    fn backend(&self) -> &'static str {
        "fake"
    }
}

#[derive(Debug, Default)]
pub struct FakePolicyEngine;

impl PolicyEngine for FakePolicyEngine {
    fn self_test(&self) -> Result<()> {
        Ok(())
    }
    fn name(&self) -> &'static str {
        "fake"
    }
}
