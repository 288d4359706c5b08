//! Spec 4.13, SIEM forwarding, end to end: audit records written over the API arrive at a
//! real rsyslog (TCP, UDP, TLS) and at a Splunk HEC receiver, valid and in order; a
//! receiver that stops loses nothing; `/siem/status` and `/siem/test` and who may use them.
use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

use agentgov_server::siem_config::SiemSinkConfig;
use agentgov_tests::siem::{HecReceiver, Rsyslog, TlsFiles, parse_cef, rsyslog_available};
use agentgov_tests::*;
use serde_json::{Value, json};

fn sink(config: Value) -> SiemSinkConfig {
    serde_json::from_value(config).unwrap()
}

/// A test server whose forwarders retry quickly.
async fn app_with(sinks: Vec<SiemSinkConfig>) -> TestApp {
    spawn_with(|c| {
        c.siem_sinks = sinks;
        c.siem_poll_ms = 50;
        c.siem_max_backoff_secs = 1;
    })
    .await
}

fn entry(i: usize) -> Value {
    json!({
        "event_type": if i.is_multiple_of(5) { "review.decision" } else { "app.action" },
        "action": "read",
        "resource": format!("db/customers/{i}"),
        "decision": if i.is_multiple_of(5) { "deny" } else { "allow" },
        "risk_score": (i % 10) as f64 / 10.0,
        "details": {"text": format!("line {i} with = and | and \\ and ünïcode"), "n": i},
    })
}

async fn write_entries(app: &TestApp, key: &str, n: usize) {
    for i in 0..n {
        expect(app.post("/audit/log").header("X-API-Key", key).json(&entry(i)), 201).await;
    }
}

/// The tenant's chain head (its record count).
async fn head(app: &TestApp, t: &Tenant) -> i64 {
    expect(app.get("/audit/verify").header("X-API-Key", &t.api_key), 200).await["head_seq"].as_i64().unwrap()
}

/// Waits until every sink's queue is empty; answers the last status.
async fn drained(app: &TestApp) -> Value {
    let mut status = Value::Null;
    for _ in 0..300 {
        status = expect(app.get("/siem/status").header("X-Admin-Key", ADMIN_KEY), 200).await;
        if status["sinks"].as_array().unwrap().iter().all(|s| s["queue_depth"] == 0) {
            return status;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("the SIEM queue never emptied: {status}")
}

/// The (tenant, seq) of each CEF line received from the TCP sink, in arrival order.
fn cef_records(lines: &[String]) -> Vec<(String, i64)> {
    lines
        .iter()
        .filter_map(|l| l.split_once(' ').map(|(_, rest)| rest))
        .filter_map(|rest| rest.split_once(' ').map(|(_, msg)| msg))
        .filter(|msg| msg.starts_with("CEF:"))
        .map(|msg| {
            let (header, ext) = parse_cef(msg);
            assert_eq!(&header[..3], ["0", "agentgov", "agentgov"], "{msg}");
            let severity: u8 = header[6].parse().unwrap();
            assert!(severity <= 10, "{msg}");
            assert_eq!(ext["cs1Label"], "tenantId");
            (ext["cs1"].clone(), ext["cn2"].parse().unwrap())
        })
        .collect()
}

/// Checks every tenant's records 1..=head arrived, and the first arrival of each in order.
fn assert_complete_and_in_order(received: &[(String, i64)], heads: &BTreeMap<String, i64>) {
    let mut seen: BTreeMap<&str, BTreeSet<i64>> = BTreeMap::new();
    let mut last: BTreeMap<&str, i64> = BTreeMap::new();
    for (tenant, seq) in received {
        if seen.entry(tenant).or_default().insert(*seq) {
            let previous = last.insert(tenant, *seq).unwrap_or(0);
            assert!(*seq > previous, "tenant {tenant}: {seq} arrived after {previous}");
        }
    }
    for (tenant, head) in heads {
        let got = seen.get(tenant.as_str()).cloned().unwrap_or_default();
        assert_eq!(got, (1..=*head).collect::<BTreeSet<_>>(), "tenant {tenant}: every record, none lost");
    }
}

#[tokio::test]
async fn audit_records_reach_rsyslog_over_tcp_and_udp_as_valid_cef_and_json_in_order() {
    if !rsyslog_available() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let tcp = Rsyslog::start(dir.path(), None).await;
    let udp = Rsyslog::start(dir.path(), None).await;
    let app = app_with(vec![
        sink(json!({"name": "soc-tcp", "kind": "syslog-tcp", "address": tcp.address(), "hostname": "gov-1"})),
        sink(json!({"name": "soc-udp", "kind": "syslog-udp", "address": udp.address(), "format": "json"})),
    ])
    .await;
    let (a, b) = (app.create_tenant("acme").await, app.create_tenant("bravo").await);
    write_entries(&app, &a.api_key, 40).await;
    write_entries(&app, &b.api_key, 15).await;
    let status = drained(&app).await;
    let heads: BTreeMap<String, i64> =
        [(a.id.clone(), head(&app, &a).await), (b.id.clone(), head(&app, &b).await)].into();

    // TCP: CEF, every record exactly once (nothing failed), in order per tenant.
    let lines = tcp.lines();
    assert!(lines.iter().all(|l| l.starts_with("agentgov ")), "{lines:?}");
    let received = cef_records(&lines);
    assert_complete_and_in_order(&received, &heads);
    assert_eq!(received.len() as i64, heads.values().sum::<i64>(), "no duplicates on a healthy link");
    let denial = lines.iter().find(|l| l.contains("outcome=deny")).unwrap();
    let (header, ext) = parse_cef(denial.splitn(3, ' ').nth(2).unwrap());
    assert_eq!((header[4].as_str(), header[6].as_str()), ("review.decision", "7"));
    assert_eq!(ext["act"], "read");
    assert_eq!((ext["cs6Label"].as_str(), ext["cs6"].as_str()), ("origin", "client"), "written through the API");
    let details: Value = serde_json::from_str(&ext["msg"]).unwrap();
    assert_eq!(details["text"], "line 0 with = and | and \\ and ünïcode", "escaped and unescaped intact");
    let soc = &status["sinks"][0];
    assert_eq!(
        (soc["name"].as_str(), soc["kind"].as_str(), soc["format"].as_str()),
        (Some("soc-tcp"), Some("syslog-tcp"), Some("cef"))
    );
    assert_eq!(soc["forwarded_total"], json!(received.len()));
    assert_eq!(soc["failed_total"], 0);
    assert!(soc["last_success_at"].is_string() && soc["last_error"].is_null());

    // UDP: one JSON object per datagram, every field.
    let json_events: Vec<Value> =
        udp.lines().iter().map(|l| serde_json::from_str(l.splitn(3, ' ').nth(2).unwrap()).unwrap()).collect();
    let received: Vec<(String, i64)> =
        json_events.iter().map(|e| (e["tenant_id"].as_str().unwrap().to_owned(), e["seq"].as_i64().unwrap())).collect();
    assert_complete_and_in_order(&received, &heads);
    let first = json_events.iter().find(|e| e["details"]["n"] == 3).unwrap();
    assert_eq!((&first["event_type"], &first["origin"]), (&json!("app.action"), &json!("client")));
    assert_eq!(first["details"]["text"], "line 3 with = and | and \\ and ünïcode");
    assert_eq!(first["hash"].as_str().unwrap().len(), 64);
}

#[tokio::test]
async fn a_tls_receiver_gets_the_records_and_filters_choose_what_is_sent() {
    if !rsyslog_available() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let files = TlsFiles::localhost(dir.path());
    let tls = Rsyslog::start(dir.path(), Some(&files)).await;
    let app = app_with(vec![sink(json!({
        "name": "soc-tls",
        "kind": "syslog-tls",
        "address": format!("localhost:{}", tls.port),
        "tls_ca_file": files.cert,
        "event_types": ["review.*"],
        "min_severity": 7,
    }))])
    .await;
    let a = app.create_tenant("acme").await;
    write_entries(&app, &a.api_key, 30).await;
    let status = drained(&app).await;
    let received = cef_records(&tls.lines());
    // Denied review decisions only: entries 0, 5, 10, … (severity 7 for a denial).
    assert_eq!(received.len(), 6, "{:?}", tls.lines());
    assert!(tls.lines().iter().all(|l| l.contains(" review.decision CEF:") && l.contains("outcome=deny")));
    assert_eq!(status["sinks"][0]["forwarded_total"], 6);
    assert_eq!(status["sinks"][0]["event_types"], json!(["review.*"]));
    assert_eq!(status["sinks"][0]["min_severity"], 7);
}

#[tokio::test]
async fn a_receiver_that_stops_while_records_are_written_loses_none_of_them() {
    receiver_outage(false).await;
}

#[tokio::test]
async fn a_receiver_killed_while_records_are_written_loses_none_of_them() {
    receiver_outage(true).await;
}

/// The receiver stops (or is killed) while records are written, then starts again: every
/// record arrives at least once, and the distinct ones are exactly the audit log.
async fn receiver_outage(kill: bool) {
    if !rsyslog_available() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let mut rsyslog = Rsyslog::start(dir.path(), None).await;
    let app = app_with(vec![sink(json!({"name": "soc", "kind": "syslog-tcp", "address": rsyslog.address()}))]).await;
    let t = app.create_tenant("acme").await;
    write_entries(&app, &t.api_key, 10).await;
    drained(&app).await;

    // Records keep coming while the receiver stops and starts again.
    let producer = {
        let (base, key) = (app.base.clone(), t.api_key.clone());
        tokio::spawn(async move {
            let client = reqwest::Client::new();
            for i in 0..120 {
                let res = client
                    .post(format!("{base}/api/v1/audit/log"))
                    .header("X-API-Key", &key)
                    .json(&entry(i))
                    .send()
                    .await
                    .unwrap();
                assert_eq!(res.status(), 201, "the API never waits on the SIEM");
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
        })
    };
    tokio::time::sleep(Duration::from_millis(300)).await;
    if kill {
        rsyslog.kill().await;
    } else {
        rsyslog.stop().await;
    }
    // While it is down the queue grows and the status says why.
    let mut down = Value::Null;
    for _ in 0..100 {
        down = expect(app.get("/siem/status").header("X-Admin-Key", ADMIN_KEY), 200).await["sinks"][0].clone();
        if down["last_error"].is_string() && down["queue_depth"].as_u64().unwrap() > 0 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(down["last_error"].as_str().unwrap().contains("unavailable"), "{down}");
    assert!(down["failed_total"].as_u64().unwrap() > 0, "{down}");
    assert!(down["last_error_at"].is_string());
    tokio::time::sleep(Duration::from_millis(700)).await;
    rsyslog.run().await;
    producer.await.unwrap();
    drained(&app).await;

    let heads: BTreeMap<String, i64> = [(t.id.clone(), head(&app, &t).await)].into();
    let received = cef_records(&rsyslog.lines());
    assert_complete_and_in_order(&received, &heads);
    let distinct: BTreeSet<i64> = received.iter().map(|(_, s)| *s).collect();
    assert_eq!(distinct.len() as i64, heads[&t.id], "the count matches the audit log");
    eprintln!(
        "kill={kill}: {} records, {} lines received ({} duplicates)",
        heads[&t.id],
        received.len(),
        received.len() - distinct.len()
    );
}

#[tokio::test]
async fn a_relp_receiver_acknowledges_every_record_and_a_restart_loses_none() {
    if !rsyslog_available() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let mut relp = Rsyslog::start_relp(dir.path()).await;
    let app = app_with(vec![sink(json!({"name": "soc", "kind": "syslog-relp", "address": relp.address()}))]).await;
    let t = app.create_tenant("acme").await;
    write_entries(&app, &t.api_key, 20).await;
    drained(&app).await;
    relp.stop().await;
    write_entries(&app, &t.api_key, 20).await;
    relp.run().await;
    let status = drained(&app).await;
    let soc = &status["sinks"][0];
    assert_eq!((soc["kind"].as_str(), soc["format"].as_str()), (Some("syslog-relp"), Some("cef")));
    let head = head(&app, &t).await;
    let mut received = cef_records(&relp.lines());
    for _ in 0..50 {
        if received.len() as i64 >= head {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
        received = cef_records(&relp.lines());
    }
    assert_complete_and_in_order(&received, &[(t.id.clone(), head)].into());
    assert_eq!(soc["forwarded_total"], json!(head));
}

#[tokio::test]
async fn a_splunk_hec_receiver_gets_batches_in_order_and_everything_after_an_outage() {
    let hec = HecReceiver::start().await;
    let app = app_with(vec![sink(json!({
        "name": "splunk",
        "kind": "splunk-hec",
        "url": hec.url,
        "token": hec.token,
        "index": "agentgov",
        "sourcetype": "agentgov:audit",
    }))])
    .await;
    let t = app.create_tenant("acme").await;
    write_entries(&app, &t.api_key, 25).await;
    drained(&app).await;
    hec.down.store(true, std::sync::atomic::Ordering::SeqCst);
    write_entries(&app, &t.api_key, 25).await;
    let mut failing = Value::Null;
    for _ in 0..100 {
        failing = expect(app.get("/siem/status").header("X-Admin-Key", ADMIN_KEY), 200).await["sinks"][0].clone();
        if failing["failed_total"].as_u64().unwrap() > 0 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(failing["queue_depth"].as_u64().unwrap() > 0, "{failing}");
    assert!(failing["last_error"].as_str().unwrap().contains("splunk-hec"), "{failing}");
    hec.down.store(false, std::sync::atomic::Ordering::SeqCst);
    let status = drained(&app).await;

    let events = hec.events();
    let seqs: Vec<i64> = events.iter().map(|e| e["seq"].as_i64().unwrap()).collect();
    let head = head(&app, &t).await;
    assert_eq!(seqs, (1..=head).collect::<Vec<_>>(), "in order, once each (HEC answers per request)");
    assert!(hec.requests.load(std::sync::atomic::Ordering::SeqCst) < head as usize, "batched");
    let raw = &hec.raw()[0];
    assert_eq!((raw["index"].as_str(), raw["sourcetype"].as_str()), (Some("agentgov"), Some("agentgov:audit")));
    assert!(raw["time"].is_f64() || raw["time"].is_i64());
    assert_eq!(status["sinks"][0]["forwarded_total"], json!(head));
    let destination = status["sinks"][0]["destination"].as_str().unwrap();
    assert!(!destination.contains(&hec.token) && destination.starts_with("http://127.0.0.1:"), "{destination}");
}

#[tokio::test]
async fn ocsf_events_reach_a_hec_receiver_and_rsyslog_whole_and_in_order() {
    let hec = HecReceiver::start().await;
    let dir = tempfile::tempdir().unwrap();
    let rsyslog = if rsyslog_available() { Some(Rsyslog::start(dir.path(), None).await) } else { None };
    let mut sinks =
        vec![sink(json!({"name": "lake", "kind": "splunk-hec", "url": hec.url, "token": hec.token, "format": "ocsf"}))];
    if let Some(r) = &rsyslog {
        sinks.push(sink(json!({"name": "soc", "kind": "syslog-tcp", "address": r.address(), "format": "ocsf"})));
    }
    let app = app_with(sinks).await;
    let t = app.create_tenant("acme").await;
    write_entries(&app, &t.api_key, 10).await;
    let status = drained(&app).await;
    let head = head(&app, &t).await;
    assert!(status["sinks"].as_array().unwrap().iter().all(|s| s["format"] == "ocsf"), "{status}");
    assert_eq!(hec.raw()[0]["sourcetype"], "agentgov:ocsf", "the OCSF sourcetype by default");

    let check = |events: &[Value]| {
        let seqs: Vec<i64> = events.iter().map(|e| e["metadata"]["sequence"].as_i64().unwrap()).collect();
        assert_eq!(seqs, (1..=head).collect::<Vec<_>>(), "in order, once each");
        for e in events {
            assert_eq!((e["class_uid"].as_u64(), e["metadata"]["version"].as_str()), (Some(6003), Some("1.3.0")));
            assert_eq!(e["metadata"]["tenant_uid"].as_str(), Some(t.id.as_str()));
            assert_eq!(e["type_uid"].as_u64(), Some(600_300 + e["activity_id"].as_u64().unwrap()));
        }
        let denial = events.iter().find(|e| e["unmapped"]["details"]["n"] == 5).unwrap();
        assert_eq!(
            (denial["activity_name"].as_str(), denial["status"].as_str()),
            (Some("review.decision"), Some("Failure"))
        );
        assert_eq!((denial["api"]["operation"].as_str(), denial["severity"].as_str()), (Some("read"), Some("High")));
        assert_eq!(denial["resources"][0]["uid"], "db/customers/5");
        assert_eq!(denial["unmapped"]["details"]["text"], "line 5 with = and | and \\ and ünïcode");
    };
    check(&hec.events());
    if let Some(r) = &rsyslog {
        let events: Vec<Value> =
            r.lines().iter().map(|l| serde_json::from_str(l.splitn(3, ' ').nth(2).unwrap()).unwrap()).collect();
        check(&events);
    }
}

/// The value of `metric{sink="<sink>"}` on `/metrics`, if present.
async fn metric(app: &TestApp, metric: &str, sink: &str) -> Option<f64> {
    let page = app.get("/metrics").send().await.unwrap().text().await.unwrap();
    let series = format!("{metric}{{sink=\"{sink}\"}} ");
    page.lines().find_map(|l| l.strip_prefix(&series)).map(|v| v.trim().parse().unwrap())
}

#[tokio::test]
async fn each_sinks_queue_and_totals_are_prometheus_metrics_without_its_destination() {
    let hec = HecReceiver::start().await;
    // A name of its own: every server of this test process shares one metrics recorder.
    let name = "hec-metrics";
    let app =
        app_with(vec![sink(json!({"name": name, "kind": "splunk-hec", "url": hec.url, "token": hec.token}))]).await;
    let t = app.create_tenant("acme").await;
    write_entries(&app, &t.api_key, 10).await;
    let status = drained(&app).await;

    let forwarded = status["sinks"][0]["forwarded_total"].as_f64().unwrap();
    assert_eq!(metric(&app, "agentgov_siem_forwarded_total", name).await, Some(forwarded));
    assert_eq!(metric(&app, "agentgov_siem_queue_depth", name).await, Some(0.0));
    assert_eq!(metric(&app, "agentgov_siem_failed_total", name).await, Some(0.0));
    let last = metric(&app, "agentgov_siem_last_success_timestamp_seconds", name).await.unwrap();
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_secs_f64();
    assert!((now - 60.0..=now + 1.0).contains(&last), "{last} against {now}");

    // The receiver fails: the queue and the failures show on the next scrape.
    hec.down.store(true, std::sync::atomic::Ordering::SeqCst);
    write_entries(&app, &t.api_key, 5).await;
    let mut failed = 0.0;
    for _ in 0..100 {
        failed = metric(&app, "agentgov_siem_failed_total", name).await.unwrap();
        if failed > 0.0 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(failed > 0.0, "no failure counted");
    assert!(metric(&app, "agentgov_siem_queue_depth", name).await.unwrap() >= 5.0);

    let page = app.get("/metrics").send().await.unwrap().text().await.unwrap();
    assert!(page.contains("# HELP agentgov_siem_queue_depth"), "described");
    assert!(!page.contains(&hec.token) && !page.contains(&hec.url), "no destination or token on /metrics");
}

#[tokio::test]
async fn only_the_admin_key_or_a_super_admin_session_may_see_and_test_forwarding() {
    let hec = HecReceiver::start().await;
    let app =
        app_with(vec![sink(json!({"name": "splunk", "kind": "splunk-hec", "url": hec.url, "token": hec.token}))]).await;
    let t = app.create_tenant("acme").await;
    let (_, analyst) = app.user(&t, "ann@acme.test", "analyst").await;
    app.user(&t, "root@acme.test", "admin").await;
    // Nobody may grant a role above their own: the operator makes a Super Admin.
    agentgov_server::cli::set_role(&test_config(app.dir.path()), "root@acme.test", "super_admin".parse().unwrap())
        .await
        .unwrap();
    let root = app.login("root@acme.test", PASSWORD).await["access_token"].as_str().unwrap().to_owned();

    for path in ["/siem/status", "/siem/test"] {
        let method = if path.ends_with("test") { reqwest::Method::POST } else { reqwest::Method::GET };
        expect_problem(app.req(method.clone(), path), 401).await;
        expect_problem(app.req(method.clone(), path).header("X-Admin-Key", "wrong-admin-key-0000"), 401).await;
        expect_problem(app.req(method.clone(), path).bearer_auth(&analyst), 403).await;
        expect_problem(app.req(method.clone(), path).bearer_auth(&t.token), 403).await;
        expect_problem(app.req(method.clone(), path).header("X-API-Key", &t.api_key), 401).await;
        expect(app.req(method.clone(), path).bearer_auth(&root), 200).await;
        expect(app.req(method, path).header("X-Admin-Key", ADMIN_KEY), 200).await;
    }
    let report = expect(app.post("/siem/test").header("X-Admin-Key", ADMIN_KEY), 200).await;
    let result = &report["results"][0];
    assert_eq!((result["name"].as_str(), result["ok"].as_bool()), (Some("splunk"), Some(true)), "{report}");
    assert!(result["latency_ms"].as_f64().unwrap() >= 0.0);
    let test_events: Vec<Value> = hec.events().into_iter().filter(|e| e["event_type"] == "siem.test").collect();
    assert_eq!(test_events.len(), 3, "two by the operator, one by the Super Admin");
    assert!(test_events.iter().any(|e| e["id"] == report["event_id"]));

    assert!(result["destination"].as_str().unwrap().starts_with("http://127.0.0.1"), "{report}");
    // A tenant's Super Admin learns whether delivery works, never where it goes.
    let tenants = expect(app.post("/siem/test").bearer_auth(&root), 200).await;
    assert_eq!(tenants["results"][0]["ok"], true, "{tenants}");
    assert!(tenants["results"][0].get("destination").is_none(), "{tenants}");
    assert!(!tenants.to_string().contains(&hec.url), "{tenants}");

    hec.down.store(true, std::sync::atomic::Ordering::SeqCst);
    let report = expect(app.post("/siem/test").header("X-Admin-Key", ADMIN_KEY), 200).await;
    assert_eq!(report["results"][0]["ok"], false);
    assert!(report["results"][0]["error"].as_str().unwrap().contains("splunk-hec"), "{report}");
    let tenants = expect(app.post("/siem/test").bearer_auth(&root), 200).await;
    assert_eq!(tenants["results"][0]["ok"], false, "{tenants}");
    let error = tenants["results"][0]["error"].as_str().unwrap();
    assert!(!error.contains("127.0.0.1") && !error.contains("splunk-hec:"), "{error}");

    // No sink configured: status says so, a test is a conflict.
    let bare = spawn_app().await;
    let status = expect(bare.get("/siem/status").header("X-Admin-Key", ADMIN_KEY), 200).await;
    assert_eq!(status, json!({"enabled": false, "scope": "platform", "sinks": []}));
    expect_problem(bare.post("/siem/test").header("X-Admin-Key", ADMIN_KEY), 409).await;
}

#[tokio::test]
async fn two_replicas_forward_each_record_once_between_them() {
    let hec = HecReceiver::start().await;
    let sinks = vec![sink(json!({"name": "splunk", "kind": "splunk-hec", "url": hec.url, "token": hec.token}))];
    let Some((apps, _guard)) = spawn_replicas(2, |_, c| {
        c.siem_sinks = sinks.clone();
        c.siem_poll_ms = 50;
    })
    .await
    else {
        return;
    };
    let t = apps[0].create_tenant("acme").await;
    for (i, app) in apps.iter().cycle().take(40).enumerate() {
        expect(app.post("/audit/log").header("X-API-Key", &t.api_key).json(&entry(i)), 201).await;
    }
    let status = drained(&apps[1]).await;
    let head = head(&apps[0], &t).await;
    let seqs: Vec<i64> = hec.events().iter().map(|e| e["seq"].as_i64().unwrap()).collect();
    assert_eq!(seqs, (1..=head).collect::<Vec<_>>(), "one replica forwards: no duplicates, in order");
    assert_eq!(status["sinks"][0]["forwarded_total"], json!(head), "the totals are shared");
    let other = expect(apps[0].get("/siem/status").header("X-Admin-Key", ADMIN_KEY), 200).await;
    assert_eq!(other["sinks"][0]["forwarded_total"], json!(head));
}

#[tokio::test]
async fn a_tenants_super_admin_sees_only_its_own_tenants_siem_state() {
    let hec = HecReceiver::start().await;
    hec.down.store(true, std::sync::atomic::Ordering::SeqCst);
    let app =
        app_with(vec![sink(json!({"name": "splunk", "kind": "splunk-hec", "url": hec.url, "token": hec.token}))]).await;
    let t = app.create_tenant("acme").await;
    let other = app.create_tenant("globex").await;
    app.user(&t, "root@acme.test", "admin").await;
    agentgov_server::cli::set_role(&test_config(app.dir.path()), "root@acme.test", "super_admin".parse().unwrap())
        .await
        .unwrap();
    let root = app.login("root@acme.test", PASSWORD).await["access_token"].as_str().unwrap().to_owned();
    write_entries(&app, &t.api_key, 3).await;
    write_entries(&app, &other.api_key, 7).await;
    let (own, theirs) = (head(&app, &t).await, head(&app, &other).await);

    // The sink is down: nothing leaves. The Super Admin sees its tenant's backlog only, and
    // nothing platform-wide (destination, totals, errors other tenants' records caused).
    let mine = expect(app.get("/siem/status").bearer_auth(&root), 200).await;
    assert_eq!(mine["scope"], "tenant");
    let s = &mine["sinks"][0];
    assert_eq!(
        (s["name"].as_str(), s["queue_depth"].as_i64(), s["cursor"].as_i64()),
        (Some("splunk"), Some(own), Some(0))
    );
    for hidden in ["destination", "forwarded_total", "failed_total", "last_success_at", "last_error", "last_error_at"] {
        assert!(s.get(hidden).is_none(), "{hidden} shown to a tenant: {mine}");
    }
    let all = expect(app.get("/siem/status").header("X-Admin-Key", ADMIN_KEY), 200).await;
    assert_eq!(all["scope"], "platform");
    assert_eq!(all["sinks"][0]["queue_depth"].as_i64(), Some(own + theirs), "{all}");
    assert!(all["sinks"][0]["destination"].is_string() && all["sinks"][0]["forwarded_total"].is_u64(), "{all}");

    hec.down.store(false, std::sync::atomic::Ordering::SeqCst);
    drained(&app).await;
    let mine = expect(app.get("/siem/status").bearer_auth(&root), 200).await;
    assert_eq!((mine["sinks"][0]["queue_depth"].as_i64(), mine["sinks"][0]["cursor"].as_i64()), (Some(0), Some(own)));
}
