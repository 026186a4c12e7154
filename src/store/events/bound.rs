//! Every event stays small: one whose JSON passes `MAX_EVENT_BYTES` has its
//! long strings cut, and says so with `"cut": true`. Callers record sizes
//! and prefixes rather than whole texts (`input_dropped`, `thought_update`);
//! this is the net under them, so no future field can make the log, the
//! replay ring or a page hold megabytes per event.

use serde_json::{Map, Value};

use super::Event;

/// The JSON of one event, at most (well above any event tmuxd writes on
/// purpose; an event past it is cut).
pub const MAX_EVENT_BYTES: usize = 8 * 1024;
/// A string in a cut event keeps this many bytes at most.
pub const MAX_CUT_STRING_BYTES: usize = 1024;
/// The key a cut event carries.
pub const CUT_KEY: &str = "cut";

/// `event` as it is stored and served, and its JSON (no newline). An event
/// too large has its strings cut to `MAX_CUT_STRING_BYTES`; one still too
/// large (many keys, long arrays) keeps no detail but `"cut": true`.
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
    for value in event.detail.values_mut() {
        cut_strings(value);
    }
    event.detail.insert(CUT_KEY.to_owned(), Value::Bool(true));
    let line = serde_json::to_vec(&event)?;
    if line.len() <= MAX_EVENT_BYTES {
        return Ok((event, line));
    }
    event.detail = Map::from_iter([(CUT_KEY.to_owned(), Value::Bool(true))]);
    let line = serde_json::to_vec(&event)?;
    Ok((event, line))
}

fn cut_strings(value: &mut Value) {
    match value {
        Value::String(text) => cut_str(text, MAX_CUT_STRING_BYTES),
        Value::Array(items) => items.iter_mut().for_each(cut_strings),
        Value::Object(fields) => fields.values_mut().for_each(cut_strings),
        Value::Null | Value::Bool(_) | Value::Number(_) => {}
    }
}

/// Cuts `text` to at most `max` bytes, at a character boundary.
pub fn cut_str(text: &mut String, max: usize) {
    if text.len() > max {
        let end = text.floor_char_boundary(max);
        text.truncate(end);
    }
}
