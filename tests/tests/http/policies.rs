//! Spec 4.6, policies and the policy check, over HTTP: CRUD with versions, compile errors
//! with positions, templates, decisions in the spec's shape, audit, isolation, and every
//! error.
use agentgov_tests::*;
use serde_json::{Value, json};

const DENY_DELETES: &str = r#"package acme.deletes

import rego.v1

deny contains msg if {
	input.action == "delete"
	msg := sprintf("no deleting %s", [input.resource])
}
"#;

async fn create(app: &TestApp, t: &Tenant, body: &Value) -> Value {
    expect(app.post("/policies").bearer_auth(&t.token).json(body), 201).await
}

async fn register(app: &TestApp, t: &Tenant, name: &str, capabilities: &[&str]) -> String {
    let body = json!({"name": name, "type": "llm", "capabilities": capabilities, "permissions": {}});
    let agent = expect(app.post("/agents/register").header("X-API-Key", &t.api_key).json(&body), 201).await;
    agent["id"].as_str().unwrap().to_owned()
}

async fn check(app: &TestApp, t: &Tenant, body: Value) -> Value {
    expect(app.post("/policies/check").header("X-API-Key", &t.api_key).json(&body), 200).await
}

#[tokio::test]
async fn create_get_list_update_delete_with_versions() {
    let app = spawn_app().await;
    let t = app.create_tenant("acme").await;
    let p = create(&app, &t, &json!({"name": "No deletes", "description": "Keep data", "rego": DENY_DELETES})).await;
    for field in ["id", "name", "description", "rego", "enabled", "version", "created_by", "created_at", "updated_at"] {
        assert!(p.get(field).is_some(), "{field} missing from {p}");
    }
    assert_eq!((p["version"].as_i64(), &p["enabled"], &p["created_by"]), (Some(1), &json!(true), &json!(t.admin_id)));
    let id = p["id"].as_str().unwrap();

    // GET /policies/{id} takes an API key (spec) or a JWT; the list takes either.
    assert_eq!(expect(app.get(&format!("/policies/{id}")).header("X-API-Key", &t.api_key), 200).await, p);
    assert_eq!(expect(app.get(&format!("/policies/{id}")).bearer_auth(&t.token), 200).await, p);
    let page = expect(app.get("/policies").header("X-API-Key", &t.api_key), 200).await;
    assert_eq!(page["items"].as_array().unwrap().len(), 1);
    assert_eq!(page["next_cursor"], Value::Null);

    let changed = json!({"name": "No deletes", "rego": DENY_DELETES, "enabled": false, "version": 1});
    let v2 = expect(app.put(&format!("/policies/{id}")).bearer_auth(&t.token).json(&changed), 200).await;
    assert_eq!((v2["version"].as_i64(), &v2["enabled"], &v2["created_at"]), (Some(2), &json!(false), &p["created_at"]));
    // A change made from version 1 again is refused: someone (we) moved it on.
    expect_problem(app.put(&format!("/policies/{id}")).bearer_auth(&t.token).json(&changed), 409).await;

    let enabled = expect(app.get("/policies?enabled=true").bearer_auth(&t.token), 200).await;
    assert_eq!(enabled["items"], json!([]));
    let disabled = expect(app.get("/policies?enabled=false&limit=1").bearer_auth(&t.token), 200).await;
    assert_eq!(disabled["items"][0]["id"], p["id"]);

    expect_problem(
        app.post("/policies").bearer_auth(&t.token).json(&json!({"name": "No deletes", "rego": DENY_DELETES})),
        409,
    )
    .await;

    let res = app.delete(&format!("/policies/{id}")).bearer_auth(&t.token).send().await.unwrap();
    assert_eq!(res.status(), 204);
    expect_problem(app.get(&format!("/policies/{id}")).bearer_auth(&t.token), 404).await;
    expect_problem(app.delete(&format!("/policies/{id}")).bearer_auth(&t.token), 404).await;

    // Every change is audited with the versions before and after.
    let log = expect(app.get("/audit?event_type=policy.updated").bearer_auth(&t.token), 200).await;
    let details = &log["items"][0]["details"];
    assert_eq!((details["before"]["version"].as_i64(), details["after"]["version"].as_i64()), (Some(1), Some(2)));
    for event in ["policy.created", "policy.deleted"] {
        let log = expect(app.get(&format!("/audit?event_type={event}")).bearer_auth(&t.token), 200).await;
        assert_eq!(log["items"].as_array().unwrap().len(), 1, "{event}");
    }
}

#[tokio::test]
async fn writes_need_an_admin_jwt() {
    let app = spawn_app().await;
    let t = app.create_tenant("acme").await;
    let body = json!({"name": "p", "rego": DENY_DELETES});
    expect_problem(app.post("/policies").json(&body), 401).await;
    // An API key is not a JWT, even the admin's.
    expect_problem(app.post("/policies").header("X-API-Key", &t.api_key).json(&body), 401).await;
    let (_, analyst) = app.user(&t, "ana@acme.test", "analyst").await;
    expect_problem(app.post("/policies").bearer_auth(&analyst).json(&body), 403).await;
    let p = create(&app, &t, &body).await;
    let id = p["id"].as_str().unwrap();
    expect_problem(app.put(&format!("/policies/{id}")).bearer_auth(&analyst).json(&body), 403).await;
    expect_problem(app.delete(&format!("/policies/{id}")).bearer_auth(&analyst), 403).await;
    // Reading is for everyone in the tenant.
    expect(app.get(&format!("/policies/{id}")).bearer_auth(&analyst), 200).await;
    expect_problem(app.get("/policies"), 401).await;
}

#[tokio::test]
async fn compile_errors_answer_422_with_line_and_column() {
    let app = spawn_app().await;
    let t = app.create_tenant("acme").await;
    let broken = "package acme.broken\n\nimport rego.v1\n\ndeny contains msg if {\n\tmsg := \n}\n";
    let problem =
        expect_problem(app.post("/policies").bearer_auth(&t.token).json(&json!({"name": "b", "rego": broken})), 422)
            .await;
    let error = &problem["errors"][0];
    assert_eq!(error["field"], "rego", "{problem}");
    assert!(error["line"].as_u64().unwrap() >= 6, "{problem}");
    assert!(error["column"].as_u64().unwrap() >= 1, "{problem}");
    assert!(!error["message"].as_str().unwrap().is_empty());

    for (body, field) in [
        (json!({"name": "x"}), "rego"),
        (json!({"name": "x", "rego": ""}), "rego"),
        (json!({"name": "", "rego": DENY_DELETES}), "name"),
        (json!({"name": "x", "rego": DENY_DELETES, "template": {"id": "business-hours"}}), "template"),
        (json!({"name": "x", "template": {"id": "no-such-template"}}), "template.id"),
        (
            json!({"name": "x", "template": {"id": "bulk-operation-cap", "parameters": {"max_records": "many"}}}),
            "template.parameters.max_records",
        ),
    ] {
        let problem = expect_problem(app.post("/policies").bearer_auth(&t.token).json(&body), 422).await;
        assert_eq!(problem["errors"][0]["field"], field, "{body} -> {problem}");
    }
    expect_problem(app.post("/policies").bearer_auth(&t.token).json(&json!({"name": "x", "rego": 5})), 422).await;
    expect_problem(app.post("/policies").bearer_auth(&t.token).json(&json!({"name": "x", "colour": 1})), 422).await;
}

#[tokio::test]
async fn templates_are_listed_and_each_instantiates_into_a_valid_policy() {
    let app = spawn_app().await;
    let t = app.create_tenant("acme").await;
    let templates = expect(app.get("/policies/templates").header("X-API-Key", &t.api_key), 200).await;
    let templates = templates.as_array().unwrap();
    assert!(templates.len() >= 8, "{}", templates.len());
    for template in templates {
        for field in ["id", "name", "description", "parameters", "rego"] {
            assert!(template.get(field).is_some(), "{field} missing from {template}");
        }
        let id = template["id"].as_str().unwrap();
        // As listed (defaults) and through `template`.
        create(&app, &t, &json!({"name": format!("{id} as listed"), "rego": template["rego"]})).await;
        let p = create(&app, &t, &json!({"name": id, "template": {"id": id}, "enabled": false})).await;
        assert_eq!(p["rego"], template["rego"], "{id}");
    }
}

#[tokio::test]
async fn checks_answer_the_spec_shape_and_are_audited() {
    let app = spawn_app().await;
    let t = app.create_tenant("acme").await;
    let agent = register(&app, &t, "Cleaner", &["delete records"]).await;

    let allowed =
        check(&app, &t, json!({"agent_id": agent, "action": "read", "resource": "docs/handbook", "context": {}})).await;
    for field in [
        "allowed",
        "required_approval",
        "risk_score",
        "risk",
        "anomaly",
        "reason",
        "decision_id",
        "matched_policies",
        "risk_factors",
    ] {
        assert!(allowed.get(field).is_some(), "{field} missing from {allowed}");
    }
    assert_eq!(
        (&allowed["allowed"], &allowed["required_approval"], &allowed["anomaly"]),
        (&json!(true), &json!(false), &json!(false))
    );
    assert!(allowed["risk_score"].as_f64().unwrap() < 0.3, "{allowed}");
    assert_eq!(allowed["risk"], "low");

    create(&app, &t, &json!({"name": "no deletes", "rego": DENY_DELETES})).await;
    create(&app, &t, &json!({"name": "consent", "template": {"id": "require-consent-personal-data", "parameters": {"effect": "approval"}}})).await;

    let denied = check(&app, &t, json!({"agent_id": agent, "action": "delete", "resource": "prod/customers"})).await;
    assert_eq!((&denied["allowed"], &denied["required_approval"]), (&json!(false), &json!(false)), "{denied}");
    assert_eq!(denied["reason"], "denied: no deleting prod/customers");
    let matched: Vec<&str> =
        denied["matched_policies"].as_array().unwrap().iter().map(|m| m["name"].as_str().unwrap()).collect();
    assert_eq!(matched, ["no deletes", "consent"], "{denied}");
    let codes: Vec<&str> =
        denied["risk_factors"].as_array().unwrap().iter().map(|f| f["code"].as_str().unwrap()).collect();
    assert!(codes.contains(&"deletion") && codes.contains(&"no_consent"), "{codes:?}");

    let approval = check(&app, &t, json!({"agent_id": agent, "action": "read", "resource": "crm/customers"})).await;
    assert_eq!((&approval["allowed"], &approval["required_approval"]), (&json!(false), &json!(true)), "{approval}");
    let consented = check(
        &app,
        &t,
        json!({"agent_id": agent, "action": "read", "resource": "crm/customers", "context": {"consent": true}}),
    )
    .await;
    assert_eq!(consented["allowed"], true, "{consented}");

    // The decision is the audit record the answer names.
    let id = denied["decision_id"].as_str().unwrap();
    let record = expect(app.get(&format!("/audit/{id}")).bearer_auth(&t.token), 200).await;
    assert_eq!(
        (&record["event_type"], &record["decision"], &record["agent_id"]),
        (&json!("policy.decision"), &json!("deny"), &json!(agent))
    );
    assert_eq!(record["action"], "delete");
    let decisions = expect(app.get("/audit?event_type=policy.decision").bearer_auth(&t.token), 200).await;
    assert_eq!(decisions["items"].as_array().unwrap().len(), 4, "every check is recorded");

    // A dry run records nothing.
    let dry = check(&app, &t, json!({"agent_id": agent, "action": "delete", "resource": "x", "dry_run": true})).await;
    assert_eq!((&dry["allowed"], &dry["decision_id"]), (&json!(false), &Value::Null));
    let decisions = expect(app.get("/audit?event_type=policy.decision").bearer_auth(&t.token), 200).await;
    assert_eq!(decisions["items"].as_array().unwrap().len(), 4);
}

#[tokio::test]
async fn an_update_takes_effect_on_the_next_check() {
    let app = spawn_app().await;
    let t = app.create_tenant("acme").await;
    let agent = register(&app, &t, "Cleaner", &[]).await;
    let p = create(&app, &t, &json!({"name": "no deletes", "rego": DENY_DELETES})).await;
    let body = json!({"agent_id": agent, "action": "delete", "resource": "tmp/file"});
    assert_eq!(check(&app, &t, body.clone()).await["allowed"], false);
    let relaxed = DENY_DELETES.replace("input.action == \"delete\"", "input.action == \"drop\"");
    let id = p["id"].as_str().unwrap();
    expect(
        app.put(&format!("/policies/{id}")).bearer_auth(&t.token).json(&json!({"name": "no deletes", "rego": relaxed})),
        200,
    )
    .await;
    assert_eq!(check(&app, &t, body.clone()).await["allowed"], true, "the cached version 1 was dropped");
    expect(app.delete(&format!("/policies/{id}")).bearer_auth(&t.token), 204).await;
    let none = check(&app, &t, body).await;
    assert_eq!(none["matched_policies"], json!([]));
}

#[tokio::test]
async fn a_policy_can_be_tested_without_recording() {
    let app = spawn_app().await;
    let t = app.create_tenant("acme").await;
    let agent = register(&app, &t, "Cleaner", &[]).await;
    let p = create(&app, &t, &json!({"name": "no deletes", "rego": DENY_DELETES, "enabled": false})).await;
    let id = p["id"].as_str().unwrap();
    let body = json!({"agent_id": agent, "action": "delete", "resource": "tmp/file"});
    let tested = expect(app.post(&format!("/policies/{id}/test")).bearer_auth(&t.token).json(&body), 200).await;
    assert_eq!((&tested["allowed"], &tested["decision_id"]), (&json!(false), &Value::Null), "{tested}");
    assert_eq!(check(&app, &t, body).await["allowed"], true, "disabled policies take no part in checks");
}

#[tokio::test]
async fn check_errors_and_suspended_agents() {
    let app = spawn_app().await;
    let t = app.create_tenant("acme").await;
    let agent = register(&app, &t, "Bot", &[]).await;
    let key = &t.api_key;
    expect_problem(app.post("/policies/check").json(&json!({})), 401).await;
    let problem = expect_problem(
        app.post("/policies/check")
            .header("X-API-Key", key)
            .json(&json!({"agent_id": "nope", "action": "", "resource": "r"})),
        422,
    )
    .await;
    let fields: Vec<&str> =
        problem["errors"].as_array().unwrap().iter().map(|e| e["field"].as_str().unwrap()).collect();
    assert_eq!(fields, ["agent_id", "action"]);
    expect_problem(
        app.post("/policies/check").header("X-API-Key", key).json(&json!({"action": "read", "resource": "r"})),
        422,
    )
    .await;
    expect_problem(
        app.post("/policies/check")
            .header("X-API-Key", key)
            .body("{not json")
            .header("content-type", "application/json"),
        400,
    )
    .await;
    let unknown = json!({"agent_id": "0190f0f0-0000-7000-8000-000000000000", "action": "read", "resource": "r"});
    expect_problem(app.post("/policies/check").header("X-API-Key", key).json(&unknown), 404).await;

    let suspend = json!({"name": "Bot", "type": "llm", "capabilities": [], "permissions": {}, "status": "suspended"});
    expect(app.put(&format!("/agents/{agent}")).header("X-API-Key", key).json(&suspend), 200).await;
    let denied = check(&app, &t, json!({"agent_id": agent, "action": "read", "resource": "docs"})).await;
    assert_eq!((&denied["allowed"], &denied["reason"]), (&json!(false), &json!("agent \"Bot\" is suspended")));
}

#[tokio::test]
async fn tenants_see_only_their_own_policies_and_agents() {
    let app = spawn_app().await;
    let a = app.create_tenant("acme").await;
    let b = app.create_tenant("globex").await;
    let p = create(&app, &a, &json!({"name": "no deletes", "rego": DENY_DELETES})).await;
    let id = p["id"].as_str().unwrap();
    let agent = register(&app, &a, "Bot", &[]).await;

    expect_problem(app.get(&format!("/policies/{id}")).header("X-API-Key", &b.api_key), 404).await;
    let body = json!({"name": "mine now", "rego": DENY_DELETES});
    expect_problem(app.put(&format!("/policies/{id}")).bearer_auth(&b.token).json(&body), 404).await;
    expect_problem(app.delete(&format!("/policies/{id}")).bearer_auth(&b.token), 404).await;
    let page = expect(app.get("/policies").header("X-API-Key", &b.api_key), 200).await;
    assert_eq!(page["items"], json!([]));

    // Another tenant's agent is unknown, and one tenant's policies never decide for another.
    let other = json!({"agent_id": agent, "action": "delete", "resource": "x"});
    expect_problem(app.post("/policies/check").header("X-API-Key", &b.api_key).json(&other), 404).await;
    let own = register(&app, &b, "Bot", &[]).await;
    let theirs = check(&app, &b, json!({"agent_id": own, "action": "delete", "resource": "x"})).await;
    assert_eq!(theirs["matched_policies"], json!([]), "{theirs}");
}

#[tokio::test]
async fn the_tenants_own_threshold_and_risk_levels_decide_checks() {
    let app = spawn_app().await;
    let t = app.create_tenant("acme").await;
    let bot = register(&app, &t, "bot", &["transfer funds"]).await;
    let agent = expect(app.get(&format!("/agents/{bot}")).header("X-API-Key", &t.api_key), 200).await;
    let body = json!({"agent_id": bot, "action": "update", "resource": "prod/reports"});
    let before = check(&app, &t, body.clone()).await;
    let score = before["risk_score"].as_f64().unwrap();
    assert!(before["allowed"] == true && score > 0.05 && score < 0.8, "{before}");
    // Critical from the lower of the check's and the agent's scores, so both become critical.
    let critical = score.min(agent["risk_score"].as_f64().unwrap());
    assert!(critical > 0.05 && agent["risk"] != "critical", "{agent}");

    let settings = json!({"settings": {"approval_threshold": score, "risk_levels": {"medium": critical / 3.0, "high": critical / 2.0, "critical": critical}}});
    expect(app.patch("/tenant").bearer_auth(&t.token).json(&settings), 200).await;
    let after = check(&app, &t, body.clone()).await;
    assert_eq!((after["allowed"].clone(), after["required_approval"].clone()), (json!(false), json!(true)), "{after}");
    assert_eq!(after["risk"], "critical");
    let agent = expect(app.get(&format!("/agents/{bot}")).header("X-API-Key", &t.api_key), 200).await;
    assert_eq!(agent["risk"], "critical", "the agent was re-levelled: {agent}");

    expect(
        app.patch("/tenant")
            .bearer_auth(&t.token)
            .json(&json!({"settings": {"approval_threshold": null, "risk_levels": null}})),
        200,
    )
    .await;
    let reset = check(&app, &t, body).await;
    assert_eq!(reset["allowed"], true, "{reset}");
    assert_eq!(reset["risk"], before["risk"]);
}

/// Issue 32, point 1: the filed payloads, which aborted, hung or panicked the process for
/// every tenant, are refused on upload with their position; the server answers throughout.
#[tokio::test]
async fn policies_that_could_take_the_process_down_are_refused_with_their_position() {
    let app = spawn_app().await;
    let t = app.create_tenant("hostile").await;
    for (rego, line, column) in [
        ("package h\ndeny contains \"x\" if { count(numbers.range(0, input.context.n)) < 0 }\n", 2, 30),
        ("package h\ndeny contains \"x\" if { count(numbers.range_step(0, input.context.n, 1)) < 0 }\n", 2, 30),
        ("package h\ndeny contains \"x\" if { count(numbers.range(1, 10000000)) < 0 }\n", 2, 30),
        ("package h\ndeny contains msg if msg := sprintf(\"%04000000000d\", [1])\n", 2, 29),
        ("package h\ndeny contains msg if msg := sprintf(\"%²d\", [1])\n", 2, 29),
        ("package h\ndeny contains \"x\" if count(net.cidr_expand(\"::/0\")) > 0\n", 2, 28),
    ] {
        let body = json!({"name": "hostile", "rego": rego});
        let problem = expect_problem(app.post("/policies").bearer_auth(&t.token).json(&body), 422).await;
        let error = &problem["errors"][0];
        assert_eq!((&error["field"], &error["line"], &error["column"]), (&json!("rego"), &json!(line), &json!(column)));
        expect(app.get("/health"), 200).await;
    }
    let page = expect(app.get("/policies").bearer_auth(&t.token), 200).await;
    assert_eq!(page["items"], json!([]));
}

/// Bounded loops that burn every policy's time limit: the check is answered, denied with
/// a clear error per policy, within the check's budget; another tenant's checks and
/// everyone's health are answered meanwhile.
#[tokio::test]
async fn a_tenant_whose_policies_burn_their_budget_gets_an_error_decision_and_others_answers() {
    let app = spawn_app().await;
    let hostile = app.create_tenant("burner").await;
    let honest = app.create_tenant("honest").await;
    let burn = "package burn.p{n}\n\ndeny contains \"never\" if {\n\tinput.action == \"read\"\n\tsome a in numbers.range(1, 10000)\n\tsome b in numbers.range(1, 10000)\n\ta * b == -1\n}\n";
    for n in 0..5 {
        create(&app, &hostile, &json!({"name": format!("burn {n}"), "rego": burn.replace("{n}", &n.to_string())}))
            .await;
    }
    create(&app, &honest, &json!({"name": "No deletes", "rego": DENY_DELETES})).await;
    let burner_agent = register(&app, &hostile, "burner-bot", &[]).await;
    let honest_agent = register(&app, &honest, "honest-bot", &[]).await;

    let burning = async {
        let mut answers = Vec::new();
        for _ in 0..3 {
            let body = json!({"agent_id": burner_agent, "action": "read", "resource": "db"});
            answers.push(check(&app, &hostile, body).await);
        }
        answers
    };
    let answering = async {
        let mut answers = Vec::new();
        for action in ["read", "delete", "read"] {
            let body = json!({"agent_id": honest_agent, "action": action, "resource": "db"});
            answers.push(check(&app, &honest, body).await);
            expect(app.get("/health"), 200).await;
        }
        answers
    };
    let (burnt, answered) = tokio::join!(burning, answering);
    for decision in burnt {
        assert_eq!(decision["allowed"], json!(false), "{decision}");
        assert!(decision["reason"].as_str().unwrap().contains("could not be evaluated"), "{decision}");
        let effects: Vec<&Value> =
            decision["matched_policies"].as_array().unwrap().iter().map(|m| &m["effect"]).collect();
        assert_eq!(effects, vec![&json!("error"); 5], "{decision}");
        // Five policies of 100 ms each do not get 500 ms: the check's budget (250 ms) ends it,
        // unless the machine is fast enough that each policy reaches its instruction limit
        // first. Either bound ends every policy with an error.
        let messages = decision["matched_policies"].to_string();
        assert!(
            messages.contains("budget of 250 ms") || messages.matches("maximum instruction limit").count() == 5,
            "{decision}"
        );
        assert!(decision["decision_id"].is_string(), "an error decision is recorded: {decision}");
    }
    let allowed: Vec<&Value> = answered.iter().map(|d| &d["allowed"]).collect();
    assert_eq!(allowed, [&json!(true), &json!(false), &json!(true)], "{answered:?}");
}

/// A tenant may store at most `max_policies_per_tenant` policies; others are unaffected.
#[tokio::test]
async fn policies_per_tenant_are_capped() {
    let app = spawn_with(|c| c.max_policies_per_tenant = 2).await;
    let (a, b) = (app.create_tenant("capped").await, app.create_tenant("other").await);
    for n in 0..2 {
        create(&app, &a, &json!({"name": format!("p{n}"), "rego": DENY_DELETES})).await;
    }
    let problem = expect_problem(
        app.post("/policies").bearer_auth(&a.token).json(&json!({"name": "p2", "rego": DENY_DELETES})),
        409,
    )
    .await;
    assert!(problem["detail"].as_str().unwrap().contains("limit"), "{problem}");
    create(&app, &b, &json!({"name": "p0", "rego": DENY_DELETES})).await;
}

/// What no static rule can bound (numbers of arbitrary precision squared again and again,
/// memory built up over many instructions) runs in a policy worker process, which is
/// stopped or dies alone: the check is answered with an error decision, the set is refused
/// for a while, and the server and the other tenants go on.
#[tokio::test]
async fn policies_that_exhaust_a_worker_stop_only_their_own_checks() {
    // The smallest worker: the memory case then dies long before the instruction limit.
    let app = spawn_with(|c| c.policy_worker_memory_mib = 256).await;
    let hostile = app.create_tenant("exhaust").await;
    let honest = app.create_tenant("bystander").await;
    let mut squares = String::from("package exhaust.squares\n\nx0 := input.context.n\n");
    for i in 1..=40 {
        squares.push_str(&format!("x{i} := x{} * x{}\n", i - 1, i - 1));
    }
    squares.push_str("deny contains \"big\" if x40 > 0\n");
    let memory = "package exhaust.memory\n\n\
        deny contains \"long\" if {\n\
        \ts := input.context.s\n\
        \tparts := [concat(\"\", [s | some _ in numbers.range(1, 10000)]) | some _ in numbers.range(1, 10)]\n\
        \tcount(parts) < 0\n}\n";
    for (n, rego, context) in
        [(0, squares.as_str(), json!({"n": 1_000_000_000_000_000u64})), (1, memory, json!({"s": "x".repeat(15_000)}))]
    {
        let policy = create(&app, &hostile, &json!({"name": format!("exhaust {n}"), "rego": rego})).await;
        let agent = register(&app, &hostile, &format!("exhausting-bot-{n}"), &[]).await;
        let body = json!({"agent_id": agent, "action": "read", "resource": "db", "context": context});
        let decision = check(&app, &hostile, body.clone()).await;
        assert_eq!(decision["allowed"], json!(false), "{decision}");
        assert_eq!(decision["matched_policies"][0]["effect"], "error", "{decision}");
        // The set that stopped a worker is refused for a while, without running again (once
        // the stopped worker is let go of: until then a check may time out waiting for it).
        let mut quarantined = false;
        for _ in 0..50 {
            let again = check(&app, &hostile, body.clone()).await;
            assert_eq!(again["allowed"], json!(false), "{again}");
            if again["matched_policies"][0]["messages"].to_string().contains("stopped the policy engine") {
                quarantined = true;
                break;
            }
            tokio::time::sleep(std::time::Duration::from_millis(100)).await;
        }
        assert!(quarantined, "the set was never refused");
        // Others go on: the bystander's checks, and everyone's health.
        let bystander = register(&app, &honest, &format!("bystander-bot-{n}"), &[]).await;
        let fine = check(&app, &honest, json!({"agent_id": bystander, "action": "read", "resource": "db"})).await;
        assert_eq!(fine["allowed"], json!(true), "{fine}");
        expect(app.get("/health"), 200).await;
        expect(app.delete(&format!("/policies/{}", policy["id"].as_str().unwrap())).bearer_auth(&hostile.token), 204)
            .await;
    }
}

/// A policy worker process talked to over its pipes (all three).
fn start_worker() -> std::process::Child {
    std::process::Command::new(policy_worker())
        .arg("policy-worker")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap()
}

/// `print` in a tenant's module writes nothing into the service's log (it could forge lines
/// there), on either of regorus's evaluators: the worker process's error stream stays empty.
#[test]
fn print_in_a_policy_writes_nothing_to_the_log() {
    use std::io::{BufRead, BufReader, Write};
    let mut worker = start_worker();
    let forged = "2026-11-26T00:00:00Z ERROR agentgov: admin key leaked";
    // On the VM, and on the interpreter (a module with `with` runs there).
    let vm = format!("package p\ndeny contains \"x\" if {{\n\tprint(\"{forged}\")\n\tinput.action == \"a\"\n}}\n");
    let interpreter = format!(
        "package q\nf(x) := x\ndeny contains \"y\" if {{\n\tprint(\"{forged}\")\n\tf(1) == 2 with f as g\n}}\ng(_) := 2\n"
    );
    let mut stdin = worker.stdin.take().unwrap();
    let mut answers = BufReader::new(worker.stdout.take().unwrap()).lines();
    for (n, rego) in [vm, interpreter].into_iter().enumerate() {
        let module = json!({"id": "00000000-0000-7000-8000-000000000001", "version": 1, "name": "p", "rego": rego});
        for request in [
            json!({"op": "validate", "rego": rego}),
            json!({"op": "evaluate", "set": n, "modules": [module], "inputs": [[{"action": "a"}, 1000]]}),
        ] {
            writeln!(stdin, "{request}").unwrap();
            let answer: Value = serde_json::from_str(&answers.next().unwrap().unwrap()).unwrap();
            assert!(
                answer["answer"] == "valid"
                    || answer["outcomes"][0][0]["deny"].as_array().is_some_and(|d| d.len() == 1),
                "{answer}"
            );
        }
    }
    drop(stdin);
    let output = worker.wait_with_output().unwrap();
    assert!(output.status.success());
    assert_eq!(String::from_utf8_lossy(&output.stderr), "");
}

/// A worker answers a batch input by input, in order, and skips an input whose caller had
/// stopped waiting (no time left) without failing the others.
#[test]
fn a_worker_answers_a_batch_in_order_and_skips_what_is_past_its_time() {
    use std::io::{BufRead, BufReader, Write};
    let mut worker = start_worker();
    let module = json!({"id": "00000000-0000-7000-8000-000000000001", "version": 1, "name": "p", "rego": DENY_DELETES});
    let inputs = json!([
        [{"action": "delete", "resource": "a"}, 1000],
        [{"action": "read", "resource": "b"}, 1000],
        [{"action": "delete", "resource": "c"}, 0],
        [{"action": "delete", "resource": "d"}, 1000],
    ]);
    let mut stdin = worker.stdin.take().unwrap();
    let mut answers = BufReader::new(worker.stdout.take().unwrap()).lines();
    writeln!(stdin, "{}", json!({"op": "evaluate", "set": 1, "modules": [module], "inputs": inputs})).unwrap();
    let answer: Value = serde_json::from_str(&answers.next().unwrap().unwrap()).unwrap();
    let outcomes = answer["outcomes"].as_array().unwrap_or_else(|| panic!("{answer}"));
    assert_eq!(outcomes.len(), 4, "{answer}");
    let denied = |n: usize| outcomes[n][0]["deny"].as_array().map(|d| !d.is_empty());
    assert_eq!((denied(0), denied(1), denied(3)), (Some(true), Some(false), Some(true)), "{answer}");
    assert!(outcomes[2].is_null(), "an input with no time left is skipped: {answer}");
    // Tenant Rego runs below the server's own priority.
    let stat = std::fs::read_to_string(format!("/proc/{}/stat", worker.id())).unwrap();
    let fields: Vec<&str> = stat.rsplit_once(')').unwrap().1.split_whitespace().collect();
    assert_eq!(fields[16], agentgov_policy_rego::worker::WORKER_NICE.to_string(), "nice: {stat}");
    drop(stdin);
    assert!(worker.wait().unwrap().success());
}

/// A new set of policies is compiled in the free workers when it is made, each started
/// once: the first checks after a policy change do not spend their budget starting a
/// worker and compiling (which, on a loaded machine, could take all of it and deny them).
/// Without the preload no worker is started until the first check.
#[test]
fn a_new_set_is_compiled_in_the_free_workers_when_it_is_made() {
    use agentgov_domain::ports::{PolicyEngine, PolicyInput, PolicyModule};
    use agentgov_policy_rego::{IsolatedEngine, WorkerCommand};
    let dir = std::env::temp_dir().join(format!("agentgov-preload-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let starts = dir.join("starts");
    // Each start of a worker leaves a line, then runs the real worker with its arguments.
    let script = format!("echo started >> '{}'; exec '{}' \"$@\"", starts.display(), policy_worker().display());
    let command =
        WorkerCommand { program: "/bin/sh".into(), args: vec!["-c".into(), script, "sh".into()], memory_mib: 512 };
    let engine = IsolatedEngine::new(command, 2).unwrap();
    let started = || std::fs::read_to_string(&starts).unwrap_or_default().lines().count();
    let module = PolicyModule {
        id: agentgov_domain::ids::PolicyId(uuid::Uuid::now_v7()),
        version: 1,
        name: "no deletes".into(),
        rego: DENY_DELETES.into(),
        shadow: false,
    };
    let compiled = engine.compile(std::slice::from_ref(&module)).unwrap();
    // Both, normally; the first at least (the others get what is left of a second).
    let preloaded = started();
    assert!((1..=2).contains(&preloaded), "the free workers were started and given the set: {preloaded}");
    // Checks (on the first free worker) find it compiled: no worker is started again.
    for (action, denied) in [("delete", true), ("read", false), ("delete", true)] {
        let input = PolicyInput::from(json!({"action": action, "resource": "db"}));
        let outcomes = compiled.evaluate(&input).unwrap();
        assert_eq!(!outcomes[0].deny.is_empty(), denied, "{action}: {outcomes:?}");
        assert!(outcomes[0].error.is_none(), "{outcomes:?}");
    }
    assert_eq!(started(), preloaded);
    drop(engine);
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Many concurrent checks of one tenant (batched together on the policy threads and in one
/// round trip to a worker) each get the decision on their own input.
#[tokio::test]
async fn concurrent_checks_of_one_tenant_each_get_their_own_decision() {
    let app = spawn_app().await;
    let tenant = app.create_tenant("batched").await;
    create(&app, &tenant, &json!({"name": "no deletes", "rego": DENY_DELETES})).await;
    let agent = register(&app, &tenant, "batched-bot", &[]).await;
    let checks = (0..48).map(|n| {
        let action = if n % 3 == 0 { "delete" } else { "read" };
        let body = json!({"agent_id": agent, "action": action, "resource": format!("db/{n}")});
        let (app, tenant) = (&app, &tenant);
        async move { (action, check(app, tenant, body).await) }
    });
    for (action, decision) in futures::future::join_all(checks).await {
        assert_eq!(decision["allowed"], json!(action == "read"), "{action}: {decision}");
    }
}

#[tokio::test]
async fn a_shadow_policy_is_recorded_not_acted_on_and_reported() {
    let app = spawn_app().await;
    let t = app.create_tenant("acme").await;
    let agent = register(&app, &t, "cleaner", &[]).await;
    let p = create(&app, &t, &json!({"name": "No deletes", "rego": DENY_DELETES, "mode": "shadow"})).await;
    assert_eq!((&p["mode"], &p["enabled"]), (&json!("shadow"), &json!(true)));
    let id = p["id"].as_str().unwrap();
    for (i, action) in ["delete", "read", "delete", "list"].iter().enumerate() {
        let c = check(&app, &t, json!({"agent_id": agent, "action": action, "resource": format!("tmp/{i}")})).await;
        assert_eq!(c["allowed"], true, "{c}");
        let effects: Vec<&str> =
            c["matched_policies"].as_array().unwrap().iter().map(|m| m["effect"].as_str().unwrap()).collect();
        assert_eq!(effects, if *action == "delete" { vec!["would_deny"] } else { vec![] }, "{c}");
    }
    let report = expect(app.get(&format!("/policies/{id}/shadow-report")).header("X-API-Key", &t.api_key), 200).await;
    assert_eq!(
        (&report["decisions"], &report["would_deny"], &report["would_deny_rate"]),
        (&json!(4), &json!(2), &json!(0.5)),
        "{report}"
    );
    assert_eq!(report["top_reasons"][1]["count"], 1, "{report}");
    assert_eq!(report["examples"][0]["resource"], "tmp/2", "newest first: {report}");
    expect_problem(
        app.get(&format!("/policies/{id}/shadow-report?window_hours=0")).header("X-API-Key", &t.api_key),
        422,
    )
    .await;
    expect_problem(app.get(&format!("/policies/{id}/shadow-report?colour=1")).header("X-API-Key", &t.api_key), 422)
        .await;

    // Enforced, the same traffic is denied as often as the shadow said.
    let enforce = json!({"name": "No deletes", "rego": DENY_DELETES, "mode": "enforce"});
    expect(app.put(&format!("/policies/{id}")).bearer_auth(&t.token).json(&enforce), 200).await;
    let mut denied = 0;
    for (i, action) in ["delete", "read", "delete", "list"].iter().enumerate() {
        let c = check(&app, &t, json!({"agent_id": agent, "action": action, "resource": format!("tmp/{i}")})).await;
        denied += usize::from(c["allowed"] == false);
    }
    assert_eq!(denied, 2);
    let disagree = json!({"name": "x", "rego": DENY_DELETES, "mode": "shadow", "enabled": false});
    let problem = expect_problem(app.post("/policies").bearer_auth(&t.token).json(&disagree), 422).await;
    assert_eq!(problem["errors"][0]["field"], "mode", "{problem}");
    expect_problem(
        app.post("/policies").bearer_auth(&t.token).json(&json!({"name": "y", "rego": DENY_DELETES, "mode": "loud"})),
        422,
    )
    .await;
}

#[tokio::test]
async fn a_replay_diffs_two_versions_of_a_template_on_the_recorded_inputs() {
    let app = spawn_app().await;
    let t = app.create_tenant("acme").await;
    let agent = register(&app, &t, "importer", &[]).await;
    let cap = |max: u64, effect: &str| json!({"name": "Bulk cap", "template": {"id": "bulk-operation-cap", "parameters": {"max_records": max, "effect": effect}}});
    let p = create(&app, &t, &cap(1000, "deny")).await;
    let id = p["id"].as_str().unwrap().to_owned();
    // Version 2, in force: stricter, but asks a person instead of denying.
    expect(app.put(&format!("/policies/{id}")).bearer_auth(&t.token).json(&cap(100, "approval")), 200).await;
    for n in [50, 500, 5000] {
        let c = check(
            &app,
            &t,
            json!({"agent_id": agent, "action": "import", "resource": "crm/contacts", "context": {"record_count": n}}),
        )
        .await;
        assert_eq!(c["allowed"], json!(n == 50), "{c}");
    }

    // Version 1 on the same inputs: 500 records allowed again, 5000 denied outright.
    let path = format!("/policies/{id}/replay");
    let r = app.post(&path).bearer_auth(&t.token).json(&json!({"version": 1})).send().await.unwrap();
    assert_eq!(r.status(), 202);
    let location = r.headers()["location"].to_str().unwrap().to_owned();
    let job: Value = r.json().await.unwrap();
    assert_eq!(
        (&job["status"], &job["baseline_version"], &job["candidate_version"]),
        (&json!("queued"), &json!(2), &json!(1))
    );
    assert!(job.get("baseline_rego").is_none() && job.get("candidate_rego").is_none(), "{job}");
    assert_eq!(location, format!("/api/v1/policies/{id}/replay/{}", job["id"].as_str().unwrap()));
    let done = wait_for_replay(&app, &t, &id, job["id"].as_str().unwrap()).await;
    let report = &done["report"];
    assert_eq!(
        (&report["decisions"], &report["replayed"], &report["skipped"]),
        (&json!(3), &json!(3), &json!(0)),
        "{done}"
    );
    assert_eq!(report["baseline"], json!({"allow": 1, "deny": 0, "require_approval": 2, "error": 0}), "{report}");
    assert_eq!(report["candidate"], json!({"allow": 2, "deny": 1, "require_approval": 0, "error": 0}), "{report}");
    assert_eq!(
        (&report["newly_denied"], &report["newly_allowed"], &report["newly_approval_gated"]),
        (&json!(1), &json!(1), &json!(0)),
        "{report}"
    );
    let denied = report["examples"].as_array().unwrap().iter().find(|e| e["change"] == "newly_denied").unwrap();
    assert_eq!((&denied["before"], &denied["after"]), (&json!("require_approval"), &json!("deny")));
    assert_eq!(denied["messages"][0], "affects 5000 records; at most 1000 are allowed at once", "{denied}");

    // Rego given: compiled first; bad requests are 422, another tenant's replay 404.
    let strict = r#"package x
import rego.v1
deny contains "no imports" if input.action == "import"
"#;
    let tried = expect(app.post(&path).bearer_auth(&t.token).json(&json!({"rego": strict})), 202).await;
    let tried = wait_for_replay(&app, &t, &id, tried["id"].as_str().unwrap()).await;
    assert_eq!(tried["report"]["newly_denied"], 3, "{tried}");
    for (body, field) in [
        (json!({}), "version"),
        (json!({"version": 1, "rego": strict}), "rego"),
        (json!({"version": 3}), "version"),
        (json!({"rego": "package x\ndeny contains"}), "rego"),
        (json!({"version": 1, "from": "2026-01-01T00:00:00Z", "to": "2025-01-01T00:00:00Z"}), "from"),
    ] {
        let problem = expect_problem(app.post(&path).bearer_auth(&t.token).json(&body), 422).await;
        assert_eq!(problem["errors"][0]["field"], field, "{body}: {problem}");
    }
    expect_problem(app.post(&path).header("X-API-Key", &t.api_key).json(&json!({"version": 1})), 401).await;
    let other = app.create_tenant("other").await;
    let status = format!("/policies/{id}/replay/{}", job["id"].as_str().unwrap());
    expect_problem(app.get(&status).header("X-API-Key", &other.api_key), 404).await;
}

async fn wait_for_replay(app: &TestApp, t: &Tenant, policy: &str, id: &str) -> Value {
    for _ in 0..400 {
        let job =
            expect(app.get(&format!("/policies/{policy}/replay/{id}")).header("X-API-Key", &t.api_key), 200).await;
        if job["status"] == "completed" || job["status"] == "failed" {
            assert_eq!(job["status"], "completed", "{job}");
            return job;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    panic!("replay {id} did not finish");
}
