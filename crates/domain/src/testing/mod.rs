//! In-memory fakes of every port, for the domain's unit tests and the conformance suite.

mod fakes;
mod memory_agents;
mod memory_anomaly;
mod memory_audit;
mod memory_discovery;
mod memory_guard;
mod memory_hitl;
mod memory_jobs;
mod memory_policies;
mod memory_siem;
mod memory_store;

pub use fakes::{
    FakeBus, FakeCache, FakeCallbacks, FakeOidc, FakePolicyEngine, FakeTelemetry, FixedClock, RecordedRun,
    RecordingOffload, SentCallback, SeqIds,
};
pub use memory_store::MemoryStore;
