//! `GET /v1/auth/proof?nonce=…`: the daemon proves it holds its tokens
//! before a client over TCP sends one (`crate::secret` says why and what
//! it does not stop). Open to anyone: an answer is an HMAC of the caller's
//! nonce, which is worth nothing as a credential.

use axum::Json;
use axum::extract::State;
use serde::Deserialize;

use super::error::ApiError;
use super::extract::ApiQuery;
use super::state::AppState;
use crate::secret::{MAX_NONCE_HEX, MIN_NONCE_HEX, Proofs, valid_nonce};

/// The client's fresh nonce.
#[derive(Debug, Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
#[serde(deny_unknown_fields)]
pub struct ProofQuery {
    /// Hex, 32 to 128 digits, new for each proof asked for.
    nonce: String,
}

/// Prove the daemon holds the tokens, before a client sends one.
///
/// Open: `{"read_write", "read"}`, the HMAC-SHA256 of `tmuxd proof v1\0`
/// and the nonce (32–128 hex digits, fresh for each proof) under each token
/// the daemon holds. The CLI over TCP and a fleet hub ask it before they
/// send a token (`docs/guide.md#security`).
#[utoipa::path(get, path = "/v1/auth/proof", tag = "daemon", security(()),
    params(ProofQuery),
    responses(
        (status = 200, description = "HMAC-SHA256 of `tmuxd proof v1\\0` and the nonce under each token the daemon holds", body = Proofs),
        (status = 400, description = "`bad_request`: the nonce is not 32 to 128 hex digits", body = crate::wire::ErrorBody)))]
pub async fn proof(
    State(state): State<AppState>,
    ApiQuery(query): ApiQuery<ProofQuery>,
) -> Result<Json<Proofs>, ApiError> {
    if !valid_nonce(&query.nonce) {
        return Err(ApiError::bad_request(format!(
            "nonce must be {MIN_NONCE_HEX} to {MAX_NONCE_HEX} hex digits"
        )));
    }
    Ok(Json(state.auth.proofs(&query.nonce)))
}
