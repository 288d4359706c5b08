//! A fresh schema per test: created, migrated, and dropped again when the guard goes.
#![allow(dead_code, reason = "each test binary that includes this module uses a part of it")]
#![expect(clippy::expect_used, reason = "test code: a failed expect is a failed test")]

use agentgov_store_postgres::PgStore;
pub use agentgov_store_postgres::testing::SchemaGuard;

pub const URL_VAR: &str = "AGENTGOV_TEST_DATABASE_URL";

/// Creates an empty schema and returns a guard for it, or `None` (skip) without a URL.
pub async fn fresh_schema() -> Option<(String, SchemaGuard)> {
    let base_url = agentgov_store_conformance::service_url(URL_VAR)?;
    Some(agentgov_store_postgres::testing::fresh_schema(&base_url).await)
}

/// A migrated store in a fresh schema, or `None` (skip) without a URL.
pub async fn migrated_store(max_connections: usize) -> Option<(PgStore, SchemaGuard)> {
    let (url, guard) = fresh_schema().await?;
    let store = PgStore::connect(&url, max_connections).await.expect("connect");
    store.run_migrations().await.expect("migrate");
    Some((store, guard))
}
