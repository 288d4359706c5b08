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

// The tenant's trainable detector: training from the audit history, status, metrics,
// versions, rollback, the scoring of policy checks, roles and tenants.

const TRAIN: &str = "/anomalies/detector/train";
const STATUS: &str = "/anomalies/detector/status";
const METRICS: &str = "/anomalies/detector/metrics";
const VERSIONS: &str = "/anomalies/detector/versions";

fn task_path(task_id: &str) -> String {
    format!("/anomalies/detector/tasks/{task_id}")
}

fn fields(problem: &Value) -> Vec<&str> {
    problem["errors"].as_array().unwrap().iter().map(|e| e["field"].as_str().unwrap()).collect()
}

async fn check(app: &TestApp, t: &Tenant, agent: &str, action: &str, resource: &str) -> Value {
    let body = json!({"agent_id": agent, "action": action, "resource": resource, "context": {}});
    expect(app.post("/policies/check").header("X-API-Key", &t.api_key).json(&body), 200).await
}

/// `n` checks of the agent taking turns at `actions` on orders (one shape: `orders/#`).
async fn history(app: &TestApp, t: &Tenant, agent: &str, actions: &[&str], n: usize) {
    for i in 0..n {
        check(app, t, agent, actions[i % actions.len()], &format!("orders/{}", 1000 + i)).await;
    }
}

fn has_anomaly_factor(answer: &Value) -> bool {
    answer["risk_factors"].as_array().unwrap().iter().any(|f| f["code"] == "anomaly")
}

/// Queues a training as the tenant's admin (with `body`, if any): a 202 whose `Location`
/// names the queued task it answers.
async fn train(app: &TestApp, t: &Tenant, body: Option<Value>) -> Value {
    let mut req = app.post(TRAIN).bearer_auth(&t.token);
    if let Some(body) = body {
        req = req.json(&body);
    }
    let res = req.send().await.unwrap();
    let location = res.headers().get("location").map(|v| v.to_str().unwrap().to_owned());
    let (status, task) = read(res).await;
    assert_eq!(status, 202, "{task}");
    let id = task["task_id"].as_str().unwrap();
    assert_eq!(location, Some(format!("/api/v1/anomalies/detector/tasks/{id}")));
    assert_eq!(
        (&task["status"], &task["progress"], &task["model_version"]),
        (&json!("queued"), &json!(0.0), &Value::Null)
    );
    assert_eq!(task["requested_by"], json!({"type": "user", "id": t.admin_id}));
    task
}

/// Polls the task (with the tenant's API key) until it is no longer queued or running.
async fn finished(app: &TestApp, t: &Tenant, task_id: &str) -> Value {
    for _ in 0..300 {
        let task = expect(app.get(&task_path(task_id)).header("X-API-Key", &t.api_key), 200).await;
        if task["status"] != "queued" && task["status"] != "running" {
            return task;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    panic!("detector training {task_id} did not finish in 30 s");
}

/// Trains and waits: the task completed and made `version`.
async fn trained(app: &TestApp, t: &Tenant, version: i64) -> Value {
    let task = train(app, t, None).await;
    let done = finished(app, t, task["task_id"].as_str().unwrap()).await;
    assert_eq!(
        (&done["status"], &done["model_version"], &done["progress"], &done["error"]),
        (&json!("completed"), &json!(version), &json!(1.0), &Value::Null),
        "{done}"
    );
    done
}

/// The versions listed, newest first, each with whether it is active.
async fn versions(app: &TestApp, t: &Tenant) -> Vec<(i64, bool)> {
    let list = expect(app.get(VERSIONS).header("X-API-Key", &t.api_key), 200).await;
    list.as_array().unwrap().iter().map(|v| (v["version"].as_i64().unwrap(), v["active"].as_bool().unwrap())).collect()
}

fn rollback(app: &TestApp, token: &str, version: i64) -> reqwest::RequestBuilder {
    app.post(&format!("/anomalies/detector/rollback/{version}")).bearer_auth(token)
}

#[tokio::test]
async fn detector_train_status_metrics_and_a_flagged_check() {
    let app = spawn_app().await;
    let t = app.create_tenant("acme").await;
    let bot = register(&app, &t, "bot").await;
    history(&app, &t, &bot, &["read", "list"], 60).await;
    let key = |path: &str| app.get(path).header("X-API-Key", &t.api_key);

    // Never trained: off.
    let off = expect(key(STATUS), 200).await;
    assert_eq!(
        (&off["version"], &off["state"], &off["threshold"], &off["trained_at"], &off["task"]),
        (&json!(0), &json!("off"), &Value::Null, &Value::Null, &Value::Null),
        "{off}"
    );
    let metrics = expect(key(METRICS), 200).await;
    assert_eq!((&metrics["version"], &metrics["labelled"]), (&json!(0), &Value::Null), "{metrics}");
    assert!(metrics["synthetic"]["auc"].is_number(), "{metrics}");
    assert_eq!(versions(&app, &t).await, []);

    let task = train(&app, &t, Some(json!({"window_days": 7}))).await;
    assert_eq!(task["window_days"], 7);
    let id = task["task_id"].as_str().unwrap();
    let pending = expect(key(STATUS), 200).await;
    assert!(pending["state"] == "training" || pending["state"] == "active", "{pending}");
    let done = finished(&app, &t, id).await;
    assert_eq!(
        (&done["status"], &done["model_version"], &done["progress"], &done["window_days"]),
        (&json!("completed"), &json!(1), &json!(1.0), &json!(7)),
        "{done}"
    );
    assert!(done["started_at"].is_string() && done["finished_at"].is_string(), "{done}");
    // A session reads the task as well as a key does.
    assert_eq!(expect(app.get(&task_path(id)).bearer_auth(&t.token), 200).await, done);

    let status = expect(key(STATUS), 200).await;
    assert_eq!(
        (&status["version"], &status["state"], &status["agents"], &status["task"]),
        (&json!(1), &json!("active"), &json!(1), &Value::Null),
        "{status}"
    );
    assert!(status["samples"].as_i64().unwrap() >= 60, "{status}");
    let threshold = status["threshold"].as_f64().unwrap();
    assert!(threshold > 0.0 && threshold < 1.0, "{status}");
    assert_eq!(status["threshold_source"], "contamination", "no labels yet: {status}");
    assert!(status["trained_at"].is_string(), "{status}");
    let metrics = expect(key(METRICS), 200).await;
    assert_eq!(metrics["version"], 1, "{metrics}");
    assert!(metrics["labelled"].is_object(), "{metrics}");
    assert!(metrics["synthetic"]["auc"].as_f64().unwrap() > 0.9, "{metrics}");
    let listed = expect(key(VERSIONS), 200).await;
    assert_eq!(listed.as_array().unwrap().len(), 1, "{listed}");
    assert_eq!(
        (&listed[0]["version"], &listed[0]["active"], &listed[0]["task_id"], &listed[0]["samples"]),
        (&json!(1), &json!(true), &json!(id), &status["samples"]),
        "{listed}"
    );

    // An action the agent never took, on its usual kind of resource.
    let odd = check(&app, &t, &bot, "drop_database", "orders/4242").await;
    assert_eq!(odd["anomaly"], true, "{odd}");
    assert!(has_anomaly_factor(&odd), "{odd}");
    let decision_id = odd["decision_id"].as_str().unwrap();
    let reports = expect(key(&format!("/anomalies?agent_id={bot}&type=unusual_action")), 200).await;
    let items = reports["items"].as_array().unwrap();
    assert_eq!(items.len(), 1, "{reports}");
    assert_eq!(
        (&items[0]["source"], &items[0]["model_version"], &items[0]["status"], &items[0]["evidence"]["decision_id"]),
        (&json!("detector"), &json!(1), &json!("open"), &json!(decision_id)),
        "{reports}"
    );
    assert_eq!(items[0]["evidence"]["action"], "drop_database");
    assert!(items[0]["score"].as_f64().unwrap() >= threshold, "{reports}");

    // Its usual work right after is not unusual.
    let usual = check(&app, &t, &bot, "read", "orders/77").await;
    assert_eq!(usual["anomaly"], false, "{usual}");
    assert!(!has_anomaly_factor(&usual), "{usual}");
    // Dry runs are not scored.
    let body = json!({"agent_id": bot, "action": "truncate_table", "resource": "orders/78", "dry_run": true});
    let dry = expect(app.post("/policies/check").header("X-API-Key", &t.api_key).json(&body), 200).await;
    assert_eq!((&dry["anomaly"], &dry["decision_id"]), (&json!(false), &Value::Null), "{dry}");
    assert!(!has_anomaly_factor(&dry), "{dry}");
    let all = expect(key(&format!("/anomalies?agent_id={bot}")), 200).await;
    assert_eq!(all["items"].as_array().unwrap().len(), 1, "{all}");
}

#[tokio::test]
async fn train_then_rollback_restores_previous_scores() {
    let app = spawn_app().await;
    let t = app.create_tenant("acme").await;
    let bot = register(&app, &t, "bot").await;
    history(&app, &t, &bot, &["read", "list"], 60).await;
    let v1 = trained(&app, &t, 1).await;
    // Under version 1 the agent takes up writing; version 2 learns it as usual.
    history(&app, &t, &bot, &["write"], 60).await;
    let v2 = trained(&app, &t, 2).await;
    let listed = expect(app.get(VERSIONS).header("X-API-Key", &t.api_key), 200).await;
    let summary: Vec<(Value, Value, Value, Value)> = listed
        .as_array()
        .unwrap()
        .iter()
        .map(|v| (v["version"].clone(), v["active"].clone(), v["task_id"].clone(), v["samples"].clone()))
        .collect();
    assert_eq!(
        summary,
        [
            (json!(2), json!(true), v2["task_id"].clone(), json!(120)),
            (json!(1), json!(false), v1["task_id"].clone(), json!(60)),
        ],
        "{listed}"
    );

    let flagged = check(&app, &t, &bot, "export_all", "orders/5").await;
    assert_eq!(flagged["anomaly"], true, "version 2 flags a new action: {flagged}");
    assert!(has_anomaly_factor(&flagged), "{flagged}");

    // Version 0: the detector is off.
    let off = expect(rollback(&app, &t.token, 0), 200).await;
    assert_eq!(
        (&off["version"], &off["state"], &off["threshold"], &off["threshold_source"]),
        (&json!(0), &json!("off"), &Value::Null, &Value::Null),
        "{off}"
    );
    let unscored = check(&app, &t, &bot, "purge_cache", "orders/6").await;
    assert_eq!(unscored["anomaly"], false, "the detector is off: {unscored}");
    assert!(!has_anomaly_factor(&unscored), "{unscored}");
    assert_eq!(versions(&app, &t).await, [(2, false), (1, false)]);
    assert_eq!(expect(app.get(STATUS).header("X-API-Key", &t.api_key), 200).await, off);
    let metrics = expect(app.get(METRICS).header("X-API-Key", &t.api_key), 200).await;
    assert_eq!((&metrics["version"], &metrics["labelled"]), (&json!(0), &Value::Null), "{metrics}");

    // Back to version 1: new actions stand out again.
    let on = expect(rollback(&app, &t.token, 1), 200).await;
    assert_eq!((&on["version"], &on["state"], &on["samples"]), (&json!(1), &json!("active"), &json!(60)), "{on}");
    let again = check(&app, &t, &bot, "grant_admin", "orders/7").await;
    assert_eq!(again["anomaly"], true, "version 1 flags a new action: {again}");
    assert!(has_anomaly_factor(&again), "{again}");
    assert_eq!(versions(&app, &t).await, [(2, false), (1, true)]);
    assert_eq!(expect(app.get(METRICS).header("X-API-Key", &t.api_key), 200).await["version"], 1);

    // No such versions; nothing changes.
    expect_problem(rollback(&app, &t.token, 7), 404).await;
    expect_problem(rollback(&app, &t.token, -1), 404).await;
    assert_eq!(versions(&app, &t).await, [(2, false), (1, true)]);
    let audit = expect(app.get("/audit?event_type=anomaly.model.activated").header("X-API-Key", &t.api_key), 200).await;
    assert_eq!(audit["items"].as_array().unwrap().len(), 2, "{audit}");
}

#[tokio::test]
async fn detector_endpoints_enforce_roles_and_tenants() {
    let app = spawn_app().await;
    let t = app.create_tenant("acme").await;
    let other = app.create_tenant("globex").await;
    let (_, analyst) = app.user(&t, "ann@acme.test", "analyst").await;
    let (_, viewer) = app.user(&t, "vic@acme.test", "viewer").await;

    // Training: an admin's session only, and a window of 1 to 90 days.
    expect_problem(app.post(TRAIN), 401).await;
    expect_problem(app.post(TRAIN).header("X-API-Key", &t.api_key), 401).await;
    expect_problem(app.post(TRAIN).bearer_auth(&analyst), 403).await;
    expect_problem(app.post(TRAIN).bearer_auth(&viewer), 403).await;
    for days in [0, 91] {
        let body = json!({"window_days": days});
        let problem = expect_problem(app.post(TRAIN).bearer_auth(&t.token).json(&body), 422).await;
        assert_eq!(fields(&problem), ["window_days"], "{problem}");
    }
    let refused = expect(app.get(STATUS).bearer_auth(&viewer), 200).await;
    assert_eq!((&refused["state"], &refused["task"]), (&json!("off"), &Value::Null), "nothing queued: {refused}");

    // One training at a time: a second is refused while the first is queued or running.
    let first = train(&app, &t, None).await;
    let first_id = first["task_id"].as_str().unwrap().to_owned();
    let res = app.post(TRAIN).bearer_auth(&t.token).send().await.unwrap();
    let (code, second) = read(res).await;
    let mut tasks = vec![first_id.clone()];
    if code == 409 {
        assert_eq!(second["status"], 409, "{second}");
        assert!(second["type"].as_str().unwrap().starts_with("urn:agentgov:problem:"), "{second}");
    } else {
        // The worker was quicker than the second request: the first had finished.
        assert_eq!(code, 202, "{second}");
        let first_now = expect(app.get(&task_path(&first_id)).header("X-API-Key", &t.api_key), 200).await;
        assert_eq!(first_now["status"], "completed", "{first_now}");
        let at = |v: &Value| {
            time::OffsetDateTime::parse(v.as_str().unwrap(), &time::format_description::well_known::Rfc3339).unwrap()
        };
        assert!(at(&first_now["finished_at"]) <= at(&second["created_at"]), "{first_now} then {second}");
        tasks.push(second["task_id"].as_str().unwrap().to_owned());
    }
    for (i, id) in tasks.iter().enumerate() {
        let done = finished(&app, &t, id).await;
        assert_eq!((&done["status"], &done["model_version"]), (&json!("completed"), &json!(i + 1)), "{done}");
    }
    let version = tasks.len();

    // Readers of the tenant see the task and the status; only an admin's session rolls back.
    for token in [&analyst, &viewer] {
        expect(app.get(&task_path(&first_id)).bearer_auth(token), 200).await;
        let status = expect(app.get(STATUS).bearer_auth(token), 200).await;
        assert_eq!((&status["version"], &status["state"]), (&json!(version), &json!("active")), "{status}");
        expect_problem(rollback(&app, token, 0), 403).await;
    }
    expect_problem(app.post("/anomalies/detector/rollback/0").header("X-API-Key", &t.api_key), 401).await;
    expect_problem(app.get(STATUS), 401).await;
    expect_problem(app.get(&task_path(&first_id)), 401).await;
    expect_problem(app.get(&task_path("0193a4c2-0000-7000-8000-00000000abcd")).header("X-API-Key", &t.api_key), 404)
        .await;
    let status = expect(app.get(STATUS).header("X-API-Key", &t.api_key), 200).await;
    assert_eq!(status["version"], version, "the refused rollbacks changed nothing: {status}");

    // Another tenant sees none of it, and its own detector stays off.
    expect_problem(app.get(&task_path(&first_id)).header("X-API-Key", &other.api_key), 404).await;
    expect_problem(app.get(&task_path(&first_id)).bearer_auth(&other.token), 404).await;
    let theirs = expect(app.get(STATUS).header("X-API-Key", &other.api_key), 200).await;
    assert_eq!(
        (&theirs["version"], &theirs["state"], &theirs["task"]),
        (&json!(0), &json!("off"), &Value::Null),
        "{theirs}"
    );
    assert_eq!(versions(&app, &other).await, []);
    let metrics = expect(app.get(METRICS).bearer_auth(&other.token), 200).await;
    assert_eq!((&metrics["version"], &metrics["labelled"]), (&json!(0), &Value::Null), "{metrics}");
    expect_problem(rollback(&app, &other.token, 1), 404).await;
    let status = expect(app.get(STATUS).header("X-API-Key", &t.api_key), 200).await;
    assert_eq!(status["version"], version, "{status}");
}
