//! The daemon's Prometheus metrics: one registry, made by the composition
//! root (`daemon.rs`) and handed as a cheap [`Metrics`] clone to whoever
//! reports (no globals); `GET /metrics` encodes it. Names follow the
//! Prometheus conventions (`_total` counters, `_seconds`, base units) and no
//! label carries a session id, a path or anything else a client controls.

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::Histogram;
use prometheus_client::metrics::info::Info;
use prometheus_client::registry::{Registry, Unit};

use labels::*;

/// The `Content-Type` of [`Metrics::encode`]'s text.
pub const CONTENT_TYPE: &str = "application/openmetrics-text; version=1.0.0; charset=utf-8";

/// Latency buckets, in seconds: from a control-mode reply (~0.2 ms) to a
/// long wait or a command at its timeout.
const LATENCY_BUCKETS: [f64; 16] = [
    0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0,
    60.0,
];

/// How a tmux command ran.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Via {
    /// A child `tmux` process.
    Fork,
    /// A line on a session's control client.
    Control,
}

/// What became of a tmux command.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    Ok,
    /// tmux answered with an error.
    Failed,
    /// No answer within the command timeout.
    Timeout,
    /// No tmux server, or the binary could not be run, or the client closed.
    Unavailable,
}

/// Which kind of live feed a subscriber holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StreamKind {
    /// `GET /v1/sessions/{id}/stream`: a pane's raw output.
    Output,
    /// `GET /v1/sessions/{id}/screen`: the rendered screen.
    Screen,
    /// `GET /v1/events`: Server-Sent Events.
    Events,
}

/// Why tmuxd dropped (or refused) a subscriber.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DropReason {
    /// It did not take a frame within the send timeout.
    SlowClient,
    /// Its output had to be skipped: it fell behind, or tmux paused the pane.
    OutputSkipped,
    /// Refused: too many open streams.
    StreamLimit,
}

/// What `set_storage` reports.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct StorageHealth {
    pub degraded: bool,
    pub unwritten_events: usize,
    pub lost_events: u64,
    pub failed_writes: u64,
}

/// The files tmuxd persists.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StoreFile {
    Registry,
    Thoughts,
    Ended,
    Restore,
    Events,
}

type Histograms<L> = Family<L, Histogram, fn() -> Histogram>;

fn latency_histogram() -> Histogram {
    Histogram::new(LATENCY_BUCKETS)
}

/// Every metric tmuxd reports; clones share them.
#[derive(Clone)]
pub struct Metrics {
    inner: Arc<Inner>,
}

struct Inner {
    registry: Registry,
    sessions: Family<StateLabels, Gauge>,
    /// States given a value at some scrape, so a state nobody is in reads 0.
    states_seen: std::sync::Mutex<std::collections::BTreeSet<String>>,
    session_ends: Family<ReasonLabels, Counter>,
    events_appended: Family<KindLabels, Counter>,
    queued_inputs: Gauge,
    sessions_attention: Gauge,
    waits: Gauge,
    tmux_commands: Family<TmuxLabels, Counter>,
    tmux_latency: Histograms<TmuxLatencyLabels>,
    http_requests: Family<HttpLabels, Counter>,
    http_latency: Histograms<HttpLatencyLabels>,
    subscribers: Family<StreamLabels, Gauge>,
    bytes_sent: Family<StreamLabels, Counter>,
    dropped: Family<DropLabels, Counter>,
    writes: Family<FileLabels, Counter>,
    storage_degraded: Gauge,
    write_failures: Counter,
    events_unwritten: Gauge,
    events_lost: Counter,
    notifications: Counter,
    notification_failures: Counter,
    auth_failures: Counter,
    fleet_refused: Counter,
    connections_shed: Counter,
    uptime: Gauge<f64, std::sync::atomic::AtomicU64>,
    started: std::time::Instant,
    screen: screen::ScreenMetrics,
    control: control::ControlMetrics,
}

/// Metrics are counters, not secrets, but a registry dump says nothing useful.
impl fmt::Debug for Metrics {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Metrics")
    }
}

impl Default for Metrics {
    fn default() -> Self {
        Metrics::new()
    }
}

impl Metrics {
    pub fn new() -> Self {
        let mut registry = Registry::with_prefix("tmuxd");
        let inner = Inner {
            sessions: Family::default(),
            states_seen: Default::default(),
            session_ends: Family::default(),
            events_appended: Family::default(),
            queued_inputs: Gauge::default(),
            sessions_attention: Gauge::default(),
            waits: Gauge::default(),
            tmux_commands: Family::default(),
            tmux_latency: Family::new_with_constructor(latency_histogram),
            http_requests: Family::default(),
            http_latency: Family::new_with_constructor(latency_histogram),
            subscribers: Family::default(),
            bytes_sent: Family::default(),
            dropped: Family::default(),
            writes: Family::default(),
            storage_degraded: Gauge::default(),
            write_failures: Counter::default(),
            events_unwritten: Gauge::default(),
            events_lost: Counter::default(),
            notifications: Counter::default(),
            notification_failures: Counter::default(),
            auth_failures: Counter::default(),
            fleet_refused: Counter::default(),
            connections_shed: Counter::default(),
            uptime: Gauge::default(),
            started: std::time::Instant::now(),
            screen: Default::default(),
            control: Default::default(),
            registry: Registry::default(),
        };
        register_all(&mut registry, &inner);
        seed(&inner);
        let version = Info::new(vec![("version", env!("CARGO_PKG_VERSION"))]);
        registry.register("build", "The running tmuxd's version", version);
        Metrics {
            inner: Arc::new(Inner { registry, ..inner }),
        }
    }

    /// The registry in the OpenMetrics text format ([`CONTENT_TYPE`]).
    pub fn encode(&self) -> String {
        let inner = &self.inner;
        inner.uptime.set(inner.started.elapsed().as_secs_f64());
        let mut text = String::new();
        // Writing into a String cannot fail.
        let _ = prometheus_client::encoding::text::encode(&mut text, &inner.registry);
        text
    }

    /// Sessions tracked now, by state (counted at each scrape).
    pub fn set_sessions<'a>(&self, states: impl IntoIterator<Item = &'a str>) {
        let mut counts = std::collections::BTreeMap::<String, i64>::new();
        for state in states {
            *counts.entry(state.to_owned()).or_default() += 1;
        }
        let mut seen = self.inner.states_seen.lock().expect("metrics states lock");
        seen.extend(counts.keys().cloned());
        for state in seen.iter() {
            let count = counts.get(state).copied().unwrap_or(0);
            let labels = StateLabels {
                state: state.clone(),
            };
            self.inner.sessions.get_or_create(&labels).set(count);
        }
    }

    /// Inputs waiting for their session to be idle, in all (at each scrape).
    /// Waits (`POST .../wait`) open now.
    pub fn set_waits(&self, open: usize) {
        self.inner.waits.set(open as i64);
    }

    pub fn set_queued_inputs(&self, queued: usize) {
        self.inner.queued_inputs.set(queued as i64);
    }

    /// Sessions whose attention flag is raised now (counted at each scrape).
    pub fn set_sessions_attention(&self, raised: usize) {
        self.inner.sessions_attention.set(raised as i64);
    }

    /// An event was numbered and served; `kind` and `reason` as recorded.
    /// A session's end (`session_deleted`, `session_detached`) also counts
    /// by its reason.
    pub fn event_appended(&self, kind: &str, reason: Option<&str>) {
        let kind = bounded(kind);
        if matches!(kind.as_str(), "session_deleted" | "session_detached") {
            let reason = bounded(reason.unwrap_or("unknown"));
            self.inner
                .session_ends
                .get_or_create(&ReasonLabels { reason })
                .inc();
        }
        self.inner
            .events_appended
            .get_or_create(&KindLabels { kind })
            .inc();
    }

    /// One tmux command finished.
    pub fn tmux_command(&self, command: &str, via: Via, outcome: Outcome, took: Duration) {
        let command = bounded(command);
        let via = match via {
            Via::Fork => "fork",
            Via::Control => "control",
        };
        let outcome = match outcome {
            Outcome::Ok => "ok",
            Outcome::Failed => "failed",
            Outcome::Timeout => "timeout",
            Outcome::Unavailable => "unavailable",
        };
        let latency = TmuxLatencyLabels {
            command: command.clone(),
            via,
        };
        let labels = TmuxLabels {
            command,
            via,
            outcome,
        };
        self.inner.tmux_commands.get_or_create(&labels).inc();
        let histogram = self.inner.tmux_latency.get_or_create(&latency);
        histogram.observe(took.as_secs_f64());
    }

    /// One HTTP request answered; `route` is the route's template
    /// (`/v1/sessions/{id}`), never the raw path.
    pub fn http_request(&self, route: &str, method: &str, status: u16, took: Duration) {
        let method = http_method(method);
        let labels = HttpLabels {
            route: route.to_owned(),
            method,
            status,
        };
        self.inner.http_requests.get_or_create(&labels).inc();
        let latency = HttpLatencyLabels {
            route: route.to_owned(),
            method,
        };
        let histogram = self.inner.http_latency.get_or_create(&latency);
        histogram.observe(took.as_secs_f64());
    }

    /// A subscriber joined; it counts until the guard is dropped.
    pub fn subscriber(&self, stream: StreamKind) -> SubscriberGuard {
        let labels = StreamLabels {
            stream: stream_label(stream),
        };
        self.inner.subscribers.get_or_create(&labels).inc();
        SubscriberGuard {
            metrics: self.clone(),
            labels,
        }
    }

    /// Bytes written to a subscriber (frame payloads, event lines).
    pub fn bytes_sent(&self, stream: StreamKind, bytes: usize) {
        let labels = StreamLabels {
            stream: stream_label(stream),
        };
        let counter = self.inner.bytes_sent.get_or_create(&labels);
        counter.inc_by(bytes as u64);
    }

    /// tmuxd dropped or refused a subscriber.
    pub fn subscriber_dropped(&self, stream: StreamKind, reason: DropReason) {
        let labels = DropLabels {
            stream: stream_label(stream),
            reason: drop_label(reason),
        };
        self.inner.dropped.get_or_create(&labels).inc();
    }

    /// A write of a persisted file landed.
    pub fn persisted(&self, file: StoreFile) {
        let labels = FileLabels {
            file: file_label(file),
        };
        self.inner.writes.get_or_create(&labels).inc();
    }

    /// The storage health as of a scrape (the storage task keeps it):
    /// whether some write keeps failing, events served but not on disk yet,
    /// events lost, and failed write attempts since start.
    pub fn set_storage(&self, storage: StorageHealth) {
        let inner = &self.inner;
        inner.storage_degraded.set(i64::from(storage.degraded));
        inner.events_unwritten.set(storage.unwritten_events as i64);
        let lost = storage.lost_events.saturating_sub(inner.events_lost.get());
        inner.events_lost.inc_by(lost);
        let failed = storage
            .failed_writes
            .saturating_sub(inner.write_failures.get());
        inner.write_failures.inc_by(failed);
    }

    /// A notification reached whoever it was for.
    pub fn notification_delivered(&self) {
        self.inner.notifications.inc();
    }

    /// A notification could not be delivered.
    pub fn notification_failed(&self) {
        self.inner.notification_failures.inc();
    }

    /// A request or socket presented a credential that matched nothing.
    pub fn auth_failed(&self) {
        self.inner.auth_failures.inc();
    }

    /// A fleet peer sent an event or a summary naming a session not its
    /// own; it was dropped.
    pub fn fleet_refused(&self) {
        self.inner.fleet_refused.inc();
    }

    /// Connections that had shown no credential were closed to make room.
    pub fn connections_shed(&self, count: usize) {
        self.inner.connections_shed.inc_by(count as u64);
    }
}

/// Keeps a subscriber counted while it lives.
#[derive(Debug)]
pub struct SubscriberGuard {
    metrics: Metrics,
    labels: StreamLabels,
}

impl Drop for SubscriberGuard {
    fn drop(&mut self) {
        self.metrics
            .inner
            .subscribers
            .get_or_create(&self.labels)
            .dec();
    }
}

/// The states api.md lists; another state is added when first reported.
const SESSION_STATES: [&str; 5] = ["starting", "idle", "working", "waiting", "exited"];

/// Label sets known in advance start at 0, so their families are in every
/// scrape (a family with no samples is left out of the text) and a rate
/// over them starts at the first scrape.
fn seed(m: &Inner) {
    let mut seen = m.states_seen.lock().expect("metrics states lock");
    for state in SESSION_STATES {
        seen.insert(state.to_owned());
        let labels = StateLabels {
            state: state.to_owned(),
        };
        m.sessions.get_or_create(&labels).set(0);
    }
    for kind in [StreamKind::Output, StreamKind::Screen, StreamKind::Events] {
        let stream = stream_label(kind);
        m.subscribers.get_or_create(&StreamLabels { stream }).set(0);
        m.bytes_sent
            .get_or_create(&StreamLabels { stream })
            .inc_by(0);
        for reason in [
            DropReason::SlowClient,
            DropReason::OutputSkipped,
            DropReason::StreamLimit,
        ] {
            let reason = drop_label(reason);
            m.dropped
                .get_or_create(&DropLabels { stream, reason })
                .inc_by(0);
        }
    }
    for file in [
        StoreFile::Registry,
        StoreFile::Thoughts,
        StoreFile::Ended,
        StoreFile::Restore,
        StoreFile::Events,
    ] {
        let labels = FileLabels {
            file: file_label(file),
        };
        m.writes.get_or_create(&labels).inc_by(0);
    }
}

fn register_all(registry: &mut Registry, m: &Inner) {
    let r = registry;
    r.register("sessions", "Sessions tracked, by state", m.sessions.clone());
    r.register(
        "session_ends",
        "Sessions no longer tracked, by the reason recorded with the event",
        m.session_ends.clone(),
    );
    r.register(
        "events_appended",
        "Events appended to the event log, by kind",
        m.events_appended.clone(),
    );
    r.register(
        "queued_inputs",
        "Inputs queued until their session is ready for them",
        m.queued_inputs.clone(),
    );
    r.register("waits", "Waits (POST .../wait) open now", m.waits.clone());
    r.register(
        "sessions_attention",
        "Sessions whose attention flag is raised (bell, needs input, long silence)",
        m.sessions_attention.clone(),
    );
    r.register(
        "tmux_commands",
        "tmux commands run, by command, transport and outcome",
        m.tmux_commands.clone(),
    );
    r.register_with_unit(
        "tmux_command_duration",
        "How long tmux commands took, by command and transport",
        Unit::Seconds,
        m.tmux_latency.clone(),
    );
    r.register(
        "http_requests",
        "HTTP requests answered, by route template, method and status",
        m.http_requests.clone(),
    );
    r.register_with_unit(
        "http_request_duration",
        "Time to answer an HTTP request (to the response head for streams), by route template and method",
        Unit::Seconds,
        m.http_latency.clone(),
    );
    register_streams(r, m);
    register_store(r, m);
    m.screen.register(r);
    m.control.register(r);
    r.register(
        "notification_deliveries",
        "Notifications delivered",
        m.notifications.clone(),
    );
    r.register(
        "notification_failures",
        "Notifications that could not be delivered",
        m.notification_failures.clone(),
    );
    r.register(
        "auth_failures",
        "Requests and sockets refused for a token or login code that matched nothing (each one slowed)",
        m.auth_failures.clone(),
    );
    r.register(
        "fleet_refused_events",
        "Events and summaries from fleet peers dropped for naming a session not on that peer",
        m.fleet_refused.clone(),
    );
    r.register(
        "connections_shed",
        "TCP connections that had shown no credential, closed to make room for a new one",
        m.connections_shed.clone(),
    );
    r.register_with_unit(
        "uptime",
        "Time since the daemon started",
        Unit::Seconds,
        m.uptime.clone(),
    );
}

fn register_streams(r: &mut Registry, m: &Inner) {
    r.register(
        "stream_subscribers",
        "Open output streams, screen feeds and event streams",
        m.subscribers.clone(),
    );
    r.register_with_unit(
        "stream_sent",
        "Bytes sent to stream subscribers",
        Unit::Bytes,
        m.bytes_sent.clone(),
    );
    r.register(
        "stream_subscribers_dropped",
        "Subscribers dropped or refused by tmuxd, by stream and reason",
        m.dropped.clone(),
    );
}

fn register_store(r: &mut Registry, m: &Inner) {
    r.register(
        "persistence_writes",
        "Writes of registry.json, thoughts.json and events.jsonl that landed",
        m.writes.clone(),
    );
    r.register(
        "storage_degraded",
        "1 while writes to the data dir keep failing (retried; see /healthz)",
        m.storage_degraded.clone(),
    );
    r.register(
        "storage_write_failures",
        "Failed write attempts to the data dir",
        m.write_failures.clone(),
    );
    r.register(
        "events_unwritten",
        "Events served but not yet on disk",
        m.events_unwritten.clone(),
    );
    r.register(
        "events_lost",
        "Events dropped before reaching the disk",
        m.events_lost.clone(),
    );
}

mod control;
mod labels;
mod screen;
pub use control::AttachVia;
pub use screen::CheckOutcome;
#[cfg(test)]
mod tests;
