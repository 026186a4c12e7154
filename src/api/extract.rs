//! Extractors that turn axum's rejections (bad JSON, wrong types, unknown
//! fields, duplicate keys, oversized bodies, bad query strings) into the
//! API's JSON errors.

use std::fmt;

use axum::extract::rejection::{JsonRejection, QueryRejection};
use axum::extract::{FromRequest, FromRequestParts, Request};
use axum::http::StatusCode;
use axum::http::request::Parts;
use serde::de::{self, Deserialize, DeserializeOwned, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Value};

use super::error::ApiError;
use crate::id::SessionId;
use crate::supervisor::SupervisorError;
use crate::wire::ErrorCode;

/// A session id from a path or a body, parsed once here. Text that is no
/// `sess_N` names no session: the same 404 as an id never issued.
pub fn session_id(text: &str) -> Result<SessionId, SupervisorError> {
    text.parse()
        .map_err(|_| SupervisorError::NotFound(text.to_owned()))
}

/// A JSON object body; rejections become `bad_request` or
/// `payload_too_large`. Only an object is read into `T`: serde would also
/// fill a struct from an array (`[null, null]`), which no client means. A
/// key twice in one object is refused at any depth (see `StrictValue`).
pub struct ApiJson<T>(pub T);

impl<T: DeserializeOwned, S: Send + Sync> FromRequest<S> for ApiJson<T> {
    type Rejection = ApiError;

    async fn from_request(req: Request, state: &S) -> Result<Self, ApiError> {
        let value = match axum::Json::<StrictValue>::from_request(req, state).await {
            Ok(axum::Json(StrictValue(value))) => value,
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

/// A body that may be left out: no body at all (no `Content-Type`, nothing
/// sent) reads as `None`; anything sent is read as `ApiJson` reads it.
impl<T: DeserializeOwned, S: Send + Sync> axum::extract::OptionalFromRequest<S> for ApiJson<T> {
    type Rejection = ApiError;

    async fn from_request(req: Request, state: &S) -> Result<Option<Self>, ApiError> {
        let headers = req.headers();
        let declared = headers.contains_key(axum::http::header::CONTENT_TYPE)
            || headers
                .get(axum::http::header::CONTENT_LENGTH)
                .is_some_and(|len| len.as_bytes() != b"0")
            || headers.contains_key(axum::http::header::TRANSFER_ENCODING);
        if !declared {
            return Ok(None);
        }
        <ApiJson<T> as FromRequest<S>>::from_request(req, state)
            .await
            .map(Some)
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

/// Parses JSON text into `T`, refusing a key twice in one object like
/// `ApiJson` (for messages that arrive outside a request body).
pub fn from_str_strict<T: DeserializeOwned>(text: &str) -> Result<T, serde_json::Error> {
    let StrictValue(value) = serde_json::from_str(text)?;
    serde_json::from_value(value)
}

/// A JSON value read with every object's keys checked for duplicates.
/// `Value` keeps the last of two equal keys, and serde's derive does not
/// see the first; so `{"text":"ls","text":"rm -rf ~"}` would be taken for
/// what a proxy or a log that kept the first one did not show.
pub struct StrictValue(pub Value);

impl<'de> Deserialize<'de> for StrictValue {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(StrictVisitor).map(StrictValue)
    }
}

struct StrictVisitor;

impl<'de> Visitor<'de> for StrictVisitor {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_bool<E>(self, v: bool) -> Result<Value, E> {
        Ok(Value::Bool(v))
    }

    fn visit_i64<E>(self, v: i64) -> Result<Value, E> {
        Ok(Value::from(v))
    }

    fn visit_u64<E>(self, v: u64) -> Result<Value, E> {
        Ok(Value::from(v))
    }

    fn visit_f64<E>(self, v: f64) -> Result<Value, E> {
        Ok(Value::from(v))
    }

    fn visit_str<E>(self, v: &str) -> Result<Value, E> {
        Ok(Value::String(v.to_owned()))
    }

    fn visit_string<E>(self, v: String) -> Result<Value, E> {
        Ok(Value::String(v))
    }

    fn visit_unit<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_none<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let mut items = Vec::new();
        while let Some(StrictValue(item)) = seq.next_element()? {
            items.push(item);
        }
        Ok(Value::Array(items))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let mut fields = Map::new();
        while let Some(key) = map.next_key::<String>()? {
            if fields.contains_key(&key) {
                return Err(de::Error::custom(format_args!("duplicate key `{key}`")));
            }
            let StrictValue(value) = map.next_value()?;
            fields.insert(key, value);
        }
        Ok(Value::Object(fields))
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn strict_values_refuse_duplicate_keys_at_any_depth() {
        // (text, the value, or the error's start)
        let cases: [(&str, Result<Value, &str>); 8] = [
            (
                r#"{"a":1,"b":[true,null,"x"]}"#,
                Ok(json!({"a":1,"b":[true,null,"x"]})),
            ),
            (r#"[1,-2,3.5,"\u00e9"]"#, Ok(json!([1, -2, 3.5, "é"]))),
            (
                r#"{"a":{"b":1},"c":{"b":2}}"#,
                Ok(json!({"a":{"b":1},"c":{"b":2}})),
            ),
            (r#"{"a":1,"a":1}"#, Err("duplicate key `a`")),
            (r#"{"text":"ls","text":"rm"}"#, Err("duplicate key `text`")),
            (r#"{"x":{"k":1,"k":2}}"#, Err("duplicate key `k`")),
            (r#"[{"k":1},{"k":2,"k":3}]"#, Err("duplicate key `k`")),
            // The same key spelled with an escape is the same key.
            (r#"{"a":1,"\u0061":2}"#, Err("duplicate key `a`")),
        ];
        for (text, want) in cases {
            let got = serde_json::from_str::<StrictValue>(text).map(|v| v.0);
            match (got, want) {
                (Ok(value), Ok(want)) => assert_eq!(value, want, "{text}"),
                (Err(e), Err(want)) => assert!(e.to_string().starts_with(want), "{text}: {e}"),
                (got, want) => panic!("{text}: got {got:?}, want {want:?}"),
            }
        }
    }
}
