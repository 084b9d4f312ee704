//! The time as the webhook deliverer sees it: the system clock, which tests
//! move forward to drive retries that are minutes or days apart.

use std::sync::Arc;
use std::sync::atomic::{AtomicI64, Ordering};

use chrono::{DateTime, TimeDelta, Utc};

use crate::timestamp::Timestamp;

/// The system clock plus an offset that only tests change; clones share it.
#[derive(Debug, Clone, Default)]
pub struct Clock {
    offset_micros: Arc<AtomicI64>,
}

impl Clock {
    /// Now, in the stored precision (microseconds).
    pub fn now(&self) -> DateTime<Utc> {
        Timestamp::now() + TimeDelta::microseconds(self.offset_micros.load(Ordering::Relaxed))
    }

    /// Moves this clock, and every clone of it, `by` into the future.
    pub fn advance(&self, by: std::time::Duration) {
        let micros = i64::try_from(by.as_micros()).unwrap_or(i64::MAX);
        self.offset_micros.fetch_add(micros, Ordering::Relaxed);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn advancing_moves_every_clone() {
        let clock = Clock::default();
        let clone = clock.clone();
        let before = clone.now();
        clock.advance(std::time::Duration::from_secs(3600));
        let after = clone.now();
        assert!(after - before >= TimeDelta::hours(1), "{before} → {after}");
    }
}
