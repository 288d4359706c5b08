//! [`RedisCache`]: the cache port on shared multiplexed connections ([`Connections`]), every
//! key under one prefix.

use std::time::Duration;

use agentgov_domain::ports::{Cache, Counter, MAX_MAXIMA_MEMBERS, Maxima, Raise};
use agentgov_domain::{DomainError, Result};
use async_trait::async_trait;
use deadpool_redis::redis;

use crate::conn::{Connections, answer, from_pttl, millis};

const SERVICE: &str = "cache";

/// Increments and, if the key has no expiry yet (first increment, or a counter left without
/// one), starts the window. Atomic on the server; answers `{count, pttl}`.
const INCR_SCRIPT: &str = r"
local count = redis.call('INCR', KEYS[1])
local ttl = redis.call('PTTL', KEYS[1])
if ttl < 0 then
  redis.call('PEXPIRE', KEYS[1], ARGV[1])
  ttl = tonumber(ARGV[1])
end
return {count, ttl}
";

/// Takes one back from a counter that exists and is above zero; DECR keeps its expiry.
/// Atomic on the server.
const DECR_SCRIPT: &str = r"
local count = tonumber(redis.call('GET', KEYS[1]) or '0')
if count and count > 0 then
  redis.call('DECR', KEYS[1])
end
return 0
";

/// Holds a place in the sorted set `KEYS[1]` (member: the holder, score: its deadline in
/// the server's milliseconds) when the holder has one already or fewer than `ARGV[2]` are
/// live, after dropping the expired ones. The set itself lives as long as its last deadline.
/// The server's clock, so replicas' clocks need not agree. Answers 1 when held.
const HOLD_PLACE_SCRIPT: &str = r"
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local ttl = tonumber(ARGV[3])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
local mine = redis.call('ZSCORE', KEYS[1], ARGV[1])
if mine or redis.call('ZCARD', KEYS[1]) < tonumber(ARGV[2]) then
  redis.call('ZADD', KEYS[1], now + ttl, ARGV[1])
  if redis.call('PTTL', KEYS[1]) < ttl then
    redis.call('PEXPIRE', KEYS[1], ttl)
  end
  return 1
end
return 0
";

/// The shared cache. Cloning shares the connections.
#[derive(Clone)]
pub struct RedisCache {
    connections: Connections,
    prefix: String,
}

impl RedisCache {
    /// A cache on `url` keeping every key under `prefix` (e.g. `agentgov:`), over
    /// `connections` multiplexed connections that every caller shares. Connects lazily: an
    /// unreachable Redis shows on the first call (`ping` at start-up), not here; a
    /// malformed URL is an error here.
    pub fn connect(url: &str, prefix: &str, connections: usize) -> Result<RedisCache> {
        Ok(Self { connections: Connections::new(url, connections, SERVICE)?, prefix: prefix.to_owned() })
    }

    fn key(&self, key: &str) -> String {
        format!("{}{key}", self.prefix)
    }

    fn revoked_key(&self, jti: &str) -> String {
        format!("{}revoked:{jti}", self.prefix)
    }

    async fn query<T: redis::FromRedisValue>(&self, cmd: &redis::Cmd) -> Result<T> {
        answer(SERVICE, cmd.query_async(&mut self.connections.next()).await)
    }
}

impl std::fmt::Debug for RedisCache {
    // The connections' own Debug would print the connection info, password included.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RedisCache")
            .field("prefix", &self.prefix)
            .field("connections", &self.connections.count())
            .finish()
    }
}

#[async_trait]
impl Cache for RedisCache {
    async fn get(&self, key: &str) -> Result<Option<Vec<u8>>> {
        self.query(redis::cmd("GET").arg(self.key(key))).await
    }

    async fn set(&self, key: &str, value: &[u8], ttl: Duration) -> Result<()> {
        self.query(redis::cmd("SET").arg(self.key(key)).arg(value).arg("PX").arg(millis(ttl))).await
    }

    async fn delete(&self, key: &str) -> Result<()> {
        self.query(redis::cmd("DEL").arg(self.key(key))).await
    }

    async fn take(&self, key: &str) -> Result<Option<Vec<u8>>> {
        // GETDEL (Redis 6.2+) is atomic: one of concurrent takers gets the value.
        self.query(redis::cmd("GETDEL").arg(self.key(key))).await
    }

    async fn incr(&self, key: &str, window: Duration) -> Result<Counter> {
        let cmd = redis::cmd("EVAL").arg(INCR_SCRIPT).arg(1).arg(self.key(key)).arg(millis(window)).clone();
        let (count, ttl): (u64, i64) = self.query(&cmd).await?;
        Ok(Counter { count, ttl: from_pttl(ttl) })
    }

    async fn decr(&self, key: &str) -> Result<()> {
        let cmd = redis::cmd("EVAL").arg(DECR_SCRIPT).arg(1).arg(self.key(key)).clone();
        let _: i64 = self.query(&cmd).await?;
        Ok(())
    }

    async fn get_counter(&self, key: &str) -> Result<Option<Counter>> {
        let key = self.key(key);
        let result = redis::pipe()
            .atomic()
            .cmd("GET")
            .arg(&key)
            .cmd("PTTL")
            .arg(&key)
            .query_async(&mut self.connections.next())
            .await;
        let (count, ttl): (Option<u64>, i64) = answer(SERVICE, result)?;
        Ok(count.map(|count| Counter { count, ttl: from_pttl(ttl) }))
    }

    async fn hold_place(&self, key: &str, holder: &str, cap: u64, ttl: Duration) -> Result<bool> {
        let cmd = redis::cmd("EVAL")
            .arg(HOLD_PLACE_SCRIPT)
            .arg(1)
            .arg(self.key(key))
            .arg(holder)
            .arg(cap)
            .arg(millis(ttl))
            .clone();
        let held: i64 = self.query(&cmd).await?;
        Ok(held == 1)
    }

    async fn release_place(&self, key: &str, holder: &str) -> Result<()> {
        let _: i64 = self.query(redis::cmd("ZREM").arg(self.key(key)).arg(holder)).await?;
        Ok(())
    }

    async fn raise(&self, raises: &[Raise], ttl: Duration) -> Result<()> {
        if raises.is_empty() {
            return Ok(());
        }
        // A sorted set per key, the value as the member's score: `ZADD … GT` (Redis 6.2+)
        // only ever raises a score, and adds an absent member.
        let mut pipe = redis::pipe();
        for r in raises {
            let key = self.key(&r.key);
            pipe.cmd("ZADD").arg(&key).arg("GT").arg(r.value).arg(&r.member).ignore();
            pipe.cmd("PEXPIRE").arg(&key).arg(millis(ttl)).ignore();
        }
        answer(SERVICE, pipe.query_async::<()>(&mut self.connections.next()).await)
    }

    async fn maxima(&self, key: &str) -> Result<Maxima> {
        // One past the most read, to tell "exactly the most" from "more".
        let last = isize::try_from(MAX_MAXIMA_MEMBERS).unwrap_or(isize::MAX);
        let cmd = redis::cmd("ZRANGE").arg(self.key(key)).arg(0).arg(last).arg("WITHSCORES").clone();
        let members: Vec<(String, f64)> = self.query(&cmd).await?;
        if members.len() > MAX_MAXIMA_MEMBERS {
            return Ok(Maxima::TooMany);
        }
        // Scores are doubles: exact for the integers raised (up to 2^53).
        #[expect(clippy::cast_possible_truncation, reason = "scores are integers raised by `raise`")]
        Ok(Maxima::Members(members.into_iter().map(|(m, v)| (m, v as i64)).collect()))
    }

    async fn revoke_token(&self, jti: &str, ttl: Duration) -> Result<()> {
        self.query(redis::cmd("SET").arg(self.revoked_key(jti)).arg("1").arg("PX").arg(millis(ttl))).await
    }

    async fn is_token_revoked(&self, jti: &str) -> Result<bool> {
        let found: u64 = self.query(redis::cmd("EXISTS").arg(self.revoked_key(jti))).await?;
        Ok(found > 0)
    }

    async fn ping(&self) -> Result<()> {
        let pong: String = self.query(&redis::cmd("PING")).await?;
        if pong == "PONG" {
            Ok(())
        } else {
            Err(DomainError::internal(format!("cache: unexpected PING answer {pong:?}")))
        }
    }

    fn backend(&self) -> &'static str {
        "redis"
    }
}
