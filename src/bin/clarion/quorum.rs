//! `clarion ask`'s quorum flags (QUO-1): `--quorum N [--quorum-rejections
//! M] [--eligible U,U] [--requested-by U]`, `ask`'s `quorum` argument as a
//! person types it. The generic flags would take it as JSON, as
//! `--on-expire` is; a count and a few names read better flat, so `ask`'s
//! declaration leaves `quorum` to these, and they build the same object:
//! its checks (and refusals, `quorum.eligible[1]`) are the operation's.

use serde_json::{json, Map, Value};

/// `--quorum N [--quorum-rejections M] [--eligible U,U] [--requested-by U]`.
#[derive(clap::Args, Debug, Clone, Default)]
pub struct QuorumFlags {
    /// Ask several people: this many (2 to 10) must give the same answer, notes included,
    /// for it to win. Only people see the bundle, and no deadline approves it.
    #[arg(long, value_name = "N")]
    pub quorum: Option<i64>,
    /// With --quorum: this many rejections reject the bundle (1, the default: one rejection
    /// decides).
    #[arg(long, value_name = "M", requires = "quorum")]
    pub quorum_rejections: Option<i64>,
    /// With --quorum: who may vote (2 to 100 users); without it, everyone who sees the
    /// bundle.
    #[arg(long, value_name = "USER,USER", requires = "quorum")]
    pub eligible: Option<String>,
    /// With --quorum: the person the agent asks for, who never votes.
    #[arg(long, value_name = "USER", requires = "quorum")]
    pub requested_by: Option<String>,
}

impl QuorumFlags {
    /// `ask`'s `quorum` argument, `None` without `--quorum`. The words of
    /// `--eligible` are trimmed and empty ones dropped, as every list flag's
    /// are; duplicates are kept, for the operation to refuse.
    pub fn argument(&self) -> Option<Value> {
        let approvals = self.quorum?;
        let mut quorum = Map::new();
        quorum.insert("approvals".into(), json!(approvals));
        if let Some(rejections) = self.quorum_rejections {
            quorum.insert("rejections".into(), json!(rejections));
        }
        if let Some(eligible) = &self.eligible {
            let users: Vec<&str> = eligible
                .split(',')
                .map(str::trim)
                .filter(|user| !user.is_empty())
                .collect();
            quorum.insert("eligible".into(), json!(users));
        }
        if let Some(requested_by) = &self.requested_by {
            quorum.insert("requested_by".into(), json!(requested_by));
        }
        Some(Value::Object(quorum))
    }
}
