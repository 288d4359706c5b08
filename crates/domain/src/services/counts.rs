//! Counters gathered in process and added to the store every few seconds (the guard's
//! screenings, the checks' decisions), and the hourly series read back from them.

use std::collections::HashMap;
use std::hash::Hash;
use std::sync::{Mutex, MutexGuard};

use time::OffsetDateTime;

use crate::error::Result;

/// Counts not yet in the store. A failed flush keeps them for the next.
#[derive(Debug)]
pub(crate) struct PendingCounts<K> {
    pending: Mutex<HashMap<K, i64>>,
}

impl<K> Default for PendingCounts<K> {
    fn default() -> Self {
        Self { pending: Mutex::new(HashMap::new()) }
    }
}

impl<K: Hash + Eq + Clone> PendingCounts<K> {
    fn lock(&self) -> MutexGuard<'_, HashMap<K, i64>> {
        self.pending.lock().unwrap_or_else(|e| e.into_inner())
    }

    pub(crate) fn add(&self, key: K) {
        *self.lock().entry(key).or_insert(0) += 1;
    }

    /// Hands what was counted since the last flush to `write` (the store's upsert); if it
    /// fails, the counts go back to be flushed next time.
    pub(crate) async fn flush(&self, write: impl AsyncFnOnce(&[(K, i64)]) -> Result<()>) -> Result<()> {
        let counts: Vec<(K, i64)> = self.lock().drain().collect();
        if counts.is_empty() {
            return Ok(());
        }
        if let Err(e) = write(&counts).await {
            let mut pending = self.lock();
            for (key, n) in counts {
                *pending.entry(key).or_insert(0) += n;
            }
            return Err(e);
        }
        Ok(())
    }

    /// The unflushed counts whose key `wanted` accepts (to add to what the store answers).
    pub(crate) fn matching(&self, wanted: impl Fn(&K) -> bool) -> Vec<(K, i64)> {
        self.lock().iter().filter(|(k, _)| wanted(k)).map(|(k, n)| (k.clone(), *n)).collect()
    }
}

/// The hour (unix time / 3600) that holds `at`.
pub(crate) fn hour_of(at: OffsetDateTime) -> i64 {
    at.unix_timestamp().div_euclid(3600)
}

/// The first instant of hour `hour`.
pub(crate) fn hour_start(hour: i64) -> OffsetDateTime {
    OffsetDateTime::from_unix_timestamp(hour * 3600).unwrap_or(OffsetDateTime::UNIX_EPOCH)
}
