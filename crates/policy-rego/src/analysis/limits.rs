//! Builtins whose cost is set by an argument, not by the size of the input.
//!
//! One call of `numbers.range(0, input.n)` allocates `n` values before regorus looks at a
//! timer or an instruction count again, so a large `n` aborts the process; `sprintf` pads
//! to any width; `net.cidr_expand("::/0")` never ends. The rule that closes the class:
//! every argument that sets such a builtin's cost must be a literal within a small bound,
//! checked when the module is uploaded (and again whenever a stored module is compiled).
//! Builtins that no bound makes safe here are refused outright.

use regorus::unstable::Expr;

/// Most values `numbers.range` and `numbers.range_step` may produce.
pub(crate) const MAX_RANGE_VALUES: f64 = 10_000.0;
/// Most addresses `net.cidr_expand` may list.
pub(crate) const MAX_CIDR_ADDRESSES: u32 = 65_536;
/// Largest width or precision in a `sprintf` format.
pub(crate) const MAX_FORMAT_WIDTH: u64 = 100;
/// Longest replacement (or `concat` separator) a call may insert.
pub(crate) const MAX_REPLACEMENT_BYTES: usize = 64;
/// Largest shift of `bits.lsh` (numbers are arbitrary precision: a shift is an allocation).
pub(crate) const MAX_SHIFT: f64 = 1024.0;

/// Builtins refused in tenant policies, and why.
const REFUSED: &[(&str, &str)] = &[
    ("graph.reachable_paths", "lists every path of a graph, exponentially many"),
    ("http.send", "would let a policy reach the network"),
    ("opa.runtime", "would show the server's environment"),
    ("test.sleep", "blocks a policy thread"),
];

/// Whether `name` is a builtin this module refuses or bounds.
pub(crate) fn is_guarded(name: &str) -> bool {
    REFUSED.iter().any(|(n, _)| *n == name)
        || matches!(
            name,
            "numbers.range"
                | "numbers.range_step"
                | "net.cidr_expand"
                | "sprintf"
                | "replace"
                | "strings.replace_n"
                | "regex.replace"
                | "concat"
                | "bits.lsh"
        )
}

/// Whether a call of the builtin `name` with `params` (arity already checked) is bounded;
/// else why not.
pub(crate) fn check_call(name: &str, params: &[regorus::unstable::Ref<Expr>]) -> Result<(), String> {
    if let Some((_, why)) = REFUSED.iter().find(|(n, _)| *n == name) {
        return Err(format!("`{name}` is not available in tenant policies: it {why}"));
    }
    let arg = |i: usize| params.get(i).map(|p| &**p);
    match name {
        "numbers.range" => {
            let (a, b) = (number(arg(0), name, "first")?, number(arg(1), name, "second")?);
            within_range((b - a).abs() + 1.0, name)
        }
        "numbers.range_step" => {
            let (a, b) = (number(arg(0), name, "first")?, number(arg(1), name, "second")?);
            let step = number(arg(2), name, "third")?;
            if step < 1.0 {
                return Err(format!("`{name}` needs a step of at least 1"));
            }
            within_range(((b - a).abs() / step).floor() + 1.0, name)
        }
        "net.cidr_expand" => {
            let cidr = string(arg(0), name, "first")?;
            match cidr_addresses(&cidr) {
                Some(n) if n <= u128::from(MAX_CIDR_ADDRESSES) => Ok(()),
                Some(_) => Err(format!(
                    "`{name}` may list at most {MAX_CIDR_ADDRESSES} addresses (an IPv4 /16 or an IPv6 /112); test \
                     membership with `net.cidr_contains` instead"
                )),
                None => Err(format!("`{name}` needs a CIDR such as \"10.0.0.0/24\"")),
            }
        }
        "sprintf" => check_format(&string(arg(0), name, "format (first)")?),
        "replace" => {
            if string(arg(1), name, "second")?.is_empty() {
                return Err(format!("`{name}` needs a non-empty literal string to replace"));
            }
            replacement(arg(2), name, "third")
        }
        "regex.replace" => {
            string(arg(1), name, "pattern (second)")?;
            replacement(arg(2), name, "third")
        }
        "strings.replace_n" => check_replacements(arg(0), name),
        "concat" => replacement(arg(0), name, "separator (first)"),
        "bits.lsh" => {
            let shift = number(arg(1), name, "second")?;
            if (0.0..=MAX_SHIFT).contains(&shift) {
                Ok(())
            } else {
                Err(format!("`{name}` may shift by at most {MAX_SHIFT}"))
            }
        }
        _ => Ok(()),
    }
}

fn within_range(values: f64, name: &str) -> Result<(), String> {
    if values <= MAX_RANGE_VALUES {
        Ok(())
    } else {
        Err(format!("`{name}` may produce at most {MAX_RANGE_VALUES} numbers; iterate over the input instead"))
    }
}

/// A literal number (possibly negated), finite.
fn number(e: Option<&Expr>, name: &str, which: &str) -> Result<f64, String> {
    let value = match e {
        Some(Expr::Number { value, .. }) => value.as_f64().ok(),
        Some(Expr::UnaryExpr { expr, .. }) => match &**expr {
            Expr::Number { value, .. } => value.as_f64().ok().map(|v| -v),
            _ => None,
        },
        _ => None,
    };
    value.filter(|v| v.is_finite()).ok_or_else(|| {
        format!("the {which} argument of `{name}` sets its cost, so it must be a literal number, not a variable")
    })
}

/// A literal string.
fn string(e: Option<&Expr>, name: &str, which: &str) -> Result<String, String> {
    match e {
        Some(Expr::String { value, .. } | Expr::RawString { value, .. }) => {
            value.as_string().map(|s| s.to_string()).map_err(|_| literal_string(name, which))
        }
        _ => Err(literal_string(name, which)),
    }
}

fn literal_string(name: &str, which: &str) -> String {
    format!("the {which} argument of `{name}` sets its cost, so it must be a literal string, not a variable")
}

fn replacement(e: Option<&Expr>, name: &str, which: &str) -> Result<(), String> {
    let text = string(e, name, which)?;
    if text.len() <= MAX_REPLACEMENT_BYTES {
        Ok(())
    } else {
        Err(format!("the {which} argument of `{name}` may be at most {MAX_REPLACEMENT_BYTES} bytes"))
    }
}

/// `strings.replace_n`'s patterns: a literal object of non-empty literal keys and short
/// literal values.
fn check_replacements(e: Option<&Expr>, name: &str) -> Result<(), String> {
    let Some(Expr::Object { fields, .. }) = e else {
        return Err(format!("the first argument of `{name}` must be a literal object of replacements"));
    };
    for (_, key, value) in fields {
        if string(Some(key), name, "first")?.is_empty() {
            return Err(format!("`{name}` needs non-empty literal strings to replace"));
        }
        replacement(Some(value), name, "first")?;
    }
    Ok(())
}

/// `sprintf`'s format: literal, ASCII flags and verbs, widths and precisions within bounds.
fn check_format(format: &str) -> Result<(), String> {
    let refuse = |why: &str| Err(format!("the format of `sprintf` {why}"));
    let mut chars = format.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '%' {
            continue;
        }
        if chars.peek() == Some(&'%') {
            chars.next();
            continue;
        }
        let mut number = String::new();
        loop {
            match chars.next() {
                Some(d) if d.is_ascii_digit() => {
                    number.push(d);
                    if number.parse::<u64>().map_or(true, |n| n > MAX_FORMAT_WIDTH) {
                        return refuse(&format!("may use widths and precisions up to {MAX_FORMAT_WIDTH}"));
                    }
                }
                Some('.' | '+' | '-' | ' ' | '#') => number.clear(),
                Some('*') => return refuse("must give widths in the format, not as arguments (`*`)"),
                Some(verb) if verb.is_ascii_alphabetic() => break,
                Some(_) => return refuse("has a character in a verb that is not a flag, a digit or a letter"),
                None => return refuse("ends inside a verb"),
            }
        }
    }
    Ok(())
}

/// How many addresses a CIDR (`a.b.c.d/n` or `x::/n`) covers.
fn cidr_addresses(cidr: &str) -> Option<u128> {
    let (addr, prefix) = cidr.split_once('/')?;
    let prefix: u32 = prefix.parse().ok()?;
    let bits: u32 = match addr.parse::<std::net::IpAddr>().ok()? {
        std::net::IpAddr::V4(_) => 32,
        std::net::IpAddr::V6(_) => 128,
    };
    let host_bits = bits.checked_sub(prefix)?;
    1u128.checked_shl(host_bits).or(Some(u128::MAX))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_with_small_ascii_widths_pass() {
        assert!(check_format("%s is %d%% of %v, %.2f, %-10s, %08.3f").is_ok());
        assert!(check_format("%04000000000d").is_err());
        assert!(check_format("%101d").is_err());
        assert!(check_format("%.5000f").is_err());
        assert!(check_format("%²d").is_err());
        assert!(check_format("%*d").is_err());
        assert!(check_format("trailing %").is_err());
    }

    #[test]
    fn cidr_sizes() {
        assert_eq!(cidr_addresses("10.0.0.0/24"), Some(256));
        assert_eq!(cidr_addresses("10.0.0.0/16"), Some(65_536));
        assert_eq!(cidr_addresses("::/0"), Some(u128::MAX));
        assert_eq!(cidr_addresses("::/112"), Some(65_536));
        assert_eq!(cidr_addresses("10.0.0.0/33"), None);
        assert_eq!(cidr_addresses("nonsense"), None);
    }
}
