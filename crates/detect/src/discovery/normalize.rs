//! Normalisation of observed attributes: each keeps what identifies an agent and drops what
//! varies between its events (replica numbers, version numbers, the host part of an IP,
//! record ids in a path, a model's release date).

use std::net::IpAddr;

/// Lower-cased, trimmed, `None` when empty.
fn clean(s: &str) -> Option<String> {
    let t = s.trim();
    (!t.is_empty()).then(|| t.to_lowercase())
}

/// Whether a segment looks generated (a pod suffix, a hash): long enough, letters and digits
/// mixed.
fn is_generated(seg: &str) -> bool {
    let digits = seg.bytes().filter(u8::is_ascii_digit).count();
    seg.len() >= 5 && digits > 0 && digits < seg.len() && seg.bytes().all(|b| b.is_ascii_alphanumeric())
}

/// Letters then digits (`worker12`): a name with a replica number.
fn is_word_then_number(seg: &str) -> bool {
    let word = seg.trim_end_matches(|c: char| c.is_ascii_digit());
    word.len() < seg.len() && !word.is_empty() && word.bytes().all(|b| b.is_ascii_alphabetic())
}

/// `seg` with every run of digits replaced by one `#`.
fn fold_digits(seg: &str) -> String {
    let mut out = String::with_capacity(seg.len());
    let mut in_digits = false;
    for c in seg.chars() {
        if c.is_ascii_digit() {
            if !in_digits {
                out.push('#');
            }
            in_digits = true;
        } else {
            out.push(c);
            in_digits = false;
        }
    }
    out
}

/// A host name with replica numbers and generated suffixes folded:
/// `Invoice-Worker-12.prod` → `invoice-worker-#.prod`, `agent-7f9c8d-x2k4p` → `agent-*-*`.
pub fn host(raw: &str) -> Option<String> {
    let h = clean(raw)?;
    let h = h.trim_end_matches('.');
    if h.parse::<IpAddr>().is_ok() {
        return ip_prefix(h);
    }
    let mut out = String::with_capacity(h.len());
    for (i, label) in h.split('.').enumerate() {
        if i > 0 {
            out.push('.');
        }
        for (j, seg) in label.split(['-', '_']).enumerate() {
            if j > 0 {
                out.push('-');
            }
            if is_generated(seg) && !is_word_then_number(seg) {
                out.push('*');
            } else {
                out.push_str(&fold_digits(seg));
            }
        }
    }
    Some(out)
}

/// The network an address is in: `/24` for IPv4, `/48` for IPv6. `None` when not an address.
pub fn ip_prefix(raw: &str) -> Option<String> {
    match raw.trim().parse::<IpAddr>().ok()? {
        IpAddr::V4(v4) => {
            let o = v4.octets();
            Some(format!("{}.{}.{}.0/24", o[0], o[1], o[2]))
        }
        IpAddr::V6(v6) => {
            let s = v6.segments();
            Some(format!("{:x}:{:x}:{:x}::/48", s[0], s[1], s[2]))
        }
    }
}

/// Whether `raw` is an IPv4 or IPv6 address.
pub fn is_ip(raw: &str) -> bool {
    raw.trim().parse::<IpAddr>().is_ok()
}

/// The products a user agent names, without versions or comments, sorted:
/// `LangChain/0.1.5 python-requests/2.31.0 (Linux)` → `langchain python-requests`.
pub fn user_agent(raw: &str) -> Option<String> {
    let ua = clean(raw)?;
    let mut depth = 0usize;
    let mut outside = String::with_capacity(ua.len());
    for c in ua.chars() {
        match c {
            '(' => depth += 1,
            ')' => depth = depth.saturating_sub(1),
            _ if depth == 0 => outside.push(c),
            _ => {}
        }
    }
    let mut products: Vec<String> = outside
        .split_whitespace()
        .filter_map(|tok| {
            let name = tok.split('/').next().unwrap_or(tok);
            let name = name.trim_matches(|c: char| !c.is_alphanumeric());
            // A bare version ("1.2.3") names nothing.
            (!name.is_empty() && name.chars().any(char::is_alphabetic)).then(|| fold_digits(name))
        })
        .collect();
    products.sort();
    products.dedup();
    products.truncate(4);
    (!products.is_empty()).then(|| products.join(" "))
}

/// Script extensions that name what a runtime runs.
const SCRIPT_EXTENSIONS: [&str; 9] = [".py", ".js", ".mjs", ".ts", ".jar", ".rb", ".php", ".pl", ".sh"];

fn basename(path: &str) -> &str {
    path.rsplit(['/', '\\']).next().unwrap_or(path)
}

/// The program and the script or module it runs, versions folded:
/// `/usr/bin/python3.11 /opt/bots/invoice_bot.py --live` → `python# invoice_bot.py`;
/// `python -m triage.agent` → `python triage.agent`.
pub fn process(raw: &str) -> Option<String> {
    let p = clean(raw)?;
    let mut tokens = p.split_whitespace();
    let exe = basename(tokens.next()?);
    let exe = exe.strip_suffix(".exe").unwrap_or(exe);
    let exe = fold_digits(exe);
    let exe = exe.trim_end_matches(['.', '#']).to_owned() + if exe.contains('#') { "#" } else { "" };
    let rest: Vec<&str> = tokens.collect();
    let mut script = None;
    for (i, tok) in rest.iter().enumerate() {
        if *tok == "-m" || *tok == "-jar" {
            script = rest.get(i + 1).map(|s| basename(s).to_owned());
            break;
        }
        if tok.starts_with('-') {
            continue;
        }
        let name = basename(tok);
        if SCRIPT_EXTENSIONS.iter().any(|ext| name.ends_with(ext)) {
            script = Some(name.to_owned());
            break;
        }
    }
    Some(match script {
        Some(s) => format!("{exe} {s}"),
        None => exe,
    })
}

/// Whether a path segment is a record id rather than a route: digits, a UUID, long hex, or a
/// long token mixing letters and digits.
fn is_id_segment(seg: &str) -> bool {
    if seg.is_empty() {
        return false;
    }
    let digits = seg.bytes().filter(u8::is_ascii_digit).count();
    let hex = seg.bytes().all(|b| b.is_ascii_hexdigit() || b == b'-');
    digits == seg.len() || (hex && seg.len() >= 8 && digits > 0) || (seg.len() >= 16 && digits > 0)
}

/// An endpoint as host and route, ids and query dropped:
/// `https://API.openai.com/v1/threads/thread_8x7/runs?x=1` → `api.openai.com/v1/threads/{id}/runs`.
pub fn endpoint(raw: &str) -> Option<String> {
    let e = raw.trim();
    let e = e.split_once("://").map_or(e, |(_, rest)| rest);
    let e = e.split(['?', '#']).next().unwrap_or(e);
    let (host, path) = match e.find('/') {
        Some(0) => ("", e),
        Some(i) => (&e[..i], &e[i..]),
        None => (e, ""),
    };
    let mut out = host.to_lowercase();
    for seg in path.split('/').filter(|s| !s.is_empty()) {
        out.push('/');
        if is_id_segment(seg) || (seg.contains('_') && seg.bytes().any(|b| b.is_ascii_digit()) && seg.len() >= 8) {
            out.push_str("{id}");
        } else {
            out.push_str(&seg.to_lowercase());
        }
    }
    (!out.is_empty()).then_some(out)
}

/// A model name without its release date: `GPT-4o-2024-08-06` → `gpt-4o`,
/// `claude-3-5-sonnet-20241022` → `claude-3-5-sonnet`; `gpt-4` stays.
pub fn model(raw: &str) -> Option<String> {
    let m = clean(raw)?;
    let m = m.rsplit_once('/').map_or(m.as_str(), |(_, name)| name).to_owned();
    let segments: Vec<&str> = m.split(['-', '@', ':']).collect();
    let mut keep = segments.len();
    while keep > 1 && segments[keep - 1].bytes().all(|b| b.is_ascii_digit()) {
        keep -= 1;
    }
    let dated = segments[keep..].iter().any(|s| s.len() >= 4);
    if !dated || keep == segments.len() {
        return Some(m);
    }
    // Cut at the separator before the first dropped segment.
    let cut: usize = segments[..keep].iter().map(|s| s.len() + 1).sum::<usize>() - 1;
    Some(m[..cut].to_owned())
}

/// A tool's name, lower-cased, separators unified: `Send-Email` → `send_email`.
pub fn tool(raw: &str) -> Option<String> {
    let t = clean(raw)?;
    Some(t.chars().map(|c| if c == '-' || c == ' ' || c == '.' { '_' } else { c }).collect())
}

/// A plain identifier (API key fingerprint, agent id, source): lower-cased, trimmed.
pub fn ident(raw: &str) -> Option<String> {
    clean(raw)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hosts_fold_replicas_and_generated_suffixes() {
        assert_eq!(host("Invoice-Worker-12.prod").as_deref(), Some("invoice-worker-#.prod"));
        assert_eq!(host("invoice-worker-3.prod.").as_deref(), Some("invoice-worker-#.prod"));
        assert_eq!(host("agent-7f9c8d-x2k4p").as_deref(), Some("agent-*-*"));
        assert_eq!(host("worker3").as_deref(), Some("worker#"));
        assert_eq!(host("10.1.2.3").as_deref(), Some("10.1.2.0/24"));
        assert_eq!(host("  "), None);
    }

    #[test]
    fn addresses_keep_their_network() {
        assert_eq!(ip_prefix("10.20.30.40").as_deref(), Some("10.20.30.0/24"));
        assert_eq!(ip_prefix("2001:db8:abcd:12::1").as_deref(), Some("2001:db8:abcd::/48"));
        assert_eq!(ip_prefix("not-an-ip"), None);
        assert!(is_ip("::1") && !is_ip("10.0.0"));
    }

    #[test]
    fn user_agents_keep_products_without_versions() {
        assert_eq!(
            user_agent("LangChain/0.1.5 python-requests/2.31.0 (Linux x86_64)").as_deref(),
            Some("langchain python-requests")
        );
        assert_eq!(user_agent("python-requests/2.32.1 LangChain/0.2.0").as_deref(), Some("langchain python-requests"));
        assert_eq!(user_agent("OpenAI/Python 1.30.1").as_deref(), Some("openai"));
        assert_eq!(user_agent("curl/8.4.0").as_deref(), Some("curl"));
        assert_eq!(user_agent("1.2.3"), None);
    }

    #[test]
    fn processes_name_the_runtime_and_its_script() {
        assert_eq!(
            process("/usr/bin/python3.11 /opt/bots/invoice_bot.py --live").as_deref(),
            Some("python# invoice_bot.py")
        );
        assert_eq!(process("python3 invoice_bot.py").as_deref(), Some("python# invoice_bot.py"));
        assert_eq!(process("python -m triage.agent").as_deref(), Some("python triage.agent"));
        assert_eq!(process("java -Xmx2g -jar /srv/claims-agent.jar").as_deref(), Some("java claims-agent.jar"));
        assert_eq!(process("C:\\Tools\\Agent.EXE").as_deref(), Some("agent"));
        assert_eq!(process("node"), Some("node".into()));
    }

    #[test]
    fn endpoints_drop_ids_and_queries() {
        assert_eq!(
            endpoint("https://API.openai.com/v1/threads/thread_8x7abc12/runs?x=1").as_deref(),
            Some("api.openai.com/v1/threads/{id}/runs")
        );
        assert_eq!(endpoint("/v1/chat/completions").as_deref(), Some("/v1/chat/completions"));
        assert_eq!(endpoint("api.example.com/v2/items/12345").as_deref(), Some("api.example.com/v2/items/{id}"));
        assert_eq!(endpoint("/v1/files/0191c2d4-5e6f-7a8b-9c0d-1e2f3a4b5c6d").as_deref(), Some("/v1/files/{id}"));
        assert_eq!(endpoint("  "), None);
    }

    #[test]
    fn models_lose_their_release_date() {
        assert_eq!(model("GPT-4o-2024-08-06").as_deref(), Some("gpt-4o"));
        assert_eq!(model("claude-3-5-sonnet-20241022").as_deref(), Some("claude-3-5-sonnet"));
        assert_eq!(model("gpt-4").as_deref(), Some("gpt-4"));
        assert_eq!(model("meta/llama-3-70b").as_deref(), Some("llama-3-70b"));
        assert_eq!(model("gemini-1.5-pro@001").as_deref(), Some("gemini-1.5-pro@001"));
    }

    #[test]
    fn tools_unify_separators() {
        assert_eq!(tool(" Send-Email ").as_deref(), Some("send_email"));
        assert_eq!(tool("sql.query").as_deref(), Some("sql_query"));
    }
}
