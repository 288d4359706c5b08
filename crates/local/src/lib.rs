//! agentgov's in-process cache and event bus: the embedded defaults, for a single replica.
//! Shared deployments use `agentgov-cache-redis` instead.

mod bus;
mod cache;

pub use bus::MemoryBus;
pub use cache::MemoryCache;
