//! An events file written by the version before typed payloads (a real
//! run's, `fixtures/events/record.py`) is read, served and kept by this
//! one byte for byte.

use std::os::unix::fs::PermissionsExt;

use crate::common::{Daemon, DaemonOptions, TmuxServer};

#[test]
fn an_older_versions_events_are_served_as_they_were_written() {
    let fixture = concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures/events/peer.jsonl");
    let fixture = std::fs::read_to_string(fixture).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    std::fs::create_dir(&data).unwrap();
    std::fs::set_permissions(&data, std::fs::Permissions::from_mode(0o700)).unwrap();
    std::fs::write(data.join("events.jsonl"), &fixture).unwrap();
    let tmux = TmuxServer::new();
    let daemon = Daemon::start_with(
        &tmux,
        DaemonOptions {
            data_dir: Some(data.clone()),
            ..DaemonOptions::default()
        },
    );
    let token = std::fs::read_to_string(data.join("token")).unwrap();
    // The page as text: parsed, its keys would come back in another order.
    let page = reqwest::blocking::Client::new()
        .get(format!(
            "{}/v1/events?format=json&since=0&limit=10000",
            daemon.base
        ))
        .bearer_auth(token.trim())
        .send()
        .unwrap()
        .text()
        .unwrap();
    let lines: Vec<&str> = fixture.lines().collect();
    assert_eq!(lines.len(), 48);
    for line in lines {
        assert!(page.contains(line), "not served as written: {line}");
    }
    let kept = std::fs::read_to_string(data.join("events.jsonl")).unwrap();
    assert!(kept.starts_with(&fixture));
}
