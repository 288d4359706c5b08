//! The conformance suites, written once against agentgov's ports and run by every adapter:
//! `store` for repositories (SQLite, Postgres, the in-memory fake), `cache` for the cache
//! and event bus (in-process, Redis).
//!
//! Adapters expand the macros in their own tests, one `#[tokio::test]` per behaviour:
//! `store_conformance_tests!(factory)` where `factory` is an `async fn() -> Option<TestStore>`;
//! `cache_conformance_tests!(factory)` with an `async fn() -> Option<Arc<dyn Cache>>`;
//! `bus_conformance_tests!(factory, replicas)` with an `async fn() -> Option<Arc<dyn EventBus>>`
//! and an `async fn()` giving two buses that share a namespace (two replicas).
//! A factory answers `None` when its backend is not configured here (see [`service_url`]).

use std::any::Any;
use std::sync::Arc;

use agentgov_domain::ports::Store;

pub mod agents;
pub mod anomaly;
pub mod audit;
pub mod cache;
pub mod discovery;
pub mod fixtures;
pub mod guard;
pub mod hitl;
pub mod jobs;
pub mod policies;
pub mod siem;
pub mod store;
pub mod upgrade;

/// How long one conformance behaviour may run before it fails as stuck (each takes well
/// under a second when healthy).
pub const TEST_DEADLINE: std::time::Duration = std::time::Duration::from_secs(120);

/// A store under test, with whatever must live as long as it (temp dir, schema guard).
pub struct TestStore {
    pub store: Arc<dyn Store>,
    pub guard: Box<dyn Any + Send + Sync>,
}

impl TestStore {
    pub fn new(store: Arc<dyn Store>) -> Self {
        Self { store, guard: Box::new(()) }
    }
}

/// Whether `CI` is set (to anything but empty, `false` or `0`): then a suite whose service
/// or tool is missing fails rather than skips.
pub fn in_ci() -> bool {
    std::env::var_os("CI").is_some_and(|v| !v.is_empty() && v != "false" && v != "0")
}

/// The URL of an external service for tests, read from `var`.
///
/// Unset: `None` with a printed reason, so a developer without Postgres or Redis still gets a
/// green run. Unset while `CI` is set: panics, because CI must never skip these suites.
pub fn service_url(var: &str) -> Option<String> {
    match std::env::var(var) {
        Ok(url) if !url.trim().is_empty() => Some(url),
        _ if in_ci() => {
            panic!("{var} is not set, but CI is: the suites that need this service must run in CI")
        }
        _ => {
            eprintln!("skipped: set {var} to run the tests that need this service");
            None
        }
    }
}
