//! HTTP-7 metrics, Prometheus text: request counts and latencies by route,
//! resolves by outcome and losers (as answered through this router),
//! waits in flight, and the pending bundles and the webhooks' figures
//! and the mail worker's (read from the database at each scrape, so they
//! count every process's deliveries, HOOK-6, MAIL-1a).

use std::time::Duration;

use axum::http::Method;
use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::{exponential_buckets, Histogram};
use prometheus_client::registry::Registry;

use crate::domain::mail::MailStatus;
use crate::domain::webhooks::WebhookFigures;
use crate::doors::envelope::Envelope;

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct RequestLabels {
    route: String,
    method: String,
    status: u16,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct RouteLabels {
    route: String,
    method: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct OutcomeLabels {
    outcome: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct EndpointLabels {
    endpoint: String,
}

fn latency_histogram() -> Histogram {
    // 1 ms to about 65 s: long polls end by 55 s.
    Histogram::new(exponential_buckets(0.001, 2.0, 17))
}

pub(crate) struct Metrics {
    registry: Registry,
    requests: Family<RequestLabels, Counter>,
    latency: Family<RouteLabels, Histogram, fn() -> Histogram>,
    resolves: Family<OutcomeLabels, Counter>,
    losers: Counter,
    waits: Gauge,
    streams: Gauge,
    pending: Gauge,
    webhook_delivered: Family<EndpointLabels, Counter>,
    webhook_failed: Family<EndpointLabels, Counter>,
    webhook_backlog: Family<EndpointLabels, Gauge>,
    webhook_failing: Gauge,
    webhook_scrape: std::sync::Mutex<()>,
    mail_sent: Counter,
    mail_failed: Counter,
    mail_backlog: Gauge,
}

/// Decrements a gauge of things in flight (waits, event streams) when one
/// ends, however it ends (answered, cut, shut down, or dropped with its
/// client).
pub(crate) struct InFlight(Gauge);

impl Drop for InFlight {
    fn drop(&mut self) {
        self.0.dec();
    }
}

impl Metrics {
    pub(crate) fn new() -> Metrics {
        let mut registry = Registry::with_prefix("clarion");
        let requests = Family::<RequestLabels, Counter>::default();
        let latency = Family::<RouteLabels, Histogram, fn() -> Histogram>::new_with_constructor(
            latency_histogram,
        );
        let resolves = Family::<OutcomeLabels, Counter>::default();
        let losers = Counter::default();
        let waits = Gauge::default();
        let streams = Gauge::default();
        let pending = Gauge::default();
        let webhook_delivered = Family::<EndpointLabels, Counter>::default();
        let webhook_failed = Family::<EndpointLabels, Counter>::default();
        let webhook_backlog = Family::<EndpointLabels, Gauge>::default();
        let webhook_failing = Gauge::default();
        let mail_sent = Counter::default();
        let mail_failed = Counter::default();
        let mail_backlog = Gauge::default();
        // MAIL-1a.
        registry.register(
            "mail_sent",
            "Mails the SMTP server accepted",
            mail_sent.clone(),
        );
        registry.register(
            "mail_failed",
            "Mails dropped: refused, failing for the give-up time, or unaddressable",
            mail_failed.clone(),
        );
        registry.register(
            "mail_backlog",
            "Events after the mail worker's cursor",
            mail_backlog.clone(),
        );
        registry.register(
            "webhook_delivered",
            // HOOK-6.
            "Events delivered to each webhook endpoint",
            webhook_delivered.clone(),
        );
        registry.register(
            "webhook_failed",
            "Failed delivery attempts to each webhook endpoint",
            webhook_failed.clone(),
        );
        registry.register(
            "webhook_backlog",
            "Events after each webhook endpoint's cursor",
            webhook_backlog.clone(),
        );
        registry.register(
            "webhook_failing_endpoints",
            "Webhook endpoints marked failing",
            webhook_failing.clone(),
        );
        registry.register(
            "http_requests",
            "HTTP requests by route, method and status",
            requests.clone(),
        );
        registry.register(
            "http_request_duration_seconds",
            "HTTP request latency by route and method",
            latency.clone(),
        );
        registry.register(
            "resolves",
            "Bundles this router's callers claimed, by outcome",
            resolves.clone(),
        );
        registry.register(
            "resolve_losers",
            "Resolves and cancels through this router that lost to a winner",
            losers.clone(),
        );
        registry.register(
            "waits_in_flight",
            "Waits this router serves right now",
            waits.clone(),
        );
        registry.register(
            "event_streams",
            "Event streams (GET /api/v1/events) this router serves right now",
            streams.clone(),
        );
        registry.register(
            "pending_bundles",
            // SUM-1.
            "Bundles waiting for an answer (as system sees them)",
            pending.clone(),
        );
        Metrics {
            registry,
            requests,
            latency,
            resolves,
            losers,
            waits,
            streams,
            pending,
            webhook_delivered,
            webhook_failed,
            webhook_backlog,
            webhook_failing,
            webhook_scrape: std::sync::Mutex::new(()),
            mail_sent,
            mail_failed,
            mail_backlog,
        }
    }

    pub(crate) fn observe(&self, route: &str, method: &Method, status: u16, took: Duration) {
        // Any token is a method: a client inventing them must not grow the
        // label set without bound.
        let method = match *method {
            Method::GET
            | Method::HEAD
            | Method::POST
            | Method::PUT
            | Method::DELETE
            | Method::PATCH
            | Method::OPTIONS => method.as_str(),
            _ => "other",
        };
        self.requests
            .get_or_create(&RequestLabels {
                route: route.to_owned(),
                method: method.to_string(),
                status,
            })
            .inc();
        self.latency
            .get_or_create(&RouteLabels {
                route: route.to_owned(),
                method: method.to_string(),
            })
            .observe(took.as_secs_f64());
    }

    /// A resolve or cancel's reply: a winner counts under its outcome, a
    /// `claimed: false` as a loser; errors count as neither.
    pub(crate) fn count_resolve(&self, reply: &Envelope) {
        if reply.status != 200 {
            return;
        }
        match reply
            .body
            .get("claimed")
            .and_then(|claimed| claimed.as_bool())
        {
            Some(true) => {
                let outcome = reply.body["status"].as_str().unwrap_or_default().to_owned();
                self.resolves
                    .get_or_create(&OutcomeLabels { outcome })
                    .inc();
            }
            Some(false) => {
                self.losers.inc();
            }
            None => {}
        }
    }

    pub(crate) fn wait_started(&self) -> InFlight {
        self.waits.inc();
        InFlight(self.waits.clone())
    }

    /// HTTP-6: an event stream opened; dropping the value closes it.
    pub(crate) fn stream_opened(&self) -> InFlight {
        self.streams.inc();
        InFlight(self.streams.clone())
    }

    /// The Prometheus text of every metric, with `pending`, the
    /// webhooks' figures and the mail worker's as just read.
    pub(crate) fn render(
        &self,
        pending: i64,
        webhooks: &[WebhookFigures],
        mail: &MailStatus,
    ) -> String {
        self.pending.set(pending);
        self.webhooks(webhooks);
        self.mail(mail);
        let mut text = String::new();
        if prometheus_client::encoding::text::encode(&mut text, &self.registry).is_err() {
            text.clear();
        }
        text
    }
}

impl Metrics {
    /// HOOK-6: the families hold exactly the endpoints there are, each
    /// counter the database's count (kept there, so every process's
    /// deliveries count, and they only grow); one scrape at a time.
    fn webhooks(&self, figures: &[WebhookFigures]) {
        let _one = self
            .webhook_scrape
            .lock()
            .unwrap_or_else(|poison| poison.into_inner());
        let labels = |id: &str| EndpointLabels {
            endpoint: id.to_owned(),
        };
        let follow = |family: &Family<EndpointLabels, Counter>, id: &str, count: i64| {
            family
                .get_or_create(&labels(id))
                .inc_by(u64::try_from(count).unwrap_or(0));
        };
        self.webhook_delivered.clear();
        self.webhook_failed.clear();
        self.webhook_backlog.clear();
        for figure in figures {
            follow(&self.webhook_delivered, &figure.id, figure.delivered);
            follow(&self.webhook_failed, &figure.id, figure.failed);
            self.webhook_backlog
                .get_or_create(&labels(&figure.id))
                .set(figure.backlog);
        }
        self.webhook_failing
            .set(figures.iter().filter(|f| f.failing).count() as i64);
    }

    /// MAIL-1a: the counters follow the database's counts, which only
    /// grow; one scrape at a time.
    fn mail(&self, status: &MailStatus) {
        let _one = self
            .webhook_scrape
            .lock()
            .unwrap_or_else(|poison| poison.into_inner());
        let follow = |counter: &Counter, count: i64| {
            let count = u64::try_from(count).unwrap_or(0);
            let shown = counter.get();
            if count > shown {
                counter.inc_by(count - shown);
            }
        };
        follow(&self.mail_sent, status.sent);
        follow(&self.mail_failed, status.failed);
        self.mail_backlog.set(status.backlog);
    }
}
