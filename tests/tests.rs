//! The integration suite as one test binary: each file below is a module,
//! sharing `common` (the tmux and daemon harness) and `wire` (raw HTTP).
//! One binary links the crate once instead of once per file.

mod common;
#[path = "common/fidelity/mod.rs"]
mod fidelity;
mod wire;

mod agents;
mod attention;
mod auth;
mod bad_input;
mod cli;
mod cli_install;
mod cli_terminal;
mod cli_trust;
mod cli_ux;
mod cold;
mod connections;
mod control;
mod crash;
mod dashboard;
mod docs;
mod ended;
mod events_file;
mod exits;
mod fake_tmux;
mod fd_limit;
mod fidelity_fuzz;
mod fidelity_golden;
mod fidelity_live;
mod fleet;
mod fleet_hostile;
mod fleet_netns;
mod fuzz;
mod leaks;
mod lifecycle;
mod limits;
mod live;
mod logs;
mod metrics;
mod notify;
mod openapi;
mod push;
mod renames;
mod restore;
mod safety;
mod scale;
mod security;
mod sessions;
mod settle;
mod soak;
mod states;
mod storage;
mod streams;
mod trust;
mod version;
mod waits;
