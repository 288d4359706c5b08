//! One tenant module, loaded alone into its own regorus engine with a generated
//! *outcome module* beside it.
//!
//! Isolation: every policy gets its own engine, so two policies with the same package
//! (two instances of one template) never see each other, and a module may refer to its own
//! rules by plain name or by full `data.<package>.<rule>` path, exactly as if it were alone.
//!
//! The outcome module collects what the contract reads in one rule, so one evaluation
//! answers for the module (an undefined rule simply contributes nothing, and a contract rule
//! the module does not define at all gets no line):
//!
//! ```rego
//! package agentgov_outcome
//! out contains ["deny", v] if v := data.<package>.deny
//! out contains ["require_approval", v] if v := data.<package>.require_approval
//! out contains ["risk_adjustment", v] if v := data.<package>.risk_adjustment
//! out contains ["labels", v] if v := data.<package>.labels
//! ```

use std::num::NonZeroU32;
use std::time::Duration;

use agentgov_domain::ports::RegoDiagnostic;
use regorus::Engine;
use regorus::utils::limits::ExecutionTimerConfig;

use crate::analysis;
use crate::diagnostic::{self, MODULE_FILE};

/// The contract's rules, in the order the outcome module lists them.
pub(crate) const RULES: [&str; 4] = ["deny", "require_approval", "risk_adjustment", "labels"];

/// Wall-clock limit of one module's evaluation; beyond it the evaluation fails (and the
/// check fails closed).
pub(crate) const TIME_LIMIT: Duration = Duration::from_millis(100);
const TIME_CHECK_INTERVAL: NonZeroU32 = NonZeroU32::MIN.saturating_add(63);

pub(crate) fn timer() -> ExecutionTimerConfig {
    ExecutionTimerConfig { limit: TIME_LIMIT, check_interval: TIME_CHECK_INTERVAL }
}

/// An engine for Rego v1 modules, with the evaluation limits.
pub(crate) fn new_engine() -> Engine {
    let mut engine = Engine::new();
    engine.set_rego_v0(false);
    // As in OPA: a builtin that cannot handle its arguments makes its expression undefined
    // (regorus's VM always behaves so; its interpreter does for most builtins).
    engine.set_strict_builtin_errors(false);
    engine.set_execution_timer_config(timer());
    // `print` in a tenant's module must not write into the service's log (it could forge
    // lines there): what it prints is gathered in the evaluation's engine and dropped.
    engine.set_gather_prints(true);
    engine
}

/// A parsed and checked module with its outcome module, ready to compile or evaluate.
pub(crate) struct Loaded {
    pub engine: Engine,
    /// `data.<outcome package>.out`.
    pub entry: String,
    /// Whether a value rule may yield conflicting values (then only the interpreter is exact).
    pub may_conflict: bool,
    /// Whether the module refers to `data` (then it must be alone in its engine).
    pub reads_data: bool,
    /// The module's package, as components.
    pub package: Vec<String>,
    /// The contract rules the module defines (the outcome module reads no others).
    pub contract: Vec<&'static str>,
}

impl Loaded {
    /// Parses `rego` (Rego v1) and checks its calls; the first error as a diagnostic.
    pub fn new(rego: &str) -> Result<Self, RegoDiagnostic> {
        if rego.trim().is_empty() {
            return Err(at_start("empty module: a policy starts with a `package` clause"));
        }
        let mut engine = new_engine();
        engine.add_policy(MODULE_FILE.to_owned(), rego.to_owned()).map_err(|e| diagnostic::diagnostic(&e, rego))?;

        let (may_conflict, reads_data, package, contract) = {
            let module = engine.get_modules().first().ok_or_else(|| at_start("no module was parsed"))?.clone();
            if let Some((line, column, message)) = analysis::check_calls(&module) {
                return Err(RegoDiagnostic { line, column: diagnostic::char_column(rego, line, column), message });
            }
            let contract: Vec<&'static str> = RULES.into_iter().filter(|r| analysis::defines(&module, r)).collect();
            (
                analysis::may_conflict(&module),
                analysis::reads_data(&module),
                package_components(&engine, rego)?,
                contract,
            )
        };
        let entry = add_outcome_module(&mut engine, &[(&package, &contract)], |_, rule| format!("\"{rule}\""))
            .map_err(|message| at_start(&format!("internal outcome module: {message}")))?;
        Ok(Self { engine, entry, may_conflict, reads_data, package, contract })
    }
}

/// Adds the outcome module over `modules` (a package and the contract rules it defines) to
/// `engine`: for each module `n` and rule, `out contains [<tag(n, rule)>, v] if
/// v := data.<package>.<rule>`. Returns the entry point, `data.<outcome package>.out`, or regorus's
/// message.
pub(crate) fn add_outcome_module(
    engine: &mut Engine,
    modules: &[(&[String], &[&str])],
    tag: impl Fn(usize, &str) -> String,
) -> Result<String, String> {
    let packages: Vec<&[String]> = modules.iter().map(|(package, _)| *package).collect();
    let outcome_package = outcome_package(&packages);
    let mut source = format!("package {outcome_package}\n\n");
    if modules.iter().all(|(_, rules)| rules.is_empty()) {
        // `out` must exist to be an entry point; this one never has a member.
        source.push_str("out contains 0 if false\n");
    }
    for (n, (package, rules)) in modules.iter().enumerate() {
        let path = data_path(package);
        for rule in rules.iter() {
            source.push_str(&format!("out contains [{}, v] if v := {path}.{rule}\n", tag(n, rule)));
        }
    }
    engine
        .add_policy("agentgov-outcome.rego".to_owned(), source)
        .map_err(|e| diagnostic::parse(&format!("{e:#}")).message)?;
    Ok(format!("data.{outcome_package}.out"))
}

/// How deep `[` and `{` may nest in a module (outside strings and comments). regorus's parser
/// first tries a bracket as a comprehension and, when that fails, parses it again as an array,
/// set or object, so each level of nesting doubles the parse: `x := [[[[[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]]]]]`
/// (60 bytes, 20 deep) takes 20 seconds and every further level twice as long (found with
/// the fuzz target rego_validate). Policies nest 2 to 4 deep; at 8 the worst 64 KiB module
/// still parses in seconds.
pub(crate) const MAX_NESTING: usize = 8;

/// The first `[` or `{` of `rego` nested deeper than [`MAX_NESTING`], as a diagnostic.
/// Strings (`"…"` with escapes, `` `…` ``) and comments (`#` to the end of the line) are
/// skipped; unbalanced brackets are left to the parser.
pub(crate) fn check_nesting(rego: &str) -> Result<(), RegoDiagnostic> {
    let mut depth = 0usize;
    let mut in_string: Option<char> = None;
    let mut escaped = false;
    let mut comment = false;
    let (mut line, mut column) = (1u32, 0u32);
    for c in rego.chars() {
        if c == '\n' {
            (line, column) = (line.saturating_add(1), 0);
            comment = false;
            continue;
        }
        column = column.saturating_add(1);
        if comment {
            continue;
        }
        if let Some(quote) = in_string {
            if escaped {
                escaped = false;
            } else if quote == '"' && c == '\\' {
                escaped = true;
            } else if c == quote {
                in_string = None;
            }
            continue;
        }
        match c {
            '#' => comment = true,
            '"' | '`' => in_string = Some(c),
            '[' | '{' => {
                depth += 1;
                if depth > MAX_NESTING {
                    let message =
                        format!("brackets nested more than {MAX_NESTING} deep: write the term with less nesting");
                    return Err(RegoDiagnostic { line, column, message });
                }
            }
            ']' | '}' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    Ok(())
}

pub(crate) fn at_start(message: &str) -> RegoDiagnostic {
    RegoDiagnostic { line: 1, column: 1, message: message.to_owned() }
}

fn package_components(engine: &Engine, rego: &str) -> Result<Vec<String>, RegoDiagnostic> {
    let packages = engine.get_policy_package_components().map_err(|e| diagnostic::diagnostic(&e, rego))?;
    packages.into_iter().next().map(|p| p.components).ok_or_else(|| at_start("module without a package"))
}

/// A package name that none of the tenant `packages` can be inside of.
fn outcome_package(packages: &[&[String]]) -> String {
    let mut name = "agentgov_outcome".to_owned();
    while packages.iter().any(|p| p.first() == Some(&name)) {
        name.push('_');
    }
    name
}

/// `data.a.b` or, for components that are not identifiers, `data["a-b"]`.
fn data_path(components: &[String]) -> String {
    let mut path = "data".to_owned();
    for c in components {
        let identifier = c.chars().next().is_some_and(|ch| ch.is_ascii_alphabetic() || ch == '_')
            && c.chars().all(|ch| ch.is_ascii_alphanumeric() || ch == '_')
            && !KEYWORDS.contains(&c.as_str());
        if identifier {
            path.push('.');
            path.push_str(c);
        } else {
            path.push('[');
            path.push_str(&serde_json::Value::from(c.as_str()).to_string());
            path.push(']');
        }
    }
    path
}

const KEYWORDS: &[&str] = &[
    "as", "contains", "default", "else", "every", "false", "if", "import", "in", "not", "null", "package", "some",
    "true", "with",
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn deep_nesting_is_refused_where_it_gets_too_deep() {
        let nested = |n: usize| format!("package p\n\nx := {}1{}\n", "[".repeat(n), "]".repeat(n));
        assert_eq!(check_nesting(&nested(MAX_NESTING)), Ok(()));
        // 20 levels took 20 s to parse (fuzz target rego_validate), each further level twice that.
        let d = check_nesting(&nested(20)).unwrap_err();
        assert_eq!((d.line, d.column), (3, 6 + MAX_NESTING as u32), "{d:?}");
        assert!(d.message.contains("nested more than 8 deep"), "{d:?}");
        let mixed = format!("package p\n\nx := {}1{}\n", "{\"a\": [".repeat(5), "]}".repeat(5));
        assert_eq!(check_nesting(&mixed).unwrap_err().line, 3);
        // Brackets in strings and comments do not count; siblings do not add up.
        let quiet = format!(
            "package p\n# {deep}\nx := \"{deep}\\\"{deep}\"\ny := `{deep}`\nz := [[[[1]]], [[[[2]]]], {{\"a\": [[3]]}}]\n",
            deep = "[".repeat(20)
        );
        assert_eq!(check_nesting(&quiet), Ok(()));
    }

    #[test]
    fn data_paths_quote_what_is_not_an_identifier() {
        let c = |v: &[&str]| v.iter().map(|s| (*s).to_owned()).collect::<Vec<_>>();
        assert_eq!(data_path(&c(&["a", "b_1"])), "data.a.b_1");
        assert_eq!(data_path(&c(&["a", "b-c", "in"])), r#"data.a["b-c"]["in"]"#);
    }

    #[test]
    fn the_outcome_package_never_contains_the_tenant_package() {
        let p = |c: &str| vec![c.to_owned()];
        assert_eq!(outcome_package(&[&p("agentgov_outcome")]), "agentgov_outcome_");
        assert_eq!(outcome_package(&[&p("x"), &p("agentgov_outcome_"), &p("agentgov_outcome")]), "agentgov_outcome__");
        assert_eq!(outcome_package(&[&p("x")]), "agentgov_outcome");
    }
}
