//! Test support (feature `testing`): a fresh, empty schema per test, dropped afterwards.
#![expect(clippy::expect_used, reason = "test code: a failed expect is a failed test")]

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
                // The test's own connections may still be open, even inside a transaction
                // holding locks, when a test panicked midway: its runtime is blocked in this
                // very drop, so they never finish, and DROP SCHEMA would wait for them forever.
                // They carry the schema's name as their application name; end them first.
                conn.batch_execute(&format!(
                    "SELECT pg_terminate_backend(pid) FROM pg_stat_activity \
                     WHERE application_name = '{schema}' AND pid <> pg_backend_pid()"
                ))
                .await?;
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

/// `url` with `search_path` set to `schema` through the startup `options` parameter, and
/// the schema's name as `application_name`, so that [`SchemaGuard`] can find its
/// connections. Lock waits are bounded (`lock_timeout`): a test that would wait forever on a
/// lock fails with an error instead.
pub fn url_with_schema(url: &str, schema: &str) -> String {
    let sep = if url.contains('?') { '&' } else { '?' };
    format!(
        "{url}{sep}application_name={schema}&options=-c%20search_path%3D{schema}%20-c%20lock_timeout%3D{TEST_LOCK_TIMEOUT_MS}"
    )
}

/// The longest a test's statement waits for a lock.
const TEST_LOCK_TIMEOUT_MS: u32 = 30_000;

/// Creates an empty schema in the database at `base_url`; returns a URL whose connections
/// use it, and the guard that drops it. Panics if the database cannot be reached (tests only).
pub async fn fresh_schema(base_url: &str) -> (String, SchemaGuard) {
    let schema = format!("agentgov_t_{}", uuid::Uuid::now_v7().simple());
    let mut admin = AsyncPgConnection::establish(base_url).await.expect("connect to the test database");
    admin.batch_execute(&format!("CREATE SCHEMA {schema}")).await.expect("create the test schema");
    let url = url_with_schema(base_url, &schema);
    (url, SchemaGuard { base_url: base_url.to_owned(), schema })
}
