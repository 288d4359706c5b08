//! The repositories of the `Store` port on SQLite, one file per port trait as in
//! store-postgres (the job queue and model registry in `jobs.rs`, the lease repository in
//! `siem.rs`).
//! Reads run on a reader; every write runs on the writer in a `BEGIN IMMEDIATE`
//! transaction, with its checks (last admin, revoked or not) inside it.

mod accounts;
mod agents;
mod anomaly;
mod api_keys;
mod audit;
mod discovery;
mod guard;
mod hitl;
pub(crate) mod jobs;
mod policies;
mod sessions;
mod siem;
mod tenants;
mod users;

pub(crate) use agents::relevel;
pub(crate) use audit::ceil_micros;
pub(crate) use guard::check_tenant;
