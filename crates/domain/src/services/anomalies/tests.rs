//! Anomaly reports against in-memory fakes: filing, validation, labels, statistics.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::Duration;

use serde_json::json;

use super::*;
use crate::model::{ActorType, Agent};
use crate::ports::Clock;
use crate::services::tests::harness;

fn new(agent: &Agent, kind: AnomalyType, severity: Severity) -> NewAnomalyReport {
    NewAnomalyReport {
        agent_id: agent.id.to_string(),
        anomaly_type: kind,
        severity,
        score: None,
        description: "odd".into(),
        evidence: json!({"events": [1, 2]}).as_object().cloned().unwrap(),
        source: None,
    }
}

fn fields(err: DomainError) -> Vec<String> {
    match err {
        DomainError::Validation(errors) => errors.into_iter().map(|e| e.field).collect(),
        other => panic!("expected a validation error, got {other:?}"),
    }
}

#[tokio::test]
async fn a_report_is_stored_audited_and_published() {
    let h = harness();
    let a = h.admin("acme").await;
    let bot = h.agent(&a, "bot").await;
    let r = h.svc.anomalies.report(&a, new(&bot, AnomalyType::RateSpike, Severity::High)).await.unwrap();
    assert_eq!((r.status, r.source, r.score), (AnomalyStatus::Open, AnomalySource::Manual, 0.75));
    assert_eq!(r.reported_by.kind, ActorType::User);
    assert_eq!(h.svc.anomalies.get(&a, r.id).await.unwrap(), r);
    let published = h.bus.published.lock().unwrap().iter().find(|e| e.event_type == ANOMALY_DETECTED).cloned();
    assert_eq!(published.unwrap().data["id"], json!(r.id));
}

#[tokio::test]
async fn invalid_reports_name_every_bad_field() {
    let h = harness();
    let a = h.admin("acme").await;
    let bot = h.agent(&a, "bot").await;
    let bad = NewAnomalyReport {
        agent_id: "x".into(),
        score: Some(1.5),
        description: " ".into(),
        source: Some(AnomalySource::Detector),
        ..new(&bot, AnomalyType::Manual, Severity::Low)
    };
    assert_eq!(
        fields(h.svc.anomalies.report(&a, bad).await.unwrap_err()),
        ["agent_id", "score", "description", "source"]
    );
    let ghost = NewAnomalyReport {
        agent_id: uuid::Uuid::now_v7().to_string(),
        ..new(&bot, AnomalyType::Manual, Severity::Low)
    };
    assert!(matches!(h.svc.anomalies.report(&a, ghost).await, Err(DomainError::NotFound { .. })));
    let b = h.admin("globex").await;
    assert!(matches!(
        h.svc.anomalies.report(&b, new(&bot, AnomalyType::Manual, Severity::Low)).await,
        Err(DomainError::NotFound { .. })
    ));
}

#[tokio::test]
async fn analysts_label_reports_and_viewers_cannot() {
    let h = harness();
    let a = h.admin("acme").await;
    let bot = h.agent(&a, "bot").await;
    let r = h.svc.anomalies.report(&a, new(&bot, AnomalyType::OffHours, Severity::Medium)).await.unwrap();
    let viewer = h.user(&a, "vic@acme.test", Role::Viewer).await;
    let analyst = h.user(&a, "ann@acme.test", Role::Analyst).await;
    let label = |s| AnomalyUpdate { status: s };
    assert!(matches!(
        h.svc.anomalies.update(&viewer, r.id, label(AnomalyStatus::Resolved)).await,
        Err(DomainError::Forbidden(_))
    ));
    h.clock.advance(Duration::from_secs(5));
    let labelled = h.svc.anomalies.update(&analyst, r.id, label(AnomalyStatus::FalsePositive)).await.unwrap();
    assert_eq!(labelled.status, AnomalyStatus::FalsePositive);
    assert_eq!(labelled.status_changed_by.unwrap().id, analyst.user.id.to_string());
    assert_eq!(labelled.created_at, r.created_at);
    assert_eq!(labelled.updated_at, r.created_at + time::Duration::seconds(5));
    let filter = AnomalyParams { status: Some("false_positive".into()), ..AnomalyParams::default() };
    assert_eq!(h.svc.anomalies.list(&viewer, &filter).await.unwrap().items.len(), 1);
    let b = h.admin("globex").await;
    assert!(matches!(
        h.svc.anomalies.update(&b, r.id, label(AnomalyStatus::Resolved)).await,
        Err(DomainError::NotFound { .. })
    ));
}

#[tokio::test]
async fn lists_filter_and_reject_bad_filters() {
    let h = harness();
    let a = h.admin("acme").await;
    let (x, y) = (h.agent(&a, "x").await, h.agent(&a, "y").await);
    h.svc.anomalies.report(&a, new(&x, AnomalyType::RateSpike, Severity::High)).await.unwrap();
    h.clock.advance(Duration::from_secs(60));
    let since = h.clock.now();
    h.svc.anomalies.report(&a, new(&y, AnomalyType::OffHours, Severity::Low)).await.unwrap();
    h.svc.anomalies.report(&a, new(&x, AnomalyType::OffHours, Severity::Critical)).await.unwrap();
    let count = |p: AnomalyParams| {
        let svc = h.svc.anomalies.clone();
        let a = a.clone();
        async move { svc.list(&a, &p).await.unwrap().items.len() }
    };
    assert_eq!(count(AnomalyParams::default()).await, 3);
    assert_eq!(count(AnomalyParams { agent_id: Some(x.id.to_string()), ..Default::default() }).await, 2);
    assert_eq!(count(AnomalyParams { anomaly_type: Some("off_hours".into()), ..Default::default() }).await, 2);
    assert_eq!(count(AnomalyParams { severity: Some("critical".into()), ..Default::default() }).await, 1);
    let from = since.format(&time::format_description::well_known::Rfc3339).unwrap();
    assert_eq!(count(AnomalyParams { from: Some(from.clone()), ..Default::default() }).await, 2);
    assert_eq!(count(AnomalyParams { to: Some(from), ..Default::default() }).await, 1);
    let bad = AnomalyParams {
        agent_id: Some("x".into()),
        anomaly_type: Some("weird".into()),
        severity: Some("huge".into()),
        status: Some("closed".into()),
        from: Some("yesterday".into()),
        limit: Some(0),
        ..Default::default()
    };
    assert_eq!(
        fields(h.svc.anomalies.list(&a, &bad).await.unwrap_err()),
        ["agent_id", "type", "severity", "status", "from", "limit"]
    );
}

#[tokio::test]
async fn stats_count_by_every_dimension_and_fill_every_bucket() {
    let h = harness();
    let a = h.admin("acme").await;
    let (x, y) = (h.agent(&a, "x").await, h.agent(&a, "y").await);
    // The window: the last 3 hours before `to`, in hour buckets.
    let start = h.clock.now();
    h.svc.anomalies.report(&a, new(&x, AnomalyType::RateSpike, Severity::High)).await.unwrap();
    h.svc.anomalies.report(&a, new(&x, AnomalyType::RateSpike, Severity::Low)).await.unwrap();
    h.clock.advance(Duration::from_secs(2 * 3600));
    let late = h.svc.anomalies.report(&a, new(&y, AnomalyType::OffHours, Severity::High)).await.unwrap();
    h.svc.anomalies.update(&a, late.id, AnomalyUpdate { status: AnomalyStatus::Resolved }).await.unwrap();
    let fmt = |t: OffsetDateTime| t.format(&time::format_description::well_known::Rfc3339).unwrap();
    let to = h.clock.now() + time::Duration::seconds(1);
    let params = AnomalyParams { from: Some(fmt(start)), to: Some(fmt(to)), ..Default::default() };
    let stats = h.svc.anomalies.stats(&a, &params).await.unwrap();
    assert_eq!(stats.total, 3);
    assert_eq!((stats.by_severity["high"], stats.by_severity["low"], stats.by_severity["critical"]), (2, 1, 0));
    assert_eq!((stats.by_type["rate_spike"], stats.by_type["off_hours"], stats.by_type["manual"]), (2, 1, 0));
    assert_eq!((stats.by_status["open"], stats.by_status["resolved"]), (2, 1));
    assert_eq!(
        stats.top_agents,
        vec![AgentCount { agent_id: x.id, count: 2 }, AgentCount { agent_id: y.id, count: 1 }]
    );
    let counts: Vec<i64> = stats.series.iter().map(|p| p.count).collect();
    let hours = usize::try_from((to.unix_timestamp() - 1) / 3600 - start.unix_timestamp() / 3600 + 1).unwrap();
    assert_eq!(counts.len(), hours, "every hour of the window, empty ones too");
    assert_eq!((counts[0], counts.iter().sum::<i64>()), (2, 3));
    assert_eq!(stats.series[0].by_severity["low"], 1);

    let by_day = AnomalyParams { bucket: Some("day".into()), ..params.clone() };
    let days = h.svc.anomalies.stats(&a, &by_day).await.unwrap();
    assert_eq!(days.series.iter().map(|p| p.count).sum::<i64>(), 3);
    assert!(days.series.iter().all(|p| p.start.hour() == 0), "days start at midnight UTC");
    let only_x = AnomalyParams { agent_id: Some(x.id.to_string()), ..params.clone() };
    assert_eq!(h.svc.anomalies.stats(&a, &only_x).await.unwrap().total, 2);

    for (bad, field) in [
        (AnomalyParams { bucket: Some("week".into()), ..params.clone() }, "bucket"),
        (AnomalyParams { from: Some(fmt(to)), to: Some(fmt(start)), ..Default::default() }, "from"),
        (AnomalyParams { from: Some(fmt(start - time::Duration::days(91))), ..params.clone() }, "from"),
    ] {
        assert_eq!(fields(h.svc.anomalies.stats(&a, &bad).await.unwrap_err()), [field]);
    }
    let b = h.admin("globex").await;
    assert_eq!(h.svc.anomalies.stats(&b, &params).await.unwrap().total, 0, "another tenant counts nothing");
}
