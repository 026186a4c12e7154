//! Tests for where numbering resumes: one row per situation a restart meets.

use super::*;

#[test]
fn next_seq_cases() {
    let evidence = |highest_in_log, log_damaged, reserved, clean_stop| SeqEvidence {
        highest_in_log,
        log_damaged,
        reserved,
        clean_stop,
    };
    // (situation, evidence, next seq)
    let cases = [
        ("first start", evidence(None, false, None, None), 1),
        (
            "log only (older tmuxd)",
            evidence(Some(11), false, None, None),
            12,
        ),
        (
            "log only, damaged: a block ahead",
            evidence(Some(7), true, None, None),
            8 + SEQ_BLOCK,
        ),
        (
            "clean stop",
            evidence(Some(11), false, Some(1036), Some(12)),
            12,
        ),
        (
            "clean stop, log cut at a line",
            evidence(Some(7), false, Some(1036), Some(12)),
            12,
        ),
        (
            "clean stop, log garbled at the end",
            evidence(Some(7), true, Some(1036), Some(12)),
            12,
        ),
        (
            "clean stop, log deleted",
            evidence(None, false, Some(1036), Some(12)),
            12,
        ),
        (
            "crash: resume at the reservation",
            evidence(Some(11), false, Some(1036), None),
            1036,
        ),
        (
            "crash with a torn last line",
            evidence(Some(10), true, Some(1036), None),
            1036,
        ),
        (
            "log past the reservation (it could not be extended)",
            evidence(Some(2000), false, Some(1036), None),
            2001,
        ),
        (
            "log past a clean stop that was never cleared",
            evidence(Some(20), false, Some(1036), Some(12)),
            1036,
        ),
        (
            "counters lost, log fine",
            evidence(Some(11), false, None, None),
            12,
        ),
        (
            "no overflow at the top",
            evidence(Some(u64::MAX), true, None, None),
            u64::MAX,
        ),
    ];
    for (situation, evidence, next) in cases {
        assert_eq!(plan_next_seq(&evidence), next, "{situation}: {evidence:?}");
    }
}

#[test]
fn session_counter_cases() {
    let evidence = |registry_counter, highest_id, reserved, clean_stop| IdEvidence {
        registry_counter,
        salvaged_counter: None,
        highest_id,
        reserved,
        clean_stop,
    };
    // (situation, evidence, next counter)
    let cases = [
        ("first start", evidence(None, None, None, false), 1),
        (
            "clean stop: the registry is exact",
            evidence(Some(6), Some(5), Some(70), true),
            6,
        ),
        (
            "clean stop, an id the registry missed",
            evidence(Some(6), Some(9), Some(70), true),
            10,
        ),
        (
            "crash: the reservation",
            evidence(Some(6), Some(5), Some(70), false),
            70,
        ),
        (
            "registry lost after a clean stop: the reservation",
            evidence(None, Some(3), Some(70), true),
            70,
        ),
        (
            "registry and counters lost: the log's ids",
            evidence(None, Some(3), None, false),
            4,
        ),
        (
            "older tmuxd: no counters.json",
            evidence(Some(6), Some(5), None, false),
            6,
        ),
        (
            "a counter of 0 is read as 1",
            evidence(Some(0), None, None, true),
            1,
        ),
        (
            "absurd numbers are not trusted",
            evidence(Some(u64::MAX), Some(u64::MAX - 1), Some(u64::MAX), false),
            1,
        ),
    ];
    for (situation, evidence, next) in cases {
        assert_eq!(
            plan_session_counter(&evidence),
            next,
            "{situation}: {evidence:?}"
        );
    }
    let salvaged = IdEvidence {
        salvaged_counter: Some(12),
        ..evidence(None, Some(3), None, false)
    };
    assert_eq!(
        plan_session_counter(&salvaged),
        12,
        "a moved-aside registry"
    );
}

#[test]
fn session_numbers() {
    let cases = [
        ("sess_7", Some(7)),
        ("sess_0", Some(0)),
        ("sess_07", None),
        ("sess_", None),
        ("sess_1a", None),
        ("sess_-1", None),
        ("7", None),
        ("sess_9007199254740992", Some(MAX_TRUSTED)),
        ("sess_9007199254740993", None),
        ("sess_99999999999999999999999", None),
    ];
    for (id, number) in cases {
        assert_eq!(session_number(id), number, "{id}");
    }
}

#[test]
fn salvage_reads_keys_at_line_starts_only() {
    let registry_cut_short = r#"{
  "version": 1,
  "next_session_counter": 6,
  "sessions": [
    {
      "session_id": "sess_4",
      "tmux_name": "work",
      "command": "echo \"session_id\": \"sess_999\"\n  \"sess_888\": {",
      "queued_inputs": [{"text": "x\n\"next_session_counter\": 777"}]
    },
    {
      "session_id": "sess_5",
      "tmux_na"#;
    assert_eq!(
        salvage_pretty_json(registry_cut_short),
        Salvage {
            highest_session_id: Some(5),
            next_session_counter: Some(6),
            ..Salvage::default()
        }
    );

    let thoughts = "{\n  \"version\": 1,\n  \"thoughts\": {\n    \"sess_12\": {\n      \"text\": \"see sess_50\"\n    },\n    \"sess_3\": {\0\0\0";
    assert_eq!(salvage_pretty_json(thoughts).highest_session_id, Some(12));

    let counters = "{\n  \"version\": 1,\n  \"session_id_reserved\": 72,\n  \"event_seq_reserved\": 2048,\n  \"clean_stop_next_seq\": 1030\n}";
    assert_eq!(
        salvage_pretty_json(counters),
        Salvage {
            highest_session_id: None,
            next_session_counter: None,
            session_id_reserved: Some(72),
            event_seq_reserved: Some(2048),
            clean_stop_next_seq: Some(1030),
        }
    );

    let hostile = "\"next_session_counter\": 99999999999999999999\n\"session_id\": \"sess_07\"\n\"sess_\": 1\nnot json at all\n";
    assert_eq!(salvage_pretty_json(hostile), Salvage::default());
}

#[test]
fn salvage_merges_by_maximum() {
    let mut all = Salvage {
        highest_session_id: Some(3),
        ..Salvage::default()
    };
    all.merge(Salvage {
        highest_session_id: Some(2),
        next_session_counter: Some(9),
        ..Salvage::default()
    });
    assert_eq!(all.highest_session_id, Some(3));
    assert_eq!(all.next_session_counter, Some(9));
}

#[test]
fn event_seq_from_a_damaged_line() {
    let cases: [(&[u8], Option<u64>); 7] = [
        (br#"{"seq":17,"at":"2025-03-04T05:0"#, Some(17)),
        (b"{\"seq\":17,\0\0garbage", Some(17)),
        (br#"{"seq":17"#, None),
        (br#"{"seq":1x,"#, None),
        (br#" {"seq":17,"#, None),
        (b"\0\0\0", None),
        (br#"{"seq":99999999999999999999,"#, None),
    ];
    for (line, seq) in cases {
        assert_eq!(
            salvage_event_seq(line),
            seq,
            "{}",
            String::from_utf8_lossy(line)
        );
    }
}
