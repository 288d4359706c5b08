//! SIEM forwarding (spec 4.13): the formats every sink shares and the sinks, behind the
//! domain's `SiemSink` port.
//!
//! Formats (each record's severity is `AuditRecord::severity`, CEF's 0–10 scale): [`format::cef`]
//! (ArcSight Common Event Format), [`format::syslog`] (RFC 5424 with RFC 6587 octet
//! counting), [`format::json`] (one flat JSON object per audit record), [`format::ocsf`]
//! (an OCSF 1.3.0 API Activity event) and [`format::hec`] (a Splunk HTTP Event Collector
//! event carrying either object); [`format::Payload`] chooses one per sink. The mappings are
//! documented in docs/siem.md.
//!
//! Sinks: [`syslog::SyslogSink`] (UDP, TCP with octet counting, and TLS per RFC 5425, one
//! connection kept and checked before each write), [`relp::RelpSink`] (RELP, every message
//! acknowledged by the receiver) and [`hec::HecSink`] (Splunk HEC over HTTP(S), batches split
//! at [`hec::MAX_BODY`]). All answer `Unavailable` whenever the
//! destination has not taken the records, so the caller keeps and retries them. TLS is
//! rustls with the `ring` provider, trusting the webpki roots or a given PEM CA file.

pub mod format;
pub mod hec;
pub mod relp;
pub mod syslog;
mod tls;

#[cfg(test)]
mod testing;
