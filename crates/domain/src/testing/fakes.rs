//! Small fakes of the cache, bus, clock, id and policy ports.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use async_trait::async_trait;
use time::OffsetDateTime;
use uuid::Uuid;

use crate::error::{DomainError, Result};
use crate::ports::{
    Cache, Clock, CompiledPolicies, Counter, Event, EventBus, EventStream, IdGen, PolicyEngine, PolicyInput,
    PolicyModule, PolicyOutcome, RegoDiagnostic, Telemetry, TraceContext,
};

/// A clock that only moves when told to.
#[derive(Debug)]
pub struct FixedClock(Mutex<OffsetDateTime>);

impl FixedClock {
    pub fn new(at: OffsetDateTime) -> Self {
        Self(Mutex::new(crate::ports::clock::truncate_to_micros(at)))
    }

    pub fn advance(&self, by: Duration) {
        let mut t = self.0.lock().unwrap_or_else(|e| e.into_inner());
        *t += by;
    }
}

impl Default for FixedClock {
    fn default() -> Self {
        Self::new(OffsetDateTime::from_unix_timestamp(1_790_000_000).unwrap_or(OffsetDateTime::UNIX_EPOCH))
    }
}

impl Clock for FixedClock {
    fn now(&self) -> OffsetDateTime {
        *self.0.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// UUID v7-shaped ids that increase by one each call, so order is deterministic.
#[derive(Debug, Default)]
pub struct SeqIds(AtomicU64);

impl IdGen for SeqIds {
    fn new_id(&self) -> Uuid {
        let n = self.0.fetch_add(1, Ordering::SeqCst) + 1;
        uuid::Builder::from_unix_timestamp_millis(1_790_000_000_000 + n, &[0; 10]).into_uuid()
    }
}

/// An in-memory cache that keeps every promise of the `Cache` port (entries, counters and
/// places expire after their TTL, by the wall clock), so it passes the same conformance
/// suite as the real adapters; it can also be made to fail as a dead Redis would.
#[derive(Debug, Default)]
pub struct FakeCache {
    values: Mutex<HashMap<String, (Vec<u8>, Instant)>>,
    counters: Mutex<HashMap<String, (u64, Instant)>>,
    places: Mutex<HashMap<String, HashMap<String, Instant>>>,
    maxima: Mutex<HashMap<String, Members>>,
    down: std::sync::atomic::AtomicBool,
}

/// The members of a `raise`d key with their values, and the key's deadline.
type Members = (HashMap<String, i64>, Instant);

/// Longest TTL kept (as the real adapters cap it): `Instant` arithmetic cannot overflow.
const MAX_TTL: Duration = Duration::from_secs(10 * 365 * 24 * 3600);

fn deadline(ttl: Duration) -> Instant {
    Instant::now() + ttl.min(MAX_TTL)
}

impl FakeCache {
    /// Makes every call answer `Unavailable`, as a dead Redis would.
    pub fn set_down(&self, down: bool) {
        self.down.store(down, Ordering::SeqCst);
    }

    fn up(&self) -> Result<()> {
        if self.down.load(Ordering::SeqCst) { Err(DomainError::Unavailable("cache".into())) } else { Ok(()) }
    }

    fn values(&self) -> std::sync::MutexGuard<'_, HashMap<String, (Vec<u8>, Instant)>> {
        let mut values = self.values.lock().unwrap_or_else(|e| e.into_inner());
        let now = Instant::now();
        values.retain(|_, (_, until)| *until > now);
        values
    }

    fn counters(&self) -> std::sync::MutexGuard<'_, HashMap<String, (u64, Instant)>> {
        let mut counters = self.counters.lock().unwrap_or_else(|e| e.into_inner());
        let now = Instant::now();
        counters.retain(|_, (_, until)| *until > now);
        counters
    }

    fn live_maxima(&self) -> std::sync::MutexGuard<'_, HashMap<String, Members>> {
        let mut maxima = self.maxima.lock().unwrap_or_else(|e| e.into_inner());
        let now = Instant::now();
        maxima.retain(|_, (_, until)| *until > now);
        maxima
    }
}

fn counter((count, until): (u64, Instant)) -> Counter {
    Counter { count, ttl: until.saturating_duration_since(Instant::now()) }
}

#[async_trait]
impl Cache for FakeCache {
    async fn get(&self, key: &str) -> Result<Option<Vec<u8>>> {
        self.up()?;
        Ok(self.values().get(key).map(|(v, _)| v.clone()))
    }
    async fn set(&self, key: &str, value: &[u8], ttl: Duration) -> Result<()> {
        self.up()?;
        self.values().insert(key.to_owned(), (value.to_vec(), deadline(ttl)));
        Ok(())
    }
    async fn delete(&self, key: &str) -> Result<()> {
        self.up()?;
        self.values().remove(key);
        self.counters().remove(key);
        self.live_maxima().remove(key);
        Ok(())
    }
    async fn take(&self, key: &str) -> Result<Option<Vec<u8>>> {
        self.up()?;
        Ok(self.values().remove(key).map(|(v, _)| v))
    }
    async fn incr(&self, key: &str, window: Duration) -> Result<Counter> {
        self.up()?;
        let mut counters = self.counters();
        // The window is fixed at the first increment.
        let c = counters.entry(key.to_owned()).or_insert((0, deadline(window)));
        c.0 += 1;
        Ok(counter(*c))
    }
    async fn decr(&self, key: &str) -> Result<()> {
        self.up()?;
        if let Some(c) = self.counters().get_mut(key) {
            c.0 = c.0.saturating_sub(1);
        }
        Ok(())
    }
    async fn get_counter(&self, key: &str) -> Result<Option<Counter>> {
        self.up()?;
        Ok(self.counters().get(key).copied().map(counter))
    }
    async fn hold_place(&self, key: &str, holder: &str, cap: u64, ttl: Duration) -> Result<bool> {
        self.up()?;
        let now = Instant::now();
        let mut places = self.places.lock().unwrap_or_else(|e| e.into_inner());
        let held = places.entry(key.to_owned()).or_default();
        held.retain(|_, until| *until > now);
        if held.contains_key(holder) || u64::try_from(held.len()).unwrap_or(u64::MAX) < cap {
            held.insert(holder.to_owned(), deadline(ttl));
            return Ok(true);
        }
        Ok(false)
    }
    async fn release_place(&self, key: &str, holder: &str) -> Result<()> {
        self.up()?;
        if let Some(held) = self.places.lock().unwrap_or_else(|e| e.into_inner()).get_mut(key) {
            held.remove(holder);
        }
        Ok(())
    }
    async fn raise(&self, raises: &[crate::ports::Raise], ttl: Duration) -> Result<()> {
        self.up()?;
        let mut maxima = self.live_maxima();
        for r in raises {
            let (members, until) = maxima.entry(r.key.clone()).or_insert_with(|| (HashMap::new(), deadline(ttl)));
            let value = members.entry(r.member.clone()).or_insert(r.value);
            *value = (*value).max(r.value);
            *until = deadline(ttl);
        }
        Ok(())
    }
    async fn maxima(&self, key: &str) -> Result<crate::ports::Maxima> {
        self.up()?;
        let members: Vec<(String, i64)> = self
            .live_maxima()
            .get(key)
            .map(|(m, _)| m.iter().map(|(k, v)| (k.clone(), *v)).collect())
            .unwrap_or_default();
        Ok(if members.len() > crate::ports::MAX_MAXIMA_MEMBERS {
            crate::ports::Maxima::TooMany
        } else {
            crate::ports::Maxima::Members(members)
        })
    }
    async fn revoke_token(&self, jti: &str, ttl: Duration) -> Result<()> {
        self.set(&format!("revoked:{jti}"), b"1", ttl).await
    }
    async fn is_token_revoked(&self, jti: &str) -> Result<bool> {
        Ok(self.get(&format!("revoked:{jti}")).await?.is_some())
    }
    async fn ping(&self) -> Result<()> {
        self.up()
    }
    fn backend(&self) -> &'static str {
        "fake"
    }
}

/// A bus that records what was published (`published`, for the domain's tests) and delivers
/// each event to every subscription open at the time, in order. Clones share one bus, as two
/// replicas on one Redis would.
#[derive(Debug, Default, Clone)]
pub struct FakeBus {
    pub published: Arc<Mutex<Vec<Event>>>,
    subscribers: Arc<Mutex<Vec<futures::channel::mpsc::UnboundedSender<Event>>>>,
}

#[async_trait]
impl EventBus for FakeBus {
    async fn publish(&self, event: &Event) -> Result<()> {
        self.published.lock().unwrap_or_else(|e| e.into_inner()).push(event.clone());
        // A dropped subscription's sender fails and is forgotten.
        self.subscribers.lock().unwrap_or_else(|e| e.into_inner()).retain(|s| s.unbounded_send(event.clone()).is_ok());
        Ok(())
    }
    async fn subscribe(&self) -> Result<EventStream> {
        let (sender, receiver) = futures::channel::mpsc::unbounded();
        self.subscribers.lock().unwrap_or_else(|e| e.into_inner()).push(sender);
        Ok(Box::pin(receiver))
    }
    fn backend(&self) -> &'static str {
        "fake"
    }
}

/// One guardrail run as [`FakeTelemetry`] kept it: its attributes' values, owned.
#[derive(Debug, Clone, PartialEq)]
pub struct RecordedRun {
    pub component: &'static str,
    pub target: &'static str,
    pub subtype: &'static str,
    pub target_id: Option<String>,
    pub verdict: &'static str,
    pub action: &'static str,
    pub reason: Option<&'static str>,
    pub policy_id: Option<String>,
    pub rule_id: Option<String>,
    pub risk_category: Option<&'static str>,
    pub risk_score: Option<f64>,
    pub input: Vec<u8>,
    pub conversation_id: Option<String>,
    pub tenant_id: Uuid,
    pub agent_id: Option<Uuid>,
    pub record_id: Option<Uuid>,
    pub parent: Option<TraceContext>,
}

/// Telemetry that keeps every run it is given (`runs`), for the domain's tests.
#[derive(Debug, Default, Clone)]
pub struct FakeTelemetry {
    pub runs: Arc<Mutex<Vec<RecordedRun>>>,
}

impl FakeTelemetry {
    pub fn take(&self) -> Vec<RecordedRun> {
        std::mem::take(&mut *self.runs.lock().unwrap_or_else(|e| e.into_inner()))
    }
}

impl Telemetry for FakeTelemetry {
    fn enabled(&self) -> bool {
        true
    }
    fn guardrail(&self, run: &crate::ports::GuardrailRun<'_>) {
        let recorded = RecordedRun {
            component: run.component,
            target: run.target.as_str(),
            subtype: run.subtype,
            target_id: run.target_id.map(str::to_owned),
            verdict: run.verdict.as_str(),
            action: run.action.action_str(),
            reason: run.reason,
            policy_id: run.policy_id.clone(),
            rule_id: run.rule_id.clone(),
            risk_category: run.risk_category,
            risk_score: run.risk_score,
            input: run.input.to_vec(),
            conversation_id: run.conversation_id.map(str::to_owned),
            tenant_id: run.tenant_id,
            agent_id: run.agent_id,
            record_id: run.record_id,
            parent: run.parent,
        };
        self.runs.lock().unwrap_or_else(|e| e.into_inner()).push(recorded);
    }
}

/// A stand-in for Rego with a line-based language, for the domain's tests: `deny <msg>`,
/// `approve <msg>` (a `require_approval` message), `risk <number>` (`risk_adjustment`),
/// `label <name>` (a member of `labels`), `session <label>` (the following lines apply only
/// if `input.session.labels` holds `<label>`), `session_instructed` (the following lines apply
/// only if `input.session.instructed_values` is not empty; as in Rego, a policy that reads
/// the session names it),
/// `when <key> <value>` (the following lines apply only if `input.context.<key>` is the
/// string `<value>`), `fail <msg>` (an evaluation error). A line `oops` does not compile.
#[derive(Debug, Default)]
pub struct FakePolicyEngine;

impl PolicyEngine for FakePolicyEngine {
    fn self_test(&self) -> Result<()> {
        Ok(())
    }
    fn name(&self) -> &'static str {
        "fake"
    }
    fn validate(&self, rego: &str) -> std::result::Result<(), RegoDiagnostic> {
        match rego.lines().position(|l| l.trim() == "oops") {
            Some(i) => Err(RegoDiagnostic { line: i as u32 + 1, column: 1, message: "unexpected oops".into() }),
            None => Ok(()),
        }
    }
    fn compile(&self, modules: &[PolicyModule]) -> Result<Arc<dyn CompiledPolicies>> {
        Ok(Arc::new(FakeCompiled(modules.to_vec())))
    }
}

struct FakeCompiled(Vec<PolicyModule>);

impl CompiledPolicies for FakeCompiled {
    fn evaluate(&self, input: &PolicyInput) -> Result<Vec<PolicyOutcome>> {
        let input = input.to_json();
        Ok(self
            .0
            .iter()
            .map(|m| {
                let mut out = PolicyOutcome { policy: Some(m.id), ..PolicyOutcome::default() };
                let mut applies = true;
                for line in m.rego.lines() {
                    let (verb, rest) = line.trim().split_once(' ').unwrap_or((line.trim(), ""));
                    match verb {
                        "when" => {
                            let (key, value) = rest.split_once(' ').unwrap_or((rest, ""));
                            applies = input["context"][key].as_str() == Some(value);
                        }
                        "session" => {
                            applies = input["session"]["labels"]
                                .as_array()
                                .is_some_and(|labels| labels.iter().any(|l| l.as_str() == Some(rest)));
                        }
                        "session_instructed" => {
                            applies = input["session"]["instructed_values"].as_array().is_some_and(|v| !v.is_empty());
                        }
                        _ if !applies => {}
                        "deny" => out.deny.push(rest.to_owned()),
                        "approve" => out.require_approval.push(rest.to_owned()),
                        "risk" => out.risk_adjustment = rest.parse().ok(),
                        "label" => out.labels.push(rest.to_owned()),
                        "fail" => out.error = Some(rest.to_owned()),
                        _ => {}
                    }
                }
                out
            })
            .collect())
    }
}

/// An OpenID provider that signs in whoever a test says: `start` hands out numbered states,
/// nonces and verifiers; `finish` answers the identity registered for the code with
/// [`FakeOidc::issue`] (once), checking it gets back the nonce and verifier of a start.
#[derive(Debug, Default)]
pub struct FakeOidc {
    started: AtomicU64,
    codes: Mutex<HashMap<String, crate::ports::VerifiedIdentity>>,
    /// (nonce, verifier) of every start.
    issued: Mutex<Vec<(String, String)>>,
}

impl FakeOidc {
    /// The next `finish` with `code` signs in `identity`.
    pub fn issue(&self, code: &str, identity: crate::ports::VerifiedIdentity) {
        self.codes.lock().unwrap_or_else(|e| e.into_inner()).insert(code.to_owned(), identity);
    }
}

#[async_trait]
impl crate::ports::OidcClient for FakeOidc {
    async fn start(
        &self,
        provider: &crate::model::SsoProvider,
        redirect_uri: &str,
    ) -> Result<crate::ports::AuthorizationStart> {
        let n = self.started.fetch_add(1, Ordering::SeqCst) + 1;
        let (state, nonce, verifier) = (format!("state-{n}"), format!("nonce-{n}"), format!("verifier-{n}"));
        self.issued.lock().unwrap_or_else(|e| e.into_inner()).push((nonce.clone(), verifier.clone()));
        Ok(crate::ports::AuthorizationStart {
            url: format!(
                "{}/authorize?client_id={}&redirect_uri={redirect_uri}&state={state}",
                provider.issuer, provider.client_id
            ),
            state,
            nonce,
            pkce_verifier: verifier,
        })
    }

    async fn finish(
        &self,
        _provider: &crate::model::SsoProvider,
        _redirect_uri: &str,
        code: &str,
        pkce_verifier: &str,
        nonce: &str,
    ) -> Result<crate::ports::VerifiedIdentity> {
        let known =
            self.issued.lock().unwrap_or_else(|e| e.into_inner()).iter().any(|(n, v)| n == nonce && v == pkce_verifier);
        if !known {
            return Err(crate::error::DomainError::Unauthorized("nonce or PKCE verifier mismatch".into()));
        }
        self.codes
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(code)
            .ok_or_else(|| crate::error::DomainError::Unauthorized("the identity provider refused the code".into()))
    }
}

/// One POST a [`FakeCallbacks`] received.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SentCallback {
    pub url: String,
    pub headers: Vec<(&'static str, String)>,
    pub body: Vec<u8>,
}

impl SentCallback {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(n, _)| n.eq_ignore_ascii_case(name)).map(|(_, v)| v.as_str())
    }
}

/// Records every callback and answers each with the next scripted outcome (200 once the
/// script is used up).
#[derive(Debug, Default)]
pub struct FakeCallbacks {
    sent: Mutex<Vec<SentCallback>>,
    script: Mutex<std::collections::VecDeque<std::result::Result<u16, crate::ports::CallbackError>>>,
    /// URLs starting with this hang: no answer until [`FakeCallbacks::release`], then a
    /// time-out.
    hang: Mutex<Option<String>>,
    hung: Mutex<Vec<futures::channel::oneshot::Sender<()>>>,
}

impl FakeCallbacks {
    /// Answers the next callbacks with `outcomes`, in order.
    pub fn script(&self, outcomes: impl IntoIterator<Item = std::result::Result<u16, crate::ports::CallbackError>>) {
        self.script.lock().unwrap_or_else(|e| e.into_inner()).extend(outcomes);
    }

    pub fn sent(&self) -> Vec<SentCallback> {
        self.sent.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }

    /// Makes the receivers whose URL starts with `prefix` never answer (until released).
    pub fn hang(&self, prefix: &str) {
        *self.hang.lock().unwrap_or_else(|e| e.into_inner()) = Some(prefix.to_owned());
    }

    /// Callbacks hanging now.
    pub fn hanging(&self) -> usize {
        self.hung.lock().unwrap_or_else(|e| e.into_inner()).iter().filter(|s| !s.is_canceled()).count()
    }

    /// Ends the hanging callbacks (they time out) and stops hanging new ones.
    pub fn release(&self) {
        *self.hang.lock().unwrap_or_else(|e| e.into_inner()) = None;
        self.hung.lock().unwrap_or_else(|e| e.into_inner()).clear();
    }
}

#[async_trait]
impl crate::ports::CallbackSender for FakeCallbacks {
    async fn post(
        &self,
        url: &str,
        headers: &[(&'static str, String)],
        body: &[u8],
    ) -> std::result::Result<u16, crate::ports::CallbackError> {
        self.sent.lock().unwrap_or_else(|e| e.into_inner()).push(SentCallback {
            url: url.to_owned(),
            headers: headers.to_vec(),
            body: body.to_vec(),
        });
        let hangs = self.hang.lock().unwrap_or_else(|e| e.into_inner()).as_deref().is_some_and(|p| url.starts_with(p));
        if hangs {
            let (sender, receiver) = futures::channel::oneshot::channel();
            self.hung.lock().unwrap_or_else(|e| e.into_inner()).push(sender);
            let _released = receiver.await;
            return Err(crate::ports::CallbackError::new(crate::ports::CallbackFailure::TimedOut, "no answer"));
        }
        self.script.lock().unwrap_or_else(|e| e.into_inner()).pop_front().unwrap_or(Ok(200))
    }
}

/// A CPU pool that runs each job at once on the caller's thread and records whose it was;
/// every job must come with `budget`. Once `fill` is called it refuses every job (`Busy`),
/// as a pool whose tenant queue is full.
pub struct RecordingOffload {
    budget: Duration,
    tenants: Mutex<Vec<crate::ids::TenantId>>,
    full: std::sync::atomic::AtomicBool,
}

impl RecordingOffload {
    pub fn new(budget: Duration) -> Self {
        Self { budget, tenants: Mutex::new(Vec::new()), full: std::sync::atomic::AtomicBool::new(false) }
    }

    /// The tenants of the jobs run so far, in order.
    pub fn tenants(&self) -> Vec<crate::ids::TenantId> {
        self.tenants.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }

    /// Refuses every job from now on.
    pub fn fill(&self) {
        self.full.store(true, Ordering::SeqCst);
    }
}

#[async_trait]
impl crate::ports::Offload for RecordingOffload {
    async fn run(
        &self,
        tenant: crate::ids::TenantId,
        budget: Duration,
        job: crate::ports::Job,
    ) -> std::result::Result<Box<dyn std::any::Any + Send>, crate::ports::OffloadError> {
        assert_eq!(budget, self.budget, "the job's budget");
        if self.full.load(Ordering::SeqCst) {
            return Err(crate::ports::OffloadError::Busy);
        }
        self.tenants.lock().unwrap_or_else(|e| e.into_inner()).push(tenant);
        crate::ports::offload::Inline.run(tenant, budget, job).await
    }
}
