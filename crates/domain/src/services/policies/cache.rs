//! Compiled policies per tenant, shared by every check of this process.
//!
//! A change to a tenant's policies (here, or on another replica through the bus) bumps the
//! tenant's *generation* and drops its entry. An entry remembers the generation it was
//! compiled at, read *before* the policies were loaded, so a compilation that raced with a
//! change is never served after it: its generation is already old. Entries also expire
//! after a TTL, which bounds staleness should a bus message be lost.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use super::TenantPolicies;
use crate::ids::TenantId;

/// A tenant's generation: the cache's epoch (bumped when every tenant is forgotten) and
/// the tenant's own count of changes.
pub(super) type Generation = (u64, u64);

#[derive(Clone)]
pub(super) struct PolicyCache {
    entries: moka::sync::Cache<TenantId, (Generation, Arc<TenantPolicies>)>,
    generations: Arc<Mutex<(u64, HashMap<TenantId, u64>)>>,
}

impl PolicyCache {
    pub(super) fn new(ttl: Duration) -> Self {
        Self {
            entries: moka::sync::Cache::builder().max_capacity(10_000).time_to_live(ttl).build(),
            generations: Arc::default(),
        }
    }

    /// The tenant's current generation; read it before loading what is to be cached.
    pub(super) fn generation(&self, tenant: TenantId) -> Generation {
        let g = self.generations.lock().unwrap_or_else(|e| e.into_inner());
        (g.0, g.1.get(&tenant).copied().unwrap_or(0))
    }

    /// The entry compiled at `generation`, if there is one.
    pub(super) fn get(&self, tenant: TenantId, generation: Generation) -> Option<Arc<TenantPolicies>> {
        self.entries.get(&tenant).filter(|(g, _)| *g == generation).map(|(_, set)| set)
    }

    pub(super) fn insert(&self, tenant: TenantId, generation: Generation, set: Arc<TenantPolicies>) {
        if self.generation(tenant) == generation {
            self.entries.insert(tenant, (generation, set));
        }
    }

    /// Forgets the tenant's compiled policies: the next check loads and compiles anew.
    pub(super) fn invalidate(&self, tenant: TenantId) {
        *self.generations.lock().unwrap_or_else(|e| e.into_inner()).1.entry(tenant).or_default() += 1;
        self.entries.invalidate(&tenant);
    }

    /// Forgets every tenant's compiled policies (after announcements may have been missed).
    pub(super) fn invalidate_all(&self) {
        let mut g = self.generations.lock().unwrap_or_else(|e| e.into_inner());
        g.0 += 1;
        g.1.clear();
        self.entries.invalidate_all();
    }
}
