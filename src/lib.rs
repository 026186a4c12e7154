//! tmuxd: a daemon that supervises tmux sessions.
//!
//! # Layout
//!
//! The modules in the order data flows, from tmux to the clients:
//!
//! - [`id`]: session and host ids (`sess_N`, `HOST/sess_N`), parsed once
//!   at the edge and used as types everywhere inside.
//! - [`wire`]: every type on the wire (requests, answers, events, error
//!   codes), shared by the API, the CLI and the fleet; above `id` only.
//! - [`tmux`]: the boundary with tmux. Typed commands, a forked `tmux`
//!   per command, and control clients (tmuxd's own protocol client, or a
//!   `tmux -C` child) with the per-server handshake turn; where a command
//!   runs (`tmux::route`: a lent control client, else a fork), and tmux's
//!   refusals read once into kinds (`tmux::Refusal`).
//! - [`screen`]: a terminal screen as tmux keeps it (the `vte` parser and
//!   tmux 3.3's grid semantics), fed with a pane's `%output`.
//! - [`session`]: one actor per session. It owns the session's control
//!   client and screens, judges its state (`session::state`) and reads its
//!   exits, agents and rules.
//! - [`heat`]: which sessions hold a control client of their own (hot)
//!   and which do without (cold): a pure policy and the task that applies
//!   it to the actors.
//! - [`store`]: the data dir's files (registry, events, ended records,
//!   restore plans), written atomically and privately.
//! - [`supervisor`]: the registry of sessions. Discovery, create, adopt,
//!   end and restore, the input queue and waits, and persistence through
//!   `store`.
//! - [`notify`]: webhooks, commands, ntfy and Web Push for attention and
//!   ends; [`push`]: Web Push itself (encryption, VAPID, subscriptions).
//! - [`fleet`]: the peers a hub serves beside its own sessions. A follower
//!   per peer keeps a copy of its summaries from its event stream and fans
//!   its events into the hub's log (the cursor is the largest `host_seq`
//!   recorded); an `ssh -N` forward per peer that asks for one.
//! - [`api`]: HTTP, WebSocket and SSE over the supervisor, with auth by
//!   route group; [`web`]: the dashboard's embedded assets.
//! - [`secret`]: random tokens, HMAC, and the proof a daemon gives that
//!   it holds a token before a client over TCP sends it.
//! - [`daemon`]: wires the above together and serves (TCP and the unix
//!   socket).
//! - [`cli`]: the command line, a client of the API. [`config`] and
//!   [`metrics`] are read by every layer.

pub mod api;
pub mod cli;
pub mod config;
pub mod daemon;
pub mod fleet;
pub mod heat;
pub mod id;
pub mod metrics;
pub mod notify;
pub mod push;
pub mod screen;
pub mod secret;
pub mod session;
pub mod store;
pub mod supervisor;
pub mod tmux;
pub mod web;
pub mod wire;
