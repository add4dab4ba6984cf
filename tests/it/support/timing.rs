//! Bounds on how long a call may take. A call that must return "at once"
//! is checked against a bound of seconds, never a sleep that decides.

use std::time::{Duration, Instant};

/// Runs `body` and checks it returned within `limit`.
pub fn promptly<T>(limit: Duration, body: impl FnOnce() -> T) -> T {
    let started = Instant::now();
    let result = body();
    let took = started.elapsed();
    assert!(took < limit, "expected an immediate return, took {took:?}");
    result
}

/// Polls `condition` every 20 ms until it holds, failing with `what` if it
/// does not within `limit`: a test waits for a condition, never for a
/// fixed sleep.
pub fn eventually(limit: Duration, what: &str, condition: impl FnMut() -> bool) {
    assert!(within(limit, condition), "not within {limit:?}: {what}");
}

/// Polls `condition` every 20 ms until it holds (true) or `limit` has
/// passed (false), for a caller that says more than [`eventually`] when it
/// fails.
pub fn within(limit: Duration, mut condition: impl FnMut() -> bool) -> bool {
    let deadline = Instant::now() + limit;
    loop {
        if condition() {
            return true;
        }
        if Instant::now() >= deadline {
            return false;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}
