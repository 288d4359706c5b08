//! The shared cache and event-bus conformance suites against a real Redis, from
//! `AGENTGOV_TEST_REDIS_URL` (skipped when unset, failing when unset in CI). Every factory
//! call gets its own key prefix or channel, so tests never see each other's data.

#![expect(clippy::unwrap_used, clippy::expect_used, reason = "test code: a failed unwrap is a failed test")]

use std::sync::Arc;
use std::time::Duration;

use agentgov_cache_redis::{RedisBus, RedisCache};
use agentgov_domain::DomainError;
use agentgov_domain::ports::{Cache, EventBus};
use agentgov_store_conformance::service_url;
use uuid::Uuid;

fn redis_url() -> Option<String> {
    service_url("AGENTGOV_TEST_REDIS_URL")
}

fn namespace() -> String {
    format!("agentgov-test:{}:", Uuid::now_v7())
}

async fn new_cache() -> Option<Arc<dyn Cache>> {
    let cache = RedisCache::connect(&redis_url()?, &namespace(), 8).expect("valid Redis URL");
    Some(Arc::new(cache))
}

async fn new_bus() -> Option<Arc<dyn EventBus>> {
    let bus = RedisBus::connect(&redis_url()?, &format!("{}events", namespace())).expect("valid Redis URL");
    Some(Arc::new(bus))
}

/// Two replicas: separate connections and pools on one channel.
async fn new_replicas() -> Option<(Arc<dyn EventBus>, Arc<dyn EventBus>)> {
    let url = redis_url()?;
    let channel = format!("{}events", namespace());
    let a = RedisBus::connect(&url, &channel).expect("valid Redis URL");
    let b = RedisBus::connect(&url, &channel).expect("valid Redis URL");
    Some((Arc::new(a), Arc::new(b)))
}

mod cache {
    agentgov_store_conformance::cache_conformance_tests!(super::new_cache);
}

mod bus {
    agentgov_store_conformance::bus_conformance_tests!(super::new_bus, super::new_replicas);
}

/// Nothing listens on port 1.
const UNREACHABLE: &str = "redis://127.0.0.1:1";
/// Well above the adapters' 2 s timeouts, well below "hanging".
const PROMPTLY: Duration = Duration::from_secs(6);

#[tokio::test]
async fn an_unreachable_cache_is_unavailable_not_hanging() {
    let cache = RedisCache::connect(UNREACHABLE, "agentgov-test:", 2).expect("valid Redis URL");
    let ping = tokio::time::timeout(PROMPTLY, cache.ping()).await.expect("ping gave up in time");
    assert!(matches!(ping, Err(DomainError::Unavailable(ref what)) if what == "cache"), "{ping:?}");
    let get = tokio::time::timeout(PROMPTLY, cache.get("k")).await.expect("get gave up in time");
    assert!(matches!(get, Err(DomainError::Unavailable(_))), "{get:?}");
}

#[tokio::test]
async fn an_unreachable_bus_is_unavailable_not_hanging() {
    let bus = RedisBus::connect(UNREACHABLE, "agentgov-test:events").expect("valid Redis URL");
    let subscribe = tokio::time::timeout(PROMPTLY, bus.subscribe()).await.expect("subscribe gave up in time");
    assert!(matches!(subscribe, Err(DomainError::Unavailable(ref what)) if what == "event bus"));
    let event = agentgov_domain::ports::Event {
        id: Uuid::now_v7(),
        event_type: "test".into(),
        tenant_id: agentgov_domain::ids::TenantId(Uuid::now_v7()),
        ts: time::OffsetDateTime::now_utc(),
        data: serde_json::Value::Null,
    };
    let publish = tokio::time::timeout(PROMPTLY, bus.publish(&event)).await.expect("publish gave up in time");
    assert!(matches!(publish, Err(DomainError::Unavailable(_))), "{publish:?}");
}

/// A server that accepts connections and never answers: the case only timeouts catch.
async fn silent_server() -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        let mut held = Vec::new();
        while let Ok((socket, _)) = listener.accept().await {
            held.push(socket);
        }
    });
    format!("redis://{addr}")
}

#[tokio::test]
async fn a_silent_server_is_unavailable_not_hanging() {
    let url = silent_server().await;
    let cache = RedisCache::connect(&url, "agentgov-test:", 2).unwrap();
    let ping = tokio::time::timeout(PROMPTLY, cache.ping()).await.expect("ping gave up in time");
    assert!(matches!(ping, Err(DomainError::Unavailable(_))), "{ping:?}");

    let bus = RedisBus::connect(&url, "agentgov-test:events").unwrap();
    let subscribe = tokio::time::timeout(PROMPTLY, bus.subscribe()).await.expect("subscribe gave up in time");
    assert!(matches!(subscribe, Err(DomainError::Unavailable(_))));
}

#[test]
fn a_malformed_url_is_refused_at_connect() {
    assert!(RedisCache::connect("not a url", "p:", 1).is_err());
    assert!(RedisBus::connect("http://127.0.0.1:6379", "c").is_err());
}

#[tokio::test]
async fn counters_read_as_their_decimal_value() {
    let Some(cache) = new_cache().await else { return };
    cache.incr("c", Duration::from_secs(60)).await.unwrap();
    cache.incr("c", Duration::from_secs(60)).await.unwrap();
    assert_eq!(cache.get("c").await.unwrap().as_deref(), Some(&b"2"[..]));
}

#[tokio::test]
async fn undecodable_messages_are_skipped() {
    let Some(url) = redis_url() else { return };
    let channel = format!("{}events", namespace());
    let bus = RedisBus::connect(&url, &channel).unwrap();
    let mut stream = bus.subscribe().await.unwrap();

    let client = deadpool_redis::redis::Client::open(url.as_str()).unwrap();
    let mut conn = client.get_multiplexed_async_connection().await.unwrap();
    let _: u64 =
        deadpool_redis::redis::cmd("PUBLISH").arg(&channel).arg("not json").query_async(&mut conn).await.unwrap();

    let event = agentgov_domain::ports::Event {
        id: Uuid::now_v7(),
        event_type: "after-garbage".into(),
        tenant_id: agentgov_domain::ids::TenantId(Uuid::now_v7()),
        ts: time::OffsetDateTime::now_utc(),
        data: serde_json::json!({}),
    };
    bus.publish(&event).await.unwrap();
    let got = tokio::time::timeout(Duration::from_secs(5), futures::StreamExt::next(&mut stream)).await.unwrap();
    assert_eq!(got, Some(event));
}

/// A shared connection that Redis dropped (a restart, a proxy timing out) is opened again:
/// the call that finds it broken fails as `Unavailable` (or already gets the new one), the
/// next one succeeds. Redis is reached through a proxy on loopback that the test cuts.
#[tokio::test]
async fn a_dropped_connection_is_replaced_by_the_next_call() {
    use tokio::io::copy_bidirectional;
    use tokio::net::{TcpListener, TcpStream};
    let Some(url) = redis_url() else { return };
    let upstream = url.trim_start_matches("redis://").trim_end_matches('/').to_owned();
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let proxy = format!("redis://{}", listener.local_addr().unwrap());
    let (cut, _) = tokio::sync::broadcast::channel::<()>(1);
    let cuts = cut.clone();
    tokio::spawn(async move {
        while let Ok((mut client, _)) = listener.accept().await {
            let mut server = TcpStream::connect(&upstream).await.unwrap();
            let mut cut = cuts.subscribe();
            tokio::spawn(async move {
                tokio::select! {
                    _ = copy_bidirectional(&mut client, &mut server) => {}
                    _ = cut.recv() => {}
                }
            });
        }
    });
    let cache = RedisCache::connect(&proxy, &namespace(), 1).unwrap();
    cache.set("k", b"v", Duration::from_secs(60)).await.unwrap();
    cut.send(()).unwrap();
    tokio::time::sleep(Duration::from_millis(100)).await;
    match cache.get("k").await {
        Ok(value) => assert_eq!(value.as_deref(), Some(&b"v"[..])),
        Err(e) => assert!(matches!(e, DomainError::Unavailable(_)), "{e:?}"),
    }
    assert_eq!(cache.get("k").await.unwrap().as_deref(), Some(&b"v"[..]), "a new connection");
}
