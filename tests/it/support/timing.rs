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
