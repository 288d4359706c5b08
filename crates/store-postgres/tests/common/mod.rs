//! A fresh schema per test: created, migrated, and dropped again when the guard goes.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use agentgov_store_postgres::PgStore;
use diesel_async::{AsyncConnection, AsyncPgConnection, SimpleAsyncConnection};

pub const URL_VAR: &str = "AGENTGOV_TEST_DATABASE_URL";

/// Drops its schema on drop (best effort), from a thread of its own because `Drop` cannot
/// await and may run inside a current-thread runtime.
pub struct SchemaGuard {
    base_url: String,
    pub schema: String,
}

impl Drop for SchemaGuard {
    fn drop(&mut self) {
        let (url, schema) = (self.base_url.clone(), self.schema.clone());
        let dropped = std::thread::spawn(move || {
            let rt = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
            rt.block_on(async {
                let mut conn = AsyncPgConnection::establish(&url).await?;
                conn.batch_execute(&format!("DROP SCHEMA IF EXISTS {schema} CASCADE")).await?;
                Ok::<_, Box<dyn std::error::Error + Send + Sync>>(())
            })
        })
        .join();
        if !matches!(dropped, Ok(Ok(()))) {
            eprintln!("could not drop test schema {}", self.schema);
        }
    }
}

/// `url` with `search_path` set to `schema` through the startup `options` parameter.
pub fn url_with_schema(url: &str, schema: &str) -> String {
    let sep = if url.contains('?') { '&' } else { '?' };
    format!("{url}{sep}options=-c%20search_path%3D{schema}")
}

/// Creates an empty schema and returns a guard for it, or `None` (skip) without a URL.
pub async fn fresh_schema() -> Option<(String, SchemaGuard)> {
    let base_url = agentgov_store_conformance::service_url(URL_VAR)?;
    let schema = format!("agentgov_t_{}", uuid::Uuid::now_v7().simple());
    let mut admin = AsyncPgConnection::establish(&base_url).await.expect("connect to the test database");
    admin.batch_execute(&format!("CREATE SCHEMA {schema}")).await.expect("create the test schema");
    let url = url_with_schema(&base_url, &schema);
    Some((url, SchemaGuard { base_url, schema }))
}

/// A migrated store in a fresh schema, or `None` (skip) without a URL.
pub async fn migrated_store(max_connections: usize) -> Option<(PgStore, SchemaGuard)> {
    let (url, guard) = fresh_schema().await?;
    let store = PgStore::connect(&url, max_connections).await.expect("connect");
    store.run_migrations().await.expect("migrate");
    Some((store, guard))
}
