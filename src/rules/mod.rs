//! The rules: clarion's decisions written once, as data and typed query
//! fragments, with no I/O. Activeness (ACT-1), visibility (AUTH-3..6), the
//! capability matrix (AUTH-2), the outbox's membership (DEL-3), every
//! limit, and the words clarion stores. The domain builds its queries from
//! these and restates none of them (ACT-3).

pub(crate) mod activeness;
pub(crate) mod capability;
pub(crate) mod digest;
pub mod limits;
pub(crate) mod links;
pub(crate) mod nudges;
pub(crate) mod outbox;
pub(crate) mod principal;
pub(crate) mod quorum;
pub(crate) mod retention;
pub(crate) mod visibility;
pub(crate) mod vocabulary;
