//! The command-line flags every xtask command reads the same way: switches, and flags that
//! take a number as `--flag N` or `--flag=N` (`_` allowed as a digit separator).

use anyhow::{Context, bail};

/// One recognised argument, in the order given (so a later repeat wins).
#[derive(Debug, PartialEq, Eq)]
pub enum Arg<'a> {
    Switch(&'a str),
    /// `raw` is the value as typed, for a caller's own range error.
    Number {
        flag: &'a str,
        value: u64,
        raw: &'a str,
    },
}

/// Reads `args` against the accepted `switches` and `numbers`, each number flag paired with
/// the least value it accepts. Anything else, a missing value, a value that is not a
/// non-negative integer or one below the flag's least is an error naming the argument.
pub fn parse<'a>(args: &'a [String], switches: &[&str], numbers: &[(&str, u64)]) -> anyhow::Result<Vec<Arg<'a>>> {
    let least = |flag: &str| numbers.iter().find(|(name, _)| *name == flag).map(|(_, min)| *min);
    let mut parsed = Vec::new();
    let mut args = args.iter();
    while let Some(arg) = args.next() {
        if switches.contains(&arg.as_str()) {
            parsed.push(Arg::Switch(arg));
            continue;
        }
        let (flag, raw) = match arg.split_once('=') {
            Some((flag, raw)) if least(flag).is_some() => (flag, raw),
            _ if least(arg).is_some() => {
                (arg.as_str(), args.next().with_context(|| format!("{arg} needs a number"))?.as_str())
            }
            _ => bail!("unexpected argument `{arg}` (see `cargo xtask help`)"),
        };
        let min = least(flag).unwrap_or_default();
        let wanted = if min == 0 { "a number".to_string() } else { format!("a number of at least {min}") };
        let value = raw
            .replace('_', "")
            .parse()
            .ok()
            .filter(|n| *n >= min)
            .with_context(|| format!("{flag} wants {wanted}, got `{raw}`"))?;
        parsed.push(Arg::Number { flag, value, raw });
    }
    Ok(parsed)
}

#[cfg(test)]
mod tests {

    use super::*;

    fn args(a: &[&str]) -> Vec<String> {
        a.iter().map(|a| a.to_string()).collect()
    }

    const SWITCHES: [&str; 1] = ["--fast"];
    const NUMBERS: [(&str, u64); 2] = [("--count", 1), ("--seed", 0)];

    #[test]
    fn switches_and_numbers_in_both_spellings_keep_their_order() {
        let a = args(&["--count", "1_000", "--fast", "--seed=0", "--count=7"]);
        assert_eq!(
            parse(&a, &SWITCHES, &NUMBERS).unwrap(),
            vec![
                Arg::Number { flag: "--count", value: 1000, raw: "1_000" },
                Arg::Switch("--fast"),
                Arg::Number { flag: "--seed", value: 0, raw: "0" },
                Arg::Number { flag: "--count", value: 7, raw: "7" },
            ]
        );
        assert_eq!(parse(&[], &SWITCHES, &NUMBERS).unwrap(), vec![]);
    }

    #[test]
    fn bad_arguments_are_refused_with_the_reason() {
        for (a, reason) in [
            (&["--count"][..], "--count needs a number"),
            (&["--count", "0"], "--count wants a number of at least 1, got `0`"),
            (&["--count=-3"], "--count wants a number of at least 1, got `-3`"),
            (&["--seed", "x"], "--seed wants a number, got `x`"),
            (&["--fast=1"], "unexpected argument `--fast=1`"),
            (&["--coun", "5"], "unexpected argument `--coun`"),
            (&["5"], "unexpected argument `5`"),
        ] {
            let err = parse(&args(a), &SWITCHES, &NUMBERS).unwrap_err().to_string();
            assert!(err.starts_with(reason), "{a:?}: {err}");
        }
    }
}
