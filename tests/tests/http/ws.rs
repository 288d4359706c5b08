//! Spec 4.14: the real-time WebSocket feed, with a real client (tokio-tungstenite): auth
//! refused before the upgrade, tenant isolation, `subscribe` filters, session revocation.
use std::time::Duration;

use agentgov_tests::*;
use futures::{SinkExt, StreamExt};
use serde_json::{Value, json};
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::tungstenite::protocol::frame::coding::CloseCode;

pub type Socket = tokio_tungstenite::WebSocketStream<tokio_tungstenite::MaybeTlsStream<tokio::net::TcpStream>>;

fn ws_url(app: &TestApp, token: &str) -> String {
    format!("{}/api/v1/ws?token={token}", app.base.replacen("http://", "ws://", 1))
}

pub async fn connect(app: &TestApp, token: &str) -> Socket {
    tokio_tungstenite::connect_async(ws_url(app, token)).await.unwrap().0
}

/// The HTTP status of a refused handshake.
async fn refused(url: String) -> u16 {
    match tokio_tungstenite::connect_async(url).await {
        Err(tokio_tungstenite::tungstenite::Error::Http(response)) => response.status().as_u16(),
        other => panic!("expected a refusal, got {:?}", other.map(|(_, r)| r.status())),
    }
}

/// The next JSON text message within `within`; `None` if none came.
pub async fn next_json(socket: &mut Socket, within: Duration) -> Option<Value> {
    let deadline = tokio::time::Instant::now() + within;
    loop {
        let left = deadline.saturating_duration_since(tokio::time::Instant::now());
        match tokio::time::timeout(left, socket.next()).await {
            Ok(Some(Ok(Message::Text(text)))) => return Some(serde_json::from_str(&text).unwrap()),
            Ok(Some(Ok(Message::Ping(_) | Message::Pong(_)))) => continue,
            Ok(other) => panic!("unexpected {other:?}"),
            Err(_) => return None,
        }
    }
}

/// The next event of `event_type` within `within` (other events are skipped).
pub async fn next_event(socket: &mut Socket, event_type: &str, within: Duration) -> Value {
    let deadline = tokio::time::Instant::now() + within;
    loop {
        let left = deadline.saturating_duration_since(tokio::time::Instant::now());
        let Some(msg) = next_json(socket, left).await else { panic!("no {event_type} event within {within:?}") };
        if msg["type"] == event_type {
            return msg;
        }
    }
}

pub async fn subscribe(socket: &mut Socket, events: &[&str]) {
    let msg = json!({"type": "subscribe", "events": events}).to_string();
    socket.send(Message::Text(msg.into())).await.unwrap();
    let ack = next_json(socket, Duration::from_secs(5)).await.unwrap();
    assert_eq!(ack, json!({"type": "subscribed", "events": events}));
}

async fn register(app: &TestApp, t: &Tenant, name: &str) -> Value {
    let body = json!({"name": name, "type": "llm", "capabilities": ["read"]});
    expect(app.post("/agents/register").header("X-API-Key", &t.api_key).json(&body), 201).await
}

#[tokio::test]
async fn a_missing_invalid_or_revoked_token_is_refused_before_the_upgrade() {
    let app = spawn_app().await;
    let t = app.create_tenant("acme").await;
    let base = app.base.replacen("http://", "ws://", 1);
    assert_eq!(refused(format!("{base}/api/v1/ws")).await, 401);
    assert_eq!(refused(format!("{base}/api/v1/ws?token=")).await, 401);
    assert_eq!(refused(format!("{base}/api/v1/ws?token=not.a.jwt")).await, 401);
    assert_eq!(refused(format!("{base}/api/v1/ws?token={}", t.api_key)).await, 401, "an API key is not a session");
    expect(app.post("/auth/logout").bearer_auth(&t.token), 204).await;
    assert_eq!(refused(ws_url(&app, &t.token)).await, 401);
    // Without the upgrade headers, a valid token gets a problem, not a socket.
    let fresh = app.login(&t.admin_email, PASSWORD).await["access_token"].as_str().unwrap().to_owned();
    expect_problem(app.get(&format!("/ws?token={fresh}")), 400).await;
}

#[tokio::test]
async fn each_tenant_sees_only_its_own_events() {
    let app = spawn_app().await;
    let a = app.create_tenant("acme").await;
    let b = app.create_tenant("globex").await;
    let mut sa = connect(&app, &a.token).await;
    let mut sb = connect(&app, &b.token).await;
    let agent = register(&app, &a, "a-bot").await;
    let event = next_event(&mut sa, "agent.registered", Duration::from_secs(5)).await;
    assert_eq!(event["tenant_id"], a.id);
    assert_eq!(event["data"]["id"], agent["id"]);
    assert!(event["id"].is_string() && event["ts"].is_string(), "{event}");
    // B's socket is live (it gets B's own event) and got nothing of A's before it.
    register(&app, &b, "b-bot").await;
    let first = next_json(&mut sb, Duration::from_secs(5)).await.unwrap();
    assert_eq!((first["type"].clone(), first["tenant_id"].clone()), (json!("agent.registered"), json!(b.id)));
    assert_eq!(first["data"]["name"], "b-bot");
    assert!(next_json(&mut sb, Duration::from_millis(300)).await.is_none());
}

#[tokio::test]
async fn subscribe_filters_with_wildcards_and_bad_messages_get_errors() {
    let app = spawn_app().await;
    let t = app.create_tenant("acme").await;
    let mut socket = connect(&app, &t.token).await;
    subscribe(&mut socket, &["hitl.*", "*.deleted"]).await;
    let agent = register(&app, &t, "bot").await;
    let id = agent["id"].as_str().unwrap();
    let ask = json!({"agent_id": id, "action": "delete", "resource": "db", "reason": "cleanup"});
    let r = expect(app.post("/hitl/request").header("X-API-Key", &t.api_key).json(&ask), 201).await;
    expect(app.delete(&format!("/agents/{id}")).header("X-API-Key", &t.api_key), 204).await;
    let first = next_json(&mut socket, Duration::from_secs(5)).await.unwrap();
    assert_eq!((first["type"].clone(), first["data"]["id"].clone()), (json!("hitl.requested"), r["id"].clone()));
    let second = next_json(&mut socket, Duration::from_secs(5)).await.unwrap();
    assert_eq!(second["type"], "agent.deleted", "agent.registered was filtered out");

    for (bad, expected) in [
        ("not json", "not a message this server takes"),
        (r#"{"type":"subscribe","events":["a b"]}"#, "pattern"),
        (r#"{"type":"unsubscribe"}"#, "not a message this server takes"),
    ] {
        socket.send(Message::Text(bad.into())).await.unwrap();
        let reply = next_json(&mut socket, Duration::from_secs(5)).await.unwrap();
        assert_eq!(reply["type"], "error", "{reply}");
        assert!(reply["message"].as_str().unwrap().contains(expected), "{reply}");
    }
    socket.send(Message::Text(r#"{"type":"ping"}"#.into())).await.unwrap();
    assert_eq!(next_json(&mut socket, Duration::from_secs(5)).await.unwrap(), json!({"type": "pong"}));
    // The socket still works with its last good filter.
    register(&app, &t, "bot2").await;
    assert!(next_json(&mut socket, Duration::from_millis(300)).await.is_none());
}

#[tokio::test]
async fn the_socket_is_closed_when_its_session_is_revoked() {
    let app = spawn_app().await;
    let t = app.create_tenant("acme").await;
    let (user_id, token) = app.user(&t, "ann@acme.test", "analyst").await;
    let mut mine = connect(&app, &t.token).await;
    let mut ann = connect(&app, &token).await;
    expect(app.post(&format!("/users/{user_id}/block")).bearer_auth(&t.token), 200).await;
    let closed = tokio::time::timeout(Duration::from_secs(5), async {
        loop {
            match ann.next().await {
                Some(Ok(Message::Close(frame))) => return frame,
                Some(Ok(_)) => continue,
                other => panic!("expected a close frame, got {other:?}"),
            }
        }
    })
    .await
    .expect("closed within 5 s");
    let frame = closed.unwrap();
    assert_eq!(frame.code, CloseCode::Policy);
    assert!(frame.reason.contains("revoked"), "{}", frame.reason);
    // The admin's socket stays open and keeps receiving.
    register(&app, &t, "bot").await;
    next_event(&mut mine, "agent.registered", Duration::from_secs(5)).await;
    // Logging out closes one's own socket too.
    expect(app.post("/auth/logout").bearer_auth(&t.token), 204).await;
    let closed = tokio::time::timeout(Duration::from_secs(5), async {
        loop {
            if let Some(Ok(Message::Close(frame))) = mine.next().await {
                return frame;
            }
        }
    })
    .await
    .unwrap();
    assert_eq!(closed.unwrap().code, CloseCode::Policy);
}

/// A client that stops reading is closed with 1013 once the server cannot hand it more
/// (its socket buffers full, a send waits past the timeout, or it falls a buffer behind),
/// instead of the server queueing for it without bound; a client that reads keeps getting
/// everything.
#[tokio::test]
async fn a_client_that_stops_reading_is_dropped_with_1013() {
    let app = spawn_app().await;
    let t = app.create_tenant("acme").await;
    let agent = register(&app, &t, "bot").await;
    let mut stalled = connect(&app, &t.token).await;
    subscribe(&mut stalled, &["hitl.requested"]).await;
    let mut reader = connect(&app, &t.token).await;
    subscribe(&mut reader, &["hitl.requested"]).await;
    let sent = 500;
    let reading = tokio::spawn(async move {
        let mut got = 0;
        while got < sent {
            match reader.next().await {
                Some(Ok(Message::Text(_))) => got += 1,
                Some(Ok(_)) => {}
                _ => break,
            }
        }
        got
    });

    // 500 events of about 16 KiB each: more than loopback's socket buffers hold (about 300
    // of them here). The server's send then waits; after its timeout (5 s) it closes the
    // socket, and the close frame waits up to 10 s more for the client to read.
    let filler = "x".repeat(15_000);
    let ask = json!({"agent_id": agent["id"], "action": "read", "resource": "docs", "reason": "load",
        "context": {"filler": filler}});
    for _ in 0..sent {
        expect(app.post("/hitl/request").header("X-API-Key", &t.api_key).json(&ask), 201).await;
    }
    // Past the send timeout, within the close frame's grace.
    tokio::time::sleep(Duration::from_secs(6)).await;
    let mut got = 0;
    let close = loop {
        match tokio::time::timeout(Duration::from_secs(10), stalled.next()).await {
            Ok(Some(Ok(Message::Text(_)))) => got += 1,
            Ok(Some(Ok(Message::Close(frame)))) => break frame,
            Ok(Some(Ok(_))) => continue,
            other => panic!("expected the server to close the stalled socket, got {other:?} after {got} events"),
        }
    };
    let frame = close.expect("a close frame with a code");
    assert_eq!(frame.code, CloseCode::Again, "{}", frame.reason);
    assert!(frame.reason.contains("too slow"), "{}", frame.reason);
    assert!(got < sent, "the stalled client was cut off ({got} of {sent})");
    // The reading client got every event: the stalled one held nothing back.
    let read = tokio::time::timeout(Duration::from_secs(20), reading).await.unwrap().unwrap();
    assert_eq!(read, sent);
}

/// Policy decisions that deny or need approval reach the feed (allowed ones do not), and
/// so does the approval request the check opened.
#[tokio::test]
async fn denied_and_approval_decisions_reach_the_feed() {
    let app = spawn_app().await;
    let t = app.create_tenant("acme").await;
    let agent = register(&app, &t, "bot").await;
    let deny = "package acme.deletes\n\nimport rego.v1\n\ndeny contains msg if {\n\tinput.action == \"delete\"\n\tmsg := \"no deletes\"\n}\n";
    expect(app.post("/policies").bearer_auth(&t.token).json(&json!({"name": "no deletes", "rego": deny})), 201).await;
    let approval = json!({"name": "consent", "template": {"id": "require-consent-personal-data",
        "parameters": {"effect": "approval"}}});
    expect(app.post("/policies").bearer_auth(&t.token).json(&approval), 201).await;
    let mut socket = connect(&app, &t.token).await;
    subscribe(&mut socket, &["policy.decision", "hitl.requested"]).await;
    let check = |action: &str, context: Value| {
        app.post("/policies/check").header("X-API-Key", &t.api_key).json(&json!({
            "agent_id": agent["id"], "action": action, "resource": "crm/contacts", "context": context}))
    };
    let allowed = expect(check("read", json!({})), 200).await;
    assert_eq!(allowed["allowed"], true, "{allowed}");
    let denied = expect(check("delete", json!({})), 200).await;
    let asked = expect(check("read", json!({"personal_data": true, "consent": false})), 200).await;

    let first = next_json(&mut socket, Duration::from_secs(5)).await.unwrap();
    assert_eq!((first["type"].clone(), first["data"]["decision"].clone()), (json!("policy.decision"), json!("deny")));
    assert_eq!(first["data"]["decision_id"], denied["decision_id"]);
    let second = next_json(&mut socket, Duration::from_secs(5)).await.unwrap();
    assert_eq!(second["data"]["decision"], "require_approval", "{second}");
    assert_eq!(second["data"]["decision_id"], asked["decision_id"]);
    let third = next_json(&mut socket, Duration::from_secs(5)).await.unwrap();
    assert_eq!(
        (third["type"].clone(), third["data"]["id"].clone()),
        (json!("hitl.requested"), asked["hitl_request_id"].clone())
    );
    assert!(next_json(&mut socket, Duration::from_millis(300)).await.is_none(), "nothing for the allowed check");
}

/// Issue 32.9: a tenant keeps at most `AGENTGOV_WS_MAX_CONNECTIONS_PER_TENANT` sockets
/// (429 before the upgrade, problem+json naming the setting); a request that is no
/// handshake keeps no place, and a closed socket gives its place back.
#[tokio::test]
async fn a_tenant_keeps_at_most_its_share_of_sockets() {
    let app = spawn_with(|c| c.ws_max_connections_per_tenant = 1).await;
    let t = app.create_tenant("acme").await;
    let other = app.create_tenant("globex").await;
    expect_problem(app.get(&format!("/api/v1/ws?token={}", t.token)), 400).await;
    let mut first = connect(&app, &t.token).await;
    match tokio_tungstenite::connect_async(ws_url(&app, &t.token)).await {
        Err(tokio_tungstenite::tungstenite::Error::Http(response)) => {
            assert_eq!(response.status().as_u16(), 429);
            let body: Value = serde_json::from_slice(response.body().as_deref().unwrap_or_default()).unwrap();
            assert!(body["detail"].as_str().unwrap().contains("AGENTGOV_WS_MAX_CONNECTIONS_PER_TENANT"), "{body}");
        }
        other => panic!("expected 429, got {:?}", other.map(|(_, r)| r.status())),
    }
    let _theirs = connect(&app, &other.token).await;
    first.close(None).await.unwrap();
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while tokio_tungstenite::connect_async(ws_url(&app, &t.token)).await.is_err() {
        assert!(std::time::Instant::now() < deadline, "the closed socket's place was not given back");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}
