//! SIEM forwarding against the in-memory store and a recording sink.

use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};

use async_trait::async_trait;

use super::*;
use crate::ids::TenantId;
use crate::model::AuditEntry;
use crate::ports::SiemSink;
use crate::ports::{AuditRepo, SiemRepo};
use crate::services::tests::{Harness, harness};

/// A sink that keeps what it is sent, and can be made to refuse.
#[derive(Default)]
struct Recorder {
    got: Mutex<Vec<AuditRecord>>,
    down: AtomicBool,
}

impl Recorder {
    fn got(&self) -> Vec<AuditRecord> {
        self.got.lock().unwrap().clone()
    }

    fn seqs(&self, tenant: TenantId) -> Vec<i64> {
        self.got().iter().filter(|r| r.tenant_id == tenant).map(|r| r.seq).collect()
    }
}

#[async_trait]
impl SiemSink for Recorder {
    fn kind(&self) -> &'static str {
        "syslog-tcp"
    }
    fn destination(&self) -> String {
        "siem.example:6514".into()
    }
    fn format(&self) -> &'static str {
        "cef"
    }
    async fn send(&self, records: &[AuditRecord]) -> Result<()> {
        if self.down.load(Ordering::SeqCst) {
            return Err(DomainError::Unavailable("syslog receiver siem.example:6514".into()));
        }
        self.got.lock().unwrap().extend_from_slice(records);
        Ok(())
    }
}

fn route(name: &str, sink: &Arc<Recorder>, filter: SiemFilter) -> SiemRoute {
    SiemRoute { name: name.into(), sink: sink.clone(), filter, from_latest: false }
}

fn settings() -> SiemSettings {
    SiemSettings { batch: 3, ..SiemSettings::default() }
}

fn service(h: &Harness, routes: Vec<SiemRoute>) -> SiemService {
    SiemService::new(h.ports.clone(), Repos::of(&(h.store.clone() as Arc<dyn crate::ports::Store>)), routes, settings())
}

/// Appends `n` records of `event_type` to the tenant's log.
async fn append(h: &Harness, tenant: TenantId, n: usize, event_type: &str, decision: Option<&str>) {
    let entries = (0..n)
        .map(|i| AuditEntry {
            id: AuditId(h.ports.ids.new_id()),
            tenant_id: tenant,
            timestamp: crate::ports::Clock::now(h.clock.as_ref()),
            actor: Actor::new(ActorType::ApiKey, "k1"),
            event_type: event_type.into(),
            agent_id: None,
            action: Some("read".into()),
            resource: Some(format!("doc/{i}")),
            decision: decision.map(str::to_owned),
            risk_score: None,
            details: JsonText::from_value(&serde_json::json!({"i": i})),
            session_id: None,
        })
        .collect();
    h.store.append_audit(entries).await.unwrap();
}

async fn head(h: &Harness, tenant: TenantId) -> i64 {
    h.store.audit_head(tenant).await.unwrap().map_or(0, |c| c.seq)
}

/// Steps until the forwarder is idle (or fails), answering the last step.
async fn drain(svc: &SiemService, route: &SiemRoute, state: &mut Forwarder) -> Step {
    for _ in 0..1000 {
        match svc.step(route, state).await.unwrap() {
            Step::Progressed => continue,
            other => return other,
        }
    }
    panic!("never idle")
}

#[tokio::test]
async fn every_record_of_every_tenant_is_forwarded_in_order_and_the_queue_empties() {
    let h = harness();
    let (a, b) = (h.tenant("acme").await.tenant.tenant.id, h.tenant("bravo").await.tenant.tenant.id);
    append(&h, a, 7, "agent.action", None).await;
    append(&h, b, 2, "agent.action", None).await;
    let sink = Arc::new(Recorder::default());
    let r = route("soc", &sink, SiemFilter::default());
    let svc = service(&h, vec![r.clone()]);
    let admin = Operator::AdminKey;
    let before = svc.status(&admin).await.unwrap();
    assert_eq!(before.sinks[0].queue_depth as i64, head(&h, a).await + head(&h, b).await);

    assert_eq!(drain(&svc, &r, &mut Forwarder::default()).await, Step::Idle);
    for t in [a, b] {
        assert_eq!(sink.seqs(t), (1..=head(&h, t).await).collect::<Vec<_>>(), "every record, in order");
    }
    let status = svc.status(&admin).await.unwrap();
    let s = &status.sinks[0];
    assert!(status.enabled);
    assert_eq!(
        (s.name.as_str(), s.kind, s.format, s.destination.as_deref().unwrap()),
        ("soc", "syslog-tcp", "cef", "siem.example:6514")
    );
    assert_eq!(s.queue_depth, 0);
    assert_eq!(s.forwarded_total, Some(sink.got().len() as u64));
    assert_eq!((s.failed_total, s.last_error.as_deref()), (Some(0), None));
    assert!(s.last_success_at.is_some());

    // New records later: only they are sent.
    append(&h, b, 4, "agent.action", None).await;
    let mut state = Forwarder::default();
    drain(&svc, &r, &mut state).await;
    assert_eq!(sink.seqs(b), (1..=head(&h, b).await).collect::<Vec<_>>(), "no duplicates, no gaps");
}

#[tokio::test]
async fn filters_pass_records_over_without_stalling_the_cursor() {
    let h = harness();
    let a = h.tenant("acme").await.tenant.tenant.id;
    append(&h, a, 3, "agent.action", None).await;
    append(&h, a, 2, "policy.decision", Some("deny")).await;
    append(&h, a, 2, "policy.decision", Some("allow")).await;
    let denials = Arc::new(Recorder::default());
    let policy = Arc::new(Recorder::default());
    let severe = route("severe", &denials, SiemFilter { event_types: vec![], min_severity: 7 });
    let decisions = route("decisions", &policy, SiemFilter { event_types: vec!["policy.*".into()], min_severity: 0 });
    let svc = service(&h, vec![severe.clone(), decisions.clone()]);
    drain(&svc, &severe, &mut Forwarder::default()).await;
    drain(&svc, &decisions, &mut Forwarder::default()).await;
    assert!(denials.got().iter().all(|r| r.decision.as_deref() == Some("deny")));
    assert_eq!(denials.got().len(), 2);
    assert_eq!(policy.got().len(), 4);
    let status = svc.status(&Operator::AdminKey).await.unwrap();
    assert!(status.sinks.iter().all(|s| s.queue_depth == 0), "passed-over records are not a queue");
    assert_eq!(status.sinks[0].forwarded_total, Some(2));
    assert_eq!(status.sinks[0].min_severity, 7);
    assert_eq!(status.sinks[1].event_types, ["policy.*"]);
    let exact = SiemFilter { event_types: vec!["agent.action".into()], min_severity: 0 };
    let mut record = denials.got()[0].clone();
    assert!(!exact.matches(&record));
    record.event_type = "agent.action".into();
    assert!(exact.matches(&record));
}

#[tokio::test]
async fn a_sink_that_is_down_keeps_its_queue_and_gets_everything_once_it_is_back() {
    let h = harness();
    let a = h.tenant("acme").await.tenant.tenant.id;
    let sink = Arc::new(Recorder::default());
    let r = route("soc", &sink, SiemFilter::default());
    let svc = service(&h, vec![r.clone()]);
    let mut state = Forwarder::default();
    drain(&svc, &r, &mut state).await;
    let delivered = sink.got().len();

    sink.down.store(true, Ordering::SeqCst);
    append(&h, a, 5, "agent.action", None).await;
    assert_eq!(svc.step(&r, &mut state).await.unwrap(), Step::Failed);
    assert_eq!(svc.step(&r, &mut state).await.unwrap(), Step::Failed);
    let s = svc.status(&Operator::AdminKey).await.unwrap().sinks.remove(0);
    assert_eq!(s.queue_depth, 5);
    assert_eq!(s.failed_total, Some(6), "two attempts of a batch of three");
    assert!(s.last_error.as_deref().unwrap().contains("unavailable"), "{:?}", s.last_error);
    assert!(s.last_error_at.is_some());
    let backoff = state.backoff(svc.settings());
    assert_eq!(backoff, Duration::from_secs(2), "doubled after the second failure");
    assert_eq!(sink.got().len(), delivered, "nothing sent while down");

    sink.down.store(false, Ordering::SeqCst);
    assert_eq!(drain(&svc, &r, &mut state).await, Step::Idle);
    assert_eq!(sink.seqs(a), (1..=head(&h, a).await).collect::<Vec<_>>());
    assert_eq!(state.backoff(svc.settings()), Duration::from_secs(1), "reset by a success");
    assert_eq!(svc.status(&Operator::AdminKey).await.unwrap().sinks[0].queue_depth, 0);
}

#[test]
fn backoff_doubles_up_to_the_cap() {
    let settings = SiemSettings::default();
    let waits: Vec<u64> =
        (1..=9).map(|failures| Forwarder { failures, ..Forwarder::default() }.backoff(&settings).as_secs()).collect();
    assert_eq!(waits, [1, 2, 4, 8, 16, 32, 60, 60, 60]);
    assert_eq!(Forwarder { failures: u32::MAX, ..Forwarder::default() }.backoff(&settings).as_secs(), 60);
}

#[tokio::test]
async fn one_replica_forwards_a_sink_and_another_takes_over_when_its_lease_runs_out() {
    let h = harness();
    let a = h.tenant("acme").await.tenant.tenant.id;
    let sink = Arc::new(Recorder::default());
    let r = route("soc", &sink, SiemFilter::default());
    let (one, two) = (service(&h, vec![r.clone()]), service(&h, vec![r.clone()]));
    let (mut s1, mut s2) = (Forwarder::default(), Forwarder::default());
    assert_eq!(drain(&one, &r, &mut s1).await, Step::Idle);
    assert_eq!(two.step(&r, &mut s2).await.unwrap(), Step::NotLeader);
    append(&h, a, 2, "agent.action", None).await;
    assert_eq!(two.step(&r, &mut s2).await.unwrap(), Step::NotLeader);
    h.clock.advance(Duration::from_secs(15));
    assert_eq!(drain(&one, &r, &mut s1).await, Step::Idle, "renewed after a third of the lease");
    h.clock.advance(Duration::from_secs(25));
    assert_eq!(two.step(&r, &mut s2).await.unwrap(), Step::NotLeader, "the renewal holds");

    // Replica one dies: after the lease runs out, two takes over where one stopped.
    append(&h, a, 2, "agent.action", None).await;
    h.clock.advance(Duration::from_secs(31));
    assert_eq!(drain(&two, &r, &mut s2).await, Step::Idle);
    assert_eq!(sink.seqs(a), (1..=head(&h, a).await).collect::<Vec<_>>(), "exactly once here");
    assert_eq!(one.step(&r, &mut s1).await.unwrap(), Step::NotLeader);

    // A release hands it over at once.
    two.release(&r, &mut s2).await;
    assert_eq!(one.step(&r, &mut s1).await.unwrap(), Step::Idle);
}

#[tokio::test]
async fn a_sink_configured_from_latest_skips_the_history() {
    let h = harness();
    let a = h.tenant("acme").await.tenant.tenant.id;
    append(&h, a, 4, "agent.action", None).await;
    let sink = Arc::new(Recorder::default());
    let r = SiemRoute { from_latest: true, ..route("new", &sink, SiemFilter::default()) };
    let svc = service(&h, vec![r.clone()]);
    let mut state = Forwarder::default();
    assert_eq!(drain(&svc, &r, &mut state).await, Step::Idle);
    assert!(sink.got().is_empty());
    append(&h, a, 1, "agent.action", None).await;
    let later = h.tenant("later").await.tenant.tenant.id;
    drain(&svc, &r, &mut state).await;
    assert_eq!(sink.seqs(a), [head(&h, a).await]);
    assert_eq!(sink.seqs(later), (1..=head(&h, later).await).collect::<Vec<_>>(), "a new tenant from its start");
    // Registered once: a restart with the same name does not skip what came meanwhile.
    append(&h, a, 1, "agent.action", None).await;
    let restarted = service(&h, vec![r.clone()]);
    h.clock.advance(Duration::from_secs(31));
    drain(&restarted, &r, &mut Forwarder::default()).await;
    assert_eq!(sink.seqs(a).len(), 2);
    assert!(!h.store.register_siem_sink("new", true, crate::ports::Clock::now(h.clock.as_ref())).await.unwrap());
}

#[tokio::test]
async fn only_a_super_admin_session_or_the_admin_key_may_see_and_test() {
    let h = harness();
    let t = h.tenant("acme").await;
    let (_, admin) = h.login(&t.admin_user.email).await;
    let analyst = h.user(&admin, "ann@acme.test", Role::Analyst).await;
    h.user(&admin, "root@acme.test", Role::Admin).await;
    let promoted = h.svc.users.set_role_as_operator("Root@acme.test", Role::SuperAdmin, "cli").await.unwrap();
    assert_eq!(promoted.role, Role::SuperAdmin);
    let root = h.login("root@acme.test").await.1;
    assert_eq!(root.role(), Role::SuperAdmin);
    let root_key = h.svc.auth.authenticate_api_key(&t.api_key).await.unwrap();
    let sink = Arc::new(Recorder::default());
    let svc = service(&h, vec![route("soc", &sink, SiemFilter::default())]);
    for who in [analyst, admin, root_key].map(|c| Operator::User(Box::new(c))) {
        assert!(matches!(svc.status(&who).await, Err(DomainError::Forbidden(_))));
        assert!(matches!(svc.test(&who).await, Err(DomainError::Forbidden(_))));
    }
    assert!(svc.status(&Operator::User(Box::new(root.clone()))).await.is_ok());
    let report = svc.test(&Operator::User(Box::new(root.clone()))).await.unwrap();
    assert!(report.results[0].ok);
    let sent = sink.got();
    assert_eq!(sent.len(), 1);
    assert_eq!(
        (sent[0].event_type.as_str(), sent[0].id.0, sent[0].tenant_id),
        ("siem.test", report.event_id, t.tenant.tenant.id)
    );
    assert_eq!(sent[0].actor.id, root.user.id.to_string());
    assert!(svc.test(&Operator::AdminKey).await.is_ok());
}

#[tokio::test]
async fn the_test_event_reports_each_sink_and_none_configured_is_a_conflict() {
    let h = harness();
    let (up, down) = (Arc::new(Recorder::default()), Arc::new(Recorder::default()));
    down.down.store(true, Ordering::SeqCst);
    let svc = service(
        &h,
        vec![
            route("up", &up, SiemFilter::default()),
            route("down", &down, SiemFilter { min_severity: 10, ..SiemFilter::default() }),
        ],
    );
    let report = svc.test(&Operator::AdminKey).await.unwrap();
    assert_eq!(report.results.len(), 2);
    assert!(report.results[0].ok && report.results[0].error.is_none());
    assert!(!report.results[1].ok);
    assert!(report.results[1].error.as_deref().unwrap().contains("unavailable"));
    assert_eq!(up.got()[0].tenant_id, TenantId(Uuid::nil()), "the admin key has no tenant");
    assert_eq!(up.got()[0].actor.kind, ActorType::System);
    let status = svc.status(&Operator::AdminKey).await.unwrap();
    assert_eq!(status.sinks[1].failed_total, Some(0), "a test is not part of the totals");

    let none = service(&h, vec![]);
    assert!(!none.status(&Operator::AdminKey).await.unwrap().enabled);
    assert!(matches!(none.test(&Operator::AdminKey).await, Err(DomainError::Conflict(_))));
}
