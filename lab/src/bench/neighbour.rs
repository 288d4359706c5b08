//! A noisy neighbour (issue 32, point 2): `GET /api/v1/health` at a steady rate, first with
//! the server otherwise idle, then while one tenant floods `POST /api/v1/policies/check`
//! under five policies that each burn their whole evaluation budget. Rego runs on the policy
//! pool, at most half of it for one tenant, so what everyone else sees should move little:
//! the health p99 under that load should stay within twice the idle one.

use std::time::Duration;

use anyhow::{Context, bail};
use serde_json::json;

use super::oha::{Load, Stop};
use super::policy::created;
use super::report::{NeighbourRow, Row, Success};
use xtask::http::Connection;
use xtask::server::Server;

pub const HEALTH_ENDPOINT: &str = "GET /api/v1/health";
/// The bystander: a few connections at a steady rate, as monitoring and other tenants' light
/// traffic would be.
pub const HEALTH_CONNECTIONS: u32 = 4;
pub const HEALTH_RATE: u32 = 200;
/// The hostile tenant's connections, each sending checks back to back.
pub const HOSTILE_CONNECTIONS: u32 = 32;
/// Policies that pass every static rule but loop until their budget stops them (the
/// integration test `a_tenant_whose_policies_burn_their_budget_gets_an_error_decision_and_others_answers`
/// uses the same).
const BURN: &str = "package burn.p{n}\n\ndeny contains \"never\" if {\n\tinput.action == \"read\"\n\tsome a in numbers.range(1, 10000)\n\tsome b in numbers.range(1, 10000)\n\ta * b == -1\n}\n";
const BURNING_POLICIES: usize = 5;
/// How long the hostile load runs before and after the bystander's measurement.
const LEAD: Duration = Duration::from_secs(2);

/// The idle health run, then the same run during the hostile tenant's flood.
pub fn run(server: &Server, mode: &str, measure: Duration) -> anyhow::Result<NeighbourRow> {
    let health = || {
        Load::get(format!("{}/api/v1/health", server.base), vec![], Stop::After(measure))
            .connections(HEALTH_CONNECTIONS)
            .rate(HEALTH_RATE)
    };
    let idle_json = health().run()?;
    let idle = Row::from_oha(mode, HEALTH_ENDPOINT, HEALTH_CONNECTIONS, Success::Status(200), &idle_json)?;

    let (key, body) = hostile_tenant(server)?;
    let flood = Load::post_json(
        format!("{}/api/v1/policies/check", server.base),
        vec![format!("X-API-Key: {key}")],
        body,
        Stop::After(measure + LEAD * 2),
    )
    .connections(HOSTILE_CONNECTIONS)
    .spawn();
    std::thread::sleep(LEAD);
    let loaded_json = health().run()?;
    let hostile_json = flood.join()?;
    let loaded = Row::from_oha(mode, HEALTH_ENDPOINT, HEALTH_CONNECTIONS, Success::Status(200), &loaded_json)?;
    let hostile = Row::from_oha(
        mode,
        "POST /api/v1/policies/check (5 budget-burning policies)",
        HOSTILE_CONNECTIONS,
        Success::Status(200),
        &hostile_json,
    )?;
    Ok(NeighbourRow { idle, loaded, hostile, hostile_statuses: hostile_json["statusCodeDistribution"].to_string() })
}

/// A tenant with an agent and [`BURNING_POLICIES`] burning policies: its API key and a
/// check's body (answered 200, denied with an error per policy).
fn hostile_tenant(server: &Server) -> anyhow::Result<(String, String)> {
    let credentials = server.tenant_credentials("bench-hostile")?;
    let key = vec![format!("X-API-Key: {}", credentials.api_key)];
    let bearer = vec![format!("Authorization: Bearer {}", credentials.access_token)];
    let mut connection = Connection::new(&server.base)?;
    let agent = json!({"name": "burner", "type": "llm", "capabilities": ["read"]});
    let registered = created(connection.post_json("/api/v1/agents/register", &key, &agent.to_string())?)
        .context("registering the hostile tenant's agent")?;
    let agent_id = registered["id"].as_str().context("a registered agent without id")?;
    for n in 0..BURNING_POLICIES {
        let body = json!({"name": format!("burn {n}"), "rego": BURN.replace("{n}", &n.to_string())});
        created(connection.post_json("/api/v1/policies", &bearer, &body.to_string())?)
            .with_context(|| format!("uploading burning policy {n}"))?;
    }
    let body = json!({"agent_id": agent_id, "action": "read", "resource": "db"}).to_string();
    let probe = connection.post_json("/api/v1/policies/check", &key, &body)?;
    if probe.status != 200 {
        bail!("the hostile tenant's check answered {}, expected 200: {}", probe.status, probe.body);
    }
    println!("    hostile check: {}", probe.body.chars().take(200).collect::<String>());
    Ok((credentials.api_key, body))
}
