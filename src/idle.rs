//! Idle waits that a stop cuts short. A background loop waits for work on a
//! `Notify`; a stop that calls `notify_waiters` while the loop is busy (not
//! yet waiting) would be missed, and the process would wait out a whole
//! poll before exiting. [`wait`] registers for the notification first, then
//! looks at the stop flag, so no stop is missed.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use tokio::sync::Notify;

/// Waits up to `poll` for `wake`; returns at once when `stopping` is set,
/// including by a stop that notified between the caller's last look and now.
pub async fn wait(wake: &Notify, poll: Duration, stopping: &AtomicBool) {
    let notified = wake.notified();
    tokio::pin!(notified);
    notified.as_mut().enable();
    if stopping.load(Ordering::SeqCst) {
        return;
    }
    let _ = tokio::time::timeout(poll, notified).await;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_stop_before_the_wait_ends_it_at_once() {
        let wake = Notify::new();
        let stopping = AtomicBool::new(true);
        let started = std::time::Instant::now();
        wait(&wake, Duration::from_secs(30), &stopping).await;
        assert!(started.elapsed() < Duration::from_secs(5));
    }

    #[tokio::test]
    async fn a_notification_during_the_wait_ends_it() {
        let wake = std::sync::Arc::new(Notify::new());
        let stopping = std::sync::Arc::new(AtomicBool::new(false));
        let waiting = {
            let (wake, stopping) = (wake.clone(), stopping.clone());
            tokio::spawn(async move { wait(&wake, Duration::from_secs(30), &stopping).await })
        };
        tokio::task::yield_now().await;
        stopping.store(true, Ordering::SeqCst);
        wake.notify_waiters();
        tokio::time::timeout(Duration::from_secs(5), waiting)
            .await
            .expect("woken, not timed out")
            .expect("joined");
    }
}
