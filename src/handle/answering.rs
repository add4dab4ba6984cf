//! The answering side: what a principal may list, read, wait for,
//! answer, cancel and audit; each call admitted for the principal first
//! (AUTH-2) and recording the handle's channel (AUD-4).

use std::time::Duration;

use crate::domain::history::{SettledPage, SettledRequest};

use crate::domain::listing::{ListPage, ListRequest, Summary, TaskPendingActions};
use crate::domain::resolve::ResolveRequest;

use crate::domain::views::{AttemptView, BundleDetail, LedgerEntry, Resolved};

use crate::doors::operations::Operation;
use crate::error::Result;
use crate::rules::capability::{Authorization, Target};
use crate::rules::principal::Principal;

use crate::handle::clarion::Clarion;
use crate::store::Timestamp;

impl Clarion {
    /// LIST-1..10: the active, answerable bundles the principal may see,
    /// oldest first, one page.
    pub fn list_pending(&self, principal: &Principal, request: &ListRequest) -> Result<ListPage> {
        self.engine.list_pending(
            &Operation::ListPending.admit(principal, self.channel)?,
            request,
        )
    }

    /// LIST-12..14: the settled bundles the principal may see, newest
    /// resolution first, one page; each element is what `get_bundle`
    /// returns for it.
    pub fn list_settled(
        &self,
        principal: &Principal,
        request: &SettledRequest,
    ) -> Result<SettledPage> {
        self.engine.list_settled(
            &Operation::ListSettled.admit(principal, self.channel)?,
            request,
        )
    }

    /// WIRE-3: one bundle, its status and its response, from durable state.
    pub fn get_bundle(&self, principal: &Principal, pending_id: &str) -> Result<BundleDetail> {
        self.engine.get_bundle(
            &Operation::GetBundle.admit(principal, self.channel)?,
            pending_id,
        )
    }

    /// WIRE-3 `wait_bundle`: waits for the bundle's resolution
    /// (`claimed: false`); `NoLongerActive` if it stops being active
    /// without one, `TimedOut` otherwise. Acknowledges nothing.
    pub fn wait_bundle(
        &self,
        principal: &Principal,
        pending_id: &str,
        timeout: Duration,
    ) -> Result<Resolved> {
        self.engine.wait_bundle(
            &Operation::WaitBundle.admit(principal, self.channel)?,
            pending_id,
            timeout,
        )
    }

    /// SUM-1: counts that always equal what paging the listing would collect.
    pub fn summary(&self, principal: &Principal) -> Result<Summary> {
        self.engine
            .summary(&Operation::Summary.admit(principal, self.channel)?)
    }

    /// PA-1: what blocks each visible requested task and its primary session.
    pub fn pending_actions(
        &self,
        principal: &Principal,
        task_ids: &[String],
    ) -> Result<Vec<TaskPendingActions>> {
        self.engine.pending_actions(
            &Operation::PendingActions.admit(principal, self.channel)?,
            task_ids,
        )
    }

    /// §8: answers or rejects a bundle. Exactly one caller claims it; every
    /// other gets the winner's status and response with `claimed: false`,
    /// or `NoLongerActive` when nothing won.
    pub fn resolve_bundle(
        &self,
        principal: &Principal,
        pending_id: &str,
        request: &ResolveRequest,
    ) -> Result<Resolved> {
        self.engine.resolve_bundle(
            &Operation::ResolveBundle.admit(principal, self.channel)?,
            pending_id,
            request,
        )
    }

    /// LIFE-6: cancels a bundle through the same claim (humans and system).
    pub fn cancel_bundle(&self, principal: &Principal, pending_id: &str) -> Result<Resolved> {
        self.engine.cancel_bundle(
            &Operation::CancelBundle.admit(principal, self.channel)?,
            pending_id,
        )
    }

    /// AUD-3: every recorded attempt on a bundle — who, when, through
    /// which door, with what outcome and digest — oldest first. For a
    /// user the bundle must be visible (else the one not-found, AUTH-5);
    /// `system` also reads the entries of a deleted bundle.
    pub fn attempts(&self, principal: &Principal, pending_id: &str) -> Result<Vec<AttemptView>> {
        self.engine.attempts(
            &Operation::Attempts.admit(principal, self.channel)?,
            pending_id,
        )
    }

    /// AUD-3, for the host: every ledger entry recorded from `since`
    /// (inclusive) to `until` (exclusive), in (`at`, entry) order, handed
    /// to `sink` one by one and read in keyset pages, so memory stays
    /// constant; returns how many.
    pub fn export_attempts(
        &self,
        since: Option<Timestamp>,
        until: Option<Timestamp>,
        mut sink: impl FnMut(&LedgerEntry) -> std::io::Result<()>,
    ) -> Result<u64> {
        self.engine.export_attempts(since, until, &mut sink)
    }

    /// AUTH-8: may `principal` perform `operation` on `target`? A denial is
    /// the answer, never an error.
    pub fn authorize(
        &self,
        principal: &Principal,
        operation: Operation,
        target: Target<'_>,
    ) -> Result<Authorization> {
        self.engine.authorize(principal, operation.access(), target)
    }
}
