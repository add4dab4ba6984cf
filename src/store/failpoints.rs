//! Named points where tests inject a failure (ASK-1's "an injected failure
//! mid-way leaves nothing behind", REL-2's crash points). Compiled in only
//! with the `test-hooks` feature; otherwise every check is a no-op.

/// A fault a test injected at a named point. Without the `test-hooks`
/// feature no value of it can exist, so production code carries no
/// injected-fault branch at all.
#[cfg(feature = "test-hooks")]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Injected(pub &'static str);

/// A fault a test injected (none can be, in this build).
#[cfg(not(feature = "test-hooks"))]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Injected {}

/// What an armed failpoint does when execution reaches it.
#[cfg(feature = "test-hooks")]
#[derive(Debug, Clone)]
pub enum FailAction {
    /// Fail the operation with an injected fault.
    Error,
    /// Stop at the point until the gate is opened, so a test can interleave
    /// another operation deterministically.
    Block(std::sync::Arc<Gate>),
}

/// A one-shot gate: the operation announces it has arrived, then waits
/// until the test opens the gate.
#[cfg(feature = "test-hooks")]
#[derive(Debug, Default)]
pub struct Gate {
    state: std::sync::Mutex<(bool, bool)>,
    changed: std::sync::Condvar,
}

#[cfg(feature = "test-hooks")]
impl Gate {
    /// A closed gate.
    pub fn new() -> std::sync::Arc<Gate> {
        std::sync::Arc::new(Gate::default())
    }

    #[cfg(feature = "test-hooks")]
    fn arrive_and_wait(&self) {
        let mut state = self.state.lock().unwrap_or_else(|p| p.into_inner());
        state.0 = true;
        self.changed.notify_all();
        while !state.1 {
            state = self.changed.wait(state).unwrap_or_else(|p| p.into_inner());
        }
    }

    /// Waits until an operation has arrived at the gate; false on timeout.
    pub fn wait_arrival(&self, timeout: std::time::Duration) -> bool {
        let state = self.state.lock().unwrap_or_else(|p| p.into_inner());
        let (state, _) = self
            .changed
            .wait_timeout_while(state, timeout, |state| !state.0)
            .unwrap_or_else(|p| p.into_inner());
        state.0
    }

    /// Lets the waiting operation (and any later arrival) continue.
    pub fn open(&self) {
        let mut state = self.state.lock().unwrap_or_else(|p| p.into_inner());
        state.1 = true;
        self.changed.notify_all();
    }
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
    pub(crate) fn check(&self, name: &'static str) -> Result<(), Injected> {
        let action = self
            .armed
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .get(name)
            .cloned();
        match action {
            Some(FailAction::Error) => Err(Injected(name)),
            Some(FailAction::Block(gate)) => {
                gate.arrive_and_wait();
                Ok(())
            }
            None => Ok(()),
        }
    }

    #[cfg(not(feature = "test-hooks"))]
    #[inline(always)]
    pub(crate) fn check(&self, _name: &'static str) -> Result<(), Injected> {
        Ok(())
    }
}

/// Failpoint names, one constant each so tests cannot misspell them.
pub mod points {
    /// Inside `ask`, after the bundle row and before its question rows.
    pub const ASK_AFTER_BUNDLE_ROW: &str = "ask.after_bundle_row";
    /// Inside `ask`, after the first question row.
    pub const ASK_AFTER_FIRST_QUESTION: &str = "ask.after_first_question";
    /// Inside `ask`, after its `bundle.asked` event was appended and before
    /// the commit (EVT-1a: a writer that commits after a later one).
    pub const ASK_BEFORE_COMMIT: &str = "ask.before_commit";
    /// Inside the claim, after its read found the bundle active, holding the
    /// session's serialization (the session row lock on PostgreSQL, the
    /// write lock on SQLite), before its writes.
    pub const CLAIM_BEFORE_WRITES: &str = "claim.before_writes";
    /// Inside the claim, after the rows took the resolution status.
    pub const CLAIM_AFTER_ROWS: &str = "claim.after_rows";
    /// Inside the claim, after every write and before the commit.
    pub const CLAIM_BEFORE_COMMIT: &str = "claim.before_commit";
    /// Inside `wait`/`wait_bundle`, after reading the bundle and before
    /// sleeping: the window where a lost wake-up would hide.
    pub const WAIT_BEFORE_SLEEP: &str = "wait.before_sleep";
    /// In a resolve or cancel whose first read found a pending row, before
    /// its claim's write transaction.
    pub const RESOLVE_AFTER_FIRST_READ: &str = "resolve.after_first_read";
    /// In a resolve or cancel whose claim lost, before the loser's replay.
    pub const RESOLVE_BEFORE_REPLAY: &str = "resolve.before_replay";
    /// After the claim committed, before any waiter or dispatcher ran.
    pub const RESOLVE_AFTER_COMMIT: &str = "resolve.after_commit";
    /// In the attempt ledger's appender, before it writes a batch (AUD-2).
    pub const LEDGER_APPEND: &str = "ledger.append";
    /// Inside `upsert_task`, after a move rewrote its bundles' visibility
    /// keys and before the commit (OPS-3a).
    pub const TASK_MOVED_BEFORE_COMMIT: &str = "lifecycle.task_moved_before_commit";
    /// Inside `set_members`, after the new set and its event were written,
    /// before the commit (PPL-4: readers go on meanwhile).
    pub const MEMBERS_BEFORE_COMMIT: &str = "people.members_before_commit";
}
