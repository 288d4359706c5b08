//! Measuring a detector: precision, recall, F1 and the area under the ROC curve, overall
//! and per kind, on a synthetic history (`evaluate`) or on any scored, labelled set
//! (`Metrics::of`).
//!
//! On a history, what analysts would see is measured:
//! - **Reports.** Flagged checks become reports, at most one per agent and kind in 10
//!   minutes (as the server files them). A report is right when its check belongs to an
//!   injected incident. Precision is the share of right reports.
//! - **Incidents.** An incident is found when any of its checks is flagged. Recall is the
//!   share found.
//! - **AUC.** Each incident is scored by its highest-scoring check, each ordinary check by
//!   its own. AUC is the chance that an incident outscores an ordinary check.

use std::collections::HashMap;
use std::time::{Duration, Instant};

use super::detector::{TrainOptions, Trained, train};
use super::features::{Kind, Recent};
use super::synth::History;

/// A report is filed at most once per agent and kind in this many seconds.
pub const REPORT_COOLDOWN_SECS: i64 = 600;

/// Precision, recall, F1 and AUC of one set.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Metrics {
    pub positives: usize,
    pub negatives: usize,
    /// `None` when nothing was flagged.
    pub precision: Option<f64>,
    /// `None` without positives.
    pub recall: Option<f64>,
    pub f1: Option<f64>,
    /// `None` without both positives and negatives.
    pub auc: Option<f64>,
}

impl Metrics {
    /// From counts and the scores of positives and negatives.
    pub fn from_counts(tp: usize, fp: usize, found: usize, positives: &[f64], negatives: &[f64]) -> Self {
        let precision = (tp + fp > 0).then(|| tp as f64 / (tp + fp) as f64);
        let recall = (!positives.is_empty()).then(|| found as f64 / positives.len() as f64);
        let f1 = match (precision, recall) {
            (Some(p), Some(r)) if p + r > 0.0 => Some(2.0 * p * r / (p + r)),
            (Some(_), Some(_)) => Some(0.0),
            _ => None,
        };
        Self {
            positives: positives.len(),
            negatives: negatives.len(),
            precision,
            recall,
            f1,
            auc: auc(positives, negatives),
        }
    }

    /// Of scored items labelled anomalous (`true`) or not, at `threshold`.
    pub fn of(scored: &[(f64, bool)], threshold: f64) -> Self {
        let positives: Vec<f64> = scored.iter().filter(|(_, a)| *a).map(|(s, _)| *s).collect();
        let negatives: Vec<f64> = scored.iter().filter(|(_, a)| !*a).map(|(s, _)| *s).collect();
        let tp = positives.iter().filter(|s| **s >= threshold).count();
        let fp = negatives.iter().filter(|s| **s >= threshold).count();
        Self::from_counts(tp, fp, tp, &positives, &negatives)
    }
}

/// The area under the ROC curve: the chance a positive outscores a negative (ties count
/// half); `None` without both.
pub fn auc(positives: &[f64], negatives: &[f64]) -> Option<f64> {
    if positives.is_empty() || negatives.is_empty() {
        return None;
    }
    let mut sorted = negatives.to_vec();
    sorted.sort_by(f64::total_cmp);
    let wins: f64 = positives
        .iter()
        .map(|p| {
            let below = sorted.partition_point(|n| n < p);
            let ties = sorted[below..].partition_point(|n| n <= p);
            below as f64 + 0.5 * ties as f64
        })
        .sum();
    Some(wins / (positives.len() as f64 * negatives.len() as f64))
}

/// The figures of one kind of incident.
#[derive(Debug, Clone, PartialEq)]
pub struct KindMetrics {
    pub kind: Kind,
    pub incidents: usize,
    pub found: usize,
    /// Found incidents whose first report names this kind.
    pub named: usize,
    /// Reports naming this kind, and how many of them were right.
    pub reports: usize,
    pub right_reports: usize,
    /// Recall and AUC over this kind's incidents; precision over reports naming it.
    pub metrics: Metrics,
}

/// The result of `evaluate`.
#[derive(Debug, Clone, PartialEq)]
pub struct Evaluation {
    pub overall: Metrics,
    pub by_kind: Vec<KindMetrics>,
    pub reports: usize,
    pub right_reports: usize,
    pub train_checks: usize,
    pub test_checks: usize,
    pub threshold: f64,
    pub train_time: Duration,
    /// Mean time to score one check.
    pub score_time: Duration,
}

/// Trains on the history's training period and measures on its test period.
pub fn evaluate(history: &History, options: TrainOptions) -> Evaluation {
    let split_index = history.events.partition_point(|e| e.at < history.split);
    let train_events: Vec<_> = history.events[..split_index].iter().map(|e| e.event()).collect();
    let started = Instant::now();
    let Trained { detector, samples, .. } = train(&train_events, &[], options);
    let train_time = started.elapsed();

    let mut incident_of: HashMap<usize, usize> = HashMap::new();
    for (n, incident) in history.incidents.iter().enumerate() {
        for &c in &incident.checks {
            incident_of.insert(c, n);
        }
    }
    // Warm each agent's windows with the last hour of training, then score the test period.
    let warm_from = history.events[..split_index].partition_point(|e| e.at < history.split - 3_600);
    let mut recents: HashMap<u128, Recent> = HashMap::new();
    let mut best: Vec<f64> = vec![0.0; history.incidents.len()];
    let mut first_kind: Vec<Option<Kind>> = vec![None; history.incidents.len()];
    let mut found = vec![false; history.incidents.len()];
    let mut ordinary: Vec<f64> = Vec::new();
    let mut last_report: HashMap<(u128, Kind), i64> = HashMap::new();
    let (mut reports, mut right) = (0usize, 0usize);
    let mut per_kind: HashMap<Kind, (usize, usize)> = HashMap::new();
    let mut scoring = Duration::ZERO;
    let mut test_checks = 0usize;
    for (i, e) in history.events.iter().enumerate().skip(warm_from) {
        let event = e.event();
        let recent = recents.entry(e.agent).or_default();
        let t = Instant::now();
        let scored = detector.score(recent, e.agent, e.at, event.what);
        if i < split_index {
            continue;
        }
        let Some(scored) = scored else { continue };
        scoring += t.elapsed();
        test_checks += 1;
        let incident = incident_of.get(&i).copied();
        match incident {
            Some(n) => best[n] = best[n].max(scored.score),
            None => ordinary.push(scored.score),
        }
        if !scored.anomalous {
            continue;
        }
        if let Some(n) = incident {
            found[n] = true;
            first_kind[n].get_or_insert(scored.kind());
        }
        let key = (e.agent, scored.kind());
        if last_report.get(&key).is_some_and(|at| e.at - at < REPORT_COOLDOWN_SECS) {
            continue;
        }
        last_report.insert(key, e.at);
        reports += 1;
        let counts = per_kind.entry(scored.kind()).or_default();
        counts.0 += 1;
        if incident.is_some() {
            right += 1;
            counts.1 += 1;
        }
    }

    let test_incidents: Vec<usize> = (0..history.incidents.len())
        .filter(|&n| history.incidents[n].checks.first().is_some_and(|&c| c >= split_index))
        .collect();
    let scores_of = |ns: &[usize]| ns.iter().map(|&n| best[n]).collect::<Vec<f64>>();
    let found_of = |ns: &[usize]| ns.iter().filter(|&&n| found[n]).count();
    let overall =
        Metrics::from_counts(right, reports - right, found_of(&test_incidents), &scores_of(&test_incidents), &ordinary);
    let by_kind = Kind::ALL
        .iter()
        .map(|&kind| {
            let ns: Vec<usize> =
                test_incidents.iter().copied().filter(|&n| history.incidents[n].kind == kind).collect();
            let (kind_reports, kind_right) = per_kind.get(&kind).copied().unwrap_or((0, 0));
            KindMetrics {
                kind,
                incidents: ns.len(),
                found: found_of(&ns),
                named: ns.iter().filter(|&&n| first_kind[n] == Some(kind)).count(),
                reports: kind_reports,
                right_reports: kind_right,
                metrics: Metrics::from_counts(
                    kind_right,
                    kind_reports - kind_right,
                    found_of(&ns),
                    &scores_of(&ns),
                    &ordinary,
                ),
            }
        })
        .collect();
    Evaluation {
        overall,
        by_kind,
        reports,
        right_reports: right,
        train_checks: samples,
        test_checks,
        threshold: detector.threshold,
        train_time,
        score_time: scoring / test_checks.max(1) as u32,
    }
}

fn figure(v: Option<f64>) -> String {
    v.map_or_else(|| "—".to_owned(), |v| format!("{v:.3}"))
}

impl std::fmt::Display for Evaluation {
    /// A Markdown table: one row per kind, then all kinds.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        writeln!(f, "| kind | incidents | found | named | reports (right) | precision | recall | F1 | AUC |")?;
        writeln!(f, "|---|---:|---:|---:|---:|---:|---:|---:|---:|")?;
        for k in &self.by_kind {
            let m = &k.metrics;
            writeln!(
                f,
                "| {} | {} | {} | {} | {} ({}) | {} | {} | {} | {} |",
                k.kind.as_str(),
                k.incidents,
                k.found,
                k.named,
                k.reports,
                k.right_reports,
                figure(m.precision),
                figure(m.recall),
                figure(m.f1),
                figure(m.auc)
            )?;
        }
        let m = &self.overall;
        let found = m.recall.map_or(0, |r| (r * m.positives as f64).round() as usize);
        writeln!(
            f,
            "| **all** | {} | {} | | {} ({}) | {} | {} | {} | {} |",
            m.positives,
            found,
            self.reports,
            self.right_reports,
            figure(m.precision),
            figure(m.recall),
            figure(m.f1),
            figure(m.auc)
        )?;
        write!(
            f,
            "\ntrained on {} checks in {:.2?}; threshold {:.4}; {} test checks scored in {:.2?} each",
            self.train_checks, self.train_time, self.threshold, self.test_checks, self.score_time
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::anomaly::synth::{SynthConfig, generate};

    #[test]
    fn auc_counts_wins_and_ties() {
        assert_eq!(auc(&[0.9], &[0.1, 0.2]), Some(1.0));
        assert_eq!(auc(&[0.1], &[0.9]), Some(0.0));
        assert_eq!(auc(&[0.5], &[0.5]), Some(0.5));
        assert_eq!(auc(&[], &[0.5]), None);
        let m = Metrics::of(&[(0.9, true), (0.8, false), (0.2, true), (0.1, false)], 0.5);
        assert_eq!((m.precision, m.recall, m.auc), (Some(0.5), Some(0.5), Some(0.75)));
    }

    #[test]
    fn the_detector_finds_injected_anomalies_on_a_small_history() {
        let cfg =
            SynthConfig { agents: 10, train_days: 5, test_days: 2, incidents_per_kind: 8, ..SynthConfig::small() };
        let e = evaluate(&generate(&cfg), TrainOptions::default());
        println!("{e}");
        let auc = e.overall.auc.unwrap_or(0.0);
        assert!(auc > 0.85, "{e:#?}");
        assert!(e.overall.recall.unwrap_or(0.0) > 0.6, "{e:#?}");
    }
}
