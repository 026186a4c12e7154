//! Label sets and label values: every value comes from tmuxd's own
//! vocabulary, so no family can grow without bound.

use prometheus_client::encoding::EncodeLabelSet;

use super::{DropReason, StoreFile, StreamKind};

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub(super) struct StateLabels {
    pub(super) state: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub(super) struct ReasonLabels {
    pub(super) reason: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub(super) struct KindLabels {
    pub(super) kind: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub(super) struct TmuxLabels {
    pub(super) command: String,
    pub(super) via: &'static str,
    pub(super) outcome: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub(super) struct TmuxLatencyLabels {
    pub(super) command: String,
    pub(super) via: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub(super) struct HttpLabels {
    pub(super) route: String,
    pub(super) method: &'static str,
    pub(super) status: u16,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub(super) struct HttpLatencyLabels {
    pub(super) route: String,
    pub(super) method: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub(super) struct StreamLabels {
    pub(super) stream: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub(super) struct DropLabels {
    pub(super) stream: &'static str,
    pub(super) reason: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub(super) struct FileLabels {
    pub(super) file: &'static str,
}

pub(super) fn stream_label(stream: StreamKind) -> &'static str {
    match stream {
        StreamKind::Output => "output",
        StreamKind::Screen => "screen",
        StreamKind::Events => "events",
    }
}

pub(super) fn drop_label(reason: DropReason) -> &'static str {
    match reason {
        DropReason::SlowClient => "slow_client",
        DropReason::OutputSkipped => "output_skipped",
        DropReason::StreamLimit => "stream_limit",
    }
}

pub(super) fn file_label(file: StoreFile) -> &'static str {
    match file {
        StoreFile::Registry => "registry",
        StoreFile::Thoughts => "thoughts",
        StoreFile::Ended => "ended",
        StoreFile::Restore => "restore",
        StoreFile::Events => "events",
    }
}

/// The methods the API answers; anything else shares one label.
pub(super) fn http_method(method: &str) -> &'static str {
    const KNOWN: [&str; 7] = ["GET", "HEAD", "POST", "PUT", "DELETE", "PATCH", "OPTIONS"];
    KNOWN.into_iter().find(|m| *m == method).unwrap_or("other")
}

/// A label value from tmuxd's own vocabulary (command names, event kinds,
/// reasons); anything that does not look like one becomes `other`, so a
/// label can never grow without bound.
pub(super) fn bounded(value: &str) -> String {
    let word = |b: u8| b.is_ascii_alphanumeric() || b == b'_' || b == b'-';
    if !value.is_empty() && value.len() <= 40 && value.bytes().all(word) {
        value.to_owned()
    } else {
        "other".to_owned()
    }
}
