//! Waiting and delivery (WAIT-1..4, DEL-1..5, LIFE-8, LIFE-9).
//!
//! A waiter never trusts a notification: it reads the bundle's durable
//! state, and a notification (from this handle's commits, or from its
//! watcher for other handles and processes: WAIT-3a) only tells it to read
//! again. A generation counter taken before each read closes the gap
//! between reading and sleeping, so no wake-up is lost, and an outcome is
//! only ever derived from committed rows, so none is invented.
//!
//! Delivery is a transactional outbox: the claim marks a resolution
//! undelivered in the same transaction (DEL-1). A waiter that receives it
//! acknowledges it (WAIT-2); the resolution of a detached bundle stays in the
//! outbox until the host acknowledges it, or until a registered
//! [`ResumeDispatcher`] succeeds (DEL-3/4).

pub(crate) mod outbox;
pub(crate) mod wait;
