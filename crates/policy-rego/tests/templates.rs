//! Every built-in template (`agentgov_domain::services::policies::templates`) against the
//! real engine: its allow, deny and approval cases, at its defaults and with parameters.
#![expect(clippy::unwrap_used, reason = "test code: a failed unwrap is a failed test")]

use agentgov_domain::ids::PolicyId;
use agentgov_domain::model::JsonObject;
use agentgov_domain::ports::{PolicyEngine, PolicyModule, PolicyOutcome};
use agentgov_domain::services::policies::templates::{self, TEMPLATES};
use agentgov_policy_rego::RegoEngine;
use serde_json::{Value, json};

/// Monday 2026-11-23 10:00 UTC.
const MONDAY_10: i64 = 1_795_428_000_000_000_000;
/// Saturday 2026-11-28 10:00 UTC.
const SATURDAY_10: i64 = 1_795_860_000_000_000_000;
/// Monday 2026-11-23 20:00 UTC.
const MONDAY_20: i64 = 1_795_464_000_000_000_000;
/// Monday 2026-11-23 15:00 UTC (10:00 in New York).
const MONDAY_15: i64 = 1_795_446_000_000_000_000;
/// Monday 2026-11-23 02:00 UTC (Sunday 21:00 in New York).
const MONDAY_02: i64 = 1_795_399_200_000_000_000;

/// An input document shaped as `PolicyService` builds it.
struct Input(Value);

impl Input {
    fn new(action: &str, resource: &str) -> Self {
        Input(json!({
            "agent": {
                "id": "0193a4c2-0000-7000-8000-0000000000aa", "name": "bot", "type": "support",
                "capabilities": ["refund charge", "lookup order"], "permissions": {}, "status": "active",
                "risk": "low", "risk_score": 0.1, "metadata": {}
            },
            "action": action,
            "resource": resource,
            "context": {},
            "tenant": {"id": "0193a4c2-0000-7000-8000-0000000000bb", "approval_threshold": 0.8},
            "time": {"now": "2026-11-23T10:00:00Z", "now_ns": MONDAY_10},
            "risk": {"score": 0.2, "level": "low", "factors": []}
        }))
    }

    fn context(mut self, context: Value) -> Self {
        self.0["context"] = context;
        self
    }

    fn risk(mut self, score: f64) -> Self {
        self.0["risk"]["score"] = json!(score);
        self
    }

    fn agent(mut self, field: &str, value: Value) -> Self {
        self.0["agent"][field] = value;
        self
    }

    fn session(mut self, session: Value) -> Self {
        self.0["session"] = session;
        self
    }

    fn at(mut self, now_ns: i64) -> Self {
        self.0["time"]["now_ns"] = json!(now_ns);
        self
    }
}

#[derive(Debug, PartialEq, Eq, Clone, Copy)]
enum Decision {
    Allow,
    Deny,
    Approval,
}

fn outcome(template: &str, parameters: Value, input: &Input) -> PolicyOutcome {
    let template = templates::find(template).unwrap();
    let parameters: JsonObject = serde_json::from_value(parameters).unwrap();
    let rego = template.instantiate(&parameters, "parameters").unwrap();
    let engine = RegoEngine::new().unwrap();
    engine.validate(&rego).unwrap_or_else(|d| panic!("{} does not compile: {d:?}\n{rego}", template.id));
    let module = PolicyModule { id: policy_id(1), version: 1, name: template.id.into(), rego, shadow: false };
    let compiled = engine.compile(&[module]).unwrap();
    compiled.evaluate_json(&input.0).unwrap().remove(0)
}

fn policy_id(n: usize) -> PolicyId {
    format!("00000000-0000-7000-8000-{n:012}").parse().unwrap()
}

fn decide(template: &str, parameters: Value, input: Input) -> Decision {
    let out = outcome(template, parameters, &input);
    assert_eq!(out.error, None, "{template}: {out:?}");
    match (out.deny.is_empty(), out.require_approval.is_empty()) {
        (false, _) => Decision::Deny,
        (true, false) => Decision::Approval,
        (true, true) => Decision::Allow,
    }
}

use Decision::*;

#[test]
fn every_template_compiles_at_its_defaults() {
    let engine = RegoEngine::new().unwrap();
    for t in TEMPLATES {
        engine.validate(&t.rego()).unwrap_or_else(|d| panic!("{}: {d:?}", t.id));
    }
}

#[test]
fn deny_destructive_production() {
    let t = "deny-destructive-production";
    assert_eq!(decide(t, json!({}), Input::new("delete", "prod/db/customers")), Deny);
    assert_eq!(decide(t, json!({}), Input::new("DROP_TABLE", "warehouse.production.orders")), Deny);
    assert_eq!(decide(t, json!({}), Input::new("delete", "staging/db/customers")), Allow);
    assert_eq!(decide(t, json!({}), Input::new("read", "prod/db/customers")), Allow);
    assert_eq!(decide(t, json!({}), Input::new("delete", "products/42")), Allow, "`products` is not `prod`");
    let env = Input::new("truncate", "db/orders").context(json!({"environment": "Production"}));
    assert_eq!(decide(t, json!({}), env), Deny);
    assert_eq!(decide(t, json!({"production_markers": ["prd"]}), Input::new("delete", "prd-db/x")), Deny);
    assert_eq!(decide(t, json!({"production_markers": ["prd"]}), Input::new("delete", "prod/x")), Allow);
    let message = outcome(t, json!({}), &Input::new("delete", "prod/db")).deny;
    assert_eq!(message, [r#"destructive action "delete" on production resource "prod/db" is not allowed"#]);
}

#[test]
fn require_consent_personal_data() {
    let t = "require-consent-personal-data";
    assert_eq!(decide(t, json!({}), Input::new("read", "crm/customers")), Deny);
    assert_eq!(decide(t, json!({}), Input::new("read", "crm/customers").context(json!({"consent": true}))), Allow);
    assert_eq!(decide(t, json!({}), Input::new("read", "crm/customers").context(json!({"consent": "yes"}))), Deny);
    assert_eq!(decide(t, json!({}), Input::new("read", "docs/handbook")), Allow);
    let flagged = Input::new("export", "reports/q3").context(json!({"contains_pii": true}));
    assert_eq!(decide(t, json!({}), flagged), Deny);
    assert_eq!(decide(t, json!({"effect": "approval"}), Input::new("read", "hr/employees")), Approval);
    assert_eq!(decide(t, json!({"resource_markers": ["ledger"]}), Input::new("read", "crm/customers")), Allow);
}

#[test]
fn approval_above_risk() {
    let t = "approval-above-risk";
    assert_eq!(decide(t, json!({}), Input::new("read", "x").risk(0.6)), Approval);
    assert_eq!(decide(t, json!({}), Input::new("read", "x").risk(0.59)), Allow);
    assert_eq!(decide(t, json!({"threshold": 0.3}), Input::new("read", "x").risk(0.4)), Approval);
}

#[test]
fn capability_scope() {
    let t = "capability-scope";
    assert_eq!(decide(t, json!({}), Input::new("refund charge", "orders/1")), Allow, "named exactly");
    assert_eq!(decide(t, json!({}), Input::new("refund_charge", "orders/1")), Allow);
    assert_eq!(decide(t, json!({}), Input::new("Lookup-Order", "orders/1")), Allow);
    assert_eq!(decide(t, json!({}), Input::new(" GET ", "orders/1")), Allow, "always allowed, normalized");
    assert_eq!(decide(t, json!({}), Input::new("read", "orders/1")), Allow, "always allowed");
    assert_eq!(decide(t, json!({}), Input::new("delete_account", "users/1")), Deny);
    assert_eq!(decide(t, json!({"effect": "approval"}), Input::new("delete_account", "users/1")), Approval);
    assert_eq!(decide(t, json!({"always_allowed": []}), Input::new("read", "orders/1")), Deny);
    let none = Input::new("refund_charge", "orders/1").agent("capabilities", json!([]));
    assert_eq!(decide(t, json!({}), none), Deny);
}

#[test]
fn resource_allow_list() {
    let t = "resource-allow-list";
    let allow = json!({"allow": {"bot": ["orders/*", "tickets/**"]}});
    assert_eq!(decide(t, allow.clone(), Input::new("read", "orders/42")), Allow);
    assert_eq!(decide(t, allow.clone(), Input::new("read", "tickets/2026/7")), Allow);
    assert_eq!(decide(t, allow.clone(), Input::new("read", "orders/42/items")), Deny, "* stays within a segment");
    assert_eq!(decide(t, allow.clone(), Input::new("read", "payments/1")), Deny);
    let other = Input::new("read", "payments/1").agent("name", json!("other"));
    assert_eq!(decide(t, allow.clone(), other), Allow, "unlisted agents pass by default");
    let strict = json!({"allow": {"bot": ["orders/*"]}, "allow_unlisted": false});
    let other = Input::new("read", "orders/1").agent("name", json!("other"));
    assert_eq!(decide(t, strict, other), Deny);
    let by_id = json!({"allow": {"0193a4c2-0000-7000-8000-0000000000aa": ["orders/*"]}});
    assert_eq!(decide(t, by_id, Input::new("read", "payments/1")), Deny, "listed by id");
    assert_eq!(decide(t, json!({}), Input::new("read", "anything")), Allow);
}

#[test]
fn business_hours() {
    let t = "business-hours";
    assert_eq!(decide(t, json!({}), Input::new("read", "x").at(MONDAY_10)), Allow);
    assert_eq!(decide(t, json!({}), Input::new("read", "x").at(SATURDAY_10)), Deny);
    assert_eq!(decide(t, json!({}), Input::new("read", "x").at(MONDAY_20)), Deny);
    let ny = json!({"timezone": "America/New_York"});
    assert_eq!(decide(t, ny.clone(), Input::new("read", "x").at(MONDAY_15)), Allow);
    assert_eq!(decide(t, ny, Input::new("read", "x").at(MONDAY_02)), Deny, "Sunday evening in New York");
    assert_eq!(decide(t, json!({"effect": "approval"}), Input::new("read", "x").at(SATURDAY_10)), Approval);
    let always = json!({"start_hour": 0, "end_hour": 24, "days": ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"]});
    assert_eq!(decide(t, always, Input::new("read", "x").at(SATURDAY_10)), Allow);
}

#[test]
fn block_inactive_agents() {
    let t = "block-inactive-agents";
    assert_eq!(decide(t, json!({}), Input::new("read", "x")), Allow);
    assert_eq!(decide(t, json!({}), Input::new("read", "x").agent("status", json!("suspended"))), Deny);
    assert_eq!(decide(t, json!({}), Input::new("read", "x").agent("status", json!("inactive"))), Deny);
    let only_suspended = json!({"statuses": ["suspended"]});
    assert_eq!(decide(t, only_suspended, Input::new("read", "x").agent("status", json!("inactive"))), Allow);
}

#[test]
fn bulk_operation_cap() {
    let t = "bulk-operation-cap";
    assert_eq!(decide(t, json!({}), Input::new("update", "x").context(json!({"record_count": 5000}))), Deny);
    assert_eq!(decide(t, json!({}), Input::new("update", "x").context(json!({"record_count": 1000}))), Allow);
    assert_eq!(decide(t, json!({}), Input::new("update", "x")), Allow);
    assert_eq!(
        decide(t, json!({}), Input::new("update", "x").context(json!({"count": "5000"}))),
        Allow,
        "not a number"
    );
    let approval = json!({"effect": "approval", "max_records": 10});
    assert_eq!(decide(t, approval, Input::new("update", "x").context(json!({"batch_size": 11}))), Approval);
    let custom = json!({"count_keys": ["rows"]});
    assert_eq!(decide(t, custom, Input::new("update", "x").context(json!({"rows": 2000}))), Deny);
    let message = outcome(t, json!({}), &Input::new("update", "x").context(json!({"records": 1500}))).deny;
    assert_eq!(message, ["affects 1500 records; at most 1000 are allowed at once"]);
}

#[test]
fn deny_critical_risk() {
    let t = "deny-critical-risk";
    assert_eq!(decide(t, json!({}), Input::new("read", "x").risk(0.9)), Deny);
    assert_eq!(decide(t, json!({}), Input::new("read", "x").risk(0.5)), Allow);
    assert_eq!(decide(t, json!({"ceiling": 0.5}), Input::new("read", "x").risk(0.5)), Deny);
}

/// A session as `input.session` carries it, with `labels`.
fn session(labels: &[&str]) -> Value {
    json!({
        "id": "s", "events": 3, "checks": 2, "labels": labels, "sensitivity": 0, "observations": 1,
        "approvals": 0, "spend": 0, "rate": {"last_minute": 2, "last_hour": 2},
        "decisions": {"allow": 2, "deny": 0, "require_approval": 0}, "actions": {"read": 2}
    })
}

#[test]
fn label_sensitive_reads() {
    let t = "label-sensitive-reads";
    let labels = |action: &str, resource: &str| outcome(t, json!({}), &Input::new(action, resource)).labels;
    assert_eq!(labels("read", "vault/db-password"), ["secret_read"]);
    assert_eq!(labels("get_security_code", "inbox"), ["secret_read"]);
    assert_eq!(labels("get_iban", "bank"), ["pii_read"]);
    assert_eq!(labels("read_file", "hr/salary.csv"), ["pii_read"]);
    assert_eq!(labels("read", "secrets/patients"), ["pii_read", "secret_read"]);
    assert!(labels("read", "docs/handbook").is_empty());
    assert!(labels("read", "tokenizer/config").is_empty(), "a word, not a substring");
    assert_eq!(decide(t, json!({}), Input::new("read", "vault/x")), Allow);
    let custom = outcome(t, json!({"secret_markers": ["keys"]}), &Input::new("read", "kms/keys")).labels;
    assert_eq!(custom, ["secret_read"]);
}

#[test]
fn rule_of_two() {
    let t = "rule-of-two";
    let send = |labels: &[&str]| Input::new("send_email", "mail/outbox").session(session(labels));
    assert_eq!(decide(t, json!({}), send(&["untrusted_content_seen", "secret_read"])), Approval);
    assert_eq!(decide(t, json!({"effect": "deny"}), send(&["untrusted_input", "pii_read"])), Deny);
    assert_eq!(decide(t, json!({}), send(&["untrusted_content_seen"])), Allow, "no sensitive data: two of three");
    assert_eq!(decide(t, json!({}), send(&["secret_read"])), Allow, "no untrusted input");
    let by_default = json!({"sensitive_by_default": true});
    assert_eq!(decide(t, by_default.clone(), send(&["untrusted_content_seen"])), Approval);
    let read = Input::new("read_file", "docs/x").session(session(&["untrusted_content_seen", "secret_read"]));
    assert_eq!(decide(t, json!({}), read), Allow, "not outbound");
    assert_eq!(decide(t, by_default, Input::new("send_money", "bank")), Allow, "no session, no untrusted input");
}

#[test]
fn no_send_after_secret() {
    let t = "no-send-after-secret";
    let after = |action: &str, labels: &[&str]| Input::new(action, "x").session(session(labels));
    assert_eq!(decide(t, json!({}), after("send_email", &["secret_read"])), Deny);
    assert_eq!(decide(t, json!({}), after("http_post", &["secret_read"])), Deny);
    assert_eq!(decide(t, json!({"effect": "approval"}), after("upload_file", &["secret_read"])), Approval);
    assert_eq!(decide(t, json!({}), after("send_email", &["pii_read"])), Allow);
    assert_eq!(decide(t, json!({}), after("read_file", &["secret_read"])), Allow);
    assert_eq!(decide(t, json!({}), Input::new("send_email", "x")), Allow, "no session");
}

#[test]
fn instructed_values() {
    let t = "instructed-values";
    let with = |action: &str, values: &[&str]| {
        let mut s = session(&[]);
        s["instructed_values"] = json!(values);
        Input::new(action, "x").session(s)
    };
    assert_eq!(decide(t, json!({}), with("send_email", &["mark@evil.example"])), Approval);
    assert_eq!(decide(t, json!({}), with("get_webpage", &["true-informations.com"])), Approval);
    assert_eq!(decide(t, json!({"effect": "deny"}), with("send_money", &["us133000000121212121212"])), Deny);
    assert_eq!(decide(t, json!({}), with("send_email", &[])), Allow, "no instructed value in the arguments");
    assert_eq!(decide(t, json!({}), with("read_inbox", &["mark@evil.example"])), Allow, "not an outbound action");
    assert_eq!(decide(t, json!({"actions": []}), with("read_inbox", &["mark@evil.example"])), Approval, "every action");
    assert_eq!(decide(t, json!({}), Input::new("send_email", "x")), Allow, "no session");
    let message = outcome(t, json!({}), &with("send_email", &["a@b.example", "c.example"])).require_approval;
    assert_eq!(
        message,
        ["\"send_email\" uses a@b.example, c.example, which content shown to the agent told it to use"]
    );
}

#[test]
fn session_caps() {
    let t = "session-caps";
    let with = |spend: f64, minute: u64, checks: u64| {
        let mut s = session(&[]);
        s["spend"] = json!(spend);
        s["rate"]["last_minute"] = json!(minute);
        s["checks"] = json!(checks);
        s
    };
    let pay = |cost: Value, s: Value| Input::new("pay", "x").context(json!({"cost": cost})).session(s);
    assert_eq!(decide(t, json!({}), pay(json!(10), with(80.0, 1, 1))), Allow);
    assert_eq!(decide(t, json!({}), pay(json!(30), with(80.0, 1, 1))), Deny);
    assert_eq!(decide(t, json!({}), pay(json!("lots"), with(80.0, 1, 1))), Allow, "a cost that is not a number is 0");
    assert_eq!(decide(t, json!({}), pay(json!(0), with(0.0, 60, 1))), Deny);
    assert_eq!(decide(t, json!({}), pay(json!(0), with(0.0, 59, 999))), Allow);
    assert_eq!(decide(t, json!({}), pay(json!(0), with(0.0, 1, 1000))), Deny);
    assert_eq!(decide(t, json!({"effect": "approval", "max_spend": 5}), pay(json!(6), with(0.0, 1, 1))), Approval);
    let message = outcome(t, json!({}), &pay(json!(30), with(80.0, 1, 1))).deny;
    assert_eq!(message, ["session spend 110 would pass its cap of 100"]);
    assert_eq!(decide(t, json!({}), Input::new("pay", "x").context(json!({"cost": 1000}))), Allow, "no session");
}

#[test]
fn five_templates_together_decide_independently() {
    let engine = RegoEngine::new().unwrap();
    let ids = [
        "deny-destructive-production",
        "require-consent-personal-data",
        "approval-above-risk",
        "capability-scope",
        "bulk-operation-cap",
    ];
    let modules: Vec<PolicyModule> = ids
        .iter()
        .enumerate()
        .map(|(i, id)| PolicyModule {
            id: policy_id(i),
            version: 1,
            name: (*id).into(),
            rego: templates::find(id).unwrap().rego(),
            shadow: false,
        })
        .collect();
    let compiled = engine.compile(&modules).unwrap();
    let input = Input::new("delete", "prod/customers").risk(0.7);
    let outcomes = compiled.evaluate_json(&input.0).unwrap();
    let decided: Vec<(bool, bool)> =
        outcomes.iter().map(|o| (!o.deny.is_empty(), !o.require_approval.is_empty())).collect();
    assert_eq!(decided, [(true, false), (true, false), (false, true), (true, false), (false, false)]);
}
