//! Answer links (LINK-1): host operations, no principal.

use std::time::Duration;

use crate::domain::links::AnswerLink;
use crate::error::Result;
use crate::handle::clarion::Clarion;

impl Clarion {
    /// LINK-1: a link with which `user_id` answers or votes on the bundle
    /// once, for `ttl` (a minute to a week; `None`: a day), its POSTs
    /// ending at the bundle's deadline if that comes first. The user must
    /// see the bundle now, else [`Error::NotFound`](crate::Error::NotFound).
    /// The URL is under [`Builder::public_url`](crate::Builder::public_url),
    /// or the relative `/a/<token>`. It is a credential: send it to that
    /// person only.
    pub fn answer_link(
        &self,
        pending_id: &str,
        user_id: &str,
        ttl: Option<Duration>,
    ) -> Result<AnswerLink> {
        self.engine.answer_link(pending_id, user_id, ttl)
    }

    /// LINK-1: answer links are signed with a new key from now on. Links
    /// signed before keep working for 7 days, or, with `now`, stop at
    /// once.
    pub fn rotate_link_key(&self, now: bool) -> Result<()> {
        self.engine.rotate_link_key(now)
    }
}
