//! Values loaded from the store and kept in process for a short while, which a change must
//! never leave stale: the tenant's compiled policies, the agents that policy checks load.
//!
//! A change removes the entry (`invalidate`), here or, through the bus, on every replica.
//! A value is only kept if no invalidation happened while it was being loaded: the loader
//! reads the cache's generation *before* it reads the store, and `insert` refuses the value
//! if the generation moved since (both under one lock with `invalidate`). So a load that
//! raced a change is used once, by the request that made it, and never served again.
//! Entries also expire after a TTL, which bounds staleness should a bus message be lost.

use std::hash::Hash;
use std::sync::{Arc, Mutex};
use std::time::Duration;

#[derive(Clone)]
pub(crate) struct Snapshots<K, V> {
    entries: moka::sync::Cache<K, V>,
    generation: Arc<Mutex<u64>>,
}

impl<K, V> Snapshots<K, V>
where
    K: Hash + Eq + Send + Sync + 'static,
    V: Clone + Send + Sync + 'static,
{
    pub(crate) fn new(ttl: Duration, capacity: u64) -> Self {
        Self {
            entries: moka::sync::Cache::builder().max_capacity(capacity).time_to_live(ttl).build(),
            generation: Arc::default(),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, u64> {
        self.generation.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Read before loading what is to be inserted.
    pub(crate) fn generation(&self) -> u64 {
        *self.lock()
    }

    pub(crate) fn get(&self, key: &K) -> Option<V> {
        self.entries.get(key)
    }

    /// Keeps `value` unless something was invalidated since `generation` was read.
    pub(crate) fn insert(&self, key: K, value: V, generation: u64) {
        let current = self.lock();
        if *current == generation {
            self.entries.insert(key, value);
        }
    }

    pub(crate) fn invalidate(&self, key: &K) {
        let mut current = self.lock();
        *current += 1;
        self.entries.invalidate(key);
    }

    /// After announcements may have been missed (a bus reconnect).
    pub(crate) fn invalidate_all(&self) {
        let mut current = self.lock();
        *current += 1;
        self.entries.invalidate_all();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_value_loaded_across_an_invalidation_is_not_kept() {
        let cache: Snapshots<u32, &str> = Snapshots::new(Duration::from_secs(60), 10);
        let before = cache.generation();
        cache.invalidate(&1);
        cache.insert(1, "stale", before);
        assert_eq!(cache.get(&1), None);
        let now = cache.generation();
        cache.insert(1, "fresh", now);
        assert_eq!(cache.get(&1), Some("fresh"));
        cache.invalidate(&1);
        assert_eq!(cache.get(&1), None);
        cache.insert(2, "two", cache.generation());
        cache.invalidate_all();
        assert_eq!(cache.get(&2), None);
    }
}
