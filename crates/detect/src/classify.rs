//! Predicts an agent's type from its name, description and capabilities.
//!
//! # Labels
//!
//! | label      | meaning |
//! |------------|---------|
//! | `llm`      | A generative assistant working from what it is given: drafts, rewrites, summarises, translates, chats. No retrieval corpus, few or no actions in other systems. |
//! | `rag`      | Answers questions grounded in a document collection it retrieves from (knowledge base, wiki, manuals), usually with citations. |
//! | `code`     | Writes, reviews, tests, builds or runs source code: repositories, pull requests, CI, notebooks, infrastructure as code. |
//! | `browser`  | Drives a web browser: navigates sites, clicks, fills forms, scrapes or screenshots pages. |
//! | `data`     | Analyses data: queries, dashboards, forecasts, scoring models, pipelines, data quality. |
//! | `workflow` | Automates a business process across systems: creates and updates records, routes approvals, schedules, provisions, notifies. |
//! | `support`  | Serves customers or employees who need help: tickets, help desk, chats and calls, account problems. |
//! | `finance`  | Moves or accounts for money: payments, payouts, invoices, payroll, treasury, bookkeeping. |
//! | `security` | Defends systems: vulnerability and threat detection, incident response, access reviews, secrets hygiene. |
//! | `other`    | None of the above, or too little text to tell: every prediction whose best label is below [`MIN_CONFIDENCE`] becomes `other`. |
//!
//! `finance` and `security` are *domains* while the others are *ways of working*: a payout job
//! is both `workflow` and `finance`, a vulnerability scanner both `code` and `security`. The
//! classifier picks one label, and such agents usually come out as the domain.
//! `tests/type_quality.rs` measures what that costs against a fixture labelled by way of
//! working only, next to the same model trained without the two domain labels.
//!
//! # Model
//!
//! A multinomial naive Bayes over binary features of the text (name, description and
//! capabilities joined; words from [`crate::embed::words`]): stemmed words, adjacent stem
//! pairs, the governance concepts of [`crate::embed::concepts`] (what an agent touches) and
//! the ways of working of `ACTIVITIES` (how it works: composes, retrieves, programs,
//! browses, analyses, operates, assists). It is trained when [`TypeClassifier::builtin`]
//! runs (about 10 ms optimised), from the seed corpus [`SEEDS`] written for this module:
//! around 400 short, generic descriptions of agents, at least 25 per label; no registered
//! agent or evaluation fixture is part of it. Priors are uniform,
//! since the seed corpus's class sizes say nothing about real fleets. The posterior is
//! softened by a temperature ([`TEMPERATURE`], chosen by leave-one-out over the seeds) so
//! that `confidence` is usable as a probability rather than naive Bayes's near-certainty.
//! Training and prediction are deterministic: no randomness, and ties go to the label listed
//! first in [`AGENT_TYPES`].

use std::collections::HashMap;

use crate::embed;
use crate::text::{matches, split_camel};

/// The labels the classifier predicts, in tie-breaking order.
pub const AGENT_TYPES: &[&str] =
    &["llm", "rag", "code", "browser", "data", "workflow", "support", "finance", "security", "other"];

/// Identifies the model (features, seed corpus and hyper-parameters). Stored beside every
/// prediction so predictions of different versions are not mixed.
pub const CLASSIFIER_VERSION: u32 = 1;

/// Below this probability of the best label the prediction is `other`.
pub const MIN_CONFIDENCE: f32 = 0.3;

/// Posterior temperature: log-likelihoods are divided by it before the softmax.
pub const TEMPERATURE: f32 = 1.5;

/// Additive (Lidstone) smoothing of feature counts.
const ALPHA: f32 = 0.3;

/// Words are stemmed to at most this many characters after suffix stripping.
const STEM_CHARS: usize = 6;

const OTHER: &str = "other";

/// A predicted type and the model's probability for it (in `[0, 1]`). When the label is
/// `other` because no label reached [`MIN_CONFIDENCE`], `confidence` is the probability of
/// the best label, so it is low by construction.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TypePrediction {
    pub label: &'static str,
    pub confidence: f32,
}

/// A trained naive Bayes model: one row of feature log-likelihoods per label.
#[derive(Debug, Clone)]
pub struct TypeClassifier {
    labels: Vec<&'static str>,
    /// Feature hash → column.
    vocabulary: HashMap<u64, usize>,
    /// `log_likelihood[label][feature]`.
    log_likelihood: Vec<Vec<f32>>,
    temperature: f32,
}

impl TypeClassifier {
    /// The classifier trained on the built-in seed corpus.
    pub fn builtin() -> TypeClassifier {
        Self::train(SEEDS, TEMPERATURE)
    }

    /// A classifier trained on `examples` of (label, text) at a posterior `temperature`. Its
    /// labels are those of the examples, in the order of [`AGENT_TYPES`]; labels missing from
    /// it are allowed (for experiments) and come last, in order of first appearance.
    pub fn train(examples: &[(&'static str, &str)], temperature: f32) -> TypeClassifier {
        let mut labels: Vec<&'static str> = Vec::new();
        for &(label, _) in examples {
            if !labels.contains(&label) {
                labels.push(label);
            }
        }
        labels.sort_by_key(|l| AGENT_TYPES.iter().position(|t| t == l).unwrap_or(AGENT_TYPES.len()));
        let mut vocabulary: HashMap<u64, usize> = HashMap::new();
        let mut documents: Vec<(usize, Vec<usize>)> = Vec::with_capacity(examples.len());
        for &(label, text) in examples {
            let class = labels.iter().position(|l| *l == label).unwrap_or(0);
            let ids = features(text)
                .into_iter()
                .map(|f| {
                    let next = vocabulary.len();
                    *vocabulary.entry(f).or_insert(next)
                })
                .collect();
            documents.push((class, ids));
        }
        let v = vocabulary.len();
        let mut counts = vec![vec![0.0_f32; v]; labels.len()];
        let mut totals = vec![0.0_f32; labels.len()];
        for (class, ids) in &documents {
            for &id in ids {
                counts[*class][id] += 1.0;
            }
            totals[*class] += ids.len() as f32;
        }
        let log_likelihood = counts
            .iter()
            .zip(&totals)
            .map(|(row, total)| {
                let denominator = (total + ALPHA * v as f32).ln();
                row.iter().map(|c| (c + ALPHA).ln() - denominator).collect()
            })
            .collect();
        TypeClassifier { labels, vocabulary, log_likelihood, temperature: temperature.max(1e-3) }
    }

    /// The labels this classifier can predict.
    pub fn labels(&self) -> &[&'static str] {
        &self.labels
    }

    /// The probability of each label for an agent, in the order of [`Self::labels`].
    pub fn probabilities(&self, name: &str, description: Option<&str>, capabilities: &[String]) -> Vec<f32> {
        let text = agent_text(name, description, capabilities);
        let ids: Vec<usize> = features(&text).iter().filter_map(|f| self.vocabulary.get(f).copied()).collect();
        let scores: Vec<f32> = self
            .log_likelihood
            .iter()
            .map(|row| ids.iter().map(|&id| row[id]).sum::<f32>() / self.temperature)
            .collect();
        softmax(&scores)
    }

    /// The most probable type of an agent, or `other` when no label is probable enough.
    pub fn predict(&self, name: &str, description: Option<&str>, capabilities: &[String]) -> TypePrediction {
        let probabilities = self.probabilities(name, description, capabilities);
        let mut best: Option<(usize, f32)> = None;
        for (i, &p) in probabilities.iter().enumerate() {
            if best.is_none_or(|(_, b)| p > b) {
                best = Some((i, p));
            }
        }
        match best {
            Some((i, p)) if p >= MIN_CONFIDENCE => {
                TypePrediction { label: self.labels[i], confidence: p.clamp(0.0, 1.0) }
            }
            Some((_, p)) => TypePrediction { label: OTHER, confidence: p.clamp(0.0, 1.0) },
            None => TypePrediction { label: OTHER, confidence: 0.0 },
        }
    }
}

/// The text an agent is classified by.
fn agent_text(name: &str, description: Option<&str>, capabilities: &[String]) -> String {
    let mut text = String::with_capacity(name.len() + description.map_or(0, str::len) + 16 * capabilities.len());
    text.push_str(name);
    if let Some(d) = description {
        text.push_str(". ");
        text.push_str(d);
    }
    for c in capabilities {
        text.push_str(". ");
        text.push_str(c);
    }
    text
}

fn softmax(scores: &[f32]) -> Vec<f32> {
    let max = scores.iter().copied().fold(f32::NEG_INFINITY, f32::max);
    if !max.is_finite() {
        return vec![1.0 / scores.len().max(1) as f32; scores.len()];
    }
    let exps: Vec<f32> = scores.iter().map(|s| (s - max).exp()).collect();
    let sum: f32 = exps.iter().sum();
    exps.iter().map(|e| e / sum).collect()
}

const SUFFIXES: &[&str] = &["ations", "ation", "ings", "ing", "ers", "ies", "er", "ed", "es", "s", "e"];

/// A crude stemmer: strips common English suffixes while at least three letters remain, then
/// keeps the first [`STEM_CHARS`] characters ("scheduling", "schedules" → "schedu").
fn stem(word: &str) -> String {
    let mut w: &str = word;
    loop {
        let before = w.len();
        for suffix in SUFFIXES {
            if let Some(rest) = w.strip_suffix(suffix)
                && rest.chars().count() >= 3
            {
                w = rest;
                break;
            }
        }
        if w.len() == before {
            break;
        }
    }
    w.chars().take(STEM_CHARS).collect()
}

/// Ways of working and the word stems that suggest them, matched like
/// [`embed::concepts`] (a stem starts the word; stems of up to three letters, or ending in
/// `$`, must be the whole word). They complement the governance concepts of the embedder, which are about
/// *what* an agent touches, with *how* it works, so that agents of domains the seed corpus
/// never mentions still share features with seeds of their type.
const ACTIVITIES: &[(&str, &[&str])] = &[
    (
        "compose",
        &[
            "draft",
            "write",
            "writ",
            "rewrit",
            "compos",
            "summar",
            "condens",
            "paraphras",
            "translat",
            "proofread",
            "caption",
            "copy",
            "tone",
            "wording",
            "recap",
            "outline",
            "explain",
            "suggest",
            "brainstorm",
            "prompt",
        ],
    ),
    (
        "retrieve",
        &[
            "answer",
            "question",
            "retriev",
            "cite",
            "citation",
            "grounded",
            "knowledge",
            "wiki",
            "handbook",
            "manual",
            "documentation",
            "docs",
            "faq",
            "lookup",
            "index",
            "embedding",
            "passage",
            "library",
            "archive",
        ],
    ),
    (
        "program",
        &[
            "code",
            "coding",
            "codebase",
            "source",
            "repo",
            "repositor",
            "pull",
            "commit",
            "branch",
            "merge",
            "test",
            "lint",
            "compil",
            "refactor",
            "function",
            "bug",
            "ci",
            "build",
            "sdk",
            "script",
            "developer",
            "program",
            "ide",
            "debug",
            "patch",
            "dockerfile",
            "terraform",
        ],
    ),
    (
        "browse",
        &[
            "browser",
            "browse",
            "web",
            "website",
            "site",
            "page",
            "click",
            "form$",
            "forms$",
            "headless",
            "navigat",
            "scrap",
            "crawl",
            "portal",
            "screenshot",
            "online",
            "internet",
            "url",
            "link$",
            "links$",
        ],
    ),
    (
        "analyse",
        &[
            "analy",
            "forecast",
            "predict",
            "score",
            "scoring",
            "model",
            "metric",
            "kpi",
            "dashboard",
            "report",
            "trend",
            "statistic",
            "insight",
            "cohort",
            "segment",
            "benchmark",
            "estimat",
            "measur",
            "comput",
            "calculat",
            "sql",
            "query",
            "queries",
            "dataset",
            "data",
            "chart",
            "optimi",
            "anomal",
            "detect",
        ],
    ),
    (
        "operate",
        &[
            "creat",
            "updat",
            "send",
            "sends",
            "submit",
            "book$",
            "books$",
            "booked$",
            "booking$",
            "bookings$",
            "schedul",
            "issu",
            "file$",
            "files$",
            "filed$",
            "filing$",
            "process",
            "route$",
            "routes$",
            "routed$",
            "routing$",
            "provision",
            "assign",
            "post$",
            "posts$",
            "posted$",
            "posting$",
            "publish",
            "sync",
            "renew",
            "place$",
            "places$",
            "placed$",
            "placing$",
            "dispatch",
            "register",
            "enrol",
            "notif",
            "trigger",
            "approv",
            "automat",
            "move",
            "archiv",
            "generat",
            "raise",
            "adjust",
            "toggle",
            "apply",
        ],
    ),
    (
        "assist",
        &[
            "customer",
            "caller",
            "help",
            "ticket",
            "resolv",
            "troubleshoot",
            "complain",
            "enquir",
            "inquir",
            "chat",
            "guest",
            "member",
            "citizen",
            "case",
            "support",
            "servic",
            "shopper",
            "user",
            "users",
            "policyholder",
        ],
    ),
];

fn activities(word: &str) -> impl Iterator<Item = &'static str> + '_ {
    ACTIVITIES
        .iter()
        .filter_map(move |(activity, stems)| stems.iter().any(|stem| matches(word, stem)).then_some(*activity))
}

/// FNV-1a over the parts of a feature, each part followed by a separator byte, starting from
/// a seed for the feature's kind. 64 bits make collisions among a few thousand features
/// negligible, and hashing avoids allocating a string per feature.
fn feature_hash(kind: u8, parts: &[&str]) -> u64 {
    let mut hash = 0xcbf2_9ce4_8422_2325_u64 ^ u64::from(kind);
    for part in parts {
        for b in part.bytes().chain(std::iter::once(0xff)) {
            hash ^= u64::from(b);
            hash = hash.wrapping_mul(0x0000_0100_0000_01b3);
        }
    }
    hash
}

/// The distinct features of a text, hashed: stems, adjacent stem pairs, concepts and
/// activities.
fn features(text: &str) -> Vec<u64> {
    let words: Vec<String> =
        embed::words(&split_camel(text)).into_iter().filter(|w| !w.chars().all(|c| c.is_ascii_digit())).collect();
    let stems: Vec<String> = words.iter().map(|w| stem(w)).collect();
    let mut out: Vec<u64> = Vec::with_capacity(4 * words.len());
    for (word, s) in words.iter().zip(&stems) {
        out.push(feature_hash(b'w', &[s]));
        out.extend(embed::concepts(word).map(|c| feature_hash(b'c', &[c])));
        out.extend(activities(word).map(|a| feature_hash(b'a', &[a])));
    }
    out.extend(stems.windows(2).map(|pair| feature_hash(b'p', &[&pair[0], &pair[1]])));
    out.sort_unstable();
    out.dedup();
    out
}

/// The seed corpus: (label, text) examples written for this module, at least 25 per label.
/// Generic descriptions in varied phrasing; none is taken from a registered agent or from the
/// evaluation fixture.
pub const SEEDS: &[(&str, &str)] = &[
    // llm
    (
        "llm",
        "Drafting assistant that writes first versions of blog articles, speeches and announcements from a short brief",
    ),
    ("llm", "Rewrites awkward paragraphs so they read clearly, keeping the author's tone"),
    ("llm", "Brainstorming partner for product names, taglines and slogans"),
    ("llm", "Condenses long reports and email threads into a handful of bullet points"),
    ("llm", "Proofreader: fixes grammar, spelling and punctuation in any text pasted into it"),
    ("llm", "Translates short messages and marketing copy between English, French and Italian"),
    ("llm", "Generates poems, short stories and creative writing prompts on request"),
    ("llm", "Text generator prompted with our style guide to produce on-brand copy"),
    ("llm", "Explains complicated topics in plain language for non-experts"),
    ("llm", "Conversational model answering general knowledge questions from its own training; no tools attached"),
    ("llm", "Tone checker suggesting friendlier wording for outgoing messages"),
    ("llm", "Writes job postings and interview question sets from a role outline"),
    ("llm", "Outline generator for presentations and slide decks"),
    ("llm", "Tags paragraphs with topic, tone and intent using a large language model"),
    ("llm", "Image generation model that creates illustrations and icons from text prompts"),
    ("llm", "Turns raw meeting notes into a tidy recap with owners and action items"),
    ("llm", "Suggests polite replies for the user to edit before sending them"),
    ("llm", "Role-play tutor that quizzes learners and explains their mistakes"),
    ("llm", "Headline and subject line writer producing variants for A/B tests"),
    ("llm", "GPT wrapper exposing a completion endpoint with a fixed system prompt for internal teams"),
    ("llm", "Paraphrases legal jargon into everyday English"),
    ("llm", "Writes product copy from a bullet list of features"),
    ("llm", "General chat assistant for writing, editing and ideation without access to company systems"),
    ("llm", "Produces synthetic example dialogues for fine-tuning other models"),
    ("llm", "Essay feedback coach commenting on structure, clarity and argument"),
    ("llm", "Language model that pulls names, dates and amounts out of pasted text into JSON"),
    ("llm", "Persona chatbot that stays in character for interactive fiction"),
    ("llm", "Prompt engineering playground: compare completions from several foundation models"),
    ("llm", "Caption writer: describes photos and writes alt text"),
    ("llm", "Text summarization and rewriting copilot for the marketing team"),
    ("llm", "Rewrites patient leaflets at a sixth-grade reading level"),
    ("llm", "Writes first drafts of formal letters from a few instructions"),
    ("llm", "Proposes opening lines and subject lines for outreach emails but never sends anything"),
    ("llm", "Creates quiz questions and lesson plans for teachers"),
    ("llm", "Summarises customer interviews into themes and memorable quotes"),
    ("llm", "Turns a product specification into a friendly FAQ draft"),
    ("llm", "Writes internal announcements and change communications"),
    ("llm", "Converts dense technical text into a one-page executive summary"),
    ("llm", "Composes personalised thank-you notes to donors for staff to send"),
    ("llm", "Rewrites policy text to be inclusive and free of jargon"),
    ("llm", "Writes scripts for explainer videos and podcasts"),
    ("llm", "Rewrites rambling user feedback into concise bug reports"),
    ("llm", "Dictation assistant that tidies spoken notes into readable text"),
    ("llm", "Explains what a contract clause means and suggests plainer alternative wording"),
    ("llm", "Writes property descriptions for real-estate listings from a few facts"),
    ("llm", "Converts bullet notes into a formal memo"),
    ("llm", "Classifies comments as toxic, spam or acceptable with a language model"),
    ("llm", "Reads scanned letters and writes a short summary of the key facts"),
    ("llm", "Adapts a text into several languages, localising idioms and tone"),
    // rag
    (
        "rag",
        "Answers employee questions by retrieving passages from the internal knowledge base and citing the sources",
    ),
    ("rag", "Semantic search over policy documents that returns grounded answers with links"),
    ("rag", "Question answering over product documentation using a vector index"),
    ("rag", "Finds the relevant section of technical manuals and quotes it back"),
    ("rag", "Retrieval-augmented chatbot grounded in the company wiki"),
    ("rag", "Recalls past discussions by searching embeddings of chat history"),
    ("rag", "Indexes uploaded PDFs into embeddings and answers questions with page references"),
    ("rag", "Answers questions about the product catalogue from spec sheets and datasheets"),
    ("rag", "Cites the matching clause of the staff handbook when people ask about expenses or holidays"),
    ("rag", "Vector search plus answer synthesis over patents and standards documents"),
    ("rag", "Regulation library assistant that retrieves the relevant article and explains it with a citation"),
    ("rag", "Developer portal assistant answering API usage questions from the reference docs"),
    ("rag", "Searches runbooks to propose troubleshooting steps to engineers, linking each source"),
    ("rag", "Retrieves precedent documents from the document store to answer lawyers' questions"),
    ("rag", "Retrieves snippets from the source tree to explain how a module works"),
    ("rag", "Knowledge retrieval across Notion pages and Google Docs with citations"),
    ("rag", "Chunks and embeds uploaded documents, then answers questions grounded in them"),
    ("rag", "Hybrid keyword and vector search across the document management system"),
    ("rag", "FAQ retriever that matches a user's question to the closest known answer"),
    ("rag", "Answers analysts' questions about past studies by searching the report archive"),
    ("rag", "Answers learners' questions from course materials and lecture transcripts"),
    ("rag", "Looks up the right standard operating procedure and lists its steps"),
    ("rag", "Retrieval bot over SharePoint sites for project questions"),
    ("rag", "Answers clinicians' questions from drug formularies and treatment guidelines, with references"),
    ("rag", "Finds similar solved cases in ticket history to suggest an answer"),
    ("rag", "Intranet search assistant returning answers with source links"),
    ("rag", "Answers questions about insurance policy wordings from the policy document library"),
    ("rag", "RAG pipeline: retriever, reranker and generator over product knowledge articles"),
    ("rag", "Looks up maintenance procedures in the aircraft technical library and cites the page"),
    ("rag", "Answers questions about published sustainability reports from the filings themselves"),
    ("rag", "Grounded assistant over municipal codes and bylaws"),
    ("rag", "Answers field engineers' questions from wiring diagrams and service bulletins"),
    ("rag", "Searches case notes and prior rulings and answers with citations"),
    ("rag", "Chat with your documents: upload files and ask questions about them"),
    ("rag", "Answers pharmacists' questions from drug monographs with references"),
    ("rag", "Answers questions about engineering standards, quoting section numbers"),
    ("rag", "Finds the relevant passage in historical archives to answer researchers' questions"),
    ("rag", "Retrieves answers from the product specification repository for pre-sales engineers"),
    ("rag", "Answers bidders' questions from the tender documents"),
    ("rag", "Gives grounded answers from the quality management system procedures"),
    ("rag", "Answers questions about suppliers from contracts, scorecards and correspondence on file"),
    // code
    ("code", "Writes, refactors and explains source code in Python, TypeScript and Go"),
    ("code", "Reviews pull request diffs and leaves inline comments about bugs and readability"),
    ("code", "Repairs failing unit tests and opens a merge request with the patch"),
    ("code", "Autocompletes code in the editor and generates boilerplate"),
    ("code", "Bumps library versions in the lockfile and adapts call sites to breaking API changes"),
    ("code", "Runs the test suite in a sandbox and reports coverage"),
    ("code", "Generates Terraform and Pulumi modules for cloud resources"),
    ("code", "Coding agent: clones a repository, implements an issue and pushes a branch"),
    ("code", "Lints and formats source files, then commits the fixes"),
    ("code", "Ports legacy COBOL programs to Java"),
    ("code", "Writes schema migrations and ORM models from a data model description"),
    ("code", "Debugging assistant that reads stack traces and proposes code fixes"),
    ("code", "Executes Python snippets in a sandboxed interpreter and returns the output"),
    ("code", "Generates API client libraries from OpenAPI specifications"),
    ("code", "Writes Dockerfiles, Makefiles and build scripts for services"),
    ("code", "Bisects the commit history to find the change that introduced a regression"),
    ("code", "Writes docstrings and README sections from the code itself"),
    ("code", "Developer agent that runs build commands in a terminal and edits files in the workspace"),
    ("code", "Turns Jupyter notebooks into tested Python packages"),
    ("code", "Scaffolds new microservices from templates and wires up the CI configuration"),
    ("code", "Resolves merge conflicts and rebases feature branches"),
    ("code", "Writes end-to-end test scripts from user stories"),
    ("code", "Profiles slow functions and suggests performance optimisations in the code"),
    ("code", "Code interpreter that writes and runs programs to answer computational questions"),
    ("code", "GitHub app that reads compiler errors in CI logs and suggests patches"),
    ("code", "Implements small features from Jira tickets and opens pull requests"),
    ("code", "Adds type annotations across a codebase"),
    ("code", "Software engineering copilot for the IDE: refactor, rename, extract function"),
    ("code", "Generates SQL stored procedures and database functions together with tests"),
    ("code", "Mobile developer agent writing Swift and Kotlin screens"),
    ("code", "Writes GitHub Actions workflows and fixes broken pipelines"),
    ("code", "Authors Helm charts and Kubernetes manifests and opens pull requests for them"),
    ("code", "Fixes compiler and type-checker errors across the project"),
    ("code", "Splits a monolith into modules and updates imports"),
    ("code", "Writes Solidity smart contracts and runs their unit tests"),
    ("code", "Front-end developer agent building React components from designs"),
    ("code", "Migrates code from Python 2 to Python 3"),
    ("code", "Generates fuzzing harnesses and runs them against libraries"),
    ("code", "Compiles and packages the project and publishes build artifacts"),
    ("code", "Writes PySpark job code and unit tests for it"),
    ("code", "Writes and tests bash one-liners and shell scripts on request"),
    ("code", "Explains unfamiliar code to new developers line by line"),
    ("code", "Scripts game levels in C# for the Unity project"),
    ("code", "Works inside a dev container: edits code, runs linters and tests, commits"),
    // browser
    ("browser", "Automates a headless Chrome session to navigate websites, click buttons and fill in forms"),
    ("browser", "Scrapes product listings and reviews from public web pages"),
    ("browser", "Signs in to partner extranets through the browser and exports reports as CSV"),
    ("browser", "Looks things up online by opening search results and reading the articles"),
    ("browser", "Takes screenshots of web pages and checks their layout"),
    ("browser", "Operates airline and event websites to book tickets through their checkout pages"),
    ("browser", "Puppeteer runner that performs scripted clicks through the web app"),
    ("browser", "Watches competitor websites for changes and captures page snapshots"),
    ("browser", "Completes multi-step signup wizards on SaaS websites to open trial accounts"),
    ("browser", "Computer-use agent controlling a browser tab with mouse and keyboard actions"),
    ("browser", "Extracts tables from HTML pages into spreadsheets"),
    ("browser", "Crawls a site map to find broken links and missing images"),
    ("browser", "Navigates online shops to compare offers and add items to the cart"),
    ("browser", "Reads job boards and collects new postings that match criteria"),
    ("browser", "Web RPA bot that operates legacy admin consoles which have no API"),
    ("browser", "Collects news articles from publisher websites every morning"),
    ("browser", "Checks appointment availability on booking sites and grabs open slots"),
    ("browser", "Downloads usage reports from cloud provider consoles by driving the browser"),
    ("browser", "Selenium-driven agent that replays recorded user journeys in the browser"),
    ("browser", "Posts listings to classified ad websites by filling their web forms"),
    ("browser", "Browser extension agent that summarises the current page and can follow links"),
    ("browser", "Visits municipal websites to gather permit and zoning notices"),
    ("browser", "Headless browser rendering JavaScript-heavy pages for downstream parsing"),
    ("browser", "Navigates online banking web pages to download statements where no API exists"),
    ("browser", "Web navigator: searches sites, pages through results and copies text into notes"),
    ("browser", "Uploads documents to web portals that only accept manual uploads through a browser"),
    ("browser", "Monitors airfares on travel sites and alerts when they drop"),
    ("browser", "Reads values off a web dashboard by loading it periodically"),
    ("browser", "Logs into the insurer's web portal and reads claim status pages"),
    ("browser", "Fills in online visa application forms for travellers"),
    ("browser", "Browses government procurement websites for new tenders"),
    ("browser", "Checks out carts on retail websites with a headless browser"),
    ("browser", "Visits review sites and copies ratings into a sheet"),
    ("browser", "Navigates the HR web portal to submit timesheets"),
    ("browser", "Reserves courts on the sports club's booking website"),
    ("browser", "Scrapes real-estate listing websites for new properties"),
    ("browser", "Navigates court e-filing websites to download docket entries"),
    ("browser", "Uses web apps like a person: scrolls, types, clicks and reads the screen"),
    ("browser", "Fills quote forms on carrier websites to compare shipping rates"),
    ("browser", "Saves web pages as PDFs for evidence"),
    // data
    ("data", "Runs SQL against the data warehouse to answer metric questions"),
    ("data", "Builds charts and dashboards from analytics tables"),
    ("data", "Forecasts revenue and demand with time series models"),
    ("data", "Cleans, deduplicates and joins CSV datasets"),
    ("data", "Data pipeline agent that extracts, transforms and loads records into the lakehouse"),
    ("data", "Detects anomalies in KPIs and explains what drove them"),
    ("data", "Trains machine learning models and scores new records in batch"),
    ("data", "Profiles tables for missing values, outliers and schema drift"),
    ("data", "Natural-language interface that writes SQL for business users and returns result sets"),
    ("data", "Computes cohort retention and funnel conversion"),
    ("data", "Statistics helper for experiments: p-values, confidence intervals, sample sizes"),
    ("data", "Aggregates event logs into weekly usage reports"),
    ("data", "Segments customers by behaviour with clustering"),
    ("data", "Maintains dbt models and documents data lineage"),
    ("data", "Exports pivot tables from the BI tool for the monthly operations review"),
    ("data", "Labels and annotates datasets for model training"),
    ("data", "Geospatial analysis of store locations and catchment areas"),
    ("data", "Quantifies NPS trends by region and product line"),
    ("data", "Estimates customer lifetime value from order history"),
    ("data", "Reconciles row counts between source systems and the warehouse"),
    ("data", "Tunes Spark jobs and big data queries on the cluster"),
    ("data", "Builds feature tables for the machine learning platform"),
    ("data", "Monitors model drift and prediction quality in production"),
    ("data", "Queries Redshift and Postgres replicas to produce ad hoc analyses"),
    ("data", "Exploratory data analysis on spreadsheets with summary statistics and plots"),
    ("data", "Streams sensor telemetry into a time series database and computes rollups"),
    ("data", "Computes stock turns and slow movers from ERP inventory data"),
    ("data", "Analytics agent producing metrics, trends and insights for business reviews"),
    ("data", "Scores patients' readmission risk from historical encounters"),
    ("data", "Predicts machine failures from vibration sensor data"),
    ("data", "Optimises staff rosters with a constraint solver"),
    ("data", "Analyses email campaign open and click rates by segment"),
    ("data", "Computes hospital bed occupancy statistics for planners"),
    ("data", "Summarises CRM opportunity data into a weekly pipeline table"),
    ("data", "Benchmarks supplier prices and flags outliers"),
    ("data", "Estimates insurance loss ratios by product and region"),
    ("data", "Measures the drivers of employee attrition from HR data"),
    ("data", "Calculates carbon emissions from utility and travel data"),
    ("data", "Matches records across datasets with fuzzy entity resolution"),
    ("data", "Recommends products from purchase histories with collaborative filtering"),
    ("data", "Analyses website traffic and search rankings for the marketing team"),
    ("data", "Runs what-if scenarios on the financial plan"),
    // workflow
    (
        "workflow",
        "Runs the approval chain for purchase requests: routes each to the right manager and records the decision",
    ),
    ("workflow", "When a web form is submitted, creates a CRM record and notifies its owner"),
    ("workflow", "Orchestrates multi-step business processes across SaaS apps with triggers and actions"),
    ("workflow", "Zapier-style automation syncing new sign-ups from forms into the CRM and Slack"),
    ("workflow", "Creates Jira issues from incoming requests and assigns them by rule"),
    ("workflow", "Schedules recurring jobs and sends reminders as deadlines approach"),
    ("workflow", "Moves documents through review, signature and archiving stages"),
    ("workflow", "Updates order status in the ERP once shipments are confirmed"),
    ("workflow", "Provisions accounts in business apps when a new contract starts"),
    ("workflow", "Routes vendor onboarding paperwork through compliance review and sets up the vendor record"),
    ("workflow", "Notifies stakeholders with templated messages when a project milestone is reached"),
    ("workflow", "Batch job that updates catalogue prices from a supplier feed"),
    ("workflow", "Assembles offer letters from templates and sends them to candidates for signature"),
    ("workflow", "Coordinates hand-offs between teams by creating tasks in Asana"),
    ("workflow", "Files and renames incoming attachments into the right folders"),
    ("workflow", "Escalates overdue approvals to the next manager after two days"),
    ("workflow", "Books couriers and writes tracking numbers back onto orders"),
    ("workflow", "Event-driven automation that restarts stalled process instances"),
    ("workflow", "Keeps employee records in sync between the HRIS and downstream systems"),
    ("workflow", "Publishes approved articles to the CMS on their scheduled date"),
    ("workflow", "Renews software licences and updates the asset register when they lapse"),
    ("workflow", "Assigns field service jobs to technicians by skill and location"),
    ("workflow", "Runs the month-end checklist: opens tasks, chases owners and collects sign-offs"),
    ("workflow", "Updates stock levels across sales channels after each sale"),
    ("workflow", "Creates calendar holds and sends invitations for recurring reviews"),
    ("workflow", "Runbook automation that scales services and restarts jobs on a schedule"),
    ("workflow", "Approves requests automatically when they satisfy policy rules, otherwise routes them to a person"),
    ("workflow", "Copies records between SaaS tools on a trigger and logs each run"),
    ("workflow", "Mails printed letters through a print-and-post API when cases reach a given stage"),
    ("workflow", "Integration bot that creates, updates and closes records in several systems of record"),
    ("workflow", "Books follow-up visits in the clinic system after a consultation is closed"),
    ("workflow", "Submits permit applications to the city and tracks their status"),
    ("workflow", "Creates shipping labels and schedules carrier pickups for outgoing orders"),
    ("workflow", "Updates policy records and issues endorsements when customers change their cover"),
    ("workflow", "Posts job openings to job boards and moves applicants between hiring stages"),
    ("workflow", "Dockets court deadlines into lawyers' calendars from filed notices"),
    ("workflow", "Publishes product updates to the website and app store listings"),
    ("workflow", "Transfers patient referrals to partner clinics and notifies the receiving team"),
    ("workflow", "Reassigns software licences when employees change teams"),
    ("workflow", "Moves deals between pipeline stages and creates follow-up tasks for reps"),
    ("workflow", "Generates work orders and dispatches them to maintenance crews"),
    ("workflow", "Opens change requests, collects approvals and schedules the maintenance window"),
    ("workflow", "Archives closed cases and applies retention labels"),
    ("workflow", "Enrols students in courses and emails them their timetables"),
    ("workflow", "Restarts failed batch jobs and pages the owner when a retry fails"),
    ("workflow", "Registers new products in the PIM and pushes them to marketplaces"),
    ("workflow", "Distributes signed contracts to the parties and stores copies in the DMS"),
    // support
    ("support", "Customer service chatbot that answers order questions and opens tickets for human agents"),
    ("support", "Handles customer complaints by email and offers resolutions within policy"),
    ("support", "Help desk assistant answering how-to questions from users and unlocking their accounts"),
    ("support", "Sorts incoming support tickets by priority and product area"),
    ("support", "Live chat for the online store: where is my order, delivery times, opening hours"),
    ("support", "Walks customers through exchanging a faulty product and books the pickup"),
    ("support", "Drafts answers to support tickets for human agents to approve"),
    ("support", "Tier-1 support bot troubleshooting connectivity problems with subscribers"),
    ("support", "Answers account holders' questions about the charges on their statement"),
    ("support", "Hands unhappy customers over to a human supervisor"),
    ("support", "Internal IT service desk bot for laptop and software requests from staff"),
    ("support", "WhatsApp assistant that helps guests change their hotel reservation"),
    ("support", "Call centre voice agent that verifies callers and updates their contact details"),
    ("support", "Follows up with customers after a ticket is resolved to confirm the fix worked"),
    ("support", "Handles warranty claims from customers and checks their eligibility"),
    ("support", "Takes tenants' maintenance requests and logs work orders for the landlord"),
    ("support", "Player support for a game: restores lost items and answers account questions"),
    ("support", "Patient help line assistant answering questions about visiting hours and parking"),
    ("support", "Customer care for a bank handling blocked and lost card reports"),
    ("support", "Social customer care agent replying to mentions and direct messages"),
    ("support", "Support copilot suggesting help articles to agents during live chats"),
    ("support", "Resolves delivery complaints and offers vouchers to affected customers"),
    ("support", "Answers new customers' setup questions and schedules an onboarding call"),
    ("support", "Multilingual customer support chat replying in the customer's own language"),
    ("support", "Queues and assigns customer cases and tracks SLA timers"),
    ("support", "Helps members change their subscription plan and answers membership questions"),
    ("support", "Answers shipping and customs questions from international buyers"),
    ("support", "Zendesk and Intercom assistant that tags conversations and closes duplicate tickets"),
    ("support", "Answers students' questions about enrolment deadlines and escalates complex cases to staff"),
    ("support", "Helps citizens with questions about permits and forwards their case to an officer"),
    ("support", "Answers employees' payroll and benefits questions and opens HR cases"),
    ("support", "Troubleshoots VPN and Wi-Fi problems for employees and opens a ticket when stuck"),
    ("support", "Guides customers through setting up their router over chat"),
    ("support", "Replies to customers asking about late deliveries with an apology and a status update"),
    ("support", "Phone agent for a clinic answering questions about opening hours and arranging callbacks"),
    ("support", "Support assistant for a SaaS product handling bug reports and how-to questions"),
    ("support", "Handles cancellation requests and offers retention discounts"),
    ("support", "Helps travellers rebook after a cancelled flight"),
    // finance
    ("finance", "Initiates vendor payments and schedules bank transfers once they are approved"),
    ("finance", "Reconciles accounts payable against the general ledger"),
    ("finance", "Generates client invoices and chases late payers"),
    ("finance", "Runs payroll and pays salaries on the last business day of the month"),
    ("finance", "Books journal entries and accruals during the month-end close"),
    ("finance", "Treasury agent moving cash between accounts and investing the surplus"),
    ("finance", "Processes customer refunds and disputes through the payment gateway"),
    ("finance", "Tracks spending against budgets and flags cost centres that overspend"),
    ("finance", "Executes trades and rebalances investment portfolios within limits"),
    ("finance", "Calculates withholding tax on cross-border payments and prepares the remittance"),
    ("finance", "Collects membership dues by direct debit and records the receipts"),
    ("finance", "Matches supplier bills to purchase orders and goods receipts before payment"),
    ("finance", "Pays monthly commissions to affiliates"),
    ("finance", "Issues corporate cards and sets spending limits for employees"),
    ("finance", "Converts currencies and settles cross-border transactions"),
    ("finance", "Manages loan disbursements and repayment schedules"),
    ("finance", "Forecasts cash flow and liquidity for the CFO"),
    ("finance", "Accounts receivable agent applying incoming payments to open invoices"),
    ("finance", "Converts stablecoin receipts to fiat and sweeps them to the operating account"),
    ("finance", "Reimburses employees' approved expenses by bank transfer"),
    ("finance", "Bills insurance premiums and collects overdue amounts"),
    ("finance", "Bookkeeping assistant categorising bank transactions in QuickBooks"),
    ("finance", "Maintains the fixed asset register and computes depreciation"),
    ("finance", "Sends wire instructions to the bank and confirms settlement"),
    ("finance", "Revenue recognition agent deferring and recognising revenue per contract"),
    ("finance", "Releases funds for spend requests under a budget threshold"),
    ("finance", "Payment operations: retries failed card payments and updates the billing ledger"),
    ("finance", "Intercompany settlement and FX netting across subsidiaries"),
    ("finance", "Produces monthly customer statements and posts interest charges"),
    ("finance", "Calculates sales commissions and submits them to payroll"),
    ("finance", "Records cash receipts and deposits cheques"),
    ("finance", "Accounts payable: vendor bills, payment runs and remittance advices"),
    ("finance", "Budget versus actual variance analysis for finance business partners"),
    ("finance", "Utility billing from meter reads to bills to collected payments"),
    ("finance", "Calculates sales tax on e-commerce orders"),
    ("finance", "Audits corporate card transactions for policy violations"),
    // security
    ("security", "Scans infrastructure for vulnerabilities and misconfigurations"),
    ("security", "Investigates security alerts from the SIEM and opens incidents"),
    ("security", "Detects intrusions and isolates infected endpoints from the network"),
    ("security", "Reviews user access rights and revokes unused privileges"),
    ("security", "Expires stale service account keys and issues new ones from the vault"),
    ("security", "Threat intelligence agent enriching indicators of compromise"),
    ("security", "Blocks malicious sender domains at the mail gateway after analysts confirm a campaign"),
    ("security", "Performs authorised red-team exercises and reports exploitable weaknesses"),
    ("security", "Checks cloud configuration against CIS benchmarks"),
    ("security", "Reviews network segmentation and proposes deny rules between zones"),
    ("security", "Malware analysis sandbox that detonates suspicious files"),
    ("security", "Enforces data loss prevention rules on outgoing mail and uploads"),
    ("security", "Audits logins for impossible travel and suspicious sessions"),
    ("security", "Incident responder collecting forensic evidence and containing threats"),
    ("security", "Tracks unpatched CVEs across the fleet for patch compliance"),
    ("security", "Manages MFA enrolment and enforces conditional access policies"),
    ("security", "Security posture reporting against SOC 2 and ISO 27001 controls"),
    ("security", "EDR assistant quarantining files flagged by antivirus engines"),
    ("security", "Tunes web application firewall rules and bot mitigation"),
    ("security", "Reviews IAM policies for wildcard permissions and privilege escalation paths"),
    ("security", "Hunts for threats in DNS and proxy logs"),
    ("security", "Inventories certificates and keys, flagging weak ciphers and upcoming expiry"),
    ("security", "Detects abusive sign-ups and blocks bots and fake accounts"),
    ("security", "Vulnerability management: triages scanner findings, assigns owners and tracks remediation"),
    ("security", "Monitors breach dumps for leaked employee credentials"),
    ("security", "Zero-trust access broker checking device posture before granting access"),
    ("security", "Scans container images and blocks those with critical CVEs"),
    ("security", "Security operations copilot for SOC analysts triaging alerts"),
    ("security", "Reviews firewall change requests for risk before they are applied"),
    ("security", "Correlates authentication logs to detect brute-force attacks"),
    ("security", "Runs phishing simulations and tracks who clicks"),
    ("security", "Scores third-party vendors' security questionnaires for risk"),
    ("security", "Monitors privileged sessions and records administrator activity"),
    ("security", "Hardens server configurations to the security baseline"),
    // other
    ("other", "Test agent"),
    ("other", "Demo"),
    ("other", "Runs trivia games with the team on Fridays"),
    ("other", "Tells jokes"),
    ("other", "Placeholder created during setup"),
    ("other", "Experimental prototype, purpose not decided yet"),
    ("other", "Recommends music playlists for the office"),
    ("other", "Lunch order poll"),
    ("other", "Sandbox for trying things out"),
    ("other", "Random quote of the day"),
    ("other", "Miscellaneous utilities"),
    ("other", "Hackathon project"),
    ("other", "Unnamed"),
    ("other", "Personal experiment, no description"),
    ("other", "Game master for tabletop role-playing sessions"),
    ("other", "Counts steps and runs fitness challenges"),
    ("other", "Plans drone flights for site surveys"),
    ("other", "Watches the soil moisture sensor of the lobby plants"),
    ("other", "Legacy bot kept for reference, disabled"),
    ("other", "Hello world example"),
    ("other", "Mascot character greeting visitors at the reception kiosk"),
    ("other", "Plays chess"),
    ("other", "Office dog walking rota"),
    ("other", "test test 123"),
    ("other", "Temporary copy, do not use"),
    ("other", "TODO"),
    ("other", "Untitled agent v2"),
    ("other", "Misc"),
];

#[cfg(test)]
mod tests {
    use super::*;

    fn caps(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| (*s).to_owned()).collect()
    }

    #[test]
    fn every_label_has_enough_seeds_and_only_known_labels_are_used() {
        for label in AGENT_TYPES {
            let n = SEEDS.iter().filter(|(l, _)| l == label).count();
            assert!(n >= 25, "{label} has {n} seeds");
        }
        assert!(SEEDS.iter().all(|(l, _)| AGENT_TYPES.contains(l)));
        let classifier = TypeClassifier::builtin();
        assert_eq!(classifier.labels(), AGENT_TYPES);
    }

    #[test]
    fn predictions_are_deterministic() {
        let a = TypeClassifier::builtin();
        let b = TypeClassifier::builtin();
        let capabilities = caps(&["open pull request", "run tests"]);
        let first = a.predict("Patch Bot", Some("Fixes bugs in the repository"), &capabilities);
        for _ in 0..3 {
            assert_eq!(first, a.predict("Patch Bot", Some("Fixes bugs in the repository"), &capabilities));
            assert_eq!(first, b.predict("Patch Bot", Some("Fixes bugs in the repository"), &capabilities));
        }
        assert_eq!(first.label, "code");
    }

    #[test]
    fn empty_or_meaningless_input_is_other_or_unsure() {
        let classifier = TypeClassifier::builtin();
        for (name, description) in [("", None), ("", Some("")), ("   ", Some("!!! ...")), ("the", Some("and of"))] {
            let p = classifier.predict(name, description, &[]);
            assert!(p.label == "other" || p.confidence < MIN_CONFIDENCE, "{name:?} {description:?}: {p:?}");
            assert!((0.0..=1.0).contains(&p.confidence));
        }
        let p = classifier.predict("", None, &[]);
        assert_eq!(p.label, "other");
        assert!((0.0..=1.0).contains(&p.confidence));
    }

    #[test]
    fn non_ascii_text_does_not_panic() {
        let classifier = TypeClassifier::builtin();
        let inputs = [
            ("Überweisungsagent", "Führt Überweisungen für Lieferanten aus"),
            ("請求書ボット", "請求書を作成して送信します"),
            ("Agent ñandú", "Résumé des réunions — idées, thèmes et décisions 🚀"),
            ("ÉÉÉÉÉÉÉÉÉ", "ßßßßßßß ǅǅǅ İstanbul"),
        ];
        for (name, description) in inputs {
            let p = classifier.predict(name, Some(description), &caps(&["données clients", "🔥"]));
            assert!(AGENT_TYPES.contains(&p.label));
            assert!((0.0..=1.0).contains(&p.confidence), "{p:?}");
        }
    }

    #[test]
    fn clear_examples_get_their_type() {
        let classifier = TypeClassifier::builtin();
        let cases = [
            ("Docs Answerer", "Answers questions from our documentation with citations", "rag"),
            ("Scraper", "Opens web pages in a headless browser and scrapes prices", "browser"),
            ("Metrics", "Runs SQL queries and builds dashboards of weekly revenue", "data"),
            ("Payer", "Pays supplier invoices by bank transfer", "finance"),
            ("Helpdesk", "Answers customer tickets and escalates complaints", "support"),
            ("Threat Hunter", "Investigates SIEM alerts and isolates compromised hosts", "security"),
        ];
        for (name, description, expected) in cases {
            let p = classifier.predict(name, Some(description), &[]);
            assert_eq!(p.label, expected, "{name}: {p:?}");
        }
    }

    #[test]
    fn probabilities_sum_to_one() {
        let classifier = TypeClassifier::builtin();
        let p = classifier.probabilities("Writer", Some("drafts blog posts"), &[]);
        assert_eq!(p.len(), AGENT_TYPES.len());
        assert!((p.iter().sum::<f32>() - 1.0).abs() < 1e-4);
    }

    #[test]
    fn stems_conflate_inflections() {
        assert_eq!(stem("scheduling"), stem("schedules"));
        assert_eq!(stem("scraper"), stem("scraping"));
        assert_eq!(stem("answers"), stem("answering"));
        assert_eq!(stem("tests"), stem("testing"));
        assert_eq!(stem("ssh"), "ssh");
        assert_eq!(stem("ééééééééé").chars().count(), STEM_CHARS);
    }
}
