//! Pure computation for agentgov: no IO, no async. The built-in text embedder (`embed`), the
//! agent-type classifier (`classify`) and the explainable risk model (`risk`); anomaly models
//! and clustering follow.

pub mod classify;
pub mod embed;
pub mod guard;
pub mod risk;
mod text;
