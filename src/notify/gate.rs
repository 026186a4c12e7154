//! Which notifications go out: only the kinds `notify.on` names; an
//! attention flag is notified when it is newly raised, at most once per
//! session per cooldown; an exit once per session (with `failed_exit`
//! alone, only an exit that failed); and no more than `max_per_minute` in
//! all. What was notified
//! per session is kept (`NotifiedFile`) across restarts, so a restart
//! re-sends nothing. Pure: time is passed in.

use std::collections::VecDeque;

use chrono::{DateTime, Duration, Utc};

use crate::config::{NotifyConfig, NotifyOn};
use crate::store::{NotifiedFile, NotifiedSession};

/// What a notification is about.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Trigger {
    Attention,
    Exited,
    /// The tmux server was lost with the sessions on it (once per loss).
    TmuxLost,
}

impl Trigger {
    pub fn as_str(self) -> &'static str {
        match self {
            Trigger::Attention => "attention",
            Trigger::Exited => "exited",
            Trigger::TmuxLost => "tmux_lost",
        }
    }
}

/// How a session ended, as far as `notify.on` cares.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum End {
    /// Status 0, or no status at all (killed through tmuxd, tmux lost).
    Clean,
    /// A non-zero status, or killed by a signal.
    Failed,
}

impl End {
    /// From an end's `exit_status` and `exit_signal`.
    pub fn of(status: Option<i64>, signal: Option<i64>) -> End {
        match (status, signal) {
            (Some(0), _) | (None, None) => End::Clean,
            _ => End::Failed,
        }
    }
}

/// Ended sessions remembered (so their end is notified once), newest kept.
const ENDED_KEPT: usize = 1000;

pub struct Gate {
    on: Vec<NotifyOn>,
    cooldown: Duration,
    max_per_minute: usize,
    /// When each notification of the last minute went out.
    sent: VecDeque<DateTime<Utc>>,
    /// What was notified per session; persisted by the notifier.
    memory: NotifiedFile,
    /// Whether `memory` changed since `take_changes`.
    changed: bool,
}

impl Gate {
    pub fn new(config: &NotifyConfig, memory: NotifiedFile) -> Self {
        Gate {
            on: config.on.clone(),
            cooldown: Duration::seconds(i64::try_from(config.cooldown_s).unwrap_or(i64::MAX)),
            max_per_minute: usize::try_from(config.max_per_minute).unwrap_or(usize::MAX),
            sent: VecDeque::new(),
            memory,
            changed: false,
        }
    }

    /// Whether `notify.on` asks for this: an attention flag, an end
    /// (`exited` takes every end, `failed_exit` one that failed), the
    /// tmux server lost. `end` is read for `Trigger::Exited` only.
    pub fn wants(&self, trigger: Trigger, end: End) -> bool {
        let on = |kind| self.on.contains(&kind);
        match trigger {
            Trigger::Attention => on(NotifyOn::Attention),
            Trigger::Exited => {
                on(NotifyOn::Exited) || (on(NotifyOn::FailedExit) && end == End::Failed)
            }
            Trigger::TmuxLost => on(NotifyOn::TmuxLost),
        }
    }

    /// The memory to persist, if it changed since the last call.
    pub fn take_changes(&mut self) -> Option<&NotifiedFile> {
        std::mem::take(&mut self.changed).then_some(&self.memory)
    }

    fn session(&mut self, session_id: &str) -> &mut NotifiedSession {
        self.changed = true;
        self.memory
            .sessions
            .entry(session_id.to_owned())
            .or_default()
    }

    /// Takes the attention a session's state event carries (its `since`, or
    /// None when the flag is down); true when it was raised anew.
    pub fn attention_seen(&mut self, session_id: &str, since: Option<&str>) -> bool {
        let before = self
            .memory
            .sessions
            .get(session_id)
            .and_then(|s| s.attention_since.as_deref());
        if before == since {
            return false;
        }
        self.session(session_id).attention_since = since.map(str::to_owned);
        since.is_some()
    }

    /// Whether a notification may go out now; if so, it is counted.
    pub fn admit(&mut self, trigger: Trigger, session_id: &str, now: DateTime<Utc>) -> bool {
        let known = self.memory.sessions.get(session_id);
        let skip = match trigger {
            Trigger::Attention => known
                .and_then(|s| s.attention_notified_at)
                .is_some_and(|last| now - last < self.cooldown),
            Trigger::Exited => known.is_some_and(|s| s.exit_notified_at.is_some()),
            Trigger::TmuxLost => false,
        };
        if skip {
            return false;
        }
        let minute = Duration::seconds(60);
        while self.sent.front().is_some_and(|at| now - *at >= minute) {
            self.sent.pop_front();
        }
        if self.sent.len() >= self.max_per_minute {
            return false;
        }
        self.sent.push_back(now);
        match trigger {
            Trigger::Attention => self.session(session_id).attention_notified_at = Some(now),
            Trigger::Exited => {
                let session = self.session(session_id);
                session.exit_notified_at = Some(now);
                session.attention_since = None;
                self.forget_old_ends();
            }
            Trigger::TmuxLost => {}
        }
        true
    }

    /// Keeps the `ENDED_KEPT` latest ended sessions.
    fn forget_old_ends(&mut self) {
        let mut ends: Vec<(DateTime<Utc>, String)> = self
            .memory
            .sessions
            .iter()
            .filter_map(|(id, s)| Some((s.exit_notified_at?, id.clone())))
            .collect();
        if ends.len() <= ENDED_KEPT {
            return;
        }
        ends.sort();
        for (_, id) in &ends[..ends.len() - ENDED_KEPT] {
            self.memory.sessions.remove(id);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn gate(cooldown_s: u64, max_per_minute: u64) -> Gate {
        let config = NotifyConfig {
            cooldown_s,
            max_per_minute,
            ..NotifyConfig::default()
        };
        Gate::new(&config, NotifiedFile::default())
    }

    fn at(t0: DateTime<Utc>) -> impl Fn(i64) -> DateTime<Utc> {
        move |n| t0 + Duration::seconds(n)
    }

    /// Issue 32, item 2: `notify.on` picks the kinds; `failed_exit` takes
    /// an end with a non-zero status or a signal, not a clean one.
    #[test]
    fn notify_on_picks_what_is_notified() {
        use NotifyOn::*;
        use Trigger as T;
        let clean = End::of(Some(0), None);
        let failed = End::of(Some(3), None);
        let signalled = End::of(None, Some(9));
        let killed = End::of(None, None);
        // (notify.on, trigger, how it ended, notified)
        let table = [
            (vec![Attention, Exited, TmuxLost], T::Exited, clean, true),
            (vec![Attention, Exited, TmuxLost], T::Attention, clean, true),
            (vec![Attention, FailedExit], T::Exited, failed, true),
            (vec![Attention, FailedExit], T::Exited, signalled, true),
            (vec![Attention, FailedExit], T::Exited, clean, false),
            (vec![Attention, FailedExit], T::Exited, killed, false),
            (vec![Attention, FailedExit], T::TmuxLost, clean, false),
            (vec![FailedExit], T::Attention, clean, false),
            (vec![], T::Exited, failed, false),
        ];
        for (on, trigger, end, want) in table {
            let config = NotifyConfig {
                on: on.clone(),
                ..NotifyConfig::default()
            };
            let g = Gate::new(&config, NotifiedFile::default());
            assert_eq!(g.wants(trigger, end), want, "{on:?} {trigger:?} {end:?}");
        }
    }

    #[test]
    fn an_attention_is_new_once() {
        let mut g = gate(0, 100);
        assert!(g.attention_seen("s1", Some("t1")));
        assert!(!g.attention_seen("s1", Some("t1")), "the same flag again");
        assert!(!g.attention_seen("s1", None), "lowered");
        assert!(g.attention_seen("s1", Some("t1")), "raised again");
        assert!(g.attention_seen("s1", Some("t2")));
        assert!(g.attention_seen("s2", Some("t2")), "per session");
    }

    #[test]
    fn cooldown_is_per_session_and_exits_pass_it() {
        let s = at(Utc::now());
        let mut g = gate(300, 100);
        assert!(g.admit(Trigger::Attention, "a", s(0)));
        assert!(!g.admit(Trigger::Attention, "a", s(10)), "cooling down");
        assert!(g.admit(Trigger::Attention, "b", s(10)), "another session");
        assert!(g.admit(Trigger::Exited, "a", s(20)), "exits always go");
        assert!(g.admit(Trigger::Attention, "b", s(311)));
    }

    #[test]
    fn the_rate_limit_holds_over_a_sliding_minute() {
        let s = at(Utc::now());
        let mut g = gate(0, 2);
        assert!(g.admit(Trigger::Exited, "a", s(0)));
        assert!(g.admit(Trigger::Attention, "b", s(1)));
        assert!(!g.admit(Trigger::Exited, "c", s(30)), "third in a minute");
        assert!(
            g.admit(Trigger::Exited, "c", s(60)),
            "the first left the window"
        );
    }

    /// Issue 19, finding 3: a new gate on the memory the last one left
    /// (a restart) sees the same flag as not new, keeps the cooldown, and
    /// lets an end through once.
    #[test]
    fn a_restart_re_sends_nothing() {
        let s = at(Utc::now());
        let mut g = gate(300, 100);
        assert!(g.attention_seen("a", Some("t1")));
        assert!(g.admit(Trigger::Attention, "a", s(0)));
        assert!(g.admit(Trigger::Exited, "b", s(1)));
        let memory = g.take_changes().cloned().expect("changed");
        assert!(g.take_changes().is_none(), "taken");

        let config = NotifyConfig {
            cooldown_s: 300,
            ..NotifyConfig::default()
        };
        let mut g = Gate::new(&config, memory);
        assert!(!g.attention_seen("a", Some("t1")), "the same flag");
        assert!(!g.admit(Trigger::Attention, "a", s(5)), "still cooling");
        assert!(!g.admit(Trigger::Exited, "b", s(6)), "an end notified once");
        assert!(g.admit(Trigger::Exited, "a", s(7)));
        assert!(!g.attention_seen("a", None));
        assert!(g.attention_seen("a", Some("t2")), "a new flag is new");
    }

    #[test]
    fn old_ends_are_forgotten() {
        let s = at(Utc::now());
        let mut g = gate(0, u64::MAX);
        let ended = ENDED_KEPT as i64 + 5;
        for n in 0..ended {
            assert!(g.admit(Trigger::Exited, &format!("s{n}"), s(n * 60)));
        }
        assert_eq!(g.memory.sessions.len(), ENDED_KEPT);
        assert!(!g.memory.sessions.contains_key("s0"));
    }
}
