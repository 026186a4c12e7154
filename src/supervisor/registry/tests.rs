//! The registry's transitions, each a table or a short transcript: what
//! is asked, what the registry answers, what it holds after.

use super::*;
use crate::session::StateReason;

fn registry() -> Arc<Registry> {
    Arc::new(Registry::new(1))
}

fn view(state: SessionState) -> StateView {
    StateView {
        state,
        reason: StateReason::Attaching,
        since: DateTime::UNIX_EPOCH,
        attention: None,
        acknowledged_by: None,
    }
}

/// A session for `reservation` whose actor publishes its state on the
/// sender returned.
fn new_entry(tmux_id: u32) -> (NewEntry, watch::Sender<StateView>) {
    let (tx, rx) = watch::channel(view(SessionState::Starting));
    let new = NewEntry {
        tmux_id: TmuxSessionId(tmux_id),
        created_at: DateTime::UNIX_EPOCH,
        command: None,
        cwd: None,
        handle: SessionHandle::unattached(),
        actor_id: 1,
        view: rx,
        queue: Vec::new(),
    };
    (new, tx)
}

/// Reserves and commits a session named `name`; its state sender.
fn track(r: &Arc<Registry>, name: &str) -> (SessionId, watch::Sender<StateView>) {
    let reservation = r.reserve_new(Some(name), 100, &BTreeSet::new()).unwrap();
    let id = reservation.id();
    let (new, tx) = new_entry(id.0 as u32);
    assert!(matches!(
        r.commit(reservation, new, None),
        Commit::Tracked { .. }
    ));
    (id, tx)
}

fn parked(name: &str, id: u64) -> PersistedSession {
    PersistedSession {
        session_id: SessionId(id),
        tmux_name: name.to_owned(),
        created_at: DateTime::UNIX_EPOCH,
        command: None,
        cwd: None,
        queued_inputs: Vec::new(),
        attention: None,
        tmux_id: None,
    }
}

#[test]
fn readiness_follows_what_each_item_waits_for() {
    use SessionState::*;
    let table = [
        (Idle, InputWhen::Idle, true),
        (Waiting, InputWhen::Idle, false),
        (Waiting, InputWhen::Waiting, true),
        (Idle, InputWhen::Waiting, false),
        (Working, InputWhen::Idle, false),
        (Starting, InputWhen::Waiting, false),
        (Exited, InputWhen::Idle, false),
    ];
    for (state, when, want) in table {
        assert_eq!(ready(state, when), want, "{state:?} {when:?}");
    }
}

#[test]
fn counter_never_goes_back() {
    let r = Registry::new(5);
    let mut s = r.lock();
    s.advance_past(SessionId(3));
    assert_eq!(s.allocate_id(), SessionId(5));
    s.advance_past(SessionId(10));
    assert_eq!(s.allocate_id(), SessionId(11));
    s.advance_past(SessionId(u64::MAX));
    assert_eq!(
        s.allocate_id(),
        SessionId(u64::MAX),
        "saturates, never wraps to 0"
    );
    assert_eq!(Registry::new(0).lock().allocate_id(), SessionId(1));
}

#[test]
fn a_reservation_holds_its_name_until_dropped_or_committed() {
    let r = registry();
    let held = r.reserve_new(Some("x"), 10, &BTreeSet::new()).unwrap();
    assert_eq!(held.id(), SessionId(1));
    assert!(matches!(
        r.reserve_new(Some("x"), 10, &BTreeSet::new()),
        Err(SupervisorError::NameTaken(_))
    ));
    drop(held);
    let again = r
        .reserve_new(Some("x"), 10, &BTreeSet::new())
        .expect("given back on drop");
    assert_eq!(again.id(), SessionId(2), "ids are never reissued");
    let (new, _tx) = new_entry(2);
    let Commit::Tracked { .. } = r.commit(again, new, None) else {
        panic!("not closing");
    };
    let s = r.lock();
    assert!(s.reserved.is_empty(), "a commit gives the reservation up");
    assert!(s.is_name_in_use("x"), "the tracked session holds the name");
}

#[test]
fn reservations_count_against_capacity_and_pick_free_numbers() {
    let r = registry();
    let mut tmux_names = BTreeSet::from(["3".to_owned(), "build".to_owned()]);
    let a = r.reserve_new(None, 2, &tmux_names).unwrap();
    assert_eq!(a.tmux_name(), "4");
    let b = r.reserve_new(None, 2, &tmux_names).unwrap();
    assert_eq!(b.tmux_name(), "5");
    assert!(matches!(
        r.reserve_new(None, 2, &tmux_names),
        Err(SupervisorError::Capacity { max: 2 })
    ));
    // tmux had "5" already: the reservation moves on, its id stays.
    tmux_names.insert("5".to_owned());
    let moved = r.rename_reservation(b, &tmux_names);
    assert_eq!((moved.id(), moved.tmux_name()), (SessionId(2), "6"));
    assert!(!r.lock().reserved.contains_key("5"));
    drop((a, moved));
    assert!(r.lock().reserved.is_empty());
}

#[test]
fn existing_sessions_are_reserved_once_and_keep_a_detached_id() {
    let r = registry();
    r.lock()
        .detached
        .insert("parked".into(), parked("parked", 7));
    let (_, _tx) = track(&r, "live");
    let in_flight = r
        .reserve_existing("new", Some(TmuxSessionId(9)), None)
        .unwrap();
    // (name, capacity checked with, answer)
    let cases: [(&str, Option<usize>, Result<SessionId, &str>); 5] = [
        ("live", None, Err("already tracked")),
        ("new", None, Err("already tracked")),
        ("parked", None, Ok(SessionId(7))),
        ("other", Some(2), Err("capacity")),
        ("other", None, Ok(SessionId(3))),
    ];
    for (name, max, want) in cases {
        let got = r.reserve_existing(name, None, max);
        let got = got.as_ref().map(Reservation::id).map_err(|e| match e {
            SupervisorError::AlreadyTracked { .. } => "already tracked",
            SupervisorError::Capacity { .. } => "capacity",
            _ => "other",
        });
        assert_eq!(got, want, "{name} {max:?}");
    }
    assert!(r.lock().reserved_tmux_ids.contains(&TmuxSessionId(9)));
    drop(in_flight);
    assert!(r.lock().reserved_tmux_ids.is_empty());
}

#[test]
fn a_restore_takes_its_name_and_id_back_unless_taken() {
    let r = registry();
    let (live, _tx) = track(&r, "live");
    let _pending = r
        .reserve_new(Some("pending"), 10, &BTreeSet::new())
        .unwrap();
    // (id, name, max, answer)
    let cases = [
        (SessionId(9), "live", 10, "already tracked"),
        (SessionId(9), "pending", 10, "name taken"),
        (live, "elsewhere", 10, "conflict"),
        (SessionId(9), "free", 2, "capacity"),
        (SessionId(9), "free", 10, "ok"),
    ];
    for (id, name, max, want) in cases {
        let got = match r.reserve_restore(id, name, max) {
            Ok(reservation) => {
                assert_eq!(reservation.id(), id);
                "ok"
            }
            Err(SupervisorError::AlreadyTracked { .. }) => "already tracked",
            Err(SupervisorError::NameTaken(_)) => "name taken",
            Err(SupervisorError::Conflict(_)) => "conflict",
            Err(SupervisorError::Capacity { .. }) => "capacity",
            Err(e) => panic!("{e}"),
        };
        assert_eq!(got, want, "{id} {name}");
    }
}

#[test]
fn a_rename_heard_while_attaching_is_applied_at_the_commit() {
    let r = registry();
    let reservation = r.reserve_new(Some("old"), 10, &BTreeSet::new()).unwrap();
    let id = reservation.id();
    assert_eq!(r.rename(id, "new"), None, "not attaching: nothing kept");
    let summary = SessionSummary {
        session_id: id,
        tmux_name: "old".into(),
        created_at: DateTime::UNIX_EPOCH,
        ended_at: None,
        queued_inputs: 0,
        thought: None,
        actor: ActorSummary::without_client(
            SessionState::Starting,
            StateReason::Attaching,
            Utc::now(),
            (80, 24),
        ),
    };
    r.begin_attach(summary);
    assert_eq!(r.rename(id, "new"), None, "kept for the commit");
    let (new, _tx) = new_entry(1);
    let Commit::Tracked { renamed, .. } = r.commit(reservation, new, None) else {
        panic!("not closing");
    };
    assert_eq!(renamed, Some(("old".to_owned(), "new".to_owned())));
    r.end_attach(id);
    assert!(matches!(r.lookup(id), Lookup::Live(_, name) if name == "new"));
    assert_eq!(r.rename(id, "new"), None, "same name: no rename");
    assert_eq!(r.rename(id, "newer"), Some("new".to_owned()));
}

#[test]
fn a_closing_registry_lets_a_committed_session_go() {
    let r = registry();
    let reservation = r.reserve_new(Some("late"), 10, &BTreeSet::new()).unwrap();
    let id = reservation.id();
    assert!(r.close().is_empty());
    let (new, _tx) = new_entry(1);
    assert!(matches!(
        r.commit(reservation, new, None),
        Commit::Closing(_)
    ));
    assert!(matches!(r.lookup(id), Lookup::Untracked));
    assert!(r.lock().reserved.is_empty());
}

#[test]
fn one_kill_at_a_time() {
    let r = registry();
    let (id, _tx) = track(&r, "a");
    // (step, answer)
    let steps: [(&str, Result<(), MarkEnding>); 5] = [
        ("mark", Ok(())),
        ("mark", Err(MarkEnding::AlreadyEnding)),
        ("unmark", Ok(())),
        ("mark", Ok(())),
        ("mark other", Err(MarkEnding::NotTracked)),
    ];
    for (step, want) in steps {
        let got = match step {
            "mark" => r.mark_ending(id),
            "unmark" => {
                r.unmark_ending(id);
                Ok(())
            }
            _ => r.mark_ending(SessionId(99)),
        };
        assert_eq!(got, want, "{step}");
    }
    assert_eq!(r.exit_meets(id, 1), ExitMeets::Nothing, "an ending session");
}

#[test]
fn an_exit_meets_the_current_actor_an_attach_or_nothing() {
    let r = registry();
    let (id, _tx) = track(&r, "a");
    let attaching = r.reserve_new(Some("b"), 10, &BTreeSet::new()).unwrap();
    let cases = [
        (id, 1, ExitMeets::Current("a".into())),
        (id, 2, ExitMeets::Nothing),
        (attaching.id(), 1, ExitMeets::Attaching),
        (SessionId(99), 1, ExitMeets::Nothing),
    ];
    for (id, actor, want) in cases {
        assert_eq!(r.exit_meets(id, actor), want, "{id} {actor}");
    }
}

#[test]
fn a_detached_session_keeps_its_id_for_a_later_adopt() {
    let r = registry();
    let (id, _tx) = track(&r, "a");
    let entry = r.detach(id).expect("tracked");
    assert_eq!(entry.tmux_name(), "a");
    assert!(r.detach(id).is_none());
    assert_eq!(r.detached("a").map(|s| s.session_id), Some(id));
    let again = r.reserve_existing("a", None, None).unwrap();
    assert_eq!(again.id(), id);
    let (new, _tx) = new_entry(1);
    let Commit::Tracked { .. } = r.commit(again, new, None) else {
        panic!("not closing");
    };
    assert!(r.detached("a").is_none(), "live again, not detached");
}

#[test]
fn an_end_untracks_then_finishes() {
    let r = registry();
    let (a, _ta) = track(&r, "a");
    let (b, _tb) = track(&r, "b");
    let thought = Thought {
        text: "t".into(),
        state: None,
        tokens_in: None,
        tokens_out: None,
        updated_at: DateTime::UNIX_EPOCH,
    };
    for id in [a, b] {
        r.put_thought(id, thought.clone(), |_| false, |_| ());
    }
    let now = Instant::now();
    assert!(
        r.untrack(a, Some(2), false, now, |_| ()).is_none(),
        "an old actor's end"
    );
    let gone = r
        .untrack(a, Some(1), false, now, |f| f.thoughts.len())
        .unwrap();
    assert_eq!(gone.thought, Some(thought.clone()));
    assert_eq!(gone.thoughts_written, Some(1), "rewritten without it");
    assert!(r.is_finishing(a));
    assert!(r.untrack(a, None, false, now, |_| ()).is_none(), "once");
    assert!(!r.finish(a), "b is still tracked");
    assert!(!r.is_finishing(a));
    // An attach that failed: kept detached, and its thought with it.
    let failed = r.untrack(b, None, true, now, |_| ()).unwrap();
    assert_eq!(failed.thoughts_written, None);
    assert_eq!(r.detached("b").map(|s| s.session_id), Some(b));
    assert!(r.finish(b), "nothing tracked or finishing");
    assert!(r.lock().ended.contains_key("a"));
}

#[test]
fn a_program_that_exited_frees_its_slot_at_once() {
    let r = registry();
    let (_, tx) = track(&r, "a");
    assert_eq!(r.lock().occupancy(), 1);
    tx.send_replace(view(SessionState::Exited));
    assert_eq!(r.lock().occupancy(), 0, "read from the actor's state");
}

/// A queue's life: each step, then whether an item is taken (its text),
/// and the queue left.
#[test]
fn queued_input_goes_one_item_per_report() {
    let r = registry();
    let (id, tx) = track(&r, "a");
    let at = DateTime::UNIX_EPOCH;
    assert_eq!(r.enqueue(id, "one", true, InputWhen::Idle, at), Ok(false));
    assert_eq!(r.take_next(id).map(|i| i.text), None, "starting: not ready");
    tx.send_replace(view(SessionState::Idle));
    assert_eq!(r.enqueue(id, "two", true, InputWhen::Idle, at), Ok(true));
    let one = r.take_next(id).expect("idle");
    assert_eq!((one.text.as_str(), one.started, one.id), ("one", true, 1));
    assert!(r.take_next(id).is_none(), "one at a time");
    r.delivered(id);
    assert!(
        r.take_next(id).is_none(),
        "the actor has not reported since"
    );
    assert!(
        r.reported(id, 2, &view(SessionState::Idle)).is_none(),
        "old actor"
    );
    assert!(r.reported(id, 1, &view(SessionState::Idle)).is_some());
    let two = r.take_next(id).expect("a report came");
    assert_eq!(two.text, "two");
    assert_eq!(
        r.cancel_queued(id, two.id).map(|_| ()),
        Err(QueueRefusal::Started)
    );
    r.delivery_postponed(id);
    let left = r.queued(id).unwrap();
    assert_eq!(
        (left.len(), left[0].started),
        (1, false),
        "waits, unstarted"
    );
    let (cancelled, name) = r.cancel_queued(id, two.id).unwrap();
    assert_eq!((cancelled.text.as_str(), name.as_str()), ("two", "a"));
    assert_eq!(
        r.cancel_queued(id, two.id).map(|_| ()),
        Err(QueueRefusal::NoSuchItem)
    );
    for _ in 0..MAX_QUEUED_INPUTS {
        r.enqueue(id, "x", false, InputWhen::Waiting, at).unwrap();
    }
    assert_eq!(
        r.enqueue(id, "x", false, InputWhen::Waiting, at),
        Err(QueueRefusal::Full)
    );
    assert_eq!(
        r.enqueue(SessionId(99), "x", false, InputWhen::Idle, at),
        Err(QueueRefusal::Untracked)
    );
}

#[test]
fn a_report_rewrites_the_file_only_when_attention_changed() {
    let r = registry();
    let (id, _tx) = track(&r, "a");
    let raised = StateView {
        attention: Some(Attention {
            reason: crate::session::AttentionReason::Bell,
            since: DateTime::UNIX_EPOCH,
            text: None,
        }),
        ..view(SessionState::Idle)
    };
    let changed = |v: &StateView| r.reported(id, 1, v).unwrap().attention_changed;
    assert!(!changed(&view(SessionState::Idle)));
    assert!(changed(&raised));
    assert!(!changed(&raised));
    let file = r.write_file(|f| f);
    assert!(file.sessions[0].attention.is_some(), "persisted");
    assert!(changed(&view(SessionState::Working)));
}

#[test]
fn an_older_thought_never_replaces_a_newer_one() {
    let r = registry();
    let (id, _tx) = track(&r, "a");
    let thought = |s: i64| Thought {
        text: s.to_string(),
        state: None,
        tokens_in: None,
        tokens_out: None,
        updated_at: DateTime::from_timestamp(s, 0).unwrap(),
    };
    let newer = |at: i64| move |t: &Thought| t.updated_at.timestamp() > at;
    let (kept, applied, written) = r.put_thought(id, thought(10), newer(10), |_| ());
    assert_eq!(
        (kept.text.as_str(), applied, written),
        ("10", true, Some(()))
    );
    let (kept, applied, written) = r.put_thought(id, thought(5), newer(5), |_| ());
    assert_eq!((kept.text.as_str(), applied, written), ("10", false, None));
}

#[test]
fn detached_sessions_move_to_their_new_name_unless_it_is_taken() {
    let r = Registry::new(1);
    let mut s = r.lock();
    for name in ["parked", "other"] {
        s.detached.insert(name.to_owned(), parked(name, 2));
    }
    s.rename_detached("parked", "other");
    assert_eq!(s.detached["parked"].tmux_name, "parked");
    s.rename_detached("parked", "moved");
    assert_eq!(s.detached.keys().collect::<Vec<_>>(), ["moved", "other"]);
    assert_eq!(s.detached["moved"].tmux_name, "moved");
}

#[test]
fn startup_keeps_ids_in_use_and_moves_the_counter_past_the_file() {
    let r = registry();
    let _new = r.reserve_new(Some("new"), 10, &BTreeSet::new()).unwrap();
    r.lock()
        .detached
        .insert("parked".into(), parked("parked", 2));
    let mut tagged = vec![
        ("a".to_owned(), SessionId(1)),
        ("b".to_owned(), SessionId(2)),
        ("c".to_owned(), SessionId(3)),
    ];
    let alive = parked("kept", 5);
    r.merge_startup(&mut tagged, 9, std::slice::from_ref(&alive));
    assert_eq!(
        tagged,
        [("c".to_owned(), SessionId(3))],
        "1 and 2 are in use"
    );
    assert_eq!(r.lock().allocate_id(), SessionId(9));
    assert_eq!(r.detached("kept").map(|s| s.session_id), Some(SessionId(5)));
}

#[test]
fn ids_of_ended_sessions_kept_are_not_reused() {
    let back = Registry::restored(RegistryFile::empty(), BTreeMap::new(), [SessionId(7)]);
    assert_eq!(back.lock().allocate_id(), SessionId(8));
}
