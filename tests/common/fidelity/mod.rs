//! Screen-fidelity helpers: the scenarios both suites run, the ANSI
//! normalizer that compares colours by meaning, and the client recorder
//! behind the golden fixtures.

#![allow(dead_code)]

pub mod ansi;
pub mod recorder;
pub mod scenarios;
