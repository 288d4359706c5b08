//! OpenID AuthZEN Authorization API 1.0 over HTTP, written from the specification: the
//! evaluation's request and response shapes, the batch's defaults, overrides and three
//! semantics (with the shortened answers of its examples), the metadata, `X-Request-ID`,
//! errors, credentials, and each decision audited as a policy check.
use agentgov_tests::*;
use serde_json::{Value, json};

/// Denies deletes; requires approval for payments; allows the rest.
const POLICY: &str = r#"package acme.authzen

import rego.v1

deny contains msg if {
	input.action == "delete"
	msg := sprintf("no deleting %s", [input.resource])
}

require_approval contains "payments need a person" if {
	input.action == "pay"
}
"#;

struct Setup {
    app: TestApp,
    t: Tenant,
    agent: String,
}

async fn setup() -> Setup {
    let app = spawn_app().await;
    let t = app.create_tenant("authzen").await;
    let body = json!({"name": "No deletes", "rego": POLICY});
    expect(app.post("/policies").bearer_auth(&t.token).json(&body), 201).await;
    let body = json!({"name": "travel-agent", "type": "llm", "capabilities": ["read"], "permissions": {}});
    let agent = expect(app.post("/agents/register").header("X-API-Key", &t.api_key).json(&body), 201).await;
    let agent = agent["id"].as_str().unwrap().to_owned();
    Setup { app, t, agent }
}

fn evaluation(agent: &str, action: &str, resource: &str) -> Value {
    json!({
        "subject": {"type": "agent", "id": agent},
        "action": {"name": action},
        "resource": {"type": "table", "id": resource},
        "context": {"environment": "staging"}
    })
}

async fn evaluate(s: &Setup, body: &Value) -> Value {
    expect(s.app.post("/access/v1/evaluation").bearer_auth(&s.t.api_key).json(body), 200).await
}

#[tokio::test]
async fn an_evaluation_is_a_check_decided_and_audited() {
    let s = setup().await;
    let allowed = evaluate(&s, &evaluation(&s.agent, "read", "staging/db/orders")).await;
    assert_eq!(allowed["decision"], json!(true), "{allowed}");
    let context = &allowed["context"];
    assert!(context["decision_id"].is_string() && context["risk_score"].is_number(), "{allowed}");
    assert_eq!(context["required_approval"], json!(false));
    assert_eq!(context["reason_admin"]["en"], context["reason"]);

    let denied = evaluate(&s, &evaluation(&s.agent, "delete", "staging/db/orders")).await;
    assert_eq!(denied["decision"], json!(false), "a deny is a 200 with decision false: {denied}");
    assert!(denied["context"]["reason"].as_str().unwrap().contains("no deleting staging/db/orders"), "{denied}");

    // Approval is not permission: a strict false, with the approval request to follow.
    let pay = evaluate(&s, &evaluation(&s.agent, "pay", "billing/invoice/7")).await;
    assert_eq!((&pay["decision"], &pay["context"]["required_approval"]), (&json!(false), &json!(true)), "{pay}");
    let hitl = pay["context"]["hitl_request_id"].as_str().expect("an approval request");
    expect(s.app.get(&format!("/hitl/status/{hitl}")).header("X-API-Key", &s.t.api_key), 200).await;

    // Each one is the tenant's policy.decision record, as a check's would be.
    for (answer, action, decision) in [(&allowed, "read", "allow"), (&denied, "delete", "deny")] {
        let id = answer["context"]["decision_id"].as_str().unwrap();
        let record = expect(s.app.get(&format!("/audit/{id}")).bearer_auth(&s.t.token), 200).await;
        assert_eq!(record["event_type"], json!("policy.decision"), "{record}");
        assert_eq!((&record["agent_id"], &record["action"]), (&json!(s.agent), &json!(action)));
        assert_eq!(record["decision"], json!(decision), "{record}");
        assert_eq!(record["details"]["context"]["resource_type"], json!("table"), "{record}");
        assert_eq!(record["details"]["context"]["environment"], json!("staging"), "{record}");
    }
}

#[tokio::test]
async fn subjects_properties_and_delegation_map_onto_the_check() {
    let s = setup().await;
    // The agent governance toolkit's AuthZEN backend names agents `auth:agent:<ns>:<id>`.
    let mut body = evaluation(&format!("auth:agent:agentmesh:{}", s.agent), "read", "docs/a");
    body["subject"]["type"] = json!("ai_agent");
    body["action"]["properties"] = json!({"operation_ref_id": "op:tool:read"});
    body["unknown_member"] = json!({"is": "ignored"});
    let answer = evaluate(&s, &body).await;
    assert_eq!(answer["decision"], json!(true), "{answer}");
    let id = answer["context"]["decision_id"].as_str().unwrap();
    let record = expect(s.app.get(&format!("/audit/{id}")).bearer_auth(&s.t.token), 200).await;
    assert_eq!(record["details"]["context"]["action_properties"], json!({"operation_ref_id": "op:tool:read"}));

    // A user acting through the agent: the agent decides, the user is recorded.
    let body = json!({
        "subject": {"type": "user", "id": "alice@example.com", "properties": {"delegation": {"id": s.agent}}},
        "action": {"name": "read"},
        "resource": {"type": "doc", "id": "docs/b"}
    });
    let answer = evaluate(&s, &body).await;
    let id = answer["context"]["decision_id"].as_str().unwrap();
    let record = expect(s.app.get(&format!("/audit/{id}")).bearer_auth(&s.t.token), 200).await;
    assert_eq!(record["agent_id"], json!(s.agent));
    assert_eq!(record["details"]["context"]["delegated_by"], json!({"type": "user", "id": "alice@example.com"}));
}

#[tokio::test]
async fn missing_members_and_bad_credentials_are_refused() {
    let s = setup().await;
    let good = evaluation(&s.agent, "read", "docs/a");
    for (pointer, why) in [
        ("/subject", "no subject"),
        ("/action", "no action"),
        ("/resource", "no resource"),
        ("/subject/type", "no subject type"),
        ("/action/name", "no action name"),
        ("/resource/id", "no resource id"),
    ] {
        let mut body = good.clone();
        let (parent, key) = pointer.rsplit_once('/').unwrap();
        body.pointer_mut(if parent.is_empty() { "" } else { parent }).unwrap().as_object_mut().unwrap().remove(key);
        let problem =
            expect_problem(s.app.post("/access/v1/evaluation").bearer_auth(&s.t.api_key).json(&body), 400).await;
        assert!(problem["detail"].as_str().unwrap().contains("required"), "{why}: {problem}");
    }
    let mut body = good.clone();
    body["subject"]["id"] = json!("not-an-agent");
    expect_problem(s.app.post("/access/v1/evaluation").bearer_auth(&s.t.api_key).json(&body), 400).await;
    let mut body = good.clone();
    body["subject"]["id"] = json!(uuid::Uuid::now_v7());
    expect_problem(s.app.post("/access/v1/evaluation").bearer_auth(&s.t.api_key).json(&body), 404).await;
    let mut body = good.clone();
    body["action"]["name"] = json!("");
    expect_problem(s.app.post("/access/v1/evaluation").bearer_auth(&s.t.api_key).json(&body), 400).await;
    expect_problem(
        s.app
            .post("/access/v1/evaluation")
            .bearer_auth(&s.t.api_key)
            .header("content-type", "application/json")
            .body("{"),
        400,
    )
    .await;

    // Credentials: the API key as a bearer token or in X-API-Key, or a session JWT.
    expect_problem(s.app.post("/access/v1/evaluation").json(&good), 401).await;
    expect_problem(s.app.post("/access/v1/evaluation").bearer_auth("agk_nottherealkey_000000").json(&good), 401).await;
    expect(s.app.post("/access/v1/evaluation").header("X-API-Key", &s.t.api_key).json(&good), 200).await;
    expect(s.app.post("/access/v1/evaluation").bearer_auth(&s.t.token).json(&good), 200).await;
    // Another tenant's key does not see the agent.
    let other = s.app.create_tenant("other").await;
    expect_problem(s.app.post("/access/v1/evaluation").bearer_auth(&other.api_key).json(&good), 404).await;
}

#[tokio::test]
async fn the_request_id_is_echoed() {
    let s = setup().await;
    let res = s
        .app
        .client
        .post(s.app.url("/access/v1/evaluation"))
        .bearer_auth(&s.t.api_key)
        .header("X-Request-ID", "pep-req-42")
        .json(&evaluation(&s.agent, "read", "docs/a"))
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 200);
    assert_eq!(res.headers().get("x-request-id").unwrap(), "pep-req-42");
}

fn batch(agent: &str, semantic: Option<&str>) -> Value {
    let mut body = json!({
        "subject": {"type": "agent", "id": agent},
        "action": {"name": "read"},
        "resource": {"type": "table", "id": "docs/default"},
        "evaluations": [
            {"resource": {"type": "table", "id": "docs/one"}},
            {"action": {"name": "delete"}},
            {"action": {"name": "read"}, "resource": {"type": "table", "id": "docs/three"}}
        ]
    });
    if let Some(semantic) = semantic {
        body["options"] = json!({"evaluations_semantic": semantic});
    }
    body
}

async fn evaluate_batch(s: &Setup, body: &Value) -> Value {
    expect(s.app.post("/access/v1/evaluations").bearer_auth(&s.t.api_key).json(body), 200).await
}

fn decisions(answer: &Value) -> Vec<bool> {
    answer["evaluations"].as_array().unwrap().iter().map(|d| d["decision"].as_bool().unwrap()).collect()
}

#[tokio::test]
async fn a_batch_applies_defaults_overrides_and_each_semantic() {
    let s = setup().await;
    let all = evaluate_batch(&s, &batch(&s.agent, None)).await;
    assert_eq!(decisions(&all), [true, false, true], "execute_all is the default: {all}");
    // The second item kept the default resource and replaced the action.
    let id = all["evaluations"][1]["context"]["decision_id"].as_str().unwrap();
    let record = expect(s.app.get(&format!("/audit/{id}")).bearer_auth(&s.t.token), 200).await;
    assert_eq!((&record["action"], &record["resource"]), (&json!("delete"), &json!("docs/default")));
    let explicit = evaluate_batch(&s, &batch(&s.agent, Some("execute_all"))).await;
    assert_eq!(decisions(&explicit), [true, false, true]);

    // Like `&&`: the answer ends at the first deny.
    let and = evaluate_batch(&s, &batch(&s.agent, Some("deny_on_first_deny"))).await;
    assert_eq!(decisions(&and), [true, false], "{and}");
    // Like `||`: the answer ends at the first permit.
    let or = evaluate_batch(&s, &batch(&s.agent, Some("permit_on_first_permit"))).await;
    assert_eq!(decisions(&or), [true], "{or}");

    // Absent or empty `evaluations`: one evaluation, answered as one decision.
    let mut single = batch(&s.agent, None);
    single["evaluations"] = json!([]);
    let one = evaluate_batch(&s, &single).await;
    assert_eq!(one["decision"], json!(true), "{one}");
    single.as_object_mut().unwrap().remove("evaluations");
    assert_eq!(evaluate_batch(&s, &single).await["decision"], json!(true));

    let log = expect(s.app.get("/audit?event_type=policy.decision&limit=100").bearer_auth(&s.t.token), 200).await;
    assert_eq!(log["items"].as_array().unwrap().len(), 3 + 3 + 2 + 1 + 1 + 1, "one record per decision made");
}

#[tokio::test]
async fn a_batch_item_that_cannot_be_decided_is_closed_and_bad_batches_are_refused() {
    let s = setup().await;
    let mut body = batch(&s.agent, Some("deny_on_first_deny"));
    body["evaluations"][0]["subject"] = json!({"type": "agent", "id": uuid::Uuid::now_v7()});
    let answer = evaluate_batch(&s, &body).await;
    assert_eq!(decisions(&answer), [false], "an error counts as a deny: {answer}");
    assert_eq!(answer["evaluations"][0]["context"]["error"]["status"], json!(404), "{answer}");

    let mut body = batch(&s.agent, None);
    body["options"] = json!({"evaluations_semantic": "most_of_them"});
    expect_problem(s.app.post("/access/v1/evaluations").bearer_auth(&s.t.api_key).json(&body), 400).await;
    // An item missing a member with no default for it: nothing is decided.
    let body = json!({"subject": {"type": "agent", "id": s.agent}, "evaluations": [{"action": {"name": "read"}}]});
    let problem = expect_problem(s.app.post("/access/v1/evaluations").bearer_auth(&s.t.api_key).json(&body), 400).await;
    assert!(problem["detail"].as_str().unwrap().starts_with("evaluations[0]"), "{problem}");
    let items: Vec<Value> = (0..101).map(|_| json!({})).collect();
    let mut body = batch(&s.agent, None);
    body["evaluations"] = json!(items);
    expect_problem(s.app.post("/access/v1/evaluations").bearer_auth(&s.t.api_key).json(&body), 400).await;
    let log = expect(s.app.get("/audit?event_type=policy.decision").bearer_auth(&s.t.token), 200).await;
    assert_eq!(log["items"], json!([]), "refused batches decide nothing");
    expect_problem(s.app.post("/access/v1/evaluations").json(&batch(&s.agent, None)), 401).await;
}

#[tokio::test]
async fn the_metadata_names_this_pdp_and_its_endpoints() {
    let s = setup().await;
    let meta = expect(s.app.get("/.well-known/authzen-configuration"), 200).await;
    let pdp = meta["policy_decision_point"].as_str().unwrap();
    assert_eq!(pdp, s.app.base.trim_end_matches('/'));
    assert_eq!(meta["access_evaluation_endpoint"], json!(format!("{pdp}/access/v1/evaluation")));
    assert_eq!(meta["access_evaluations_endpoint"], json!(format!("{pdp}/access/v1/evaluations")));
    // The endpoint it names is the one that answers.
    let res = s
        .app
        .client
        .post(meta["access_evaluation_endpoint"].as_str().unwrap())
        .bearer_auth(&s.t.api_key)
        .json(&evaluation(&s.agent, "read", "docs/a"))
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 200);
}
