//! A seeded synthetic history of agents' policy checks with injected anomalies of every
//! kind, to measure the detector on (`cargo xtask anomaly-eval`, and the `synthetic`
//! metrics of every trained version).
//!
//! Each agent has a few actions and resources used with Zipf-like frequencies, working
//! hours (business hours, or around the clock), a rate that varies from hour to hour, a
//! share of denied checks and a risk per action. Ordinary noise is part of it: rare but
//! usual actions, busier hours, the odd denial and the odd guard block. Incidents are
//! injected into both the training and the test period; only the test period's are
//! scored. An episode (a burst, a run of denials, an attack) also takes in the agent's
//! other checks while it lasts and in the minute after.

use super::features::Kind;
pub use super::features::OwnedEvent as SynthEvent;
use crate::guard::train::SplitMix;

/// What to generate.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SynthConfig {
    pub seed: u64,
    pub agents: usize,
    /// Days of history the detector trains on…
    pub train_days: i64,
    /// …followed by days it is tested on.
    pub test_days: i64,
    /// Incidents of each kind in the test period…
    pub incidents_per_kind: usize,
    /// …and in the training period (unlabelled contamination).
    pub train_incidents_per_kind: usize,
}

impl Default for SynthConfig {
    fn default() -> Self {
        Self { seed: 7, agents: 40, train_days: 14, test_days: 3, incidents_per_kind: 40, train_incidents_per_kind: 10 }
    }
}

impl SynthConfig {
    /// A small history, quick enough to evaluate at every training.
    pub fn small() -> Self {
        Self { seed: 11, agents: 12, train_days: 7, test_days: 2, incidents_per_kind: 10, train_incidents_per_kind: 3 }
    }
}

/// An injected anomaly: the checks that make it (indices into the events).
#[derive(Debug, Clone, PartialEq)]
pub struct Incident {
    pub kind: Kind,
    pub checks: Vec<usize>,
}

/// A generated history: events in time order, the incidents, and where the test period
/// begins.
#[derive(Debug, Clone, PartialEq)]
pub struct History {
    pub events: Vec<SynthEvent>,
    pub incidents: Vec<Incident>,
    pub split: i64,
}

const ACTIONS: [&str; 20] = [
    "read",
    "list",
    "search",
    "update",
    "create",
    "send_email",
    "summarize",
    "classify",
    "fetch",
    "query",
    "write",
    "refund",
    "approve",
    "transfer",
    "export",
    "delete",
    "deploy",
    "restart",
    "scale",
    "invoke_tool",
];
const RESOURCES: [&str; 20] = [
    "orders",
    "customers",
    "tickets",
    "invoices",
    "docs",
    "kb",
    "users",
    "payments",
    "logs",
    "metrics",
    "repos",
    "builds",
    "emails",
    "calendar",
    "contracts",
    "inventory",
    "reports",
    "secrets",
    "hr/employees",
    "prod/db",
];
/// Monday 2026-11-02 00:00 UTC.
const START: i64 = 1_793_577_600;

struct Rng(SplitMix);

impl Rng {
    fn unit(&mut self) -> f64 {
        (self.0.next() >> 11) as f64 / (1u64 << 53) as f64
    }

    fn below(&mut self, n: usize) -> usize {
        self.0.below(n)
    }

    fn chance(&mut self, p: f64) -> bool {
        self.unit() < p
    }

    /// Exponentially distributed, with mean `mean`.
    fn exponential(&mut self, mean: f64) -> f64 {
        -mean * (1.0 - self.unit()).max(1e-12).ln()
    }

    /// A normal deviate (Box–Muller).
    fn normal(&mut self) -> f64 {
        let u = self.unit().max(1e-12);
        let v = self.unit();
        (-2.0 * u.ln()).sqrt() * (std::f64::consts::TAU * v).cos()
    }

    /// `n` distinct indices below `from`.
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

    /// An index drawn with Zipf-like weights 1, 1/2, 1/3…
    fn zipf(&mut self, n: usize) -> usize {
        let total: f64 = (1..=n).map(|k| 1.0 / k as f64).sum();
        let mut x = self.unit() * total;
        for k in 1..=n {
            x -= 1.0 / k as f64;
            if x <= 0.0 {
                return k - 1;
            }
        }
        n.saturating_sub(1)
    }
}

struct Agent {
    id: u128,
    actions: Vec<usize>,
    resources: Vec<usize>,
    /// Working hours `[start, end)` (UTC); `None`: around the clock.
    hours: Option<(i64, i64)>,
    per_hour: f64,
    deny: f64,
}

impl Agent {
    fn works_at(&self, at: i64) -> bool {
        let hour = at.rem_euclid(86_400) / 3_600;
        self.hours.is_none_or(|(start, end)| hour >= start && hour < end)
    }
}

fn action_risk(action: usize) -> f64 {
    0.05 + 0.45 * ((action * 7919) % 97) as f64 / 96.0
}

fn resource(rng: &mut Rng, prefix: usize) -> String {
    if prefix.is_multiple_of(3) {
        format!("{}/{}", RESOURCES[prefix], rng.below(100_000))
    } else {
        RESOURCES[prefix].to_owned()
    }
}

fn check(rng: &mut Rng, agent: &Agent, at: i64, action: usize, prefix: usize, denied: bool) -> SynthEvent {
    SynthEvent {
        agent: agent.id,
        at,
        action: ACTIONS[action].to_owned(),
        resource: resource(rng, prefix),
        denied,
        risk: (action_risk(action) + 0.05 * rng.normal()).clamp(0.0, 1.0),
        guard: false,
    }
}

fn usual(rng: &mut Rng, agent: &Agent, at: i64) -> SynthEvent {
    let action = agent.actions[rng.zipf(agent.actions.len())];
    let prefix = agent.resources[rng.zipf(agent.resources.len())];
    let denied = rng.chance(agent.deny);
    check(rng, agent, at, action, prefix, denied)
}

/// Generates the history `cfg` describes; the same everywhere for the same `cfg`.
pub fn generate(cfg: &SynthConfig) -> History {
    let mut rng = Rng(SplitMix(cfg.seed));
    let agents: Vec<Agent> = (0..cfg.agents.max(1))
        .map(|i| {
            let n_actions = 3 + rng.below(5);
            let actions = rng.distinct(n_actions, ACTIONS.len());
            let n_resources = 2 + rng.below(5);
            let resources = rng.distinct(n_resources, RESOURCES.len());
            let hours = if rng.chance(0.6) {
                let start = 6 + rng.below(5) as i64;
                Some((start, start + 8 + rng.below(3) as i64))
            } else {
                None
            };
            Agent {
                id: 0xa9e0_0000_0000_0000_0000_0000_0000_0000 | i as u128,
                actions,
                resources,
                hours,
                // 4 to 120 checks an hour, log-uniformly.
                per_hour: 4.0 * 30f64.powf(rng.unit()),
                deny: 0.04 * rng.unit(),
            }
        })
        .collect();
    let split = START + cfg.train_days * 86_400;
    let end = split + cfg.test_days * 86_400;

    let mut events = Vec::new();
    for agent in &agents {
        let mut hour = START;
        while hour < end {
            if agent.works_at(hour) {
                // Busier and quieter hours.
                let rate = agent.per_hour * (0.35 * rng.normal()).exp();
                let mut at = hour as f64 + rng.exponential(3_600.0 / rate);
                while at < (hour + 3_600) as f64 {
                    let t = at as i64;
                    if rng.chance(0.002) {
                        events.push(SynthEvent { guard: true, ..usual(&mut rng, agent, t) });
                    }
                    events.push(usual(&mut rng, agent, t));
                    at += rng.exponential(3_600.0 / rate);
                }
            }
            hour += 3_600;
        }
    }

    // Incidents: each kind in each period, on agents and times drawn at random.
    let mut incidents: Vec<(Kind, Vec<SynthEvent>)> = Vec::new();
    for (from, to, per_kind) in [(START, split, cfg.train_incidents_per_kind), (split, end, cfg.incidents_per_kind)] {
        for kind in Kind::ALL {
            let mut made = 0;
            let mut tries = 0;
            while made < per_kind && tries < per_kind * 50 {
                tries += 1;
                let agent = &agents[rng.below(agents.len())];
                // Away from the period's edges, so the windows are warm.
                let at = from + 3_600 + rng.below((to - from - 7_200).max(1) as usize) as i64;
                if let Some(checks) = inject(&mut rng, agent, kind, at) {
                    incidents.push((kind, checks));
                    made += 1;
                }
            }
        }
    }

    // Everything in time order, the incidents' checks found again by a marker.
    let mut tagged: Vec<(SynthEvent, Option<usize>)> = events.into_iter().map(|e| (e, None)).collect();
    for (n, (_, checks)) in incidents.iter().enumerate() {
        tagged.extend(checks.iter().cloned().map(|e| (e, Some(n))));
    }
    tagged.sort_by_key(|(e, _)| e.at);
    let mut found: Vec<Incident> =
        incidents.iter().map(|(kind, _)| Incident { kind: *kind, checks: Vec::new() }).collect();
    // An episode (a burst, a run of denials, an attack) takes in the agent's other checks
    // while it lasts and in the minute after: they are flagged with it, rightly.
    let episodes: Vec<(u128, i64, i64, usize)> = incidents
        .iter()
        .enumerate()
        .filter(|(_, (kind, _))| matches!(kind, Kind::RateSpike | Kind::DeniedBurst | Kind::GuardAttack))
        .filter_map(|(n, (_, checks))| {
            let first = checks.first()?;
            let last = checks.iter().map(|c| c.at).max()?;
            Some((first.agent, checks.iter().map(|c| c.at).min()?, last + 60, n))
        })
        .collect();
    let mut events = Vec::with_capacity(tagged.len());
    for (i, (event, incident)) in tagged.into_iter().enumerate() {
        let incident = incident.or_else(|| {
            episodes
                .iter()
                .find(|(agent, from, to, _)| *agent == event.agent && (*from..=*to).contains(&event.at))
                .map(|e| e.3)
        });
        if let Some(n) = incident
            && !event.guard
        {
            found[n].checks.push(i);
        }
        events.push(event);
    }
    History { events, incidents: found, split }
}

/// The events of one incident of `kind` for `agent` around `at`; `None` when it does not
/// fit (off hours for an agent working around the clock).
fn inject(rng: &mut Rng, agent: &Agent, kind: Kind, at: i64) -> Option<Vec<SynthEvent>> {
    // Most incidents happen in working hours: move `at` into them.
    let working = |at: i64| {
        let Some((start, end)) = agent.hours else { return at };
        let day = at - at.rem_euclid(86_400);
        day + start * 3_600 + rng_free_offset(at, (end - start) * 3_600)
    };
    let mut out = Vec::new();
    match kind {
        Kind::UnusualAction => {
            let at = working(at);
            let action = (0..ACTIONS.len()).find(|a| !agent.actions.contains(a) && rng.chance(0.3))?;
            let prefix = agent.resources[rng.zipf(agent.resources.len())];
            out.push(check(rng, agent, at, action, prefix, false));
        }
        Kind::UnusualResource => {
            let at = working(at);
            let prefix = (0..RESOURCES.len()).find(|r| !agent.resources.contains(r) && rng.chance(0.3))?;
            let action = agent.actions[rng.zipf(agent.actions.len())];
            out.push(check(rng, agent, at, action, prefix, false));
        }
        Kind::RateSpike => {
            let at = working(at);
            let n = 40 + rng.below(110);
            let span = 60 + rng.below(60) as i64;
            for i in 0..n {
                out.push(usual(rng, agent, at + span * i as i64 / n as i64));
            }
        }
        Kind::OffHours => {
            let (start, end) = agent.hours?;
            // Four or more hours before the day starts or after it ends.
            let day = at - at.rem_euclid(86_400);
            let quiet = 24 - (end - start) - 8;
            if quiet <= 0 {
                return None;
            }
            let hour = (end + 4 + rng.below(quiet as usize) as i64) % 24;
            let t = day + hour * 3_600 + rng.below(3_000) as i64;
            for i in 0..2 {
                out.push(usual(rng, agent, t + 60 * i));
            }
        }
        Kind::DeniedBurst => {
            let at = working(at);
            let n = 6 + rng.below(5);
            for i in 0..n {
                let mut c = usual(rng, agent, at + 30 * i as i64);
                c.denied = true;
                out.push(c);
            }
        }
        Kind::GuardAttack => {
            let at = working(at);
            let blocks = 3 + rng.below(4);
            for i in 0..blocks {
                out.push(SynthEvent { guard: true, ..usual(rng, agent, at + 20 * i as i64) });
            }
            for i in 0..1 + rng.below(3) {
                out.push(usual(rng, agent, at + 20 * blocks as i64 + 10 * i as i64));
            }
        }
    }
    Some(out)
}

/// An offset in `0..span` that depends only on `at` (so `working` needs no generator).
fn rng_free_offset(at: i64, span: i64) -> i64 {
    let mut s = SplitMix(at as u64);
    (s.next() % span.max(1) as u64) as i64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_same_seed_makes_the_same_history_with_every_kind_injected() {
        let cfg = SynthConfig { agents: 6, train_days: 2, test_days: 1, ..SynthConfig::small() };
        let a = generate(&cfg);
        assert_eq!(a, generate(&cfg));
        assert!(a.events.windows(2).all(|w| w[0].at <= w[1].at));
        for kind in Kind::ALL {
            assert!(a.incidents.iter().any(|i| i.kind == kind && !i.checks.is_empty()), "{kind:?}");
        }
        assert!(a.incidents.iter().all(|i| i.checks.iter().all(|&c| !a.events[c].guard)));
    }
}
