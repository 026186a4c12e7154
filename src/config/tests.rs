use super::*;

const EXAMPLE: &str = include_str!("../../config.example.toml");

fn env(pairs: &[(&str, &str)]) -> Env {
    let pairs = pairs.iter().map(|(k, v)| (k.to_string(), v.to_string()));
    pairs.collect()
}

fn home() -> Env {
    env(&[("HOME", "/home/u")])
}

fn file(text: &str) -> FileConfig {
    parse_file(text, Path::new("test.toml")).unwrap()
}

fn flag_bind(bind: &str) -> Flags {
    let bind = Some(bind.to_owned());
    Flags {
        bind,
        ..Flags::default()
    }
}

/// Sources that are not `Default`, as `key=Source` strings.
fn set_keys(sources: &Sources) -> Vec<String> {
    let set = sources.iter().filter(|(_, s)| **s != Source::Default);
    set.map(|(k, s)| format!("{k}={s:?}")).collect()
}

fn invalid_parts<T: fmt::Debug>(result: Result<T, ConfigError>) -> (String, String) {
    match result {
        Err(ConfigError::Invalid { key, reason }) => (key, reason),
        other => panic!("expected Invalid, got {other:?}"),
    }
}

#[test]
fn data_dir_default_follows_xdg_then_home() {
    #[rustfmt::skip]
    let cases: [(&[(&str, &str)], &str); 5] = [
        (&[], ""),
        (&[("HOME", "/home/u")], "/home/u/.local/share/tmuxd"),
        (&[("HOME", "/home/u"), ("XDG_DATA_HOME", "/xdg")], "/xdg/tmuxd"),
        (&[("HOME", "/home/u"), ("XDG_DATA_HOME", "rel")], "/home/u/.local/share/tmuxd"),
        (&[("HOME", "/home/u"), ("XDG_DATA_HOME", "")], "/home/u/.local/share/tmuxd"),
    ];
    for (pairs, expected) in cases {
        let data_dir = Config::defaults(&env(pairs)).data_dir;
        assert_eq!(data_dir, Path::new(expected), "{pairs:?}");
    }
}

#[test]
fn defaults_are_valid_and_match_the_contract() {
    let config = Config::defaults(&home());
    validate(&config).unwrap();
    assert_eq!(config.bind, "127.0.0.1:7420".parse().unwrap());
    assert_eq!((config.log.as_str(), config.max_sessions), ("info", 256));
    assert_eq!(config.discovery.include, ["*"]);
    assert_eq!(config.tmux.bin, Path::new("tmux"));
    assert_eq!(config.auth, AuthConfig::default());
}

#[test]
fn file_values_override_defaults() {
    let text = r#"
        bind = "[::1]:0"
        max_sessions = 12
        [tmux]
        socket_name = "tmuxd-test"
        [discovery]
        exclude = ["scratch-*"]
        [state]
        idle_after_ms = 50
    "#;
    let (config, sources) = resolve(Some(file(text)), &home(), &Flags::default()).unwrap();
    assert_eq!(config.bind, "[::1]:0".parse().unwrap());
    assert_eq!(config.max_sessions, 12);
    assert_eq!(config.tmux.socket_name.as_deref(), Some("tmuxd-test"));
    assert_eq!(config.discovery.exclude, ["scratch-*"]);
    assert_eq!(config.state.idle_after_ms, 50);
    let expected = [
        "bind=File",
        "discovery.exclude=File",
        "max_sessions=File",
        "state.idle_after_ms=File",
        "tmux.socket_name=File",
    ];
    assert_eq!(set_keys(&sources), expected);
}

#[test]
fn parse_errors_name_the_key() {
    #[rustfmt::skip]
    let cases = [
        ("colour = 1", "colour"),
        ("[tmux]\nsocket = \"x\"", "socket"),
        ("[tmuxx]", "tmuxx"),
        ("max_sessions = \"many\"", "max_sessions"),
        ("[session]\nreplay_bytes = -1", "replay_bytes"),
        ("[discovery]\ninclude = \"*\"", "include"),
        ("bind = \"nonsense\"", "nonsense"),
        ("log = ", "log"),
    ];
    for (text, needle) in cases {
        match parse_file(text, Path::new("test.toml")) {
            Err(ConfigError::Parse { path, message }) => {
                assert_eq!(path, Path::new("test.toml"));
                assert!(message.contains(needle), "{text:?}: {message}");
            }
            other => panic!("{text:?}: expected Parse, got {other:?}"),
        }
    }
}

#[test]
fn later_layers_win() {
    let in_file = "bind = \"127.0.0.2:1\"";
    let no_flags = Flags::default();
    #[rustfmt::skip]
    let cases = [
        (in_file, env(&[]), &no_flags, "127.0.0.2:1", Source::File),
        (in_file, env(&[("TMUXD_BIND", "127.0.0.3:2")]), &no_flags, "127.0.0.3:2", Source::Env),
        (in_file, env(&[("TMUXD_BIND", "127.0.0.3:2")]), &flag_bind("127.0.0.4:3"), "127.0.0.4:3", Source::Flag),
        (in_file, env(&[("TMUXD_BIND", "")]), &no_flags, "127.0.0.2:1", Source::File),
        ("", env(&[]), &flag_bind("localhost:9"), "127.0.0.1:9", Source::Flag),
        ("", env(&[]), &no_flags, "127.0.0.1:7420", Source::Default),
    ];
    for (text, env, flags, bind, source) in cases {
        let (config, sources) = resolve(Some(file(text)), &env, flags).unwrap();
        assert_eq!(
            config.bind,
            bind.parse().unwrap(),
            "{text} {env:?} {flags:?}"
        );
        assert_eq!(sources["bind"], source, "{text} {env:?} {flags:?}");
    }
}

#[test]
fn mixed_layers_record_each_source() {
    let text = "log = \"debug\"\nmax_sessions = 10\ndata_dir = \"/file\"";
    let env = env(&[
        ("HOME", "/h"),
        ("TMUXD_MAX_SESSIONS", " 20 "),
        ("TMUXD_DATA_DIR", "/env"),
    ]);
    let flags = Flags {
        data_dir: Some("/flag".into()),
        ..Flags::default()
    };
    let (config, sources) = resolve(Some(file(text)), &env, &flags).unwrap();
    assert_eq!((config.log.as_str(), config.max_sessions), ("debug", 20));
    assert_eq!(config.data_dir, Path::new("/flag"));
    assert_eq!(sources.len(), KEYS.len());
    let expected = ["data_dir=Flag", "log=File", "max_sessions=Env"];
    assert_eq!(set_keys(&sources), expected);
}

#[test]
fn every_env_var_sets_its_key() {
    #[rustfmt::skip]
    let cases = [
        ("TMUXD_BIND", "127.0.0.1:1", "bind"),
        ("TMUXD_DATA_DIR", "/d", "data_dir"),
        ("TMUXD_LOG", "debug", "log"),
        ("TMUXD_MAX_SESSIONS", "7", "max_sessions"),
        ("TMUXD_TOKEN", "rw", "auth.token"),
        ("TMUXD_READ_TOKEN", "ro", "auth.read_token"),
        ("TMUXD_TMUX_BIN", "/usr/bin/tmux", "tmux.bin"),
        ("TMUXD_TMUX_SOCKET_NAME", "t", "tmux.socket_name"),
        ("TMUXD_TMUX_SOCKET_PATH", "/tmp/t.sock", "tmux.socket_path"),
    ];
    assert_eq!(cases.len(), ENV_VARS.len());
    for (var, value, key) in cases {
        assert!(ENV_VARS.contains(&(key, var)), "{var}");
        let (_, sources) = resolve(None, &env(&[(var, value)]), &Flags::default()).unwrap();
        assert_eq!(set_keys(&sources), [format!("{key}=Env")]);
    }
}

#[test]
fn env_and_flag_values_that_do_not_parse_name_key_and_origin() {
    let no_flags = Flags::default();
    #[rustfmt::skip]
    let cases = [
        (env(&[("TMUXD_MAX_SESSIONS", "abc")]), &no_flags, "max_sessions", "TMUXD_MAX_SESSIONS"),
        (env(&[("TMUXD_MAX_SESSIONS", "-1")]), &no_flags, "max_sessions", "TMUXD_MAX_SESSIONS"),
        (env(&[("TMUXD_BIND", "nonsense")]), &no_flags, "bind", "TMUXD_BIND"),
        (env(&[("TMUXD_BIND", "127.0.0.1")]), &no_flags, "bind", "TMUXD_BIND"),
        (env(&[]), &flag_bind("nonsense"), "bind", "--bind"),
    ];
    for (env, flags, key, needle) in cases {
        let (got_key, reason) = invalid_parts(resolve(None, &env, flags));
        assert_eq!(got_key, key);
        assert!(reason.contains(needle), "{reason}");
    }
}

#[test]
fn bind_forms() {
    #[rustfmt::skip]
    let cases = [
        ("127.0.0.1:7420", Some("127.0.0.1:7420")),
        ("[::1]:0", Some("[::1]:0")),
        ("localhost:8080", Some("127.0.0.1:8080")),
        ("0.0.0.0:80", Some("0.0.0.0:80")),
        ("localhost", None),
        ("localhost:99999", None),
        ("::1:80", None),
        ("example.com:80", None),
        ("", None),
    ];
    for (text, expected) in cases {
        let expected = expected.map(|addr| addr.parse::<SocketAddr>().unwrap());
        assert_eq!(parse_bind(text).ok(), expected, "{text:?}");
    }
}

/// Each case is a config file; `None` means it must validate.
#[test]
fn validate_checks_ranges_and_combinations() {
    #[rustfmt::skip]
    let cases: &[(&str, Option<(&str, &str)>)] = &[
        ("", None),
        ("max_sessions = 0", Some(("max_sessions", "must be between 1 and 4096, got 0"))),
        ("max_sessions = 1", None),
        ("max_sessions = 4096", None),
        ("max_sessions = 4097", Some(("max_sessions", "got 4097"))),
        ("checkpoint_interval_s = 0", Some(("checkpoint_interval_s", "between 1 and 3600"))),
        ("checkpoint_interval_s = 3600", None),
        ("checkpoint_interval_s = 3601", Some(("checkpoint_interval_s", "got 3601"))),
        ("[tmux]\ncommand_timeout_ms = 99", Some(("tmux.command_timeout_ms", "got 99"))),
        ("[tmux]\ncommand_timeout_ms = 100", None),
        ("[tmux]\ncommand_timeout_ms = 60000", None),
        ("[tmux]\ncommand_timeout_ms = 60001", Some(("tmux.command_timeout_ms", "got 60001"))),
        ("[tmux]\nscreen_checks_per_s = 0", None),
        ("[tmux]\nscreen_checks_per_s = 1001", Some(("tmux.screen_checks_per_s", "got 1001"))),
        ("[tmux]\nlive_clients = 0", None),
        ("[tmux]\nlive_clients = 4096", None),
        ("[tmux]\nlive_clients = 4097", Some(("tmux.live_clients", "got 4097"))),
        ("[discovery]\ninterval_ms = 99", Some(("discovery.interval_ms", "got 99"))),
        ("[discovery]\ninterval_ms = 3600001", Some(("discovery.interval_ms", "got 3600001"))),
        ("[discovery]\nmin_age_ms = 0", None),
        ("[discovery]\nmin_age_ms = 60001", Some(("discovery.min_age_ms", "got 60001"))),
        ("[reaper]\ninterval_ms = 9", Some(("reaper.interval_ms", "got 9"))),
        ("[reaper]\ninterval_ms = 10001", Some(("reaper.interval_ms", "got 10001"))),
        ("[session]\nreplay_bytes = 4095", Some(("session.replay_bytes", "got 4095"))),
        ("[session]\nreplay_bytes = 67108864", None),
        ("[session]\nsubscriber_queue_bytes = 65535", Some(("session.subscriber_queue_bytes", "got 65535"))),
        ("[session]\nsubscriber_queue_bytes = 67108865", Some(("session.subscriber_queue_bytes", "got 67108865"))),
        ("[session]\nmax_scrollback_lines = 0", Some(("session.max_scrollback_lines", "got 0"))),
        ("[http]\nmax_body_bytes = 1023", Some(("http.max_body_bytes", "got 1023"))),
        ("[http]\nheader_read_timeout_ms = 99", Some(("http.header_read_timeout_ms", "got 99"))),
        ("[http]\nidle_timeout_ms = 3600001", Some(("http.idle_timeout_ms", "got 3600001"))),
        ("[http]\nmax_connections = 256", Some(("http.max_connections", "more than http.max_streams (256)"))),
        ("[http]\nmax_connections = 4\nmax_streams = 3", None),
        ("[state]\nattention_after_s = 86401", Some(("state.attention_after_s", "got 86401"))),
        ("[state]\nidle_after_ms = 49", Some(("state.idle_after_ms", "got 49"))),
        ("[state]\nprobe_interval_ms = 99", Some(("state.probe_interval_ms", "got 99"))),
        ("[[state.rules]]\nregex = 'a('\nstate = \"waiting\"\nreason = \"x\"", Some(("state.rules[0]", "regex does not compile"))),
        ("[[state.rules]]\nregex = 'a'\nrows = 0\nstate = \"waiting\"\nreason = \"x\"", Some(("state.rules[0]", "rows must be between 1 and 500"))),
        ("[[state.rules]]\nregex = 'a'\nstate = \"waiting\"\nreason = \"Bad Reason\"", Some(("state.rules[0]", "must be 1 to 64 of a-z"))),
        ("[[state.rules]]\nregex = 'a'\nstate = \"waiting\"\nreason = \"press_any_key\"", None),
        ("[state]\ndisabled_presets = [\"claude_prompt\"]", Some(("state.disabled_presets", "\"claude_prompt\" is no preset"))),
        ("[state]\ndisabled_presets = [\"all\", \"codex\", \"aider_working\"]", None),
        ("[session]\nended_max = 10001", Some(("session.ended_max", "got 10001"))),
        ("[session]\nended_scrollback_lines = 100001", Some(("session.ended_scrollback_lines", "got 100001"))),
        ("[session]\nended_scrollback_lines = 0", None),
        ("[notify]\nwebhook_url = \"https://example.com/x\"", Some(("notify.webhook_url", "must be an http:// URL"))),
        ("[notify]\nwebhook_url = \"not a url\"", Some(("notify.webhook_url", "is not a URL"))),
        ("[notify]\nwebhook_url = \"http://127.0.0.1:9/x\"", None),
        ("[notify]\ncommand = []", Some(("notify.command", "must name a program"))),
        ("[notify]\nmax_per_minute = 0", Some(("notify.max_per_minute", "got 0"))),
        ("[notify]\nsecret = \"short\"", Some(("notify.secret", "at least 24 characters, got 5"))),
        ("[notify]\nsecret = \"abcdefghijklmnopqrstuvwx\"", None),
        ("[notify]\npush_contact = \"me@example.net\"", Some(("notify.push_contact", "must be a mailto: address"))),
        ("[notify]\npush_contact = \"http://example.net\"", Some(("notify.push_contact", "or an https:// URL"))),
        ("[notify]\npush_contact = \"https://example.net/about\"", None),
        ("[notify]\npage_url = \"box:7420\"", Some(("notify.page_url", "must be an http:// or https:// URL"))),
        ("[notify]\nntfy = { url = \"ftp://ntfy.sh\", topic = \"t\" }", Some(("notify.ntfy", "must be an http:// or https:// URL"))),
        ("[notify]\nntfy = { url = \"https://ntfy.sh\", topic = \"a/b\" }", Some(("notify.ntfy", "topic \"a/b\" must be"))),
        ("[notify]\nntfy = { url = \"https://ntfy.sh\", topic = \"t\", token = \"\" }", Some(("notify.ntfy", "token must be"))),
        ("[notify]\nntfy = { url = \"https://ntfy.sh\", topic = \"my-topic_1\", token = \"tk_abc\" }", None),
        ("log = \" \"", Some(("log", "must not be empty"))),
        ("log = \"foo=bar=baz\"", Some(("log", "`foo=bar=baz` is not a log filter"))),
        ("log = \"tmuxd=loud\"", Some(("log", "not a log filter"))),
        ("log = \"tmuxd=debug,info\"", None),
        ("log_file = \"\"", Some(("log_file", "must not be empty"))),
        ("log_file = \"/var/log/tmuxd.log\"", None),
        ("data_dir = \"\"", Some(("data_dir", "HOME"))),
        ("[tmux]\nbin = \"\"", Some(("tmux.bin", "must not be empty"))),
        ("[tmux]\nsocket_name = \"\"", Some(("tmux.socket_name", "must not be empty"))),
        ("[tmux]\nsocket_name = \"a/b\"", Some(("tmux.socket_name", "plain name"))),
        ("[tmux]\nconfig_file = \"\"", Some(("tmux.config_file", "must not be empty"))),
        ("[tmux]\nsocket_name = \"a\"\nsocket_path = \"/tmp/a\"",
            Some(("tmux.socket_path", "set either tmux.socket_name or tmux.socket_path, not both"))),
        ("[auth]\ntoken = \"\"", Some(("auth.token", "must not be empty"))),
        ("[auth]\ntoken = \" tok\"", Some(("auth.token", "whitespace"))),
        ("[auth]\ntoken = \"abcdefghijklmnopqrstuvwx\"\nread_token = \"abcdefghijklmnopqrstuvwx\"", Some(("auth.read_token", "must differ from auth.token"))),
        ("[auth]\nread_token = \"ABCDEFGHIJKLMNOPQRSTUVWX\"", Some(("auth.read_token", "requires auth.token"))),
        ("[auth]\ntoken = \"zq\"", Some(("auth.token", "at least 24 characters, got 2"))),
        ("[auth]\ntoken = \"abcdefghijklmnopqrstuvwx\"\nread_token = \"short\"", Some(("auth.read_token", "at least 24"))),
        ("[auth]\ntoken = \"abcdefghijklmnopqrstuvw\"", Some(("auth.token", "got 23"))),
        ("[auth]\ntoken = \"abcdefghijklmnopqrstuvwx\"", None),
        ("[auth]\ninsecure_no_auth = true", None),
        ("[auth]\ninsecure_no_auth = true\ntoken = \"abcdefghijklmnopqrstuvwx\"", Some(("auth.insecure_no_auth", "auth.token"))),
        ("bind = \"0.0.0.0:7420\"\n[auth]\ninsecure_no_auth = true", Some(("auth.insecure_no_auth", "non-loopback"))),
        ("[http]\nallowed_hosts = [\"gpu1.tailnet.ts.net\", \"box\"]", None),
        ("[http]\nallowed_hosts = [\"evil.com:80\"]", Some(("http.allowed_hosts", "not a host name"))),
        ("bind = \"0.0.0.0:7420\"", Some(("bind", "refusing a non-loopback bind without auth.token"))),
        ("bind = \"192.168.1.5:80\"", Some(("bind", "non-loopback"))),
        ("bind = \"0.0.0.0:7420\"\n[auth]\ntoken = \"abcdefghijklmnopqrstuvwx\"", None),
        ("bind = \"[::1]:0\"", None),
        ("bind = \"[::ffff:127.0.0.1]:1\"", None),
        ("[discovery]\ninclude = [\"[\"]", Some(("discovery.include", "`[` is not a valid glob"))),
        ("[discovery]\nexclude = [\"a[b\"]", Some(("discovery.exclude", "not a valid glob"))),
        ("[discovery]\ninclude = [\"build-*\", \"?x\"]\nexclude = []", None),
    ];
    for (text, expected) in cases {
        let (config, _) = resolve(Some(file(text)), &home(), &Flags::default()).unwrap();
        match expected {
            None => assert!(validate(&config).is_ok(), "{text}: {:?}", validate(&config)),
            Some((key, needle)) => {
                let (got_key, reason) = invalid_parts(validate(&config));
                assert_eq!(got_key, *key, "{text}");
                assert!(reason.contains(needle), "{text}: {reason}");
            }
        }
    }
}

#[test]
fn home_is_expanded_in_file_paths_only() {
    let text = "data_dir = \"~/d\"\n[tmux]\nbin = \"~/bin/tmux\"\nconfig_file = \"~user/x\"";
    let env = env(&[("HOME", "/home/u"), ("TMUXD_TMUX_SOCKET_PATH", "~/sock")]);
    let (config, _) = resolve(Some(file(text)), &env, &Flags::default()).unwrap();
    assert_eq!(config.data_dir, Path::new("/home/u/d"));
    assert_eq!(config.tmux.bin, Path::new("/home/u/bin/tmux"));
    assert_eq!(config.tmux.config_file.unwrap(), Path::new("~user/x"));
    assert_eq!(config.tmux.socket_path.unwrap(), Path::new("~/sock"));
    let (key, reason) = invalid_parts(resolve(Some(file(text)), &Env::new(), &Flags::default()));
    assert_eq!(
        (key.as_str(), reason.as_str()),
        ("data_dir", "cannot expand `~`: HOME is not set")
    );
}

/// A peer's token file is found from the HOME tmuxd was given, not the
/// process's own: the daemon under test runs with a cleared environment.
#[test]
fn peer_token_files_expand_home_from_the_given_environment() {
    let text = "[[fleet.peers]]\nname = \"gpu1\"\nurl = \"http://127.0.0.1:7420\"\ntoken_file = \"~/gpu1.token\"\n";
    let (config, sources) = resolve(Some(file(text)), &home(), &Flags::default()).unwrap();
    let peer = &config.fleet.peers[0];
    assert_eq!(peer.name.as_str(), "gpu1");
    assert_eq!((peer.host.as_str(), peer.port), ("127.0.0.1", 7420));
    let want = Path::new("/home/u/gpu1.token").to_owned();
    assert_eq!(peer.token, crate::config::PeerToken::File(want));
    assert_eq!(sources["fleet.peers"], Source::File);
    let (key, reason) = invalid_parts(resolve(Some(file(text)), &Env::new(), &Flags::default()));
    assert_eq!(
        (key.as_str(), reason.as_str()),
        (
            "fleet.peers[0].token_file",
            "cannot expand `~`: HOME is not set"
        )
    );
}

#[test]
fn file_choice_prefers_flag_then_env_then_home() {
    let explicit = |path: &str| {
        Some(FileChoice {
            path: path.into(),
            required: true,
        })
    };
    let optional = |path: &str| {
        Some(FileChoice {
            path: path.into(),
            required: false,
        })
    };
    let with_flag = Flags {
        config: Some("/flag.toml".into()),
        ..Flags::default()
    };
    let no_flags = Flags::default();
    #[rustfmt::skip]
    let cases = [
        (&with_flag, env(&[("TMUXD_CONFIG", "/env.toml"), ("HOME", "/h")]), explicit("/flag.toml")),
        (&no_flags, env(&[("TMUXD_CONFIG", "/env.toml"), ("HOME", "/h")]), explicit("/env.toml")),
        (&no_flags, env(&[("TMUXD_CONFIG", ""), ("HOME", "/h")]), optional("/h/.config/tmuxd/config.toml")),
        (&no_flags, env(&[]), None),
    ];
    for (flags, env, expected) in cases {
        assert_eq!(choose_file(flags, &env), expected, "{flags:?} {env:?}");
    }
}

#[test]
fn load_reads_files_and_reports_problems() {
    let dir = tempfile::tempdir().unwrap();
    let home = env(&[("HOME", dir.path().to_str().unwrap())]);
    let no_flags = Flags::default();
    let default_file = dir.path().join(".config/tmuxd/config.toml");

    assert_eq!(
        load(&no_flags, &home).unwrap().file,
        None,
        "a missing default file is fine"
    );

    std::fs::create_dir_all(default_file.parent().unwrap()).unwrap();
    std::fs::write(&default_file, "log = \"debug\"\n").unwrap();
    let loaded = load(&no_flags, &home).unwrap();
    assert_eq!(loaded.file.as_deref(), Some(default_file.as_path()));
    assert_eq!(
        (loaded.config.log.as_str(), loaded.sources["log"]),
        ("debug", Source::File)
    );

    let missing = dir.path().join("missing.toml");
    let by_flag = Flags {
        config: Some(missing.clone()),
        ..Flags::default()
    };
    let mut by_env = home.clone();
    by_env.insert("TMUXD_CONFIG".into(), missing.to_str().unwrap().into());
    for result in [load(&by_flag, &home), load(&no_flags, &by_env)] {
        assert!(matches!(result, Err(ConfigError::Read { path, .. }) if path == missing));
    }

    std::fs::write(&default_file, "max_sessions = 0\n").unwrap();
    let (key, reason) = invalid_parts(load(&no_flags, &home));
    assert_eq!(key, "max_sessions");
    assert!(reason.ends_with(&format!("(from config file {})", default_file.display())));
    let mut bad_env = home.clone();
    bad_env.insert("TMUXD_MAX_SESSIONS".into(), "9999".into());
    let (_, reason) = invalid_parts(load(&no_flags, &bad_env));
    assert!(
        reason.ends_with("(from env TMUXD_MAX_SESSIONS)"),
        "{reason}"
    );

    std::fs::write(&default_file, "[auth]\ntokn = \"x\"\n").unwrap();
    let result = load(&no_flags, &home);
    assert!(matches!(result, Err(ConfigError::Parse { message, .. }) if message.contains("tokn")));
}

/// Issue 19: `notify.secret` never shows in `tmuxd config` nor in Debug.
#[test]
fn the_notify_secret_is_masked() {
    let layer = file("[notify]\nsecret = \"s3cret-s3cret-s3cret-s3cret\"\n");
    assert!(!format!("{layer:?}").contains("s3cret"));
    let (config, sources) = resolve(Some(layer), &home(), &Flags::default()).unwrap();
    assert_eq!(
        config.notify.secret.as_deref(),
        Some("s3cret-s3cret-s3cret-s3cret")
    );
    let loaded = Loaded {
        config,
        sources,
        file: None,
    };
    let text = loaded.render();
    assert!(!text.contains("s3cret"), "{text}");
    assert!(text.contains("notify.secret = \"****\""), "{text}");
    assert!(!format!("{loaded:?}").contains("s3cret"));
}

/// Issue 33: the ntfy token is masked like every other secret.
#[test]
fn the_ntfy_token_is_masked() {
    let layer = file(
        "[notify]\nntfy = { url = \"https://ntfy.sh\", topic = \"t\", token = \"tk_s3cret\" }\n",
    );
    assert!(!format!("{layer:?}").contains("s3cret"));
    let (config, sources) = resolve(Some(layer), &home(), &Flags::default()).unwrap();
    let loaded = Loaded {
        config,
        sources,
        file: None,
    };
    let text = loaded.render();
    assert!(!text.contains("s3cret"), "{text}");
    assert!(
        text.contains(
            "notify.ntfy = { url = \"https://ntfy.sh\", topic = \"t\", token = \"****\" }"
        ),
        "{text}"
    );
    assert!(!format!("{loaded:?}").contains("s3cret"));
}

#[test]
fn render_masks_tokens_and_names_sources() {
    let env = env(&[
        ("HOME", "/h"),
        ("TMUXD_TOKEN", "s3cret-rw-s3cret-rw-s3cret-rw"),
        ("TMUXD_READ_TOKEN", "s3cret-ro-s3cret-ro-s3cret-ro"),
    ]);
    let (config, sources) = resolve(None, &env, &flag_bind("0.0.0.0:1")).unwrap();
    let loaded = Loaded {
        config,
        sources,
        file: None,
    };
    let text = loaded.render();
    assert!(!text.contains("s3cret"), "{text}");
    assert!(!format!("{loaded:?}").contains("s3cret"));
    let layer = env_layer(&env).unwrap();
    assert!(!format!("{layer:?}").contains("s3cret"));
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 1 + KEYS.len());
    assert_eq!(lines[0], "# no config file");
    let line = |prefix: &str| *lines.iter().find(|l| l.starts_with(prefix)).unwrap();
    assert!(line("auth.token = \"****\" ").ends_with("  # env TMUXD_TOKEN"));
    assert!(line("auth.read_token = \"****\" ").ends_with("  # env TMUXD_READ_TOKEN"));
    assert!(line("bind = \"0.0.0.0:1\" ").ends_with("  # flag --bind"));
    assert!(line("# tmux.socket_name = (unset) ").ends_with("  # default"));
    assert!(line("discovery.include = [\"*\"] ").ends_with("  # default"));
    let rendered_keys = rendered_values(&loaded.config).map(|(key, _)| key);
    assert_eq!(rendered_keys, KEYS);
}

#[test]
fn rules_parse_with_their_defaults_and_render() {
    let layer = file(
        "[[state.rules]]\nregex = '(?i)press any key'\nstate = \"waiting\"\nreason = \"press_any_key\"\n",
    );
    let (config, _) = resolve(Some(layer), &home(), &Flags::default()).unwrap();
    let rule = &config.state.rules[0];
    assert_eq!((rule.rows, rule.state), (5, RuleState::Waiting));
    assert!(validate(&config).is_ok());
    assert_eq!(
        sections::render_rules(&config.state.rules),
        r#"[{ regex = "(?i)press any key", rows = 5, state = "waiting", reason = "press_any_key" }]"#
    );
    let unknown_state = "[[state.rules]]\nregex = 'a'\nstate = \"asleep\"\nreason = \"x\"\n";
    assert!(parse_file(unknown_state, Path::new("t.toml")).is_err());
}

#[test]
fn a_rule_may_name_its_agent() {
    let layer = file(
        "[[state.rules]]\nregex = 'Compacting'\nstate = \"working\"\nreason = \"compacting\"\nagent = \"claude\"\n",
    );
    let (config, _) = resolve(Some(layer), &home(), &Flags::default()).unwrap();
    assert_eq!(
        config.state.rules[0].agent,
        Some(crate::wire::Agent::Claude)
    );
    assert!(sections::render_rules(&config.state.rules).ends_with(r#"agent = "claude" }]"#));
    let unknown =
        "[[state.rules]]\nregex = 'a'\nstate = \"idle\"\nreason = \"x\"\nagent = \"cursor\"\n";
    assert!(parse_file(unknown, Path::new("t.toml")).is_err());
}

/// Issue 32, item 2: `notify.on` names the kinds notified, and
/// `tmuxd config` shows them; an unknown kind is refused.
#[test]
fn notify_on_names_what_is_notified() {
    use sections::NotifyOn;
    let layer = file("[notify]\non = [\"attention\", \"failed_exit\"]\n");
    let (config, sources) = resolve(Some(layer), &home(), &Flags::default()).unwrap();
    let loaded = Loaded {
        config,
        sources,
        file: None,
    };
    assert_eq!(
        loaded.config.notify.on,
        [NotifyOn::Attention, NotifyOn::FailedExit]
    );
    assert!(
        loaded
            .render()
            .contains(r#"notify.on = ["attention", "failed_exit"]"#),
        "{}",
        loaded.render()
    );
    let unknown = "[notify]\non = [\"bell\"]\n";
    assert!(parse_file(unknown, Path::new("t.toml")).is_err());
}

#[test]
fn example_file_parses_to_nothing_set() {
    let parsed = parse_file(EXAMPLE, Path::new("config.example.toml")).unwrap();
    assert_eq!(parsed, FileConfig::default());
}

/// Uncommenting every `# key = value` line must set every key, to its default.
#[test]
fn example_file_lists_every_key_with_its_default() {
    let is_key = |key: &str| key.chars().all(|c| c.is_ascii_lowercase() || c == '_');
    let uncomment = |line: &'static str| match line.strip_prefix("# ") {
        Some(rest) if rest.split_once(" = ").is_some_and(|(key, _)| is_key(key)) => rest,
        _ => line,
    };
    let text: Vec<&str> = EXAMPLE.lines().map(uncomment).collect();
    let layer = file(&text.join("\n"));
    let (mut config, sources) = resolve(Some(layer), &home(), &Flags::default()).unwrap();
    assert!(sources.values().all(|s| *s == Source::File), "{sources:?}");
    config.auth = AuthConfig::default();
    config.tmux.socket_name = None;
    config.tmux.socket_path = None;
    config.tmux.config_file = None;
    config.log_file = None;
    config.notify.webhook_url = None;
    config.notify.command = None;
    config.notify.secret = None;
    config.notify.page_url = None;
    config.notify.ntfy = None;
    assert_eq!(config, Config::defaults(&home()));
}
