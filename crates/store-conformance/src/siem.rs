//! Conformance of the `LeaseRepo` and `SiemRepo` ports: named leases (taken when free or
//! expired, renewed by their holder, one winner among racers) and SIEM sinks (registered
//! once, cursors per tenant that only move forward, backlog and queue depth computed from
//! the audit heads, delivery totals). Expanded by `store_conformance_tests!` with the rest.
#![expect(clippy::unwrap_used, reason = "test code: a failed unwrap is a failed test")]

use std::sync::Arc;
use std::time::Duration;

use agentgov_domain::ids::TenantId;
use agentgov_domain::model::{SiemBacklog, SiemSinkState};
use agentgov_domain::ports::Store;
use time::OffsetDateTime;
use uuid::Uuid;

use crate::fixtures::*;

/// Tenant names must differ in their first 8 characters (`seed` derives a key prefix).
async fn tenant(store: &Arc<dyn Store>, name: &str) -> TenantId {
    seed(store.as_ref(), name).await.tenant.id
}

/// Appends `n` records to the tenant's audit log, in one call.
async fn append(store: &Arc<dyn Store>, tenant: TenantId, n: usize) {
    let entries = (0..n).map(|i| new_entry(tenant, &format!("siem.test.{i}"), now())).collect();
    store.append_audit(entries).await.unwrap();
}

fn secs(n: u64) -> Duration {
    Duration::from_secs(n)
}

fn backlog(tenant: TenantId, cursor: i64, head: i64) -> SiemBacklog {
    SiemBacklog { tenant_id: tenant, cursor, head }
}

/// In tenant id order, as the port answers.
fn sorted(mut rows: Vec<SiemBacklog>) -> Vec<SiemBacklog> {
    rows.sort_by_key(|b| b.tenant_id);
    rows
}

/// Eight holders try the lease `name` at `now` at once; answers who won.
async fn race(store: &Arc<dyn Store>, name: &'static str, now: OffsetDateTime) -> Vec<Uuid> {
    let holders: Vec<Uuid> = (0..8).map(|_| Uuid::now_v7()).collect();
    let tasks = holders.iter().map(|&holder| {
        let store = store.clone();
        tokio::spawn(async move { store.try_lease(name, holder, now, now + secs(30)).await })
    });
    let results = futures::future::join_all(tasks).await;
    holders.into_iter().zip(results).filter(|(_, r)| *r.as_ref().unwrap().as_ref().unwrap()).map(|(h, _)| h).collect()
}

pub async fn lease_is_taken_when_free_renewed_by_its_holder_and_taken_over_when_expired(store: Arc<dyn Store>) {
    let (a, b) = (Uuid::now_v7(), Uuid::now_v7());
    let t0 = precise(0, 1);
    assert!(store.try_lease("siem", a, t0, t0 + secs(30)).await.unwrap(), "a free lease is taken");
    assert!(!store.try_lease("siem", b, t0 + secs(1), t0 + secs(31)).await.unwrap(), "held by another");
    // The holder renews (also before its lease runs out), extending it.
    assert!(store.try_lease("siem", a, t0 + secs(10), t0 + secs(40)).await.unwrap(), "renewed by its holder");
    assert!(!store.try_lease("siem", b, t0 + secs(39), t0 + secs(69)).await.unwrap(), "still valid after renewal");
    // Another lease is independent.
    assert!(store.try_lease("hitl", b, t0 + secs(39), t0 + secs(69)).await.unwrap(), "another name is free");
    // Expired once `lease_until <= now`, to the microsecond.
    let until = t0 + secs(40);
    assert!(!store.try_lease("siem", b, until - Duration::from_micros(1), until + secs(30)).await.unwrap());
    assert!(store.try_lease("siem", b, until, until + secs(30)).await.unwrap(), "taken over when expired");
    assert!(!store.try_lease("siem", a, until + secs(1), until + secs(31)).await.unwrap(), "the old holder lost it");
    assert!(store.try_lease("siem", b, until + secs(1), until + secs(31)).await.unwrap(), "the new holder renews");
}

pub async fn lease_release_frees_it_only_for_its_holder(store: Arc<dyn Store>) {
    let (a, b) = (Uuid::now_v7(), Uuid::now_v7());
    let t0 = precise(0, 2);
    // Releasing a lease nobody holds is a no-op.
    store.release_lease("siem", a).await.unwrap();
    assert!(store.try_lease("siem", a, t0, t0 + secs(30)).await.unwrap());
    // Not the holder: nothing happens.
    store.release_lease("siem", b).await.unwrap();
    assert!(!store.try_lease("siem", b, t0 + secs(1), t0 + secs(31)).await.unwrap(), "still a's");
    assert!(store.try_lease("siem", a, t0 + secs(1), t0 + secs(31)).await.unwrap(), "a still renews");
    // The holder: free at once, long before it would have expired.
    store.release_lease("siem", a).await.unwrap();
    assert!(store.try_lease("siem", b, t0 + secs(2), t0 + secs(32)).await.unwrap(), "free after release");
    assert!(!store.try_lease("siem", a, t0 + secs(3), t0 + secs(33)).await.unwrap(), "now b's");
}

pub async fn lease_racers_for_a_free_or_expired_lease_let_one_win(store: Arc<dyn Store>) {
    let t0 = precise(0, 3);
    let won = race(&store, "siem", t0).await;
    assert_eq!(won.len(), 1, "exactly one of the racers for a free lease wins: {won:?}");
    assert!(store.try_lease("siem", won[0], t0 + secs(1), t0 + secs(31)).await.unwrap(), "the winner holds it");

    // The winner's lease ends at t0 + 31s; racers for it once expired: again one wins.
    let later = t0 + secs(31);
    let next = race(&store, "siem", later).await;
    assert_eq!(next.len(), 1, "exactly one of the racers for an expired lease wins: {next:?}");
    assert!(!store.try_lease("siem", won[0], later + secs(1), later + secs(31)).await.unwrap(), "taken over");
}

pub async fn siem_register_is_once_per_sink(store: Arc<dyn Store>) {
    let t0 = precise(0, 4);
    assert!(store.register_siem_sink("splunk", false, t0).await.unwrap(), "new");
    assert!(!store.register_siem_sink("splunk", false, t0 + secs(1)).await.unwrap(), "already registered");
    assert!(!store.register_siem_sink("splunk", true, t0 + secs(2)).await.unwrap(), "already registered");
    assert!(store.register_siem_sink("datadog", true, t0).await.unwrap(), "another sink is new");
    assert_eq!(store.siem_sink_state("splunk").await.unwrap(), SiemSinkState::default());
}

pub async fn siem_from_the_beginning_forwards_every_tenants_whole_log(store: Arc<dyn Store>) {
    let (a, b) = (tenant(&store, "alpha").await, tenant(&store, "bravo").await);
    let _quiet = tenant(&store, "quiet").await;
    append(&store, a, 3).await;
    append(&store, b, 2).await;
    assert!(store.register_siem_sink("splunk", false, precise(0, 5)).await.unwrap());
    // A tenant without records has nothing to forward.
    assert_eq!(store.siem_backlog("splunk").await.unwrap(), sorted(vec![backlog(a, 0, 3), backlog(b, 0, 2)]));
    assert_eq!(store.siem_sink_state("splunk").await.unwrap().queue_depth, 5);

    // A tenant that appears later starts at 0.
    let c = tenant(&store, "charlie").await;
    append(&store, c, 4).await;
    append(&store, a, 1).await;
    assert_eq!(
        store.siem_backlog("splunk").await.unwrap(),
        sorted(vec![backlog(a, 0, 4), backlog(b, 0, 2), backlog(c, 0, 4)])
    );
    assert_eq!(store.siem_sink_state("splunk").await.unwrap().queue_depth, 10);
}

pub async fn siem_from_latest_starts_at_the_heads(store: Arc<dyn Store>) {
    let (a, b) = (tenant(&store, "alpha").await, tenant(&store, "bravo").await);
    append(&store, a, 3).await;
    append(&store, b, 2).await;
    assert!(store.register_siem_sink("splunk", true, precise(0, 6)).await.unwrap());
    assert_eq!(store.siem_backlog("splunk").await.unwrap(), []);
    assert_eq!(store.siem_sink_state("splunk").await.unwrap(), SiemSinkState::default());

    // Only what is appended after registration is forwarded...
    append(&store, a, 2).await;
    assert_eq!(store.siem_backlog("splunk").await.unwrap(), [backlog(a, 3, 5)]);
    assert_eq!(store.siem_sink_state("splunk").await.unwrap().queue_depth, 2);
    // ...but a tenant that appears later is forwarded from its beginning.
    let c = tenant(&store, "charlie").await;
    append(&store, c, 4).await;
    assert_eq!(store.siem_backlog("splunk").await.unwrap(), sorted(vec![backlog(a, 3, 5), backlog(c, 0, 4)]));
    assert_eq!(store.siem_sink_state("splunk").await.unwrap().queue_depth, 6);
    // Registering again leaves the cursors as they are.
    assert!(!store.register_siem_sink("splunk", true, precise(1, 6)).await.unwrap());
    assert_eq!(store.siem_backlog("splunk").await.unwrap(), sorted(vec![backlog(a, 3, 5), backlog(c, 0, 4)]));
}

pub async fn siem_cursors_only_move_forward_and_totals_add_up(store: Arc<dyn Store>) {
    let (a, b) = (tenant(&store, "alpha").await, tenant(&store, "bravo").await);
    append(&store, a, 5).await;
    append(&store, b, 2).await;
    assert!(store.register_siem_sink("splunk", false, precise(0, 7)).await.unwrap());

    let first = precise(10, 123_457);
    store.advance_siem_cursor("splunk", a, 2, 2, first).await.unwrap();
    assert_eq!(store.siem_backlog("splunk").await.unwrap(), sorted(vec![backlog(a, 2, 5), backlog(b, 0, 2)]));
    let state = store.siem_sink_state("splunk").await.unwrap();
    assert_eq!(
        state,
        SiemSinkState { forwarded: 2, last_success_at: Some(first), queue_depth: 5, ..SiemSinkState::default() }
    );

    // Backwards: the cursor stays; nothing forwarded: no success stamped.
    store.advance_siem_cursor("splunk", a, 1, 0, precise(11, 1)).await.unwrap();
    assert_eq!(store.siem_backlog("splunk").await.unwrap(), sorted(vec![backlog(a, 2, 5), backlog(b, 0, 2)]));
    assert_eq!(store.siem_sink_state("splunk").await.unwrap(), state);

    // Passed over by the filter: the cursor moves, the totals and last success do not.
    store.advance_siem_cursor("splunk", a, 4, 0, precise(12, 2)).await.unwrap();
    assert_eq!(store.siem_backlog("splunk").await.unwrap(), sorted(vec![backlog(a, 4, 5), backlog(b, 0, 2)]));
    assert_eq!(store.siem_sink_state("splunk").await.unwrap(), SiemSinkState { queue_depth: 3, ..state.clone() });

    // Caught up: the tenant leaves the backlog; forwarded adds up, the success is stamped.
    let last = precise(13, 999_999);
    store.advance_siem_cursor("splunk", a, 5, 1, last).await.unwrap();
    store.advance_siem_cursor("splunk", b, 2, 2, last).await.unwrap();
    assert_eq!(store.siem_backlog("splunk").await.unwrap(), []);
    assert_eq!(
        store.siem_sink_state("splunk").await.unwrap(),
        SiemSinkState { forwarded: 5, last_success_at: Some(last), queue_depth: 0, ..SiemSinkState::default() }
    );
    // New records show up after the cursor.
    append(&store, b, 3).await;
    assert_eq!(store.siem_backlog("splunk").await.unwrap(), [backlog(b, 2, 5)]);
    assert_eq!(store.siem_sink_state("splunk").await.unwrap().queue_depth, 3);
}

pub async fn siem_failures_add_up_and_keep_the_last_error(store: Arc<dyn Store>) {
    let a = tenant(&store, "alpha").await;
    append(&store, a, 4).await;
    assert!(store.register_siem_sink("splunk", false, precise(0, 8)).await.unwrap());
    let success = precise(5, 5);
    store.advance_siem_cursor("splunk", a, 1, 1, success).await.unwrap();

    let first = precise(6, 654_321);
    store.record_siem_failure("splunk", 3, "connection refused", first).await.unwrap();
    assert_eq!(
        store.siem_sink_state("splunk").await.unwrap(),
        SiemSinkState {
            forwarded: 1,
            failed: 3,
            last_success_at: Some(success),
            last_error: Some("connection refused".into()),
            last_error_at: Some(first),
            queue_depth: 3,
        }
    );
    let second = precise(7, 1);
    let error = "HTTP 503: «upstream» \"unavailable\"\nretry later";
    store.record_siem_failure("splunk", 2, error, second).await.unwrap();
    let state = store.siem_sink_state("splunk").await.unwrap();
    assert_eq!((state.failed, state.last_error.as_deref(), state.last_error_at), (5, Some(error), Some(second)));
    assert_eq!((state.forwarded, state.last_success_at), (1, Some(success)), "failures leave the successes alone");
    // A later success leaves the last error as it is.
    store.advance_siem_cursor("splunk", a, 4, 3, precise(8, 8)).await.unwrap();
    let after = store.siem_sink_state("splunk").await.unwrap();
    assert_eq!((after.failed, after.last_error.as_deref(), after.last_error_at), (5, Some(error), Some(second)));
    assert_eq!((after.forwarded, after.last_success_at, after.queue_depth), (4, Some(precise(8, 8)), 0));
}

pub async fn siem_state_of_an_unknown_sink_is_zeroes_and_the_whole_log(store: Arc<dyn Store>) {
    assert_eq!(store.siem_sink_state("never").await.unwrap(), SiemSinkState::default(), "an empty store");
    assert_eq!(store.siem_backlog("never").await.unwrap(), []);
    let (a, b) = (tenant(&store, "alpha").await, tenant(&store, "bravo").await);
    append(&store, a, 3).await;
    append(&store, b, 4).await;
    assert_eq!(
        store.siem_sink_state("never").await.unwrap(),
        SiemSinkState { queue_depth: 7, ..SiemSinkState::default() }
    );
    assert_eq!(store.siem_backlog("never").await.unwrap(), sorted(vec![backlog(a, 0, 3), backlog(b, 0, 4)]));
}

pub async fn siem_sinks_are_independent(store: Arc<dyn Store>) {
    let (a, b) = (tenant(&store, "alpha").await, tenant(&store, "bravo").await);
    append(&store, a, 3).await;
    append(&store, b, 2).await;
    assert!(store.register_siem_sink("splunk", false, precise(0, 9)).await.unwrap());
    assert!(store.register_siem_sink("datadog", true, precise(0, 9)).await.unwrap());
    append(&store, a, 1).await;

    store.advance_siem_cursor("splunk", a, 4, 4, precise(1, 1)).await.unwrap();
    store.record_siem_failure("splunk", 2, "timeout", precise(2, 2)).await.unwrap();
    assert_eq!(store.siem_backlog("splunk").await.unwrap(), [backlog(b, 0, 2)]);
    assert_eq!(store.siem_backlog("datadog").await.unwrap(), [backlog(a, 3, 4)]);
    assert_eq!(
        store.siem_sink_state("datadog").await.unwrap(),
        SiemSinkState { queue_depth: 1, ..SiemSinkState::default() },
        "another sink's deliveries and failures are its own"
    );

    store.advance_siem_cursor("datadog", a, 4, 1, precise(3, 3)).await.unwrap();
    assert_eq!(store.siem_backlog("datadog").await.unwrap(), []);
    let splunk = store.siem_sink_state("splunk").await.unwrap();
    assert_eq!((splunk.forwarded, splunk.failed, splunk.queue_depth), (4, 2, 2));
    assert_eq!(splunk.last_success_at, Some(precise(1, 1)));
}
