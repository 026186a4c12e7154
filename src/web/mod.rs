//! The browser dashboard: plain HTML, CSS and ES modules from `assets/`,
//! compiled into the binary (no build step, nothing fetched at run time),
//! served at `/` and `/assets/...` with a strict Content-Security-Policy.
//! An installable web app: a manifest, icons, and a service worker at
//! `/sw.js` (its scope is the path it is served from, so the root) that
//! keeps the app shell for offline starts and shows Web Push notifications.
//! These routes need no token: the page asks for one and sends it with
//! every API call it makes. A missing asset is answered the way the router
//! that mounts these routes answers what is not found (`routes`), so this
//! module does not depend on the API's error type.

use axum::Router;
use axum::extract::Path;
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;

/// Scripts and styles only from this origin (no inline code, no eval);
/// fetches, the event feed and WebSockets only to this origin.
const CONTENT_SECURITY_POLICY: &str = "default-src 'none'; script-src 'self'; \
     style-src 'self'; img-src 'self' data:; connect-src 'self'; \
     manifest-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

/// One embedded file.
struct Asset {
    name: &'static str,
    content_type: &'static str,
    body: &'static [u8],
}

macro_rules! asset {
    ($name:literal, $content_type:expr) => {
        Asset {
            name: $name,
            content_type: $content_type,
            body: include_bytes!(concat!("assets/", $name)),
        }
    };
}

const JS: &str = "text/javascript; charset=utf-8";

const ASSETS: &[Asset] = &[
    asset!("index.html", "text/html; charset=utf-8"),
    asset!("style.css", "text/css; charset=utf-8"),
    asset!("icon.svg", "image/svg+xml"),
    asset!("app.js", JS),
    asset!("api.js", JS),
    asset!("events.js", JS),
    asset!("keys.js", JS),
    asset!("screen.js", JS),
    asset!("session.js", JS),
    asset!("term.js", JS),
    asset!("wall.js", JS),
    asset!("words.js", JS),
    asset!("dialogs.js", JS),
    asset!("push.js", JS),
    asset!("sw.js", JS),
    asset!("manifest.webmanifest", "application/manifest+json"),
    asset!("icon-192.png", "image/png"),
    asset!("icon-512.png", "image/png"),
];

/// The dashboard's routes; `missing` answers an asset that is not
/// embedded (given what to say).
pub fn routes<S: Clone + Send + Sync + 'static>(missing: fn(String) -> Response) -> Router<S> {
    Router::new()
        .route("/", get(index))
        .route("/sw.js", get(service_worker))
        .route(
            "/assets/{*name}",
            get(
                move |Path(name): Path<String>, headers: HeaderMap| async move {
                    asset(&name, &headers).unwrap_or_else(|| missing(format!("no asset {name:?}")))
                },
            ),
        )
}

async fn index(headers: HeaderMap) -> Response {
    serve(
        find("index.html").expect("index.html is embedded"),
        &headers,
    )
}

async fn service_worker(headers: HeaderMap) -> Response {
    serve(find("sw.js").expect("sw.js is embedded"), &headers)
}

fn asset(name: &str, headers: &HeaderMap) -> Option<Response> {
    let asset = find(name).filter(|a| a.name != "index.html")?;
    Some(serve(asset, headers))
}

fn find(name: &str) -> Option<&'static Asset> {
    ASSETS.iter().find(|a| a.name == name)
}

/// The asset with validators: browsers revalidate every load (`no-cache`)
/// and get a bodiless 304 while the binary, and so the file, is unchanged.
fn serve(asset: &'static Asset, request: &HeaderMap) -> Response {
    let etag = format!("\"{:016x}\"", fnv1a(asset.body));
    let fresh = request
        .get(header::IF_NONE_MATCH)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.split(',').any(|tag| tag.trim() == etag));
    let mut response = if fresh {
        StatusCode::NOT_MODIFIED.into_response()
    } else {
        asset.body.into_response()
    };
    let headers = response.headers_mut();
    let set = |headers: &mut HeaderMap, name, value: &str| {
        if let Ok(value) = HeaderValue::from_str(value) {
            headers.insert(name, value);
        }
    };
    set(headers, header::CONTENT_TYPE, asset.content_type);
    set(headers, header::ETAG, &etag);
    set(headers, header::CACHE_CONTROL, "no-cache");
    set(
        headers,
        header::CONTENT_SECURITY_POLICY,
        CONTENT_SECURITY_POLICY,
    );
    set(headers, header::X_CONTENT_TYPE_OPTIONS, "nosniff");
    set(headers, header::REFERRER_POLICY, "no-referrer");
    set(headers, header::X_FRAME_OPTIONS, "DENY");
    response
}

/// A content hash for the ETag; stable across runs of one binary.
fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |hash, &b| {
        (hash ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_module_the_page_imports_is_embedded() {
        let mut sources: Vec<&str> = ASSETS
            .iter()
            .filter(|a| {
                [".js", ".html", ".webmanifest"]
                    .iter()
                    .any(|end| a.name.ends_with(end))
            })
            .map(|a| std::str::from_utf8(a.body).unwrap())
            .collect();
        sources.push(std::str::from_utf8(find("style.css").unwrap().body).unwrap());
        for source in sources {
            for reference in source
                .split(['\'', '"'])
                .filter(|s| s.starts_with("./") || s.starts_with("/assets/"))
            {
                let name = reference
                    .trim_start_matches("./")
                    .trim_start_matches("/assets/");
                assert!(find(name).is_some(), "{reference} is not embedded");
            }
        }
    }
}
