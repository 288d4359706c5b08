//! SIEM forwarding: how far each sink has forwarded each tenant's audit log, and its totals.

use time::OffsetDateTime;

use crate::ids::TenantId;

/// A tenant whose audit log has records a sink has not forwarded yet.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SiemBacklog {
    pub tenant_id: TenantId,
    /// The last `seq` the sink has forwarded (or passed over by its filter); 0 for none.
    pub cursor: i64,
    /// The tenant's chain head.
    pub head: i64,
}

/// A sink's delivery totals, shared by every replica.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SiemSinkState {
    /// Records delivered.
    pub forwarded: u64,
    /// Records in delivery attempts that failed (a record retried three times counts three).
    pub failed: u64,
    pub last_success_at: Option<OffsetDateTime>,
    pub last_error: Option<String>,
    pub last_error_at: Option<OffsetDateTime>,
    /// Records not yet examined: over every tenant, its head minus the sink's cursor.
    pub queue_depth: u64,
}
