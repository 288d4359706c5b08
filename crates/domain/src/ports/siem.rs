//! SIEM port: a destination audit records are forwarded to (syslog, Splunk HEC, …).

use std::sync::Arc;

use async_trait::async_trait;

use crate::error::Result;
use crate::model::AuditRecord;

#[async_trait]
pub trait SiemSink: Send + Sync {
    /// What kind of sink it is, e.g. `syslog-tcp`, `syslog-udp`, `splunk-hec`.
    fn kind(&self) -> &'static str;
    /// Where it sends, with any credentials masked (for `/siem/status`).
    fn destination(&self) -> String;
    /// What each record is written as: `cef`, `json` or `ocsf`.
    fn format(&self) -> &'static str;
    /// Sends the records, in order. `Ok` once the destination has taken all of them (as far
    /// as its transport tells); `Unavailable` when it cannot be reached, so the caller keeps
    /// them and retries. Gives up within its own timeout (seconds, not minutes).
    async fn send(&self, records: &[AuditRecord]) -> Result<()>;
}

/// Which audit records a sink wants.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SiemFilter {
    /// Event types to send; a pattern ending in `*` matches by prefix (`policy.*`). Empty:
    /// every type.
    pub event_types: Vec<String>,
    /// Lowest [`AuditRecord::severity`] to send (0 sends everything).
    pub min_severity: u8,
}

impl SiemFilter {
    pub fn matches(&self, record: &AuditRecord) -> bool {
        let typed = self.event_types.is_empty()
            || self.event_types.iter().any(|p| match p.strip_suffix('*') {
                Some(prefix) => record.event_type.starts_with(prefix),
                None => record.event_type == *p,
            });
        typed && record.severity() >= self.min_severity
    }
}

/// One configured sink.
#[derive(Clone)]
pub struct SiemRoute {
    /// The sink's configured name; its cursors and totals are stored under it, so renaming
    /// a sink starts it afresh.
    pub name: String,
    pub sink: Arc<dyn SiemSink>,
    pub filter: SiemFilter,
    /// A sink new to the store starts at each tenant's current head instead of forwarding
    /// the history.
    pub from_latest: bool,
}
