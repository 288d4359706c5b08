//! The repository conformance suite against the in-memory fake, which must pass it like
//! every real adapter.

use std::sync::Arc;

use agentgov_domain::testing::MemoryStore;
use agentgov_store_conformance::{TestStore, store_conformance_tests};

async fn memory_store() -> Option<TestStore> {
    Some(TestStore::new(Arc::new(MemoryStore::new())))
}

store_conformance_tests!(memory_store);

#[test]
fn memory_store_names_its_backend() {
    use agentgov_domain::ports::Store;
    assert_eq!(MemoryStore::default().backend(), "memory");
}
