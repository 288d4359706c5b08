//! A seeded generator of discovery events from hidden agents, for evaluation and tests.
//!
//! Each hidden agent has a deployment (host pool or a host shared with other agents, a
//! network, a runtime and script), a client library, one or two endpoints and models, a
//! set of tools and perhaps an API key it shows. Its events vary as real ones do: replica
//! numbers, the last octet of the address (and now and then another network), library
//! patch versions, dated model names, which tools a call uses, which source saw it, and
//! fields a source did not report. Background traffic is one-off activity (people trying
//! an API from laptops, scripts, browsers) that belongs to no agent.

use super::Observation;
use crate::guard::train::SplitMix;

/// What to generate.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SynthConfig {
    pub seed: u64,
    /// Hidden agents.
    pub agents: usize,
    /// Events in all, background included.
    pub events: usize,
    /// Share of events that are background traffic.
    pub background_share: f64,
    /// Chance that a source leaves out each optional field of an event.
    pub missing_rate: f64,
    /// Share of agents running on hosts shared with other agents (notebooks, dev boxes).
    pub shared_host_share: f64,
    /// The events span this many seconds, ending at `end`.
    pub span_secs: i64,
    pub end: i64,
}

impl Default for SynthConfig {
    fn default() -> Self {
        Self {
            seed: 7,
            agents: 60,
            events: 100_000,
            background_share: 0.1,
            missing_rate: 0.1,
            shared_host_share: 0.2,
            span_secs: 7 * 86_400,
            end: 1_790_000_000,
        }
    }
}

/// One generated event and the agent that made it (`None`: background).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SynthEvent {
    pub truth: Option<u32>,
    /// Unix seconds.
    pub at: i64,
    pub source: String,
    pub host: Option<String>,
    pub ip: Option<String>,
    pub user_agent: Option<String>,
    pub process: Option<String>,
    pub endpoint: Option<String>,
    pub model: Option<String>,
    pub tool_calls: Vec<String>,
    pub api_key_fingerprint: Option<String>,
}

impl SynthEvent {
    pub fn observation(&self) -> Observation<'_> {
        Observation {
            source: &self.source,
            host: self.host.as_deref(),
            ip: self.ip.as_deref(),
            user_agent: self.user_agent.as_deref(),
            process: self.process.as_deref(),
            endpoint: self.endpoint.as_deref(),
            model: self.model.as_deref(),
            tool_calls: &self.tool_calls,
            api_key_fingerprint: self.api_key_fingerprint.as_deref(),
            agent_id: None,
        }
    }
}

const WORDS: [&str; 40] = [
    "invoice",
    "support",
    "triage",
    "sales",
    "review",
    "billing",
    "claims",
    "onboarding",
    "research",
    "pricing",
    "hiring",
    "legal",
    "compliance",
    "refund",
    "inventory",
    "forecast",
    "marketing",
    "security",
    "incident",
    "churn",
    "contract",
    "payroll",
    "shipping",
    "catalog",
    "ticket",
    "audit",
    "vendor",
    "renewal",
    "escalation",
    "survey",
    "knowledge",
    "translation",
    "summary",
    "lead",
    "fraud",
    "report",
    "deploy",
    "release",
    "quality",
    "docs",
];
const ROLES: [&str; 5] = ["agent", "bot", "assistant", "worker", "copilot"];
const ENVS: [&str; 4] = ["prod", "staging", "internal", "corp"];
const FRAMEWORKS: [(&str, &str); 9] = [
    ("langchain", "0.2"),
    ("OpenAI/Python", "1.35"),
    ("anthropic-sdk-python", "0.30"),
    ("llama-index", "0.10"),
    ("autogen", "0.2"),
    ("crewai", "0.41"),
    ("semantic-kernel", "1.2"),
    ("OpenAI/JS", "4.52"),
    ("haystack", "2.3"),
];
const ENDPOINTS: [&str; 10] = [
    "https://api.openai.com/v1/chat/completions",
    "https://api.openai.com/v1/embeddings",
    "https://api.openai.com/v1/responses",
    "https://api.anthropic.com/v1/messages",
    "https://generativelanguage.googleapis.com/v1beta/models/gemini-1.5-pro:generateContent",
    "https://llm-gateway.internal/v1/chat/completions",
    "https://api.mistral.ai/v1/chat/completions",
    "https://bedrock-runtime.us-east-1.amazonaws.com/model/invoke",
    "https://api.openai.com/v1/images/generations",
    "https://api.openai.com/v1/audio/transcriptions",
];
const MODELS: [(&str, &str); 12] = [
    ("gpt-4o", "-2024-08-06"),
    ("gpt-4o-mini", "-2024-07-18"),
    ("gpt-4-turbo", "-2024-04-09"),
    ("claude-3-5-sonnet", "-20241022"),
    ("claude-3-haiku", "-20240307"),
    ("gemini-1.5-pro", "-002"),
    ("mistral-large", "-2407"),
    ("llama-3-70b", ""),
    ("text-embedding-3-small", ""),
    ("o1-mini", "-2024-09-12"),
    ("command-r-plus", ""),
    ("gpt-3.5-turbo", "-0125"),
];
const TOOLS: [&str; 48] = [
    "search_web",
    "fetch_url",
    "send_email",
    "read_email",
    "create_ticket",
    "update_ticket",
    "query_sql",
    "read_file",
    "write_file",
    "run_shell",
    "create_invoice",
    "issue_refund",
    "lookup_customer",
    "update_crm",
    "post_slack",
    "read_calendar",
    "book_meeting",
    "translate_text",
    "summarize_doc",
    "vector_search",
    "get_weather",
    "create_pr",
    "review_code",
    "run_tests",
    "deploy_service",
    "rotate_keys",
    "list_users",
    "grant_access",
    "read_logs",
    "open_incident",
    "page_oncall",
    "charge_card",
    "transfer_funds",
    "read_contract",
    "sign_document",
    "upload_file",
    "ocr_document",
    "generate_image",
    "transcribe_audio",
    "scrape_site",
    "query_warehouse",
    "export_csv",
    "update_inventory",
    "track_shipment",
    "score_lead",
    "send_sms",
    "browse",
    "calculator",
];
const SOURCES: [&str; 4] = ["gateway", "egress-proxy", "edr", "cloudtrail"];
const GENERIC_AGENTS: [&str; 8] = [
    "curl/8.4.0",
    "python-requests/2.31.0",
    "Mozilla/5.0 (Macintosh; Intel Mac OS X 14_5) AppleWebKit/605.1.15",
    "PostmanRuntime/7.39.0",
    "node-fetch/3.3.2",
    "Go-http-client/1.1",
    "okhttp/4.12.0",
    "insomnia/2023.5.8",
];
const GENERIC_PROCESSES: [&str; 12] = [
    "curl",
    "python3",
    "node",
    "/Applications/Postman.app/Contents/MacOS/Postman",
    "/usr/bin/ipython3",
    "bash",
    "pwsh",
    "Code Helper",
    "java",
    "go",
    "chrome",
    "ruby",
];

struct Agent {
    hosts: Vec<String>,
    subnet: (u8, u8, u8),
    other_subnet: (u8, u8, u8),
    process: String,
    framework: (usize, bool),
    endpoints: Vec<usize>,
    models: Vec<usize>,
    tools: Vec<usize>,
    api_key: Option<String>,
    weight: f64,
    active_from: i64,
}

struct Rng(SplitMix);

impl Rng {
    fn below(&mut self, n: usize) -> usize {
        self.0.below(n)
    }

    fn chance(&mut self, p: f64) -> bool {
        ((self.0.next() >> 11) as f64 / (1u64 << 53) as f64) < p
    }

    fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }

    fn distinct(&mut self, n: usize, from: usize) -> Vec<usize> {
        let mut out = Vec::with_capacity(n);
        while out.len() < n.min(from) {
            let i = self.below(from);
            if !out.contains(&i) {
                out.push(i);
            }
        }
        out
    }

    fn hex(&mut self, digits: usize) -> String {
        (0..digits).map(|_| char::from_digit(self.below(16) as u32, 16).unwrap_or('0')).collect()
    }
}

fn subnet(rng: &mut Rng) -> (u8, u8, u8) {
    (10, rng.below(256) as u8, rng.below(256) as u8)
}

fn make_agents(cfg: &SynthConfig, rng: &mut Rng) -> Vec<Agent> {
    // A few shared machines (notebooks, dev boxes), each with its own network.
    let shared: Vec<(String, (u8, u8, u8))> =
        (0..4).map(|i| (format!("{}-{i}.corp", ["jupyter", "devbox"][i % 2]), subnet(rng))).collect();
    (0..cfg.agents)
        .map(|i| {
            let stem = WORDS[i % WORDS.len()];
            let role = ROLES[(i / WORDS.len()) % ROLES.len()];
            let name = if i < WORDS.len() * ROLES.len() {
                format!("{stem}-{role}")
            } else {
                format!("{stem}-{role}-{}", i / (WORDS.len() * ROLES.len()))
            };
            let env = *rng.pick(&ENVS);
            let (hosts, net) = if rng.chance(cfg.shared_host_share) {
                let (host, net) = rng.pick(&shared).clone();
                (vec![host], net)
            } else {
                let replicas = 1 + rng.below(4);
                ((0..replicas).map(|r| format!("{name}-{r}.{env}")).collect(), subnet(rng))
            };
            let snake = name.replace('-', "_");
            let process = match rng.below(4) {
                0 | 1 => format!("/usr/bin/python3.{} /srv/{name}/{snake}.py --serve", 10 + rng.below(3)),
                2 => format!("node /srv/{name}/dist/{name}.js"),
                _ => format!("java -Xmx2g -jar /opt/{name}/{name}.jar"),
            };
            let framework = rng.below(FRAMEWORKS.len());
            let n = 1 + rng.below(2);
            let endpoints = rng.distinct(n, ENDPOINTS.len());
            let n = 1 + rng.below(2);
            let models = rng.distinct(n, MODELS.len());
            let n = 2 + rng.below(5);
            let tools = rng.distinct(n, TOOLS.len());
            let api_key = rng.chance(0.7).then(|| format!("sha256:{}", rng.hex(16)));
            // Skewed activity: a few agents are busy, most are quiet.
            let weight = 1.0 / ((i as f64) + 3.0).powf(0.7);
            Agent {
                hosts,
                subnet: net,
                other_subnet: subnet(rng),
                process,
                framework: (framework, rng.chance(0.5)),
                endpoints,
                models,
                tools,
                api_key,
                weight,
                active_from: rng.below(3) as i64,
            }
        })
        .collect()
}

/// Generates `cfg.events` events, newest last, with their true agents.
pub fn generate(cfg: &SynthConfig) -> Vec<SynthEvent> {
    let mut rng = Rng(SplitMix(cfg.seed));
    let agents = make_agents(cfg, &mut rng);
    let background = (cfg.events as f64 * cfg.background_share).round() as usize;
    let agent_events = cfg.events.saturating_sub(background);
    // Every agent gets at least 20 events; the rest follow its weight.
    let floor = 20usize.min(agent_events / cfg.agents.max(1));
    let spare = agent_events.saturating_sub(floor * agents.len());
    let total_weight: f64 = agents.iter().map(|a| a.weight).sum();
    let mut counts: Vec<usize> =
        agents.iter().map(|a| floor + (spare as f64 * a.weight / total_weight).floor() as usize).collect();
    let short = agent_events.saturating_sub(counts.iter().sum());
    let agents_n = counts.len().max(1);
    for k in 0..short {
        if let Some(c) = counts.get_mut(k % agents_n) {
            *c += 1;
        }
    }
    let mut events = Vec::with_capacity(cfg.events);
    for (i, agent) in agents.iter().enumerate() {
        for _ in 0..counts[i] {
            events.push(agent_event(cfg, &mut rng, i as u32, agent));
        }
    }
    for _ in 0..background {
        events.push(background_event(cfg, &mut rng));
    }
    events.sort_by_key(|e| e.at);
    events
}

fn maybe(rng: &mut Rng, cfg: &SynthConfig, value: String) -> Option<String> {
    (!rng.chance(cfg.missing_rate)).then_some(value)
}

fn agent_event(cfg: &SynthConfig, rng: &mut Rng, truth: u32, a: &Agent) -> SynthEvent {
    let start = cfg.end - cfg.span_secs + a.active_from * 86_400;
    let at = start + rng.below((cfg.end - start).max(1) as usize) as i64;
    let net = if rng.chance(0.05) { a.other_subnet } else { a.subnet };
    let ip = format!("{}.{}.{}.{}", net.0, net.1, net.2, 2 + rng.below(250));
    let (fw, with_requests) = a.framework;
    let (product, version) = FRAMEWORKS[fw];
    let mut ua = format!("{product}/{version}.{}", rng.below(12));
    if with_requests {
        ua.push_str(&format!(" python-requests/2.3{}.{}", rng.below(3), rng.below(4)));
    }
    let (model, dated) = MODELS[*rng.pick(&a.models)];
    let model = if !dated.is_empty() && rng.chance(0.5) { format!("{model}{dated}") } else { model.to_owned() };
    let calls = rng.below(4);
    let tool_calls = (0..calls).map(|_| TOOLS[*rng.pick(&a.tools)].to_owned()).collect::<Vec<_>>();
    let mut tool_calls: Vec<String> = tool_calls;
    tool_calls.sort();
    tool_calls.dedup();
    let host = rng.pick(&a.hosts).clone();
    let endpoint = ENDPOINTS[*rng.pick(&a.endpoints)].to_owned();
    SynthEvent {
        truth: Some(truth),
        at,
        source: (*rng.pick(&SOURCES)).to_owned(),
        host: maybe(rng, cfg, host),
        ip: maybe(rng, cfg, ip),
        user_agent: maybe(rng, cfg, ua),
        process: maybe(rng, cfg, a.process.clone()),
        endpoint: maybe(rng, cfg, endpoint),
        model: maybe(rng, cfg, model),
        tool_calls,
        api_key_fingerprint: a.api_key.clone().filter(|_| rng.chance(0.9)),
    }
}

fn background_event(cfg: &SynthConfig, rng: &mut Rng) -> SynthEvent {
    let at = cfg.end - rng.below(cfg.span_secs.max(1) as usize) as i64;
    let host = match rng.below(3) {
        0 => format!("laptop-{}", rng.hex(6)),
        1 => format!("ws{}-{}.corp", rng.below(100_000), rng.hex(4)),
        _ => format!("ip-10-{}-{}-{}", rng.below(256), rng.below(256), rng.below(256)),
    };
    let ip = format!("{}.{}.{}.{}", 10 + rng.below(200), rng.below(256), rng.below(256), 2 + rng.below(250));
    let (model, _) = *rng.pick(&MODELS);
    let ua = (*rng.pick(&GENERIC_AGENTS)).to_owned();
    let process = (*rng.pick(&GENERIC_PROCESSES)).to_owned();
    let endpoint = (*rng.pick(&ENDPOINTS)).to_owned();
    let tool_calls = if rng.chance(0.2) { vec![(*rng.pick(&TOOLS)).to_owned()] } else { Vec::new() };
    SynthEvent {
        truth: None,
        at,
        source: (*rng.pick(&SOURCES)).to_owned(),
        host: maybe(rng, cfg, host),
        ip: maybe(rng, cfg, ip),
        user_agent: maybe(rng, cfg, ua),
        process: maybe(rng, cfg, process),
        endpoint: maybe(rng, cfg, endpoint),
        model: maybe(rng, cfg, model.to_owned()),
        tool_calls,
        api_key_fingerprint: rng.chance(0.3).then(|| format!("sha256:{}", rng.hex(16))),
    }
}
