//! What the SQL stores (`store-sqlite`, `store-postgres`) share to the letter: the tables
//! ([`tables!`]), the rows and their conversions to and from the domain's records
//! ([`rows!`], [`rows`]), rows read by name, and the checked conversions of counts. Each
//! store expands the macros after saying, in its `columns` module, what an id, an instant
//! and a JSON document are on its backend; queries and the rows that really differ stay in
//! each store.

pub mod rows;
mod tables;

use agentgov_domain::ids::TenantId;
use agentgov_domain::model::{GuardLabel, GuardStatsKey};
use agentgov_domain::ports::HourlyKey;
use agentgov_domain::{DomainError, Result};
use diesel::QueryableByName;
use diesel::sql_types::{BigInt, SmallInt, Text};

/// One hour's count of one label, as both stores' `hourly_counts` queries answer it.
#[derive(Debug, QueryableByName)]
pub struct HourlyRow {
    #[diesel(sql_type = BigInt)]
    pub hour: i64,
    #[diesel(sql_type = Text)]
    pub label: String,
    #[diesel(sql_type = BigInt)]
    pub count: i64,
}

impl HourlyRow {
    /// The count under its key, for `tenant` and `metric` (the query's own filters).
    pub fn into_key(self, tenant: TenantId, metric: &str) -> (HourlyKey, i64) {
        (HourlyKey { tenant_id: tenant, metric: metric.to_owned(), hour: self.hour, label: self.label }, self.count)
    }
}

/// One hour's screenings of one verdict in one latency bucket, summed, as both stores'
/// `guard_stats` queries answer it.
#[derive(Debug, QueryableByName)]
pub struct GuardStatsRow {
    #[diesel(sql_type = BigInt)]
    pub hour: i64,
    #[diesel(sql_type = Text)]
    pub verdict: String,
    #[diesel(sql_type = SmallInt)]
    pub bucket: i16,
    #[diesel(sql_type = BigInt)]
    pub total: i64,
}

impl GuardStatsRow {
    /// The total under its key, for `tenant` (the query's own filter). `Internal` when the
    /// stored verdict is not one the domain knows.
    pub fn into_key(self, tenant: TenantId) -> Result<(GuardStatsKey, i64)> {
        let verdict = GuardLabel::parse(&self.verdict).ok_or_else(|| {
            DomainError::Internal(format!("unreadable stored value in guard_stats.verdict: {:?}", self.verdict))
        })?;
        Ok((GuardStatsKey { tenant_id: tenant, hour: self.hour, verdict, bucket: self.bucket }, self.total))
    }
}

/// A count for a `BIGINT` (Postgres) or `INTEGER` (SQLite) column.
pub fn stored_count(n: u64) -> Result<i64> {
    i64::try_from(n).map_err(|_| DomainError::Internal(format!("count {n} does not fit a database integer")))
}

/// A count read back (`NULL` as 0); negative only if the row was corrupted.
pub fn read_count(column: &str, n: Option<i64>) -> Result<u64> {
    let n = n.unwrap_or(0);
    u64::try_from(n).map_err(|_| DomainError::Internal(format!("invalid {column} in the database: {n}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_convert_both_ways_and_refuse_what_does_not_fit() {
        assert_eq!(stored_count(7).ok(), Some(7));
        assert!(matches!(stored_count(u64::MAX), Err(DomainError::Internal(_))));
        assert_eq!(read_count("c", None).ok(), Some(0));
        assert_eq!(read_count("c", Some(3)).ok(), Some(3));
        assert!(matches!(read_count("c", Some(-1)), Err(DomainError::Internal(_))));
    }

    #[test]
    fn a_stats_row_with_an_unknown_verdict_is_an_internal_error() {
        let tenant: TenantId = "0190f000-0000-7000-8000-000000000001".parse().unwrap_or_else(|_| unreachable!());
        let row = GuardStatsRow { hour: 1, verdict: "benign".into(), bucket: 2, total: 3 };
        let (key, total) = row.into_key(tenant).ok().unwrap_or_else(|| unreachable!());
        assert_eq!((key.verdict, key.bucket, total), (GuardLabel::Benign, 2, 3));
        let row = GuardStatsRow { hour: 1, verdict: "evil".into(), bucket: 2, total: 3 };
        assert!(matches!(row.into_key(tenant), Err(DomainError::Internal(_))));
    }
}
