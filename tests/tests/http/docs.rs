//! The OpenAPI document and the interactive docs.
use agentgov_tests::*;

/// Every endpoint of spec 4.1, 4.2, 4.3 (but SSO), 4.10, 4.11 and 4.12, with its method.
const ENDPOINTS: &[(&str, &str)] = &[
    ("get", "/api/v1/health"),
    ("get", "/api/v1/health/ready"),
    ("get", "/api/v1/status"),
    ("get", "/api/v1/stats"),
    ("post", "/api/v1/auth/login"),
    ("post", "/api/v1/auth/logout"),
    ("get", "/api/v1/auth/me"),
    ("get", "/api/v1/users/me"),
    ("put", "/api/v1/users/me"),
    ("post", "/api/v1/users/me/change-password"),
    ("post", "/api/v1/users"),
    ("get", "/api/v1/users"),
    ("get", "/api/v1/users/{id}"),
    ("put", "/api/v1/users/{id}"),
    ("put", "/api/v1/users/{id}/role"),
    ("post", "/api/v1/users/{id}/block"),
    ("post", "/api/v1/users/{id}/unblock"),
    ("delete", "/api/v1/users/{id}"),
    ("post", "/api/v1/api-keys"),
    ("get", "/api/v1/api-keys"),
    ("delete", "/api/v1/api-keys/{id}"),
    ("post", "/api/v1/tenants"),
    ("get", "/api/v1/tenants"),
    ("get", "/api/v1/tenants/{id}"),
    ("patch", "/api/v1/tenants/{id}"),
    ("get", "/api/v1/tenant"),
    ("patch", "/api/v1/tenant"),
    ("get", "/api/v1/guard/health"),
    ("post", "/api/v1/guard/validate"),
    ("get", "/api/v1/guard/stats"),
    ("get", "/api/v1/guard/detector/status"),
    ("get", "/api/v1/guard/detector/metrics"),
    ("get", "/api/v1/guard/detector/versions"),
    ("post", "/api/v1/guard/detector/train"),
    ("get", "/api/v1/guard/detector/training/status"),
    ("post", "/api/v1/guard/detector/rollback/{version}"),
    ("delete", "/api/v1/guard/detector/cancel"),
    ("post", "/api/v1/guard/detector/feedback"),
];

#[tokio::test]
async fn openapi_documents_every_endpoint_with_security_and_errors() {
    let app = spawn_app().await;
    let doc = expect(app.get("/openapi.json"), 200).await;
    assert!(doc["openapi"].as_str().unwrap().starts_with("3.1"));
    for (method, path) in ENDPOINTS {
        let op = &doc["paths"][path][method];
        assert!(op.is_object(), "{method} {path} missing from the OpenAPI document");
        assert!(op["responses"]["500"].is_object(), "{method} {path} lacks the shared errors");
    }
    let schemes = doc["components"]["securitySchemes"].as_object().unwrap();
    for s in ["api_key", "bearer", "admin_key"] {
        assert!(schemes.contains_key(s), "security scheme {s}");
    }
    assert!(doc["paths"]["/api/v1/users"]["get"]["responses"]["403"].is_object());
    // Operation ids are unique (code generators key on them).
    let mut ids = std::collections::HashSet::new();
    for (path, item) in doc["paths"].as_object().unwrap() {
        for (method, op) in item.as_object().unwrap() {
            if let Some(id) = op["operationId"].as_str() {
                assert!(ids.insert(id.to_owned()), "operationId {id} repeated ({method} {path})");
            }
        }
    }
    assert!(doc["paths"]["/api/v1/auth/login"]["post"]["responses"]["429"].is_object());
}

#[tokio::test]
async fn the_docs_page_and_its_assets_are_served_by_the_binary() {
    let app = spawn_app().await;
    let res = app.get("/docs").send().await.unwrap();
    assert!(res.status().is_redirection());
    let res = app.get("/docs/").send().await.unwrap();
    assert_eq!(res.status(), 200);
    let html = res.text().await.unwrap();
    assert!(html.contains("swagger"), "{html}");
    for asset in ["/docs/swagger-ui.css", "/docs/swagger-ui-bundle.js", "/docs/swagger-initializer.js"] {
        let res = app.get(asset).send().await.unwrap();
        assert_eq!(res.status(), 200, "{asset}");
        let text = res.text().await.unwrap();
        assert!(!text.contains("unpkg.com") && !text.contains("cdn.jsdelivr"), "{asset} loads from a CDN");
    }
    let init = app.get("/docs/swagger-initializer.js").send().await.unwrap().text().await.unwrap();
    assert!(init.contains("/openapi.json"));
}
