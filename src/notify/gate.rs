//! Which notifications go out: an attention flag is notified when it is
//! newly raised, at most once per session per cooldown; an exit always;
//! and no more than `max_per_minute` in all. Pure: time is passed in.

use std::collections::{HashMap, VecDeque};
use std::time::{Duration, Instant};

use crate::config::NotifyConfig;

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

const MINUTE: Duration = Duration::from_secs(60);

pub struct Gate {
    cooldown: Duration,
    max_per_minute: usize,
    /// When each notification of the last minute went out.
    sent: VecDeque<Instant>,
    /// When each session's attention was last notified.
    last_attention: HashMap<String, Instant>,
    /// The attention (its `since`) each session's last state event carried.
    seen: HashMap<String, String>,
}

impl Gate {
    pub fn new(config: &NotifyConfig) -> Self {
        Gate {
            cooldown: Duration::from_secs(config.cooldown_s),
            max_per_minute: usize::try_from(config.max_per_minute).unwrap_or(usize::MAX),
            sent: VecDeque::new(),
            last_attention: HashMap::new(),
            seen: HashMap::new(),
        }
    }

    /// Takes the attention a session's state event carries (its `since`, or
    /// None when the flag is down); true when it was raised anew.
    pub fn attention_seen(&mut self, session_id: &str, since: Option<&str>) -> bool {
        match since {
            None => {
                self.seen.remove(session_id);
                false
            }
            Some(since) => {
                let before = self.seen.insert(session_id.to_owned(), since.to_owned());
                before.as_deref() != Some(since)
            }
        }
    }

    /// Whether a notification may go out now; if so, it is counted.
    pub fn admit(&mut self, trigger: Trigger, session_id: &str, now: Instant) -> bool {
        if trigger == Trigger::Attention
            && self
                .last_attention
                .get(session_id)
                .is_some_and(|last| now.duration_since(*last) < self.cooldown)
        {
            return false;
        }
        while self
            .sent
            .front()
            .is_some_and(|at| now.duration_since(*at) >= MINUTE)
        {
            self.sent.pop_front();
        }
        if self.sent.len() >= self.max_per_minute {
            return false;
        }
        self.sent.push_back(now);
        match trigger {
            Trigger::Attention => {
                self.last_attention.insert(session_id.to_owned(), now);
            }
            Trigger::Exited => {
                // The session is gone: nothing more to remember of it.
                self.last_attention.remove(session_id);
                self.seen.remove(session_id);
            }
            Trigger::TmuxLost => {}
        }
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn gate(cooldown_s: u64, max_per_minute: u64) -> Gate {
        Gate::new(&NotifyConfig {
            cooldown_s,
            max_per_minute,
            ..NotifyConfig::default()
        })
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
        let t0 = Instant::now();
        let s = |n: u64| t0 + Duration::from_secs(n);
        let mut g = gate(300, 100);
        assert!(g.admit(Trigger::Attention, "a", s(0)));
        assert!(!g.admit(Trigger::Attention, "a", s(10)), "cooling down");
        assert!(g.admit(Trigger::Attention, "b", s(10)), "another session");
        assert!(g.admit(Trigger::Exited, "a", s(20)), "exits always go");
        assert!(g.admit(Trigger::Attention, "b", s(311)));
    }

    #[test]
    fn the_rate_limit_holds_over_a_sliding_minute() {
        let t0 = Instant::now();
        let s = |n: u64| t0 + Duration::from_secs(n);
        let mut g = gate(0, 2);
        assert!(g.admit(Trigger::Exited, "a", s(0)));
        assert!(g.admit(Trigger::Attention, "b", s(1)));
        assert!(!g.admit(Trigger::Exited, "c", s(30)), "third in a minute");
        assert!(
            g.admit(Trigger::Exited, "c", s(60)),
            "the first left the window"
        );
    }
}
