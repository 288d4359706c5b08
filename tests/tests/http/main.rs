//! Black-box HTTP tests: one binary, a module per area of the spec.
#![expect(clippy::unwrap_used, clippy::expect_used, reason = "test code: a failed unwrap is a failed test")]

mod agents;
mod anomalies;
mod api_keys;
mod audit;
mod auth;
mod authzen;
mod console;
mod discovery;
mod distributed;
mod docs;
mod errors;
mod guard;
mod health;
mod hitl;
mod isolation;
mod litellm;
mod policies;
mod sessions;
mod siem;
mod sso;
mod tenants;
mod users;
mod webhook;
mod ws;
