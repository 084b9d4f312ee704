//! `GET /metrics` on its own listener: the Prometheus text format, without
//! an API key. Off unless an operator gives it an address
//! (`TRIBUTARY_METRICS_BIND`), so that what a deployment exposes to its
//! partners (the API's address) never includes its operational figures;
//! scrapers reach the metrics address over the operator's own network.

use std::net::SocketAddr;
use std::sync::Arc;

use poem::listener::{Acceptor, Listener as _, TcpListener};
use poem::web::Data;
use poem::{EndpointExt, Response, Route, get, handler};
use sea_orm::DatabaseConnection;

use crate::metrics::Metrics;
use crate::sync::operations;

/// The content type of the Prometheus text format.
const CONTENT_TYPE: &str = "text/plain; version=0.0.4; charset=utf-8";

#[handler]
async fn render_metrics(
    Data(metrics): Data<&Arc<Metrics>>,
    Data(db): Data<&DatabaseConnection>,
) -> Response {
    match operations::queue_stats(db).await {
        Ok(queue) => metrics.queue(queue.depth, queue.oldest_age_seconds),
        Err(error) => {
            tracing::warn!(error = %error, "reading the sync queue for the metrics failed")
        }
    }
    Response::builder()
        .content_type(CONTENT_TYPE)
        .body(metrics.render())
}

/// Binds `bind` and serves `/metrics` there in the background; the address.
pub async fn serve(
    bind: &str,
    metrics: Arc<Metrics>,
    db: DatabaseConnection,
) -> anyhow::Result<SocketAddr> {
    let acceptor = TcpListener::bind(bind.to_owned()).into_acceptor().await?;
    let address = acceptor
        .local_addr()
        .first()
        .and_then(|address| address.as_socket_addr().copied())
        .ok_or_else(|| anyhow::anyhow!("the metrics listener has no TCP address"))?;
    let app = Route::new()
        .at("/metrics", get(render_metrics))
        .data(metrics)
        .data(db);
    tokio::spawn(async move {
        if let Err(error) = poem::Server::new_with_acceptor(acceptor).run(app).await {
            tracing::error!(error = %error, "the metrics listener stopped");
        }
    });
    Ok(address)
}
