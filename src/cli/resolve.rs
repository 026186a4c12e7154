//! A SESSION argument is an id (`sess_3`) or an exact tmux name (`build`):
//! resolved against one `GET /v1/sessions`, so scripts need no lookup of
//! their own. A name that is also another session's id is ambiguous.

use super::client::{Client, ClientError};
use crate::api::model::SessionList;
use crate::supervisor::parse_id;

/// What an argument names, given the live sessions.
#[derive(Debug, PartialEq, Eq)]
pub enum Resolution {
    /// Exactly one session has this id or this name.
    Found(String),
    /// No live session matches, but it is shaped like an id: the API decides
    /// (it may know a session the list does not show).
    AsId(String),
    Missing,
    /// Several sessions match: (id, name) of each.
    Ambiguous(Vec<(String, String)>),
}

/// Pure: matches `arg` against (id, tmux name) pairs.
pub fn resolve(arg: &str, sessions: &[(String, String)]) -> Resolution {
    let hits: Vec<&(String, String)> = sessions
        .iter()
        .filter(|(id, name)| id == arg || name == arg)
        .collect();
    match hits.as_slice() {
        [] if parse_id(arg).is_some() => Resolution::AsId(arg.to_owned()),
        [] => Resolution::Missing,
        [(id, _)] => Resolution::Found(id.clone()),
        many => Resolution::Ambiguous(many.iter().map(|&pair| pair.clone()).collect()),
    }
}

/// The session id for a SESSION argument, or a clear error.
pub async fn session_id(client: &Client, arg: &str) -> Result<String, ClientError> {
    let body: SessionList = client.get("/v1/sessions").await?;
    let sessions: Vec<(String, String)> = body
        .sessions
        .into_iter()
        .map(|s| (s.session_id, s.tmux_name))
        .collect();
    match resolve(arg, &sessions) {
        Resolution::Found(id) | Resolution::AsId(id) => Ok(id),
        Resolution::Missing => Err(ClientError::Api {
            status: reqwest::StatusCode::NOT_FOUND,
            code: "not_found".into(),
            message: format!("no session has the id or tmux name {arg:?} (see `tmuxd ls`)"),
        }),
        Resolution::Ambiguous(candidates) => {
            let listed: Vec<String> = candidates
                .iter()
                .map(|(id, name)| format!("{id} (tmux name {name:?})"))
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

    fn pairs(list: &[(&str, &str)]) -> Vec<(String, String)> {
        list.iter()
            .map(|(id, name)| ((*id).to_owned(), (*name).to_owned()))
            .collect()
    }

    #[test]
    fn resolution() {
        let sessions = pairs(&[("sess_1", "build"), ("sess_2", "sess_1"), ("sess_3", "7")]);
        let cases = [
            ("build", Resolution::Found("sess_1".into())),
            ("sess_3", Resolution::Found("sess_3".into())),
            ("7", Resolution::Found("sess_3".into())),
            ("sess_9", Resolution::AsId("sess_9".into())),
            ("sess_09", Resolution::Missing),
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
}
