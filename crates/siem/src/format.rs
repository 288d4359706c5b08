//! How an audit record is written for a SIEM. See docs/siem.md for the mapping.

use agentgov_domain::model::{ActorType, AuditRecord};
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
    let name = title(r);
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
        ("cs6Label", "origin".into()),
        ("cs6", r.origin.as_str().into()),
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
    if let Some(session) = &r.session_id {
        ext.push(("flexString1Label", "sessionId".into()));
        ext.push(("flexString1", session.clone()));
    }
    ext.push(("msg", cut(&msg_details(r), MAX_MSG)));
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

/// The details a CEF `msg` carries: a decision's without the Rego input it keeps for replays
/// (`input`: the agent and more, which would crowd the reason and the matched policies out
/// of the 1,023 bytes); every other record's as they are.
fn msg_details(r: &AuditRecord) -> std::borrow::Cow<'_, str> {
    let text = r.details.as_str();
    if r.event_type != "policy.decision" || !text.contains("\"input\"") {
        return std::borrow::Cow::Borrowed(text);
    }
    match serde_json::from_str::<Value>(text) {
        Ok(Value::Object(mut details)) => {
            details.remove("input");
            std::borrow::Cow::Owned(Value::Object(details).to_string())
        }
        _ => std::borrow::Cow::Borrowed(text),
    }
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

/// One record as a flat JSON object (the record's own fields with its `origin`, `details`
/// parsed, and the severity).
pub fn json(r: &AuditRecord) -> Value {
    json!({
        "id": r.id,
        "tenant_id": r.tenant_id,
        "seq": r.seq,
        "timestamp": r.timestamp.format(&Rfc3339).ok(),
        "event_type": r.event_type,
        "origin": r.origin,
        "actor": {"type": r.actor.kind.as_str(), "id": r.actor.id},
        "agent_id": r.agent_id,
        "action": r.action,
        "resource": r.resource,
        "decision": r.decision,
        "risk_score": r.risk_score,
        "session_id": r.session_id,
        "severity": r.severity(),
        "details": serde_json::from_str::<Value>(r.details.as_str()).unwrap_or(Value::Null),
        "hash": r.hash.to_hex(),
    })
}

/// The OCSF schema version [`ocsf`] writes.
pub const OCSF_VERSION: &str = "1.3.0";
/// OCSF's API Activity class, in the Application Activity category.
const OCSF_CLASS: u32 = 6003;
const OCSF_CATEGORY: u32 = 6;

/// OCSF `activity_id` and its name for an event type, from the verb it ends with:
/// `…created` Create, `…read`/`…exported` Read, `…updated`/`…_changed` and `settings.*`
/// Update, `…deleted`/`…revoked` Delete, anything else Other (99), named by the event type.
fn ocsf_activity(event_type: &str) -> (u32, &str) {
    let verb = event_type.rsplit('.').next().unwrap_or(event_type);
    if verb == "created" {
        (1, "Create")
    } else if matches!(verb, "read" | "exported") {
        (2, "Read")
    } else if verb == "updated" || verb.ends_with("_changed") || event_type.starts_with("settings.") {
        (3, "Update")
    } else if matches!(verb, "deleted" | "revoked") {
        (4, "Delete")
    } else {
        (99, event_type)
    }
}

/// OCSF `severity_id` and name for a CEF severity, on the same steps as [`syslog_severity`].
fn ocsf_severity(cef_severity: u8) -> (u8, &'static str) {
    match cef_severity {
        9..=10 => (5, "Critical"),
        7..=8 => (4, "High"),
        5..=6 => (3, "Medium"),
        3..=4 => (2, "Low"),
        _ => (1, "Informational"),
    }
}

/// OCSF `status_id` and name: the decision when there is one (allowed Success, denied
/// Failure, anything else Other, named by the decision), else Failure for an event type
/// ending in `failed`, Success otherwise.
fn ocsf_status(r: &AuditRecord) -> (u8, &str) {
    match r.decision.as_deref() {
        Some("allow" | "allowed" | "approved") => (1, "Success"),
        Some("deny" | "denied" | "blocked" | "rejected") => (2, "Failure"),
        Some(other) => (99, other),
        None if r.event_type.ends_with("failed") => (2, "Failure"),
        None => (1, "Success"),
    }
}

/// The event's name: its type, action and resource.
fn title(r: &AuditRecord) -> String {
    match (&r.action, &r.resource) {
        (Some(a), Some(res)) => format!("{} {a} {res}", r.event_type),
        (Some(a), None) => format!("{} {a}", r.event_type),
        _ => r.event_type.clone(),
    }
}

/// One record as an OCSF 1.3.0 API Activity event (class 6003). See docs/siem.md for the
/// mapping; what OCSF has no place for is under `unmapped`.
pub fn ocsf(r: &AuditRecord, version: &str) -> Value {
    let (activity_id, activity_name) = ocsf_activity(&r.event_type);
    let cef_severity = r.severity();
    let (severity_id, severity) = ocsf_severity(cef_severity);
    let (status_id, status) = ocsf_status(r);
    let details = serde_json::from_str::<Value>(r.details.as_str()).unwrap_or(Value::Null);
    let user_type_id = match r.actor.kind {
        ActorType::User => 1,
        ActorType::System => 3,
        ActorType::Agent | ActorType::ApiKey => 99,
    };
    // The caller's address where the record kept it (sign-ins), else the caller by its id.
    let src_endpoint = match details.get("client_ip").and_then(Value::as_str) {
        Some(ip) if ip.parse::<std::net::IpAddr>().is_ok() => json!({"ip": ip}),
        _ => json!({"uid": r.actor.id}),
    };
    let mut actor = json!({"user": {"uid": r.actor.id, "type_id": user_type_id, "type": r.actor.kind.as_str()}});
    if let Some(session) = &r.session_id {
        // The agent's conversation or run, which a check named.
        actor["session"] = json!({"uid": session});
    }
    let mut resources = Vec::new();
    if let Some(res) = &r.resource {
        resources.push(json!({"uid": res}));
    }
    if let Some(agent) = r.agent_id {
        resources.push(json!({"uid": agent, "type": "agent"}));
    }
    json!({
        "class_uid": OCSF_CLASS,
        "class_name": "API Activity",
        "category_uid": OCSF_CATEGORY,
        "category_name": "Application Activity",
        "activity_id": activity_id,
        "activity_name": activity_name,
        "type_uid": OCSF_CLASS * 100 + activity_id,
        "type_name": format!("API Activity: {activity_name}"),
        "time": r.timestamp.unix_timestamp_nanos() / 1_000_000,
        "severity_id": severity_id,
        "severity": severity,
        "status_id": status_id,
        "status": status,
        "message": title(r),
        "metadata": {
            "version": OCSF_VERSION,
            "product": {"name": PRODUCT, "vendor_name": VENDOR, "version": version},
            "uid": r.id,
            "event_code": r.event_type,
            "sequence": r.seq,
            "tenant_uid": r.tenant_id,
            "log_name": "audit",
            "labels": [format!("origin:{}", r.origin)],
        },
        "actor": actor,
        "api": {"operation": r.action.as_deref().unwrap_or(&r.event_type), "service": {"name": PRODUCT}},
        "src_endpoint": src_endpoint,
        "resources": resources,
        "unmapped": {
            "event_type": r.event_type,
            "origin": r.origin,
            "agent_id": r.agent_id,
            "decision": r.decision,
            "risk_score": r.risk_score,
            "cef_severity": cef_severity,
            "details": details,
            "hash": r.hash.to_hex(),
        },
    })
}

/// What a sink writes for each record.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Payload {
    /// A [`cef`] line.
    Cef,
    /// The flat [`json`] object.
    Json,
    /// An [`ocsf`] event.
    Ocsf,
}

impl Payload {
    /// As configured and shown in `/siem/status`.
    pub fn name(self) -> &'static str {
        match self {
            Payload::Cef => "cef",
            Payload::Json => "json",
            Payload::Ocsf => "ocsf",
        }
    }

    /// The payload named `name`, if any.
    pub fn from_name(name: &str) -> Option<Self> {
        [Payload::Cef, Payload::Json, Payload::Ocsf].into_iter().find(|p| p.name() == name)
    }

    /// One record as this payload's JSON object; `None` for CEF, which is a line of text.
    pub fn object(self, r: &AuditRecord, version: &str) -> Option<Value> {
        match self {
            Payload::Cef => None,
            Payload::Json => Some(json(r)),
            Payload::Ocsf => Some(ocsf(r, version)),
        }
    }

    /// One record as a message's text (a syslog MSG).
    pub fn text(self, r: &AuditRecord, version: &str) -> String {
        self.object(r, version).map_or_else(|| cef(r, version), |v| v.to_string())
    }
}

/// One record's `event` (its [`json`] or [`ocsf`] object) as a Splunk HTTP Event Collector
/// event object, `time` in seconds, with `index` when given (else the token's default
/// index). A batch is such objects one after another.
pub fn hec(r: &AuditRecord, event: Value, host: &str, source: &str, sourcetype: &str, index: Option<&str>) -> String {
    let mut object = json!({
        "time": r.timestamp.unix_timestamp_nanos() as f64 / 1e9,
        "host": host,
        "source": source,
        "sourcetype": sourcetype,
        "event": event,
    });
    if let (Some(index), Some(fields)) = (index, object.as_object_mut()) {
        fields.insert("index".into(), Value::from(index));
    }
    object.to_string()
}

#[cfg(test)]
mod tests {
    use agentgov_domain::ids::{AuditId, TenantId};
    use agentgov_domain::model::{Actor, ActorType, AuditHash, AuditOrigin, JsonText};
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
            origin: AuditOrigin::of(event_type),
            agent_id: Some(Uuid::from_u128(3)),
            action: Some("refund".into()),
            resource: Some("orders/42".into()),
            decision: decision.map(str::to_owned),
            risk_score: risk,
            details: JsonText::from_value(&serde_json::json!({"note": details})),
            prev_hash: AuditHash([0; 32]),
            hash: AuditHash([0; 32]),
            session_id: None,
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
    fn a_decisions_session_goes_along_and_its_kept_input_stays_out_of_the_cef_msg() {
        let mut r = record("policy.decision", Some("deny"), None, "");
        r.session_id = Some("run-7".into());
        r.details = JsonText::from_value(&serde_json::json!({
            "context": {}, "input": {"agent": {"name": "x".repeat(2000)}}, "reason": "denied: no"
        }));
        let line = cef(&r, "1");
        assert!(line.contains("flexString1Label=sessionId flexString1=run-7 "), "{line}");
        let msg = line.split(" msg=").nth(1).unwrap();
        assert_eq!(msg, r#"{"context":{},"reason":"denied: no"}"#);
        assert_eq!(json(&r)["session_id"], "run-7");
        assert_eq!(json(&r)["details"]["input"]["agent"]["name"].as_str().map(str::len), Some(2000));
        assert_eq!(ocsf(&r, "1")["actor"]["session"]["uid"], "run-7");
        // Without a session, none of it.
        r.session_id = None;
        assert!(!cef(&r, "1").contains("flexString1"));
        assert!(ocsf(&r, "1")["actor"].get("session").is_none());
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
    fn every_format_says_whether_the_service_or_a_client_wrote_the_record() {
        for (event_type, origin) in [("policy.decision", "service"), ("app.decision", "client")] {
            let r = record(event_type, Some("deny"), None, "");
            assert!(cef(&r, "1").contains(&format!("cs6Label=origin cs6={origin} ")), "{event_type}");
            assert_eq!(json(&r)["origin"], origin);
            let v = ocsf(&r, "1");
            assert_eq!(v["unmapped"]["origin"], origin);
            assert_eq!(v["metadata"]["labels"], serde_json::json!([format!("origin:{origin}")]));
        }
    }

    #[test]
    fn json_and_hec_carry_every_field() {
        let r = record("agent.action", None, Some(0.4), "hi");
        let v = json(&r);
        assert_eq!(v["seq"], 7);
        assert_eq!(v["details"]["note"], "hi");
        assert_eq!(v["actor"]["type"], "api_key");
        assert_eq!(v["severity"], 4);
        let line = hec(&r, json(&r), "gov-1", "agentgov", "agentgov:audit", None);
        assert!(!line.contains('\n'), "one object per line");
        let event: Value = serde_json::from_str(&line).unwrap();
        assert_eq!(event["time"], 1_790_000_000.0);
        assert_eq!(event["sourcetype"], "agentgov:audit");
        assert_eq!(event["event"]["event_type"], "agent.action");
        assert!(event.get("index").is_none(), "no index: the token's default");
        let line = hec(&r, json(&r), "gov-1", "agentgov", "agentgov:audit", Some("security"));
        let event: Value = serde_json::from_str(&line).unwrap();
        assert_eq!(event["index"], "security");
        assert_eq!(event["host"], "gov-1");
    }

    #[test]
    fn ocsf_is_an_api_activity_with_every_required_attribute() {
        let r = record("policy.decision", Some("deny"), Some(0.75), "hi");
        let v = ocsf(&r, "0.1.0");
        for required in
            ["activity_id", "category_uid", "class_uid", "type_uid", "severity_id", "time", "metadata", "actor", "api"]
        {
            assert!(v.get(required).is_some_and(|f| !f.is_null()), "{required}: {v}");
        }
        assert_eq!((v["class_uid"].as_u64(), v["category_uid"].as_u64()), (Some(6003), Some(6)));
        assert_eq!((v["activity_id"].as_u64(), v["activity_name"].as_str()), (Some(99), Some("policy.decision")));
        assert_eq!(v["type_uid"], 600_399);
        assert_eq!(v["time"], 1_790_000_000_000_i64);
        assert_eq!((v["severity_id"].as_u64(), v["severity"].as_str()), (Some(4), Some("High")), "CEF 8");
        assert_eq!((v["status_id"].as_u64(), v["status"].as_str()), (Some(2), Some("Failure")));
        assert_eq!(v["message"], "policy.decision refund orders/42");
        assert_eq!(v["metadata"]["version"], OCSF_VERSION);
        assert_eq!(v["metadata"]["product"]["version"], "0.1.0");
        assert_eq!(v["metadata"]["uid"], r.id.to_string());
        assert_eq!(v["metadata"]["tenant_uid"], r.tenant_id.to_string());
        assert_eq!(v["metadata"]["sequence"], 7);
        assert_eq!(v["actor"]["user"]["uid"], "key|1");
        assert_eq!(v["actor"]["user"]["type"], "api_key");
        assert_eq!(v["api"]["operation"], "refund");
        assert_eq!(v["src_endpoint"]["uid"], "key|1", "no address recorded: the caller by its id");
        assert_eq!(v["resources"][0]["uid"], "orders/42");
        assert_eq!(v["resources"][1]["type"], "agent");
        assert_eq!(v["unmapped"]["details"]["note"], "hi");
        assert_eq!(v["unmapped"]["risk_score"], 0.75);
        assert_eq!(v["unmapped"]["cef_severity"], 8);
    }

    #[test]
    fn ocsf_activity_status_and_address_follow_the_record() {
        let cases = [
            ("user.created", None, 1, 1),
            ("audit.exported", None, 2, 1),
            ("user.role_changed", None, 3, 1),
            ("settings.risk_levels", None, 3, 1),
            ("api_key.revoked", None, 4, 1),
            ("auth.login_failed", None, 99, 2),
            ("policy.decision", Some("allow"), 99, 1),
            ("policy.decision", Some("require_approval"), 99, 99),
        ];
        for (event_type, decision, activity, status) in cases {
            let v = ocsf(&record(event_type, decision, None, ""), "1");
            assert_eq!(
                (v["activity_id"].as_u64(), v["status_id"].as_u64()),
                (Some(activity), Some(status)),
                "{event_type}"
            );
            assert_eq!(v["type_uid"].as_u64(), Some(600_300 + activity));
        }
        let v = ocsf(&record("policy.decision", Some("require_approval"), None, ""), "1");
        assert_eq!(v["status"], "require_approval");
        let mut login = record("auth.login", None, None, "");
        login.details = JsonText::from_value(&serde_json::json!({"client_ip": "192.0.2.7"}));
        assert_eq!(ocsf(&login, "1")["src_endpoint"], serde_json::json!({"ip": "192.0.2.7"}));
        login.details = JsonText::from_value(&serde_json::json!({"client_ip": "not an address"}));
        assert!(ocsf(&login, "1")["src_endpoint"].get("ip").is_none());
    }

    #[test]
    fn payloads_are_named_and_written() {
        let r = record("agent.action", None, None, "");
        for p in [Payload::Cef, Payload::Json, Payload::Ocsf] {
            assert_eq!(Payload::from_name(p.name()), Some(p));
        }
        assert_eq!(Payload::from_name("xml"), None);
        assert!(Payload::Cef.text(&r, "1").starts_with("CEF:0|"));
        assert!(Payload::Cef.object(&r, "1").is_none());
        assert_eq!(serde_json::from_str::<Value>(&Payload::Json.text(&r, "1")).unwrap(), json(&r));
        assert_eq!(serde_json::from_str::<Value>(&Payload::Ocsf.text(&r, "1")).unwrap()["class_uid"], 6003);
    }
}
