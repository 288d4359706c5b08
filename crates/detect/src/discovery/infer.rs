//! What a cluster's fingerprint suggests: a name, capabilities, a description to classify
//! its type by, and how confident clustering is that it is one agent.

use super::{Cluster, Field, Profile};

/// A suggestion for registering a cluster as an agent.
#[derive(Debug, Clone, PartialEq)]
pub struct Suggestion {
    /// Lower-case words joined by `-`, e.g. `invoice-bot`.
    pub name: String,
    /// Tool names as words (`send email`), then what its endpoints do (`chat completion`).
    pub capabilities: Vec<String>,
    /// One line of what was seen, for classifying its type.
    pub description: String,
}

/// Clients too common to name an agent after.
const GENERIC_CLIENTS: [&str; 10] = [
    "python-requests",
    "curl",
    "node-fetch",
    "axios",
    "go-http-client",
    "okhttp",
    "python",
    "java",
    "mozilla",
    "openai",
];

/// What an endpoint's route does, by a word it contains.
const ENDPOINT_CAPABILITIES: [(&str, &str); 12] = [
    ("chat/completions", "chat completion"),
    ("/messages", "chat completion"),
    ("/responses", "chat completion"),
    ("generatecontent", "chat completion"),
    ("/invoke", "chat completion"),
    ("/completions", "text completion"),
    ("embeddings", "embeddings"),
    ("images", "image generation"),
    ("audio", "speech and audio"),
    ("moderations", "content moderation"),
    ("assistants", "assistants"),
    ("files", "file upload"),
];

fn top(profile: &Profile, field: Field) -> Option<&str> {
    profile.get(field).first().map(|(v, _)| v.as_str())
}

/// Words of `raw` joined by `-`, without replica marks and file extensions.
fn slug(raw: &str) -> String {
    let raw = [".py", ".js", ".mjs", ".ts", ".jar", ".rb", ".php", ".pl", ".sh"]
        .iter()
        .find_map(|ext| raw.strip_suffix(ext))
        .unwrap_or(raw);
    raw.split(|c: char| !c.is_ascii_alphanumeric()).filter(|w| !w.is_empty()).collect::<Vec<_>>().join("-")
}

fn name_of(profile: &Profile) -> String {
    // The script or module a runtime runs names the program best.
    if let Some(process) = top(profile, Field::Process) {
        let program = process.rsplit(' ').next().unwrap_or(process);
        let name = slug(program);
        if process.contains(' ') && !name.is_empty() && name != "index" && name != "main" && name != "app" {
            return name;
        }
    }
    if let Some(host) = top(profile, Field::Host).filter(|h| !h.contains('/')) {
        let label = host.split('.').next().unwrap_or(host);
        let name = label.split('-').filter(|s| *s != "#" && *s != "*").collect::<Vec<_>>().join("-");
        let name = slug(name.trim_end_matches('#'));
        if !name.is_empty() {
            return name;
        }
    }
    if let Some(client) = top(profile, Field::UserAgent)
        .and_then(|ua| ua.split(' ').find(|p| !GENERIC_CLIENTS.contains(p)))
        .map(slug)
        .filter(|s| !s.is_empty())
    {
        return format!("{client}-agent");
    }
    if let Some(key) = top(profile, Field::ApiKey) {
        let short: String = key.chars().rev().filter(char::is_ascii_alphanumeric).take(8).collect();
        return format!("agent-{}", short.chars().rev().collect::<String>());
    }
    "shadow-agent".to_owned()
}

/// Name, capabilities and description suggested by a fingerprint.
pub fn suggest(profile: &Profile) -> Suggestion {
    let mut capabilities: Vec<String> = profile.get(Field::Tools).iter().map(|(t, _)| t.replace('_', " ")).collect();
    for (endpoint, _) in profile.get(Field::Endpoint) {
        if let Some((_, what)) = ENDPOINT_CAPABILITIES.iter().find(|(word, _)| endpoint.contains(word))
            && !capabilities.iter().any(|c| c == what)
        {
            capabilities.push((*what).to_owned());
        }
    }
    capabilities.truncate(20);
    let mut description = String::from("unregistered agent");
    for (field, words) in [
        (Field::Process, "running"),
        (Field::Host, "on"),
        (Field::UserAgent, "with"),
        (Field::Model, "using"),
        (Field::Endpoint, "calling"),
    ] {
        if let Some(v) = top(profile, field) {
            description.push_str(&format!(" {words} {v}"));
        }
    }
    Suggestion { name: name_of(profile), capabilities, description }
}

/// How sure clustering is that a cluster is one agent (0..1): its cohesion, discounted
/// while it has few events and when nothing identifying (an API key, agent id or process)
/// is shared by most of them.
pub fn confidence(cluster: &Cluster) -> f64 {
    let size = 1.0 - (-(cluster.events as f64) / 10.0).exp();
    let identified = [Field::AgentId, Field::ApiKey, Field::Process]
        .iter()
        .any(|f| cluster.profile.get(*f).first().is_some_and(|(_, share)| *share >= 0.5));
    let c = cluster.cohesion * size * if identified { 1.0 } else { 0.85 };
    (c.clamp(0.0, 1.0) * 1000.0).round() / 1000.0
}

#[cfg(test)]
mod tests {
    use super::*;

    fn profile(values: &[(Field, &str)]) -> Profile {
        let mut p = Profile::default();
        for (f, v) in values {
            let mut vs = p.get(*f).to_vec();
            vs.push(((*v).to_owned(), 1.0));
            p.set(*f, vs);
        }
        p
    }

    #[test]
    fn names_come_from_the_script_then_the_host_then_the_client() {
        let p = profile(&[(Field::Process, "python# invoice_bot.py"), (Field::Host, "billing-#.prod")]);
        assert_eq!(suggest(&p).name, "invoice-bot");
        let p = profile(&[(Field::Process, "node"), (Field::Host, "claims-worker-#.prod")]);
        assert_eq!(suggest(&p).name, "claims-worker");
        let p = profile(&[(Field::UserAgent, "crewai python-requests")]);
        assert_eq!(suggest(&p).name, "crewai-agent");
        let p = profile(&[(Field::ApiKey, "sha256:00aa11bb22cc33dd")]);
        assert_eq!(suggest(&p).name, "agent-22cc33dd");
        assert_eq!(suggest(&Profile::default()).name, "shadow-agent");
    }

    #[test]
    fn capabilities_are_tools_as_words_then_endpoint_kinds() {
        let p = profile(&[
            (Field::Tools, "send_email"),
            (Field::Tools, "query_sql"),
            (Field::Endpoint, "api.openai.com/v1/chat/completions"),
            (Field::Endpoint, "api.openai.com/v1/embeddings"),
        ]);
        let s = suggest(&p);
        assert_eq!(s.capabilities, ["send email", "query sql", "chat completion", "embeddings"]);
        assert!(s.description.contains("calling api.openai.com/v1/chat/completions"));
    }
}
