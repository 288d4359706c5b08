//! Static checks over a parsed module (regorus's unstable AST, pinned with regorus 0.14).
//!
//! - `check_calls`: every called function exists (a builtin, `print`, or a function of the
//!   module) and a builtin gets as many arguments as it takes. regorus's interpreter only
//!   notices these when the call is reached, and its VM makes a wrong arity undefined.
//!   Builtins whose cost is set by an argument rather than by the size of their input (a
//!   count, a width, a network size) must get that argument as a small literal, and a few
//!   builtins are refused outright (`limits`): one call of these can allocate terabytes or
//!   run for hours inside regorus, where no timer or instruction limit reaches it.
//! - `may_conflict`: whether a value-producing rule of the module could yield two different
//!   values for one input. regorus's VM does not detect that conflict (it returns undefined,
//!   or the first value); its interpreter reports it, so such modules run on the interpreter.
//! - `defines`: whether the module has a rule (or default) of a given name, so the outcome
//!   module reads only the contract rules that exist.
//! - `reads_data`: whether the module refers to `data` at all (a reference or an import).
//!   One that does not depends only on its input and its own rules, so it can share an
//!   engine with other such modules without seeing them.

use std::collections::{BTreeMap, BTreeSet};

use regorus::unstable::{BUILTINS, Expr, Literal, Module, Query, Ref, Rule, RuleHead};
use regorus::utils::get_path_string;

mod limits;

/// The first call error of `module`, by position: (line, column, message).
pub(crate) fn check_calls(module: &Module) -> Option<(u32, u32, String)> {
    let package = get_path_string(&module.package.refr, None).ok()?;
    let functions: BTreeSet<String> = module
        .policy
        .iter()
        .filter_map(|r| match &**r {
            Rule::Spec { head: RuleHead::Func { refr, .. }, .. } => get_path_string(refr, None).ok(),
            _ => None,
        })
        .flat_map(|name| [format!("data.{package}.{name}"), name])
        .collect();
    let mut errors = Vec::new();
    let mut check = |e: &Expr| {
        let Expr::Call { fcn, params, .. } = e else { return };
        let Ok(name) = get_path_string(fcn, None) else { return };
        let span = root(fcn).span();
        if functions.contains(&name) || name == "print" {
            return;
        }
        match BUILTINS.get(name.as_str()) {
            // The relation form `walk(x, [path, value])` is the one output argument regorus takes.
            Some(_) if name == "walk" && params.len() == 2 => {}
            Some((_, arity)) if usize::from(*arity) != params.len() => {
                let plural = if *arity == 1 { "" } else { "s" };
                errors.push((
                    span.line,
                    span.col,
                    format!("`{name}` takes {arity} argument{plural}, not {}", params.len()),
                ));
            }
            Some(_) => {
                if let Err(message) = limits::check_call(&name, params) {
                    errors.push((span.line, span.col, message));
                }
            }
            None => errors.push((span.line, span.col, format!("unknown function `{name}`"))),
        }
    };
    for rule in &module.policy {
        visit_rule(rule, &mut check);
    }
    // `with f as g` runs `g` wherever `f` is called: a guarded builtin must not be put in
    // place of another, whose arguments were never checked.
    for rule in &module.policy {
        visit_rule_withs(rule, &mut |replacement: &Expr| {
            if let Ok(name) = get_path_string(replacement, None)
                && limits::is_guarded(&name)
            {
                let span = root(replacement).span();
                errors.push((span.line, span.col, format!("`{name}` cannot replace another function with `with`")));
            }
        });
    }
    errors.into_iter().min_by_key(|(line, column, _)| (*line, *column))
}

/// Whether some complete rule or function of `module` may produce conflicting values: it is
/// defined more than once, has a non-variable head (`obj[k] := v`), or its body iterates.
pub(crate) fn may_conflict(module: &Module) -> bool {
    let mut definitions: BTreeMap<String, usize> = BTreeMap::new();
    for rule in &module.policy {
        let Rule::Spec { head, bodies, .. } = &**rule else { continue };
        let refr = match head {
            RuleHead::Compr { refr, assign: Some(_), .. } | RuleHead::Func { refr, .. } => refr,
            RuleHead::Compr { assign: None, .. } | RuleHead::Set { .. } => continue,
        };
        if !matches!(&**refr, Expr::Var { .. }) || bodies.iter().any(|b| query_iterates(&b.query)) {
            return true;
        }
        let Ok(name) = get_path_string(refr, None) else { return true };
        *definitions.entry(name).or_default() += 1;
    }
    definitions.values().any(|n| *n > 1)
}

/// Whether `module` defines a rule named `name` (`name := …`, `name contains …`,
/// `name[k] := …`, `name.a := …`, `default name := …`, or a function of that name).
pub(crate) fn defines(module: &Module, name: &str) -> bool {
    module.policy.iter().any(|rule| {
        let refr = match &**rule {
            Rule::Spec {
                head: RuleHead::Compr { refr, .. } | RuleHead::Set { refr, .. } | RuleHead::Func { refr, .. },
                ..
            }
            | Rule::Default { refr, .. } => refr,
        };
        matches!(root(refr), Expr::Var { value, .. } if value.as_string().is_ok_and(|s| s.as_ref() == name))
    })
}

/// Whether `module` refers to `data` anywhere: an import rooted at it or the variable itself.
pub(crate) fn reads_data(module: &Module) -> bool {
    let is_data =
        |e: &Expr| matches!(e, Expr::Var { value, .. } if value.as_string().is_ok_and(|s| s.as_ref() == "data"));
    if module.imports.iter().any(|i| is_data(root(&i.refr))) {
        return true;
    }
    let mut reads = false;
    let mut check = |e: &Expr| reads |= is_data(e);
    for rule in &module.policy {
        visit_rule(rule, &mut check);
    }
    reads
}

/// The leftmost part of a reference (`strings` of `strings.nope`): where a call starts.
fn root(e: &Expr) -> &Expr {
    match e {
        Expr::RefDot { refr, .. } | Expr::RefBrack { refr, .. } => root(refr),
        _ => e,
    }
}

fn query_iterates(query: &Query) -> bool {
    query.stmts.iter().any(|s| match &s.literal {
        Literal::SomeVars { .. } | Literal::SomeIn { .. } => true,
        Literal::Expr { expr, .. } | Literal::NotExpr { expr, .. } => expr_iterates(expr),
        // `every` binds nothing outside its body.
        Literal::Every { domain, .. } => expr_iterates(domain),
    })
}

/// A reference with a non-constant index (`xs[_]`, `xs[i]`) may enumerate; comprehensions
/// collect their iterations into one value, so they are not looked into.
fn expr_iterates(e: &Expr) -> bool {
    let mut iterates = false;
    visit_shallow(e, &mut |e| {
        if let Expr::RefBrack { index, .. } = e {
            let constant = matches!(
                &**index,
                Expr::String { .. }
                    | Expr::RawString { .. }
                    | Expr::Number { .. }
                    | Expr::Bool { .. }
                    | Expr::Null { .. }
            );
            iterates |= !constant;
        }
    });
    iterates
}

fn visit_rule(rule: &Rule, f: &mut dyn FnMut(&Expr)) {
    match rule {
        Rule::Spec { head, bodies, .. } => {
            match head {
                RuleHead::Compr { refr, assign, .. } => {
                    visit(refr, f);
                    if let Some(a) = assign {
                        visit(&a.value, f);
                    }
                }
                RuleHead::Set { refr, key, .. } => {
                    visit(refr, f);
                    if let Some(k) = key {
                        visit(k, f);
                    }
                }
                RuleHead::Func { args, assign, .. } => {
                    args.iter().for_each(|a| visit(a, f));
                    if let Some(a) = assign {
                        visit(&a.value, f);
                    }
                }
            }
            for body in bodies {
                if let Some(a) = &body.assign {
                    visit(&a.value, f);
                }
                visit_query(&body.query, f);
            }
        }
        Rule::Default { value, .. } => visit(value, f),
    }
}

/// The replacement (`as …`) of every `with` modifier in `rule`, comprehensions included.
fn visit_rule_withs(rule: &Rule, f: &mut dyn FnMut(&Expr)) {
    let Rule::Spec { bodies, .. } = rule else { return };
    for body in bodies {
        visit_query_withs(&body.query, f);
    }
}

fn visit_query_withs(query: &Query, f: &mut dyn FnMut(&Expr)) {
    for stmt in &query.stmts {
        for w in &stmt.with_mods {
            f(&w.r#as);
        }
    }
    // Nested queries: `every` bodies and comprehensions.
    let mut nested: Vec<Ref<Query>> = Vec::new();
    visit_query(query, &mut |e| match e {
        Expr::ArrayCompr { query, .. } | Expr::SetCompr { query, .. } | Expr::ObjectCompr { query, .. } => {
            nested.push(query.clone());
        }
        _ => {}
    });
    for stmt in &query.stmts {
        if let Literal::Every { query, .. } = &stmt.literal {
            nested.push(query.clone());
        }
    }
    for q in nested {
        visit_query_withs(&q, f);
    }
}

fn visit_query(query: &Query, f: &mut dyn FnMut(&Expr)) {
    for stmt in &query.stmts {
        match &stmt.literal {
            Literal::SomeVars { .. } => {}
            Literal::SomeIn { key, value, collection, .. } => {
                if let Some(k) = key {
                    visit(k, f);
                }
                visit(value, f);
                visit(collection, f);
            }
            Literal::Expr { expr, .. } | Literal::NotExpr { expr, .. } => visit(expr, f),
            Literal::Every { domain, query, .. } => {
                visit(domain, f);
                visit_query(query, f);
            }
        }
        for w in &stmt.with_mods {
            visit(&w.refr, f);
            visit(&w.r#as, f);
        }
    }
}

/// Every expression under `e`, comprehension bodies included.
fn visit(e: &Expr, f: &mut dyn FnMut(&Expr)) {
    walk(e, f, true);
}

/// Every expression under `e`, but not inside comprehensions.
fn visit_shallow(e: &Expr, f: &mut dyn FnMut(&Expr)) {
    walk(e, f, false);
}

fn walk(e: &Expr, f: &mut dyn FnMut(&Expr), comprehensions: bool) {
    f(e);
    #[expect(unreachable_patterns, reason = "variants behind regorus features this crate does not enable")]
    match e {
        Expr::String { .. }
        | Expr::RawString { .. }
        | Expr::Number { .. }
        | Expr::Bool { .. }
        | Expr::Null { .. }
        | Expr::Var { .. } => {}
        Expr::Array { items, .. } | Expr::Set { items, .. } => items.iter().for_each(|i| walk(i, f, comprehensions)),
        Expr::Object { fields, .. } => fields.iter().for_each(|(_, k, v)| {
            walk(k, f, comprehensions);
            walk(v, f, comprehensions);
        }),
        Expr::ArrayCompr { term, query, .. } | Expr::SetCompr { term, query, .. } if comprehensions => {
            walk(term, f, comprehensions);
            visit_query(query, f);
        }
        Expr::ObjectCompr { key, value, query, .. } if comprehensions => {
            walk(key, f, comprehensions);
            walk(value, f, comprehensions);
            visit_query(query, f);
        }
        Expr::ArrayCompr { .. } | Expr::SetCompr { .. } | Expr::ObjectCompr { .. } => {}
        Expr::Call { fcn, params, .. } => {
            walk(fcn, f, comprehensions);
            params.iter().for_each(|p| walk(p, f, comprehensions));
        }
        Expr::UnaryExpr { expr, .. } => walk(expr, f, comprehensions),
        Expr::RefDot { refr, .. } => walk(refr, f, comprehensions),
        Expr::RefBrack { refr, index, .. } => {
            walk(refr, f, comprehensions);
            walk(index, f, comprehensions);
        }
        Expr::BinExpr { lhs, rhs, .. }
        | Expr::BoolExpr { lhs, rhs, .. }
        | Expr::ArithExpr { lhs, rhs, .. }
        | Expr::AssignExpr { lhs, rhs, .. } => {
            walk(lhs, f, comprehensions);
            walk(rhs, f, comprehensions);
        }
        Expr::Membership { key, value, collection, .. } => {
            if let Some(k) = key {
                walk(k, f, comprehensions);
            }
            walk(value, f, comprehensions);
            walk(collection, f, comprehensions);
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {

    use super::*;

    fn with_module<R>(rego: &str, f: impl FnOnce(&Module) -> R) -> R {
        let mut engine = regorus::Engine::new();
        engine.set_rego_v0(false);
        engine.add_policy("t.rego".into(), rego.into()).unwrap();
        f(&engine.get_modules()[0])
    }

    #[test]
    fn every_form_of_rule_head_defines_its_name() {
        let defined = |rego: &str| {
            with_module(rego, |module| {
                ["deny", "require_approval", "risk_adjustment"]
                    .into_iter()
                    .filter(|r| defines(module, r))
                    .collect::<Vec<_>>()
            })
        };
        assert_eq!(defined("package t\ndeny contains \"x\" if input.a\n"), ["deny"]);
        assert_eq!(defined("package t\ndefault risk_adjustment := 0\n"), ["risk_adjustment"]);
        assert_eq!(
            defined("package t\nrequire_approval if input.a\nrisk_adjustment.x := 1\n"),
            ["require_approval", "risk_adjustment"]
        );
        assert_eq!(defined("package t\ndenied := true\ndeny_all(x) := x\n"), Vec::<&str>::new());
    }

    #[test]
    fn data_is_read_through_references_and_imports() {
        assert!(!with_module("package t\ndeny contains \"x\" if input.data\n", reads_data));
        assert!(with_module("package t\ndeny contains \"x\" if data.t.y\ny := 1\n", reads_data));
        assert!(with_module("package t\nimport data.other\ndeny contains \"x\" if other.y\n", reads_data));
    }
}
