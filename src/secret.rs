//! Secrets: random tokens from the kernel, comparing them in constant
//! time, HMAC-SHA256, and the proof a daemon gives that it holds a token.
//!
//! **The proof.** A client that reaches a daemon over TCP cannot tell from
//! the address who answers: another local user may have bound it first (a
//! stopped daemon, a port picked and released). So before it sends a token
//! or acts on an answer, a client sends a fresh random nonce to the open
//! route [`PROOF_PATH`] and checks the answer: the HMAC of the nonce under
//! the token it holds. Only a daemon configured with that token can
//! compute it; the token itself never crosses the wire first.
//!
//! What it does not stop: a relay. An impostor that can itself reach the
//! real daemon could pass the nonce on and the answer back. A forward
//! (ssh, a TLS proxy) is such a relay by design, so the proof is not bound
//! to an address; the rule that closes the relay is where clients connect
//! (the CLI's unix socket by default, the hub's ssh forward on a unix
//! socket in a private directory), never an address another user can bind.

mod hmac;

use serde::{Deserialize, Serialize};

pub use hmac::hmac_sha256;

/// The open route where a daemon proves which tokens it holds.
pub const PROOF_PATH: &str = "/v1/auth/proof";

/// Random bytes in a nonce: as many as in a token.
const NONCE_BYTES: usize = 32;
/// The longest nonce a daemon answers for, in hex digits.
pub const MAX_NONCE_HEX: usize = 128;
/// The shortest: fewer random bits would make answers worth collecting.
pub const MIN_NONCE_HEX: usize = 32;

/// Bound into every proof, so an answer can never be mistaken for any
/// other HMAC made with the same token (a webhook signature, say).
const PROOF_CONTEXT: &[u8] = b"tmuxd proof v1\0";

/// `bytes` random bytes from the kernel, as lowercase hex.
pub fn random_hex(bytes: usize) -> String {
    let mut buf = vec![0u8; bytes];
    let mut filled = 0;
    while filled < bytes {
        // SAFETY: getrandom writes at most `len` bytes into the buffer we own.
        let n = unsafe { libc::getrandom(buf[filled..].as_mut_ptr().cast(), bytes - filled, 0) };
        if n < 0 {
            let error = std::io::Error::last_os_error();
            assert!(
                error.kind() == std::io::ErrorKind::Interrupted,
                "the kernel gave no random bytes: {error}"
            );
            continue;
        }
        filled += n as usize;
    }
    hex(&buf)
}

/// Lowercase hex.
pub fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// Equal, in a time that depends only on the lengths.
pub fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// A fresh nonce for [`PROOF_PATH`].
pub fn new_nonce() -> String {
    random_hex(NONCE_BYTES)
}

/// Whether a daemon should answer for this nonce: hex, of a sane length.
pub fn valid_nonce(nonce: &str) -> bool {
    (MIN_NONCE_HEX..=MAX_NONCE_HEX).contains(&nonce.len())
        && nonce.bytes().all(|b| b.is_ascii_hexdigit())
}

/// The proof of holding `token`, for `nonce`.
pub fn prove(token: &str, nonce: &str) -> String {
    let message = [PROOF_CONTEXT, nonce.as_bytes()].concat();
    hex(&hmac_sha256(token.as_bytes(), &message))
}

/// The answer of [`PROOF_PATH`]: a proof for each token the daemon holds.
#[derive(Clone, Debug, Default, Serialize, Deserialize, utoipa::ToSchema)]
pub struct Proofs {
    /// For the read-write token; absent when the daemon has none
    /// (`auth.insecure_no_auth`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub read_write: Option<String>,
    /// For the read token, when one is configured.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub read: Option<String>,
}

impl Proofs {
    /// The daemon's answer for `nonce`.
    pub fn answer(nonce: &str, read_write: Option<&str>, read: Option<&str>) -> Proofs {
        Proofs {
            read_write: read_write.map(|token| prove(token, nonce)),
            read: read.map(|token| prove(token, nonce)),
        }
    }

    /// Whether these proofs show the daemon holds `token`.
    pub fn shows(&self, token: &str, nonce: &str) -> bool {
        let expected = prove(token, nonce);
        [&self.read_write, &self.read]
            .into_iter()
            .flatten()
            .any(|proof| constant_time_eq(proof.as_bytes(), expected.as_bytes()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_daemon_with_the_token_proves_it_and_no_other_does() {
        let nonce = new_nonce();
        assert!(valid_nonce(&nonce));
        let real = Proofs::answer(&nonce, Some("rw-token"), Some("read-token"));
        assert!(real.shows("rw-token", &nonce));
        assert!(real.shows("read-token", &nonce));
        assert!(!real.shows("guess", &nonce));
        let replayed = Proofs::answer(&new_nonce(), Some("rw-token"), None);
        assert!(!replayed.shows("rw-token", &nonce), "bound to the nonce");
        let without_tokens = Proofs::answer(&nonce, None, None);
        assert!(!without_tokens.shows("rw-token", &nonce));
        let echoed = Proofs {
            read_write: Some(nonce.clone()),
            read: Some(String::new()),
        };
        assert!(!echoed.shows("rw-token", &nonce));
    }

    #[test]
    fn nonces_are_hex_of_a_sane_length() {
        assert!(valid_nonce(&"a".repeat(MIN_NONCE_HEX)));
        assert!(valid_nonce(&"F".repeat(MAX_NONCE_HEX)));
        assert!(!valid_nonce(&"a".repeat(MIN_NONCE_HEX - 1)));
        assert!(!valid_nonce(&"a".repeat(MAX_NONCE_HEX + 1)));
        assert!(!valid_nonce(&format!("{}g", "a".repeat(40))));
        assert!(!valid_nonce(""));
    }

    #[test]
    fn the_proof_is_the_hmac_of_context_and_nonce() {
        let nonce = "00".repeat(16);
        let message = [PROOF_CONTEXT, nonce.as_bytes()].concat();
        assert_eq!(prove("k", &nonce), hex(&hmac_sha256(b"k", &message)));
        assert_ne!(prove("k", &nonce), prove("k2", &nonce));
    }
}
