//! Spec 4.5, shadow-agent discovery, over HTTP: ingesting observed events (one at a time and
//! in batches of up to 10,000, with every validation error named), attribution to registered
//! agents, clustering run by the server's worker into candidates, confirming and dismissing
//! them (and what that does to later events and to the next clustering), tenant isolation,
//! permissions, and decisions taken on one replica seen by another.
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use agentgov_tests::*;
use serde_json::{Value, json};

/// The programs of the hidden agents: agent `k` runs `{WORDS[k]}_bot.py`.
const WORDS: [&str; 6] = ["invoice", "triage", "payroll", "ledger", "helpdesk", "pricing"];

/// The API key fingerprint hidden agent `k` uses (a hash, never a key).
fn key_fingerprint(k: usize) -> String {
    format!("sha256:fd{k:02x}e3b0c4a2b9fc{k:02x}")
}

/// Event `n` of hidden agent `k`, deterministic: the agent runs on four replicas
/// (`{word}-worker-{0..3}.prod`) in its own network `10.{k+1}.0.0/24`, with one script, one
/// API key and its own two tools, through two sources, with varying client versions.
fn event_of(k: usize, n: usize) -> Value {
    let w = WORDS[k];
    let tools: Vec<String> = match n % 3 {
        0 => vec![format!("{w}_lookup"), format!("{w}_update")],
        1 => vec![format!("{w}_lookup")],
        _ => vec![format!("{w}_update")],
    };
    json!({
        "source": if n.is_multiple_of(2) { "egress-gateway" } else { "llm-proxy" },
        "timestamp": format!("2025-06-01T{:02}:{:02}:{:02}Z", 8 + k, n / 60 % 60, n % 60),
        "host": format!("{w}-worker-{}.prod", n % 4),
        "ip": format!("10.{}.0.{}", k + 1, 10 + n % 200),
        "user_agent": format!("langchain/0.2.{}", n % 7),
        "process": format!("python3 /srv/{w}/{w}_bot.py --live"),
        "endpoint": "https://api.openai.com/v1/chat/completions",
        "model": "gpt-4o",
        "tool_calls": tools,
        "api_key_fingerprint": key_fingerprint(k),
    })
}

/// `per` events of each hidden agent in `agents`, interleaved.
fn events_of(agents: std::ops::Range<usize>, per: usize) -> Vec<Value> {
    (0..per).flat_map(|n| agents.clone().map(move |k| event_of(k, n))).collect()
}

/// `secs` since the epoch as an RFC 3339 UTC date-time.
fn rfc3339(secs: i64) -> String {
    let at = time::OffsetDateTime::from_unix_timestamp(secs).unwrap();
    at.format(&time::format_description::well_known::Rfc3339).unwrap()
}

fn now_secs() -> i64 {
    SystemTime::now().duration_since(UNIX_EPOCH).unwrap().as_secs() as i64
}

async fn ingest(app: &TestApp, key: &str, event: &Value) -> Value {
    expect(app.post("/discovery/ingest").header("X-API-Key", key).json(event), 202).await
}

async fn batch(app: &TestApp, key: &str, events: Vec<Value>) -> Value {
    expect(app.post("/discovery/ingest/batch").header("X-API-Key", key).json(&json!({"events": events})), 202).await
}

/// `POST /discovery/cluster`: the job, after checking its `Location`.
async fn start_clustering(app: &TestApp, key: &str) -> Value {
    let res = app.post("/discovery/cluster").header("X-API-Key", key).send().await.unwrap();
    assert_eq!(res.status(), 202);
    let location = res.headers()["location"].to_str().unwrap().to_owned();
    let job: Value = res.json().await.unwrap();
    assert_eq!(location, format!("/api/v1/discovery/cluster/{}", job["id"].as_str().unwrap()));
    job
}

/// Polls the job until it is no longer queued or running (up to a minute).
async fn finished(app: &TestApp, key: &str, id: &str) -> Value {
    for _ in 0..600 {
        let job = expect(app.get(&format!("/discovery/cluster/{id}")).header("X-API-Key", key), 200).await;
        if job["status"] != "queued" && job["status"] != "running" {
            return job;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("clustering job {id} did not finish");
}

/// Starts clustering and waits for it; asserts it completed.
async fn cluster(app: &TestApp, key: &str) -> Value {
    let job = start_clustering(app, key).await;
    let done = finished(app, key, job["id"].as_str().unwrap()).await;
    assert_eq!((&done["status"], &done["progress"]), (&json!("completed"), &json!(1.0)), "{done}");
    done
}

/// The tenant's candidates (`query` like `status=pending`), every page.
async fn candidates(app: &TestApp, key: &str, query: &str) -> Vec<Value> {
    let mut items = Vec::new();
    let mut cursor: Option<String> = None;
    loop {
        let mut path = format!("/discovery/candidates?limit=2&{query}");
        if let Some(c) = &cursor {
            path.push_str(&format!("&cursor={c}"));
        }
        let page = expect(app.get(&path).header("X-API-Key", key), 200).await;
        items.extend(page["items"].as_array().unwrap().iter().cloned());
        match page["next_cursor"].as_str() {
            Some(c) => cursor = Some(c.to_owned()),
            None => return items,
        }
    }
}

/// The candidate whose events came from hidden agent `k` (by its API key fingerprint).
fn candidate_of(candidates: &[Value], k: usize) -> &Value {
    let fp = key_fingerprint(k);
    candidates
        .iter()
        .find(|c| c["fingerprint"]["api_key_fingerprint"][0]["value"] == fp.as_str())
        .unwrap_or_else(|| panic!("no candidate for agent {k} among {candidates:#?}"))
}

fn ids(items: &[Value]) -> Vec<String> {
    let mut ids: Vec<String> = items.iter().map(|v| v["id"].as_str().unwrap().to_owned()).collect();
    ids.sort();
    ids
}

/// The ids of the tenant's registered agents.
async fn agent_ids(app: &TestApp, key: &str) -> Vec<String> {
    let page = expect(app.get("/agents?limit=100").header("X-API-Key", key), 200).await;
    ids(page["items"].as_array().unwrap())
}

/// Sends the confirmations at once, each from its own task; asserts exactly one registered
/// the agent (201) and the others answered it (200). Returns the agent's id.
async fn race_confirmations(requests: Vec<reqwest::RequestBuilder>) -> String {
    let tasks: Vec<_> = requests.into_iter().map(|req| tokio::spawn(req.send())).collect();
    let mut answers = Vec::new();
    for task in tasks {
        answers.push(read(task.await.unwrap().unwrap()).await);
    }
    let created = answers.iter().filter(|(s, _)| s.as_u16() == 201).count();
    assert!(created == 1 && answers.iter().all(|(s, _)| [200, 201].contains(&s.as_u16())), "{answers:#?}");
    let id = answers[0].1["id"].as_str().unwrap().to_owned();
    assert!(answers.iter().all(|(_, agent)| agent["id"] == id.as_str()), "{answers:#?}");
    id
}

/// The fields a problem names.
fn fields(problem: &Value) -> Vec<String> {
    problem["errors"].as_array().unwrap().iter().map(|e| e["field"].as_str().unwrap().to_owned()).collect()
}

/// A key of the tenant with only `permissions`.
async fn key(app: &TestApp, t: &Tenant, permissions: &[&str]) -> String {
    let body = json!({"name": format!("{permissions:?}"), "permissions": permissions});
    let created = expect(app.post("/api-keys").bearer_auth(&t.token).json(&body), 201).await;
    created["api_key"].as_str().unwrap().to_owned()
}

#[tokio::test]
async fn ingest_validates_every_field_and_stores_a_good_event_as_shadow() {
    let app = spawn_app().await;
    let t = app.create_tenant("acme").await;
    let post = |body: &Value| app.post("/discovery/ingest").header("X-API-Key", &t.api_key).json(body);

    let good = json!({
        "source": " egress-gateway ",
        "timestamp": "2025-06-01T10:00:00+02:00",
        "host": " invoice-worker-1.prod ",
        "ip": "10.1.0.7",
        "user_agent": "langchain/0.2.1",
        "process": "python3 /srv/invoice/invoice_bot.py",
        "endpoint": "https://api.openai.com/v1/chat/completions",
        "model": "gpt-4o",
        "tool_calls": ["invoice_lookup", "invoice_update"],
        "api_key_fingerprint": key_fingerprint(0),
        "attributes": {"region": "eu-west-1", "bytes": 512},
    });
    let stored = expect(post(&good), 202).await;
    for field in ["id", "source", "timestamp", "received_at", "disposition"] {
        assert!(stored.get(field).is_some(), "{field} missing from {stored}");
    }
    assert!(stored["id"].as_str().unwrap().parse::<uuid::Uuid>().is_ok(), "{stored}");
    assert_eq!(stored["disposition"], "shadow");
    assert_eq!(stored["timestamp"], "2025-06-01T08:00:00Z", "kept in UTC");
    assert_eq!((&stored["source"], &stored["host"]), (&json!("egress-gateway"), &json!("invoice-worker-1.prod")));
    assert_eq!(stored["tool_calls"], good["tool_calls"]);
    assert_eq!(stored["attributes"], good["attributes"]);
    assert_eq!(stored["api_key_fingerprint"], good["api_key_fingerprint"]);
    assert!(stored.get("attributed_agent_id").is_none() && stored.get("candidate_id").is_none(), "{stored}");
    assert!(stored.get("tenant_id").is_none(), "{stored}");

    // The least an event carries: a source and one observed attribute; no timestamp is now.
    let minimal = expect(post(&json!({"source": "proxy", "ip": "2001:db8::1"})), 202).await;
    assert_eq!(minimal["timestamp"], minimal["received_at"], "{minimal}");
    assert_eq!(minimal["disposition"], "shadow");
    // An agent id the tenant does not have is kept as named, the event still shadow.
    let unknown = json!({"source": "proxy", "agent_id": "0193a4c2-0000-7000-8000-0000000000aa"});
    let kept = expect(post(&unknown), 202).await;
    assert_eq!((&kept["disposition"], &kept["agent_id"]), (&json!("shadow"), &unknown["agent_id"]));
    assert!(kept.get("attributed_agent_id").is_none(), "{kept}");
    // A minute ahead is clock skew; a session token works as well as a key.
    let soon = json!({"source": "proxy", "host": "h", "timestamp": rfc3339(now_secs() + 60)});
    let res = app.post("/discovery/ingest").bearer_auth(&t.token).json(&soon);
    assert_eq!(expect(res, 202).await["disposition"], "shadow");

    // Every bad field at once, each named.
    let bad = json!({
        "source": " ",
        "timestamp": "yesterday",
        "host": "h".repeat(256),
        "ip": "10.0.0",
        "user_agent": "u".repeat(1025),
        "process": "p".repeat(1025),
        "endpoint": "e".repeat(2049),
        "model": "m".repeat(201),
        "tool_calls": ["invoice_lookup", ""],
        "api_key_fingerprint": "sk-proj-abcdefghijklmnopqrstuvwxyz0123456789ABCDEFGH",
        "agent_id": "not-a-uuid",
    });
    let p = expect_problem(post(&bad), 422).await;
    let got = fields(&p);
    for field in [
        "source",
        "timestamp",
        "host",
        "ip",
        "user_agent",
        "process",
        "endpoint",
        "model",
        "tool_calls[1]",
        "api_key_fingerprint",
        "agent_id",
    ] {
        assert!(got.iter().any(|g| g == field), "{field} missing from {p}");
    }
    let leaked =
        json!({"source": "proxy", "api_key_fingerprint": "sk-proj-abcdefghijklmnopqrstuvwxyz0123456789ABCDEFGH"});
    let p = expect_problem(post(&leaked), 422).await;
    assert_eq!(fields(&p), ["api_key_fingerprint"]);
    assert!(!p.to_string().contains("abcdefghijklmnopqrstuvwxyz"), "the secret is echoed: {p}");

    // One bad field at a time.
    let many_tools: Vec<String> = (0..65).map(|i| format!("tool_{i}")).collect();
    for (body, field) in [
        (json!({"host": "h"}), "source"),
        (json!({"source": 7, "host": "h"}), "source"),
        (json!({"source": "s".repeat(101), "host": "h"}), "source"),
        (json!({"source": "proxy"}), "host"),
        (json!({"source": "proxy", "host": ""}), "host"),
        (json!({"source": "proxy", "ip": "999.0.0.1"}), "ip"),
        (json!({"source": "proxy", "ip": "10.0.0.1/24"}), "ip"),
        (json!({"source": "proxy", "host": "h", "timestamp": "2025-06-01 08:00:00"}), "timestamp"),
        (json!({"source": "proxy", "host": "h", "timestamp": "2999-01-01T00:00:00Z"}), "timestamp"),
        (json!({"source": "proxy", "host": "h", "timestamp": rfc3339(now_secs() + 600)}), "timestamp"),
        (json!({"source": "proxy", "host": "h", "tool_calls": "send_email"}), "tool_calls"),
        (json!({"source": "proxy", "host": "h", "tool_calls": many_tools}), "tool_calls"),
        (json!({"source": "proxy", "host": "h", "attributes": ["a"]}), "attributes"),
        (json!({"source": "proxy", "host": "h", "attributes": {"blob": "x".repeat(20_000)}}), "attributes"),
        (json!({"source": "proxy", "host": "h", "agent_id": 42}), "agent_id"),
        (json!({"source": "proxy", "host": "h", "colour": "red"}), "colour"),
    ] {
        let p = expect_problem(post(&body), 422).await;
        assert_eq!(fields(&p), [field], "{body}: {p}");
    }

    // Not JSON, no body, the wrong media type, no credentials.
    let raw = || app.post("/discovery/ingest").header("X-API-Key", &t.api_key);
    expect_problem(raw().header("Content-Type", "application/json").body("{\"source\": "), 400).await;
    expect_problem(raw().header("Content-Type", "application/json").body("source=proxy"), 400).await;
    expect_problem(raw().header("Content-Type", "application/json"), 400).await;
    let text = raw().header("Content-Type", "text/plain").body(r#"{"source": "proxy", "host": "h"}"#);
    expect_problem(text, 415).await;
    expect_problem(raw().body(r#"{"source": "proxy", "host": "h"}"#), 415).await;
    expect_problem(app.post("/discovery/ingest").json(&json!({"source": "proxy", "host": "h"})), 401).await;
    let wrong_key = app.post("/discovery/ingest").header("X-API-Key", "agk_nope").json(&good);
    expect_problem(wrong_key, 401).await;
}

#[tokio::test]
async fn registered_agents_are_attributed_and_batches_report_each_item() {
    let app = spawn_app().await;
    let t = app.create_tenant("acme").await;
    let register = json!({"name": "Invoice Runner", "type": "workflow", "capabilities": ["invoice lookup"]});
    let agent = expect(app.post("/agents/register").header("X-API-Key", &t.api_key).json(&register), 201).await;
    let agent_id = agent["id"].as_str().unwrap();

    let mut named = event_of(0, 0);
    named["agent_id"] = json!(agent_id);
    let e = ingest(&app, &t.api_key, &named).await;
    assert_eq!(
        (&e["disposition"], &e["agent_id"], &e["attributed_agent_id"]),
        (&json!("attributed"), &json!(agent_id), &json!(agent_id)),
        "{e}"
    );
    // Another tenant's agent is not this tenant's: the event stays shadow.
    let other = app.create_tenant("globex").await;
    let theirs = expect(app.post("/agents/register").header("X-API-Key", &other.api_key).json(&register), 201).await;
    let mut foreign = event_of(0, 1);
    foreign["agent_id"] = theirs["id"].clone();
    let e = ingest(&app, &t.api_key, &foreign).await;
    assert_eq!(e["disposition"], "shadow", "{e}");
    assert!(e.get("attributed_agent_id").is_none(), "{e}");

    // A batch mixing valid and invalid items: the valid ones are kept, the others reported.
    let mut attributed = event_of(1, 0);
    attributed["agent_id"] = json!(agent_id);
    let mut bad_ip = event_of(0, 2);
    bad_ip["ip"] = json!("10.0.0");
    let mut unknown_field = event_of(0, 3);
    unknown_field["colour"] = json!("red");
    let mixed = vec![
        event_of(0, 4),
        bad_ip,
        attributed,
        json!({"host": "h"}),
        unknown_field,
        json!({"source": "proxy", "host": "h", "timestamp": "yesterday", "tool_calls": [""]}),
        event_of(2, 0),
        json!("not an object"),
    ];
    let report = batch(&app, &t.api_key, mixed).await;
    assert_eq!(
        (&report["accepted"], &report["rejected"], &report["attributed"], &report["suppressed"], &report["shadow"]),
        (&json!(3), &json!(5), &json!(1), &json!(0), &json!(2)),
        "{report}"
    );
    let errors = report["errors"].as_array().unwrap();
    let indexes: Vec<i64> = errors.iter().map(|e| e["index"].as_i64().unwrap()).collect();
    assert_eq!(indexes, [1, 3, 4, 5, 7], "{report}");
    let item_fields = |i: usize| -> Vec<&str> {
        errors[i]["errors"].as_array().unwrap().iter().map(|e| e["field"].as_str().unwrap()).collect()
    };
    assert_eq!(item_fields(0), ["ip"]);
    assert_eq!(item_fields(3), ["timestamp", "tool_calls[0]"]);
    // Items that are not events at all (a missing or unknown field, not an object) say why.
    for (i, word) in [(1, "source"), (2, "colour")] {
        let message = errors[i]["errors"][0]["message"].as_str().unwrap();
        assert!(message.contains(word), "{word} not in {message}");
    }
    assert!(errors.iter().all(|e| !e["errors"].as_array().unwrap().is_empty()), "{report}");

    // None valid: 422 naming each item's fields.
    let none_valid = json!({"events": [{"source": "proxy", "ip": "nope"}, {"host": "h"}, {"source": "proxy"}]});
    let p = expect_problem(app.post("/discovery/ingest/batch").header("X-API-Key", &t.api_key).json(&none_valid), 422)
        .await;
    let got = fields(&p);
    assert!(got.contains(&"events[0].ip".to_owned()) && got.contains(&"events[2].host".to_owned()), "{p}");
    assert!(got.iter().any(|f| f.starts_with("events[1]")), "{p}");
    // Empty, too many, not a list, an unknown field, not JSON, not declared as JSON.
    let post = |body: Value| app.post("/discovery/ingest/batch").header("X-API-Key", &t.api_key).json(&body);
    let p = expect_problem(post(json!({"events": []})), 422).await;
    assert_eq!(fields(&p), ["events"]);
    let p = expect_problem(post(json!({"events": vec![json!({"source": "p", "host": "h"}); 10_001]})), 422).await;
    assert_eq!(fields(&p), ["events"]);
    expect_problem(post(json!({"events": {"source": "p", "host": "h"}})), 422).await;
    expect_problem(post(json!({"events": [{"source": "p", "host": "h"}], "dry_run": true})), 422).await;
    expect_problem(post(json!({})), 422).await;
    let raw = || app.post("/discovery/ingest/batch").header("X-API-Key", &t.api_key);
    expect_problem(raw().header("Content-Type", "application/json").body("{\"events\": ["), 400).await;
    expect_problem(raw().header("Content-Type", "text/csv").body("source,host\np,h\n"), 415).await;
    expect_problem(app.post("/discovery/ingest/batch").json(&json!({"events": [event_of(0, 9)]})), 401).await;

    // 10,000 events (a body well over the usual 1 MiB limit) are taken at once ...
    let bulk = app.create_tenant("bulk").await;
    let events: Vec<Value> = (0..10_000).map(|i| event_of(i % 5, i / 5)).collect();
    let body = serde_json::to_vec(&json!({"events": events})).unwrap();
    assert!(body.len() > 2 * 1024 * 1024, "{} bytes", body.len());
    let res = app
        .post("/discovery/ingest/batch")
        .header("X-API-Key", &bulk.api_key)
        .header("Content-Type", "application/json")
        .body(body);
    let report = expect(res, 202).await;
    assert_eq!(
        (&report["accepted"], &report["rejected"], &report["shadow"], &report["errors"]),
        (&json!(10_000), &json!(0), &json!(10_000), &json!([])),
    );
    // ... while the single-event endpoint keeps the 1 MiB limit, and the batch its 16 MiB.
    let huge = json!({"source": "proxy", "host": "h", "attributes": {"blob": "x".repeat(2 * 1024 * 1024)}});
    expect_problem(app.post("/discovery/ingest").header("X-API-Key", &bulk.api_key).json(&huge), 413).await;
    let too_big =
        json!({"events": [{"source": "proxy", "host": "h", "attributes": {"blob": "x".repeat(17 * 1024 * 1024)}}]});
    expect_problem(app.post("/discovery/ingest/batch").header("X-API-Key", &bulk.api_key).json(&too_big), 413).await;

    // Clustering them: a repeated request while the job is queued or running answers it.
    let first = start_clustering(&app, &bulk.api_key).await;
    assert!(["queued", "running"].contains(&first["status"].as_str().unwrap()), "{first}");
    let again = start_clustering(&app, &bulk.api_key).await;
    assert_eq!(again["id"], first["id"], "a second job while the first is {}", again["status"]);
    let done = finished(&app, &bulk.api_key, first["id"].as_str().unwrap()).await;
    assert_eq!(done["status"], "completed", "{done}");
    let summary = &done["summary"];
    assert_eq!((&summary["events"], &summary["candidates_created"]), (&json!(10_000), &json!(5)), "{done}");
    let found = candidates(&app, &bulk.api_key, "status=pending").await;
    assert_eq!(found.len(), 5);
    for k in 0..5 {
        assert_eq!(candidate_of(&found, k)["event_count"], 2000, "{found:#?}");
    }
}

#[tokio::test]
async fn clustering_finds_hidden_agents_which_are_then_confirmed_or_dismissed() {
    let app = spawn_app().await;
    let t = app.create_tenant("acme").await;
    let key = &t.api_key;
    let report = batch(&app, key, events_of(0..4, 60)).await;
    assert_eq!((&report["accepted"], &report["shadow"]), (&json!(240), &json!(240)), "{report}");
    // A few one-off events from elsewhere: too sparse to be an agent.
    for i in 0..3 {
        let stray = json!({"source": "egress-gateway", "host": format!("laptop-{i}.corp"), "user_agent": "curl/8.5.0"});
        ingest(&app, key, &stray).await;
    }
    assert_eq!(candidates(&app, key, "").await, Vec::<Value>::new());

    let job = cluster(&app, key).await;
    let summary = &job["summary"];
    assert_eq!(
        (
            &summary["events"],
            &summary["candidates_created"],
            &summary["candidates_updated"],
            &summary["matched_decided"]
        ),
        (&json!(243), &json!(4), &json!(0), &json!(0)),
        "{job}"
    );
    assert!(summary["noise_events"].as_i64().unwrap() >= 3, "{job}");
    for field in ["id", "status", "progress", "requested_by", "created_at", "started_at", "finished_at"] {
        assert!(job.get(field).is_some(), "{field} missing from {job}");
    }

    let pending = candidates(&app, key, "status=pending").await;
    assert_eq!(pending.len(), 4, "{pending:#?}");
    assert_eq!(ids(&candidates(&app, key, "").await), ids(&pending), "the pages hold each candidate once");
    for (k, w) in WORDS.iter().enumerate().take(4) {
        let c = candidate_of(&pending, k);
        assert_eq!((&c["status"], &c["event_count"]), (&json!("pending"), &json!(60)), "{c}");
        assert_eq!(c["suggested_name"], format!("{w}-bot"), "{c}");
        assert!(c["suggested_type"].is_string(), "{c}");
        let capabilities = c["capabilities"].as_array().unwrap();
        for capability in [format!("{w} lookup"), format!("{w} update"), "chat completion".to_owned()] {
            assert!(capabilities.contains(&json!(capability)), "{capability} missing from {c}");
        }
        let confidence = c["confidence"].as_f64().unwrap();
        assert!(confidence > 0.5 && confidence <= 1.0, "{c}");
        assert_eq!(c["fingerprint"]["host"][0]["value"], format!("{w}-worker-#.prod"), "{c}");
        assert_eq!(c["fingerprint"]["ip_prefix"][0]["value"], format!("10.{}.0.0/24", k + 1), "{c}");
        assert_eq!(c["fingerprint"]["api_key_fingerprint"][0]["share"], 1.0, "{c}");
        let samples = c["sample_events"].as_array().unwrap();
        assert!(!samples.is_empty(), "{c}");
        assert!(samples.iter().all(|e| e["api_key_fingerprint"] == key_fingerprint(k).as_str()), "{c}");
        assert_eq!(
            (&c["first_seen"], &c["last_seen"]),
            (&json!(format!("2025-06-01T{:02}:00:00Z", 8 + k)), &json!(format!("2025-06-01T{:02}:00:59Z", 8 + k)))
        );
        assert_eq!(c["job_id"], job["id"]);
        assert_eq!((&c["agent_id"], &c["decided_at"], &c["reason"]), (&Value::Null, &Value::Null, &Value::Null));
        let id = c["id"].as_str().unwrap();
        assert_eq!(&expect(app.get(&format!("/discovery/candidates/{id}")).header("X-API-Key", key), 200).await, c);
    }
    let (invoice, triage, payroll, ledger) =
        [0, 1, 2, 3].map(|k| candidate_of(&pending, k)["id"].as_str().unwrap().to_owned()).into();
    let confirm = |id: &str| app.post(&format!("/discovery/candidates/{id}/confirm")).header("X-API-Key", key);
    let dismiss = |id: &str| app.post(&format!("/discovery/candidates/{id}/dismiss")).header("X-API-Key", key);

    // Bad overrides, and a name already taken, leave the candidate pending.
    let taken = json!({"name": "Invoice Runner", "type": "workflow"});
    let existing = expect(app.post("/agents/register").header("X-API-Key", key).json(&taken), 201).await;
    let p = expect_problem(confirm(&invoice).json(&json!({"name": "Invoice Runner"})), 409).await;
    assert!(p["detail"].as_str().unwrap().contains("name"), "{p}");
    for (body, field) in
        [(json!({"name": ""}), "name"), (json!({"type": "t".repeat(51)}), "type"), (json!({"owner": "me"}), "owner")]
    {
        assert_eq!(fields(&expect_problem(confirm(&invoice).json(&body), 422).await), [field], "{body}");
    }
    expect_problem(confirm(&invoice).header("Content-Type", "text/plain").body("name=x"), 415).await;
    expect_problem(confirm(&invoice).header("Content-Type", "application/json").body("{"), 400).await;
    let still = expect(app.get(&format!("/discovery/candidates/{invoice}")).header("X-API-Key", key), 200).await;
    assert_eq!((&still["status"], &still["agent_id"]), (&json!("pending"), &Value::Null), "{still}");
    assert_eq!(agent_ids(&app, key).await, vec![existing["id"].as_str().unwrap().to_owned()]);

    // Confirmed with overrides: 201 and the agent, registered.
    let overrides = json!({"name": "Invoice Bot", "type": "workflow", "capabilities": ["invoice lookup"], "description": "Books supplier invoices"});
    let res = confirm(&invoice).json(&overrides).send().await.unwrap();
    assert_eq!(res.status(), 201);
    let location = res.headers()["location"].to_str().unwrap().to_owned();
    let agent: Value = res.json().await.unwrap();
    let agent_id = agent["id"].as_str().unwrap().to_owned();
    assert_eq!(location, format!("/api/v1/agents/{agent_id}"));
    assert_eq!(
        (&agent["name"], &agent["type"], &agent["capabilities"], &agent["description"], &agent["status"]),
        (
            &json!("Invoice Bot"),
            &json!("workflow"),
            &json!(["invoice lookup"]),
            &json!("Books supplier invoices"),
            &json!("active")
        ),
        "{agent}"
    );
    assert_eq!(agent["metadata"]["discovered_from"], invoice.as_str(), "{agent}");
    assert_eq!(expect(app.get(&format!("/agents/{agent_id}")).header("X-API-Key", key), 200).await["id"], agent_id);
    let mut expected_agents = vec![existing["id"].as_str().unwrap().to_owned(), agent_id.clone()];
    expected_agents.sort();
    assert_eq!(agent_ids(&app, key).await, expected_agents);
    let decided = expect(app.get(&format!("/discovery/candidates/{invoice}")).header("X-API-Key", key), 200).await;
    assert_eq!((&decided["status"], &decided["agent_id"]), (&json!("confirmed"), &json!(agent_id)), "{decided}");
    assert!(decided["decided_at"].is_string() && decided["decided_by"].is_object(), "{decided}");

    // Again: 200 with the same agent, and still one agent for it.
    let res = confirm(&invoice).send().await.unwrap();
    assert_eq!(res.status(), 200);
    assert_eq!(res.headers()["location"].to_str().unwrap(), location);
    assert_eq!(res.json::<Value>().await.unwrap()["id"], agent_id.as_str());
    assert_eq!(agent_ids(&app, key).await, expected_agents);

    // The suggestions by default.
    let triage_agent = expect(confirm(&triage), 201).await;
    assert_eq!(
        (&triage_agent["name"], &triage_agent["capabilities"]),
        (&json!("triage-bot"), &json!(["triage lookup", "triage update", "chat completion"])),
        "{triage_agent}"
    );
    assert_eq!(triage_agent["description"], "Discovered from 60 observed events");
    let triage_agent = triage_agent["id"].as_str().unwrap().to_owned();
    expected_agents.push(triage_agent.clone());
    expected_agents.sort();
    assert_eq!(agent_ids(&app, key).await, expected_agents);

    // Dismissed (with a session token): 200, a repeat answers it; it cannot be confirmed.
    let dismissed = expect(
        app.post(&format!("/discovery/candidates/{payroll}/dismiss"))
            .bearer_auth(&t.token)
            .json(&json!({"reason": "  the payroll team's own cron job  "})),
        200,
    )
    .await;
    assert_eq!(
        (&dismissed["id"], &dismissed["status"], &dismissed["reason"]),
        (&json!(payroll), &json!("dismissed"), &json!("the payroll team's own cron job")),
        "{dismissed}"
    );
    assert_eq!(expect(dismiss(&payroll), 200).await["status"], "dismissed");
    let p = expect_problem(confirm(&payroll), 409).await;
    assert!(p["detail"].as_str().unwrap().contains("dismissed"), "{p}");
    // A confirmed one cannot be dismissed; a reason too long is refused.
    expect_problem(dismiss(&invoice), 409).await;
    expect_problem(dismiss(&triage).json(&json!({"reason": "sure"})), 409).await;
    assert_eq!(
        fields(&expect_problem(dismiss(&ledger).json(&json!({"reason": "r".repeat(1001)})), 422).await),
        ["reason"]
    );
    expect_problem(dismiss(&ledger).json(&json!({"why": "x"})), 422).await;
    let unknown = "0193a4c2-0000-7000-8000-0000000000aa";
    expect_problem(confirm(unknown), 404).await;
    expect_problem(dismiss(unknown), 404).await;
    expect_problem(app.get(&format!("/discovery/candidates/{unknown}")).header("X-API-Key", key), 404).await;
    expect_problem(app.get(&format!("/discovery/cluster/{unknown}")).header("X-API-Key", key), 404).await;
    expect_problem(app.get("/discovery/candidates/not-a-uuid").header("X-API-Key", key), 404).await;
    expect_problem(app.get("/discovery/cluster/not-a-uuid").header("X-API-Key", key), 404).await;
    for query in ["status=maybe", "limit=0", "limit=501", "cursor=nope", "colour=red"] {
        expect_problem(app.get(&format!("/discovery/candidates?{query}")).header("X-API-Key", key), 422).await;
    }

    // Later activity: the dismissed agent's is suppressed, the confirmed ones' attributed,
    // the undecided one's still shadow.
    let e = ingest(&app, key, &event_of(2, 1000)).await;
    assert_eq!((&e["disposition"], &e["candidate_id"]), (&json!("suppressed"), &json!(payroll)), "{e}");
    let e = ingest(&app, key, &event_of(0, 1000)).await;
    assert_eq!(
        (&e["disposition"], &e["attributed_agent_id"], &e["candidate_id"]),
        (&json!("attributed"), &json!(agent_id), &json!(invoice)),
        "{e}"
    );
    let e = ingest(&app, key, &event_of(1, 1000)).await;
    assert_eq!((&e["disposition"], &e["attributed_agent_id"]), (&json!("attributed"), &json!(triage_agent)), "{e}");
    assert_eq!(ingest(&app, key, &event_of(3, 1000)).await["disposition"], "shadow");
    let later: Vec<Value> = (1001..1011).flat_map(|n| (0..4).map(move |k| event_of(k, n))).collect();
    let report = batch(&app, key, later).await;
    assert_eq!(
        (&report["attributed"], &report["suppressed"], &report["shadow"]),
        (&json!(20), &json!(10), &json!(10)),
        "{report}"
    );

    // Clustering again: the pending one is updated in place, nothing duplicated.
    let again = cluster(&app, key).await;
    let summary = &again["summary"];
    assert_ne!(again["id"], job["id"]);
    assert_eq!(
        (&summary["candidates_created"], &summary["candidates_updated"], &summary["candidates_removed"]),
        (&json!(0), &json!(1), &json!(0)),
        "{again}"
    );
    assert_eq!(summary["matched_decided"], 180, "the earlier shadow events of the decided: {again}");
    let pending = candidates(&app, key, "status=pending").await;
    assert_eq!(ids(&pending), [ledger.as_str()], "{pending:#?}");
    assert_eq!((&pending[0]["event_count"], &pending[0]["job_id"]), (&json!(71), &again["id"]), "{pending:#?}");
    assert_eq!(candidates(&app, key, "").await.len(), 4);
    assert_eq!(ids(&candidates(&app, key, "status=confirmed").await), {
        let mut v = vec![invoice.clone(), triage.clone()];
        v.sort();
        v
    });
    assert_eq!(ids(&candidates(&app, key, "status=dismissed").await), [payroll.as_str()]);
    assert_eq!(agent_ids(&app, key).await, expected_agents);

    // The decisions are in the audit log.
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        let confirmed =
            expect(app.get("/audit?event_type=discovery.candidate.confirmed").header("X-API-Key", key), 200).await;
        let dismissed =
            expect(app.get("/audit?event_type=discovery.candidate.dismissed").header("X-API-Key", key), 200).await;
        let counts = (confirmed["items"].as_array().unwrap().len(), dismissed["items"].as_array().unwrap().len());
        if counts == (2, 1) {
            break;
        }
        assert!(Instant::now() < deadline, "audit holds {counts:?} decisions");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[tokio::test]
async fn another_tenant_sees_none_of_it() {
    let app = spawn_app().await;
    let (a, b) = (app.create_tenant("alpha").await, app.create_tenant("beta").await);
    batch(&app, &a.api_key, events_of(0..2, 60)).await;
    let job = cluster(&app, &a.api_key).await;
    let found = candidates(&app, &a.api_key, "").await;
    assert_eq!(found.len(), 2);
    let (first, second) =
        (candidate_of(&found, 0)["id"].as_str().unwrap(), candidate_of(&found, 1)["id"].as_str().unwrap());
    let job_id = job["id"].as_str().unwrap();

    let key = &b.api_key;
    expect_problem(app.get(&format!("/discovery/candidates/{first}")).header("X-API-Key", key), 404).await;
    expect_problem(app.get(&format!("/discovery/cluster/{job_id}")).header("X-API-Key", key), 404).await;
    expect_problem(app.post(&format!("/discovery/candidates/{first}/confirm")).header("X-API-Key", key), 404).await;
    expect_problem(app.post(&format!("/discovery/candidates/{first}/dismiss")).bearer_auth(&b.token), 404).await;
    let page = expect(app.get("/discovery/candidates").header("X-API-Key", key), 200).await;
    assert_eq!((&page["items"], &page["next_cursor"]), (&json!([]), &Value::Null));
    // B's clustering finds nothing of A's.
    let theirs = cluster(&app, key).await;
    assert_eq!((&theirs["summary"]["events"], &theirs["summary"]["candidates_created"]), (&json!(0), &json!(0)));
    assert_eq!(candidates(&app, key, "").await, Vec::<Value>::new());

    // A's decisions are A's: the same activity in B is not suppressed or attributed.
    let agent =
        expect(app.post(&format!("/discovery/candidates/{first}/confirm")).header("X-API-Key", &a.api_key), 201).await;
    expect(app.post(&format!("/discovery/candidates/{second}/dismiss")).header("X-API-Key", &a.api_key), 200).await;
    assert_eq!(ingest(&app, &a.api_key, &event_of(0, 500)).await["attributed_agent_id"], agent["id"]);
    assert_eq!(ingest(&app, &a.api_key, &event_of(1, 500)).await["disposition"], "suppressed");
    for k in 0..2 {
        assert_eq!(ingest(&app, key, &event_of(k, 500)).await["disposition"], "shadow");
    }
    let mut named = event_of(0, 501);
    named["agent_id"] = agent["id"].clone();
    assert_eq!(ingest(&app, key, &named).await["disposition"], "shadow", "A's agent is unknown to B");
    assert_eq!(expect(app.get("/agents").header("X-API-Key", key), 200).await["items"], json!([]));
}

#[tokio::test]
async fn a_read_only_key_lists_and_cannot_write() {
    let app = spawn_app().await;
    let t = app.create_tenant("acme").await;
    batch(&app, &t.api_key, events_of(0..2, 60)).await;
    let job = cluster(&app, &t.api_key).await;
    let found = candidates(&app, &t.api_key, "").await;
    let id = found[0]["id"].as_str().unwrap();

    let reader = key(&app, &t, &["discovery:read"]).await;
    let page = expect(app.get("/discovery/candidates").header("X-API-Key", &reader), 200).await;
    assert_eq!(page["items"].as_array().unwrap().len(), 2);
    expect(app.get(&format!("/discovery/candidates/{id}")).header("X-API-Key", &reader), 200).await;
    expect(app.get(&format!("/discovery/cluster/{}", job["id"].as_str().unwrap())).header("X-API-Key", &reader), 200)
        .await;
    let post = |path: &str| app.post(path).header("X-API-Key", &reader);
    expect_problem(post("/discovery/ingest").json(&event_of(0, 0)), 403).await;
    expect_problem(post("/discovery/ingest/batch").json(&json!({"events": [event_of(0, 0)]})), 403).await;
    expect_problem(post("/discovery/cluster"), 403).await;
    expect_problem(post(&format!("/discovery/candidates/{id}/confirm")), 403).await;
    expect_problem(post(&format!("/discovery/candidates/{id}/dismiss")), 403).await;

    // Confirming registers an agent: discovery:write alone is not enough.
    let writer = key(&app, &t, &["discovery:read", "discovery:write"]).await;
    expect_problem(app.post(&format!("/discovery/candidates/{id}/confirm")).header("X-API-Key", &writer), 403).await;
    ingest(&app, &writer, &event_of(0, 0)).await;
    let dismissed =
        expect(app.post(&format!("/discovery/candidates/{id}/dismiss")).header("X-API-Key", &writer), 200).await;
    assert_eq!(dismissed["status"], "dismissed");
    // Without discovery:read nothing is listed.
    let other = key(&app, &t, &["agents:read"]).await;
    expect_problem(app.get("/discovery/candidates").header("X-API-Key", &other), 403).await;
    // A viewer user reads and cannot start clustering.
    let (_, viewer) = app.user(&t, "viewer@acme.test", "viewer").await;
    expect(app.get("/discovery/candidates").bearer_auth(&viewer), 200).await;
    expect_problem(app.post("/discovery/cluster").bearer_auth(&viewer), 403).await;
}

/// Production mode: two replicas on one Postgres and Redis. Events ingested on one are
/// clustered by a job started on the other; a decision taken on one reaches the other's
/// cached decided candidates through the bus.
#[tokio::test]
async fn replicas_share_events_candidates_and_decisions() {
    let Some((apps, _guard)) = spawn_replicas(2, |_, _| {}).await else { return };
    let (a, b) = (&apps[0], &apps[1]);
    let t = a.create_tenant("acme").await;
    let key = &t.api_key;
    let report = batch(a, key, events_of(0..3, 60)).await;
    assert_eq!(report["accepted"], 180);
    // Replica B keeps the tenant's (so far no) decided candidates now.
    assert_eq!(ingest(b, key, &event_of(0, 60)).await["disposition"], "shadow");

    let job = start_clustering(b, key).await;
    let done = finished(a, key, job["id"].as_str().unwrap()).await;
    assert_eq!((&done["status"], &done["summary"]["candidates_created"]), (&json!("completed"), &json!(3)), "{done}");
    let found = candidates(a, key, "status=pending").await;
    assert_eq!(found.len(), 3, "{found:#?}");
    assert_eq!(ids(&candidates(b, key, "").await), ids(&found));
    let dismissed = candidate_of(&found, 0)["id"].as_str().unwrap().to_owned();
    let confirmed = candidate_of(&found, 1)["id"].as_str().unwrap().to_owned();

    expect(a.post(&format!("/discovery/candidates/{dismissed}/dismiss")).header("X-API-Key", key), 200).await;
    let deadline = Instant::now() + Duration::from_secs(2);
    let mut n = 100;
    loop {
        let e = ingest(b, key, &event_of(0, n)).await;
        if e["disposition"] == "suppressed" {
            assert_eq!(e["candidate_id"], dismissed.as_str());
            break;
        }
        assert!(Instant::now() < deadline, "replica B still keeps the event as {e}");
        n += 1;
        tokio::time::sleep(Duration::from_millis(50)).await;
    }

    // Confirmed on A, repeated on B: one agent.
    let path = format!("/discovery/candidates/{confirmed}/confirm");
    let agent = expect(a.post(&path).header("X-API-Key", key), 201).await;
    assert_eq!(expect(b.post(&path).header("X-API-Key", key), 200).await["id"], agent["id"]);
    let agent_id = agent["id"].clone();
    assert_eq!(agent_ids(b, key).await, [agent_id.as_str().unwrap().to_owned()]);
    let deadline = Instant::now() + Duration::from_secs(2);
    for app in [a, b] {
        loop {
            let e = ingest(app, key, &event_of(1, n)).await;
            n += 1;
            if e["disposition"] == "attributed" {
                assert_eq!(e["attributed_agent_id"], agent_id);
                break;
            }
            assert!(Instant::now() < deadline, "the confirmation is not applied: {e}");
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }
    // The job is the tenant's on every replica; re-clustering on A keeps the last one pending.
    let again = cluster(a, key).await;
    assert_eq!(again["summary"]["candidates_updated"], 1, "{again}");
    let pending = candidates(b, key, "status=pending").await;
    assert_eq!(ids(&pending), [candidate_of(&found, 2)["id"].as_str().unwrap().to_owned()]);
}

/// Confirmations of one candidate racing each other (two tasks per candidate, over several
/// candidates to make the race likely): one registers the agent, the other answers it.
#[tokio::test]
async fn concurrent_confirmations_register_one_agent() {
    let app = spawn_app().await;
    let t = app.create_tenant("acme").await;
    let key = &t.api_key;
    batch(&app, key, events_of(0..6, 60)).await;
    cluster(&app, key).await;
    let found = candidates(&app, key, "status=pending").await;
    assert_eq!(found.len(), 6);
    let mut registered = Vec::new();
    for c in &found {
        let path = format!("/discovery/candidates/{}/confirm", c["id"].as_str().unwrap());
        registered.push(
            race_confirmations(vec![
                app.post(&path).header("X-API-Key", key),
                app.post(&path).header("X-API-Key", key),
            ])
            .await,
        );
    }
    registered.sort();
    assert_eq!(agent_ids(&app, key).await, registered, "one agent per candidate");
}

/// The same race across two replicas on Postgres.
#[tokio::test]
async fn concurrent_confirmations_on_two_replicas_register_one_agent() {
    let Some((apps, _guard)) = spawn_replicas(2, |_, _| {}).await else { return };
    let (a, b) = (&apps[0], &apps[1]);
    let t = a.create_tenant("acme").await;
    let key = &t.api_key;
    batch(a, key, events_of(0..6, 60)).await;
    cluster(b, key).await;
    let found = candidates(a, key, "status=pending").await;
    assert_eq!(found.len(), 6);
    let mut registered = Vec::new();
    for c in &found {
        let path = format!("/discovery/candidates/{}/confirm", c["id"].as_str().unwrap());
        registered.push(
            race_confirmations(vec![a.post(&path).header("X-API-Key", key), b.post(&path).header("X-API-Key", key)])
                .await,
        );
    }
    registered.sort();
    assert_eq!(agent_ids(b, key).await, registered, "one agent per candidate");
}
