//! A tenant's share of what stays open for a while (WebSocket sockets, HITL long-polls),
//! counted over every replica.
//!
//! Each open thing holds one *place* under `share:<kind>:<tenant>` in the shared Cache
//! ([`Cache::hold_place`]): a tenant at its cap is refused with 429 on whichever replica it
//! knocks. A place is given back when the thing closes, and otherwise expires with its TTL,
//! so a replica that crashes leaves nothing held for long; a holder that stays open longer
//! than the TTL renews its place.

use std::sync::Arc;
use std::time::Duration;

use crate::error::{DomainError, Result};
use crate::ids::TenantId;
use crate::ports::{Cache, IdGen};

/// What is counted, and what a refusal says.
#[derive(Debug, Clone, Copy)]
pub struct Share {
    /// The counter's name in the cache key (`ws`, `long-poll`).
    pub kind: &'static str,
    /// What the refusal calls them ("WebSocket connections").
    pub what: &'static str,
    /// The setting that changes the cap, named in the refusal.
    pub setting: &'static str,
    /// Places per tenant over every replica.
    pub cap: u64,
}

/// A place held by one open socket or long-poll.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Place {
    key: String,
    holder: String,
}

/// Takes, renews and gives back places. Cheap to clone.
#[derive(Clone)]
pub struct TenantShares {
    cache: Arc<dyn Cache>,
    ids: Arc<dyn IdGen>,
}

impl TenantShares {
    pub fn new(cache: Arc<dyn Cache>, ids: Arc<dyn IdGen>) -> Self {
        Self { cache, ids }
    }

    /// A place of `tenant` in `share` for `ttl`; 429 naming the cap and its setting when the
    /// tenant holds `share.cap` already.
    pub async fn take(&self, share: &Share, tenant: TenantId, ttl: Duration) -> Result<Place> {
        let place = Place { key: format!("share:{}:{tenant}", share.kind), holder: self.ids.new_id().to_string() };
        if self.cache.hold_place(&place.key, &place.holder, share.cap, ttl).await? {
            return Ok(place);
        }
        Err(DomainError::quota(
            format!(
                "the tenant already has {} {} open over every server, its limit; close one first \
                 (the operator sets the limit: {})",
                share.cap, share.what, share.setting
            ),
            Duration::from_secs(5),
        ))
    }

    /// Extends a held place for another `ttl`; false when it had expired and the tenant's
    /// share has filled up since (the holder should close).
    pub async fn renew(&self, share: &Share, place: &Place, ttl: Duration) -> Result<bool> {
        self.cache.hold_place(&place.key, &place.holder, share.cap, ttl).await
    }

    /// Gives a place back; a failure is logged (the place expires with its TTL).
    pub async fn give_back(&self, place: &Place) {
        if let Err(e) = self.cache.release_place(&place.key, &place.holder).await {
            tracing::warn!(error = %e, key = %place.key, "could not give a tenant's place back; it expires on its own");
        }
    }
}
