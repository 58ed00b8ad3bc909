//! `roofline ui`: a local page over `analyze`, and the JSON API it calls.
//!
//! The page (HTML, CSS and JavaScript, embedded in the binary) draws what the API answers; the
//! API reads a request's settings into the typed request of `analyze` and calls the typed API
//! ([`crate::api`]), the computation the CLI runs, so every number and every error is the
//! CLI's; the listings run their command in-process ([`crate::run_captured`]). The server is axum on a
//! current-thread tokio runtime, listening on this machine only unless `--host` says otherwise.

mod api;

use crate::error::CliError;
use axum::http::{header, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post, MethodRouter};
use axum::Router;
use std::io::Write;

/// The page.
const INDEX_HTML: &str = include_str!("page/index.html");
/// Its script: the controls, the request, the plot, the tables.
const APP_JS: &str = include_str!("page/app.js");
/// Its style sheet.
const STYLE_CSS: &str = include_str!("page/style.css");
/// The OpenAPI 3.1 description of every route of [`routes`].
pub(crate) const OPENAPI_JSON: &str = include_str!("openapi.json");

/// Every route the server answers: method, path and handler. The router is built from this
/// list, and `/openapi.json` describes each of them (a test checks both agree).
pub(crate) fn routes() -> Vec<(&'static str, &'static str, MethodRouter)> {
    vec![
        (
            "get",
            "/",
            get(|| async { asset("text/html; charset=utf-8", INDEX_HTML) }),
        ),
        (
            "get",
            "/app.js",
            get(|| async { asset("text/javascript; charset=utf-8", APP_JS) }),
        ),
        (
            "get",
            "/style.css",
            get(|| async { asset("text/css; charset=utf-8", STYLE_CSS) }),
        ),
        (
            "get",
            "/openapi.json",
            get(|| async { asset("application/json", OPENAPI_JSON) }),
        ),
        (
            "get",
            "/api/models",
            get(|| async { api::listing(&["models"]) }),
        ),
        (
            "get",
            "/api/hardware",
            get(|| async { api::listing(&["hardware", "list"]) }),
        ),
        (
            "get",
            "/api/systems",
            get(|| async { api::listing(&["hardware", "list", "--systems"]) }),
        ),
        ("post", "/api/analyze", post(api::analyze)),
        ("post", "/api/explain", post(api::explain)),
    ]
}

/// The router of [`routes`], with a JSON 404 for any other path.
fn router() -> Router {
    routes()
        .into_iter()
        .fold(Router::new(), |r, (_, path, handler)| {
            r.route(path, handler)
        })
        .fallback(|uri: axum::http::Uri| async move {
            api::error(
                StatusCode::NOT_FOUND,
                &format!("no route `{}`", uri.path()),
                Some("the routes are listed at /openapi.json"),
            )
        })
        .method_not_allowed_fallback(
            |method: axum::http::Method, uri: axum::http::Uri| async move {
                api::error(
                    StatusCode::METHOD_NOT_ALLOWED,
                    &format!("`{method} {}` is not a route", uri.path()),
                    Some("the routes and their methods are listed at /openapi.json"),
                )
            },
        )
}

/// An embedded file, never cached stale: the page and the binary are one version.
fn asset(content_type: &'static str, body: &'static str) -> Response {
    (
        [
            (header::CONTENT_TYPE, content_type),
            (header::CACHE_CONTROL, "no-cache"),
        ],
        body,
    )
        .into_response()
}

/// Serves the page on `host:port` until Ctrl-C, printing `serving http://ADDRESS/` on stderr
/// once it listens (port 0: the free port the system picked); `open`: also opens it in the
/// default browser.
///
/// # Errors
/// The address cannot be listened on (taken, not this machine's, not an address), or the
/// runtime cannot start.
pub fn serve(host: &str, port: u16, open: bool) -> Result<(), CliError> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_io()
        .build()
        .map_err(|e| internal(format!("cannot start the server's runtime: {e}")))?;
    runtime.block_on(async {
        let listener = tokio::net::TcpListener::bind((host, port))
            .await
            .map_err(|e| {
                CliError::bad_input(
                    format!("cannot listen on `{host}` port {port}: {e}"),
                    Some(
                        "give a free port (`--port 0` picks one) and an address of this machine \
                         (`--host 127.0.0.1`)"
                            .into(),
                    ),
                )
            })?;
        let address = listener
            .local_addr()
            .map_err(|e| internal(format!("cannot read the address listened on: {e}")))?;
        let url = format!("http://{address}/");
        let mut err = std::io::stderr().lock();
        let _ = writeln!(err, "serving {url}");
        let _ = writeln!(err, "press Ctrl-C to stop");
        drop(err);
        if open {
            open_in_browser(&url);
        }
        let app = if address.ip().is_loopback() {
            router().layer(axum::middleware::from_fn(this_machine_only))
        } else {
            router()
        };
        axum::serve(listener, app)
            .with_graceful_shutdown(async {
                // Without a Ctrl-C handler the default one ends the process: stopped either way.
                let _ = tokio::signal::ctrl_c().await;
            })
            .await
            .map_err(|e| internal(format!("the server stopped: {e}")))
    })
}

/// Refuses a request that names another host than this machine (403), when listening on this
/// machine only: a page of another site whose name is made to resolve to 127.0.0.1 (DNS
/// rebinding) cannot read the API.
async fn this_machine_only(
    request: axum::extract::Request,
    next: axum::middleware::Next,
) -> Response {
    let host = request
        .headers()
        .get(header::HOST)
        .and_then(|h| h.to_str().ok())
        .unwrap_or("");
    if is_this_machine(host) {
        next.run(request).await
    } else {
        api::error(
            StatusCode::FORBIDDEN,
            &format!("the host `{host}` is not this machine"),
            Some("open the page at the address `roofline ui` printed (http://127.0.0.1:PORT/)"),
        )
    }
}

/// Whether a `Host` header names this machine: `localhost` or a loopback address, any port.
fn is_this_machine(host: &str) -> bool {
    let name = match host.rsplit_once(':') {
        Some((name, port)) if !port.is_empty() && port.bytes().all(|b| b.is_ascii_digit()) => name,
        _ => host,
    };
    let name = name.trim_start_matches('[').trim_end_matches(']');
    name.eq_ignore_ascii_case("localhost")
        || name
            .parse::<std::net::IpAddr>()
            .is_ok_and(|ip| ip.is_loopback())
}

fn internal(message: String) -> CliError {
    CliError {
        kind: crate::error::Kind::Internal,
        message,
        hint: None,
    }
}

/// Opens `url` with the system's opener; if there is none, says so and goes on serving.
fn open_in_browser(url: &str) {
    let opener: &[&str] = if cfg!(target_os = "macos") {
        &["open"]
    } else if cfg!(windows) {
        &["cmd", "/C", "start", ""]
    } else {
        &["xdg-open"]
    };
    let started = std::process::Command::new(opener[0])
        .args(&opener[1..])
        .arg(url)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn();
    if let Err(e) = started {
        let _ = writeln!(
            std::io::stderr(),
            "warning: cannot open a browser ({}: {e}); open {url} yourself",
            opener[0]
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_this_machines_names_pass() {
        for host in [
            "127.0.0.1:8000",
            "localhost:1",
            "LOCALHOST",
            "[::1]:8000",
            "[::1]",
            "127.0.0.2",
        ] {
            assert!(is_this_machine(host), "{host}");
        }
        for host in [
            "",
            "evil.example",
            "evil.example:8000",
            "10.0.0.1:8000",
            "127.0.0.1.evil.example",
        ] {
            assert!(!is_this_machine(host), "{host}");
        }
    }

    /// `/openapi.json` is JSON, OpenAPI 3.1, and describes exactly the routes the router has,
    /// each with the method it answers.
    #[test]
    fn openapi_lists_every_route() -> Result<(), Box<dyn std::error::Error>> {
        let doc: serde_json::Value = serde_json::from_str(OPENAPI_JSON)?;
        let version = doc["openapi"].as_str().ok_or("no `openapi` version")?;
        assert!(version.starts_with("3.1"), "{version}");
        let paths = doc["paths"].as_object().ok_or("no `paths`")?;
        let mut described: Vec<(String, String)> = Vec::new();
        for (path, item) in paths {
            let item = item.as_object().ok_or("a path item is not an object")?;
            for method in item.keys() {
                described.push((method.clone(), path.clone()));
            }
        }
        let mut served: Vec<(String, String)> = routes()
            .into_iter()
            .map(|(m, p, _)| (m.to_string(), p.to_string()))
            .collect();
        described.sort();
        served.sort();
        assert_eq!(described, served);
        for (method, path) in &served {
            let op = &doc["paths"][path][method];
            assert!(op["summary"].is_string(), "{method} {path}: no summary");
            assert!(
                op["responses"]["200"].is_object(),
                "{method} {path}: no 200 response"
            );
        }
        Ok(())
    }
}
