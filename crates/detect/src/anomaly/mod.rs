//! Anomaly detection over agents' behaviour (spec 4.8). So far the unsupervised model the
//! detector scores with: an isolation forest ([`forest`]). Behavioural features and the
//! per-agent baselines are to come.

pub mod forest;

pub use forest::{ForestConfig, IsolationForest};
