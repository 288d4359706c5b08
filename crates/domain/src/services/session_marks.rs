//! The agent sessions' marks in the shared cache (Redis), so that a replica learns whether
//! another one wrote to a session it keeps without reading the store before every check
//! (docs/policies.md "Sessions", [`SessionWriters::Announced`]).
//!
//! Under one key per session, each replica keeps two members:
//!
//! - `w:<replica>`, the highest `seq` of the session's records it committed, raised after
//!   each commit and before the record's writer is answered ([`SessionMarks::written`];
//!   the raises of records committed together go to the cache in one round trip);
//! - `v:<replica>`, raised before it reads the session from the store ([`SessionMarks::
//!   reading`]): while it is there, the key has not been lost since (a restarted Redis,
//!   an eviction, an expiry), so the other replicas' `w:` members are complete.
//!
//! A kept state read from the store through `seq` is then current, but for this process's
//! own records, when every other replica's `w:` member is at most `seq`: the chain's `seq`
//! grows in commit order within a tenant, so any record at or below `seq` was committed
//! before the record at `seq` and was in the read. A raise that failed (the cache
//! unreachable from one replica only) is covered by reading the store again at least every
//! [`VERIFY_AFTER`].
//!
//! [`SessionWriters::Announced`]: super::sessions::SessionWriters::Announced

use std::sync::{Arc, Mutex};
use std::time::Duration;

use crate::ids::TenantId;
use crate::ports::{Cache, Maxima, Raise};

/// Longest a kept state is trusted on the marks alone before the store is read again.
pub const VERIFY_AFTER: Duration = Duration::from_secs(30);

/// A replica's marks of the sessions it writes and reads.
#[derive(Clone)]
pub(crate) struct SessionMarks {
    cache: Arc<dyn Cache>,
    /// `w:` and this process's random id.
    written: Arc<str>,
    /// `v:` and the same id.
    reading: Arc<str>,
    /// A key lives this long after its last raise (the sessions' idle time).
    ttl: Duration,
    /// `w:` raises waiting to be sent ([`SessionMarks::written`]).
    waiting: Arc<Mutex<Vec<Raise>>>,
    /// Held by the one writer sending the waiting raises.
    sending: Arc<futures::lock::Mutex<()>>,
}

/// Raises taken from the waiting ones and being sent: put back if the sender is dropped
/// before the cache answered (its request cancelled), for the next holder to send.
struct Sending<'a> {
    waiting: &'a Mutex<Vec<Raise>>,
    raises: Vec<Raise>,
}

impl Drop for Sending<'_> {
    fn drop(&mut self) {
        if !self.raises.is_empty() {
            let mut waiting = self.waiting.lock().unwrap_or_else(|e| e.into_inner());
            waiting.append(&mut self.raises);
        }
    }
}

/// What the marks say of a session against a kept state.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Marked {
    /// No other replica wrote a record past the state's `seq`.
    Current,
    /// Another replica did; this process's `v:` member is there.
    Behind,
    /// Nothing can be told: the cache could not be read, or this process's `v:` member is
    /// gone (the key was lost or expired), or too many replicas wrote the session.
    Unknown,
}

impl SessionMarks {
    pub fn new(cache: Arc<dyn Cache>, replica: &str, ttl: Duration) -> Self {
        Self {
            cache,
            written: format!("w:{replica}").into(),
            reading: format!("v:{replica}").into(),
            ttl,
            waiting: Arc::default(),
            sending: Arc::default(),
        }
    }

    fn key(tenant: TenantId, session: &str) -> String {
        format!("session-marks:{tenant}:{session}")
    }

    async fn raise(&self, raises: &[Raise]) -> bool {
        match self.cache.raise(raises, self.ttl).await {
            Ok(()) => true,
            Err(e) => {
                tracing::warn!(error = %e, records = raises.len(), "could not mark sessions' records in the cache; other replicas see them within {VERIFY_AFTER:?}");
                false
            }
        }
    }

    /// After this process committed the session's record `seq`, before its writer is
    /// answered. Group commit: the raise waits with the others; whoever holds `sending`
    /// sends every waiting one in one round trip, so a writer that gets it after its own
    /// raise was sent returns at once.
    pub async fn written(&self, tenant: TenantId, session: &str, seq: i64) {
        let raise = Raise { key: Self::key(tenant, session), member: self.written.to_string(), value: seq };
        self.waiting.lock().unwrap_or_else(|e| e.into_inner()).push(raise);
        let _sending = self.sending.lock().await;
        let mut raises = std::mem::take(&mut *self.waiting.lock().unwrap_or_else(|e| e.into_inner()));
        if raises.is_empty() {
            return;
        }
        // Raises of one session's member waiting together: only the highest is sent.
        raises.sort_unstable_by(|a, b| (&a.key, &a.member, b.value).cmp(&(&b.key, &b.member, a.value)));
        raises.dedup_by(|later, first| later.key == first.key && later.member == first.member);
        let mut batch = Sending { waiting: &self.waiting, raises };
        self.raise(&batch.raises).await;
        batch.raises.clear();
    }

    /// Before this process reads the session from the store. False when the cache could not
    /// be written (the state read cannot be trusted on the marks then).
    pub async fn reading(&self, tenant: TenantId, session: &str) -> bool {
        let raise = Raise { key: Self::key(tenant, session), member: self.reading.to_string(), value: 0 };
        self.raise(std::slice::from_ref(&raise)).await
    }

    /// Whether another replica wrote a record of the session past `seq`.
    pub async fn past(&self, tenant: TenantId, session: &str, seq: i64) -> Marked {
        let members = match self.cache.maxima(&Self::key(tenant, session)).await {
            Ok(Maxima::Members(members)) => members,
            Ok(Maxima::TooMany) => return Marked::Unknown,
            Err(e) => {
                tracing::debug!(error = %e, "session marks unavailable; reading the session from the store");
                return Marked::Unknown;
            }
        };
        if !members.iter().any(|(m, _)| **m == *self.reading) {
            return Marked::Unknown;
        }
        let other_past = |(m, v): &(String, i64)| m.starts_with("w:") && **m != *self.written && *v > seq;
        if members.iter().any(other_past) { Marked::Behind } else { Marked::Current }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::FakeCache;

    /// Writers that commit together share round trips, and each returns only once its own
    /// raise reached the cache.
    #[tokio::test]
    async fn every_writer_returns_with_its_mark_in_the_cache() {
        let cache = Arc::new(FakeCache::default());
        let marks = SessionMarks::new(cache.clone(), "r1", Duration::from_secs(60));
        let tenant = TenantId(uuid::Uuid::now_v7());
        let written = (0..40).map(|i| {
            let (marks, cache) = (marks.clone(), cache.clone());
            async move {
                let session = format!("s{}", i % 8);
                marks.written(tenant, &session, i).await;
                // Returned: its raise is in the cache (with the same session's later ones).
                let Ok(Maxima::Members(members)) = cache.maxima(&SessionMarks::key(tenant, &session)).await else {
                    panic!("no marks")
                };
                assert!(members.iter().any(|(m, v)| m == "w:r1" && *v >= i), "{members:?}");
            }
        });
        futures::future::join_all(written).await;
        assert!(marks.waiting.lock().unwrap().is_empty());
        for s in 0..8 {
            let Ok(Maxima::Members(members)) = cache.maxima(&SessionMarks::key(tenant, &format!("s{s}"))).await else {
                panic!("no marks")
            };
            assert_eq!(members, [("w:r1".to_owned(), 32 + s)]);
        }
        assert_eq!(marks.past(tenant, "s1", 100).await, Marked::Unknown, "no read marked yet");
        assert!(marks.reading(tenant, "s1").await);
        assert_eq!(marks.past(tenant, "s1", 100).await, Marked::Current, "only its own records");
        let other = SessionMarks::new(cache.clone(), "r2", Duration::from_secs(60));
        other.written(tenant, "s1", 101).await;
        assert_eq!(marks.past(tenant, "s1", 100).await, Marked::Behind);
        assert_eq!(marks.past(tenant, "s1", 101).await, Marked::Current);
    }
}
