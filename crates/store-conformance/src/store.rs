//! The repository conformance suite: one function per behaviour of the `Store` port, run by
//! every adapter through `store_conformance_tests!`. Each function gets a fresh, empty store.
#![expect(clippy::unwrap_used, reason = "test code: a failed unwrap is a failed test")]

use std::sync::Arc;
use std::time::Duration;

use agentgov_domain::DomainError;
use agentgov_domain::ids::{ApiKeyId, SessionId, TenantId, UserId};
use agentgov_domain::model::{
    AgentFilter, ApiKey, ApiKeyKind, Permission, RiskLevel, RiskLevels, Role, SecretPurpose, Session, Tenant,
    TenantSecret, TenantSettings, User, UserStatus,
};
use agentgov_domain::page::{Page, PageRequest};
use agentgov_domain::ports::Store;
use agentgov_domain::ports::store::{HourlyKey, ResourceCounts};
use uuid::Uuid;

/// Expands to one `#[tokio::test]` per behaviour of the suite. `$factory` is an
/// `async fn() -> Option<TestStore>` (`None` skips: the backend is not configured here); the
/// `TestStore` (and its guard) lives until the test ends.
#[macro_export]
macro_rules! store_conformance_tests {
    ($factory:path) => {
        $crate::__store_conformance_tests!(
            $factory;
            tenant_create_get_and_list_paginate,
            tenant_duplicate_name_conflicts,
            tenant_create_is_atomic,
            tenant_update_round_trips_and_relevels_only_its_agents,
            tenant_update_of_an_absent_tenant_or_to_a_taken_name_fails,
            other_tenants_records_are_absent,
            user_found_by_email,
            user_duplicate_email_conflicts_on_insert,
            user_duplicate_email_conflicts_on_update,
            user_update_round_trips_every_field,
            user_list_is_per_tenant_and_paginates,
            last_admin_cannot_be_demoted,
            last_admin_cannot_be_blocked,
            last_admin_cannot_be_deleted,
            admin_changes_allowed_when_another_active_admin_exists,
            blocked_admin_does_not_count_as_active_admin,
            user_delete_cascades_keys_and_sessions,
            user_update_or_delete_of_absent_user_is_not_found,
            sso_identity_links_find_their_user_per_tenant_and_issuer,
            sso_identity_links_are_unique_and_need_a_user_of_the_tenant,
            sso_identity_links_go_with_their_user,
            tenant_secrets_are_per_tenant_and_purpose_and_round_trip,
            tenant_secret_add_keeps_the_first_and_put_replaces,
            api_key_insert_find_and_get,
            api_key_duplicate_prefix_conflicts,
            api_key_list_filters_and_paginates,
            api_key_revoke,
            api_key_touch_records_use,
            api_key_permissions_round_trip_in_order,
            session_insert_with_and_without_key,
            session_insert_is_atomic,
            session_revoke_revokes_its_key,
            session_revoke_all_of_user_keeps_one,
            count_resources_is_per_tenant,
            hourly_counts_add_up_per_key_and_filter_by_metric_and_hour,
            ping_answers,
            audit_append_chains_each_tenant_in_order,
            audit_records_round_trip_every_field,
            audit_records_are_invisible_to_other_tenants,
            audit_append_is_all_or_nothing,
            audit_timestamps_never_decrease_along_the_chain,
            audit_scans_filter_by_every_field,
            audit_scans_are_keyset_pages_in_both_directions,
            audit_concurrent_appends_leave_no_gaps,
            jobs_round_trip_every_kind_and_field,
            jobs_are_limited_per_tenant_and_kind,
            job_claims_take_the_kinds_asked_for_oldest_first_once,
            job_claims_put_the_tenant_with_fewest_running_first,
            job_expired_leases_are_taken_over_and_start_over,
            job_worker_writes_need_the_lease_and_write_nothing_without_it,
            job_ends_record_the_outcome_and_release_the_job,
            job_chunks_round_trip_and_are_tenant_scoped,
            job_cancel_ends_the_tenants_active_job_of_a_kind,
            job_purge_deletes_expired_jobs_with_their_chunks,
            models_number_from_one_per_tenant_and_kind_and_the_newest_is_active,
            model_activation_switches_versions_and_turns_the_kind_off,
            model_training_without_the_lease_writes_nothing,
            models_keep_a_large_model_intact,
            agent_round_trips_every_field_with_its_embedding,
            agents_are_invisible_to_other_tenants,
            agent_names_are_unique_per_tenant,
            agent_update_replaces_every_mutable_field,
            agent_delete_removes_it_with_its_embedding,
            agent_lists_filter_and_page_newest_first,
            agent_heartbeats_apply_atomically,
            agent_index_version_moves_with_the_vectors,
            policy_round_trips_every_field,
            policy_names_are_unique_per_tenant,
            policy_limit_holds_under_concurrent_inserts,
            policies_are_invisible_to_other_tenants,
            policy_lists_page_newest_first_and_filter_by_enabled,
            enabled_policies_are_oldest_first,
            policy_update_replaces_fields_from_the_version_read,
            policy_update_to_a_taken_name_conflicts,
            policy_concurrent_updates_from_one_version_let_one_win,
            policy_delete_removes_it,
            deleting_a_user_forgets_them_as_policy_creator,
            guard_feedback_lists_oldest_first_per_tenant_up_to_the_limit,
            guard_stats_add_up_per_key_and_filter_by_hour,
            discovery_events_round_trip_every_field,
            discovery_shadow_scans_are_ascending_keyset_pages_of_one_tenant,
            discovery_event_batches_are_all_or_nothing,
            discovery_event_lookups_are_tenant_scoped,
            discovery_candidates_round_trip_every_field,
            discovery_candidate_lists_page_newest_first_and_filter_by_status,
            discovery_candidate_update_applies_only_from_the_expected_status,
            discovery_decided_candidates_are_the_tenants_confirmed_and_dismissed,
            discovery_complete_writes_the_candidates_and_completes_the_job,
            discovery_complete_without_the_lease_writes_nothing,
            discovery_jobs_leave_other_tenants_candidates_alone,
            hitl_requests_round_trip_every_field,
            hitl_grants_are_spent_once_and_never_store_the_token,
            hitl_insert_conflicts_on_a_taken_id_or_an_unknown_tenant,
            hitl_lists_page_oldest_first_and_filter_by_status_and_agent,
            hitl_decide_replaces_only_a_pending_request,
            hitl_expired_are_pending_past_their_expiry_soonest_first,
            hitl_escalations_are_due_pending_steps_taken_once,
            hitl_due_callbacks_are_scheduled_ones_due_by_now_soonest_first,
            hitl_callback_updates_apply_to_final_requests_only,
            hitl_due_callbacks_take_turns_across_tenants,
            hitl_open_callbacks_are_capped_per_tenant,
            anomaly_reports_round_trip_every_field,
            anomaly_insert_conflicts_on_a_taken_id_or_an_unknown_tenant,
            anomaly_lists_page_newest_first_and_filter_by_every_field,
            anomaly_update_replaces_the_body_and_columns,
            anomaly_counts_group_by_agent_type_severity_status_and_hour,
            lease_is_taken_when_free_renewed_by_its_holder_and_taken_over_when_expired,
            lease_release_frees_it_only_for_its_holder,
            lease_racers_for_a_free_or_expired_lease_let_one_win,
            siem_register_is_once_per_sink,
            siem_from_the_beginning_forwards_every_tenants_whole_log,
            siem_from_latest_starts_at_the_heads,
            siem_cursors_only_move_forward_and_totals_add_up,
            siem_failures_add_up_and_keep_the_last_error,
            siem_state_of_an_unknown_sink_is_zeroes_and_the_whole_log,
            siem_sinks_are_independent,
        );
    };
}

#[doc(hidden)]
#[macro_export]
macro_rules! __store_conformance_tests {
    ($factory:path; $($name:ident),+ $(,)?) => {
        $(
            #[::tokio::test]
            async fn $name() {
                // `None`: the backend is not configured here (see `service_url`); skip.
                let Some(test_store): Option<$crate::TestStore> = ($factory)().await else { return };
                // A behaviour that stops making progress fails with its name instead of
                // holding up the whole run.
                let run = $crate::store::$name(test_store.store.clone());
                if ::tokio::time::timeout($crate::TEST_DEADLINE, run).await.is_err() {
                    panic!("{} did not finish within {:?}", stringify!($name), $crate::TEST_DEADLINE);
                }
                drop(test_store);
            }
        )+
    };
}

use crate::fixtures::*;

pub use crate::agents::*;
pub use crate::anomaly::*;
pub use crate::audit::*;
pub use crate::discovery::*;
pub use crate::guard::*;
pub use crate::hitl::*;
pub use crate::jobs::*;
pub use crate::policies::*;
pub use crate::siem::*;

async fn add_user(store: &Arc<dyn Store>, tenant: TenantId, email: &str, role: Role) -> User {
    let user = new_user(tenant, email, role);
    store.insert_user(&user).await.unwrap();
    user
}

fn assert_conflict<T: std::fmt::Debug>(result: Result<T, DomainError>, context: &str) {
    match result {
        Err(DomainError::Conflict(_)) => {}
        other => panic!("{context}: expected Conflict, got {other:?}"),
    }
}

fn assert_not_found<T: std::fmt::Debug>(result: Result<T, DomainError>, context: &str) {
    match result {
        Err(DomainError::NotFound { .. }) => {}
        other => panic!("{context}: expected NotFound, got {other:?}"),
    }
}

/// Walks every page of a list with `limit`, returning the pages.
async fn all_pages<T, F, Fut>(limit: u32, mut fetch: F) -> Vec<Page<T>>
where
    F: FnMut(PageRequest) -> Fut,
    Fut: std::future::Future<Output = Result<Page<T>, DomainError>>,
{
    let mut pages = Vec::new();
    let mut cursor: Option<String> = None;
    loop {
        let req = PageRequest::parse(Some(i64::from(limit)), cursor.as_deref()).unwrap();
        let page = fetch(req).await.unwrap();
        cursor = page.next_cursor.clone();
        pages.push(page);
        if cursor.is_none() || pages.len() > 100 {
            return pages;
        }
    }
}

fn sorted_desc<T: Copy + Ord>(mut ids: Vec<T>) -> Vec<T> {
    ids.sort_unstable_by(|a, b| b.cmp(a));
    ids
}

// ---------------------------------------------------------------------------------------
// Tenants
// ---------------------------------------------------------------------------------------

pub async fn tenant_create_get_and_list_paginate(store: Arc<dyn Store>) {
    let mut ids = Vec::new();
    for i in 0..5 {
        let s = seed(store.as_ref(), &format!("tenant{i}")).await;
        assert_eq!(store.get_tenant(s.tenant.id).await.unwrap(), Some(s.tenant.clone()));
        ids.push(s.tenant.id);
    }
    assert_eq!(store.get_tenant(TenantId(Uuid::now_v7())).await.unwrap(), None);

    let pages = all_pages(2, |req| {
        let store = store.clone();
        async move { store.list_tenants(&req).await }
    })
    .await;
    let sizes: Vec<usize> = pages.iter().map(|p| p.items.len()).collect();
    assert_eq!(sizes, [2, 2, 1], "5 tenants in pages of 2");
    assert!(pages[0].next_cursor.is_some() && pages[1].next_cursor.is_some());
    assert_eq!(pages[2].next_cursor, None, "the last page has no cursor");
    let listed: Vec<TenantId> = pages.iter().flat_map(|p| p.items.iter().map(|t| t.id)).collect();
    assert_eq!(listed, sorted_desc(ids.clone()), "newest first, each once");

    // Stable: the same request gives the same page.
    let again = store.list_tenants(&PageRequest::first(2)).await.unwrap();
    assert_eq!(again, pages[0]);

    // A limit equal to the count: one full page and no cursor.
    let exact = store.list_tenants(&PageRequest::first(5)).await.unwrap();
    assert_eq!(exact.items.len(), 5);
    assert_eq!(exact.next_cursor, None);
}

pub async fn tenant_duplicate_name_conflicts(store: Arc<dyn Store>) {
    seed(store.as_ref(), "acme").await;
    let tenant = new_tenant("acme");
    let admin = new_user(tenant.id, "other@acme.example", Role::Admin);
    let key = new_key(&admin, "agk_other000");
    assert_conflict(
        store.create_tenant(&tenant, &admin, &key, &callback_secret(&tenant)).await,
        "duplicate tenant name",
    );
    assert_eq!(store.get_tenant(tenant.id).await.unwrap(), None);
    assert_eq!(store.find_user_by_email("other@acme.example").await.unwrap(), None);
    assert_eq!(store.find_api_key_by_prefix("agk_other000").await.unwrap(), None);
}

pub async fn tenant_create_is_atomic(store: Arc<dyn Store>) {
    let first = seed(store.as_ref(), "first").await;

    // The admin's email is taken: nothing of the new tenant may remain.
    let tenant = new_tenant("second");
    let admin = new_user(tenant.id, &first.admin.email, Role::Admin);
    let key = new_key(&admin, "agk_second00");
    assert_conflict(
        store.create_tenant(&tenant, &admin, &key, &callback_secret(&tenant)).await,
        "duplicate admin email",
    );
    assert_eq!(store.get_tenant(tenant.id).await.unwrap(), None);
    assert_eq!(store.find_api_key_by_prefix("agk_second00").await.unwrap(), None);
    assert_eq!(store.list_tenants(&PageRequest::default()).await.unwrap().items, vec![first.tenant.clone()]);

    // The key prefix is taken: the same.
    let admin = new_user(tenant.id, "admin@second.example", Role::Admin);
    let key = new_key(&admin, &first.key.prefix);
    assert_conflict(
        store.create_tenant(&tenant, &admin, &key, &callback_secret(&tenant)).await,
        "duplicate key prefix",
    );
    assert_eq!(store.get_tenant(tenant.id).await.unwrap(), None);
    assert_eq!(store.find_user_by_email("admin@second.example").await.unwrap(), None);

    // With both fixed it succeeds, so the failures left no partial rows behind.
    let key = new_key(&admin, "agk_second00");
    store.create_tenant(&tenant, &admin, &key, &callback_secret(&tenant)).await.unwrap();
    assert_eq!(store.get_user(tenant.id, admin.id).await.unwrap(), Some(admin));
    assert_eq!(store.get_api_key(tenant.id, key.id).await.unwrap(), Some(key));
}

pub async fn tenant_update_round_trips_and_relevels_only_its_agents(store: Arc<dyn Store>) {
    let s = seed(store.as_ref(), "levels").await;
    let other = seed(store.as_ref(), "others").await;
    // Scores on and around the bounds chosen below.
    let scores = [0.0, 0.2, 0.25, 0.5, 0.7, 0.9, 1.0];
    for (i, score) in scores.into_iter().enumerate() {
        for tenant in [s.tenant.id, other.tenant.id] {
            let mut agent = new_agent(tenant, &format!("agent{i}"));
            agent.risk_score = score;
            agent.risk = RiskLevel::of_score(score);
            store.insert_agent(&agent, &new_embedding(&agent.name)).await.unwrap();
        }
    }
    let levels = RiskLevels { medium: 0.25, high: 0.5, critical: 0.95 };
    let updated = Tenant {
        name: "levels renamed".into(),
        settings: TenantSettings {
            approval_threshold: Some(0.65),
            risk_levels: Some(levels),
            guard_threshold: Some(0.375),
            hitl_timeout_secs: Some(900),
            hitl_escalation: Some(vec![agentgov_domain::model::EscalationStep {
                after_secs: 120,
                role: agentgov_domain::model::Role::Admin,
            }]),
        },
        updated_at: precise(5, 123_456),
        ..s.tenant.clone()
    };
    let expected: Vec<RiskLevel> = scores.iter().map(|&score| levels.level(score)).collect();
    let before: Vec<RiskLevel> = scores.iter().map(|&score| RiskLevel::of_score(score)).collect();
    let moved = expected.iter().zip(&before).filter(|(a, b)| a != b).count() as u64;
    assert!(moved >= 3, "the bounds must move some agents: {before:?} -> {expected:?}");
    assert_eq!(store.update_tenant(&updated, &levels).await.unwrap(), moved);
    assert_eq!(store.get_tenant(s.tenant.id).await.unwrap(), Some(updated.clone()));

    let page = PageRequest::first(50);
    let mut agents = store.list_agents(s.tenant.id, &AgentFilter::default(), &page).await.unwrap().items;
    agents.sort_by(|a, b| a.risk_score.total_cmp(&b.risk_score));
    assert_eq!(agents.iter().map(|a| a.risk).collect::<Vec<_>>(), expected);
    let mut others = store.list_agents(other.tenant.id, &AgentFilter::default(), &page).await.unwrap().items;
    others.sort_by(|a, b| a.risk_score.total_cmp(&b.risk_score));
    assert_eq!(others.iter().map(|a| a.risk).collect::<Vec<_>>(), before, "another tenant's agents keep theirs");

    // The same again changes nothing; back to the defaults restores the levels.
    assert_eq!(store.update_tenant(&updated, &levels).await.unwrap(), 0);
    let reset = Tenant { settings: TenantSettings::default(), ..updated };
    assert_eq!(store.update_tenant(&reset, &RiskLevels::default()).await.unwrap(), moved);
    assert_eq!(store.get_tenant(s.tenant.id).await.unwrap(), Some(reset));
}

pub async fn tenant_update_of_an_absent_tenant_or_to_a_taken_name_fails(store: Arc<dyn Store>) {
    let a = seed(store.as_ref(), "alpha").await;
    let b = seed(store.as_ref(), "beta").await;
    let absent = new_tenant("absent");
    assert_not_found(store.update_tenant(&absent, &RiskLevels::default()).await, "absent tenant");
    let clash = Tenant { name: a.tenant.name.clone(), ..b.tenant.clone() };
    assert_conflict(store.update_tenant(&clash, &RiskLevels::default()).await, "taken tenant name");
    assert_eq!(store.get_tenant(b.tenant.id).await.unwrap(), Some(b.tenant));
}

pub async fn other_tenants_records_are_absent(store: Arc<dyn Store>) {
    let a = seed(store.as_ref(), "alpha").await;
    let b = seed(store.as_ref(), "beta").await;
    let session = new_session(&a.admin);
    store.insert_session(&session, None).await.unwrap();

    assert_eq!(store.get_user(b.tenant.id, a.admin.id).await.unwrap(), None);
    assert_eq!(store.get_api_key(b.tenant.id, a.key.id).await.unwrap(), None);
    assert_eq!(store.get_session(b.tenant.id, session.id).await.unwrap(), None);

    let own = store.get_user(a.tenant.id, a.admin.id).await.unwrap();
    assert_eq!(own.map(|u| u.id), Some(a.admin.id));
    assert_eq!(store.get_api_key(a.tenant.id, a.key.id).await.unwrap(), Some(a.key.clone()));
    assert_eq!(store.get_session(a.tenant.id, session.id).await.unwrap(), Some(session));

    let users = store.list_users(b.tenant.id, &PageRequest::default()).await.unwrap();
    assert_eq!(users.items, vec![b.admin.clone()]);
    let keys = store.list_api_keys(b.tenant.id, None, &PageRequest::default()).await.unwrap();
    assert_eq!(keys.items, vec![b.key.clone()]);
    let keys = store.list_api_keys(b.tenant.id, Some(a.admin.id), &PageRequest::default()).await.unwrap();
    assert!(keys.items.is_empty());
}

// ---------------------------------------------------------------------------------------
// Users
// ---------------------------------------------------------------------------------------

pub async fn user_found_by_email(store: Arc<dyn Store>) {
    let a = seed(store.as_ref(), "alpha").await;
    let b = seed(store.as_ref(), "beta").await;
    let user = add_user(&store, b.tenant.id, "someone@beta.example", Role::Viewer).await;
    assert_eq!(store.find_user_by_email("someone@beta.example").await.unwrap(), Some(user));
    assert_eq!(store.find_user_by_email(&a.admin.email).await.unwrap(), Some(a.admin));
    assert_eq!(store.find_user_by_email("nobody@beta.example").await.unwrap(), None);
}

pub async fn user_duplicate_email_conflicts_on_insert(store: Arc<dyn Store>) {
    let a = seed(store.as_ref(), "alpha").await;
    let b = seed(store.as_ref(), "beta").await;
    // Emails are unique across the platform, not per tenant.
    let dup = new_user(b.tenant.id, &a.admin.email, Role::Viewer);
    assert_conflict(store.insert_user(&dup).await, "email taken in another tenant");
    let dup = new_user(a.tenant.id, &a.admin.email, Role::Viewer);
    assert_conflict(store.insert_user(&dup).await, "email taken in the same tenant");
    assert_eq!(store.get_user(a.tenant.id, dup.id).await.unwrap(), None);
    assert_eq!(store.find_user_by_email(&a.admin.email).await.unwrap(), Some(a.admin));
}

pub async fn user_duplicate_email_conflicts_on_update(store: Arc<dyn Store>) {
    let a = seed(store.as_ref(), "alpha").await;
    let b = seed(store.as_ref(), "beta").await;
    let user = add_user(&store, a.tenant.id, "user@alpha.example", Role::Analyst).await;
    let changed = User { email: b.admin.email.clone(), ..user.clone() };
    assert_conflict(store.update_user(&changed).await, "email taken by another user");
    assert_eq!(store.get_user(a.tenant.id, user.id).await.unwrap(), Some(user.clone()));

    // Keeping one's own email is not a conflict.
    let renamed = User { name: Some("Renamed".into()), ..user.clone() };
    store.update_user(&renamed).await.unwrap();
    assert_eq!(store.get_user(a.tenant.id, user.id).await.unwrap(), Some(renamed));
}

pub async fn user_update_round_trips_every_field(store: Arc<dyn Store>) {
    let a = seed(store.as_ref(), "alpha").await;
    let user = add_user(&store, a.tenant.id, "user@alpha.example", Role::Viewer).await;

    let changed = User {
        email: "changed@alpha.example".into(),
        name: None,
        role: Role::SuperAdmin,
        status: UserStatus::Blocked,
        password_hash: None,
        updated_at: precise(10, 123_456),
        last_login_at: Some(precise(20, 1)),
        ..user.clone()
    };
    store.update_user(&changed).await.unwrap();
    let stored = store.get_user(a.tenant.id, user.id).await.unwrap().unwrap();
    assert_eq!(stored, changed);
    assert_eq!(stored.updated_at.microsecond(), 123_456, "microseconds are kept");
    assert_eq!(store.find_user_by_email("changed@alpha.example").await.unwrap(), Some(changed.clone()));
    assert_eq!(store.find_user_by_email("user@alpha.example").await.unwrap(), None);

    let back = User {
        email: "again@alpha.example".into(),
        name: Some("Ünïcode ☃ name".into()),
        role: Role::Analyst,
        status: UserStatus::Active,
        password_hash: Some("$argon2id$v=19$other".into()),
        updated_at: precise(30, 999_999),
        last_login_at: None,
        ..changed
    };
    store.update_user(&back).await.unwrap();
    assert_eq!(store.get_user(a.tenant.id, user.id).await.unwrap(), Some(back));
    // The admin was untouched.
    assert_eq!(store.get_user(a.tenant.id, a.admin.id).await.unwrap(), Some(a.admin));
}

pub async fn user_list_is_per_tenant_and_paginates(store: Arc<dyn Store>) {
    let a = seed(store.as_ref(), "alpha").await;
    let b = seed(store.as_ref(), "beta").await;
    let mut ids = vec![a.admin.id];
    for i in 0..4 {
        ids.push(add_user(&store, a.tenant.id, &format!("u{i}@alpha.example"), Role::Viewer).await.id);
    }
    add_user(&store, b.tenant.id, "u@beta.example", Role::Viewer).await;

    let pages = all_pages(2, |req| {
        let store = store.clone();
        let tenant = a.tenant.id;
        async move { store.list_users(tenant, &req).await }
    })
    .await;
    assert_eq!(pages.len(), 3);
    assert_eq!(pages[2].next_cursor, None);
    let listed: Vec<UserId> = pages.iter().flat_map(|p| p.items.iter().map(|u| u.id)).collect();
    assert_eq!(listed, sorted_desc(ids));
}

// ---------------------------------------------------------------------------------------
// The last active admin
// ---------------------------------------------------------------------------------------

pub async fn last_admin_cannot_be_demoted(store: Arc<dyn Store>) {
    let a = seed(store.as_ref(), "alpha").await;
    add_user(&store, a.tenant.id, "viewer@alpha.example", Role::Viewer).await;
    for role in [Role::Analyst, Role::Viewer] {
        let demoted = User { role, ..a.admin.clone() };
        assert_conflict(store.update_user(&demoted).await, "demoting the only active admin");
    }
    assert_eq!(store.get_user(a.tenant.id, a.admin.id).await.unwrap(), Some(a.admin.clone()));

    // Changing other fields of the only admin, or promoting to super_admin, is fine.
    let promoted = User { role: Role::SuperAdmin, name: Some("Boss".into()), ..a.admin.clone() };
    store.update_user(&promoted).await.unwrap();
    assert_eq!(store.get_user(a.tenant.id, a.admin.id).await.unwrap(), Some(promoted));
}

pub async fn last_admin_cannot_be_blocked(store: Arc<dyn Store>) {
    let a = seed(store.as_ref(), "alpha").await;
    let blocked = User { status: UserStatus::Blocked, ..a.admin.clone() };
    assert_conflict(store.update_user(&blocked).await, "blocking the only active admin");
    assert_eq!(store.get_user(a.tenant.id, a.admin.id).await.unwrap(), Some(a.admin));
}

pub async fn last_admin_cannot_be_deleted(store: Arc<dyn Store>) {
    let a = seed(store.as_ref(), "alpha").await;
    // An active admin of another tenant does not help.
    seed(store.as_ref(), "beta").await;
    assert_conflict(store.delete_user(a.tenant.id, a.admin.id).await, "deleting the only active admin");
    assert_eq!(store.get_user(a.tenant.id, a.admin.id).await.unwrap(), Some(a.admin.clone()));
    assert_eq!(store.get_api_key(a.tenant.id, a.key.id).await.unwrap(), Some(a.key));
}

pub async fn admin_changes_allowed_when_another_active_admin_exists(store: Arc<dyn Store>) {
    let a = seed(store.as_ref(), "alpha").await;
    let second = add_user(&store, a.tenant.id, "second@alpha.example", Role::SuperAdmin).await;

    let demoted = User { role: Role::Viewer, ..a.admin.clone() };
    store.update_user(&demoted).await.unwrap();
    assert_eq!(store.get_user(a.tenant.id, a.admin.id).await.unwrap(), Some(demoted.clone()));

    // Now `second` is the only active admin.
    let blocked = User { status: UserStatus::Blocked, ..second.clone() };
    assert_conflict(store.update_user(&blocked).await, "blocking the now only active admin");

    let promoted = User { role: Role::Admin, ..demoted };
    store.update_user(&promoted).await.unwrap();
    store.update_user(&blocked).await.unwrap();
    assert_eq!(store.get_user(a.tenant.id, second.id).await.unwrap(), Some(blocked));

    let third = add_user(&store, a.tenant.id, "third@alpha.example", Role::Admin).await;
    store.delete_user(a.tenant.id, promoted.id).await.unwrap();
    assert_eq!(store.get_user(a.tenant.id, promoted.id).await.unwrap(), None);
    assert_conflict(store.delete_user(a.tenant.id, third.id).await, "deleting the last active admin");
}

pub async fn blocked_admin_does_not_count_as_active_admin(store: Arc<dyn Store>) {
    let a = seed(store.as_ref(), "alpha").await;
    let mut blocked_admin = new_user(a.tenant.id, "blocked@alpha.example", Role::Admin);
    blocked_admin.status = UserStatus::Blocked;
    store.insert_user(&blocked_admin).await.unwrap();

    let demoted = User { role: Role::Analyst, ..a.admin.clone() };
    assert_conflict(store.update_user(&demoted).await, "a blocked admin is not an active admin");
    assert_conflict(store.delete_user(a.tenant.id, a.admin.id).await, "a blocked admin is not an active admin");

    // Changes to a user who is not an active admin never trip the rule.
    let renamed = User { name: None, role: Role::Viewer, ..blocked_admin.clone() };
    store.update_user(&renamed).await.unwrap();
    store.delete_user(a.tenant.id, blocked_admin.id).await.unwrap();
    assert_eq!(store.get_user(a.tenant.id, a.admin.id).await.unwrap(), Some(a.admin));
}

pub async fn user_delete_cascades_keys_and_sessions(store: Arc<dyn Store>) {
    let a = seed(store.as_ref(), "alpha").await;
    let user = add_user(&store, a.tenant.id, "user@alpha.example", Role::Analyst).await;
    let key = new_key(&user, "agk_user0000");
    store.insert_api_key(&key).await.unwrap();
    let session = new_session(&user);
    let skey = session_key(&session, &user, "agk_sess0000");
    store.insert_session(&session, Some(&skey)).await.unwrap();
    let admin_session = new_session(&a.admin);
    store.insert_session(&admin_session, None).await.unwrap();

    store.delete_user(a.tenant.id, user.id).await.unwrap();
    assert_eq!(store.get_user(a.tenant.id, user.id).await.unwrap(), None);
    assert_eq!(store.find_user_by_email("user@alpha.example").await.unwrap(), None);
    assert_eq!(store.get_api_key(a.tenant.id, key.id).await.unwrap(), None);
    assert_eq!(store.get_api_key(a.tenant.id, skey.id).await.unwrap(), None);
    assert_eq!(store.find_api_key_by_prefix("agk_user0000").await.unwrap(), None);
    assert_eq!(store.get_session(a.tenant.id, session.id).await.unwrap(), None);

    // Other users' records remain.
    assert_eq!(store.get_api_key(a.tenant.id, a.key.id).await.unwrap(), Some(a.key));
    assert_eq!(store.get_session(a.tenant.id, admin_session.id).await.unwrap(), Some(admin_session));
    // The email is free again.
    add_user(&store, a.tenant.id, "user@alpha.example", Role::Viewer).await;
}

pub async fn user_update_or_delete_of_absent_user_is_not_found(store: Arc<dyn Store>) {
    let a = seed(store.as_ref(), "alpha").await;
    let b = seed(store.as_ref(), "beta").await;
    let user = add_user(&store, a.tenant.id, "user@alpha.example", Role::Viewer).await;

    let ghost = new_user(a.tenant.id, "ghost@alpha.example", Role::Viewer);
    assert_not_found(store.update_user(&ghost).await, "update of an absent user");
    assert_not_found(store.delete_user(a.tenant.id, ghost.id).await, "delete of an absent user");
    assert_eq!(store.find_user_by_email("ghost@alpha.example").await.unwrap(), None);

    // Addressed through another tenant, the user is absent.
    let foreign = User { tenant_id: b.tenant.id, name: None, ..user.clone() };
    assert_not_found(store.update_user(&foreign).await, "update through another tenant");
    assert_not_found(store.delete_user(b.tenant.id, user.id).await, "delete through another tenant");
    assert_eq!(store.get_user(a.tenant.id, user.id).await.unwrap(), Some(user));
}

// ---------------------------------------------------------------------------------------
// SSO identities
// ---------------------------------------------------------------------------------------

const ISSUER: &str = "https://idp.example/";

pub async fn sso_identity_links_find_their_user_per_tenant_and_issuer(store: Arc<dyn Store>) {
    let a = seed(store.as_ref(), "alpha").await;
    let b = seed(store.as_ref(), "beta").await;
    let ann = add_user(&store, a.tenant.id, "ann@alpha.example", Role::Viewer).await;
    assert_eq!(store.find_user_by_sso_identity(a.tenant.id, ISSUER, "sub-1").await.unwrap(), None);
    assert_eq!(store.sso_subject_of(a.tenant.id, ann.id, ISSUER).await.unwrap(), None);

    store.link_sso_identity(a.tenant.id, ann.id, ISSUER, "sub-1", now()).await.unwrap();
    assert_eq!(store.find_user_by_sso_identity(a.tenant.id, ISSUER, "sub-1").await.unwrap(), Some(ann.clone()));
    assert_eq!(store.sso_subject_of(a.tenant.id, ann.id, ISSUER).await.unwrap().as_deref(), Some("sub-1"));
    // Exact matches only: another issuer (even by a slash), another subject, another tenant.
    assert_eq!(store.find_user_by_sso_identity(a.tenant.id, "https://idp.example", "sub-1").await.unwrap(), None);
    assert_eq!(store.find_user_by_sso_identity(a.tenant.id, ISSUER, "SUB-1").await.unwrap(), None);
    assert_eq!(store.find_user_by_sso_identity(b.tenant.id, ISSUER, "sub-1").await.unwrap(), None);
    assert_eq!(store.sso_subject_of(b.tenant.id, ann.id, ISSUER).await.unwrap(), None);
    assert_eq!(store.sso_subject_of(a.tenant.id, ann.id, "https://other.example").await.unwrap(), None);

    // The same identity in another tenant is another link; the same user at another issuer too.
    store.link_sso_identity(b.tenant.id, b.admin.id, ISSUER, "sub-1", now()).await.unwrap();
    assert_eq!(store.find_user_by_sso_identity(b.tenant.id, ISSUER, "sub-1").await.unwrap(), Some(b.admin.clone()));
    store.link_sso_identity(a.tenant.id, ann.id, "https://other.example", "sub-9", now()).await.unwrap();
    assert_eq!(store.find_user_by_sso_identity(a.tenant.id, ISSUER, "sub-1").await.unwrap(), Some(ann));
}

pub async fn sso_identity_links_are_unique_and_need_a_user_of_the_tenant(store: Arc<dyn Store>) {
    let a = seed(store.as_ref(), "alpha").await;
    let b = seed(store.as_ref(), "beta").await;
    let ann = add_user(&store, a.tenant.id, "ann@alpha.example", Role::Viewer).await;
    store.link_sso_identity(a.tenant.id, ann.id, ISSUER, "sub-1", now()).await.unwrap();
    assert_conflict(
        store.link_sso_identity(a.tenant.id, a.admin.id, ISSUER, "sub-1", now()).await,
        "an identity linked to another user",
    );
    assert_conflict(
        store.link_sso_identity(a.tenant.id, ann.id, ISSUER, "sub-2", now()).await,
        "a second subject of one issuer for a user",
    );
    assert_eq!(store.sso_subject_of(a.tenant.id, ann.id, ISSUER).await.unwrap().as_deref(), Some("sub-1"));
    assert_eq!(store.find_user_by_sso_identity(a.tenant.id, ISSUER, "sub-2").await.unwrap(), None);
    let ghost = new_user(a.tenant.id, "ghost@alpha.example", Role::Viewer);
    assert_not_found(store.link_sso_identity(a.tenant.id, ghost.id, ISSUER, "sub-3", now()).await, "absent user");
    assert_not_found(
        store.link_sso_identity(b.tenant.id, ann.id, ISSUER, "sub-3", now()).await,
        "a user of another tenant",
    );
    assert_eq!(store.find_user_by_sso_identity(b.tenant.id, ISSUER, "sub-3").await.unwrap(), None);
}

pub async fn sso_identity_links_go_with_their_user(store: Arc<dyn Store>) {
    let a = seed(store.as_ref(), "alpha").await;
    let ann = add_user(&store, a.tenant.id, "ann@alpha.example", Role::Viewer).await;
    store.link_sso_identity(a.tenant.id, ann.id, ISSUER, "sub-1", now()).await.unwrap();
    store.delete_user(a.tenant.id, ann.id).await.unwrap();
    assert_eq!(store.find_user_by_sso_identity(a.tenant.id, ISSUER, "sub-1").await.unwrap(), None);
    // The identity is free again: a new user may be linked to it.
    let again = add_user(&store, a.tenant.id, "ann@alpha.example", Role::Viewer).await;
    store.link_sso_identity(a.tenant.id, again.id, ISSUER, "sub-1", now()).await.unwrap();
    assert_eq!(store.find_user_by_sso_identity(a.tenant.id, ISSUER, "sub-1").await.unwrap(), Some(again));
}

// ---------------------------------------------------------------------------------------
// API keys
// ---------------------------------------------------------------------------------------

pub async fn api_key_insert_find_and_get(store: Arc<dyn Store>) {
    let a = seed(store.as_ref(), "alpha").await;
    let user = add_user(&store, a.tenant.id, "user@alpha.example", Role::Analyst).await;
    let key = ApiKey {
        expires_at: Some(precise(86_400, 654_321)),
        last_used_at: Some(precise(5, 7)),
        ..new_key(&user, "agk_find0000")
    };
    store.insert_api_key(&key).await.unwrap();

    assert_eq!(store.find_api_key_by_prefix("agk_find0000").await.unwrap(), Some(key.clone()));
    assert_eq!(store.find_api_key_by_prefix("agk_absent00").await.unwrap(), None);
    let got = store.get_api_key(a.tenant.id, key.id).await.unwrap().unwrap();
    assert_eq!(got, key);
    assert_eq!(got.key_hash, vec![0, 1, 2, 0xfe, 0xff, 42], "hash bytes are kept exactly");
    assert_eq!(store.get_api_key(a.tenant.id, ApiKeyId(Uuid::now_v7())).await.unwrap(), None);
    // The key created with the tenant is there too.
    assert_eq!(store.find_api_key_by_prefix(&a.key.prefix).await.unwrap(), Some(a.key));
}

pub async fn api_key_duplicate_prefix_conflicts(store: Arc<dyn Store>) {
    let a = seed(store.as_ref(), "alpha").await;
    let b = seed(store.as_ref(), "beta").await;
    let dup = new_key(&b.admin, &a.key.prefix);
    assert_conflict(store.insert_api_key(&dup).await, "prefix taken in another tenant");
    assert_eq!(store.get_api_key(b.tenant.id, dup.id).await.unwrap(), None);
    assert_eq!(store.find_api_key_by_prefix(&a.key.prefix).await.unwrap(), Some(a.key));
}

pub async fn api_key_list_filters_and_paginates(store: Arc<dyn Store>) {
    let a = seed(store.as_ref(), "alpha").await;
    let b = seed(store.as_ref(), "beta").await;
    let user = add_user(&store, a.tenant.id, "user@alpha.example", Role::Analyst).await;
    let mut user_keys = Vec::new();
    for i in 0..3 {
        let key = new_key(&user, &format!("agk_user000{i}"));
        store.insert_api_key(&key).await.unwrap();
        user_keys.push(key.id);
    }
    let revoked = new_key(&user, "agk_revoked0");
    store.insert_api_key(&revoked).await.unwrap();
    store.revoke_api_key(a.tenant.id, revoked.id, now()).await.unwrap();
    let admin_key = new_key(&a.admin, "agk_admin001");
    store.insert_api_key(&admin_key).await.unwrap();
    store.insert_api_key(&new_key(&b.admin, "agk_beta0001")).await.unwrap();

    let mut all = user_keys.clone();
    all.extend([a.key.id, admin_key.id]);
    let pages = all_pages(2, |req| {
        let store = store.clone();
        let tenant = a.tenant.id;
        async move { store.list_api_keys(tenant, None, &req).await }
    })
    .await;
    let sizes: Vec<usize> = pages.iter().map(|p| p.items.len()).collect();
    assert_eq!(sizes, [2, 2, 1]);
    let listed: Vec<ApiKeyId> = pages.iter().flat_map(|p| p.items.iter().map(|k| k.id)).collect();
    assert_eq!(listed, sorted_desc(all), "the tenant's live keys, newest first");

    let pages = all_pages(2, |req| {
        let store = store.clone();
        let (tenant, user) = (a.tenant.id, user.id);
        async move { store.list_api_keys(tenant, Some(user), &req).await }
    })
    .await;
    assert_eq!(pages.len(), 2);
    let listed: Vec<ApiKeyId> = pages.iter().flat_map(|p| p.items.iter().map(|k| k.id)).collect();
    assert_eq!(listed, sorted_desc(user_keys), "only the user's live keys");
}

pub async fn api_key_revoke(store: Arc<dyn Store>) {
    let a = seed(store.as_ref(), "alpha").await;
    let b = seed(store.as_ref(), "beta").await;
    let key = new_key(&a.admin, "agk_revoke00");
    store.insert_api_key(&key).await.unwrap();

    assert_not_found(store.revoke_api_key(b.tenant.id, key.id, now()).await, "revoke through another tenant");
    assert_eq!(store.get_api_key(a.tenant.id, key.id).await.unwrap().unwrap().revoked_at, None);
    assert_not_found(store.revoke_api_key(a.tenant.id, ApiKeyId(Uuid::now_v7()), now()).await, "revoke of absent");

    let at = precise(100, 250_001);
    store.revoke_api_key(a.tenant.id, key.id, at).await.unwrap();
    let stored = store.get_api_key(a.tenant.id, key.id).await.unwrap().unwrap();
    assert_eq!(stored, ApiKey { revoked_at: Some(at), ..key.clone() });
    assert_eq!(store.find_api_key_by_prefix("agk_revoke00").await.unwrap(), Some(stored));
    assert_not_found(store.revoke_api_key(a.tenant.id, key.id, now()).await, "revoking twice");

    let listed = store.list_api_keys(a.tenant.id, None, &PageRequest::default()).await.unwrap();
    assert_eq!(listed.items, vec![a.key], "revoked keys are not listed");
}

pub async fn api_key_touch_records_use(store: Arc<dyn Store>) {
    let a = seed(store.as_ref(), "alpha").await;
    let first = precise(200, 42);
    store.touch_api_key(a.key.id, first).await.unwrap();
    let stored = store.get_api_key(a.tenant.id, a.key.id).await.unwrap().unwrap();
    assert_eq!(stored, ApiKey { last_used_at: Some(first), ..a.key.clone() });

    let later = precise(300, 999_000);
    store.touch_api_key(a.key.id, later).await.unwrap();
    let stored = store.find_api_key_by_prefix(&a.key.prefix).await.unwrap().unwrap();
    assert_eq!(stored.last_used_at, Some(later));
}

pub async fn api_key_permissions_round_trip_in_order(store: Arc<dyn Store>) {
    let a = seed(store.as_ref(), "alpha").await;
    let mut reversed = Permission::ALL.to_vec();
    reversed.reverse();
    let cases = [vec![], vec![Permission::StatsRead, Permission::AgentsRead], reversed];
    for (i, permissions) in cases.into_iter().enumerate() {
        let key = ApiKey { permissions: permissions.clone(), ..new_key(&a.admin, &format!("agk_perm000{i}")) };
        store.insert_api_key(&key).await.unwrap();
        let stored = store.get_api_key(a.tenant.id, key.id).await.unwrap().unwrap();
        assert_eq!(stored.permissions, permissions);
    }
}

// ---------------------------------------------------------------------------------------
// Sessions
// ---------------------------------------------------------------------------------------

pub async fn session_insert_with_and_without_key(store: Arc<dyn Store>) {
    let a = seed(store.as_ref(), "alpha").await;
    let plain = Session { expires_at: precise(3600, 500_500), ..new_session(&a.admin) };
    store.insert_session(&plain, None).await.unwrap();
    assert_eq!(store.get_session(a.tenant.id, plain.id).await.unwrap(), Some(plain));

    let session = new_session(&a.admin);
    let key = session_key(&session, &a.admin, "agk_sess0001");
    store.insert_session(&session, Some(&key)).await.unwrap();
    assert_eq!(store.get_session(a.tenant.id, session.id).await.unwrap(), Some(session.clone()));
    let stored = store.find_api_key_by_prefix("agk_sess0001").await.unwrap().unwrap();
    assert_eq!(stored, key);
    assert_eq!(stored.kind, ApiKeyKind::Session);
    assert_eq!(stored.session_id, Some(session.id));
    assert_eq!(store.get_session(a.tenant.id, SessionId(Uuid::now_v7())).await.unwrap(), None);
    let user = store.get_user(a.tenant.id, a.admin.id).await.unwrap().unwrap();
    assert_eq!(user.last_login_at, Some(session.created_at), "a session records the login");
}

pub async fn session_insert_is_atomic(store: Arc<dyn Store>) {
    let a = seed(store.as_ref(), "alpha").await;
    let session = new_session(&a.admin);
    let key = session_key(&session, &a.admin, &a.key.prefix);
    assert_conflict(store.insert_session(&session, Some(&key)).await, "session key with a taken prefix");
    assert_eq!(store.get_session(a.tenant.id, session.id).await.unwrap(), None);
    assert_eq!(store.get_api_key(a.tenant.id, key.id).await.unwrap(), None);
    let user = store.get_user(a.tenant.id, a.admin.id).await.unwrap().unwrap();
    assert_eq!(user.last_login_at, a.admin.last_login_at, "a failed session insert records no login");
}

pub async fn session_revoke_revokes_its_key(store: Arc<dyn Store>) {
    let a = seed(store.as_ref(), "alpha").await;
    let b = seed(store.as_ref(), "beta").await;
    let session = new_session(&a.admin);
    let key = session_key(&session, &a.admin, "agk_sess0002");
    store.insert_session(&session, Some(&key)).await.unwrap();
    let other = new_session(&a.admin);
    let other_key = session_key(&other, &a.admin, "agk_sess0003");
    store.insert_session(&other, Some(&other_key)).await.unwrap();

    assert_not_found(store.revoke_session(b.tenant.id, session.id, now()).await, "revoke through another tenant");
    assert_not_found(store.revoke_session(a.tenant.id, SessionId(Uuid::now_v7()), now()).await, "revoke of absent");

    let at = precise(400, 31);
    store.revoke_session(a.tenant.id, session.id, at).await.unwrap();
    let stored = store.get_session(a.tenant.id, session.id).await.unwrap().unwrap();
    assert_eq!(stored, Session { revoked_at: Some(at), ..session.clone() });
    let stored_key = store.get_api_key(a.tenant.id, key.id).await.unwrap().unwrap();
    assert_eq!(stored_key.revoked_at, Some(at), "the session's key is revoked with it");
    assert_not_found(store.revoke_session(a.tenant.id, session.id, now()).await, "revoking twice");

    // The other session and its key are untouched.
    assert_eq!(store.get_session(a.tenant.id, other.id).await.unwrap(), Some(other));
    assert_eq!(store.get_api_key(a.tenant.id, other_key.id).await.unwrap(), Some(other_key.clone()));
    let listed = store.list_api_keys(a.tenant.id, None, &PageRequest::default()).await.unwrap();
    assert_eq!(listed.items.iter().map(|k| k.id).collect::<Vec<_>>(), sorted_desc(vec![a.key.id, other_key.id]));
}

pub async fn session_revoke_all_of_user_keeps_one(store: Arc<dyn Store>) {
    let a = seed(store.as_ref(), "alpha").await;
    let user = add_user(&store, a.tenant.id, "user@alpha.example", Role::Analyst).await;
    let mut sessions = Vec::new();
    for i in 0..4 {
        let session = new_session(&user);
        let key = session_key(&session, &user, &format!("agk_usess00{i}"));
        store.insert_session(&session, Some(&key)).await.unwrap();
        sessions.push((session, key));
    }
    let already = &sessions[3];
    store.revoke_session(a.tenant.id, already.0.id, precise(1, 1)).await.unwrap();
    let admin_session = new_session(&a.admin);
    store.insert_session(&admin_session, None).await.unwrap();
    let standard = new_key(&user, "agk_ustd0000");
    store.insert_api_key(&standard).await.unwrap();
    // An expired session is not live: it is left as it is.
    let expired = Session { expires_at: now() - Duration::from_secs(1), ..new_session(&user) };
    store.insert_session(&expired, None).await.unwrap();

    let keep = &sessions[0];
    let at = now();
    let mut revoked = store.revoke_user_sessions(a.tenant.id, user.id, Some(keep.0.id), at).await.unwrap();
    revoked.sort_unstable();
    let mut expected = vec![sessions[1].0.id, sessions[2].0.id];
    expected.sort_unstable();
    assert_eq!(revoked, expected, "live sessions other than `keep`");
    for (session, key) in &sessions[1..3] {
        assert_eq!(store.get_session(a.tenant.id, session.id).await.unwrap().unwrap().revoked_at, Some(at));
        assert_eq!(store.get_api_key(a.tenant.id, key.id).await.unwrap().unwrap().revoked_at, Some(at));
    }
    assert_eq!(store.get_session(a.tenant.id, keep.0.id).await.unwrap(), Some(keep.0.clone()));
    assert_eq!(store.get_api_key(a.tenant.id, keep.1.id).await.unwrap(), Some(keep.1.clone()));
    let earlier = store.get_session(a.tenant.id, already.0.id).await.unwrap().unwrap();
    assert_eq!(earlier.revoked_at, Some(precise(1, 1)), "an already revoked session keeps its time");
    assert_eq!(store.get_session(a.tenant.id, admin_session.id).await.unwrap(), Some(admin_session));
    assert_eq!(store.get_session(a.tenant.id, expired.id).await.unwrap(), Some(expired));
    assert_eq!(store.get_api_key(a.tenant.id, standard.id).await.unwrap(), Some(standard), "standard keys stay");

    // Without `keep`, the remaining one goes too; another tenant revokes nothing.
    let b = seed(store.as_ref(), "beta").await;
    assert!(store.revoke_user_sessions(b.tenant.id, user.id, None, at).await.unwrap().is_empty());
    let revoked = store.revoke_user_sessions(a.tenant.id, user.id, None, at).await.unwrap();
    assert_eq!(revoked, vec![keep.0.id]);
    assert!(store.revoke_user_sessions(a.tenant.id, user.id, None, at).await.unwrap().is_empty());
}

// ---------------------------------------------------------------------------------------
// Store
// ---------------------------------------------------------------------------------------

pub async fn count_resources_is_per_tenant(store: Arc<dyn Store>) {
    let a = seed(store.as_ref(), "alpha").await;
    let b = seed(store.as_ref(), "beta").await;
    let empty = TenantId(Uuid::now_v7());
    assert_eq!(store.count_resources(empty).await.unwrap(), ResourceCounts::default());

    add_user(&store, a.tenant.id, "v@alpha.example", Role::Viewer).await;
    let mut blocked = new_user(a.tenant.id, "b@alpha.example", Role::Analyst);
    blocked.status = UserStatus::Blocked;
    store.insert_user(&blocked).await.unwrap();
    let revoked = new_key(&a.admin, "agk_count001");
    store.insert_api_key(&revoked).await.unwrap();
    store.revoke_api_key(a.tenant.id, revoked.id, now()).await.unwrap();
    let session = new_session(&a.admin);
    store.insert_session(&session, Some(&session_key(&session, &a.admin, "agk_count002"))).await.unwrap();

    let counts = store.count_resources(a.tenant.id).await.unwrap();
    assert_eq!(counts, ResourceCounts { users: 3, active_users: 2, blocked_users: 1, api_keys: 2 });
    let counts = store.count_resources(b.tenant.id).await.unwrap();
    assert_eq!(counts, ResourceCounts { users: 1, active_users: 1, blocked_users: 0, api_keys: 1 });
}

pub async fn hourly_counts_add_up_per_key_and_filter_by_metric_and_hour(store: Arc<dyn Store>) {
    let (a, b) = (seed(store.as_ref(), "a-hourly").await.tenant.id, seed(store.as_ref(), "b-hourly").await.tenant.id);
    let key = |tenant, metric: &str, hour, label: &str| HourlyKey {
        tenant_id: tenant,
        metric: metric.into(),
        hour,
        label: label.into(),
    };
    let sorted = |mut rows: Vec<(HourlyKey, i64)>| {
        rows.sort();
        rows.into_iter().map(|(k, n)| (k.hour, k.label, n)).collect::<Vec<_>>()
    };
    assert!(store.hourly_counts(a, "policy.decision", 0).await.unwrap().is_empty());
    store.add_hourly_counts(&[]).await.unwrap();
    let h = 493_000;
    store
        .add_hourly_counts(&[
            (key(a, "policy.decision", h, "allow"), 3),
            (key(a, "policy.decision", h, "deny"), 1),
            (key(a, "policy.decision", h + 1, "allow"), 2),
            // One key twice in one call adds both.
            (key(a, "policy.decision", h + 1, "deny"), 1),
            (key(a, "policy.decision", h + 1, "deny"), 10),
            (key(a, "other.metric", h, "allow"), 5),
            (key(b, "policy.decision", h, "allow"), 7),
        ])
        .await
        .unwrap();
    store.add_hourly_counts(&[(key(a, "policy.decision", h, "allow"), 4)]).await.unwrap();
    let all =
        vec![(h, "allow".to_owned(), 7), (h, "deny".into(), 1), (h + 1, "allow".into(), 2), (h + 1, "deny".into(), 11)];
    assert_eq!(sorted(store.hourly_counts(a, "policy.decision", 0).await.unwrap()), all);
    assert_eq!(sorted(store.hourly_counts(a, "policy.decision", h + 1).await.unwrap()), all[2..]);
    assert_eq!(sorted(store.hourly_counts(a, "other.metric", 0).await.unwrap()), [(h, "allow".to_owned(), 5)]);
    assert_eq!(sorted(store.hourly_counts(b, "policy.decision", 0).await.unwrap()), [(h, "allow".to_owned(), 7)]);
    let rows = store.hourly_counts(b, "policy.decision", 0).await.unwrap();
    assert!(rows.iter().all(|(k, _)| k.tenant_id == b && k.metric == "policy.decision"));

    // All or nothing: a key of a tenant that does not exist refuses the whole call.
    let orphan = key(TenantId(Uuid::now_v7()), "policy.decision", h, "allow");
    let refused = store.add_hourly_counts(&[(key(a, "policy.decision", h, "allow"), 100), (orphan, 1)]).await;
    assert!(matches!(refused, Err(DomainError::Conflict(_))), "{refused:?}");
    assert_eq!(sorted(store.hourly_counts(a, "policy.decision", 0).await.unwrap()), all);
}

pub async fn ping_answers(store: Arc<dyn Store>) {
    store.ping().await.unwrap();
    assert!(!store.backend().is_empty());
}

pub async fn tenant_secrets_are_per_tenant_and_purpose_and_round_trip(store: Arc<dyn Store>) {
    let (a, b) = (seed(store.as_ref(), "acme").await, seed(store.as_ref(), "bravo").await);
    // Made with the tenant, in the same transaction.
    let made = store.get_tenant_secret(a.tenant.id, SecretPurpose::Callback).await.unwrap();
    assert_eq!(made, Some(callback_secret(&a.tenant)));
    assert_eq!(store.get_tenant_secret(a.tenant.id, SecretPurpose::Webhook).await.unwrap(), None);

    let webhook = TenantSecret {
        tenant_id: a.tenant.id,
        purpose: SecretPurpose::Webhook,
        secret: "whsec_webhook-of-acme".into(),
        previous: Some("whsec_older".into()),
        previous_until: Some(precise(60, 123_456)),
        require_timestamp: true,
        created_at: precise(0, 654_321),
    };
    store.put_tenant_secret(&webhook).await.unwrap();
    assert_eq!(store.get_tenant_secret(a.tenant.id, SecretPurpose::Webhook).await.unwrap(), Some(webhook.clone()));
    // Another tenant's secrets are its own.
    assert_eq!(store.get_tenant_secret(b.tenant.id, SecretPurpose::Webhook).await.unwrap(), None);
    assert_eq!(
        store.get_tenant_secret(b.tenant.id, SecretPurpose::Callback).await.unwrap(),
        Some(callback_secret(&b.tenant))
    );

    assert!(store.delete_tenant_secret(a.tenant.id, SecretPurpose::Webhook).await.unwrap());
    assert!(!store.delete_tenant_secret(a.tenant.id, SecretPurpose::Webhook).await.unwrap());
    assert_eq!(store.get_tenant_secret(a.tenant.id, SecretPurpose::Webhook).await.unwrap(), None);
    assert!(store.get_tenant_secret(a.tenant.id, SecretPurpose::Callback).await.unwrap().is_some());

    let unknown = TenantSecret { tenant_id: TenantId(Uuid::now_v7()), ..webhook };
    assert!(matches!(store.put_tenant_secret(&unknown).await, Err(DomainError::NotFound { .. })));
    assert!(matches!(store.add_tenant_secret(&unknown).await, Err(DomainError::NotFound { .. })));
}

pub async fn tenant_secret_add_keeps_the_first_and_put_replaces(store: Arc<dyn Store>) {
    let a = seed(store.as_ref(), "acme").await;
    let first = callback_secret(&a.tenant);
    let other = TenantSecret { secret: "whsec_another".into(), ..first.clone() };
    // `add` keeps the secret in force.
    assert_eq!(store.add_tenant_secret(&other).await.unwrap(), first);
    store.delete_tenant_secret(a.tenant.id, SecretPurpose::Callback).await.unwrap();
    assert_eq!(store.add_tenant_secret(&other).await.unwrap(), other);
    // Concurrent adds all answer the one that won.
    let racers: Vec<_> = (0..8)
        .map(|i| {
            let store = store.clone();
            let s =
                TenantSecret { purpose: SecretPurpose::Webhook, secret: format!("whsec_racer{i}"), ..first.clone() };
            tokio::spawn(async move { store.add_tenant_secret(&s).await.unwrap() })
        })
        .collect();
    let mut won = Vec::new();
    for r in racers {
        won.push(r.await.unwrap());
    }
    assert!(won.windows(2).all(|w| w[0] == w[1]), "{won:?}");
    // `put` replaces, rotation fields and all.
    let rotated = TenantSecret {
        secret: "whsec_rotated".into(),
        previous: Some(other.secret.clone()),
        previous_until: Some(precise(3600, 0)),
        ..other.clone()
    };
    store.put_tenant_secret(&rotated).await.unwrap();
    assert_eq!(store.get_tenant_secret(a.tenant.id, SecretPurpose::Callback).await.unwrap(), Some(rotated));
}
