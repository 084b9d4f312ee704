//! Unit tests of the pace: places, keys, late turns and holds after a 429.

use super::*;
use reqwest::header::{HeaderValue, RETRY_AFTER};

use crate::platforms::connector::Connector;
use crate::platforms::quickbooks_online::connector::QuickBooksConnector;
use crate::platforms::zoho_books::connector::ZohoBooksConnector;

#[test]
fn places_read_back_and_expire() {
    let places = Places::parse("7@1000,9@3000,x@5,8");
    assert_eq!(places, Places(vec![(7, 1_000), (9, 3_000)]));
    assert_eq!(places.stored(), "7@1000,9@3000");
    let mut live = places.live(2_000);
    assert_eq!(live, Places(vec![(9, 3_000)]));
    live.release(9);
    assert_eq!(live.stored(), "");
}

#[test]
fn the_key_names_no_identifier_and_tells_subjects_apart() {
    let subject = Subject {
        platform_key: "xero",
        platform: "Xero",
        application: "app-1",
        organization: "org-1",
    };
    let key = key(subject);
    assert_eq!(key.len(), 64);
    assert!(!key.contains("org-1"));
    assert_ne!(
        key,
        super::key(Subject {
            organization: "org-2",
            ..subject
        })
    );
}

/// A row as `heed` finds it: held until `hold_until`.
fn held_row(hold_until: i64) -> platform_pace::Model {
    platform_pace::Model {
        key: "k".to_owned(),
        platform: "zoho_books".to_owned(),
        version: 1,
        calls: String::new(),
        in_flight: String::new(),
        hold_until,
        day: 0,
        day_calls: 0,
    }
}

fn gate_of(limits: Limits) -> Gate {
    Gate {
        db: DatabaseConnection::default(),
        key: "k".to_owned(),
        platform_key: "zoho_books".to_owned(),
        platform: "Zoho Books",
        limits,
    }
}

fn hold_after(gate: &Gate, row: platform_pace::Model, now: i64, said: &Said) -> i64 {
    match gate.heed(row, now, said, None) {
        Decided::Write(row, _) => row.hold_until,
        _ => panic!("heed writes the row"),
    }
}

/// A call that woke too late gives its turn up in the same write that
/// reserves its new one: its time leaves the window, it is counted once
/// in the day, and its place among the calls in progress is its new
/// turn's (with one place declared, it is not kept waiting for itself).
#[test]
fn a_late_call_gives_its_turn_up_as_it_takes_a_new_one() {
    let gate = gate_of(Limits::per_second(2).daily(100).concurrent(1));
    let now = 1_700_000_000_000;
    let Decided::Write(row, at) = gate.reserve(held_row(0), now, 1, None) else {
        panic!("the first call is reserved");
    };
    assert_eq!((at, row.day_calls), (now, 1));
    let late = Turn {
        wait: Duration::ZERO,
        place: Some(1),
        held: false,
        slot: Some(Slot {
            at,
            slack_ms: 25,
            counted_day: row.day,
        }),
    };
    let woke = now + 300;
    let Decided::Write(row, again) = gate.reserve(row, woke, 2, Some(&late)) else {
        panic!("the late call is reserved again, not kept waiting for its own place");
    };
    assert_eq!(again, woke, "the window no longer holds the turn given up");
    assert_eq!(Window::parse(&row.calls).stored(), woke.to_string());
    assert_eq!(row.day_calls, 1, "one call counted in the day");
    let places = Places::parse(&row.in_flight);
    assert_eq!(places.0.len(), 1);
    assert_eq!(places.0[0].0, 2);
}

/// A call counted just before midnight, for a turn after it (a hold ends
/// then), that gives its turn up takes nothing off the new day's count,
/// which never held it.
#[test]
fn a_turn_given_up_after_midnight_leaves_the_new_days_count_whole() {
    let gate = gate_of(Limits::per_second(2).daily(100));
    let before_midnight = 19_000 * DAY_MS - 100;
    let held = held_row(before_midnight + 150);
    let Decided::Write(row, at) = gate.reserve(held, before_midnight, 1, None) else {
        panic!("reserved");
    };
    assert_eq!(row.day, 18_999);
    assert_eq!(at.div_euclid(DAY_MS), 19_000, "the turn is after midnight");
    let late = Turn {
        slot: Some(Slot {
            at,
            slack_ms: 25,
            counted_day: row.day,
        }),
        ..Turn::default()
    };
    // Another call opens the new day.
    let after_midnight = before_midnight + 200;
    let Decided::Write(row, _) = gate.reserve(row, after_midnight, 2, None) else {
        panic!("reserved");
    };
    assert_eq!((row.day, row.day_calls), (19_000, 1));
    let Decided::Write(row, _) = gate.reserve(row, after_midnight + 300, 3, Some(&late)) else {
        panic!("reserved again");
    };
    assert_eq!(
        row.day_calls, 2,
        "the new day holds both calls that go in it"
    );
}

#[test]
fn a_bare_429_again_right_after_the_documented_wait_holds_off_the_longer_quota() {
    let zoho = gate_of(ZohoBooksConnector::LIMITS);
    let bare = Said::read(&zoho.limits, 429, &HeaderMap::new());
    assert!(bare.bare_429);
    let start = 1_700_000_000_000;
    let minute = 60_000;
    let hour = 60 * minute;

    let first = hold_after(&zoho, held_row(0), start, &bare);
    assert_eq!(first, start + minute, "the first holds off Zoho's minute");

    let in_flight = hold_after(&zoho, held_row(first), start + 5_000, &bare);
    assert_eq!(
        in_flight,
        start + 5_000 + minute,
        "a call made before the hold ended holds off a minute from its answer, not the day"
    );

    let again = hold_after(&zoho, held_row(first), first + 800, &bare);
    assert_eq!(
        again,
        first + 800 + hour,
        "refused right after the minute was waited out: the day is spent"
    );

    let later = hold_after(&zoho, held_row(first), first + 3 * minute, &bare);
    assert_eq!(
        later,
        first + 4 * minute,
        "long after the hold, a 429 is the minute's again"
    );

    let quickbooks = gate_of(QuickBooksConnector::LIMITS);
    let bare = Said::read(&quickbooks.limits, 429, &HeaderMap::new());
    assert_eq!(
        hold_after(&quickbooks, held_row(first), first + 800, &bare),
        first + 800 + minute,
        "a platform declaring no longer quota holds off its wait again"
    );

    let mut asked = HeaderMap::new();
    asked.insert(RETRY_AFTER, HeaderValue::from_static("5"));
    let asked = Said::read(&zoho.limits, 429, &asked);
    assert!(!asked.bare_429);
    assert_eq!(
        hold_after(&zoho, held_row(first), first + 800, &asked),
        first + 800 + 5_000,
        "a 429 naming its wait is believed"
    );
}
