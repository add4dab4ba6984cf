//! What every handler shares ([`AppState`]): the engine, the
//! authenticator, the options, the bound of the blocking pool, the metrics
//! and the rendered OpenAPI document.

use std::sync::{Arc, OnceLock};

use serde_json::Value;
use tokio::sync::Semaphore;

use crate::domain::engine::Engine;
use crate::doors::envelope::Envelope;
use crate::doors::http::auth::Authenticator;
use crate::doors::http::metrics::Metrics;
use crate::doors::http::options::HttpOptions;
use crate::doors::http::places::{Fanout, StreamPlaces};
use crate::doors::json;
use crate::doors::operations::{Counted, Entry};
use crate::rules::principal::Principal;
use crate::rules::vocabulary::Channel;

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
    /// HTTP-14: the bound of the event streams' own pool.
    pub(crate) stream_reads: Arc<Semaphore>,
    /// HTTP-13: the event streams each credential holds.
    pub(crate) stream_places: Arc<StreamPlaces>,
    /// HTTP-14: the one follower that serves every event stream.
    pub(crate) fanout: Fanout,
}

impl std::ops::Deref for AppState {
    type Target = Inner;
    fn deref(&self) -> &Inner {
        &self.0
    }
}

impl AppState {
    /// One operation on the blocking pool, exactly as the JSON door (and
    /// so the C ABI) performs it: its capability, then its arguments, then
    /// the domain. So a route answers byte for byte what `/rpc` would.
    pub(crate) async fn perform(
        &self,
        entry: &'static Entry,
        principal: Principal,
        args: Value,
    ) -> Envelope {
        let reply = self
            .blocking(move |engine| json::perform(engine, entry, &principal, Channel::Http, &args))
            .await
            .unwrap_or_else(|error| error.envelope());
        if entry.counted == Counted::Resolves {
            self.metrics.count_resolve(&reply);
        }
        reply
    }
}
