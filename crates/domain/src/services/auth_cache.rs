//! What authentication reads from the store (an API key with its owner; a session with its
//! user), kept briefly in process so a busy agent does not cost two database reads per
//! request — without weakening "a change takes effect at once".
//!
//! Every entry is stamped with its tenant's *auth epoch*, a counter in the shared `Cache`
//! (Redis in production) that every change affecting authentication bumps after it commits:
//! a user updated, blocked, deleted or re-roled, a key revoked, a session ended. A request
//! reads the epoch first (one cache round trip) and uses an entry only if its stamp matches;
//! otherwise it reloads from the store. The epoch is read *before* the store, and bumped
//! *after* the change, so an entry loaded before a change can never carry the epoch that
//! follows it. When the cache cannot be read, the entries are not used at all. Entries also
//! expire after [`TTL`], which bounds staleness if a bump itself was lost (cache down at the
//! time of the change, then restarted empty).

use std::sync::Arc;
use std::time::Duration;

use crate::ids::{SessionId, TenantId};
use crate::model::{ApiKey, Session, TenantSecret, User};
use crate::ports::Cache;

/// Longest an entry is used without being read from the store again.
pub const TTL: Duration = Duration::from_secs(10);
const CAPACITY: u64 = 100_000;
/// The epoch counters outlive any entry by far, so an expired counter (read as "absent")
/// can never match an entry stamped before it expired.
const EPOCH_WINDOW: Duration = Duration::from_secs(7 * 24 * 3600);

/// An auth epoch as read from the cache: `None` when the counter is absent.
pub(super) type Epoch = Option<u64>;

#[derive(Clone)]
pub(super) struct Stamped<T> {
    pub epoch: Epoch,
    pub value: T,
}

#[derive(Clone)]
pub(super) struct AuthCache {
    cache: Arc<dyn Cache>,
    /// Key prefix → its tenant. Never changes, so it is kept without an epoch.
    key_tenants: moka::sync::Cache<String, TenantId>,
    keys: moka::sync::Cache<String, Stamped<(ApiKey, User)>>,
    sessions: moka::sync::Cache<SessionId, Stamped<(Session, User)>>,
    /// A tenant's own webhook secret (or that it has none).
    webhook_secrets: moka::sync::Cache<TenantId, Stamped<Option<TenantSecret>>>,
}

fn epoch_key(tenant: TenantId) -> String {
    format!("auth-epoch:{tenant}")
}

impl AuthCache {
    pub fn new(cache: Arc<dyn Cache>) -> Self {
        Self {
            cache,
            key_tenants: moka::sync::Cache::builder().max_capacity(CAPACITY).build(),
            keys: moka::sync::Cache::builder().max_capacity(CAPACITY).time_to_live(TTL).build(),
            sessions: moka::sync::Cache::builder().max_capacity(CAPACITY).time_to_live(TTL).build(),
            webhook_secrets: moka::sync::Cache::builder().max_capacity(CAPACITY).time_to_live(TTL).build(),
        }
    }

    /// The tenant's current epoch; `None` when the cache cannot be read (entries unusable).
    pub async fn epoch(&self, tenant: TenantId) -> Option<Epoch> {
        match self.cache.get_counter(&epoch_key(tenant)).await {
            Ok(counter) => Some(counter.map(|c| c.count)),
            Err(e) => {
                tracing::debug!(error = %e, "auth epoch unavailable; authenticating from the store");
                None
            }
        }
    }

    /// Invalidates every entry of the tenant, here and on every replica. Call after a change
    /// that affects authentication has committed.
    pub async fn bump(&self, tenant: TenantId) {
        if let Err(e) = self.cache.incr(&epoch_key(tenant), EPOCH_WINDOW).await {
            tracing::warn!(error = %e, %tenant, "could not bump the auth epoch; other replicas may use cached credentials for up to {TTL:?}");
            // This replica, at least, forgets at once.
            self.keys.invalidate_all();
            self.sessions.invalidate_all();
            self.webhook_secrets.invalidate_all();
        }
    }

    pub fn key_tenant(&self, prefix: &str) -> Option<TenantId> {
        self.key_tenants.get(prefix)
    }

    pub fn remember_key_tenant(&self, prefix: &str, tenant: TenantId) {
        self.key_tenants.insert(prefix.to_owned(), tenant);
    }

    pub fn key(&self, prefix: &str, epoch: Epoch) -> Option<(ApiKey, User)> {
        self.keys.get(prefix).filter(|s| s.epoch == epoch).map(|s| s.value)
    }

    pub fn put_key(&self, epoch: Epoch, key: ApiKey, user: User) {
        self.keys.insert(key.prefix.clone(), Stamped { epoch, value: (key, user) });
    }

    pub fn session(&self, id: SessionId, epoch: Epoch) -> Option<(Session, User)> {
        self.sessions.get(&id).filter(|s| s.epoch == epoch).map(|s| s.value)
    }

    pub fn put_session(&self, epoch: Epoch, session: Session, user: User) {
        self.sessions.insert(session.id, Stamped { epoch, value: (session, user) });
    }

    pub fn webhook_secret(&self, tenant: TenantId, epoch: Epoch) -> Option<Option<TenantSecret>> {
        self.webhook_secrets.get(&tenant).filter(|s| s.epoch == epoch).map(|s| s.value)
    }

    pub fn put_webhook_secret(&self, epoch: Epoch, tenant: TenantId, secret: Option<TenantSecret>) {
        self.webhook_secrets.insert(tenant, Stamped { epoch, value: secret });
    }
}
