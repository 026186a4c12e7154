//! argv and reply parsing of each typed command.

use super::*;
use crate::tmux::PaneRect;

fn lines(text: &[&str]) -> Vec<Vec<u8>> {
    text.iter().map(|l| l.as_bytes().to_vec()).collect()
}

#[test]
fn argv_of_each_command() {
    let pane = Target::Pane(PaneId(3));
    let table: Vec<(Vec<String>, &str)> = vec![
        (
            SendKeys {
                target: Target::Session("a b".into()),
                keys: vec!["C-c".into(), "Enter".into()],
            }
            .args(),
            "send-keys -t =a b: -- C-c Enter",
        ),
        (
            SendLiteral {
                target: pane.clone(),
                text: "-x y".into(),
            }
            .args(),
            "send-keys -t %3 -l -- -x y",
        ),
        (
            SendHex {
                target: pane.clone(),
                bytes: vec![0x1b, 0x5b, 0, 0xff],
            }
            .args(),
            "send-keys -t %3 -H 1b 5b 00 ff",
        ),
        (
            CapturePane::screen(pane.clone()).args(),
            "capture-pane -p -t %3",
        ),
        (
            CapturePane {
                target: pane.clone(),
                escapes: true,
                join: true,
                start: Some(LineBound::Edge),
                end: Some(LineBound::Line(-1)),
            }
            .args(),
            "capture-pane -p -t %3 -e -J -S - -E -1",
        ),
        (
            DisplayMessage {
                target: Some(Target::Window(WindowId(2))),
                format: "#{pane_id}".into(),
            }
            .args(),
            "display-message -p -t @2 -- #{pane_id}",
        ),
        (
            DisplayMessage {
                target: None,
                format: "x".into(),
            }
            .args(),
            "display-message -p -- x",
        ),
        (
            ListPanes {
                scope: PaneScope::All,
                format: "#{pane_id}".into(),
            }
            .args(),
            "list-panes -a -F #{pane_id}",
        ),
        (
            ListPanes {
                scope: PaneScope::Session(Target::TmuxSessionId(TmuxSessionId(4))),
                format: "f".into(),
            }
            .args(),
            "list-panes -s -t $4 -F f",
        ),
        (
            ListPanes {
                scope: PaneScope::Window(Target::Session("s".into())),
                format: "f".into(),
            }
            .args(),
            "list-panes -t =s: -F f",
        ),
        (
            ResizeWindow {
                target: Target::Window(WindowId(1)),
                cols: 100,
                rows: 30,
            }
            .args(),
            "resize-window -t @1 -x 100 -y 30",
        ),
        (
            KillSession {
                target: Target::Session("x".into()),
            }
            .args(),
            "kill-session -t =x:",
        ),
        (
            SetOption {
                scope: OptionScope::Session(Target::Session("x".into())),
                name: "@k",
                value: Some("v w".into()),
            }
            .args(),
            "set-option -t =x: -- @k v w",
        ),
        (
            SetOption {
                scope: OptionScope::Server,
                name: "@k",
                value: None,
            }
            .args(),
            "set-option -s -u -- @k",
        ),
        (
            PinStatusInterval {
                target: Target::TmuxSessionId(TmuxSessionId(3)),
            }
            .args(),
            "set-option -o -F -t $3 status-interval #{status-interval}",
        ),
        (
            ShowOptions {
                scope: OptionScope::GlobalSession,
                name: "status",
            }
            .args(),
            "show-options -v -q -g -- status",
        ),
        (
            ShowOptions {
                scope: OptionScope::Pane(pane.clone()),
                name: "@p",
            }
            .args(),
            "show-options -v -q -p -t %3 -- @p",
        ),
        (
            RefreshClient::Flags(vec![ClientFlag::PauseAfter(2), ClientFlag::Output]).args(),
            "refresh-client -f pause-after=2,!no-output",
        ),
        (
            RefreshClient::Flags(vec![ClientFlag::NoOutput, ClientFlag::NoPauseAfter]).args(),
            "refresh-client -f no-output,!pause-after",
        ),
        (
            RefreshClient::continue_pane(PaneId(7)).args(),
            "refresh-client -A %7:continue",
        ),
        (
            RefreshClient::Pane {
                pane: PaneId(7),
                action: PaneAction::Off,
            }
            .args(),
            "refresh-client -A %7:off",
        ),
    ];
    for (args, want) in table {
        assert_eq!(args.join(" "), want);
    }
}

#[test]
fn literal_text_is_chunked_at_character_boundaries() {
    let target = Target::Pane(PaneId(0));
    let text = "aé✓😀b".repeat(50);
    for max in [1, 4, 5, 7, 64, 10_000] {
        let chunks = SendLiteral::chunked(&target, &text, max);
        let joined: String = chunks.iter().map(|c| c.text.as_str()).collect();
        assert_eq!(joined, text, "max {max}");
        assert!(
            chunks.iter().all(|c| c.text.len() <= max.max(4)),
            "max {max}"
        );
    }
    assert!(SendLiteral::chunked(&target, "", 10).is_empty());
    let hex = SendHex::chunked(&target, &[1, 2, 3, 4, 5], 2);
    assert_eq!(
        hex.iter().map(|c| c.bytes.len()).collect::<Vec<_>>(),
        vec![2, 2, 1]
    );
}

#[test]
fn replies_are_parsed() {
    let silent = SendKeys {
        target: Target::Pane(PaneId(0)),
        keys: vec![],
    };
    assert_eq!(silent.parse(&[]), Ok(()));
    assert!(silent.parse(&lines(&["surprise"])).is_err());
    let display = DisplayMessage {
        target: None,
        format: String::new(),
    };
    assert_eq!(display.parse(&lines(&["a", "b"])).unwrap(), "a\nb");
    let show = ShowOptions {
        scope: OptionScope::Server,
        name: "@x",
    };
    assert_eq!(show.parse(&[]).unwrap(), None);
    assert_eq!(show.parse(&lines(&[""])).unwrap(), Some(String::new()));
    let capture = CapturePane::screen(Target::Pane(PaneId(0)));
    let raw = vec![b"\x1b[1mbold\xff".to_vec(), vec![]];
    assert_eq!(capture.parse(&raw).unwrap(), raw);
    assert!(RefreshClient::continue_pane(PaneId(1)).notifications_in_reply());
    assert!(!capture.notifications_in_reply());
}

#[test]
fn list_sessions_keeps_tabs_and_spaces_in_names() {
    let reply = lines(&[
        "$0\t1\t2\t1700000000\tmain",
        "$12\t0\t1\t1700000001\ta\tb c",
    ]);
    let sessions = ListSessions.parse(&reply).unwrap();
    assert_eq!(
        sessions,
        vec![
            SessionSummary {
                id: TmuxSessionId(0),
                name: "main".into(),
                attached: 1,
                windows: 2,
                created: 1_700_000_000
            },
            SessionSummary {
                id: TmuxSessionId(12),
                name: "a\tb c".into(),
                attached: 0,
                windows: 1,
                created: 1_700_000_001
            },
        ]
    );
    assert!(ListSessions.parse(&lines(&["garbage"])).is_err());
}

#[test]
fn list_pane_info_reuses_the_discovery_parser() {
    let command = ListPaneInfo {
        scope: PaneScope::All,
    };
    assert!(
        command
            .args()
            .join(" ")
            .starts_with("list-panes -a -F #{session_name}")
    );
    let reply = lines(&["s\t1\t1\t80\t24\tbash\t/tmp\t0\t42\ton\tbottom\tt\t0\t0\t0\t80\t24"]);
    let panes = command.parse(&reply).unwrap();
    assert_eq!(panes.len(), 1);
    assert_eq!(
        panes[0].rect,
        Some(PaneRect {
            left: 0,
            top: 0,
            cols: 80,
            rows: 24
        })
    );
}

/// `new-session` expands `-s` and `-c` (a `Literal` each), not the command.
#[test]
fn new_session_passes_hostile_names_and_cwds_as_text() {
    let command = NewSession {
        name: "n#(a)",
        cwd: Some("/r/#(touch m)"),
        size: Some((80, 24)),
        command: Some("echo '#(id)' #{pane_id}"),
        keep_exit: true,
        tag: Some("sess_1"),
        env: &[("TMUXD_SOCKET".into(), "/d/#{x}".into())],
    };
    assert_eq!(
        command.args(),
        [
            "new-session",
            "-d",
            "-s",
            "n##(a)",
            "-x",
            "80",
            "-y",
            "24",
            "-c",
            "/r/##(touch m)",
            "-e",
            "TMUXD_SOCKET=/d/#{x}",
            "--",
            "echo '#(id)' #{pane_id}",
        ]
    );
    let bare = NewSession {
        name: "plain",
        ..Default::default()
    };
    assert_eq!(bare.args().join(" "), "new-session -d -s plain");
}

/// What tmux does not expand goes as it is: typed text and keys, option
/// values without `-F`.
#[test]
fn unexpanded_arguments_keep_their_hashes() {
    let pane = Target::Pane(PaneId(1));
    let literal = SendLiteral {
        target: pane.clone(),
        text: "#(touch m) ##".into(),
    };
    assert_eq!(literal.args().last().unwrap(), "#(touch m) ##");
    let keys = SendKeys {
        target: pane,
        keys: vec!["#".into()],
    };
    assert_eq!(keys.args().last().unwrap(), "#");
    let option = SetOption {
        scope: OptionScope::Server,
        name: "@k",
        value: Some("#(x)".into()),
    };
    assert_eq!(option.args().last().unwrap(), "#(x)");
}
