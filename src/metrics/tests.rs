//! The registry's text, read back line by line.

use super::*;

fn sample(text: &str, line_start: &str) -> Option<f64> {
    text.lines()
        .find_map(|l| l.strip_prefix(line_start))
        .and_then(|v| v.trim().parse().ok())
}

#[test]
fn families_are_named_by_convention() {
    let metrics = Metrics::new();
    metrics.tmux_command(
        "new-session",
        Via::Fork,
        Outcome::Ok,
        Duration::from_millis(3),
    );
    metrics.http_request("/v1/sessions", "GET", 200, Duration::from_millis(1));
    metrics.event_appended("session_deleted", Some("process_exit"));
    let text = metrics.encode();
    for line in [
        "# TYPE tmuxd_tmux_commands counter",
        "tmuxd_tmux_commands_total{command=\"new-session\",via=\"fork\",outcome=\"ok\"} 1",
        "# TYPE tmuxd_tmux_command_duration_seconds histogram",
        "# UNIT tmuxd_tmux_command_duration_seconds seconds",
        "tmuxd_http_requests_total{route=\"/v1/sessions\",method=\"GET\",status=\"200\"} 1",
        "tmuxd_session_ends_total{reason=\"process_exit\"} 1",
        "tmuxd_events_appended_total{kind=\"session_deleted\"} 1",
        "tmuxd_build_info{version=",
    ] {
        assert!(text.contains(line), "{line:?} missing from:\n{text}");
    }
    assert!(text.ends_with("# EOF\n"));
}

#[test]
fn states_nobody_is_in_read_zero() {
    let metrics = Metrics::new();
    let text = metrics.encode();
    assert_eq!(
        sample(&text, "tmuxd_sessions{state=\"waiting\"}"),
        Some(0.0)
    );
    metrics.set_sessions(["idle", "working", "idle"]);
    let text = metrics.encode();
    assert_eq!(sample(&text, "tmuxd_sessions{state=\"idle\"}"), Some(2.0));
    metrics.set_sessions(["working"]);
    let text = metrics.encode();
    assert_eq!(sample(&text, "tmuxd_sessions{state=\"idle\"}"), Some(0.0));
    assert_eq!(
        sample(&text, "tmuxd_sessions{state=\"working\"}"),
        Some(1.0)
    );
}

#[test]
fn subscribers_count_while_their_guard_lives() {
    let metrics = Metrics::new();
    let guard = metrics.subscriber(StreamKind::Events);
    let line = "tmuxd_stream_subscribers{stream=\"events\"}";
    assert_eq!(sample(&metrics.encode(), line), Some(1.0));
    drop(guard);
    assert_eq!(sample(&metrics.encode(), line), Some(0.0));
}

#[test]
fn storage_health_is_reported_as_of_the_scrape() {
    let metrics = Metrics::new();
    let failing = StorageHealth {
        degraded: true,
        unwritten_events: 3,
        lost_events: 0,
        failed_writes: 5,
    };
    metrics.set_storage(failing);
    let text = metrics.encode();
    assert_eq!(sample(&text, "tmuxd_storage_degraded "), Some(1.0));
    assert_eq!(sample(&text, "tmuxd_events_unwritten "), Some(3.0));
    assert_eq!(
        sample(&text, "tmuxd_storage_write_failures_total "),
        Some(5.0)
    );
    metrics.set_storage(StorageHealth {
        failed_writes: 7,
        ..StorageHealth::default()
    });
    let text = metrics.encode();
    assert_eq!(sample(&text, "tmuxd_storage_degraded "), Some(0.0));
    assert_eq!(
        sample(&text, "tmuxd_storage_write_failures_total "),
        Some(7.0)
    );
    metrics.persisted(StoreFile::Registry);
    let line = "tmuxd_persistence_writes_total{file=\"registry\"}";
    assert_eq!(sample(&metrics.encode(), line), Some(1.0));
}

#[test]
fn labels_stay_bounded() {
    assert_eq!(bounded("send-keys"), "send-keys");
    assert_eq!(bounded("api_kill"), "api_kill");
    assert_eq!(bounded("-V"), "-V");
    assert_eq!(bounded("weird value"), "other");
    assert_eq!(bounded(&"x".repeat(41)), "other");
    assert_eq!(http_method("BREW"), "other");
}
