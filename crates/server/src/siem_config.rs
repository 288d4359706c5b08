//! SIEM sinks in the configuration (`[[siem_sinks]]`, or `AGENTGOV_SIEM_SINKS` as a TOML
//! array of inline tables), checked at start-up and built into the domain's routes.

use std::path::PathBuf;
use std::sync::Arc;

use agentgov_domain::services::{SiemFilter, SiemRoute};
use agentgov_siem::format::{Payload, SyslogOrigin};
use agentgov_siem::hec::{HecOptions, HecSink};
use agentgov_siem::relp::RelpSink;
use agentgov_siem::syslog::{SyslogSink, Transport};
use anyhow::{Context, bail};
use secrecy::{ExposeSecret, SecretString};
use serde::{Deserialize, Serialize};

/// How a sink sends.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum SinkKind {
    /// RFC 5424 over TCP, octet-counted (RFC 6587).
    SyslogTcp,
    /// RFC 5424 over UDP, one datagram per record (RFC 5426).
    SyslogUdp,
    /// RFC 5424 over TLS, octet-counted (RFC 5425).
    SyslogTls,
    /// RFC 5424 over RELP (rsyslog's protocol: every message acknowledged), plain TCP.
    SyslogRelp,
    /// Splunk's HTTP Event Collector (or anything that speaks it).
    SplunkHec,
}

/// Where forwarding starts for a sink the store has not seen before.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SinkStart {
    /// The whole audit history is forwarded.
    #[default]
    Beginning,
    /// Only records written from now on.
    Latest,
}

/// One SIEM sink.
#[derive(Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SiemSinkConfig {
    /// `a-z`, `0-9`, `-`, `_`; 1 to 64 characters. Its progress is stored under this name:
    /// renaming a sink starts it afresh.
    pub name: String,
    pub kind: SinkKind,
    /// Syslog: the receiver's `host:port`.
    #[serde(default)]
    pub address: Option<String>,
    /// Each record as `cef` (syslog's default), `json` (HEC's default) or `ocsf` (OCSF
    /// 1.3.0 API Activity); HEC takes `json` or `ocsf`.
    #[serde(default)]
    pub format: Option<String>,
    /// Syslog facility, 0 to 23; default 13 (log audit).
    #[serde(default = "default_facility")]
    pub facility: u8,
    /// Syslog HOSTNAME and HEC `host`; default this machine's host name.
    #[serde(default)]
    pub hostname: Option<String>,
    /// Syslog APP-NAME; default `agentgov`.
    #[serde(default)]
    pub app_name: Option<String>,
    /// TLS (syslog-tls, https HEC): a PEM file of the CA certificates to trust instead of
    /// the public roots.
    #[serde(default)]
    pub tls_ca_file: Option<PathBuf>,
    /// syslog-tls: the name the receiver's certificate must carry; default the address's
    /// host.
    #[serde(default)]
    pub tls_server_name: Option<String>,
    /// HEC: the collector's URL (`https://splunk:8088`; `/services/collector/event` is
    /// added unless the path already names the endpoint).
    #[serde(default)]
    pub url: Option<String>,
    /// HEC: the token, sent as `Authorization: Splunk <token>`.
    #[serde(default, serialize_with = "crate::config::ser_secret_opt")]
    pub token: Option<SecretString>,
    /// HEC: the events' `source`; default `agentgov`.
    #[serde(default)]
    pub source: Option<String>,
    /// HEC: the events' `sourcetype`; default `agentgov:audit` (`agentgov:ocsf` for OCSF).
    #[serde(default)]
    pub sourcetype: Option<String>,
    /// HEC: the index; default the token's.
    #[serde(default)]
    pub index: Option<String>,
    /// HEC: `X-Splunk-Request-Channel` (needed with indexer acknowledgement).
    #[serde(default)]
    pub channel: Option<String>,
    /// HEC over https: accept any certificate. For tests only.
    #[serde(default)]
    pub tls_insecure_skip_verify: bool,
    /// Event types to send; `policy.*` matches by prefix. Empty: all.
    #[serde(default)]
    pub event_types: Vec<String>,
    /// Lowest severity (0 to 10, docs/siem.md) to send; default 0.
    #[serde(default)]
    pub min_severity: u8,
    /// `beginning` (default: the history too) or `latest`, for a sink new to the store.
    #[serde(default)]
    pub start: SinkStart,
}

fn default_facility() -> u8 {
    13
}

/// This machine's host name, for syslog headers; `agentgov` when it cannot be read.
fn host_name() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .ok()
        .or_else(|| std::env::var("HOSTNAME").ok())
        .map(|h| h.trim().to_owned())
        .filter(|h| !h.is_empty())
        .unwrap_or_else(|| "agentgov".into())
}

impl SiemSinkConfig {
    /// The sink as the forwarder uses it; every field checked, the CA file read.
    pub fn to_route(&self) -> anyhow::Result<SiemRoute> {
        let name = &self.name;
        crate::config::check_name("siem_sinks: name", name)?;
        if self.min_severity > 10 {
            bail!("siem_sinks[{name}]: min_severity must be between 0 and 10");
        }
        if let Some(bad) = self.event_types.iter().find(|p| {
            let body = p.strip_suffix('*').unwrap_or(p);
            p.is_empty() || body.contains('*') || !body.bytes().all(|b| b.is_ascii_graphic())
        }) {
            bail!("siem_sinks[{name}]: event type `{bad}` must be a type, or a prefix ending in `*`");
        }
        let ca = match &self.tls_ca_file {
            Some(path) => Some(
                std::fs::read(path)
                    .with_context(|| format!("siem_sinks[{name}]: reading tls_ca_file {}", path.display()))?,
            ),
            None => None,
        };
        let hostname = self.hostname.clone().unwrap_or_else(host_name);
        let syslog_only = |field: &str, set: bool| -> anyhow::Result<()> {
            if set && self.kind == SinkKind::SplunkHec {
                bail!("siem_sinks[{name}]: `{field}` is for syslog sinks");
            }
            Ok(())
        };
        let hec_only = |field: &str, set: bool| -> anyhow::Result<()> {
            if set && self.kind != SinkKind::SplunkHec {
                bail!("siem_sinks[{name}]: `{field}` is for splunk-hec sinks");
            }
            Ok(())
        };
        syslog_only("address", self.address.is_some())?;
        syslog_only("app_name", self.app_name.is_some())?;
        hec_only("url", self.url.is_some())?;
        hec_only("token", self.token.is_some())?;
        hec_only("source", self.source.is_some())?;
        hec_only("sourcetype", self.sourcetype.is_some())?;
        hec_only("index", self.index.is_some())?;
        hec_only("channel", self.channel.is_some())?;
        hec_only("tls_insecure_skip_verify", self.tls_insecure_skip_verify)?;
        if self.tls_server_name.is_some() && self.kind != SinkKind::SyslogTls {
            bail!("siem_sinks[{name}]: `tls_server_name` is for syslog-tls sinks");
        }
        if self.tls_ca_file.is_some()
            && matches!(self.kind, SinkKind::SyslogTcp | SinkKind::SyslogUdp | SinkKind::SyslogRelp)
        {
            bail!("siem_sinks[{name}]: `tls_ca_file` is for syslog-tls and splunk-hec sinks");
        }
        let payload = match self.format.as_deref() {
            None if self.kind == SinkKind::SplunkHec => Payload::Json,
            None => Payload::Cef,
            Some("cef") if self.kind == SinkKind::SplunkHec => {
                bail!("siem_sinks[{name}]: format `cef` is for syslog sinks; splunk-hec takes json or ocsf")
            }
            Some(f) => Payload::from_name(f)
                .with_context(|| format!("siem_sinks[{name}]: format `{f}` must be cef, json or ocsf"))?,
        };
        let version = env!("CARGO_PKG_VERSION");
        // A sink's own refusal (a bad address, URL, token or CA file), with the sink named.
        let built = |e: String| anyhow::anyhow!("siem_sinks[{name}]: {e}");
        let sink: Arc<dyn agentgov_domain::ports::SiemSink> = match self.kind {
            SinkKind::SyslogTcp | SinkKind::SyslogUdp | SinkKind::SyslogTls | SinkKind::SyslogRelp => {
                let Some(address) = &self.address else {
                    bail!("siem_sinks[{name}]: a syslog sink needs `address` (host:port)");
                };
                if self.facility > 23 {
                    bail!("siem_sinks[{name}]: facility must be between 0 and 23");
                }
                let origin = SyslogOrigin {
                    facility: self.facility,
                    hostname,
                    app_name: self.app_name.clone().unwrap_or_else(|| "agentgov".into()),
                };
                match self.kind {
                    SinkKind::SyslogTls => Arc::new(
                        SyslogSink::tls(
                            address,
                            self.tls_server_name.as_deref(),
                            ca.as_deref(),
                            payload,
                            origin,
                            version,
                        )
                        .map_err(built)?,
                    ),
                    SinkKind::SyslogRelp => Arc::new(RelpSink::new(address, payload, origin, version).map_err(built)?),
                    SinkKind::SyslogUdp => {
                        Arc::new(SyslogSink::new(Transport::Udp, address, payload, origin, version).map_err(built)?)
                    }
                    _ => Arc::new(SyslogSink::new(Transport::Tcp, address, payload, origin, version).map_err(built)?),
                }
            }
            SinkKind::SplunkHec => {
                let (Some(url), Some(token)) = (&self.url, &self.token) else {
                    bail!("siem_sinks[{name}]: a splunk-hec sink needs `url` and `token`");
                };
                let defaults = HecOptions::default();
                let sourcetype = match payload {
                    Payload::Ocsf => "agentgov:ocsf",
                    _ => defaults.sourcetype,
                };
                let options = HecOptions {
                    host: &hostname,
                    source: self.source.as_deref().unwrap_or(defaults.source),
                    sourcetype: self.sourcetype.as_deref().unwrap_or(sourcetype),
                    index: self.index.as_deref(),
                    channel: self.channel.as_deref(),
                    ca_pem: ca.as_deref(),
                    insecure_skip_verify: self.tls_insecure_skip_verify,
                    payload,
                    version,
                };
                Arc::new(HecSink::new(url, token.expose_secret(), options).map_err(built)?)
            }
        };
        Ok(SiemRoute {
            name: name.clone(),
            sink,
            filter: SiemFilter { event_types: self.event_types.clone(), min_severity: self.min_severity },
            from_latest: self.start == SinkStart::Latest,
        })
    }

    /// For the start-up log: kind, name and where it sends, no credentials.
    pub fn describe(&self) -> String {
        let to = match self.kind {
            SinkKind::SplunkHec => self
                .url
                .as_deref()
                .map_or_else(|| "?".into(), |u| crate::config::redact_url(u.split('?').next().unwrap_or(u))),
            _ => self.address.clone().unwrap_or_else(|| "?".into()),
        };
        format!("{} ({:?} to {to})", self.name, self.kind)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn syslog() -> SiemSinkConfig {
        toml_sink(
            r#"name = "soc"
kind = "syslog-tcp"
address = "siem.example:6514""#,
        )
    }

    fn toml_sink(s: &str) -> SiemSinkConfig {
        use figment::providers::Format;
        figment::Figment::from(figment::providers::Toml::string(s)).extract().unwrap()
    }

    #[test]
    fn syslog_and_hec_sinks_are_built_with_their_defaults() {
        let route = syslog().to_route().unwrap();
        assert_eq!(
            (route.sink.kind(), route.sink.format(), route.sink.destination()),
            ("syslog-tcp", "cef", "siem.example:6514".into())
        );
        assert_eq!(route.filter, SiemFilter::default());
        assert!(!route.from_latest);
        let hec = toml_sink(
            r#"name = "splunk"
kind = "splunk-hec"
url = "https://splunk.example:8088"
token = "hec-token-0123"
event_types = ["policy.*", "guard.blocked"]
min_severity = 5
start = "latest""#,
        );
        let route = hec.to_route().unwrap();
        assert_eq!((route.sink.kind(), route.sink.format()), ("splunk-hec", "json"));
        assert!(!route.sink.destination().contains("hec-token"));
        assert_eq!(route.filter.min_severity, 5);
        assert!(route.from_latest);
        assert!(!hec.describe().contains("hec-token"));
    }

    #[test]
    fn both_kinds_of_sink_can_carry_ocsf_and_only_syslog_cef() {
        let mut relp = syslog();
        relp.kind = SinkKind::SyslogRelp;
        let route = relp.to_route().unwrap();
        assert_eq!((route.sink.kind(), route.sink.format()), ("syslog-relp", "cef"));
        relp.tls_ca_file = Some("/etc/ca.pem".into());
        assert!(relp.to_route().err().unwrap().to_string().contains("tls_ca_file"));
        let mut sink = syslog();
        sink.format = Some("ocsf".into());
        assert_eq!(sink.to_route().unwrap().sink.format(), "ocsf");
        sink.format = Some("json".into());
        assert_eq!(sink.to_route().unwrap().sink.format(), "json");
        let mut hec = syslog();
        (hec.kind, hec.address, hec.url) = (SinkKind::SplunkHec, None, Some("https://splunk.example:8088".into()));
        hec.token = Some("hec-token-0123".to_owned().into());
        hec.format = Some("ocsf".into());
        assert_eq!(hec.to_route().unwrap().sink.format(), "ocsf");
        hec.format = Some("cef".into());
        let err = hec.to_route().err().unwrap().to_string();
        assert!(err.contains("siem_sinks[soc]: format `cef` is for syslog sinks"), "{err}");
    }

    #[test]
    fn mistakes_are_refused_with_the_sink_named() {
        type Spoil = fn(&mut SiemSinkConfig);
        let cases: [(Spoil, &str); 9] = [
            (|c| c.name = "Bad Name".into(), "name"),
            (|c| c.address = None, "address"),
            (|c| c.format = Some("xml".into()), "format"),
            (|c| c.facility = 24, "facility"),
            (|c| c.min_severity = 11, "min_severity"),
            (|c| c.event_types = vec!["a*b".into()], "event type"),
            (|c| c.token = Some("t".to_owned().into()), "token"),
            (|c| c.tls_ca_file = Some("/nonexistent.pem".into()), "tls_ca_file"),
            (|c| c.address = Some("no-port".into()), "soc"),
        ];
        for (spoil, expected) in cases {
            let mut c = syslog();
            spoil(&mut c);
            let err = c.to_route().err().unwrap().to_string();
            assert!(err.contains(expected) && err.contains("siem_sinks"), "{expected}: {err}");
        }
        let mut hec = syslog();
        hec.kind = SinkKind::SplunkHec;
        hec.address = None;
        assert!(hec.to_route().err().unwrap().to_string().contains("url"));
    }
}
