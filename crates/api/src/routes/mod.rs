//! Handlers, one module per area of the spec. Each parses, authenticates through an
//! extractor, calls one domain service and renders.

pub mod agents;
pub mod anomalies;
pub mod api_keys;
pub mod audit;
pub mod auth;
pub mod authzen;
pub mod discovery;
pub mod guard;
pub mod health;
pub mod hitl;
pub mod litellm;
pub mod policies;
pub mod sessions;
pub mod siem;
pub mod tenants;
pub mod users;
pub mod webhook;
