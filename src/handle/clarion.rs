//! The public handle, [`Clarion`]: an open database, cheap to clone, and
//! the few methods that concern the handle itself (closing it, its
//! channel, its backend, its lease). The operations are grouped in the
//! sibling files as the docs group them.

use std::sync::Arc;

use crate::rules::vocabulary::Channel;
use crate::store::Backend;

use crate::domain::engine::Engine;

/// An open clarion database. Cheap to clone; safe to share between threads.
/// Every operation checks the principal's capability first (AUTH-2), then
/// what it may see (AUTH-3..6): a bundle it may not see is `NotFound`,
/// exactly like one that does not exist (AUTH-5).
#[derive(Clone)]
pub struct Clarion {
    pub(crate) engine: Arc<Engine>,
    /// The door this handle's calls record in the attempt ledger (AUD-4).
    pub(crate) channel: Channel,
}

/// While it lives, the handle's attachment lease is renewed
/// ([`Clarion::keep_lease`]).
pub struct LeaseHold {
    _beating: crate::domain::engine::heartbeat::Beating,
}

impl std::fmt::Debug for LeaseHold {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LeaseHold").finish_non_exhaustive()
    }
}

impl std::fmt::Debug for Clarion {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Clarion")
            .field("backend", &self.engine.backend)
            .finish_non_exhaustive()
    }
}

impl Clarion {
    /// Closes the handle for every clone of it (REL-7): blocked waits
    /// return [`Error::HandleClosed`](crate::Error::HandleClosed) at once, and every later call fails
    /// with it. Calls in flight finish or return; the connections go when
    /// the last clone is dropped.
    pub fn close(&self) {
        self.engine.close();
    }

    /// AUD-4: a clone of this handle whose resolves and cancels record
    /// `channel` in the attempt ledger (the C ABI's handle records
    /// `c_abi`, the command line's `cli`). [`Channel::Link`] is recorded
    /// only by the answer links' routes (LINK-5): asked for it, the clone
    /// keeps this handle's channel.
    pub fn via(&self, channel: Channel) -> Clarion {
        let channel = match channel {
            Channel::Link => self.channel,
            other => other,
        };
        Clarion {
            engine: self.engine.clone(),
            channel,
        }
    }

    /// The channel this handle records (AUD-4).
    pub fn channel(&self) -> Channel {
        self.channel
    }

    /// Which backend this handle talks to.
    pub fn backend(&self) -> Backend {
        self.engine.backend
    }

    /// MCPA-1, DEL-3: keeps this handle's attachment lease renewed while
    /// the returned hold lives, whether or not an agent waits, so answers
    /// given between an agent's calls are received by its next wait and
    /// never reach the outbox. Dropping the hold lets the lease lapse.
    pub fn keep_lease(&self) -> LeaseHold {
        LeaseHold {
            _beating: self.engine.heartbeat.beating(),
        }
    }
}
