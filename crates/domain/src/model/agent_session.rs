//! An agent session's state: what a conversation or run has done and seen so far, as the
//! policy checks of the session read it (`input.session`, docs/policies.md "Sessions").
//!
//! The state is never written anywhere: it is a fold of the session's audit records (those
//! carrying its `session_id`), so it is append-only, the same on every replica, and
//! reconstructible from the chain at any time. Each record adds to it: a `policy.decision`
//! counts its decision and action, adds the labels its policies raised and, when allowed,
//! its `context.cost` to the spend; an `agent.observed` (`POST /sessions/{id}/observe`) adds
//! the labels of what the agent was shown and the digests of the values that content told
//! the agent to use (or, from trusted content, named); a `hitl.approved` counts an approval. Its size is
//! bounded whatever the session's length, and a session idle for longer than its idle
//! window starts over.

use std::collections::{BTreeMap, BTreeSet, VecDeque};

use serde::{Deserialize, Serialize};
use time::OffsetDateTime;

use sha2::{Digest, Sha256};

use super::audit::{AuditRecord, unix_micros};
use crate::events::{HITL_APPROVED, POLICY_DECISION, SESSION_OBSERVED};
use crate::ids::TenantId;

/// Distinct actions counted by name; the rest are counted under [`OTHER_ACTIONS`].
pub const MAX_SESSION_ACTIONS: usize = 128;
/// The key under which actions past [`MAX_SESSION_ACTIONS`] are counted.
pub const OTHER_ACTIONS: &str = "*";
/// Labels a session keeps; later ones are dropped (and counted in `labels_dropped`).
pub const MAX_SESSION_LABELS: usize = 64;
/// Decision times kept for the rate counters: a rate above this many per hour reads as
/// this many.
pub const SESSION_RECENT: usize = 256;

/// Value digests a session keeps of each kind (instructed, named); later ones are dropped.
pub const MAX_SESSION_VALUES: usize = 256;

/// A label raised when content the agent was shown is flagged by the Prompt Guard.
pub const UNTRUSTED_CONTENT_SEEN: &str = "untrusted_content_seen";

/// How sensitive a label says the session's data has become (its high-water mark):
/// `secret_read` 3, `pii_read` 2, `confidential_read` 2, `internal_read` 1, others 0.
pub fn label_sensitivity(label: &str) -> u8 {
    match label {
        "secret_read" => 3,
        "pii_read" | "confidential_read" => 2,
        "internal_read" => 1,
        _ => 0,
    }
}

/// What a session keeps of a value (an e-mail address, an IBAN, a web host) that content
/// named: a digest bound to the tenant and the session, so neither the value nor a value
/// seen in another session can be read off the audit record.
pub fn value_digest(tenant: TenantId, session: &str, value: &str) -> String {
    let mut h = Sha256::new();
    for part in [tenant.to_string().as_bytes(), session.as_bytes(), value.as_bytes()] {
        h.update((part.len() as u64).to_le_bytes());
        h.update(part);
    }
    hex::encode(&h.finalize()[..16])
}

/// Decisions of a session, by outcome.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct SessionDecisions {
    pub allow: u64,
    pub deny: u64,
    pub require_approval: u64,
}

/// The state of one agent session, folded from its audit records.
#[derive(Debug, Clone, PartialEq)]
pub struct SessionState {
    pub id: String,
    /// The last record folded (its `seq` in the tenant's chain); 0 before the first.
    pub seq: i64,
    pub started_at: Option<OffsetDateTime>,
    pub last_at: Option<OffsetDateTime>,
    /// Records folded since the session (re)started.
    pub events: u64,
    pub decisions: SessionDecisions,
    /// Checks per action, allowed or not.
    pub actions: BTreeMap<String, u64>,
    pub labels: BTreeSet<String>,
    pub labels_dropped: u64,
    /// The highest [`label_sensitivity`] of the labels raised.
    pub sensitivity: u8,
    pub observations: u64,
    pub approvals: u64,
    /// The sum of `context.cost` over the allowed checks.
    pub spend: f64,
    /// Digests ([`value_digest`]) of the values that untrusted content shown to the agent
    /// told it to use.
    instructed: BTreeSet<String>,
    /// Digests of the values that trusted content (the user's own request) named: those are
    /// the user's, whatever other content said of them.
    named: BTreeSet<String>,
    /// Unix microseconds of the latest decisions, oldest first.
    recent: VecDeque<i64>,
}

/// What the fold reads of a record's `details` (other members are skipped).
#[derive(Deserialize, Default)]
struct Folded {
    #[serde(default)]
    labels: Vec<String>,
    #[serde(default)]
    context: Option<FoldedContext>,
    #[serde(default)]
    instructed: Vec<String>,
    #[serde(default)]
    named: Vec<String>,
}

#[derive(Deserialize, Default)]
struct FoldedContext {
    #[serde(default)]
    cost: Option<serde_json::Value>,
}

/// What one audit record adds to its session's state, read off the record once: a process
/// keeps these for its own records of a session between two catch-ups, rather than the
/// records (docs/policies.md "Sessions").
#[derive(Debug, Clone, PartialEq)]
pub struct SessionFold {
    /// The record's `seq` in the tenant's chain.
    pub seq: i64,
    timestamp: OffsetDateTime,
    kind: FoldKind,
    labels: Vec<String>,
}

#[derive(Debug, Clone, PartialEq)]
enum FoldKind {
    Decision {
        decision: String,
        action: Option<String>,
        cost: Option<f64>,
    },
    Observed {
        instructed: Vec<String>,
        named: Vec<String>,
    },
    Approved,
    /// Another event of the session: it only moves the session's `seq` (and can end an
    /// idle session).
    Other,
}

/// What a `policy.decision` record will add to its session, known to the check that writes
/// it: the commit observer takes it rather than reading the record's `details` back
/// ([`SessionFold::expected`]).
#[derive(Debug, Clone, PartialEq)]
pub struct ExpectedFold {
    decision: String,
    action: String,
    cost: Option<f64>,
    labels: Vec<String>,
}

/// A check's `context.cost` as the session's spend counts it: a finite number, else none.
fn cost_of(cost: &serde_json::Value) -> Option<f64> {
    cost.as_f64().filter(|c| c.is_finite())
}

impl ExpectedFold {
    /// A check's decision (`allow`, `deny`, `require_approval`), action, `context.cost`
    /// and the labels its policies raised.
    pub fn decision(decision: &str, action: &str, cost: Option<&serde_json::Value>, labels: &[String]) -> Self {
        Self {
            decision: decision.to_owned(),
            action: action.to_owned(),
            cost: cost.and_then(cost_of),
            labels: labels.to_vec(),
        }
    }
}

impl SessionFold {
    /// The fold of `r`, a record written as `expected` said: the same as [`of`](Self::of)
    /// without parsing its `details`.
    pub fn expected(r: &AuditRecord, expected: ExpectedFold) -> Self {
        let ExpectedFold { decision, action, cost, labels } = expected;
        let kind = FoldKind::Decision { decision, action: Some(action), cost };
        Self { seq: r.seq, timestamp: r.timestamp, kind, labels }
    }

    pub fn of(r: &AuditRecord) -> Self {
        let kind = r.event_type.as_str();
        if ![POLICY_DECISION, SESSION_OBSERVED, HITL_APPROVED].contains(&kind) {
            return Self { seq: r.seq, timestamp: r.timestamp, kind: FoldKind::Other, labels: Vec::new() };
        }
        let folded: Folded = serde_json::from_str(r.details.as_str()).unwrap_or_default();
        let kind = match kind {
            POLICY_DECISION => FoldKind::Decision {
                decision: r.decision.clone().unwrap_or_default(),
                action: r.action.clone(),
                cost: folded.context.and_then(|c| c.cost).as_ref().and_then(cost_of),
            },
            SESSION_OBSERVED => FoldKind::Observed { instructed: folded.instructed, named: folded.named },
            _ => FoldKind::Approved,
        };
        Self { seq: r.seq, timestamp: r.timestamp, kind, labels: folded.labels }
    }
}

impl SessionState {
    pub fn new(id: impl Into<String>) -> Self {
        Self {
            id: id.into(),
            seq: 0,
            started_at: None,
            last_at: None,
            events: 0,
            decisions: SessionDecisions::default(),
            actions: BTreeMap::new(),
            labels: BTreeSet::new(),
            labels_dropped: 0,
            sensitivity: 0,
            observations: 0,
            approvals: 0,
            spend: 0.0,
            instructed: BTreeSet::new(),
            named: BTreeSet::new(),
            recent: VecDeque::new(),
        }
    }

    /// Whether the session has ended by `now`: idle for longer than `idle`, so the same id
    /// starts a new one (the records folded so far are not read again).
    fn ended(&self, now: OffsetDateTime, idle: std::time::Duration) -> bool {
        self.last_at.is_some_and(|last| now - last > idle)
    }

    /// The state as of `now` (empty once [`ended`](Self::ended), keeping its `seq`).
    #[cfg(test)]
    fn at(&self, now: OffsetDateTime, idle: std::time::Duration) -> Self {
        if self.ended(now, idle) { Self { seq: self.seq, ..Self::new(self.id.clone()) } } else { self.clone() }
    }

    /// [`view`](Self::view) of the state as of `now` (empty once [`ended`](Self::ended)),
    /// without copying the state.
    pub fn view_at(&self, now: OffsetDateTime, idle: std::time::Duration) -> SessionView {
        if self.ended(now, idle) { Self::new(self.id.clone()).view(now) } else { self.view(now) }
    }

    /// Folds one more record of the session (records come in chain order).
    #[cfg(test)]
    fn apply(&mut self, r: &AuditRecord, idle: std::time::Duration) {
        self.fold(&SessionFold::of(r), idle);
    }

    /// Folds what one more record adds (records come in chain order; one at or before
    /// [`seq`](Self::seq) is skipped).
    pub fn fold(&mut self, f: &SessionFold, idle: std::time::Duration) {
        if f.seq <= self.seq {
            return;
        }
        if let Some(last) = self.last_at
            && f.timestamp - last > idle
        {
            *self = Self { seq: self.seq, ..Self::new(self.id.clone()) };
        }
        self.seq = f.seq;
        if matches!(f.kind, FoldKind::Other) {
            return;
        }
        self.events += 1;
        self.started_at.get_or_insert(f.timestamp);
        self.last_at = Some(f.timestamp);
        for label in &f.labels {
            self.raise(label);
        }
        match &f.kind {
            FoldKind::Decision { decision, action, cost } => {
                match decision.as_str() {
                    "allow" => self.decisions.allow += 1,
                    "deny" => self.decisions.deny += 1,
                    _ => self.decisions.require_approval += 1,
                }
                if let Some(action) = action {
                    let key = if self.actions.contains_key(action) || self.actions.len() < MAX_SESSION_ACTIONS {
                        action.clone()
                    } else {
                        OTHER_ACTIONS.to_owned()
                    };
                    *self.actions.entry(key).or_default() += 1;
                }
                if decision == "allow"
                    && let Some(cost) = cost
                {
                    self.spend += cost.max(0.0);
                }
                if self.recent.len() == SESSION_RECENT {
                    self.recent.pop_front();
                }
                self.recent.push_back(unix_micros(f.timestamp));
            }
            FoldKind::Observed { instructed, named } => {
                self.observations += 1;
                for (kept, digests) in [(&mut self.instructed, instructed), (&mut self.named, named)] {
                    for d in digests {
                        if kept.len() < MAX_SESSION_VALUES {
                            kept.insert(d.clone());
                        }
                    }
                }
            }
            FoldKind::Approved => self.approvals += 1,
            FoldKind::Other => {}
        }
    }

    fn raise(&mut self, label: &str) {
        if self.labels.contains(label) {
            return;
        }
        if self.labels.len() >= MAX_SESSION_LABELS {
            self.labels_dropped += 1;
            return;
        }
        self.sensitivity = self.sensitivity.max(label_sensitivity(label));
        self.labels.insert(label.to_owned());
    }

    /// Decisions in the `window` before `now`.
    pub fn decisions_within(&self, now: OffsetDateTime, window: std::time::Duration) -> u64 {
        let since = unix_micros(now) - i64::try_from(window.as_micros()).unwrap_or(i64::MAX);
        self.recent.iter().rev().take_while(|t| **t > since).count() as u64
    }

    /// The state as `GET /sessions/{id}` answers it and policies read it (`input.session`).
    pub fn view(&self, now: OffsetDateTime) -> SessionView {
        // Values untrusted content told the agent to use that trusted content did not name.
        let followed: BTreeSet<String> = self.instructed.difference(&self.named).cloned().collect();
        SessionView {
            id: self.id.clone(),
            started_at: self.started_at,
            last_at: self.last_at,
            events: self.events,
            decisions: self.decisions.clone(),
            checks: self.decisions.allow + self.decisions.deny + self.decisions.require_approval,
            actions: self.actions.clone(),
            labels: self.labels.iter().cloned().collect(),
            sensitivity: self.sensitivity,
            observations: self.observations,
            approvals: self.approvals,
            spend: (self.spend * 1e6).round() / 1e6,
            instructed: followed.len() as u64,
            followed,
            rate: SessionRate {
                last_minute: self.decisions_within(now, std::time::Duration::from_secs(60)),
                last_hour: self.decisions_within(now, std::time::Duration::from_secs(3600)),
            },
        }
    }
}

impl SessionView {
    /// The values in a check's `resource` and `context` (its strings at any depth) that
    /// untrusted content shown to the session told the agent to use
    /// ([`followed`](Self::followed)), each once.
    pub fn instructed_in(
        &self,
        tenant: TenantId,
        resource: &str,
        context: &serde_json::Map<String, serde_json::Value>,
    ) -> Vec<String> {
        let mut out: Vec<String> = Vec::new();
        if self.followed.is_empty() {
            return out;
        }
        for text in std::iter::once(resource).chain(strings(context)) {
            for v in agentgov_detect::guard::instructed::values(text) {
                if !out.contains(&v) && self.followed.contains(&value_digest(tenant, &self.id, &v)) {
                    out.push(v);
                }
            }
        }
        out
    }
}

/// The strings of a check's `context`, at any depth, in document order.
fn strings(context: &serde_json::Map<String, serde_json::Value>) -> Vec<&str> {
    fn walk<'a>(v: &'a serde_json::Value, out: &mut Vec<&'a str>) {
        match v {
            serde_json::Value::String(s) => out.push(s),
            serde_json::Value::Array(items) => items.iter().for_each(|i| walk(i, out)),
            serde_json::Value::Object(members) => members.values().for_each(|m| walk(m, out)),
            _ => {}
        }
    }
    let mut out = Vec::new();
    context.values().for_each(|v| walk(v, &mut out));
    out
}

/// Checks of a session in the last minute and hour (counted up to 256).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct SessionRate {
    pub last_minute: u64,
    pub last_hour: u64,
}

/// An agent session as its checks see it (`input.session`) and `GET /sessions/{id}`
/// answers it: what happened before the current check.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct SessionView {
    pub id: String,
    /// The first record of the session; `null` for a session with none yet.
    #[serde(with = "time::serde::rfc3339::option")]
    pub started_at: Option<OffsetDateTime>,
    #[serde(with = "time::serde::rfc3339::option")]
    pub last_at: Option<OffsetDateTime>,
    /// Records of the session: checks, observations, approvals.
    pub events: u64,
    /// Recorded checks (dry runs are not recorded).
    pub checks: u64,
    pub decisions: SessionDecisions,
    /// Checks per action (past 128 distinct actions, the rest under `*`).
    pub actions: BTreeMap<String, u64>,
    /// Labels raised so far (by policies' `labels` rules and by observations), sorted.
    pub labels: Vec<String>,
    /// High-water mark of the data read: 0 none, 1 internal, 2 personal or confidential,
    /// 3 secret.
    pub sensitivity: u8,
    /// Tool results and other content shown to the agent (`POST /sessions/{id}/observe`).
    pub observations: u64,
    /// Approval requests of the session that were approved.
    pub approvals: u64,
    /// The sum of the allowed checks' `context.cost`.
    pub spend: f64,
    /// Values (e-mail addresses, IBANs, web hosts) that untrusted content shown to the agent
    /// told it to use, and that trusted content did not name: how many the session keeps,
    /// as digests. A check's `input.session.instructed_values` lists those its own
    /// arguments carry.
    pub instructed: u64,
    /// The digests counted in `instructed`.
    #[serde(skip)]
    pub followed: BTreeSet<String>,
    pub rate: SessionRate,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ids::{AuditId, TenantId};
    use crate::model::{Actor, AuditEntry, ChainHead, JsonText};
    use std::time::Duration;

    const IDLE: Duration = Duration::from_secs(3600);

    /// A record to fold: event type, action, decision, details, seconds after the start.
    type Spec<'a> = (&'a str, Option<&'a str>, Option<&'a str>, serde_json::Value, i64);

    fn records(specs: &[Spec<'_>]) -> Vec<AuditRecord> {
        let mut head = ChainHead::GENESIS;
        specs
            .iter()
            .enumerate()
            .map(|(i, (kind, action, decision, details, secs))| {
                head.seal(AuditEntry {
                    id: AuditId(uuid::Uuid::from_u128(i as u128 + 1)),
                    tenant_id: TenantId(uuid::Uuid::from_u128(9)),
                    timestamp: OffsetDateTime::from_unix_timestamp(1_800_000_000 + secs).unwrap(),
                    actor: Actor::system("test"),
                    event_type: (*kind).into(),
                    agent_id: None,
                    action: action.map(str::to_owned),
                    resource: None,
                    decision: decision.map(str::to_owned),
                    risk_score: None,
                    details: JsonText::from_value(details),
                    session_id: Some("s".into()),
                })
            })
            .collect()
    }

    fn fold(records: &[AuditRecord]) -> SessionState {
        let mut state = SessionState::new("s");
        for r in records {
            state.apply(r, IDLE);
        }
        state
    }

    #[test]
    fn decisions_observations_and_approvals_are_counted_and_labels_kept() {
        let rs = records(&[
            (
                "policy.decision",
                Some("read"),
                Some("allow"),
                serde_json::json!({"labels": ["secret_read"], "context": {"cost": 2.5}}),
                0,
            ),
            ("agent.observed", Some("observe"), None, serde_json::json!({"labels": ["untrusted_content_seen"]}), 10),
            (
                "policy.decision",
                Some("send"),
                Some("require_approval"),
                serde_json::json!({"context": {"cost": 7}}),
                20,
            ),
            ("hitl.approved", None, None, serde_json::json!({}), 30),
            ("policy.decision", Some("send"), Some("deny"), serde_json::json!({}), 40),
            ("app.custom", Some("x"), Some("allow"), serde_json::json!({"labels": ["forged"]}), 50),
        ]);
        let state = fold(&rs);
        let view = state.view(rs[4].timestamp);
        assert_eq!(view.decisions, SessionDecisions { allow: 1, deny: 1, require_approval: 1 });
        assert_eq!(view.checks, 3);
        assert_eq!(view.actions, BTreeMap::from([("read".into(), 1), ("send".into(), 2)]));
        assert_eq!(view.labels, ["secret_read", "untrusted_content_seen"], "a client's record raises nothing");
        assert_eq!((view.sensitivity, view.observations, view.approvals, view.events), (3, 1, 1, 5));
        assert_eq!(view.spend, 2.5, "only allowed checks spend");
        assert_eq!(view.rate, SessionRate { last_minute: 3, last_hour: 3 });
        assert_eq!(state.seq, 6);
        assert_eq!(state.view(rs[4].timestamp + Duration::from_secs(45)).rate.last_minute, 1);
    }

    #[test]
    fn folding_again_or_in_parts_gives_the_same_state() {
        let rs = records(&[
            ("policy.decision", Some("a"), Some("allow"), serde_json::json!({"labels": ["pii_read"]}), 0),
            ("policy.decision", Some("b"), Some("allow"), serde_json::json!({}), 1),
            ("policy.decision", Some("c"), Some("deny"), serde_json::json!({}), 2),
        ]);
        let whole = fold(&rs);
        let mut parts = fold(&rs[..1]);
        for r in &rs {
            parts.apply(r, IDLE); // the first again: skipped by its seq
        }
        assert_eq!(parts, whole);
    }

    #[test]
    fn an_idle_session_starts_over() {
        let rs = records(&[
            ("policy.decision", Some("a"), Some("allow"), serde_json::json!({"labels": ["secret_read"]}), 0),
            ("policy.decision", Some("b"), Some("allow"), serde_json::json!({}), 7200),
        ]);
        let state = fold(&rs);
        assert!(state.labels.is_empty() && state.events == 1 && state.seq == 2);
        let resumed = fold(&rs[..1]).at(rs[0].timestamp + Duration::from_secs(3601), IDLE);
        assert_eq!((resumed.events, resumed.seq), (0, 1));
        assert_eq!(fold(&rs[..1]).at(rs[0].timestamp + Duration::from_secs(60), IDLE), fold(&rs[..1]));
    }

    #[test]
    fn the_state_stays_bounded() {
        let mut specs = Vec::new();
        let labels: Vec<serde_json::Value> =
            (0..200).map(|i| serde_json::json!({"labels": [format!("l{i}")]})).collect();
        let actions: Vec<String> = (0..300).map(|i| format!("a{i}")).collect();
        for (i, action) in actions.iter().enumerate() {
            let details = labels.get(i).cloned().unwrap_or_else(|| serde_json::json!({}));
            specs.push(("policy.decision", Some(action.as_str()), Some("allow"), details, i as i64));
        }
        let state = fold(&records(&specs));
        assert_eq!(state.actions.len(), MAX_SESSION_ACTIONS + 1);
        assert_eq!(state.actions[OTHER_ACTIONS], 300 - MAX_SESSION_ACTIONS as u64);
        assert_eq!(state.labels.len(), MAX_SESSION_LABELS);
        assert_eq!(state.labels_dropped, 200 - MAX_SESSION_LABELS as u64);
        assert_eq!(state.recent.len(), SESSION_RECENT);
    }
}
