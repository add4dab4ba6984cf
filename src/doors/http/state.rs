//! What every handler shares ([`AppState`]): the engine, the
//! authenticator, the options, the bound of the blocking pool, the metrics
//! and the rendered OpenAPI document.

use std::sync::{Arc, OnceLock};

use serde_json::Value;
use tokio::sync::Semaphore;

use crate::domain::engine::Engine;
use crate::doors::envelope::{self, Envelope};
use crate::doors::http::auth::Authenticator;
use crate::doors::http::metrics::Metrics;
use crate::doors::http::options::HttpOptions;
use crate::error::{Error, ValidationError};
use crate::rules::capability::{has_capability, Operation};
use crate::rules::principal::Principal;

/// What every handler shares.
#[derive(Clone)]
pub(crate) struct AppState(pub(super) Arc<Inner>);

pub(crate) struct Inner {
    pub(crate) engine: Arc<Engine>,
    pub(crate) auth: Arc<dyn Authenticator>,
    pub(crate) options: HttpOptions,
    /// HTTP-1: the bound of the blocking pool.
    pub(crate) calls: Arc<Semaphore>,
    pub(crate) metrics: Metrics,
    /// The OpenAPI document, rendered once the routes are assembled.
    pub(crate) openapi: OnceLock<String>,
}

impl std::ops::Deref for AppState {
    type Target = Inner;
    fn deref(&self) -> &Inner {
        &self.0
    }
}

impl AppState {
    /// WIRE-5 for a route: the capability first (AUTH-2), then the
    /// arguments the door read, then the JSON door itself, which repeats
    /// the capability check and goes on in WIRE-5's order. So a route
    /// answers exactly what `/rpc` (and the C ABI) would.
    pub(crate) async fn call(
        &self,
        principal: &Principal,
        operation: Operation,
        args: Result<Value, ValidationError>,
    ) -> Envelope {
        if !has_capability(principal, operation) {
            return envelope::error(&Error::CapabilityDenied);
        }
        let args = match args {
            Ok(args) => args,
            Err(error) => return envelope::error(&Error::Validation(error)),
        };
        let request = serde_json::json!({
            "op": operation.to_string(),
            "principal": principal.to_wire(),
            "args": args,
        });
        let reply = self
            .blocking(move |engine| crate::doors::json::call_value(engine, &request))
            .await
            .unwrap_or_else(|error| error.envelope());
        if matches!(
            operation,
            Operation::ResolveBundle | Operation::CancelBundle
        ) {
            self.metrics.count_resolve(&reply);
        }
        reply
    }
}
