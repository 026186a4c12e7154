//! Hiding credentials in what tmuxd prints about its settings (`tmuxd
//! config`, log lines naming the webhook): the userinfo and secret-like
//! query parameters of any URL, secret-like arguments of the notify
//! command, and the value of any key named like a secret.
//!
//! Masking errs on the side of hiding: a harmless value that looks like a
//! secret is masked too, since `config` output is pasted into bug reports.

use super::MASK;

/// Words that mark a name (a key, a query parameter, a flag, a header) as
/// naming a credential. Matched as substrings of the lowercased name.
const SECRET_PARTS: [&str; 12] = [
    "token",
    "secret",
    "passw",
    "pwd",
    "auth",
    "credential",
    "apikey",
    "api_key",
    "api-key",
    "cookie",
    "signature",
    "private",
];

/// Names that are credentials only as whole words (as substrings they are
/// too common: `monkey`, `signal`, `compass`).
const SECRET_WORDS: [&str; 5] = ["key", "sig", "pass", "pw", "session"];

/// Command-line flags whose next argument is a credential although their
/// name does not say so (curl's `-u user:password`).
const CREDENTIAL_FLAGS: [&str; 4] = ["-u", "--user", "-U", "--proxy-user"];

/// Whether a setting (`auth.token`, `auth.read_token`) holds a credential,
/// judged by the last `_`-separated word of its last segment, so that
/// `auth.token_file` (a path) or `auth.min_token_len` (a number) show.
pub fn is_secret_key(key: &str) -> bool {
    let segment = key.rsplit('.').next().unwrap_or(key);
    let word = segment.rsplit('_').next().unwrap_or(segment);
    matches!(
        word.to_ascii_lowercase().as_str(),
        "token" | "password" | "passwd" | "secret" | "key" | "credential" | "credentials"
    )
}

/// Whether a name (query parameter, flag, header, variable) looks like it
/// names a credential.
fn looks_secret(name: &str) -> bool {
    let name = name.to_ascii_lowercase();
    SECRET_PARTS.iter().any(|part| name.contains(part))
        || name
            .split(|c: char| !c.is_ascii_alphanumeric())
            .any(|word| SECRET_WORDS.contains(&word))
}

/// `text` with every URL in it (`scheme://...`) shown without its userinfo
/// (`http://****@host/`) and with the values of secret-like query
/// parameters masked (`?token=****`). Everything else is left as written.
pub fn mask_urls(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find("://") {
        let (before, after) = rest.split_at(at + 3);
        out.push_str(before);
        let end = after
            .find(|c: char| c.is_whitespace() || c == '"' || c == '\'')
            .unwrap_or(after.len());
        let (url, tail) = after.split_at(end);
        out.push_str(&mask_url_body(url));
        rest = tail;
    }
    out.push_str(rest);
    out
}

/// What follows `scheme://` up to the end of the URL.
fn mask_url_body(url: &str) -> String {
    let authority_end = url.find(['/', '?', '#']).unwrap_or(url.len());
    let (authority, path) = url.split_at(authority_end);
    let mut out = match authority.rfind('@') {
        Some(at) => format!("{MASK}{}", &authority[at..]),
        None => authority.to_owned(),
    };
    let Some(query_start) = path.find('?') else {
        out.push_str(path);
        return out;
    };
    let (before_query, query) = path.split_at(query_start + 1);
    out.push_str(before_query);
    let query_end = query.find('#').unwrap_or(query.len());
    let (query, fragment) = query.split_at(query_end);
    let pairs: Vec<String> = query
        .split('&')
        .map(|pair| match pair.split_once('=') {
            Some((name, _)) if looks_secret(name) => format!("{name}={MASK}"),
            _ => pair.to_owned(),
        })
        .collect();
    out.push_str(&pairs.join("&"));
    out.push_str(fragment);
    out
}

/// The notify command as `config` shows it: URLs masked as `mask_urls`
/// does, and the credential in `--token=x`, `--token x`, `-u user:pw`,
/// `Authorization: Bearer x` and `API_KEY=x` replaced by the mask.
pub fn mask_command(argv: &[String]) -> Vec<String> {
    let mut masked = Vec::with_capacity(argv.len());
    let mut next_is_secret = false;
    for arg in argv {
        if std::mem::take(&mut next_is_secret) {
            masked.push(MASK.to_owned());
            continue;
        }
        if is_flag(arg) && !arg.contains('=') {
            next_is_secret = looks_secret(arg) || CREDENTIAL_FLAGS.contains(&arg.as_str());
            masked.push(arg.clone());
            continue;
        }
        masked.push(mask_assignment(arg).unwrap_or_else(|| mask_urls(arg)));
    }
    masked
}

fn is_flag(arg: &str) -> bool {
    arg.starts_with('-') && arg.len() > 1
}

/// `--token=x`, `TOKEN=x` or `Authorization: x` with a secret-like name,
/// its value masked; `None` when `arg` is none of those.
fn mask_assignment(arg: &str) -> Option<String> {
    let at = arg.find(['=', ':'])?;
    let name = &arg[..at];
    // A URL's `scheme:` is not a header name, nor is a word with spaces.
    let is_name = name
        .trim_start_matches('-')
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_' || c == '.');
    if name.is_empty() || !is_name || !looks_secret(name) {
        return None;
    }
    Some(match arg.as_bytes()[at] {
        b'=' => format!("{name}={MASK}"),
        _ => format!("{name}: {MASK}"),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secret_keys_are_known_by_their_last_word() {
        for (key, secret) in [
            ("auth.token", true),
            ("auth.read_token", true),
            ("fleet.peers.password", true),
            ("auth.token_file", false),
            ("auth.min_token_len", false),
            ("notify.webhook_url", false),
            ("http.max_body_bytes", false),
            ("data_dir", false),
        ] {
            assert_eq!(is_secret_key(key), secret, "{key}");
        }
    }

    #[test]
    fn urls_lose_their_userinfo_and_secret_query_values() {
        for (text, shown) in [
            (
                "http://user:hunter2@relay.local:8080/hook",
                "http://****@relay.local:8080/hook",
            ),
            ("http://tok3n@h/", "http://****@h/"),
            ("http://h:1/hook", "http://h:1/hook"),
            (
                "http://h/hook?channel=ops&token=abc&Api-Key=k#top",
                "http://h/hook?channel=ops&token=****&Api-Key=****#top",
            ),
            ("http://h/a@b", "http://h/a@b"),
            (
                "to http://a:b@x/ and https://c@y?sig=1 done",
                "to http://****@x/ and https://****@y?sig=**** done",
            ),
            ("no url here", "no url here"),
            ("\"http://u:p@h/\"", "\"http://****@h/\""),
        ] {
            assert_eq!(mask_urls(text), shown, "{text}");
        }
    }

    #[test]
    fn a_webhook_url_that_does_not_parse_is_named_without_its_credentials() {
        let notify = super::super::NotifyConfig {
            webhook_url: Some("http://me:hunter2@exa mple/".into()),
            ..Default::default()
        };
        let error = super::super::sections::check_notify(&notify).unwrap_err();
        let error = error.to_string();
        assert!(error.contains("http://****@exa mple/"), "{error}");
        assert!(!error.contains("hunter2"), "{error}");
    }

    #[test]
    fn command_arguments_that_carry_credentials_are_masked() {
        let argv = |args: &[&str]| args.iter().map(|a| a.to_string()).collect::<Vec<_>>();
        for (command, shown) in [
            (
                argv(&["curl", "-u", "me:pw", "http://h/"]),
                argv(&["curl", "-u", "****", "http://h/"]),
            ),
            (
                argv(&["notify", "--token", "abc", "--channel", "ops"]),
                argv(&["notify", "--token", "****", "--channel", "ops"]),
            ),
            (
                argv(&["notify", "--api-key=abc", "--level=warn"]),
                argv(&["notify", "--api-key=****", "--level=warn"]),
            ),
            (
                argv(&["curl", "-H", "Authorization: Bearer abc", "-H", "Accept: x"]),
                argv(&["curl", "-H", "Authorization: ****", "-H", "Accept: x"]),
            ),
            (
                argv(&["env", "SLACK_TOKEN=abc", "LANG=C", "post"]),
                argv(&["env", "SLACK_TOKEN=****", "LANG=C", "post"]),
            ),
            (
                argv(&["curl", "http://u:p@h/x?token=t"]),
                argv(&["curl", "http://****@h/x?token=****"]),
            ),
            (
                argv(&["sh", "-c", "echo hi"]),
                argv(&["sh", "-c", "echo hi"]),
            ),
        ] {
            assert_eq!(mask_command(&command), shown, "{command:?}");
        }
    }
}
