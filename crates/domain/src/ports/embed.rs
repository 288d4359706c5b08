//! Embedder port: turns text into unit vectors for semantic search. The built-in
//! implementation is `agentgov_detect::embed::HashingEmbedder` (no download, no network);
//! an adapter for an OpenAI-compatible `/v1/embeddings` service is chosen by configuration.

use async_trait::async_trait;

use crate::error::Result;

/// Which model made a vector: vectors of different models are never compared.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct EmbeddingModel {
    pub name: String,
    pub version: i32,
    pub dimensions: usize,
}

#[async_trait]
pub trait Embedder: Send + Sync {
    fn model(&self) -> &EmbeddingModel;
    /// One unit-length vector of `model().dimensions` per text, in order. `Unavailable`
    /// when a remote model cannot be reached.
    async fn embed(&self, texts: &[String]) -> Result<Vec<Vec<f32>>>;

    /// Whether `embed` computes in this process for milliseconds of CPU per text (a neural
    /// encoder): callers then run it on the shared CPU pool, fairly per tenant, never on a
    /// request thread. It must then complete without waiting on anything.
    fn costly(&self) -> bool {
        false
    }
}
