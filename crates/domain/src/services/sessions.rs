//! Agent sessions (docs/API.md "Agent sessions"): what a conversation or run has done and
//! seen, read by the policy checks of the session as `input.session`.
//!
//! The state is a fold of the session's audit records ([`SessionState`]): a check names
//! its session, and its decision record carries it; `POST /sessions/{id}/observe` records
//! what the agent was shown (screened by the Prompt Guard; only labels and a digest are
//! kept). Each process keeps the states it folded and, before a check, reads only the
//! session's records past the last one folded (an indexed scan, usually empty), so every
//! replica sees every other's records and nothing but the audit log is written.

use std::collections::{BTreeMap, HashMap, VecDeque};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use agentgov_detect::guard::instructed;
use sha2::{Digest, Sha256};
use time::OffsetDateTime;

use super::agents::AgentService;
use super::audit::{AuditEvent, AuditLog, CommitObserver, caller_actor};
use super::guard::{GuardService, ValidateRequest};
use super::session_marks::{Marked, SessionMarks, VERIFY_AFTER};
use super::validate::check_text;
use super::{Caller, Ports};
use crate::error::{DomainError, Result, Violations};
use crate::events::SESSION_OBSERVED;
use crate::ids::{AgentId, AuditId, TenantId};
use crate::model::agent_session::{ExpectedFold, MAX_SESSION_VALUES, UNTRUSTED_CONTENT_SEEN, value_digest};
use crate::model::{
    AuditEntry, AuditFilter, AuditRecord, AuditScan, GuardDirection, GuardLabel, Permission, SeqOrder, SessionFold,
    SessionState, SessionView,
};

/// A session id's longest form (as a check's `session_id`).
pub const MAX_SESSION_ID_LEN: usize = 200;
/// Labels an observation may declare.
const MAX_DECLARED_LABELS: usize = 16;
const MAX_LABEL_LEN: usize = 64;
const MAX_SOURCE_LEN: usize = 200;
/// Records read per query while catching a session up.
const PAGE: u32 = 500;

/// Tunables of agent sessions.
#[derive(Debug, Clone, Copy)]
pub struct SessionSettings {
    /// A session with no record for this long has ended; its id starts a new one.
    pub idle: Duration,
    /// Sessions whose state a process keeps (least recently used dropped first).
    pub kept: u64,
    /// Who else writes the store, and how this process learns of it.
    pub writers: SessionWriters,
}

/// Who writes the store besides this process ([`SessionSettings::writers`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum SessionWriters {
    /// Nobody (embedded mode: the event bus reaches no other replica). A kept session
    /// follows this process's own records as they commit, and a check reads nothing.
    Sole,
    /// Other replicas, which mark every session record they commit in the shared cache
    /// (Redis; [`super::session_marks`]): a check reads the session's marks (one cache round
    /// trip), and the store only when another replica's mark is past the kept state, when
    /// the marks cannot be read, after [`VERIFY_EVERY`] records of its own and at least
    /// every [`VERIFY_AFTER`](super::session_marks::VERIFY_AFTER).
    Announced,
    /// Other processes, with no shared cache: each check first reads the `seq`s of the
    /// session's newer records from the store.
    #[default]
    Unannounced,
}

impl Default for SessionSettings {
    fn default() -> Self {
        Self { idle: Duration::from_secs(24 * 3600), kept: 100_000, writers: SessionWriters::default() }
    }
}

/// `POST /sessions/{id}/observe`: content shown to the agent (a tool result, a web page, an
/// e-mail), screened by the Prompt Guard. The content is never stored.
#[derive(Debug, Clone, serde::Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct ObserveRequest {
    /// The agent that was shown the content (a UUID of the caller's tenant).
    #[cfg_attr(feature = "openapi", schema(format = Uuid))]
    pub agent_id: String,
    /// The content; 1 byte to 512 KiB.
    #[cfg_attr(feature = "openapi", schema(min_length = 1))]
    pub content: String,
    /// Where it came from, e.g. the tool's name `read_inbox`; 1 to 200 characters.
    #[cfg_attr(feature = "openapi", schema(min_length = 1, max_length = 200))]
    pub source: Option<String>,
    /// The agent framework's id of the tool call that returned it; 1 to 200 characters.
    #[cfg_attr(feature = "openapi", schema(min_length = 1, max_length = 200))]
    pub tool_call_id: Option<String>,
    /// Labels the caller knows apply, e.g. `untrusted_input` for content from outside the
    /// organisation; at most 16, each lower-case letters, digits, `_`, `.`, `:` or `-`, 1 to
    /// 64 characters.
    #[serde(default)]
    pub labels: Vec<String>,
    /// Content from the user or the operator (the user's own request), not from a tool:
    /// screened all the same, but the values it names (e-mail addresses, IBANs, web hosts)
    /// are the user's, so content that later tells the agent to use them does not count
    /// them as instructed. Default `false`: a tool result, a web page, a message.
    #[serde(default)]
    pub trusted: bool,
}

/// The answer of `POST /sessions/{id}/observe`.
#[derive(Debug, Clone, serde::Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Observation {
    /// The `agent.observed` audit record.
    pub observation_id: AuditId,
    /// Whether the Prompt Guard flagged the content (then `untrusted_content_seen` is
    /// raised).
    pub flagged: bool,
    pub verdict: GuardLabel,
    pub score: f64,
    /// Why the Prompt Guard flagged it (its rules and stages, as `/guard/validate` gives).
    pub reasons: Vec<String>,
    /// The labels this observation raised: the declared ones and the Prompt Guard's.
    pub labels: Vec<String>,
    /// The values (e-mail addresses, IBANs, web hosts) that the content, unless trusted,
    /// told the agent to use: a later check of the session whose arguments carry one reads
    /// it in `input.session.instructed_values`. The record keeps only digests.
    pub instructed: Vec<String>,
    /// `sha256:` and the content's SHA-256, hex: what the record keeps of the content.
    pub digest: String,
    /// The session after the observation.
    pub session: SessionView,
}

/// An observation's `details`.
#[derive(serde::Serialize)]
struct ObservedDetails<'a> {
    bytes: usize,
    digest: &'a str,
    labels: &'a [String],
    model_version: i32,
    reasons: &'a [String],
    score: f64,
    #[serde(skip_serializing_if = "Option::is_none")]
    tool_call_id: Option<&'a str>,
    verdict: GuardLabel,
    /// Digests of the values untrusted content told the agent to use.
    #[serde(skip_serializing_if = "<[_]>::is_empty")]
    instructed: &'a [String],
    /// Digests of the values trusted content named.
    #[serde(skip_serializing_if = "<[_]>::is_empty")]
    named: &'a [String],
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    trusted: bool,
}

/// Whether `label` is a label's form.
fn is_label(label: &str) -> bool {
    !label.is_empty()
        && label.len() <= MAX_LABEL_LEN
        && label.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b"_.:-".contains(&b))
}

super::ports::repos!(Repos { audit: AuditRepo });
#[derive(Clone)]
pub struct SessionService {
    repos: Repos,
    ports: Ports,
    log: AuditLog,
    agents: AgentService,
    guard: GuardService,
    kept: Kept,
    /// With [`SessionWriters::Announced`].
    marks: Option<SessionMarks>,
}

/// Own records of a session a process keeps unfolded at most (past it, the session's state
/// is dropped and read again from the store).
const MAX_AHEAD: usize = 4096;
/// With [`SessionWriters::Announced`], own records of a session a check folds on top of the
/// state it keeps at most: past it, the session is read from the store, which folds them
/// into the kept state.
pub const VERIFY_EVERY: usize = 16;

/// The sessions a process keeps, shared with the audit writer, which hands them this
/// process's records as they commit ([`CommitObserver`]).
#[derive(Clone)]
struct Kept {
    sessions: moka::sync::Cache<(TenantId, String), Arc<KeptSession>>,
    settings: SessionSettings,
    /// What this process's checks will add to their sessions, by record id, until the
    /// records commit (see [`SessionService::expect`]).
    expected: Arc<Mutex<HashMap<AuditId, ExpectedFold>>>,
}

/// One kept session: its state, and the turn its store reads take.
struct KeptSession {
    slot: Mutex<Slot>,
    /// Held while the session is read from the store: checks that need a read meanwhile
    /// wait, and use the next read that begins after they arrived rather than each reading
    /// (64 checks racing on one session would otherwise all read at once).
    reading: futures::lock::Mutex<()>,
}

/// What a process keeps of one session.
struct Slot {
    /// Folded in chain order through `state.seq`.
    state: SessionState,
    /// What this process's own records past `state.seq` add, by `seq`, not folded yet: on a
    /// store other replicas write, one of theirs may come between (the next catch-up folds
    /// both, in order, reading only theirs from the store).
    ahead: BTreeMap<i64, SessionFold>,
    /// The state has every record of the session: this process is the store's only writer
    /// and has caught up once since keeping the session, and folds each of the session's
    /// records as it commits. A check then reads nothing from the store.
    complete: bool,
    /// With [`SessionWriters::Announced`]: when the state was last caught up with the store
    /// after marking the read ([`SessionMarks::reading`]).
    verified_at: Option<OffsetDateTime>,
    /// Store reads begun, counted.
    reads_begun: u64,
    /// The count of reads begun when the latest finished read began.
    read_through: u64,
}

impl Slot {
    fn lock(slot: &Mutex<Slot>) -> MutexGuard<'_, Slot> {
        slot.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Folds the kept folds up to `through` in order (those past the state), and drops the
    /// ones at or before the state.
    fn fold_ahead(&mut self, through: i64, idle: Duration) {
        while let Some(entry) = self.ahead.first_entry()
            && *entry.key() <= through
        {
            let fold = entry.remove();
            self.state.fold(&fold, idle);
        }
    }
}

/// Sessions a replay keeps folded at most ([`SessionService::state_before`]).
const MAX_REFOLDED: usize = 4096;
/// Records of one session a replay reads per query (and keeps read ahead at most).
const REFOLD_PAGE: u32 = 64;

/// Sessions folded from the store as a replay meets their decisions, by id: each one's
/// state, and the folds of its records read past the decision last asked for (the records
/// right after the state's `seq`, in order).
#[derive(Default)]
pub(crate) struct Refolded(HashMap<String, (SessionState, VecDeque<SessionFold>)>);

/// Most folds kept for records not committed yet: past it they are dropped, and the
/// observer parses those records instead (only an append that never reached the writer
/// leaves one behind).
const MAX_EXPECTED: usize = 16_384;

impl Kept {
    fn session(&self, tenant: TenantId, id: &str) -> Arc<KeptSession> {
        self.sessions.get_with((tenant, id.to_owned()), || {
            Arc::new(KeptSession {
                slot: Mutex::new(Slot {
                    state: SessionState::new(id),
                    ahead: BTreeMap::new(),
                    complete: false,
                    verified_at: None,
                    reads_begun: 0,
                    read_through: 0,
                }),
                reading: futures::lock::Mutex::new(()),
            })
        })
    }
}

impl CommitObserver for Kept {
    /// A kept session with a record whose append failed is read afresh from the store next
    /// time: the record may have landed.
    fn failed(&self, entries: &[AuditEntry]) {
        let mut expected = self.expected.lock().unwrap_or_else(|e| e.into_inner());
        for e in entries {
            expected.remove(&e.id);
            if let Some(id) = &e.session_id {
                self.sessions.invalidate(&(e.tenant_id, id.clone()));
            }
        }
    }

    fn committed(&self, records: &[AuditRecord]) {
        // The batch's expected folds, taken under one lock.
        let expected: Vec<Option<ExpectedFold>> = {
            let mut kept = self.expected.lock().unwrap_or_else(|e| e.into_inner());
            records.iter().map(|r| r.session_id.as_ref().and_then(|_| kept.remove(&r.id))).collect()
        };
        for (r, expected) in records.iter().zip(expected) {
            let Some(id) = &r.session_id else { continue };
            let key = (r.tenant_id, id.clone());
            let Some(kept) = self.sessions.get(&key) else { continue };
            let fold = match expected {
                Some(expected) => SessionFold::expected(r, expected),
                None => SessionFold::of(r),
            };
            #[cfg(test)]
            assert_eq!(fold, SessionFold::of(r), "a check's expected fold is its record's");
            let mut slot = Slot::lock(&kept.slot);
            if fold.seq <= slot.state.seq {
                continue;
            }
            if slot.complete {
                slot.state.fold(&fold, self.settings.idle);
            } else if slot.ahead.len() < MAX_AHEAD {
                slot.ahead.insert(fold.seq, fold);
            } else {
                drop(slot);
                self.sessions.invalidate(&key);
            }
        }
    }
}

impl SessionService {
    pub(crate) fn new(
        ports: Ports,
        repos: Repos,
        log: AuditLog,
        agents: AgentService,
        guard: GuardService,
        settings: SessionSettings,
        marks: Option<SessionMarks>,
    ) -> Self {
        let sessions = moka::sync::Cache::builder().max_capacity(settings.kept).time_to_idle(settings.idle).build();
        let expected = Arc::default();
        Self { repos, ports, log, agents, guard, kept: Kept { sessions, settings, expected }, marks }
    }

    /// What the audit writer tells of each commit, so the kept sessions follow this
    /// process's own records without reading them back.
    pub(crate) fn commit_observer(&self) -> Arc<dyn CommitObserver> {
        Arc::new(self.kept.clone())
    }

    /// Tells the commit observer what the record `id` of a kept session will add (`fold`),
    /// so that it folds the record without reading its `details` back. Nothing to do for a
    /// session this process does not keep, or past [`MAX_EXPECTED`] waiting (the observer
    /// then reads the record as any other).
    pub(crate) fn expect(&self, tenant: TenantId, session: &str, id: AuditId, fold: impl FnOnce() -> ExpectedFold) {
        if !self.kept.sessions.contains_key(&(tenant, session.to_owned())) {
            return;
        }
        let mut expected = self.kept.expected.lock().unwrap_or_else(|e| e.into_inner());
        if expected.len() < MAX_EXPECTED {
            expected.insert(id, fold());
        }
    }

    /// The session's state now, caught up with its records in the store.
    pub(crate) async fn state(&self, tenant: TenantId, id: &str) -> Result<SessionView> {
        let idle = self.kept.settings.idle;
        let kept = self.kept.session(tenant, id);
        let arrived = {
            let slot = Slot::lock(&kept.slot);
            if slot.complete {
                return Ok(slot.state.view_at(self.ports.clock.now(), idle));
            }
            slot.reads_begun
        };
        let mut marked = None;
        if let Some(marks) = &self.marks {
            match self.announced(marks, tenant, id, &kept.slot).await {
                Ok(current) => return Ok(current),
                Err(m) => marked = Some(m),
            }
        }
        let (_turn, waited) = match kept.reading.try_lock() {
            Some(turn) => (turn, false),
            None => (kept.reading.lock().await, true),
        };
        {
            let slot = Slot::lock(&kept.slot);
            // A read that began after this check arrived finished while it waited: it folded
            // every record this check must see.
            if slot.read_through > arrived {
                return Ok(slot.state.view_at(self.ports.clock.now(), idle));
            }
        }
        let mut verified = false;
        if let (Some(marks), Some(mut marked)) = (&self.marks, marked) {
            if waited {
                // The read it waited for began before it arrived, but may have brought the
                // kept state close enough for the marks to tell.
                match self.announced(marks, tenant, id, &kept.slot).await {
                    Ok(current) => return Ok(current),
                    Err(m) => marked = m,
                }
            }
            // The read is marked before it starts: a key lost after the mark loses the mark.
            verified = marked == Marked::Behind || marks.reading(tenant, id).await;
        }
        let read = {
            let mut slot = Slot::lock(&kept.slot);
            slot.reads_begun += 1;
            slot.reads_begun
        };
        self.catch_up(tenant, id, &kept.slot).await?;
        let now = self.ports.clock.now();
        let mut slot = Slot::lock(&kept.slot);
        slot.read_through = read;
        match self.kept.settings.writers {
            SessionWriters::Sole => {
                // Whatever committed since the slot was kept is ahead, and only this process
                // writes: nothing can come between.
                slot.fold_ahead(i64::MAX, idle);
                slot.complete = true;
            }
            SessionWriters::Announced => slot.verified_at = verified.then_some(now),
            SessionWriters::Unannounced => {}
        }
        Ok(slot.state.view_at(now, idle))
    }

    /// The session's state now from the kept one and the marks alone, when they show no
    /// other replica's record past it ([`SessionWriters::Announced`]): the kept state with
    /// this process's own newer records folded on top. Otherwise what the marks said.
    async fn announced(
        &self,
        marks: &SessionMarks,
        tenant: TenantId,
        id: &str,
        slot: &Mutex<Slot>,
    ) -> std::result::Result<SessionView, Marked> {
        let now = self.ports.clock.now();
        let seq = {
            let slot = Slot::lock(slot);
            let fresh = slot.verified_at.is_some_and(|at| now - at <= VERIFY_AFTER);
            if !fresh || slot.ahead.len() >= VERIFY_EVERY {
                return Err(Marked::Unknown);
            }
            slot.state.seq
        };
        let marked = marks.past(tenant, id, seq).await;
        if marked != Marked::Current {
            return Err(marked);
        }
        let idle = self.kept.settings.idle;
        // Another check may have caught the state up meanwhile: then it is only more current.
        let slot = Slot::lock(slot);
        if slot.ahead.is_empty() {
            return Ok(slot.state.view_at(now, idle));
        }
        let mut state = slot.state.clone();
        for fold in slot.ahead.values() {
            state.fold(fold, idle);
        }
        Ok(state.view_at(now, idle))
    }

    /// Folds the session's records in the store past the kept state: the `seq`s of those
    /// records first (an indexed scan, usually only this process's own records, whose folds
    /// are kept), then the records themselves only if another process wrote one.
    async fn catch_up(&self, tenant: TenantId, id: &str, slot: &Mutex<Slot>) -> Result<()> {
        let idle = self.kept.settings.idle;
        let filter = AuditFilter { session_id: Some(id.to_owned()), ..AuditFilter::default() };
        loop {
            let after = Slot::lock(slot).state.seq;
            let scan = AuditScan { order: SeqOrder::Asc, after_seq: Some(after), limit: PAGE };
            let seqs = self.repos.audit.scan_audit_seqs(tenant, &filter, scan).await?;
            let Some(&last) = seqs.last() else { return Ok(()) };
            let foreign = {
                let slot = Slot::lock(slot);
                seqs.iter().any(|s| *s > slot.state.seq && !slot.ahead.contains_key(s))
            };
            let folds: Vec<SessionFold> = if foreign {
                // Read off the records before taking the lock the audit writer also takes.
                self.repos.audit.scan_audit(tenant, &filter, scan).await?.iter().map(SessionFold::of).collect()
            } else {
                Vec::new()
            };
            {
                let mut slot = Slot::lock(slot);
                for fold in folds {
                    let fold = slot.ahead.remove(&fold.seq).unwrap_or(fold);
                    slot.state.fold(&fold, idle);
                }
                slot.fold_ahead(last, idle);
            }
            if seqs.len() < PAGE as usize {
                return Ok(());
            }
        }
    }

    /// The session `id` as a check recorded at `seq` (at `at`) would have read it: the
    /// session's records before `seq`, folded. For a replay of a decision whose check read no
    /// session (its policies did not), when the replayed policies do: `refolded` keeps each
    /// session's fold and what was read past it from one call to the next, which come in
    /// ascending `seq`, so each record is read once and the store is asked only when the
    /// records read ahead run out before `seq`.
    pub(crate) async fn state_before(
        &self,
        tenant: TenantId,
        id: &str,
        seq: i64,
        at: OffsetDateTime,
        refolded: &mut Refolded,
    ) -> Result<SessionView> {
        let idle = self.kept.settings.idle;
        if refolded.0.len() >= MAX_REFOLDED && !refolded.0.contains_key(id) {
            // Bounded: the sessions met again are read afresh.
            refolded.0.clear();
        }
        let (state, ahead) =
            refolded.0.entry(id.to_owned()).or_insert_with(|| (SessionState::new(id), VecDeque::new()));
        let filter = AuditFilter { session_id: Some(id.to_owned()), ..AuditFilter::default() };
        loop {
            while let Some(fold) = ahead.front() {
                if fold.seq >= seq {
                    return Ok(state.view_at(at, idle));
                }
                state.fold(fold, idle);
                ahead.pop_front();
            }
            let scan = AuditScan { order: SeqOrder::Asc, after_seq: Some(state.seq), limit: REFOLD_PAGE };
            let records = self.repos.audit.scan_audit(tenant, &filter, scan).await?;
            if records.is_empty() {
                return Ok(state.view_at(at, idle));
            }
            ahead.extend(records.iter().map(SessionFold::of));
        }
    }

    /// `GET /sessions/{id}`.
    pub async fn get(&self, caller: &Caller, id: &str) -> Result<SessionView> {
        caller.require_permission(Permission::AuditRead)?;
        check_id(id)?;
        self.state(caller.tenant_id(), id).await
    }

    /// `POST /sessions/{id}/observe`.
    pub async fn observe(&self, caller: &Caller, id: &str, req: ObserveRequest) -> Result<Observation> {
        caller.require_permission(Permission::PoliciesCheck)?;
        let tenant = caller.tenant_id();
        let mut v = Violations::new();
        check_text(&mut v, "session_id", id, MAX_SESSION_ID_LEN);
        let agent = req.agent_id.trim().parse::<AgentId>().ok();
        v.check(agent.is_some(), "agent_id", "must be a UUID");
        v.check(!req.content.is_empty(), "content", "must not be empty");
        v.check(req.content.len() <= super::guard::MAX_PROMPT_BYTES, "content", "must be at most 524,288 bytes");
        for (field, value, max) in
            [("source", &req.source, MAX_SOURCE_LEN), ("tool_call_id", &req.tool_call_id, MAX_SESSION_ID_LEN)]
        {
            if let Some(value) = value {
                check_text(&mut v, field, value, max);
            }
        }
        v.check(req.labels.len() <= MAX_DECLARED_LABELS, "labels", "at most 16 labels");
        for (i, label) in req.labels.iter().enumerate() {
            v.check(
                is_label(label),
                &format!("labels[{i}]"),
                "must be 1 to 64 lower-case letters, digits, '_', '.', ':' or '-'",
            );
        }
        v.into_result()?;
        let agent = agent.ok_or_else(|| DomainError::invalid("agent_id", "must be a UUID"))?;
        let agent = self.agents.reported_agent(tenant, agent).await?;
        let screen = ValidateRequest {
            prompt: req.content.clone(),
            agent_id: None,
            system_prompt: None,
            direction: GuardDirection::Input,
        };
        let verdict = self.guard.screen(tenant, &screen).await?;
        let mut labels = req.labels.clone();
        if !verdict.safe {
            labels.push(UNTRUSTED_CONTENT_SEEN.to_owned());
        }
        labels.sort();
        labels.dedup();
        let digest = format!("sha256:{}", hex::encode(Sha256::digest(req.content.as_bytes())));
        let (instructed, named) = if req.trusted {
            let mut named = instructed::values(&req.content);
            named.truncate(MAX_SESSION_VALUES);
            (Vec::new(), named)
        } else {
            (instructed::instructed(&req.content), Vec::new())
        };
        let digests =
            |values: &[String]| -> Vec<String> { values.iter().map(|v| value_digest(tenant, id, v)).collect() };
        let details = ObservedDetails {
            bytes: req.content.len(),
            digest: &digest,
            labels: &labels,
            model_version: verdict.model_version,
            reasons: &verdict.reasons,
            score: verdict.score,
            tool_call_id: req.tool_call_id.as_deref(),
            verdict: verdict.verdict,
            instructed: &digests(&instructed),
            named: &digests(&named),
            trusted: req.trusted,
        };
        let mut event = AuditEvent::new(tenant, caller_actor(caller), SESSION_OBSERVED)
            .action("observe")
            .resource(req.source.as_deref().map_or_else(|| "content".to_owned(), |s| s.trim().to_owned()))
            .details_of(&details);
        event.agent_id = Some(agent.id.as_uuid());
        event.decision = Some(if verdict.safe { "clean" } else { "flagged" }.to_owned());
        event.risk_score = Some(verdict.score);
        event.session_id = Some(id.to_owned());
        let record = self.log.record(event).await?;
        let session = self.state(tenant, id).await?;
        Ok(Observation {
            observation_id: record.id,
            flagged: !verdict.safe,
            verdict: verdict.verdict,
            score: verdict.score,
            reasons: verdict.reasons,
            labels,
            instructed,
            digest,
            session,
        })
    }
}

/// A session id in a path: 1 to 200 characters, no control characters.
fn check_id(id: &str) -> Result<()> {
    let mut v = Violations::new();
    check_text(&mut v, "session_id", id, MAX_SESSION_ID_LEN);
    v.into_result()
}

#[cfg(test)]
mod tests {
    use super::is_label;

    #[test]
    fn labels_are_plain_lower_case_words() {
        for ok in ["secret_read", "untrusted_input", "class:pii", "a.b-c", "x"] {
            assert!(is_label(ok), "{ok}");
        }
        for bad in ["", "Secret", "with space", "ü", &"x".repeat(65)] {
            assert!(!is_label(bad), "{bad}");
        }
    }
}
