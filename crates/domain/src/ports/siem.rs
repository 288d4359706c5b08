//! SIEM port: a destination audit records are forwarded to (syslog, Splunk HEC, …).

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
