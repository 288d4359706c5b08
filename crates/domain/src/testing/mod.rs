//! In-memory fakes of every port, for the domain's unit tests and the conformance suite.

mod memory_store;
mod fakes;

pub use fakes::{FakeBus, FakeCache, FakePolicyEngine, FixedClock, SeqIds};
pub use memory_store::MemoryStore;
