//! The Prompt Guard's encoder as `cargo xtask guard-models` installs it, for the tests that
//! need its weights.

use std::path::PathBuf;

use agentgov_detect::guard::encoder::{self, Encoder};

/// The installed encoder (`$AGENTGOV_GUARD_MODELS`, else the workspace's `models/`);
/// `None` without its weights, when the caller's test is skipped, except in CI, where the
/// weights must be there.
pub fn encoder() -> Option<Encoder> {
    let dir = match std::env::var_os("AGENTGOV_GUARD_MODELS") {
        Some(_) => encoder::default_dir(),
        None => PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../models").join(encoder::NAME),
    };
    match Encoder::load(&dir) {
        Ok(e) => Some(e),
        Err(e) if std::env::var_os("CI").is_some() => {
            panic!("the encoder's weights must be installed in CI (cargo xtask guard-models): {e}")
        }
        Err(e) => {
            eprintln!("skipped: no encoder weights ({e}); run `cargo xtask guard-models`");
            None
        }
    }
}
