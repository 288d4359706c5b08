//! The analyst console at `/console`: a page, its style sheet and its ES modules (one per
//! view) embedded in the binary (no build step, no CDN), and its session. Signing in sets the access token as an `HttpOnly`,
//! `SameSite=Strict` cookie (`Secure` unless a developer talks plain http to loopback), which
//! every API route takes like `Authorization: Bearer`, bound to the same server-side session
//! (logout, block and role changes end it at once); a state-changing request made with it
//! must echo the session's CSRF token (`extract::session_cookie`). Not in the OpenAPI
//! document: the API's clients use the API's own credentials.

use actix_web::http::header::{self, HeaderValue};
use actix_web::{HttpRequest, HttpResponse, web};
use agentgov_domain::DomainError;
use agentgov_domain::secrets::console_csrf_token;

use crate::AppState;
use crate::extract::{CSRF_COOKIE, Json, Jwt, SESSION_COOKIE, client_ip, cookie, set_cookie};
use crate::problem::ApiResult;
use crate::routes::auth::{LoginRequest, SSO_BINDING_COOKIE};
use agentgov_domain::services::LoginResult;
use agentgov_domain::services::sso::ExchangeRequest;

const INDEX: &str = include_str!("../console/index.html");
const JS: &str = "text/javascript; charset=utf-8";

/// Every file under `/console/`, by name: nothing else is served there.
const ASSETS: &[(&str, &str, &str)] = &[
    ("app.css", include_str!("../console/app.css"), "text/css; charset=utf-8"),
    ("app.js", include_str!("../console/app.js"), JS),
    ("core.js", include_str!("../console/core.js"), JS),
    ("approvals.js", include_str!("../console/approvals.js"), JS),
    ("audit.js", include_str!("../console/audit.js"), JS),
    ("decision.js", include_str!("../console/decision.js"), JS),
    ("agents.js", include_str!("../console/agents.js"), JS),
    ("discovery.js", include_str!("../console/discovery.js"), JS),
    ("guard.js", include_str!("../console/guard.js"), JS),
    ("policies.js", include_str!("../console/policies.js"), JS),
    ("anomalies.js", include_str!("../console/anomalies.js"), JS),
    ("admin.js", include_str!("../console/admin.js"), JS),
];

/// Only the console's own files, no inline code, no frames, no other origin.
pub const CONTENT_SECURITY_POLICY: &str = "default-src 'none'; script-src 'self'; style-src 'self'; \
img-src 'self' data:; connect-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'";

pub fn register(cfg: &mut web::ServiceConfig) {
    cfg.route("/console", web::get().to(|| async { asset(INDEX, "text/html; charset=utf-8") }))
        .route("/console/", web::get().to(|| async { asset(INDEX, "text/html; charset=utf-8") }))
        .route("/console/session", web::post().to(sign_in))
        .route("/console/session", web::get().to(current))
        .route("/console/session", web::delete().to(sign_out))
        .route("/console/{file}", web::get().to(file))
        // Under the SSO routes' path, where the browser binding cookie is sent: registered
        // before the API's scope, which would otherwise take the path.
        .route("/api/v1/auth/sso/session", web::post().to(sso_session));
}

/// `GET /console/{file}`: one of [`ASSETS`], else 404.
async fn file(name: web::Path<String>) -> ApiResult<HttpResponse> {
    match ASSETS.iter().find(|(n, _, _)| *n == name.as_str()) {
        Some((_, body, content_type)) => Ok(asset(body, content_type)),
        None => Err(DomainError::not_found("console file", name.as_str()).into()),
    }
}

fn asset(body: &'static str, content_type: &'static str) -> HttpResponse {
    HttpResponse::Ok()
        .insert_header((header::CONTENT_TYPE, content_type))
        .insert_header((header::CONTENT_SECURITY_POLICY, CONTENT_SECURITY_POLICY))
        .insert_header((header::X_CONTENT_TYPE_OPTIONS, "nosniff"))
        .insert_header((header::REFERRER_POLICY, "no-referrer"))
        .insert_header((header::X_FRAME_OPTIONS, "DENY"))
        .insert_header((header::CACHE_CONTROL, "no-cache"))
        .body(body)
}

/// The session as the page sees it: who, and the CSRF token to echo. Never a credential.
#[derive(serde::Serialize)]
struct SessionView {
    user: serde_json::Value,
    csrf_token: String,
    expires_in: Option<u64>,
}

/// `POST /console/session {email, password}`: signs in (the same limits as
/// `POST /auth/login`) and sets the session and CSRF cookies.
async fn sign_in(state: web::Data<AppState>, req: HttpRequest, body: Json<LoginRequest>) -> ApiResult<HttpResponse> {
    let ip = client_ip(&req);
    let login = state.services.auth.login(&body.0.email, &body.0.password, ip.as_deref()).await?;
    Ok(session_started(&req, &login))
}

/// `POST /api/v1/auth/sso/session {code, state, provider?}`: finishes a single sign-on
/// started with `GET /auth/sso/login` exactly as `POST /auth/sso/exchange` does (the same
/// browser binding, under the same cookie path), but sets the console's cookies instead of
/// answering the tokens.
async fn sso_session(
    state: web::Data<AppState>,
    req: HttpRequest,
    body: Json<ExchangeRequest>,
) -> ApiResult<HttpResponse> {
    let ip = client_ip(&req);
    let binding = cookie(&req, SSO_BINDING_COOKIE);
    let login = state.services.sso.exchange(body.0, binding.as_deref(), ip.as_deref()).await?;
    Ok(session_started(&req, &login))
}

/// The answer to a sign-in: the session and CSRF cookies, and the session as the page sees it.
fn session_started(req: &HttpRequest, login: &LoginResult) -> HttpResponse {
    let csrf = console_csrf_token(&login.access_token);
    let view = SessionView {
        user: serde_json::to_value(&login.user).unwrap_or_default(),
        csrf_token: csrf.clone(),
        expires_in: Some(login.expires_in),
    };
    let session = console_cookie(req, SESSION_COOKIE, &login.access_token, login.expires_in, true);
    HttpResponse::Ok()
        .append_header((header::SET_COOKIE, session))
        .append_header((header::SET_COOKIE, console_cookie(req, CSRF_COOKIE, &csrf, login.expires_in, false)))
        .insert_header((header::CACHE_CONTROL, "no-store"))
        .json(view)
}

/// `GET /console/session`: the signed-in user and the CSRF token (after a reload).
async fn current(req: HttpRequest, auth: Jwt) -> HttpResponse {
    let csrf = cookie(&req, SESSION_COOKIE).map(|t| console_csrf_token(&t)).unwrap_or_default();
    let view = SessionView {
        user: serde_json::to_value(&auth.0.user).unwrap_or_default(),
        csrf_token: csrf,
        expires_in: None,
    };
    HttpResponse::Ok().insert_header((header::CACHE_CONTROL, "no-store")).json(view)
}

/// `DELETE /console/session`: ends the session (as `POST /auth/logout`) and clears the cookies.
async fn sign_out(state: web::Data<AppState>, req: HttpRequest, auth: Jwt) -> ApiResult<HttpResponse> {
    state.services.auth.logout(&auth.0).await?;
    Ok(HttpResponse::NoContent()
        .append_header((header::SET_COOKIE, console_cookie(&req, SESSION_COOKIE, "", 0, true)))
        .append_header((header::SET_COOKIE, console_cookie(&req, CSRF_COOKIE, "", 0, false)))
        .finish())
}

/// One of the console's cookies: `Path=/`, `SameSite=Strict`.
fn console_cookie(req: &HttpRequest, name: &str, value: &str, max_age: u64, http_only: bool) -> HeaderValue {
    let c = set_cookie(req, (name, value), "/", max_age, "Strict", http_only);
    HeaderValue::from_str(&c).unwrap_or_else(|_| HeaderValue::from_static(""))
}
