//! Where numbering resumes after a restart: the next session id and the next
//! event seq, planned from every trace the data dir still holds, so a lost,
//! cut or corrupt file can make numbers jump ahead but never repeat.
//!
//! Pure functions over what the store read; the store applies the plans.

/// Seqs reserved ahead of use in `counters.json`: after a crash, numbering
/// resumes at the reservation, at most this far past the last event.
pub const SEQ_BLOCK: u64 = 1024;

/// Session ids reserved ahead of use in `counters.json`: after a crash,
/// numbering resumes at the reservation, at most this far past the last id.
pub const ID_BLOCK: u64 = 64;

/// Numbers above this are not trusted from damaged files or from tmux: no
/// daemon gets near it (2^53, the largest integer a JavaScript client reads
/// exactly), and a garbled digit must not push a counter toward overflow.
pub const MAX_TRUSTED: u64 = 1 << 53;

/// What startup knows about the event seqs handed out before.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SeqEvidence {
    /// The highest seq in the event log files, damaged lines included.
    pub highest_in_log: Option<u64>,
    /// Some line of the log could not be read.
    pub log_damaged: bool,
    /// From `counters.json`: no seq at or above it was ever handed out.
    pub reserved: Option<u64>,
    /// From `counters.json`: the exact next seq, written by a clean stop.
    pub clean_stop: Option<u64>,
}

/// The seq the next event gets.
///
/// - After a clean stop, the recorded next seq: exact, even if the log lost
///   lines since (it can only have lost them, nothing was appended).
/// - After a crash, the reservation: events may have been handed out that
///   never reached the disk, but none at or above it.
/// - Without `counters.json`, the log alone; if it is damaged too, a block
///   past its highest seq, as the lines lost may have been the newest.
pub fn plan_next_seq(evidence: &SeqEvidence) -> u64 {
    let after_log = evidence
        .highest_in_log
        .map_or(1, |seq| seq.saturating_add(1));
    match (evidence.clean_stop, evidence.reserved) {
        (Some(next), _) if after_log <= next => next,
        (_, Some(reserved)) => after_log.max(reserved),
        _ if evidence.log_damaged => after_log.saturating_add(SEQ_BLOCK),
        _ => after_log,
    }
}

/// What startup knows about the session ids handed out before.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct IdEvidence {
    /// `registry.json`'s counter, if the file was there and whole.
    pub registry_counter: Option<u64>,
    /// Counters read from moved-aside registry copies.
    pub salvaged_counter: Option<u64>,
    /// The highest id anything names: registry, thoughts, the event log,
    /// moved-aside copies.
    pub highest_id: Option<u64>,
    /// From `counters.json` (or a moved-aside copy): no id at or above it
    /// was handed out.
    pub reserved: Option<u64>,
    /// `counters.json` says the last stop was clean, after its final
    /// registry write.
    pub clean_stop: bool,
}

/// The counter for the next `sess_<n>`: past every counter and every id
/// found. After a clean stop with `registry.json` intact its counter is
/// exact, so ids stay dense; otherwise (a crash, a lost or corrupt registry)
/// ids may have gone out that nothing else remembers, and numbering resumes
/// at the reservation. Numbers beyond `MAX_TRUSTED`, which only a
/// hand-edited file could hold, are ignored.
pub fn plan_session_counter(evidence: &IdEvidence) -> u64 {
    let trusted = |n: &u64| *n <= MAX_TRUSTED;
    let past_highest = evidence.highest_id.filter(trusted).map(|id| id + 1);
    let known = [
        evidence.registry_counter,
        evidence.salvaged_counter,
        past_highest,
    ];
    let next = known.into_iter().flatten().filter(trusted).max();
    let exact = evidence.registry_counter.is_some() && evidence.clean_stop;
    let reserved = evidence.reserved.filter(trusted).filter(|_| !exact);
    next.max(reserved).unwrap_or(1).max(1)
}

/// The number in `sess_<n>`, if that is exactly what `id` is and `n` is
/// trusted. (The supervisor parses ids the same way; the store keeps its own
/// copy so it does not depend on the supervisor.)
pub fn session_number(id: &str) -> Option<u64> {
    let digits = id.strip_prefix("sess_")?;
    if digits.starts_with('0') && digits.len() > 1 {
        return None;
    }
    trusted_number(digits)
}

/// Numbers still readable in a damaged pretty-printed JSON file.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Salvage {
    pub highest_session_id: Option<u64>,
    pub next_session_counter: Option<u64>,
    pub session_id_reserved: Option<u64>,
    pub event_seq_reserved: Option<u64>,
    pub clean_stop_next_seq: Option<u64>,
}

impl Salvage {
    fn keep_max(slot: &mut Option<u64>, value: Option<u64>) {
        *slot = (*slot).max(value);
    }

    pub fn merge(&mut self, other: Salvage) {
        Self::keep_max(&mut self.highest_session_id, other.highest_session_id);
        Self::keep_max(&mut self.next_session_counter, other.next_session_counter);
        Self::keep_max(&mut self.session_id_reserved, other.session_id_reserved);
        Self::keep_max(&mut self.event_seq_reserved, other.event_seq_reserved);
        Self::keep_max(&mut self.clean_stop_next_seq, other.clean_stop_next_seq);
    }
}

/// Reads the files tmuxd writes pretty-printed (`registry.json`,
/// `thoughts.json`, `counters.json`, and their moved-aside copies) line by
/// line, without parsing the whole: a line that starts with a key is a real
/// key, as JSON escapes every newline and quote inside a string, so text a
/// client stored (a thought, a command) cannot pose as one.
pub fn salvage_pretty_json(text: &str) -> Salvage {
    let mut found = Salvage::default();
    for line in text.lines() {
        let Some((key, value)) = key_and_value(line) else {
            continue;
        };
        let number = || trusted_number(leading_digits(value));
        match key {
            "session_id" => {
                let id = value.strip_prefix('"').and_then(|v| v.split_once('"'));
                let id = id.and_then(|(id, _)| session_number(id));
                Salvage::keep_max(&mut found.highest_session_id, id);
            }
            "next_session_counter" => Salvage::keep_max(&mut found.next_session_counter, number()),
            "session_id_reserved" => Salvage::keep_max(&mut found.session_id_reserved, number()),
            "event_seq_reserved" => Salvage::keep_max(&mut found.event_seq_reserved, number()),
            "clean_stop_next_seq" => Salvage::keep_max(&mut found.clean_stop_next_seq, number()),
            // thoughts.json is keyed by session id.
            key => Salvage::keep_max(&mut found.highest_session_id, session_number(key)),
        }
    }
    found
}

/// The seq of a damaged event log line, if its start survived: every line
/// begins `{"seq":<n>,`.
pub fn salvage_event_seq(line: &[u8]) -> Option<u64> {
    let rest = line.strip_prefix(b"{\"seq\":")?;
    let digits = rest.iter().take_while(|b| b.is_ascii_digit()).count();
    if rest.get(digits) != Some(&b',') {
        return None;
    }
    trusted_number(std::str::from_utf8(&rest[..digits]).ok()?)
}

/// `"key": value...` at the start of a line (after indentation).
fn key_and_value(line: &str) -> Option<(&str, &str)> {
    let rest = line.trim_start().strip_prefix('"')?;
    let (key, rest) = rest.split_once('"')?;
    let value = rest.trim_start().strip_prefix(':')?.trim_start();
    Some((key, value))
}

fn leading_digits(text: &str) -> &str {
    let end = text
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(text.len());
    &text[..end]
}

fn trusted_number(digits: &str) -> Option<u64> {
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    digits.parse().ok().filter(|&n| n <= MAX_TRUSTED)
}

#[cfg(test)]
mod tests;
