//! Web Push message encryption (RFC 8291): one `aes128gcm` record (RFC
//! 8188) that only the subscribed browser can open, keyed by an ECDH
//! agreement between a fresh P-256 key of ours and the subscription's
//! `p256dh` key, mixed with its `auth` secret. RustCrypto's `p256`
//! (ECDH), `hkdf`/`sha2` and `aes-gcm` do the arithmetic; this module is
//! the RFC's key schedule and framing, checked against its Appendix A.

use aes_gcm::aead::{AeadInPlace, KeyInit};
use aes_gcm::{Aes128Gcm, Nonce};
use hkdf::Hkdf;
use p256::elliptic_curve::sec1::ToEncodedPoint;
use p256::{PublicKey, SecretKey};
use sha2::Sha256;

/// The record size written in the header: one record holds the message.
const RECORD_SIZE: u32 = 4096;
/// Bytes of the header before the key: salt, record size, key length.
const HEADER_FIXED: usize = 16 + 4 + 1;
/// An uncompressed P-256 point.
const POINT_BYTES: usize = 65;
const TAG_BYTES: usize = 16;
/// The largest plaintext one record carries (the record holds the text,
/// its delimiter and the tag). Push services take 4096 bytes of body, so
/// the header leaves a little less; payloads stay far below either.
pub const MAX_PLAINTEXT: usize = RECORD_SIZE as usize - HEADER_FIXED - POINT_BYTES - TAG_BYTES - 1;

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum EceError {
    #[error("the subscription's p256dh is not a P-256 public key")]
    BadPublicKey,
    #[error("the subscription's auth secret must be 16 bytes, not {0}")]
    BadAuthSecret(usize),
    #[error("a push message holds at most {MAX_PLAINTEXT} bytes, not {0}")]
    TooLong(usize),
}

/// A subscription's keys, checked once when it is taken.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ReceiverKeys {
    /// The browser's P-256 public key, uncompressed (65 bytes).
    public: Vec<u8>,
    /// The 16-byte authentication secret.
    auth: [u8; 16],
}

impl ReceiverKeys {
    pub fn new(p256dh: &[u8], auth: &[u8]) -> Result<Self, EceError> {
        let key = PublicKey::from_sec1_bytes(p256dh).map_err(|_| EceError::BadPublicKey)?;
        let auth: [u8; 16] = auth
            .try_into()
            .map_err(|_| EceError::BadAuthSecret(auth.len()))?;
        Ok(ReceiverKeys {
            public: key.to_encoded_point(false).as_bytes().to_vec(),
            auth,
        })
    }
}

/// Encrypts `plaintext` for `to` with a fresh key and salt.
pub fn encrypt(to: &ReceiverKeys, plaintext: &[u8]) -> Result<Vec<u8>, EceError> {
    let sender = SecretKey::random(&mut rand_core::OsRng);
    let mut salt = [0u8; 16];
    rand_core::RngCore::fill_bytes(&mut rand_core::OsRng, &mut salt);
    encrypt_with(to, plaintext, &sender, &salt)
}

/// The key schedule of RFC 8291 section 3.4, with the sender's key and
/// the salt given (the test vector fixes them).
fn encrypt_with(
    to: &ReceiverKeys,
    plaintext: &[u8],
    sender: &SecretKey,
    salt: &[u8; 16],
) -> Result<Vec<u8>, EceError> {
    if plaintext.len() > MAX_PLAINTEXT {
        return Err(EceError::TooLong(plaintext.len()));
    }
    let receiver = PublicKey::from_sec1_bytes(&to.public).map_err(|_| EceError::BadPublicKey)?;
    let shared = p256::ecdh::diffie_hellman(sender.to_nonzero_scalar(), receiver.as_affine());
    let sender_public = sender.public_key().to_encoded_point(false);
    let sender_public = sender_public.as_bytes();

    let mut key_info = b"WebPush: info\0".to_vec();
    key_info.extend_from_slice(&to.public);
    key_info.extend_from_slice(sender_public);
    let mut ikm = [0u8; 32];
    Hkdf::<Sha256>::new(Some(&to.auth), shared.raw_secret_bytes())
        .expand(&key_info, &mut ikm)
        .expect("32 bytes is a valid HKDF length");
    let content = Hkdf::<Sha256>::new(Some(salt), &ikm);
    let mut cek = [0u8; 16];
    let mut nonce = [0u8; 12];
    content
        .expand(b"Content-Encoding: aes128gcm\0", &mut cek)
        .expect("16 bytes is a valid HKDF length");
    content
        .expand(b"Content-Encoding: nonce\0", &mut nonce)
        .expect("12 bytes is a valid HKDF length");

    // The last (and only) record ends with the delimiter 2, no padding.
    let mut record = plaintext.to_vec();
    record.push(2);
    Aes128Gcm::new(&cek.into())
        .encrypt_in_place(Nonce::from_slice(&nonce), b"", &mut record)
        .expect("a record under the size limit encrypts");

    let mut body = Vec::with_capacity(HEADER_FIXED + POINT_BYTES + record.len());
    body.extend_from_slice(salt);
    body.extend_from_slice(&RECORD_SIZE.to_be_bytes());
    body.push(POINT_BYTES as u8);
    body.extend_from_slice(sender_public);
    body.extend_from_slice(&record);
    Ok(body)
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use base64::Engine;
    use base64::engine::general_purpose::URL_SAFE_NO_PAD;

    fn b64(s: &str) -> Vec<u8> {
        URL_SAFE_NO_PAD.decode(s).unwrap()
    }

    /// What a browser does with the body: the same schedule from the
    /// receiver's side. Kept here so the round trip below needs no browser.
    pub(crate) fn decrypt(receiver: &SecretKey, auth: &[u8], body: &[u8]) -> Vec<u8> {
        let salt = &body[..16];
        let key_len = body[20] as usize;
        let sender = PublicKey::from_sec1_bytes(&body[21..21 + key_len]).unwrap();
        let shared = p256::ecdh::diffie_hellman(receiver.to_nonzero_scalar(), sender.as_affine());
        let mut key_info = b"WebPush: info\0".to_vec();
        key_info.extend_from_slice(receiver.public_key().to_encoded_point(false).as_bytes());
        key_info.extend_from_slice(&body[21..21 + key_len]);
        let mut ikm = [0u8; 32];
        Hkdf::<Sha256>::new(Some(auth), shared.raw_secret_bytes())
            .expand(&key_info, &mut ikm)
            .unwrap();
        let content = Hkdf::<Sha256>::new(Some(salt), &ikm);
        let (mut cek, mut nonce) = ([0u8; 16], [0u8; 12]);
        content
            .expand(b"Content-Encoding: aes128gcm\0", &mut cek)
            .unwrap();
        content
            .expand(b"Content-Encoding: nonce\0", &mut nonce)
            .unwrap();
        let mut record = body[21 + key_len..].to_vec();
        Aes128Gcm::new(&cek.into())
            .decrypt_in_place(Nonce::from_slice(&nonce), b"", &mut record)
            .unwrap();
        assert_eq!(record.pop(), Some(2), "the last record's delimiter");
        record
    }

    /// RFC 8291 Appendix A, byte for byte.
    #[test]
    fn the_rfc_8291_example() {
        let receiver = ReceiverKeys::new(
            &b64("BCVxsr7N_eNgVRqvHtD0zTZsEc6-VV-JvLexhqUzORcxaOzi6-AYWXvTBHm4bjyPjs7Vd8pZGH6SRpkNtoIAiw4"),
            &b64("BTBZMqHH6r4Tts7J_aSIgg"),
        )
        .unwrap();
        let sender =
            SecretKey::from_slice(&b64("yfWPiYE-n46HLnH0KqZOF1fJJU3MYrct3AELtAQ-oRw")).unwrap();
        let salt: [u8; 16] = b64("DGv6ra1nlYgDCS1FRnbzlw").try_into().unwrap();
        let body = encrypt_with(
            &receiver,
            b"When I grow up, I want to be a watermelon",
            &sender,
            &salt,
        )
        .unwrap();
        assert_eq!(
            URL_SAFE_NO_PAD.encode(&body),
            "DGv6ra1nlYgDCS1FRnbzlwAAEABBBP4z9KsN6nGRTbVYI_c7VJSPQTBtkgcy27mlmlMoZIIgDll6e3vCYLocInmYWAmS6TlzAC8wEqKK6PBru3jl7A_yl95bQpu6cVPTpK4Mqgkf1CXztLVBSt2Ks3oZwbuwXPXLWyouBWLVWGNWQexSgSxsj_Qulcy4a-fN"
        );
        let ua_private =
            SecretKey::from_slice(&b64("q1dXpw3UpT5VOmu_cf_v6ih07Aems3njxI-JWgLcM94")).unwrap();
        assert_eq!(
            decrypt(&ua_private, &b64("BTBZMqHH6r4Tts7J_aSIgg"), &body),
            b"When I grow up, I want to be a watermelon"
        );
    }

    #[test]
    fn a_fresh_key_each_time_and_bad_keys_refused() {
        let browser = SecretKey::random(&mut rand_core::OsRng);
        let public = browser.public_key().to_encoded_point(false);
        let keys = ReceiverKeys::new(public.as_bytes(), &[7; 16]).unwrap();
        let (a, b) = (
            encrypt(&keys, b"hi").unwrap(),
            encrypt(&keys, b"hi").unwrap(),
        );
        assert_ne!(a[..86], b[..86], "salt and key are fresh");
        assert_eq!(decrypt(&browser, &[7; 16], &a), b"hi");
        assert_eq!(
            ReceiverKeys::new(&[4; 65], &[0; 16]),
            Err(EceError::BadPublicKey)
        );
        assert_eq!(
            ReceiverKeys::new(public.as_bytes(), &[0; 15]),
            Err(EceError::BadAuthSecret(15))
        );
        assert_eq!(
            encrypt(&keys, &vec![0; MAX_PLAINTEXT + 1]),
            Err(EceError::TooLong(MAX_PLAINTEXT + 1))
        );
        assert!(encrypt(&keys, &vec![0; MAX_PLAINTEXT]).is_ok());
    }
}
