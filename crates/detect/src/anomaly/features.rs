//! Behavioural features of an agent's policy checks, each measured against the agent's own
//! baseline: how novel the action, the resource's shape and the hour are, how far the rate
//! and the risk stand above the agent's usual, how many of its recent checks were denied,
//! and how many of its prompts the Prompt Guard blocked lately.
//!
//! Every feature is 0 for ordinary behaviour and grows with how unusual it is, so that
//! anomalies sit at the extremes where an isolation forest isolates them first.

use std::collections::{HashMap, VecDeque};

use serde::{Deserialize, Serialize};

/// How many features a check has.
pub const FEATURES: usize = 7;
/// Checks in this many seconds before one make its rate.
pub const RATE_WINDOW_SECS: i64 = 60;
/// Checks in this many seconds make the denial window…
pub const DENY_WINDOW_SECS: i64 = 300;
/// …of at most this many checks.
pub const DENY_WINDOW_CHECKS: usize = 20;
/// Guard blocks in this many seconds count.
pub const GUARD_WINDOW_SECS: i64 = 300;
/// Distinct actions a baseline keeps (the most frequent).
const MAX_ACTIONS: usize = 256;
/// Distinct resource shapes a baseline keeps (the most frequent).
const MAX_RESOURCES: usize = 512;
/// Distinct values an agent's live state learns between trainings.
const MAX_LIVE: usize = 256;
/// Additive smoothing of the categorical distributions.
const ALPHA: f64 = 0.5;
/// The rate a spike is measured on is counted up to this many checks.
const MAX_RATE_COUNT: usize = 4096;

/// A feature of a check.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Feature {
    Action,
    Resource,
    Rate,
    Hour,
    Denials,
    Risk,
    Guard,
}

impl Feature {
    /// In the order of a feature row.
    pub const ALL: [Feature; FEATURES] = [
        Feature::Action,
        Feature::Resource,
        Feature::Rate,
        Feature::Hour,
        Feature::Denials,
        Feature::Risk,
        Feature::Guard,
    ];

    /// Its name in evidence.
    pub fn name(self) -> &'static str {
        match self {
            Feature::Action => "action_novelty",
            Feature::Resource => "resource_novelty",
            Feature::Rate => "rate",
            Feature::Hour => "hour_novelty",
            Feature::Denials => "denials",
            Feature::Risk => "risk",
            Feature::Guard => "guard_blocks",
        }
    }

    /// The kind of anomaly it points to when it stands out most.
    pub fn kind(self) -> Kind {
        match self {
            // A riskier action than the agent's usual is an unusual action.
            Feature::Action | Feature::Risk => Kind::UnusualAction,
            Feature::Resource => Kind::UnusualResource,
            Feature::Rate => Kind::RateSpike,
            Feature::Hour => Kind::OffHours,
            Feature::Denials => Kind::DeniedBurst,
            Feature::Guard => Kind::GuardAttack,
        }
    }
}

/// A kind of anomaly the detector tells apart (named as the reports' `type`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Kind {
    UnusualAction,
    UnusualResource,
    RateSpike,
    OffHours,
    DeniedBurst,
    GuardAttack,
}

impl Kind {
    pub const ALL: [Kind; 6] = [
        Kind::UnusualAction,
        Kind::UnusualResource,
        Kind::RateSpike,
        Kind::OffHours,
        Kind::DeniedBurst,
        Kind::GuardAttack,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Kind::UnusualAction => "unusual_action",
            Kind::UnusualResource => "unusual_resource",
            Kind::RateSpike => "rate_spike",
            Kind::OffHours => "off_hours",
            Kind::DeniedBurst => "denied_burst",
            Kind::GuardAttack => "guard_attack",
        }
    }
}

/// What an agent did.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Observed<'a> {
    /// A policy check: `denied` when it was not allowed and needs no approval; `risk` its
    /// score before any anomaly raised it.
    Check { action: &'a str, resource: &'a str, denied: bool, risk: f64 },
    /// The Prompt Guard blocked one of its texts.
    GuardBlock,
}

/// One thing an agent did, when (Unix seconds).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Event<'a> {
    pub agent: u128,
    pub at: i64,
    pub what: Observed<'a>,
}

/// An event that owns its strings: a history as read from storage or generated.
#[derive(Debug, Clone, PartialEq)]
pub struct OwnedEvent {
    pub agent: u128,
    pub at: i64,
    pub action: String,
    pub resource: String,
    pub denied: bool,
    pub risk: f64,
    /// A guard block rather than a check (`action`, `resource`, `denied` and `risk` unused).
    pub guard: bool,
}

impl OwnedEvent {
    pub fn event(&self) -> Event<'_> {
        let what = if self.guard {
            Observed::GuardBlock
        } else {
            Observed::Check { action: &self.action, resource: &self.resource, denied: self.denied, risk: self.risk }
        };
        Event { agent: self.agent, at: self.at, what }
    }
}

/// The shape of a resource: identifiers (segments holding a digit) become `#`, so that
/// `orders/1234` and `orders/987` are the same resource to the detector.
pub fn resource_shape(resource: &str) -> String {
    let mut out = String::with_capacity(resource.len().min(128));
    let mut segment = String::new();
    let flush = |segment: &mut String, out: &mut String| {
        let digits = segment.bytes().filter(u8::is_ascii_digit).count();
        // `2024`, `0b7f`, `a1b2c3`; not `s3` or `v2`.
        if digits > 0 && (digits == segment.len() || segment.len() > 3) {
            out.push('#');
        } else {
            out.push_str(segment);
        }
        segment.clear();
    };
    for c in resource.chars().take(512) {
        if matches!(c, '/' | ':' | '.' | '?' | '=' | '&' | '#' | '@' | ',' | ' ') {
            flush(&mut segment, &mut out);
            out.push(c);
        } else {
            segment.extend(c.to_lowercase());
        }
    }
    flush(&mut segment, &mut out);
    out
}

/// Counts of a categorical value (actions, resource shapes) with the entropy of their
/// smoothed distribution.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Counts {
    /// Every value counted, kept or not.
    total: u32,
    values: HashMap<String, u32>,
    entropy: f64,
}

impl Counts {
    fn from_map(mut map: HashMap<String, u32>, cap: usize) -> Self {
        let total = map.values().sum();
        if map.len() > cap {
            let mut entries: Vec<(String, u32)> = map.drain().collect();
            entries.sort_unstable_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
            entries.truncate(cap);
            map = entries.into_iter().collect();
        }
        let mut counts = Self { total, values: map, entropy: 0.0 };
        if total > 0 {
            let n = f64::from(total);
            counts.entropy = counts.values.values().map(|&c| f64::from(c) / n * counts.surprise(f64::from(c), n)).sum();
        }
        counts
    }

    /// `-ln p` of a value counted `count` times among `n`, smoothed.
    fn surprise(&self, count: f64, n: f64) -> f64 {
        let distinct = self.values.len() as f64 + 1.0;
        -((count + ALPHA) / (n + ALPHA * distinct)).ln()
    }

    /// How much more surprising `value` is than the agent's usual value; 0 or more.
    /// `less` (count, total) is taken from the stored counts (a check left out of its own
    /// baseline) and `live` (count, total) added (what the agent did since training).
    fn novelty(&self, value: &str, less: (u32, u32), live: (u32, u32)) -> f64 {
        let stored = self.values.get(value).copied().unwrap_or(0);
        let count = f64::from(stored.saturating_sub(less.0)) + f64::from(live.0);
        let n = f64::from(self.total.saturating_sub(less.1)) + f64::from(live.1);
        (self.surprise(count, n) - self.entropy).max(0.0)
    }
}

/// A location and scale that outliers do not drag: the median and 1.4826 × the median
/// absolute deviation (at least `floor`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct Robust {
    pub median: f64,
    pub scale: f64,
}

impl Robust {
    pub fn of(values: &mut [f64], floor: f64) -> Self {
        if values.is_empty() {
            return Self { median: 0.0, scale: floor };
        }
        let median = median_of(values);
        let mut deviations: Vec<f64> = values.iter().map(|v| (v - median).abs()).collect();
        let mad = median_of(&mut deviations);
        Self { median, scale: (1.4826 * mad).max(floor) }
    }

    /// Like `of`, but measured from the 99th percentile rather than the median: what is
    /// odd is to exceed the agent's usual highest, not its typical (a riskier action than
    /// any it usually takes, not its rarer usual ones).
    pub fn of_high(values: &mut [f64], floor: f64) -> Self {
        let mut r = Self::of(values, floor);
        if !values.is_empty() {
            let rank = ((values.len() as f64 * 0.99) as usize).min(values.len() - 1);
            let (_, high, _) = values.select_nth_unstable_by(rank, f64::total_cmp);
            r.median = *high;
        }
        r
    }

    /// How many scales `x` stands above the median; 0 below it.
    pub fn above(&self, x: f64) -> f64 {
        ((x - self.median) / self.scale).max(0.0)
    }
}

fn median_of(values: &mut [f64]) -> f64 {
    if values.is_empty() {
        return 0.0;
    }
    let mid = values.len() / 2;
    let (_, m, _) = values.select_nth_unstable_by(mid, f64::total_cmp);
    *m
}

/// Counts per hour of the day, spread half to each neighbouring hour.
fn hour_counts(hours: &[u32; 24]) -> HashMap<String, u32> {
    (0..24)
        .map(|h| {
            let blurred = 2 * hours[h] + hours[(h + 23) % 24] + hours[(h + 1) % 24];
            (HOURS[h].to_owned(), blurred)
        })
        .filter(|(_, c)| *c > 0)
        .collect()
}

const HOURS: [&str; 24] = [
    "0", "1", "2", "3", "4", "5", "6", "7", "8", "9", "10", "11", "12", "13", "14", "15", "16", "17", "18", "19", "20",
    "21", "22", "23",
];

/// The hour of the day (UTC) of a Unix time.
pub fn hour_of(at: i64) -> usize {
    (at.rem_euclid(86_400) / 3_600) as usize
}

/// What is usual for one agent (or, as the fallback, for a tenant's agents together).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Baseline {
    /// Checks it was learnt from.
    pub checks: u32,
    actions: Counts,
    resources: Counts,
    /// Blurred hour-of-day counts (each check counts 2 in its hour, 1 in each neighbour).
    hours: Counts,
    /// Of the checks in the 60 s before a check.
    rate: Rate,
    /// Measured from its 99th percentile.
    risk: Robust,
    /// The smoothed share of its checks that were denied.
    deny: f64,
    /// Guard blocks expected in a guard window.
    guard: f64,
}

/// The usual number of checks in a rate window: the mean and variance of the counts, the
/// top 1% left out (so that the bursts in a history do not make bursts look usual).
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct Rate {
    pub mean: f64,
    pub variance: f64,
}

impl Rate {
    fn of(counts: &mut [f64]) -> Self {
        if counts.is_empty() {
            return Self::default();
        }
        counts.sort_unstable_by(f64::total_cmp);
        let kept = &counts[..(counts.len() as f64 * 0.99).ceil() as usize];
        let n = kept.len().max(1) as f64;
        let mean = kept.iter().sum::<f64>() / n;
        let variance = kept.iter().map(|c| (c - mean).powi(2)).sum::<f64>() / n;
        Self { mean, variance }
    }

    /// How many standard deviations `count` stands above the mean (Poisson at least, and
    /// never less than 0.5 of spread); 0 below it.
    fn above(&self, count: f64) -> f64 {
        ((count - self.mean) / self.variance.max(self.mean).max(0.5).sqrt()).max(0.0)
    }
}

/// A baseline as it is being learnt.
#[derive(Debug, Default)]
pub(crate) struct BaselineBuilder {
    checks: u32,
    actions: HashMap<String, u32>,
    resources: HashMap<String, u32>,
    hours: [u32; 24],
    rates: Vec<f64>,
    risks: Vec<f64>,
    denied: u32,
    guard_blocks: u32,
    first: Option<i64>,
    last: i64,
    /// Of a pooled baseline: the spans of the agents merged into it.
    merged_span: f64,
}

impl BaselineBuilder {
    pub(crate) fn checks(&self) -> u32 {
        self.checks
    }

    /// Adds a check, with the number of the agent's checks in the minute before it.
    pub(crate) fn add(&mut self, action: &str, shape: &str, at: i64, prior: usize, denied: bool, risk: f64) {
        self.checks += 1;
        *self.actions.entry(action.to_owned()).or_insert(0) += 1;
        *self.resources.entry(shape.to_owned()).or_insert(0) += 1;
        self.hours[hour_of(at)] += 1;
        self.rates.push(prior as f64);
        self.seen(at);
        self.risks.push(if risk.is_finite() { risk } else { 0.0 });
        self.denied += u32::from(denied);
    }

    fn seen(&mut self, at: i64) {
        self.first = Some(self.first.map_or(at, |f| f.min(at)));
        self.last = self.last.max(at);
    }

    /// Adds a guard block.
    pub(crate) fn add_guard(&mut self, at: i64) {
        self.guard_blocks += 1;
        self.seen(at);
    }

    /// The agent's active span in seconds (at least an hour), or its agents' together.
    fn span(&self) -> f64 {
        if self.merged_span > 0.0 {
            return self.merged_span;
        }
        self.first.map_or(3_600.0, |f| ((self.last - f) as f64).max(3_600.0))
    }

    pub(crate) fn merge(&mut self, other: &BaselineBuilder) {
        self.checks += other.checks;
        self.guard_blocks += other.guard_blocks;
        self.merged_span += other.span();
        for (k, v) in &other.actions {
            *self.actions.entry(k.clone()).or_insert(0) += v;
        }
        for (k, v) in &other.resources {
            *self.resources.entry(k.clone()).or_insert(0) += v;
        }
        for h in 0..24 {
            self.hours[h] += other.hours[h];
        }
        self.rates.extend_from_slice(&other.rates);
        self.risks.extend_from_slice(&other.risks);
        self.denied += other.denied;
    }

    pub(crate) fn build(mut self) -> Baseline {
        let guard = f64::from(self.guard_blocks) * GUARD_WINDOW_SECS as f64 / self.span();
        Baseline {
            checks: self.checks,
            actions: Counts::from_map(self.actions, MAX_ACTIONS),
            resources: Counts::from_map(self.resources, MAX_RESOURCES),
            hours: Counts::from_map(hour_counts(&self.hours), 24),
            rate: Rate::of(&mut self.rates),
            risk: Robust::of_high(&mut self.risks, 0.05),
            deny: (f64::from(self.denied) + 0.5) / (f64::from(self.checks) + 1.0),
            guard,
        }
    }
}

/// A check as its features are measured: its resource already shaped.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Seen<'a> {
    pub action: &'a str,
    pub shape: &'a str,
    pub at: i64,
    pub denied: bool,
    pub risk: f64,
}

/// What an agent did lately, kept by the process that scores its checks: the times of its
/// recent checks, denials and guard blocks, and the values it used since the baseline was
/// learnt (so that a new action is novel once, not until the next training).
#[derive(Debug, Clone, Default)]
pub struct Recent {
    checks: VecDeque<i64>,
    outcomes: VecDeque<(i64, bool)>,
    guard: VecDeque<i64>,
    live_checks: u32,
    actions: HashMap<String, u32>,
    resources: HashMap<String, u32>,
    hours: [u32; 24],
}

impl Recent {
    /// Forgets what left the windows by `at`.
    fn prune(&mut self, at: i64) {
        while self.checks.front().is_some_and(|t| *t <= at - RATE_WINDOW_SECS) || self.checks.len() > MAX_RATE_COUNT {
            self.checks.pop_front();
        }
        while self.outcomes.front().is_some_and(|(t, _)| *t <= at - DENY_WINDOW_SECS)
            || self.outcomes.len() >= DENY_WINDOW_CHECKS
        {
            self.outcomes.pop_front();
        }
        while self.guard.front().is_some_and(|t| *t <= at - GUARD_WINDOW_SECS) {
            self.guard.pop_front();
        }
    }

    /// Notes a guard block at `at`.
    pub fn guard_block(&mut self, at: i64) {
        self.prune(at);
        if self.guard.len() < 1024 {
            self.guard.push_back(at);
        }
    }

    /// The check's features, then notes it. `own`: the baseline was learnt from this very
    /// check (training), so it is left out of its own baseline, and nothing is learnt live.
    pub(crate) fn features(&mut self, baseline: &Baseline, check: &Seen<'_>, own: bool) -> [f64; FEATURES] {
        let Seen { action, shape, at, denied, risk } = *check;
        self.prune(at);
        let hour = hour_of(at);
        let live = |map: &HashMap<String, u32>, key: &str| if own { 0 } else { map.get(key).copied().unwrap_or(0) };
        let live_total = if own { 0 } else { self.live_checks };
        let less = if own { (1, 1) } else { (0, 0) };
        let action_novelty = baseline.actions.novelty(action, less, (live(&self.actions, action), live_total));
        let resource_novelty = baseline.resources.novelty(shape, less, (live(&self.resources, shape), live_total));
        // A check adds 2 to its hour's blurred count, 1 to each neighbour's: 4 in all.
        let live_hour =
            if own { 0 } else { 2 * self.hours[hour] + self.hours[(hour + 23) % 24] + self.hours[(hour + 1) % 24] };
        let hour_less = if own { (2, 4) } else { (0, 0) };
        let hour_novelty = baseline.hours.novelty(HOURS[hour], hour_less, (live_hour, 4 * live_total));
        let rate = baseline.rate.above(self.checks.len() as f64);
        self.outcomes.push_back((at, denied));
        let n = self.outcomes.len() as f64;
        let k = self.outcomes.iter().filter(|(_, d)| *d).count() as f64;
        let p = baseline.deny.clamp(1e-4, 1.0 - 1e-4);
        // One denial is ordinary; the burst is what is odd, and only its denied checks.
        let denials = if denied { ((k - 1.0) - n * p).max(0.0) / ((n * p * (1.0 - p)).sqrt() + 0.5) } else { 0.0 };
        let risk = baseline.risk.above(if risk.is_finite() { risk } else { 0.0 });
        // Likewise one guard block.
        let blocks = self.guard.len() as f64;
        let guard = ((blocks - 1.0) - baseline.guard).max(0.0) / (baseline.guard.sqrt() + 0.5);
        self.checks.push_back(at);
        if !own {
            self.learn(action, shape, hour);
        }
        [action_novelty, resource_novelty, rate, hour_novelty, denials, risk, guard]
    }

    fn learn(&mut self, action: &str, shape: &str, hour: usize) {
        self.live_checks = self.live_checks.saturating_add(1);
        self.hours[hour] += 1;
        for (map, key) in [(&mut self.actions, action), (&mut self.resources, shape)] {
            if let Some(c) = map.get_mut(key) {
                *c += 1;
            } else if map.len() < MAX_LIVE {
                map.insert(key.to_owned(), 1);
            }
        }
    }

    /// How many checks are in its rate window now (for the rate during training).
    pub(crate) fn prior_checks(&mut self, at: i64) -> usize {
        self.prune(at);
        self.checks.len()
    }

    pub(crate) fn note_check(&mut self, at: i64) {
        self.checks.push_back(at);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resource_shapes_hide_identifiers() {
        assert_eq!(resource_shape("orders/1234"), "orders/#");
        assert_eq!(resource_shape("Orders/987/items"), "orders/#/items");
        assert_eq!(resource_shape("s3://bucket-a/2024/report.csv"), "s3://bucket-a/#/report.csv");
        assert_eq!(resource_shape("db:users?id=0b7f"), "db:users?id=#");
        assert_eq!(resource_shape(""), "");
    }

    #[test]
    fn novelty_is_zero_for_the_usual_and_high_for_the_new() {
        let map: HashMap<String, u32> = [("read".to_owned(), 900), ("write".to_owned(), 100)].into_iter().collect();
        let counts = Counts::from_map(map, 10);
        assert!(counts.novelty("read", (0, 0), (0, 0)) == 0.0);
        let new = counts.novelty("delete", (0, 0), (0, 0));
        assert!(new > 5.0, "{new}");
        // Once seen live a few times, less so.
        assert!(counts.novelty("delete", (0, 0), (10, 10)) < new - 2.0);
        // Left out of its own baseline, a value seen once is as new as an unseen one.
        let once: HashMap<String, u32> = [("read".to_owned(), 999), ("drop".to_owned(), 1)].into_iter().collect();
        let once = Counts::from_map(once, 10);
        assert!(once.novelty("drop", (1, 1), (0, 0)) > 5.0);
    }

    #[test]
    fn robust_statistics_ignore_outliers() {
        let mut values = vec![1.0, 1.1, 0.9, 1.0, 1.05, 0.95, 100.0];
        let r = Robust::of(&mut values, 0.01);
        assert!((r.median - 1.0).abs() < 1e-9);
        assert!(r.scale < 0.2);
        assert_eq!(r.above(0.5), 0.0);
        assert!(r.above(2.0) > 5.0);
    }

    #[test]
    fn windows_forget_old_checks() {
        let mut b = BaselineBuilder::default();
        for i in 0..100 {
            b.add("read", "orders/#", 9 * 3600 + i * 60, 1, false, 0.1);
        }
        let baseline = b.build();
        let mut recent = Recent::default();
        let seen = |at: i64, denied: bool| Seen { action: "read", shape: "orders/#", at, denied, risk: 0.1 };
        let base = 9 * 3600;
        let quiet = recent.features(&baseline, &seen(base, false), false);
        assert_eq!(quiet[Feature::Rate as usize], 0.0);
        let mut burst = quiet;
        for i in 0..60 {
            burst = recent.features(&baseline, &seen(base + 1 + i / 2, false), false);
        }
        assert!(burst[Feature::Rate as usize] > 5.0, "{burst:?}");
        let later = recent.features(&baseline, &seen(base + 3600, false), false);
        assert_eq!(later[Feature::Rate as usize], 0.0);
        // Off hours: the agent works around 9:00.
        let night = recent.features(&baseline, &seen(3 * 3600 + 86_400, false), false);
        assert!(night[Feature::Hour as usize] > 3.0, "{night:?}");
        // Denials: one is ordinary, a run is not.
        let mut denied = [0.0; FEATURES];
        for i in 0..8 {
            denied = recent.features(&baseline, &seen(2 * 86_400 + 9 * 3600 + i * 30, true), false);
            if i == 0 {
                assert_eq!(denied[Feature::Denials as usize], 0.0);
            }
        }
        assert!(denied[Feature::Denials as usize] > 3.0, "{denied:?}");
        recent.guard_block(3 * 86_400);
        recent.guard_block(3 * 86_400 + 1);
        let g = recent.features(&baseline, &seen(3 * 86_400 + 2, false), false);
        assert_eq!(g[Feature::Guard as usize], 2.0, "{g:?}");
    }
}
