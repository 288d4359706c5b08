//! agentgov's HTTP API: actix-web routes, credential extractors, problem+json errors,
//! metrics and the OpenAPI document with Swagger UI at `/docs`.
//!
//! Handlers are thin: parse, authenticate, call one domain service, render.

pub mod console;
pub mod extract;
pub mod feed;
pub mod metrics;
pub mod openapi;
pub mod problem;
pub mod routes;
mod trace;

use actix_web::body::MessageBody;
use actix_web::dev::{ServiceFactory, ServiceRequest, ServiceResponse};
use actix_web::middleware::{ErrorHandlers, from_fn};
use actix_web::{App, web};
use agentgov_domain::services::{ServerInfo, Services};
use utoipa::OpenApi;
use utoipa_actix_web::AppExt;
use utoipa_actix_web::service_config::ServiceConfig;
use utoipa_swagger_ui::SwaggerUi;

/// Shared by every worker.
pub struct AppState {
    pub services: Services,
    pub info: ServerInfo,
    /// The real-time feed's fan-out; the server's bus follower publishes into it.
    pub feed: feed::Feed,
}

/// HTTP settings the server reads from its configuration.
#[derive(Debug, Clone)]
pub struct HttpSettings {
    /// Largest accepted request body, in bytes (413 beyond).
    pub body_limit: usize,
    /// Reverse proxies in front of the server that append to `X-Forwarded-For`. 0: the
    /// client IP is the socket's peer; N: the N-th address from the right of the header.
    pub trusted_proxy_hops: usize,
    /// Guards `/metrics` when set (`AGENTGOV_METRICS_TOKEN`).
    pub metrics_token: metrics::MetricsToken,
}

impl Default for HttpSettings {
    fn default() -> Self {
        Self { body_limit: 1024 * 1024, trusted_proxy_hops: 0, metrics_token: metrics::MetricsToken::default() }
    }
}

/// Every route: those under `/api/v1`, and the AuthZEN endpoints at the root (where
/// AuthZEN clients look for them).
fn register(cfg: &mut ServiceConfig) {
    use routes::{
        agents, anomalies, api_keys, audit, auth, discovery, guard, health, hitl, policies, sessions, siem, tenants,
        users, webhook,
    };
    // One scope per resource: a request is matched against its resource's few routes, not
    // against every route's pattern in turn (the router, the request span and the metrics
    // each match it).
    cfg.service(
        utoipa_actix_web::scope("/api/v1")
            .service(health::health)
            .service(health::ready)
            .service(health::status)
            .service(health::stats)
            .service(auth::login)
            .service(auth::logout)
            .service(auth::me)
            .service(auth::sso_providers)
            .service(auth::sso_login)
            .service(auth::sso_exchange)
            .service(feed::ws)
            .service(
                utoipa_actix_web::scope("/policies")
                    // Fixed paths before `/policies/{id}`.
                    .service(policies::create)
                    .service(policies::list)
                    .service(policies::templates)
                    .service(policies::check)
                    .service(policies::get)
                    .service(policies::update)
                    .service(policies::remove)
                    .service(policies::test)
                    .service(policies::shadow_report)
                    .service(policies::start_replay)
                    .service(policies::replay_status),
            )
            .service(
                utoipa_actix_web::scope("/guard")
                    .service(guard::health)
                    .service(guard::validate)
                    .service(guard::stats)
                    .service(guard::status)
                    .service(guard::detector_metrics)
                    .service(guard::versions)
                    .service(guard::train)
                    .service(guard::training_status)
                    .service(guard::rollback)
                    .service(guard::cancel)
                    .service(guard::feedback),
            )
            .service(
                utoipa_actix_web::scope("/discovery")
                    .service(discovery::ingest)
                    .service(discovery::ingest_batch)
                    .service(discovery::cluster)
                    .service(discovery::cluster_status)
                    .service(discovery::candidates)
                    .service(discovery::candidate)
                    .service(discovery::confirm)
                    .service(discovery::dismiss),
            )
            .service(
                utoipa_actix_web::scope("/anomalies")
                    .service(anomalies::report)
                    .service(anomalies::list)
                    // Fixed paths before `/anomalies/{id}`.
                    .service(anomalies::stats)
                    .service(anomalies::detector_train)
                    .service(anomalies::detector_task)
                    .service(anomalies::detector_rollback)
                    .service(anomalies::detector_status)
                    .service(anomalies::detector_metrics)
                    .service(anomalies::detector_versions)
                    .service(anomalies::get)
                    .service(anomalies::update),
            )
            .service(utoipa_actix_web::scope("/sessions").service(sessions::observe).service(sessions::get))
            .service(
                utoipa_actix_web::scope("/hitl")
                    .service(hitl::request)
                    .service(hitl::approve)
                    .service(hitl::reject)
                    .service(hitl::cancel)
                    .service(hitl::status)
                    .service(hitl::pending),
            )
            .service(
                utoipa_actix_web::scope("/agents")
                    .service(agents::register)
                    .service(agents::list)
                    .service(agents::search)
                    .service(agents::details)
                    .service(agents::heartbeat)
                    .service(agents::get)
                    .service(agents::update)
                    .service(agents::remove),
            )
            .service(
                utoipa_actix_web::scope("/audit")
                    .service(audit::write)
                    .service(audit::list)
                    // Fixed paths before `/audit/{id}`.
                    .service(audit::verify)
                    .service(audit::export_jsonl)
                    .service(audit::export_json)
                    .service(audit::export_csv)
                    .service(audit::start_export)
                    .service(audit::export_status)
                    .service(audit::download)
                    .service(audit::get),
            )
            .service(
                utoipa_actix_web::scope("/users")
                    // `/users/me…` before `/users/{id}…` so `me` is never read as an id.
                    .service(users::get_me)
                    .service(users::update_me)
                    .service(users::change_password)
                    .service(users::create)
                    .service(users::list)
                    .service(users::get)
                    .service(users::update)
                    .service(users::set_role)
                    .service(users::block)
                    .service(users::unblock)
                    .service(users::remove),
            )
            .service(
                utoipa_actix_web::scope("/api-keys")
                    .service(api_keys::create)
                    .service(api_keys::list)
                    .service(api_keys::revoke),
            )
            .service(routes::litellm::guardrail)
            .service(siem::status)
            .service(siem::test)
            .service(tenants::create)
            .service(tenants::list)
            .service(tenants::get)
            .service(tenants::update)
            .service(tenants::get_own)
            .service(tenants::update_own)
            .service(tenants::secrets)
            .service(tenants::rotate_callback_secret)
            .service(tenants::rotate_webhook_secret)
            .service(tenants::delete_webhook_secret),
    );
    cfg.service(webhook::receive);
    cfg.service(
        utoipa_actix_web::scope("/access/v1")
            .service(routes::authzen::evaluation)
            .service(routes::authzen::evaluations),
    );
    cfg.service(routes::authzen::configuration);
}

/// The OpenAPI document, built from the same registrations the server serves.
pub fn openapi() -> utoipa::openapi::OpenApi {
    let (_, mut doc) =
        App::new().into_utoipa_app().openapi(openapi::ApiDoc::openapi()).configure(register).split_for_parts();
    utoipa::Modify::modify(&openapi::SharedErrors, &mut doc);
    utoipa::Modify::modify(&openapi::PageRefs, &mut doc);
    utoipa::Modify::modify(&openapi::CrossField, &mut doc);
    doc
}

/// The whole application: routes, docs, metrics, error rendering and request tracing.
pub fn app(
    state: web::Data<AppState>,
    http: HttpSettings,
    doc: utoipa::openapi::OpenApi,
) -> App<
    impl ServiceFactory<
        ServiceRequest,
        Config = (),
        Response = ServiceResponse<impl MessageBody>,
        Error = actix_web::Error,
        InitError = (),
    >,
> {
    let methods = Methods::of(&doc);
    App::new()
        .app_data(state)
        .app_data(methods.clone())
        .app_data(web::PayloadConfig::new(http.body_limit))
        .app_data(http)
        .app_data(web::PathConfig::default().error_handler(extract::path_error))
        .app_data(web::QueryConfig::default().error_handler(extract::query_error))
        // Before the API's scope: the console's SSO session route lives under /api/v1.
        .configure(console::register)
        .configure(|cfg| register(&mut ServiceConfig::new(cfg)))
        .route("/metrics", web::get().to(metrics::render))
        .service(SwaggerUi::new("/docs/{_:.*}").url("/openapi.json", doc))
        .route(
            "/docs",
            web::get().to(|| async {
                actix_web::HttpResponse::PermanentRedirect().insert_header(("Location", "/docs/")).finish()
            }),
        )
        .default_service(web::to(move |req: actix_web::HttpRequest| {
            let allow = methods.allowed(req.path());
            async move {
                match allow {
                    Some(allow) => actix_web::HttpResponse::MethodNotAllowed()
                        .insert_header((actix_web::http::header::ALLOW, allow))
                        .finish(),
                    None => actix_web::HttpResponse::NotFound().finish(),
                }
            }
        }))
        .wrap(ErrorHandlers::new().default_handler(problem::render_plain_errors))
        .wrap(from_fn(metrics::record))
        .wrap(tracing_actix_web::TracingLogger::<trace::RedactedRootSpan>::new())
}

/// The methods each documented path takes, so that a known path asked with a method it does
/// not take answers 405 with `Allow`, and only an unknown path answers 404.
#[derive(Debug, Clone)]
pub(crate) struct Methods(std::sync::Arc<Vec<(String, Vec<&'static str>)>>);

impl Methods {
    fn of(doc: &utoipa::openapi::OpenApi) -> Self {
        let paths = doc.paths.paths.iter().map(|(template, item)| {
            let ops = [
                ("GET", item.get.is_some()),
                ("POST", item.post.is_some()),
                ("PUT", item.put.is_some()),
                ("PATCH", item.patch.is_some()),
                ("DELETE", item.delete.is_some()),
            ];
            (template.clone(), ops.into_iter().filter_map(|(method, has)| has.then_some(method)).collect())
        });
        Methods(std::sync::Arc::new(paths.collect()))
    }

    /// The `Allow` value for `path`: the methods of the most specific templates it matches
    /// (fewest `{name}` segments: `/users/me` is that path, not `/users/{id}`), or `None`
    /// when no documented path matches.
    pub(crate) fn allowed(&self, path: &str) -> Option<String> {
        let params = |template: &str| template.split('/').filter(|s| s.starts_with('{')).count();
        let matching: Vec<_> = self.0.iter().filter(|(template, _)| template_matches(template, path)).collect();
        let fewest = matching.iter().map(|(template, _)| params(template)).min()?;
        let mut allow: Vec<&str> = Vec::new();
        let specific = matching.into_iter().filter(|(template, _)| params(template) == fewest);
        for method in specific.flat_map(|(_, methods)| methods) {
            if !allow.contains(method) {
                allow.push(method);
            }
        }
        (!allow.is_empty()).then(|| allow.join(", "))
    }
}

/// Whether `path` fits `template` segment by segment, a `{name}` standing for any non-empty
/// segment.
fn template_matches(template: &str, path: &str) -> bool {
    let (mut template, mut path) = (template.split('/'), path.split('/'));
    loop {
        match (template.next(), path.next()) {
            (None, None) => return true,
            (Some(t), Some(p)) if t == p || (t.starts_with('{') && !p.is_empty()) => {}
            _ => return false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every `pattern` the document states is one the domain tests against its validators.
    #[test]
    fn every_pattern_is_a_checked_one() {
        use agentgov_domain::page::{CURSOR_PATTERN, SEQ_CURSOR_PATTERN};
        use agentgov_domain::services::validate::{
            DESCRIPTION_PATTERN, EMAIL_PATTERN, EVENT_TYPE_PATTERN, NONBLANK_DESCRIPTION_PATTERN, NONBLANK_PATTERN,
            TEXT_PATTERN, TRIMMED_PATTERN,
        };
        let client_event_type = agentgov_domain::model::audit::client_event_type_pattern();
        let known = [
            agentgov_domain::services::check::APPROVAL_TOKEN_PATTERN,
            client_event_type.as_str(),
            CURSOR_PATTERN,
            SEQ_CURSOR_PATTERN,
            DESCRIPTION_PATTERN,
            EMAIL_PATTERN,
            EVENT_TYPE_PATTERN,
            NONBLANK_DESCRIPTION_PATTERN,
            NONBLANK_PATTERN,
            TEXT_PATTERN,
            TRIMMED_PATTERN,
        ];
        fn walk<'a>(v: &'a serde_json::Value, out: &mut Vec<&'a str>) {
            match v {
                serde_json::Value::Object(m) => {
                    if let Some(serde_json::Value::String(p)) = m.get("pattern") {
                        out.push(p);
                    }
                    m.values().for_each(|v| walk(v, out));
                }
                serde_json::Value::Array(a) => a.iter().for_each(|v| walk(v, out)),
                _ => {}
            }
        }
        let doc = serde_json::to_value(openapi()).unwrap_or_default();
        let mut found = Vec::new();
        walk(&doc, &mut found);
        assert!(found.len() > 20, "{found:?}");
        for p in found {
            assert!(known.contains(&p), "pattern {p:?} is not one of the checked ones");
        }
    }

    #[test]
    fn every_page_refers_to_its_item_schema() {
        let doc = serde_json::to_value(openapi()).unwrap_or_default();
        let schemas = doc["components"]["schemas"].as_object().cloned().unwrap_or_default();
        let pages: Vec<&String> = schemas.keys().filter(|n| n.starts_with("Page_")).collect();
        assert!(pages.len() >= 9, "{pages:?}");
        for page in pages {
            let item = page.trim_start_matches("Page_");
            assert_eq!(
                schemas[page.as_str()]["properties"]["items"]["items"],
                serde_json::json!({"$ref": format!("#/components/schemas/{item}")}),
                "{page}"
            );
        }
    }

    #[test]
    fn a_known_path_names_its_methods() {
        let methods = Methods::of(&openapi());
        assert_eq!(
            methods.allowed("/api/v1/agents/0193a4c2-0000-7000-8000-000000000001").as_deref(),
            Some("GET, PUT, DELETE")
        );
        // `/agents/search` also fits `/agents/{id}`, but it is its own resource.
        assert_eq!(methods.allowed("/api/v1/agents/search").as_deref(), Some("GET"));
        assert_eq!(methods.allowed("/api/v1/users/me").as_deref(), Some("GET, PUT"));
        assert_eq!(methods.allowed("/api/v1/policies").as_deref(), Some("GET, POST"));
        assert_eq!(methods.allowed("/webhooks/agent").as_deref(), Some("POST"));
        assert_eq!(methods.allowed("/api/v1/nothing"), None);
        assert_eq!(methods.allowed("/api/v1/agents/"), None);
        assert_eq!(methods.allowed("/api/v1/agents/x/y/z"), None);
    }
}
