//! Pure computation for agentgov: no IO, no async. The built-in text embedder (`embed`), the
//! agent-type classifier (`classify`) and the explainable risk model (`risk`); the Prompt Guard's
//! detector (`guard`) and shadow-agent clustering (`discovery`); anomaly models follow.

pub mod anomaly;
pub mod classify;
pub mod discovery;
pub mod embed;
pub mod guard;
pub mod risk;
mod text;
