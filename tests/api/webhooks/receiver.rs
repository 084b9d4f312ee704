//! A webhook receiver on loopback: records every request (headers and raw
//! body) and answers as scripted (by default 204), as a partner's endpoint
//! would.

use std::collections::VecDeque;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use poem::endpoint::make;
use poem::http::{HeaderMap, StatusCode};
use poem::listener::{Acceptor, Listener, TcpListener};
use poem::{Request, Response};
use serde_json::Value;

/// One request the receiver got.
#[derive(Debug, Clone)]
pub struct Received {
    /// The path it was posted to.
    pub path: String,
    /// Every header, as sent.
    pub headers: HeaderMap,
    /// The raw body, as signed.
    pub body: Vec<u8>,
}

impl Received {
    /// The envelope, parsed.
    pub fn envelope(&self) -> Value {
        serde_json::from_slice(&self.body).expect("a JSON envelope")
    }

    /// The envelope's `type`.
    pub fn event_type(&self) -> String {
        self.envelope()["type"].as_str().expect("a type").to_owned()
    }

    /// A header's value.
    pub fn header(&self, name: &str) -> &str {
        self.headers
            .get(name)
            .unwrap_or_else(|| panic!("no {name} header"))
            .to_str()
            .expect("ASCII")
    }
}

/// What the receiver answers next: a status and an optional `Retry-After`.
#[derive(Debug, Clone, Copy)]
pub struct Answer {
    pub status: u16,
    pub retry_after: Option<u64>,
}

#[derive(Default)]
struct State {
    received: Vec<Received>,
    scripted: VecDeque<Answer>,
    always: Option<u16>,
}

/// The running receiver.
pub struct Receiver {
    pub address: SocketAddr,
    state: Arc<Mutex<State>>,
}

impl Receiver {
    pub async fn start() -> Receiver {
        let state = Arc::new(Mutex::new(State::default()));
        let acceptor = TcpListener::bind("127.0.0.1:0")
            .into_acceptor()
            .await
            .expect("a free port");
        let address = *acceptor.local_addr()[0]
            .as_socket_addr()
            .expect("a TCP address");
        let shared = state.clone();
        let endpoint = make(move |request: Request| {
            let state = shared.clone();
            async move {
                let path = request.uri().path().to_owned();
                let headers = request.headers().clone();
                let body = request.into_body().into_vec().await.unwrap_or_default();
                let mut state = state.lock().expect("unpoisoned");
                state.received.push(Received {
                    path,
                    headers,
                    body,
                });
                let answer = state.scripted.pop_front().unwrap_or(Answer {
                    status: state.always.unwrap_or(204),
                    retry_after: None,
                });
                let mut response = Response::builder()
                    .status(StatusCode::from_u16(answer.status).expect("a status"));
                if let Some(seconds) = answer.retry_after {
                    response = response.header("retry-after", seconds.to_string());
                }
                response.finish()
            }
        });
        tokio::spawn(poem::Server::new_with_acceptor(acceptor).run(endpoint));
        Receiver { address, state }
    }

    /// The URL to register, at `path`.
    pub fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.address)
    }

    /// Answers the next requests with these, in order, then as before.
    pub fn script(&self, answers: &[Answer]) {
        self.state
            .lock()
            .expect("unpoisoned")
            .scripted
            .extend(answers);
    }

    /// Answers every unscripted request with `status`.
    pub fn always(&self, status: u16) {
        self.state.lock().expect("unpoisoned").always = Some(status);
    }

    /// Everything received so far.
    pub fn received(&self) -> Vec<Received> {
        self.state.lock().expect("unpoisoned").received.clone()
    }

    /// Waits (up to 30 s) until `count` requests have arrived; returns them all.
    pub async fn wait_for(&self, count: usize) -> Vec<Received> {
        for _ in 0..600 {
            let received = self.received();
            if received.len() >= count {
                return received;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        panic!(
            "expected {count} webhook requests in 30 s, got {}: {:?}",
            self.received().len(),
            self.received()
                .iter()
                .map(Received::event_type)
                .collect::<Vec<_>>()
        );
    }

    /// Asserts nothing more than `count` requests arrives within `wait`.
    pub async fn stays_at(&self, count: usize, wait: Duration) {
        tokio::time::sleep(wait).await;
        assert_eq!(
            self.received().len(),
            count,
            "no further request was expected"
        );
    }
}

/// A plain answer.
pub fn status(status: u16) -> Answer {
    Answer {
        status,
        retry_after: None,
    }
}
