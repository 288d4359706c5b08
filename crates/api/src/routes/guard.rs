//! Spec 4.2: the Prompt Guard — screening, statistics, and each tenant's trainable detector.

use actix_web::http::{StatusCode, header};
use actix_web::{HttpRequest, HttpResponse, delete, get, post, web};
use agentgov_domain::error::DomainError;
use agentgov_domain::model::{GuardExample, GuardFeedback, GuardModelInfo, GuardTask};
use agentgov_domain::services::guard::{
    DetectorMetrics, DetectorStatus, FeedbackRequest, GuardHealth, GuardStats, TrainRequest, ValidateRequest,
    Validation,
};

use crate::AppState;
use crate::extract::{ApiKeyOrJwt, Json, media_type, parse_json};
use crate::problem::{ApiError, ApiResult};

/// The guard's health and configuration (no credentials).
#[utoipa::path(operation_id = "guard_health", tag = "guard", responses((status = 200, description = "What the guard runs", body = GuardHealth)))]
#[get("/health")]
pub async fn health(state: web::Data<AppState>) -> web::Json<GuardHealth> {
    web::Json(state.services.guard.health())
}

/// Screen a prompt (or, with `direction: "output"`, a model's output) for injection,
/// jailbreak and leakage with the tenant's active detector (`guard:validate`). A blocked
/// text is in the audit log (`guard.blocked`, id = `validation_id`) before the answer, and
/// is published on the real-time feed. Texts the encoder stage reads (other languages than
/// English) and texts over 64 KiB are screened on the shared CPU pool, in the tenant's own
/// share of it.
#[utoipa::path(
    operation_id = "guard_validate",
    tag = "guard",
    security(("api_key" = []), ("bearer" = [])),
    request_body = ValidateRequest,
    responses(
        (status = 200, description = "The verdict", body = Validation),
        (status = 404, description = "`agent_id` is not an agent of the caller's tenant", body = crate::problem::Problem),
        (status = 429, description = "The tenant's screenings waiting for the CPU pool are at their limit (`Retry-After`)", body = crate::problem::Problem),
        (status = 503, description = "A screening on the CPU pool overran its 5 s budget", body = crate::problem::Problem),
    )
)]
#[post("/validate")]
pub async fn validate(
    state: web::Data<AppState>,
    auth: ApiKeyOrJwt,
    body: Json<ValidateRequest>,
) -> ApiResult<web::Json<Validation>> {
    let validation = state.services.guard.validate(&auth.0, body.0).await?;
    ::metrics::counter!("agentgov_guard_verdicts_total", "verdict" => validation.verdict.as_str()).increment(1);
    Ok(web::Json(validation))
}

/// `GET /guard/stats`.
#[derive(Debug, Default, serde::Deserialize, utoipa::IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct StatsQuery {
    /// The window, in hours back from now (1 to 720, default 24).
    #[param(minimum = 1, maximum = 720)]
    pub window_hours: Option<i64>,
}

/// The tenant's screenings over a window, from every replica: counts by verdict, the block
/// rate and latency percentiles (`guard:read`). Counts reach the store every few seconds.
#[utoipa::path(
    operation_id = "guard_stats",
    tag = "guard",
    security(("api_key" = []), ("bearer" = [])),
    params(StatsQuery),
    responses((status = 200, description = "Statistics", body = GuardStats))
)]
#[get("/stats")]
pub async fn stats(
    state: web::Data<AppState>,
    auth: ApiKeyOrJwt,
    q: web::Query<StatsQuery>,
) -> ApiResult<web::Json<GuardStats>> {
    Ok(web::Json(state.services.guard.stats(&auth.0, q.window_hours).await?))
}

/// The active detector: version (0 is the built-in default), thresholds, and any training
/// in progress (`guard:read`).
#[utoipa::path(
    operation_id = "guard_detector_status",
    tag = "guard",
    security(("api_key" = []), ("bearer" = [])),
    responses((status = 200, description = "The detector", body = DetectorStatus))
)]
#[get("/detector/status")]
pub async fn status(state: web::Data<AppState>, auth: ApiKeyOrJwt) -> ApiResult<web::Json<DetectorStatus>> {
    Ok(web::Json(state.services.guard.status(&auth.0).await?))
}

/// Precision, recall, F1 and false-positive rate per class of the active model, on the
/// held-out split of its training data, with the split's size (`guard:read`).
#[utoipa::path(
    operation_id = "guard_detector_metrics",
    tag = "guard",
    security(("api_key" = []), ("bearer" = [])),
    responses((status = 200, description = "The metrics", body = DetectorMetrics))
)]
#[get("/detector/metrics")]
pub async fn detector_metrics(state: web::Data<AppState>, auth: ApiKeyOrJwt) -> ApiResult<web::Json<DetectorMetrics>> {
    Ok(web::Json(state.services.guard.metrics(&auth.0).await?))
}

/// The tenant's model versions, newest first, then the built-in default (version 0)
/// (`guard:read`).
#[utoipa::path(
    operation_id = "guard_detector_versions",
    tag = "guard",
    security(("api_key" = []), ("bearer" = [])),
    responses((status = 200, description = "Every version", body = Vec<GuardModelInfo>))
)]
#[get("/detector/versions")]
pub async fn versions(state: web::Data<AppState>, auth: ApiKeyOrJwt) -> ApiResult<web::Json<Vec<GuardModelInfo>>> {
    Ok(web::Json(state.services.guard.versions(&auth.0).await?))
}

/// Start training a new version of the tenant's detector (`guard:manage`): on the built-in
/// corpus, the tenant's feedback, and the examples sent, either as JSON
/// (`{"examples": [{"text", "label"}]}`) or as JSON lines (`Content-Type:
/// application/x-ndjson`, one `{"text", "label"}` per line); an empty body sends none. At
/// most 10,000 examples of at most 16 KiB each, within the body limit. The new version
/// becomes active when the task completes.
#[utoipa::path(
    operation_id = "guard_detector_train",
    tag = "guard",
    security(("api_key" = []), ("bearer" = [])),
    request_body(content = Option<TrainRequest>, description = "Optional labelled examples"),
    responses(
        (status = 202, description = "Queued", body = GuardTask),
        (status = 409, description = "A training task is already queued or running", body = crate::problem::Problem),
    )
)]
#[post("/detector/train")]
pub async fn train(
    state: web::Data<AppState>,
    auth: ApiKeyOrJwt,
    req: HttpRequest,
    body: web::Bytes,
) -> ApiResult<HttpResponse> {
    let request = training_body(&req, &body)?;
    let task = state.services.guard.start_training(&auth.0, request).await?;
    let location = format!("/api/v1/guard/detector/training/status?task_id={}", task.id);
    Ok(HttpResponse::Accepted().insert_header((header::LOCATION, location)).json(task))
}

/// The examples of a training request: JSON, JSON lines, or nothing.
fn training_body(req: &HttpRequest, body: &[u8]) -> Result<TrainRequest, ApiError> {
    if crate::extract::body_absent(body) {
        return Ok(TrainRequest::default());
    }
    match media_type(req).as_str() {
        "application/json" => parse_json(body),
        "application/x-ndjson" | "application/jsonl" | "application/x-jsonlines" | "application/jsonlines" => {
            let text = std::str::from_utf8(body)
                .map_err(|_| ApiError::new(StatusCode::BAD_REQUEST, "the body is not UTF-8"))?;
            let mut examples = Vec::new();
            for (n, line) in text.lines().enumerate().filter(|(_, l)| !l.trim().is_empty()) {
                let example: GuardExample = serde_json::from_str(line).map_err(|e| {
                    ApiError::from(DomainError::invalid(
                        format!("line {}", n + 1),
                        format!("expected {{\"text\": string, \"label\": benign|injection|jailbreak|leakage}}: {e}"),
                    ))
                })?;
                examples.push(example);
            }
            Ok(TrainRequest { examples })
        }
        _ => Err(ApiError::new(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            "send examples as application/json or application/x-ndjson",
        )),
    }
}

/// `GET /guard/detector/training/status`.
#[derive(Debug, serde::Deserialize, utoipa::IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct TaskQuery {
    /// The `task_id` of `POST /guard/detector/train`.
    #[param(format = Uuid)]
    pub task_id: String,
}

/// A training task's status and progress, by its id (no credentials: the id, random and
/// unguessable, is the capability).
#[utoipa::path(
    operation_id = "guard_training_status",
    tag = "guard",
    params(TaskQuery),
    responses(
        (status = 200, description = "The task", body = GuardTask),
        (status = 404, description = "No such task", body = crate::problem::Problem),
    )
)]
#[get("/detector/training/status")]
pub async fn training_status(state: web::Data<AppState>, q: web::Query<TaskQuery>) -> ApiResult<web::Json<GuardTask>> {
    Ok(web::Json(state.services.guard.training_status(&q.task_id).await?))
}

/// Make a version the active one (`guard:manage`); 0 returns to the built-in default.
#[utoipa::path(
    operation_id = "guard_detector_rollback",
    tag = "guard",
    security(("api_key" = []), ("bearer" = [])),
    responses(
        (status = 200, description = "The version now active", body = GuardModelInfo),
        (status = 404, description = "The tenant has no such version", body = crate::problem::Problem),
    )
)]
#[post("/detector/rollback/{version}")]
pub async fn rollback(
    state: web::Data<AppState>,
    auth: ApiKeyOrJwt,
    version: web::Path<i32>,
) -> ApiResult<web::Json<GuardModelInfo>> {
    Ok(web::Json(state.services.guard.rollback(&auth.0, *version).await?))
}

/// Cancel the tenant's queued or running training (`guard:manage`); 404 when there is
/// none. The active model stays as it was.
#[utoipa::path(
    operation_id = "guard_detector_cancel",
    tag = "guard",
    security(("api_key" = []), ("bearer" = [])),
    responses(
        (status = 200, description = "The cancelled task", body = GuardTask),
        (status = 404, description = "No training in progress", body = crate::problem::Problem),
    )
)]
#[delete("/detector/cancel")]
pub async fn cancel(state: web::Data<AppState>, auth: ApiKeyOrJwt) -> ApiResult<web::Json<GuardTask>> {
    Ok(web::Json(state.services.guard.cancel_training(&auth.0).await?))
}

/// Label a text for the next training (`guard:manage`): a blocked validation by id, or the
/// text itself, as a `false_positive` or an `attack` (with its `category`).
#[utoipa::path(
    operation_id = "guard_detector_feedback",
    tag = "guard",
    security(("api_key" = []), ("bearer" = [])),
    request_body = FeedbackRequest,
    responses(
        (status = 201, description = "Stored", body = GuardFeedback),
        (status = 404, description = "No blocked validation of that id in the tenant", body = crate::problem::Problem),
    )
)]
#[post("/detector/feedback")]
pub async fn feedback(
    state: web::Data<AppState>,
    auth: ApiKeyOrJwt,
    body: Json<FeedbackRequest>,
) -> ApiResult<HttpResponse> {
    let feedback = state.services.guard.feedback(&auth.0, body.0).await?;
    Ok(HttpResponse::Created().json(feedback))
}
