//! The one append path of the audit log, with group commit.
//!
//! Every writer (the API, the webhook, policy checks, admin changes, HITL) calls
//! [`AuditLog::record`] or [`AuditLog::append`]. Entries go through a bounded queue to one
//! [`AuditWriter`] per process, which takes everything waiting (up to `max_batch`) and
//! appends it in one store transaction; each caller is answered when that transaction has
//! committed. While one batch commits the next one gathers, so a busy log commits large
//! batches and a quiet one commits single entries without waiting.

use std::sync::Arc;

use futures::channel::{mpsc, oneshot};
use futures::{SinkExt, StreamExt};
use uuid::Uuid;

use crate::error::{DomainError, Result};
use crate::ids::{AuditId, TenantId};
use crate::model::{Actor, AuditEntry, AuditRecord, JsonText, is_service_event_type};
use crate::ports::{AuditRepo, Clock, IdGen};
use crate::services::session_marks::SessionMarks;

/// Tunables of the audit writer.
#[derive(Debug, Clone, Copy)]
pub struct AuditLogSettings {
    /// Most entries committed in one transaction.
    pub max_batch: usize,
    /// Entries waiting beyond the one being committed; appends wait when it is full.
    pub queue: usize,
}

impl Default for AuditLogSettings {
    fn default() -> Self {
        Self { max_batch: 512, queue: 8192 }
    }
}

/// An event to record, built by the service where it happened.
#[derive(Debug, Clone)]
pub struct AuditEvent {
    /// The record's id when the writer names it (an idempotent webhook delivery, whose
    /// repeat then conflicts); `None` takes a fresh one from the `IdGen` port.
    pub id: Option<AuditId>,
    pub tenant_id: TenantId,
    pub actor: Actor,
    pub event_type: String,
    pub agent_id: Option<Uuid>,
    pub action: Option<String>,
    pub resource: Option<String>,
    pub decision: Option<String>,
    pub risk_score: Option<f64>,
    /// Serialised when it is set, once: the text is what is stored, hashed and served.
    pub details: JsonText,
    /// The agent session the event belongs to.
    pub session_id: Option<String>,
}

impl AuditEvent {
    /// An event of the service's own; `event_type` must be in a namespace of
    /// [`SERVICE_NAMESPACES`](crate::model::SERVICE_NAMESPACES), which clients may not write
    /// (and should be listed in [`SERVICE_EVENT_TYPES`](crate::model::SERVICE_EVENT_TYPES)).
    pub fn new(tenant_id: TenantId, actor: Actor, event_type: impl Into<String>) -> Self {
        let event_type = event_type.into();
        debug_assert!(
            is_service_event_type(&event_type),
            "`{event_type}` is outside the service's namespaces: clients could forge it"
        );
        Self {
            id: None,
            tenant_id,
            actor,
            event_type,
            agent_id: None,
            action: None,
            resource: None,
            decision: None,
            risk_score: None,
            details: JsonText::empty_object(),
            session_id: None,
        }
    }

    pub fn action(mut self, action: impl Into<String>) -> Self {
        self.action = Some(action.into());
        self
    }

    pub fn resource(mut self, resource: impl Into<String>) -> Self {
        self.resource = Some(resource.into());
        self
    }

    pub fn details(mut self, details: serde_json::Value) -> Self {
        self.details = JsonText::from_value(&details);
        self
    }

    /// Details serialised straight from `details` (a struct that serialises to an object),
    /// without building a `serde_json::Value` first: for a hot path.
    pub fn details_of(mut self, details: &impl serde::Serialize) -> Self {
        self.details = JsonText::from_serialize(details);
        self
    }
}

struct Pending {
    entry: AuditEntry,
    done: oneshot::Sender<Result<AuditRecord>>,
}

/// The handle every writer holds. Cheap to clone.
#[derive(Clone)]
pub struct AuditLog {
    queue: mpsc::Sender<Pending>,
    clock: Arc<dyn Clock>,
    ids: Arc<dyn IdGen>,
    /// Where a committed record of an agent session is marked for the other replicas
    /// (`SessionWriters::Announced`).
    marks: Option<SessionMarks>,
}

/// The task that commits batches; run it once per process (`AuditWriter::run`). It ends
/// when every `AuditLog` handle is gone.
pub struct AuditWriter {
    queue: mpsc::Receiver<Pending>,
    store: Arc<dyn AuditRepo>,
    max_batch: usize,
    observers: Vec<Arc<dyn CommitObserver>>,
}

/// Told of the records this process commits, in chain order, before their writers are
/// answered: what it keeps in step with its own writes (agent sessions) is current by the
/// time a writer goes on. Called on the writer's task: keep it short and never block.
pub trait CommitObserver: Send + Sync {
    fn committed(&self, records: &[AuditRecord]);
    /// Entries whose append failed: most were not written, but one whose commit failed
    /// after the fact (a connection lost at `COMMIT`) may have been. What follows commits
    /// must no longer count on having seen every record.
    fn failed(&self, entries: &[AuditEntry]);
}

fn writer_gone() -> DomainError {
    DomainError::Unavailable("the audit log writer".into())
}

impl AuditLog {
    pub fn new(
        store: Arc<dyn AuditRepo>,
        clock: Arc<dyn Clock>,
        ids: Arc<dyn IdGen>,
        settings: AuditLogSettings,
    ) -> (AuditLog, AuditWriter) {
        let (tx, rx) = mpsc::channel(settings.queue.max(1));
        let writer = AuditWriter { queue: rx, store, max_batch: settings.max_batch.max(1), observers: Vec::new() };
        (AuditLog { queue: tx, clock, ids, marks: None }, writer)
    }

    /// Marks each committed record of an agent session with `marks` before its writer is
    /// answered. Call before the log is cloned.
    pub(crate) fn marking_sessions(mut self, marks: SessionMarks) -> Self {
        self.marks = Some(marks);
        self
    }

    /// Stamps `event` with an id and the time, and appends it. Answers once it is durable.
    pub async fn record(&self, event: AuditEvent) -> Result<AuditRecord> {
        let entry = AuditEntry {
            id: event.id.unwrap_or_else(|| AuditId(self.ids.new_id())),
            tenant_id: event.tenant_id,
            timestamp: self.clock.now(),
            actor: event.actor,
            event_type: event.event_type,
            agent_id: event.agent_id,
            action: event.action,
            resource: event.resource,
            decision: event.decision,
            risk_score: event.risk_score,
            details: event.details,
            session_id: event.session_id,
        };
        self.append(entry).await
    }

    /// Records `event` where the operation it describes has already happened: a failure is
    /// logged, not returned, so the caller is not told a completed change failed.
    pub async fn record_after(&self, event: AuditEvent) {
        let event_type = event.event_type.clone();
        if let Err(e) = self.record(event).await {
            tracing::error!(error = %e, event_type, "could not record an audit event for a completed change");
        }
    }

    /// Appends an entry as built. Answers once it is durable (and, for a record of an agent
    /// session on a store other replicas write, marked for them).
    pub async fn append(&self, entry: AuditEntry) -> Result<AuditRecord> {
        let (done, answer) = oneshot::channel();
        self.queue.clone().send(Pending { entry, done }).await.map_err(|_| writer_gone())?;
        let record = answer.await.map_err(|_| writer_gone())??;
        if let (Some(marks), Some(session)) = (&self.marks, &record.session_id) {
            marks.written(record.tenant_id, session, record.seq).await;
        }
        Ok(record)
    }
}

impl AuditWriter {
    /// Adds an observer of every commit from now on.
    pub fn observe(&mut self, observer: Arc<dyn CommitObserver>) {
        self.observers.push(observer);
    }

    fn committed(&self, records: &[AuditRecord]) {
        for observer in &self.observers {
            observer.committed(records);
        }
    }

    fn failed(&self, entries: &[AuditEntry]) {
        for observer in &self.observers {
            observer.failed(entries);
        }
    }

    pub async fn run(mut self) {
        while let Some(first) = self.queue.next().await {
            let mut batch = vec![first];
            while batch.len() < self.max_batch {
                match self.queue.try_recv() {
                    Ok(next) => batch.push(next),
                    _ => break,
                }
            }
            self.commit(batch).await;
        }
    }

    async fn commit(&self, batch: Vec<Pending>) {
        let (entries, waiters): (Vec<_>, Vec<_>) = batch.into_iter().map(|p| (p.entry, p.done)).unzip();
        let retry_alone = entries.len() > 1;
        match self.store.append_audit(entries.clone()).await {
            Ok(records) => {
                self.committed(&records);
                for (done, record) in waiters.into_iter().zip(records) {
                    let _ = done.send(Ok(record));
                }
            }
            // One bad entry (a tenant that vanished, a duplicate id) must not fail the
            // others: append them one by one, each getting its own answer.
            Err(DomainError::Conflict(_)) if retry_alone => {
                for (done, entry) in waiters.into_iter().zip(entries) {
                    let result = match self.store.append_audit(vec![entry.clone()]).await {
                        Ok(mut r) => {
                            self.committed(&r);
                            r.pop().ok_or_else(|| DomainError::Internal("append returned no record".into()))
                        }
                        Err(e) => {
                            self.failed(std::slice::from_ref(&entry));
                            Err(e)
                        }
                    };
                    let _ = done.send(result);
                }
            }
            Err(e) => {
                self.failed(&entries);
                tracing::warn!(error = %e, entries = waiters.len(), "audit batch failed");
                for done in waiters {
                    let _ = done.send(Err(e.clone()));
                }
            }
        }
    }
}
