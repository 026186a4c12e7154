//! Records what a session actor gets for the active pane, exactly as it
//! gets it: a control client on the session, the seed (tmux's state of the
//! pane and its captured rows) taken at attach and after every layout
//! change, and the pane's own `%output` bytes in between.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use tmuxd::session::{Captured, PaneState};
use tmuxd::tmux::command::{CaptureSeed, PaneRow, TmuxCommand, WindowPanes};
use tmuxd::tmux::control::{
    ClientEvent, ControlClient, ControlOptions, Notification, PaneId, Ticket,
};
use tmuxd::tmux::{Socket, Tmux};

use crate::common::TmuxServer;

/// A seed taken once `at_byte` bytes of output had been recorded.
#[derive(Clone, Debug)]
pub struct SeedAt {
    pub at_byte: usize,
    pub state: PaneState,
    pub captured: Captured,
}

#[derive(Default)]
struct Recording {
    output: Vec<u8>,
    seeds: Vec<SeedAt>,
    last_change: Option<Instant>,
}

pub struct Recorder {
    shared: Arc<Mutex<Recording>>,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

/// What the recorder waits for from tmux.
enum Waiting {
    Window(Ticket),
    Captures {
        state: PaneState,
        captured: Captured,
        normal: Ticket,
        alternate: Option<Ticket>,
    },
}

impl Recorder {
    pub fn attach(tmux: &TmuxServer, name: &str) -> Recorder {
        let tmuxd = Tmux::new(
            "tmux".into(),
            Socket::Name(tmux.socket.clone()),
            Some("/dev/null".into()),
            Duration::from_secs(5),
        );
        let shared = Arc::new(Mutex::new(Recording::default()));
        let (stop, stopped) = tokio::sync::oneshot::channel();
        let (ready, attached) = std::sync::mpsc::channel();
        let sink = Arc::clone(&shared);
        let name = name.to_owned();
        let thread = std::thread::spawn(move || {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .unwrap();
            runtime.block_on(record(tmuxd, name, sink, stopped, ready));
        });
        attached.recv().expect("the recorder attached");
        let recorder = Recorder {
            shared,
            stop: Some(stop),
            thread: Some(thread),
        };
        crate::common::wait_for("the first seed", || {
            (!recorder.shared.lock().unwrap().seeds.is_empty()).then_some(())
        });
        recorder
    }

    pub fn len(&self) -> usize {
        self.shared.lock().unwrap().output.len()
    }

    pub fn output(&self) -> Vec<u8> {
        self.shared.lock().unwrap().output.clone()
    }

    pub fn seeds(&self) -> Vec<SeedAt> {
        self.shared.lock().unwrap().seeds.clone()
    }

    /// Polls until nothing has arrived for `quiet`.
    pub fn wait_quiet(&self, quiet: Duration) {
        let deadline = Instant::now() + crate::common::PATIENCE;
        loop {
            std::thread::sleep(Duration::from_millis(10));
            let last = self.shared.lock().unwrap().last_change;
            if last.is_none_or(|at| at.elapsed() >= quiet) {
                return;
            }
            assert!(Instant::now() < deadline, "pane output never settled");
        }
    }
}

impl Drop for Recorder {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

async fn record(
    tmux: Tmux,
    name: String,
    shared: Arc<Mutex<Recording>>,
    mut stopped: tokio::sync::oneshot::Receiver<()>,
    ready: std::sync::mpsc::Sender<()>,
) {
    let mut client = ControlClient::attach(&tmux, &name, ControlOptions::default())
        .await
        .expect("attach a control client");
    let _ = ready.send(());
    let look = WindowPanes {
        session: name.clone(),
    };
    let mut pane = None;
    let mut waiting = Some(Waiting::Window(client.send(&look).await.unwrap()));
    loop {
        let event = tokio::select! {
            _ = &mut stopped => break,
            event = client.next_event() => match event {
                Some(event) => event,
                None => break,
            },
        };
        let note = |shared: &Arc<Mutex<Recording>>| {
            shared.lock().unwrap().last_change = Some(Instant::now());
        };
        match event {
            ClientEvent::Notification(Notification::Output { pane: from, data })
            | ClientEvent::Notification(Notification::ExtendedOutput {
                pane: from, data, ..
            }) => {
                let seeding = matches!(waiting, Some(Waiting::Captures { .. }));
                if Some(from) == pane && !seeding {
                    shared.lock().unwrap().output.extend_from_slice(&data);
                }
                note(&shared);
            }
            ClientEvent::Notification(Notification::LayoutChange { .. }) => {
                note(&shared);
                if waiting.is_none() {
                    waiting = Some(Waiting::Window(client.send(&look).await.unwrap()));
                }
            }
            ClientEvent::Notification(_) => {}
            ClientEvent::Reply { ticket, result } => {
                let body = result.expect("tmux answers the recorder");
                waiting = match waiting.take() {
                    Some(Waiting::Window(t)) if t == ticket => {
                        let rows = look.parse(&body).unwrap();
                        let row = rows.iter().find(|r| r.active).unwrap().clone();
                        pane = Some(row.pane);
                        Some(capture(&mut client, &row).await)
                    }
                    Some(Waiting::Captures {
                        state,
                        mut captured,
                        normal,
                        alternate,
                    }) => {
                        let text = body.join(&b'\n');
                        if ticket == normal && state.alternate_on {
                            captured.alternate = Some(text);
                        } else {
                            captured.normal = text;
                        }
                        let done = ticket == alternate.unwrap_or(normal);
                        if done {
                            let mut recording = shared.lock().unwrap();
                            let at_byte = recording.output.len();
                            recording.seeds.push(SeedAt {
                                at_byte,
                                state,
                                captured,
                            });
                            recording.last_change = Some(Instant::now());
                            None
                        } else {
                            Some(Waiting::Captures {
                                state,
                                captured,
                                normal,
                                alternate,
                            })
                        }
                    }
                    other => other,
                };
            }
        }
    }
    client.close().await;
}

/// Asks for the pane's rows, as the actor does (the normal screen behind an
/// alternate one too).
async fn capture(client: &mut ControlClient, row: &PaneRow) -> Waiting {
    let state = row.state.clone();
    let pane: PaneId = row.pane;
    let normal = client
        .send(&CaptureSeed {
            pane,
            alternate: false,
        })
        .await
        .unwrap();
    let alternate = if row.state.alternate_on {
        Some(
            client
                .send(&CaptureSeed {
                    pane,
                    alternate: true,
                })
                .await
                .unwrap(),
        )
    } else {
        None
    };
    Waiting::Captures {
        state,
        captured: Captured::default(),
        normal,
        alternate,
    }
}
