//! `authorize` (AUTH-8..10): the capability matrix, then visibility from
//! durable rows, for hosts that guard their own endpoints with clarion's
//! rule.

use diesel::prelude::*;

use crate::domain::engine::Engine;
use crate::error::Result;
use crate::rules::capability::{Access, Authorization, Denial, Target};
use crate::rules::limits::check_text;
use crate::rules::principal::Principal;
use crate::rules::visibility::{bundle_visibility_query, task_visibility_query, Scope};

impl Engine {
    /// AUTH-8: may `principal` perform an operation of class `access` on
    /// `target`? Capability first (no I/O), then visibility from durable rows only (AUTH-9): the
    /// task of a bundle is derived from its stored row, never taken from the
    /// caller. Invisible and nonexistent targets give the same `not_found`.
    pub(crate) fn authorize(
        &self,
        principal: &Principal,
        access: Access,
        target: Target<'_>,
    ) -> Result<Authorization> {
        if !access.admits(principal) {
            return Ok(Authorization::Denied(Denial::CapabilityDenied));
        }
        principal.check_text()?;
        match target {
            Target::Bundle(pending_id) => check_text("pending_id", pending_id)?,
            Target::Task(task_id) => check_text("task_id", task_id)?,
        }
        let Some(scope) = Scope::of(principal) else {
            return Ok(Authorization::Denied(Denial::CapabilityDenied));
        };
        // An operation open to everyone (`authorize` itself) needs no
        // target: answering it with a lookup would let a principal without
        // any grant probe which bundles exist.
        if access.is_open() {
            return Ok(Authorization::Allowed);
        }
        let visible = self.read_one(|conn| {
            Ok(match target {
                Target::Bundle(pending_id) => {
                    bundle_visibility_query(&scope, pending_id, self.now().as_micros())
                        .get_result::<bool>(conn)?
                }
                Target::Task(task_id) => {
                    task_visibility_query(&scope, task_id).get_result::<bool>(conn)?
                }
            })
        })?;
        Ok(if visible {
            Authorization::Allowed
        } else {
            Authorization::Denied(Denial::NotFound)
        })
    }
}
