//! The `agentgov` binary's library: configuration, wiring of adapters, serving, and the
//! command-line commands. Black-box tests start servers through [`serve::start`].

pub mod cli;
pub mod config;
pub mod serve;
pub mod siem_config;
pub mod wiring;

pub use config::Config;
