//! SIEM forwarding (spec 4.13). This first part holds the formats every sink shares:
//! [`format::severity`] (our events on CEF's 0–10 scale), [`format::cef`] (ArcSight Common
//! Event Format), [`format::syslog`] (RFC 5424 with RFC 6587 octet counting), [`format::json`]
//! (one flat JSON object per audit record) and [`format::hec`] (Splunk HTTP Event Collector
//! batches), and the syslog sinks ([`syslog::SyslogSink`]: TCP with octet counting, UDP),
//! behind the domain's `SiemSink` port. The mapping is documented in docs/siem.md. The
//! outbox, the HEC sink and `/siem/status|test` follow.

pub mod format;
pub mod syslog;
