//! Agent search: a tenant of its own is filled with `--agents` varied agents (registered
//! through the API a few connections at a time, deterministic from word lists), then
//! `GET /agents/search` is loaded with `oha` for a few realistic queries, at one connection
//! (the latency a single user sees) and at `LOADED_CONNECTIONS`.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use serde_json::{Map, Value, json};

use super::oha::{Load, Stop};
use super::report::{RegisterRow, Row, Success};
use xtask::http::Connection;
use xtask::server::Server;

pub const SEARCH_ENDPOINT: &str = "GET /api/v1/agents/search";
/// What people ask the registry; one `oha` run per query and connection count.
pub const QUERIES: [&str; 3] = ["agents that can move money", "who can read customer emails", "deploy to production"];
/// Results asked for per search.
pub const LIMIT: u64 = 10;
/// Requests per query over one connection.
pub const SINGLE_USER_REQUESTS: u64 = 1_000;
/// Connections of the loaded search runs.
pub const LOADED_CONNECTIONS: u32 = 16;
/// Connections registering agents at once.
pub const REGISTER_CONNECTIONS: usize = 8;
const PROGRESS_EVERY: Duration = Duration::from_secs(10);

/// What an agent does: the kind declared, a description, its capabilities, the resource it
/// touches with what access, and the systems it may do that through.
struct Job {
    slug: &'static str,
    kind: &'static str,
    does: &'static str,
    capabilities: &'static [&'static str],
    resource: &'static str,
    access: &'static str,
    systems: &'static [(&'static str, &'static str)],
}

const JOBS: &[Job] = &[
    Job {
        slug: "refunds",
        kind: "finance",
        does: "Issues refunds and store credit on customer orders",
        capabilities: &["payments.refund", "orders.read"],
        resource: "payments",
        access: "write",
        systems: &[("stripe", "Stripe"), ("shopify", "Shopify"), ("adyen", "Adyen")],
    },
    Job {
        slug: "payouts",
        kind: "finance",
        does: "Moves money between company accounts and pays approved vendor invoices",
        capabilities: &["payments.transfer", "invoices.pay", "bank.read"],
        resource: "bank_accounts",
        access: "write",
        systems: &[("netsuite", "NetSuite"), ("sap", "SAP"), ("stripe", "Stripe")],
    },
    Job {
        slug: "reconciler",
        kind: "finance",
        does: "Reconciles ledger entries against bank statements and flags mismatches",
        capabilities: &["ledger.read", "bank.read", "reports.write"],
        resource: "ledger",
        access: "read",
        systems: &[("netsuite", "NetSuite"), ("sap", "SAP"), ("quickbooks", "QuickBooks")],
    },
    Job {
        slug: "ticket-triage",
        kind: "support",
        does: "Triages incoming support tickets, tags them and drafts first replies",
        capabilities: &["tickets.read", "tickets.write", "email.send"],
        resource: "tickets",
        access: "write",
        systems: &[("zendesk", "Zendesk"), ("freshdesk", "Freshdesk"), ("intercom", "Intercom")],
    },
    Job {
        slug: "inbox-summarizer",
        kind: "llm",
        does: "Reads customer emails and summarizes each thread for the account manager",
        capabilities: &["email.read", "customers.read", "summaries.write"],
        resource: "mailboxes",
        access: "read",
        systems: &[("gmail", "Gmail"), ("outlook", "Outlook"), ("hubspot", "HubSpot")],
    },
    Job {
        slug: "release",
        kind: "code",
        does: "Deploys services to production and rolls back releases whose health checks fail",
        capabilities: &["deploy.production", "kubernetes.write", "ci.trigger"],
        resource: "clusters",
        access: "admin",
        systems: &[("kubernetes", "Kubernetes"), ("argocd", "Argo CD"), ("github", "GitHub Actions")],
    },
    Job {
        slug: "code-review",
        kind: "code",
        does: "Reviews pull requests, runs the tests and suggests fixes",
        capabilities: &["repo.read", "pull_requests.comment"],
        resource: "repositories",
        access: "read",
        systems: &[("github", "GitHub"), ("gitlab", "GitLab"), ("bitbucket", "Bitbucket")],
    },
    Job {
        slug: "on-call",
        kind: "workflow",
        does: "Watches alerts, opens incidents and restarts unhealthy services",
        capabilities: &["metrics.read", "services.restart", "incidents.write"],
        resource: "services",
        access: "write",
        systems: &[("pagerduty", "PagerDuty"), ("datadog", "Datadog"), ("kubernetes", "Kubernetes")],
    },
    Job {
        slug: "price-scraper",
        kind: "browser",
        does: "Browses competitor and vendor websites and records their prices",
        capabilities: &["web.browse", "prices.write"],
        resource: "price_list",
        access: "write",
        systems: &[("chrome", "a headless Chrome"), ("playwright", "Playwright")],
    },
    Job {
        slug: "docs-answers",
        kind: "rag",
        does: "Answers employees' questions from the internal knowledge base, with sources",
        capabilities: &["docs.search", "docs.read"],
        resource: "wiki",
        access: "read",
        systems: &[("confluence", "Confluence"), ("notion", "Notion"), ("sharepoint", "SharePoint")],
    },
    Job {
        slug: "warehouse-sync",
        kind: "data",
        does: "Copies tables from the production database to the data warehouse every night",
        capabilities: &["db.read", "warehouse.write"],
        resource: "warehouse",
        access: "write",
        systems: &[("postgres", "PostgreSQL"), ("snowflake", "Snowflake"), ("bigquery", "BigQuery")],
    },
    Job {
        slug: "secret-rotation",
        kind: "security",
        does: "Rotates database passwords, credentials and API keys before they expire",
        capabilities: &["secrets.rotate", "iam.write"],
        resource: "secrets",
        access: "admin",
        systems: &[("vault", "Vault"), ("aws", "AWS IAM"), ("okta", "Okta")],
    },
    Job {
        slug: "onboarding",
        kind: "workflow",
        does: "Creates accounts for new employees and grants them their team's access",
        capabilities: &["users.create", "groups.write"],
        resource: "directory",
        access: "admin",
        systems: &[("okta", "Okta"), ("workday", "Workday"), ("google", "Google Workspace")],
    },
    Job {
        slug: "erasure",
        kind: "data",
        does: "Deletes customer records and backups on right-to-erasure requests",
        capabilities: &["customers.delete", "backups.purge"],
        resource: "customers",
        access: "admin",
        systems: &[("postgres", "PostgreSQL"), ("salesforce", "Salesforce"), ("s3", "Amazon S3")],
    },
    Job {
        slug: "campaigns",
        kind: "workflow",
        does: "Sends marketing campaigns to customers by email and SMS",
        capabilities: &["email.send", "sms.send", "contacts.read"],
        resource: "contacts",
        access: "read",
        systems: &[("mailchimp", "Mailchimp"), ("twilio", "Twilio"), ("hubspot", "HubSpot")],
    },
    Job {
        slug: "forecast",
        kind: "data",
        does: "Forecasts demand from sales history and writes the weekly report",
        capabilities: &["sales.read", "reports.write"],
        resource: "sales",
        access: "read",
        systems: &[("snowflake", "Snowflake"), ("salesforce", "Salesforce"), ("looker", "Looker")],
    },
    Job {
        slug: "translator",
        kind: "llm",
        does: "Translates product pages and help articles into other languages",
        capabilities: &["content.read", "content.write"],
        resource: "cms",
        access: "write",
        systems: &[("contentful", "Contentful"), ("wordpress", "WordPress")],
    },
    Job {
        slug: "fraud-screen",
        kind: "security",
        does: "Scores card transactions for fraud and blocks suspicious payments",
        capabilities: &["payments.read", "payments.block"],
        resource: "transactions",
        access: "write",
        systems: &[("stripe", "Stripe"), ("adyen", "Adyen")],
    },
];

const TEAMS: &[&str] = &[
    "billing",
    "payments",
    "support",
    "sales",
    "marketing",
    "people",
    "security",
    "platform",
    "finance",
    "legal",
    "data",
    "research",
    "logistics",
    "procurement",
];

const NOTES: &[&str] = &[
    "Runs every hour.",
    "Asks a human before anything it cannot undo.",
    "Triggered from Slack.",
    "Handles a few hundred requests a day.",
    "Being replaced next quarter.",
    "Writes its decisions to the audit log.",
    "Uses the team's shared service account.",
    "Piloted in one region first.",
];

const EXTRA_CAPABILITIES: &[&str] = &["slack.notify", "logs.write", "calendar.read", "files.read", "web.search"];

/// SplitMix64: a fixed, well-spread sequence, so every run registers the same agents.
fn mix(x: u64) -> u64 {
    let mut z = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// An element of `list` for agent `i`; `salt` makes the choices of one agent independent.
fn pick<T>(list: &[T], i: u64, salt: u64) -> &T {
    &list[(mix(i.wrapping_mul(31).wrapping_add(salt)) % list.len() as u64) as usize]
}

/// The registration body of agent `i` (0-based): a job for a team through one system.
pub fn agent(i: u64) -> Value {
    let job = pick(JOBS, i, 1);
    let team = pick(TEAMS, i, 2);
    let &(system, system_name) = pick(job.systems, i, 3);
    let note = pick(NOTES, i, 4);
    let mut capabilities: Vec<String> = job.capabilities.iter().map(|c| (*c).to_owned()).collect();
    let extra = pick(EXTRA_CAPABILITIES, i, 5);
    if mix(i ^ 0x5eed).is_multiple_of(2) && !capabilities.iter().any(|c| c == extra) {
        capabilities.push((*extra).to_owned());
    }
    let mut permissions = Map::new();
    permissions.insert(job.resource.to_owned(), json!(job.access));
    permissions.insert(system.to_owned(), json!(["read"]));
    if mix(i ^ 0xc0ffee).is_multiple_of(4) {
        permissions.insert("customers".to_owned(), json!({"profiles": "read"}));
    }
    json!({
        "name": format!("{team}-{}-{system}-{i}", job.slug),
        "type": job.kind,
        "description": format!("{} for the {team} team, through {system_name}. {note}", job.does),
        "capabilities": capabilities,
        "permissions": permissions,
        "metadata": {
            "owner": format!("team-{team}"),
            "version": format!("1.{}", mix(i ^ 0xbeef) % 9),
            "environment": if mix(i ^ 0xfeed).is_multiple_of(5) { "staging" } else { "production" },
        },
    })
}

/// Registers agents 0..`count` in the tenant of `api_key`, `REGISTER_CONNECTIONS` at a time;
/// every one must answer 201.
pub fn register(server: &Server, mode: &str, api_key: &str, count: u64) -> anyhow::Result<RegisterRow> {
    let headers = [format!("X-API-Key: {api_key}")];
    let done = AtomicU64::new(0);
    let started = Instant::now();
    std::thread::scope(|scope| -> anyhow::Result<()> {
        let workers: Vec<_> = (0..REGISTER_CONNECTIONS as u64)
            .map(|first| {
                let (headers, done) = (&headers, &done);
                scope.spawn(move || -> anyhow::Result<()> {
                    let mut connection = Connection::new(&server.base)?;
                    for i in (first..count).step_by(REGISTER_CONNECTIONS) {
                        let body = agent(i).to_string();
                        let response = connection.post_json("/api/v1/agents/register", headers, &body)?;
                        if response.status != 201 {
                            bail!("registering agent {i} answered {}: {}", response.status, response.body);
                        }
                        done.fetch_add(1, Ordering::Relaxed);
                    }
                    Ok(())
                })
            })
            .collect();
        let mut last = Instant::now();
        while !workers.iter().all(|worker| worker.is_finished()) {
            std::thread::sleep(Duration::from_millis(100));
            if last.elapsed() >= PROGRESS_EVERY {
                last = Instant::now();
                let n = done.load(Ordering::Relaxed);
                println!(
                    "    {:>4.0}s: {n}/{count} registered, {:.0}/s",
                    started.elapsed().as_secs_f64(),
                    n as f64 / started.elapsed().as_secs_f64()
                );
            }
        }
        for worker in workers {
            worker.join().map_err(|_| anyhow::anyhow!("a registering thread panicked"))??;
        }
        Ok(())
    })?;
    Ok(RegisterRow {
        mode: mode.to_owned(),
        agents: count,
        connections: REGISTER_CONNECTIONS as u32,
        seconds: started.elapsed().as_secs_f64(),
    })
}

/// Each query: one search by hand (the first builds the index; it must return `LIMIT`
/// results, or all agents if fewer), `SINGLE_USER_REQUESTS` over one connection, then
/// `measure` over `LOADED_CONNECTIONS` after a warm-up. One row per run, the query in the
/// row's `endpoint`.
pub fn search(
    server: &Server,
    mode: &str,
    api_key: &str,
    agents: u64,
    warm_up: Duration,
    measure: Duration,
) -> anyhow::Result<Vec<Row>> {
    let key = format!("X-API-Key: {api_key}");
    let mut rows = Vec::new();
    for (n, query) in QUERIES.into_iter().enumerate() {
        let path = format!("/api/v1/agents/search?q={}&limit={LIMIT}", percent_encode(query));
        let (first, seconds) = server.get(&path, &[&key], Duration::from_secs(60))?;
        let found = first["items"].as_array().map_or(0, Vec::len) as u64;
        if found != LIMIT.min(agents) {
            bail!("searching {query:?} returned {found} agents, expected {}: {first}", LIMIT.min(agents));
        }
        let best = first["items"][0]["name"].as_str().unwrap_or("?");
        let model = first["model"]["name"].as_str().unwrap_or("?");
        println!("    {query:?}: first search {:.1} ms, best match {best}, ranked by {model}", seconds * 1000.0);
        // The row names the model that ranked: the server's default depends on whether the
        // Prompt Guard's encoder is installed.
        let label = format!("{query} ({model})");

        let url = format!("{}{path}", server.base);
        let headers = vec![key.clone()];
        let single = Load::get(url.clone(), headers.clone(), Stop::Requests(SINGLE_USER_REQUESTS)).connections(1);
        rows.push(search_row(mode, &label, 1, &single.run()?)?);
        let loaded = |stop| Load::get(url.clone(), headers.clone(), stop).connections(LOADED_CONNECTIONS);
        if n == 0 {
            loaded(Stop::After(warm_up)).run()?;
        }
        rows.push(search_row(mode, &label, LOADED_CONNECTIONS, &loaded(Stop::After(measure)).run()?)?);
    }
    Ok(rows)
}

fn search_row(mode: &str, query: &str, connections: u32, json: &Value) -> anyhow::Result<Row> {
    let row = Row::from_oha(mode, query, connections, Success::Status(200), json)
        .with_context(|| format!("searching {query:?}"))?;
    println!(
        "    {query:?} at {connections} connection(s): {} requests, {:.0} req/s, p50 {:.2} ms, p99 {:.2} ms, {:.2}% success",
        row.requests, row.requests_per_sec, row.p50_ms, row.p99_ms, row.success_percent
    );
    row.warn_unless_all_succeeded("search", 200, json);
    Ok(row)
}

/// `text` for a query string: unreserved characters as they are, everything else `%XX`.
fn percent_encode(text: &str) -> String {
    text.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' => (b as char).to_string(),
            _ => format!("%{b:02X}"),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use std::collections::HashSet;

    use super::*;

    #[test]
    fn agents_are_deterministic_varied_and_within_the_limits() {
        assert_eq!(agent(7), agent(7));
        let agents: Vec<Value> = (0..2000).map(agent).collect();
        let names: HashSet<&str> = agents.iter().map(|a| a["name"].as_str().unwrap()).collect();
        assert_eq!(names.len(), agents.len(), "names are unique per tenant");
        let descriptions: HashSet<&str> = agents.iter().map(|a| a["description"].as_str().unwrap()).collect();
        assert!(descriptions.len() > 1000, "only {} distinct descriptions", descriptions.len());
        let kinds: HashSet<&str> = agents.iter().map(|a| a["type"].as_str().unwrap()).collect();
        assert!(kinds.len() >= 8);
        for a in &agents {
            assert!(a["name"].as_str().unwrap().len() <= 200);
            assert!(a["description"].as_str().unwrap().len() <= 2000);
            let capabilities: Vec<&str> =
                a["capabilities"].as_array().unwrap().iter().map(|c| c.as_str().unwrap()).collect();
            let unique: HashSet<&&str> = capabilities.iter().collect();
            assert_eq!(unique.len(), capabilities.len(), "no repeated capability in {a}");
            assert!(a["permissions"].as_object().is_some_and(|p| !p.is_empty()));
        }
    }

    #[test]
    fn queries_are_percent_encoded() {
        assert_eq!(percent_encode("deploy to production"), "deploy%20to%20production");
        assert_eq!(percent_encode("a&b=c/é"), "a%26b%3Dc%2F%C3%A9");
    }
}
