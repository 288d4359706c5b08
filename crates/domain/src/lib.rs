//! agentgov's domain: the records, the use-case services and the ports they need.
//!
//! Invariant: this crate knows nothing of actix, diesel, redis, regorus or tokio. Adapters
//! depend on it, never the reverse (checked by `cargo xtask ci`).

pub mod error;
pub mod events;
pub mod ids;
pub mod model;
pub mod net;
pub mod page;
pub mod ports;
pub mod secrets;
pub mod services;

#[cfg(any(test, feature = "testing"))]
pub mod testing;

pub use error::{DomainError, FieldError, Result};
