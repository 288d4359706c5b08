//! The OpenAPI 3.1 document: paths are collected from the handlers' `#[utoipa::path]` by
//! `utoipa-actix-web`; this adds the API's description, security schemes and the error
//! responses every operation shares.

use utoipa::openapi::path::ParameterIn;
use utoipa::openapi::security::{ApiKey, ApiKeyValue, HttpAuthScheme, HttpBuilder, SecurityScheme};
use utoipa::openapi::{Content, OpenApi as Doc, Ref, RefOr, ResponseBuilder};
use utoipa::{Modify, OpenApi};

use crate::problem::{PROBLEM_JSON, Problem};

#[derive(OpenApi)]
#[openapi(
    info(
        title = "agentgov",
        description = "Governs AI agents for many tenants: registry, policy decisions, audit, prompt screening, \
anomaly detection, human approval, shadow-agent discovery, users, tenants and SIEM forwarding.\n\n\
Errors are RFC 9457 `application/problem+json`. Lists take `limit` (1-500, default 50) and `cursor` and answer \
`{\"items\": [...], \"next_cursor\": \"...\" | null}`, newest first.",
        license(name = "Apache-2.0")
    ),
    components(schemas(Problem)),
    modifiers(&SecuritySchemes),
    tags(
        (name = "health", description = "Liveness, readiness, status and statistics"),
        (name = "auth", description = "Sign in and out"),
        (name = "users", description = "Users of a tenant"),
        (name = "api-keys", description = "API keys for agents and SDKs"),
        (name = "tenants", description = "Tenants (platform operator, X-Admin-Key)"),
        (name = "audit", description = "The tamper-evident audit log: entries, lists, verification, exports"),
        (name = "agents", description = "The agent registry: registration, heartbeats, semantic search"),
        (name = "policies", description = "Rego policies, templates and the policy check"),
        (name = "integrations", description = "Gateways that call agentgov in their own protocol: LiteLLM's Generic Guardrail API"),
        (name = "authzen", description = "OpenID AuthZEN Authorization API 1.0: access evaluations decided and audited as policy checks, and the PDP's metadata (served at the server's root, outside /api/v1)"),
        (name = "anomalies", description = "Anomaly reports about agents (file, list, count, label) and the tenant's trainable detector"),
        (name = "sessions", description = "Agent sessions: what a conversation or run has done and seen, read by its policy checks; content shown to the agent, screened"),
        (name = "hitl", description = "Human-in-the-loop approval requests: open, decide, follow (long-poll), callbacks"),
        (name = "feed", description = "The real-time WebSocket feed of the tenant's events"),
        (name = "discovery", description = "Shadow-agent discovery: ingest observed activity, cluster it into candidates, confirm or dismiss them"),
        (name = "guard", description = "Prompt Guard: injection, jailbreak and leakage screening; the trainable detector"),
        (name = "siem", description = "SIEM forwarding of the audit log (platform operator or Super Admin)"),
        (name = "webhook", description = "Signed inbound agent events (outside /api/v1)"),
    )
)]
pub struct ApiDoc;

struct SecuritySchemes;

impl Modify for SecuritySchemes {
    fn modify(&self, doc: &mut Doc) {
        let components = doc.components.get_or_insert_with(Default::default);
        components.add_security_scheme(
            "api_key",
            SecurityScheme::ApiKey(ApiKey::Header(ApiKeyValue::with_description(
                "X-API-Key",
                "A tenant API key, `agk_<8 chars>_<secret>`",
            ))),
        );
        components.add_security_scheme(
            "bearer",
            SecurityScheme::Http(
                HttpBuilder::new()
                    .scheme(HttpAuthScheme::Bearer)
                    .bearer_format("JWT")
                    .description(Some("The `access_token` of POST /auth/login"))
                    .build(),
            ),
        );
        components.add_security_scheme(
            "admin_key",
            SecurityScheme::ApiKey(ApiKey::Header(ApiKeyValue::with_description(
                "X-Admin-Key",
                "The platform operator's key (AGENTGOV_ADMIN_KEY)",
            ))),
        );
    }
}

/// Adds the problem responses that follow from an operation's shape (body, credentials,
/// query), unless the operation documents that status itself. Applied after the paths are
/// collected.
pub(crate) struct SharedErrors;

impl Modify for SharedErrors {
    fn modify(&self, doc: &mut Doc) {
        let problem = |description: &str| {
            ResponseBuilder::new()
                .description(description)
                .content(PROBLEM_JSON, Content::new(Some(Ref::from_schema_name("Problem"))))
                .build()
        };
        for item in doc.paths.paths.values_mut() {
            let ops = [&mut item.get, &mut item.put, &mut item.post, &mut item.delete, &mut item.patch];
            for op in ops.into_iter().flatten() {
                let secured = op.security.as_ref().is_some_and(|s| !s.is_empty());
                let has_body = op.request_body.is_some();
                let has_in = |place: ParameterIn| {
                    op.parameters
                        .as_ref()
                        .is_some_and(|ps| ps.iter().any(|p| matches!(p, RefOr::T(p) if p.parameter_in == place)))
                };
                let (has_query, has_path) = (has_in(ParameterIn::Query), has_in(ParameterIn::Path));
                let mut shared: Vec<(&str, &str)> = Vec::new();
                if has_body {
                    shared.push(("400", "The body is not valid JSON"));
                    shared.push(("413", "The body is larger than the configured limit"));
                    shared.push(("415", "The body is not JSON"));
                }
                if has_path {
                    shared.push(("404", "No such resource in the tenant (a malformed id, or another tenant's, alike)"));
                }
                if has_body || has_query {
                    shared.push(("422", "Invalid fields; `errors` names each one"));
                }
                if secured {
                    shared.push(("401", "Missing, invalid, expired or revoked credentials"));
                    shared.push(("403", "Authenticated, but the role or key permissions do not allow this"));
                    shared.push(("503", "A backing service (database, cache) is unavailable"));
                }
                shared.push(("500", "A bug; the body holds no internals"));
                for (status, description) in shared {
                    op.responses.responses.entry(status.to_owned()).or_insert_with(|| problem(description).into());
                }
                // Every error is a problem document, whatever content type a handler's
                // annotation gave it.
                for (status, response) in op.responses.responses.iter_mut() {
                    if let (RefOr::T(response), Some(b'4' | b'5')) = (response, status.as_bytes().first())
                        && let Some(content) = response.content.shift_remove("application/json")
                    {
                        response.content.entry(PROBLEM_JSON.to_owned()).or_insert(content);
                    }
                }
            }
        }
        unique_operation_ids(doc);
    }
}

/// Handlers of different areas share names (`list`, `get`, `create`…), and so their
/// operation ids: an id used more than once becomes `<tag>_<id>`, so each is unique (SDK
/// generators key methods on them).
fn unique_operation_ids(doc: &mut Doc) {
    let mut counts = std::collections::HashMap::<String, usize>::new();
    for item in doc.paths.paths.values() {
        for op in [&item.get, &item.put, &item.post, &item.delete, &item.patch].into_iter().flatten() {
            if let Some(id) = &op.operation_id {
                *counts.entry(id.clone()).or_default() += 1;
            }
        }
    }
    for item in doc.paths.paths.values_mut() {
        let ops = [&mut item.get, &mut item.put, &mut item.post, &mut item.delete, &mut item.patch];
        for op in ops.into_iter().flatten() {
            let tag = op.tags.as_ref().and_then(|t| t.first()).map(|t| t.replace('-', "_"));
            if let (Some(id), Some(tag)) = (&op.operation_id, tag)
                && counts.get(id).is_some_and(|n| *n > 1)
            {
                op.operation_id = Some(format!("{tag}_{id}"));
            }
        }
    }
}

/// What the service enforces across the members of a request body, which the derives cannot
/// say: each named schema becomes `allOf` of itself and these (a member given as `null` counts
/// as left out, so "given" is "present and not null").
pub(crate) struct CrossField;

impl CrossField {
    fn constraints() -> Vec<(&'static str, serde_json::Value)> {
        use serde_json::json;
        let given = |name: &str, kind: &str| json!({"type": "object", "required": [name], "properties": {name: {"type": kind}}});
        let client_event_type = agentgov_domain::model::audit::client_event_type_pattern();
        vec![
            // The service's own namespaces are refused.
            (
                "NewAuditEntry",
                json!({"type": "object", "properties": {"event_type": {"type": "string", "pattern": client_event_type}}}),
            ),
            (
                "FeedbackRequest",
                json!({"allOf": [
                    // A stored validation by id, or the text itself: one of the two.
                    {"oneOf": [given("validation_id", "string"), given("prompt", "string")]},
                    // A category only says what kind of attack it is.
                    {"anyOf": [
                        {"type": "object", "properties": {"label": {"type": "string", "enum": ["attack"]}}},
                        {"type": "object", "properties": {"category": {"type": "null"}}},
                    ]},
                ]}),
            ),
            ("PolicyRequest", json!({"oneOf": [given("rego", "string"), given("template", "object")]})),
            (
                "IngestEvent",
                json!({"anyOf": [
                    given("host", "string"), given("ip", "string"), given("user_agent", "string"),
                    given("process", "string"), given("endpoint", "string"), given("model", "string"),
                    given("api_key_fingerprint", "string"), given("agent_id", "string"),
                    {"type": "object", "required": ["tool_calls"], "properties": {"tool_calls": {"type": "array", "items": {"type": "string"}, "minItems": 1}}},
                ]}),
            ),
        ]
    }
}

impl Modify for CrossField {
    fn modify(&self, doc: &mut Doc) {
        let Some(components) = doc.components.as_mut() else { return };
        for (name, extra) in Self::constraints() {
            let extra = match serde_json::from_value::<utoipa::openapi::Schema>(extra) {
                Ok(extra) => extra,
                Err(e) => {
                    debug_assert!(false, "the constraint of {name} does not parse: {e}");
                    continue;
                }
            };
            let Some(schema) = components.schemas.remove(name) else {
                debug_assert!(false, "no schema {name}");
                continue;
            };
            let both = utoipa::openapi::schema::AllOfBuilder::new().item(schema).item(extra).build();
            components.schemas.insert(name.to_owned(), utoipa::openapi::Schema::AllOf(both).into());
        }
    }
}

/// utoipa writes each `Page<T>` (`Page_Agent`, …) with `T`'s schema copied inline as its
/// items; a client generated from the document would then get a second, unrelated type per
/// page. Where the copy is exactly the component `T`, it becomes a reference to it.
pub(crate) struct PageRefs;

impl Modify for PageRefs {
    fn modify(&self, doc: &mut Doc) {
        use utoipa::openapi::schema::{ArrayItems, Schema};
        let Some(components) = doc.components.as_mut() else { return };
        let pages: Vec<String> = components.schemas.keys().filter(|n| n.starts_with("Page_")).cloned().collect();
        for page in pages {
            let item = page.trim_start_matches("Page_").to_owned();
            let Some(target) = components.schemas.get(&item).map(serde_json::to_value) else { continue };
            let Some(RefOr::T(Schema::Object(object))) = components.schemas.get_mut(&page) else { continue };
            let Some(RefOr::T(Schema::Array(items))) = object.properties.get_mut("items") else { continue };
            let ArrayItems::RefOrSchema(inline) = &items.items else { continue };
            if serde_json::to_value(inline.as_ref()).ok() == target.ok() {
                items.items = ArrayItems::RefOrSchema(Box::new(RefOr::Ref(Ref::from_schema_name(item))));
            }
        }
    }
}
