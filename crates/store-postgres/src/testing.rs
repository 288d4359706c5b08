//! Test support (feature `testing`): a fresh, empty schema per test, dropped afterwards.
#![allow(clippy::expect_used)]

use diesel_async::{AsyncConnection, AsyncPgConnection, SimpleAsyncConnection};

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

/// Creates an empty schema in the database at `base_url`; returns a URL whose connections
/// use it, and the guard that drops it. Panics if the database cannot be reached (tests only).
pub async fn fresh_schema(base_url: &str) -> (String, SchemaGuard) {
    let schema = format!("agentgov_t_{}", uuid::Uuid::now_v7().simple());
    let mut admin = AsyncPgConnection::establish(base_url).await.expect("connect to the test database");
    admin.batch_execute(&format!("CREATE SCHEMA {schema}")).await.expect("create the test schema");
    let url = url_with_schema(base_url, &schema);
    (url, SchemaGuard { base_url: base_url.to_owned(), schema })
}
