//! Real SIEM receivers for the forwarding tests: rsyslog (Debian's package) on loopback
//! ports writing what it receives to a file, and a Splunk HTTP Event Collector stand-in.
//!
//! rsyslog runs in the foreground as a child process with its own configuration; each line
//! of its output file is `APP-NAME MSGID MSG`. Outside CI without `rsyslogd` the tests that
//! need it print a skip line; in CI they fail instead.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use actix_web::{App, HttpRequest, HttpResponse, HttpServer, web};
use serde_json::{Value, json};

/// Whether `rsyslogd` can be run here; in CI its absence is a failure, not a skip.
pub fn rsyslog_available() -> bool {
    let found = Command::new("rsyslogd").arg("-v").stdout(Stdio::null()).stderr(Stdio::null()).status().is_ok();
    if !found {
        if agentgov_store_conformance::in_ci() {
            panic!("rsyslogd is not installed, but CI is set: .ci/run installs Debian's rsyslog");
        }
        eprintln!(
            "skipped: install rsyslog (apt-get install rsyslog rsyslog-gnutls rsyslog-relp) to run the SIEM tests"
        );
    }
    found
}

/// A free loopback port for TCP and the same number free for UDP.
fn free_port() -> u16 {
    loop {
        let tcp = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = tcp.local_addr().unwrap().port();
        if std::net::UdpSocket::bind(("127.0.0.1", port)).is_ok() {
            return port;
        }
    }
}

/// The receiver's certificate and key (PEM files) for a TLS listener, and the CA to trust.
pub struct TlsFiles {
    pub cert: PathBuf,
    pub key: PathBuf,
}

impl TlsFiles {
    /// A self-signed certificate for `localhost` and 127.0.0.1, written under `dir`; it is
    /// also the CA file a client trusts.
    pub fn localhost(dir: &Path) -> Self {
        let cert = rcgen::generate_simple_self_signed(vec!["localhost".into(), "127.0.0.1".into()]).unwrap();
        let files = TlsFiles { cert: dir.join("rsyslog-cert.pem"), key: dir.join("rsyslog-key.pem") };
        std::fs::write(&files.cert, cert.cert.pem()).unwrap();
        std::fs::write(&files.key, cert.signing_key.serialize_pem()).unwrap();
        files
    }
}

/// An rsyslog listening on a TCP port (octet-counted frames; TLS with `TlsFiles`) and the
/// UDP port of the same number, writing every message to `out`.
pub struct Rsyslog {
    dir: PathBuf,
    conf: PathBuf,
    child: Option<Child>,
    pub port: u16,
    pub out: PathBuf,
}

impl Rsyslog {
    pub async fn start(dir: &Path, tls: Option<&TlsFiles>) -> Self {
        Self::start_with(dir, tls, false).await
    }

    /// An rsyslog whose TCP port takes RELP (`imrelp`, Debian's rsyslog-relp).
    pub async fn start_relp(dir: &Path) -> Self {
        Self::start_with(dir, None, true).await
    }

    async fn start_with(dir: &Path, tls: Option<&TlsFiles>, relp: bool) -> Self {
        let dir = dir.join(format!("rsyslog-{}", uuid::Uuid::now_v7().simple()));
        std::fs::create_dir_all(&dir).unwrap();
        let port = free_port();
        let out = dir.join("received.log");
        let tcp = match tls {
            None => r#"module(load="imtcp")"#.to_owned(),
            Some(files) => format!(
                r#"global(DefaultNetstreamDriver="gtls" DefaultNetstreamDriverCAFile="{cert}"
       DefaultNetstreamDriverCertFile="{cert}" DefaultNetstreamDriverKeyFile="{key}")
module(load="imtcp" StreamDriver.Name="gtls" StreamDriver.Mode="1" StreamDriver.AuthMode="anon")"#,
                cert = files.cert.display(),
                key = files.key.display()
            ),
        };
        // With RELP, the port takes RELP instead of octet-counted syslog.
        let input = if relp {
            format!(
                r#"module(load="imrelp")
input(type="imrelp" port="{port}" address="127.0.0.1" ruleset="received")"#
            )
        } else {
            format!(r#"input(type="imtcp" port="{port}" address="127.0.0.1" ruleset="received")"#)
        };
        let conf = dir.join("rsyslog.conf");
        std::fs::write(
            &conf,
            format!(
                r#"global(workDirectory="{dir}" maxMessageSize="64k" net.enableDNS="off")
{tcp}
module(load="imudp")
template(name="line" type="string" string="%app-name% %msgid% %msg%\n")
ruleset(name="received") {{
  action(type="omfile" file="{out}" template="line")
}}
{input}
input(type="imudp" port="{port}" address="127.0.0.1" ruleset="received")
"#,
                dir = dir.display(),
                out = out.display(),
            ),
        )
        .unwrap();
        let mut rsyslog = Rsyslog { dir, conf, child: None, port, out };
        rsyslog.run().await;
        rsyslog
    }

    /// Starts rsyslogd (again, on the same ports and file) and waits until it accepts.
    pub async fn run(&mut self) {
        assert!(self.child.is_none(), "already running");
        let child = Command::new("rsyslogd")
            .args(["-n", "-f"])
            .arg(&self.conf)
            .arg("-i")
            .arg(self.dir.join("rsyslogd.pid"))
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(self.dir.join("rsyslogd.stderr")).unwrap())
            .spawn()
            .expect("starting rsyslogd");
        self.child = Some(child);
        for _ in 0..200 {
            if tokio::net::TcpStream::connect(("127.0.0.1", self.port)).await.is_ok() {
                return;
            }
            tokio::time::sleep(Duration::from_millis(25)).await;
        }
        let stderr = std::fs::read_to_string(self.dir.join("rsyslogd.stderr")).unwrap_or_default();
        panic!("rsyslogd did not start listening on {}: {stderr}", self.port);
    }

    /// Stops rsyslogd as a service manager would (SIGTERM: it writes out what it has
    /// read) and waits for it to exit.
    pub async fn stop(&mut self) {
        self.signal("-TERM").await;
    }

    /// Kills rsyslogd (SIGKILL: what it had read but not written yet is lost with it).
    pub async fn kill(&mut self) {
        self.signal("-KILL").await;
    }

    async fn signal(&mut self, signal: &str) {
        if let Some(mut child) = self.child.take() {
            let _ = Command::new("kill").args([signal, &child.id().to_string()]).status();
            tokio::task::spawn_blocking(move || child.wait()).await.unwrap().unwrap();
        }
    }

    /// The lines written so far: `APP-NAME MSGID MSG`.
    pub fn lines(&self) -> Vec<String> {
        std::fs::read_to_string(&self.out).unwrap_or_default().lines().map(str::to_owned).collect()
    }

    pub fn address(&self) -> String {
        format!("127.0.0.1:{}", self.port)
    }
}

impl Drop for Rsyslog {
    fn drop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

/// A CEF line's parts: the seven header fields and the extension's key=value pairs
/// (unescaped). Panics on a line that is not valid CEF.
pub fn parse_cef(line: &str) -> (Vec<String>, std::collections::HashMap<String, String>) {
    let body = line.strip_prefix("CEF:").unwrap_or_else(|| panic!("not CEF: {line}"));
    // Header: seven `|`-separated fields (with `\|` and `\\` escapes), then the extension.
    let mut header = Vec::new();
    let mut field = String::new();
    let mut chars = body.chars();
    while header.len() < 7 {
        match chars.next() {
            Some('\\') => field.push(chars.next().unwrap()),
            Some('|') => header.push(std::mem::take(&mut field)),
            Some(c) => field.push(c),
            None => panic!("CEF header has fewer than 8 fields: {line}"),
        }
    }
    let extension: String = chars.collect();
    // Extension: `key=value` pairs separated by spaces; a value runs to the next ` key=`.
    let mut pairs = std::collections::HashMap::new();
    let mut key: Option<String> = None;
    let mut value = String::new();
    let mut rest = extension.as_str();
    while !rest.is_empty() {
        let next_key = rest.find(' ').and_then(|sp| {
            let after = &rest[sp + 1..];
            let eq = after.find('=')?;
            let candidate = &after[..eq];
            (!candidate.is_empty() && candidate.chars().all(|c| c.is_ascii_alphanumeric())).then_some((sp, eq))
        });
        let (chunk, advance) = match (&key, next_key) {
            (None, _) => {
                let eq = rest.find('=').unwrap_or_else(|| panic!("extension without key: {line}"));
                key = Some(rest[..eq].to_owned());
                rest = &rest[eq + 1..];
                continue;
            }
            (Some(_), Some((sp, _))) => (&rest[..sp], sp + 1),
            (Some(_), None) => (rest, rest.len()),
        };
        value.push_str(chunk);
        rest = &rest[advance..];
        let k = key.take().unwrap();
        let unescaped = value.replace("\\=", "=").replace("\\n", "\n").replace("\\r", "\r").replace("\\\\", "\\");
        pairs.insert(k, unescaped);
        value.clear();
    }
    (header, pairs)
}

/// A stand-in for Splunk's HTTP Event Collector: checks the token, keeps the events of
/// every accepted request in order, and answers 503 while `down`.
pub struct HecReceiver {
    pub url: String,
    pub token: String,
    events: Arc<Mutex<Vec<Value>>>,
    pub down: Arc<AtomicBool>,
    pub requests: Arc<AtomicUsize>,
    server: actix_web::dev::ServerHandle,
}

#[derive(Clone)]
struct HecState {
    token: String,
    events: Arc<Mutex<Vec<Value>>>,
    down: Arc<AtomicBool>,
    requests: Arc<AtomicUsize>,
}

async fn collect(req: HttpRequest, body: web::Bytes, state: web::Data<HecState>) -> HttpResponse {
    state.requests.fetch_add(1, Ordering::SeqCst);
    let authorized = req
        .headers()
        .get("authorization")
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v == format!("Splunk {}", state.token));
    if !authorized {
        return HttpResponse::Unauthorized().json(json!({"text": "Invalid token", "code": 4}));
    }
    if state.down.load(Ordering::SeqCst) {
        return HttpResponse::ServiceUnavailable().json(json!({"text": "Server is busy", "code": 9}));
    }
    let parsed: Result<Vec<Value>, _> = serde_json::Deserializer::from_slice(&body).into_iter::<Value>().collect();
    match parsed {
        Ok(events) if !events.is_empty() && events.iter().all(|e| e.get("event").is_some()) => {
            state.events.lock().unwrap().extend(events);
            HttpResponse::Ok().json(json!({"text": "Success", "code": 0}))
        }
        Ok(_) => HttpResponse::BadRequest().json(json!({"text": "Event field is required", "code": 12})),
        Err(_) => HttpResponse::BadRequest().json(json!({"text": "Invalid data format", "code": 6})),
    }
}

impl HecReceiver {
    pub async fn start() -> Self {
        let token = format!("hec-{}", uuid::Uuid::now_v7().simple());
        let state =
            HecState { token: token.clone(), events: Arc::default(), down: Arc::default(), requests: Arc::default() };
        let data = web::Data::new(state.clone());
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        let server = HttpServer::new(move || {
            App::new()
                .app_data(data.clone())
                .app_data(web::PayloadConfig::new(16 * 1024 * 1024))
                .route("/services/collector/event", web::post().to(collect))
        })
        .workers(1)
        .listen(listener)
        .unwrap()
        .run();
        let handle = server.handle();
        tokio::spawn(server);
        HecReceiver {
            url: format!("http://{addr}"),
            token,
            events: state.events,
            down: state.down,
            requests: state.requests,
            server: handle,
        }
    }

    /// The `event` objects received, in order.
    pub fn events(&self) -> Vec<Value> {
        self.events.lock().unwrap().iter().map(|e| e["event"].clone()).collect()
    }

    /// Whole HEC objects (`time`, `host`, `source`, `sourcetype`, `event`).
    pub fn raw(&self) -> Vec<Value> {
        self.events.lock().unwrap().clone()
    }
}

impl Drop for HecReceiver {
    fn drop(&mut self) {
        let handle = self.server.clone();
        drop(tokio::spawn(async move { handle.stop(false).await }));
    }
}
