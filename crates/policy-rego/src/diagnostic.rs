//! regorus's error text → a position and a clean message.
//!
//! regorus reports a positioned error as
//! `"\n--> <file>:<line>:<col>\n  |\n<n> | <source line>\n  | ^\nerror: <message>"`; other
//! errors are a bare message.

use agentgov_domain::ports::RegoDiagnostic;

/// The file name modules are loaded under; it appears in regorus's messages.
pub(crate) const MODULE_FILE: &str = "policy.rego";

/// The first position and the message of a regorus error in `source` (1, 1 when it has
/// no position).
pub(crate) fn diagnostic(error: &dyn std::fmt::Display, source: &str) -> RegoDiagnostic {
    let mut d = parse(&format!("{error:#}"));
    d.column = char_column(source, d.line, d.column);
    d
}

/// regorus counts a tab as 4 columns; editors and this API count characters.
pub(crate) fn char_column(source: &str, line: u32, column: u32) -> u32 {
    let Some(text) = source.lines().nth(line.saturating_sub(1) as usize) else { return column };
    let mut width = 1;
    let mut chars = 0;
    for ch in text.chars() {
        if width >= column {
            break;
        }
        width += if ch == '\t' { 4 } else { 1 };
        chars += 1;
    }
    chars + 1
}

pub(crate) fn parse(text: &str) -> RegoDiagnostic {
    let position = text.lines().find_map(|l| l.trim_start().strip_prefix("-->")).and_then(position);
    let message = match text.rfind("error: ") {
        Some(i) => text[i + "error: ".len()..].trim(),
        None => text.trim(),
    };
    let message = message.replace(&format!("{MODULE_FILE}:"), "line ");
    let (line, column) = position.unwrap_or((1, 1));
    RegoDiagnostic { line, column, message: clean(&message) }
}

/// `" policy.rego:3:14"` → (3, 14).
fn position(location: &str) -> Option<(u32, u32)> {
    let mut parts = location.trim().rsplitn(3, ':');
    let column = parts.next()?.trim().parse().ok()?;
    let line = parts.next()?.trim().parse().ok()?;
    Some((line, column))
}

/// One line, without regorus's trailing help text.
fn clean(message: &str) -> String {
    let first = message.lines().next().unwrap_or("").trim();
    let first = first.strip_suffix(" Missing package declaration.").unwrap_or(first);
    if first.is_empty() { "invalid module".to_owned() } else { first.to_owned() }
}

/// An outcome's error: the message and where it happened, without source excerpts.
pub(crate) fn evaluation_error(error: &dyn std::fmt::Display, source: &str) -> String {
    let text = format!("{error:#}");
    let d = diagnostic(error, source);
    if text.contains("-->") { format!("{} (line {}, column {})", d.message, d.line, d.column) } else { d.message }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn positioned_errors_give_line_column_and_the_message() {
        let d = parse("\n--> policy.rego:5:12\n  |\n5 | }\n  | ^\nerror: expecting expression");
        assert_eq!((d.line, d.column, d.message.as_str()), (5, 12, "expecting expression"));
    }

    #[test]
    fn tabs_count_as_one_column() {
        assert_eq!(char_column("package t\n\tx := y", 2, 5), 2);
        assert_eq!(char_column("package t\n\t\tx", 2, 9), 3);
        assert_eq!(char_column("a := 1", 1, 3), 3);
        assert_eq!(char_column("a", 7, 3), 3);
    }

    #[test]
    fn bare_errors_are_at_the_start() {
        let d = parse("not a valid rule path");
        assert_eq!((d.line, d.column, d.message.as_str()), (1, 1, "not a valid rule path"));
    }

    #[test]
    fn the_file_name_does_not_leak() {
        let d = parse("--> policy.rego:3:1\nerror: rule conflicts with rule at policy.rego:2:1");
        assert_eq!(d.message, "rule conflicts with rule at line 2:1");
    }
}
