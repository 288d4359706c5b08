//! A database upgraded to the job queue keeps its jobs and versions: the tables the queue
//! replaced are filled as the schema before it had them, the migration runs, and the store
//! answers every job, chunk and version (`agentgov_store_conformance::upgrade`); reverted,
//! the rows go back to the old tables.
#![expect(clippy::unwrap_used, reason = "test code: a failed unwrap is a failed test")]

use agentgov_domain::model::audit::unix_micros;
use agentgov_domain::model::{JobStatus, ModelKind};
use agentgov_domain::ports::ModelRegistry as _;
use agentgov_store_conformance::fixtures::seed_pair;
use agentgov_store_conformance::upgrade::{OldJobs, assert_upgraded, old_jobs};
use agentgov_store_postgres::PgStore;
use diesel::QueryableByName;
use diesel::sql_types::BigInt;
use diesel_async::{AsyncConnection, AsyncPgConnection, RunQueryDsl, SimpleAsyncConnection};
use time::OffsetDateTime;
use uuid::Uuid;

mod common;

const JOB_QUEUE: &str = "20261128000001";

fn text(s: &str) -> String {
    format!("'{}'", s.replace('\'', "''"))
}

fn opt_text(s: Option<&str>) -> String {
    s.map_or("NULL".into(), text)
}

fn id(u: Uuid) -> String {
    text(&u.hyphenated().to_string())
}

fn at(t: OffsetDateTime) -> String {
    format!("(TIMESTAMPTZ 'epoch' + {} * INTERVAL '1 microsecond')", unix_micros(t))
}

fn opt_at(t: Option<OffsetDateTime>) -> String {
    t.map_or("NULL".into(), at)
}

fn blob(bytes: &[u8]) -> String {
    format!("'\\x{}'::bytea", bytes.iter().map(|b| format!("{b:02x}")).collect::<String>())
}

macro_rules! json {
    ($value:expr) => {
        text(&serde_json::to_string(&$value).unwrap())
    };
}

fn opt_int(v: Option<i32>) -> String {
    v.map_or("NULL".into(), |v| v.to_string())
}

/// The rows of `old` as INSERTs into the tables before the job queue.
fn old_rows(old: &OldJobs) -> String {
    let mut sql = String::new();
    let t = id(old.tenant.0);
    let lease = |l: Option<agentgov_domain::model::Lease>| {
        (l.map_or("NULL".into(), |l| id(l.token)), l.map_or("NULL".into(), |l| at(l.until)))
    };
    for j in [&old.export_done, &old.export_queued] {
        let (token, until) = lease(j.lease);
        sql += &format!(
            "INSERT INTO export_jobs VALUES ({}, {t}, {}, {}, {}, {}, {}, {:?}, {}, {}, {}, {}, {}, {}, {}, {}, {}, \
             {token}, {until});\n",
            id(j.id.0),
            text(j.requested_by.kind.as_str()),
            text(&j.requested_by.id),
            text(j.format.as_str()),
            json!(j.filters),
            text(j.status.as_str()),
            j.progress,
            j.rows,
            j.bytes,
            opt_text(j.error.as_deref()),
            at(j.created_at),
            opt_at(j.started_at),
            opt_at(j.finished_at),
            opt_at(j.expires_at),
            j.chunks,
            j.attempts,
        );
    }
    for (index, data) in &old.chunks {
        sql += &format!("INSERT INTO export_chunks VALUES ({}, {index}, {});\n", id(old.export_done.id.0), blob(data));
    }
    for (j, examples) in [(&old.guard_done, &[][..]), (&old.guard_running, &old.examples[..])] {
        let (token, until) = lease(j.lease);
        sql += &format!(
            "INSERT INTO guard_tasks VALUES ({}, {t}, {}, {}, {}, {:?}, {}, {}, {}, {}, {}, {}, {}, {}, {token}, \
             {until});\n",
            id(j.id.0),
            text(j.requested_by.kind.as_str()),
            text(&j.requested_by.id),
            text(j.status.as_str()),
            j.progress,
            opt_text(j.error.as_deref()),
            opt_int(j.model_version),
            j.examples,
            json!(examples),
            at(j.created_at),
            opt_at(j.started_at),
            opt_at(j.finished_at),
            j.attempts,
        );
    }
    for m in &old.guard_models {
        let i = &m.info;
        sql += &format!(
            "INSERT INTO guard_models VALUES ({t}, {}, {}, {:?}, {}, {}, {}, {}, {}, {});\n",
            i.version,
            i.active,
            i.threshold,
            i.examples,
            i.tenant_examples,
            json!(i.metrics),
            i.task_id.map_or("NULL".into(), |t| id(t.0)),
            at(i.trained_at),
            blob(&m.weights),
        );
    }
    let a = &old.anomaly_failed;
    sql += &format!(
        "INSERT INTO anomaly_tasks VALUES ({}, {t}, {}, {}, {}, {:?}, {}, {}, {}, {}, {}, {}, {}, NULL, NULL);\n",
        id(a.id.0),
        text(a.requested_by.kind.as_str()),
        text(&a.requested_by.id),
        text(a.status.as_str()),
        a.progress,
        opt_text(a.error.as_deref()),
        opt_int(a.model_version),
        a.window_days,
        at(a.created_at),
        opt_at(a.started_at),
        opt_at(a.finished_at),
        a.attempts,
    );
    let m = &old.anomaly_model;
    sql += &format!(
        "INSERT INTO anomaly_models VALUES ({t}, {}, {}, {}, {});\n",
        m.info.version,
        m.info.active,
        json!(m.info),
        text(&m.model)
    );
    for j in [&old.cluster_done, &old.cluster_queued] {
        sql += &format!(
            "INSERT INTO discovery_jobs VALUES ({}, {t}, {}, {}, {}, {:?}, {}, {}, {}, {}, {}, {}, NULL, NULL);\n",
            id(j.id.0),
            text(j.requested_by.kind.as_str()),
            text(&j.requested_by.id),
            text(j.status.as_str()),
            j.progress,
            opt_text(j.error.as_deref()),
            j.summary.map_or("NULL".into(), |s| json!(s)),
            at(j.created_at),
            opt_at(j.started_at),
            opt_at(j.finished_at),
            j.attempts,
        );
    }
    sql
}

#[derive(QueryableByName)]
struct Examples {
    #[diesel(sql_type = diesel::sql_types::Text)]
    training_examples: String,
}

#[derive(QueryableByName)]
struct Count {
    #[diesel(sql_type = BigInt)]
    n: i64,
}

async fn count(c: &mut AsyncPgConnection, sql: &str) -> i64 {
    diesel::sql_query(sql).get_result::<Count>(c).await.unwrap().n
}

#[tokio::test]
async fn an_upgraded_database_keeps_its_jobs_chunks_and_versions() {
    let Some((url, _guard)) = common::fresh_schema().await else { return };
    let store = PgStore::connect(&url, 2).await.unwrap();
    store.run_migrations().await.unwrap();
    let (tenant, _) = seed_pair(&store, "upgraded").await;
    // Back to the schema before the job queue, and its tables filled.
    assert_eq!(store.revert_last_migration().await.unwrap().replace('-', ""), JOB_QUEUE);
    let old = old_jobs(tenant.id);
    let mut c = AsyncPgConnection::establish(&url).await.unwrap();
    c.batch_execute(&old_rows(&old)).await.unwrap();

    store.run_migrations().await.unwrap();
    assert_upgraded(&store, &old).await;

    // Reverted, every row goes back, the new ones included.
    assert_eq!(store.revert_last_migration().await.unwrap().replace('-', ""), JOB_QUEUE);
    assert_eq!(count(&mut c, "SELECT count(*) AS n FROM export_jobs").await, 2);
    assert_eq!(count(&mut c, "SELECT count(*) AS n FROM export_chunks").await, 2);
    assert_eq!(count(&mut c, "SELECT count(*) AS n FROM guard_tasks").await, 2);
    assert_eq!(count(&mut c, "SELECT count(*) AS n FROM guard_models").await, 3, "the version trained since");
    let trained_at = format!(
        "SELECT (extract(epoch FROM trained_at) * 1000000)::bigint AS n FROM guard_models \
         WHERE version = 1 AND tenant_id = '{}'",
        old.tenant.0.hyphenated()
    );
    assert_eq!(count(&mut c, &trained_at).await, unix_micros(old.guard_models[0].info.trained_at));
    let sent =
        format!("SELECT training_examples FROM guard_tasks WHERE id = '{}'", old.guard_running.id.0.hyphenated());
    let sent = diesel::sql_query(sent).get_result::<Examples>(&mut c).await.unwrap().training_examples;
    let sent: Vec<agentgov_domain::model::GuardExample> = serde_json::from_str(&sent).unwrap();
    assert_eq!(sent, old.examples, "the examples sent with the running task, NUL and all");
    assert_eq!(count(&mut c, "SELECT count(*) AS n FROM anomaly_tasks").await, 1);
    assert_eq!(count(&mut c, "SELECT count(*) AS n FROM anomaly_models").await, 1);
    assert_eq!(count(&mut c, "SELECT count(*) AS n FROM discovery_jobs").await, 2);
    let running = format!("SELECT count(*) AS n FROM export_jobs WHERE status = '{}'", JobStatus::Running.as_str());
    assert_eq!(count(&mut c, &running).await, 1, "the export claimed since");
    // And up once more, as it was.
    store.run_migrations().await.unwrap();
    assert_eq!(store.active_model(tenant.id, ModelKind::Guard).await.unwrap(), 3);
}
