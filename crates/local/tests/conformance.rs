//! The shared cache and event-bus conformance suites, run against the in-process adapters.

use std::sync::Arc;

use agentgov_domain::ports::{Cache, EventBus};
use agentgov_local::{MemoryBus, MemoryCache};

async fn new_cache() -> Option<Arc<dyn Cache>> {
    Some(Arc::new(MemoryCache::new()))
}

async fn new_bus() -> Option<Arc<dyn EventBus>> {
    Some(Arc::new(MemoryBus::new(64)))
}

/// In one process, replicas are clones sharing the channel.
async fn new_replicas() -> Option<(Arc<dyn EventBus>, Arc<dyn EventBus>)> {
    let bus = MemoryBus::new(64);
    Some((Arc::new(bus.clone()), Arc::new(bus)))
}

mod cache {
    agentgov_store_conformance::cache_conformance_tests!(super::new_cache);
}

mod bus {
    agentgov_store_conformance::bus_conformance_tests!(super::new_bus, super::new_replicas);
}
