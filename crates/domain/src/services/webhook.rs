//! The inbound webhook (`POST /webhooks/agent`): signed agent events.
//!
//! Order of checks: the signature against the server's `WEBHOOK_SECRET` (constant time, no
//! database), then the API key, then the tenant's own webhook secret if it has one (which
//! then replaces the server's), the signature's age, then the envelope. `agent.action` is appended to the audit log with no policy check;
//! `agent.heartbeat` is exactly `POST /agents/{id}/heartbeat`. A success is answered only
//! after the durable write.

use std::sync::Arc;

use serde_json::{Map, Value};
use sha2::{Digest, Sha256};
use uuid::Uuid;

use super::agents::{AgentService, HeartbeatRequest};
use super::audit::{AuditEvent, AuditLog};
use super::auth::AuthService;
use super::{Caller, Credential};
use crate::error::{DomainError, Result, Violations};
use crate::events::{AGENT_ACTION, AGENT_HEARTBEAT};
use crate::ids::{AgentId, AuditId};
use crate::model::{Actor, ActorType, JsonText, Permission};
use crate::ports::{AuditRepo, Clock};
use crate::secrets::{INVALID_WEBHOOK_SIGNATURE, STALE_WEBHOOK_SIGNATURE, SignatureHeader, WebhookVerifier};

const MAX_DELIVERY_ID_LEN: usize = 200;
const MAX_ACTION_LEN: usize = 200;
const MAX_RESOURCE_LEN: usize = 1000;
/// The 401 of an untimestamped signature for a tenant that requires the timestamped form.
pub const TIMESTAMP_REQUIRED: &str =
    "this tenant accepts only timestamped webhook signatures: X-Webhook-Signature: t=<unix seconds>,v1=<hex>";

/// `{"status": "ok", "event": "<type>"}`.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct WebhookAck {
    /// Always `ok`.
    pub status: &'static str,
    /// The event type received.
    pub event: String,
}

/// What arrived with the request, as sent.
pub struct Delivery<'a> {
    pub body: &'a [u8],
    pub signature: Option<&'a str>,
    pub api_key: Option<&'a str>,
    /// `X-Webhook-Id`: a repeated id is answered again and stored once.
    pub delivery_id: Option<&'a str>,
}

#[derive(Clone)]
pub struct WebhookService {
    verifier: WebhookVerifier,
    auth: AuthService,
    agents: AgentService,
    audit: AuditLog,
    /// To tell a repeated delivery from another conflict.
    records: Arc<dyn AuditRepo>,
    clock: Arc<dyn Clock>,
}

impl WebhookService {
    pub fn new(
        verifier: WebhookVerifier,
        auth: AuthService,
        agents: AgentService,
        audit: AuditLog,
        records: Arc<dyn AuditRepo>,
        clock: Arc<dyn Clock>,
    ) -> Self {
        Self { verifier, auth, agents, audit, records, clock }
    }

    pub async fn receive(&self, d: Delivery<'_>) -> Result<WebhookAck> {
        let (caller, signature) = self.authenticate(&d).await?;
        let delivery_id = d.delivery_id.map(check_delivery_id).transpose()?;
        // A timestamped signature names its delivery: a replay inside the tolerance is
        // answered again and stored once, one outside it is stale.
        let fingerprint = signature.timestamp().map(|_| signature.fingerprint());
        let delivery_id = delivery_id.or(fingerprint.as_deref());
        let (event, payload) = parse_envelope(d.body)?;
        match event.as_str() {
            AGENT_ACTION => self.action(&caller, payload, delivery_id).await?,
            AGENT_HEARTBEAT => self.heartbeat(&caller, payload).await?,
            other => {
                return Err(DomainError::BadRequest(format!(
                    "unknown event type `{other}`: expected {AGENT_ACTION} or {AGENT_HEARTBEAT}"
                )));
            }
        }
        Ok(WebhookAck { status: "ok", event })
    }

    /// The signature and the API key. A tenant without a webhook secret of its own is
    /// signed for with the server's `WEBHOOK_SECRET` (checked first, without the store); a
    /// tenant with one only with it (or the key it replaced, during the rotation grace), which
    /// the API key names. Every mismatch is the same 401 `Invalid webhook signature`.
    async fn authenticate(&self, d: &Delivery<'_>) -> Result<(Caller, SignatureHeader)> {
        let invalid = || DomainError::Unauthorized(INVALID_WEBHOOK_SIGNATURE.into());
        let signature = SignatureHeader::parse(d.signature)?;
        let global = self.verifier.matches(&signature, d.body);
        let Some(key) = d.api_key else {
            return Err(if global { DomainError::Unauthorized("missing X-API-Key header".into()) } else { invalid() });
        };
        let (caller, own_secret) = match self.auth.authenticate_webhook_key(key).await {
            Ok(found) => found,
            // Without a valid key no tenant's secret can be tried: the signature is what failed.
            Err(DomainError::Unauthorized(_)) if !global => return Err(invalid()),
            Err(e) => return Err(e),
        };
        let now = self.clock.now();
        match own_secret {
            Some(own) => {
                let matched = own.keys_at(now).iter().fold(false, |m, k| m | signature.matches(k, d.body));
                if !matched {
                    return Err(invalid());
                }
                if own.require_timestamp && signature.timestamp().is_none() {
                    return Err(DomainError::Unauthorized(TIMESTAMP_REQUIRED.into()));
                }
            }
            None if !global => return Err(invalid()),
            None => {}
        }
        if !signature.is_fresh(now) {
            return Err(DomainError::Unauthorized(STALE_WEBHOOK_SIGNATURE.into()));
        }
        Ok((caller, signature))
    }

    async fn action(&self, caller: &Caller, mut payload: Map<String, Value>, delivery_id: Option<&str>) -> Result<()> {
        caller.require_permission(Permission::AuditWrite)?;
        let ActionFields { agent_id, action, resource, risk_score } = action_fields(&mut payload)?;
        let tenant = caller.tenant_id();
        // Everything else the sender put in the payload (input, output, reasoning, context…)
        // is kept as it came, with where it came from.
        let mut details = payload;
        let mut source = Map::new();
        source.insert("channel".into(), Value::from("webhook"));
        if let Credential::ApiKey { key_id, .. } = &caller.credential {
            source.insert("api_key_id".into(), Value::from(key_id.to_string()));
        }
        if let Some(id) = delivery_id {
            source.insert("delivery_id".into(), Value::from(id));
        }
        details.insert("source".into(), Value::Object(source));
        // A delivery id names the record: a repeat conflicts on it and is stored once.
        let id = delivery_id.map(|delivery| AuditId(delivery_record_id(tenant.as_uuid(), delivery)));
        let event = AuditEvent {
            id,
            tenant_id: tenant,
            actor: Actor::new(ActorType::Agent, agent_id),
            event_type: AGENT_ACTION.to_owned(),
            agent_id: Some(agent_id.as_uuid()),
            action,
            resource,
            decision: None,
            risk_score,
            details: JsonText::from_serialize(&details),
            session_id: None,
        };
        match (self.audit.record(event).await, id) {
            (Ok(_), _) => Ok(()),
            (Err(DomainError::Conflict(_)), Some(id)) if self.records.get_audit(tenant, id).await?.is_some() => Ok(()),
            (Err(e), _) => Err(e),
        }
    }

    async fn heartbeat(&self, caller: &Caller, mut payload: Map<String, Value>) -> Result<()> {
        let mut v = Violations::new();
        let agent_id = take_agent_id(&mut v, &mut payload);
        v.into_result()?;
        let agent_id = agent_id.ok_or_else(|| DomainError::Internal("agent_id checked above".into()))?;
        let req: HeartbeatRequest = serde_json::from_value(Value::Object(payload))
            .map_err(|e| DomainError::invalid("payload", e.to_string()))?;
        self.agents.heartbeat(caller, agent_id, req).await.map(|_| ())
    }
}

/// The body's `event` and `payload`: what [`WebhookService::receive`] reads once the
/// signature and the API key are checked (pure; public for the fuzz targets). 400 for a body
/// that is not JSON, 422 for an envelope without a string `event` and an object `payload`.
pub fn parse_envelope(body: &[u8]) -> Result<(String, Map<String, Value>)> {
    let envelope: Value = serde_json::from_slice(body)
        .map_err(|e| DomainError::BadRequest(format!("the body is not valid JSON: {e}")))?;
    envelope_parts(envelope)
}

/// The checked fields of an `agent.action` payload.
#[derive(Debug, Clone, PartialEq)]
pub struct ActionFields {
    pub agent_id: AgentId,
    pub action: Option<String>,
    pub resource: Option<String>,
    pub risk_score: Option<f64>,
}

/// Takes and checks the fields of an `agent.action` payload, leaving the rest in `payload`
/// (pure; public for the fuzz targets): 422 naming every field of the wrong shape.
pub fn action_fields(payload: &mut Map<String, Value>) -> Result<ActionFields> {
    let mut v = Violations::new();
    let agent_id = take_agent_id(&mut v, payload);
    let action = take_text(&mut v, payload, "action", MAX_ACTION_LEN, true);
    let resource = take_text(&mut v, payload, "resource", MAX_RESOURCE_LEN, false);
    let risk_score = match payload.remove("risk_score") {
        None | Some(Value::Null) => None,
        Some(Value::Number(n)) if n.as_f64().is_some_and(|r| (0.0..=1.0).contains(&r)) => n.as_f64(),
        Some(_) => {
            v.add("payload.risk_score", "must be a number between 0 and 1");
            None
        }
    };
    if payload.get("input").is_some_and(|i| !i.is_object() && !i.is_null()) {
        v.add("payload.input", "must be a JSON object");
    }
    if let Some(reasoning) = payload.get("reasoning").filter(|r| !r.is_null()) {
        let steps_ok = reasoning.as_array().is_some_and(|steps| steps.iter().all(Value::is_string));
        v.check(steps_ok, "payload.reasoning", "must be an array of strings");
    }
    v.into_result()?;
    let agent_id = agent_id.ok_or_else(|| DomainError::Internal("agent_id checked above".into()))?;
    Ok(ActionFields { agent_id, action, resource, risk_score })
}

/// The envelope's `event` and `payload` (an object). Other top-level fields are ignored.
fn envelope_parts(envelope: Value) -> Result<(String, Map<String, Value>)> {
    let Value::Object(mut envelope) = envelope else {
        return Err(DomainError::invalid("body", "must be a JSON object with `event` and `payload`"));
    };
    let mut v = Violations::new();
    let event = take(&mut v, &mut envelope, "event", "event", true, "must be a string", |e| match e {
        Value::String(e) => Some(e),
        _ => None,
    });
    let payload = take(&mut v, &mut envelope, "payload", "payload", true, "must be a JSON object", |p| match p {
        Value::Object(p) => Some(p),
        _ => None,
    });
    v.into_result()?;
    match (event, payload) {
        (Some(e), Some(p)) => Ok((e, p)),
        _ => Err(DomainError::Internal("envelope checked above".into())),
    }
}

/// Removes `key` from `map` and converts it with `extract`. An absent or null value is
/// `None` (a violation when `required`); one `extract` refuses is `None` and a violation
/// of `field` with `expected`.
fn take<T>(
    v: &mut Violations,
    map: &mut Map<String, Value>,
    key: &str,
    field: &str,
    required: bool,
    expected: &str,
    extract: impl FnOnce(Value) -> Option<T>,
) -> Option<T> {
    match map.remove(key) {
        None | Some(Value::Null) => {
            if required {
                v.add(field, "is required");
            }
            None
        }
        Some(value) => {
            let got = extract(value);
            if got.is_none() {
                v.add(field, expected);
            }
            got
        }
    }
}

fn take_agent_id(v: &mut Violations, payload: &mut Map<String, Value>) -> Option<AgentId> {
    take(v, payload, "agent_id", "payload.agent_id", true, "must be a UUID string", |id| {
        id.as_str().and_then(|s| Uuid::parse_str(s).ok()).map(AgentId)
    })
}

fn take_text(
    v: &mut Violations,
    payload: &mut Map<String, Value>,
    field: &str,
    max: usize,
    required: bool,
) -> Option<String> {
    let name = format!("payload.{field}");
    let text = take(v, payload, field, &name, required, "must be a string", |t| match t {
        Value::String(t) => Some(t),
        _ => None,
    })?;
    super::validate::check_text(v, &name, &text, max);
    Some(text)
}

/// `X-Webhook-Id`: 1 to 200 visible ASCII characters, else 400 (pure; public for the fuzz
/// targets).
pub fn check_delivery_id(id: &str) -> Result<&str> {
    let ok = !id.is_empty() && id.len() <= MAX_DELIVERY_ID_LEN && id.bytes().all(|b| b.is_ascii_graphic());
    if ok {
        Ok(id)
    } else {
        Err(DomainError::BadRequest(format!(
            "X-Webhook-Id must be 1 to {MAX_DELIVERY_ID_LEN} visible ASCII characters"
        )))
    }
}

/// The audit record id of a tenant's delivery: a name-based UUID (version 8, SHA-256 of
/// the tenant and the delivery id), so a repeat names the same record.
pub fn delivery_record_id(tenant: Uuid, delivery_id: &str) -> Uuid {
    let mut hasher = Sha256::new();
    hasher.update(b"agentgov webhook delivery v1\0");
    hasher.update(tenant.as_bytes());
    hasher.update(delivery_id.as_bytes());
    let digest = hasher.finalize();
    let mut bytes = [0u8; 16];
    bytes.copy_from_slice(&digest[..16]);
    uuid::Builder::from_custom_bytes(bytes).into_uuid()
}
