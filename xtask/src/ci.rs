//! `cargo xtask ci`: the checks CI runs, in order, stopping at the first failure.

use std::collections::BTreeSet;

use anyhow::bail;

use crate::cmd::{self, cargo, step};

const TEST_DATABASE_URL: &str = "postgres://postgres@127.0.0.1:5432/test";
const TEST_REDIS_URL: &str = "redis://127.0.0.1:6379";

/// Infrastructure crates the core must never reach, directly or transitively, and the
/// OpenAPI derives (the domain's `openapi` feature, which only `api` turns on).
const CORE_BANNED: &[&str] = &[
    "actix-web",
    "actix-http",
    "diesel",
    "diesel-async",
    "redis",
    "deadpool-redis",
    "regorus",
    "reqwest",
    "tokio",
    "utoipa",
];
/// Storage and policy engines the HTTP layer must reach only through the domain's ports.
const API_BANNED: &[&str] = &["diesel", "redis", "regorus", "reqwest"];

/// Each package and what it must not depend on.
const RULES: &[(&str, &[&str])] =
    &[("agentgov-domain", CORE_BANNED), ("agentgov-detect", CORE_BANNED), ("agentgov-api", API_BANNED)];

pub fn run(skip_tests: bool) -> anyhow::Result<()> {
    if skip_tests {
        step("tests: skipped (--skip-tests)");
    } else {
        tests()?;
    }
    step("rustfmt: cargo fmt --all -- --check");
    cmd::run(cargo().args(["fmt", "--all", "--", "--check"]))?;
    step("clippy: cargo clippy --workspace --all-targets -- -D warnings");
    cmd::run(cargo().args(["clippy", "--workspace", "--all-targets", "--", "-D", "warnings"]))?;
    step("dependency direction");
    dependency_direction()?;
    step("no import cycle among the domain's modules");
    crate::cycles::check(&cmd::root().join("crates").join("domain").join("src"))?;
    crate::deny::run(false)?;
    crate::openapi::run(true)?;
    step("ci: all steps passed");
    Ok(())
}

fn tests() -> anyhow::Result<()> {
    step("tests: cargo test --workspace (Postgres and Redis suites included, CI=true)");
    let mut command = cargo();
    command.args(["test", "--workspace"]).env("CI", "true");
    for (name, default) in
        [("AGENTGOV_TEST_DATABASE_URL", TEST_DATABASE_URL), ("AGENTGOV_TEST_REDIS_URL", TEST_REDIS_URL)]
    {
        if std::env::var_os(name).is_none() {
            command.env(name, default);
        }
    }
    cmd::run(&mut command)
}

fn dependency_direction() -> anyhow::Result<()> {
    let mut violations = Vec::new();
    for (package, banned) in RULES {
        let deps = normal_dependencies(package)?;
        let found: Vec<&str> = banned.iter().copied().filter(|name| deps.contains(*name)).collect();
        if found.is_empty() {
            println!("    {package}: none of {}", banned.join(", "));
        } else {
            violations.push(format!("{package} depends on {}", found.join(", ")));
        }
    }
    if !violations.is_empty() {
        bail!(
            "dependency direction violated:\n  {}\n(see `cargo tree -p <package> -e normal -i <crate>` for the path)",
            violations.join("\n  ")
        );
    }
    Ok(())
}

/// Names of every crate in `package`'s normal (non-dev, non-build) dependency tree.
/// The tree is parsed rather than asked with `cargo tree -i`, which errors when the crate is absent.
fn normal_dependencies(package: &str) -> anyhow::Result<BTreeSet<String>> {
    let tree =
        cmd::output(cargo().args(["tree", "-p", package, "-e", "normal", "--prefix", "none", "--format", "{p}"]))?;
    Ok(crate_names(&tree))
}

fn crate_names(tree: &str) -> BTreeSet<String> {
    tree.lines().filter_map(|line| line.split_whitespace().next()).map(str::to_owned).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn crate_names_takes_the_first_word_of_each_line() {
        let tree = "agentgov-domain v0.1.0 (/w/crates/domain)\nserde v1.0.0\nserde v1.0.0 (*)\n\ntokio v1.0.0\n";
        let names = crate_names(tree);
        assert_eq!(names.into_iter().collect::<Vec<_>>(), ["agentgov-domain", "serde", "tokio"]);
    }

    #[test]
    fn banned_names_are_matched_exactly() {
        let names = crate_names("tokio-util v0.7.0\nredis-test v0.1.0\n");
        assert!(!names.contains("tokio") && !names.contains("redis"));
    }
}
