//! Building the HTTP application and serving it on a [`Listener`] until
//! SIGINT or SIGTERM.

use std::net::SocketAddr;
use std::sync::Arc;

use anyhow::Context;
use poem::endpoint::make_sync;
use poem::listener::{Acceptor, Listener as _, TcpAcceptor, TcpListener};
use poem::web::Html;
use poem::{Endpoint, EndpointExt, Response, Route, get};
use poem_openapi::OpenApi;

use crate::http::api;
use crate::http::hosted;
use crate::http::middleware::around_every_request;
use crate::http::routes::RouteTable;
use crate::http::spec;
use crate::http::state::AppState;
use crate::http::wire::JsonErrorsAcceptor;

/// The whole application: the API, its docs and spec, and the middleware.
pub fn app(state: AppState) -> anyhow::Result<impl Endpoint> {
    let service = api::service();
    let yaml = spec::yaml()?;
    let json = spec::json()?;
    // poem-openapi embeds its own rendering of the document in the page;
    // swap in the published contract so the explorer shows exactly it.
    // The browser tab names the product, not the viewer.
    let docs = service
        .swagger_ui_html()
        .replace(&service.spec(), &json)
        .replace(
            "<title>Swagger UI</title>",
            &format!("<title>{} API reference</title>", api::TITLE),
        );
    let mut table = RouteTable::from_meta(<api::Api as OpenApi>::meta())
        .with_get_route("/docs")
        .with_get_route("/openapi.yaml")
        .with_get_route("/openapi.json");
    for (path, method, takes_body) in hosted::ROUTES {
        table = table.with_route(path, method, takes_body);
    }
    let routes = Arc::new(table);
    let limiter = hosted::limiter();
    let metrics = state.metrics.clone();
    let rate_limits = state.rate_limits.clone();
    let route = Route::new()
        .at("/docs", get(make_sync(move |_| Html(docs.clone()))))
        .at(
            "/openapi.yaml",
            get(make_sync(move |_| {
                Response::builder()
                    .content_type("application/yaml")
                    .body(yaml.clone())
            })),
        )
        .at(
            "/openapi.json",
            get(make_sync(move |_| {
                Response::builder()
                    .content_type("application/json")
                    .body(json.clone())
            })),
        )
        .nest_no_strip("/link", hosted::routes(limiter.clone()))
        .nest_no_strip("/oauth", hosted::routes(limiter))
        .nest("/", service)
        .data(state)
        .around(move |next, request| {
            around_every_request(
                next,
                request,
                routes.clone(),
                metrics.clone(),
                rate_limits.clone(),
            )
        });
    Ok(route)
}

/// A bound listening socket, not yet serving. Its connections answer in
/// JSON even what the HTTP parser refuses ([`crate::http::wire`]).
pub struct Listener(JsonErrorsAcceptor<TcpAcceptor>);

impl Listener {
    /// Binds `bind` (use port 0 for any free port).
    pub async fn bind(bind: &str) -> anyhow::Result<Self> {
        TcpListener::bind(bind.to_owned())
            .into_acceptor()
            .await
            .map(|acceptor| Self(JsonErrorsAcceptor(acceptor)))
            .with_context(|| format!("cannot listen on {bind}"))
    }

    /// The address it listens on.
    pub fn local_addr(&self) -> anyhow::Result<SocketAddr> {
        self.0
            .local_addr()
            .first()
            .and_then(|address| address.as_socket_addr().copied())
            .context("the listener has no TCP address")
    }

    /// Serves the application on it until the process is asked to stop
    /// (SIGINT, SIGTERM); requests in flight are finished first.
    pub async fn serve_until_stopped(self, state: AppState) -> anyhow::Result<()> {
        poem::Server::new_with_acceptor(self.0)
            .run_with_graceful_shutdown(
                app(state)?,
                shutdown_signal(),
                Some(std::time::Duration::from_secs(30)),
            )
            .await
            .context("the HTTP server failed")
    }

    /// Serves the application on it until the runtime ends (tests).
    pub async fn serve(self, state: AppState) -> anyhow::Result<()> {
        poem::Server::new_with_acceptor(self.0)
            .run(app(state)?)
            .await
            .context("the HTTP server failed")
    }
}

/// Resolves on SIGINT (Ctrl-C) or SIGTERM.
async fn shutdown_signal() {
    let interrupt = async {
        if let Err(error) = tokio::signal::ctrl_c().await {
            tracing::error!(%error, "cannot listen for Ctrl-C");
            std::future::pending::<()>().await;
        }
    };
    #[cfg(unix)]
    let terminate = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut signal) => {
                signal.recv().await;
            }
            Err(error) => {
                tracing::error!(%error, "cannot listen for SIGTERM");
                std::future::pending::<()>().await;
            }
        }
    };
    #[cfg(not(unix))]
    let terminate = std::future::pending::<()>();
    tokio::select! {
        () = interrupt => {},
        () = terminate => {},
    }
    tracing::info!("shutting down: finishing requests in flight");
}
