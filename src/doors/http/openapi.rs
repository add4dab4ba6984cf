//! The OpenAPI document's top (HTTP-7): title, licence, and the two
//! security schemes, a bearer token and the session cookie (HTTP-4).

use utoipa::OpenApi;

use crate::doors::http::auth::SESSION_COOKIE;

/// OpenAPI's top: title, version, and the bearer scheme.
#[derive(OpenApi)]
#[openapi(
    info(
        title = "clarion",
        description = "A durable \"ask a human\" inbox: list, read, wait for and answer \
                       clarification requests (HTTP-2). Bodies are clarion's WIRE-1..3 envelopes.",
        license(name = "MIT OR Apache-2.0")
    ),
    modifiers(&BearerScheme),
    security(("bearer" = []), ("cookie" = []))
)]
pub(super) struct ApiDoc;

struct BearerScheme;

impl utoipa::Modify for BearerScheme {
    fn modify(&self, openapi: &mut utoipa::openapi::OpenApi) {
        use utoipa::openapi::security::SecurityScheme;
        use utoipa::openapi::security::{ApiKey, ApiKeyValue, HttpAuthScheme, HttpBuilder};
        let components = openapi.components.get_or_insert_with(Default::default);
        components.add_security_scheme(
            "bearer",
            SecurityScheme::Http(HttpBuilder::new().scheme(HttpAuthScheme::Bearer).build()),
        );
        components.add_security_scheme(
            "cookie",
            SecurityScheme::ApiKey(ApiKey::Cookie(ApiKeyValue::new(SESSION_COOKIE))),
        );
    }
}
