//! Conformance of the `DiscoveryRepo` port: ingested events (all-or-nothing batches, keyset
//! scans of the shadow ones), candidates (written by clustering jobs, decided under an
//! expected status) and the completion of a clustering job of the job queue (its candidates
//! and its end in one transaction, only under its lease; the queue itself is `jobs.rs`'s). Expanded by
//! `store_conformance_tests!` with the rest.
#![expect(clippy::unwrap_used, clippy::expect_used, reason = "test code: a failed unwrap is a failed test")]

use std::sync::Arc;
use std::time::Duration;

use agentgov_domain::DomainError;
use agentgov_domain::ids::{CandidateId, ClusterJobId, DiscoveryEventId, TenantId};
use agentgov_domain::model::{
    CandidateFilter, CandidateStatus, ClusterJob, ClusterOutcome, ClusterSummary, DiscoveryCandidate, DiscoveryEvent,
    EventDisposition, Fingerprint, JobEnd, JobKind, JobStatus, JobView, JsonObject,
};
use agentgov_domain::page::PageRequest;
use agentgov_domain::ports::Store;
use time::OffsetDateTime;
use uuid::Uuid;

use crate::fixtures::*;

use CandidateStatus::{Confirmed, Dismissed, Pending};
use EventDisposition::{Attributed, Shadow, Suppressed};

/// Tenant names must differ in their first 8 characters (`seed` derives a key prefix).
async fn tenant(store: &Arc<dyn Store>, name: &str) -> TenantId {
    seed(store.as_ref(), name).await.tenant.id
}

fn is_conflict<T: std::fmt::Debug>(r: Result<T, DomainError>) -> bool {
    is_conflict_ref(&r)
}

fn is_conflict_ref<T: std::fmt::Debug>(r: &Result<T, DomainError>) -> bool {
    matches!(r, Err(DomainError::Conflict(_)))
}

fn is_not_found<T: std::fmt::Debug>(r: &Result<T, DomainError>) -> bool {
    matches!(r, Err(DomainError::NotFound { .. }))
}

const LEASE: Duration = Duration::from_secs(60);

fn summary(seed: i64) -> ClusterSummary {
    ClusterSummary {
        events: 1_000 + seed,
        noise_events: 37,
        matched_decided: 12,
        candidates_created: 2,
        candidates_updated: 1,
        candidates_removed: 3,
        duration_ms: 1_234_567,
    }
}

fn outcome(upserts: Vec<DiscoveryCandidate>, removed: Vec<CandidateId>, seed: i64) -> ClusterOutcome {
    ClusterOutcome { upserts, removed, summary: summary(seed) }
}

/// The clustering jobs of the job queue, in this suite's words.
trait ClusterJobs {
    async fn insert_cluster_job(&self, job: &ClusterJob) -> Result<(), DomainError>;
    async fn get_cluster_job(&self, tenant: TenantId, id: ClusterJobId) -> Result<Option<ClusterJob>, DomainError>;
    async fn active_cluster_job(&self, tenant: TenantId) -> Result<Option<ClusterJob>, DomainError>;
    async fn claim_cluster_job(
        &self,
        now: OffsetDateTime,
        token: Uuid,
        until: OffsetDateTime,
    ) -> Result<Option<ClusterJob>, DomainError>;
    async fn progress_cluster_job(
        &self,
        id: ClusterJobId,
        token: Uuid,
        progress: f64,
        until: OffsetDateTime,
    ) -> Result<(), DomainError>;
    async fn fail_cluster_job(
        &self,
        id: ClusterJobId,
        token: Uuid,
        at: OffsetDateTime,
        error: &str,
    ) -> Result<(), DomainError>;
}

impl ClusterJobs for Arc<dyn Store> {
    async fn insert_cluster_job(&self, job: &ClusterJob) -> Result<(), DomainError> {
        self.enqueue_job(&job.to_job(), 1).await
    }

    async fn get_cluster_job(&self, tenant: TenantId, id: ClusterJobId) -> Result<Option<ClusterJob>, DomainError> {
        let job = self.get_job(id.0).await?.filter(|j| j.tenant_id == tenant && j.kind == JobKind::Clustering);
        job.map(ClusterJob::from_job).transpose()
    }

    async fn active_cluster_job(&self, tenant: TenantId) -> Result<Option<ClusterJob>, DomainError> {
        self.active_job(tenant, JobKind::Clustering).await?.map(ClusterJob::from_job).transpose()
    }

    async fn claim_cluster_job(
        &self,
        now: OffsetDateTime,
        token: Uuid,
        until: OffsetDateTime,
    ) -> Result<Option<ClusterJob>, DomainError> {
        self.claim_job(&[JobKind::Clustering], now, token, until).await?.map(ClusterJob::from_job).transpose()
    }

    async fn progress_cluster_job(
        &self,
        id: ClusterJobId,
        token: Uuid,
        progress: f64,
        until: OffsetDateTime,
    ) -> Result<(), DomainError> {
        self.renew_job(id.0, token, progress, None, until).await
    }

    async fn fail_cluster_job(
        &self,
        id: ClusterJobId,
        token: Uuid,
        at: OffsetDateTime,
        error: &str,
    ) -> Result<(), DomainError> {
        self.finish_job(id.0, token, &JobEnd::failed(at, error)).await
    }
}

/// Queues a job of `tenant` and claims it (the store must hold no other claimable job).
async fn claimed(store: &Arc<dyn Store>, tenant: TenantId, at: OffsetDateTime) -> (ClusterJob, Uuid) {
    let job = new_cluster_job(tenant);
    store.insert_cluster_job(&job).await.unwrap();
    let token = Uuid::now_v7();
    let got = store.claim_cluster_job(at, token, at + LEASE).await.unwrap().expect("a job to claim");
    assert_eq!(got.id, job.id);
    (got, token)
}

/// Runs a clustering job of `tenant` from queued to completed with `upserts` and `removed`;
/// answers the ids it inserted.
async fn cluster(
    store: &Arc<dyn Store>,
    tenant: TenantId,
    upserts: Vec<DiscoveryCandidate>,
    removed: Vec<CandidateId>,
) -> Vec<CandidateId> {
    let at = now();
    let (job, token) = claimed(store, tenant, at).await;
    store.complete_cluster_job(job.id, token, at, &outcome(upserts, removed, 0)).await.unwrap()
}

/// Candidates of `tenant` of these statuses, oldest first, as stored: written pending by one
/// clustering job, then decided through `update_candidate`.
async fn candidates(store: &Arc<dyn Store>, tenant: TenantId, statuses: &[CandidateStatus]) -> Vec<DiscoveryCandidate> {
    let pending: Vec<DiscoveryCandidate> =
        (0..statuses.len()).map(|i| new_candidate(tenant, Pending, u8::try_from(i).unwrap())).collect();
    let inserted = cluster(store, tenant, pending.clone(), Vec::new()).await;
    assert_eq!(sorted(inserted), sorted(pending.iter().map(|c| c.id).collect()));
    let mut out = Vec::new();
    for (i, (candidate, status)) in pending.into_iter().zip(statuses).enumerate() {
        if *status == Pending {
            out.push(candidate);
            continue;
        }
        let decided = DiscoveryCandidate { id: candidate.id, ..new_candidate(tenant, *status, 100 + i as u8) };
        assert!(store.update_candidate(&decided, Pending).await.unwrap());
        out.push(decided);
    }
    out
}

fn sorted<T: Ord>(mut v: Vec<T>) -> Vec<T> {
    v.sort();
    v
}

fn by_id<T>(mut v: Vec<T>, id: impl Fn(&T) -> Uuid) -> Vec<T> {
    v.sort_by_key(|x| id(x));
    v
}

fn event_ids(events: &[DiscoveryEvent]) -> Vec<DiscoveryEventId> {
    events.iter().map(|e| e.id).collect()
}

/// Every candidate passing `filter`, walking pages of `limit` by their cursors.
async fn listed(
    store: &Arc<dyn Store>,
    tenant: TenantId,
    filter: &CandidateFilter,
    limit: u32,
) -> Vec<DiscoveryCandidate> {
    all_pages(limit, |c: &DiscoveryCandidate| c.id.0, async |req| store.list_candidates(tenant, filter, &req).await)
        .await
}

pub async fn discovery_events_round_trip_every_field(store: Arc<dyn Store>) {
    let a = tenant(&store, "a-de-rt").await;
    let b = tenant(&store, "b-de-rt").await;
    let shadow = new_discovery_event(a, Shadow, 1);
    let mut every = new_discovery_event(a, Shadow, 2);
    every.attributed_agent_id = Some(agentgov_domain::ids::AgentId(Uuid::now_v7()));
    every.candidate_id = Some(CandidateId(Uuid::now_v7()));
    every.observed_at = precise(-5, 999_999);
    let bare = DiscoveryEvent {
        host: None,
        ip: None,
        user_agent: None,
        process: None,
        endpoint: None,
        model: None,
        tool_calls: Vec::new(),
        api_key_fingerprint: None,
        agent_id: None,
        attributes: JsonObject::new(),
        attributed_agent_id: None,
        candidate_id: None,
        ..new_discovery_event(a, Shadow, 3)
    };
    let attributed = new_discovery_event(a, Attributed, 4);
    let suppressed = new_discovery_event(a, Suppressed, 5);
    let of_b = new_discovery_event(b, Shadow, 6);
    let all = [shadow.clone(), every.clone(), bare.clone(), attributed.clone(), suppressed.clone(), of_b.clone()];
    store.insert_discovery_events(&all).await.unwrap();

    assert_eq!(store.scan_shadow_events(a, None, 100).await.unwrap(), [shadow, every, bare]);
    let got = store.get_discovery_events(a, &event_ids(&all)).await.unwrap();
    assert_eq!(by_id(got, |e| e.id.0), all[..5], "every field as stored");
    let got = store.get_discovery_events(a, &[attributed.id]).await.unwrap();
    assert_eq!(got.first().map(|e| (e.tenant_id, e.attributed_agent_id)), Some((a, attributed.attributed_agent_id)));
    assert_eq!(store.scan_shadow_events(b, None, 100).await.unwrap(), std::slice::from_ref(&of_b));
    assert_eq!(store.get_discovery_events(b, &[of_b.id]).await.unwrap().first().map(|e| e.tenant_id), Some(b));
}

pub async fn discovery_shadow_scans_are_ascending_keyset_pages_of_one_tenant(store: Arc<dyn Store>) {
    let a = tenant(&store, "a-ds-scan").await;
    let b = tenant(&store, "b-ds-scan").await;
    let dispositions = [Shadow, Attributed, Shadow, Suppressed, Shadow, Shadow, Attributed, Shadow, Suppressed];
    let mut of_a = Vec::new();
    let mut of_b = Vec::new();
    for (i, d) in dispositions.into_iter().enumerate() {
        of_a.push(new_discovery_event(a, d, u8::try_from(i).unwrap()));
        // b's events interleave a's by id.
        of_b.push(new_discovery_event(b, if i % 2 == 0 { Shadow } else { Suppressed }, 50));
    }
    // Inserted newest first and in two batches: scans go by id, not by insertion.
    let mut batch: Vec<DiscoveryEvent> = of_a.iter().chain(&of_b).cloned().collect();
    batch.reverse();
    let (first, second) = batch.split_at(7);
    store.insert_discovery_events(second).await.unwrap();
    store.insert_discovery_events(first).await.unwrap();

    let shadows: Vec<DiscoveryEvent> = of_a.iter().filter(|e| e.disposition == Shadow).cloned().collect();
    assert_eq!(shadows.len(), 5);
    assert_eq!(store.scan_shadow_events(a, None, 100).await.unwrap(), shadows, "only shadow, ascending id");
    assert_eq!(store.scan_shadow_events(a, None, 2).await.unwrap(), shadows[..2]);
    assert_eq!(store.scan_shadow_events(a, Some(shadows[1].id), 2).await.unwrap(), shadows[2..4]);
    assert_eq!(store.scan_shadow_events(a, Some(shadows[3].id), 2).await.unwrap(), shadows[4..]);
    assert!(store.scan_shadow_events(a, Some(shadows[4].id), 100).await.unwrap().is_empty());
    assert_eq!(
        store.scan_shadow_events(a, Some(of_a[1].id), 100).await.unwrap(),
        shadows[1..],
        "after any id, not only a shadow one"
    );
    assert!(store.scan_shadow_events(a, None, 0).await.unwrap().is_empty());

    let b_shadows: Vec<DiscoveryEvent> = of_b.iter().filter(|e| e.disposition == Shadow).cloned().collect();
    assert_eq!(store.scan_shadow_events(b, None, 100).await.unwrap(), b_shadows);
    assert_eq!(store.scan_shadow_events(b, Some(of_a[0].id), 1).await.unwrap(), b_shadows[..1]);
    assert!(store.scan_shadow_events(TenantId(Uuid::now_v7()), None, 100).await.unwrap().is_empty());
}

pub async fn discovery_event_batches_are_all_or_nothing(store: Arc<dyn Store>) {
    let a = tenant(&store, "a-db-batch").await;
    let b = tenant(&store, "b-db-batch").await;
    store.insert_discovery_events(&[]).await.unwrap();
    let kept = new_discovery_event(a, Shadow, 1);
    store.insert_discovery_events(std::slice::from_ref(&kept)).await.unwrap();

    let fresh = new_discovery_event(a, Shadow, 2);
    let other = new_discovery_event(b, Attributed, 3);
    let orphan = new_discovery_event(TenantId(Uuid::now_v7()), Shadow, 4);
    let refused = store.insert_discovery_events(&[fresh.clone(), other.clone(), orphan]).await;
    assert!(is_conflict_ref(&refused), "the tenant must exist: {refused:?}");
    let taken = DiscoveryEvent { tenant_id: b, ..new_discovery_event(b, Shadow, 5) };
    let taken = DiscoveryEvent { id: kept.id, ..taken };
    assert!(is_conflict(store.insert_discovery_events(&[fresh.clone(), other.clone(), taken]).await), "id taken");
    assert!(
        is_conflict(store.insert_discovery_events(&[fresh.clone(), other.clone(), fresh.clone()]).await),
        "an id twice in one batch"
    );

    assert_eq!(
        store.scan_shadow_events(a, None, 100).await.unwrap(),
        std::slice::from_ref(&kept),
        "nothing of the batches"
    );
    assert!(store.get_discovery_events(a, &[fresh.id]).await.unwrap().is_empty());
    assert!(store.get_discovery_events(b, &[other.id]).await.unwrap().is_empty());

    store.insert_discovery_events(&[fresh.clone(), other.clone()]).await.unwrap();
    assert_eq!(store.scan_shadow_events(a, None, 100).await.unwrap(), [kept, fresh]);
    assert_eq!(store.get_discovery_events(b, &[other.id]).await.unwrap(), [other]);
}

pub async fn discovery_event_lookups_are_tenant_scoped(store: Arc<dyn Store>) {
    let a = tenant(&store, "a-dl-get").await;
    let b = tenant(&store, "b-dl-get").await;
    let a1 = new_discovery_event(a, Shadow, 1);
    let a2 = new_discovery_event(a, Suppressed, 2);
    let b1 = new_discovery_event(b, Shadow, 3);
    store.insert_discovery_events(&[a1.clone(), a2.clone(), b1.clone()]).await.unwrap();

    let unknown = DiscoveryEventId(Uuid::now_v7());
    let got = store.get_discovery_events(a, &[a2.id, unknown, b1.id, a1.id]).await.unwrap();
    assert_eq!(by_id(got, |e| e.id.0), [a1.clone(), a2.clone()], "unknown ids and b's are skipped");
    assert!(store.get_discovery_events(a, &[]).await.unwrap().is_empty());
    assert!(store.get_discovery_events(a, &[unknown]).await.unwrap().is_empty());
    assert!(store.get_discovery_events(b, &[a1.id, a2.id]).await.unwrap().is_empty());
    assert_eq!(store.get_discovery_events(b, &[a1.id, b1.id]).await.unwrap(), [b1]);
}

pub async fn discovery_candidates_round_trip_every_field(store: Arc<dyn Store>) {
    let a = tenant(&store, "a-dc-rt").await;
    let b = tenant(&store, "b-dc-rt").await;
    let full = new_candidate(a, Pending, 1);
    let bare = DiscoveryCandidate {
        capabilities: Vec::new(),
        fingerprint: Fingerprint::default(),
        sample_events: Vec::new(),
        job_id: None,
        ..new_candidate(a, Pending, 2)
    };
    let inserted = cluster(&store, a, vec![full.clone(), bare.clone()], Vec::new()).await;
    assert_eq!(sorted(inserted), sorted(vec![full.id, bare.id]), "answers exactly the new ones");

    assert_eq!(store.get_candidate(a, full.id).await.unwrap(), Some(full.clone()));
    assert_eq!(store.get_candidate(a, bare.id).await.unwrap(), Some(bare.clone()));
    assert_eq!(store.get_candidate(b, full.id).await.unwrap(), None, "other tenants' are absent");
    assert_eq!(store.get_candidate(a, CandidateId(Uuid::now_v7())).await.unwrap(), None);

    // Decided: the optional fields set.
    let confirmed = DiscoveryCandidate { id: full.id, ..new_candidate(a, Confirmed, 3) };
    assert!(store.update_candidate(&confirmed, Pending).await.unwrap());
    assert_eq!(store.get_candidate(a, full.id).await.unwrap(), Some(confirmed));
    let dismissed = DiscoveryCandidate { id: bare.id, ..new_candidate(a, Dismissed, 4) };
    assert!(store.update_candidate(&dismissed, Pending).await.unwrap());
    assert_eq!(store.get_candidate(a, bare.id).await.unwrap(), Some(dismissed));
}

pub async fn discovery_candidate_lists_page_newest_first_and_filter_by_status(store: Arc<dyn Store>) {
    let a = tenant(&store, "a-dp-list").await;
    let b = tenant(&store, "b-dp-list").await;
    let made = candidates(&store, a, &[Pending, Confirmed, Pending, Dismissed, Pending, Confirmed, Pending]).await;
    let of_b = candidates(&store, b, &[Pending]).await;

    let newest_first: Vec<DiscoveryCandidate> = made.iter().rev().cloned().collect();
    for limit in [1, 2, 3, 7, 50] {
        assert_eq!(listed(&store, a, &CandidateFilter::default(), limit).await, newest_first, "limit {limit}");
    }
    let page = store.list_candidates(a, &CandidateFilter::default(), &PageRequest::first(7)).await.unwrap();
    assert_eq!((page.items.len(), page.next_cursor), (7, None), "an exact last page has no cursor");

    let with = |status| CandidateFilter { status: Some(status) };
    let status_of = |s: CandidateStatus| newest_first.iter().filter(|c| c.status == s).cloned().collect::<Vec<_>>();
    assert_eq!(listed(&store, a, &with(Pending), 2).await, status_of(Pending));
    assert_eq!(listed(&store, a, &with(Confirmed), 1).await, status_of(Confirmed));
    assert_eq!(listed(&store, a, &with(Dismissed), 2).await, status_of(Dismissed));

    assert_eq!(listed(&store, b, &CandidateFilter::default(), 2).await, of_b);
    assert!(listed(&store, b, &with(Confirmed), 2).await.is_empty());
    assert!(listed(&store, TenantId(Uuid::now_v7()), &CandidateFilter::default(), 2).await.is_empty());
}

pub async fn discovery_candidate_update_applies_only_from_the_expected_status(store: Arc<dyn Store>) {
    let a = tenant(&store, "a-du-upd").await;
    let b = tenant(&store, "b-du-upd").await;
    let [original] = candidates(&store, a, &[Pending]).await.try_into().unwrap();

    // Every field but id and tenant differs.
    let dismissed = DiscoveryCandidate { id: original.id, ..new_candidate(a, Dismissed, 9) };
    assert!(store.update_candidate(&dismissed, Pending).await.unwrap());
    assert_eq!(store.get_candidate(a, original.id).await.unwrap(), Some(dismissed.clone()));

    // Decided meanwhile: a stale expectation changes nothing.
    let confirmed = DiscoveryCandidate { id: original.id, ..new_candidate(a, Confirmed, 10) };
    assert!(!store.update_candidate(&confirmed, Pending).await.unwrap());
    assert!(!store.update_candidate(&confirmed, Confirmed).await.unwrap());
    assert_eq!(store.get_candidate(a, original.id).await.unwrap(), Some(dismissed.clone()));

    // Any transition from the expected status, back to pending included.
    let reopened = DiscoveryCandidate { id: original.id, ..new_candidate(a, Pending, 11) };
    assert!(store.update_candidate(&reopened, Dismissed).await.unwrap());
    assert_eq!(store.get_candidate(a, original.id).await.unwrap(), Some(reopened.clone()));

    let absent = new_candidate(a, Confirmed, 12);
    let r = store.update_candidate(&absent, Pending).await;
    assert!(is_not_found(&r), "{r:?}");
    assert_eq!(store.get_candidate(a, absent.id).await.unwrap(), None, "not inserted");
    let foreign = DiscoveryCandidate { tenant_id: b, ..confirmed };
    let r = store.update_candidate(&foreign, Pending).await;
    assert!(is_not_found(&r), "another tenant's candidate is absent: {r:?}");
    assert_eq!(store.get_candidate(a, original.id).await.unwrap(), Some(reopened));
    assert_eq!(store.get_candidate(b, original.id).await.unwrap(), None);
}

pub async fn discovery_decided_candidates_are_the_tenants_confirmed_and_dismissed(store: Arc<dyn Store>) {
    let a = tenant(&store, "a-dd-dec").await;
    let b = tenant(&store, "b-dd-dec").await;
    assert!(store.decided_candidates(a).await.unwrap().is_empty());
    let of_a = candidates(&store, a, &[Pending, Confirmed, Dismissed, Pending, Confirmed]).await;
    let of_b = candidates(&store, b, &[Dismissed, Pending]).await;

    let decided = |all: &[DiscoveryCandidate]| all.iter().filter(|c| c.status != Pending).cloned().collect::<Vec<_>>();
    assert_eq!(by_id(store.decided_candidates(a).await.unwrap(), |c| c.id.0), decided(&of_a));
    assert_eq!(store.decided_candidates(b).await.unwrap(), decided(&of_b));
    assert!(store.decided_candidates(TenantId(Uuid::now_v7())).await.unwrap().is_empty());
}

pub async fn discovery_complete_writes_the_candidates_and_completes_the_job(store: Arc<dyn Store>) {
    let a = tenant(&store, "dc-done").await;
    let [replaced, removed, confirmed, dismissed, kept] = <[DiscoveryCandidate; 5]>::try_from(
        candidates(&store, a, &[Pending, Pending, Pending, Pending, Pending]).await,
    )
    .unwrap();

    let t0 = precise(20, 1);
    let (job, token) = claimed(&store, a, t0).await;
    store.progress_cluster_job(job.id, token, 0.75, t0 + LEASE).await.unwrap();
    // Users decide two of them while the job runs.
    let confirmed = DiscoveryCandidate { id: confirmed.id, ..new_candidate(a, Confirmed, 30) };
    assert!(store.update_candidate(&confirmed, Pending).await.unwrap());
    let dismissed = DiscoveryCandidate { id: dismissed.id, ..new_candidate(a, Dismissed, 31) };
    assert!(store.update_candidate(&dismissed, Pending).await.unwrap());

    let fresh = new_candidate(a, Pending, 40);
    let replacement = DiscoveryCandidate { id: replaced.id, job_id: Some(job.id), ..new_candidate(a, Pending, 41) };
    let stale = DiscoveryCandidate { id: confirmed.id, ..new_candidate(a, Pending, 42) };
    let unknown = CandidateId(Uuid::now_v7());
    let result = outcome(vec![stale, replacement.clone(), fresh.clone()], vec![removed.id, dismissed.id, unknown], 7);
    let done_at = precise(21, 999_999);
    let inserted = store.complete_cluster_job(job.id, token, done_at, &result).await.unwrap();
    assert_eq!(inserted, [fresh.id], "exactly the new ones");

    assert_eq!(store.get_candidate(a, fresh.id).await.unwrap(), Some(fresh.clone()), "inserted");
    assert_eq!(store.get_candidate(a, replaced.id).await.unwrap(), Some(replacement.clone()), "pending: replaced");
    assert_eq!(store.get_candidate(a, confirmed.id).await.unwrap(), Some(confirmed.clone()), "decided: left as is");
    assert_eq!(store.get_candidate(a, removed.id).await.unwrap(), None, "pending: deleted");
    assert_eq!(store.get_candidate(a, dismissed.id).await.unwrap(), Some(dismissed.clone()), "decided: kept");
    assert_eq!(store.get_candidate(a, unknown).await.unwrap(), None);
    assert_eq!(
        listed(&store, a, &CandidateFilter::default(), 10).await,
        [fresh, kept, dismissed, confirmed, replacement],
        "nothing else changed"
    );

    let expected = ClusterJob {
        status: JobStatus::Completed,
        progress: 1.0,
        summary: Some(summary(7)),
        finished_at: Some(done_at),
        lease: None,
        ..job.clone()
    };
    assert_eq!(store.get_cluster_job(a, job.id).await.unwrap(), Some(expected.clone()));
    assert_eq!(store.active_cluster_job(a).await.unwrap(), None);

    // Once completed, the job is no longer held: nothing more is written.
    let again = store
        .complete_cluster_job(job.id, token, done_at, &outcome(vec![new_candidate(a, Pending, 50)], vec![], 8))
        .await;
    assert!(is_conflict_ref(&again), "{again:?}");
    assert!(is_conflict(store.progress_cluster_job(job.id, token, 0.5, t0 + LEASE).await));
    assert!(is_conflict(store.fail_cluster_job(job.id, token, done_at, "late").await));
    assert_eq!(store.get_cluster_job(a, job.id).await.unwrap(), Some(expected));
    assert_eq!(listed(&store, a, &CandidateFilter::default(), 10).await.len(), 5);
    assert_eq!(store.claim_cluster_job(done_at + LEASE * 10, Uuid::now_v7(), done_at).await.unwrap(), None);

    // A new job may follow.
    store.insert_cluster_job(&new_cluster_job(a)).await.unwrap();
}

pub async fn discovery_complete_without_the_lease_writes_nothing(store: Arc<dyn Store>) {
    let a = tenant(&store, "dx-nolease").await;
    let [pending, doomed] =
        <[DiscoveryCandidate; 2]>::try_from(candidates(&store, a, &[Pending, Pending]).await).unwrap();
    let before = listed(&store, a, &CandidateFilter::default(), 10).await;

    let t0 = now();
    let (job, stale) = claimed(&store, a, t0).await;
    let fresh = new_candidate(a, Pending, 20);
    let replacement = DiscoveryCandidate { id: pending.id, ..new_candidate(a, Pending, 21) };
    let result = outcome(vec![fresh.clone(), replacement], vec![doomed.id], 3);

    // Another worker claimed it after the lease ended.
    let t1 = t0 + LEASE + Duration::from_secs(1);
    let current = Uuid::now_v7();
    let running = store.claim_cluster_job(t1, current, t1 + LEASE).await.unwrap().unwrap();
    assert!(is_conflict(store.complete_cluster_job(job.id, stale, t1, &result).await), "a lost lease");
    assert!(is_conflict(store.complete_cluster_job(ClusterJobId(Uuid::now_v7()), current, t1, &result).await));
    assert_eq!(listed(&store, a, &CandidateFilter::default(), 10).await, before, "no candidate written");
    assert_eq!(store.get_cluster_job(a, job.id).await.unwrap(), Some(running.clone()), "the job unchanged");

    // Failed, it can no longer complete.
    let failed_at = precise(30, 7);
    store.fail_cluster_job(job.id, current, failed_at, "clustering diverged: 0 of 3 ✗").await.unwrap();
    let expected = ClusterJob {
        status: JobStatus::Failed,
        error: Some("clustering diverged: 0 of 3 ✗".to_owned()),
        finished_at: Some(failed_at),
        lease: None,
        ..running
    };
    assert_eq!(store.get_cluster_job(a, job.id).await.unwrap(), Some(expected.clone()));
    assert_eq!(store.active_cluster_job(a).await.unwrap(), None);
    let late = store.complete_cluster_job(job.id, current, failed_at, &result).await;
    assert!(is_conflict_ref(&late), "{late:?}");
    assert!(is_conflict(store.fail_cluster_job(job.id, current, failed_at, "again").await));
    assert_eq!(listed(&store, a, &CandidateFilter::default(), 10).await, before, "no candidate written");
    assert_eq!(store.get_candidate(a, fresh.id).await.unwrap(), None);
    assert_eq!(store.get_cluster_job(a, job.id).await.unwrap(), Some(expected));
    assert_eq!(store.claim_cluster_job(failed_at + LEASE * 10, Uuid::now_v7(), failed_at).await.unwrap(), None);
}

pub async fn discovery_jobs_leave_other_tenants_candidates_alone(store: Arc<dyn Store>) {
    let a = tenant(&store, "a-di-iso").await;
    let b = tenant(&store, "b-di-iso").await;
    let [theirs] = <[DiscoveryCandidate; 1]>::try_from(candidates(&store, b, &[Pending]).await).unwrap();

    // a's job names b's pending candidate: it neither replaces nor deletes it.
    let at = now();
    let (job, token) = claimed(&store, a, at).await;
    let clash = DiscoveryCandidate { id: theirs.id, ..new_candidate(a, Pending, 60) };
    let result = store.complete_cluster_job(job.id, token, at, &outcome(vec![clash], vec![theirs.id], 1)).await;
    match &result {
        Ok(inserted) => assert!(inserted.is_empty(), "{inserted:?}"),
        Err(e) => assert!(matches!(e, DomainError::Conflict(_)), "{e:?}"),
    }
    assert_eq!(store.get_candidate(a, theirs.id).await.unwrap(), None);
    assert!(listed(&store, a, &CandidateFilter::default(), 10).await.is_empty());
    assert_eq!(store.get_candidate(b, theirs.id).await.unwrap(), Some(theirs));
}
