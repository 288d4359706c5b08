//! The public Prompt Guard data in `../shared/data/guard` (never copied into the project),
//! its splits, and a cache of the encoder's embeddings for the commands that train and
//! evaluate on it (`guard-train`, `guard-eval`).
//!
//! Splits, all by a hash of a text's first 150 normalised characters, so a template family
//! or a host document never straddles two sides:
//! - **calibration**: half of `extra/benign_hard.jsonl` (system prompts, role prompts,
//!   NotInject), never fitted: the thresholds are calibrated on it;
//! - **fit**: `train.jsonl`, `extra/attacks_extra.jsonl` without its rows in languages that
//!   have no benign text here (zu, sq, ga, gd: a model would learn "not English = attack"),
//!   the other half of `benign_hard.jsonl`, and the project's own developer system prompts
//!   and document tasks (`corpus::background`, benign, for the n-gram stage only: the public
//!   data has no short application setups, and its pasted documents mostly hide attacks);
//! - **dev**: `dev.jsonl`, evaluation only; **multilingual**: `extra/multilingual_eval.jsonl`,
//!   evaluation only.

use std::collections::HashMap;
use std::io::Write;
use std::path::{Path, PathBuf};

use agentgov_detect::guard::encoder::{DIM, Encoder};
use agentgov_detect::guard::{self, Example, Label};
use anyhow::{Context, bail};
use serde_json::Value;

/// One row of the data.
#[derive(Debug, Clone)]
pub struct Row {
    pub example: Example,
    pub source: String,
    pub language: Option<String>,
    pub file: &'static str,
    /// 0..100, from the text's normalised start.
    pub group: u32,
}

pub const FILES: [&str; 5] = [
    "train.jsonl",
    "dev.jsonl",
    "extra/attacks_extra.jsonl",
    "extra/benign_hard.jsonl",
    "extra/multilingual_eval.jsonl",
];
/// Languages of attacks with no benign text in the data.
const UNBALANCED_LANGUAGES: [&str; 4] = ["zu", "sq", "ga", "gd"];

pub fn default_dir() -> PathBuf {
    crate::cmd::root().join("../shared/data/guard")
}

pub fn load(dir: &Path) -> anyhow::Result<Vec<Row>> {
    let mut rows = Vec::new();
    for file in FILES {
        let path = dir.join(file);
        let text = std::fs::read_to_string(&path)
            .with_context(|| format!("reading {} (the public guard data, see ../shared/data/guard)", path.display()))?;
        for (n, line) in text.lines().enumerate().filter(|(_, l)| !l.trim().is_empty()) {
            let v: Value = serde_json::from_str(line).with_context(|| format!("{}:{}", path.display(), n + 1))?;
            let (Some(text), Some(label)) = (v["text"].as_str(), v["label"].as_str().and_then(Label::parse)) else {
                bail!("{}:{}: needs text and label", path.display(), n + 1);
            };
            rows.push(Row {
                example: Example::new(text, label),
                source: v["source"].as_str().unwrap_or("unknown").to_string(),
                language: v["language"].as_str().map(str::to_string),
                file,
                group: group(text),
            });
        }
    }
    // Evaluation only: system prompts written by hand for the detector's tests.
    let path = crate::cmd::root().join(HANDWRITTEN);
    let text = std::fs::read_to_string(&path).with_context(|| format!("reading {}", path.display()))?;
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        let v: Value = serde_json::from_str(line).with_context(|| path.display().to_string())?;
        let text = v["text"].as_str().context("a system prompt needs text")?;
        let group = group(text);
        let example = Example::new(text, Label::Benign);
        rows.push(Row { example, source: "agentgov_handwritten".into(), language: None, file: HANDWRITTEN, group });
    }
    for example in guard::corpus::background() {
        let group = group(&example.text);
        rows.push(Row { example, source: "agentgov_system_prompts".into(), language: None, file: GENERATED, group });
    }
    Ok(rows)
}

/// System prompts written by hand, for evaluation only (the detector's tests read them too).
pub const HANDWRITTEN: &str = "crates/detect/tests/fixtures/guard-system-prompts.jsonl";
/// The `file` of the project's own generated system prompts.
pub const GENERATED: &str = "corpus::background";

/// FNV-1a of the lower-cased, whitespace-collapsed first 150 characters, into 0..100.
fn group(text: &str) -> u32 {
    let head: String = text.split_whitespace().collect::<Vec<_>>().join(" ").to_lowercase().chars().take(150).collect();
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in head.bytes() {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    (h % 100) as u32
}

impl Row {
    pub fn is_calibration(&self) -> bool {
        self.file == "extra/benign_hard.jsonl" && self.group < 50
    }

    pub fn is_fit(&self) -> bool {
        match self.file {
            "train.jsonl" => true,
            "extra/attacks_extra.jsonl" => !self.language.as_deref().is_some_and(|l| UNBALANCED_LANGUAGES.contains(&l)),
            "extra/benign_hard.jsonl" => !self.is_calibration(),
            GENERATED => true,
            _ => false,
        }
    }
}

/// Embeddings by text, kept in a file between runs (`CARGO_TARGET_DIR` or `target`).
pub struct EmbeddingCache<'a> {
    encoder: &'a Encoder,
    map: HashMap<u64, [f32; DIM]>,
    path: PathBuf,
    added: Vec<(u64, [f32; DIM])>,
}

impl<'a> EmbeddingCache<'a> {
    pub fn open(encoder: &'a Encoder) -> Self {
        let target =
            std::env::var_os("CARGO_TARGET_DIR").map_or_else(|| crate::cmd::root().join("target"), PathBuf::from);
        let path = target.join("guard-embeddings.bin");
        let mut map = HashMap::new();
        if let Ok(bytes) = std::fs::read(&path) {
            for record in bytes.chunks_exact(8 + DIM * 4) {
                let key = u64::from_le_bytes(record[..8].try_into().unwrap_or_default());
                let mut v = [0f32; DIM];
                for (x, b) in v.iter_mut().zip(record[8..].chunks_exact(4)) {
                    *x = f32::from_le_bytes([b[0], b[1], b[2], b[3]]);
                }
                map.insert(key, v);
            }
        }
        Self { encoder, map, path, added: Vec::new() }
    }

    fn key(text: &str) -> u64 {
        let mut h: u64 = 0xcbf2_9ce4_8422_2325 ^ text.len() as u64;
        for b in text.bytes() {
            h ^= u64::from(b);
            h = h.wrapping_mul(0x0000_0100_0000_01b3);
        }
        h
    }

    pub fn embed(&mut self, text: &str) -> [f32; DIM] {
        let key = Self::key(text);
        if let Some(v) = self.map.get(&key) {
            return *v;
        }
        let v = self.encoder.embed(text, agentgov_detect::guard::detector::ENCODER_TOKENS);
        self.map.insert(key, v);
        self.added.push((key, v));
        v
    }

    /// Embeds `texts` not yet cached on both cores.
    pub fn warm(&mut self, texts: &[&str]) {
        let missing: Vec<&str> = texts.iter().copied().filter(|t| !self.map.contains_key(&Self::key(t))).collect();
        if missing.is_empty() {
            return;
        }
        let encoder = self.encoder;
        let half = missing.len().div_ceil(2);
        let results: Vec<(u64, [f32; DIM])> = std::thread::scope(|s| {
            let handles: Vec<_> = missing
                .chunks(half.max(1))
                .map(|chunk| {
                    s.spawn(move || {
                        chunk
                            .iter()
                            .map(|t| (Self::key(t), encoder.embed(t, agentgov_detect::guard::detector::ENCODER_TOKENS)))
                            .collect::<Vec<_>>()
                    })
                })
                .collect();
            handles.into_iter().flat_map(|h| h.join().unwrap_or_default()).collect()
        });
        for (k, v) in results {
            self.map.insert(k, v);
            self.added.push((k, v));
        }
    }

    pub fn save(&mut self) -> anyhow::Result<()> {
        if self.added.is_empty() {
            return Ok(());
        }
        if let Some(dir) = self.path.parent() {
            std::fs::create_dir_all(dir)?;
        }
        let mut file = std::fs::OpenOptions::new().create(true).append(true).open(&self.path)?;
        let mut buf = Vec::with_capacity(self.added.len() * (8 + DIM * 4));
        for (k, v) in self.added.drain(..) {
            buf.extend_from_slice(&k.to_le_bytes());
            for x in v {
                buf.extend_from_slice(&x.to_le_bytes());
            }
        }
        file.write_all(&buf)?;
        Ok(())
    }
}
