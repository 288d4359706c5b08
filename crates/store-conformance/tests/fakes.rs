//! The cache and event-bus conformance suites against the domain's fakes, which the
//! domain's unit tests stand on: they must keep the ports' promises like every adapter.

use std::sync::Arc;

use agentgov_domain::ports::{Cache, EventBus};
use agentgov_domain::testing::{FakeBus, FakeCache};

async fn new_cache() -> Option<Arc<dyn Cache>> {
    Some(Arc::new(FakeCache::default()))
}

async fn new_bus() -> Option<Arc<dyn EventBus>> {
    Some(Arc::new(FakeBus::default()))
}

/// Two replicas: clones sharing one bus.
async fn new_replicas() -> Option<(Arc<dyn EventBus>, Arc<dyn EventBus>)> {
    let bus = FakeBus::default();
    Some((Arc::new(bus.clone()), Arc::new(bus)))
}

mod cache {
    agentgov_store_conformance::cache_conformance_tests!(super::new_cache);
}

mod bus {
    agentgov_store_conformance::bus_conformance_tests!(super::new_bus, super::new_replicas);
}
