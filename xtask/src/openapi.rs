//! `cargo xtask openapi [--check]`: keeps `docs/openapi.json` equal to what the code serves.

use anyhow::{Context, bail};

use crate::cmd::{self, cargo, root, step};

const SPEC: &str = "docs/openapi.json";

pub fn run(check: bool) -> anyhow::Result<()> {
    step("openapi: cargo run -q -p agentgov-server -- openapi");
    let generated = cmd::output(cargo().args(["run", "-q", "-p", "agentgov-server", "--", "openapi"]))?;
    let path = root().join(SPEC);
    if check {
        let committed = std::fs::read_to_string(&path)
            .with_context(|| format!("reading {SPEC} (run `cargo xtask openapi` to create it)"))?;
        if committed != generated {
            let line = first_difference(&committed, &generated);
            bail!("{SPEC} is out of date (first difference at line {line}); run `cargo xtask openapi` and commit it");
        }
        println!("    {SPEC} is up to date");
    } else {
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
        }
        std::fs::write(&path, &generated).with_context(|| format!("writing {SPEC}"))?;
        println!("    wrote {SPEC}");
    }
    Ok(())
}

/// The 1-based number of the first line where `a` and `b` differ.
fn first_difference(a: &str, b: &str) -> usize {
    let mut lines = a.lines().zip(b.lines());
    let same = lines.by_ref().take_while(|(x, y)| x == y).count();
    same + 1
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn first_difference_is_one_based() {
        assert_eq!(first_difference("a\nb\nc", "a\nx\nc"), 2);
        assert_eq!(first_difference("a", "b"), 1);
        assert_eq!(first_difference("a\nb", "a\nb\nc"), 3);
    }
}
