//! A platform's documented call limits, as its connector declares them
//! ([`Limits`]), and the arithmetic of keeping them: the calls of a rolling
//! window ([`Window`]) each new call is fitted after. Where the calls are
//! kept (the database, shared by every process) is `sync::pacing`'s.

use std::time::Duration;

/// What a platform allows one OAuth application for one organization.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// At most this many calls in any rolling window.
    pub rate: Option<Rate>,
    /// At most this many calls a day (tributary counts UTC days; the
    /// platform's own count, where it sends one, corrects it).
    pub daily: Option<u32>,
    /// At most this many calls in progress at once.
    pub concurrent: Option<u32>,
    /// The headers in which the platform tells what is left of its quota
    /// (other applications may share it).
    pub remaining: &'static [Remaining],
    /// How long the platform's documentation says to wait after a 429 that
    /// names no `Retry-After`: every process then holds off that long.
    pub throttled_wait: Option<Duration>,
    /// Where the platform answers a longer quota it does not count out (a
    /// plan's daily one) with the same bare 429 as its window's: how long
    /// every process holds off when a call made right after a
    /// [`Limits::throttled_wait`] was waited out is refused again, since
    /// only the longer quota can refuse it then.
    pub spent_quota_hold: Option<Duration>,
}

/// `calls` in any `window`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Rate {
    /// How many calls.
    pub calls: u32,
    /// In how long a rolling window.
    pub window: Duration,
}

/// A header telling how many calls are left of a quota.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Remaining {
    /// The header's name, lower case.
    pub header: &'static str,
    /// Which quota it counts down.
    pub quota: Quota,
}

/// A quota a [`Remaining`] header counts down.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Quota {
    /// The rolling window of [`Limits::rate`].
    Rate,
    /// The day of [`Limits::daily`].
    Daily,
}

impl Limits {
    /// No limit declared (tests' stand-in connectors, the in-process sandbox).
    pub const NONE: Self = Self {
        rate: None,
        daily: None,
        concurrent: None,
        remaining: &[],
        throttled_wait: None,
        spent_quota_hold: None,
    };

    /// At most `calls` a second.
    pub const fn per_second(calls: u32) -> Self {
        Self::per(calls, Duration::from_secs(1))
    }

    /// At most `calls` a minute.
    pub const fn per_minute(calls: u32) -> Self {
        Self::per(calls, Duration::from_secs(60))
    }

    /// At most `calls` in any `window`.
    pub const fn per(calls: u32, window: Duration) -> Self {
        Self {
            rate: Some(Rate { calls, window }),
            ..Self::NONE
        }
    }

    /// These limits, and at most `calls` a day.
    pub const fn daily(self, calls: u32) -> Self {
        Self {
            daily: Some(calls),
            ..self
        }
    }

    /// These limits, and at most `calls` at once.
    pub const fn concurrent(self, calls: u32) -> Self {
        Self {
            concurrent: Some(calls),
            ..self
        }
    }

    /// These limits, corrected by what the platform's `remaining` headers say.
    pub const fn remaining(self, remaining: &'static [Remaining]) -> Self {
        Self { remaining, ..self }
    }

    /// These limits, and `wait` after a 429 without `Retry-After`, as the
    /// platform documents it.
    pub const fn throttled_wait(self, wait: Duration) -> Self {
        Self {
            throttled_wait: Some(wait),
            ..self
        }
    }

    /// These limits, and a hold of `hold` when a bare 429 comes again right
    /// after the [`Limits::throttled_wait`] was waited out: the platform's
    /// longer quota is spent, and `hold` is when tributary asks again.
    pub const fn spent_quota_hold(self, hold: Duration) -> Self {
        Self {
            spent_quota_hold: Some(hold),
            ..self
        }
    }
}

/// The most calls [`Window`] keeps: a rate of more calls is kept as the same
/// rate over a shorter window (`N` in `W` as `N/k` in `W/k`), which never
/// lets more than `N` through in any `W`.
pub const MAX_KEPT_CALLS: u32 = 60;

/// How late a call may go after its turn, and the platform still never see
/// more than its rate in any window: a timer that wakes late, a busy core,
/// a connection being set up. The kept window is this much longer than the
/// platform's (the larger of [`LATE_SHARE`] of it and this), so a call that
/// went late and the one that takes its place a window later do not meet in
/// one of the platform's windows. Measured by `cargo bench --bench pace`:
/// without it, calls reserved exactly a window apart were seen up to 38%
/// over a one-second rate and 3% over a one-minute one.
pub const LATE_MS: i64 = 50;

/// The share of a kept window added to it for calls that go late, where
/// that is more than [`LATE_MS`] (1/50: 1.2 s of a minute).
pub const LATE_SHARE: i64 = 50;

/// A rate as [`Window`] keeps it: `calls` in `window_ms`, with `calls` at
/// most [`MAX_KEPT_CALLS`] and the window lengthened for calls that go late
/// ([`LATE_MS`]): never more lenient than `rate`.
pub fn kept(rate: Rate) -> (usize, i64) {
    let (calls, window_ms, late) = kept_parts(rate);
    (calls, window_ms.saturating_add(late))
}

/// How late after its turn a call of `rate` may still start: half the
/// margin [`kept`] adds to the window for calls that go late, the other
/// half left for the request to leave. A call that would start later asks
/// for a new turn instead (`CallGate::admit_again`), since the margin no
/// longer keeps it apart from the calls a window after its turn.
pub fn slack(rate: Rate) -> i64 {
    let (_, _, late) = kept_parts(rate);
    late / 2
}

/// `rate` as kept: its calls, its (possibly shorter) window, and the
/// margin added to that window for calls that go late.
fn kept_parts(rate: Rate) -> (usize, i64, i64) {
    let window_ms = i64::try_from(rate.window.as_millis()).unwrap_or(i64::MAX);
    let calls = rate.calls.max(1);
    let parts = calls.div_ceil(MAX_KEPT_CALLS);
    let kept_calls = calls / parts;
    // Rounded up: `k` windows of `W/k` must cover `W`.
    let parts = i64::from(parts);
    let kept_window = (window_ms.saturating_add(parts - 1)) / parts;
    let late = (kept_window / LATE_SHARE).max(LATE_MS);
    (kept_calls as usize, kept_window, late)
}

/// The times (Unix milliseconds) of the latest calls made or reserved,
/// ascending: where the next call fits in a rolling window.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Window {
    calls: Vec<i64>,
}

impl Window {
    /// Reads the stored form (`"1700000000000,1700000000250"`); what does
    /// not read is dropped (the worst it does is let a call go early once).
    pub fn parse(stored: &str) -> Self {
        let mut calls: Vec<i64> = stored
            .split(',')
            .filter_map(|part| part.trim().parse().ok())
            .collect();
        calls.sort_unstable();
        Self { calls }
    }

    /// The stored form.
    pub fn stored(&self) -> String {
        let parts: Vec<String> = self.calls.iter().map(i64::to_string).collect();
        parts.join(",")
    }

    /// Reserves the earliest time, not before `now` nor `hold_until` nor
    /// any call reserved already (calls go in the order they asked), at
    /// which a call keeps at most `calls` in any `window_ms`; keeps it, and
    /// forgets what no later call needs.
    pub fn reserve(&mut self, now: i64, hold_until: i64, calls: usize, window_ms: i64) -> i64 {
        let calls = calls.max(1);
        let mut at = now.max(hold_until);
        if let Some(&last) = self.calls.last() {
            at = at.max(last);
        }
        if self.calls.len() >= calls {
            at = at.max(self.calls[self.calls.len() - calls] + window_ms);
        }
        self.calls.push(at);
        self.forget(now, calls, window_ms);
        at
    }

    /// Gives up the call reserved at `at` (one of them, if several were):
    /// it did not go. Fewer calls never let any window hold more than it
    /// did, so the turns reserved after it stay as they were.
    pub fn give_up(&mut self, at: i64) {
        if let Some(index) = self.calls.iter().position(|&call| call == at) {
            self.calls.remove(index);
        }
    }

    /// Counts `used` calls the platform says were made in its window
    /// (`platform_window_ms`) ending `now` that tributary does not know of
    /// (other applications'), as made `now`: the conservative reading. Only
    /// the calls inside the platform's own window are known to it; the kept
    /// `window_ms` is longer ([`LATE_MS`]).
    pub fn add_unknown(
        &mut self,
        now: i64,
        used: usize,
        calls: usize,
        platform_window_ms: i64,
        window_ms: i64,
    ) {
        let known = self
            .calls
            .iter()
            .filter(|&&at| at > now - platform_window_ms && at <= now)
            .count();
        for _ in known..used.min(calls) {
            self.calls.push(now);
        }
        self.calls.sort_unstable();
        self.forget(now, calls, window_ms);
    }

    /// Calls that left the window before `now`, and all but the latest
    /// `calls`, no longer decide anything.
    fn forget(&mut self, now: i64, calls: usize, window_ms: i64) {
        self.calls.retain(|&at| at > now - window_ms);
        if self.calls.len() > calls {
            let extra = self.calls.len() - calls;
            self.calls.drain(..extra);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The most calls of `times` in any window of `window_ms`.
    fn busiest(times: &[i64], window_ms: i64) -> usize {
        times
            .iter()
            .map(|&start| {
                times
                    .iter()
                    .filter(|&&at| at >= start && at < start + window_ms)
                    .count()
            })
            .max()
            .unwrap_or(0)
    }

    #[test]
    fn a_burst_goes_at_once_up_to_the_limit_then_waits_for_the_window() {
        let mut window = Window::default();
        let times: Vec<i64> = (0..5)
            .map(|_| window.reserve(1_000, 0, 3, 60_000))
            .collect();
        assert_eq!(times, vec![1_000, 1_000, 1_000, 61_000, 61_000]);
    }

    #[test]
    fn no_rolling_window_ever_holds_more_than_the_limit() {
        let mut window = Window::default();
        let mut times = Vec::new();
        // Callers asking at uneven moments, some long after the last call.
        for (i, now) in [0, 10, 10, 500, 900, 2_500, 2_600, 2_600, 2_601, 9_000]
            .iter()
            .cycle()
            .take(40)
            .enumerate()
        {
            let now = now + (i as i64 / 10) * 10_000;
            times.push(window.reserve(now, 0, 4, 1_000));
        }
        assert!(busiest(&times, 1_000) <= 4, "{times:?}");
        // And what was stored reads back the same.
        assert_eq!(Window::parse(&window.stored()), window);
    }

    #[test]
    fn a_hold_delays_the_next_call() {
        let mut window = Window::default();
        assert_eq!(window.reserve(1_000, 31_000, 60, 60_000), 31_000);
        assert_eq!(window.reserve(1_001, 0, 60, 60_000), 31_000);
    }

    #[test]
    fn calls_other_applications_made_count_against_the_window() {
        let mut window = Window::default();
        window.reserve(0, 0, 3, 60_000);
        // The platform says two of three are used: one more is unknown.
        window.add_unknown(10, 2, 3, 60_000, 60_000);
        assert_eq!(window.reserve(20, 0, 3, 60_000), 20);
        assert_eq!(window.reserve(30, 0, 3, 60_000), 60_000);
    }

    /// What the platform says is left covers its own window: a call of
    /// tributary's older than that, though still in the longer kept window,
    /// is not among the calls the platform counted.
    #[test]
    fn the_platforms_count_is_read_over_its_own_window() {
        let (calls, window_ms) = kept(Rate {
            calls: 3,
            window: Duration::from_secs(60),
        });
        let mut window = Window::default();
        window.reserve(0, 0, calls, window_ms);
        // At 60.5 s the platform says all three are used: none of them is
        // the call at 0, so three are other applications'.
        window.add_unknown(60_500, 3, calls, 60_000, window_ms);
        assert_eq!(
            window.reserve(60_600, 0, calls, window_ms),
            60_500 + window_ms
        );
    }

    #[test]
    fn large_rates_are_kept_as_the_same_rate_over_shorter_windows() {
        let minute = Duration::from_secs(60);
        // Each window lengthened for calls that go late: 2% of it, at
        // least 50 ms.
        assert_eq!(
            kept(Rate {
                calls: 60,
                window: minute
            }),
            (60, 61_200)
        );
        assert_eq!(
            kept(Rate {
                calls: 500,
                window: minute
            }),
            (55, 6_667 + 133)
        );
        let (calls, window_ms) = kept(Rate {
            calls: 100,
            window: Duration::from_secs(1),
        });
        assert_eq!((calls, window_ms), (50, 550));
        // Never more lenient: at most 100 in any second, checked on a
        // schedule packed as tightly as the window allows.
        let mut window = Window::default();
        let times: Vec<i64> = (0..400)
            .map(|_| window.reserve(0, 0, calls, window_ms))
            .collect();
        assert!(busiest(&times, 1_000) <= 100);
    }

    /// A call that goes up to [`LATE_MS`] after its turn, and the call that
    /// takes its place a window later on time, are never inside one of the
    /// platform's windows together.
    #[test]
    fn calls_that_go_a_little_late_still_keep_the_platforms_window() {
        let rate = Rate {
            calls: 8,
            window: Duration::from_secs(1),
        };
        let (calls, window_ms) = kept(rate);
        let mut window = Window::default();
        let sent: Vec<i64> = (0..40)
            .map(|i| {
                let turn = window.reserve(0, 0, calls, window_ms);
                // Every other burst goes as late as allowed, the next on
                // time: without the margin they would meet in one second.
                if (i / 8) % 2 == 0 {
                    turn + LATE_MS - 1
                } else {
                    turn
                }
            })
            .collect();
        let mut sorted = sent.clone();
        sorted.sort_unstable();
        assert!(busiest(&sorted, 1_000) <= 8, "{sent:?}");
    }

    /// Every call asks for its turn at once; the first call of every other
    /// burst wakes 300 ms late, far past its slack. Sent that late, it meets
    /// the next burst in one of the platform's seconds; giving its turn up
    /// and reserving again when it wakes, it never does.
    #[test]
    fn a_call_that_wakes_past_its_slack_reserves_again_and_keeps_the_window() {
        let rate = Rate {
            calls: 8,
            window: Duration::from_secs(1),
        };
        let (calls, window_ms) = kept(rate);
        assert_eq!(slack(rate), LATE_MS / 2);
        let sent = |asks_again: bool| {
            let mut window = Window::default();
            let turns: Vec<i64> = (0..40)
                .map(|_| window.reserve(0, 0, calls, window_ms))
                .collect();
            let mut sent: Vec<i64> = turns
                .iter()
                .enumerate()
                .map(|(i, &turn)| {
                    let woke = if i % 16 == 0 { turn + 300 } else { turn };
                    if asks_again && woke > turn + slack(rate) {
                        window.give_up(turn);
                        window.reserve(woke, 0, calls, window_ms)
                    } else {
                        woke
                    }
                })
                .collect();
            sent.sort_unstable();
            sent
        };
        assert!(busiest(&sent(false), 1_000) > 8, "{:?}", sent(false));
        assert!(busiest(&sent(true), 1_000) <= 8, "{:?}", sent(true));
    }

    #[test]
    fn a_call_given_up_no_longer_counts() {
        let mut window = Window::default();
        let first = window.reserve(0, 0, 2, 1_000);
        window.reserve(0, 0, 2, 1_000);
        window.give_up(first);
        assert_eq!(window.reserve(10, 0, 2, 1_000), 10);
        window.give_up(12_345);
        assert_eq!(window.reserve(20, 0, 2, 1_000), 1_000);
    }

    #[test]
    fn unreadable_stored_calls_are_dropped() {
        assert_eq!(Window::parse("5,x,3").stored(), "3,5");
        assert_eq!(Window::parse("").stored(), "");
    }
}
