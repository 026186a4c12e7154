//! Voluntary application server identification (RFC 8292): tmuxd's own
//! P-256 key, made at first start into a 0600 file in the data dir, and
//! the short-lived ES256 JWT it signs for each push service. The browser
//! subscribes with the public key, so a push service takes messages for
//! that subscription from the holder of this key only. The JWT is three
//! base64url parts written here (a JWT crate would bring its own key
//! formats for one fixed algorithm); `p256`'s ECDSA signs.

use std::path::{Path, PathBuf};

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use p256::ecdsa::signature::Signer;
use p256::ecdsa::{Signature, SigningKey};

use crate::store::{StoreError, write_atomic};

/// The key file's name in the data dir.
pub const KEY_FILE: &str = "push-vapid.key";
/// How long a signed token is good for (RFC 8292 allows up to 24 hours).
const TOKEN_TTL_S: i64 = 12 * 3600;

#[derive(Debug, thiserror::Error)]
pub enum VapidError {
    #[error("{path}: {source}")]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error(
        "{path}: not a VAPID key (one line of base64url, 32 bytes); move it aside to make a new one"
    )]
    Malformed { path: PathBuf },
    #[error(transparent)]
    Write(#[from] StoreError),
}

/// The application server's key pair. The private half never leaves it.
#[derive(Clone)]
pub struct Vapid {
    key: SigningKey,
    /// The public key, uncompressed, base64url: what browsers subscribe with.
    public: String,
}

impl std::fmt::Debug for Vapid {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Vapid")
            .field("public", &self.public)
            .finish()
    }
}

impl Vapid {
    /// Reads the key from `data_dir`, or makes one and writes it (0600,
    /// atomically) when there is none.
    pub fn load_or_create(data_dir: &Path) -> Result<Vapid, VapidError> {
        let path = data_dir.join(KEY_FILE);
        match std::fs::read_to_string(&path) {
            Ok(text) => {
                let bytes = URL_SAFE_NO_PAD
                    .decode(text.trim())
                    .map_err(|_| VapidError::Malformed { path: path.clone() })?;
                let key = SigningKey::from_slice(&bytes)
                    .map_err(|_| VapidError::Malformed { path: path.clone() })?;
                Ok(Vapid::from_key(key))
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                let key = SigningKey::random(&mut rand_core::OsRng);
                let line = format!("{}\n", URL_SAFE_NO_PAD.encode(key.to_bytes()));
                write_atomic(&path, line.as_bytes())?;
                tracing::info!("made a Web Push (VAPID) key: {}", path.display());
                Ok(Vapid::from_key(key))
            }
            Err(source) => Err(VapidError::Read { path, source }),
        }
    }

    fn from_key(key: SigningKey) -> Vapid {
        let point = key.verifying_key().to_encoded_point(false);
        Vapid {
            public: URL_SAFE_NO_PAD.encode(point.as_bytes()),
            key,
        }
    }

    /// The public key, base64url (the page's `applicationServerKey`).
    pub fn public_key(&self) -> &str {
        &self.public
    }

    /// The `Authorization` header for a push to `endpoint`: `vapid t=JWT,
    /// k=KEY`, the JWT's audience being the endpoint's origin.
    pub fn authorization(&self, endpoint: &reqwest::Url, subject: &str, now: i64) -> String {
        let audience = endpoint.origin().ascii_serialization();
        let header = URL_SAFE_NO_PAD.encode(br#"{"typ":"JWT","alg":"ES256"}"#);
        let claims = serde_json::json!({
            "aud": audience,
            "exp": now + TOKEN_TTL_S,
            "sub": subject,
        });
        let claims = URL_SAFE_NO_PAD.encode(claims.to_string());
        let signed = format!("{header}.{claims}");
        let signature: Signature = self.key.sign(signed.as_bytes());
        let signature = URL_SAFE_NO_PAD.encode(signature.to_bytes());
        format!("vapid t={signed}.{signature}, k={}", self.public)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use p256::ecdsa::VerifyingKey;
    use p256::ecdsa::signature::Verifier;
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn made_once_kept_private_and_read_back() {
        let dir = tempfile::tempdir().unwrap();
        let made = Vapid::load_or_create(dir.path()).unwrap();
        let path = dir.path().join(KEY_FILE);
        let mode = std::fs::metadata(&path).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
        let again = Vapid::load_or_create(dir.path()).unwrap();
        assert_eq!(made.public_key(), again.public_key());
        assert_eq!(URL_SAFE_NO_PAD.decode(made.public_key()).unwrap().len(), 65);
        std::fs::write(&path, "not a key\n").unwrap();
        let error = Vapid::load_or_create(dir.path()).unwrap_err();
        assert!(error.to_string().contains("not a VAPID key"), "{error}");
        assert!(!format!("{made:?}").contains(&URL_SAFE_NO_PAD.encode(made.key.to_bytes())));
    }

    /// The token verifies under `k`, names the endpoint's origin, and expires.
    #[test]
    fn the_token_is_signed_for_the_push_service() {
        let dir = tempfile::tempdir().unwrap();
        let vapid = Vapid::load_or_create(dir.path()).unwrap();
        let endpoint = reqwest::Url::parse("https://push.example.net:8443/wpush/v2/abc").unwrap();
        let header = vapid.authorization(&endpoint, "mailto:me@example.net", 1000);
        let (t, k) = header
            .strip_prefix("vapid t=")
            .and_then(|rest| rest.split_once(", k="))
            .unwrap();
        assert_eq!(k, vapid.public_key());
        let (signed, signature) = t.rsplit_once('.').unwrap();
        let key = VerifyingKey::from_sec1_bytes(&URL_SAFE_NO_PAD.decode(k).unwrap()).unwrap();
        let signature = Signature::from_slice(&URL_SAFE_NO_PAD.decode(signature).unwrap()).unwrap();
        key.verify(signed.as_bytes(), &signature).unwrap();
        let claims = signed.split('.').nth(1).unwrap();
        let claims: serde_json::Value =
            serde_json::from_slice(&URL_SAFE_NO_PAD.decode(claims).unwrap()).unwrap();
        assert_eq!(claims["aud"], "https://push.example.net:8443");
        assert_eq!(claims["exp"], 1000 + TOKEN_TTL_S);
        assert_eq!(claims["sub"], "mailto:me@example.net");
    }
}
