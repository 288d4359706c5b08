//! The developer commands of `cargo xtask`, as a library so that the load and chaos lab
//! (`agentgov-lab`) shares their helpers: running commands (`cmd`), parsing options
//! (`args`), the server under test (`server`: built, started on loopback in either mode,
//! cleaned up) and a small blocking HTTP client (`http`).

pub mod agentdojo;
pub mod anomaly_eval;
pub mod args;
pub mod ci;
pub mod cmd;
pub mod console;
pub mod cycles;
pub mod deny;
pub mod discovery_eval;
pub mod fuzz;
pub mod fuzz_api;
pub mod guard_data;
pub mod guard_eval;
pub mod guard_models;
pub mod guard_train;
pub mod http;
pub mod openapi;
pub mod sdk;
pub mod server;
