//! The public handle: [`Clarion`], an open database, its [`Builder`], and
//! one method per operation — the Rust door: each hands its typed
//! arguments to the domain's engine and returns the typed result. The
//! methods are grouped as the docs group them: the host mirror, the agent
//! side and the outbox, the answering side, the event log and webhooks,
//! upkeep, the other doors, and (feature `http`) tokens and the router.

mod agent;
mod answering;
mod builder;
mod clarion;
mod doors;
mod events;
#[cfg(feature = "http")]
mod http;
mod links;
mod mail;
mod mirror;
mod people;
mod upkeep;

pub use builder::Builder;
pub use clarion::{Clarion, LeaseHold};
#[cfg(feature = "http")]
pub use http::router;
