//! A SESSION argument is an id (`sess_3`) or an exact tmux name (`build`):
//! resolved against one `GET /v1/sessions?include=ended`, so scripts need
//! no lookup of their own. Live sessions come first: an ended session is
//! found (by id, or by name, the newest of that name) only when no live
//! one matches, so a name reused by a new session names the new one. A
//! name that is also another session's id is ambiguous. A fleet peer's
//! session is `HOST/sess_N` by id and `HOST/NAME` by name.

use super::client::{Client, ClientError};
use crate::id::FleetId;
use crate::wire::SessionList;

/// What an argument names, given the sessions.
#[derive(Debug, PartialEq, Eq)]
pub enum Resolution {
    /// Exactly one session has this id or this name.
    Found(String),
    /// No session matches, but it is shaped like an id: the API decides
    /// (it may know a session the list does not show).
    AsId(String),
    Missing,
    /// Several sessions match: (id, name) of each.
    Ambiguous(Vec<(String, String)>),
}

/// A session as the resolver sees it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Known {
    pub id: String,
    pub name: String,
    pub ended: bool,
}

/// Pure: matches `arg` against the sessions, live ones first.
pub fn resolve(arg: &str, sessions: &[Known]) -> Resolution {
    let live: Vec<&Known> = sessions.iter().filter(|s| !s.ended).collect();
    let ended: Vec<&Known> = sessions.iter().filter(|s| s.ended).collect();
    match matches(arg, &live) {
        Resolution::Missing => {}
        found => return found,
    }
    let by_id: Vec<&Known> = ended.iter().copied().filter(|s| s.id == arg).collect();
    let newest_named = ended
        .iter()
        .copied()
        .filter(|s| s.name == arg)
        .max_by_key(|s| s.id.parse::<FleetId>().ok().map(|id| id.session));
    match (by_id.as_slice(), newest_named) {
        ([], None) if arg.parse::<FleetId>().is_ok() => Resolution::AsId(arg.to_owned()),
        ([], None) => Resolution::Missing,
        ([one], None) => Resolution::Found(one.id.clone()),
        ([], Some(named)) => Resolution::Found(named.id.clone()),
        (ids, named) => Resolution::Ambiguous(
            ids.iter()
                .copied()
                .chain(named)
                .map(|s| (s.id.clone(), s.name.clone()))
                .collect(),
        ),
    }
}

/// Live sessions matching `arg` by id or name.
fn matches(arg: &str, sessions: &[&Known]) -> Resolution {
    let hits: Vec<&&Known> = sessions
        .iter()
        .filter(|s| s.id == arg || s.name == arg)
        .collect();
    match hits.as_slice() {
        [] => Resolution::Missing,
        [one] => Resolution::Found(one.id.clone()),
        many => Resolution::Ambiguous(
            many.iter()
                .map(|s| (s.id.clone(), s.name.clone()))
                .collect(),
        ),
    }
}

/// The session id for a SESSION argument, or a clear error.
pub async fn session_id(client: &Client, arg: &str) -> Result<String, ClientError> {
    let body: SessionList = client.get("/v1/sessions?include=ended").await?;
    let sessions: Vec<Known> = body
        .sessions
        .into_iter()
        .map(|s| Known {
            ended: s.ended_at.is_some(),
            id: s.session_id.to_string(),
            name: match s.host {
                Some(host) => format!("{host}/{}", s.tmux_name),
                None => s.tmux_name,
            },
        })
        .collect();
    match resolve(arg, &sessions) {
        Resolution::Found(id) | Resolution::AsId(id) => Ok(id),
        Resolution::Missing => Err(ClientError::Api {
            status: reqwest::StatusCode::NOT_FOUND,
            code: "not_found".into(),
            message: format!("no session has the id or tmux name {arg:?} (see `tmuxd ls --all`)"),
        }),
        Resolution::Ambiguous(candidates) => {
            let listed: Vec<String> = candidates
                .iter()
                .map(|(id, name)| format!("{} (tmux name {name:?})", super::output::visible(id)))
                .collect();
            Err(ClientError::Usage(format!(
                "{arg:?} is ambiguous: it matches {}; use the session id",
                listed.join(" and ")
            )))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn known(list: &[(&str, &str, bool)]) -> Vec<Known> {
        list.iter()
            .map(|(id, name, ended)| Known {
                id: (*id).to_owned(),
                name: (*name).to_owned(),
                ended: *ended,
            })
            .collect()
    }

    fn pairs(list: &[(&str, &str)]) -> Vec<(String, String)> {
        list.iter()
            .map(|(id, name)| ((*id).to_owned(), (*name).to_owned()))
            .collect()
    }

    #[test]
    fn resolution() {
        let sessions = known(&[
            ("sess_1", "build", false),
            ("sess_2", "sess_1", false),
            ("sess_3", "7", false),
            ("gpu1/sess_1", "gpu1/build", false),
        ]);
        let cases = [
            ("build", Resolution::Found("sess_1".into())),
            ("sess_3", Resolution::Found("sess_3".into())),
            ("7", Resolution::Found("sess_3".into())),
            ("sess_9", Resolution::AsId("sess_9".into())),
            ("sess_09", Resolution::Missing),
            ("gpu1/build", Resolution::Found("gpu1/sess_1".into())),
            ("gpu1/sess_1", Resolution::Found("gpu1/sess_1".into())),
            ("gpu1/sess_4", Resolution::AsId("gpu1/sess_4".into())),
            ("gpu2/build", Resolution::Missing),
            ("buil", Resolution::Missing),
            ("=build", Resolution::Missing),
            (
                "sess_1",
                Resolution::Ambiguous(pairs(&[("sess_1", "build"), ("sess_2", "sess_1")])),
            ),
        ];
        for (arg, want) in cases {
            assert_eq!(resolve(arg, &sessions), want, "{arg}");
        }
    }

    /// Ended sessions are found by id and name while no live one matches;
    /// of several ended with one name, the newest.
    #[test]
    fn ended_sessions_resolve_after_live_ones() {
        let sessions = known(&[
            ("sess_2", "job", true),
            ("sess_10", "job", true),
            ("sess_4", "build", true),
            ("sess_5", "build", false),
            ("sess_6", "sess_7", true),
            ("sess_7", "other", true),
        ]);
        let cases = [
            ("job", Resolution::Found("sess_10".into())),
            ("sess_2", Resolution::Found("sess_2".into())),
            ("build", Resolution::Found("sess_5".into())),
            ("sess_4", Resolution::Found("sess_4".into())),
            (
                "sess_7",
                Resolution::Ambiguous(pairs(&[("sess_7", "other"), ("sess_6", "sess_7")])),
            ),
            ("sess_8", Resolution::AsId("sess_8".into())),
            ("gone", Resolution::Missing),
        ];
        for (arg, want) in cases {
            assert_eq!(resolve(arg, &sessions), want, "{arg}");
        }
    }
}
