//! `OpenAiEmbedder` against a real HTTP stub of an OpenAI-compatible embeddings service,
//! served by actix-web on 127.0.0.1:0 (loopback only).

#![expect(clippy::unwrap_used, reason = "test code: a failed unwrap is a failed test")]

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use actix_web::{App, HttpRequest, HttpResponse, HttpServer, web};
use agentgov_domain::DomainError;
use agentgov_domain::ports::{Embedder, EmbeddingModel};
use agentgov_embed_openai::{OpenAiConfig, OpenAiEmbedder};
use serde_json::{Value, json};

const KEY: &str = "sk-test-SUPERSECRET-0123456789";
const DIMS: usize = 4;

// ---------------------------------------------------------------------------------------
// The stub
// ---------------------------------------------------------------------------------------

/// What the stub answers.
#[derive(Clone, Copy)]
enum Behaviour {
    /// Deterministic vectors of the requested (or `DIMS`) dimensions, data in index order.
    Ok,
    /// As `Ok`, but the data items in reverse order.
    Reversed,
    /// As `Ok`, but every vector all zeros.
    Zeros,
    /// Vectors one value longer than asked.
    WrongDims,
    /// The right count, but the last index one past the end, so it is missing.
    MissingIndex,
    /// The same index twice.
    DuplicateIndex,
    /// A body that is not JSON.
    Malformed,
    /// This status with a short body that echoes the Authorization header.
    Status(u16),
    /// Sleeps this long, then answers as `Ok`.
    Sleep(Duration),
}

/// One request the stub received.
#[derive(Debug, Clone)]
struct Recorded {
    path: String,
    authorization: Option<String>,
    content_type: Option<String>,
    body: Value,
}

#[derive(Clone)]
struct StubState {
    behaviour: Behaviour,
    requests: Arc<Mutex<Vec<Recorded>>>,
}

struct Stub {
    addr: SocketAddr,
    requests: Arc<Mutex<Vec<Recorded>>>,
    handle: actix_web::dev::ServerHandle,
}

impl Stub {
    async fn start(behaviour: Behaviour) -> Self {
        let requests = Arc::new(Mutex::new(Vec::new()));
        let state = web::Data::new(StubState { behaviour, requests: requests.clone() });
        let server = HttpServer::new(move || App::new().app_data(state.clone()).default_service(web::to(handler)))
            .workers(1)
            .disable_signals()
            .shutdown_timeout(0)
            .bind(("127.0.0.1", 0))
            .unwrap();
        let addr = server.addrs()[0];
        let server = server.run();
        let handle = server.handle();
        tokio::spawn(server);
        Self { addr, requests, handle }
    }

    fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    fn requests(&self) -> Vec<Recorded> {
        self.requests.lock().unwrap().clone()
    }

    async fn stop(self) {
        self.handle.stop(false).await;
    }
}

/// A deterministic, text-dependent, not-unit-length vector.
fn raw_vector(text: &str, dims: usize) -> Vec<f32> {
    let sum: usize = text.bytes().map(usize::from).sum();
    (0..dims).map(|j| ((sum * (j + 1)) % 97) as f32 + 1.0).collect()
}

fn unit(v: Vec<f32>) -> Vec<f32> {
    let norm = v.iter().map(|x| f64::from(*x).powi(2)).sum::<f64>().sqrt();
    v.into_iter().map(|x| (f64::from(x) / norm) as f32).collect()
}

async fn handler(req: HttpRequest, body: web::Bytes, state: web::Data<StubState>) -> HttpResponse {
    let header = |name: &str| req.headers().get(name).map(|v| v.to_str().unwrap().to_owned());
    let body: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
    state.requests.lock().unwrap().push(Recorded {
        path: req.path().to_owned(),
        authorization: header("authorization"),
        content_type: header("content-type"),
        body: body.clone(),
    });

    let inputs: Vec<String> = body["input"]
        .as_array()
        .map(|a| a.iter().map(|v| v.as_str().unwrap_or("").to_owned()).collect())
        .unwrap_or_default();
    let dims = body["dimensions"].as_u64().map_or(DIMS, |d| d as usize);
    let item = |i: usize, embedding: Vec<f32>| json!({"object": "embedding", "index": i, "embedding": embedding});
    let ok_items = || -> Vec<Value> { inputs.iter().enumerate().map(|(i, t)| item(i, raw_vector(t, dims))).collect() };

    let data: Vec<Value> = match state.behaviour {
        Behaviour::Ok => ok_items(),
        Behaviour::Sleep(d) => {
            tokio::time::sleep(d).await;
            ok_items()
        }
        Behaviour::Reversed => ok_items().into_iter().rev().collect(),
        Behaviour::Zeros => inputs.iter().enumerate().map(|(i, _)| item(i, vec![0.0; dims])).collect(),
        Behaviour::WrongDims => inputs.iter().enumerate().map(|(i, t)| item(i, raw_vector(t, dims + 1))).collect(),
        Behaviour::MissingIndex => {
            // Right count, but index n-1 replaced by n (out of range): index n-1 is missing.
            let n = inputs.len();
            inputs.iter().enumerate().map(|(i, t)| item(if i + 1 == n { n } else { i }, raw_vector(t, dims))).collect()
        }
        Behaviour::DuplicateIndex => inputs.iter().map(|t| item(0, raw_vector(t, dims))).collect(),
        Behaviour::Malformed => {
            return HttpResponse::Ok().content_type("application/json").body("{\"data\": [not json");
        }
        Behaviour::Status(code) => {
            let status = actix_web::http::StatusCode::from_u16(code).unwrap();
            // A careless service echoing the credentials it got: they must not leak further.
            let echoed = header("authorization").unwrap_or_default();
            return HttpResponse::build(status)
                .json(json!({"error": {"message": format!("nope ({echoed})"), "type": "stub_error"}}));
        }
    };
    HttpResponse::Ok().json(json!({
        "object": "list",
        "data": data,
        "model": body["model"],
        "usage": {"prompt_tokens": 1, "total_tokens": 1},
    }))
}

// ---------------------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------------------

fn config(base_url: &str) -> OpenAiConfig {
    OpenAiConfig {
        base_url: base_url.to_owned(),
        model: "text-embedding-3-small".into(),
        model_version: 3,
        dimensions: DIMS,
        send_dimensions: false,
        api_key: None,
        timeout: Duration::from_secs(10),
        max_batch: 16,
    }
}

fn texts(n: usize) -> Vec<String> {
    (0..n).map(|i| format!("text number {i}")).collect()
}

fn assert_close(got: &[Vec<f32>], want: &[Vec<f32>]) {
    assert_eq!(got.len(), want.len(), "vector count");
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        assert_eq!(g.len(), w.len(), "length of vector {i}");
        for (a, b) in g.iter().zip(w) {
            assert!((a - b).abs() < 1e-6, "vector {i}: got {g:?}, want {w:?}");
        }
    }
}

fn expected(texts: &[String], dims: usize) -> Vec<Vec<f32>> {
    texts.iter().map(|t| unit(raw_vector(t, dims))).collect()
}

#[track_caller]
fn assert_unavailable(result: agentgov_domain::Result<Vec<Vec<f32>>>) {
    match result {
        Err(DomainError::Unavailable(what)) => assert_eq!(what, "embedding service"),
        other => panic!("expected Unavailable, got {other:?}"),
    }
}

#[track_caller]
fn assert_internal(result: agentgov_domain::Result<Vec<Vec<f32>>>, needle: &str) -> String {
    match result {
        Err(DomainError::Internal(message)) => {
            assert!(message.contains(needle), "{message:?} should mention {needle:?}");
            assert!(!message.contains(KEY), "{message:?} leaks the API key");
            message
        }
        other => panic!("expected Internal, got {other:?}"),
    }
}

// ---------------------------------------------------------------------------------------
// Request shape
// ---------------------------------------------------------------------------------------

#[tokio::test]
async fn sends_model_and_inputs_in_order_without_dimensions_or_key_by_default() {
    let stub = Stub::start(Behaviour::Ok).await;
    let embedder = OpenAiEmbedder::new(config(&stub.url())).unwrap();
    let input = texts(3);

    let vectors = embedder.embed(&input).await.unwrap();

    assert_close(&vectors, &expected(&input, DIMS));
    let requests = stub.requests();
    assert_eq!(requests.len(), 1);
    let r = &requests[0];
    assert_eq!(r.path, "/v1/embeddings");
    assert_eq!(r.authorization, None);
    assert!(r.content_type.as_deref().unwrap().starts_with("application/json"));
    assert_eq!(r.body, json!({"model": "text-embedding-3-small", "input": input}));
    assert!(r.body.get("dimensions").is_none());
    stub.stop().await;
}

#[tokio::test]
async fn sends_dimensions_and_bearer_key_when_configured() {
    let stub = Stub::start(Behaviour::Ok).await;
    let embedder = OpenAiEmbedder::new(OpenAiConfig {
        send_dimensions: true,
        dimensions: 8,
        api_key: Some(KEY.into()),
        ..config(&stub.url())
    })
    .unwrap();
    let input = texts(2);

    let vectors = embedder.embed(&input).await.unwrap();

    assert_close(&vectors, &expected(&input, 8));
    let requests = stub.requests();
    assert_eq!(requests.len(), 1);
    assert_eq!(requests[0].authorization.as_deref(), Some(format!("Bearer {KEY}").as_str()));
    assert_eq!(requests[0].body, json!({"model": "text-embedding-3-small", "input": input, "dimensions": 8}));
    stub.stop().await;
}

#[tokio::test]
async fn base_url_with_trailing_slash_or_v1_posts_to_v1_embeddings() {
    let stub = Stub::start(Behaviour::Ok).await;
    for base in [format!("{}/", stub.url()), format!("{}/v1", stub.url()), format!("{}/v1/", stub.url())] {
        let embedder = OpenAiEmbedder::new(config(&base)).unwrap();
        assert_eq!(embedder.endpoint(), format!("{}/v1/embeddings", stub.url()), "base {base}");
        embedder.embed(&texts(1)).await.unwrap();
    }
    let paths: Vec<String> = stub.requests().into_iter().map(|r| r.path).collect();
    assert_eq!(paths, ["/v1/embeddings"; 3]);

    let prefixed = OpenAiEmbedder::new(config("https://gateway.example/openai/")).unwrap();
    assert_eq!(prefixed.endpoint(), "https://gateway.example/openai/v1/embeddings");
    stub.stop().await;
}

#[tokio::test]
async fn model_reports_the_configured_name_version_and_dimensions() {
    let embedder = OpenAiEmbedder::new(config("http://127.0.0.1:9")).unwrap();
    assert_eq!(
        embedder.model(),
        &EmbeddingModel { name: "text-embedding-3-small".into(), version: 3, dimensions: DIMS }
    );
}

#[tokio::test]
async fn no_texts_sends_no_request() {
    let stub = Stub::start(Behaviour::Ok).await;
    let embedder = OpenAiEmbedder::new(config(&stub.url())).unwrap();
    assert_eq!(embedder.embed(&[]).await.unwrap(), Vec::<Vec<f32>>::new());
    assert!(stub.requests().is_empty());
    stub.stop().await;
}

// ---------------------------------------------------------------------------------------
// Batching, ordering, normalisation
// ---------------------------------------------------------------------------------------

#[tokio::test]
async fn batches_of_max_batch_keep_input_order_even_when_data_comes_back_shuffled() {
    let stub = Stub::start(Behaviour::Reversed).await;
    let embedder = OpenAiEmbedder::new(OpenAiConfig { max_batch: 2, ..config(&stub.url()) }).unwrap();
    let input = texts(5);

    let vectors = embedder.embed(&input).await.unwrap();

    assert_close(&vectors, &expected(&input, DIMS));
    let batches: Vec<Value> = stub.requests().into_iter().map(|r| r.body["input"].clone()).collect();
    assert_eq!(batches, [json!(input[0..2]), json!(input[2..4]), json!(input[4..5])]);
    stub.stop().await;
}

#[tokio::test]
async fn vectors_are_unit_length_and_zero_vectors_stay_zero() {
    let stub = Stub::start(Behaviour::Ok).await;
    let embedder = OpenAiEmbedder::new(config(&stub.url())).unwrap();
    for v in embedder.embed(&texts(4)).await.unwrap() {
        let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt();
        assert!((norm - 1.0).abs() < 1e-5, "norm {norm} of {v:?}");
    }
    stub.stop().await;

    let zeros = Stub::start(Behaviour::Zeros).await;
    let embedder = OpenAiEmbedder::new(config(&zeros.url())).unwrap();
    assert_eq!(embedder.embed(&texts(2)).await.unwrap(), vec![vec![0.0; DIMS]; 2]);
    zeros.stop().await;
}

// ---------------------------------------------------------------------------------------
// Bad answers → Internal
// ---------------------------------------------------------------------------------------

#[tokio::test]
async fn wrong_dimensions_are_internal() {
    let stub = Stub::start(Behaviour::WrongDims).await;
    let embedder = OpenAiEmbedder::new(config(&stub.url())).unwrap();
    assert_internal(embedder.embed(&texts(2)).await, "dimensions");
    stub.stop().await;
}

#[tokio::test]
async fn missing_or_repeated_indexes_are_internal() {
    let stub = Stub::start(Behaviour::MissingIndex).await;
    let embedder = OpenAiEmbedder::new(config(&stub.url())).unwrap();
    assert_internal(embedder.embed(&texts(3)).await, "index 3");
    stub.stop().await;

    let stub = Stub::start(Behaviour::DuplicateIndex).await;
    let embedder = OpenAiEmbedder::new(config(&stub.url())).unwrap();
    assert_internal(embedder.embed(&texts(3)).await, "twice");
    stub.stop().await;
}

#[tokio::test]
async fn malformed_json_is_internal_with_a_short_excerpt() {
    let stub = Stub::start(Behaviour::Malformed).await;
    let embedder = OpenAiEmbedder::new(config(&stub.url())).unwrap();
    assert_internal(embedder.embed(&texts(1)).await, "malformed JSON");
    stub.stop().await;
}

#[tokio::test]
async fn client_errors_other_than_429_are_internal_and_never_echo_the_key() {
    for code in [400, 401, 404] {
        let stub = Stub::start(Behaviour::Status(code)).await;
        let embedder = OpenAiEmbedder::new(OpenAiConfig { api_key: Some(KEY.into()), ..config(&stub.url()) }).unwrap();
        let message = assert_internal(embedder.embed(&texts(1)).await, &code.to_string());
        assert!(message.contains("****"), "the echoed key is masked: {message}");
        // The stub did get the key: it is the error message that must not carry it.
        assert_eq!(stub.requests()[0].authorization.as_deref(), Some(format!("Bearer {KEY}").as_str()));
        stub.stop().await;
    }
}

// ---------------------------------------------------------------------------------------
// Unreachable service → Unavailable
// ---------------------------------------------------------------------------------------

#[tokio::test]
async fn server_errors_and_429_are_unavailable() {
    for code in [500, 502, 503, 429] {
        let stub = Stub::start(Behaviour::Status(code)).await;
        let embedder = OpenAiEmbedder::new(OpenAiConfig { api_key: Some(KEY.into()), ..config(&stub.url()) }).unwrap();
        assert_unavailable(embedder.embed(&texts(1)).await);
        stub.stop().await;
    }
}

#[tokio::test]
async fn a_closed_port_is_unavailable() {
    // Bind, note the port, close: nothing listens there any more.
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let embedder = OpenAiEmbedder::new(config(&format!("http://127.0.0.1:{port}"))).unwrap();
    assert_unavailable(embedder.embed(&texts(1)).await);
}

#[tokio::test]
async fn a_slow_service_times_out_as_unavailable() {
    let stub = Stub::start(Behaviour::Sleep(Duration::from_secs(5))).await;
    let embedder =
        OpenAiEmbedder::new(OpenAiConfig { timeout: Duration::from_millis(300), ..config(&stub.url()) }).unwrap();
    let started = std::time::Instant::now();
    assert_unavailable(embedder.embed(&texts(1)).await);
    assert!(started.elapsed() < Duration::from_secs(4), "gave up after {:?}", started.elapsed());
    assert_eq!(stub.requests().len(), 1);
}

/// Log lines written by `tracing_subscriber::fmt`, kept in memory.
#[derive(Clone, Default)]
struct Captured(Arc<Mutex<Vec<u8>>>);

impl std::io::Write for Captured {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl<'a> tracing_subscriber::fmt::MakeWriter<'a> for Captured {
    type Writer = Captured;
    fn make_writer(&'a self) -> Self::Writer {
        self.clone()
    }
}

impl Captured {
    fn text(&self) -> String {
        String::from_utf8(self.0.lock().unwrap().clone()).unwrap()
    }
}

#[tokio::test]
async fn warnings_name_the_cause_but_never_the_key() {
    let logs = Captured::default();
    let subscriber = tracing_subscriber::fmt().with_writer(logs.clone()).with_ansi(false).finish();
    // A current-thread runtime: the whole test (and reqwest's tasks) runs on this thread.
    let _guard = tracing::subscriber::set_default(subscriber);

    let stub = Stub::start(Behaviour::Status(503)).await;
    let embedder = OpenAiEmbedder::new(OpenAiConfig { api_key: Some(KEY.into()), ..config(&stub.url()) }).unwrap();
    assert_unavailable(embedder.embed(&texts(1)).await);
    stub.stop().await;

    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let closed =
        OpenAiEmbedder::new(OpenAiConfig { api_key: Some(KEY.into()), ..config(&format!("http://127.0.0.1:{port}")) })
            .unwrap();
    assert_unavailable(closed.embed(&texts(1)).await);

    let text = logs.text();
    assert_eq!(text.matches("WARN").count(), 2, "{text}");
    assert!(text.contains("503"), "{text}");
    assert!(text.contains("cannot connect"), "{text}");
    assert!(!text.contains(KEY) && !text.contains("SUPERSECRET"), "{text}");
}

#[tokio::test]
async fn a_failing_batch_fails_the_whole_call() {
    let stub = Stub::start(Behaviour::Status(503)).await;
    let embedder = OpenAiEmbedder::new(OpenAiConfig { max_batch: 1, ..config(&stub.url()) }).unwrap();
    assert_unavailable(embedder.embed(&texts(3)).await);
    assert_eq!(stub.requests().len(), 1, "stops at the first failed batch");
    stub.stop().await;
}

// ---------------------------------------------------------------------------------------
// Configuration and secrecy
// ---------------------------------------------------------------------------------------

#[test]
fn bad_configuration_is_internal_with_a_clear_message() {
    let cases: Vec<(OpenAiConfig, &str)> = vec![
        (config("ftp://example.com"), "http"),
        (config("not a url"), "not a URL"),
        (config("unix:/var/run/embed.sock"), "http"),
        (config("http://user:pass@example.com"), "credentials"),
        (OpenAiConfig { model: "  ".into(), ..config("http://127.0.0.1:1") }, "model"),
        (OpenAiConfig { dimensions: 0, ..config("http://127.0.0.1:1") }, "dimensions"),
        (OpenAiConfig { dimensions: 8193, ..config("http://127.0.0.1:1") }, "dimensions"),
        (OpenAiConfig { max_batch: 0, ..config("http://127.0.0.1:1") }, "max_batch"),
        (OpenAiConfig { timeout: Duration::ZERO, ..config("http://127.0.0.1:1") }, "timeout"),
        (OpenAiConfig { api_key: Some("".into()), ..config("http://127.0.0.1:1") }, "API key"),
        (OpenAiConfig { api_key: Some("sk-bad\nkey".into()), ..config("http://127.0.0.1:1") }, "API key"),
    ];
    for (cfg, needle) in cases {
        let shown = format!("{cfg:?}");
        match OpenAiEmbedder::new(cfg) {
            Err(DomainError::Internal(message)) => {
                assert!(message.contains(needle), "{shown}: {message:?} should mention {needle:?}");
                assert!(!message.contains("pass") && !message.contains("sk-bad"), "{message:?} leaks a secret");
            }
            other => panic!("{shown}: expected Internal, got {other:?}"),
        }
    }
    assert!(OpenAiEmbedder::new(OpenAiConfig { dimensions: 8192, ..config("https://example.com") }).is_ok());
    assert!(OpenAiEmbedder::new(OpenAiConfig { dimensions: 1, ..config("http://localhost:8080/") }).is_ok());
}

#[test]
fn debug_masks_the_api_key() {
    let cfg = OpenAiConfig { api_key: Some(KEY.into()), ..config("http://127.0.0.1:1") };
    let shown = format!("{cfg:?} {cfg:#?}");
    assert!(!shown.contains(KEY) && !shown.contains("SUPERSECRET"), "{shown}");
    assert!(shown.contains("****"), "{shown}");

    let embedder = OpenAiEmbedder::new(cfg).unwrap();
    let shown = format!("{embedder:?} {embedder:#?}");
    assert!(!shown.contains(KEY) && !shown.contains("SUPERSECRET"), "{shown}");
    assert!(shown.contains("****") && shown.contains("text-embedding-3-small"), "{shown}");

    let unset = format!("{:?}", config("http://127.0.0.1:1"));
    assert!(unset.contains("(unset)"), "{unset}");

    let with_query = OpenAiEmbedder::new(config("https://gw.example/?token=hunter2")).unwrap();
    assert_eq!(with_query.endpoint(), "https://gw.example/v1/embeddings?token=hunter2");
    assert!(!format!("{with_query:?}").contains("hunter2"), "{with_query:?}");

    let with_password = format!("{:?}", config("http://user:hunter2@127.0.0.1:1"));
    assert!(!with_password.contains("hunter2"), "{with_password}");
}
