//! Conformance of the `PolicyRepo` port: tenant policies, their unique names, lists, the
//! enabled set checks evaluate, and updates guarded by the version the writer read.
//! Expanded by `store_conformance_tests!` with the rest.
#![expect(clippy::unwrap_used, reason = "test code: a failed unwrap is a failed test")]

use std::sync::Arc;

use agentgov_domain::DomainError;
use agentgov_domain::ids::{PolicyId, TenantId, UserId};
use agentgov_domain::model::{Policy, PolicyFilter, PolicyMode, Role};
use agentgov_domain::ports::Store;
use agentgov_domain::ports::store::POLICY_LIMIT_REACHED;
use uuid::Uuid;

use crate::fixtures::*;

/// Tenant names must differ in their first 8 characters (`seed` derives a key prefix).
async fn tenant(store: &Arc<dyn Store>, name: &str) -> (TenantId, UserId) {
    let s = seed(store.as_ref(), name).await;
    (s.tenant.id, s.admin.id)
}

async fn add(store: &Arc<dyn Store>, tenant: TenantId, name: &str, created_by: UserId) -> Policy {
    let policy = new_policy(tenant, name, Some(created_by));
    store.insert_policy(&policy, u64::MAX).await.unwrap();
    policy
}

/// `policy` as the next version, written at `at`.
fn next(policy: &Policy, at: time::OffsetDateTime) -> Policy {
    Policy { version: policy.version + 1, updated_at: at, ..policy.clone() }
}

fn is_conflict<T: std::fmt::Debug>(r: Result<T, DomainError>, message: &str) -> bool {
    matches!(r, Err(DomainError::Conflict(ref m)) if m == message)
}

fn is_not_found<T: std::fmt::Debug>(r: Result<T, DomainError>) -> bool {
    matches!(r, Err(DomainError::NotFound { .. }))
}

/// Every policy passing `filter`, walking pages of `limit`.
async fn listed(store: &Arc<dyn Store>, tenant: TenantId, filter: &PolicyFilter, limit: u32) -> Vec<Policy> {
    all_pages(limit, |p: &Policy| p.id.0, async |req| store.list_policies(tenant, filter, &req).await).await
}

fn names(policies: &[Policy]) -> Vec<&str> {
    policies.iter().map(|p| p.name.as_str()).collect()
}

pub async fn policy_round_trips_every_field(store: Arc<dyn Store>) {
    let (t, admin) = tenant(&store, "pol-rt").await;
    let mut policy = new_policy(t, "no-payments", Some(admin));
    policy.created_at = precise(1, 1);
    policy.updated_at = precise(2, 999_999);
    store.insert_policy(&policy, u64::MAX).await.unwrap();
    assert_eq!(store.get_policy(t, policy.id).await.unwrap(), Some(policy.clone()));

    let mut bare = new_policy(t, "bare", None);
    bare.description = None;
    bare.enabled = false;
    bare.mode = PolicyMode::Off;
    bare.rego = String::new();
    store.insert_policy(&bare, u64::MAX).await.unwrap();
    assert_eq!(store.get_policy(t, bare.id).await.unwrap(), Some(bare));
    let mut shadow = new_policy(t, "shadow", None);
    shadow.mode = PolicyMode::Shadow;
    store.insert_policy(&shadow, u64::MAX).await.unwrap();
    assert_eq!(store.get_policy(t, shadow.id).await.unwrap(), Some(shadow.clone()));
    let enforced = Policy { mode: PolicyMode::Enforce, ..next(&shadow, now()) };
    store.update_policy(&enforced).await.unwrap();
    assert_eq!(store.get_policy(t, shadow.id).await.unwrap(), Some(enforced));
    assert_eq!(store.get_policy(t, PolicyId(Uuid::now_v7())).await.unwrap(), None);
}

pub async fn policy_names_are_unique_per_tenant(store: Arc<dyn Store>) {
    let (a, admin_a) = tenant(&store, "pa-names").await;
    let (b, admin_b) = tenant(&store, "pb-names").await;
    let first = add(&store, a, "guard", admin_a).await;
    let again = store.insert_policy(&new_policy(a, "guard", Some(admin_a)), u64::MAX).await;
    assert!(is_conflict(again, "policy name already taken"));
    // The same name in another tenant is fine.
    let other = add(&store, b, "guard", admin_b).await;
    assert_eq!(store.get_policy(b, other.id).await.unwrap(), Some(other));
    // The same id again.
    let copy = Policy { name: "copy".into(), ..first.clone() };
    assert!(matches!(store.insert_policy(&copy, u64::MAX).await, Err(DomainError::Conflict(_))));
    // A tenant that does not exist.
    let orphan = new_policy(TenantId(Uuid::now_v7()), "orphan", None);
    assert!(is_conflict(store.insert_policy(&orphan, u64::MAX).await, "tenant does not exist"));
    // A creator who is no user.
    let ghost = new_policy(a, "ghost", Some(UserId(Uuid::now_v7())));
    assert!(is_conflict(store.insert_policy(&ghost, u64::MAX).await, "user does not exist"));
    assert_eq!(listed(&store, a, &PolicyFilter::default(), 10).await, vec![first]);
}

/// The per-tenant limit holds under concurrent inserts, and counts one tenant only.
pub async fn policy_limit_holds_under_concurrent_inserts(store: Arc<dyn Store>) {
    let (a, admin_a) = tenant(&store, "pa-limit").await;
    let (b, admin_b) = tenant(&store, "pb-limit").await;
    let inserts = (0..8).map(|n| {
        let store = store.clone();
        async move { store.insert_policy(&new_policy(a, &format!("p{n}"), Some(admin_a)), 3).await }
    });
    let results = futures::future::join_all(inserts).await;
    assert_eq!(results.iter().filter(|r| r.is_ok()).count(), 3, "{results:?}");
    for refused in results.into_iter().filter(Result::is_err) {
        assert!(is_conflict(refused, POLICY_LIMIT_REACHED));
    }
    // Another tenant's policies do not count against it.
    store.insert_policy(&new_policy(b, "p0", Some(admin_b)), 1).await.unwrap();
    assert!(is_conflict(store.insert_policy(&new_policy(b, "p1", Some(admin_b)), 1).await, POLICY_LIMIT_REACHED));
}

pub async fn policies_are_invisible_to_other_tenants(store: Arc<dyn Store>) {
    let (a, admin_a) = tenant(&store, "pa-iso").await;
    let (b, admin_b) = tenant(&store, "pb-iso").await;
    let policy = add(&store, a, "secret", admin_a).await;
    let theirs = add(&store, b, "theirs", admin_b).await;
    assert_eq!(store.get_policy(b, policy.id).await.unwrap(), None);
    assert_eq!(listed(&store, b, &PolicyFilter::default(), 10).await, vec![theirs.clone()]);
    assert_eq!(store.enabled_policies(b).await.unwrap(), vec![theirs]);
    let moved = Policy { tenant_id: b, ..next(&policy, now()) };
    assert!(is_not_found(store.update_policy(&moved).await));
    assert!(is_not_found(store.delete_policy(b, policy.id).await));
    assert_eq!(store.get_policy(a, policy.id).await.unwrap(), Some(policy), "untouched");
}

pub async fn policy_lists_page_newest_first_and_filter_by_enabled(store: Arc<dyn Store>) {
    let (t, admin) = tenant(&store, "pol-list").await;
    for i in 0..7 {
        let mut p = new_policy(t, &format!("policy-{i}"), Some(admin));
        p.enabled = i % 3 != 0;
        p.mode = PolicyMode::of(p.enabled, false);
        store.insert_policy(&p, u64::MAX).await.unwrap();
    }
    let (other, other_admin) = tenant(&store, "pol-other").await;
    add(&store, other, "elsewhere", other_admin).await;

    let all = listed(&store, t, &PolicyFilter::default(), 3).await;
    assert_eq!(names(&all), ["policy-6", "policy-5", "policy-4", "policy-3", "policy-2", "policy-1", "policy-0"]);
    let enabled = listed(&store, t, &PolicyFilter { enabled: Some(true) }, 2).await;
    assert_eq!(names(&enabled), ["policy-5", "policy-4", "policy-2", "policy-1"]);
    let disabled = listed(&store, t, &PolicyFilter { enabled: Some(false) }, 2).await;
    assert_eq!(names(&disabled), ["policy-6", "policy-3", "policy-0"]);
    let (empty, _) = tenant(&store, "pol-empty").await;
    assert!(listed(&store, empty, &PolicyFilter::default(), 2).await.is_empty());
}

pub async fn enabled_policies_are_oldest_first(store: Arc<dyn Store>) {
    let (t, admin) = tenant(&store, "pol-enab").await;
    assert_eq!(store.enabled_policies(t).await.unwrap(), vec![]);
    let mut made = Vec::new();
    for i in 0..5 {
        let mut p = new_policy(t, &format!("policy-{i}"), Some(admin));
        p.enabled = i != 2;
        p.mode = PolicyMode::of(p.enabled, false);
        store.insert_policy(&p, u64::MAX).await.unwrap();
        made.push(p);
    }
    let (other, other_admin) = tenant(&store, "pol-other").await;
    add(&store, other, "elsewhere", other_admin).await;

    let enabled = store.enabled_policies(t).await.unwrap();
    assert_eq!(names(&enabled), ["policy-0", "policy-1", "policy-3", "policy-4"]);
    assert_eq!(enabled[0], made[0], "whole records");

    // Disabling and enabling through updates moves policies out of and into the set.
    let off = Policy { enabled: false, mode: PolicyMode::Off, ..next(&made[1], now()) };
    store.update_policy(&off).await.unwrap();
    let on = Policy { enabled: true, mode: PolicyMode::Enforce, ..next(&made[2], now()) };
    store.update_policy(&on).await.unwrap();
    let enabled = store.enabled_policies(t).await.unwrap();
    assert_eq!(names(&enabled), ["policy-0", "policy-2", "policy-3", "policy-4"]);
    assert_eq!(enabled[1], on);
}

pub async fn policy_update_replaces_fields_from_the_version_read(store: Arc<dyn Store>) {
    let (t, admin) = tenant(&store, "pol-upd").await;
    let mut policy = new_policy(t, "before", Some(admin));
    policy.created_at = precise(1, 1);
    policy.updated_at = precise(1, 1);
    store.insert_policy(&policy, u64::MAX).await.unwrap();

    let changed = Policy {
        name: "after".into(),
        description: None,
        rego: "package agentgov.after\n".into(),
        enabled: false,
        mode: PolicyMode::Off,
        // An adapter keeps the stored creator and creation time whatever it is given.
        created_by: None,
        created_at: precise(3, 3),
        ..next(&policy, precise(2, 654_321))
    };
    store.update_policy(&changed).await.unwrap();
    let expected = Policy { created_by: Some(admin), created_at: policy.created_at, ..changed.clone() };
    assert_eq!(store.get_policy(t, policy.id).await.unwrap(), Some(expected.clone()));
    assert_eq!(expected.version, 2);

    // Written from version 1 again: someone else's update came first.
    let stale = Policy { description: Some("stale".into()), ..next(&policy, now()) };
    assert!(is_conflict(store.update_policy(&stale).await, "policy was changed concurrently"));
    // A version that skips one is no more current.
    let skipping = Policy { version: 4, ..expected.clone() };
    assert!(is_conflict(store.update_policy(&skipping).await, "policy was changed concurrently"));
    assert_eq!(store.get_policy(t, policy.id).await.unwrap(), Some(expected.clone()), "untouched");

    // The next version applies, keeping its own name.
    let third = Policy { enabled: true, mode: PolicyMode::Shadow, ..next(&expected, precise(4, 4)) };
    store.update_policy(&third).await.unwrap();
    assert_eq!(store.get_policy(t, policy.id).await.unwrap(), Some(third.clone()));

    let absent = next(&new_policy(t, "absent", Some(admin)), now());
    assert!(is_not_found(store.update_policy(&absent).await));
}

pub async fn policy_update_to_a_taken_name_conflicts(store: Arc<dyn Store>) {
    let (t, admin) = tenant(&store, "pol-name").await;
    let first = add(&store, t, "first", admin).await;
    let second = add(&store, t, "second", admin).await;
    let clash = Policy { name: "first".into(), ..next(&second, now()) };
    assert!(is_conflict(store.update_policy(&clash).await, "policy name already taken"));
    assert_eq!(store.get_policy(t, second.id).await.unwrap(), Some(second.clone()), "untouched");
    // Once the name is free it can be taken.
    store.update_policy(&Policy { name: "renamed".into(), ..next(&first, now()) }).await.unwrap();
    store.update_policy(&clash).await.unwrap();
    assert_eq!(store.get_policy(t, second.id).await.unwrap(), Some(clash));
}

pub async fn policy_concurrent_updates_from_one_version_let_one_win(store: Arc<dyn Store>) {
    let (t, admin) = tenant(&store, "pol-race").await;
    let policy = add(&store, t, "raced", admin).await;
    let writers: Vec<Policy> =
        (0..8).map(|i| Policy { description: Some(format!("writer {i}")), ..next(&policy, now()) }).collect();
    let results = futures::future::join_all(writers.iter().map(|p| store.update_policy(p))).await;
    let won: Vec<&Policy> = writers.iter().zip(&results).filter(|(_, r)| r.is_ok()).map(|(p, _)| p).collect();
    assert_eq!(won.len(), 1, "exactly one update from version 1 applies: {results:?}");
    for r in results.into_iter().filter(Result::is_err) {
        assert!(is_conflict(r, "policy was changed concurrently"));
    }
    assert_eq!(store.get_policy(t, policy.id).await.unwrap().as_ref(), Some(won[0]));
}

pub async fn policy_delete_removes_it(store: Arc<dyn Store>) {
    let (t, admin) = tenant(&store, "pol-del").await;
    let doomed = add(&store, t, "doomed", admin).await;
    let kept = add(&store, t, "kept", admin).await;
    store.delete_policy(t, doomed.id).await.unwrap();
    assert_eq!(store.get_policy(t, doomed.id).await.unwrap(), None);
    assert!(is_not_found(store.delete_policy(t, doomed.id).await));
    assert!(is_not_found(store.update_policy(&next(&doomed, now())).await));
    assert_eq!(listed(&store, t, &PolicyFilter::default(), 10).await, vec![kept.clone()]);
    assert_eq!(store.enabled_policies(t).await.unwrap(), vec![kept]);
    // The name is free again.
    add(&store, t, "doomed", admin).await;
}

pub async fn deleting_a_user_forgets_them_as_policy_creator(store: Arc<dyn Store>) {
    let (t, admin) = tenant(&store, "pol-user").await;
    let author = new_user(t, "author@pol-user.example", Role::Analyst);
    store.insert_user(&author).await.unwrap();
    let theirs = add(&store, t, "theirs", author.id).await;
    let admins = add(&store, t, "admins", admin).await;

    store.delete_user(t, author.id).await.unwrap();
    assert_eq!(store.get_policy(t, theirs.id).await.unwrap(), Some(Policy { created_by: None, ..theirs.clone() }));
    assert_eq!(store.get_policy(t, admins.id).await.unwrap(), Some(admins));
    // The policy lives on and can be updated.
    let updated = next(&Policy { created_by: None, ..theirs }, now());
    store.update_policy(&updated).await.unwrap();
    assert_eq!(store.get_policy(t, updated.id).await.unwrap(), Some(updated));
}
