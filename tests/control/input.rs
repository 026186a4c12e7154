//! Arguments survive tmux's command parser (control line) and argv (fork)
//! byte for byte, and typed text and raw bytes reach the pane exactly.

use super::*;

const HOSTILE: &[&str] = &[
    "",
    " ",
    "a b",
    "'",
    "''",
    "\"",
    "\\",
    "a\\",
    "\\'",
    "'\\''",
    ";",
    "a;",
    "a\\;",
    "; b",
    "#",
    "# comment",
    "#{session_name}",
    "#[fg=red]",
    "~",
    "~root",
    "$HOME",
    "${HOME}",
    "{",
    "}",
    "{a b}",
    "\n",
    "a\nb",
    "\r\n",
    "\t",
    "\x01\x1b[31m\x7f",
    "é✓😀",
    "-x",
    "--",
    "%if 1",
    "%hidden X=1",
    "\\u0041",
    "\\n",
    "\\033",
    "\\777",
    "a=b",
    "X=1 y",
];

#[tokio::test]
async fn hostile_arguments_round_trip_through_both_paths() {
    let server = TmuxServer::new();
    server.new_shell("q");
    let tmux = tmux_for(&server);
    let mut client = attach(&tmux, "q").await;
    let long: String = HOSTILE.concat().repeat(200);
    let values = HOSTILE.iter().map(|s| s.to_string()).chain([long]);
    for value in values {
        let scope = || OptionScope::Session(Target::Session("q".into()));
        let set = SetOption {
            scope: scope(),
            name: "@x",
            value: Some(value.clone()),
        };
        let show = ShowOptions {
            scope: scope(),
            name: "@x",
        };
        client
            .run(&set)
            .await
            .unwrap_or_else(|e| panic!("set {value:?}: {e}"));
        assert_eq!(
            client.run(&show).await.unwrap().as_deref(),
            Some(value.as_str()),
            "control"
        );
        assert_eq!(
            tmux.run_cmd(&show).await.unwrap().as_deref(),
            Some(value.as_str()),
            "fork"
        );
        if value.len() < 4000 {
            // Set by a forked tmux (argv is limited to ~16 KB), read back
            // over control mode: a trailing `;` must survive argv.
            let dash = SetOption {
                value: Some("-".into()),
                ..set.clone()
            };
            client.run(&dash).await.unwrap();
            tmux.run_cmd(&set)
                .await
                .unwrap_or_else(|e| panic!("fork set {value:?}: {e}"));
            assert_eq!(
                client.run(&show).await.unwrap().as_deref(),
                Some(value.as_str()),
                "fork set"
            );
        }
    }
    let unset = SetOption {
        scope: OptionScope::Session(Target::Session("q".into())),
        name: "@x",
        value: None,
    };
    client.run(&unset).await.unwrap();
    let show = ShowOptions {
        scope: OptionScope::Session(Target::Session("q".into())),
        name: "@x",
    };
    assert_eq!(client.run(&show).await.unwrap(), None);
    client.close().await;
}

#[tokio::test]
async fn typed_text_and_raw_bytes_reach_the_pane_exactly() {
    let server = TmuxServer::new();
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("typed");
    raw_sink(&server, "sink", &file);
    let tmux = tmux_for(&server);
    let pane = pane_of(&server, "sink");
    let mut client = attach(&tmux, "sink").await;
    let target = Target::Pane(pane);
    let mut expected = Vec::new();
    let text: String = HOSTILE.concat();
    for chunk in SendLiteral::chunked(&target, &text, 7) {
        client.run(&chunk).await.unwrap();
    }
    expected.extend_from_slice(text.as_bytes());
    // A megabyte in one command: control mode has no line limit (a forked
    // tmux refuses argv over ~16 KB), but chunks keep tmux responsive.
    let big = "0123456789abcdef".repeat(65_536);
    client
        .run(&SendLiteral {
            target: target.clone(),
            text: big.clone(),
        })
        .await
        .unwrap();
    expected.extend_from_slice(big.as_bytes());
    let bytes: Vec<u8> = (0..=255u8).collect();
    for chunk in SendHex::chunked(&target, &bytes, 100) {
        client.run(&chunk).await.unwrap();
    }
    expected.extend_from_slice(&bytes);
    let got = wait_for("every byte in the sink", || {
        let got = std::fs::read(&file).unwrap_or_default();
        (got.len() >= expected.len()).then_some(got)
    });
    assert_eq!(got.len(), expected.len());
    let first_diff = got.iter().zip(&expected).position(|(a, b)| a != b);
    assert_eq!(
        first_diff,
        None,
        "got {:?}",
        String::from_utf8_lossy(&got[..got.len().min(600)])
    );
    client.close().await;
}
