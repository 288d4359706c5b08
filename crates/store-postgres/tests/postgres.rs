//! Postgres-specific behaviour: connecting, migrations, isolation by schema, and the
//! last-admin rule under concurrency. The port's behaviour in general is pinned by the
//! conformance suite (`conformance.rs`).
#![expect(clippy::unwrap_used, reason = "test code: a failed unwrap is a failed test")]

mod common;

use std::sync::Arc;
use std::time::Duration;

use agentgov_domain::DomainError;
use agentgov_domain::ids::{AgentId, SessionId};
use agentgov_domain::model::{
    AgentFilter, AnomalyFilter, ApiKey, ApiKeyKind, CandidateStatus, ClusterOutcome, DiscoveryCandidate,
    EventDisposition, GuardLabel, GuardStatsKey, GuardTask, Heartbeat, JobKind, JobView, ModelKind, Role, Session,
    User, UserStatus,
};
use agentgov_domain::page::PageRequest;
use agentgov_domain::ports::store::JOB_LIMIT_REACHED;
use agentgov_domain::ports::{
    AgentRepo, AnomalyRepo, ApiKeyRepo, AuditRepo, DiscoveryRepo, HitlRepo, JobQueue, SessionRepo, Store, TenantRepo,
    UserRepo,
};
use agentgov_store_conformance::fixtures::{
    callback_secret, guard_examples, json_object, new_agent, new_anomaly, new_candidate, new_cluster_job,
    new_discovery_event, new_embedding, new_entry, new_guard_model, new_guard_task, new_hitl_request, new_key,
    new_tenant, new_user, now, seed_pair,
};
use agentgov_store_postgres::PgStore;
use diesel::sql_types::{Nullable, Text};
use diesel::{QueryableByName, sql_query};
use diesel_async::{AsyncConnection, AsyncPgConnection, RunQueryDsl};
use uuid::Uuid;

#[derive(QueryableByName)]
struct Regclass {
    #[diesel(sql_type = Nullable<Text>)]
    name: Option<String>,
}

async fn table_exists(url: &str, table: &str) -> bool {
    let mut conn = AsyncPgConnection::establish(url).await.unwrap();
    let row: Regclass =
        sql_query(format!("SELECT to_regclass('{table}')::text AS name")).get_result(&mut conn).await.unwrap();
    row.name.is_some()
}

#[tokio::test]
async fn connects_pings_and_names_its_backend() {
    let Some((store, _guard)) = common::migrated_store(2).await else { return };
    store.ping().await.unwrap();
    assert_eq!(store.backend(), "postgres");
    assert!(format!("{store:?}").starts_with("PgStore"));
}

#[tokio::test]
async fn unreachable_database_is_unavailable() {
    if agentgov_store_conformance::service_url(common::URL_VAR).is_none() {
        return;
    }
    // Port 1 is never a Postgres server.
    let err = PgStore::connect("postgres://postgres@127.0.0.1:1/none?connect_timeout=2", 1).await.unwrap_err();
    assert!(matches!(err, DomainError::Unavailable(ref s) if s == "database"), "{err:?}");
}

/// Checkouts send no query (the pool recycles `Fast`), so a connection Postgres ended must
/// be noticed otherwise: the client sees it closed and the pool replaces it, and a request
/// that meets one answers `Unavailable` (503), never an internal error; the next succeeds.
#[tokio::test]
async fn connections_postgres_ends_are_replaced_by_the_pool() {
    let Some((store, guard)) = common::migrated_store(2).await else { return };
    let (tenant, _) = seed_pair(&store, "acme").await;
    let append = |n: usize| {
        let entries = (0..n).map(|_| new_entry(tenant.id, "test.event", now())).collect();
        store.append_audit(entries)
    };
    store.ping().await.unwrap();
    append(1).await.unwrap();

    let base_url = agentgov_store_conformance::service_url(common::URL_VAR).unwrap();
    let mut admin = AsyncPgConnection::establish(&base_url).await.unwrap();
    for round in 0..3 {
        let ended: Vec<Terminated> = sql_query(format!(
            "SELECT pg_terminate_backend(pid) AS ended FROM pg_stat_activity \
             WHERE application_name = '{}' AND pid <> pg_backend_pid()",
            guard.schema
        ))
        .load(&mut admin)
        .await
        .unwrap();
        assert!(!ended.is_empty() && ended.iter().all(|t| t.ended), "round {round}: nothing to end");
        // Let the clients read the termination notice.
        tokio::time::sleep(Duration::from_millis(100)).await;
        for attempt in 0..2 {
            let (pinged, appended) = (store.ping().await, append(2).await);
            for result in [pinged.err(), appended.err()].into_iter().flatten() {
                assert!(matches!(result, DomainError::Unavailable(_)), "round {round}: {result:?}");
                assert_eq!(attempt, 0, "round {round}: still failing after a failure");
            }
        }
        store.ping().await.unwrap();
        append(1).await.unwrap();
    }
}

#[derive(QueryableByName)]
struct Terminated {
    #[diesel(sql_type = diesel::sql_types::Bool)]
    ended: bool,
}

/// A query in flight when Postgres ends its session (a fast shutdown, a crash,
/// `pg_terminate_backend`) fails with the server's FATAL error, not a closed connection: it
/// must still answer `Unavailable` (503), never an internal error, and the pool recovers.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_query_whose_session_the_server_ends_is_unavailable() {
    let Some((url, guard)) = common::fresh_schema().await else { return };
    let store = PgStore::connect(&url, 1).await.unwrap();
    store.run_migrations().await.unwrap();
    let (t, admin) = seed_pair(&store, "alpha").await;

    // Keep the read waiting on a lock, so that it is in flight when its session is ended.
    let mut holder = AsyncPgConnection::establish(&url).await.unwrap();
    sql_query("BEGIN").execute(&mut holder).await.unwrap();
    sql_query("LOCK TABLE users IN ACCESS EXCLUSIVE MODE").execute(&mut holder).await.unwrap();
    let waiting = tokio::spawn({
        let store = store.clone();
        async move { store.get_user(t.id, admin.id).await }
    });
    let base_url = agentgov_store_conformance::service_url(common::URL_VAR).unwrap();
    let mut terminator = AsyncPgConnection::establish(&base_url).await.unwrap();
    let mut ended = Vec::<Terminated>::new();
    for _ in 0..100 {
        ended = sql_query(format!(
            "SELECT pg_terminate_backend(pid) AS ended FROM pg_stat_activity \
             WHERE application_name = '{}' AND wait_event_type = 'Lock'",
            guard.schema
        ))
        .load(&mut terminator)
        .await
        .unwrap();
        if !ended.is_empty() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert!(ended.iter().any(|t| t.ended), "the read never waited on the lock");
    let err = waiting.await.unwrap().unwrap_err();
    assert!(matches!(err, DomainError::Unavailable(ref s) if s == "database"), "{err:?}");

    sql_query("ROLLBACK").execute(&mut holder).await.unwrap();
    // The pool replaces the ended connection (at worst one more request meets it first).
    let mut found = store.get_user(t.id, admin.id).await;
    if let Err(DomainError::Unavailable(_)) = found {
        tokio::time::sleep(Duration::from_millis(100)).await;
        found = store.get_user(t.id, admin.id).await;
    }
    assert_eq!(found.unwrap(), Some(admin));
}

#[tokio::test]
async fn search_path_options_put_tables_in_the_test_schema() {
    let Some((url, guard)) = common::fresh_schema().await else { return };
    let store = PgStore::connect(&url, 1).await.unwrap();
    store.run_migrations().await.unwrap();
    assert!(table_exists(&url, &format!("{}.users", guard.schema)).await);
    assert!(table_exists(&url, &format!("{}.__diesel_schema_migrations", guard.schema)).await);
    assert!(!table_exists(&url, "public.users").await, "nothing leaks into public");
}

#[tokio::test]
async fn migrations_go_up_down_and_up_again() {
    let Some((url, _guard)) = common::fresh_schema().await else { return };
    let store = PgStore::connect(&url, 2).await.unwrap();
    store.run_migrations().await.unwrap();
    store.run_migrations().await.unwrap(); // idempotent
    seed_pair(&store, "first").await;

    store.revert_all_migrations().await.unwrap();
    for table in [
        "tenants",
        "users",
        "sessions",
        "api_keys",
        "audit_records",
        "audit_heads",
        "export_jobs",
        "export_chunks",
        "agents",
        "agent_embeddings",
        "agent_index_versions",
        "policies",
        "guard_models",
        "guard_feedback",
        "guard_tasks",
        "guard_stats",
        "discovery_events",
        "discovery_candidates",
        "discovery_jobs",
        "hitl_requests",
        "anomaly_reports",
        "anomaly_models",
        "anomaly_tasks",
        "jobs",
        "job_chunks",
        "model_versions",
        "leases",
        "siem_sinks",
        "siem_cursors",
    ] {
        assert!(!table_exists(&url, table).await, "{table} dropped by down.sql");
    }
    let mut conn = AsyncPgConnection::establish(&url).await.unwrap();
    let function: Regclass =
        sql_query("SELECT to_regproc('audit_records_append_only')::text AS name").get_result(&mut conn).await.unwrap();
    assert_eq!(function.name, None, "the trigger function is dropped by down.sql");

    store.run_migrations().await.unwrap();
    let (t, _) = seed_pair(&store, "again").await;
    assert_eq!(store.get_tenant(t.id).await.unwrap(), Some(t.clone()));
    let entry = agentgov_store_conformance::fixtures::new_entry(t.id, "after.migrations", now());
    assert_eq!(store.append_audit(vec![entry]).await.unwrap()[0].seq, 1);
    // The job queue came back too.
    let task = new_guard_task(t.id, 0).to_job_with(&guard_examples());
    store.enqueue_job(&task, 1).await.unwrap();
    let err = store.enqueue_job(&new_guard_task(t.id, 0).to_job(), 1).await.unwrap_err();
    assert!(matches!(err, DomainError::Conflict(ref m) if m == JOB_LIMIT_REACHED), "{err:?}");
    assert_eq!(GuardTask::examples_of(&store.get_job(task.id).await.unwrap().unwrap()).unwrap(), guard_examples());
    // And the discovery tables.
    let event = new_discovery_event(t.id, EventDisposition::Shadow, 1);
    store.insert_discovery_events(std::slice::from_ref(&event)).await.unwrap();
    assert_eq!(store.scan_shadow_events(t.id, None, 10).await.unwrap(), [event]);
    // And the approval requests.
    let request = new_hitl_request(t.id, AgentId(Uuid::now_v7()), now(), 1);
    store.insert_hitl(&request, u64::MAX).await.unwrap();
    assert_eq!(store.expired_hitl(now(), 10).await.unwrap(), [request]);
    // And the anomaly reports.
    let report = new_anomaly(t.id, AgentId(Uuid::now_v7()), now(), 1);
    store.insert_anomaly(&report).await.unwrap();
    assert_eq!(store.get_anomaly(t.id, report.id).await.unwrap(), Some(report.clone()));
    assert_eq!(store.anomaly_counts(t.id, &AnomalyFilter::default()).await.unwrap().len(), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_migrations_take_turns() {
    let Some((url, _guard)) = common::fresh_schema().await else { return };
    let a = PgStore::connect(&url, 1).await.unwrap();
    let b = PgStore::connect(&url, 1).await.unwrap();
    let (ra, rb) = tokio::join!(a.run_migrations(), b.run_migrations());
    ra.unwrap();
    rb.unwrap();
    seed_pair(&a, "after").await;
}

#[tokio::test]
async fn conflicts_have_clear_messages() {
    let Some((store, _guard)) = common::migrated_store(2).await else { return };
    let (t, admin) = seed_pair(&store, "acme").await;

    let again = new_tenant("acme");
    let other_admin = new_user(again.id, "x@acme.example", Role::Admin);
    let err = store
        .create_tenant(&again, &other_admin, &new_key(&other_admin, "agk_x"), &callback_secret(&again))
        .await
        .unwrap_err();
    assert!(matches!(err, DomainError::Conflict(ref m) if m == "tenant name already taken"), "{err:?}");

    let dup = new_user(t.id, &admin.email, Role::Viewer);
    let err = store.insert_user(&dup).await.unwrap_err();
    assert!(matches!(err, DomainError::Conflict(ref m) if m == "email already registered"), "{err:?}");

    let err = store.insert_api_key(&new_key(&admin, "agk_acme")).await.unwrap_err();
    assert!(matches!(err, DomainError::Conflict(_)), "{err:?}");
}

#[tokio::test]
async fn round_trips_and_tenant_isolation() {
    let Some((store, _guard)) = common::migrated_store(2).await else { return };
    let (a, admin) = seed_pair(&store, "alpha").await;
    let (b, _) = seed_pair(&store, "beta").await;

    let mut viewer = new_user(a.id, "viewer@alpha.example", Role::Viewer);
    viewer.name = Some("Vi".into());
    viewer.password_hash = Some("$argon2id$x".into());
    viewer.last_login_at = Some(now());
    store.insert_user(&viewer).await.unwrap();
    assert_eq!(store.get_user(a.id, viewer.id).await.unwrap(), Some(viewer.clone()));
    assert_eq!(store.get_user(b.id, viewer.id).await.unwrap(), None);
    assert_eq!(store.find_user_by_email("viewer@alpha.example").await.unwrap(), Some(viewer.clone()));

    let session = Session {
        id: SessionId(Uuid::now_v7()),
        tenant_id: a.id,
        user_id: viewer.id,
        created_at: now(),
        expires_at: now() + Duration::from_secs(60),
        revoked_at: None,
    };
    let skey = ApiKey { kind: ApiKeyKind::Session, session_id: Some(session.id), ..new_key(&viewer, "agk_sess") };
    store.insert_session(&session, Some(&skey)).await.unwrap();
    assert_eq!(store.get_session(b.id, session.id).await.unwrap(), None);
    assert_eq!(store.find_api_key_by_prefix("agk_sess").await.unwrap(), Some(skey.clone()));

    let at = now();
    store.revoke_session(a.id, session.id, at).await.unwrap();
    assert_eq!(store.get_api_key(a.id, skey.id).await.unwrap().unwrap().revoked_at, Some(at));
    let keys = store.list_api_keys(a.id, None, &PageRequest::default()).await.unwrap();
    assert_eq!(keys.items.len(), 1, "only the admin's tenant key is live");

    let counts = store.count_resources(a.id).await.unwrap();
    assert_eq!((counts.users, counts.active_users, counts.api_keys), (2, 2, 1));

    // Deleting the user takes the session and its key along.
    store.delete_user(a.id, viewer.id).await.unwrap();
    assert_eq!(store.get_session(a.id, session.id).await.unwrap(), None);
    assert_eq!(store.get_api_key(a.id, skey.id).await.unwrap(), None);
    assert!(store.get_user(a.id, admin.id).await.unwrap().is_some());
}

#[tokio::test]
async fn corrupt_rows_are_internal_errors() {
    let Some((url, _guard)) = common::fresh_schema().await else { return };
    let store = PgStore::connect(&url, 1).await.unwrap();
    store.run_migrations().await.unwrap();
    let (t, admin) = seed_pair(&store, "alpha").await;
    let mut conn = AsyncPgConnection::establish(&url).await.unwrap();
    sql_query("UPDATE api_keys SET permissions = '[\"root:everything\"]'").execute(&mut conn).await.unwrap();
    let err = store.list_api_keys(t.id, Some(admin.id), &PageRequest::default()).await.unwrap_err();
    assert!(matches!(err, DomainError::Internal(_)), "{err:?}");
}

#[tokio::test]
async fn corrupt_agent_rows_are_internal_errors() {
    let Some((url, _guard)) = common::fresh_schema().await else { return };
    let store = PgStore::connect(&url, 1).await.unwrap();
    store.run_migrations().await.unwrap();
    let (t, _) = seed_pair(&store, "alpha").await;
    let agent = new_agent(t.id, "bot");
    store.insert_agent(&agent, &new_embedding("bot")).await.unwrap();
    let mut conn = AsyncPgConnection::establish(&url).await.unwrap();

    sql_query("UPDATE agents SET metadata = '[1, 2]'").execute(&mut conn).await.unwrap();
    let err = store.get_agent(t.id, agent.id).await.unwrap_err();
    assert!(matches!(err, DomainError::Internal(_)), "{err:?}");
    let err = store.list_agents(t.id, &AgentFilter::default(), &PageRequest::default()).await.unwrap_err();
    assert!(matches!(err, DomainError::Internal(_)), "{err:?}");
    sql_query("UPDATE agents SET metadata = '{}', permissions = '{\"a\":'").execute(&mut conn).await.unwrap();
    let beat = Heartbeat { at: now(), status: None, metadata: None, embedding: None };
    let err = store.heartbeat_agent(t.id, agent.id, &beat).await.unwrap_err();
    assert!(matches!(err, DomainError::Internal(_)), "{err:?}");

    // Seven bytes are no whole number of f32.
    sql_query("UPDATE agent_embeddings SET vector = '\\x00010203040506'").execute(&mut conn).await.unwrap();
    let err = store.get_agent_embedding(t.id, agent.id).await.unwrap_err();
    assert!(matches!(err, DomainError::Internal(_)), "{err:?}");
    let err = store.agent_vectors(t.id).await.unwrap_err();
    assert!(matches!(err, DomainError::Internal(_)), "{err:?}");
}

/// JSON objects are stored as the text serde_json writes, not normalised as JSONB would
/// (which reorders keys and spells 1e300 out in 301 digits), and read back unchanged.
#[tokio::test]
async fn agent_json_is_kept_verbatim() {
    let Some((url, _guard)) = common::fresh_schema().await else { return };
    let store = PgStore::connect(&url, 1).await.unwrap();
    store.run_migrations().await.unwrap();
    let (t, _) = seed_pair(&store, "alpha").await;
    let mut agent = new_agent(t.id, "bot");
    agent.metadata = json_object(serde_json::json!({"z": 1.0, "a": [1e300, -0.0, "é"], "m": {"k": null}}));
    store.insert_agent(&agent, &new_embedding("bot")).await.unwrap();
    assert_eq!(store.get_agent(t.id, agent.id).await.unwrap(), Some(agent.clone()));
    let mut conn = AsyncPgConnection::establish(&url).await.unwrap();
    let row: Regclass = sql_query("SELECT metadata AS name FROM agents").get_result(&mut conn).await.unwrap();
    assert_eq!(row.name, Some(serde_json::to_string(&agent.metadata).unwrap()));
}

/// Heartbeats that replace vectors, updates and deletes of one tenant's agents, all at
/// once: none deadlocks, and every change of a vector moves the index version.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_agent_writes_each_move_the_index_version() {
    let Some((store, _guard)) = common::migrated_store(8).await else { return };
    let store: Arc<dyn Store> = Arc::new(store);
    let (t, _) = seed_pair(store.as_ref(), "alpha").await;
    let mut agents = Vec::new();
    for i in 0..4 {
        let agent = new_agent(t.id, &format!("bot-{i}"));
        store.insert_agent(&agent, &new_embedding(&agent.name)).await.unwrap();
        agents.push(agent);
    }
    let before = store.agent_index_version(t.id).await.unwrap();
    let mut tasks = Vec::new();
    for round in 0..10 {
        for agent in &agents {
            let (store, agent) = (store.clone(), agent.clone());
            tasks.push(tokio::spawn(async move {
                if round % 2 == 0 {
                    let beat = Heartbeat {
                        at: now(),
                        status: None,
                        metadata: Some(json_object(serde_json::json!({"round": round}))),
                        embedding: Some(new_embedding(&format!("{} {round}", agent.name))),
                    };
                    assert!(store.heartbeat_agent(t.id, agent.id, &beat).await.unwrap().is_some());
                } else {
                    store.update_agent(&agent, &new_embedding(&format!("round {round}"))).await.unwrap();
                }
            }));
        }
    }
    for task in tasks {
        task.await.unwrap();
    }
    assert_eq!(store.agent_index_version(t.id).await.unwrap(), before + 40);
    store.delete_agent(t.id, agents[0].id).await.unwrap();
    assert_eq!(store.agent_index_version(t.id).await.unwrap(), before + 41);
    assert_eq!(store.agent_vectors(t.id).await.unwrap().len(), 3);
}

/// Two admins demote each other at the same time: the tenant-row lock serialises the
/// checks, so exactly one demotion wins and one admin remains. Repeated to give a race a
/// real chance to show.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_demotions_leave_one_admin() {
    let Some((store, _guard)) = common::migrated_store(4).await else { return };
    let store: Arc<dyn Store> = Arc::new(store);
    for round in 0..20 {
        let (t, first) = seed_pair(store.as_ref(), &format!("race{round}")).await;
        let second = new_user(t.id, &format!("second@race{round}.example"), Role::Admin);
        store.insert_user(&second).await.unwrap();

        let demote = |u: &User| {
            let (store, demoted) = (store.clone(), User { role: Role::Viewer, ..u.clone() });
            tokio::spawn(async move { store.update_user(&demoted).await })
        };
        let (ra, rb) = (demote(&first), demote(&second));
        let results = [ra.await.unwrap(), rb.await.unwrap()];
        let ok = results.iter().filter(|r| r.is_ok()).count();
        let conflicts = results.iter().filter(|r| matches!(r, Err(DomainError::Conflict(_)))).count();
        assert_eq!((ok, conflicts), (1, 1), "round {round}: {results:?}");

        let users = store.list_users(t.id, &PageRequest::default()).await.unwrap();
        assert_eq!(users.items.iter().filter(|u| u.is_active_admin()).count(), 1, "round {round}");
    }
}

/// The same race between a delete and a demotion.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_delete_and_demotion_leave_one_admin() {
    let Some((store, _guard)) = common::migrated_store(4).await else { return };
    let store: Arc<dyn Store> = Arc::new(store);
    for round in 0..10 {
        let (t, first) = seed_pair(store.as_ref(), &format!("race{round}")).await;
        let second = new_user(t.id, &format!("second@race{round}.example"), Role::SuperAdmin);
        store.insert_user(&second).await.unwrap();

        let s1 = store.clone();
        let demoted = User { status: UserStatus::Blocked, ..first.clone() };
        let a = tokio::spawn(async move { s1.update_user(&demoted).await });
        let s2 = store.clone();
        let b = tokio::spawn(async move { s2.delete_user(t.id, second.id).await });
        let results = [a.await.unwrap(), b.await.unwrap()];
        assert_eq!(results.iter().filter(|r| r.is_ok()).count(), 1, "round {round}: {results:?}");

        let users = store.list_users(t.id, &PageRequest::default()).await.unwrap();
        assert_eq!(users.items.iter().filter(|u| u.is_active_admin()).count(), 1, "round {round}");
    }
}

/// Activations of every version and a completion of a new one, all at once: the tenant-row
/// lock serialises them, so none fails on the unique indexes, versions stay numbered without
/// gaps, and at most one is active. Repeated to give a race a real chance to show.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_guard_activations_and_completions_leave_one_active() {
    let Some((store, _guard)) = common::migrated_store(8).await else { return };
    let store: Arc<dyn Store> = Arc::new(store);
    let (t, _) = seed_pair(store.as_ref(), "guarded").await;
    let lease = Duration::from_secs(60);
    for round in 0..10i32 {
        let task = new_guard_task(t.id, 0);
        store.enqueue_job(&task.to_job(), 1).await.unwrap();
        let (at, token) = (now(), Uuid::now_v7());
        store.claim_job(&[JobKind::GuardTraining], at, token, at + lease).await.unwrap().unwrap();
        let mut tasks = Vec::new();
        for version in 0..=round {
            let store = store.clone();
            tasks.push(tokio::spawn(
                async move { store.activate_model(t.id, ModelKind::Guard, version).await.map(drop) },
            ));
        }
        let completer = store.clone();
        let model = new_guard_model(t.id, Some(task.id), 1).to_stored().unwrap();
        tasks.push(tokio::spawn(async move {
            let version = completer.complete_training(task.id.0, token, at, &model).await?;
            assert_eq!(version, round + 1);
            Ok(())
        }));
        for task in tasks {
            task.await.unwrap().unwrap();
        }
        let models = store.list_models(t.id, ModelKind::Guard).await.unwrap();
        let numbers: Vec<i32> = models.iter().map(|m| m.version).collect();
        assert_eq!(numbers, (1..=round + 1).rev().collect::<Vec<_>>(), "round {round}");
        let active: Vec<i32> = models.iter().filter(|m| m.active).map(|m| m.version).collect();
        assert!(active.len() <= 1, "round {round}: {active:?}");
        assert_eq!(
            store.active_model(t.id, ModelKind::Guard).await.unwrap(),
            active.iter().copied().next().unwrap_or(0)
        );
    }
}

/// Workers claiming at once each get a different task (`SKIP LOCKED`), every task once.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_guard_claims_take_each_task_once() {
    let Some((store, _guard)) = common::migrated_store(8).await else { return };
    let store: Arc<dyn Store> = Arc::new(store);
    let mut queued = Vec::new();
    for i in 0..8 {
        let (t, _) = seed_pair(store.as_ref(), &format!("{i}-claims")).await;
        let task = new_guard_task(t.id, 0).to_job();
        store.enqueue_job(&task, 1).await.unwrap();
        queued.push(task.id);
    }
    let at = now();
    let claims: Vec<_> = (0..16)
        .map(|_| {
            let store = store.clone();
            let kinds = [JobKind::GuardTraining];
            tokio::spawn(async move { store.claim_job(&kinds, at, Uuid::now_v7(), at + Duration::from_secs(60)).await })
        })
        .collect();
    let mut claimed = Vec::new();
    for claim in claims {
        if let Some(task) = claim.await.unwrap().unwrap() {
            assert_eq!(task.attempts, 1, "claimed once");
            claimed.push(task.id);
        }
    }
    claimed.sort();
    assert_eq!(claimed, queued);
}

/// Requests to train racing for one tenant: the tenant row lock lets one through.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_guard_task_inserts_let_one_through() {
    let Some((store, _guard)) = common::migrated_store(8).await else { return };
    let store: Arc<dyn Store> = Arc::new(store);
    let (t, _) = seed_pair(store.as_ref(), "eager").await;
    let inserts: Vec<_> = (0..8)
        .map(|_| {
            let store = store.clone();
            tokio::spawn(async move { store.enqueue_job(&new_guard_task(t.id, 0).to_job(), 1).await })
        })
        .collect();
    let mut results = Vec::new();
    for insert in inserts {
        results.push(insert.await.unwrap());
    }
    assert_eq!(results.iter().filter(|r| r.is_ok()).count(), 1, "{results:?}");
    let limited = |r: &Result<(), DomainError>| matches!(r, Err(DomainError::Conflict(m)) if m == JOB_LIMIT_REACHED);
    assert!(results.iter().all(|r| r.is_ok() || limited(r)), "{results:?}");
}

/// Replicas adding counts at once, their keys in opposite orders: no deadlock, no lost add.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_guard_stats_adds_lose_nothing() {
    let Some((store, _guard)) = common::migrated_store(8).await else { return };
    let store: Arc<dyn Store> = Arc::new(store);
    let (t, _) = seed_pair(store.as_ref(), "counted").await;
    let keys: Vec<GuardStatsKey> = (0..16)
        .map(|b| GuardStatsKey { tenant_id: t.id, hour: 7, verdict: GuardLabel::ALL[b % 4], bucket: b as i16 })
        .collect();
    let adds: Vec<_> = (0..16)
        .map(|i| {
            let store = store.clone();
            let mut counts: Vec<_> = keys.iter().map(|k| (*k, 1)).collect();
            if i % 2 == 1 {
                counts.reverse();
            }
            tokio::spawn(async move { store.add_guard_stats(&counts).await })
        })
        .collect();
    for add in adds {
        add.await.unwrap().unwrap();
    }
    let stats = store.guard_stats(t.id, 0).await.unwrap();
    assert_eq!(stats.len(), 16);
    assert!(stats.iter().all(|(_, n)| *n == 16), "{stats:?}");
}

/// Two stores (as two replicas: separate pools) migrated on one fresh schema.
async fn two_replicas() -> Option<(PgStore, PgStore, common::SchemaGuard)> {
    let (url, guard) = common::fresh_schema().await?;
    let a = PgStore::connect(&url, 2).await.unwrap();
    a.run_migrations().await.unwrap();
    let b = PgStore::connect(&url, 2).await.unwrap();
    Some((a, b, guard))
}

/// Two replicas' workers claim the one queued clustering job at once: `SKIP LOCKED` and
/// the claim's transaction give it to exactly one. Repeated to give a race a real chance.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn racing_cluster_claims_from_two_pools_give_the_job_to_one() {
    let Some((a, b, _guard)) = two_replicas().await else { return };
    let (t, _) = seed_pair(&a, "clusters").await;
    let lease = Duration::from_secs(60);
    for round in 0..20 {
        let job = new_cluster_job(t.id);
        a.enqueue_job(&job.to_job(), 1).await.unwrap();
        let at = now();
        let (ta, tb) = (Uuid::now_v7(), Uuid::now_v7());
        let kinds = [JobKind::Clustering];
        let (ra, rb) = tokio::join!(
            tokio::spawn({
                let a = a.clone();
                async move { a.claim_job(&kinds, at, ta, at + lease).await }
            }),
            tokio::spawn({
                let b = b.clone();
                async move { b.claim_job(&kinds, at, tb, at + lease).await }
            }),
        );
        let (ra, rb) = (ra.unwrap().unwrap(), rb.unwrap().unwrap());
        let claims: Vec<_> = [&ra, &rb].into_iter().flatten().collect();
        assert_eq!(claims.len(), 1, "round {round}: {ra:?} {rb:?}");
        let (claim, token) = if ra.is_some() { (claims[0], ta) } else { (claims[0], tb) };
        assert_eq!((claim.id, claim.attempts), (job.id.0, 1), "round {round}");
        let stored = b.get_job(job.id.0).await.unwrap().unwrap();
        assert_eq!(stored.lease.map(|l| l.token), Some(token), "round {round}: the winner's lease is stored");
        a.complete_cluster_job(job.id, token, at, &ClusterOutcome::default()).await.unwrap();
    }
}

/// Two replicas decide one pending candidate at once, each expecting it pending: the
/// conditional `UPDATE` lets exactly one through; the other finds it decided (`false`).
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn racing_candidate_decisions_from_two_pools_let_one_through() {
    let Some((a, b, _guard)) = two_replicas().await else { return };
    let (t, _) = seed_pair(&a, "decisions").await;
    let pending: Vec<DiscoveryCandidate> = (0..20).map(|i| new_candidate(t.id, CandidateStatus::Pending, i)).collect();
    let job = new_cluster_job(t.id);
    a.enqueue_job(&job.to_job(), 1).await.unwrap();
    let (at, token) = (now(), Uuid::now_v7());
    a.claim_job(&[JobKind::Clustering], at, token, at + Duration::from_secs(60)).await.unwrap().unwrap();
    let outcome = ClusterOutcome { upserts: pending.clone(), ..ClusterOutcome::default() };
    assert_eq!(a.complete_cluster_job(job.id, token, at, &outcome).await.unwrap().len(), pending.len());

    for (round, candidate) in pending.iter().enumerate() {
        let seed = u8::try_from(100 + round).unwrap();
        let confirmed =
            DiscoveryCandidate { id: candidate.id, ..new_candidate(t.id, CandidateStatus::Confirmed, seed) };
        let dismissed =
            DiscoveryCandidate { id: candidate.id, ..new_candidate(t.id, CandidateStatus::Dismissed, seed) };
        let (ra, rb) = tokio::join!(
            tokio::spawn({
                let (a, c) = (a.clone(), confirmed.clone());
                async move { a.update_candidate(&c, CandidateStatus::Pending).await }
            }),
            tokio::spawn({
                let (b, d) = (b.clone(), dismissed.clone());
                async move { b.update_candidate(&d, CandidateStatus::Pending).await }
            }),
        );
        let (ra, rb) = (ra.unwrap().unwrap(), rb.unwrap().unwrap());
        assert!(ra != rb, "round {round}: exactly one applies ({ra}, {rb})");
        let winner = if ra { confirmed } else { dismissed };
        assert_eq!(a.get_candidate(t.id, candidate.id).await.unwrap(), Some(winner), "round {round}");
    }
}

/// A batch of 10,000 events, the service's largest, goes in with one call and comes back
/// through keyset pages of 1,000, all of them, in id order. Prints the insert time.
#[tokio::test]
async fn ten_thousand_events_insert_at_once_and_scan_back_in_pages() {
    let Some((store, _guard)) = common::migrated_store(2).await else { return };
    let (t, _) = seed_pair(&store, "ingest").await;
    let (other, _) = seed_pair(&store, "bystander").await;
    let events: Vec<_> = (0..10_000u32)
        .map(|i| {
            let tenant = if i % 10 == 9 { other.id } else { t.id };
            let disposition = if i % 7 == 3 { EventDisposition::Attributed } else { EventDisposition::Shadow };
            new_discovery_event(tenant, disposition, (i % 251) as u8)
        })
        .collect();
    let started = std::time::Instant::now();
    store.insert_discovery_events(&events).await.unwrap();
    let took = started.elapsed();
    eprintln!(
        "inserted {} discovery events in {took:?} ({:.0} events/s)",
        events.len(),
        events.len() as f64 / took.as_secs_f64()
    );

    let mut expected: Vec<_> =
        events.iter().filter(|e| e.tenant_id == t.id && e.disposition == EventDisposition::Shadow).cloned().collect();
    expected.sort_by_key(|e| e.id);
    let mut scanned = Vec::with_capacity(expected.len());
    let mut after = None;
    let started = std::time::Instant::now();
    loop {
        let page = store.scan_shadow_events(t.id, after, 1_000).await.unwrap();
        assert!(page.len() <= 1_000);
        let Some(last) = page.last() else { break };
        after = Some(last.id);
        scanned.extend(page);
    }
    eprintln!("scanned {} shadow events back in {:?}", scanned.len(), started.elapsed());
    assert_eq!(scanned.len(), expected.len());
    assert!(scanned.windows(2).all(|w| w[0].id < w[1].id), "ascending ids");
    assert_eq!(scanned, expected);
}

/// A stored body that no longer reads as its record is an internal error, not a panic.
#[tokio::test]
async fn corrupt_discovery_rows_are_internal_errors() {
    let Some((url, _guard)) = common::fresh_schema().await else { return };
    let store = PgStore::connect(&url, 1).await.unwrap();
    store.run_migrations().await.unwrap();
    let (t, _) = seed_pair(&store, "alpha").await;
    let event = new_discovery_event(t.id, EventDisposition::Shadow, 1);
    store.insert_discovery_events(std::slice::from_ref(&event)).await.unwrap();
    let mut conn = AsyncPgConnection::establish(&url).await.unwrap();
    sql_query("UPDATE discovery_events SET body = '{\"id\": 1}'").execute(&mut conn).await.unwrap();
    let err = store.scan_shadow_events(t.id, None, 10).await.unwrap_err();
    assert!(matches!(err, DomainError::Internal(_)), "{err:?}");
    let err = store.get_discovery_events(t.id, &[event.id]).await.unwrap_err();
    assert!(matches!(err, DomainError::Internal(_)), "{err:?}");
}

/// Likewise an approval request whose body no longer reads as one.
#[tokio::test]
async fn corrupt_hitl_rows_are_internal_errors() {
    let Some((url, _guard)) = common::fresh_schema().await else { return };
    let store = PgStore::connect(&url, 1).await.unwrap();
    store.run_migrations().await.unwrap();
    let (t, _) = seed_pair(&store, "alpha").await;
    let request = new_hitl_request(t.id, AgentId(Uuid::now_v7()), now(), 1);
    store.insert_hitl(&request, u64::MAX).await.unwrap();
    let mut conn = AsyncPgConnection::establish(&url).await.unwrap();
    sql_query("UPDATE hitl_requests SET body = '{\"id\": 1}'").execute(&mut conn).await.unwrap();
    let err = store.get_hitl(t.id, request.id).await.unwrap_err();
    assert!(matches!(err, DomainError::Internal(_)), "{err:?}");
    let err = store.expired_hitl(now(), 10).await.unwrap_err();
    assert!(matches!(err, DomainError::Internal(_)), "{err:?}");
}

/// Likewise an anomaly report whose body no longer reads as one.
#[tokio::test]
async fn corrupt_anomaly_rows_are_internal_errors() {
    let Some((url, _guard)) = common::fresh_schema().await else { return };
    let store = PgStore::connect(&url, 1).await.unwrap();
    store.run_migrations().await.unwrap();
    let (t, _) = seed_pair(&store, "alpha").await;
    let report = new_anomaly(t.id, AgentId(Uuid::now_v7()), now(), 1);
    store.insert_anomaly(&report).await.unwrap();
    let mut conn = AsyncPgConnection::establish(&url).await.unwrap();
    sql_query("UPDATE anomaly_reports SET body = '{\"id\": 1}'").execute(&mut conn).await.unwrap();
    let err = store.get_anomaly(t.id, report.id).await.unwrap_err();
    assert!(matches!(err, DomainError::Internal(_)), "{err:?}");
    let err = store.list_anomalies(t.id, &AnomalyFilter::default(), &PageRequest::default()).await.unwrap_err();
    assert!(matches!(err, DomainError::Internal(_)), "{err:?}");
}

/// A transaction whose future is dropped (the client went away) must not keep holding the
/// tenant lock on an idle pooled connection.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancelled_transaction_releases_the_tenant_lock() {
    let Some((url, _guard)) = common::fresh_schema().await else { return };
    let store = PgStore::connect(&url, 2).await.unwrap();
    store.run_migrations().await.unwrap();
    let (t, admin) = seed_pair(&store, "alpha").await;
    let lock_sql = format!("SELECT id::text AS name FROM tenants WHERE id = '{}' FOR NO KEY UPDATE NOWAIT", t.id);

    // Hold the tenant row so the update blocks inside its transaction, then give up on it.
    let mut holder = AsyncPgConnection::establish(&url).await.unwrap();
    sql_query("BEGIN").execute(&mut holder).await.unwrap();
    sql_query(lock_sql.clone()).execute(&mut holder).await.unwrap();
    let renamed = User { name: Some("x".into()), ..admin.clone() };
    let cancelled = tokio::time::timeout(Duration::from_millis(300), store.update_user(&renamed)).await;
    assert!(cancelled.is_err(), "the update should have been waiting for the lock");
    sql_query("COMMIT").execute(&mut holder).await.unwrap();

    // The abandoned transaction may take the lock briefly before Postgres notices the closed
    // connection, but it must let go.
    let mut free = false;
    for _ in 0..50 {
        sql_query("BEGIN").execute(&mut holder).await.unwrap();
        free = sql_query(lock_sql.clone()).execute(&mut holder).await.is_ok();
        sql_query("ROLLBACK").execute(&mut holder).await.unwrap();
        if free {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(free, "the tenant row is still locked by the abandoned transaction");
    assert_eq!(store.get_user(t.id, admin.id).await.unwrap(), Some(admin), "the update was rolled back");
}

/// A test that panics midway leaves its connections open, maybe inside a transaction, on a
/// runtime that its schema guard then blocks: the guard must still drop the schema (ending
/// those connections) instead of waiting for their locks forever.
#[tokio::test]
async fn the_schema_guard_ends_the_tests_own_connections() {
    let Some((url, guard)) = common::fresh_schema().await else { return };
    let store = PgStore::connect(&url, 1).await.unwrap();
    store.run_migrations().await.unwrap();
    let mut holder = AsyncPgConnection::establish(&url).await.unwrap();
    sql_query("BEGIN").execute(&mut holder).await.unwrap();
    sql_query("LOCK TABLE tenants IN ACCESS EXCLUSIVE MODE").execute(&mut holder).await.unwrap();
    let schema = guard.schema.clone();
    drop(guard); // blocks this (current-thread) runtime, so `holder` cannot make progress
    let base = agentgov_store_conformance::service_url(common::URL_VAR).unwrap();
    let mut admin = AsyncPgConnection::establish(&base).await.unwrap();
    let row: Regclass =
        sql_query(format!("SELECT to_regnamespace('{schema}')::text AS name")).get_result(&mut admin).await.unwrap();
    assert_eq!(row.name, None, "the schema is gone");
}
