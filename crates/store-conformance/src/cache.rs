//! The cache and event-bus conformance suites: one function per behaviour, written against
//! the ports, run by every adapter through [`cache_conformance_tests!`] and
//! [`bus_conformance_tests!`].
//!
//! Timing: TTLs and windows are short (about a second) so the suite stays quick, and the
//! margins are wide enough for a Redis round trip on a slow CI machine.

#![expect(clippy::unwrap_used, clippy::expect_used, reason = "test code: a failed unwrap is a failed test")]

use std::sync::Arc;
use std::time::Duration;

use agentgov_domain::ids::TenantId;
use agentgov_domain::ports::{Cache, Event, EventBus, EventStream, MAX_MAXIMA_MEMBERS, Maxima, Raise};
use futures::StreamExt;
use time::OffsetDateTime;
use uuid::Uuid;

/// A TTL no test outlives; every key written by the suite expires eventually.
const LONG: Duration = Duration::from_secs(60);
/// A TTL or window the suite waits out.
const SHORT: Duration = Duration::from_millis(1000);
/// Slack for a round trip and for timer granularity.
const SLACK: Duration = Duration::from_millis(300);
/// How long a subscriber waits for an event before the test fails.
const RECEIVE_TIMEOUT: Duration = Duration::from_secs(5);

/// Expands one `#[tokio::test]` per cache behaviour.
///
/// `$factory` is an `async fn() -> Option<Arc<dyn Cache>>`; `None` means the backing service
/// is not configured and the test returns early (see [`crate::service_url`]). Each call must
/// return a cache in a fresh namespace (for Redis, a unique key prefix).
#[macro_export]
macro_rules! cache_conformance_tests {
    ($factory:path) => {
        $crate::__conformance_tests!($factory;
            set_get_delete,
            value_expires_after_ttl,
            incr_counts_up_from_one,
            incr_window_is_fixed_at_first_increment,
            get_counter_reads_without_incrementing,
            delete_removes_a_counter,
            decr_gives_one_back_within_the_window,
            decr_never_creates_nor_goes_below_zero,
            concurrent_incr_and_decr_balance,
            revoke_token_marks_it_revoked,
            token_revocation_expires,
            ping_answers,
            concurrent_incr_counts_exactly,
            take_reads_once,
            concurrent_takes_hand_the_value_to_one,
            places_are_held_up_to_the_cap,
            a_holder_renews_its_own_place,
            released_and_expired_places_make_room,
            concurrent_holders_never_pass_the_cap,
            maxima_only_ever_rise,
            maxima_expire_and_are_deleted,
            concurrent_raises_keep_the_highest,
        );

        #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
        async fn keys_are_isolated_between_namespaces() {
            let (Some(a), Some(b)) = ($factory().await, $factory().await) else { return };
            $crate::cache::keys_are_isolated_between_namespaces(a, b).await;
        }
    };
}

/// Expands one `#[tokio::test]` per event-bus behaviour.
///
/// `$factory` is an `async fn() -> Option<Arc<dyn EventBus>>` returning a bus on a fresh
/// namespace (for Redis, a unique channel). `$replicas` is an
/// `async fn() -> Option<(Arc<dyn EventBus>, Arc<dyn EventBus>)>` returning two buses as two
/// replicas would hold them: separate instances sharing one fresh namespace. `None` from
/// either means the backing service is not configured and the test returns early.
#[macro_export]
macro_rules! bus_conformance_tests {
    ($factory:path, $replicas:path) => {
        $crate::__conformance_tests!($factory;
            subscriber_receives_published_event_intact,
            every_subscriber_receives_each_event,
            events_before_subscribing_are_not_received,
            events_from_one_publisher_arrive_in_order,
            publish_without_subscribers_succeeds,
            dropped_subscription_does_not_affect_others,
        );

        #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
        async fn events_from_another_replica_are_received() {
            let Some((a, b)) = $replicas().await else { return };
            $crate::cache::events_from_another_replica_are_received(a, b).await;
        }
    };
}

#[doc(hidden)]
#[macro_export]
macro_rules! __conformance_tests {
    ($factory:path; $($behaviour:ident),+ $(,)?) => {
        $(
            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn $behaviour() {
                let Some(port) = $factory().await else { return };
                $crate::cache::$behaviour(port).await;
            }
        )+
    };
}

// ---------------------------------------------------------------------------------------
// Cache

pub async fn set_get_delete(cache: Arc<dyn Cache>) {
    assert_eq!(cache.get("k").await.unwrap(), None, "a missing key reads as None");

    cache.set("k", b"one", LONG).await.unwrap();
    assert_eq!(cache.get("k").await.unwrap().as_deref(), Some(&b"one"[..]));

    cache.set("k", b"two", LONG).await.unwrap();
    assert_eq!(cache.get("k").await.unwrap().as_deref(), Some(&b"two"[..]), "set overwrites");

    let binary = [0u8, 255, 10, 13, 0, 128];
    cache.set("bin", &binary, LONG).await.unwrap();
    assert_eq!(cache.get("bin").await.unwrap().as_deref(), Some(&binary[..]), "values are binary-safe");
    cache.set("empty", b"", LONG).await.unwrap();
    assert_eq!(cache.get("empty").await.unwrap().as_deref(), Some(&b""[..]), "an empty value is a value");

    cache.delete("k").await.unwrap();
    assert_eq!(cache.get("k").await.unwrap(), None);
    assert_eq!(cache.get("bin").await.unwrap().as_deref(), Some(&binary[..]), "delete touches one key");
    cache.delete("k").await.unwrap();
    cache.delete("never-set").await.unwrap();
}

pub async fn take_reads_once(cache: Arc<dyn Cache>) {
    assert_eq!(cache.take("t").await.unwrap(), None, "a missing key takes as None");
    cache.set("t", b"state", LONG).await.unwrap();
    assert_eq!(cache.take("t").await.unwrap().as_deref(), Some(&b"state"[..]));
    assert_eq!(cache.take("t").await.unwrap(), None, "taken once");
    assert_eq!(cache.get("t").await.unwrap(), None, "and gone");
    cache.set("short", b"x", Duration::from_millis(50)).await.unwrap();
    tokio::time::sleep(Duration::from_millis(120)).await;
    assert_eq!(cache.take("short").await.unwrap(), None, "an expired key takes as None");
}

pub async fn concurrent_takes_hand_the_value_to_one(cache: Arc<dyn Cache>) {
    for round in 0..20 {
        let key = format!("race-{round}");
        cache.set(&key, b"v", LONG).await.unwrap();
        let takers: Vec<_> = (0..8)
            .map(|_| {
                let (cache, key) = (cache.clone(), key.clone());
                tokio::spawn(async move { cache.take(&key).await.unwrap() })
            })
            .collect();
        let mut got = 0;
        for t in takers {
            got += usize::from(t.await.unwrap().is_some());
        }
        assert_eq!(got, 1, "round {round}: exactly one taker gets the value");
    }
}

pub async fn value_expires_after_ttl(cache: Arc<dyn Cache>) {
    cache.set("short", b"v", SHORT).await.unwrap();
    cache.set("long", b"v", LONG).await.unwrap();
    assert!(cache.get("short").await.unwrap().is_some());

    tokio::time::sleep(SHORT + SLACK).await;
    assert_eq!(cache.get("short").await.unwrap(), None, "expired after its TTL");
    assert!(cache.get("long").await.unwrap().is_some(), "a longer TTL still holds");

    cache.set("short", b"again", LONG).await.unwrap();
    assert_eq!(cache.get("short").await.unwrap().as_deref(), Some(&b"again"[..]), "an expired key can be set");
}

pub async fn keys_are_isolated_between_namespaces(a: Arc<dyn Cache>, b: Arc<dyn Cache>) {
    a.set("shared-name", b"a", LONG).await.unwrap();
    assert_eq!(b.get("shared-name").await.unwrap(), None);

    b.set("shared-name", b"b", LONG).await.unwrap();
    assert_eq!(a.get("shared-name").await.unwrap().as_deref(), Some(&b"a"[..]));
    assert_eq!(b.get("shared-name").await.unwrap().as_deref(), Some(&b"b"[..]));

    a.incr("counter", LONG).await.unwrap();
    assert_eq!(b.incr("counter", LONG).await.unwrap().count, 1);

    a.revoke_token("jti", LONG).await.unwrap();
    assert!(!b.is_token_revoked("jti").await.unwrap());

    a.delete("shared-name").await.unwrap();
    assert_eq!(b.get("shared-name").await.unwrap().as_deref(), Some(&b"b"[..]));
}

pub async fn incr_counts_up_from_one(cache: Arc<dyn Cache>) {
    let first = cache.incr("hits", LONG).await.unwrap();
    assert_eq!(first.count, 1);
    assert!(first.ttl <= LONG && first.ttl > LONG - Duration::from_secs(5), "ttl {:?} ≈ the window", first.ttl);

    assert_eq!(cache.incr("hits", LONG).await.unwrap().count, 2);
    let third = cache.incr("hits", LONG).await.unwrap();
    assert_eq!(third.count, 3);
    assert!(third.ttl <= first.ttl, "later increments do not extend the window");

    assert_eq!(cache.incr("other", LONG).await.unwrap().count, 1, "counters are per key");
}

pub async fn incr_window_is_fixed_at_first_increment(cache: Arc<dyn Cache>) {
    let first = cache.incr("window", SHORT).await.unwrap();
    assert_eq!(first.count, 1);
    assert!(first.ttl <= SHORT && first.ttl > SHORT - SLACK, "ttl {:?} ≈ the window", first.ttl);

    let half = SHORT / 2;
    tokio::time::sleep(half).await;
    let second = cache.incr("window", SHORT).await.unwrap();
    assert_eq!(second.count, 2);
    assert!(second.ttl <= SHORT - half + SLACK / 3, "window not extended: ttl {:?}", second.ttl);
    assert!(second.ttl > Duration::ZERO);

    tokio::time::sleep(SHORT - half + SLACK).await;
    assert_eq!(cache.get_counter("window").await.unwrap(), None, "the counter is forgotten after its window");
    let fresh = cache.incr("window", SHORT).await.unwrap();
    assert_eq!(fresh.count, 1, "a new window starts from one");
    assert!(fresh.ttl > SHORT - SLACK, "and with a full window: ttl {:?}", fresh.ttl);
}

pub async fn get_counter_reads_without_incrementing(cache: Arc<dyn Cache>) {
    assert_eq!(cache.get_counter("reads").await.unwrap(), None, "absent counter");

    cache.incr("reads", LONG).await.unwrap();
    let after = cache.incr("reads", LONG).await.unwrap();
    let read = cache.get_counter("reads").await.unwrap().expect("counter present");
    assert_eq!(read.count, 2);
    assert!(read.ttl <= after.ttl && read.ttl > LONG - Duration::from_secs(5), "ttl {:?}", read.ttl);

    assert_eq!(cache.get_counter("reads").await.unwrap().map(|c| c.count), Some(2), "reading does not count");
    assert_eq!(cache.incr("reads", LONG).await.unwrap().count, 3);
}

pub async fn delete_removes_a_counter(cache: Arc<dyn Cache>) {
    cache.incr("gone", LONG).await.unwrap();
    cache.incr("gone", LONG).await.unwrap();
    cache.delete("gone").await.unwrap();
    assert_eq!(cache.get_counter("gone").await.unwrap(), None);
    assert_eq!(cache.incr("gone", LONG).await.unwrap().count, 1);
}

pub async fn decr_gives_one_back_within_the_window(cache: Arc<dyn Cache>) {
    cache.incr("reserved", SHORT).await.unwrap();
    let second = cache.incr("reserved", SHORT).await.unwrap();
    assert_eq!(second.count, 2);
    cache.decr("reserved").await.unwrap();
    let read = cache.get_counter("reserved").await.unwrap().expect("still counting");
    assert_eq!(read.count, 1, "one reservation given back");
    assert!(read.ttl <= second.ttl && read.ttl > Duration::ZERO, "the window is kept: ttl {:?}", read.ttl);
    assert_eq!(cache.incr("reserved", SHORT).await.unwrap().count, 2, "the next reservation counts on");

    tokio::time::sleep(SHORT + SLACK).await;
    assert_eq!(cache.get_counter("reserved").await.unwrap(), None, "the window still ends on time");
}

pub async fn decr_never_creates_nor_goes_below_zero(cache: Arc<dyn Cache>) {
    cache.decr("never-counted").await.unwrap();
    assert_eq!(cache.get_counter("never-counted").await.unwrap(), None, "decr does not create a counter");
    assert_eq!(cache.incr("never-counted", LONG).await.unwrap().count, 1);

    cache.incr("floor", LONG).await.unwrap();
    cache.decr("floor").await.unwrap();
    cache.decr("floor").await.unwrap();
    assert_eq!(cache.get_counter("floor").await.unwrap().map(|c| c.count), Some(0), "never below zero");
    assert_eq!(cache.incr("floor", LONG).await.unwrap().count, 1);
}

pub async fn concurrent_incr_and_decr_balance(cache: Arc<dyn Cache>) {
    const TASKS: u64 = 40;
    cache.incr("balance", LONG).await.unwrap();
    // Every task reserves and gives back: whatever the interleaving, none is lost.
    let tasks: Vec<_> = (0..TASKS)
        .map(|_| {
            let cache = Arc::clone(&cache);
            tokio::spawn(async move {
                cache.incr("balance", LONG).await.unwrap();
                cache.decr("balance").await.unwrap();
            })
        })
        .collect();
    for task in tasks {
        task.await.unwrap();
    }
    assert_eq!(cache.get_counter("balance").await.unwrap().map(|c| c.count), Some(1));
}

pub async fn revoke_token_marks_it_revoked(cache: Arc<dyn Cache>) {
    assert!(!cache.is_token_revoked("jti-1").await.unwrap());
    cache.revoke_token("jti-1", LONG).await.unwrap();
    assert!(cache.is_token_revoked("jti-1").await.unwrap());
    assert!(!cache.is_token_revoked("jti-2").await.unwrap(), "only the revoked id");

    cache.revoke_token("jti-1", LONG).await.unwrap();
    assert!(cache.is_token_revoked("jti-1").await.unwrap(), "revoking twice is harmless");
}

pub async fn token_revocation_expires(cache: Arc<dyn Cache>) {
    cache.revoke_token("short-lived", SHORT).await.unwrap();
    assert!(cache.is_token_revoked("short-lived").await.unwrap());
    tokio::time::sleep(SHORT + SLACK).await;
    assert!(!cache.is_token_revoked("short-lived").await.unwrap(), "forgotten once the token would have expired");
}

pub async fn ping_answers(cache: Arc<dyn Cache>) {
    cache.ping().await.unwrap();
    assert!(!cache.backend().is_empty());
}

pub async fn concurrent_incr_counts_exactly(cache: Arc<dyn Cache>) {
    const TASKS: u64 = 50;
    let tasks: Vec<_> = (0..TASKS)
        .map(|_| {
            let cache = Arc::clone(&cache);
            tokio::spawn(async move { cache.incr("contended", LONG).await.unwrap().count })
        })
        .collect();
    let mut counts = Vec::new();
    for task in tasks {
        counts.push(task.await.unwrap());
    }
    counts.sort_unstable();
    assert_eq!(counts, (1..=TASKS).collect::<Vec<_>>(), "each increment saw a distinct count");
    assert_eq!(cache.get_counter("contended").await.unwrap().map(|c| c.count), Some(TASKS));
}

// ---------------------------------------------------------------------------------------
// Event bus

fn event(n: u64) -> Event {
    Event {
        id: Uuid::now_v7(),
        event_type: format!("test.event.{n}"),
        tenant_id: TenantId(Uuid::now_v7()),
        ts: OffsetDateTime::now_utc(),
        data: serde_json::json!({
            "n": n,
            "text": "ünïcödé \"quoted\"\n",
            "nested": {"list": [1, 2.5, null, true], "empty": {}},
        }),
    }
}

async fn next(stream: &mut EventStream) -> Event {
    tokio::time::timeout(RECEIVE_TIMEOUT, stream.next())
        .await
        .expect("no event arrived in time")
        .expect("the event stream ended")
}

pub async fn subscriber_receives_published_event_intact(bus: Arc<dyn EventBus>) {
    let mut stream = bus.subscribe().await.unwrap();
    let sent = event(1);
    bus.publish(&sent).await.unwrap();
    let got = next(&mut stream).await;
    assert_eq!(got, sent, "id, type, tenant_id, ts and data survive the trip");
    assert!(!bus.backend().is_empty());
}

pub async fn every_subscriber_receives_each_event(bus: Arc<dyn EventBus>) {
    let mut first = bus.subscribe().await.unwrap();
    let mut second = bus.subscribe().await.unwrap();
    let sent = event(2);
    bus.publish(&sent).await.unwrap();
    assert_eq!(next(&mut first).await, sent);
    assert_eq!(next(&mut second).await, sent);
}

pub async fn events_before_subscribing_are_not_received(bus: Arc<dyn EventBus>) {
    bus.publish(&event(0)).await.unwrap();
    let mut stream = bus.subscribe().await.unwrap();
    let after = event(1);
    bus.publish(&after).await.unwrap();
    assert_eq!(next(&mut stream).await, after);
}

pub async fn events_from_one_publisher_arrive_in_order(bus: Arc<dyn EventBus>) {
    let mut stream = bus.subscribe().await.unwrap();
    let sent: Vec<Event> = (0..20).map(event).collect();
    for e in &sent {
        bus.publish(e).await.unwrap();
    }
    let mut got = Vec::new();
    for _ in 0..sent.len() {
        got.push(next(&mut stream).await);
    }
    assert_eq!(got, sent);
}

pub async fn publish_without_subscribers_succeeds(bus: Arc<dyn EventBus>) {
    bus.publish(&event(3)).await.unwrap();
}

pub async fn dropped_subscription_does_not_affect_others(bus: Arc<dyn EventBus>) {
    let dropped = bus.subscribe().await.unwrap();
    let mut kept = bus.subscribe().await.unwrap();
    drop(dropped);
    let sent = event(4);
    bus.publish(&sent).await.unwrap();
    assert_eq!(next(&mut kept).await, sent);
}

pub async fn events_from_another_replica_are_received(a: Arc<dyn EventBus>, b: Arc<dyn EventBus>) {
    let mut on_a = a.subscribe().await.unwrap();
    let mut on_b = b.subscribe().await.unwrap();

    let from_b = event(5);
    b.publish(&from_b).await.unwrap();
    assert_eq!(next(&mut on_a).await, from_b, "a replica sees another's event");
    assert_eq!(next(&mut on_b).await, from_b, "and the publisher's own subscribers see it too");

    let from_a = event(6);
    a.publish(&from_a).await.unwrap();
    assert_eq!(next(&mut on_b).await, from_a);
    assert_eq!(next(&mut on_a).await, from_a);
}

pub async fn places_are_held_up_to_the_cap(cache: Arc<dyn Cache>) {
    assert!(cache.hold_place("share", "a", 2, LONG).await.unwrap());
    assert!(cache.hold_place("share", "b", 2, LONG).await.unwrap());
    assert!(!cache.hold_place("share", "c", 2, LONG).await.unwrap(), "the cap is 2");
    assert!(cache.hold_place("other", "c", 2, LONG).await.unwrap(), "keys are counted apart");
    assert!(!cache.hold_place("zero", "a", 0, LONG).await.unwrap());
}

pub async fn a_holder_renews_its_own_place(cache: Arc<dyn Cache>) {
    assert!(cache.hold_place("share", "a", 1, SHORT).await.unwrap());
    assert!(cache.hold_place("share", "a", 1, LONG).await.unwrap(), "renewed, not counted twice");
    tokio::time::sleep(SHORT + SLACK).await;
    assert!(!cache.hold_place("share", "b", 1, LONG).await.unwrap(), "the renewal outlives the first TTL");
    assert!(cache.hold_place("share", "a", 1, LONG).await.unwrap());
}

pub async fn released_and_expired_places_make_room(cache: Arc<dyn Cache>) {
    assert!(cache.hold_place("share", "a", 2, LONG).await.unwrap());
    assert!(cache.hold_place("share", "b", 2, SHORT).await.unwrap());
    assert!(!cache.hold_place("share", "c", 2, LONG).await.unwrap());
    cache.release_place("share", "a").await.unwrap();
    cache.release_place("share", "nobody").await.unwrap();
    cache.release_place("absent", "a").await.unwrap();
    assert!(cache.hold_place("share", "c", 2, LONG).await.unwrap(), "a's place was given back");
    assert!(!cache.hold_place("share", "d", 2, LONG).await.unwrap());
    // b's holder died without giving its place back: it expires.
    tokio::time::sleep(SHORT + SLACK).await;
    assert!(cache.hold_place("share", "d", 2, LONG).await.unwrap(), "b's place expired");
}

pub async fn concurrent_holders_never_pass_the_cap(cache: Arc<dyn Cache>) {
    let tasks: Vec<_> = (0..40)
        .map(|i| {
            let cache = cache.clone();
            tokio::spawn(async move { cache.hold_place("share", &format!("h{i}"), 7, LONG).await.unwrap() })
        })
        .collect();
    let mut held = 0;
    for t in tasks {
        held += usize::from(t.await.unwrap());
    }
    assert_eq!(held, 7);
}

fn raise(key: &str, member: &str, value: i64) -> Raise {
    Raise { key: key.into(), member: member.into(), value }
}

async fn members(cache: &Arc<dyn Cache>, key: &str) -> Vec<(String, i64)> {
    match cache.maxima(key).await.unwrap() {
        Maxima::Members(mut m) => {
            m.sort();
            m
        }
        Maxima::TooMany => panic!("{key}: too many members"),
    }
}

pub async fn maxima_only_ever_rise(cache: Arc<dyn Cache>) {
    assert_eq!(members(&cache, "marks").await, [], "an absent key has no members");
    cache.raise(&[], LONG).await.unwrap();
    let first = [raise("marks", "w:a", 5), raise("marks", "w:b", 3), raise("other", "w:a", 1)];
    cache.raise(&first, LONG).await.unwrap();
    assert_eq!(members(&cache, "marks").await, [("w:a".into(), 5), ("w:b".into(), 3)]);
    assert_eq!(members(&cache, "other").await, [("w:a".into(), 1)], "keys apart");
    cache.raise(&[raise("marks", "w:a", 4), raise("marks", "w:b", 9), raise("marks", "v:a", 0)], LONG).await.unwrap();
    assert_eq!(
        members(&cache, "marks").await,
        [("v:a".into(), 0), ("w:a".into(), 5), ("w:b".into(), 9)],
        "a lower value never lowers a member; a higher one raises it; a new member is added"
    );
    let big = 1_i64 << 53;
    let odd = "member with spaces, commas,\nand 42,7, digits";
    cache.raise(&[raise("big", odd, big)], LONG).await.unwrap();
    assert_eq!(members(&cache, "big").await, [(odd.into(), big)], "values exact up to 2^53, any member");
    let many: Vec<Raise> = (0..=MAX_MAXIMA_MEMBERS).map(|i| raise("crowd", &format!("m{i}"), 1)).collect();
    cache.raise(&many[..MAX_MAXIMA_MEMBERS], LONG).await.unwrap();
    assert_eq!(members(&cache, "crowd").await.len(), MAX_MAXIMA_MEMBERS);
    cache.raise(&many, LONG).await.unwrap();
    assert_eq!(cache.maxima("crowd").await.unwrap(), Maxima::TooMany);
}

pub async fn maxima_expire_and_are_deleted(cache: Arc<dyn Cache>) {
    cache.raise(&[raise("short", "w:a", 1), raise("kept", "w:a", 1)], SHORT).await.unwrap();
    cache.raise(&[raise("kept", "w:b", 2)], LONG).await.unwrap();
    tokio::time::sleep(SHORT + SLACK).await;
    assert_eq!(members(&cache, "short").await, [], "expired");
    assert_eq!(members(&cache, "kept").await, [("w:a".into(), 1), ("w:b".into(), 2)], "a raise renews the key");
    cache.delete("kept").await.unwrap();
    assert_eq!(members(&cache, "kept").await, []);
}

pub async fn concurrent_raises_keep_the_highest(cache: Arc<dyn Cache>) {
    let tasks: Vec<_> = (0..40)
        .map(|i| {
            let cache = cache.clone();
            tokio::spawn(async move { cache.raise(&[raise("race", &format!("w:{}", i % 2), i)], LONG).await.unwrap() })
        })
        .collect();
    for t in tasks {
        t.await.unwrap();
    }
    assert_eq!(members(&cache, "race").await, [("w:0".into(), 38), ("w:1".into(), 39)]);
}
