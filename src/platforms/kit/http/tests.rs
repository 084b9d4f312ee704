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
                slot: None,
            })
        })
    }

    fn admit_again<'a>(
        &'a self,
        _late: &'a Turn,
    ) -> futures_util::future::BoxFuture<'a, Result<Turn, String>> {
        self.admit()
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

/// A gate whose turns are all late (their slot ten seconds past) until
/// `late_turns` were handed out; it counts the turns given up.
struct Late {
    late_turns: usize,
    handed: std::sync::atomic::AtomicUsize,
    given_up: std::sync::Mutex<Vec<i64>>,
}

impl Late {
    fn new(late_turns: usize) -> Self {
        Self {
            late_turns,
            handed: Default::default(),
            given_up: Default::default(),
        }
    }

    fn next(&self) -> Turn {
        let handed = self
            .handed
            .fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        let now = Utc::now().timestamp_millis();
        let at = if handed < self.late_turns {
            now - 10_000
        } else {
            now + 5
        };
        Turn {
            wait: Duration::from_millis(u64::try_from(at - now).unwrap_or(0)),
            place: None,
            held: false,
            // A slack no busy machine oversleeps: only the turns set a
            // second back are late.
            slot: Some(Slot {
                at,
                slack_ms: 5_000,
                counted_day: 0,
            }),
        }
    }
}

impl CallGate for Late {
    fn admit(&self) -> futures_util::future::BoxFuture<'_, Result<Turn, String>> {
        Box::pin(async move { Ok(self.next()) })
    }

    fn admit_again<'a>(
        &'a self,
        late: &'a Turn,
    ) -> futures_util::future::BoxFuture<'a, Result<Turn, String>> {
        Box::pin(async move {
            let slot = late.slot.expect("a late turn has a slot");
            self.given_up.lock().expect("the lock").push(slot.at);
            Ok(self.next())
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

/// A call that wakes past its slot's slack gives that turn up and goes on
/// the next; one that keeps waking late goes after a few new turns rather
/// than never.
#[tokio::test]
async fn a_call_that_wakes_too_late_for_its_turn_takes_a_new_one() {
    let http = PlatformHttp::new(Duration::from_secs(5), RetryPolicy::default()).expect("a client");
    let once = Late::new(1);
    let turn = http.take_turn("MYOB", &once).await.expect("a turn");
    assert!(!turn.started_late(), "{turn:?}");
    let given_up = once.given_up.lock().expect("the lock").clone();
    assert_eq!(given_up.len(), 1, "the late turn was given up");
    assert_ne!(Some(given_up[0]), turn.slot.map(|slot| slot.at));

    let always = Late::new(usize::MAX);
    let turn = http.take_turn("MYOB", &always).await.expect("a turn");
    assert!(turn.started_late());
    assert_eq!(
        always.given_up.lock().expect("the lock").len(),
        LATE_TURNS_TAKEN_AGAIN
    );

    let on_time = Late::new(0);
    http.take_turn("MYOB", &on_time).await.expect("a turn");
    assert!(on_time.given_up.lock().expect("the lock").is_empty());
}

#[test]
fn backoff_grows_and_is_capped() {
    let policy = RetryPolicy::default();
    assert!(policy.backoff(0) >= Duration::from_millis(500));
    assert!(policy.backoff(0) <= Duration::from_millis(750));
    assert!(policy.backoff(10) <= Duration::from_secs(12));
}
