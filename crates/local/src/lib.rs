//! agentgov's in-process cache and event bus: the embedded defaults, for a single replica.
//! Shared deployments use `agentgov-cache-redis` instead. Also the pool that runs CPU-heavy
//! work off the request threads, in every mode (`offload.rs`).

mod bus;
mod cache;
mod offload;

pub use bus::MemoryBus;
pub use cache::MemoryCache;
pub use offload::TenantPool;
