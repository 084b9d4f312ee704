//! Operational metrics, rendered in the Prometheus text format: requests by
//! operation and status with latency histograms, pull operations by
//! platform, data type and outcome with durations, the sync queue's depth
//! and oldest age, token refreshes and webhook attempts by outcome,
//! rate-limit rejections, records a connector could not read, and the calls
//! made to each platform with the waits between them.
//!
//! Each application has its own recorder (none is installed globally), so
//! several instances in one process (the tests) each count only their own.
//! Labels are operation ids, platform keys, data type names and outcome
//! words: never an id, a key or a token.

use std::sync::Arc;
use std::time::Duration;

use metrics::{Key, Label, Level, Metadata, Recorder, SharedString, Unit};

use crate::platforms::kit::http::CallObserver;
use metrics_exporter_prometheus::{
    Matcher, PrometheusBuilder, PrometheusHandle, PrometheusRecorder,
};

const METADATA: Metadata<'static> =
    Metadata::new(module_path!(), Level::INFO, Some(module_path!()));

/// Request latency buckets, in seconds.
const REQUEST_BUCKETS: [f64; 12] = [
    0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 10.0,
];
/// Pull operation duration buckets, in seconds.
const PULL_BUCKETS: [f64; 10] = [0.1, 0.5, 1.0, 5.0, 15.0, 30.0, 60.0, 300.0, 900.0, 3600.0];

/// The metric names, for the tests and the docs.
pub mod names {
    /// Requests answered, by `operation` and `status`.
    pub const REQUESTS: &str = "tributary_http_requests_total";
    /// Request latency, by `operation`.
    pub const REQUEST_SECONDS: &str = "tributary_http_request_duration_seconds";
    /// Pull operations ended, by `platform`, `data_type` and `outcome`.
    pub const PULLS: &str = "tributary_pull_operations_total";
    /// Pull operation durations, by `platform`, `data_type` and `outcome`.
    pub const PULL_SECONDS: &str = "tributary_pull_operation_duration_seconds";
    /// Pull operations waiting for a worker.
    pub const QUEUE_DEPTH: &str = "tributary_sync_queue_depth";
    /// Age of the oldest waiting pull operation.
    pub const QUEUE_OLDEST_SECONDS: &str = "tributary_sync_queue_oldest_age_seconds";
    /// Token refreshes, by `platform` and `outcome`.
    pub const REFRESHES: &str = "tributary_token_refreshes_total";
    /// Webhook delivery attempts, by `outcome`.
    pub const WEBHOOK_ATTEMPTS: &str = "tributary_webhook_attempts_total";
    /// Requests refused by a rate limit, by `limit`.
    pub const RATE_LIMITED: &str = "tributary_rate_limit_rejections_total";
    /// Records a platform sent that its connector could not read, by
    /// `platform` and `data_type`.
    pub const UNREADABLE_RECORDS: &str = "tributary_unreadable_records_total";
    /// Calls made to the platforms' APIs, by `platform` and `status` (its
    /// class, `429`, or `none` when it did not answer).
    pub const PLATFORM_CALLS: &str = "tributary_platform_calls_total";
    /// Platform calls that woke too late for their turn under the
    /// platform's rate and took a new one, by `platform`.
    pub const LATE_TURNS: &str = "tributary_platform_late_turns_total";
    /// Generations' keys built at publish, by `data_type` and how their
    /// values were `gathered` (`while_staging`, `carried`, `read_back`).
    pub const KEYS_BUILT: &str = "tributary_record_keys_built_total";
    /// Whole orders of queried, ordered or merged lists remembered, by
    /// `data_type` and `way`
    /// (`keyed`: from the keys; `carried`: carried over from the previous
    /// generation's after a resync that carried its keys; `read`: from
    /// every record).
    pub const LIST_ORDERS: &str = "tributary_list_orders_total";
    /// Waits before a platform call is made again, by `platform`.
    pub const PLATFORM_WAIT_SECONDS: &str = "tributary_platform_call_wait_seconds";
}

/// Platform wait buckets, in seconds (a backoff, a `Retry-After`).
const WAIT_BUCKETS: [f64; 9] = [0.1, 0.5, 1.0, 2.0, 5.0, 10.0, 30.0, 60.0, 120.0];

/// One application's metrics.
pub struct Metrics {
    recorder: PrometheusRecorder,
    handle: PrometheusHandle,
}

impl std::fmt::Debug for Metrics {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Metrics")
    }
}

fn key(name: &'static str, labels: &[(&'static str, &str)]) -> Key {
    let labels: Vec<Label> = labels
        .iter()
        .map(|(label, value)| Label::new(*label, value.to_string()))
        .collect();
    Key::from_parts(name, labels)
}

impl Metrics {
    /// A fresh set of metrics, all at zero.
    pub fn new() -> Arc<Self> {
        let builder = PrometheusBuilder::new()
            .set_buckets_for_metric(
                Matcher::Full(names::REQUEST_SECONDS.to_owned()),
                &REQUEST_BUCKETS,
            )
            .and_then(|builder| {
                builder.set_buckets_for_metric(
                    Matcher::Full(names::PULL_SECONDS.to_owned()),
                    &PULL_BUCKETS,
                )
            })
            .and_then(|builder| {
                builder.set_buckets_for_metric(
                    Matcher::Full(names::PLATFORM_WAIT_SECONDS.to_owned()),
                    &WAIT_BUCKETS,
                )
            })
            .unwrap_or_else(|_| unreachable!("the bucket lists are not empty"));
        let recorder = builder.build_recorder();
        let describe = |name: &'static str, unit: Unit, text: &'static str| {
            recorder.describe_counter(name.into(), Some(unit), SharedString::const_str(text));
        };
        describe(
            names::REQUESTS,
            Unit::Count,
            "Requests answered, by operation and status.",
        );
        describe(
            names::PULLS,
            Unit::Count,
            "Pull operations ended, by platform, data type and outcome.",
        );
        describe(
            names::REFRESHES,
            Unit::Count,
            "Token refreshes, by platform and outcome.",
        );
        describe(
            names::WEBHOOK_ATTEMPTS,
            Unit::Count,
            "Webhook delivery attempts, by outcome.",
        );
        describe(
            names::UNREADABLE_RECORDS,
            Unit::Count,
            "Records a platform sent that its connector could not read (each reported on its pull operation), by platform and data type.",
        );
        describe(
            names::PLATFORM_CALLS,
            Unit::Count,
            "Calls made to the platforms' APIs (each retry one more), by platform and status class (2xx, 4xx, 429, 5xx; none when it did not answer).",
        );
        describe(
            names::KEYS_BUILT,
            Unit::Count,
            "Generations' keys built as they were published, by data type and how their values were gathered (while_staging: as a first sync staged its rows; carried: from the previous generation's keys and the rows a resync changed; read_back: from the stored records).",
        );
        describe(
            names::LIST_ORDERS,
            Unit::Count,
            "Whole orders of queried, ordered (orderBy) or merged (several connections) lists remembered for their pages, by data type and way (keyed: from the keys of the fields the data type declares; carried: carried over from the previous generation's remembered order and the rows a resync changed; read: from every stored record).",
        );
        describe(
            names::LATE_TURNS,
            Unit::Count,
            "Platform calls that woke too late for their turn under the platform's rate (the margin kept for late calls spent) and took a new one, by platform.",
        );
        recorder.describe_histogram(
            names::PLATFORM_WAIT_SECONDS.into(),
            Some(Unit::Seconds),
            SharedString::const_str(
                "Waits before a platform call is made again (a 429's Retry-After, a backoff after a failure), by platform.",
            ),
        );
        describe(
            names::RATE_LIMITED,
            Unit::Count,
            "Requests refused by a rate limit, by limit.",
        );
        recorder.describe_histogram(
            names::REQUEST_SECONDS.into(),
            Some(Unit::Seconds),
            SharedString::const_str("Request latency, by operation."),
        );
        recorder.describe_histogram(
            names::PULL_SECONDS.into(),
            Some(Unit::Seconds),
            SharedString::const_str("Pull operation durations, from claim to end."),
        );
        recorder.describe_gauge(
            names::QUEUE_DEPTH.into(),
            Some(Unit::Count),
            SharedString::const_str("Pull operations waiting for a worker."),
        );
        recorder.describe_gauge(
            names::QUEUE_OLDEST_SECONDS.into(),
            Some(Unit::Seconds),
            SharedString::const_str(
                "Age of the oldest waiting pull operation (0 when none waits).",
            ),
        );
        let handle = recorder.handle();
        Arc::new(Self { recorder, handle })
    }

    /// A request to `operation` (its operation id) answered `status` after `seconds`.
    pub fn request(&self, operation: &str, status: u16, seconds: f64) {
        let status = status.to_string();
        self.recorder
            .register_counter(
                &key(
                    names::REQUESTS,
                    &[("operation", operation), ("status", &status)],
                ),
                &METADATA,
            )
            .increment(1);
        self.recorder
            .register_histogram(
                &key(names::REQUEST_SECONDS, &[("operation", operation)]),
                &METADATA,
            )
            .record(seconds);
    }

    /// A pull operation of `data_type` from `platform` ended with `outcome` after `seconds`.
    pub fn pull_operation(&self, platform: &str, data_type: &str, outcome: &str, seconds: f64) {
        let labels = [
            ("platform", platform),
            ("data_type", data_type),
            ("outcome", outcome),
        ];
        self.recorder
            .register_counter(&key(names::PULLS, &labels), &METADATA)
            .increment(1);
        self.recorder
            .register_histogram(&key(names::PULL_SECONDS, &labels), &METADATA)
            .record(seconds);
    }

    /// A pull operation of `data_type` from `platform` could not read `count` records.
    pub fn unreadable_records(&self, platform: &str, data_type: &str, count: u64) {
        self.recorder
            .register_counter(
                &key(
                    names::UNREADABLE_RECORDS,
                    &[("platform", platform), ("data_type", data_type)],
                ),
                &METADATA,
            )
            .increment(count);
    }

    /// The keys of a published list of `data_type` were built from values
    /// `gathered` (`while_staging`, `carried` or `read_back`).
    pub fn keys_built(&self, data_type: &str, gathered: &str) {
        self.recorder
            .register_counter(
                &key(
                    names::KEYS_BUILT,
                    &[("data_type", data_type), ("gathered", gathered)],
                ),
                &METADATA,
            )
            .increment(1);
    }

    /// A queried, ordered or merged list's whole order of `data_type` was
    /// remembered, found
    /// the `way` it says (`keyed`, `carried` or `read`).
    pub fn list_order(&self, data_type: &str, way: &str) {
        self.recorder
            .register_counter(
                &key(
                    names::LIST_ORDERS,
                    &[("data_type", data_type), ("way", way)],
                ),
                &METADATA,
            )
            .increment(1);
    }

    /// A token refresh for `platform` ended with `outcome`.
    pub fn refresh(&self, platform: &str, outcome: &str) {
        self.recorder
            .register_counter(
                &key(
                    names::REFRESHES,
                    &[("platform", platform), ("outcome", outcome)],
                ),
                &METADATA,
            )
            .increment(1);
    }

    /// A webhook attempt ended with `outcome`.
    pub fn webhook_attempt(&self, outcome: &str) {
        self.recorder
            .register_counter(
                &key(names::WEBHOOK_ATTEMPTS, &[("outcome", outcome)]),
                &METADATA,
            )
            .increment(1);
    }

    /// The platform key of the connector named `connector_name`, for labels.
    fn platform_label(connector_name: &str) -> &str {
        crate::platforms::of_connector(connector_name)
            .map_or(connector_name, |platform| platform.platform_key)
    }

    /// A request was refused by the rate limit `limit`.
    pub fn rate_limited(&self, limit: &str) {
        self.recorder
            .register_counter(&key(names::RATE_LIMITED, &[("limit", limit)]), &METADATA)
            .increment(1);
    }

    /// The sync queue as it stands: waiting operations and the oldest's age.
    pub fn queue(&self, depth: u64, oldest_age_seconds: f64) {
        self.recorder
            .register_gauge(&key(names::QUEUE_DEPTH, &[]), &METADATA)
            .set(depth as f64);
        self.recorder
            .register_gauge(&key(names::QUEUE_OLDEST_SECONDS, &[]), &METADATA)
            .set(oldest_age_seconds);
    }

    /// Everything, in the Prometheus text format (version 0.0.4).
    pub fn render(&self) -> String {
        self.handle.render()
    }
}

impl CallObserver for Metrics {
    fn answered(&self, platform: &str, status: Option<u16>) {
        let status = match status {
            None => "none",
            Some(429) => "429",
            Some(code) if code >= 500 => "5xx",
            Some(code) if code >= 400 => "4xx",
            Some(code) if code >= 300 => "3xx",
            Some(_) => "2xx",
        };
        self.recorder
            .register_counter(
                &key(
                    names::PLATFORM_CALLS,
                    &[
                        ("platform", Self::platform_label(platform)),
                        ("status", status),
                    ],
                ),
                &METADATA,
            )
            .increment(1);
    }

    fn waits(&self, platform: &str, wait: Duration) {
        self.recorder
            .register_histogram(
                &key(
                    names::PLATFORM_WAIT_SECONDS,
                    &[("platform", Self::platform_label(platform))],
                ),
                &METADATA,
            )
            .record(wait.as_secs_f64());
    }

    fn late(&self, platform: &str) {
        self.recorder
            .register_counter(
                &key(
                    names::LATE_TURNS,
                    &[("platform", Self::platform_label(platform))],
                ),
                &METADATA,
            )
            .increment(1);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_instance_counts_its_own() {
        let (first, second) = (Metrics::new(), Metrics::new());
        first.request("listCompanies", 200, 0.002);
        first.request("listCompanies", 200, 0.003);
        second.request("listCompanies", 500, 0.004);
        let rendered = first.render();
        assert!(
            rendered.contains(
                r#"tributary_http_requests_total{operation="listCompanies",status="200"} 2"#
            ),
            "{rendered}"
        );
        assert!(!rendered.contains(r#"status="500""#), "{rendered}");
        assert!(
            rendered.contains("tributary_http_request_duration_seconds_bucket"),
            "{rendered}"
        );
        assert!(second.render().contains(r#"status="500"} 1"#));
    }
}
