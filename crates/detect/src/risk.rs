//! Explainable risk of an agent from its capabilities and permissions.
//!
//! # Factors
//!
//! Every capability (free text such as "initiate payouts") and every permission (a flattened
//! `(resource, access)` pair such as `("payments", "write")`) is read on its own for the
//! sensitive categories it names. Words come from [`crate::embed::words`] and are matched by
//! stem ("payouts" is named by `payout`; a stem of up to three letters or ending in `$` must be
//! the whole word, so `ach` does not match "reaches"):
//!
//! | code             | named by (examples) | acting | reading |
//! |------------------|---------------------|-------:|--------:|
//! | `payments`       | pay, payouts, refund, wire, ACH, payroll, treasury; "transfer"/"charge"… only next to funds, cash, card, invoice… | 0.62 | 0.15 |
//! | `shell`          | shell, bash, ssh, terminal, sudo, exec; "run"/"execute" next to command, script, code | 0.62 | 0.30 |
//! | `admin`          | admin, root, superuser, IAM, RBAC; "grant"/"manage" next to roles, permissions, access; any `admin`/`owner` access | 0.55 | 0.20 |
//! | `deletion`       | delete, drop, purge, wipe, erase, truncate, prune; any `delete` access | 0.50 | — |
//! | `credentials`    | credentials, secrets, passwords, tokens, MFA, vault; "keys" next to api, ssh, private… | 0.50 | 0.45 |
//! | `pii`            | PII, SSN, medical, patient, GDPR, salary, inbox; a person (customer, employee…) next to email, address, record, data…; stores such as `crm`, `customers`, `hris` | 0.40 | 0.33 |
//! | `external_comms` | SMS, Twilio, SMTP, newsletter; "send"/"email"/"post"/"reply" next to email, SMS, social, customers… | 0.22 | — |
//! | `write_access`   | write access to resources none of the above names: 0.08 for one, +0.04 each further, at most 0.24 | | |
//! | `breadth`        | capabilities plus distinct resources beyond 6: +0.02 each, at most 0.12 | | |
//!
//! A permission's level comes from its access text: `read`/`view`/`list`… reads; `write`,
//! `true`, `exec` and anything unrecognised act (fail closed); `admin`/`owner`/`root`/`full`
//! also add `admin`, `delete`/`purge`… also add `deletion`; `none`/`false`/`deny` grant
//! nothing. A capability acts unless its verbs only look or prepare ("payment analytics",
//! "read customer emails", "draft replies"); a deletion that is only looked at ("list deleted
//! files") is no deletion. In a two-word pair the words must differ ("send email" is
//! external communication, "label mail" is not).
//!
//! # Score
//!
//! Per category only the strongest factor is kept (its evidence is the first capability or
//! permission that reached that weight). The score is the noisy-OR `1 − Π(1 − wᵢ)` of the
//! kept weights: bounded in `[0, 1)`, and monotone, since each item is judged alone and
//! adding one can only add factors or raise a category's maximum. Weights are calibrated to
//! the service's levels (low < 0.3 ≤ medium < 0.6 ≤ high < 0.85 ≤ critical): a read-only
//! documentation search scores 0, reading customer emails ≈ 0.33–0.5 (medium), moving money
//! or a shell alone 0.62+ (high), and money movement with deletion and admin rights ≈ 0.9+
//! (critical).

use crate::embed;
use crate::text::{find, matches, split_camel};

/// Identifies the risk model (lexicon, weights, combination). Stored beside every assessment.
pub const RISK_MODEL_VERSION: u32 = 1;

/// One reason an agent is risky.
#[derive(Debug, Clone, PartialEq)]
pub struct RiskFactor {
    /// Category: `payments`, `deletion`, `shell`, `credentials`, `pii`, `admin`,
    /// `external_comms`, `write_access` or `breadth`.
    pub code: &'static str,
    /// Contribution in `(0, 1)` before combination.
    pub weight: f64,
    /// The capability (verbatim) or permission (`resource:access`) that triggered it; for
    /// `write_access` the resources, for `breadth` the counts.
    pub evidence: String,
    /// One short human sentence.
    pub reason: &'static str,
}

/// The risk of an agent: a score in `[0, 1]` and the factors behind it, strongest first, one
/// per category.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct RiskAssessment {
    pub score: f64,
    pub factors: Vec<RiskFactor>,
}

/// What an item lets the agent do with what it names.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Access {
    Read,
    Write,
    Admin,
    Delete,
}

/// A sensitive category and the words that name it.
struct Category {
    code: &'static str,
    /// Stems that name the category on their own.
    strong: &'static [&'static str],
    /// (stems, context stems): a word of the first list names the category only with a word
    /// of the second in the same item ("transfer" with "funds", not with "ownership").
    pairs: &'static [(&'static [&'static str], &'static [&'static str])],
    /// Stems that name it in a permission (resource and access text) only: data stores and
    /// services.
    resources: &'static [&'static str],
    act: (f64, &'static str),
    read: Option<(f64, &'static str)>,
}

const PAYMENTS: Category = Category {
    code: "payments",
    strong: &[
        "pay",
        "pays",
        "paid",
        "paying",
        "payment",
        "payout",
        "payroll",
        "payabl",
        "disburs",
        "refund",
        "reimburs",
        "remit",
        "chargeback",
        "wire$",
        "wires$",
        "wired$",
        "ach",
        "sepa",
        "iban",
        "treasur",
        "stablecoin",
        "crypto",
        "wallet",
        "escrow",
        "withdraw",
        "debit",
        "purchas",
        "procur",
        "buy",
        "buys",
        "buying",
        "expens",
        "settl",
        "bank",
    ],
    pairs: &[(
        &[
            "transfer", "send", "move", "moving", "charg", "issu", "sweep", "credit", "collect", "spend", "rebalanc",
            "convert", "initiat", "process",
        ],
        &[
            "fund",
            "money",
            "cash",
            "balanc",
            "card",
            "invoic",
            "usd",
            "eur",
            "gbp",
            "dollar",
            "wallet",
            "ledger",
            "salar",
            "commission",
            "premium",
            "fee",
            "fees",
        ],
    )],
    resources: &["stripe", "paypal", "adyen", "braintree", "plaid", "billing", "invoic", "card", "cards", "charges"],
    act: (0.62, "Can move money: payments, payouts, refunds, purchases or transfers."),
    read: Some((0.15, "Reads payment or financial transaction data.")),
};

const SHELL: Category = Category {
    code: "shell",
    strong: &[
        "shell",
        "shells",
        "bash",
        "zsh",
        "sh",
        "ssh",
        "sudo",
        "exec$",
        "terminal",
        "powershell",
        "kubectl",
        "rce",
    ],
    pairs: &[(
        &["run", "runs", "running", "execut", "invok", "spawn", "launch"],
        &["command", "script", "code", "python", "binar", "program", "cell", "cells", "notebook"],
    )],
    resources: &[],
    act: (0.62, "Can run shell commands or arbitrary code."),
    read: Some((0.30, "Can see shell sessions or hosts.")),
};

const ADMIN: Category = Category {
    code: "admin",
    strong: &["admin", "admins", "administr", "sudo", "superuser", "iam", "rbac", "privileg"],
    pairs: &[
        (
            &["grant", "assign", "manag", "modif", "edit", "chang", "provision", "elevat", "revok", "add", "adds"],
            &["role", "permission", "access", "group", "privileg", "entitlement", "acl", "acls", "membership"],
        ),
        (&["root"], &["access", "account", "login", "shell", "user", "privileg", "level", "password"]),
    ],
    resources: &["okta", "scim", "sso", "roles", "permissions", "entitlements", "acl", "acls", "groups"],
    act: (0.55, "Holds administrative or root-level privileges, or changes who can access what."),
    read: Some((0.20, "Can view access-control or administrative settings.")),
};

const DELETION: Category = Category {
    code: "deletion",
    strong: &[
        "delet", "remov", "purg", "eras", "wipe", "drop", "drops", "dropped", "dropping", "destroy", "truncat",
        "prune", "pruning", "shred", "expung", "terminat",
    ],
    pairs: &[],
    resources: &[],
    act: (0.50, "Can delete, purge or destroy data or resources."),
    read: None,
};

const CREDENTIALS: Category = Category {
    code: "credentials",
    strong: &[
        "credential",
        "secret$",
        "secrets$",
        "password",
        "passwd",
        "passphras",
        "passkey",
        "apikey",
        "token$",
        "tokens$",
        "mfa",
        "otp",
        "totp",
        "2fa",
        "keychain",
        "keyring",
        "vault",
        "kms",
        "hsm",
        "oauth",
    ],
    pairs: &[(
        &["key", "keys"],
        &["api", "ssh", "access", "private", "encryption", "signing", "secret", "service", "gpg", "pgp"],
    )],
    resources: &["secretsmanager", "keyvault", "1password", "lastpass"],
    act: (0.50, "Manages credentials, secrets or API keys."),
    read: Some((0.45, "Can read credentials, secrets or API keys.")),
};

const PII: Category = Category {
    code: "pii",
    strong: &[
        "pii",
        "ssn",
        "ssns",
        "phi",
        "personal$",
        "passport",
        "medical",
        "clinical",
        "patient",
        "ehr",
        "emr",
        "hipaa",
        "diagnos",
        "prescri",
        "gdpr",
        "biometric",
        "birthdate",
        "dob",
        "salar",
        "criminal",
        "ethnic",
        "genetic",
        "inbox",
        "mailbox",
    ],
    pairs: &[(
        &[
            "customer",
            "user",
            "users",
            "employe",
            "member",
            "client",
            "candidat",
            "applicant",
            "subscrib",
            "contact",
            "people",
            "person",
            "staff",
            "citizen",
            "tenant",
            "guest",
            "shopper",
            "policyholder",
            "student",
            "caller",
            "consumer",
            "buyer",
            "donor",
            "health",
        ],
        &[
            "email",
            "mail",
            "inbox",
            "address",
            "phone",
            "record",
            "data",
            "profil",
            "detail",
            "identit",
            "histor",
            "info",
            "file",
            "name",
            "conversation",
            "chat",
            "transcript",
            "messag",
            "correspondenc",
            "note",
            "plan",
            "insur",
            "benefit",
        ],
    )],
    resources: &[
        "customer",
        "crm",
        "contacts",
        "hris",
        "hr",
        "patient",
        "employe",
        "member",
        "candidat",
        "applicant",
        "subscrib",
        "personnel",
        "people",
        "users",
        "salesforce",
        "hubspot",
        "email",
        "mail",
        "gmail",
        "outlook",
        "workday",
        "profiles",
    ],
    act: (0.40, "Modifies or acts on personal data (PII, health, customer or employee records)."),
    read: Some((0.33, "Reads personal data (PII, health, customer or employee records).")),
};

const EXTERNAL_COMMS: Category = Category {
    code: "external_comms",
    strong: &["sms", "twilio", "sendgrid", "mailchimp", "mailgun", "smtp", "whatsapp", "tweet", "newsletter"],
    pairs: &[(
        &[
            "send",
            "sent",
            "email",
            "mail$",
            "mails$",
            "mailed$",
            "mailing$",
            "text$",
            "texts$",
            "texted$",
            "texting$",
            "post$",
            "posts$",
            "posted$",
            "posting$",
            "publish",
            "tweet",
            "dm",
            "dms",
            "messag",
            "notif",
            "broadcast",
            "repl",
            "invit",
        ],
        &[
            "email",
            "mail",
            "sms",
            "messag",
            "letter",
            "newsletter",
            "social",
            "twitter",
            "linkedin",
            "instagram",
            "facebook",
            "tiktok",
            "tweet",
            "customer",
            "client",
            "prospect",
            "public",
            "extern",
            "press",
            "whatsapp",
            "candidat",
            "patient",
            "user",
            "lead",
            "subscrib",
            "recipient",
            "contact",
            "member",
            "policyholder",
            "buyer",
        ],
    )],
    resources: &["ses", "email", "mail", "gmail", "outlook", "social", "twitter", "linkedin", "facebook", "instagram"],
    act: (0.22, "Can send messages outside the organisation (email, SMS, social posts)."),
    read: None,
};

/// Categories in tie-breaking order (strongest base weight first).
const CATEGORIES: &[&Category] = &[&PAYMENTS, &SHELL, &ADMIN, &DELETION, &CREDENTIALS, &PII, &EXTERNAL_COMMS];

/// Verbs of a capability that only look, or only prepare something a person acts on.
const LOOK_VERBS: &[&str] = &[
    "read",
    "view",
    "list",
    "lookup",
    "look",
    "search",
    "find",
    "monitor",
    "report",
    "analy",
    "summar",
    "audit",
    "inspect",
    "check$",
    "checks$",
    "checking$",
    "checked$",
    "query",
    "queries",
    "fetch",
    "get",
    "see",
    "detect",
    "track",
    "watch",
    "retriev",
    "explor",
    "dashboard",
    "insight",
    "review",
    "verif",
    "count$",
    "counts$",
    "counting$",
    "measur",
    "compar",
    "statistic",
    "forecast",
    "classif",
    "observ",
    "preview",
    "draft",
    "suggest",
    "recommend",
];

/// Verbs that act even next to a look verb ("review and approve expenses"). Words that are
/// as often nouns ("payment report", "transfer history") are left out: a capability with no
/// look verb acts anyway.
const ACT_VERBS: &[&str] = &[
    "creat",
    "updat",
    "write",
    "edit",
    "modif",
    "chang",
    "send",
    "issu",
    "initiat",
    "execut",
    "run",
    "runs",
    "make",
    "approv",
    "submit",
    "move",
    "set",
    "add",
    "grant",
    "revok",
    "reset",
    "rotat",
    "book$",
    "books$",
    "booked$",
    "booking$",
    "place$",
    "places$",
    "placed$",
    "placing$",
    "post$",
    "posts$",
    "posted$",
    "posting$",
    "publish",
    "apply",
    "deploy",
    "push",
    "merge",
    "commit",
    "install",
    "provision",
    "configur",
    "manag",
    "cancel",
    "block",
    "unlock",
    "assign",
    "upload",
    "export",
    "sync",
    "import",
    "repl",
    "invit",
    "notif",
    "buy",
    "purchas",
];

const ACCESS_NONE: &[&str] = &["none", "no", "false", "deny", "denied", "0", "off", "disabled", "forbidden"];
const ACCESS_DELETE: &[&str] = &["delete", "remove", "destroy", "purge", "drop", "del", "erase", "wipe"];
const ACCESS_ADMIN: &[&str] =
    &["admin", "administrator", "owner", "root", "superuser", "full", "fullcontrol", "all", "manage", "sudo"];
const ACCESS_WRITE: &[&str] = &[
    "write",
    "rw",
    "readwrite",
    "update",
    "create",
    "edit",
    "modify",
    "post",
    "put",
    "patch",
    "send",
    "execute",
    "exec",
    "run",
    "true",
    "yes",
    "1",
    "on",
    "enabled",
    "allow",
    "allowed",
    "granted",
    "invoke",
    "use",
    "insert",
    "upsert",
    "publish",
    "approve",
    "transfer",
    "pay",
    "ssh",
];
const ACCESS_READ: &[&str] =
    &["read", "ro", "readonly", "view", "viewer", "reader", "list", "get", "query", "search", "describe", "r"];

const WRITE_ACCESS_FIRST: f64 = 0.08;
const WRITE_ACCESS_STEP: f64 = 0.04;
const WRITE_ACCESS_MAX: f64 = 0.24;
const WRITE_ACCESS_REASON: &str = "Can change data in connected systems.";
const BREADTH_FREE: usize = 6;
const BREADTH_STEP: f64 = 0.02;
const BREADTH_MAX: f64 = 0.12;
const BREADTH_REASON: &str = "Has many capabilities or resources, which widens what can go wrong.";

/// Lower-cased alphanumeric words, camelCase split, stop words removed.
fn item_words(text: &str) -> Vec<String> {
    embed::words(&split_camel(text))
}

/// The access a permission's access text grants, or `None` when it grants nothing.
fn permission_access(access: &str) -> Option<Access> {
    let trimmed = access.trim();
    if trimmed == "*" {
        return Some(Access::Admin);
    }
    let words: Vec<String> = split_camel(trimmed)
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .collect();
    if words.is_empty() || words.iter().all(|w| ACCESS_NONE.contains(&w.as_str())) {
        return None;
    }
    let has = |list: &[&str]| words.iter().any(|w| list.contains(&w.as_str()));
    Some(if has(ACCESS_DELETE) {
        Access::Delete
    } else if has(ACCESS_ADMIN) {
        Access::Admin
    } else if has(ACCESS_WRITE) {
        Access::Write
    } else if has(ACCESS_READ) {
        Access::Read
    } else {
        // Unrecognised access text: assume it acts (fail closed).
        Access::Write
    })
}

/// The access a capability implies: reading when its only verbs look, otherwise acting.
fn capability_access(words: &[String]) -> Access {
    // A deletion verb acts; a participle ("list deleted files") only describes.
    let deletes = words.iter().any(|w| !w.ends_with("ed") && DELETION.strong.iter().any(|s| matches(w, s)));
    let acts = deletes || find(words, ACT_VERBS).is_some();
    if find(words, LOOK_VERBS).is_some() && !acts { Access::Read } else { Access::Write }
}

/// Whether `category` is named by `words` (`permission`: the words of a permission, where
/// the category's resource stems count too).
fn names(category: &Category, words: &[String], permission: bool) -> bool {
    find(words, category.strong).is_some()
        || category.pairs.iter().any(|(stems, context)| pair_named(words, stems, context))
        || (permission && find(words, category.resources).is_some())
}

/// Whether a word of `stems` and a different word of `context` occur together ("send email",
/// not "label mail").
fn pair_named(words: &[String], stems: &[&str], context: &[&str]) -> bool {
    words.iter().enumerate().any(|(i, w)| {
        stems.iter().any(|s| matches(w, s))
            && words.iter().enumerate().any(|(j, c)| i != j && context.iter().any(|s| matches(c, s)))
    })
}

/// The factors one item raises, per category, at `access`.
fn item_factors(words: &[String], access: Access, permission: bool, evidence: &str, out: &mut Vec<RiskFactor>) {
    for category in CATEGORIES {
        if !names(category, words, permission) {
            continue;
        }
        let chosen = if access >= Access::Write { Some(category.act) } else { category.read };
        if let Some((weight, reason)) = chosen {
            out.push(RiskFactor { code: category.code, weight, evidence: evidence.to_owned(), reason });
        }
    }
}

/// The risk of an agent with these capabilities and flattened `(resource, access)`
/// permissions.
pub fn assess(capabilities: &[String], permissions: &[(String, String)]) -> RiskAssessment {
    let mut raised: Vec<RiskFactor> = Vec::new();
    let mut capability_count = 0_usize;
    for capability in capabilities {
        let words = item_words(capability);
        if words.is_empty() {
            continue;
        }
        capability_count += 1;
        item_factors(&words, capability_access(&words), false, capability, &mut raised);
    }

    let mut resources: Vec<&str> = Vec::new();
    let mut writable_plain: Vec<String> = Vec::new();
    for (resource, access_text) in permissions {
        let Some(access) = permission_access(access_text) else { continue };
        let resource_name = resource.trim();
        if resource_name.is_empty() {
            continue;
        }
        if !resources.contains(&resource_name) {
            resources.push(resource_name);
        }
        let evidence = format!("{resource_name}:{}", access_text.trim());
        let words = item_words(&format!("{resource_name} {access_text}"));
        let before = raised.len();
        item_factors(&words, access, true, &evidence, &mut raised);
        let named = raised.len() > before;
        if access == Access::Admin {
            let (weight, reason) = ADMIN.act;
            raised.push(RiskFactor { code: ADMIN.code, weight, evidence: evidence.clone(), reason });
        }
        if access == Access::Delete {
            let (weight, reason) = DELETION.act;
            raised.push(RiskFactor { code: DELETION.code, weight, evidence: evidence.clone(), reason });
        }
        if access >= Access::Write && !named && !writable_plain.contains(&evidence) {
            writable_plain.push(evidence);
        }
    }

    // The strongest factor per category; on a tie the first item that reached it.
    let mut factors: Vec<RiskFactor> = Vec::new();
    for factor in raised {
        match factors.iter_mut().find(|f| f.code == factor.code) {
            Some(kept) if factor.weight > kept.weight => *kept = factor,
            Some(_) => {}
            None => factors.push(factor),
        }
    }
    if !writable_plain.is_empty() {
        let weight = (WRITE_ACCESS_FIRST + WRITE_ACCESS_STEP * (writable_plain.len() - 1) as f64).min(WRITE_ACCESS_MAX);
        factors.push(RiskFactor {
            code: "write_access",
            weight,
            evidence: writable_plain.join(", "),
            reason: WRITE_ACCESS_REASON,
        });
    }
    let breadth = capability_count + resources.len();
    if breadth > BREADTH_FREE {
        let weight = (BREADTH_STEP * (breadth - BREADTH_FREE) as f64).min(BREADTH_MAX);
        factors.push(RiskFactor {
            code: "breadth",
            weight,
            evidence: format!("{capability_count} capabilities, {} resources", resources.len()),
            reason: BREADTH_REASON,
        });
    }

    let order = |code: &str| CATEGORIES.iter().position(|c| c.code == code).unwrap_or(CATEGORIES.len());
    factors.sort_by(|a, b| b.weight.total_cmp(&a.weight).then_with(|| order(a.code).cmp(&order(b.code))));
    let survival: f64 = factors.iter().map(|f| 1.0 - f.weight).product();
    RiskAssessment { score: (1.0 - survival).clamp(0.0, 1.0), factors }
}

/// What a policy check knows of an action beyond its action and resource text.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ActionContext<'a> {
    /// The acting agent's own risk score (from [`assess`]).
    pub agent_risk: f64,
    /// The caller says the action touches personal data.
    pub personal_data: bool,
    /// The data subject's consent: given, refused, or not stated.
    pub consent: Option<bool>,
    /// The environment the caller names (`production`, `staging`, …).
    pub environment: Option<&'a str>,
    /// How many records the action affects, when the caller says.
    pub record_count: Option<u64>,
    /// How unusual the action is for the agent, in `[0, 1]`.
    pub anomaly_score: f64,
}

const PRODUCTION_WORDS: &[&str] = &["prod$", "production", "prd$", "live$"];
const PRODUCTION_ACTING: f64 = 0.2;
const PRODUCTION_READING: f64 = 0.05;
const AGENT_SHARE: f64 = 0.5;
const NO_CONSENT: f64 = 0.35;
const CONSENT_REFUSED: f64 = 0.5;
const ANOMALY_SHARE: f64 = 0.6;

/// The risk of one action of an agent on a resource, as a policy check computes it.
///
/// The action and resource are read together like a capability ("delete" on
/// "prod/customers" names deletion and personal data), at the access the action's verbs
/// imply (an action with no recognised verb acts: fail closed). Then:
///
/// | code          | when | weight |
/// |---------------|------|-------:|
/// | (categories)  | as in [`assess`] | as there |
/// | `write_access`| an acting action naming no category | 0.08 |
/// | `production`  | the resource or `environment` names production (`prod`, `production`, `prd`, `live`) | 0.20 acting, 0.05 reading |
/// | `agent_risk`  | the agent's own risk score, halved | ≤ 0.5 |
/// | `no_consent`  | personal data (said by the caller, or named by the action) without consent given | 0.35; 0.50 when refused |
/// | `bulk`        | more than 100 / 1,000 / 10,000 records | 0.10 / 0.20 / 0.30 |
/// | `anomaly`     | the anomaly score × 0.6 | ≤ 0.6 |
///
/// Combined by the same noisy-OR, so the score stays in `[0, 1)` and only grows with each
/// factor.
pub fn assess_action(action: &str, resource: &str, ctx: &ActionContext<'_>) -> RiskAssessment {
    let mut words = item_words(action);
    let access = if words.is_empty() { Access::Write } else { capability_access(&words) };
    // The action's words, then the resource's: what splitting "{action} {resource}" gives.
    words.extend(item_words(resource));
    let evidence = format!("{} on {}", action.trim(), resource.trim());
    let mut factors: Vec<RiskFactor> = Vec::new();
    item_factors(&words, access, true, &evidence, &mut factors);
    if access >= Access::Write && factors.is_empty() {
        factors.push(RiskFactor {
            code: "write_access",
            weight: WRITE_ACCESS_FIRST,
            evidence,
            reason: WRITE_ACCESS_REASON,
        });
    }

    let environment_words = ctx.environment.map(item_words).unwrap_or_default();
    if let Some(word) = find(&words, PRODUCTION_WORDS).or_else(|| find(&environment_words, PRODUCTION_WORDS)) {
        let weight = if access >= Access::Write { PRODUCTION_ACTING } else { PRODUCTION_READING };
        factors.push(RiskFactor {
            code: "production",
            weight,
            evidence: word.to_owned(),
            reason: "Touches a production system.",
        });
    }
    if ctx.agent_risk > 0.0 {
        factors.push(RiskFactor {
            code: "agent_risk",
            weight: (ctx.agent_risk * AGENT_SHARE).clamp(0.0, AGENT_SHARE),
            evidence: format!("{:.2}", ctx.agent_risk),
            reason: "The agent itself can do sensitive things.",
        });
    }
    let personal = ctx.personal_data || factors.iter().any(|f| f.code == PII.code);
    if personal && ctx.consent != Some(true) {
        let (weight, evidence) = match ctx.consent {
            Some(false) => (CONSENT_REFUSED, "consent refused"),
            _ => (NO_CONSENT, "consent not given"),
        };
        factors.push(RiskFactor {
            code: "no_consent",
            weight,
            evidence: evidence.to_owned(),
            reason: "Uses personal data without the data subject's consent.",
        });
    }
    if let Some(count) = ctx.record_count.filter(|&c| c > 100) {
        let weight = if count > 10_000 {
            0.3
        } else if count > 1_000 {
            0.2
        } else {
            0.1
        };
        factors.push(RiskFactor {
            code: "bulk",
            weight,
            evidence: format!("{count} records"),
            reason: "Affects many records at once.",
        });
    }
    factors.extend(anomaly_factor(ctx.anomaly_score));
    factors.sort_by(|a, b| b.weight.total_cmp(&a.weight));
    let score = factors.iter().fold(0.0, |score, f| with_factor(score, f.weight));
    RiskAssessment { score, factors }
}

/// The `anomaly` factor of an anomaly score in `[0, 1]`: the score × 0.6; none at 0.
pub fn anomaly_factor(anomaly_score: f64) -> Option<RiskFactor> {
    (anomaly_score > 0.0).then(|| RiskFactor {
        code: "anomaly",
        weight: (anomaly_score * ANOMALY_SHARE).clamp(0.0, ANOMALY_SHARE),
        evidence: format!("{anomaly_score:.2}"),
        reason: "Unusual for this agent.",
    })
}

/// `score` with one more factor of `weight`, by the noisy-OR every factor combines by.
pub fn with_factor(score: f64, weight: f64) -> f64 {
    (1.0 - (1.0 - score.clamp(0.0, 1.0)) * (1.0 - weight.clamp(0.0, 1.0))).clamp(0.0, 1.0)
}

/// Where the levels `medium`, `high` and `critical` begin by default (a tenant may choose
/// its own): low < 0.3 ≤ medium < 0.6 ≤ high < 0.85 ≤ critical. The models above are
/// calibrated against these.
pub const LEVEL_BOUNDS: [f64; 3] = [0.3, 0.6, 0.85];

#[cfg(test)]
mod tests {
    use super::*;

    /// The default level of a score, by [`LEVEL_BOUNDS`], for the calibration tests below
    /// (the service's levels are `agentgov_domain::model::RiskLevels`).
    fn level(score: f64) -> &'static str {
        let [medium, high, critical] = LEVEL_BOUNDS;
        if score < medium {
            "low"
        } else if score < high {
            "medium"
        } else if score < critical {
            "high"
        } else {
            "critical"
        }
    }

    fn caps(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| (*s).to_owned()).collect()
    }

    fn perms(list: &[(&str, &str)]) -> Vec<(String, String)> {
        list.iter().map(|(r, a)| ((*r).to_owned(), (*a).to_owned())).collect()
    }

    fn codes(a: &RiskAssessment) -> Vec<&'static str> {
        a.factors.iter().map(|f| f.code).collect()
    }

    fn factor<'a>(a: &'a RiskAssessment, code: &str) -> Option<&'a RiskFactor> {
        a.factors.iter().find(|f| f.code == code)
    }

    #[test]
    fn empty_input_is_zero_with_no_factors() {
        assert_eq!(assess(&[], &[]), RiskAssessment { score: 0.0, factors: vec![] });
        let a = assess(&caps(&["", "   "]), &perms(&[("payments", "none"), ("shell", "false")]));
        assert_eq!(a.score, 0.0);
        assert!(a.factors.is_empty(), "{a:?}");
    }

    #[test]
    fn payments_are_detected_from_capabilities_and_permissions() {
        for capability in
            ["transfer funds", "initiate payouts", "send wire", "refund charge", "ACH batch", "pay vendor invoices"]
        {
            let a = assess(&caps(&[capability]), &[]);
            let f = factor(&a, "payments").unwrap_or_else(|| panic!("{capability}: {a:?}"));
            assert_eq!(f.evidence, capability);
            assert!(f.weight >= 0.6, "{capability}: {a:?}");
        }
        let a = assess(&[], &perms(&[("stripe.payouts", "write")]));
        assert_eq!(factor(&a, "payments").map(|f| f.evidence.as_str()), Some("stripe.payouts:write"));
        // Moving something that is not money is not a payment.
        assert!(factor(&assess(&caps(&["transfer file ownership"]), &[]), "payments").is_none());
        // Reading payment data counts, but far less.
        let read = assess(&caps(&["payment analytics"]), &perms(&[("stripe.reports", "read")]));
        assert!(factor(&read, "payments").is_some_and(|f| f.weight < 0.2), "{read:?}");
        assert_eq!(level(read.score), "low");
    }

    #[test]
    fn deletion_is_detected_and_reading_about_it_is_not() {
        for capability in ["delete records", "drop tables", "purge old backups", "wipe devices", "truncate partitions"]
        {
            let a = assess(&caps(&[capability]), &[]);
            assert_eq!(codes(&a), ["deletion"], "{capability}: {a:?}");
        }
        let a = assess(&[], &perms(&[("files", "delete")]));
        assert_eq!(factor(&a, "deletion").map(|f| f.evidence.as_str()), Some("files:delete"));
        assert!(factor(&assess(&caps(&["list deleted files"]), &[]), "deletion").is_none());
    }

    #[test]
    fn shell_is_detected() {
        for capability in
            ["run shell commands", "ssh into hosts", "open a terminal", "execute bash scripts", "run python code"]
        {
            let a = assess(&caps(&[capability]), &[]);
            assert!(factor(&a, "shell").is_some_and(|f| f.weight >= 0.6), "{capability}: {a:?}");
        }
        let a = assess(&[], &perms(&[("shell", "true")]));
        assert_eq!(factor(&a, "shell").map(|f| f.evidence.as_str()), Some("shell:true"));
        assert!(factor(&assess(&caps(&["execute payments"]), &[]), "shell").is_none());
        assert!(factor(&assess(&caps(&["brief the executive team"]), &[]), "shell").is_none());
    }

    #[test]
    fn credentials_are_detected_and_reading_them_is_nearly_as_bad() {
        for capability in ["rotate credentials", "read secrets", "manage API keys", "reset passwords", "issue tokens"] {
            let a = assess(&caps(&[capability]), &[]);
            assert!(factor(&a, "credentials").is_some_and(|f| f.weight >= 0.45), "{capability}: {a:?}");
        }
        let a = assess(&[], &perms(&[("vault.secrets", "read")]));
        assert!(factor(&a, "credentials").is_some_and(|f| f.weight >= 0.45), "{a:?}");
        assert!(factor(&assess(&caps(&["tokenize card numbers"]), &[]), "credentials").is_none());
    }

    #[test]
    fn pii_is_detected_and_read_access_still_counts() {
        for capability in [
            "read customer emails",
            "look up SSN",
            "view medical records",
            "update health records",
            "export personal data",
        ] {
            let a = assess(&caps(&[capability]), &[]);
            assert!(factor(&a, "pii").is_some(), "{capability}: {a:?}");
        }
        let read = assess(&[], &perms(&[("crm", "read")]));
        let write = assess(&[], &perms(&[("crm", "write")]));
        let r = factor(&read, "pii").map(|f| f.weight).unwrap_or_default();
        let w = factor(&write, "pii").map(|f| f.weight).unwrap_or_default();
        assert!(r > 0.3 && w > r, "read {r}, write {w}");
        assert!(factor(&assess(&caps(&["answer customer questions"]), &[]), "pii").is_none());
    }

    #[test]
    fn admin_is_detected_from_words_and_access_levels() {
        for capability in ["root access", "superuser", "manage IAM roles", "grant permissions to groups"] {
            let a = assess(&caps(&[capability]), &[]);
            assert!(factor(&a, "admin").is_some_and(|f| f.weight >= 0.5), "{capability}: {a:?}");
        }
        let a = assess(&[], &perms(&[("db.customers", "admin")]));
        assert_eq!(factor(&a, "admin").map(|f| f.evidence.as_str()), Some("db.customers:admin"));
        assert!(factor(&a, "pii").is_some(), "{a:?}");
        let audit = assess(&[], &perms(&[("iam", "read")]));
        assert!(factor(&audit, "admin").is_some_and(|f| f.weight < 0.3), "{audit:?}");
        assert!(factor(&assess(&caps(&["escalate tickets"]), &[]), "admin").is_none());
    }

    #[test]
    fn external_comms_are_detected() {
        for capability in ["send email", "send sms", "post to social media", "emails customers", "reply to customers"] {
            let a = assess(&caps(&[capability]), &[]);
            assert!(factor(&a, "external_comms").is_some(), "{capability}: {a:?}");
        }
        assert!(factor(&assess(&[], &perms(&[("twilio", "write")])), "external_comms").is_some());
        for quiet in ["draft replies", "extract text from PDFs", "summarize emails", "publish packages"] {
            assert!(factor(&assess(&caps(&[quiet]), &[]), "external_comms").is_none(), "{quiet}");
        }
    }

    #[test]
    fn plain_write_access_and_breadth_add_a_little() {
        let one = assess(&[], &perms(&[("jira", "write")]));
        let three = assess(&[], &perms(&[("jira", "write"), ("asana", "write"), ("notion", "edit")]));
        assert_eq!(codes(&one), ["write_access"]);
        assert!(three.score > one.score && three.score < 0.3, "{three:?}");
        assert_eq!(
            factor(&three, "write_access").map(|f| f.evidence.as_str()),
            Some("jira:write, asana:write, notion:edit")
        );
        let many: Vec<String> = (0..10).map(|i| format!("summarize topic {i}")).collect();
        let broad = assess(&many, &[]);
        assert_eq!(codes(&broad), ["breadth"]);
        assert!(broad.score > 0.0 && broad.score < 0.15, "{broad:?}");
    }

    #[test]
    fn calibration_examples_land_in_their_levels() {
        let docs =
            assess(&caps(&["search documentation", "answer questions"]), &perms(&[("docs", "read"), ("wiki", "read")]));
        assert_eq!(level(docs.score), "low", "{docs:?}");

        let support = assess(
            &caps(&["read customer emails", "draft replies", "tag tickets"]),
            &perms(&[("support.inbox", "read"), ("helpdesk.tickets", "write")]),
        );
        assert_eq!(level(support.score), "medium", "{support:?}");

        let payer = assess(&caps(&["transfer funds to vendors"]), &perms(&[("payments", "write")]));
        assert_eq!(level(payer.score), "high", "{payer:?}");
        let operator = assess(&caps(&["run shell commands"]), &perms(&[("shell", "true")]));
        assert_eq!(level(operator.score), "high", "{operator:?}");

        let everything = assess(
            &caps(&["transfer funds", "delete records"]),
            &perms(&[("payments", "write"), ("records", "delete"), ("platform", "admin")]),
        );
        assert_eq!(level(everything.score), "critical", "{everything:?}");
        assert_eq!(codes(&everything)[..3], ["payments", "admin", "deletion"]);
    }

    #[test]
    fn factors_are_sorted_and_one_per_category_with_the_strongest_evidence() {
        let a = assess(
            &caps(&["payment analytics", "initiate payouts", "send sms", "delete records"]),
            &perms(&[("stripe.reports", "read"), ("bank.wires", "write"), ("records", "delete")]),
        );
        assert!(a.factors.windows(2).all(|w| w[0].weight >= w[1].weight), "{a:?}");
        let mut seen = codes(&a);
        let n = seen.len();
        seen.sort_unstable();
        seen.dedup();
        assert_eq!(seen.len(), n, "one factor per category: {a:?}");
        assert_eq!(factor(&a, "payments").map(|f| f.evidence.as_str()), Some("initiate payouts"));
        assert_eq!(factor(&a, "deletion").map(|f| f.evidence.as_str()), Some("delete records"));
        assert!(a.factors.iter().all(|f| !f.reason.is_empty()));
        assert!((0.0..=1.0).contains(&a.score));
    }

    #[test]
    fn adding_anything_never_lowers_the_score() {
        let capability_pool = caps(&[
            "transfer funds",
            "payment analytics",
            "read customer emails",
            "run shell commands",
            "delete records",
            "rotate api keys",
            "send sms",
            "summarize tickets",
            "grant roles",
            "list deleted files",
        ]);
        let permission_pool = perms(&[
            ("payments", "write"),
            ("crm", "read"),
            ("shell", "true"),
            ("db.customers", "admin"),
            ("jira", "write"),
            ("docs", "read"),
            ("files", "delete"),
            ("notion", "edit"),
            ("payments", "none"),
            ("vault", "read"),
        ]);
        // A third of the capability subsets (by bit mask) against a spread of permission subsets,
        // each extended by one more item of either kind.
        let (nc, np) = (capability_pool.len(), permission_pool.len());
        let pick = |mask: u32, n: usize| (0..n).filter(move |i| mask & (1 << i) != 0);
        for cap_mask in (0..(1_u32 << nc)).step_by(3) {
            let perm_mask = cap_mask.wrapping_mul(2_654_435_761) % (1 << np);
            let c: Vec<String> = pick(cap_mask, nc).map(|i| capability_pool[i].clone()).collect();
            let p: Vec<(String, String)> = pick(perm_mask, np).map(|i| permission_pool[i].clone()).collect();
            let base = assess(&c, &p).score;
            assert!((0.0..=1.0).contains(&base));
            for extra in &capability_pool {
                let mut more = c.clone();
                more.push(extra.clone());
                let s = assess(&more, &p).score;
                assert!(s >= base - 1e-12, "adding {extra:?} to {c:?} / {p:?}: {base} -> {s}");
            }
            for extra in &permission_pool {
                let mut more = p.clone();
                more.push(extra.clone());
                let s = assess(&c, &more).score;
                assert!(s >= base - 1e-12, "adding {extra:?} to {c:?} / {p:?}: {base} -> {s}");
            }
        }
    }

    #[test]
    fn access_levels_are_parsed() {
        assert_eq!(permission_access("read"), Some(Access::Read));
        assert_eq!(permission_access("READ_ONLY"), Some(Access::Read));
        assert_eq!(permission_access("read,write"), Some(Access::Write));
        assert_eq!(permission_access("true"), Some(Access::Write));
        assert_eq!(permission_access("admin"), Some(Access::Admin));
        assert_eq!(permission_access("*"), Some(Access::Admin));
        assert_eq!(permission_access("delete"), Some(Access::Delete));
        assert_eq!(permission_access("frobnicate"), Some(Access::Write), "unknown access fails closed");
        assert_eq!(permission_access("none"), None);
        assert_eq!(permission_access(""), None);
    }

    fn action(action: &str, resource: &str, ctx: &ActionContext<'_>) -> RiskAssessment {
        assess_action(action, resource, ctx)
    }

    #[test]
    fn reading_documentation_is_low_and_deleting_production_customers_is_high() {
        let calm = action("read", "docs/handbook", &ActionContext::default());
        assert_eq!(calm.score, 0.0, "{calm:?}");
        assert_eq!(level(calm.score), "low");

        let risky = action("delete", "prod/customers", &ActionContext { agent_risk: 0.6, ..ActionContext::default() });
        assert!(risky.score >= 0.85, "{risky:?}");
        for code in ["deletion", "pii", "production", "agent_risk", "no_consent"] {
            assert!(codes(&risky).contains(&code), "{code} missing from {:?}", codes(&risky));
        }
        assert!(risky.factors.windows(2).all(|w| w[0].weight >= w[1].weight), "strongest first");
    }

    #[test]
    fn an_unrecognised_action_acts_and_a_plain_write_is_counted() {
        let r = action("frobnicate", "tickets", &ActionContext::default());
        assert_eq!(codes(&r), ["write_access"]);
        let r = action("", "tickets", &ActionContext::default());
        assert_eq!(codes(&r), ["write_access"], "no verb at all fails closed");
    }

    #[test]
    fn consent_given_removes_the_consent_factor_and_refusal_weighs_more() {
        let base = ActionContext { personal_data: true, ..ActionContext::default() };
        let missing = action("read", "crm/contacts", &base);
        let given = action("read", "crm/contacts", &ActionContext { consent: Some(true), ..base.clone() });
        let refused = action("read", "crm/contacts", &ActionContext { consent: Some(false), ..base });
        assert!(codes(&missing).contains(&"no_consent"));
        assert!(!codes(&given).contains(&"no_consent"));
        assert!(refused.score > missing.score && missing.score > given.score);
    }

    #[test]
    fn production_bulk_and_anomaly_only_raise_the_score() {
        let plain = action("update", "orders", &ActionContext::default());
        let prod =
            action("update", "orders", &ActionContext { environment: Some("Production"), ..ActionContext::default() });
        let bulk =
            action("update", "orders", &ActionContext { record_count: Some(50_000), ..ActionContext::default() });
        let odd = action("update", "orders", &ActionContext { anomaly_score: 0.9, ..ActionContext::default() });
        assert!(codes(&prod).contains(&"production"));
        assert_eq!(bulk.factors.iter().find(|f| f.code == "bulk").map(|f| f.weight), Some(0.3));
        for r in [&prod, &bulk, &odd] {
            assert!(r.score > plain.score && r.score < 1.0);
        }
        let few = action("update", "orders", &ActionContext { record_count: Some(100), ..ActionContext::default() });
        assert!(!codes(&few).contains(&"bulk"), "100 records is not bulk");
    }

    #[test]
    fn moving_money_is_high_for_a_payments_agent() {
        let r = action(
            "transfer_funds",
            "payments/stripe",
            &ActionContext { agent_risk: 0.62, ..ActionContext::default() },
        );
        assert_eq!(r.factors[0].code, "payments");
        assert_eq!(level(r.score), "high", "{r:?}");
    }
}
