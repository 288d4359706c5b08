//! `POST /webhooks/agent`: the body's envelope and the `agent.action` payload, on arbitrary
//! bytes, against an independent reading of the rules (spec 4.15).
//!
//! Invariants:
//! - `parse_envelope` is 400 exactly when serde_json refuses the bytes; otherwise it returns
//!   the object's string `event` and object `payload` unchanged, or 422 naming exactly the
//!   bad ones among `body`, `event` and `payload`.
//! - `action_fields` accepts a payload exactly when every checked field has its shape
//!   (UUID `agent_id`; `action` of 1..=200 characters without control characters;
//!   `resource` absent or 1..=1000 such characters; `risk_score` absent or in 0..=1;
//!   `input` absent or an object; `reasoning` absent or an array of strings), returns the
//!   values as sent, and reports exactly the bad fields otherwise.
//! - the heartbeat's payload deserialises or fails without panicking.
//! - `check_delivery_id` accepts exactly 1..=200 visible ASCII characters.
#![no_main]

use std::collections::BTreeSet;

use agentgov_domain::DomainError;
use agentgov_domain::services::agents::HeartbeatRequest;
use agentgov_domain::services::webhook::{ActionFields, action_fields, check_delivery_id, parse_envelope};
use libfuzzer_sys::fuzz_target;
use serde_json::{Map, Value};

fuzz_target!(|data: &[u8]| {
    if let Ok(id) = std::str::from_utf8(data) {
        let ok = (1..=200).contains(&id.len()) && id.bytes().all(|b| b.is_ascii_graphic());
        assert_eq!(check_delivery_id(id).is_ok(), ok, "delivery id {id:?}");
    }

    let oracle: Result<Value, _> = serde_json::from_slice(data);
    let parsed = parse_envelope(data);
    let envelope = match (oracle, parsed) {
        (Err(_), Err(DomainError::BadRequest(m))) => {
            assert!(m.starts_with("the body is not valid JSON"), "{m}");
            return;
        }
        (Err(e), other) => panic!("serde_json refused the body ({e}) but parse_envelope gave {other:?}"),
        (Ok(v), parsed) => (v, parsed),
    };
    let (value, parsed) = envelope;
    let Value::Object(object) = value else {
        assert_eq!(fields(&parsed), BTreeSet::from(["body".to_owned()]), "{parsed:?}");
        return;
    };
    let mut expected = BTreeSet::new();
    let event = object.get("event").filter(|e| !e.is_null());
    let payload = object.get("payload").filter(|p| !p.is_null());
    if !event.is_some_and(Value::is_string) {
        expected.insert("event".to_owned());
    }
    if !payload.is_some_and(Value::is_object) {
        expected.insert("payload".to_owned());
    }
    if !expected.is_empty() {
        assert_eq!(fields(&parsed), expected, "{parsed:?}");
        return;
    }
    let Ok((event_type, payload)) = parsed else { panic!("a well-formed envelope was refused: {parsed:?}") };
    assert_eq!(Some(&Value::String(event_type.clone())), event);
    assert_eq!(Some(&Value::Object(payload.clone())), object.get("payload"));

    if event_type == "agent.heartbeat" || data.len() % 2 == 0 {
        let mut rest = payload.clone();
        rest.remove("agent_id");
        let _ = serde_json::from_value::<HeartbeatRequest>(Value::Object(rest));
    }
    check_action(payload);
});

fn check_action(payload: Map<String, Value>) {
    let mut expected = BTreeSet::new();
    let present = |k: &str| payload.get(k).filter(|v| !v.is_null());
    let text_ok = |t: &str, max: usize| !t.is_empty() && t.chars().count() <= max && !t.chars().any(char::is_control);
    let agent_id = present("agent_id").and_then(Value::as_str).and_then(|s| uuid::Uuid::parse_str(s).ok());
    if agent_id.is_none() {
        expected.insert("payload.agent_id");
    }
    if !present("action").and_then(Value::as_str).is_some_and(|a| text_ok(a, 200)) {
        expected.insert("payload.action");
    }
    if present("resource").is_some_and(|r| !r.as_str().is_some_and(|r| text_ok(r, 1000))) {
        expected.insert("payload.resource");
    }
    let risk = present("risk_score");
    if risk.is_some_and(|r| !r.as_f64().is_some_and(|r| (0.0..=1.0).contains(&r))) {
        expected.insert("payload.risk_score");
    }
    if present("input").is_some_and(|i| !i.is_object()) {
        expected.insert("payload.input");
    }
    if present("reasoning").is_some_and(|r| !r.as_array().is_some_and(|s| s.iter().all(Value::is_string))) {
        expected.insert("payload.reasoning");
    }

    let mut rest = payload.clone();
    let got = action_fields(&mut rest);
    if !expected.is_empty() {
        let expected: BTreeSet<String> = expected.into_iter().map(str::to_owned).collect();
        assert_eq!(fields(&got), expected, "{got:?}");
        return;
    }
    let Ok(ActionFields { agent_id: got_id, action, resource, risk_score }) = got else {
        panic!("a valid action payload was refused: {got:?}")
    };
    assert_eq!(Some(got_id.0), agent_id);
    assert_eq!(action.as_deref(), present("action").and_then(Value::as_str));
    assert_eq!(resource.as_deref(), present("resource").and_then(Value::as_str));
    assert_eq!(risk_score, risk.and_then(Value::as_f64));
    // The checked fields are taken out; everything else is kept as sent.
    for key in ["agent_id", "action", "resource", "risk_score"] {
        assert!(!rest.contains_key(key), "{key} left in the payload");
    }
    for (key, value) in &payload {
        if !["agent_id", "action", "resource", "risk_score"].contains(&key.as_str()) {
            assert_eq!(rest.get(key), Some(value), "{key} not kept");
        }
    }
}

/// The fields a validation error names (panics on any other outcome).
fn fields<T: std::fmt::Debug>(r: &agentgov_domain::Result<T>) -> BTreeSet<String> {
    match r {
        Err(DomainError::Validation(errors)) => {
            assert!(errors.iter().all(|e| !e.message.is_empty()));
            errors.iter().map(|e| e.field.clone()).collect()
        }
        other => panic!("expected a validation error, got {other:?}"),
    }
}
