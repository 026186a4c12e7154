//! One control client for the whole server, lent to whoever asks tmux
//! something that is not one session's business: the heat owner's look
//! across the server, and the first look of a session adopted cold. With
//! every session cold, nothing else would carry these but a forked `tmux`
//! each (15-40 ms apiece with hundreds of clients attached, and a process
//! each: at 1,000 sessions adopted cold, thousands).
//!
//! tmux attaches every control client to some session: this one takes
//! whichever tmux lists first, asks for no output (`no-output`: none of
//! that session's bytes are written to it, so it costs tmux almost nothing
//! per loop turn), sets nothing, and sizes nothing (a control client has
//! no size until it says one). When that session goes, the client goes
//! with it, and the next command attaches it to another; with nothing to
//! ask for a while (every session hot), it lets go. It is a person's
//! tmux client attaching that tmuxd reads as someone looking, never a
//! control client, so this one acknowledges nothing.

use std::collections::BTreeMap;

use tokio::sync::{mpsc, oneshot};
use tokio_util::sync::CancellationToken;

use super::Tmux;
use super::command::{Carried, ClientFlag};
use super::control::{ClientEvent, ControlClient, ControlError, ControlOptions, Ticket};
use super::route::{Lender, LentAnswer};

/// Commands waiting for the client at once; askers wait for room.
const QUEUE: usize = 256;

struct Request {
    command: Carried,
    reply: oneshot::Sender<Result<Vec<Vec<u8>>, ControlError>>,
}

/// The handle: cheap to clone; commands go to the task that owns the client.
#[derive(Clone, Debug)]
pub struct ServerClient {
    tx: mpsc::Sender<Request>,
    live_clients: usize,
    looks: std::sync::Arc<tokio::sync::Semaphore>,
}

/// First looks at once over the client (see `ServerClient::turn`).
const LOOKS_AT_ONCE: usize = 32;

/// How long the client stays attached with nothing to ask: while any
/// session is cold, the heat owner asks every second; once every session
/// is hot, nothing does, and a client left attached would hold some
/// session, perhaps one tmuxd was told to forget, `(attached)` for good.
const IDLE: std::time::Duration = std::time::Duration::from_secs(10);

impl ServerClient {
    /// Starts the task that owns the client (attached on the first
    /// command); it lets the client go when `cancel` fires.
    pub fn spawn(
        tmux: Tmux,
        live_clients: usize,
        cancel: CancellationToken,
        tasks: &tokio_util::task::TaskTracker,
    ) -> ServerClient {
        let (tx, rx) = mpsc::channel(QUEUE);
        let options = ControlOptions {
            flags: vec![ClientFlag::NoOutput],
            ..ControlOptions::default()
        };
        tasks.spawn(serve(tmux, options, rx, cancel));
        ServerClient {
            tx,
            live_clients,
            looks: std::sync::Arc::new(tokio::sync::Semaphore::new(LOOKS_AT_ONCE)),
        }
    }

    /// A turn for a series of commands (a session's first look): a
    /// thousand sessions adopted at once queue no more on the one client
    /// than it answers well within a lent command's deadline.
    pub async fn turn(&self) -> tokio::sync::OwnedSemaphorePermit {
        self.looks
            .clone()
            .acquire_owned()
            .await
            .expect("the looks' semaphore is never closed")
    }

    /// The heat budget (`tmux.live_clients`) of the owner that started it:
    /// past that many sessions, one adopted starts cold.
    pub fn live_clients(&self) -> usize {
        self.live_clients
    }
}

impl Lender for ServerClient {
    /// None when no session can be attached to, or the client went before
    /// answering: the asker forks instead.
    async fn run_lent(&self, command: Carried) -> LentAnswer {
        let (reply, answer) = oneshot::channel();
        self.tx.send(Request { command, reply }).await.ok()?;
        answer.await.ok()
    }
}

async fn serve(
    tmux: Tmux,
    options: ControlOptions,
    mut requests: mpsc::Receiver<Request>,
    cancel: CancellationToken,
) {
    let mut client: Option<ControlClient> = None;
    let mut waiting: BTreeMap<Ticket, oneshot::Sender<_>> = BTreeMap::new();
    let mut last_asked = tokio::time::Instant::now();
    loop {
        let idle = client.is_some() && waiting.is_empty();
        tokio::select! {
            _ = cancel.cancelled() => break,
            _ = tokio::time::sleep_until(last_asked + IDLE), if idle => {
                if let Some(client) = client.take() {
                    client.hang_up().await;
                }
            }
            request = requests.recv() => {
                let Some(Request { command, reply }) = request else {
                    break;
                };
                last_asked = tokio::time::Instant::now();
                if client.is_none() {
                    client = attach_any(&tmux, &options).await;
                }
                // No client: the reply is dropped, and the asker forks.
                let Some(attached) = client.as_mut() else {
                    continue;
                };
                match attached.send(&command).await {
                    Ok(ticket) => {
                        waiting.insert(ticket, reply);
                    }
                    Err(e) => {
                        let _ = reply.send(Err(e));
                    }
                }
            }
            event = next_event(&mut client) => match event {
                Some(ClientEvent::Reply { ticket, result }) => {
                    if let Some(reply) = waiting.remove(&ticket) {
                        let _ = reply.send(result);
                    }
                }
                Some(ClientEvent::Notification(_)) => {}
                None => {
                    // Its session went: the askers still waiting fork.
                    client = None;
                    waiting.clear();
                }
            },
        }
    }
    if let Some(client) = client {
        client.hang_up().await;
    }
}

/// The client's next event; never, while there is no client.
async fn next_event(client: &mut Option<ControlClient>) -> Option<ClientEvent> {
    match client {
        Some(client) => client.next_event().await,
        None => std::future::pending().await,
    }
}

/// A client attached to the first session tmux lists (one fork to learn
/// its name); None when there is no session or the attach fails.
async fn attach_any(tmux: &Tmux, options: &ControlOptions) -> Option<ControlClient> {
    let panes = tmux.list_panes().await.ok()?;
    let name = panes.first()?.session_name.clone();
    match ControlClient::attach(tmux, &name, options.clone()).await {
        Ok(client) => Some(client),
        Err(e) => {
            tracing::debug!(session = %name, "the server-wide client cannot attach: {e}");
            None
        }
    }
}
