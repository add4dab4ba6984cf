//! HTTP-1: the synchronous library runs on a bounded blocking pool. A
//! call first takes a place (the semaphore of `max_calls`, or for the
//! event streams' reads and checks that of `stream_reads`, HTTP-14), then runs on
//! tokio's blocking threads; the place is held by the blocking closure
//! itself, so a client that goes away does not free it before the call
//! ends, and the bound really bounds the threads.

use std::sync::Arc;

use tokio::sync::Semaphore;

use crate::domain::engine::Engine;
use crate::doors::http::error::HttpError;
use crate::doors::http::state::AppState;

impl AppState {
    /// Runs `body` on the blocking pool. A panic inside it becomes a 500
    /// with a logged reference: it never crosses into the server.
    pub(crate) async fn blocking<T: Send + 'static>(
        &self,
        body: impl FnOnce(&Engine) -> T + Send + 'static,
    ) -> Result<T, HttpError> {
        self.on_pool(&self.calls, body).await
    }

    /// Runs `body` on the event streams' own pool (HTTP-14).
    pub(crate) async fn stream_blocking<T: Send + 'static>(
        &self,
        body: impl FnOnce(&Engine) -> T + Send + 'static,
    ) -> Result<T, HttpError> {
        self.on_pool(&self.stream_reads, body).await
    }

    async fn on_pool<T: Send + 'static>(
        &self,
        places: &Arc<Semaphore>,
        body: impl FnOnce(&Engine) -> T + Send + 'static,
    ) -> Result<T, HttpError> {
        let place = places
            .clone()
            .acquire_owned()
            .await
            .map_err(|_| HttpError::ShuttingDown)?;
        let engine = self.engine.clone();
        tokio::task::spawn_blocking(move || {
            let _place = place;
            body(&engine)
        })
        .await
        .map_err(|error| HttpError::internal(format!("a blocking call failed: {error}")))
    }
}
