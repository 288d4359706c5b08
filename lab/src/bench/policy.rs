//! Policy checks: `POST /api/v1/policies/check` at `CONCURRENCY` connections, in a tenant of
//! its own with one registered agent and five enabled policy templates, and the proof that
//! every check the server answered (200) is a `policy.decision` record in the tenant's audit
//! log afterwards.

use std::path::PathBuf;
use std::time::Duration;

use anyhow::{Context, bail};
use serde_json::{Value, json};

use super::audit;
use super::oha::{Body, CONCURRENCY, Load, Stop, status_count};
use super::report::{PolicyRow, Row, Success};
use xtask::http::{Connection, Response};
use xtask::server::{Credentials, Server};

pub const ENDPOINT: &str = "POST /api/v1/policies/check";

/// The agent every check is made for: a support agent that looks orders up and refunds
/// charges.
fn agent() -> Value {
    json!({
        "name": "support-refunds",
        "type": "support",
        "description": "Answers customers' questions about their orders and refunds damaged items through Stripe.",
        "capabilities": ["read", "refund charge", "lookup order"],
        "permissions": {"orders": "read", "stripe.refunds": "write"},
    })
}

/// The policies enabled in the tenant: a name, a template id and its parameters. Each is
/// evaluated on every check. `business-hours` is open every hour of every day (in UTC), so
/// its time builtins run on every check but the decision does not depend on when the
/// benchmark runs.
pub const POLICIES: [(&str, &str, &str); 5] = [
    ("no destructive production actions", "deny-destructive-production", "{}"),
    ("consent for personal data", "require-consent-personal-data", r#"{"effect": "approval"}"#),
    ("approval above risk 0.6", "approval-above-risk", r#"{"threshold": 0.6}"#),
    ("agents stay within their capabilities", "capability-scope", "{}"),
    (
        "around the clock",
        "business-hours",
        r#"{"timezone": "UTC", "start_hour": 0, "end_hour": 24, "days": ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"]}"#,
    ),
];

/// The check: the agent looks an order up in production, with the customer's consent. Every
/// policy above allows it.
pub(crate) fn check_body(agent_id: &str) -> String {
    json!({
        "agent_id": agent_id,
        "action": "lookup order",
        "resource": "orders/42",
        "context": {"consent": true, "environment": "production", "ticket": "T-1042", "channel": "chat"},
    })
    .to_string()
}

/// The filtered export that counts the tenant's `policy.decision` records.
const DECISIONS: (&str, &str, u64) = ("JSONL", "/api/v1/audit/export?event_type=policy.decision", 0);

/// Rounds of each side of a comparison measured in turns (`in_turns`); the labels below
/// name it.
pub const ROUNDS: usize = 5;

/// The same decision asked through OpenID AuthZEN 1.0 (one evaluation; the key as a bearer
/// token), as gateways and toolkits ask it, against the check on the same server, measured
/// in turns (`in_turns`).
pub const AUTHZEN_IN_TURNS: &str = "POST /access/v1/evaluation (in turns with the check, median of 5 rounds)";
pub const CHECK_IN_TURNS: &str = "POST /api/v1/policies/check (in turns with AuthZEN, median of 5 rounds)";
/// The same check naming a session (`session_id`), in turns with the two above: the session's
/// state read before and updated after every check. One session for every request: the
/// worst case, every check of the run contending for one session's state.
pub const SESSION_IN_TURNS: &str =
    "POST /api/v1/policies/check with a session_id (in turns with the check, median of 5 rounds)";
/// The one session of [`SESSION_IN_TURNS`].
const SESSION: &str = "bench-session-1";
/// The same check in one of [`SESSIONS`] sessions picked at random per request, in turns with
/// the others: the usual shape, each session with about one check in flight.
pub const SESSIONS_IN_TURNS: &str =
    "POST /api/v1/policies/check in one of 4,096 sessions (in turns with the check, median of 5 rounds)";
/// The sessions of [`SESSIONS_IN_TURNS`].
const SESSIONS: usize = 4096;

/// The checks on a fresh server exporting nothing, and on one exporting a span per decision.
pub const OTLP_OFF: &str = "POST /api/v1/policies/check (OTLP export off, median of 5 rounds)";
pub const OTLP_ON: &str = "POST /api/v1/policies/check (OTLP export on, median of 5 rounds)";

/// How a measured run asks for its decisions.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ask {
    /// `POST /api/v1/policies/check` with `X-API-Key`.
    Check,
    /// `POST /access/v1/evaluation` with `Authorization: Bearer <key>`.
    AuthZen,
    /// `POST /api/v1/policies/check` naming a session ([`SESSION`]).
    CheckInSession,
    /// `POST /api/v1/policies/check` naming one of [`SESSIONS`] sessions.
    CheckInSessions,
}

/// The check's body naming the session `session`.
fn in_session(check: &str, session: &str) -> anyhow::Result<String> {
    let mut check: Value = serde_json::from_str(check).context("the check's body")?;
    check["session_id"] = json!(session);
    Ok(check.to_string())
}

/// A file of [`SESSIONS`] check bodies, one per line, each naming a session of its own.
fn in_sessions(check: &str, tenant: &str) -> anyhow::Result<PathBuf> {
    let mut check: Value = serde_json::from_str(check).context("the check's body")?;
    let mut lines = String::new();
    for i in 0..SESSIONS {
        check["session_id"] = json!(format!("bench-session-{i}"));
        lines.push_str(&check.to_string());
        lines.push('\n');
    }
    let path = std::env::temp_dir().join(format!("agentgov-bench-{tenant}-{}.jsonl", std::process::id()));
    std::fs::write(&path, lines).with_context(|| format!("writing {}", path.display()))?;
    Ok(path)
}

/// The check's body as an AuthZEN evaluation: the agent as subject, the same action,
/// resource and context (the mapping adds `resource_type` to the context).
fn authzen_body(check: &str) -> anyhow::Result<String> {
    let check: Value = serde_json::from_str(check).context("the check's body")?;
    Ok(json!({
        "subject": {"type": "agent", "id": check["agent_id"]},
        "action": {"name": check["action"]},
        "resource": {"type": "orders", "id": check["resource"]},
        "context": check["context"],
    })
    .to_string())
}

/// Sets the tenant up ([`set_up`]), warms up, then runs exactly `checks` checks; the tenant's `policy.decision`
/// records are counted just before and after the measured run.
pub fn checks(server: &Server, mode: &str, warm_up: Duration, checks: u64) -> anyhow::Result<PolicyRow> {
    decisions(server, mode, ("bench-policies", ENDPOINT), Ask::Check, warm_up, checks)
}

/// As [`checks`], in a tenant of its own (`tenant`), the decisions asked as `ask` says; the
/// row is labelled `label`.
pub fn decisions(
    server: &Server,
    mode: &str,
    (tenant, label): (&str, &str),
    ask: Ask,
    warm_up: Duration,
    checks: u64,
) -> anyhow::Result<PolicyRow> {
    Decisions::prepare(server, tenant, ask, warm_up)?.measure(server, mode, label, Stop::Requests(checks))
}

/// A tenant set up, its decisions' request ready and warmed up, to be measured (again).
pub struct Decisions {
    api_key: String,
    url: String,
    headers: Vec<String>,
    body: Body,
}

impl Decisions {
    pub fn prepare(server: &Server, tenant: &str, ask: Ask, warm_up: Duration) -> anyhow::Result<Self> {
        let (credentials, check) = set_up(server, tenant)?;
        let (url, headers, body) = match ask {
            Ask::Check => (
                format!("{}/api/v1/policies/check", server.base),
                vec![format!("X-API-Key: {}", credentials.api_key)],
                Body::Json(check),
            ),
            Ask::AuthZen => (
                format!("{}/access/v1/evaluation", server.base),
                vec![format!("Authorization: Bearer {}", credentials.api_key)],
                Body::Json(authzen_body(&check)?),
            ),
            Ask::CheckInSession => (
                format!("{}/api/v1/policies/check", server.base),
                vec![format!("X-API-Key: {}", credentials.api_key)],
                Body::Json(in_session(&check, SESSION)?),
            ),
            Ask::CheckInSessions => (
                format!("{}/api/v1/policies/check", server.base),
                vec![format!("X-API-Key: {}", credentials.api_key)],
                Body::JsonLines(in_sessions(&check, tenant)?),
            ),
        };
        Load::post(url.clone(), headers.clone(), body.clone(), Stop::After(warm_up)).run()?;
        Ok(Decisions { api_key: credentials.api_key, url, headers, body })
    }

    /// Decisions until `stop`; the tenant's `policy.decision` records counted just before
    /// and after (requests in flight at a deadline finish, so every answer is counted).
    pub fn measure(&self, server: &Server, mode: &str, label: &str, stop: Stop) -> anyhow::Result<PolicyRow> {
        let before = audited(server, mode, &self.api_key)?;
        let json = Load::post(self.url.clone(), self.headers.clone(), self.body.clone(), stop).run()?;
        let after = audited(server, mode, &self.api_key)?;
        let load = Row::from_oha(mode, label, CONCURRENCY, Success::Status(200), &json)?;
        load.warn_unless_all_succeeded("decision", 200, &json);
        Ok(PolicyRow { load, answered: status_count(&json, "200"), audited: after.saturating_sub(before) })
    }
}

/// The file of bodies a side in many sessions wrote goes with the side.
impl Drop for Decisions {
    fn drop(&mut self) {
        if let Body::JsonLines(path) = &self.body {
            let _ = std::fs::remove_file(path);
        }
    }
}

/// A tenant `name` with the agent and the five policies enabled, and one check made by hand
/// (it must be 200 and allowed under every policy): the tenant admin's credentials and the
/// check's body.
pub fn set_up(server: &Server, name: &str) -> anyhow::Result<(Credentials, String)> {
    let credentials = server.tenant_credentials(name)?;
    let key = vec![format!("X-API-Key: {}", credentials.api_key)];
    let bearer = vec![format!("Authorization: Bearer {}", credentials.access_token)];
    let mut connection = Connection::new(&server.base)?;

    let registered = created(connection.post_json("/api/v1/agents/register", &key, &agent().to_string())?)
        .context("registering the agent")?;
    let agent_id = registered["id"].as_str().with_context(|| format!("a registered agent without id: {registered}"))?;
    for (name, template, parameters) in POLICIES {
        let parameters: Value = serde_json::from_str(parameters).context("a policy's parameters")?;
        let body = json!({"name": name, "template": {"id": template, "parameters": parameters}});
        created(connection.post_json("/api/v1/policies", &bearer, &body.to_string())?)
            .with_context(|| format!("enabling the {template} template"))?;
    }

    let body = check_body(agent_id);
    let probe = connection.post_json("/api/v1/policies/check", &key, &body)?;
    if probe.status != 200 {
        bail!("{ENDPOINT} answered {}, expected 200: {}", probe.status, probe.body);
    }
    let decision: Value = serde_json::from_str(&probe.body).with_context(|| format!("{ENDPOINT}: {}", probe.body))?;
    if decision["allowed"] != true || decision["policies_evaluated"] != POLICIES.len() {
        bail!("{ENDPOINT} did not allow the benchmark's check under all {} policies: {decision}", POLICIES.len());
    }
    println!(
        "    agent {agent_id}, {} policies: allowed {}, risk {} ({}), reason {}, decision {}",
        decision["policies_evaluated"],
        decision["allowed"],
        decision["risk_score"],
        decision["risk"],
        decision["reason"],
        decision["decision_id"]
    );
    Ok((credentials, body))
}

/// The JSON body of a response that must be 201.
pub(crate) fn created(response: Response) -> anyhow::Result<Value> {
    if response.status != 201 {
        bail!("answered {}, expected 201: {}", response.status, response.body);
    }
    serde_json::from_str(&response.body).with_context(|| format!("not JSON: {}", response.body))
}

/// How many `policy.decision` records the tenant's log holds: the lines of its filtered export.
fn audited(server: &Server, mode: &str, api_key: &str) -> anyhow::Result<u64> {
    let export = audit::export(server, mode, api_key, DECISIONS).context("counting the audited policy decisions")?;
    Ok(export.rows)
}

#[cfg(test)]
mod tests {
    use std::collections::HashSet;

    use super::*;

    #[test]
    fn five_distinct_templates_with_object_parameters() {
        let names: HashSet<&str> = POLICIES.iter().map(|p| p.0).collect();
        let templates: HashSet<&str> = POLICIES.iter().map(|p| p.1).collect();
        assert_eq!((names.len(), templates.len()), (5, 5));
        for (_, _, parameters) in POLICIES {
            assert!(serde_json::from_str::<Value>(parameters).unwrap().is_object(), "{parameters}");
        }
        let hours: Value = serde_json::from_str(POLICIES[4].2).unwrap();
        assert_eq!((hours["start_hour"].as_u64(), hours["end_hour"].as_u64()), (Some(0), Some(24)));
        assert_eq!(hours["days"].as_array().unwrap().len(), 7);
    }

    #[test]
    fn the_check_is_an_action_the_agent_declares() {
        let body: Value = serde_json::from_str(&check_body("0193a4c2-0000-7000-8000-0000000000aa")).unwrap();
        let capabilities = agent()["capabilities"].clone();
        assert!(capabilities.as_array().unwrap().contains(&body["action"]));
        assert_eq!(body["context"]["consent"], true);
        assert_eq!(body["agent_id"].as_str().map(str::len), Some(36));
    }

    #[test]
    fn the_authzen_evaluation_asks_the_same_decision() {
        let check = check_body("0193a4c2-0000-7000-8000-0000000000aa");
        let evaluation: Value = serde_json::from_str(&authzen_body(&check).unwrap()).unwrap();
        let check: Value = serde_json::from_str(&check).unwrap();
        assert_eq!(evaluation["subject"], json!({"type": "agent", "id": check["agent_id"]}));
        assert_eq!(evaluation["action"]["name"], check["action"]);
        assert_eq!(evaluation["resource"]["id"], check["resource"]);
        assert_eq!(evaluation["context"], check["context"]);
    }

    #[test]
    fn the_labels_of_comparisons_in_turns_name_the_rounds() {
        for label in [AUTHZEN_IN_TURNS, CHECK_IN_TURNS, SESSION_IN_TURNS, SESSIONS_IN_TURNS, OTLP_OFF, OTLP_ON] {
            assert!(label.ends_with(&format!("median of {ROUNDS} rounds)")), "{label}");
        }
        let sessions = format!("{},{:03}", SESSIONS / 1000, SESSIONS % 1000);
        assert!(SESSIONS_IN_TURNS.contains(&format!("one of {sessions} sessions")), "{SESSIONS_IN_TURNS}");
    }

    #[test]
    fn statuses_are_counted_from_oha_json() {
        let json = json!({"statusCodeDistribution": {"200": 9990, "503": 10}});
        assert_eq!((status_count(&json, "200"), status_count(&json, "404")), (9990, 0));
    }
}
