//! Behaviour particular to the SQLite adapter: file creation, migrations, one writer under
//! concurrent requests, and unreadable stored data.

use std::sync::Arc;

use agentgov_domain::DomainError;
use agentgov_domain::ids::{AgentId, TenantId};
use agentgov_domain::model::{
    AgentFilter, AnomalyFilter, DiscoveryEvent, EventDisposition, ExportFormat, GuardTask, Heartbeat, JobKind, JobView,
    ModelKind, Role, Tenant, User,
};
use agentgov_domain::page::PageRequest;
use agentgov_domain::ports::store::JOB_LIMIT_REACHED;
use agentgov_domain::ports::{
    AgentRepo as _, AnomalyRepo as _, ApiKeyRepo as _, AuditRepo as _, DiscoveryRepo as _, GuardRepo as _,
    HitlRepo as _, JobQueue as _, ModelRegistry as _, PolicyRepo as _, Store, TenantRepo as _, UserRepo as _,
};
use agentgov_store_conformance::fixtures::{
    callback_secret, guard_examples, new_agent, new_anomaly, new_discovery_event, new_embedding, new_entry,
    new_export_job, new_guard_task, new_hitl_request, new_key, new_policy, new_user, now, precise, seed_pair,
};
use agentgov_store_sqlite::SqliteStore;
use uuid::Uuid;

#[tokio::test]
async fn open_creates_the_directory_and_file_and_reopens() {
    let dir = tempfile::TempDir::new().unwrap();
    let path = dir.path().join("nested/deeper/agentgov.db");
    let store = SqliteStore::open(&path).unwrap();
    assert!(path.is_file());
    assert_eq!(store.backend(), "sqlite");
    let (tenant, _) = seed_pair(&store, "persist").await;
    drop(store);

    // Reopening runs no migration twice and finds the data.
    let store = SqliteStore::open(&path).unwrap();
    assert_eq!(store.get_tenant(tenant.id).await.unwrap(), Some(tenant));
}

#[tokio::test]
async fn migrations_go_up_down_and_up_again() {
    let dir = tempfile::TempDir::new().unwrap();
    let store = SqliteStore::open(&dir.path().join("agentgov.db")).unwrap();
    let (before, _) = seed_pair(&store, "before").await;
    store.append_audit(vec![new_entry(before.id, "agent.action", now())]).await.unwrap();
    let agent = new_agent(before.id, "before-bot");
    store.insert_agent(&agent, &new_embedding("before-bot")).await.unwrap();

    store.revert_all_migrations().await.unwrap();
    let err = store.list_tenants(&PageRequest::default()).await.unwrap_err();
    assert!(matches!(err, DomainError::Internal(_)), "no tables after down: {err:?}");
    let err = store.audit_head(before.id).await.unwrap_err();
    assert!(matches!(err, DomainError::Internal(_)), "no audit tables after down: {err:?}");
    for err in [
        store.get_agent(before.id, agent.id).await.unwrap_err(),
        store.get_agent_embedding(before.id, agent.id).await.unwrap_err(),
        store.agent_index_version(before.id).await.unwrap_err(),
    ] {
        assert!(matches!(err, DomainError::Internal(_)), "no agent tables after down: {err:?}");
    }
    let err = store.enabled_policies(before.id).await.unwrap_err();
    assert!(matches!(err, DomainError::Internal(_)), "no policies table after down: {err:?}");
    for err in [
        store.guard_stats(before.id, 0).await.map(drop).unwrap_err(),
        store.list_guard_feedback(before.id, 10).await.map(drop).unwrap_err(),
    ] {
        assert!(matches!(err, DomainError::Internal(_)), "no guard tables after down: {err:?}");
    }
    let err = store.expired_hitl(now(), 10).await.unwrap_err();
    assert!(matches!(err, DomainError::Internal(_)), "no hitl table after down: {err:?}");
    let err = store.anomaly_counts(before.id, &AnomalyFilter::default()).await.unwrap_err();
    assert!(matches!(err, DomainError::Internal(_)), "no anomaly table after down: {err:?}");
    for err in [
        store.list_models(before.id, ModelKind::Anomaly).await.map(drop).unwrap_err(),
        store.active_job(before.id, JobKind::Export).await.map(drop).unwrap_err(),
    ] {
        assert!(matches!(err, DomainError::Internal(_)), "no job or model tables after down: {err:?}");
    }

    store.run_migrations().await.unwrap();
    assert!(store.list_tenants(&PageRequest::default()).await.unwrap().items.is_empty());
    let (tenant, admin) = seed_pair(&store, "after").await;
    assert_eq!(store.get_user(tenant.id, admin.id).await.unwrap(), Some(admin.clone()));
    // The audit tables (and their triggers) came back too.
    let records = store.append_audit(vec![new_entry(tenant.id, "agent.action", now())]).await.unwrap();
    assert_eq!(records[0].seq, 1);
    assert_eq!(store.audit_head(tenant.id).await.unwrap().map(|h| h.hash), Some(records[0].hash));
    // And the agent tables.
    let (agent, embedding) = (new_agent(tenant.id, "after-bot"), new_embedding("after-bot"));
    store.insert_agent(&agent, &embedding).await.unwrap();
    assert_eq!(store.get_agent(tenant.id, agent.id).await.unwrap(), Some(agent.clone()));
    assert_eq!(store.get_agent_embedding(tenant.id, agent.id).await.unwrap(), Some(embedding));
    assert_eq!(store.agent_index_version(tenant.id).await.unwrap(), 1);
    // And the policies table.
    let policy = new_policy(tenant.id, "after-policy", Some(admin.id));
    store.insert_policy(&policy, u64::MAX).await.unwrap();
    assert_eq!(store.get_policy(tenant.id, policy.id).await.unwrap(), Some(policy));
    // And the job queue.
    let job = new_export_job(tenant.id, ExportFormat::Jsonl).to_job();
    store.enqueue_job(&job, 1).await.unwrap();
    assert_eq!(store.get_job(job.id).await.unwrap(), Some(job));
    let task = new_guard_task(tenant.id, 4).to_job_with(&guard_examples());
    store.enqueue_job(&task, 1).await.unwrap();
    let err = store.enqueue_job(&new_guard_task(tenant.id, 0).to_job(), 1).await.unwrap_err();
    assert!(matches!(err, DomainError::Conflict(ref m) if m == JOB_LIMIT_REACHED), "{err:?}");
    assert_eq!(GuardTask::examples_of(&store.get_job(task.id).await.unwrap().unwrap()).unwrap(), guard_examples());
    // And the approval requests.
    let request = new_hitl_request(tenant.id, AgentId(Uuid::now_v7()), now(), 1);
    store.insert_hitl(&request, u64::MAX).await.unwrap();
    assert_eq!(store.expired_hitl(now(), 10).await.unwrap(), [request]);
    // And the anomaly reports.
    let report = new_anomaly(tenant.id, AgentId(Uuid::now_v7()), now(), 1);
    store.insert_anomaly(&report).await.unwrap();
    assert_eq!(store.get_anomaly(tenant.id, report.id).await.unwrap(), Some(report.clone()));
    assert_eq!(store.anomaly_counts(tenant.id, &AnomalyFilter::default()).await.unwrap().len(), 1);
    // Running them again is a no-op.
    store.run_migrations().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_writes_all_succeed_while_reads_continue() {
    let dir = tempfile::TempDir::new().unwrap();
    let store = Arc::new(SqliteStore::open(&dir.path().join("agentgov.db")).unwrap());
    let (tenant, _) = seed_pair(&*store, "busy").await;

    let mut tasks = Vec::new();
    for i in 0..50 {
        let writer = store.clone();
        let new_user = new_user(tenant.id, &format!("u{i}@busy.example"), Role::Viewer);
        tasks.push(tokio::spawn(async move { writer.insert_user(&new_user).await }));
        let reader = store.clone();
        tasks.push(tokio::spawn(async move { reader.count_resources(tenant.id).await.map(drop) }));
    }
    for task in tasks {
        task.await.unwrap().unwrap();
    }
    let counts = store.count_resources(tenant.id).await.unwrap();
    assert_eq!(counts.users, 51);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_last_admin_demotions_leave_one_admin() {
    let dir = tempfile::TempDir::new().unwrap();
    let store = Arc::new(SqliteStore::open(&dir.path().join("agentgov.db")).unwrap());
    let (tenant, first) = seed_pair(&*store, "race").await;
    let second = new_user(tenant.id, "second@race.example", Role::Admin);
    store.insert_user(&second).await.unwrap();

    // Two requests each demote a different admin; only one may win.
    let demote = |u: User| {
        let store = store.clone();
        tokio::spawn(async move { store.update_user(&User { role: Role::Viewer, ..u }).await })
    };
    let (a, b) = (demote(first), demote(second));
    let results = [a.await.unwrap(), b.await.unwrap()];
    assert_eq!(results.iter().filter(|r| r.is_ok()).count(), 1, "{results:?}");
    assert!(results.iter().any(|r| matches!(r, Err(DomainError::Conflict(_)))));
}

#[tokio::test]
async fn a_cancelled_write_does_not_break_the_store() {
    let dir = tempfile::TempDir::new().unwrap();
    let store = SqliteStore::open(&dir.path().join("agentgov.db")).unwrap();
    let (tenant, _) = seed_pair(&store, "cancel").await;
    for i in 0..20 {
        // Dropped at its first await: the blocking task finishes or never starts, alone.
        let doomed = new_user(tenant.id, &format!("c{i}@cancel.example"), Role::Viewer);
        let _ = tokio::time::timeout(std::time::Duration::from_micros(1), store.insert_user(&doomed)).await;
    }
    store.insert_user(&new_user(tenant.id, "after@cancel.example", Role::Viewer)).await.unwrap();
    assert!(store.find_user_by_email("after@cancel.example").await.unwrap().is_some());
}

#[tokio::test]
async fn the_file_is_in_wal_mode_and_foreign_keys_are_enforced() {
    use diesel::{Connection, RunQueryDsl, SqliteConnection, sql_query, sql_types::Text};

    #[derive(diesel::QueryableByName)]
    struct Mode {
        #[diesel(sql_type = Text)]
        journal_mode: String,
    }

    let dir = tempfile::TempDir::new().unwrap();
    let path = dir.path().join("agentgov.db");
    let store = SqliteStore::open(&path).unwrap();
    seed_pair(&store, "wal").await;
    let mut raw = SqliteConnection::establish(path.to_str().unwrap()).unwrap();
    let mode: Mode = sql_query("PRAGMA journal_mode").get_result(&mut raw).unwrap();
    assert_eq!(mode.journal_mode, "wal");
    assert!(dir.path().join("agentgov.db-wal").exists());

    let orphan = new_user(TenantId(Uuid::now_v7()), "orphan@wal.example", Role::Viewer);
    let err = store.insert_user(&orphan).await.unwrap_err();
    assert!(matches!(err, DomainError::Conflict(_)), "a user of no tenant: {err:?}");
}

#[tokio::test]
async fn unreadable_stored_data_is_an_internal_error_not_a_panic() {
    use diesel::{Connection, RunQueryDsl, SqliteConnection, sql_query};

    let dir = tempfile::TempDir::new().unwrap();
    let path = dir.path().join("agentgov.db");
    let store = SqliteStore::open(&path).unwrap();
    let (tenant, admin) = seed_pair(&store, "broken").await;
    let mut raw = SqliteConnection::establish(path.to_str().unwrap()).unwrap();
    sql_query("UPDATE api_keys SET permissions = '[\"root:all\"]'").execute(&mut raw).unwrap();
    sql_query("UPDATE users SET created_at = 'yesterday'").execute(&mut raw).unwrap();

    let err = store.find_api_key_by_prefix("agk_broken").await.unwrap_err();
    assert!(matches!(err, DomainError::Internal(_)), "{err:?}");
    let err = store.get_user(tenant.id, admin.id).await.unwrap_err();
    assert!(matches!(err, DomainError::Internal(_)), "{err:?}");
    let err = store.list_users(tenant.id, &PageRequest::default()).await.unwrap_err();
    assert!(matches!(err, DomainError::Internal(_)), "{err:?}");
}

#[tokio::test]
async fn unreadable_agents_are_an_internal_error_not_a_panic() {
    use diesel::{Connection, RunQueryDsl, SqliteConnection, sql_query};

    let dir = tempfile::TempDir::new().unwrap();
    let path = dir.path().join("agentgov.db");
    let store = SqliteStore::open(&path).unwrap();
    let (tenant, _) = seed_pair(&store, "broken-agents").await;
    let agent = new_agent(tenant.id, "garbled");
    store.insert_agent(&agent, &new_embedding("garbled")).await.unwrap();
    let mut raw = SqliteConnection::establish(path.to_str().unwrap()).unwrap();
    fn internal<T>(r: Result<T, DomainError>) -> bool {
        matches!(r, Err(DomainError::Internal(_)))
    }

    // Metadata that is JSON but not an object, capabilities that are not JSON at all.
    sql_query("UPDATE agents SET metadata = '[1, 2]'").execute(&mut raw).unwrap();
    assert!(internal(store.get_agent(tenant.id, agent.id).await));
    sql_query("UPDATE agents SET metadata = '{}', capabilities = 'not json'").execute(&mut raw).unwrap();
    assert!(internal(store.get_agents(tenant.id, &[agent.id]).await));
    let by_capability = AgentFilter { capability: Some("crm:write".into()), ..Default::default() };
    assert!(internal(store.list_agents(tenant.id, &by_capability, &PageRequest::default()).await));
    let beat = Heartbeat { at: now(), status: None, metadata: None, embedding: None };
    assert!(internal(store.heartbeat_agent(tenant.id, agent.id, &beat).await));

    // A vector blob that is not a whole number of f32s.
    sql_query("UPDATE agent_embeddings SET vector = x'0000803f00'").execute(&mut raw).unwrap();
    assert!(internal(store.get_agent_embedding(tenant.id, agent.id).await));
    assert!(internal(store.agent_vectors(tenant.id).await));
}

#[tokio::test]
async fn agents_are_stored_in_the_documented_format() {
    use diesel::sql_types::{BigInt, Binary, Text};
    use diesel::{Connection, RunQueryDsl, SqliteConnection, sql_query};

    #[derive(diesel::QueryableByName)]
    struct Stored {
        #[diesel(sql_type = Text)]
        capabilities: String,
        #[diesel(sql_type = Text)]
        permissions: String,
        #[diesel(sql_type = BigInt)]
        created_at: i64,
        #[diesel(sql_type = Binary)]
        vector: Vec<u8>,
        #[diesel(sql_type = BigInt)]
        version: i64,
    }

    let dir = tempfile::TempDir::new().unwrap();
    let path = dir.path().join("agentgov.db");
    let store = SqliteStore::open(&path).unwrap();
    let (tenant, _) = seed_pair(&store, "format").await;
    let mut agent = new_agent(tenant.id, "formatted");
    agent.created_at = precise(1, 1);
    let embedding = new_embedding("formatted");
    store.insert_agent(&agent, &embedding).await.unwrap();

    let mut raw = SqliteConnection::establish(path.to_str().unwrap()).unwrap();
    let stored: Stored = sql_query(
        "SELECT a.capabilities, a.permissions, a.created_at, e.vector, v.version \
         FROM agents a JOIN agent_embeddings e ON e.agent_id = a.id \
         JOIN agent_index_versions v ON v.tenant_id = a.tenant_id",
    )
    .get_result(&mut raw)
    .unwrap();
    assert_eq!(serde_json::from_str::<Vec<String>>(&stored.capabilities).unwrap(), agent.capabilities);
    assert_eq!(stored.permissions, serde_json::to_string(&agent.permissions).unwrap());
    assert_eq!(stored.created_at, (1_790_000_001 * 1_000_000) + 1, "unix microseconds");
    let le: Vec<u8> = embedding.vector.iter().flat_map(|x| x.to_le_bytes()).collect();
    assert_eq!(stored.vector, le, "little-endian f32, 4 bytes per dimension");
    assert_eq!(stored.version, 1);
}

#[tokio::test]
async fn conflicts_name_what_is_taken() {
    let dir = tempfile::TempDir::new().unwrap();
    let store = SqliteStore::open(&dir.path().join("agentgov.db")).unwrap();
    let (tenant, admin) = seed_pair(&store, "named").await;
    let err = store.insert_user(&new_user(tenant.id, &admin.email, Role::Viewer)).await.unwrap_err();
    assert!(matches!(&err, DomainError::Conflict(m) if m == "email already registered"), "{err:?}");

    let again = Tenant { id: TenantId(Uuid::now_v7()), ..tenant };
    let other = new_user(again.id, "other@named.example", Role::Admin);
    let err =
        store.create_tenant(&again, &other, &new_key(&other, "agk_other"), &callback_secret(&again)).await.unwrap_err();
    assert!(matches!(&err, DomainError::Conflict(m) if m == "tenant name already taken"), "{err:?}");

    store.insert_agent(&new_agent(tenant.id, "bot"), &new_embedding("bot")).await.unwrap();
    let err = store.insert_agent(&new_agent(tenant.id, "bot"), &new_embedding("bot")).await.unwrap_err();
    assert!(matches!(&err, DomainError::Conflict(m) if m == "agent name already taken"), "{err:?}");
}

#[tokio::test]
async fn a_batch_of_ten_thousand_events_goes_in_at_once_and_scans_back_in_pages() {
    let dir = tempfile::TempDir::new().unwrap();
    let store = SqliteStore::open(&dir.path().join("agentgov.db")).unwrap();
    let (tenant, _) = seed_pair(&store, "bulk").await;
    let events: Vec<DiscoveryEvent> = (0..10_000u32)
        .map(|i| new_discovery_event(tenant.id, EventDisposition::Shadow, u8::try_from(i % 256).unwrap()))
        .collect();

    let started = std::time::Instant::now();
    store.insert_discovery_events(&events).await.unwrap();
    let took = started.elapsed();
    eprintln!(
        "inserted {} discovery events in one call in {took:?} ({:.0} events/s)",
        events.len(),
        events.len() as f64 / took.as_secs_f64()
    );

    let mut expected = events;
    expected.sort_by_key(|e| e.id);
    let (mut scanned, mut after, mut pages) = (Vec::new(), None, 0);
    loop {
        let page = store.scan_shadow_events(tenant.id, after, 1_000).await.unwrap();
        assert!(page.len() <= 1_000);
        let Some(last) = page.last() else { break };
        after = Some(last.id);
        pages += 1;
        scanned.extend(page);
    }
    assert_eq!(pages, 10);
    assert_eq!(scanned.len(), 10_000);
    assert!(scanned.windows(2).all(|w| w[0].id < w[1].id), "ascending ids");
    assert_eq!(scanned, expected, "every event, by id");
}
