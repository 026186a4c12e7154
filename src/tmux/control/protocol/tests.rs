//! Tables for the control-mode parser, a transcript recorded from tmux
//! 3.3a (`fixtures/control/session.txt`), and split-anywhere checks.

use super::*;
use crate::tmux::control::{PaneId, TmuxSessionId, WindowId};
use Notification as N;

fn parse_all(chunks: &[&[u8]]) -> Vec<Event> {
    let mut parser = Parser::new();
    let mut events = Vec::new();
    for chunk in chunks {
        parser.feed(chunk, &mut events);
    }
    events.extend(parser.finish());
    events
}

fn one_notification(line: &str) -> Notification {
    match parse_all(&[format!("{line}\n").as_bytes()]).as_slice() {
        [Event::Notification(n)] => n.clone(),
        other => panic!("{line:?} gave {other:?}"),
    }
}

#[test]
fn notifications() {
    let w = WindowId;
    let p = PaneId;
    let s = TmuxSessionId;
    let table: Vec<(&str, Notification)> = vec![
        (
            "%output %3 a b\\015\\012",
            N::Output {
                pane: p(3),
                data: b"a b\r\n".to_vec(),
            },
        ),
        (
            "%output %0 ",
            N::Output {
                pane: p(0),
                data: vec![],
            },
        ),
        (
            "%extended-output %1 27 : x : y",
            N::ExtendedOutput {
                pane: p(1),
                age_ms: 27,
                data: b"x : y".to_vec(),
            },
        ),
        (
            "%extended-output %1 0 future stuff : z",
            N::ExtendedOutput {
                pane: p(1),
                age_ms: 0,
                data: b"z".to_vec(),
            },
        ),
        (
            "%extended-output %1 0 :",
            N::ExtendedOutput {
                pane: p(1),
                age_ms: 0,
                data: vec![],
            },
        ),
        ("%pause %4", N::Pause { pane: p(4) }),
        ("%continue %4", N::Continue { pane: p(4) }),
        ("%exit", N::Exit { reason: None }),
        (
            "%exit server exited unexpectedly",
            N::Exit {
                reason: Some("server exited unexpectedly".into()),
            },
        ),
        (
            "%layout-change @2 b25f,80x24,0,0,2 b25f,80x24,0,0,2 *Z",
            N::LayoutChange {
                window: w(2),
                layout: "b25f,80x24,0,0,2".into(),
                visible_layout: "b25f,80x24,0,0,2".into(),
                flags: "*Z".into(),
            },
        ),
        (
            "%layout-change @2 a,1x1,0,0,2 a,1x1,0,0,2",
            N::LayoutChange {
                window: w(2),
                layout: "a,1x1,0,0,2".into(),
                visible_layout: "a,1x1,0,0,2".into(),
                flags: "".into(),
            },
        ),
        ("%window-add @7", N::WindowAdd { window: w(7) }),
        ("%window-close @7", N::WindowClose { window: w(7) }),
        (
            "%window-renamed @0 my  window",
            N::WindowRenamed {
                window: w(0),
                name: "my  window".into(),
            },
        ),
        (
            "%unlinked-window-add @9",
            N::UnlinkedWindowAdd { window: w(9) },
        ),
        (
            "%unlinked-window-close @9",
            N::UnlinkedWindowClose { window: w(9) },
        ),
        (
            "%unlinked-window-renamed @9",
            N::UnlinkedWindowRenamed { window: w(9) },
        ),
        (
            "%session-changed $1 a b",
            N::SessionChanged {
                session: s(1),
                name: "a b".into(),
            },
        ),
        (
            "%session-renamed $0 ren amed",
            N::SessionRenamed {
                session: Some(s(0)),
                name: "ren amed".into(),
            },
        ),
        (
            "%session-renamed plain",
            N::SessionRenamed {
                session: None,
                name: "plain".into(),
            },
        ),
        ("%sessions-changed", N::SessionsChanged),
        (
            "%session-window-changed $1 @4",
            N::SessionWindowChanged {
                session: s(1),
                window: w(4),
            },
        ),
        (
            "%window-pane-changed @4 %8",
            N::WindowPaneChanged {
                window: w(4),
                pane: p(8),
            },
        ),
        ("%pane-mode-changed %8", N::PaneModeChanged { pane: p(8) }),
        (
            "%client-session-changed client-123 $2 other",
            N::ClientSessionChanged {
                client: "client-123".into(),
                session: s(2),
                name: "other".into(),
            },
        ),
        (
            "%client-detached /dev/pts/3",
            N::ClientDetached {
                client: "/dev/pts/3".into(),
            },
        ),
        (
            "%paste-buffer-changed buffer0",
            N::PasteBufferChanged {
                name: "buffer0".into(),
            },
        ),
        (
            "%paste-buffer-deleted buffer0",
            N::PasteBufferDeleted {
                name: "buffer0".into(),
            },
        ),
        (
            "%config-error /x.conf:1: unknown command: y",
            N::ConfigError {
                message: "/x.conf:1: unknown command: y".into(),
            },
        ),
        (
            "%message hello there",
            N::Message {
                message: "hello there".into(),
            },
        ),
        (
            "%future-thing 1 2",
            N::Unknown {
                line: b"%future-thing 1 2".to_vec(),
            },
        ),
        (
            "%output nopane x",
            N::Unknown {
                line: b"%output nopane x".to_vec(),
            },
        ),
        (
            "%pause @1",
            N::Unknown {
                line: b"%pause @1".to_vec(),
            },
        ),
        (
            "%extended-output %1 x : y",
            N::Unknown {
                line: b"%extended-output %1 x : y".to_vec(),
            },
        ),
        (
            "%extended-output %1 0 no colon",
            N::Unknown {
                line: b"%extended-output %1 0 no colon".to_vec(),
            },
        ),
        (
            "ATTACHHOOK",
            N::Stray {
                line: b"ATTACHHOOK".to_vec(),
            },
        ),
        ("", N::Stray { line: vec![] }),
    ];
    for (line, want) in table {
        assert_eq!(one_notification(line), want, "{line:?}");
    }
}

#[test]
fn octal_unescaping() {
    let table: &[(&[u8], &[u8])] = &[
        (b"\\134", b"\\"),
        (b"\\015\\012", b"\r\n"),
        (b"\\000\\001\\037", b"\0\x01\x1f"),
        (b"\\377", b"\xff"),
        (b"\\1345", b"\\5"),
        (b"\xff\xfe raw", b"\xff\xfe raw"),
        (b"\xc3\xa9", "é".as_bytes()),
        // Not escapes tmux would send: kept as they came.
        (b"\\400", b"\\400"),
        (b"\\8", b"\\8"),
        (b"\\01", b"\\01"),
        (b"\\", b"\\"),
        (b"a\\", b"a\\"),
        (b"\\\\134", b"\\\\"),
        (b"\\x41", b"\\x41"),
    ];
    for (escaped, raw) in table {
        assert_eq!(
            unescape_output(escaped),
            *raw,
            "{:?}",
            String::from_utf8_lossy(escaped)
        );
    }
}

#[test]
fn reply_blocks_hold_lines_that_look_like_notifications() {
    let input = b"%begin 10 5 1\n%output %1 x\n%end 10 4 1\n%end 9 5 1\n%end 10 5 0\n\n%error 10 5 1\n%begin 11 6 1\n%end 11 6 1\n";
    let events = parse_all(&[input]);
    let body: Vec<&[u8]> = vec![
        b"%output %1 x",
        b"%end 10 4 1",
        b"%end 9 5 1",
        b"%end 10 5 0",
        b"",
    ];
    let guard = |time, number| Guard {
        time,
        number,
        flags: 1,
    };
    assert_eq!(
        events,
        vec![
            Event::Reply(Reply {
                guard: guard(10, 5),
                failed: true,
                body: body.iter().map(|l| l.to_vec()).collect()
            }),
            Event::Reply(Reply {
                guard: guard(11, 6),
                failed: false,
                body: vec![]
            }),
        ]
    );
}

#[test]
fn a_block_cut_by_eof_answers_nothing_and_a_partial_line_is_reported() {
    assert_eq!(parse_all(&[b"%begin 1 2 1\nhalf a reply\n"]), vec![]);
    assert_eq!(
        parse_all(&[b"%output %1 trunc"]),
        vec![Event::Notification(N::Unknown {
            line: b"%output %1 trunc".to_vec()
        })]
    );
}

#[test]
fn dcs_wrapper_and_crlf_of_control_control_mode() {
    let wrapped: &[u8] =
        b"\x1bP1000p%begin 1 2 0\r\n%end 1 2 0\r\n%output %0 a\\015\r\n%exit\r\n\x1b\\";
    let want = vec![
        Event::Reply(Reply {
            guard: Guard {
                time: 1,
                number: 2,
                flags: 0,
            },
            failed: false,
            body: vec![],
        }),
        Event::Notification(N::Output {
            pane: PaneId(0),
            data: b"a\r".to_vec(),
        }),
        Event::Notification(N::Exit { reason: None }),
    ];
    assert_eq!(parse_all(&[wrapped]), want);
    let bytes: Vec<&[u8]> = wrapped.chunks(1).collect();
    assert_eq!(parse_all(&bytes), want);
    // Without the wrapper a `\r` is data (of a reply body, say), kept.
    let plain = parse_all(&[b"%begin 1 2 1\nx\r\n%end 1 2 1\n"]);
    assert_eq!(
        plain,
        vec![Event::Reply(Reply {
            guard: Guard {
                time: 1,
                number: 2,
                flags: 1
            },
            failed: false,
            body: vec![b"x\r".to_vec()]
        })]
    );
    // An escape that is not the DCS start is an ordinary (stray) line.
    assert_eq!(
        parse_all(&[b"\x1b[0m\n"]),
        vec![Event::Notification(N::Stray {
            line: b"\x1b[0m".to_vec()
        })]
    );
}

const TRANSCRIPT: &[u8] = include_bytes!("../../../../fixtures/control/session.txt");

#[test]
fn recorded_transcript() {
    let events = parse_all(&[TRANSCRIPT]);
    let replies: Vec<&Reply> = events
        .iter()
        .filter_map(|e| match e {
            Event::Reply(r) => Some(r),
            _ => None,
        })
        .collect();
    // The attach's own block (flags 0), then one per command sent.
    assert!(!replies[0].from_client());
    assert_eq!(replies.iter().filter(|r| r.from_client()).count(), 13);
    assert_eq!(replies[2].body, vec![b"%end 1 2 1".to_vec()]);
    assert_eq!(replies[3].body, vec![b"%0 @0 $0".to_vec()]);
    assert!(replies[4].failed);
    assert_eq!(
        replies[4].message(),
        "parse error: unknown command: bogus-command"
    );
    let output: Vec<u8> = events
        .iter()
        .filter_map(|e| match e {
            Event::Notification(N::ExtendedOutput {
                pane: PaneId(0),
                data,
                ..
            }) => Some(data.clone()),
            _ => None,
        })
        .flatten()
        .collect();
    let printed: &[u8] = b"\\ a\tb \xc3\xa9 \xff x\r\n";
    assert!(
        output.windows(printed.len()).any(|w| w == printed),
        "{:?}",
        String::from_utf8_lossy(&output)
    );
    let notes: Vec<&Notification> = events
        .iter()
        .filter_map(|e| match e {
            Event::Notification(n) => Some(n),
            _ => None,
        })
        .collect();
    assert_eq!(
        notes[0],
        &N::SessionChanged {
            session: TmuxSessionId(0),
            name: "rec".into()
        }
    );
    assert!(notes.contains(&&N::SessionRenamed {
        session: Some(TmuxSessionId(0)),
        name: "ren amed".into()
    }));
    assert!(notes.contains(&&N::WindowRenamed {
        window: WindowId(0),
        name: "my window".into()
    }));
    assert!(notes.contains(&&N::WindowAdd {
        window: WindowId(1)
    }));
    assert_eq!(notes.last(), Some(&&N::Exit { reason: None }));
    assert!(
        !notes
            .iter()
            .any(|n| matches!(n, N::Unknown { .. } | N::Stray { .. })),
        "{notes:?}"
    );
}

#[test]
fn every_two_way_split_of_the_transcript_parses_the_same() {
    let whole = parse_all(&[TRANSCRIPT]);
    for cut in 0..=TRANSCRIPT.len() {
        let (a, b) = TRANSCRIPT.split_at(cut);
        assert_eq!(parse_all(&[a, b]), whole, "cut at {cut}");
    }
}

#[test]
fn random_chunkings_parse_the_same() {
    let wrapped: Vec<u8> = [b"\x1bP1000p".as_slice(), TRANSCRIPT, b"\x1b\\"].concat();
    for input in [TRANSCRIPT, wrapped.as_slice()] {
        let whole = parse_all(&[input]);
        let mut seed: u64 = 0x9e37_79b9_7f4a_7c15;
        for round in 0..300 {
            let mut chunks = Vec::new();
            let mut rest = input;
            while !rest.is_empty() {
                seed = seed
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                let len = ((seed >> 33) as usize % 40).min(rest.len());
                let (chunk, tail) = rest.split_at(len);
                chunks.push(chunk);
                rest = tail;
            }
            assert_eq!(parse_all(&chunks), whole, "round {round}");
        }
    }
}
