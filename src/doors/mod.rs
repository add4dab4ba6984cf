//! The doors: how the world reaches the domain. Each door only translates
//! a request into a domain call and a result into an envelope; none
//! restates a rule. The envelope layer makes every body (WIRE-1..3), the
//! JSON door reads WIRE-5 requests (the C ABI and the CLI go through it),
//! and the MCP door serves the external tools (WIRE-4).

pub(crate) mod args;
#[cfg(feature = "http")]
pub(crate) mod drive;
pub mod envelope;
#[cfg(feature = "http")]
pub(crate) mod http;
pub(crate) mod json;
pub(crate) mod link;
pub mod mcp;
pub(crate) mod mcp_asking;
pub(crate) mod operations;
