//! The agent sessions' marks in the shared cache (Redis), so that a replica learns whether
//! another one wrote to a session it keeps without reading the store before every check
//! (docs/policies.md "Sessions", [`SessionWriters::Announced`]).
//!
//! Under one key per session, each replica keeps two members:
//!
//! - `w:<replica>`, the highest `seq` of the session's records it committed, raised after
//!   each commit and before the record's writer is answered ([`SessionMarks::written`]);
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

use std::sync::Arc;
use std::time::Duration;

use crate::ids::TenantId;
use crate::ports::{Cache, Maxima, Raise};

/// Longest a kept state is trusted on the marks alone before the store is read again.
pub const VERIFY_AFTER: Duration = Duration::from_secs(10);

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
        Self { cache, written: format!("w:{replica}").into(), reading: format!("v:{replica}").into(), ttl }
    }

    fn key(tenant: TenantId, session: &str) -> String {
        format!("session-marks:{tenant}:{session}")
    }

    async fn raise(&self, tenant: TenantId, session: &str, member: &str, value: i64) -> bool {
        let raise = Raise { key: Self::key(tenant, session), member: member.to_owned(), value };
        match self.cache.raise(std::slice::from_ref(&raise), self.ttl).await {
            Ok(()) => true,
            Err(e) => {
                tracing::warn!(error = %e, %tenant, "could not mark a session's record in the cache; other replicas see it within {VERIFY_AFTER:?}");
                false
            }
        }
    }

    /// After this process committed the session's record `seq`, before its writer is
    /// answered.
    pub async fn written(&self, tenant: TenantId, session: &str, seq: i64) {
        self.raise(tenant, session, &self.written, seq).await;
    }

    /// Before this process reads the session from the store. False when the cache could not
    /// be written (the state read cannot be trusted on the marks then).
    pub async fn reading(&self, tenant: TenantId, session: &str) -> bool {
        self.raise(tenant, session, &self.reading, 0).await
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
