//! The Rego that policy authors rely on (docs/policies.md), evaluated through the port on
//! both of regorus's evaluators: every case must give the expected outcome on the VM path
//! (`Backend::Auto`) and on the interpreter alike.
#![expect(clippy::unwrap_used, reason = "test code: a failed unwrap is a failed test")]

mod common;

use agentgov_domain::ports::{PolicyEngine, PolicyOutcome};
use agentgov_policy_rego::{Backend, RegoEngine};
use serde_json::json;

use common::{module, policy_id, realistic_input};

struct Case {
    name: &'static str,
    rego: &'static str,
    input: serde_json::Value,
    deny: &'static [&'static str],
    approval: &'static [&'static str],
    risk: Option<f64>,
    /// A substring of the expected evaluation error.
    error: Option<&'static str>,
}

fn case(name: &'static str, rego: &'static str, input: serde_json::Value) -> Case {
    Case { name, rego, input, deny: &[], approval: &[], risk: None, error: None }
}

impl Case {
    fn deny(mut self, m: &'static [&'static str]) -> Self {
        self.deny = m;
        self
    }
    fn approval(mut self, m: &'static [&'static str]) -> Self {
        self.approval = m;
        self
    }
    fn risk(mut self, r: f64) -> Self {
        self.risk = Some(r);
        self
    }
    fn error(mut self, e: &'static str) -> Self {
        self.error = Some(e);
        self
    }
}

fn cases() -> Vec<Case> {
    let input = realistic_input();
    vec![
        case("deny set of strings", "package t\ndeny contains \"no deletes\" if input.action == \"delete\"\n", input.clone())
            .deny(&["no deletes"]),
        case("undefined rules mean nothing", "package t\nhelper := 1\n", input.clone()),
        case("explicit import rego.v1", "package t\nimport rego.v1\ndeny contains \"x\" if input.action in {\"delete\"}\n", input.clone())
            .deny(&["x"]),
        case("deny true gives the generic message", "package t\ndeny if input.resource == \"prod/customers/db\"\n", input.clone())
            .deny(&["denied by policy p"]),
        case("deny false means nothing", "package t\ndefault deny := false\n", input.clone()),
        case("require_approval true gives the generic message", "package t\nrequire_approval if input.risk.score > 0.5\n", input.clone())
            .approval(&["approval required by policy p"]),
        case(
            "non-string members are compact JSON",
            "package t\ndeny contains {\"code\": 7, \"why\": input.action} if true\ndeny contains 3 if true\n",
            input.clone(),
        )
        .deny(&["3", r#"{"code":7,"why":"delete"}"#]),
        case(
            "messages are sorted and deduplicated",
            "package t\ndeny contains \"b\" if true\ndeny contains m if some m in [\"a\", \"b\", \"a\"]\n",
            input.clone(),
        )
        .deny(&["a", "b"]),
        case("risk_adjustment number", "package t\ndefault risk_adjustment := 0\nrisk_adjustment := 12.5 if input.context.environment == \"production\"\n", input.clone())
            .risk(12.5),
        case("negative risk_adjustment", "package t\nrisk_adjustment := -0.25\n", input.clone()).risk(-0.25),
        case("risk_adjustment of another type is an error", "package t\nrisk_adjustment := \"high\"\n", input.clone())
            .error("risk_adjustment must be a number"),
        case("deny of another type is an error", "package t\ndeny := 5\n", input.clone()).error("deny must be a set of messages or a boolean"),
        case("deny as an array is an error", "package t\ndeny := [\"x\"]\n", input.clone()).error("not an array"),
        case(
            "set operations",
            "package t\nheld := {c | some c in input.agent.capabilities}\nrisky := {\"delete records\", \"transfer funds\"}\n\
             deny contains sprintf(\"both: %v\", [held & risky]) if count(held & risky) > 0\n\
             deny contains sprintf(\"either: %d\", [count(held | risky)]) if true\n\
             deny contains sprintf(\"only held: %d\", [count(held - risky)]) if true\n",
            input.clone(),
        )
        .deny(&["both: {\"delete records\"}", "either: 4", "only held: 2"]),
        case(
            "array comprehension",
            "package t\ndestructive := [c | some c in input.agent.capabilities; startswith(c, \"delete\")]\n\
             deny contains concat(\",\", destructive) if count(destructive) > 0\n",
            input.clone(),
        )
        .deny(&["delete records"]),
        case(
            "object comprehension",
            "package t\nweights := {f.name: f.weight | some f in input.risk.factors}\nrisk_adjustment := weights.destructive_action * 100\n",
            input.clone(),
        )
        .risk(30.0),
        case(
            "some with index and value",
            "package t\ndeny contains sprintf(\"%d:%s\", [i, c]) if { some i, c in input.agent.capabilities; endswith(c, \"records\") }\n",
            input.clone(),
        )
        .deny(&["2:delete records"]),
        case(
            "some over object keys and values",
            "package t\ndeny contains k if { some k, v in input.agent.permissions; v == \"write\" }\n",
            input.clone(),
        )
        .deny(&["payments"]),
        case(
            "every holds",
            "package t\nrequire_approval contains \"all production\" if every r in input.resources { startswith(r, \"prod/\") }\n",
            json!({"resources": ["prod/a", "prod/b"]}),
        )
        .approval(&["all production"]),
        case(
            "every fails on one member",
            "package t\nrequire_approval contains \"all production\" if every r in input.resources { startswith(r, \"prod/\") }\n",
            json!({"resources": ["prod/a", "dev/b"]}),
        ),
        case(
            "string builtins",
            "package t\nparts := split(input.resource, \"/\")\n\
             deny contains concat(\"|\", [upper(parts[0]), lower(\"ABC\"), trim(\"  x  \", \" \"), trim_space(\" y \"), replace(input.action, \"e\", \"3\")]) if {\n\
             \tstartswith(input.resource, \"prod/\")\n\tendswith(input.resource, \"/db\")\n\tcontains(input.resource, \"customers\")\n\tindexof(input.resource, \"/\") == 4\n}\n\
             deny contains sprintf(\"%s has %d parts, %v\", [input.resource, count(parts), input.risk.score]) if true\n",
            input.clone(),
        )
        .deny(&["PROD|abc|x|y|d3l3t3", "prod/customers/db has 3 parts, 0.72"]),
        case(
            "regex match and split",
            "package t\ndeny contains \"prod-like\" if regex.match(`^(prod|live)/`, input.resource)\n\
             deny contains concat(\"+\", regex.split(`[^a-z0-9]+`, \"prod/customers-db\")) if true\n\
             deny contains \"no\" if regex.match(`^dev/`, input.resource)\n",
            input.clone(),
        )
        .deny(&["prod+customers+db", "prod-like"]),
        case(
            "glob match",
            "package t\ndeny contains \"star\" if glob.match(\"prod/*/db\", [\"/\"], input.resource)\n\
             deny contains \"one segment\" if glob.match(\"prod/*\", [\"/\"], input.resource)\n\
             deny contains \"doublestar\" if glob.match(\"prod/**\", [\"/\"], input.resource)\n",
            input.clone(),
        )
        .deny(&["doublestar", "star"]),
        case(
            "time builtins",
            "package t\nns := time.parse_rfc3339_ns(input.time.now)\nclock := time.clock([ns, \"Europe/Berlin\"])\n\
             deny contains sprintf(\"%s %02d:%02d\", [time.weekday([ns, \"Europe/Berlin\"]), clock[0], clock[1]]) if ns == input.time.now_ns\n\
             deny contains \"date\" if time.date(ns) == [2026, 11, 23]\n\
             deny contains \"now\" if time.now_ns() > 0\n",
            input.clone(),
        )
        .deny(&["Monday 15:05", "date", "now"]),
        case(
            "nested paths and missing fields",
            "package t\ndeny contains input.agent.metadata.owner if true\ndeny contains \"missing\" if input.agent.metadata.nope.deeper\n\
             deny contains \"absent\" if not input.agent.metadata.nope\n",
            input.clone(),
        )
        .deny(&["absent", "finance-team"]),
        case(
            "object.get with defaults and paths",
            "package t\ndeny contains object.get(input.context, \"ticket\", \"no ticket\") if true\n\
             deny contains object.get(input, [\"agent\", \"metadata\", \"version\"], \"?\") if true\n\
             deny contains sprintf(\"%v\", [object.get(input.context, \"record_count\", 0)]) if true\n",
            input.clone(),
        )
        .deny(&["1.4.2", "12", "no ticket"]),
        case(
            "walk finds a key anywhere",
            "package t\ndeny contains sprintf(\"secret at %v\", [path]) if { walk(input, [path, value]); path[count(path) - 1] == \"password\"; value != \"\" }\n",
            json!({"context": {"db": {"password": "x"}}}),
        )
        .deny(&["secret at [\"context\", \"db\", \"password\"]"]),
        case(
            "json filter, remove and marshal",
            "package t\ndeny contains json.marshal(json.filter(input.agent, [\"name\", \"metadata/owner\"])) if true\n\
             deny contains json.marshal(json.remove(input.context, [\"reason\", \"environment\", \"record_count\"])) if true\n",
            input.clone(),
        )
        .deny(&[r#"{"consent":false}"#, r#"{"metadata":{"owner":"finance-team"},"name":"billing-bot"}"#]),
        case(
            "numbers and arithmetic",
            "package t\nscore := input.risk.score\nrequire_approval contains \"high\" if score >= input.tenant.approval_threshold - 0.1\n\
             deny contains \"never\" if score > 1\nrisk_adjustment := round(score * 100) / 4 + ceil(0.2) - floor(1.9) + abs(-1) + (7 % 4)\n\
             deny contains sprintf(\"%v %v %v\", [max([1, 5, 3]), sum([1, 2, 3.5]), min({4, 2})]) if true\n",
            input.clone(),
        )
        .approval(&["high"])
        .deny(&["5 6.5 2"])
        .risk(22.0),
        case(
            "default rules",
            "package t\ndefault level := \"low\"\nlevel := \"critical\" if input.risk.score > 0.9\ndeny contains level if true\n",
            input.clone(),
        )
        .deny(&["low"]),
        case(
            "functions",
            "package t\nis_prod(r) if startswith(r, \"prod/\")\nis_prod(r) if startswith(r, \"live/\")\n\
             label(action, resource) := sprintf(\"%s on %s\", [action, resource])\n\
             deny contains label(input.action, input.resource) if is_prod(input.resource)\n",
            input.clone(),
        )
        .deny(&["delete on prod/customers/db"]),
        case(
            "function defined twice with an else",
            "package t\nsize(n) := \"big\" if n > 100\nelse := \"small\"\ndeny contains size(input.context.record_count) if true\n",
            input.clone(),
        )
        .deny(&["small"]),
        case(
            "else chains",
            "package t\nlevel := \"critical\" if input.risk.score > 0.9\nelse := \"high\" if input.risk.score > 0.7\nelse := \"low\"\n\
             require_approval contains level if level != \"low\"\n",
            input.clone(),
        )
        .approval(&["high"]),
        case(
            "negation",
            "package t\nticketed if input.context.ticket\ndeny contains \"needs a ticket\" if not ticketed\ndeny contains \"never\" if not input.action\n",
            input.clone(),
        )
        .deny(&["needs a ticket"]),
        case(
            "with replaces input in a rule",
            "package t\nprod if startswith(input.resource, \"prod/\")\ndeny contains \"dev would pass\" if not prod with input.resource as \"dev/x\"\n",
            input.clone(),
        )
        .deny(&["dev would pass"]),
        case(
            "partial object rules",
            "package t\nlimit[k] := v if { some k, v in {\"delete\": 10, \"update\": 100} }\n\
             deny contains sprintf(\"over %d\", [limit[input.action]]) if input.context.record_count > limit[input.action]\n",
            input.clone(),
        )
        .deny(&["over 10"]),
        case(
            "membership and aggregates",
            "package t\ndeny contains \"crm\" if \"read\" in input.agent.permissions.crm\ndeny contains \"no admin\" if not \"admin\" in object.keys(input.agent.permissions)\n\
             deny contains sprintf(\"%d capabilities\", [count(input.agent.capabilities)]) if true\n",
            input.clone(),
        )
        .deny(&["3 capabilities", "crm", "no admin"]),
        case(
            "full data path to its own rules",
            "package acme.rules\nhelper := \"via data\"\ndeny contains data.acme.rules.helper if true\ndeny contains helper if true\n",
            input.clone(),
        )
        .deny(&["via data"]),
        case(
            "package with a quoted component",
            "package acme[\"my-rules\"]\ndeny contains \"quoted\" if true\n",
            input.clone(),
        )
        .deny(&["quoted"]),
        case(
            "net, semver, units and encodings",
            "package t\ndeny contains \"internal\" if net.cidr_contains(\"10.0.0.0/8\", input.ip)\n\
             deny contains \"new\" if semver.compare(input.version, \"1.4.0\") > 0\n\
             deny contains base64.encode(\"hi\") if true\ndeny contains hex.encode(\"hi\") if true\n\
             deny contains sprintf(\"%v\", [units.parse_bytes(\"2KiB\")]) if true\n",
            json!({"ip": "10.1.2.3", "version": "1.4.2"}),
        )
        .deny(&["2048", "6869", "aGk=", "internal", "new"]),
        case(
            "conflicting complete rule values are an error",
            "package t\nrisk_adjustment := 10 if input.context.environment == \"production\"\nrisk_adjustment := 20 if input.action == \"delete\"\n",
            input.clone(),
        )
        .error("conflict"),
        case(
            "the same complete rules without a conflict",
            "package t\nrisk_adjustment := 10 if input.context.environment == \"production\"\nrisk_adjustment := 20 if input.action == \"read\"\n",
            input.clone(),
        )
        .risk(10.0),
        case(
            "a complete rule with several values is an error",
            "package t\nowner := c if some c in input.agent.capabilities\ndeny contains owner if true\n",
            input.clone(),
        )
        .error("multiple outputs"),
        case(
            "a builtin error makes its expression undefined, as in OPA",
            "package t\ndeny contains \"big\" if to_number(input.context.reason) > 10\ndeny contains \"other\" if input.action == \"delete\"\n",
            input.clone(),
        )
        .deny(&["other"]),
        case(
            "type mismatches in comparisons are undefined",
            "package t\ndeny contains \"x\" if input.context.record_count > \"10\"\n",
            input.clone(),
        ),
    ]
}

fn run(engine: &RegoEngine, c: &Case) -> PolicyOutcome {
    let compiled = engine.compile(&[module(1, "p", c.rego)]).unwrap();
    let mut outcomes = compiled.evaluate_json(&c.input).unwrap();
    assert_eq!(outcomes.len(), 1);
    outcomes.remove(0)
}

fn mismatch(c: &Case, o: &PolicyOutcome) -> Option<String> {
    let ok = match c.error {
        Some(e) => o.error.as_deref().is_some_and(|got| got.contains(e)),
        None => {
            o.error.is_none() && o.deny == c.deny && o.require_approval == c.approval && o.risk_adjustment == c.risk
        }
    };
    (!ok).then(|| format!("{}: got {o:?}", c.name))
}

#[test]
fn conformance_table_on_both_evaluators() {
    let cases = cases();
    assert!(cases.len() >= 30);
    let auto = RegoEngine::new().unwrap();
    let interpreter = RegoEngine::new().unwrap().with_backend(Backend::Interpreter);
    let mut failures = Vec::new();
    for c in &cases {
        // Wrong rule types show already with an empty input; other cases must validate.
        if let (Err(d), None) = (auto.validate(c.rego), c.error) {
            failures.push(format!("{}: does not validate: {d:?}", c.name));
        }
        for (label, engine) in [("auto", &auto), ("interpreter", &interpreter)] {
            let outcome = run(engine, c);
            assert_eq!(outcome.policy, Some(policy_id(1)));
            if let Some(m) = mismatch(c, &outcome) {
                failures.push(format!("[{label}] {m}"));
            }
        }
    }
    assert!(failures.is_empty(), "{} failures:\n{}", failures.len(), failures.join("\n"));
}

/// Every case in one set, each `package t` made a package of its own: the modules that can share a VM run
/// do, and each case still gets its own expected outcome.
#[test]
fn conformance_table_in_one_shared_run() {
    let cases = cases();
    let modules: Vec<_> = cases
        .iter()
        .enumerate()
        .map(|(i, c)| module(i, "p", &c.rego.replacen("package t\n", &format!("package t{i}\n"), 1)))
        .collect();
    let (compiled, counts) = RegoEngine::new().unwrap().compile_counting(&modules);
    assert!(counts.sharing >= cases.len() / 2, "{counts:?}");
    let mut failures = Vec::new();
    for (i, c) in cases.iter().enumerate() {
        let outcome = compiled.evaluate_json(&c.input).unwrap().remove(i);
        assert_eq!(outcome.policy, Some(policy_id(i)));
        if let Some(m) = mismatch(c, &outcome) {
            failures.push(m);
        }
    }
    assert!(failures.is_empty(), "{} failures:\n{}", failures.len(), failures.join("\n"));
}

#[test]
fn the_vm_runs_what_it_can_run_exactly() {
    let engine = RegoEngine::new().unwrap();
    let on_vm = |rego: &str| engine.compile_counting(&[module(1, "p", rego)]).1.on_vm == 1;
    assert!(on_vm("package t\ndeny contains \"x\" if { some c in input.cs; c == 1 }\nmsg := sprintf(\"%v\", [1])\n"));
    assert!(on_vm("package t\ncounts := [n | some n in input.xs]\nf(x) := x + 1\n"));
    // `with` is not compiled by the VM; values that may conflict are not detected by it.
    assert!(!on_vm("package t\nx if input.a\ndeny if x with input.a as true\n"));
    assert!(!on_vm("package t\nr := 1 if input.a\nr := 2 if input.b\n"));
    assert!(!on_vm("package t\nr := v if some v in input.xs\n"));
    assert!(!on_vm("package t\nr := x if x := input.xs[_]\n"));
    assert!(!on_vm("package t\nf(x) := 1 if x\nf(x) := 2 if not x\n"));
}
