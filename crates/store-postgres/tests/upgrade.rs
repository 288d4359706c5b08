//! A database upgraded to the job queue keeps its jobs and versions: the tables the queue
//! replaced are filled as the schema before it had them, the migration runs, and the store
//! answers every job, chunk and version (`agentgov_store_conformance::upgrade`); reverted,
//! the rows go back to the old tables.

use agentgov_domain::model::{GuardExample, ModelKind};
use agentgov_domain::ports::ModelRegistry as _;
use agentgov_store_conformance::fixtures::seed_pair;
use agentgov_store_conformance::upgrade::{
    Dialect, assert_upgraded, migrations_after, old_jobs, old_rows, reverted_counts, reverted_examples_query,
};
use agentgov_store_postgres::PgStore;
use diesel::QueryableByName;
use diesel::sql_types::{BigInt, Text};
use diesel_async::{AsyncConnection, AsyncPgConnection, RunQueryDsl, SimpleAsyncConnection};

mod common;

const JOB_QUEUE: &str = "20261128000001";

#[derive(QueryableByName)]
struct Count {
    #[diesel(sql_type = BigInt)]
    n: i64,
}

#[derive(QueryableByName)]
struct Examples {
    #[diesel(sql_type = Text)]
    training_examples: String,
}

#[tokio::test]
async fn an_upgraded_database_keeps_its_jobs_chunks_and_versions() {
    let Some((url, _guard)) = common::fresh_schema().await else { return };
    let store = PgStore::connect(&url, 2).await.unwrap();
    store.run_migrations().await.unwrap();
    let (tenant, _) = seed_pair(&store, "upgraded").await;
    let later = migrations_after(Dialect::Postgres, JOB_QUEUE);
    // Back to the schema before the job queue, and its tables filled.
    for later in &later {
        assert_eq!(&store.revert_last_migration().await.unwrap().replace('-', ""), later);
    }
    assert_eq!(store.revert_last_migration().await.unwrap().replace('-', ""), JOB_QUEUE);
    let old = old_jobs(tenant.id);
    let mut c = AsyncPgConnection::establish(&url).await.unwrap();
    c.batch_execute(&old_rows(&old, Dialect::Postgres)).await.unwrap();

    store.run_migrations().await.unwrap();
    assert_upgraded(&store, &old).await;

    // Reverted, every row goes back, the new ones included.
    for later in &later {
        assert_eq!(&store.revert_last_migration().await.unwrap().replace('-', ""), later);
    }
    assert_eq!(store.revert_last_migration().await.unwrap().replace('-', ""), JOB_QUEUE);
    for (sql, expected, what) in reverted_counts(&old, Dialect::Postgres) {
        assert_eq!(diesel::sql_query(&sql).get_result::<Count>(&mut c).await.unwrap().n, expected, "{what}");
    }
    let sent = diesel::sql_query(reverted_examples_query(&old)).get_result::<Examples>(&mut c).await.unwrap();
    let sent: Vec<GuardExample> = serde_json::from_str(&sent.training_examples).unwrap();
    assert_eq!(sent, old.examples, "the examples sent with the running training, NUL and all");
    // And up once more, as it was.
    store.run_migrations().await.unwrap();
    assert_eq!(store.active_model(tenant.id, ModelKind::Guard).await.unwrap(), 3);
}
