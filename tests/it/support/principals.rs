//! The principals the suites act as.

use clarion::{Grant, Principal};

pub fn alice() -> Principal {
    Principal::user("alice")
}

pub fn bob() -> Principal {
    Principal::user("bob")
}

/// Alice's agent with both grants.
pub fn alice_bot() -> Principal {
    alice_bot_with(Grant::ALL)
}

/// Alice's agent `bot` with exactly `grants`.
pub fn alice_bot_with(grants: impl IntoIterator<Item = Grant>) -> Principal {
    Principal::agent("alice", "bot", grants)
}

/// Bob's agent that may only read.
pub fn bob_bot() -> Principal {
    Principal::agent("bob", "bot", [Grant::QuestionsRead])
}
