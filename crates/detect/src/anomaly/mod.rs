//! Anomaly detection over agents' behaviour (spec 4.8).
//!
//! - [`features`]: what is measured of each policy check against the agent's baseline, and
//!   the live state (`Recent`) a process keeps per agent to measure it.
//! - [`tail`]: the unsupervised model, each feature's upper tail (peaks over threshold).
//! - [`detector`]: training (baselines, tails, threshold) and scoring.
//! - [`synth`] and [`eval`]: a seeded synthetic history with injected anomalies, and the
//!   figures a detector reaches on it.

pub mod detector;
pub mod eval;
pub mod features;
pub mod synth;
pub mod tail;

pub use detector::{Detector, Scored, TrainOptions, Trained, train};
pub use eval::{Evaluation, KindMetrics, Metrics, evaluate};
pub use features::{Event, FEATURES, Feature, Kind, Observed, OwnedEvent, Recent, resource_shape};
