//! Spec 4.8: anomaly reports over HTTP — filing, lists and filters, statistics, labels,
//! credentials and tenant isolation.
use agentgov_tests::*;
use serde_json::{Value, json};

async fn register(app: &TestApp, t: &Tenant, name: &str) -> String {
    let body = json!({"name": name, "type": "llm"});
    let agent = expect(app.post("/agents/register").header("X-API-Key", &t.api_key).json(&body), 201).await;
    agent["id"].as_str().unwrap().to_owned()
}

async fn file(app: &TestApp, t: &Tenant, agent: &str, kind: &str, severity: &str) -> Value {
    let body = json!({"agent_id": agent, "type": kind, "severity": severity, "description": "seen",
        "evidence": {"requests_per_minute": 900}});
    let res = app.post("/anomalies/report").header("X-API-Key", &t.api_key).json(&body).send().await.unwrap();
    let location = res.headers().get("location").map(|v| v.to_str().unwrap().to_owned());
    let (status, body) = read(res).await;
    assert_eq!(status, 201, "{body}");
    assert_eq!(location, Some(format!("/api/v1/anomalies/{}", body["id"].as_str().unwrap())));
    body
}

fn ids(page: &Value) -> Vec<String> {
    page["items"].as_array().unwrap().iter().map(|r| r["id"].as_str().unwrap().to_owned()).collect()
}

#[tokio::test]
async fn file_list_filter_and_page() {
    let app = spawn_app().await;
    let t = app.create_tenant("acme").await;
    let (x, y) = (register(&app, &t, "x").await, register(&app, &t, "y").await);
    let first = file(&app, &t, &x, "rate_spike", "high").await;
    assert_eq!(
        (first["status"].clone(), first["source"].clone(), first["score"].clone()),
        (json!("open"), json!("manual"), json!(0.75))
    );
    assert_eq!(first["evidence"]["requests_per_minute"], 900);
    let second = file(&app, &t, &y, "off_hours", "low").await;
    let third = file(&app, &t, &x, "off_hours", "critical").await;

    let all = expect(app.get("/anomalies").bearer_auth(&t.token), 200).await;
    assert_eq!(
        ids(&all),
        [third["id"].clone(), second["id"].clone(), first["id"].clone()].map(|v| v.as_str().unwrap().to_owned())
    );
    let key = |path: &str| app.get(path).header("X-API-Key", &t.api_key);
    assert_eq!(ids(&expect(key(&format!("/anomalies?agent_id={x}")), 200).await).len(), 2);
    assert_eq!(
        ids(&expect(key("/anomalies?type=off_hours&severity=low"), 200).await),
        [second["id"].as_str().unwrap()]
    );
    let page = expect(key("/anomalies?limit=2"), 200).await;
    let rest = expect(key(&format!("/anomalies?limit=2&cursor={}", page["next_cursor"].as_str().unwrap())), 200).await;
    assert_eq!(ids(&rest), [first["id"].as_str().unwrap()]);
    assert!(rest["next_cursor"].is_null());
    let bad = expect_problem(key("/anomalies?type=weird&status=closed"), 422).await;
    let fields: Vec<&str> = bad["errors"].as_array().unwrap().iter().map(|e| e["field"].as_str().unwrap()).collect();
    assert_eq!(fields, ["type", "status"]);
    assert_eq!(expect(key(&format!("/anomalies/{}", first["id"].as_str().unwrap())), 200).await, first);
}

#[tokio::test]
async fn invalid_reports_and_credentials_are_refused() {
    let app = spawn_app().await;
    let t = app.create_tenant("acme").await;
    let x = register(&app, &t, "x").await;
    let post = |body: Value| app.post("/anomalies/report").header("X-API-Key", &t.api_key).json(&body);
    expect_problem(post(json!({"agent_id": x, "type": "weird", "severity": "low", "description": "d"})), 422).await;
    let body = expect_problem(
        post(json!({"agent_id": x, "type": "manual", "severity": "low", "description": "",
        "score": 2, "source": "detector"})),
        422,
    )
    .await;
    let fields: Vec<&str> = body["errors"].as_array().unwrap().iter().map(|e| e["field"].as_str().unwrap()).collect();
    assert_eq!(fields, ["score", "description", "source"]);
    let ghost = json!({"agent_id": "0193a4c2-0000-7000-8000-00000000abcd", "type": "manual", "severity": "low",
        "description": "d"});
    expect_problem(post(ghost), 404).await;
    expect_problem(app.get("/anomalies"), 401).await;
    expect_problem(app.get("/anomalies/stats"), 401).await;
    let (_, viewer) = app.user(&t, "vic@acme.test", "viewer").await;
    let ok = json!({"agent_id": x, "type": "manual", "severity": "low", "description": "d"});
    expect_problem(app.post("/anomalies/report").bearer_auth(&viewer).json(&ok), 403).await;
    expect(app.get("/anomalies").bearer_auth(&viewer), 200).await;
}

#[tokio::test]
async fn analysts_label_reports_and_other_tenants_see_nothing() {
    let app = spawn_app().await;
    let t = app.create_tenant("acme").await;
    let other = app.create_tenant("globex").await;
    let x = register(&app, &t, "x").await;
    let r = file(&app, &t, &x, "denied_burst", "medium").await;
    let path = format!("/anomalies/{}", r["id"].as_str().unwrap());
    let resolved = json!({"status": "false_positive"});
    expect_problem(app.put(&path).header("X-API-Key", &t.api_key).json(&resolved), 401).await;
    let (_, viewer) = app.user(&t, "vic@acme.test", "viewer").await;
    expect_problem(app.put(&path).bearer_auth(&viewer).json(&resolved), 403).await;
    let (_, analyst) = app.user(&t, "ann@acme.test", "analyst").await;
    let labelled = expect(app.put(&path).bearer_auth(&analyst).json(&resolved), 200).await;
    assert_eq!(labelled["status"], "false_positive");
    assert_eq!(labelled["status_changed_by"]["type"], "user");
    expect_problem(app.put(&path).bearer_auth(&analyst).json(&json!({"status": "closed"})), 422).await;
    let audit = expect(app.get("/audit?event_type=anomaly.status_changed").header("X-API-Key", &t.api_key), 200).await;
    assert_eq!(audit["items"][0]["details"]["after"], "false_positive");

    expect_problem(app.get(&path).header("X-API-Key", &other.api_key), 404).await;
    expect_problem(app.put(&path).bearer_auth(&other.token).json(&resolved), 404).await;
    assert_eq!(expect(app.get("/anomalies").header("X-API-Key", &other.api_key), 200).await["items"], json!([]));
    let stats = expect(app.get("/anomalies/stats").header("X-API-Key", &other.api_key), 200).await;
    assert_eq!(stats["total"], 0);
    let filed = json!({"agent_id": x, "type": "manual", "severity": "low", "description": "d"});
    expect_problem(app.post("/anomalies/report").header("X-API-Key", &other.api_key).json(&filed), 404).await;
}

#[tokio::test]
async fn stats_over_the_default_window() {
    let app = spawn_app().await;
    let t = app.create_tenant("acme").await;
    let (x, y) = (register(&app, &t, "x").await, register(&app, &t, "y").await);
    for (agent, kind, severity) in
        [(&x, "rate_spike", "high"), (&x, "off_hours", "high"), (&y, "guard_attack", "critical")]
    {
        file(&app, &t, agent, kind, severity).await;
    }
    let stats = expect(app.get("/anomalies/stats").header("X-API-Key", &t.api_key), 200).await;
    assert_eq!(stats["bucket"], "hour");
    assert_eq!(stats["total"], 3);
    assert_eq!(stats["by_severity"], json!({"low": 0, "medium": 0, "high": 2, "critical": 1}));
    assert_eq!(stats["by_type"]["guard_attack"], 1);
    assert_eq!(stats["by_status"]["open"], 3);
    assert_eq!(stats["top_agents"][0], json!({"agent_id": x, "count": 2}));
    let series = stats["series"].as_array().unwrap();
    assert!(series.len() == 24 || series.len() == 25, "{}", series.len());
    assert_eq!(series.last().unwrap()["count"], 3);
    let days = expect(app.get("/anomalies/stats?bucket=day").header("X-API-Key", &t.api_key), 200).await;
    assert_eq!(days["series"].as_array().unwrap().iter().map(|p| p["count"].as_i64().unwrap()).sum::<i64>(), 3);
    expect_problem(app.get("/anomalies/stats?bucket=week").header("X-API-Key", &t.api_key), 422).await;
    expect_problem(app.get("/anomalies/stats?from=2020-01-01T00:00:00Z").header("X-API-Key", &t.api_key), 422).await;
}
