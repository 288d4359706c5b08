//! agentgov's production store: PostgreSQL through diesel-async and a deadpool pool.
//!
//! [`PgStore`] implements every repository port of `agentgov_domain::ports::store`.
//! Isolation between tenants is by a `tenant_id` filter on every scoped query; a record of
//! another tenant is reported absent. Operations that write several rows run in one
//! transaction. The "last active admin" rule is checked under a lock on the tenant row, so
//! concurrent demotions are serialised. Audit appends lock each tenant's chain head row
//! (`audit_heads`), so replicas sharing the database extend a chain one at a time; a
//! trigger keeps `audit_records` append-only. Export workers claim jobs with
//! `FOR UPDATE SKIP LOCKED`, and Prompt Guard workers claim training tasks and discovery
//! workers clustering jobs the same way; a tenant's guard model versions are numbered and
//! switched under a lock on its row. Discovery events are ingested a batch per statement.

mod columns;
mod error;
mod migrate;
mod repo;
mod rows;
mod schema;
mod store;

pub use store::PgStore;

#[cfg(feature = "testing")]
pub mod testing;
