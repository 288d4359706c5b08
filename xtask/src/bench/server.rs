//! The server under test: a child process on a free loopback port with a temporary data dir,
//! killed and cleaned up when dropped (also when the benchmark fails part-way).

use std::fs::File;
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command};
use std::thread::sleep;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use anyhow::{Context, bail};
use serde_json::{Value, json};

const STARTUP_TIMEOUT: Duration = Duration::from_secs(60);
const ADMIN_EMAIL: &str = "bench-admin@agentgov.test";

pub struct Server {
    child: Child,
    dir: PathBuf,
    pub base: String,
    admin_key: String,
    password: String,
}

impl Server {
    pub fn start(binary: &Path) -> anyhow::Result<Self> {
        let nonce = nonce();
        let dir = std::env::temp_dir().join(format!("agentgov-bench-{nonce}"));
        std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
        let log = File::create(dir.join("server.log")).context("creating the server log")?;
        let port = free_port()?;
        let admin_key = format!("bench-admin-key-{nonce}");
        let child = Command::new(binary)
            .arg("serve")
            .env("AGENTGOV_DATA_DIR", &dir)
            .env("AGENTGOV_BIND", format!("127.0.0.1:{port}"))
            .env("AGENTGOV_ADMIN_KEY", &admin_key)
            .env("AGENTGOV_LOG_LEVEL", "warn")
            .env_remove("DATABASE_URL")
            .env_remove("REDIS_URL")
            .stdout(log.try_clone()?)
            .stderr(log)
            .spawn()
            .with_context(|| format!("starting {}", binary.display()));
        let child = match child {
            Ok(child) => child,
            Err(err) => {
                let _ = std::fs::remove_dir_all(&dir);
                return Err(err);
            }
        };
        let mut server =
            Server { child, dir, base: format!("http://127.0.0.1:{port}"), admin_key, password: format!("pw-{nonce}") };
        server.wait_healthy()?;
        Ok(server)
    }

    pub fn data_dir(&self) -> &Path {
        &self.dir
    }

    /// Creates a tenant and signs its admin in; returns the access token.
    pub fn sign_in(&self) -> anyhow::Result<String> {
        let tenant = json!({"name": "bench", "admin_email": ADMIN_EMAIL, "admin_password": self.password});
        let admin_header = format!("X-Admin-Key: {}", self.admin_key);
        let created = self.post("/api/v1/tenants", &[&admin_header], &tenant, 201)?;
        if created["api_key"].as_str().is_none() {
            bail!("POST /api/v1/tenants returned no api_key: {created}");
        }
        let login =
            self.post("/api/v1/auth/login", &[], &json!({"email": ADMIN_EMAIL, "password": self.password}), 200)?;
        login["access_token"]
            .as_str()
            .map(str::to_owned)
            .with_context(|| format!("login returned no access_token: {login}"))
    }

    /// Fails (with the server's log) if the server died during the run.
    pub fn check_still_running(&mut self) -> anyhow::Result<()> {
        if let Some(status) = self.child.try_wait()? {
            bail!("the server exited during the benchmark ({status}); its log:\n{}", self.log());
        }
        Ok(())
    }

    fn wait_healthy(&mut self) -> anyhow::Result<()> {
        let url = format!("{}/api/v1/health", self.base);
        let deadline = Instant::now() + STARTUP_TIMEOUT;
        loop {
            if let Some(status) = self.child.try_wait()? {
                bail!("the server exited at start-up ({status}); its log:\n{}", self.log());
            }
            let probe = Command::new("curl").args(["-fsS", "-o", "/dev/null", "--max-time", "2", &url]).output()?;
            if probe.status.success() {
                return Ok(());
            }
            if Instant::now() > deadline {
                bail!("{url} did not answer within {}s; server log:\n{}", STARTUP_TIMEOUT.as_secs(), self.log());
            }
            sleep(Duration::from_millis(200));
        }
    }

    /// POSTs `body` as JSON and returns the JSON response, which must have status `expect`.
    fn post(&self, path: &str, headers: &[&str], body: &Value, expect: u16) -> anyhow::Result<Value> {
        let mut command = Command::new("curl");
        command.args(["-sS", "--max-time", "30", "-X", "POST", "-H", "Content-Type: application/json"]);
        for header in headers {
            command.args(["-H", header]);
        }
        command.args(["--data-binary", &body.to_string(), "-w", "\n%{http_code}"]).arg(format!("{}{path}", self.base));
        let out = crate::cmd::output(&mut command)?;
        let (response, status) = out.rsplit_once('\n').context("curl printed no status code")?;
        let status: u16 = status.trim().parse().with_context(|| format!("curl status {status:?}"))?;
        if status != expect {
            bail!("POST {path} answered {status}, expected {expect}: {response}");
        }
        serde_json::from_str(response).with_context(|| format!("POST {path} returned non-JSON: {response}"))
    }

    fn log(&self) -> String {
        std::fs::read_to_string(self.dir.join("server.log")).unwrap_or_else(|err| format!("(unreadable: {err})"))
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// A port the OS just handed out on loopback (released again for the server to bind).
fn free_port() -> anyhow::Result<u16> {
    let listener = TcpListener::bind("127.0.0.1:0").context("finding a free loopback port")?;
    Ok(listener.local_addr()?.port())
}

/// Unique enough for a temp dir name and throwaway credentials.
fn nonce() -> String {
    let nanos = SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_nanos()).unwrap_or_default();
    format!("{}-{nanos:x}", std::process::id())
}
