//! The domain: clarion's operations on bundles, built from the rules and
//! run against the store. Each operation is a method of [`engine::Engine`],
//! the domain's own handle, and takes the caller a door admitted; every change to a bundle goes through the one
//! change path (`change.rs`), and the one claim lives in `claim/`.
//!
//! Import order inside the domain (each imports only those before it):
//! `views` → `engine` (its waiters first) → `bundle` → `answers` → `claim` →
//! `delivery::outbox` → `change` → `steps` → `deadline` → `lifecycle` → `ask`, `listing`,
//! `authorize`, `resolve`, `attempts`, `people`, `delivery::wait`; last `open`,
//! which opens the engine and starts every thread it runs.

pub(crate) mod answers;
pub(crate) mod ask;
pub(crate) mod attempts;
pub(crate) mod authorize;
pub(crate) mod bundle;
pub(crate) mod change;
pub(crate) mod claim;
pub(crate) mod deadline;
pub(crate) mod delivery;
pub(crate) mod engine;
pub(crate) mod events;
#[cfg(feature = "http")]
pub(crate) mod health;
pub(crate) mod history;
pub(crate) mod lifecycle;
pub(crate) mod links;
pub(crate) mod listing;
pub(crate) mod mail;
pub(crate) mod names;
pub(crate) mod nudges;
pub(crate) mod open;
pub(crate) mod people;
pub(crate) mod quorum;
pub(crate) mod resolve;
pub(crate) mod resume;
pub(crate) mod retention;
pub(crate) mod steps;
#[cfg(feature = "http")]
pub(crate) mod tokens;
pub(crate) mod views;
pub(crate) mod vote;
pub(crate) mod walk;
pub(crate) mod webhooks;
