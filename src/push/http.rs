//! One POST to a push service or an ntfy server, over https (rustls with
//! the `ring` provider and the system's roots) or plain http. Never
//! follows a redirect (the message would go where the answer names) and
//! reads none of the answer's body, so a hostile server can only say a
//! status.

use std::time::Duration;

use bytes::Bytes;
use http_body_util::Full;
use hyper::Request;
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::TokioExecutor;

type Connector = hyper_rustls::HttpsConnector<HttpConnector>;

/// A client for push services and ntfy; cheap to clone.
#[derive(Clone)]
pub struct Poster {
    client: Client<Connector, Full<Bytes>>,
}

impl Poster {
    /// With the system's certificate roots; without any (a container with
    /// no CA bundle), only plain http works and https says why it failed.
    pub fn new() -> Poster {
        let provider = std::sync::Arc::new(rustls::crypto::ring::default_provider());
        let builder = hyper_rustls::HttpsConnectorBuilder::new();
        let connector = match builder.with_provider_and_native_roots(provider.clone()) {
            Ok(builder) => builder.https_or_http().enable_http1().build(),
            Err(e) => {
                tracing::warn!("no system certificate roots for https pushes: {e}");
                let config = rustls::ClientConfig::builder_with_provider(provider)
                    .with_safe_default_protocol_versions()
                    .expect("ring supports the default TLS versions")
                    .with_root_certificates(rustls::RootCertStore::empty())
                    .with_no_client_auth();
                hyper_rustls::HttpsConnectorBuilder::new()
                    .with_tls_config(config)
                    .https_or_http()
                    .enable_http1()
                    .build()
            }
        };
        Poster {
            client: Client::builder(TokioExecutor::new()).build(connector),
        }
    }

    /// POSTs `body` with `headers`; the status, or why there is none.
    pub async fn post(
        &self,
        url: &str,
        headers: &[(&str, String)],
        body: Vec<u8>,
        timeout: Duration,
    ) -> Result<hyper::StatusCode, String> {
        let mut request = Request::post(url);
        for (name, value) in headers {
            request = request.header(*name, value.as_str());
        }
        let request = request
            .body(Full::new(Bytes::from(body)))
            .map_err(|e| format!("bad request: {e}"))?;
        match tokio::time::timeout(timeout, self.client.request(request)).await {
            Err(_) => Err(format!("no answer within {} ms", timeout.as_millis())),
            Ok(Err(e)) => Err(describe(&e)),
            Ok(Ok(answer)) => Ok(answer.status()),
        }
    }
}

impl Default for Poster {
    fn default() -> Self {
        Poster::new()
    }
}

/// The error and its causes (hyper's top level says only "client error").
fn describe(error: &dyn std::error::Error) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        text.push_str(": ");
        text.push_str(&cause.to_string());
        source = cause.source();
    }
    text
}
