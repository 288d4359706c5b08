//! The check's JSON input as a regorus value, built directly: about twice as fast as
//! regorus's serde path (`Value::deserialize`), which matters once per check. The input's
//! `agent` member comes from a shared store of converted agents ([`AgentValues`]), keyed by
//! the `Arc` the domain hands over for every check of one agent snapshot.

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex};

use agentgov_domain::ports::PolicyInput;
use regorus::Value;

/// Converted agents, at most this many; past that the store starts over.
const AGENTS: usize = 4096;

/// The agents of recent checks as regorus values, keyed by the address of the domain's JSON,
/// which is held here too, so the address cannot be reused while its entry exists.
#[derive(Default)]
pub(crate) struct AgentValues {
    kept: Mutex<HashMap<usize, (Arc<serde_json::Value>, Value)>>,
}

impl AgentValues {
    /// `input` as one regorus value, its `agent` member converted once per agent snapshot.
    pub(crate) fn input(&self, input: &PolicyInput) -> Value {
        let mut members: BTreeMap<Value, Value> =
            input.rest.iter().map(|(k, v)| (Value::from(k.as_str()), to_value(v))).collect();
        members.insert(Value::from("agent"), self.agent(&input.agent));
        Value::from(members)
    }

    fn agent(&self, agent: &Arc<serde_json::Value>) -> Value {
        let key = Arc::as_ptr(agent) as usize;
        let Ok(mut kept) = self.kept.lock() else { return to_value(agent) };
        if let Some((_, value)) = kept.get(&key) {
            return value.clone();
        }
        if kept.len() >= AGENTS {
            kept.clear();
        }
        let value = to_value(agent);
        kept.insert(key, (Arc::clone(agent), value.clone()));
        value
    }
}

pub(crate) fn to_value(json: &serde_json::Value) -> Value {
    match json {
        serde_json::Value::Null => Value::Null,
        serde_json::Value::Bool(b) => Value::from(*b),
        serde_json::Value::Number(n) => match (n.as_i64(), n.as_u64()) {
            (Some(i), _) => Value::from(i),
            (None, Some(u)) => Value::from(u),
            // serde_json numbers are finite.
            (None, None) => Value::from(n.as_f64().unwrap_or_default()),
        },
        serde_json::Value::String(s) => Value::from(s.as_str()),
        serde_json::Value::Array(items) => Value::from(items.iter().map(to_value).collect::<Vec<_>>()),
        serde_json::Value::Object(fields) => {
            Value::from(fields.iter().map(|(k, v)| (Value::from(k.as_str()), to_value(v))).collect::<BTreeMap<_, _>>())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_input_is_its_document_and_an_agent_is_converted_once() {
        let document = serde_json::json!({"agent": {"id": "a", "capabilities": ["x"]}, "action": "read"});
        let input = PolicyInput::from(document.clone());
        let values = AgentValues::default();
        assert_eq!(values.input(&input), to_value(&document));
        assert_eq!(values.input(&input), to_value(&document));
        assert_eq!(values.kept.lock().unwrap().len(), 1);
        // Another snapshot of the agent (another allocation) is converted anew.
        let changed = PolicyInput { agent: Arc::new(serde_json::json!({"id": "a"})), ..input };
        assert_eq!(values.input(&changed)["agent"], to_value(&serde_json::json!({"id": "a"})));
        assert_eq!(values.kept.lock().unwrap().len(), 2);
    }

    #[test]
    fn matches_regorus_json_parsing() {
        let json = serde_json::json!({
            "a": [1, -2, 3.5, 18446744073709551615u64, true, null, "x"],
            "nested": {"k": {"deep": []}, "empty": {}},
        });
        let expected = Value::from_json_str(&json.to_string()).unwrap();
        assert_eq!(to_value(&json), expected);
    }
}
