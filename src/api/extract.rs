//! Extractors that turn axum's rejections (bad JSON, wrong types, unknown
//! fields, oversized bodies, bad query strings) into the API's JSON errors.

use axum::extract::rejection::{JsonRejection, QueryRejection};
use axum::extract::{FromRequest, FromRequestParts, Request};
use axum::http::StatusCode;
use axum::http::request::Parts;
use serde::de::DeserializeOwned;
use serde_json::Value;

use super::error::ApiError;
use super::model::ErrorCode;

/// A JSON object body; rejections become `bad_request` or
/// `payload_too_large`. Only an object is read into `T`: serde would also
/// fill a struct from an array (`[null, null]`), which no client means.
pub struct ApiJson<T>(pub T);

impl<T: DeserializeOwned, S: Send + Sync> FromRequest<S> for ApiJson<T> {
    type Rejection = ApiError;

    async fn from_request(req: Request, state: &S) -> Result<Self, ApiError> {
        let value = match axum::Json::<Value>::from_request(req, state).await {
            Ok(axum::Json(value)) => value,
            Err(rejection) => return Err(json_rejection(rejection)),
        };
        if !value.is_object() {
            return Err(ApiError::bad_request(
                "invalid JSON body: expected an object",
            ));
        }
        serde_json::from_value(value)
            .map(ApiJson)
            .map_err(|e| ApiError::bad_request(format!("invalid JSON body: {e}")))
    }
}

fn json_rejection(rejection: JsonRejection) -> ApiError {
    match rejection.status() {
        StatusCode::PAYLOAD_TOO_LARGE => ApiError::new(
            ErrorCode::PayloadTooLarge,
            "request body is larger than http.max_body_bytes",
        ),
        StatusCode::UNSUPPORTED_MEDIA_TYPE => {
            ApiError::bad_request("expected a JSON body with Content-Type: application/json")
        }
        _ => ApiError::bad_request(format!("invalid JSON body: {}", rejection.body_text())),
    }
}

/// A query string; rejections become `bad_request`.
pub struct ApiQuery<T>(pub T);

impl<T: DeserializeOwned, S: Send + Sync> FromRequestParts<S> for ApiQuery<T> {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, ApiError> {
        match axum::extract::Query::<T>::from_request_parts(parts, state).await {
            Ok(axum::extract::Query(value)) => Ok(ApiQuery(value)),
            Err(rejection) => Err(query_rejection(rejection)),
        }
    }
}

fn query_rejection(rejection: QueryRejection) -> ApiError {
    ApiError::bad_request(format!("invalid query: {}", rejection.body_text()))
}
