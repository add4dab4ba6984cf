//! Named points where tests inject a failure (ASK-1's "an injected failure
//! mid-way leaves nothing behind", REL-2's crash points). Compiled in only
//! with the `test-hooks` feature; otherwise every check is a no-op.

use crate::error::Error;

/// What an armed failpoint does when execution reaches it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FailAction {
    /// Return [`Error::Injected`] from the operation.
    Error,
}

#[derive(Debug, Default)]
pub(crate) struct Failpoints {
    #[cfg(feature = "test-hooks")]
    armed: std::sync::Mutex<std::collections::HashMap<&'static str, FailAction>>,
}

impl Failpoints {
    #[cfg(feature = "test-hooks")]
    pub(crate) fn arm(&self, name: &'static str, action: FailAction) {
        self.armed
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .insert(name, action);
    }

    #[cfg(feature = "test-hooks")]
    pub(crate) fn disarm(&self, name: &'static str) {
        self.armed
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .remove(name);
    }

    #[cfg(feature = "test-hooks")]
    pub(crate) fn check(&self, name: &'static str) -> Result<(), Error> {
        let action = self
            .armed
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .get(name)
            .copied();
        match action {
            Some(FailAction::Error) => Err(Error::Injected(name)),
            None => Ok(()),
        }
    }

    #[cfg(not(feature = "test-hooks"))]
    #[inline(always)]
    pub(crate) fn check(&self, _name: &'static str) -> Result<(), Error> {
        Ok(())
    }
}

/// Failpoint names, one constant each so tests cannot misspell them.
pub mod points {
    /// Inside `ask`, after the bundle row and before its question rows.
    pub const ASK_AFTER_BUNDLE_ROW: &str = "ask.after_bundle_row";
    /// Inside `ask`, after the first question row.
    pub const ASK_AFTER_FIRST_QUESTION: &str = "ask.after_first_question";
    /// Inside the claim, after the rows took the resolution status.
    pub const CLAIM_AFTER_ROWS: &str = "claim.after_rows";
    /// Inside the claim, after every write and before the commit.
    pub const CLAIM_BEFORE_COMMIT: &str = "claim.before_commit";
}
