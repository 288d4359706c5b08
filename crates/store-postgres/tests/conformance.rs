//! The shared repository conformance suite, run against PostgreSQL (one schema per test).
//! Without `AGENTGOV_TEST_DATABASE_URL` the tests skip, except in CI, where they fail.

mod common;

use std::sync::Arc;

use agentgov_store_conformance::TestStore;

/// A migrated store in a fresh schema (dropped with the guard), or `None` without a URL.
async fn pg_store_or_skip() -> Option<TestStore> {
    let (store, guard) = common::migrated_store(4).await?;
    Some(TestStore { store: Arc::new(store), guard: Box::new(guard) })
}

agentgov_store_conformance::store_conformance_tests!(pg_store_or_skip);
