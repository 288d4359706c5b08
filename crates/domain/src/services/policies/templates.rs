//! Rego templates (`GET /policies/templates`): ready-made policies with parameters.
//!
//! A template's source holds the placeholder `__PARAMS__` where its parameters go, as a
//! JSON object (valid Rego): instantiating merges the caller's values over the defaults,
//! checks their types, and substitutes the object. Each template is tested for its allow,
//! deny and approval cases against the real engine in `agentgov-policy-rego`.

use crate::error::{Result, Violations};
use crate::model::JsonObject;

const PLACEHOLDER: &str = "__PARAMS__";

/// The JSON type a parameter takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum ParameterKind {
    Number,
    String,
    Boolean,
    /// An array of strings.
    StringList,
    /// An object whose values are arrays of strings.
    StringListMap,
}

impl ParameterKind {
    fn accepts(self, value: &serde_json::Value) -> bool {
        let strings = |v: &serde_json::Value| v.as_array().is_some_and(|a| a.iter().all(serde_json::Value::is_string));
        match self {
            ParameterKind::Number => value.is_number(),
            ParameterKind::String => value.is_string(),
            ParameterKind::Boolean => value.is_boolean(),
            ParameterKind::StringList => strings(value),
            ParameterKind::StringListMap => value.as_object().is_some_and(|o| o.values().all(strings)),
        }
    }

    fn describe(self) -> &'static str {
        match self {
            ParameterKind::Number => "a number",
            ParameterKind::String => "a string",
            ParameterKind::Boolean => "true or false",
            ParameterKind::StringList => "an array of strings",
            ParameterKind::StringListMap => "an object whose values are arrays of strings",
        }
    }
}

/// One parameter of a template.
#[derive(Debug, Clone, Copy)]
pub struct TemplateParameter {
    pub name: &'static str,
    pub kind: ParameterKind,
    pub description: &'static str,
    /// JSON text of the default value.
    pub default: &'static str,
    /// For strings: the values allowed, if only some are.
    pub one_of: &'static [&'static str],
}

/// A built-in template.
#[derive(Debug, Clone, Copy)]
pub struct PolicyTemplate {
    pub id: &'static str,
    pub name: &'static str,
    pub description: &'static str,
    pub parameters: &'static [TemplateParameter],
    /// Rego source with `__PARAMS__` where the parameters go.
    pub source: &'static str,
}

impl PolicyTemplate {
    /// The parameters' defaults, as an object.
    pub fn defaults(&self) -> JsonObject {
        self.parameters
            .iter()
            .map(|p| (p.name.to_owned(), serde_json::from_str(p.default).unwrap_or(serde_json::Value::Null)))
            .collect()
    }

    /// The Rego source with `parameters` merged over the defaults; 422 naming each unknown
    /// parameter or value of the wrong type (fields under `field`).
    pub fn instantiate(&self, parameters: &JsonObject, field: &str) -> Result<String> {
        let mut v = Violations::new();
        let mut values = self.defaults();
        for (name, value) in parameters {
            let path = format!("{field}.{name}");
            match self.parameters.iter().find(|p| p.name == name) {
                None => {
                    let known: Vec<&str> = self.parameters.iter().map(|p| p.name).collect();
                    v.add(path, format!("unknown parameter; this template takes {}", known.join(", ")));
                }
                Some(p) if !p.kind.accepts(value) => v.add(path, format!("must be {}", p.kind.describe())),
                Some(p) if !p.one_of.is_empty() && !value.as_str().is_some_and(|s| p.one_of.contains(&s)) => {
                    v.add(path, format!("must be one of {}", p.one_of.join(", ")));
                }
                Some(_) => {
                    values.insert(name.clone(), value.clone());
                }
            }
        }
        v.into_result()?;
        Ok(self.render(&values))
    }

    /// The source with the default parameters: what `GET /policies/templates` shows.
    pub fn rego(&self) -> String {
        self.render(&self.defaults())
    }

    fn render(&self, values: &JsonObject) -> String {
        let json = serde_json::Value::Object(values.clone()).to_string();
        self.source.replace(PLACEHOLDER, &json)
    }
}

/// Looks a template up by id.
pub fn find(id: &str) -> Option<&'static PolicyTemplate> {
    TEMPLATES.iter().find(|t| t.id == id)
}

const EFFECT: TemplateParameter = TemplateParameter {
    name: "effect",
    kind: ParameterKind::String,
    description: "What a match does: `deny` the action, or require `approval` for it.",
    default: r#""deny""#,
    one_of: &["deny", "approval"],
};

/// Words of an action that changes state or communicates externally: fetching a URL
/// counts, since a URL can carry data out.
const OUTBOUND_ACTIONS: &str = r#"["send","email","mail","post","publish","share","upload","transfer","pay","wire","invite","message","forward","reply","tweet","webhook","export","create","add","update","delete","remove","write","schedule","reserve","book","change","set","visit","browse","fetch","download","webpage","url","http"]"#;

/// Every built-in template, in the order `GET /policies/templates` lists them.
pub static TEMPLATES: &[PolicyTemplate] = &[
    PolicyTemplate {
        id: "deny-destructive-production",
        name: "Deny destructive actions on production",
        description: "Denies actions that destroy data (delete, drop, truncate, purge, …) on resources that are \
                      production: the resource names production, or `context.environment` says so.",
        parameters: &[
            TemplateParameter {
                name: "destructive_actions",
                kind: ParameterKind::StringList,
                description: "Words that make an action destructive (matched inside the lower-cased action).",
                default: r#"["delete","drop","truncate","destroy","purge","wipe","erase","terminate"]"#,
                one_of: &[],
            },
            TemplateParameter {
                name: "production_markers",
                kind: ParameterKind::StringList,
                description: "Words that mark a resource, or `context.environment`, as production.",
                default: r#"["prod","production","live"]"#,
                one_of: &[],
            },
        ],
        source: r#"package agentgov.templates.deny_destructive_production

import rego.v1

params := __PARAMS__

destructive if {
	action := lower(input.action)
	some word in params.destructive_actions
	contains(action, word)
}

resource_words := regex.split(`[^a-z0-9]+`, lower(input.resource))

production if {
	some word in resource_words
	word in params.production_markers
}

production if lower(object.get(input.context, "environment", "")) in params.production_markers

deny contains msg if {
	destructive
	production
	msg := sprintf("destructive action %q on production resource %q is not allowed", [input.action, input.resource])
}
"#,
    },
    PolicyTemplate {
        id: "require-consent-personal-data",
        name: "Require consent for personal data",
        description: "Actions on personal data need the data subject's consent: `context.consent` must be `true`. \
                      Personal data is flagged in the context (`personal_data`, `contains_pii`, `pii`) or named by \
                      the resource.",
        parameters: &[
            TemplateParameter {
                name: "context_flags",
                kind: ParameterKind::StringList,
                description: "Context keys that, when `true`, say the action touches personal data.",
                default: r#"["personal_data","contains_pii","pii"]"#,
                one_of: &[],
            },
            TemplateParameter {
                name: "resource_markers",
                kind: ParameterKind::StringList,
                description: "Words in a resource that mean it holds personal data.",
                default: r#"["pii","personal","customer","customers","patient","patients","employee","employees","users"]"#,
                one_of: &[],
            },
            EFFECT,
        ],
        source: r#"package agentgov.templates.require_consent_personal_data

import rego.v1

params := __PARAMS__

personal_data if {
	some flag in params.context_flags
	object.get(input.context, flag, false) == true
}

resource_words := regex.split(`[^a-z0-9]+`, lower(input.resource))

personal_data if {
	some word in resource_words
	word in params.resource_markers
}

consented if object.get(input.context, "consent", false) == true

message := sprintf("%q touches personal data without the data subject's consent (context.consent)", [input.resource])

# Consent first: it is cheaper to read than personal data is to find.
deny contains message if {
	params.effect == "deny"
	not consented
	personal_data
}

require_approval contains message if {
	params.effect == "approval"
	not consented
	personal_data
}
"#,
    },
    PolicyTemplate {
        id: "approval-above-risk",
        name: "Require approval above a risk threshold",
        description: "Requires a person's approval when the check's risk score is at or above a threshold.",
        parameters: &[TemplateParameter {
            name: "threshold",
            kind: ParameterKind::Number,
            description: "Risk score from 0 to 1 at and above which approval is required.",
            default: "0.6",
            one_of: &[],
        }],
        source: r#"package agentgov.templates.approval_above_risk

import rego.v1

params := __PARAMS__

require_approval contains msg if {
	input.risk.score >= params.threshold
	msg := sprintf("risk score %v is at or above %v", [input.risk.score, params.threshold])
}
"#,
    },
    PolicyTemplate {
        id: "capability-scope",
        name: "Actions only within the agent's capabilities",
        description: "Denies an action that is not one of the agent's declared capabilities (compared without case, \
                      with `_` and `-` read as spaces), except actions that are always allowed.",
        parameters: &[
            TemplateParameter {
                name: "always_allowed",
                kind: ParameterKind::StringList,
                description: "Actions any agent may take.",
                default: r#"["read","list","get"]"#,
                one_of: &[],
            },
            EFFECT,
        ],
        source: r#"package agentgov.templates.capability_scope

import rego.v1

params := __PARAMS__

normalize(s) := trim_space(replace(replace(lower(s), "_", " "), "-", " "))

# Most actions name a capability exactly; only the others are normalized.
in_scope if input.action in input.agent.capabilities

in_scope if input.action in params.always_allowed

in_scope if {
	names := array.concat(params.always_allowed, input.agent.capabilities)
	normalize(input.action) in {normalize(n) | some n in names}
}

message := sprintf("action %q is not among the capabilities of agent %q", [input.action, input.agent.name])

deny contains message if {
	params.effect == "deny"
	not in_scope
}

require_approval contains message if {
	params.effect == "approval"
	not in_scope
}
"#,
    },
    PolicyTemplate {
        id: "resource-allow-list",
        name: "Per-agent resource allow-list",
        description: "Each listed agent (by name or id) may act only on resources matching its glob patterns \
                      (`*` within a path segment, `**` across `/`). Agents not listed are denied unless \
                      `allow_unlisted` is true.",
        parameters: &[
            TemplateParameter {
                name: "allow",
                kind: ParameterKind::StringListMap,
                description: "Agent name or id → resource glob patterns it may use.",
                default: r#"{}"#,
                one_of: &[],
            },
            TemplateParameter {
                name: "allow_unlisted",
                kind: ParameterKind::Boolean,
                description: "Whether agents that are not listed may act on any resource.",
                default: "true",
                one_of: &[],
            },
        ],
        source: r#"package agentgov.templates.resource_allow_list

import rego.v1

params := __PARAMS__

patterns := object.get(params.allow, input.agent.id, object.get(params.allow, input.agent.name, null))

listed if patterns != null

permitted if {
	some pattern in patterns
	glob.match(pattern, ["/"], input.resource)
}

deny contains msg if {
	listed
	not permitted
	msg := sprintf("agent %q may not use resource %q (not in its allow-list)", [input.agent.name, input.resource])
}

deny contains msg if {
	not listed
	not params.allow_unlisted
	msg := sprintf("agent %q has no resource allow-list", [input.agent.name])
}
"#,
    },
    PolicyTemplate {
        id: "business-hours",
        name: "Business hours only",
        description: "Actions are allowed only on business days between the start and end hour in a time zone \
                      (IANA name, e.g. `Europe/Berlin`); outside them they are denied or need approval.",
        parameters: &[
            TemplateParameter {
                name: "timezone",
                kind: ParameterKind::String,
                description: "IANA time zone of the business hours.",
                default: r#""UTC""#,
                one_of: &[],
            },
            TemplateParameter {
                name: "start_hour",
                kind: ParameterKind::Number,
                description: "First hour of the working day (0–23).",
                default: "9",
                one_of: &[],
            },
            TemplateParameter {
                name: "end_hour",
                kind: ParameterKind::Number,
                description: "The hour the working day ends (1–24; exclusive).",
                default: "18",
                one_of: &[],
            },
            TemplateParameter {
                name: "days",
                kind: ParameterKind::StringList,
                description: "Business days, as English weekday names.",
                default: r#"["Monday","Tuesday","Wednesday","Thursday","Friday"]"#,
                one_of: &[],
            },
            EFFECT,
        ],
        source: r#"package agentgov.templates.business_hours

import rego.v1

params := __PARAMS__

clock := time.clock([input.time.now_ns, params.timezone])

weekday := time.weekday([input.time.now_ns, params.timezone])

within_hours if {
	weekday in params.days
	clock[0] >= params.start_hour
	clock[0] < params.end_hour
}

message := sprintf("outside business hours (%v %02d:%02d in %s)", [weekday, clock[0], clock[1], params.timezone])

deny contains message if {
	params.effect == "deny"
	not within_hours
}

require_approval contains message if {
	params.effect == "approval"
	not within_hours
}
"#,
    },
    PolicyTemplate {
        id: "block-inactive-agents",
        name: "Block suspended or inactive agents",
        description: "Denies every action of an agent whose status is one of the listed ones (an active agent \
                      without a recent heartbeat counts as `inactive`).",
        parameters: &[TemplateParameter {
            name: "statuses",
            kind: ParameterKind::StringList,
            description: "Agent statuses that are blocked.",
            default: r#"["suspended","inactive"]"#,
            one_of: &[],
        }],
        source: r#"package agentgov.templates.block_inactive_agents

import rego.v1

params := __PARAMS__

deny contains msg if {
	input.agent.status in params.statuses
	msg := sprintf("agent %q is %s", [input.agent.name, input.agent.status])
}
"#,
    },
    PolicyTemplate {
        id: "bulk-operation-cap",
        name: "Cap on bulk operations",
        description: "Denies (or requires approval for) an action that affects more records than a limit, as the \
                      context reports them (`record_count`, `count`, `records` or `batch_size`).",
        parameters: &[
            TemplateParameter {
                name: "max_records",
                kind: ParameterKind::Number,
                description: "Most records one action may affect.",
                default: "1000",
                one_of: &[],
            },
            TemplateParameter {
                name: "count_keys",
                kind: ParameterKind::StringList,
                description: "Context keys that carry the number of records.",
                default: r#"["record_count","count","records","batch_size"]"#,
                one_of: &[],
            },
            EFFECT,
        ],
        source: r#"package agentgov.templates.bulk_operation_cap

import rego.v1

params := __PARAMS__

counts := [n | some key in params.count_keys; n := input.context[key]; is_number(n)]

too_many if {
	some n in counts
	n > params.max_records
}

message := sprintf("affects %v records; at most %v are allowed at once", [max(counts), params.max_records])

deny contains message if {
	params.effect == "deny"
	too_many
}

require_approval contains message if {
	params.effect == "approval"
	too_many
}
"#,
    },
    PolicyTemplate {
        id: "deny-critical-risk",
        name: "Deny critical risk",
        description: "Denies an action whose risk score is at or above a ceiling (by default the `critical` level).",
        parameters: &[TemplateParameter {
            name: "ceiling",
            kind: ParameterKind::Number,
            description: "Risk score from 0 to 1 at and above which actions are denied.",
            default: "0.85",
            one_of: &[],
        }],
        source: r#"package agentgov.templates.deny_critical_risk

import rego.v1

params := __PARAMS__

deny contains msg if {
	input.risk.score >= params.ceiling
	msg := sprintf("risk score %v is at or above the ceiling %v", [input.risk.score, params.ceiling])
}
"#,
    },
    PolicyTemplate {
        id: "label-sensitive-reads",
        name: "Label sensitive reads in the session",
        description: "Raises session labels (a policy's `labels` rule) for actions on sensitive data, which later \
                      checks of the session read in `input.session.labels`: `secret_read` when the action or \
                      resource names a secret, `pii_read` when it names personal data (words matched in the \
                      lower-cased action and resource). Decides nothing itself.",
        parameters: &[
            TemplateParameter {
                name: "secret_markers",
                kind: ParameterKind::StringList,
                description: "Words that make an action or resource a secret's.",
                default: r#"["secret","secrets","password","passwords","passwd","credential","credentials","token","tokens","apikey","api_key","private_key","vault","security_code","otp","2fa","mfa"]"#,
                one_of: &[],
            },
            TemplateParameter {
                name: "pii_markers",
                kind: ParameterKind::StringList,
                description: "Words that make an action or resource personal data's.",
                default: r#"["pii","ssn","passport","iban","credit_card","card_number","medical","patient","patients","salary","payroll","birth","address","phone","user_info","contacts","personal"]"#,
                one_of: &[],
            },
        ],
        source: r#"package agentgov.templates.label_sensitive_reads

import rego.v1

params := __PARAMS__

text := lower(concat(" ", [input.action, input.resource]))

words := {w | some w in regex.split(`[^a-z0-9]+`, text)}

# The markers found: a word, or (with `_`) a run of words as written.
found(markers) := {m | some m in markers; m in words} | {m | some m in markers; contains(m, "_"); contains(text, m)}

labels contains "secret_read" if count(found(params.secret_markers)) > 0

labels contains "pii_read" if count(found(params.pii_markers)) > 0
"#,
    },
    PolicyTemplate {
        id: "rule-of-two",
        name: "Rule of Two for agent sessions",
        description: "An agent session may combine at most two of: (A) untrusted input seen (a label such as \
                      `untrusted_content_seen`, raised when the Prompt Guard flags content the agent was shown \
                      through `POST /sessions/{id}/observe`), (B) access to sensitive data (a label such as \
                      `secret_read` or `pii_read`, or every session when `sensitive_by_default`), and (C) an \
                      action that changes state or communicates externally (words of the action). When all \
                      three meet, a person approves the action first (or it is denied).",
        parameters: &[
            TemplateParameter {
                name: "untrusted_labels",
                kind: ParameterKind::StringList,
                description: "Session labels that mean the agent has seen untrusted input (A).",
                default: r#"["untrusted_content_seen","untrusted_input"]"#,
                one_of: &[],
            },
            TemplateParameter {
                name: "sensitive_labels",
                kind: ParameterKind::StringList,
                description: "Session labels that mean the agent has read sensitive data (B).",
                default: r#"["secret_read","pii_read","confidential_read"]"#,
                one_of: &[],
            },
            TemplateParameter {
                name: "sensitive_by_default",
                kind: ParameterKind::Boolean,
                description: "Count (B) in every session: for agents with standing access to private data (mail, \
                              files, accounts), where reading it needs no check.",
                default: "false",
                one_of: &[],
            },
            TemplateParameter {
                name: "outbound_actions",
                kind: ParameterKind::StringList,
                description: "Words of an action that changes state or communicates externally (C): fetching a URL \
                              counts, since a URL can carry data out.",
                default: OUTBOUND_ACTIONS,
                one_of: &[],
            },
            TemplateParameter {
                name: "effect",
                kind: ParameterKind::String,
                description: "What a session with all three does: require `approval`, or `deny` the action.",
                default: r#""approval""#,
                one_of: &["deny", "approval"],
            },
        ],
        source: r#"package agentgov.templates.rule_of_two

import rego.v1

params := __PARAMS__

session_labels := object.get(object.get(input, "session", {}), "labels", [])

untrusted if {
	some label in session_labels
	label in params.untrusted_labels
}

sensitive if params.sensitive_by_default

sensitive if {
	some label in session_labels
	label in params.sensitive_labels
}

outbound if {
	some word in regex.split(`[^a-z0-9]+`, lower(input.action))
	word in params.outbound_actions
}

message := sprintf("session combines untrusted input, sensitive data and %q (Rule of Two)", [input.action])

deny contains message if {
	params.effect == "deny"
	outbound
	untrusted
	sensitive
}

require_approval contains message if {
	params.effect == "approval"
	outbound
	untrusted
	sensitive
}
"#,
    },
    PolicyTemplate {
        id: "no-send-after-secret",
        name: "No external send after a secret read",
        description: "Once an agent session has read a secret (a session label, `secret_read` by default: see the \
                      `label-sensitive-reads` template), actions that send data out are denied (or need approval).",
        parameters: &[
            TemplateParameter {
                name: "secret_labels",
                kind: ParameterKind::StringList,
                description: "Session labels that mean a secret was read.",
                default: r#"["secret_read"]"#,
                one_of: &[],
            },
            TemplateParameter {
                name: "send_actions",
                kind: ParameterKind::StringList,
                description: "Words of an action that sends data out.",
                default: r#"["send","email","mail","post","publish","share","upload","transfer","forward","reply","message","tweet","webhook","export","http","fetch"]"#,
                one_of: &[],
            },
            EFFECT,
        ],
        source: r#"package agentgov.templates.no_send_after_secret

import rego.v1

params := __PARAMS__

session_labels := object.get(object.get(input, "session", {}), "labels", [])

secret_seen if {
	some label in session_labels
	label in params.secret_labels
}

sends if {
	some word in regex.split(`[^a-z0-9]+`, lower(input.action))
	word in params.send_actions
}

message := sprintf("%q would send data out of a session that has read a secret", [input.action])

deny contains message if {
	params.effect == "deny"
	secret_seen
	sends
}

require_approval contains message if {
	params.effect == "approval"
	secret_seen
	sends
}
"#,
    },
    PolicyTemplate {
        id: "instructed-values",
        name: "Values that content told the agent to use",
        description: "An action whose arguments carry a value (an e-mail address, an IBAN, a web host) that untrusted \
                      content shown to the agent told it to use (`POST /sessions/{id}/observe`: a sentence of a tool \
                      result, a page or a message that gives an order naming it), and that the user's own request \
                      (observed as `trusted`) did not name, needs a person's approval (or is denied): the agent is \
                      following an instruction it read in data, however that instruction was worded.",
        parameters: &[
            TemplateParameter {
                name: "actions",
                kind: ParameterKind::StringList,
                description: "Words of the actions this applies to (lower-cased words of the action); `[]` for \
                              every action.",
                default: OUTBOUND_ACTIONS,
                one_of: &[],
            },
            TemplateParameter {
                name: "effect",
                kind: ParameterKind::String,
                description: "What such an action does: require `approval`, or `deny` it.",
                default: r#""approval""#,
                one_of: &["deny", "approval"],
            },
        ],
        source: r#"package agentgov.templates.instructed_values

import rego.v1

params := __PARAMS__

instructed := object.get(object.get(input, "session", {}), "instructed_values", [])

applies if count(params.actions) == 0

applies if {
	some word in regex.split(`[^a-z0-9]+`, lower(input.action))
	word in params.actions
}

message := sprintf("%q uses %s, which content shown to the agent told it to use", [input.action, concat(", ", instructed)])

deny contains message if {
	params.effect == "deny"
	count(instructed) > 0
	applies
}

require_approval contains message if {
	params.effect == "approval"
	count(instructed) > 0
	applies
}
"#,
    },
    PolicyTemplate {
        id: "session-caps",
        name: "Per-session spend and rate caps",
        description: "Caps what one agent session may do: the sum of its allowed checks' `context.cost` (this \
                      check's included), its checks in the last minute, and its checks in all. A check past a \
                      cap is denied (or needs approval). Checks without a session are not capped.",
        parameters: &[
            TemplateParameter {
                name: "max_spend",
                kind: ParameterKind::Number,
                description: "Most a session may spend (the sum of `context.cost`).",
                default: "100",
                one_of: &[],
            },
            TemplateParameter {
                name: "max_per_minute",
                kind: ParameterKind::Number,
                description: "Most checks of a session in a minute.",
                default: "60",
                one_of: &[],
            },
            TemplateParameter {
                name: "max_checks",
                kind: ParameterKind::Number,
                description: "Most checks of a session in all.",
                default: "1000",
                one_of: &[],
            },
            EFFECT,
        ],
        source: r#"package agentgov.templates.session_caps

import rego.v1

params := __PARAMS__

# This check's cost: `context.cost` when it is a positive number, else nothing.
costs := [c | c := input.context.cost; is_number(c); c > 0]

over contains msg if {
	spent := input.session.spend + sum(costs)
	spent > params.max_spend
	msg := sprintf("session spend %v would pass its cap of %v", [spent, params.max_spend])
}

over contains msg if {
	input.session.rate.last_minute >= params.max_per_minute
	msg := sprintf("session made %v checks in the last minute, its cap", [input.session.rate.last_minute])
}

over contains msg if {
	input.session.checks >= params.max_checks
	msg := sprintf("session made %v checks, its cap", [input.session.checks])
}

deny contains msg if {
	params.effect == "deny"
	some msg in over
}

require_approval contains msg if {
	params.effect == "approval"
	some msg in over
}
"#,
    },
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn templates_have_unique_ids_defaults_that_type_check_and_one_placeholder() {
        assert!(TEMPLATES.len() >= 8);
        for (i, t) in TEMPLATES.iter().enumerate() {
            assert!(TEMPLATES[..i].iter().all(|o| o.id != t.id), "duplicate id {}", t.id);
            assert_eq!(t.source.matches(PLACEHOLDER).count(), 1, "{}", t.id);
            for p in t.parameters {
                let value: serde_json::Value = serde_json::from_str(p.default).unwrap();
                assert!(p.kind.accepts(&value), "{}.{} default", t.id, p.name);
            }
            assert!(!t.rego().contains(PLACEHOLDER));
        }
    }

    #[test]
    fn instantiation_merges_over_defaults_and_names_every_bad_parameter() {
        let t = find("bulk-operation-cap").unwrap();
        let given: JsonObject = serde_json::from_str(r#"{"max_records": 10}"#).unwrap();
        let rego = t.instantiate(&given, "parameters").unwrap();
        assert!(rego.contains(r#""max_records":10"#), "{rego}");
        assert!(rego.contains(r#""effect":"deny""#), "defaults kept: {rego}");

        let bad: JsonObject =
            serde_json::from_str(r#"{"max_records": "ten", "colour": 1, "effect": "maybe"}"#).unwrap();
        let err = t.instantiate(&bad, "parameters").unwrap_err();
        let crate::DomainError::Validation(errors) = err else { panic!("{err:?}") };
        let fields: Vec<&str> = errors.iter().map(|e| e.field.as_str()).collect();
        assert_eq!(fields, ["parameters.colour", "parameters.effect", "parameters.max_records"]);
    }
}
