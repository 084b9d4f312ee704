//! Unit tests of the platform client: bodies, backoff, and what a turn's wait ends.

use super::*;

#[test]
fn only_a_blank_body_is_empty() {
    assert!(is_empty_body(b""));
    assert!(is_empty_body(b" \r\n"));
    assert!(!is_empty_body(b"[]"));
    assert!(!is_empty_body(b"null"));
}

/// A gate that hands out one kind of turn.
struct Fixed {
    wait: Duration,
    held: bool,
}

impl CallGate for Fixed {
    fn admit(&self) -> futures_util::future::BoxFuture<'_, Result<Turn, String>> {
        Box::pin(async move {
            Ok(Turn {
                wait: self.wait,
                place: None,
                held: self.held,
            })
        })
    }

    fn finished<'a>(
        &'a self,
        _turn: &'a Turn,
        _answer: Option<(u16, &'a reqwest::header::HeaderMap)>,
    ) -> futures_util::future::BoxFuture<'a, ()> {
        Box::pin(async {})
    }
}

/// Only a hold the platform asked for, longer than the longest
/// `Retry-After` a call waits, ends the sync: a wait for the rate's
/// window (at most a kept window, a minute and its margin) is waited,
/// however it compares with that ceiling.
#[tokio::test]
async fn a_long_hold_ends_the_sync_and_a_wait_for_the_window_is_waited() {
    let http = PlatformHttp::new(
        Duration::from_secs(5),
        RetryPolicy {
            max_retry_after: Duration::from_millis(10),
            ..RetryPolicy::default()
        },
    )
    .expect("a client");
    let wait = Duration::from_millis(30);
    let window = Fixed { wait, held: false };
    let started = std::time::Instant::now();
    let turn = http.take_turn("Xero", &window).await.expect("waited");
    assert!(started.elapsed() >= wait);
    assert_eq!(turn.wait, wait);
    let hold = Fixed { wait, held: true };
    match http.take_turn("Xero", &hold).await {
        Err(CallError::RateLimited(message)) => {
            assert!(message.contains("asked that no call be made"), "{message}")
        }
        other => panic!("a hold beyond the ceiling ends the sync: {other:?}"),
    }
}

#[test]
fn backoff_grows_and_is_capped() {
    let policy = RetryPolicy::default();
    assert!(policy.backoff(0) >= Duration::from_millis(500));
    assert!(policy.backoff(0) <= Duration::from_millis(750));
    assert!(policy.backoff(10) <= Duration::from_secs(12));
}
