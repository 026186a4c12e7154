//! tmuxd: a daemon that supervises tmux sessions.

pub mod api;
pub mod cli;
pub mod config;
pub mod daemon;
pub mod metrics;
pub mod notify;
pub mod screen;
pub mod session;
pub mod store;
pub mod supervisor;
pub mod tmux;
pub mod web;
