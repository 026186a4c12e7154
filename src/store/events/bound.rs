//! Every event stays small: one whose JSON passes `MAX_EVENT_BYTES` has its
//! long strings cut, and says so with `"cut": true`. Callers record sizes
//! and prefixes rather than whole texts (`input_dropped`, `thought_update`);
//! this is the net under them, so no future field can make the log, the
//! replay ring or a page hold megabytes per event.

use crate::wire::{Body, Event, InputDropped, Payload};

/// The JSON of one event, at most (well above any event tmuxd writes on
/// purpose; an event past it is cut).
pub const MAX_EVENT_BYTES: usize = 8 * 1024;
/// A string in a cut event keeps this many bytes at most.
pub const MAX_CUT_STRING_BYTES: usize = 1024;

/// `event` as it is stored and served, and its JSON (no newline). An event
/// too large has its strings cut to `MAX_CUT_STRING_BYTES`; one still too
/// large (control characters take six bytes each in JSON) keeps only its
/// kind and the common fields.
pub(super) fn bounded(mut event: Event) -> Result<(Event, Vec<u8>), serde_json::Error> {
    let line = serde_json::to_vec(&event)?;
    if line.len() <= MAX_EVENT_BYTES {
        return Ok((event, line));
    }
    for text in [&mut event.reason, &mut event.tmux_name]
        .into_iter()
        .flatten()
    {
        cut_str(text, MAX_CUT_STRING_BYTES);
    }
    event.body = match event.body {
        Body::Whole(mut payload) | Body::Cut(mut payload) => {
            cut_strings(&mut payload);
            Body::Cut(payload)
        }
        cut @ Body::KindOnly(_) => cut,
    };
    let line = serde_json::to_vec(&event)?;
    if line.len() <= MAX_EVENT_BYTES {
        return Ok((event, line));
    }
    event.body = Body::KindOnly(event.kind());
    event.from_peer = None;
    let line = serde_json::to_vec(&event)?;
    Ok((event, line))
}

/// Cuts each string a payload carries to `MAX_CUT_STRING_BYTES`.
fn cut_strings(payload: &mut Payload) {
    let cut = |text: &mut String| cut_str(text, MAX_CUT_STRING_BYTES);
    match payload {
        Payload::SessionAdopted(adopted) => adopted.id_from.iter_mut().for_each(cut),
        Payload::SessionRenamed(renamed) => {
            cut(&mut renamed.old_name);
            cut(&mut renamed.new_name);
        }
        Payload::SessionState(changed) => {
            let note = changed.attention.as_mut().and_then(|a| a.text.as_mut());
            note.into_iter().for_each(cut);
        }
        Payload::ThoughtUpdate(updated) => {
            cut(&mut updated.thought.thought.text);
            updated.thought.thought.state.iter_mut().for_each(cut);
        }
        Payload::InputDropped(InputDropped::Queued(input)) => cut(&mut input.text_prefix),
        Payload::InputDropped(InputDropped::Failed { message }) => cut(message),
        Payload::SessionCreated
        | Payload::SessionDetached
        | Payload::SessionDeleted(_)
        | Payload::TmuxLost(_)
        | Payload::SessionRestored(_)
        | Payload::SessionRemoved => {}
    }
}

/// Cuts `text` to at most `max` bytes, at a character boundary.
pub fn cut_str(text: &mut String, max: usize) {
    if text.len() > max {
        let end = text.floor_char_boundary(max);
        text.truncate(end);
    }
}
