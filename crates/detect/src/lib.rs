//! Pure computation for agentgov: no IO, no async. So far the built-in text embedder
//! (`embed`); classifiers, anomaly models and clustering follow.

pub mod embed;
