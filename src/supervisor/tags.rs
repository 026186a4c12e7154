//! The id each tracked session carries in tmux (see `tmux::tag`): set when a
//! session is attached, read at startup for live sessions the registry does
//! not know, so a lost `registry.json` loses no live session's id. Best
//! effort throughout: a fake tmux has no environment commands, and the
//! registry, the event log and `counters.json` keep ids from being reused
//! without it.

use std::collections::{BTreeMap, BTreeSet};

use futures::StreamExt;

use super::types::SupervisorError;
use crate::id::SessionId;
use crate::store::RegistryFile;
use crate::tmux::{SessionView, Tmux, session_views};

/// tmux calls in flight at once while reading marks one by one.
const READ_CONCURRENCY: usize = 8;

/// Sessions whose marks one tmux call reads (two commands each, well
/// within the size of a command tmux accepts).
const READ_BATCH: usize = 25;

/// The ids marked on live sessions that `file` does not name, by tmux
/// name. Sessions the registry knows keep the registry's id anyway, so
/// an intact registry costs no tmux call here.
pub(super) async fn unknown_session_tags(
    tmux: &Tmux,
    file: &RegistryFile,
    live: &BTreeMap<String, SessionView>,
) -> BTreeMap<String, SessionId> {
    let known: BTreeSet<&str> = file
        .sessions
        .iter()
        .map(|s| s.tmux_name.as_str())
        .chain(file.detached.iter().map(String::as_str))
        .collect();
    let unknown: Vec<String> = live
        .keys()
        .filter(|name| !known.contains(name.as_str()))
        .cloned()
        .collect();
    // A few calls of `READ_BATCH` sessions each, not a fork per
    // session: the daemon answers only once they are read.
    let mut found = BTreeMap::new();
    let mut one_by_one = Vec::new();
    for batch in unknown.chunks(READ_BATCH) {
        match tmux.session_tags(batch).await {
            Ok(tags) => found.extend(tags),
            Err(e) => {
                tracing::debug!("cannot read the sessions' id marks at once: {e}");
                one_by_one.extend_from_slice(batch);
            }
        }
    }
    let found = found
        .into_iter()
        .filter_map(|(name, tag)| Some((name, tag_number(&tag)?)));
    // Owned futures: a stream of ones borrowing `tmux` is not `Send`.
    let reads = one_by_one.into_iter().map(|name| {
        let tmux = tmux.clone();
        async move {
            match tmux.session_tag(&name).await {
                Ok(tag) => tag.and_then(|t| tag_number(&t)).map(|id| (name, id)),
                Err(e) => {
                    tracing::debug!(tmux_name = %name, "cannot read the session's id mark: {e}");
                    None
                }
            }
        }
    });
    let read: Vec<Option<(String, SessionId)>> = futures::stream::iter(reads)
        .buffer_unordered(READ_CONCURRENCY)
        .collect()
        .await;
    found.chain(read.into_iter().flatten()).collect()
}

/// The view of a session about to be attached, marking it with its id in
/// the same tmux call (no extra fork), and whether the mark took. A tmux
/// that refuses the pair (the fake) gives the view alone, unmarked.
pub(super) async fn view_tagging(
    tmux: &Tmux,
    name: &str,
    id: SessionId,
) -> Result<(Option<SessionView>, bool), SupervisorError> {
    match tmux.tag_and_list_panes(name, &id.to_string()).await {
        Ok(panes) => Ok((session_views(&panes).remove(name), true)),
        Err(e) => {
            tracing::debug!(tmux_name = %name, "cannot mark the session with its id: {e}");
            let panes = tmux.list_panes().await?;
            Ok((session_views(&panes).remove(name), false))
        }
    }
}

/// Marks sessions with their ids where no tmux call was made for them
/// anyway (a discovered session, the sessions a restart re-attached):
/// one tmux call for all, off the caller's path.
pub(super) fn tag_sessions(tmux: &Tmux, tags: Vec<(String, SessionId)>) {
    if tags.is_empty() {
        return;
    }
    let tmux = tmux.clone();
    let tags: Vec<(String, String)> = tags
        .into_iter()
        .map(|(name, id)| (name, id.to_string()))
        .collect();
    tokio::spawn(async move {
        if let Err(e) = tmux.set_session_tags(&tags).await {
            tracing::debug!("cannot mark sessions with their ids: {e}");
        }
    });
}

/// A mark's id number, if it is one tmuxd could have set.
fn tag_number(tag: &str) -> Option<SessionId> {
    crate::store::floors::session_number(tag).map(SessionId)
}
