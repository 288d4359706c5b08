//! Tenant policies in Rego and the policy check (spec 2.4, 2.5, 4.6).
//!
//! A check loads the agent, computes the action's explainable risk
//! (`agentgov_detect::risk::assess_action`), evaluates every enabled policy of the tenant
//! against one input document, combines the outcomes, and appends the decision to the audit
//! log before answering. The Rego contract is in `docs/policies.md`.

pub mod templates;

use std::sync::Arc;

use agentgov_detect::risk;

use self::templates::{ParameterKind, PolicyTemplate, TEMPLATES};
use super::agents::AgentService;
use super::anomalies::{AnomalyService, CheckScore};
use super::audit::{AuditEvent, AuditLog, caller_actor};
use super::check::{
    CheckRequest, CheckResponse, CheckRiskFactor, MAX_CONTEXT_BYTES, MatchedPolicy, action_context, report_decision,
    round_score, validate_check,
};
use super::hitl::{HitlApproval, HitlDecision, HitlService, enforced_versions};
use super::sessions::SessionService;
use super::snapshots::Snapshots;
use super::status::{DECISIONS_METRIC, HourlyCounter};
use super::validate::{check_description, check_name, check_object};
use super::{Caller, Ports};
use crate::error::{DomainError, FieldError, Result, Violations};
use crate::events::{POLICY_CHANGED, POLICY_DECISION, TENANT_UPDATED};
use crate::ids::{AgentId, AuditId, HitlId, PolicyId, TenantId};
use crate::model::{
    Agent, AgentStatus, EffectiveSettings, ExpectedFold, HitlRequest, JsonObject, Permission, Policy, PolicyFilter,
    PolicyMode, Role, SessionView, action_digest,
};
use crate::page::{Page, PageRequest};
use crate::ports::{CompiledPolicies, Event, OffloadError, PolicyInput, PolicyModule, PolicyOutcome};

const MAX_DESCRIPTION_LEN: usize = 2000;
/// Largest Rego module accepted.
pub const MAX_REGO_BYTES: usize = 64 * 1024;
/// Wall-clock budget of one check's policy evaluation, every module together, waiting for a
/// pool thread included: past it the check is denied as not evaluated.
pub const CHECK_BUDGET: std::time::Duration = std::time::Duration::from_millis(250);
/// Budget of compiling a tenant's policies, or checking one module on upload.
pub const COMPILE_BUDGET: std::time::Duration = std::time::Duration::from_secs(5);

/// Tunables of policy checks.
#[derive(Debug, Clone)]
pub struct PolicySettings {
    /// A check whose risk score is at or above this needs approval, whatever the policies
    /// say (unless one denies): the default for tenants that set no threshold of their own.
    pub approval_threshold: f64,
    /// How long a tenant's compiled policies are kept without a change being announced: a
    /// bound on staleness should a bus message be lost.
    pub cache_ttl: std::time::Duration,
    /// How long an approval request waits for a decision, for tenants that set no window
    /// of their own and requests that name none (seconds).
    pub hitl_timeout_secs: u32,
    /// Most policies one tenant may store.
    pub max_policies_per_tenant: u64,
}

impl Default for PolicySettings {
    fn default() -> Self {
        let EffectiveSettings { approval_threshold, hitl_timeout_secs, .. } = EffectiveSettings::default();
        Self {
            approval_threshold,
            cache_ttl: std::time::Duration::from_secs(60),
            hitl_timeout_secs,
            max_policies_per_tenant: 100,
        }
    }
}

impl PolicySettings {
    /// The settings of a tenant that chose none.
    pub fn tenant_defaults(&self) -> EffectiveSettings {
        EffectiveSettings {
            approval_threshold: self.approval_threshold,
            hitl_timeout_secs: self.hitl_timeout_secs,
            ..EffectiveSettings::default()
        }
    }
}

/// A template and the values of its parameters, in place of `rego`.
#[derive(Debug, Clone, serde::Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct TemplateUse {
    /// A template id from `GET /policies/templates`.
    pub id: String,
    /// Values for some or all of its parameters; the rest take their defaults.
    #[serde(default)]
    #[cfg_attr(feature = "openapi", schema(value_type = Object))]
    pub parameters: JsonObject,
}

/// `POST /policies` and `PUT /policies/{id}` (a full update). Exactly one of `rego` and
/// `template` is given.
#[derive(Debug, Clone, serde::Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct PolicyRequest {
    /// Unique within the tenant; 1 to 200 characters.
    #[cfg_attr(
        feature = "openapi",
        schema(
            min_length = 1,
            max_length = 200,
            pattern = r"^[^\u0000-\u001f\u007f-\u009f]*[^\s\u0000-\u001f\u007f-\u009f][^\u0000-\u001f\u007f-\u009f]*$"
        )
    )]
    pub name: String,
    /// At most 2,000 characters.
    #[cfg_attr(
        feature = "openapi",
        schema(max_length = 2000, pattern = r"^[^\u0000-\u0008\u000b-\u001f\u007f-\u009f]*$")
    )]
    pub description: Option<String>,
    /// A Rego module (see docs/policies.md); at most 64 KiB.
    pub rego: Option<String>,
    /// Instantiate a template instead of writing `rego`.
    pub template: Option<TemplateUse>,
    /// Default `true`; `false` is `mode: "off"`.
    pub enabled: Option<bool>,
    /// `enforce` (default), `shadow` (evaluated, its outcomes recorded as `would_deny` /
    /// `would_require_approval` and never acted on) or `off`. Given with `enabled`, the two
    /// must agree.
    pub mode: Option<PolicyMode>,
    /// On update: the version the change was made from; 409 if the policy has moved on.
    pub version: Option<i64>,
}

impl PolicyRequest {
    /// The name as stored: trimmed.
    fn name(&self) -> String {
        self.name.trim().to_owned()
    }

    /// The mode asked for (`mode`, else `enabled`, else `enforce`); 422 when they disagree.
    fn mode(&self) -> Result<PolicyMode> {
        match (self.mode, self.enabled) {
            (Some(mode), Some(enabled)) if enabled != (mode != PolicyMode::Off) => Err(DomainError::invalid(
                "mode",
                format!("is {:?} but enabled is {enabled}; give one of them", mode.as_str()),
            )),
            (Some(mode), _) => Ok(mode),
            (None, Some(false)) => Ok(PolicyMode::Off),
            (None, _) => Ok(PolicyMode::Enforce),
        }
    }

    /// The description as stored: trimmed, and none when blank.
    fn description(&self) -> Option<String> {
        self.description.as_deref().map(str::trim).filter(|d| !d.is_empty()).map(str::to_owned)
    }
}

/// A template as `GET /policies/templates` lists it.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct TemplateView {
    pub id: &'static str,
    pub name: &'static str,
    pub description: &'static str,
    pub parameters: Vec<TemplateParameterView>,
    /// The module with every parameter at its default: a valid policy as it stands.
    pub rego: String,
}

#[derive(Debug, Clone, PartialEq, serde::Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct TemplateParameterView {
    pub name: &'static str,
    #[serde(rename = "type")]
    pub kind: ParameterKind,
    pub description: &'static str,
    /// Of the parameter's `type`: a string, number, boolean or list.
    pub default: serde_json::Value,
    /// The values allowed, when only some are.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub one_of: Vec<&'static str>,
}

impl From<&PolicyTemplate> for TemplateView {
    fn from(t: &PolicyTemplate) -> Self {
        Self {
            id: t.id,
            name: t.name,
            description: t.description,
            parameters: t
                .parameters
                .iter()
                .map(|p| TemplateParameterView {
                    name: p.name,
                    kind: p.kind,
                    description: p.description,
                    default: serde_json::from_str(p.default).unwrap_or(serde_json::Value::Null),
                    one_of: p.one_of.to_vec(),
                })
                .collect(),
            rego: t.rego(),
        }
    }
}

/// Decision records a shadow report reads at most (newest first).
pub const SHADOW_REPORT_MAX_RECORDS: usize = 50_000;
const SHADOW_REPORT_PAGE: u32 = 1000;
/// The longest window of a shadow report, in hours (30 days).
pub const SHADOW_REPORT_MAX_HOURS: i64 = 720;

/// `GET /policies/{id}/shadow-report`: what a policy would have done, to decide whether to
/// enforce it.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ShadowReport {
    pub policy_id: PolicyId,
    pub version: i64,
    pub mode: PolicyMode,
    /// The decisions read: recorded checks from the later of the window's start and the
    /// policy's last change (when it took its present version and mode), to now.
    #[serde(with = "time::serde::rfc3339")]
    pub from: time::OffsetDateTime,
    #[serde(with = "time::serde::rfc3339")]
    pub to: time::OffsetDateTime,
    pub decisions: u64,
    pub would_deny: u64,
    pub would_require_approval: u64,
    pub would_error: u64,
    /// `would_deny` ÷ `decisions` (0 without decisions).
    pub would_deny_rate: f64,
    pub would_require_approval_rate: f64,
    /// The policy's messages by count, most frequent first (at most 10).
    pub top_reasons: Vec<ShadowReason>,
    /// The newest decisions it would have changed (at most 5).
    pub examples: Vec<ShadowExample>,
    /// Whether more decisions were in the window than a report reads (50,000, newest first).
    pub truncated: bool,
}

#[derive(Debug, Clone, PartialEq, serde::Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ShadowReason {
    pub message: String,
    pub count: u64,
}

#[derive(Debug, Clone, PartialEq, serde::Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ShadowExample {
    pub decision_id: crate::ids::AuditId,
    #[serde(with = "time::serde::rfc3339")]
    pub timestamp: time::OffsetDateTime,
    pub agent_id: Option<uuid::Uuid>,
    pub action: Option<String>,
    pub resource: Option<String>,
    /// The decision as it was made.
    pub decision: Option<String>,
    /// `would_deny`, `would_require_approval` or `would_error`.
    pub effect: String,
    pub messages: Vec<String>,
}

/// What a shadow report reads of a decision record's `details`.
#[derive(serde::Deserialize)]
struct RecordedMatches {
    #[serde(default)]
    matched_policies: Vec<RecordedMatch>,
}

#[derive(serde::Deserialize)]
struct RecordedMatch {
    id: PolicyId,
    effect: String,
    #[serde(default)]
    messages: Vec<String>,
}

/// A tenant with too many policy evaluations already waiting: 429.
pub(crate) fn busy() -> DomainError {
    DomainError::RateLimited { retry_after: std::time::Duration::from_secs(1) }
}

/// The compiled, enabled policies of one tenant and its settings, as one check sees them.
pub(crate) struct TenantPolicies {
    pub(crate) policies: Vec<PolicyModule>,
    pub(crate) compiled: Arc<dyn CompiledPolicies>,
    pub(crate) settings: EffectiveSettings,
    /// Whether any of the policies may read `input.session` ([`reads_session`]): if none
    /// does, a check of a session reads no session state (its record still carries the
    /// session, which it joins all the same).
    pub(crate) reads_session: bool,
}

/// Whether a policy's Rego may read `input.session`: it names `session` anywhere, or uses
/// `input` other than as `input.<field>` (whole or indexed, passed to a function such as
/// `object.get(input, ...)`, imported under another name, or replaced with `with`).
/// Conservative by construction: the word in a comment counts as a read, and no policy that
/// reads the session can be taken for one that does not.
pub(crate) fn reads_session(rego: &str) -> bool {
    if rego.contains("session") {
        return true;
    }
    let word = |b: u8| b.is_ascii_alphanumeric() || b == b'_';
    let bytes = rego.as_bytes();
    let mut from = 0;
    while let Some(at) = rego[from..].find("input") {
        let (start, end) = (from + at, from + at + "input".len());
        from = end;
        if (start > 0 && word(bytes[start - 1])) || bytes.get(end).is_some_and(|b| word(*b)) {
            continue;
        }
        let field = rego[end..].trim_start().strip_prefix('.').map(str::trim_start);
        if !field.is_some_and(|f| f.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_')) {
            return true;
        }
    }
    false
}

super::ports::repos!(Repos { policies: PolicyRepo, tenants: TenantRepo, audit: AuditRepo });
#[derive(Clone)]
pub struct PolicyService {
    repos: Repos,
    ports: Ports,
    audit: AuditLog,
    agents: AgentService,
    hitl: HitlService,
    anomalies: AnomalyService,
    sessions: SessionService,
    cache: Snapshots<TenantId, Arc<TenantPolicies>>,
    /// Each checked agent as the input's `agent` member, with the agent it was made from:
    /// reused while the agent is unchanged, so the engine sees the same allocation.
    agent_inputs: moka::sync::Cache<(TenantId, AgentId), Arc<AgentInput>>,
    settings: PolicySettings,
    /// Answered checks per hour and decision, for `GET /stats`.
    counts: Arc<HourlyCounter>,
}

/// Agents whose input form is kept (a few KiB each).
const AGENT_INPUTS: u64 = 4096;

/// An agent and its input form.
struct AgentInput {
    agent: Agent,
    json: Arc<serde_json::Value>,
}

fn not_found(id: PolicyId) -> DomainError {
    DomainError::not_found("policy", id)
}

impl PolicyService {
    #[expect(clippy::too_many_arguments, reason = "built once, by the composition root: one argument per collaborator")]
    pub fn new(
        ports: Ports,
        repos: Repos,
        audit: AuditLog,
        agents: AgentService,
        hitl: HitlService,
        anomalies: AnomalyService,
        sessions: SessionService,
        settings: PolicySettings,
        counts: Arc<HourlyCounter>,
    ) -> Self {
        let cache = Snapshots::new(settings.cache_ttl, 10_000);
        let agent_inputs =
            moka::sync::Cache::builder().max_capacity(AGENT_INPUTS).time_to_live(settings.cache_ttl).build();
        Self { ports, repos, audit, agents, hitl, anomalies, sessions, cache, agent_inputs, settings, counts }
    }

    /// `GET /policies/templates`.
    pub fn templates(&self, caller: &Caller) -> Result<Vec<TemplateView>> {
        caller.require_permission(Permission::PoliciesRead)?;
        Ok(TEMPLATES.iter().map(TemplateView::from).collect())
    }

    /// The module source of a request: its `rego`, or its template instantiated; 422 with
    /// the position of a compile error.
    async fn source(&self, tenant: TenantId, req: &PolicyRequest) -> Result<String> {
        let mut v = Violations::new();
        check_name(&mut v, "name", &req.name);
        if let Some(d) = &req.description {
            check_description(&mut v, "description", d, MAX_DESCRIPTION_LEN);
        }
        let source = match (&req.rego, &req.template) {
            (Some(_), Some(_)) => {
                v.add("template", "give either rego or template, not both");
                None
            }
            (None, None) => {
                v.add("rego", "is required (or a template to instantiate)");
                None
            }
            (Some(rego), None) => Some(rego.clone()),
            (None, Some(t)) => match templates::find(&t.id) {
                None => {
                    let ids: Vec<&str> = TEMPLATES.iter().map(|t| t.id).collect();
                    v.add("template.id", format!("unknown template; one of {}", ids.join(", ")));
                    None
                }
                Some(template) => template.instantiate(&t.parameters, "template.parameters").map_or_else(
                    |e| {
                        v.absorb(e)?;
                        Ok(None)
                    },
                    |rego| Ok(Some(rego)),
                )?,
            },
        };
        v.into_result()?;
        self.checked_rego(tenant, source.unwrap_or_default()).await
    }

    /// `source` if it is a module the engine compiles (on the tenant's share of the pool),
    /// else 422 on `rego` naming the first error.
    pub(crate) async fn checked_rego(&self, tenant: TenantId, source: String) -> Result<String> {
        if source.len() > MAX_REGO_BYTES {
            return Err(DomainError::invalid("rego", format!("must be at most {MAX_REGO_BYTES} bytes")));
        }
        if source.trim().is_empty() {
            return Err(DomainError::invalid("rego", "must not be empty"));
        }
        // On the pool: a hostile module costs its tenant's share, not a request thread.
        let (engine, module) = (self.ports.policy.clone(), source.clone());
        let checked = self.ports.offload.call(tenant, COMPILE_BUDGET, move || engine.validate(&module)).await;
        let refused = |message: String| DomainError::Validation(vec![FieldError::new("rego", message)]);
        match checked {
            Ok(Ok(())) => Ok(source),
            Ok(Err(d)) => Err(DomainError::Validation(vec![FieldError::at("rego", d.line, d.column, d.message)])),
            Err(OffloadError::Busy) => Err(busy()),
            Err(OffloadError::TimedOut) => {
                Err(refused(format!("could not be checked within {} s; simplify the module", COMPILE_BUDGET.as_secs())))
            }
            Err(OffloadError::Panicked) => Err(refused("made the policy engine fail; simplify the module".into())),
        }
    }

    pub(crate) fn require_author(caller: &Caller) -> Result<()> {
        caller.require_role(Role::Admin)?;
        caller.require_permission(Permission::PoliciesWrite)
    }

    /// `POST /policies` (admin).
    pub async fn create(&self, caller: &Caller, req: PolicyRequest) -> Result<Policy> {
        Self::require_author(caller)?;
        let mode = req.mode()?;
        let rego = self.source(caller.tenant_id(), &req).await?;
        let now = self.ports.clock.now();
        let policy = Policy {
            id: PolicyId(self.ports.ids.new_id()),
            tenant_id: caller.tenant_id(),
            name: req.name(),
            description: req.description(),
            rego,
            enabled: mode != PolicyMode::Off,
            mode,
            version: 1,
            created_by: Some(caller.user.id),
            created_at: now,
            updated_at: now,
        };
        let max = self.settings.max_policies_per_tenant;
        self.repos.policies.insert_policy(&policy, max).await.map_err(|e| match e {
            DomainError::Conflict(m) if m == crate::ports::store::POLICY_LIMIT_REACHED => DomainError::Conflict(format!(
                "the tenant already has {max} policies, its limit; delete or reuse one (the operator sets the limit: AGENTGOV_MAX_POLICIES_PER_TENANT)"
            )),
            other => other,
        })?;
        self.changed(caller, "policy.created", None, Some(&policy)).await;
        Ok(policy)
    }

    /// `GET /policies`: newest first.
    pub async fn list(
        &self,
        caller: &Caller,
        enabled: Option<bool>,
        limit: Option<i64>,
        cursor: Option<&str>,
    ) -> Result<Page<Policy>> {
        caller.require_permission(Permission::PoliciesRead)?;
        let page = PageRequest::parse(limit, cursor)?;
        self.repos.policies.list_policies(caller.tenant_id(), &PolicyFilter { enabled }, &page).await
    }

    pub(crate) async fn stored(&self, tenant: TenantId, id: PolicyId) -> Result<Policy> {
        self.repos.policies.get_policy(tenant, id).await?.ok_or_else(|| not_found(id))
    }

    /// `GET /policies/{id}`.
    pub async fn get(&self, caller: &Caller, id: PolicyId) -> Result<Policy> {
        caller.require_permission(Permission::PoliciesRead)?;
        self.stored(caller.tenant_id(), id).await
    }

    /// `PUT /policies/{id}` (admin): a full update; the version goes up by one.
    pub async fn update(&self, caller: &Caller, id: PolicyId, req: PolicyRequest) -> Result<Policy> {
        Self::require_author(caller)?;
        let mode = req.mode()?;
        let rego = self.source(caller.tenant_id(), &req).await?;
        let before = self.stored(caller.tenant_id(), id).await?;
        if let Some(version) = req.version
            && version != before.version
        {
            return Err(DomainError::Conflict(format!(
                "policy is at version {}, not {version}; reload it and apply the change again",
                before.version
            )));
        }
        let after = Policy {
            name: req.name(),
            description: req.description(),
            rego,
            enabled: mode != PolicyMode::Off,
            mode,
            version: before.version + 1,
            updated_at: self.ports.clock.now(),
            ..before.clone()
        };
        self.repos.policies.update_policy(&after).await?;
        self.changed(caller, "policy.updated", Some(&before), Some(&after)).await;
        Ok(after)
    }

    /// `GET /policies/{id}/shadow-report`: the policy's `would_…` outcomes in the window
    /// (`window_hours`, 1 to 720, default 168), read from the decision records.
    pub async fn shadow_report(
        &self,
        caller: &Caller,
        id: PolicyId,
        window_hours: Option<i64>,
    ) -> Result<ShadowReport> {
        use crate::model::{AuditFilter, AuditScan, SeqOrder};
        caller.require_permission(Permission::PoliciesRead)?;
        let hours = window_hours.unwrap_or(168);
        if !(1..=SHADOW_REPORT_MAX_HOURS).contains(&hours) {
            return Err(DomainError::invalid("window_hours", "must be between 1 and 720"));
        }
        let policy = self.stored(caller.tenant_id(), id).await?;
        let to = self.ports.clock.now();
        let from = (to - time::Duration::hours(hours)).max(policy.updated_at);
        let filter =
            AuditFilter { event_type: Some(POLICY_DECISION.into()), from: Some(from), ..AuditFilter::default() };
        let mut report = ShadowReport {
            policy_id: id,
            version: policy.version,
            mode: policy.mode,
            from,
            to,
            decisions: 0,
            would_deny: 0,
            would_require_approval: 0,
            would_error: 0,
            would_deny_rate: 0.0,
            would_require_approval_rate: 0.0,
            top_reasons: Vec::new(),
            examples: Vec::new(),
            truncated: false,
        };
        let mut reasons: std::collections::HashMap<String, u64> = std::collections::HashMap::new();
        let mut after = None;
        'pages: loop {
            let scan = AuditScan { order: SeqOrder::Desc, after_seq: after, limit: SHADOW_REPORT_PAGE };
            let page = self.repos.audit.scan_audit(caller.tenant_id(), &filter, scan).await?;
            for record in &page {
                if report.decisions as usize == SHADOW_REPORT_MAX_RECORDS {
                    report.truncated = true;
                    break 'pages;
                }
                report.decisions += 1;
                let Ok(details) = serde_json::from_str::<RecordedMatches>(record.details.as_str()) else { continue };
                for m in details.matched_policies.into_iter().filter(|m| m.id == id) {
                    match m.effect.as_str() {
                        "would_deny" => report.would_deny += 1,
                        "would_require_approval" => report.would_require_approval += 1,
                        "would_error" => report.would_error += 1,
                        _ => continue,
                    }
                    for message in &m.messages {
                        *reasons.entry(message.clone()).or_default() += 1;
                    }
                    if report.examples.len() < 5 {
                        report.examples.push(ShadowExample {
                            decision_id: record.id,
                            timestamp: record.timestamp,
                            agent_id: record.agent_id,
                            action: record.action.clone(),
                            resource: record.resource.clone(),
                            decision: record.decision.clone(),
                            effect: m.effect,
                            messages: m.messages,
                        });
                    }
                }
            }
            match page.last() {
                Some(last) if page.len() == SHADOW_REPORT_PAGE as usize => after = Some(last.seq),
                _ => break,
            }
        }
        if report.decisions > 0 {
            let rate = |n: u64| round_score(n as f64 / report.decisions as f64);
            report.would_deny_rate = rate(report.would_deny);
            report.would_require_approval_rate = rate(report.would_require_approval);
        }
        let mut reasons: Vec<ShadowReason> =
            reasons.into_iter().map(|(message, count)| ShadowReason { message, count }).collect();
        reasons.sort_by(|a, b| b.count.cmp(&a.count).then_with(|| a.message.cmp(&b.message)));
        reasons.truncate(10);
        report.top_reasons = reasons;
        Ok(report)
    }

    /// `DELETE /policies/{id}` (admin).
    pub async fn delete(&self, caller: &Caller, id: PolicyId) -> Result<()> {
        Self::require_author(caller)?;
        let before = self.stored(caller.tenant_id(), id).await?;
        self.repos.policies.delete_policy(caller.tenant_id(), id).await?;
        self.changed(caller, "policy.deleted", Some(&before), None).await;
        Ok(())
    }

    /// Audits a change (with the versions before and after), forgets the tenant's compiled
    /// policies here, and tells every other replica to forget them too.
    async fn changed(&self, caller: &Caller, event_type: &str, before: Option<&Policy>, after: Option<&Policy>) {
        let tenant = caller.tenant_id();
        self.cache.invalidate(&tenant);
        let summary = |p: Option<&Policy>| {
            p.map(|p| {
                serde_json::json!({"version": p.version, "name": p.name, "enabled": p.enabled, "mode": p.mode, "rego": p.rego})
            })
        };
        let Some(policy) = after.or(before) else { return };
        let details = serde_json::json!({"before": summary(before), "after": summary(after)});
        let event = AuditEvent::new(tenant, caller_actor(caller), event_type)
            .action(event_type.rsplit('.').next().unwrap_or(event_type))
            .resource(format!("policies/{}", policy.id))
            .details(details);
        self.audit.record_after(event).await;
        let data = serde_json::json!({"policy_id": policy.id, "version": policy.version, "change": event_type});
        self.ports.announce(tenant, POLICY_CHANGED, data).await;
    }

    /// Reacts to an event from the bus: a change of policies or settings on any replica
    /// drops the tenant's compiled policies here.
    pub fn on_event(&self, event: &Event) {
        if event.event_type == POLICY_CHANGED || event.event_type == TENANT_UPDATED {
            self.forget_tenant(event.tenant_id);
        }
    }

    /// Forgets what is kept of the tenant's policies and settings.
    pub(crate) fn forget_tenant(&self, tenant: TenantId) {
        self.cache.invalidate(&tenant);
    }

    /// Forgets every tenant's compiled policies: for a (re)subscription to the bus, after
    /// which announcements made in the meantime may have been missed.
    pub fn forget_compiled(&self) {
        self.cache.invalidate_all();
    }

    /// The tenant's enabled policies, compiled, and its settings; from the cache unless a
    /// change was announced since they were loaded.
    async fn enabled(&self, tenant: TenantId) -> Result<Arc<TenantPolicies>> {
        if let Some(found) = self.cache.get(&tenant) {
            return Ok(found);
        }
        let generation = self.cache.generation();
        let settings = match self.repos.tenants.get_tenant(tenant).await? {
            Some(found) => found.effective(&self.settings.tenant_defaults()),
            None => return Err(DomainError::not_found("tenant", tenant)),
        };
        let policies: Vec<PolicyModule> =
            self.repos.policies.enabled_policies(tenant).await?.into_iter().map(PolicyModule::from).collect();
        let compiled = self.compile(tenant, policies.clone()).await?;
        let reads_session = policies.iter().any(|p| reads_session(&p.rego));
        let set = Arc::new(TenantPolicies { policies, compiled, settings, reads_session });
        self.cache.insert(tenant, set.clone(), generation);
        Ok(set)
    }

    /// `POST /policies/check`.
    pub async fn check(&self, caller: &Caller, req: CheckRequest) -> Result<CheckResponse> {
        caller.require_permission(Permission::PoliciesCheck)?;
        let started = self.ports.clock.now();
        let agent_id = validate_check(&req)?;
        let agent = self.agents.reported_agent(caller.tenant_id(), agent_id).await?;
        let set = self.enabled(caller.tenant_id()).await?;
        let session = self.session(caller.tenant_id(), &req, set.reads_session).await?;
        let (mut response, kept) =
            self.decide(&agent, &req, session.as_ref(), &set.settings, &set.policies, set.compiled.clone()).await?;
        if req.dry_run {
            // Whether the token would be taken, without spending it.
            self.present_approval(&agent, &req, &set.policies, &mut response, false).await?;
            report_decision(&self.ports, caller, &agent, &req, &response, started);
            return Ok(response);
        }
        let denied = !response.allowed && !response.required_approval;
        let anomaly = self
            .anomalies
            .score_check(&agent, &req.action, &req.resource, denied, response.risk_score)
            .await?
            .filter(|s| s.anomalous);
        if let Some(anomaly) = &anomaly {
            raise_for_anomaly(&mut response, anomaly, &set.settings);
        }
        self.present_approval(&agent, &req, &set.policies, &mut response, true).await?;
        let mut response = self.record_decision(caller, &agent, &req, response, kept.as_ref()).await?;
        if let (Some(anomaly), Some(decision_id)) = (anomaly, response.decision_id) {
            // The decision stands recorded: a report that cannot be filed is logged, not
            // answered.
            if let Err(e) =
                self.anomalies.check_was_anomalous(&agent, &req.action, &req.resource, &anomaly, decision_id).await
            {
                tracing::warn!(tenant = %agent.tenant_id, agent = %agent.id, error = %e, "could not file the detector's report");
            }
        }
        if let (true, Some(decision_id)) = (response.required_approval, response.decision_id) {
            let versions = enforced_versions(&set.policies);
            let request = self
                .hitl
                .open_for_check(caller, &agent, &req, &response, decision_id, &set.settings, &versions)
                .await?;
            response.hitl_request_id = Some(request.id);
        }
        report_decision(&self.ports, caller, &agent, &req, &response, started);
        Ok(response)
    }

    /// The check's approval token, if it presents one, applied to its decision: unless a
    /// policy (or the agent's suspension) denies the action, the token is redeemed for the
    /// action's digest under the enforced policies' versions, and spent when `spend`. Taken,
    /// the action is allowed (its approval need met); refused, it is denied, saying why.
    async fn present_approval(
        &self,
        agent: &Agent,
        req: &CheckRequest,
        policies: &[PolicyModule],
        response: &mut CheckResponse,
        spend: bool,
    ) -> Result<()> {
        let Some(token) = &req.approval_token else { return Ok(()) };
        if !response.allowed && !response.required_approval {
            // A denial wins over any approval; the token stays unspent.
            return Ok(());
        }
        let versions = enforced_versions(policies);
        let digest = action_digest(agent.tenant_id, agent.id, &req.action, &req.resource, &req.context, &versions);
        match self.hitl.redeem(agent.tenant_id, token, &digest, spend).await? {
            Ok(id) => {
                response.allowed = true;
                response.required_approval = false;
                response.approved_by_request = Some(id);
                response.reason = format!("allowed: approved in approval request {id}");
            }
            Err(refused) => {
                response.allowed = false;
                response.required_approval = false;
                response.reason = format!("denied: {}", refused.reason());
            }
        }
        Ok(())
    }

    /// `POST /hitl/approve/{id}` (analyst or higher). With `context`, the approver edited
    /// the arguments: the edited action is checked first under the tenant's policies, in the
    /// session of the check that asked (its state now), a denial winning (409, and the
    /// request stays pending), and the approval is bound to it.
    pub async fn approve(&self, caller: &Caller, id: HitlId, approval: HitlApproval) -> Result<HitlRequest> {
        let HitlApproval { comment, context } = approval;
        let Some(context) = context else {
            return self.hitl.approve(caller, id, HitlDecision { comment }).await;
        };
        let mut v = Violations::new();
        check_object(&mut v, "context", &context, MAX_CONTEXT_BYTES);
        v.into_result()?;
        let request = self.hitl.pending_request(caller, id).await?;
        let agent = self.agents.reported_agent(caller.tenant_id(), request.agent_id).await?;
        let set = self.enabled(caller.tenant_id()).await?;
        let edited = CheckRequest {
            agent_id: agent.id.to_string(),
            action: request.action,
            resource: request.resource,
            context,
            dry_run: true,
            session_id: request.session_id,
            ..CheckRequest::default()
        };
        let session = self.session(caller.tenant_id(), &edited, set.reads_session).await?;
        let (decided, _) =
            self.decide(&agent, &edited, session.as_ref(), &set.settings, &set.policies, set.compiled.clone()).await?;
        if !decided.allowed && !decided.required_approval {
            return Err(DomainError::Conflict(format!(
                "the edited action is not approved: the tenant's policies deny it ({}); approval request {id} \
                 stays pending, to be edited again or rejected",
                decided.reason
            )));
        }
        let versions = enforced_versions(&set.policies);
        let digest =
            action_digest(agent.tenant_id, agent.id, &edited.action, &edited.resource, &edited.context, &versions);
        self.hitl.approve_edited(caller, id, comment, edited.context, digest).await
    }

    /// `POST /policies/{id}/test` (admin): evaluates one policy, enabled or not, as a check
    /// would, without recording anything.
    pub async fn test(&self, caller: &Caller, id: PolicyId, req: CheckRequest) -> Result<CheckResponse> {
        Self::require_author(caller)?;
        let agent_id = validate_check(&req)?;
        let policy = self.stored(caller.tenant_id(), id).await?;
        let agent = self.agents.reported_agent(caller.tenant_id(), agent_id).await?;
        let settings = self.enabled(caller.tenant_id()).await?.settings;
        // Tested as if enforced, whatever its mode.
        let module = PolicyModule { shadow: false, ..PolicyModule::from(policy) };
        let compiled = self.compile(caller.tenant_id(), vec![module.clone()]).await?;
        let session = self.session(caller.tenant_id(), &req, reads_session(&module.rego)).await?;
        let (response, _) =
            self.decide(&agent, &req, session.as_ref(), &settings, std::slice::from_ref(&module), compiled).await?;
        Ok(response)
    }

    /// The state of the check's session before the check, if it names one and its policies
    /// `read` one (nothing is read otherwise: the store's and the cache's round trips of a
    /// session are paid only by the checks whose policies look at it).
    async fn session(&self, tenant: TenantId, req: &CheckRequest, read: bool) -> Result<Option<SessionView>> {
        let Some(id) = req.session_id.as_ref().filter(|_| read) else { return Ok(None) };
        Ok(Some(self.sessions.state(tenant, id).await?))
    }

    /// The decision on `req`, not yet recorded, and what its record keeps of the Rego input
    /// (`None` when there was no policy to evaluate).
    async fn decide(
        &self,
        agent: &Agent,
        req: &CheckRequest,
        session: Option<&SessionView>,
        settings: &EffectiveSettings,
        policies: &[PolicyModule],
        compiled: Arc<dyn CompiledPolicies>,
    ) -> Result<(CheckResponse, Option<KeptInput>)> {
        let context = action_context(agent, &req.context);
        let assessed = risk::assess_action(&req.action, &req.resource, &context);
        let mut risk_factors: Vec<CheckRiskFactor> = assessed
            .factors
            .iter()
            .map(|f| CheckRiskFactor {
                code: f.code.to_owned(),
                weight: f.weight,
                evidence: f.evidence.clone(),
                reason: f.reason.to_owned(),
            })
            .collect();
        let (outcomes, kept) = if policies.is_empty() {
            (Vec::new(), None)
        } else {
            let (input, kept) = self.input(agent, req, session, settings, assessed.score, &risk_factors);
            (self.evaluate(agent.tenant_id, policies, compiled, input).await?, Some(kept))
        };

        let mut matched = Vec::new();
        let mut denials: Vec<String> = Vec::new();
        let mut approvals: Vec<String> = Vec::new();
        let mut score = assessed.score;
        let mut labels = std::collections::BTreeSet::new();
        for (policy, outcome) in policies.iter().zip(outcomes) {
            let PolicyOutcome { deny, require_approval, risk_adjustment, error, labels: raised, .. } = outcome;
            let entry = |effect: &'static str, messages: Vec<String>, adjustment: Option<f64>| MatchedPolicy {
                id: policy.id,
                name: policy.name.clone(),
                version: policy.version,
                effect,
                messages,
                risk_adjustment: adjustment,
            };
            if policy.shadow {
                // Recorded as what it would have done; nothing of it is acted on.
                if let Some(error) = error {
                    matched.push(entry("would_error", vec![error], None));
                    continue;
                }
                if !deny.is_empty() {
                    matched.push(entry("would_deny", deny, None));
                }
                if !require_approval.is_empty() {
                    matched.push(entry("would_require_approval", require_approval, None));
                }
                continue;
            }
            labels.extend(raised);
            if let Some(error) = error {
                denials.push(format!("policy {:?} could not be evaluated, so the action is denied", policy.name));
                matched.push(entry("error", vec![error], None));
                continue;
            }
            if !deny.is_empty() {
                denials.extend(deny.iter().cloned());
                matched.push(entry("deny", deny, None));
            }
            if !require_approval.is_empty() {
                approvals.extend(require_approval.iter().cloned());
                matched.push(entry("require_approval", require_approval, None));
            }
            if let Some(adjustment) = risk_adjustment.filter(|a| a.is_finite() && *a != 0.0) {
                let adjustment = adjustment.clamp(-1.0, 1.0);
                score += adjustment;
                risk_factors.push(CheckRiskFactor {
                    code: "policy".into(),
                    weight: adjustment,
                    evidence: policy.name.clone(),
                    reason: "Adjusted by a policy's risk_adjustment.".into(),
                });
                matched.push(entry("risk_adjustment", Vec::new(), Some(adjustment)));
            }
        }
        let risk_score = round_score(score);
        let threshold = settings.approval_threshold;

        let (allowed, required_approval, reason) = if agent.status == AgentStatus::Suspended {
            (false, false, format!("agent {:?} is suspended", agent.name))
        } else if !denials.is_empty() {
            (false, false, format!("denied: {}", denials.join("; ")))
        } else if !approvals.is_empty() {
            (false, true, format!("approval required: {}", approvals.join("; ")))
        } else if risk_score >= threshold {
            (
                false,
                true,
                format!("approval required: risk score {risk_score} is at or above the approval threshold {threshold}"),
            )
        } else if policies.is_empty() {
            (true, false, "allowed: the tenant has no enabled policy".to_owned())
        } else {
            (
                true,
                false,
                format!("allowed by {} polic{}", policies.len(), if policies.len() == 1 { "y" } else { "ies" }),
            )
        };
        let response = CheckResponse {
            allowed,
            required_approval,
            risk_score,
            risk: settings.risk_levels.level(risk_score),
            anomaly: false,
            reason,
            decision_id: None,
            matched_policies: matched,
            risk_factors,
            hitl_request_id: None,
            approved_by_request: None,
            policies_evaluated: policies.len(),
            labels: labels.into_iter().collect(),
        };
        Ok((response, kept))
    }

    /// `modules` compiled on the pool. A compilation that fails as a whole (past its
    /// budget, or a panic the engine did not catch) fails the tenant's checks, not others'.
    pub(crate) async fn compile(
        &self,
        tenant: TenantId,
        modules: Vec<PolicyModule>,
    ) -> Result<Arc<dyn CompiledPolicies>> {
        let engine = self.ports.policy.clone();
        match self.ports.offload.call(tenant, COMPILE_BUDGET, move || engine.compile(&modules)).await {
            Ok(compiled) => compiled,
            Err(OffloadError::Busy) => Err(busy()),
            Err(e) => {
                tracing::warn!(%tenant, error = %e, "the tenant's policies could not be compiled");
                Err(DomainError::Unavailable("policy engine".into()))
            }
        }
    }

    /// Every policy's outcome, evaluated on the pool within [`CHECK_BUDGET`], possibly in
    /// one batch with the tenant's other checks waiting for the same set. Past the
    /// budget, or if the evaluation failed as a whole, every policy is reported as not
    /// evaluated (so the check is denied, and says why).
    async fn evaluate(
        &self,
        tenant: TenantId,
        policies: &[PolicyModule],
        compiled: Arc<dyn CompiledPolicies>,
        input: PolicyInput,
    ) -> Result<Vec<PolicyOutcome>> {
        // Checks of one tenant waiting for the same compiled set are evaluated in one batch
        // (one thread hand-over, one round trip to a worker process, for all of them).
        let key = Arc::as_ptr(&compiled).cast::<()>() as usize;
        let evaluate = move |inputs: Vec<(PolicyInput, std::time::Instant)>| compiled.evaluate_many(&inputs);
        let error = match self.ports.offload.call_batched(tenant, CHECK_BUDGET, key, input, evaluate).await {
            Ok(Some(outcomes)) => return outcomes,
            Err(OffloadError::Busy) => return Err(busy()),
            // Not started before the budget passed (`None`), or not finished within it.
            Ok(None) | Err(OffloadError::TimedOut) => {
                format!("the policies were not evaluated within the check's budget of {} ms", CHECK_BUDGET.as_millis())
            }
            Err(OffloadError::Panicked) => "the policy engine failed while evaluating the policies".to_owned(),
        };
        tracing::warn!(%tenant, %error, "a check's policies were not evaluated");
        Ok(policies
            .iter()
            .map(|p| PolicyOutcome { policy: Some(p.id), error: Some(error.clone()), ..PolicyOutcome::default() })
            .collect())
    }

    /// The Rego input document (docs/policies.md), and what the decision record keeps of it.
    fn input(
        &self,
        agent: &Agent,
        req: &CheckRequest,
        session: Option<&SessionView>,
        settings: &EffectiveSettings,
        score: f64,
        factors: &[CheckRiskFactor],
    ) -> (PolicyInput, KeptInput) {
        let now = self.ports.clock.now();
        let now_text = now.format(&time::format_description::well_known::Rfc3339).unwrap_or_default();
        let now_ns = i64::try_from(now.unix_timestamp_nanos()).unwrap_or(i64::MAX);
        let mut kept = serde_json::Map::new();
        kept.insert(
            "tenant".into(),
            serde_json::json!({"id": agent.tenant_id, "approval_threshold": settings.approval_threshold}),
        );
        kept.insert("time".into(), serde_json::json!({"now": now_text, "now_ns": now_ns}));
        kept.insert(
            "risk".into(),
            serde_json::json!({"score": score, "level": settings.risk_levels.level(score), "factors": factors}),
        );
        if let Some(session) = session {
            kept.insert("session".into(), session_input(session, agent.tenant_id, &req.resource, &req.context));
        }
        let mut rest = kept.clone();
        rest.insert("action".into(), serde_json::Value::String(req.action.clone()));
        rest.insert("resource".into(), serde_json::Value::String(req.resource.clone()));
        rest.insert("context".into(), serde_json::Value::Object(req.context.clone()));
        let agent = self.agent_input(agent);
        (PolicyInput { agent: agent.clone(), rest }, KeptInput { agent, members: kept })
    }

    /// `agent` as the input's `agent` member: the kept one while the agent is unchanged.
    fn agent_input(&self, agent: &Agent) -> Arc<serde_json::Value> {
        let key = (agent.tenant_id, agent.id);
        if let Some(kept) = self.agent_inputs.get(&key)
            && kept.agent == *agent
        {
            return kept.json.clone();
        }
        let json = Arc::new(serde_json::to_value(agent).unwrap_or_default());
        self.agent_inputs.insert(key, Arc::new(AgentInput { agent: agent.clone(), json: json.clone() }));
        json
    }

    /// Appends the decision to the audit log (durably) and announces a denial or an
    /// approval request on the feed.
    async fn record_decision(
        &self,
        caller: &Caller,
        agent: &Agent,
        req: &CheckRequest,
        mut response: CheckResponse,
        kept: Option<&KeptInput>,
    ) -> Result<CheckResponse> {
        let decision = if response.allowed {
            "allow"
        } else if response.required_approval {
            "require_approval"
        } else {
            "deny"
        };
        let details = DecisionDetails {
            approved_by_request: response.approved_by_request,
            context: &req.context,
            input: kept,
            labels: &response.labels,
            matched_policies: &response.matched_policies,
            policies_evaluated: response.policies_evaluated,
            reason: &response.reason,
            required_approval: response.required_approval,
            risk_factors: &response.risk_factors,
            anomaly: response.anomaly,
            session_id: req.session_id.as_deref(),
            tool_call_id: req.tool_call_id.as_deref(),
            trace_id: caller.trace_id(),
        };
        let mut event = AuditEvent::new(caller.tenant_id(), caller_actor(caller), POLICY_DECISION)
            .action(req.action.clone())
            .resource(req.resource.clone())
            .details_of(&details);
        if let Some(session) = &req.session_id {
            // The session's fold of this record, handed to the commit observer.
            let id = AuditId(self.ports.ids.new_id());
            let fold = || ExpectedFold::decision(decision, &req.action, req.context.get("cost"), &response.labels);
            self.sessions.expect(caller.tenant_id(), session, id, fold);
            event.id = Some(id);
        }
        event.agent_id = Some(agent.id.as_uuid());
        event.decision = Some(decision.to_owned());
        event.risk_score = Some(response.risk_score);
        event.session_id = req.session_id.clone();
        let record = self.audit.record(event).await?;
        self.counts.add(caller.tenant_id(), DECISIONS_METRIC, record.timestamp, decision);
        response.decision_id = Some(record.id);
        if !response.allowed {
            let data = serde_json::json!({
                "decision_id": record.id, "agent_id": agent.id, "agent_name": agent.name,
                "action": req.action, "resource": req.resource, "decision": decision,
                "risk_score": response.risk_score, "risk": response.risk, "reason": response.reason,
            });
            self.ports.announce(caller.tenant_id(), POLICY_DECISION, data).await;
        }
        Ok(response)
    }
}

/// A `policy.decision` record's `details`, serialised straight to its text (a check's hot
/// path). Its keys in alphabetical order, as a `serde_json::Value` gives them; those of a
/// matched policy and a risk factor in the order the check's answer gives them.
#[derive(serde::Serialize)]
struct DecisionDetails<'a> {
    /// The approval request whose token the check spent.
    #[serde(skip_serializing_if = "Option::is_none")]
    approved_by_request: Option<HitlId>,
    context: &'a JsonObject,
    /// What the record keeps of the Rego input beside its action, resource and context, so
    /// that a replay evaluates a policy on exactly what the check's policies saw.
    #[serde(skip_serializing_if = "Option::is_none")]
    input: Option<&'a KeptInput>,
    /// The labels the policies raised, which the check's session keeps.
    #[serde(skip_serializing_if = "<[String]>::is_empty")]
    labels: &'a [String],
    matched_policies: &'a [MatchedPolicy],
    policies_evaluated: usize,
    reason: &'a str,
    required_approval: bool,
    risk_factors: &'a [CheckRiskFactor],
    /// Present (true) only when the anomaly detector flagged the check.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    anomaly: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    session_id: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    tool_call_id: Option<&'a str>,
    /// The caller's trace (`traceparent`), as 32 hex digits.
    #[serde(skip_serializing_if = "Option::is_none")]
    trace_id: Option<String>,
}

/// What a decision record keeps of its check's Rego input (`details.input`): the agent as
/// the policies saw it, and the `risk`, `session`, `tenant` and `time` members. With the
/// record's action, resource and context it is the whole input again ([`KeptInput::input_of`]).
pub(crate) struct KeptInput {
    agent: Arc<serde_json::Value>,
    /// Sorted by key, as every member of the record's details.
    members: serde_json::Map<String, serde_json::Value>,
}

impl serde::Serialize for KeptInput {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> std::result::Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        // `agent` sorts before every other member.
        let mut map = serializer.serialize_map(Some(self.members.len() + 1))?;
        map.serialize_entry("agent", self.agent.as_ref())?;
        for (key, value) in &self.members {
            map.serialize_entry(key, value)?;
        }
        map.end()
    }
}

/// The input's `session` member: the session's state before the check, with the values of
/// the check's `resource` and `context` that content shown to the session told the agent to
/// use.
pub(crate) fn session_input(
    session: &SessionView,
    tenant: TenantId,
    resource: &str,
    context: &JsonObject,
) -> serde_json::Value {
    let mut json = serde_json::to_value(session).unwrap_or_default();
    let carried = session.instructed_in(tenant, resource, context);
    if let Some(members) = json.as_object_mut() {
        members.insert("instructed_values".into(), serde_json::json!(carried));
    }
    json
}

impl KeptInput {
    /// The Rego input of a recorded decision: its `details.input` with the record's action,
    /// resource and `details.context`. `None` for a record from before inputs were kept.
    pub(crate) fn input_of(record: &crate::model::AuditRecord) -> Option<PolicyInput> {
        #[derive(serde::Deserialize)]
        struct Recorded {
            input: Option<serde_json::Map<String, serde_json::Value>>,
            #[serde(default)]
            context: serde_json::Map<String, serde_json::Value>,
        }
        let recorded: Recorded = serde_json::from_str(record.details.as_str()).ok()?;
        let mut rest = recorded.input?;
        let agent = rest.remove("agent")?;
        rest.insert("action".into(), serde_json::Value::String(record.action.clone().unwrap_or_default()));
        rest.insert("resource".into(), serde_json::Value::String(record.resource.clone().unwrap_or_default()));
        rest.insert("context".into(), serde_json::Value::Object(recorded.context));
        Some(PolicyInput { agent: Arc::new(agent), rest })
    }
}

/// Marks a check the detector found anomalous: the risk model's `anomaly` factor (the
/// score × 0.6) joins its factors by the same noisy-OR, after the policies' adjustments,
/// and an allowed action at or above the approval threshold now needs approval.
fn raise_for_anomaly(response: &mut CheckResponse, anomaly: &CheckScore, settings: &EffectiveSettings) {
    response.anomaly = true;
    let Some(factor) = risk::anomaly_factor(anomaly.score) else { return };
    response.risk_score = round_score(risk::with_factor(response.risk_score, factor.weight));
    response.risk_factors.push(CheckRiskFactor {
        code: factor.code.to_owned(),
        weight: round_score(factor.weight),
        evidence: format!("{} {}", anomaly.kind().as_str(), anomaly.score),
        reason: factor.reason.to_owned(),
    });
    response.risk = settings.risk_levels.level(response.risk_score);
    let threshold = settings.approval_threshold;
    if response.allowed && response.risk_score >= threshold {
        response.allowed = false;
        response.required_approval = true;
        response.reason = format!(
            "approval required: risk score {} (raised by an anomaly) is at or above the approval threshold {threshold}",
            response.risk_score
        );
    }
}

/// Validates a check request; the agent id parsed.
#[cfg(test)]
pub(crate) mod tests;
