//! agentgov's adapter of the domain's [`Embedder`] port for an external, OpenAI-compatible
//! embeddings service (OpenAI itself, or a self-hosted server speaking the same protocol:
//! vLLM, Ollama, text-embeddings-inference, LiteLLM, ...).
//!
//! # How it is selected
//!
//! The server uses the built-in `HashingEmbedder` (no download, no network) unless an
//! embeddings service is configured. With `AGENTGOV_EMBEDDING_URL` set (plus the model
//! name, its dimensions and, where the service wants one, an API key), the server's wiring
//! builds an [`OpenAiConfig`] from those settings and holds an [`OpenAiEmbedder`] as its
//! `Arc<dyn Embedder>` instead. Vectors of different models are never compared, so changing
//! the model (or its `model_version`) means re-embedding what was stored.
//!
//! # Protocol
//!
//! `POST {base_url}/v1/embeddings` with `{"model": "...", "input": ["text", ...]}`, plus
//! `"dimensions": N` when [`OpenAiConfig::send_dimensions`] is set (only models that can
//! shorten their vectors accept it), and `Authorization: Bearer <key>` when a key is set.
//! A `base_url` that already ends in `/v1` (as OpenAI's SDKs spell it) is accepted too.
//! The response's `data[].embedding` vectors are put back in input order by their
//! `index`, checked (exactly `dimensions` finite values, every index present once) and
//! scaled to unit length, as the port promises. Texts are sent in batches of at most
//! [`OpenAiConfig::max_batch`], one batch after the other.
//!
//! # Errors
//!
//! - Service unreachable, timed out, HTTP 5xx or 429: [`DomainError::Unavailable`]
//!   (`"embedding service"`), with the cause logged at `warn`.
//! - Any other HTTP status, malformed JSON, wrong dimensions, missing or repeated
//!   indexes: [`DomainError::Internal`], naming the problem with at most a short excerpt
//!   of the response.
//!
//! The API key is never logged, never put in an error and masked in `Debug`.

use std::fmt;
use std::time::Duration;

use agentgov_domain::ports::{Embedder, EmbeddingModel};
use agentgov_domain::{DomainError, Result};
use async_trait::async_trait;
use reqwest::header::{AUTHORIZATION, HeaderValue};
use reqwest::{StatusCode, Url};
use secrecy::{ExposeSecret, SecretString};
use serde::{Deserialize, Serialize};

/// The largest `dimensions` accepted (OpenAI's largest model has 3072).
pub const MAX_DIMENSIONS: usize = 8192;
/// A sensible default for [`OpenAiConfig::timeout`].
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(30);
/// A sensible default for [`OpenAiConfig::max_batch`] (OpenAI accepts up to 2048 inputs).
pub const DEFAULT_MAX_BATCH: usize = 64;

/// The name used in [`DomainError::Unavailable`] and in log lines.
const SERVICE: &str = "embedding service";
/// How many characters of a response body an error message or log line may quote.
const EXCERPT_CHARS: usize = 200;

/// Settings of an [`OpenAiEmbedder`].
#[derive(Clone)]
pub struct OpenAiConfig {
    /// `http://` or `https://` root of the service; `/v1/embeddings` is appended.
    pub base_url: String,
    /// The model's name, sent as `model` and reported by [`Embedder::model`].
    pub model: String,
    /// Bump when the same model name starts giving different vectors.
    pub model_version: i32,
    /// Length of every vector, 1..=[`MAX_DIMENSIONS`]; responses of another length are errors.
    pub dimensions: usize,
    /// Send `dimensions` in the request (for models that can shorten their vectors).
    pub send_dimensions: bool,
    /// Sent as `Authorization: Bearer <key>` when set.
    pub api_key: Option<SecretString>,
    /// Limit on each request, from connecting to the last byte of the response.
    pub timeout: Duration,
    /// Most texts sent in one request (at least 1).
    pub max_batch: usize,
}

impl fmt::Debug for OpenAiConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Destructured, so a new field cannot be left out (or printed unmasked by a derive).
        let OpenAiConfig { base_url, model, model_version, dimensions, send_dimensions, api_key, timeout, max_batch } =
            self;
        f.debug_struct("OpenAiConfig")
            .field("base_url", &redact_url(base_url))
            .field("model", model)
            .field("model_version", model_version)
            .field("dimensions", dimensions)
            .field("send_dimensions", send_dimensions)
            .field("api_key", &mask(api_key.is_some()))
            .field("timeout", timeout)
            .field("max_batch", max_batch)
            .finish()
    }
}

/// [`Embedder`] backed by an OpenAI-compatible `/v1/embeddings` service. Cheap to share
/// behind an `Arc`; the HTTP connection pool is reused across calls.
pub struct OpenAiEmbedder {
    client: reqwest::Client,
    endpoint: Url,
    model: EmbeddingModel,
    send_dimensions: bool,
    /// `Bearer <key>`, marked sensitive.
    authorization: Option<HeaderValue>,
    /// The raw key, only to scrub it from any response excerpt quoted in an error.
    api_key: Option<SecretString>,
    max_batch: usize,
    timeout: Duration,
}

impl fmt::Debug for OpenAiEmbedder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("OpenAiEmbedder")
            .field("endpoint", &self.endpoint_for_logs())
            .field("model", &self.model)
            .field("send_dimensions", &self.send_dimensions)
            .field("api_key", &mask(self.api_key.is_some()))
            .field("max_batch", &self.max_batch)
            .field("timeout", &self.timeout)
            .finish_non_exhaustive()
    }
}

fn mask(set: bool) -> &'static str {
    if set { "****" } else { "(unset)" }
}

/// `raw` with any password in it replaced by `****`.
fn redact_url(raw: &str) -> String {
    match Url::parse(raw) {
        Ok(mut u) if u.password().is_some() => {
            let _ = u.set_password(Some("****"));
            u.to_string()
        }
        Ok(u) => u.to_string(),
        Err(_) => "<unparseable url>".into(),
    }
}

fn config_error(message: impl fmt::Display) -> DomainError {
    DomainError::Internal(format!("invalid embedding service configuration: {message}"))
}

/// `{base}/v1/embeddings`, or `{base}/embeddings` when `base` already ends in `/v1`.
fn endpoint(base_url: &str) -> Result<Url> {
    let mut url = Url::parse(base_url.trim()).map_err(|e| config_error(format!("base URL is not a URL ({e})")))?;
    if !matches!(url.scheme(), "http" | "https") {
        return Err(config_error(format!("base URL must be http:// or https://, not {}://", url.scheme())));
    }
    if url.host_str().is_none_or(str::is_empty) {
        return Err(config_error("base URL has no host"));
    }
    if !url.username().is_empty() || url.password().is_some() {
        return Err(config_error("base URL must not contain credentials; set the API key instead"));
    }
    url.set_fragment(None);
    let ends_in_v1 = url.path_segments().and_then(|mut s| s.rfind(|s| !s.is_empty())) == Some("v1");
    {
        let mut segments = url.path_segments_mut().map_err(|()| config_error("base URL cannot have a path"))?;
        segments.pop_if_empty();
        if !ends_in_v1 {
            segments.push("v1");
        }
        segments.push("embeddings");
    }
    Ok(url)
}

impl OpenAiEmbedder {
    /// Checks `config` and builds the HTTP client. Nothing is sent yet.
    ///
    /// Errors ([`DomainError::Internal`]): a base URL that is not `http(s)://host...` or
    /// carries credentials, an empty model name, `dimensions` outside 1..=[`MAX_DIMENSIONS`],
    /// `max_batch` of 0, a zero timeout, an empty API key or one that cannot be sent in a
    /// header.
    pub fn new(config: OpenAiConfig) -> Result<Self> {
        let OpenAiConfig { base_url, model, model_version, dimensions, send_dimensions, api_key, timeout, max_batch } =
            config;
        let endpoint = endpoint(&base_url)?;
        let model = model.trim().to_owned();
        if model.is_empty() {
            return Err(config_error("model name is empty"));
        }
        if !(1..=MAX_DIMENSIONS).contains(&dimensions) {
            return Err(config_error(format!("dimensions must be 1..={MAX_DIMENSIONS}, not {dimensions}")));
        }
        if max_batch == 0 {
            return Err(config_error("max_batch must be at least 1"));
        }
        if timeout.is_zero() {
            return Err(config_error("timeout must be more than zero"));
        }
        let authorization = match &api_key {
            None => None,
            Some(key) if key.expose_secret().trim().is_empty() => {
                return Err(config_error("API key is empty; leave it unset instead"));
            }
            Some(key) => {
                let mut value = HeaderValue::from_str(&format!("Bearer {}", key.expose_secret().trim()))
                    // The error says nothing of the value, but do not even hint at it.
                    .map_err(|_| config_error("API key contains characters not allowed in an HTTP header"))?;
                value.set_sensitive(true);
                Some(value)
            }
        };
        let client = reqwest::Client::builder()
            .timeout(timeout)
            // A POST must not be turned into a GET, nor the key sent elsewhere.
            .redirect(reqwest::redirect::Policy::none())
            .user_agent(concat!("agentgov/", env!("CARGO_PKG_VERSION")))
            .build()
            .map_err(|e| config_error(format!("HTTP client: {e}")))?;
        Ok(Self {
            client,
            endpoint,
            model: EmbeddingModel { name: model, version: model_version, dimensions },
            send_dimensions,
            authorization,
            api_key,
            max_batch,
            timeout,
        })
    }

    /// The URL requests are posted to.
    pub fn endpoint(&self) -> &str {
        self.endpoint.as_str()
    }

    /// The endpoint without its query string (which could hold a gateway's token).
    fn endpoint_for_logs(&self) -> String {
        let mut url = self.endpoint.clone();
        if url.query().is_some() {
            url.set_query(Some("…"));
        }
        url.to_string()
    }

    fn unavailable(&self, cause: &dyn fmt::Display) -> DomainError {
        tracing::warn!(endpoint = %self.endpoint_for_logs(), model = %self.model.name, cause = %cause, "{SERVICE} unavailable");
        DomainError::Unavailable(SERVICE.into())
    }

    /// Up to [`EXCERPT_CHARS`] characters of `body`, with the API key (should a service
    /// echo it) scrubbed.
    fn excerpt(&self, body: &[u8]) -> String {
        let text = String::from_utf8_lossy(body);
        let text = match &self.api_key {
            Some(key) if !key.expose_secret().trim().is_empty() => text.replace(key.expose_secret().trim(), "****"),
            _ => text.into_owned(),
        };
        let mut out: String = text.chars().take(EXCERPT_CHARS).collect();
        if text.chars().nth(EXCERPT_CHARS).is_some() {
            out.push('…');
        }
        out
    }

    /// One request for `texts` (1..=max_batch of them); vectors in input order.
    async fn embed_batch(&self, texts: &[String]) -> Result<Vec<Vec<f32>>> {
        let body = EmbeddingsRequest {
            model: &self.model.name,
            input: texts,
            dimensions: self.send_dimensions.then_some(self.model.dimensions),
        };
        let mut request = self.client.post(self.endpoint.clone()).json(&body);
        if let Some(auth) = &self.authorization {
            request = request.header(AUTHORIZATION, auth.clone());
        }
        let response = request.send().await.map_err(|e| self.transport_error(e))?;
        let status = response.status();
        let bytes = response.bytes().await.map_err(|e| self.transport_error(e))?;

        if status == StatusCode::TOO_MANY_REQUESTS || status.is_server_error() {
            return Err(self.unavailable(&format_args!("HTTP {status}: {}", self.excerpt(&bytes))));
        }
        if !status.is_success() {
            return Err(DomainError::Internal(format!("{SERVICE} answered HTTP {status}: {}", self.excerpt(&bytes))));
        }
        let parsed: EmbeddingsResponse = serde_json::from_slice(&bytes).map_err(|e| {
            // serde quotes an offending string whole: keep its message short too.
            let reason = self.excerpt(e.to_string().as_bytes());
            DomainError::Internal(format!("{SERVICE} returned malformed JSON ({reason}): {}", self.excerpt(&bytes)))
        })?;
        self.order_and_check(parsed.data, texts.len())
    }

    fn transport_error(&self, error: reqwest::Error) -> DomainError {
        // Builder errors are ours (they cannot happen with a checked config); everything
        // else (refused, reset, DNS, TLS, timeout, truncated body) is the service's absence.
        if error.is_builder() {
            return DomainError::Internal(format!("building the {SERVICE} request: {}", error.without_url()));
        }
        let kind = if error.is_timeout() {
            "timed out"
        } else if error.is_connect() {
            "cannot connect"
        } else {
            "request failed"
        };
        // The URL is logged separately (it holds no credentials: `new` refuses them).
        let error = error.without_url();
        let mut cause = format!("{kind}: {error}");
        let mut source = std::error::Error::source(&error);
        while let Some(inner) = source {
            cause.push_str(": ");
            cause.push_str(&inner.to_string());
            source = inner.source();
        }
        self.unavailable(&cause)
    }

    /// Puts `data` in index order and checks it holds `expected` unit-length-able vectors.
    fn order_and_check(&self, data: Vec<EmbeddingItem>, expected: usize) -> Result<Vec<Vec<f32>>> {
        let dims = self.model.dimensions;
        if data.len() != expected {
            return Err(DomainError::Internal(format!(
                "{SERVICE} returned {} embeddings for {expected} inputs",
                data.len()
            )));
        }
        let mut slots: Vec<Option<Vec<f32>>> = vec![None; expected];
        for item in data {
            let slot = slots.get_mut(item.index).ok_or_else(|| {
                DomainError::Internal(format!("{SERVICE} returned index {} for {expected} inputs", item.index))
            })?;
            if slot.is_some() {
                return Err(DomainError::Internal(format!("{SERVICE} returned index {} twice", item.index)));
            }
            if item.embedding.len() != dims {
                return Err(DomainError::Internal(format!(
                    "{SERVICE} returned {} dimensions at index {}, expected {dims} (model {})",
                    item.embedding.len(),
                    item.index,
                    self.model.name
                )));
            }
            if item.embedding.iter().any(|v| !v.is_finite()) {
                return Err(DomainError::Internal(format!(
                    "{SERVICE} returned a non-finite value at index {}",
                    item.index
                )));
            }
            *slot = Some(normalise(item.embedding));
        }
        // Same length as `expected`, no index repeated: every slot is filled. Checked anyway.
        slots
            .into_iter()
            .enumerate()
            .map(|(i, v)| {
                v.ok_or_else(|| DomainError::Internal(format!("{SERVICE} returned no embedding for index {i}")))
            })
            .collect()
    }
}

/// `v` scaled to unit length (computed in f64); a zero vector stays zero.
fn normalise(mut v: Vec<f32>) -> Vec<f32> {
    let norm = v.iter().map(|&x| f64::from(x) * f64::from(x)).sum::<f64>().sqrt();
    if norm > 0.0 && norm.is_finite() {
        for x in &mut v {
            *x = (f64::from(*x) / norm) as f32;
        }
    }
    v
}

#[async_trait]
impl Embedder for OpenAiEmbedder {
    fn model(&self) -> &EmbeddingModel {
        &self.model
    }

    async fn embed(&self, texts: &[String]) -> Result<Vec<Vec<f32>>> {
        let mut out = Vec::with_capacity(texts.len());
        for batch in texts.chunks(self.max_batch) {
            out.extend(self.embed_batch(batch).await?);
        }
        Ok(out)
    }
}

#[derive(Serialize)]
struct EmbeddingsRequest<'a> {
    model: &'a str,
    input: &'a [String],
    #[serde(skip_serializing_if = "Option::is_none")]
    dimensions: Option<usize>,
}

#[derive(Deserialize)]
struct EmbeddingsResponse {
    data: Vec<EmbeddingItem>,
}

#[derive(Deserialize)]
struct EmbeddingItem {
    index: usize,
    embedding: Vec<f32>,
}
