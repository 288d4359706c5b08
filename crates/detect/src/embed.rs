//! A built-in text embedder that needs no download: hashed word and character n-grams.
//!
//! Each text is lower-cased and split into words (letters and digits). Its features are the
//! words, adjacent word pairs, and the character 3- to 5-grams of each word padded with `^`
//! and `$` (so "payments" and "payment" share most features). Every feature is hashed with
//! FNV-1a (stable across builds and platforms, so stored vectors stay comparable) into one
//! of `dimensions` buckets with a sign taken from another hash bit, which keeps collisions
//! unbiased. Counts are damped (`1 + ln tf`), weighted by feature kind, and the vector is
//! L2-normalised, so the dot product of two embeddings is their cosine similarity.
//!
//! Words also carry the governance *concepts* they name ([`CONCEPTS`]: money movement, shell
//! access, personal data, deletion…), so paraphrases with no word in common still meet.
//!
//! Corpus statistics (IDF) are not used: weighting buckets by their document frequency did
//! not rank the search-quality fixture better (BENCHMARKS.md, "Search quality").
//!
//! The *fused* model ([`fuse`]) puts a hashing vector and the Prompt Guard's multilingual
//! encoder's vector of the same text side by side: the dot product of two fused vectors is
//! the mean of the two cosines, which ranks the fixture better than either alone.

/// Identifies the embedding model, stored beside every vector: vectors of different models
/// or versions are never compared.
pub const MODEL_NAME: &str = "agentgov-hashing";
pub const MODEL_VERSION: u32 = 1;
pub const DEFAULT_DIMENSIONS: usize = 512;

/// The fused model: the hashing embedder's vector ([`DEFAULT_DIMENSIONS`]) followed by the
/// multilingual encoder's (`guard::encoder`, 512 dimensions). Its version changes with the
/// hashing embedder's (the encoder's weights are pinned by checksum).
pub const FUSED_MODEL_NAME: &str = "agentgov-hashing+use-multilingual-v3";
pub const FUSED_MODEL_VERSION: u32 = 1000 * MODEL_VERSION + 1;
/// How much of a text the fused model's encoder half reads: its first tokens (about 15 ms
/// of CPU for a full window; the hashing half reads the whole text).
pub const FUSED_ENCODER_TOKENS: usize = 256;

const WORD_WEIGHT: f32 = 1.0;
const PAIR_WEIGHT: f32 = 0.7;
const CHAR_WEIGHT: f32 = 0.35;

/// Words too common in agent descriptions, or in questions about agents ("which agents
/// can…", "any tool that…"), to say anything about one agent.
const STOPWORDS: &[&str] = &[
    "a",
    "able",
    "agent",
    "agents",
    "all",
    "an",
    "and",
    "any",
    "anything",
    "are",
    "as",
    "assistant",
    "at",
    "be",
    "bot",
    "bots",
    "by",
    "can",
    "could",
    "do",
    "does",
    "for",
    "from",
    "has",
    "have",
    "help",
    "helps",
    "i",
    "in",
    "is",
    "it",
    "its",
    "me",
    "my",
    "of",
    "on",
    "or",
    "our",
    "something",
    "that",
    "the",
    "their",
    "them",
    "they",
    "this",
    "to",
    "tool",
    "tools",
    "us",
    "was",
    "we",
    "what",
    "which",
    "who",
    "will",
    "with",
    "you",
];

const CONCEPT_WEIGHT: f32 = 1.2;

/// Concepts of agent governance and the word stems that name them: a text mentioning any of
/// the stems also carries the concept, so "move money" meets "disburses wire transfers".
/// General vocabulary of the domain, not a list of any fixture's words; a word may name
/// several concepts ("ship" code or goods).
const CONCEPTS: &[(&str, &[&str])] = &[
    (
        "money",
        &[
            "money",
            "pay",
            "payment",
            "payout",
            "disburs",
            "refund",
            "reimburs",
            "wire",
            "transfer",
            "ach",
            "remit",
            "invoice",
            "bill",
            "charge",
            "fund",
            "cash",
            "settle",
            "ledger",
            "bank",
            "card",
            "payroll",
            "salar",
            "wallet",
            "crypto",
            "stablecoin",
            "treasur",
            "financ",
            "account",
            "transaction",
        ],
    ),
    ("purchase", &["buy", "purchas", "procur", "order", "checkout", "vendor", "supplier", "spend", "shop"]),
    (
        "shell",
        &[
            "shell",
            "bash",
            "ssh",
            "terminal",
            "command",
            "exec",
            "script",
            "sudo",
            "root",
            "cli",
            "powershell",
            "server",
            "host",
        ],
    ),
    (
        "personal_data",
        &["pii", "personal", "ssn", "address", "phone", "birth", "identit", "profile", "gdpr", "privacy", "sensitiv"],
    ),
    (
        "employees",
        &[
            "employe",
            "staff",
            "hr",
            "personnel",
            "workforce",
            "payroll",
            "hire",
            "hiring",
            "onboard",
            "recruit",
            "candidate",
            "resume",
            "benefit",
            "leave",
        ],
    ),
    (
        "health",
        &[
            "patient", "medical", "health", "clinic", "diagnos", "ehr", "emr", "phi", "hipaa", "prescri", "symptom",
            "doctor", "nurse", "care",
        ],
    ),
    (
        "access_control",
        &[
            "permission",
            "role",
            "rbac",
            "iam",
            "access",
            "grant",
            "privileg",
            "entitlement",
            "sso",
            "credential",
            "password",
            "secret",
            "token",
            "admin",
            "provision",
        ],
    ),
    ("deletion", &["delet", "remov", "purg", "eras", "wipe", "drop", "destroy", "truncat"]),
    (
        "messaging",
        &[
            "email", "mail", "inbox", "message", "smtp", "gmail", "outlook", "send", "notif", "sms", "slack", "chat",
            "reply",
        ],
    ),
    (
        "deployment",
        &[
            "deploy",
            "release",
            "ship",
            "production",
            "rollout",
            "ci",
            "pipeline",
            "merge",
            "commit",
            "repo",
            "git",
            "build",
            "kubernet",
        ],
    ),
    (
        "logistics",
        &[
            "ship", "deliver", "courier", "freight", "carrier", "logistic", "warehous", "inventor", "stock", "fulfil",
            "parcel", "track", "route",
        ],
    ),
    ("translation", &["translat", "language", "locali", "multilingu", "interpret"]),
    ("scheduling", &["calendar", "meeting", "schedul", "appointment", "booking", "invite"]),
    ("database", &["sql", "database", "query", "table", "bigquery", "snowflake", "postgres", "etl", "warehous"]),
    ("web", &["browser", "web", "website", "scrap", "crawl", "page", "click", "form", "headless", "navigat"]),
    ("legal", &["contract", "legal", "clause", "complian", "nda", "agreement", "regulat", "polic"]),
    ("security", &["vulnerab", "pentest", "scan", "threat", "malware", "incident", "siem", "alert", "exploit"]),
    ("marketing", &["campaign", "marketing", "advert", "seo", "social", "newsletter", "brand", "lead"]),
    ("support", &["ticket", "support", "helpdesk", "complaint", "customer", "faq", "escalat"]),
    ("documents", &["document", "doc", "knowledge", "wiki", "retriev", "manual", "pdf", "summar", "search"]),
];

/// The concepts a word names: a stem of [`CONCEPTS`] that starts the word (stems of two or
/// three letters must be the whole word, so "ci" does not match "city").
pub fn concepts(word: &str) -> impl Iterator<Item = &'static str> + '_ {
    CONCEPTS.iter().filter_map(move |(concept, stems)| {
        stems.iter().any(|stem| crate::text::matches(word, stem)).then_some(*concept)
    })
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HashingEmbedder {
    dimensions: usize,
}

impl Default for HashingEmbedder {
    fn default() -> Self {
        Self::new(DEFAULT_DIMENSIONS)
    }
}

fn fnv1a(bytes: &[u8], seed: u64) -> u64 {
    let mut hash = 0xcbf2_9ce4_8422_2325_u64 ^ seed;
    for b in bytes {
        hash ^= u64::from(*b);
        hash = hash.wrapping_mul(0x0000_0100_0000_01b3);
    }
    hash
}

/// Lower-cased words of letters and digits, stop words removed.
pub fn words(text: &str) -> Vec<String> {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .filter(|w| !STOPWORDS.contains(&w.as_str()))
        .collect()
}

impl HashingEmbedder {
    /// An embedder of `dimensions` buckets (at least 16).
    pub fn new(dimensions: usize) -> Self {
        Self { dimensions: dimensions.max(16) }
    }

    pub fn dimensions(&self) -> usize {
        self.dimensions
    }

    /// The embedding of `text`: unit length, or all zeros when it has no words.
    pub fn embed(&self, text: &str) -> Vec<f32> {
        let words = words(text);
        let mut counts: std::collections::HashMap<(u8, String), u32> = std::collections::HashMap::new();
        for w in &words {
            *counts.entry((0, w.clone())).or_default() += 1;
            for concept in concepts(w) {
                *counts.entry((3, concept.to_owned())).or_default() += 1;
            }
            let padded: Vec<char> = format!("^{w}$").chars().collect();
            for n in 3..=5 {
                for gram in padded.windows(n) {
                    *counts.entry((2, gram.iter().collect())).or_default() += 1;
                }
            }
        }
        for pair in words.windows(2) {
            *counts.entry((1, format!("{} {}", pair[0], pair[1]))).or_default() += 1;
        }
        let mut vector = vec![0.0_f32; self.dimensions];
        for ((kind, feature), tf) in counts {
            let weight = match kind {
                0 => WORD_WEIGHT,
                1 => PAIR_WEIGHT,
                2 => CHAR_WEIGHT,
                _ => CONCEPT_WEIGHT,
            };
            let hash = fnv1a(feature.as_bytes(), u64::from(kind));
            let bucket = (hash % self.dimensions as u64) as usize;
            let sign = if hash >> 63 == 0 { 1.0 } else { -1.0 };
            vector[bucket] += sign * weight * (1.0 + (tf as f32).ln());
        }
        normalize(&mut vector);
        vector
    }
}

/// The text an agent is embedded from: name, type, description, capabilities and
/// permissions as (resource, access) pairs. Shared by the registry and the search-quality
/// measurement, so what is measured is what ships.
pub fn agent_text(
    name: &str,
    agent_type: &str,
    description: Option<&str>,
    capabilities: &[String],
    permissions: &[(String, String)],
) -> String {
    let mut text = format!("{name}. Type: {agent_type}.");
    if let Some(d) = description.map(str::trim).filter(|d| !d.is_empty()) {
        text.push(' ');
        text.push_str(d);
        if !d.ends_with('.') {
            text.push('.');
        }
    }
    if !capabilities.is_empty() {
        text.push_str(" Capabilities: ");
        text.push_str(&capabilities.join(", "));
        text.push('.');
    }
    if !permissions.is_empty() {
        let parts: Vec<String> = permissions.iter().map(|(r, a)| format!("{r}: {a}")).collect();
        text.push_str(" Permissions: ");
        text.push_str(&parts.join(", "));
        text.push('.');
    }
    text
}

/// The fused vector of one text: `[hashing; encoder] / √2`. Of unit length when both halves
/// are, and the dot product of two such vectors is the mean of the two models' cosines
/// (equal weights ranked the search-quality fixture best: BENCHMARKS.md, "Search quality").
/// A text with no words but stop words has a zero hashing half and is compared by its
/// encoder half alone.
pub fn fuse(hashing: &[f32], encoder: &[f32]) -> Vec<f32> {
    hashing.iter().chain(encoder).map(|x| x * std::f32::consts::FRAC_1_SQRT_2).collect()
}

/// The hashing embedder's vector inside a fused one of `hashing_dims + encoder` values: its
/// first part, scaled back (exact).
pub fn hashing_half(fused: &[f32], hashing_dims: usize) -> Vec<f32> {
    fused.iter().take(hashing_dims).map(|x| x * std::f32::consts::SQRT_2).collect()
}

/// A hashing vector placed in the fused space of `fused_dims`: its dot product with a fused
/// vector is the hashing cosine alone (the encoder half is zero and the hashing half scaled
/// to make up for it), so an agent embedded before the fused model ranks by what it has
/// until it is embedded again.
pub fn hashing_in_fused(hashing: &[f32], fused_dims: usize) -> Vec<f32> {
    let mut v: Vec<f32> = hashing.iter().map(|x| x * std::f32::consts::SQRT_2).collect();
    v.resize(fused_dims.max(hashing.len()), 0.0);
    v
}

/// Scales `v` to unit length (leaves a zero vector alone).
pub fn normalize(v: &mut [f32]) {
    let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt();
    if norm > 0.0 {
        v.iter_mut().for_each(|x| *x /= norm);
    }
}

/// The dot product: the cosine similarity of two unit vectors.
///
/// Summed in eight independent lanes: a single running sum is one long chain of dependent
/// additions that the compiler may not reorder (floating-point addition is not
/// associative), while eight lanes vectorise. Search over many agents is this loop.
pub fn dot(a: &[f32], b: &[f32]) -> f32 {
    const LANES: usize = 8;
    let n = a.len().min(b.len());
    let (a, b) = (&a[..n], &b[..n]);
    let mut acc = [0.0_f32; LANES];
    let (a_chunks, b_chunks) = (a.chunks_exact(LANES), b.chunks_exact(LANES));
    let tail: f32 = a_chunks.remainder().iter().zip(b_chunks.remainder()).map(|(x, y)| x * y).sum();
    for (x, y) in a_chunks.zip(b_chunks) {
        for ((sum, x), y) in acc.iter_mut().zip(x).zip(y) {
            *sum += x * y;
        }
    }
    acc.iter().sum::<f32>() + tail
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Two fused vectors compare by the mean of their halves' cosines; the hashing half
    /// comes back exactly; a hashing vector in the fused space scores its own cosine.
    #[test]
    fn fused_vectors_compare_by_the_mean_of_the_two_cosines() {
        let e = HashingEmbedder::default();
        let (h1, h2) = (e.embed("moves money between accounts"), e.embed("pays suppliers by bank transfer"));
        let unit = |seed: f32| {
            let mut v: Vec<f32> = (0..512).map(|i| ((i as f32) * seed).sin()).collect();
            normalize(&mut v);
            v
        };
        let (e1, e2) = (unit(0.37), unit(0.41));
        let (f1, f2) = (fuse(&h1, &e1), fuse(&h2, &e2));
        assert_eq!(f1.len(), DEFAULT_DIMENSIONS + 512);
        assert!((dot(&f1, &f1) - 1.0).abs() < 1e-5);
        let mean = (dot(&h1, &h2) + dot(&e1, &e2)) / 2.0;
        assert!((dot(&f1, &f2) - mean).abs() < 1e-5);
        let back = hashing_half(&f1, DEFAULT_DIMENSIONS);
        assert!(back.iter().zip(&h1).all(|(a, b)| (a - b).abs() < 1e-6));
        let lifted = hashing_in_fused(&h2, f1.len());
        assert_eq!(lifted.len(), f1.len());
        assert!((dot(&f1, &lifted) - dot(&h1, &h2)).abs() < 1e-5);
        let stop_words = fuse(&e.embed("the and of"), &e1);
        assert!((dot(&stop_words, &f1) - dot(&e1, &e1) / 2.0).abs() < 1e-5, "compared by the encoder half");
    }

    #[test]
    fn embeddings_are_unit_length_deterministic_and_sized() {
        let e = HashingEmbedder::default();
        let v = e.embed("Processes refunds and payments for customers");
        assert_eq!(v.len(), DEFAULT_DIMENSIONS);
        assert!((dot(&v, &v) - 1.0).abs() < 1e-5);
        assert_eq!(v, e.embed("processes REFUNDS and payments, for customers!"));
        assert!(e.embed("  the and of ").iter().all(|x| *x == 0.0), "only stop words: no signal");
    }

    #[test]
    fn the_hash_is_pinned() {
        // Stored vectors must stay comparable across builds: FNV-1a, not the std hasher.
        assert_eq!(fnv1a(b"", 0), 0xcbf2_9ce4_8422_2325);
        assert_eq!(fnv1a(b"a", 0), 0xaf63_dc4c_8601_ec8c);
        assert_eq!(fnv1a(b"foobar", 0), 0x8594_4171_f739_67e8);
    }

    #[test]
    fn concepts_match_stems_and_short_stems_only_whole_words() {
        assert_eq!(concepts("disbursements").collect::<Vec<_>>(), ["money"]);
        assert!(concepts("ships").any(|c| c == "logistics") && concepts("ships").any(|c| c == "deployment"));
        assert!(concepts("ci").any(|c| c == "deployment"));
        assert_eq!(concepts("city").count(), 0, "a short stem is not a prefix");
        // A paraphrase with no shared word still meets on the concept.
        let e = HashingEmbedder::default();
        let payer = e.embed("Disburses vendor invoices by wire");
        let viewer = e.embed("Renders charts of website traffic");
        let query = e.embed("agents that can move money");
        assert!(dot(&query, &payer) > dot(&query, &viewer) + 0.1);
    }

    #[test]
    fn related_texts_are_closer_than_unrelated_ones() {
        let e = HashingEmbedder::default();
        let payments = e.embed("Payment agent: issues refunds, transfers money between accounts");
        let refunds = e.embed("refund processing and money transfers");
        let browser = e.embed("Headless browser that scrapes web pages and fills forms");
        assert!(dot(&payments, &refunds) > dot(&payments, &browser) + 0.1);
        // Inflections share character n-grams.
        let a = e.embed("payments");
        let b = e.embed("payment");
        assert!(dot(&a, &b) > 0.5, "{}", dot(&a, &b));
    }
}
