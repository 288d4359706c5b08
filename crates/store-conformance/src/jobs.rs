//! The job queue and the model registry, written once for every kind of job and model:
//! queued jobs, their limit per tenant and kind, claims (the kinds asked for, the tenant
//! with the fewest running first, then the oldest; expired leases taken over), the lease
//! every worker write needs, chunks, ends, cancellation, purging, and numbered versions
//! with one active per tenant and kind.
#![expect(clippy::unwrap_used, reason = "test code: a failed unwrap is a failed test")]

use std::sync::Arc;
use std::time::Duration;

use agentgov_domain::DomainError;
use agentgov_domain::ids::TenantId;
use agentgov_domain::model::{
    Actor, ActorType, Job, JobEnd, JobKind, JobStatus, Lease, ModelKind, ModelVersion, StoredModel,
};
use agentgov_domain::ports::Store;
use agentgov_domain::ports::store::JOB_LIMIT_REACHED;
use serde_json::json;
use time::OffsetDateTime;
use uuid::Uuid;

use crate::fixtures::{precise, seed_pair};

const LEASE: Duration = Duration::from_secs(60);

async fn tenant(store: &Arc<dyn Store>, name: &str) -> TenantId {
    seed_pair(store.as_ref(), name).await.0.id
}

fn is_conflict<T: std::fmt::Debug>(r: Result<T, DomainError>) -> bool {
    matches!(r, Err(DomainError::Conflict(_)))
}

/// A queued job of `tenant` and `kind`, created at `at`, whose params name `seed`.
fn new_job(tenant: TenantId, kind: JobKind, at: OffsetDateTime, seed: u32) -> Job {
    let params = json!({"seed": seed, "text": "naïve \"quoted\" ✓ \u{0} end", "nested": {"list": [1, 2.5, null]}});
    Job::queued(Uuid::now_v7(), tenant, kind, Actor::new(ActorType::User, format!("user-{seed}")), params, at)
}

async fn enqueued(store: &Arc<dyn Store>, tenant: TenantId, kind: JobKind, at: OffsetDateTime, seed: u32) -> Job {
    let job = new_job(tenant, kind, at, seed);
    store.enqueue_job(&job, 100).await.unwrap();
    job
}

/// A version of `kind` for `tenant` whose info and model name `seed`.
fn new_model(tenant: TenantId, kind: ModelKind, seed: u8) -> StoredModel {
    StoredModel {
        version: ModelVersion {
            tenant_id: tenant,
            kind,
            version: 0,
            active: false,
            info: json!({"threshold": 0.5 + f64::from(seed) / 1000.0, "seed": seed, "metrics": {"recall": 0.97}}),
        },
        model: vec![seed; 64 + usize::from(seed)],
    }
}

/// Claims the next job of `kinds` at `at` under a new token.
async fn claim(store: &Arc<dyn Store>, kinds: &[JobKind], at: OffsetDateTime) -> Option<(Job, Uuid)> {
    let token = Uuid::now_v7();
    store.claim_job(kinds, at, token, at + LEASE).await.unwrap().map(|j| (j, token))
}

pub async fn jobs_round_trip_every_kind_and_field(store: Arc<dyn Store>) {
    let a = tenant(&store, "a-jround").await;
    let at = precise(3, 999_999);
    for (seed, kind) in (0u32..).zip(JobKind::ALL.iter().copied()) {
        let mut job = new_job(a, kind, at, seed);
        job.requested_by = Actor::new(ActorType::ApiKey, "key-1");
        store.enqueue_job(&job, 1).await.unwrap();
        assert_eq!(store.get_job(job.id).await.unwrap(), Some(job.clone()), "{kind:?}");
        assert_eq!(store.active_job(a, kind).await.unwrap(), Some(job.clone()), "{kind:?}");
    }
    assert_eq!(store.get_job(Uuid::now_v7()).await.unwrap(), None);
    let b = tenant(&store, "b-jround").await;
    assert_eq!(store.active_job(b, JobKind::Export).await.unwrap(), None, "per tenant");
}

pub async fn jobs_are_limited_per_tenant_and_kind(store: Arc<dyn Store>) {
    let a = tenant(&store, "a-jlimit").await;
    let b = tenant(&store, "b-jlimit").await;
    let at = precise(5, 0);
    let limited = |r: Result<(), DomainError>| matches!(r, Err(DomainError::Conflict(m)) if m == JOB_LIMIT_REACHED);
    store.enqueue_job(&new_job(a, JobKind::Export, at, 1), 2).await.unwrap();
    store.enqueue_job(&new_job(a, JobKind::Export, at, 2), 2).await.unwrap();
    assert!(limited(store.enqueue_job(&new_job(a, JobKind::Export, at, 3), 2).await));
    store.enqueue_job(&new_job(a, JobKind::Clustering, at, 4), 1).await.unwrap();
    assert!(limited(store.enqueue_job(&new_job(a, JobKind::Clustering, at, 5), 1).await), "one of this kind");
    store.enqueue_job(&new_job(b, JobKind::Export, at, 6), 1).await.unwrap();

    // Running counts; finished does not.
    let (running, token) = claim(&store, &[JobKind::Export], at).await.unwrap();
    assert_eq!(running.tenant_id, a);
    assert!(limited(store.enqueue_job(&new_job(a, JobKind::Export, at, 7), 2).await));
    store.finish_job(running.id, token, &JobEnd::failed(at, "no")).await.unwrap();
    store.enqueue_job(&new_job(a, JobKind::Export, at, 8), 2).await.unwrap();

    let job = new_job(a, JobKind::GuardTraining, at, 9);
    store.enqueue_job(&job, 5).await.unwrap();
    assert!(is_conflict(store.enqueue_job(&job, 5).await), "the id is taken");
    assert!(is_conflict(store.enqueue_job(&new_job(TenantId(Uuid::now_v7()), JobKind::Export, at, 10), 5).await));
}

pub async fn job_claims_take_the_kinds_asked_for_oldest_first_once(store: Arc<dyn Store>) {
    let a = tenant(&store, "jqclaim").await;
    let at = precise(10, 250_001);
    let newer = new_job(a, JobKind::Export, at, 2);
    let older = Job { id: Uuid::now_v7(), ..new_job(a, JobKind::Export, at, 1) };
    let (older, newer) = if older.id < newer.id { (older, newer) } else { (newer, older) };
    // Inserted newest first: claims go by id, not by insertion.
    store.enqueue_job(&newer, 10).await.unwrap();
    store.enqueue_job(&older, 10).await.unwrap();
    let training = enqueued(&store, a, JobKind::AnomalyTraining, at, 3).await;

    let token = Uuid::now_v7();
    let got = store.claim_job(&[JobKind::Export], at, token, at + LEASE).await.unwrap().unwrap();
    let expected = Job {
        status: JobStatus::Running,
        started_at: Some(at),
        attempts: 1,
        state: serde_json::Value::Null,
        lease: Some(Lease { token, until: at + LEASE }),
        ..older.clone()
    };
    assert_eq!(got, expected);
    assert_eq!(store.get_job(older.id).await.unwrap(), Some(expected));
    assert_eq!(claim(&store, &[JobKind::Export], at).await.map(|(j, _)| j.id), Some(newer.id), "the next one");
    assert_eq!(claim(&store, &[JobKind::Export], at).await, None, "both held; the training is not asked for");
    let kinds = [JobKind::Clustering, JobKind::AnomalyTraining];
    assert_eq!(claim(&store, &kinds, at).await.map(|(j, _)| j.id), Some(training.id));
    assert_eq!(claim(&store, JobKind::ALL, at + LEASE).await, None, "leases held until their end");
}

pub async fn job_claims_put_the_tenant_with_fewest_running_first(store: Arc<dyn Store>) {
    let busy = tenant(&store, "busy-jf").await;
    let quiet = tenant(&store, "quiet-jf").await;
    let at = precise(20, 0);
    // The busy tenant queued three before the quiet one queued its one.
    let first = enqueued(&store, busy, JobKind::Export, at, 1).await;
    let second = enqueued(&store, busy, JobKind::Export, at, 2).await;
    let third = enqueued(&store, busy, JobKind::Clustering, at, 3).await;
    let theirs = enqueued(&store, quiet, JobKind::Export, at, 4).await;

    let all = JobKind::ALL;
    assert_eq!(claim(&store, all, at).await.map(|(j, _)| j.id), Some(first.id), "none running: the oldest");
    assert_eq!(claim(&store, all, at).await.map(|(j, _)| j.id), Some(theirs.id), "busy has one running");
    assert_eq!(claim(&store, all, at).await.map(|(j, _)| j.id), Some(second.id));
    assert_eq!(claim(&store, all, at).await.map(|(j, _)| j.id), Some(third.id));
}

pub async fn job_expired_leases_are_taken_over_and_start_over(store: Arc<dyn Store>) {
    let a = tenant(&store, "jexpired").await;
    let t0 = precise(30, 7);
    let job = enqueued(&store, a, JobKind::Export, t0, 1).await;
    let (_, first) = claim(&store, &[JobKind::Export], t0).await.unwrap();
    let state = json!({"rows": 5, "bytes": 10, "chunks": 1});
    store.put_job_chunk(job.id, first, 0, b"part".to_vec()).await.unwrap();
    store.renew_job(job.id, first, 0.5, Some(&state), t0 + LEASE).await.unwrap();
    assert_eq!(claim(&store, &[JobKind::Export], t0 + LEASE).await, None, "not yet expired");

    let t1 = t0 + LEASE + Duration::from_micros(1);
    let (again, second) = claim(&store, &[JobKind::Export], t1).await.unwrap();
    assert_eq!(again.id, job.id);
    assert_eq!(again.attempts, 2);
    assert_eq!(again.started_at, Some(t0), "started when first claimed");
    assert_eq!((again.progress, &again.state), (0.0, &serde_json::Value::Null), "a new attempt starts over");
    assert_eq!(again.lease, Some(Lease { token: second, until: t1 + LEASE }));
    assert_eq!(store.job_chunk(a, job.id, 0).await.unwrap(), None, "the earlier attempt's chunks are gone");
    assert!(is_conflict(store.renew_job(job.id, first, 0.9, None, t1 + LEASE).await), "the lease is lost");
    assert!(is_conflict(store.finish_job(job.id, first, &JobEnd::failed(t1, "late")).await));
    assert_eq!(store.get_job(job.id).await.unwrap(), Some(again));
}

pub async fn job_worker_writes_need_the_lease_and_write_nothing_without_it(store: Arc<dyn Store>) {
    let a = tenant(&store, "jlease").await;
    let t0 = precise(40, 1);
    let job = enqueued(&store, a, JobKind::GuardTraining, t0, 1).await;
    let state = json!({"n": 1});
    let stranger = Uuid::now_v7();
    assert!(is_conflict(store.renew_job(job.id, stranger, 0.1, None, t0).await), "never claimed");

    let (_, token) = claim(&store, &[JobKind::GuardTraining], t0).await.unwrap();
    let extended = t0 + LEASE * 2;
    store.renew_job(job.id, token, 0.25, Some(&state), extended).await.unwrap();
    let held = store.get_job(job.id).await.unwrap().unwrap();
    assert_eq!((held.progress, &held.state, held.lease), (0.25, &state, Some(Lease { token, until: extended })));
    store.renew_job(job.id, token, 0.3, None, extended).await.unwrap();
    let held = store.get_job(job.id).await.unwrap().unwrap();
    assert_eq!((held.progress, &held.state), (0.3, &state), "no state given: kept");
    assert_eq!(claim(&store, &[JobKind::GuardTraining], extended).await, None, "extended");

    assert!(is_conflict(store.renew_job(job.id, stranger, 0.5, Some(&json!(2)), extended).await));
    assert!(is_conflict(store.put_job_chunk(job.id, stranger, 0, vec![1]).await));
    assert!(is_conflict(store.finish_job(job.id, stranger, &JobEnd::completed(t0, json!(2))).await));
    assert!(is_conflict(store.renew_job(Uuid::now_v7(), token, 0.5, None, extended).await), "no such job");
    assert_eq!(store.get_job(job.id).await.unwrap(), Some(held), "nothing written");
    assert_eq!(store.job_chunk(a, job.id, 0).await.unwrap(), None);
}

pub async fn job_ends_record_the_outcome_and_release_the_job(store: Arc<dyn Store>) {
    let a = tenant(&store, "jend").await;
    let t0 = precise(50, 123_456);
    let done = enqueued(&store, a, JobKind::Export, t0, 1).await;
    let failed = enqueued(&store, a, JobKind::Clustering, t0, 2).await;

    let (_, token) = claim(&store, &[JobKind::Export], t0).await.unwrap();
    let state = json!({"rows": 3, "bytes": 99, "chunks": 2});
    let end = JobEnd { expires_at: Some(precise(90, 1)), ..JobEnd::completed(precise(51, 999_999), state.clone()) };
    store.finish_job(done.id, token, &end).await.unwrap();
    let expected = Job {
        status: JobStatus::Completed,
        progress: 1.0,
        state,
        started_at: Some(t0),
        finished_at: Some(precise(51, 999_999)),
        expires_at: Some(precise(90, 1)),
        attempts: 1,
        ..done.clone()
    };
    assert_eq!(store.get_job(done.id).await.unwrap(), Some(expected.clone()));
    assert_eq!(store.active_job(a, JobKind::Export).await.unwrap(), None);
    assert!(is_conflict(store.finish_job(done.id, token, &JobEnd::failed(t0, "again")).await), "ended once");
    assert_eq!(store.get_job(done.id).await.unwrap(), Some(expected));

    let (_, token) = claim(&store, &[JobKind::Clustering], t0).await.unwrap();
    store.renew_job(failed.id, token, 0.4, Some(&json!({"pages": 2})), t0 + LEASE).await.unwrap();
    store.finish_job(failed.id, token, &JobEnd::failed(precise(52, 0), "out of memory: 0 of 3 ✗")).await.unwrap();
    let got = store.get_job(failed.id).await.unwrap().unwrap();
    assert_eq!(got.status, JobStatus::Failed);
    assert_eq!(got.error.as_deref(), Some("out of memory: 0 of 3 ✗"));
    assert_eq!((got.progress, got.state), (0.4, json!({"pages": 2})), "kept");
    assert_eq!((got.finished_at, got.expires_at, got.lease), (Some(precise(52, 0)), None, None));
    assert_eq!(claim(&store, JobKind::ALL, precise(99, 0)).await, None, "finished jobs stay finished");
}

pub async fn job_chunks_round_trip_and_are_tenant_scoped(store: Arc<dyn Store>) {
    let a = tenant(&store, "a-jchunk").await;
    let b = tenant(&store, "b-jchunk").await;
    let t0 = precise(60, 0);
    let job = enqueued(&store, a, JobKind::Export, t0, 1).await;
    let (_, token) = claim(&store, &[JobKind::Export], t0).await.unwrap();
    let big: Vec<u8> = (0..=255u8).cycle().take(300_000).collect();
    let state = json!({"rows": 1, "bytes": 300_000, "chunks": 1});
    store.put_job_chunk(job.id, token, 0, big.clone()).await.unwrap();
    store.put_job_chunk(job.id, token, 1, b"first".to_vec()).await.unwrap();
    store.put_job_chunk(job.id, token, 1, b"second".to_vec()).await.unwrap();
    store.renew_job(job.id, token, 0.7, Some(&state), t0 + LEASE * 2).await.unwrap();
    assert_eq!(store.job_chunk(a, job.id, 0).await.unwrap(), Some(big));
    assert_eq!(store.job_chunk(a, job.id, 1).await.unwrap(), Some(b"second".to_vec()), "written again: replaced");
    assert_eq!(store.job_chunk(a, job.id, 2).await.unwrap(), None);
    assert_eq!(store.job_chunk(b, job.id, 0).await.unwrap(), None, "another tenant's");
    let held = store.get_job(job.id).await.unwrap().unwrap();
    assert_eq!((held.progress, held.state, held.lease.map(|l| l.until)), (0.7, state, Some(t0 + LEASE * 2)));
}

pub async fn job_cancel_ends_the_tenants_active_job_of_a_kind(store: Arc<dyn Store>) {
    let a = tenant(&store, "a-jcancl").await;
    let b = tenant(&store, "b-jcancl").await;
    let t0 = precise(70, 0);
    let queued = enqueued(&store, a, JobKind::GuardTraining, t0, 1).await;
    let other_kind = enqueued(&store, a, JobKind::AnomalyTraining, t0, 2).await;
    let theirs = enqueued(&store, b, JobKind::GuardTraining, t0, 3).await;

    let at = precise(71, 5);
    let cancelled = store.cancel_job(a, JobKind::GuardTraining, at).await.unwrap().unwrap();
    let expected = Job { status: JobStatus::Cancelled, finished_at: Some(at), ..queued.clone() };
    assert_eq!(cancelled, expected);
    assert_eq!(store.get_job(queued.id).await.unwrap(), Some(expected));
    assert_eq!(store.cancel_job(a, JobKind::GuardTraining, at).await.unwrap(), None, "none left");
    assert_eq!(store.get_job(other_kind.id).await.unwrap(), Some(other_kind), "another kind");
    assert_eq!(store.get_job(theirs.id).await.unwrap(), Some(theirs.clone()), "another tenant's");

    // A running one: its worker's writes are refused from then on.
    let (running, token) = claim(&store, &[JobKind::GuardTraining], t0).await.unwrap();
    assert_eq!(running.id, theirs.id);
    let cancelled = store.cancel_job(b, JobKind::GuardTraining, at).await.unwrap().unwrap();
    assert_eq!((cancelled.status, cancelled.lease), (JobStatus::Cancelled, None));
    assert!(is_conflict(store.renew_job(theirs.id, token, 0.5, None, at + LEASE).await));
    let model = new_model(b, ModelKind::Guard, 1);
    assert!(is_conflict(store.complete_training(theirs.id, token, at, &model).await));
    assert!(store.list_models(b, ModelKind::Guard).await.unwrap().is_empty());
}

pub async fn job_purge_deletes_expired_jobs_with_their_chunks(store: Arc<dyn Store>) {
    let a = tenant(&store, "jpurge").await;
    let t0 = precise(80, 0);
    let old = enqueued(&store, a, JobKind::Export, t0, 1).await;
    let young = enqueued(&store, a, JobKind::Export, t0, 2).await;
    let kept = enqueued(&store, a, JobKind::Clustering, t0, 3).await;
    for (job, expires) in [(&old, precise(100, 0)), (&young, precise(300, 0))] {
        let (_, token) = claim(&store, &[JobKind::Export], t0).await.unwrap();
        store.put_job_chunk(job.id, token, 0, vec![7; 10]).await.unwrap();
        let end = JobEnd { expires_at: Some(expires), ..JobEnd::completed(t0, json!({})) };
        store.finish_job(job.id, token, &end).await.unwrap();
    }
    assert_eq!(store.purge_expired_jobs(precise(100, 0)).await.unwrap(), 0, "not before its time");
    assert_eq!(store.purge_expired_jobs(precise(200, 0)).await.unwrap(), 1);
    assert_eq!(store.get_job(old.id).await.unwrap(), None);
    assert_eq!(store.job_chunk(a, old.id, 0).await.unwrap(), None);
    assert!(store.get_job(young.id).await.unwrap().is_some());
    assert_eq!(store.job_chunk(a, young.id, 0).await.unwrap(), Some(vec![7; 10]));
    assert!(store.get_job(kept.id).await.unwrap().is_some(), "no expiry: kept");
}

/// Runs a training job of `tenant` to completion with `model`; answers the version.
async fn trained(store: &Arc<dyn Store>, tenant: TenantId, model: &StoredModel, at: OffsetDateTime) -> (Job, i32) {
    let kind = match model.version.kind {
        ModelKind::Guard => JobKind::GuardTraining,
        ModelKind::Anomaly => JobKind::AnomalyTraining,
    };
    let job = enqueued(store, tenant, kind, at, 0).await;
    let token = Uuid::now_v7();
    let claimed = store.claim_job(&[kind], at, token, at + LEASE).await.unwrap().unwrap();
    assert_eq!(claimed.id, job.id);
    let version = store.complete_training(job.id, token, at, model).await.unwrap();
    (store.get_job(job.id).await.unwrap().unwrap(), version)
}

pub async fn models_number_from_one_per_tenant_and_kind_and_the_newest_is_active(store: Arc<dyn Store>) {
    let a = tenant(&store, "a-mvnum").await;
    let b = tenant(&store, "b-mvnum").await;
    let at = precise(90, 42);
    assert_eq!(store.active_model(a, ModelKind::Guard).await.unwrap(), 0, "none yet");
    assert!(store.list_models(a, ModelKind::Guard).await.unwrap().is_empty());

    let first = new_model(b, ModelKind::Guard, 1); // its tenant is ignored: the job's wins
    let (job, version) = trained(&store, a, &first, at).await;
    assert_eq!(version, 1);
    assert_eq!(job.status, JobStatus::Completed);
    assert_eq!(
        (job.progress, job.state, job.finished_at, job.lease),
        (1.0, json!({"model_version": 1}), Some(at), None)
    );
    assert_eq!(trained(&store, a, &new_model(a, ModelKind::Guard, 2), at).await.1, 2);
    assert_eq!(trained(&store, a, &new_model(a, ModelKind::Anomaly, 3), at).await.1, 1, "numbered per kind");
    assert_eq!(trained(&store, b, &new_model(b, ModelKind::Guard, 4), at).await.1, 1, "numbered per tenant");

    let listed = store.list_models(a, ModelKind::Guard).await.unwrap();
    let expected = |version: i32, active: bool, seed: u8| ModelVersion {
        tenant_id: a,
        version,
        active,
        ..new_model(a, ModelKind::Guard, seed).version
    };
    assert_eq!(listed, [expected(2, true, 2), expected(1, false, 1)], "newest first, the newest active");
    assert_eq!(store.active_model(a, ModelKind::Guard).await.unwrap(), 2);
    assert_eq!(store.active_model(a, ModelKind::Anomaly).await.unwrap(), 1);
    let stored = store.get_model(a, ModelKind::Guard, 1).await.unwrap().unwrap();
    assert_eq!(stored, StoredModel { version: expected(1, false, 1), model: first.model });
    assert_eq!(store.get_model(a, ModelKind::Guard, 3).await.unwrap(), None);
    assert_eq!(store.get_model(b, ModelKind::Anomaly, 1).await.unwrap(), None, "another tenant's kind");
}

pub async fn model_activation_switches_versions_and_turns_the_kind_off(store: Arc<dyn Store>) {
    let a = tenant(&store, "a-mvact").await;
    let at = precise(95, 0);
    for seed in 1..=3 {
        trained(&store, a, &new_model(a, ModelKind::Anomaly, seed), at).await;
    }
    trained(&store, a, &new_model(a, ModelKind::Guard, 9), at).await;
    assert!(store.activate_model(a, ModelKind::Anomaly, 1).await.unwrap());
    assert_eq!(store.active_model(a, ModelKind::Anomaly).await.unwrap(), 1);
    let active: Vec<i32> = store
        .list_models(a, ModelKind::Anomaly)
        .await
        .unwrap()
        .iter()
        .filter(|v| v.active)
        .map(|v| v.version)
        .collect();
    assert_eq!(active, [1], "one active");
    assert!(!store.activate_model(a, ModelKind::Anomaly, 7).await.unwrap(), "no such version");
    assert_eq!(store.active_model(a, ModelKind::Anomaly).await.unwrap(), 1, "unchanged");
    assert!(store.activate_model(a, ModelKind::Anomaly, 0).await.unwrap(), "off");
    assert_eq!(store.active_model(a, ModelKind::Anomaly).await.unwrap(), 0);
    assert!(store.list_models(a, ModelKind::Anomaly).await.unwrap().iter().all(|v| !v.active));
    assert_eq!(store.active_model(a, ModelKind::Guard).await.unwrap(), 1, "another kind untouched");
    let b = tenant(&store, "b-mvact").await;
    assert!(!store.activate_model(b, ModelKind::Anomaly, 2).await.unwrap(), "a's versions are not b's");
}

pub async fn model_training_without_the_lease_writes_nothing(store: Arc<dyn Store>) {
    let a = tenant(&store, "mvnolse").await;
    let t0 = precise(97, 0);
    let job = enqueued(&store, a, JobKind::AnomalyTraining, t0, 1).await;
    let stale = Uuid::now_v7();
    store.claim_job(&[JobKind::AnomalyTraining], t0, stale, t0 + LEASE).await.unwrap().unwrap();
    let t1 = t0 + LEASE + Duration::from_secs(1);
    let (running, _) = claim(&store, &[JobKind::AnomalyTraining], t1).await.unwrap();
    let model = new_model(a, ModelKind::Anomaly, 1);
    assert!(is_conflict(store.complete_training(job.id, stale, t1, &model).await), "a lost lease");
    assert!(is_conflict(store.complete_training(Uuid::now_v7(), stale, t1, &model).await), "no such job");
    assert!(store.list_models(a, ModelKind::Anomaly).await.unwrap().is_empty());
    assert_eq!(store.get_job(job.id).await.unwrap(), Some(running));
}

pub async fn models_keep_a_large_model_intact(store: Arc<dyn Store>) {
    let a = tenant(&store, "mvlarge").await;
    let mut model = new_model(a, ModelKind::Guard, 5);
    model.model = (0..=255u8).cycle().take(3_000_000).collect();
    let (_, version) = trained(&store, a, &model, precise(98, 0)).await;
    let stored = store.get_model(a, ModelKind::Guard, version).await.unwrap().unwrap();
    assert_eq!(stored.model, model.model);
}
