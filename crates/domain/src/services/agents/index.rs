//! The in-process search index: each tenant's agent vectors in one flat matrix, searched
//! exhaustively (exact, not approximate). Rebuilt from the store when the tenant's index
//! version there differs from the one it was built at, so every replica sees every write.

use std::cmp::Ordering;
use std::collections::BinaryHeap;
use std::sync::Arc;

use agentgov_detect::embed::dot;

use crate::error::Result;
use crate::ids::{AgentId, TenantId};
use crate::ports::{EmbeddingModel, Store};

/// Bytes of vectors kept across all tenants before the least used are dropped.
const MAX_INDEX_BYTES: u64 = 512 * 1024 * 1024;

/// One tenant's vectors of the current model.
struct TenantIndex {
    version: i64,
    ids: Vec<AgentId>,
    /// `ids.len()` rows of `dimensions` values each.
    matrix: Vec<f32>,
}

impl TenantIndex {
    fn bytes(&self) -> u32 {
        u32::try_from(self.matrix.len() * 4 + self.ids.len() * 16).unwrap_or(u32::MAX)
    }
}

/// A scored candidate, ordered so that a max-heap keeps the *worst* on top.
#[derive(PartialEq)]
struct Hit(f32, usize);

impl Eq for Hit {}

impl PartialOrd for Hit {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Hit {
    fn cmp(&self, other: &Self) -> Ordering {
        // Lower score is "greater" (worse); ties broken by position for determinism.
        other.0.total_cmp(&self.0).then(self.1.cmp(&other.1))
    }
}

#[derive(Clone)]
pub struct AgentIndex {
    tenants: moka::sync::Cache<TenantId, Arc<TenantIndex>>,
    model: EmbeddingModel,
}

impl AgentIndex {
    pub fn new(model: EmbeddingModel) -> Self {
        let tenants = moka::sync::Cache::builder()
            .max_capacity(MAX_INDEX_BYTES)
            .weigher(|_: &TenantId, index: &Arc<TenantIndex>| index.bytes())
            .build();
        Self { tenants, model }
    }

    /// The `limit` agents whose vectors are nearest `query` (cosine: vectors are unit
    /// length), best first, skipping `exclude`.
    pub async fn nearest(
        &self,
        store: &dyn Store,
        tenant: TenantId,
        query: &[f32],
        limit: usize,
        exclude: Option<AgentId>,
    ) -> Result<Vec<(AgentId, f32)>> {
        let index = self.current(store, tenant).await?;
        let dims = self.model.dimensions;
        if query.len() != dims || limit == 0 {
            return Ok(Vec::new());
        }
        let mut heap = BinaryHeap::with_capacity(limit + 1);
        for (i, row) in index.matrix.chunks_exact(dims).enumerate() {
            if exclude == Some(index.ids[i]) {
                continue;
            }
            let hit = Hit(dot(query, row), i);
            if heap.len() < limit {
                heap.push(hit);
            } else if heap.peek().is_some_and(|worst| hit < *worst) {
                heap.pop();
                heap.push(hit);
            }
        }
        Ok(heap.into_sorted_vec().into_iter().map(|Hit(score, i)| (index.ids[i], score)).collect())
    }

    /// The tenant's index at the store's current version, rebuilt if stale.
    async fn current(&self, store: &dyn Store, tenant: TenantId) -> Result<Arc<TenantIndex>> {
        // The version is read before the vectors: if a write lands in between, the index
        // holds newer vectors than its version says and is rebuilt once more next time,
        // never the reverse.
        let version = store.agent_index_version(tenant).await?;
        if let Some(index) = self.tenants.get(&tenant).filter(|i| i.version == version) {
            return Ok(index);
        }
        let vectors = store.agent_vectors(tenant).await?;
        let dims = self.model.dimensions;
        let mut ids = Vec::with_capacity(vectors.len());
        let mut matrix = Vec::with_capacity(vectors.len() * dims);
        for v in vectors {
            // Vectors of another model (the embedder was reconfigured) are not comparable;
            // such an agent is found again once an update or heartbeat re-embeds it.
            if v.model == self.model.name && v.model_version == self.model.version && v.vector.len() == dims {
                ids.push(v.id);
                matrix.extend_from_slice(&v.vector);
            }
        }
        let index = Arc::new(TenantIndex { version, ids, matrix });
        self.tenants.insert(tenant, index.clone());
        Ok(index)
    }
}
