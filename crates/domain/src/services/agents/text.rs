//! What the models see of an agent: its permissions flattened to (resource, access) pairs,
//! and the text its embedding is made from.

use serde_json::Value;

use crate::model::{Agent, JsonObject};

/// How deep nested permission objects are followed.
const MAX_DEPTH: usize = 4;

/// `{"payments": "write", "crm": ["read", "write"], "db": {"customers": "admin"}, "shell": true}`
/// becomes `(payments, write), (crm, read), (crm, write), (db.customers, admin), (shell, true)`.
/// Numbers and other scalars keep their JSON text; `null` and `false` grant nothing.
pub fn flatten_permissions(permissions: &JsonObject) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for (key, value) in permissions {
        flatten(key, value, 0, &mut out);
    }
    out
}

fn flatten(key: &str, value: &Value, depth: usize, out: &mut Vec<(String, String)>) {
    match value {
        Value::Null | Value::Bool(false) => {}
        Value::Bool(true) => out.push((key.to_owned(), "true".to_owned())),
        Value::String(s) => out.push((key.to_owned(), s.clone())),
        Value::Number(n) => out.push((key.to_owned(), n.to_string())),
        Value::Array(items) if depth < MAX_DEPTH => {
            for item in items {
                flatten(key, item, depth + 1, out);
            }
        }
        Value::Object(map) if depth < MAX_DEPTH => {
            for (k, v) in map {
                flatten(&format!("{key}.{k}"), v, depth + 1, out);
            }
        }
        // Too deep to follow: the resource is still named, with unknown access.
        Value::Array(_) | Value::Object(_) => out.push((key.to_owned(), "unknown".to_owned())),
    }
}

/// The text an agent is embedded from (metadata is operational detail and left out, so
/// heartbeats that only change metadata keep the same vector).
pub fn embedding_text(agent: &Agent, permissions: &[(String, String)]) -> String {
    agentgov_detect::embed::agent_text(
        &agent.name,
        &agent.agent_type,
        agent.description.as_deref(),
        &agent.capabilities,
        permissions,
    )
}
