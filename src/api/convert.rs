//! From the daemon's own types to the wire's, and back for requests. Each
//! conversion names every field and variant: a change inside the daemon
//! fails to compile here until the wire model (and so the OpenAPI
//! document) says what becomes of it.

use crate::id::FleetId;
use crate::session::{self, ActorSummary, Region, ScreenSnapshot};
use crate::store;
use crate::supervisor;
use crate::wire::{
    Acknowledger, Attention, AttentionReason, CopyModeView, Cursor, DeleteMode, DeleteResponse,
    InputResponse, MatchedLine, PaneRect, QueueItem, SessionState, SessionSummary, Snapshot,
    SnapshotFormat, SnapshotPane, Thought, Transport, WaitResponse, When,
};
use crate::wire::{
    RestoreMode, StorageFailure, StorageReport, StorageStatus, StorageWrite, UntrackedReason,
    UntrackedSession,
};

impl From<supervisor::SessionSummary> for SessionSummary {
    fn from(summary: supervisor::SessionSummary) -> Self {
        let supervisor::SessionSummary {
            session_id,
            tmux_name,
            created_at,
            ended_at,
            queued_inputs,
            thought,
            actor,
        } = summary;
        let ActorSummary {
            state,
            state_reason,
            state_since,
            current_command,
            agent,
            command_line,
            cwd,
            title,
            cols,
            rows,
            last_activity_at,
            transport,
            subscribers,
            latest_seq,
            attention,
            exit_status,
            exit_signal,
            exit_unknown,
            keeps_exit: _,
            last_command_status,
            live,
        } = actor;
        SessionSummary {
            session_id: FleetId::local(session_id),
            tmux_name,
            state: state.into(),
            state_reason: state_reason.as_str().to_owned(),
            state_since,
            attention: attention.map(Attention::from),
            current_command,
            agent: agent.map(|a| a.as_str().to_owned()),
            command_line,
            cwd,
            title,
            cols,
            rows,
            created_at,
            ended_at,
            exit_status,
            exit_signal,
            exit_unknown: exit_unknown.map(|u| u.as_str().to_owned()),
            last_command_status,
            last_activity_at,
            transport: transport.into(),
            subscribers,
            latest_seq,
            live,
            queued_inputs,
            thought: thought.map(Thought::from),
            host: None,
            stale: false,
            stale_since: None,
        }
    }
}

impl From<session::SessionState> for SessionState {
    fn from(state: session::SessionState) -> Self {
        use session::SessionState as S;
        match state {
            S::Starting => SessionState::Starting,
            S::Idle => SessionState::Idle,
            S::Working => SessionState::Working,
            S::Waiting => SessionState::Waiting,
            S::Exited => SessionState::Exited,
        }
    }
}

impl From<session::Attention> for Attention {
    fn from(attention: session::Attention) -> Self {
        let session::Attention {
            reason,
            since,
            text,
        } = attention;
        use session::AttentionReason as R;
        let reason = match reason {
            R::Bell => AttentionReason::Bell,
            R::Notification => AttentionReason::Notification,
            R::NeedsInput => AttentionReason::NeedsInput,
            R::LongSilence => AttentionReason::LongSilence,
        };
        let text = text.map(|t| t.as_str().to_owned());
        Attention {
            reason,
            since,
            text,
        }
    }
}

impl From<supervisor::WaitOutcome> for WaitResponse {
    fn from(outcome: supervisor::WaitOutcome) -> Self {
        let supervisor::WaitOutcome { session, matched } = outcome;
        WaitResponse {
            session: session.into(),
            matched: matched.map(|m| {
                let supervisor::MatchedLine { row, line, text } = m;
                MatchedLine { row, line, text }
            }),
        }
    }
}

impl From<supervisor::QueueItem> for QueueItem {
    fn from(item: supervisor::QueueItem) -> Self {
        let supervisor::QueueItem {
            id,
            text,
            submit,
            when,
            queued_at,
            started,
        } = item;
        QueueItem {
            id,
            text,
            submit,
            when: match when {
                store::InputWhen::Idle => When::Idle,
                store::InputWhen::Waiting => When::Waiting,
            },
            queued_at,
            started,
        }
    }
}

impl From<session::Transport> for Transport {
    fn from(transport: session::Transport) -> Self {
        match transport {
            session::Transport::Attached => Transport::Attached,
            session::Transport::Reconnecting => Transport::Reconnecting,
            session::Transport::Disconnected => Transport::Disconnected,
        }
    }
}

impl From<store::Thought> for Thought {
    fn from(thought: store::Thought) -> Self {
        let store::Thought {
            text,
            state,
            tokens_in,
            tokens_out,
            updated_at,
        } = thought;
        Thought {
            text,
            state,
            tokens_in,
            tokens_out,
            updated_at,
        }
    }
}

impl From<supervisor::DeleteOutcome> for DeleteResponse {
    fn from(outcome: supervisor::DeleteOutcome) -> Self {
        DeleteResponse {
            session_id: FleetId::local(outcome.session_id),
            mode: match outcome.mode {
                supervisor::DeleteMode::Detach => DeleteMode::Detach,
                supervisor::DeleteMode::Kill => DeleteMode::Kill,
            },
            tmux_alive: outcome.tmux_alive,
        }
    }
}

impl From<supervisor::InputOutcome> for InputResponse {
    fn from(outcome: supervisor::InputOutcome) -> Self {
        let supervisor::InputOutcome { delivered, queued } = outcome;
        InputResponse { delivered, queued }
    }
}

impl From<session::Cursor> for Cursor {
    fn from(cursor: session::Cursor) -> Self {
        let session::Cursor { row, col, visible } = cursor;
        Cursor { row, col, visible }
    }
}

impl From<session::Snapshot> for Snapshot {
    fn from(snapshot: session::Snapshot) -> Self {
        let session::Snapshot {
            session_id,
            seq,
            screen,
        } = snapshot;
        let ScreenSnapshot {
            cols,
            rows,
            pane,
            cursor,
            alternate_screen,
            title,
            lines,
            wrapped: _,
            copy_mode,
        } = screen;
        Snapshot {
            session_id: FleetId::local(session_id),
            seq,
            cols,
            rows,
            pane: pane.map(|p| PaneRect {
                left: p.left,
                top: p.top,
                cols: p.cols,
                rows: p.rows,
            }),
            cursor: cursor.into(),
            alternate_screen,
            title,
            lines,
            ended: false,
            copy_mode: copy_mode.map(|c| CopyModeView {
                pane: c.pane,
                mode: c.mode,
                position: c.position,
                history: c.history,
            }),
        }
    }
}

impl From<SessionState> for session::SessionState {
    fn from(state: SessionState) -> Self {
        use session::SessionState as S;
        match state {
            SessionState::Starting => S::Starting,
            SessionState::Idle => S::Idle,
            SessionState::Working => S::Working,
            SessionState::Waiting => S::Waiting,
            SessionState::Exited => S::Exited,
        }
    }
}

impl From<session::Acknowledger> for Acknowledger {
    fn from(by: session::Acknowledger) -> Self {
        match by {
            session::Acknowledger::Dashboard => Acknowledger::Dashboard,
            session::Acknowledger::TmuxClient => Acknowledger::TmuxClient,
            session::Acknowledger::Input => Acknowledger::Input,
            session::Acknowledger::PushAction => Acknowledger::PushAction,
        }
    }
}

impl From<store::RestoreMode> for RestoreMode {
    fn from(mode: store::RestoreMode) -> Self {
        match mode {
            store::RestoreMode::Shell => RestoreMode::Shell,
            store::RestoreMode::Rerun => RestoreMode::Rerun,
        }
    }
}

impl From<DeleteMode> for supervisor::DeleteMode {
    fn from(mode: DeleteMode) -> Self {
        match mode {
            DeleteMode::Detach => supervisor::DeleteMode::Detach,
            DeleteMode::Kill => supervisor::DeleteMode::Kill,
        }
    }
}

impl From<When> for supervisor::When {
    fn from(when: When) -> Self {
        match when {
            When::Now => supervisor::When::Now,
            When::Idle => supervisor::When::Idle,
            When::Waiting => supervisor::When::Waiting,
        }
    }
}

impl From<SnapshotFormat> for session::SnapshotFormat {
    fn from(format: SnapshotFormat) -> Self {
        match format {
            SnapshotFormat::Text => session::SnapshotFormat::Text,
            SnapshotFormat::Ansi => session::SnapshotFormat::Ansi,
        }
    }
}

impl From<Option<SnapshotPane>> for Region {
    fn from(pane: Option<SnapshotPane>) -> Self {
        match pane {
            None => Region::Window,
            Some(SnapshotPane::Active) => Region::ActivePane,
        }
    }
}

impl From<supervisor::StorageReport> for StorageReport {
    fn from(report: supervisor::StorageReport) -> Self {
        let supervisor::StorageReport {
            status,
            failures,
            unwritten_events,
            lost_events,
            failed_writes,
        } = report;
        StorageReport {
            status: match status {
                "ok" => StorageStatus::Ok,
                _ => StorageStatus::Degraded,
            },
            failures: failures.into_iter().map(StorageFailure::from).collect(),
            unwritten_events,
            lost_events,
            failed_writes,
        }
    }
}

impl From<store::Failure> for StorageFailure {
    fn from(failure: store::Failure) -> Self {
        let store::Failure {
            write,
            file,
            error,
            since,
            attempts,
        } = failure;
        StorageFailure {
            write: match write {
                store::Write::Events => StorageWrite::Events,
                store::Write::Registry => StorageWrite::Registry,
                store::Write::Thoughts => StorageWrite::Thoughts,
                store::Write::Ended => StorageWrite::Ended,
                store::Write::Restore => StorageWrite::Restore,
            },
            file,
            error,
            since,
            attempts,
        }
    }
}

impl From<supervisor::Untracked> for UntrackedSession {
    fn from(u: supervisor::Untracked) -> Self {
        use supervisor::UntrackedWhy;
        let created = i64::try_from(u.created).unwrap_or(0);
        UntrackedSession {
            tmux_name: u.tmux_name,
            windows: u.windows,
            attached_clients: u.attached_clients,
            created_at: chrono::DateTime::from_timestamp(created, 0).unwrap_or_default(),
            session_id: u.session_id.map(|id| id.to_string()),
            reason: match u.why {
                UntrackedWhy::Detached => UntrackedReason::Detached,
                UntrackedWhy::Excluded => UntrackedReason::Excluded,
                UntrackedWhy::InvalidName => UntrackedReason::InvalidName,
                UntrackedWhy::Pending => UntrackedReason::Pending,
            },
        }
    }
}
