//! Tests for the event log: line recovery, rotation, replay and JSON shape.

use std::os::unix::fs::PermissionsExt;

use chrono::TimeZone;
use serde_json::{Value, json};

use super::*;
use crate::wire::{Deleted, EventKind, Exit, Renamed, SessionState, StateChanged};

fn line(seq: u64) -> String {
    format!(r#"{{"seq":{seq},"at":"2025-03-04T05:06:07Z","kind":"session_removed"}}"#)
}

fn created(id: &str) -> NewEvent {
    NewEvent::new(Payload::SessionCreated).session_id(id)
}

fn seqs(events: &[Event]) -> Vec<u64> {
    events.iter().map(|e| e.seq).collect()
}

fn file_seqs(path: &Path) -> Vec<u64> {
    let scan = scan_lines(&fs::read(path).unwrap());
    assert_eq!(scan.skipped, 0);
    seqs(&scan.events)
}

#[test]
fn scan_lines_cases() {
    let (one, two) = (line(1), line(2));
    // (input, parsed seqs, skipped, tail)
    let cases: Vec<(String, Vec<u64>, usize, Tail)> = vec![
        (String::new(), vec![], 0, Tail::Clean),
        (format!("{one}\n{two}\n"), vec![1, 2], 0, Tail::Clean),
        (format!("{one}\n\n  \n{two}\n"), vec![1, 2], 0, Tail::Clean),
        (format!("{one}\n{two}"), vec![1, 2], 0, Tail::Unterminated),
        (
            format!("{one}\n{{\"seq\":2,\"at"),
            vec![1],
            1,
            Tail::Torn {
                keep_len: one.len() as u64 + 1,
            },
        ),
        (
            format!("{one}\nnot json\n{two}\n"),
            vec![1, 2],
            1,
            Tail::Clean,
        ),
        (format!("{{\"seq\":1}}\n{two}\n"), vec![2], 1, Tail::Clean),
    ];
    for (input, expected_seqs, skipped, tail) in cases {
        let scan = scan_lines(input.as_bytes());
        assert_eq!(seqs(&scan.events), expected_seqs, "{input:?}");
        assert_eq!(scan.skipped, skipped, "{input:?}");
        assert_eq!(scan.tail, tail, "{input:?}");
    }
}

#[test]
fn event_json_shape() {
    let exit = Exit {
        exit_status: Some(0),
        exit_signal: None,
    };
    let event = Event {
        seq: 17,
        at: Utc.with_ymd_and_hms(2025, 3, 4, 5, 6, 7).unwrap(),
        session_id: Some("sess_3".into()),
        reason: Some("api_delete".into()),
        tmux_name: None,
        body: Body::Whole(Payload::SessionDeleted(Deleted { exit: Some(exit) })),
        from_peer: None,
    };
    let text = serde_json::to_string(&event).unwrap();
    // The payload's keys in sorted order, after the common ones.
    assert_eq!(
        text,
        r#"{"seq":17,"at":"2025-03-04T05:06:07Z","kind":"session_deleted","session_id":"sess_3","reason":"api_delete","exit_signal":null,"exit_status":0}"#
    );
    assert_eq!(serde_json::from_str::<Event>(&text).unwrap(), event);

    let bare = Event {
        session_id: None,
        reason: None,
        body: Body::Whole(Payload::SessionRemoved),
        ..event
    };
    assert_eq!(
        serde_json::to_string(&bare).unwrap(),
        r#"{"seq":17,"at":"2025-03-04T05:06:07Z","kind":"session_removed"}"#
    );
}

/// Files written by the version before typed payloads: a peer's log with
/// every kind, and its hub's log of the same events fanned in (recorded
/// from real runs by `fixtures/events/record.py`).
const FIXTURES: [&str; 2] = ["peer.jsonl", "hub.jsonl"];

fn fixture(name: &str) -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures/events")
        .join(name);
    fs::read_to_string(path).unwrap()
}

#[test]
fn files_of_the_untyped_version_are_read_and_written_back_byte_for_byte() {
    let mut kinds = std::collections::BTreeSet::new();
    for name in FIXTURES {
        let text = fixture(name);
        for line in text.lines() {
            let event: Event = serde_json::from_str(line).unwrap_or_else(|e| panic!("{e}: {line}"));
            assert_eq!(serde_json::to_string(&event).unwrap(), line);
            kinds.insert(format!("{:?}", event.kind()));
        }
        // Through the log as a restart reads it: nothing skipped, and the
        // events served are the lines on disk.
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("events.jsonl");
        fs::write(&path, &text).unwrap();
        let log = EventLog::open(&path, 1 << 30, 10_000).unwrap();
        assert_eq!(log.skipped_lines(), 0, "{name}");
        let served: Vec<String> = (log.since(0).0.iter())
            .map(|e| serde_json::to_string(e).unwrap())
            .collect();
        assert_eq!(served, text.lines().collect::<Vec<_>>(), "{name}");
    }
    assert_eq!(kinds.len(), 11, "{kinds:?}");
}

#[test]
fn lines_the_fixtures_lack_are_written_back_byte_for_byte() {
    let lines = [
        // Cut to its kind: too large even with its strings cut.
        r#"{"seq":3,"at":"2026-11-28T14:05:05.694623230Z","kind":"session_renamed","session_id":"sess_2","tmux_name":"x","cut":true}"#,
        // The same on a hub, with the keys the hub adds.
        r#"{"seq":4,"at":"2026-11-28T14:05:05.694623230Z","kind":"session_state","session_id":"gpu1/sess_2","cut":true,"host":"gpu1","host_at":"2026-11-28T14:05:05Z","host_seq":3}"#,
        // A kind without fields, cut.
        r#"{"seq":5,"at":"2026-11-28T14:05:05Z","kind":"session_created","session_id":"sess_1","reason":"api_create","tmux_name":"x","cut":true}"#,
        // Typing failed.
        r#"{"seq":6,"at":"2026-11-28T14:05:05Z","kind":"input_dropped","session_id":"sess_1","reason":"delivery_failed","tmux_name":"one","message":"tmux refused"}"#,
        // An end tmuxd did not see the program make: no exit keys.
        r#"{"seq":7,"at":"2026-11-28T14:05:05Z","kind":"session_deleted","session_id":"sess_1","reason":"startup_missing_tmux","tmux_name":"one"}"#,
        r#"{"seq":8,"at":"2026-11-28T14:05:05Z","kind":"session_state","session_id":"sess_1","reason":"input","tmux_name":"one","acknowledged_by":"dashboard","attention":null,"state":"idle","state_since":"2026-11-28T14:05:05Z"}"#,
    ];
    for line in lines {
        let event: Event = serde_json::from_str(line).unwrap_or_else(|e| panic!("{e}: {line}"));
        assert_eq!(serde_json::to_string(&event).unwrap(), line);
    }
}

#[test]
fn what_a_line_must_hold_to_be_read() {
    let at = r#""seq":1,"at":"2026-11-28T14:05:05Z""#;
    // (line, read)
    let cases = [
        (format!(r#"{{{at},"kind":"session_removed"}}"#), true),
        // A key a newer version added is left out.
        (
            format!(r#"{{{at},"kind":"session_removed","new":1}}"#),
            true,
        ),
        (format!(r#"{{{at},"kind":"from_the_future"}}"#), false),
        // A payload without its fields is read only when cut.
        (format!(r#"{{{at},"kind":"session_renamed"}}"#), false),
        (
            format!(r#"{{{at},"kind":"session_renamed","cut":true}}"#),
            true,
        ),
        (
            format!(r#"{{{at},"kind":"tmux_lost","restorable":"all"}}"#),
            false,
        ),
        (format!(r#"{{{at},"kind":"input_dropped"}}"#), false),
        // `exit_status` alone is no exit: the pair is written together.
        (
            format!(r#"{{{at},"kind":"session_deleted","exit_status":3}}"#),
            true,
        ),
    ];
    for (line, read) in cases {
        let event = serde_json::from_str::<Event>(&line);
        assert_eq!(event.is_ok(), read, "{line}: {event:?}");
    }
    let half: Event = serde_json::from_str(&format!(
        r#"{{{at},"kind":"session_deleted","exit_status":3}}"#
    ))
    .unwrap();
    assert_eq!(half.payload().and_then(Payload::exit), None);
}

#[test]
fn event_kinds_serialize_snake_case() {
    let cases = [
        (EventKind::SessionCreated, "session_created"),
        (EventKind::SessionAdopted, "session_adopted"),
        (EventKind::SessionRenamed, "session_renamed"),
        (EventKind::SessionDetached, "session_detached"),
        (EventKind::SessionDeleted, "session_deleted"),
        (EventKind::SessionState, "session_state"),
        (EventKind::ThoughtUpdate, "thought_update"),
        (EventKind::InputDropped, "input_dropped"),
        (EventKind::TmuxLost, "tmux_lost"),
        (EventKind::SessionRestored, "session_restored"),
        (EventKind::SessionRemoved, "session_removed"),
    ];
    for (kind, name) in cases {
        assert_eq!(serde_json::to_value(kind).unwrap(), json!(name));
    }
}

#[test]
fn seq_increments_and_survives_reopen() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("events.jsonl");
    let mut log = EventLog::open(&path, 1 << 20, 100).unwrap();
    assert_eq!(log.next_seq(), 1);
    assert_eq!(log.append(created("sess_1")).unwrap().seq, 1);
    assert_eq!(log.append(created("sess_2")).unwrap().seq, 2);
    log.sync().unwrap();
    drop(log);
    assert_eq!(
        fs::metadata(&path).unwrap().permissions().mode() & 0o777,
        0o600
    );

    let mut log = EventLog::open(&path, 1 << 20, 100).unwrap();
    assert_eq!(log.next_seq(), 3);
    assert_eq!(log.skipped_lines(), 0);
    let (replayed, truncated) = log.since(0);
    assert_eq!(seqs(&replayed), [1, 2]);
    assert!(!truncated);
    assert_eq!(replayed[1].session_id.as_deref(), Some("sess_2"));
    assert_eq!(log.append(created("sess_3")).unwrap().seq, 3);
    assert_eq!(file_seqs(&path), [1, 2, 3]);
}

#[test]
fn torn_last_line_is_skipped_and_cut_off() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("events.jsonl");
    fs::write(&path, format!("{}\n{}\n{{\"seq\":3,\"at", line(1), line(2))).unwrap();

    let mut log = EventLog::open(&path, 1 << 20, 100).unwrap();
    assert_eq!(log.skipped_lines(), 1);
    // Seq 3 may have reached a listener before the write tore: not reused.
    assert_eq!(log.found().highest_seq, Some(3));
    assert_eq!(log.next_seq(), 4);
    log.append(created("sess_1")).unwrap();
    drop(log);

    let log = EventLog::open(&path, 1 << 20, 100).unwrap();
    assert_eq!(log.skipped_lines(), 0);
    assert_eq!(file_seqs(&path), [1, 2, 4]);
}

#[test]
fn unterminated_last_line_is_kept() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("events.jsonl");
    fs::write(&path, format!("{}\n{}", line(1), line(2))).unwrap();

    let mut log = EventLog::open(&path, 1 << 20, 100).unwrap();
    assert_eq!(log.skipped_lines(), 0);
    assert_eq!(log.append(created("sess_1")).unwrap().seq, 3);
    assert_eq!(file_seqs(&path), [1, 2, 3]);
}

#[test]
fn rotation_keeps_seq_monotonic_across_reopen() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("events.jsonl");
    let rotated = dir.path().join("events.jsonl.1");
    let max_bytes = 400;
    let mut log = EventLog::open(&path, max_bytes, 1000).unwrap();
    for n in 1..=20 {
        assert_eq!(log.append(created(&format!("sess_{n}"))).unwrap().seq, n);
        assert!(fs::metadata(&path).unwrap().len() <= max_bytes);
    }
    drop(log);

    let older = file_seqs(&rotated);
    let newer = file_seqs(&path);
    assert!(!older.is_empty() && !newer.is_empty());
    assert_eq!(older.last().unwrap() + 1, newer[0]);
    assert_eq!(*newer.last().unwrap(), 20);
    assert!(fs::metadata(&rotated).unwrap().len() <= max_bytes);

    let mut log = EventLog::open(&path, max_bytes, 1000).unwrap();
    assert_eq!(log.next_seq(), 21);
    let (replayed, truncated) = log.since(0);
    let expected: Vec<u64> = (older[0]..=20).collect();
    assert_eq!(seqs(&replayed), expected);
    // Events before the rotated file's first one were rotated away for good.
    assert_eq!(truncated, older[0] > 1);

    // Rotating again, right after reopening, still continues the sequence.
    for n in 21..=40 {
        assert_eq!(log.append(created("sess_x")).unwrap().seq, n);
    }
    drop(log);
    let older = file_seqs(&rotated);
    let newer = file_seqs(&path);
    assert_eq!(older.last().unwrap() + 1, newer[0]);
    assert_eq!(EventLog::open(&path, max_bytes, 10).unwrap().next_seq(), 41);
}

#[test]
fn highest_seq_may_be_in_rotated_file() {
    // A crash between renaming to .1 and the first append leaves an empty
    // current file; seq must still continue from .1.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("events.jsonl");
    fs::write(
        dir.path().join("events.jsonl.1"),
        format!("{}\n{}\n", line(7), line(8)),
    )
    .unwrap();
    let log = EventLog::open(&path, 1 << 20, 100).unwrap();
    assert_eq!(log.next_seq(), 9);
    assert_eq!(seqs(&log.since(0).0), [7, 8]);
}

#[test]
fn since_returns_retained_slice_and_truncation() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("events.jsonl");
    let mut log = EventLog::open(&path, 1 << 20, 3).unwrap();
    for _ in 0..5 {
        log.append(created("sess_1")).unwrap();
    }
    // The ring holds seqs 3, 4, 5.
    let cases: [(u64, &[u64], bool); 7] = [
        (0, &[3, 4, 5], true),
        (1, &[3, 4, 5], true),
        (2, &[3, 4, 5], false),
        (3, &[4, 5], false),
        (4, &[5], false),
        (5, &[], false),
        (u64::MAX, &[], false),
    ];
    for (since, expected, truncated) in cases {
        let (events, was_truncated) = log.since(since);
        assert_eq!(seqs(&events), expected, "since {since}");
        assert_eq!(was_truncated, truncated, "since {since}");
    }
}

#[test]
fn empty_ring_reports_truncation_only_for_missed_events() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("events.jsonl");
    let mut log = EventLog::open(&path, 1 << 20, 0).unwrap();
    assert_eq!(log.since(0), (vec![], false));
    log.append(created("sess_1")).unwrap();
    log.append(created("sess_1")).unwrap();
    assert_eq!(log.since(0), (vec![], true));
    assert_eq!(log.since(2), (vec![], false));
}

#[test]
fn the_payload_sits_beside_the_common_fields() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("events.jsonl");
    let mut log = EventLog::open(&path, 1 << 20, 10).unwrap();
    let since = Utc.with_ymd_and_hms(2025, 3, 4, 5, 6, 7).unwrap();
    let changed = StateChanged {
        state: SessionState::Idle,
        state_since: since,
        attention: None,
        acknowledged_by: None,
        exit: None,
    };
    let event = log
        .append(
            NewEvent::new(Payload::SessionState(changed))
                .session_id("sess_1")
                .reason("output_quiet"),
        )
        .unwrap();
    assert_eq!(event.seq, 1);
    let text = fs::read_to_string(&path).unwrap();
    let stored: Value = serde_json::from_str(text.trim_end()).unwrap();
    assert_eq!(stored["seq"], json!(1));
    assert_eq!(stored["kind"], json!("session_state"));
    assert_eq!(stored["state"], json!("idle"));
    assert_eq!(stored["state_since"], json!("2025-03-04T05:06:07Z"));
    assert_eq!(stored["attention"], Value::Null);
    assert_eq!(stored["reason"], json!("output_quiet"));
    assert!(stored.get("tmux_name").is_none());
    assert!(stored.get("exit_status").is_none());

    drop(log);
    let log = EventLog::open(&path, 1 << 20, 10).unwrap();
    assert_eq!(log.since(0).0, [event]);
}

/// A non-empty directory where the rotated file goes: the rename fails, for
/// root too, until it is removed.
fn block_rotation(path: &Path) -> PathBuf {
    let rotated = rotated_path(path);
    fs::create_dir(&rotated).unwrap();
    fs::write(rotated.join("x"), "").unwrap();
    rotated
}

#[test]
fn a_refused_write_keeps_events_queued_and_served_until_the_disk_takes_them() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("events.jsonl");
    // Lines are about 100 bytes: two fit, the third needs a rotation.
    let mut log = EventLog::open(&path, 250, 100).unwrap();
    log.append(created("sess_1")).unwrap();
    log.append(created("sess_2")).unwrap();
    let blocked = block_rotation(&path);
    for n in 3..=6 {
        let event = log.stamp(created(&format!("sess_{n}")));
        assert_eq!(event.seq, n);
        assert!(log.flush().is_err());
    }
    assert_eq!(log.unwritten(), 4);
    assert_eq!(
        seqs(&log.since(0).0),
        [1, 2, 3, 4, 5, 6],
        "served from memory"
    );
    assert_eq!(file_seqs(&path), [1, 2]);

    fs::remove_dir_all(&blocked).unwrap();
    log.flush().unwrap();
    assert_eq!((log.unwritten(), log.lost()), (0, 0));
    // Rotated twice on the way: 3 and 4 in the older file, then 5 and 6.
    assert_eq!(file_seqs(&blocked), [3, 4]);
    assert_eq!(file_seqs(&path), [5, 6]);
    drop(log);
    assert_eq!(EventLog::open(&path, 250, 100).unwrap().next_seq(), 7);
}

#[test]
fn the_unwritten_queue_is_bounded_and_counts_what_it_drops() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("events.jsonl");
    let mut log = EventLog::open(&path, 250, 100).unwrap();
    log.append(created("sess_1")).unwrap();
    log.append(created("sess_1")).unwrap();
    let blocked = block_rotation(&path);
    let line_len = fs::metadata(&path).unwrap().len() as usize / 2;
    // Room for three lines (their lengths vary by a few bytes), not four.
    log.max_unwritten_bytes = 3 * line_len + 10;
    for _ in 0..6 {
        log.stamp(created("sess_1"));
    }
    assert_eq!((log.unwritten(), log.lost()), (3, 3));
    fs::remove_dir_all(&blocked).unwrap();
    log.flush().unwrap();
    assert_eq!(file_seqs(&blocked), [6, 7]);
    assert_eq!(file_seqs(&path), [8], "the newest are kept, in order");
}

#[test]
fn seqs_are_reserved_before_they_are_handed_out() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("events.jsonl");
    let counters_path = dir.path().join("counters.json");
    let counters = Arc::new(Counters::new(&counters_path, None));
    counters.begin(3, 0).unwrap();
    let mut log = EventLog::open(&path, 1 << 20, 10)
        .unwrap()
        .with_counters(counters.clone());
    for _ in 0..2 {
        log.append(created("sess_1")).unwrap();
    }
    assert_eq!(counters.seq_reserved_on_disk(), 3);
    log.append(created("sess_1")).unwrap();
    assert_eq!(counters.seq_reserved_on_disk(), 3 + SEQ_BLOCK);
    let stored: Value = serde_json::from_slice(&fs::read(&counters_path).unwrap()).unwrap();
    assert_eq!(stored["event_seq_reserved"], json!(3 + SEQ_BLOCK));
}

#[test]
fn open_reports_what_it_found_and_resume_never_goes_back() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("events.jsonl");
    let named = |seq: u64, id: &str| {
        format!(
            r#"{{"seq":{seq},"at":"2025-03-04T05:06:07Z","kind":"session_created","session_id":"{id}"}}"#
        )
    };
    fs::write(
        &path,
        format!(
            "{}\n{}\n{{\"seq\":9,\"at\":\0\0\n{}\n",
            named(1, "sess_4"),
            named(2, "sess_12"),
            line(3)
        ),
    )
    .unwrap();
    let mut log = EventLog::open(&path, 1 << 20, 10).unwrap();
    assert_eq!(
        log.found(),
        Found {
            highest_seq: Some(9),
            highest_session_id: Some(12),
            skipped_lines: 1,
        }
    );
    assert_eq!(log.next_seq(), 10);
    log.resume_at(5);
    assert_eq!(log.next_seq(), 10);
    log.resume_at(1040);
    assert_eq!(log.append(created("sess_1")).unwrap().seq, 1040);
}

fn renamed(id: &str, old_name: String, new_name: String) -> NewEvent {
    let renamed = Renamed { old_name, new_name };
    NewEvent::new(Payload::SessionRenamed(renamed)).session_id(id)
}

fn sized(id: &str, filler: usize) -> NewEvent {
    renamed(id, "x".repeat(filler), "y".into())
}

fn line_len(event: &Event) -> usize {
    serde_json::to_vec(event).unwrap().len()
}

#[test]
fn the_ring_is_bounded_by_bytes_as_well_as_count() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("events.jsonl");
    let mut log = EventLog::open(&path, 1 << 30, 10_000)
        .unwrap()
        .retain_bytes(10_000);
    let one = line_len(&log.append(sized("sess_1", 1000)).unwrap());
    for _ in 0..99 {
        log.append(sized("sess_1", 1000)).unwrap();
    }
    let (count, bytes) = log.retained();
    assert!(bytes <= 10_000, "{bytes}");
    assert_eq!(count, 10_000 / one);
    let (events, truncated) = log.since(0);
    assert!(truncated);
    assert_eq!(*seqs(&events).last().unwrap(), 100);

    // The newest event stays, even alone past the bound.
    let mut tiny = EventLog::open(&dir.path().join("tiny.jsonl"), 1 << 30, 10)
        .unwrap()
        .retain_bytes(10);
    tiny.append(sized("sess_1", 100)).unwrap();
    assert_eq!(tiny.retained().0, 1);
}

#[test]
fn reopening_keeps_the_ring_within_its_bytes() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("events.jsonl");
    let mut log = EventLog::open(&path, 1 << 30, 10_000).unwrap();
    for _ in 0..1000 {
        log.append(sized("sess_1", 7000)).unwrap();
    }
    drop(log);
    let log = EventLog::open(&path, 1 << 30, 10_000).unwrap();
    let (count, bytes) = log.retained();
    assert!(bytes <= RING_BYTES, "{bytes}");
    assert!(count >= RING_BYTES / MAX_EVENT_BYTES, "{count}");
}

#[test]
fn a_large_event_is_cut_and_says_so() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("events.jsonl");
    let mut log = EventLog::open(&path, 1 << 30, 100).unwrap();
    // (old name, whether it is cut, the old name kept: None when cut to
    // the kind)
    let cases = [
        ("short".to_owned(), false, Some("short".to_owned())),
        ("é".repeat(5000), true, Some("é".repeat(512))),
        // Strings cut are not enough (a control character takes six bytes
        // in JSON): the payload goes, the flag stays.
        ("\u{1}".repeat(5000), true, None),
    ];
    for (old_name, cut, kept) in cases {
        let new_name = old_name.clone();
        let event = log.append(renamed("sess_1", old_name, new_name)).unwrap();
        assert!(line_len(&event) <= MAX_EVENT_BYTES, "{kept:?}");
        assert_eq!(!matches!(event.body, Body::Whole(_)), cut, "{kept:?}");
        let old_name = match event.payload() {
            Some(Payload::SessionRenamed(renamed)) => Some(renamed.old_name.clone()),
            _ => None,
        };
        assert_eq!(old_name, kept);
        assert_eq!(event.kind(), EventKind::SessionRenamed);
        assert_eq!(event.session_id.as_deref(), Some("sess_1"));
        // What is served is what is stored.
        assert_eq!(log.since(event.seq - 1).0, std::slice::from_ref(&event));
    }
    let text = fs::read_to_string(&path).unwrap();
    assert!(text.lines().all(|l| l.len() <= MAX_EVENT_BYTES));
    // Events written by an older version are cut as they are read back.
    fs::write(
        &path,
        format!(
            "{{\"seq\":1,\"at\":\"2025-03-04T05:06:07Z\",\"kind\":\"session_renamed\",\"new_name\":\"n\",\"old_name\":\"{}\"}}\n",
            "q".repeat(1 << 20)
        ),
    )
    .unwrap();
    let log = EventLog::open(&path, 1 << 30, 100).unwrap();
    let (events, _) = log.since(0);
    let Body::Cut(Payload::SessionRenamed(renamed)) = &events[0].body else {
        panic!("{:?}", events[0].kind());
    };
    assert_eq!(renamed.old_name.len(), MAX_CUT_STRING_BYTES);
}

#[test]
fn pages_stop_at_their_limit_or_bytes() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("events.jsonl");
    let mut log = EventLog::open(&path, 1 << 30, 5).unwrap();
    let one = line_len(&log.append(sized("sess_1", 100)).unwrap());
    for _ in 1..7 {
        log.append(sized("sess_1", 100)).unwrap();
    }
    // The ring holds seqs 3..=7.
    /// since, limit, max_bytes, seqs, truncated, has_more
    type Case = (u64, usize, usize, &'static [u64], bool, bool);
    let cases: [Case; 8] = [
        (0, 100, 1 << 20, &[3, 4, 5, 6, 7], true, false),
        (2, 2, 1 << 20, &[3, 4], false, true),
        (4, 2, 1 << 20, &[5, 6], false, true),
        (5, 2, 1 << 20, &[6, 7], false, false),
        (7, 2, 1 << 20, &[], false, false),
        (2, 100, 2 * one, &[3, 4], false, true),
        (2, 100, 2 * one + 1, &[3, 4], false, true),
        // One event always fits, whatever the byte cap.
        (2, 100, 1, &[3], false, true),
    ];
    for (since, limit, max_bytes, expected, truncated, has_more) in cases {
        let page = log.page(since, limit, max_bytes);
        let context = format!("since {since} limit {limit} bytes {max_bytes}");
        assert_eq!(seqs(&page.events), expected, "{context}");
        assert_eq!(page.truncated, truncated, "{context}");
        assert_eq!(page.has_more, has_more, "{context}");
    }
}
