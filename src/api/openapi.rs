//! `GET /v1/openapi.json`: the API described from its own types and
//! handlers (`utoipa`), so the document cannot drift from the code. A copy
//! is checked in as `docs/openapi.json` and a test keeps the two equal
//! (`TMUXD_WRITE_OPENAPI=1 cargo test --test tests -- openapi::` rewrites it).
//!
//! Responses every route shares (the guard's 401 and 403, the body and
//! query extractors' 400 and 413, 405 for a method a path lacks) are added
//! here once, for the routes they apply to, instead of on every handler.

use std::sync::OnceLock;

use axum::http::header;
use axum::response::{IntoResponse, Response};
use utoipa::openapi::path::{Operation, ParameterIn};
use utoipa::openapi::response::ResponseBuilder;
use utoipa::openapi::schema::Schema;
use utoipa::openapi::security::{Http, HttpAuthScheme, SecurityRequirement, SecurityScheme};
use utoipa::openapi::{Content, OpenApi as Document, Ref, RefOr};
use utoipa::{Modify, OpenApi};

use super::{
    events, health, hooks, hosts, login, metrics, proof, push, queue, restore, screen, server,
    sessions, stream, untracked, wait,
};
use crate::wire;

#[derive(OpenApi)]
#[openapi(
    info(
        title = "tmuxd",
        description = "A daemon that supervises tmux sessions. Errors are always \
`{\"error\": {\"code\", \"message\"}}` (ErrorBody) with one of the ErrorCode values. \
Every route but /healthz, /version, /v1/login, /v1/auth/proof and the dashboard needs \
`Authorization: Bearer <token>` (the configured `auth.token`, or the one the daemon generates \
in its data dir, or a dashboard credential from /v1/login), except for the daemon's own user on \
its unix socket; the read token allows GET only. A browser request must come from the daemon's \
own origin (scheme, host and port), and the Host must be loopback, an IP address or in \
`http.allowed_hosts`; anything else gets 403. Each operation's description says what it does, \
its limits and its special answers; docs/api.md says what belongs to no one operation (auth, \
errors, streams, the event log, limits)."
    ),
    paths(
        health::healthz,
        health::version,
        health::readyz,
        metrics::metrics,
        server::server,
        login::issue_code,
        login::exchange,
        login::logout,
        login::whoami,
        proof::proof,
        openapi,
        dashboard,
        dashboard_asset,
        service_worker,
        sessions::list,
        sessions::create,
        sessions::get,
        sessions::delete,
        sessions::adopt,
        untracked::list,
        restore::restore,
        sessions::input,
        sessions::resize,
        wait::wait,
        queue::list,
        queue::cancel,
        sessions::thought,
        hooks::hook,
        sessions::snapshot,
        sessions::scrollback,
        events::events,
        stream::stream,
        screen::screen,
        hosts::hosts,
        hosts::host_server,
        push::info,
        push::subscribe,
        push::unsubscribe,
        push::answer,
    ),
    components(schemas(
        wire::ErrorCode,
        wire::EventsFormat,
        wire::SnapshotFormat,
        wire::SnapshotPane,
        wire::DeleteMode,
        wire::ListInclude,
        wire::Event,
        wire::EventKind,
        wire::ReplayTruncatedNotice,
        wire::SocketAuth,
        wire::StreamServerMessage,
        wire::StreamClientMessage,
        wire::ScreenMessage,
        wire::RowChange,
    )),
    modifiers(&BearerAuth, &SharedResponses, &SseData),
    tags(
        (name = "sessions", description = "Create, adopt, drive and read sessions"),
        (name = "events", description = "The event log, live or as a page"),
        (name = "streams", description = "WebSockets: raw output and rendered screens"),
        (name = "hooks", description = "Coding agents' hook events: evidence of what a session's agent is doing"),
        (name = "daemon", description = "Health, version, metrics and this document"),
        (name = "push", description = "Web Push: the key a page subscribes with, its subscriptions, and the answers a notification's actions send"),
        (name = "dashboard", description = "The browser dashboard's page and files"),
        (name = "fleet", description = "The peers whose sessions this daemon also serves: a peer's session is `HOST/sess_N` (encode the slash as `%2F` in paths) on every session route, forwarded to its peer in one hop; the hub's 503 `peer_unavailable` and 504 `peer_timeout` say which host and why"),
    )
)]
pub struct ApiDoc;

/// The document, built once.
pub fn document() -> &'static Document {
    static DOCUMENT: OnceLock<Document> = OnceLock::new();
    DOCUMENT.get_or_init(ApiDoc::openapi)
}

/// The document as served and as checked in: pretty JSON and a newline.
pub fn document_json() -> String {
    let mut text = document().to_pretty_json().unwrap_or_default();
    text.push('\n');
    text
}

/// This document (OpenAPI 3.1).
///
/// Generated from the handlers and wire types; a copy is checked in as
/// `docs/openapi.json`.
#[utoipa::path(get, path = "/v1/openapi.json", tag = "daemon",
    responses((status = 200, description = "This document (OpenAPI 3.1)",
        content_type = "application/json", body = Object)))]
pub async fn openapi() -> Response {
    let headers = [(header::CONTENT_TYPE, "application/json")];
    (headers, document_json()).into_response()
}

/// The dashboard.
///
/// No token needed: the page logs in (a one-time link from `tmuxd open`, or
/// a pasted token), then uses the API with its credential
/// (`docs/guide.md#dashboard`).
#[utoipa::path(get, path = "/", tag = "dashboard", security(()),
    responses((status = 200, description = "The dashboard's page", content_type = "text/html", body = String)))]
#[allow(dead_code, reason = "documents a route served by src/web")]
fn dashboard() {}

/// The dashboard's files.
///
/// No token needed, like the page.
#[utoipa::path(get, path = "/assets/{name}", tag = "dashboard", security(()),
    params(("name" = String, Path, example = "app.js",
        description = "A file of the dashboard (`app.js`, `style.css`...)")),
    responses(
        (status = 200, description = "The file, with its content type", content_type = "*/*", body = String),
        (status = 404, description = "`not_found`", body = wire::ErrorBody)))]
#[allow(dead_code, reason = "documents a route served by src/web")]
fn dashboard_asset() {}

/// The dashboard's service worker.
///
/// No token needed, like the page: the app shell offline, and Web Push
/// notifications.
#[utoipa::path(get, path = "/sw.js", tag = "dashboard", security(()),
    responses((status = 200, description = "The dashboard's service worker: the app shell offline, and Web Push notifications", content_type = "text/javascript", body = String)))]
#[allow(dead_code, reason = "documents a route served by src/web")]
fn service_worker() {}

/// The bearer scheme, required by every operation that does not opt out
/// (`security(())` marks the open ones).
struct BearerAuth;

impl Modify for BearerAuth {
    fn modify(&self, doc: &mut Document) {
        let components = doc.components.get_or_insert_with(Default::default);
        let scheme = Http::builder()
            .scheme(HttpAuthScheme::Bearer)
            .description(Some(
                "`auth.token` (anything) or `auth.read_token` (GET only). \
                 Not needed when the daemon runs without tokens (loopback only).",
            ))
            .build();
        components.add_security_scheme("bearer", SecurityScheme::Http(scheme));
        doc.security = Some(vec![SecurityRequirement::new::<_, _, &str>("bearer", [])]);
    }
}

/// Adds the responses the router and extractors give every route of a kind.
struct SharedResponses;

impl Modify for SharedResponses {
    fn modify(&self, doc: &mut Document) {
        for item in doc.paths.paths.values_mut() {
            let operations = [
                &mut item.get,
                &mut item.put,
                &mut item.post,
                &mut item.delete,
            ];
            for operation in operations.into_iter().flatten() {
                add_shared(operation);
            }
        }
    }
}

fn add_shared(operation: &mut Operation) {
    let open = operation
        .security
        .as_ref()
        .is_some_and(|s| s.iter().all(is_empty_requirement));
    if !open {
        error(
            operation,
            401,
            "`unauthorized`: no bearer token, or a wrong one",
        );
    }
    error(
        operation,
        403,
        "`forbidden`: the read token on a route that changes something, or (without tokens) a \
         non-loopback Host or Origin",
    );
    let has_query = operation.parameters.as_ref().is_some_and(|ps| {
        ps.iter()
            .any(|p| matches!(p, RefOr::T(p) if p.parameter_in == ParameterIn::Query))
    });
    if has_query {
        error(
            operation,
            400,
            "`bad_request`: an unknown or malformed query parameter",
        );
    }
    if operation.request_body.is_some() {
        error(
            operation,
            400,
            "`bad_request`: not JSON, a wrong type, an unknown field",
        );
        error(
            operation,
            413,
            "`payload_too_large`: over `http.max_body_bytes`",
        );
    }
}

fn is_empty_requirement(requirement: &SecurityRequirement) -> bool {
    serde_json::to_value(requirement).is_ok_and(|v| v.as_object().is_some_and(|o| o.is_empty()))
}

/// An `ErrorBody` response for `status`, unless the handler documented one.
fn error(operation: &mut Operation, status: u16, description: &str) {
    let responses = &mut operation.responses.responses;
    let key = status.to_string();
    if responses.contains_key(&key) {
        return;
    }
    let body = Content::new(Some(Ref::from_schema_name("ErrorBody")));
    let response = ResponseBuilder::new()
        .description(description)
        .content("application/json", body)
        .build();
    responses.insert(key, RefOr::T(response));
}

/// Describes what an SSE event's `event` name and `data` hold: JSON text
/// the derive sees only as a string.
struct SseData;

impl Modify for SseData {
    fn modify(&self, doc: &mut Document) {
        let Some(schemas) = doc.components.as_mut().map(|c| &mut c.schemas) else {
            return;
        };
        if let Some(RefOr::T(Schema::Object(sse))) = schemas.get_mut("ServerSentEvent") {
            let names: RefOr<Schema> = serde_json::from_str(
                r#"{"type": ["string", "null"], "enum": ["message", "replay_truncated", null],
                    "description": "Absent (`message`) for an Event; `replay_truncated` for a ReplayTruncatedNotice"}"#,
            )
            .expect("a valid schema");
            sse.properties.insert("event".to_owned(), names);
            let data: RefOr<Schema> = serde_json::from_str(
                r##"{"type": "string", "contentMediaType": "application/json",
                    "contentSchema": {"oneOf": [{"$ref": "#/components/schemas/Event"},
                        {"$ref": "#/components/schemas/ReplayTruncatedNotice"}]},
                    "description": "JSON text: an Event, or (event `replay_truncated`) a ReplayTruncatedNotice"}"##,
            )
            .expect("a valid schema");
            sse.properties.insert("data".to_owned(), data);
        }
    }
}
