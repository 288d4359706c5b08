//! Request extractors: JSON bodies with field-precise errors, list queries, credentials.

use std::future::Future;
use std::pin::Pin;

use actix_web::http::StatusCode;
use actix_web::http::header;
use actix_web::{FromRequest, HttpRequest, dev::Payload, web};
use agentgov_domain::page::PageRequest;
use agentgov_domain::ports::TraceContext;
use agentgov_domain::services::Caller;
use serde::de::DeserializeOwned;

use crate::AppState;
use crate::problem::{ApiError, BEARER_CHALLENGE};

/// A JSON body. Not JSON, or malformed: 400. Well-formed but the wrong shape: 422 naming
/// the field (`errors[0].field`, e.g. `permissions[2]`). Too large: 413. Wrong type: 415.
#[derive(Debug)]
pub struct Json<T>(pub T);

impl<T: DeserializeOwned + 'static> FromRequest for Json<T> {
    type Error = ApiError;
    type Future = Pin<Box<dyn Future<Output = Result<Self, ApiError>>>>;

    fn from_request(req: &HttpRequest, payload: &mut Payload) -> Self::Future {
        let content_type = require_json(req);
        let bytes = web::Bytes::from_request(req, payload);
        Box::pin(async move {
            let bytes = bytes.await.map_err(|e| {
                let status = e.as_response_error().status_code();
                if status == StatusCode::PAYLOAD_TOO_LARGE {
                    ApiError::new(status, "request body too large")
                } else {
                    ApiError::new(status, "could not read the request body")
                }
            })?;
            content_type?;
            parse_json(&bytes).map(Json)
        })
    }
}

/// 415 unless the request says its body is JSON (`application/json` or `…+json`).
pub fn require_json(req: &HttpRequest) -> Result<(), ApiError> {
    let mime = media_type(req);
    if mime == "application/json" || mime.ends_with("+json") {
        Ok(())
    } else {
        Err(ApiError::new(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            "send the body as JSON with Content-Type: application/json",
        ))
    }
}

/// The request's media type, lower-cased, without parameters (`""` when absent).
pub fn media_type(req: &HttpRequest) -> String {
    req.headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .map(|v| v.split(';').next().unwrap_or("").trim().to_ascii_lowercase())
        .unwrap_or_default()
}

/// Deserialises `bytes` with the error mapping of [`Json`].
pub fn parse_json<T: DeserializeOwned>(bytes: &[u8]) -> Result<T, ApiError> {
    // Every body of the API is an object. serde would also fill a struct from an array, by
    // position (`[null, null]` as an update that changes nothing), so only an object
    // reaches it.
    let first = bytes.iter().find(|b| !b.is_ascii_whitespace());
    // Well-formed bodies, nearly all of them, are parsed once; a failure is parsed again to
    // name its cause and field.
    if first == Some(&b'{')
        && let Ok(value) = serde_json::from_slice(bytes)
    {
        return Ok(value);
    }
    if first.is_none() {
        return Err(ApiError::bad_request("a JSON body is required"));
    }
    // Syntax first: a truncated document must be 400 even when its first value is already
    // of the wrong shape.
    if let Err(err) = serde_json::from_slice::<serde::de::IgnoredAny>(bytes) {
        return Err(ApiError::bad_request(format!("body is not valid JSON: {err}")));
    }
    if first != Some(&b'{') {
        return Err(ApiError::unprocessable("body", "must be a JSON object"));
    }
    // JSON has one kind of number: `78.0` is the integer 78 (JSON Schema says so too), which
    // serde refuses for an integer member. Such numbers are read as integers.
    if let Ok(mut value) = serde_json::from_slice::<serde_json::Value>(bytes)
        && integral_floats_to_integers(&mut value)
        && let Ok(parsed) = serde_json::from_value(value)
    {
        return Ok(parsed);
    }
    let de = &mut serde_json::Deserializer::from_slice(bytes);
    serde_path_to_error::deserialize(de).map_err(|err| {
        let path = err.path().to_string();
        let inner = err.into_inner();
        if inner.is_data() {
            let message = strip_position(&inner.to_string());
            // serde names a missing field only in its message, at the path of the object
            // that lacks it: name the field itself. (An unknown field is in the path.)
            let named = message
                .strip_prefix("missing field `")
                .and_then(|rest| rest.split_once('`'))
                .map(|(name, _)| name.to_owned());
            let field = match (named, path.as_str()) {
                (Some(name), ".") => name,
                (Some(name), _) => format!("{path}.{name}"),
                (None, ".") => "body".to_owned(),
                (None, _) => path,
            };
            ApiError::unprocessable(field, message)
        } else {
            ApiError::bad_request(format!("body is not valid JSON: {inner}"))
        }
    })
}

/// Rewrites every float with no fractional part that fits an `i64` (`78.0`, `-1e3`) as that
/// integer; whether there was any.
fn integral_floats_to_integers(value: &mut serde_json::Value) -> bool {
    use serde_json::Value;
    match value {
        Value::Number(n) if n.is_f64() => {
            let f = n.as_f64().unwrap_or(f64::NAN);
            // Strictly inside i64's range: `i64::MAX as f64` rounds up past it.
            if f.fract() == 0.0 && f >= i64::MIN as f64 && f < i64::MAX as f64 {
                *value = Value::from(f as i64);
                return true;
            }
            false
        }
        // Every member is visited: no short circuit.
        Value::Array(items) => items.iter_mut().map(integral_floats_to_integers).filter(|&changed| changed).count() > 0,
        Value::Object(members) => {
            members.values_mut().map(integral_floats_to_integers).filter(|&changed| changed).count() > 0
        }
        _ => false,
    }
}

/// An optional JSON body (a decision's comment, say): the type's default when the body is
/// absent, else parsed as `Json` would.
pub fn optional_body<T: serde::de::DeserializeOwned + Default>(req: &HttpRequest, body: &[u8]) -> Result<T, ApiError> {
    if body_absent(body) {
        return Ok(T::default());
    }
    require_json(req)?;
    parse_json(body)
}

/// Whether an optional body is absent: empty, blank, or the JSON `null` the document allows
/// in its place.
pub fn body_absent(body: &[u8]) -> bool {
    body.trim_ascii() == b"null" || body.iter().all(u8::is_ascii_whitespace)
}

fn strip_position(msg: &str) -> String {
    msg.split(" at line ").next().unwrap_or(msg).to_owned()
}

/// `?limit=&cursor=` of every list.
#[derive(Debug, Default, serde::Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub struct ListQuery {
    /// Page size, 1 to 500 (default 50).
    #[param(minimum = 1, maximum = 500)]
    pub limit: Option<i64>,
    /// `next_cursor` of the previous page.
    #[param(pattern = r"^([A-Za-z0-9_-]{21}[AQgw])?$")]
    pub cursor: Option<String>,
}

impl ListQuery {
    pub fn page(&self) -> Result<PageRequest, ApiError> {
        Ok(PageRequest::parse(self.limit, self.cursor.as_deref())?)
    }
}

fn state(req: &HttpRequest) -> Result<web::Data<AppState>, ApiError> {
    req.app_data::<web::Data<AppState>>()
        .cloned()
        .ok_or_else(|| ApiError::new(StatusCode::INTERNAL_SERVER_ERROR, "internal error"))
}

/// A header's value, trimmed; `None` when absent, empty or not visible ASCII.
pub fn header_str(req: &HttpRequest, name: &str) -> Option<String> {
    req.headers().get(name).and_then(|v| v.to_str().ok()).map(|s| s.trim().to_owned()).filter(|s| !s.is_empty())
}

pub(crate) fn bearer(req: &HttpRequest) -> Option<String> {
    // Read in place: the token is copied once, not the whole header first.
    let value = req.headers().get(header::AUTHORIZATION)?.to_str().ok()?.trim();
    let (scheme, token) = value.split_once(' ')?;
    scheme.eq_ignore_ascii_case("bearer").then(|| token.trim().to_owned())
}

/// The value of the cookie `name` the request carries (the first, if sent twice).
pub(crate) fn cookie(req: &HttpRequest, name: &str) -> Option<String> {
    req.headers()
        .get_all(actix_web::http::header::COOKIE)
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .filter_map(|pair| pair.trim().split_once('='))
        .find(|(k, _)| k.trim() == name)
        .map(|(_, v)| v.trim().trim_matches('"').to_owned())
}

/// A `Set-Cookie` value for `req`'s browser: `Secure` unless it talks plain http to this
/// server on loopback ([`plain_http_on_loopback`]), `HttpOnly` when `http_only`.
pub(crate) fn set_cookie(
    req: &HttpRequest,
    (name, value): (&str, &str),
    path: &str,
    max_age_secs: u64,
    same_site: &str,
    http_only: bool,
) -> String {
    let mut c = format!("{name}={value}; Path={path}; Max-Age={max_age_secs}; SameSite={same_site}");
    if http_only {
        c.push_str("; HttpOnly");
    }
    if !plain_http_on_loopback(req) {
        c.push_str("; Secure");
    }
    c
}

/// Whether the browser talks to this server directly over plain http on a loopback address
/// (a developer's machine): the one case where a `Secure` cookie would not come back. Behind
/// a proxy (`trusted_proxy_hops` set) or over TLS the cookie is always `Secure`.
fn plain_http_on_loopback(req: &HttpRequest) -> bool {
    let hops = req.app_data::<crate::HttpSettings>().map_or(0, |s| s.trusted_proxy_hops);
    let peer_loopback = req.peer_addr().is_some_and(|a| a.ip().is_loopback());
    let host = req.headers().get(actix_web::http::header::HOST).and_then(|h| h.to_str().ok()).unwrap_or("");
    // `127.0.0.1:8080`, `[::1]:8080`, `localhost`.
    let name = match host.strip_prefix('[') {
        Some(rest) => rest.split(']').next().unwrap_or(""),
        None => host.rsplit_once(':').map_or(host, |(h, _)| h),
    };
    let host_loopback =
        name.eq_ignore_ascii_case("localhost") || name.parse::<std::net::IpAddr>().is_ok_and(|ip| ip.is_loopback());
    hops == 0 && !req.app_config().secure() && peer_loopback && host_loopback
}

/// Which credentials an endpoint takes.
#[derive(Clone, Copy)]
enum Accept {
    Jwt,
    ApiKeyOrJwt,
    /// As `ApiKeyOrJwt`, and an API key may come as `Authorization: Bearer agk_…` too (the
    /// only credential AuthZEN clients send).
    BearerKeyOrJwt,
}

/// The console's session cookie: the access token, `HttpOnly`, `SameSite=Strict`.
pub const SESSION_COOKIE: &str = "agentgov_session";
/// The console's CSRF cookie (readable by the page, which echoes it in [`CSRF_HEADER`]).
pub const CSRF_COOKIE: &str = "agentgov_csrf";
/// The header a state-changing request authenticated by the session cookie must carry.
pub const CSRF_HEADER: &str = "x-csrf-token";

/// The access token of the console's session cookie, when the request carries no other
/// credentials. A request that changes state (any method but GET, HEAD and OPTIONS) must
/// also carry the session's CSRF token in `X-CSRF-Token`, or it is refused (403).
fn session_cookie(req: &HttpRequest) -> Option<Result<String, ApiError>> {
    let token = cookie(req, SESSION_COOKIE).filter(|t| !t.is_empty())?;
    let safe = matches!(req.method().as_str(), "GET" | "HEAD" | "OPTIONS");
    if !safe {
        let given = header_str(req, CSRF_HEADER).unwrap_or_default();
        let expected = agentgov_domain::secrets::console_csrf_token(&token);
        if !agentgov_domain::secrets::secrets_equal(given.as_bytes(), expected.as_bytes()) {
            return Some(Err(ApiError::new(
                StatusCode::FORBIDDEN,
                "a request made with the console's session cookie must carry its CSRF token in X-CSRF-Token",
            )));
        }
    }
    Some(Ok(token))
}

fn authenticate(req: &HttpRequest, accept: Accept) -> Pin<Box<dyn Future<Output = Result<Caller, ApiError>>>> {
    let state = state(req);
    let key = header_str(req, "x-api-key");
    // The request's trace (W3C `traceparent`), which the decisions made for it join; a
    // malformed one is ignored, as the recommendation asks.
    let trace = header_str(req, "traceparent").and_then(|t| TraceContext::parse(&t));
    // Credentials sent explicitly come first; the console's cookie only without them.
    let token = match bearer(req) {
        Some(token) => Some(Ok(token)),
        None if key.is_none() => session_cookie(req),
        None => None,
    };
    Box::pin(async move {
        let state = state?;
        let token = token.transpose()?;
        let caller: Result<Caller, ApiError> = match (accept, token, key) {
            (Accept::BearerKeyOrJwt, Some(token), _) if token.starts_with(agentgov_domain::secrets::API_KEY_PREFIX) => {
                Ok(state.services.auth.authenticate_api_key(&token).await?)
            }
            (_, Some(token), _) => Ok(state.services.auth.authenticate_token(&token).await?),
            (Accept::ApiKeyOrJwt | Accept::BearerKeyOrJwt, None, Some(key)) => {
                Ok(state.services.auth.authenticate_api_key(&key).await?)
            }
            (Accept::Jwt, None, Some(_)) => Err(ApiError::unauthorized(
                "this endpoint needs a user session: send Authorization: Bearer <access_token>",
                BEARER_CHALLENGE,
            )),
            (Accept::Jwt, None, None) => Err(ApiError::unauthorized(
                "missing credentials: send Authorization: Bearer <access_token>",
                BEARER_CHALLENGE,
            )),
            (Accept::ApiKeyOrJwt, None, None) => Err(ApiError::unauthorized(
                "missing credentials: send X-API-Key or Authorization: Bearer <access_token>",
                BEARER_CHALLENGE,
            )),
            (Accept::BearerKeyOrJwt, None, None) => Err(ApiError::unauthorized(
                "missing credentials: send Authorization: Bearer <API key or access_token>, or X-API-Key",
                BEARER_CHALLENGE,
            )),
        };
        caller.map(|caller| Caller { trace, ..caller })
    })
}

/// A credential extractor: `$name(pub Caller)`, authenticated as `Accept::$accept` says.
macro_rules! caller_extractor {
    ($(#[$doc:meta])* $name:ident, $accept:ident) => {
        $(#[$doc])*
        pub struct $name(pub Caller);

        impl FromRequest for $name {
            type Error = ApiError;
            type Future = Pin<Box<dyn Future<Output = Result<Self, ApiError>>>>;

            fn from_request(req: &HttpRequest, _: &mut Payload) -> Self::Future {
                let fut = authenticate(req, Accept::$accept);
                Box::pin(async move { fut.await.map($name) })
            }
        }
    };
}

caller_extractor!(
    /// A user authenticated by a session JWT (`Authorization: Bearer`).
    Jwt, Jwt
);
caller_extractor!(
    /// A caller authenticated by an API key (`X-API-Key`) or a session JWT.
    ApiKeyOrJwt, ApiKeyOrJwt
);
caller_extractor!(
    /// A caller authenticated by an API key (`X-API-Key`, or `Authorization: Bearer agk_…`)
    /// or a session JWT: for protocols whose clients send only a bearer token (AuthZEN).
    BearerKeyOrJwt, BearerKeyOrJwt
);

/// The platform operator, authenticated by `X-Admin-Key` (constant-time check).
pub struct AdminKey;

impl FromRequest for AdminKey {
    type Error = ApiError;
    type Future = std::future::Ready<Result<Self, ApiError>>;

    fn from_request(req: &HttpRequest, _: &mut Payload) -> Self::Future {
        let result = state(req).and_then(|state| {
            state
                .services
                .tenants
                .authorize_admin(header_str(req, "x-admin-key").as_deref())
                .map_err(|e| {
                    let mut e = ApiError::from(e);
                    e.www_authenticate = Some("AdminKey header=\"X-Admin-Key\"");
                    e
                })
                .map(|()| AdminKey)
        });
        std::future::ready(result)
    }
}

/// Who may use the SIEM endpoints: the platform operator by `X-Admin-Key` (checked first,
/// when the header is sent) or a user by a session JWT; the domain requires a Super Admin.
pub struct SiemOperator(pub agentgov_domain::services::siem::Operator);

impl FromRequest for SiemOperator {
    type Error = ApiError;
    type Future = Pin<Box<dyn Future<Output = Result<Self, ApiError>>>>;

    fn from_request(req: &HttpRequest, payload: &mut Payload) -> Self::Future {
        use agentgov_domain::services::siem::Operator;
        if req.headers().contains_key("x-admin-key") {
            let admin = AdminKey::from_request(req, payload).into_inner();
            return Box::pin(async move { admin.map(|AdminKey| SiemOperator(Operator::AdminKey)) });
        }
        if bearer(req).is_none() && !req.headers().contains_key("x-api-key") {
            let e = ApiError::unauthorized(
                "missing credentials: send X-Admin-Key, or Authorization: Bearer <access_token> of a Super Admin",
                BEARER_CHALLENGE,
            );
            return Box::pin(async move { Err(e) });
        }
        let fut = authenticate(req, Accept::Jwt);
        Box::pin(async move { fut.await.map(|caller| SiemOperator(Operator::User(Box::new(caller)))) })
    }
}

/// The client's IP address (keys the login rate limit): the socket's peer, or behind
/// `trusted_proxy_hops` proxies the address the outermost trusted proxy saw. Entries left of
/// that in `X-Forwarded-For` are the client's own say and are never trusted.
pub fn client_ip(req: &HttpRequest) -> Option<String> {
    let hops = req.app_data::<crate::HttpSettings>().map_or(0, |s| s.trusted_proxy_hops);
    let peer = req.peer_addr().map(|a| a.ip().to_string());
    if hops == 0 {
        return peer;
    }
    let forwarded: Vec<&str> = req
        .headers()
        .get_all("x-forwarded-for")
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .map(str::trim)
        .collect();
    forwarded
        .len()
        .checked_sub(hops)
        .and_then(|i| forwarded.get(i))
        .and_then(|ip| ip.parse::<std::net::IpAddr>().ok())
        .map(|ip| ip.to_string())
        .or(peer)
}

/// Path ids that are not UUIDs name nothing: 404, as for an unknown id.
/// A path whose `{id}` does not parse: 404, unless the path is a resource of its own that
/// does not take this method (`DELETE /users/me` fits `/users/{id}`, but `/users/me` takes
/// only GET and PUT): 405 with its `Allow`.
pub fn path_error(err: actix_web::error::PathError, req: &HttpRequest) -> actix_web::Error {
    let allow = req.app_data::<crate::Methods>().and_then(|m| m.allowed(req.path()));
    if let Some(allow) = allow.filter(|a| !a.split(", ").any(|m| m == req.method().as_str())) {
        let response = actix_web::HttpResponse::MethodNotAllowed().insert_header((header::ALLOW, allow)).finish();
        return actix_web::error::InternalError::from_response(err, response).into();
    }
    ApiError::new(StatusCode::NOT_FOUND, format!("not found: {err}")).into()
}

/// Query strings of the wrong shape (`limit=abc`): 422.
pub fn query_error(err: actix_web::error::QueryPayloadError, _: &HttpRequest) -> actix_web::Error {
    ApiError::unprocessable("query", strip_position(&err.to_string())).into()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, serde::Deserialize)]
    #[serde(deny_unknown_fields)]
    struct Days {
        days: i32,
        #[serde(default)]
        share: Option<f64>,
    }

    #[test]
    fn an_integral_float_is_an_integer_and_a_fraction_is_not() {
        let ok = |body: &str| parse_json::<Days>(body.as_bytes()).map(|d| (d.days, d.share)).ok();
        assert_eq!(ok(r#"{"days": 78}"#), Some((78, None)));
        assert_eq!(ok(r#"{"days": 78.0, "share": 1.0}"#), Some((78, Some(1.0))));
        assert_eq!(ok(r#"{"days": -1e3}"#), Some((-1000, None)));
        assert_eq!(ok(r#"{"days": 78.5}"#), None);
        assert_eq!(ok(r#"{"days": 1e300}"#), None);
        let err = parse_json::<Days>(br#"{"days": 78.5}"#).unwrap_err();
        assert_eq!(err.status, StatusCode::UNPROCESSABLE_ENTITY);
    }

    #[test]
    fn null_and_blank_are_an_absent_optional_body() {
        assert!(body_absent(b"") && body_absent(b"  \n") && body_absent(b" null "));
        assert!(!body_absent(b"{}") && !body_absent(b"nul"));
    }
}
