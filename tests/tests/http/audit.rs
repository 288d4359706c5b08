//! Spec 4.7, the audit log, over HTTP: writing, listing, lookup, verification, the three
//! streamed exports and the asynchronous export, in embedded and production mode.
use std::time::Duration;

use agentgov_tests::*;
use reqwest::Response;
use serde_json::{Value, json};

fn entry(i: usize) -> Value {
    json!({
        "event_type": if i.is_multiple_of(3) { "app.check" } else { "app.action" },
        "agent_id": "0193a4c2-0000-7000-8000-000000000001",
        "action": "read",
        "resource": format!("db/customers/{i}"),
        "decision": if i.is_multiple_of(4) { "deny" } else { "allow" },
        "risk_score": (i % 10) as f64 / 10.0,
        "details": {"input": {"q": format!("line {i}\nwith, \"quotes\"")}, "reasoning": ["a", "b"], "n": i},
    })
}

async fn write_entries(app: &TestApp, key: &str, n: usize) -> Vec<Value> {
    let mut out = Vec::new();
    for i in 0..n {
        out.push(expect(app.post("/audit/log").header("X-API-Key", key).json(&entry(i)), 201).await);
    }
    out
}

/// Every record of the tenant matching `query`, oldest first, through the paginated list.
async fn list_all(app: &TestApp, key: &str, query: &str) -> Vec<Value> {
    let mut items = Vec::new();
    let mut cursor: Option<String> = None;
    loop {
        let mut path = format!("/audit?limit=7{query}");
        if let Some(c) = &cursor {
            path.push_str(&format!("&cursor={c}"));
        }
        let page = expect(app.get(&path).header("X-API-Key", key), 200).await;
        items.extend(page["items"].as_array().unwrap().iter().cloned());
        match page["next_cursor"].as_str() {
            Some(c) => cursor = Some(c.to_owned()),
            None => break,
        }
    }
    items.reverse();
    items
}

async fn download(res: Response) -> (String, String, Vec<u8>) {
    assert_eq!(res.status(), 200);
    let header = |name: &str| res.headers().get(name).map(|v| v.to_str().unwrap().to_owned()).unwrap_or_default();
    let (content_type, disposition) = (header("content-type"), header("content-disposition"));
    (content_type, disposition, res.bytes().await.unwrap().to_vec())
}

fn parse_jsonl(bytes: &[u8]) -> Vec<Value> {
    std::str::from_utf8(bytes).unwrap().lines().map(|l| serde_json::from_str(l).unwrap()).collect()
}

/// CSV rows turned back into records: the same JSON the list serves.
fn parse_csv(bytes: &[u8]) -> Vec<Value> {
    let mut reader = csv::Reader::from_reader(bytes);
    let headers: Vec<String> = reader.headers().unwrap().iter().map(str::to_owned).collect();
    reader
        .records()
        .map(|row| {
            let row = row.unwrap();
            let cell = |name: &str| row.get(headers.iter().position(|h| h == name).unwrap()).unwrap().to_owned();
            let opt = |name: &str| if cell(name).is_empty() { Value::Null } else { Value::String(cell(name)) };
            let num = |name: &str| {
                if cell(name).is_empty() { Value::Null } else { serde_json::from_str(&cell(name)).unwrap() }
            };
            json!({
                "id": cell("id"),
                "seq": cell("seq").parse::<i64>().unwrap(),
                "timestamp": cell("timestamp"),
                "actor": {"type": cell("actor_type"), "id": cell("actor_id")},
                "event_type": cell("event_type"),
                "agent_id": opt("agent_id"),
                "action": opt("action"),
                "resource": opt("resource"),
                "decision": opt("decision"),
                "risk_score": num("risk_score"),
                "details": serde_json::from_str::<Value>(&cell("details")).unwrap(),
                "prev_hash": cell("prev_hash"),
                "hash": cell("hash"),
                "origin": cell("origin"),
                "session_id": opt("session_id"),
            })
        })
        .collect()
}

async fn wait_for_export(app: &TestApp, key: &str, id: &str) -> Value {
    for _ in 0..200 {
        let job = expect(app.get(&format!("/audit/export/status/{id}")).header("X-API-Key", key), 200).await;
        if job["status"] == "completed" || job["status"] == "failed" {
            return job;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("export {id} did not finish");
}

#[tokio::test]
async fn entries_are_written_listed_fetched_and_verified() {
    let app = spawn_app().await;
    let t = app.create_tenant("acme").await;
    let written = write_entries(&app, &t.api_key, 3).await;
    let first = &written[0];
    assert_eq!(first["event_type"], "app.check");
    assert_eq!(first["actor"]["type"], "api_key");
    assert_eq!(first["details"]["reasoning"], json!(["a", "b"]));
    assert_eq!(written[1]["prev_hash"], first["hash"]);
    assert_eq!(written[1]["seq"].as_i64().unwrap(), first["seq"].as_i64().unwrap() + 1);

    let id = first["id"].as_str().unwrap();
    assert_eq!(&expect(app.get(&format!("/audit/{id}")).header("X-API-Key", &t.api_key), 200).await, first);
    assert_eq!(&expect(app.get(&format!("/audit/{id}")).bearer_auth(&t.token), 200).await, first);
    let page = expect(app.get("/audit?event_type=app.action").bearer_auth(&t.token), 200).await;
    assert_eq!(page["items"].as_array().unwrap().len(), 2);
    assert_eq!(page["items"][0], written[2], "newest first");

    let verdict = expect(app.get("/audit/verify").header("X-API-Key", &t.api_key), 200).await;
    assert_eq!(verdict["valid"], true, "{verdict}");
    assert_eq!(verdict["first_invalid_seq"], Value::Null);
    assert_eq!(verdict["head_hash"], written[2]["hash"]);
    let range = expect(app.get("/audit/verify?from_seq=2&to_seq=3").header("X-API-Key", &t.api_key), 200).await;
    assert_eq!((range["valid"].as_bool(), range["checked"].as_i64()), (Some(true), Some(2)));

    // Another tenant sees none of it.
    let other = app.create_tenant("globex").await;
    expect_problem(app.get(&format!("/audit/{id}")).header("X-API-Key", &other.api_key), 404).await;
    let theirs = list_all(&app, &other.api_key, "").await;
    assert!(!theirs.is_empty() && !theirs.iter().any(|r| written.contains(r)));
    expect_problem(app.get("/audit/not-a-uuid").header("X-API-Key", &t.api_key), 404).await;
}

#[tokio::test]
async fn bad_requests_get_clear_problems() {
    let app = spawn_app().await;
    let t = app.create_tenant("acme").await;
    let key = &t.api_key;
    expect_problem(app.post("/audit/log").json(&entry(0)), 401).await;
    expect_problem(app.get("/audit"), 401).await;

    let mut bad = entry(0);
    bad["risk_score"] = json!(2);
    bad["event_type"] = json!("user.role_changed");
    let err = expect_problem(app.post("/audit/log").header("X-API-Key", key).json(&bad), 422).await;
    let fields: Vec<&str> = err["errors"].as_array().unwrap().iter().map(|e| e["field"].as_str().unwrap()).collect();
    assert_eq!(fields, ["event_type", "risk_score"]);
    let err = expect_problem(
        app.post("/audit/log").header("X-API-Key", key).json(&json!({"event_type": "x", "extra": 1})),
        422,
    )
    .await;
    assert!(err["detail"].as_str().is_some());
    expect_problem(app.post("/audit/log").header("X-API-Key", key).json(&json!({"action": "x"})), 422).await;
    expect_problem(
        app.post("/audit/log")
            .header("X-API-Key", key)
            .header("content-type", "application/json")
            .body("{\"event_type\":"),
        400,
    )
    .await;

    let err = expect_problem(app.get("/audit?agent_id=nope&from=yesterday").header("X-API-Key", key), 422).await;
    let fields: Vec<&str> = err["errors"].as_array().unwrap().iter().map(|e| e["field"].as_str().unwrap()).collect();
    assert_eq!(fields, ["agent_id", "from"]);
    expect_problem(app.get("/audit?evnt_type=typo").header("X-API-Key", key), 422).await;
    expect_problem(app.get("/audit?limit=0").header("X-API-Key", key), 422).await;
    expect_problem(app.get("/audit?cursor=garbage!").header("X-API-Key", key), 422).await;
    expect_problem(app.get("/audit/export/csv?limit=5").header("X-API-Key", key), 422).await;
    expect_problem(app.get("/audit/verify?from_seq=0").header("X-API-Key", key), 422).await;
    expect_problem(app.post("/audit/export/async").header("X-API-Key", key).json(&json!({"format": "xml"})), 422).await;
    let err = expect_problem(
        app.post("/audit/export/async")
            .header("X-API-Key", key)
            .json(&json!({"format": "csv", "filters": {"to": "soon"}})),
        422,
    )
    .await;
    assert_eq!(err["errors"][0]["field"], "filters.to");
    let unknown = uuid::Uuid::now_v7();
    expect_problem(app.get(&format!("/audit/export/status/{unknown}")).header("X-API-Key", key), 404).await;
    expect_problem(app.get(&format!("/audit/export/download/{unknown}")).header("X-API-Key", key), 404).await;

    // A viewer reads the log but cannot write to it.
    let (_, viewer) = app.user(&t, "viewer@acme.test", "viewer").await;
    expect(app.get("/audit").bearer_auth(&viewer), 200).await;
    expect_problem(app.post("/audit/log").bearer_auth(&viewer).json(&entry(0)), 403).await;
}

#[tokio::test]
async fn every_export_format_parses_back_to_the_listed_records() {
    let app = spawn_app().await;
    let t = app.create_tenant("acme").await;
    write_entries(&app, &t.api_key, 25).await;
    for query in ["", "&event_type=app.action&decision=allow"] {
        let listed = list_all(&app, &t.api_key, query).await;
        assert!(!listed.is_empty());
        let filters = query.trim_start_matches('&');
        let get = |path: &str| app.get(&format!("{path}?{filters}")).header("X-API-Key", &t.api_key).send();

        let (content_type, disposition, body) = download(get("/audit/export").await.unwrap()).await;
        assert_eq!(content_type, "application/x-ndjson");
        assert!(disposition.starts_with("attachment") && disposition.contains(".jsonl"), "{disposition}");
        assert_eq!(parse_jsonl(&body), listed);

        let (content_type, disposition, body) = download(get("/audit/export/json").await.unwrap()).await;
        assert_eq!(content_type, "application/json");
        assert!(disposition.contains(".json\""), "{disposition}");
        assert_eq!(serde_json::from_slice::<Vec<Value>>(&body).unwrap(), listed);

        let (content_type, disposition, body) = download(get("/audit/export/csv").await.unwrap()).await;
        assert!(content_type.starts_with("text/csv"), "{content_type}");
        assert!(disposition.contains(".csv"), "{disposition}");
        assert_eq!(parse_csv(&body), listed);
    }
}

#[tokio::test]
async fn asynchronous_exports_complete_and_download_once_done() {
    let app = spawn_app().await;
    let t = app.create_tenant("acme").await;
    write_entries(&app, &t.api_key, 12).await;
    let res = app
        .post("/audit/export/async")
        .header("X-API-Key", &t.api_key)
        .json(&json!({"format": "csv", "filters": {"event_type": "app.action"}}))
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 202);
    let location = res.headers()["location"].to_str().unwrap().to_owned();
    let job: Value = res.json().await.unwrap();
    assert_eq!(job["status"], "queued");
    assert_eq!(location, format!("/api/v1/audit/export/status/{}", job["id"].as_str().unwrap()));
    let id = job["id"].as_str().unwrap();

    let done = wait_for_export(&app, &t.api_key, id).await;
    assert_eq!(done["status"], "completed", "{done}");
    assert_eq!(done["progress"], 1.0);
    assert_eq!(done["rows"], 8);
    assert!(done["started_at"].is_string() && done["finished_at"].is_string() && done["expires_at"].is_string());

    let res = app.get(&format!("/audit/export/download/{id}")).header("X-API-Key", &t.api_key).send().await.unwrap();
    assert_eq!(res.headers()["content-length"].to_str().unwrap(), done["bytes"].to_string());
    let (_, disposition, body) = download(res).await;
    assert!(disposition.contains(&format!("audit-export-{id}.csv")), "{disposition}");
    assert_eq!(parse_csv(&body), list_all(&app, &t.api_key, "&event_type=app.action").await);

    let other = app.create_tenant("globex").await;
    expect_problem(app.get(&format!("/audit/export/status/{id}")).header("X-API-Key", &other.api_key), 404).await;
    expect_problem(app.get(&format!("/audit/export/download/{id}")).header("X-API-Key", &other.api_key), 404).await;
}

#[tokio::test]
async fn a_queued_export_survives_a_restart() {
    let data = tempfile::tempdir().unwrap();
    let path = data.path().to_path_buf();
    // The first process accepts the job but runs no export worker, then goes away.
    let first = spawn_with(|c| {
        c.data_dir = path.clone();
        c.audit_export_worker = false;
    })
    .await;
    let t = first.create_tenant("acme").await;
    write_entries(&first, &t.api_key, 5).await;
    let body = json!({"format": "jsonl"});
    let job = expect(first.post("/audit/export/async").header("X-API-Key", &t.api_key).json(&body), 202).await;
    let id = job["id"].as_str().unwrap().to_owned();
    tokio::time::sleep(Duration::from_millis(200)).await;
    let still = expect(first.get(&format!("/audit/export/status/{id}")).header("X-API-Key", &t.api_key), 200).await;
    assert_eq!(still["status"], "queued");
    expect_problem(first.get(&format!("/audit/export/download/{id}")).header("X-API-Key", &t.api_key), 409).await;
    drop(first);

    let second = spawn_with(|c| c.data_dir = path.clone()).await;
    let done = wait_for_export(&second, &t.api_key, &id).await;
    assert_eq!(done["status"], "completed", "{done}");
    let res = second.get(&format!("/audit/export/download/{id}")).header("X-API-Key", &t.api_key).send().await.unwrap();
    let (_, _, body) = download(res).await;
    assert_eq!(parse_jsonl(&body), list_all(&second, &t.api_key, "").await);
}

#[tokio::test]
async fn admin_actions_are_in_the_log_with_their_actor() {
    let app = spawn_app().await;
    let t = app.create_tenant("acme").await;
    let (bob, _) = app.user(&t, "bob@acme.test", "analyst").await;
    expect(app.put(&format!("/users/{bob}/role")).bearer_auth(&t.token).json(&json!({"role": "viewer"})), 200).await;
    let changes = list_all(&app, &t.api_key, "&event_type=user.role_changed").await;
    assert_eq!(changes.len(), 1);
    assert_eq!(changes[0]["actor"], json!({"type": "user", "id": t.admin_id}));
    assert_eq!(changes[0]["resource"], format!("users/{bob}"));
    assert_eq!(changes[0]["details"], json!({"previous_role": "analyst", "role": "viewer"}));
    let created = list_all(&app, &t.api_key, "&event_type=tenant.created").await;
    assert_eq!(created[0]["actor"], json!({"type": "system", "id": "admin_key"}));
    assert_eq!(list_all(&app, &t.api_key, "&event_type=auth.login&actor_type=user").await.len(), 2);
}

#[tokio::test]
async fn concurrent_writers_leave_a_gap_free_valid_chain() {
    let app = spawn_app().await;
    let t = app.create_tenant("acme").await;
    let mut tasks = Vec::new();
    for i in 0..100 {
        let req = app.post("/audit/log").header("X-API-Key", &t.api_key).json(&entry(i));
        tasks.push(tokio::spawn(async move { expect(req, 201).await }));
    }
    for task in tasks {
        task.await.unwrap();
    }
    let all = list_all(&app, &t.api_key, "").await;
    let seqs: Vec<i64> = all.iter().map(|r| r["seq"].as_i64().unwrap()).collect();
    assert_eq!(seqs, (1..=all.len() as i64).collect::<Vec<_>>());
    let verdict = expect(app.get("/audit/verify").header("X-API-Key", &t.api_key), 200).await;
    assert_eq!(verdict["valid"], true, "{verdict}");
    assert_eq!(verdict["checked"], all.len());
}

#[tokio::test]
async fn in_production_mode_any_replica_runs_and_serves_an_export() {
    // Replica 0 runs no export worker: replica 1 must claim the job from Postgres, and
    // replica 0 must serve the file it wrote.
    let Some((apps, _guard)) = spawn_replicas(2, |i, c| c.audit_export_worker = i == 1).await else { return };
    let t = apps[0].create_tenant("acme").await;
    write_entries(&apps[1], &t.api_key, 10).await;
    let verdict = expect(apps[0].get("/audit/verify").header("X-API-Key", &t.api_key), 200).await;
    assert_eq!(verdict["valid"], true, "{verdict}");

    let body = json!({"format": "json"});
    let job = expect(apps[0].post("/audit/export/async").header("X-API-Key", &t.api_key).json(&body), 202).await;
    let id = job["id"].as_str().unwrap();
    let done = wait_for_export(&apps[0], &t.api_key, id).await;
    assert_eq!(done["status"], "completed", "{done}");
    let res =
        apps[0].get(&format!("/audit/export/download/{id}")).header("X-API-Key", &t.api_key).send().await.unwrap();
    let (_, _, bytes) = download(res).await;
    assert_eq!(serde_json::from_slice::<Vec<Value>>(&bytes).unwrap(), list_all(&apps[1], &t.api_key, "").await);
    let (_, _, jsonl) =
        download(apps[1].get("/audit/export").header("X-API-Key", &t.api_key).send().await.unwrap()).await;
    assert_eq!(parse_jsonl(&jsonl).len(), done["rows"].as_u64().unwrap() as usize);
}

#[tokio::test]
async fn an_audit_write_key_cannot_forge_the_services_events_and_client_entries_say_so() {
    let app = spawn_app().await;
    let t = app.create_tenant("acme").await;
    let body = json!({"name": "sdk", "permissions": ["audit:write", "audit:read"]});
    let created = expect(app.post("/api-keys").bearer_auth(&t.token).json(&body), 201).await;
    let key = created["api_key"].as_str().unwrap().to_owned();
    let before = list_all(&app, &key, "").await;

    for forged in [
        "policy.decision",
        "hitl.approved",
        "guard.blocked",
        "anomaly.detected",
        "anomaly.reported",
        "agent.registered",
        "agent.action",
        "discovery.candidate.confirmed",
        "user.created",
        "siem.test",
        "policy.anything_new",
        "hitl",
    ] {
        let mut e = entry(1);
        e["event_type"] = json!(forged);
        let err = expect_problem(app.post("/audit/log").header("X-API-Key", &key).json(&e), 422).await;
        let fields: Vec<&str> =
            err["errors"].as_array().unwrap().iter().map(|e| e["field"].as_str().unwrap()).collect();
        assert_eq!(fields, ["event_type"], "{forged}: {err}");
        assert!(err["errors"][0]["message"].as_str().unwrap().contains("reserved"), "{err}");
        // A session JWT is no way around it.
        expect_problem(app.post("/audit/log").bearer_auth(&t.token).json(&e), 422).await;
    }
    assert_eq!(list_all(&app, &key, "").await, before, "nothing was stored");
    assert!(before.iter().all(|r| r["origin"] == "service"), "the tenant's own events: {before:?}");

    // A type of the client's own is written, and every view of it says a client wrote it.
    let written = expect(app.post("/audit/log").header("X-API-Key", &key).json(&entry(1)), 201).await;
    assert_eq!((&written["event_type"], &written["origin"]), (&json!("app.action"), &json!("client")));
    let id = written["id"].as_str().unwrap();
    assert_eq!(expect(app.get(&format!("/audit/{id}")).header("X-API-Key", &key), 200).await["origin"], "client");
    let listed = list_all(&app, &key, "").await;
    assert_eq!(listed.last(), Some(&written));
    let get = |path: &str| app.get(path).header("X-API-Key", &key).send();
    let (_, _, jsonl) = download(get("/audit/export?event_type=app.action").await.unwrap()).await;
    assert_eq!(parse_jsonl(&jsonl)[0]["origin"], "client");
    let (_, _, json) = download(get("/audit/export/json").await.unwrap()).await;
    let exported: Vec<Value> = serde_json::from_slice(&json).unwrap();
    assert_eq!(exported, listed);
    let (_, _, csv) = download(get("/audit/export/csv").await.unwrap()).await;
    let header = std::str::from_utf8(&csv).unwrap().lines().next().unwrap().to_owned();
    assert!(header.ends_with(",hash,origin,session_id"), "{header}");
    let rows = parse_csv(&csv);
    assert_eq!(rows.iter().map(|r| r["origin"].as_str().unwrap()).filter(|o| *o == "client").count(), 1);
    assert_eq!(rows, listed);
    // The chain still verifies: `origin` is derived, not hashed.
    assert_eq!(expect(app.get("/audit/verify").header("X-API-Key", &key), 200).await["valid"], true);
}

#[tokio::test]
async fn a_spreadsheet_safe_csv_export_defuses_formulas_only_when_asked() {
    let app = spawn_app().await;
    let t = app.create_tenant("acme").await;
    let hostile = ["=HYPERLINK(\"http://x.test\")", "+1+1", "-2+3", "@SUM(A1)", "plain"];
    for action in hostile {
        let body = json!({"event_type": "app.action", "action": action, "resource": "db/x"});
        expect(app.post("/audit/log").header("X-API-Key", &t.api_key).json(&body), 201).await;
    }
    let actions = |query: &str| {
        let req = app.get(&format!("/audit/export/csv?event_type=app.action{query}")).header("X-API-Key", &t.api_key);
        async move {
            let (_, _, body) = download(req.send().await.unwrap()).await;
            let mut reader = csv::Reader::from_reader(body.as_slice());
            let column = reader.headers().unwrap().iter().position(|h| h == "action").unwrap();
            reader.records().map(|r| r.unwrap()[column].to_owned()).collect::<Vec<_>>()
        }
    };
    // Default: the records' exact text, as before.
    assert_eq!(actions("").await, hostile);
    assert_eq!(actions("&spreadsheet_safe=false").await, hostile);
    // Asked for: every cell a spreadsheet would run gets a leading apostrophe.
    let safe = actions("&spreadsheet_safe=true").await;
    let expected: Vec<String> =
        hostile.iter().map(|a| if *a == "plain" { (*a).to_owned() } else { format!("'{a}") }).collect();
    assert_eq!(safe, expected);
    // A bad value is a clear 422, never ignored.
    expect_problem(app.get("/audit/export/csv?spreadsheet_safe=maybe").header("X-API-Key", &t.api_key), 422).await;
    // JSONL, the evidence format, keeps the exact text.
    expect_problem(app.get("/audit/export?spreadsheet_safe=true").header("X-API-Key", &t.api_key), 422).await;
}
