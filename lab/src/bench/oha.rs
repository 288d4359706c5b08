//! One `oha` run: a fixed duration or a fixed number of requests at `CONCURRENCY`
//! connections (or as many as `Load::connections()` says), optionally a JSON `POST`; its JSON
//! summary is parsed by `report::Row`.

use std::process::Command;
use std::thread::JoinHandle;
use std::time::Duration;

use anyhow::Context;
use serde_json::Value;

use xtask::cmd;

/// Concurrent keep-alive connections of a run, unless it says otherwise.
pub const CONCURRENCY: u32 = 64;

/// When a run ends.
#[derive(Debug, Clone, Copy)]
pub enum Stop {
    /// After this long; requests in flight at the deadline finish (and count).
    After(Duration),
    /// After exactly this many requests.
    Requests(u64),
}

/// What each request of a `POST` run sends.
#[derive(Debug, Clone)]
pub enum Body {
    /// This JSON body.
    Json(String),
    /// One line of this file, a JSON body each, picked per request (`oha -Z`).
    JsonLines(std::path::PathBuf),
}

#[derive(Debug, Clone)]
pub struct Load {
    pub url: String,
    pub headers: Vec<String>,
    /// A JSON body: the run is a `POST` of it.
    pub json_body: Option<Body>,
    pub stop: Stop,
    /// Concurrent keep-alive connections (`CONCURRENCY` unless set with `Load::connections()`).
    pub connections: u32,
    /// Requests per second over all connections (`-q`); as fast as possible when `None`.
    pub rate: Option<u32>,
}

impl Load {
    pub fn get(url: String, headers: Vec<String>, stop: Stop) -> Self {
        Load { url, headers, json_body: None, stop, connections: CONCURRENCY, rate: None }
    }

    pub fn post_json(url: String, headers: Vec<String>, body: String, stop: Stop) -> Self {
        Self::post(url, headers, Body::Json(body), stop)
    }

    pub fn post(url: String, headers: Vec<String>, body: Body, stop: Stop) -> Self {
        Load { url, headers, json_body: Some(body), stop, connections: CONCURRENCY, rate: None }
    }

    /// The same run over `connections` connections.
    pub fn connections(self, connections: u32) -> Self {
        Load { connections, ..self }
    }

    /// The same run at a steady `per_second` requests per second.
    pub fn rate(self, per_second: u32) -> Self {
        Load { rate: Some(per_second), ..self }
    }

    fn command(&self) -> Command {
        let mut command = Command::new("oha");
        command.args(["--no-tui", "--output-format", "json", "-c", &self.connections.to_string()]);
        match self.stop {
            // `-w`: requests in flight at the deadline finish (and count) rather than being aborted.
            Stop::After(duration) => command.args(["-w", "-z", &format!("{}s", duration.as_secs())]),
            Stop::Requests(n) => command.args(["-n", &n.to_string()]),
        };
        if let Some(rate) = self.rate {
            command.args(["-q", &rate.to_string()]);
        }
        if let Some(body) = &self.json_body {
            command.args(["-m", "POST", "-H", "Content-Type: application/json"]);
            match body {
                Body::Json(body) => command.args(["-d", body]),
                Body::JsonLines(path) => command.arg("-Z").arg(path),
            };
        }
        for header in &self.headers {
            command.args(["-H", header]);
        }
        command.arg(&self.url);
        command
    }

    /// Runs to the end; returns oha's JSON summary.
    pub fn run(&self) -> anyhow::Result<Value> {
        parse(cmd::output(&mut self.command()))
    }

    /// Starts the run on a thread, so the caller can report progress meanwhile.
    pub fn spawn(&self) -> Running {
        let mut command = self.command();
        Running(std::thread::spawn(move || parse(cmd::output(&mut command))))
    }
}

/// A run started with [`Load::spawn`].
pub struct Running(JoinHandle<anyhow::Result<Value>>);

impl Running {
    pub fn is_finished(&self) -> bool {
        self.0.is_finished()
    }

    /// Waits for the end of the run; returns oha's JSON summary.
    pub fn join(self) -> anyhow::Result<Value> {
        self.0.join().map_err(|_| anyhow::anyhow!("the thread running oha panicked"))?
    }
}

fn parse(out: anyhow::Result<String>) -> anyhow::Result<Value> {
    serde_json::from_str(&out?).context("parsing oha's JSON output")
}

pub fn version() -> anyhow::Result<String> {
    Ok(cmd::output(Command::new("oha").arg("--version"))?.trim().to_owned())
}

/// How many responses of oha's run had `status`.
pub fn status_count(json: &serde_json::Value, status: &str) -> u64 {
    json["statusCodeDistribution"][status].as_u64().unwrap_or(0)
}
