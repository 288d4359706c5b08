//! How an audit record is written for a SIEM. See docs/siem.md for the mapping.

use agentgov_domain::model::AuditRecord;
use serde_json::{Value, json};
use time::format_description::well_known::Rfc3339;

/// CEF's vendor, product and device event class prefix.
pub const VENDOR: &str = "agentgov";
pub const PRODUCT: &str = "agentgov";
/// Longest `msg` (the record's details) in a CEF line; longer ones are cut at a character
/// boundary and end with `…`.
pub const MAX_MSG: usize = 1023;

/// A CEF header field: `\` and `|` escaped.
fn header(s: &str) -> String {
    s.replace('\\', "\\\\").replace('|', "\\|").replace(['\r', '\n'], " ")
}

/// A CEF extension value: `\`, `=` and line breaks escaped.
fn value(s: &str) -> String {
    s.replace('\\', "\\\\").replace('=', "\\=").replace("\r\n", "\\n").replace('\n', "\\n").replace('\r', "\\r")
}

fn cut(s: &str, max: usize) -> String {
    if s.len() <= max {
        return s.to_owned();
    }
    let mut end = max.saturating_sub('…'.len_utf8());
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}…", &s[..end])
}

/// One record as a CEF line (no syslog header):
/// `CEF:0|agentgov|agentgov|{version}|{event_type}|{name}|{severity}|{extension}`.
pub fn cef(r: &AuditRecord, version: &str) -> String {
    let name = match (&r.action, &r.resource) {
        (Some(a), Some(res)) => format!("{} {a} {res}", r.event_type),
        (Some(a), None) => format!("{} {a}", r.event_type),
        _ => r.event_type.clone(),
    };
    let mut ext: Vec<(&str, String)> = vec![
        ("rt", (r.timestamp.unix_timestamp_nanos() / 1_000_000).to_string()),
        ("externalId", r.id.to_string()),
        ("cs1Label", "tenantId".into()),
        ("cs1", r.tenant_id.to_string()),
        ("suser", r.actor.id.clone()),
        ("cs2Label", "actorType".into()),
        ("cs2", r.actor.kind.as_str().into()),
        ("cn2Label", "seq".into()),
        ("cn2", r.seq.to_string()),
        ("cs5Label", "hash".into()),
        ("cs5", r.hash.to_hex()),
    ];
    if let Some(a) = &r.action {
        ext.push(("act", a.clone()));
    }
    if let Some(res) = &r.resource {
        ext.push(("cs3Label", "resource".into()));
        ext.push(("cs3", res.clone()));
    }
    if let Some(d) = &r.decision {
        ext.push(("outcome", d.clone()));
    }
    if let Some(agent) = r.agent_id {
        ext.push(("cs4Label", "agentId".into()));
        ext.push(("cs4", agent.to_string()));
    }
    if let Some(risk) = r.risk_score {
        ext.push(("cn1Label", "riskScore".into()));
        ext.push(("cn1", format!("{risk}")));
    }
    ext.push(("msg", cut(r.details.as_str(), MAX_MSG)));
    let extension: Vec<String> = ext.iter().map(|(k, v)| format!("{k}={}", value(v))).collect();
    format!(
        "CEF:0|{}|{}|{}|{}|{}|{}|{}",
        header(VENDOR),
        header(PRODUCT),
        header(version),
        header(&r.event_type),
        header(&name),
        r.severity(),
        extension.join(" ")
    )
}

/// RFC 5424 severity (0 emergency … 7 debug) for a CEF severity.
pub fn syslog_severity(cef_severity: u8) -> u8 {
    match cef_severity {
        9..=10 => 2, // critical
        7..=8 => 3,  // error
        5..=6 => 4,  // warning
        3..=4 => 5,  // notice
        _ => 6,      // informational
    }
}

/// What a syslog frame says about where a message comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SyslogOrigin {
    /// RFC 5424 facility (e.g. 13 log audit, 16 local0).
    pub facility: u8,
    pub hostname: String,
    pub app_name: String,
}

/// A printable-ASCII RFC 5424 header field of at most `max` characters, `-` when empty.
fn field(s: &str, max: usize) -> String {
    let f: String = s.chars().filter(|c| c.is_ascii_graphic()).take(max).collect();
    if f.is_empty() { "-".into() } else { f }
}

/// One record's `msg` (CEF or JSON) as an RFC 5424 message:
/// `<PRI>1 TIMESTAMP HOSTNAME APP-NAME - MSGID - MSG`, MSGID being the event type.
pub fn syslog(r: &AuditRecord, origin: &SyslogOrigin, msg: &str) -> String {
    let pri = u16::from(origin.facility.min(23)) * 8 + u16::from(syslog_severity(r.severity()));
    let ts = r.timestamp.format(&Rfc3339).unwrap_or_else(|_| "-".into());
    format!(
        "<{pri}>1 {ts} {} {} - {} - {msg}",
        field(&origin.hostname, 255),
        field(&origin.app_name, 48),
        field(&r.event_type, 32)
    )
}

/// A message framed for TCP by octet counting (RFC 6587 §3.4.1): `LEN SP MSG`.
pub fn octet_counted(msg: &str) -> String {
    format!("{} {msg}", msg.len())
}

/// One record as a flat JSON object (the record's own fields, `details` parsed, and the
/// severity).
pub fn json(r: &AuditRecord) -> Value {
    json!({
        "id": r.id,
        "tenant_id": r.tenant_id,
        "seq": r.seq,
        "timestamp": r.timestamp.format(&Rfc3339).ok(),
        "event_type": r.event_type,
        "actor": {"type": r.actor.kind.as_str(), "id": r.actor.id},
        "agent_id": r.agent_id,
        "action": r.action,
        "resource": r.resource,
        "decision": r.decision,
        "risk_score": r.risk_score,
        "severity": r.severity(),
        "details": serde_json::from_str::<Value>(r.details.as_str()).unwrap_or(Value::Null),
        "hash": r.hash.to_hex(),
    })
}

/// Records as a Splunk HTTP Event Collector body: one JSON event object per record, one
/// after another (HEC's batch form), with `time` in seconds, and `index` when given (else
/// the token's default index).
pub fn hec(records: &[AuditRecord], host: &str, source: &str, sourcetype: &str, index: Option<&str>) -> String {
    let mut body = String::new();
    for r in records {
        let mut event = json!({
            "time": r.timestamp.unix_timestamp_nanos() as f64 / 1e9,
            "host": host,
            "source": source,
            "sourcetype": sourcetype,
            "event": json(r),
        });
        if let (Some(index), Some(fields)) = (index, event.as_object_mut()) {
            fields.insert("index".into(), Value::from(index));
        }
        body.push_str(&event.to_string());
        body.push('\n');
    }
    body
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use agentgov_domain::ids::{AuditId, TenantId};
    use agentgov_domain::model::{Actor, ActorType, AuditHash, JsonText};
    use time::OffsetDateTime;
    use uuid::Uuid;

    use super::*;

    fn record(event_type: &str, decision: Option<&str>, risk: Option<f64>, details: &str) -> AuditRecord {
        AuditRecord {
            id: AuditId(Uuid::from_u128(1)),
            tenant_id: TenantId(Uuid::from_u128(2)),
            seq: 7,
            timestamp: OffsetDateTime::from_unix_timestamp(1_790_000_000).unwrap(),
            actor: Actor::new(ActorType::ApiKey, "key|1"),
            event_type: event_type.into(),
            agent_id: Some(Uuid::from_u128(3)),
            action: Some("refund".into()),
            resource: Some("orders/42".into()),
            decision: decision.map(str::to_owned),
            risk_score: risk,
            details: JsonText::from_value(&serde_json::json!({"note": details})),
            prev_hash: AuditHash([0; 32]),
            hash: AuditHash([0; 32]),
        }
    }

    #[test]
    fn severities_follow_kind_decision_and_risk() {
        assert_eq!(record("agent.action", None, None, "").severity(), 2);
        assert_eq!(record("policy.decision", Some("deny"), Some(0.2), "").severity(), 7);
        assert_eq!(record("policy.decision", Some("allow"), Some(0.91), "").severity(), 9);
        assert_eq!(record("guard.blocked", Some("blocked"), Some(0.5), "").severity(), 8);
        assert_eq!(record("user.role_changed", None, None, "").severity(), 4);
        assert_eq!(record("x", None, Some(7.0), "").severity(), 10, "clamped");
        assert_eq!(syslog_severity(8), 3);
        assert_eq!(syslog_severity(2), 6);
    }

    #[test]
    fn cef_escapes_headers_and_extensions() {
        let r = record("policy.decision", Some("deny"), Some(0.75), "a=b\\c\nnext | pipe");
        let line = cef(&r, "0.1.0");
        assert!(
            line.starts_with("CEF:0|agentgov|agentgov|0.1.0|policy.decision|policy.decision refund orders/42|8|"),
            "{line}"
        );
        assert!(line.contains("suser=key|1"), "pipes are not escaped in extensions: {line}");
        assert!(line.contains("outcome=deny") && line.contains("cn1=0.75") && line.contains("rt=1790000000000"));
        let msg = line.split(" msg=").nth(1).unwrap();
        assert!(msg.contains("a\\=b") && msg.contains("\\\\\\\\c") && msg.contains("\\\\n"), "{msg}");
        assert!(!line.contains('\n'), "one line");
        let long = record("agent.action", None, None, &"x".repeat(5000));
        let msg = cef(&long, "1").split(" msg=").nth(1).unwrap().to_owned();
        assert!(msg.len() <= MAX_MSG && msg.ends_with('…'));
        assert_eq!(header("a|b\\c"), "a\\|b\\\\c");
    }

    #[test]
    fn syslog_frames_are_rfc5424_with_octet_counting() {
        let r = record("guard.blocked", Some("blocked"), None, "");
        let origin = SyslogOrigin { facility: 13, hostname: "gov 1".into(), app_name: "agentgov".into() };
        let frame = syslog(&r, &origin, "CEF:0|x");
        // facility 13 (log audit) * 8 + severity 3 (error, from CEF 8)
        assert_eq!(frame, "<107>1 2026-09-21T14:13:20Z gov1 agentgov - guard.blocked - CEF:0|x");
        assert_eq!(octet_counted("héllo"), "6 héllo", "the count is in bytes");
    }

    #[test]
    fn json_and_hec_carry_every_field() {
        let r = record("agent.action", None, Some(0.4), "hi");
        let v = json(&r);
        assert_eq!(v["seq"], 7);
        assert_eq!(v["details"]["note"], "hi");
        assert_eq!(v["actor"]["type"], "api_key");
        assert_eq!(v["severity"], 4);
        let body = hec(&[r.clone(), r.clone()], "gov-1", "agentgov", "agentgov:audit", None);
        let lines: Vec<Value> = body.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
        assert_eq!(lines.len(), 2);
        assert_eq!(lines[0]["time"], 1_790_000_000.0);
        assert_eq!(lines[0]["sourcetype"], "agentgov:audit");
        assert_eq!(lines[1]["event"]["event_type"], "agent.action");
        assert!(lines[0].get("index").is_none(), "no index: the token's default");
        let body = hec(&[r], "gov-1", "agentgov", "agentgov:audit", Some("security"));
        let event: Value = serde_json::from_str(body.trim_end()).unwrap();
        assert_eq!(event["index"], "security");
        assert_eq!(event["host"], "gov-1");
    }
}
