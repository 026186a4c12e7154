//! tmuxd's mark on each session it tracks: the session's id in a hidden
//! session environment variable (`set-environment -h`, named `tmuxd_id`), so
//! the id outlives tmuxd's own files and a session re-adopted after they
//! were lost keeps it.
//!
//! Hidden, because such a variable reaches no program in the session; an
//! environment variable, because setting any option (even a user option)
//! makes tmux redraw every attached client, humans' included.

use super::{
    LIST_PANES_FORMAT, PaneInfo, Refusal, Tmux, TmuxError, parse_list_panes, session_target,
};

const TAG_VARIABLE: &str = "tmuxd_id";

/// Sessions' marks by tmux name.
pub type SessionTags = std::collections::BTreeMap<String, String>;

impl Tmux {
    /// Marks many sessions in one tmux call: `(name, id)` pairs. tmux stops
    /// at the first session that is gone, so callers treat it as best effort.
    pub async fn set_session_tags(&self, tags: &[(String, String)]) -> Result<(), TmuxError> {
        if tags.is_empty() {
            return Ok(());
        }
        let commands: Vec<Vec<String>> = tags
            .iter()
            .map(|(name, id)| set_tag_args(name, id))
            .collect();
        self.run_sequence(&commands).await.map(drop)
    }

    /// Marks the session with `id`, then lists its panes as `list_panes`
    /// does, in one tmux call (the session's panes only: with hundreds of
    /// sessions, listing them all doubled the call's cost).
    pub async fn tag_and_list_panes(
        &self,
        name: &str,
        id: &str,
    ) -> Result<Vec<PaneInfo>, TmuxError> {
        let out = self.run_sequence(&tag_and_list_args(name, id)).await?;
        Ok(parse_list_panes(&out))
    }

    /// The marks of many sessions in one tmux call, by name (a session
    /// without one is left out). Each session's hidden environment is
    /// listed after a line of its own (`display-message` of a fixed
    /// format: nothing of the name is ever a format), so the output says
    /// whose each is. tmux stops at the first session that is gone: the
    /// call fails, and the caller reads those sessions one by one.
    pub async fn session_tags(&self, names: &[String]) -> Result<SessionTags, TmuxError> {
        if names.is_empty() {
            return Ok(Default::default());
        }
        let commands: Vec<Vec<String>> = names
            .iter()
            .enumerate()
            .flat_map(|(n, name)| read_tag_args(n, name))
            .collect();
        let out = self.run_sequence(&commands).await?;
        Ok(parse_tags(&out, names))
    }

    /// The session's mark, if it has one (a session that is gone has none).
    pub async fn session_tag(&self, name: &str) -> Result<Option<String>, TmuxError> {
        let target = session_target(name);
        match self
            .run(["show-environment", "-h", "-t", &target, TAG_VARIABLE])
            .await
        {
            Ok(out) => Ok(parse_tag(&out)),
            Err(e) if e.refusal() == Some(Refusal::UnknownVariable) => Ok(None),
            Err(e) if e.is_missing_session() => Ok(None),
            Err(e) => Err(e),
        }
    }
}

/// Marks session `name` with `id`, then lists its panes (`LIST_PANES_FORMAT`).
pub(super) fn tag_and_list_args(name: &str, id: &str) -> [Vec<String>; 2] {
    let target = session_target(name);
    let list = ["list-panes", "-s", "-t", &target, "-F", LIST_PANES_FORMAT].map(str::to_owned);
    [set_tag_args(name, id), list.to_vec()]
}

fn set_tag_args(name: &str, id: &str) -> Vec<String> {
    let target = session_target(name);
    ["set-environment", "-h", "-t", &target, TAG_VARIABLE, id]
        .map(str::to_owned)
        .to_vec()
}

/// Starts the lines of the `n`th session in a batched read.
const READ_MARKER: &str = "tmuxd-tag-read";

/// The `n`th session's marker line, then its hidden environment.
fn read_tag_args(n: usize, name: &str) -> [Vec<String>; 2] {
    let target = session_target(name);
    let marker = format!("{READ_MARKER} {n}");
    let show = ["show-environment", "-h", "-t", &target].map(str::to_owned);
    let say = ["display-message", "-p", "-t", &target, &marker].map(str::to_owned);
    [say.to_vec(), show.to_vec()]
}

/// The marks in a batched read's output, by the names asked for.
fn parse_tags(out: &str, names: &[String]) -> SessionTags {
    let mut tags = SessionTags::new();
    let mut current: Option<&String> = None;
    for line in out.lines() {
        if let Some(n) = line
            .strip_prefix(READ_MARKER)
            .and_then(|n| n.strip_prefix(' '))
        {
            current = n.parse::<usize>().ok().and_then(|n| names.get(n));
            continue;
        }
        if let (Some(name), Some(tag)) = (current, parse_tag(line)) {
            tags.insert(name.clone(), tag);
        }
    }
    tags
}

fn parse_tag(out: &str) -> Option<String> {
    let value = out
        .trim_end()
        .strip_prefix(TAG_VARIABLE)?
        .strip_prefix('=')?;
    (!value.is_empty()).then(|| value.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_batched_read_says_whose_each_mark_is() {
        let names = ["a".to_owned(), "b".to_owned(), "c".to_owned()];
        let out = "tmuxd-tag-read 0\ntmuxd_id=sess_3\nother=x\n\
                   tmuxd-tag-read 1\n\
                   tmuxd-tag-read 2\nzz=1\ntmuxd_id=sess_9\n";
        let tags = parse_tags(out, &names);
        let expected: Vec<(&str, &str)> = vec![("a", "sess_3"), ("c", "sess_9")];
        let got: Vec<(&str, &str)> = tags.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
        assert_eq!(got, expected);
        assert_eq!(
            read_tag_args(4, "x")[0],
            ["display-message", "-p", "-t", "=x", "tmuxd-tag-read 4"]
        );
    }

    #[test]
    fn tags_parse() {
        let cases = [
            ("tmuxd_id=sess_3\n", Some("sess_3")),
            ("tmuxd_id=\n", None),
            ("-tmuxd_id\n", None),
            ("other=sess_3\n", None),
            ("", None),
        ];
        for (out, tag) in cases {
            assert_eq!(parse_tag(out).as_deref(), tag, "{out:?}");
        }
    }
}
