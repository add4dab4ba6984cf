//! LINK-2, LINK-3: what an answer link's routes do, below the HTTP door
//! that serves them. Each takes the token and answers `None` when it does
//! not verify (the door's `401`, or for the page its one `404`); a link
//! reaches only its own bundle, as the user it names, through the same
//! operations and the same visibility as that user's own call, recording
//! channel `link`.

#![cfg_attr(not(feature = "http"), allow(dead_code))] // for the HTTP door only

use schemars::JsonSchema;
use serde::Serialize;

use crate::domain::engine::Engine;
use crate::domain::links::{LinkCaller, LinkPurpose};
use crate::domain::people::Person;
use crate::domain::resolve::ResolveRequest;
use crate::domain::views::{BundleDetail, Resolved};
use crate::doors::operations::Operation;
use crate::error::Result;

/// `GET /api/v1/link/bundle`'s body (LINK-3).
#[derive(Debug, Serialize, JsonSchema)]
pub(crate) struct LinkBundle {
    /// The bundle as the link's user sees it (`get_bundle`).
    pub bundle: BundleDetail,
    /// Whose link it is.
    #[serde(rename = "as")]
    pub as_person: Person,
    /// The names of the people the bundle names (who asked for a
    /// quorum, who may vote, who voted, who decided), as the link's user
    /// may read them (PPL-1a).
    pub people: Vec<Person>,
}

/// LINK-2: whether `/a/<token>` opens the page: the token verifies, is
/// within its time, and its user sees the bundle now.
pub(crate) fn page_opens(engine: &Engine, token: &str) -> Result<bool> {
    Ok(bundle(engine, token)?.is_some_and(|found| found.is_ok()))
}

/// LINK-3 `GET /api/v1/link/bundle`: the bundle and the names around it;
/// `Some(Err(NotFound))` when the user no longer sees it.
pub(crate) fn bundle(engine: &Engine, token: &str) -> Result<Option<Result<LinkBundle>>> {
    let Some(link) = engine.link_caller(token, LinkPurpose::Open)? else {
        return Ok(None);
    };
    Ok(Some(read_bundle(engine, &link)))
}

fn read_bundle(engine: &Engine, link: &LinkCaller) -> Result<LinkBundle> {
    let caller = link.admit(Operation::GetBundle.access())?;
    let bundle = engine.get_bundle(&caller, link.pending_id())?;
    let named = named_people(&bundle);
    let people = if named.is_empty() {
        Vec::new()
    } else {
        engine.people(&link.admit(Operation::People.access())?, &named)?
    };
    let me = engine.whoami(&link.admit(Operation::Whoami.access())?)?;
    Ok(LinkBundle {
        bundle,
        as_person: Person {
            user_id: me.user_id,
            name: me.name,
        },
        people,
    })
}

/// The user ids a bundle names, once each, at most `people`'s limit.
fn named_people(detail: &BundleDetail) -> Vec<String> {
    let mut ids: Vec<String> = Vec::new();
    let mut add = |id: &str| {
        if !id.is_empty() && !ids.iter().any(|known| known == id) {
            ids.push(id.to_owned());
        }
    };
    if let Some(quorum) = &detail.bundle.quorum {
        add(&quorum.requested_by);
        quorum.eligible.iter().for_each(|id| add(id));
        quorum.votes.iter().for_each(|vote| add(&vote.user_id));
    }
    if let Some(response) = &detail.response {
        response.voters.iter().for_each(|id| add(id));
    }
    ids.truncate(crate::rules::limits::MAX_PEOPLE_IDS);
    ids
}

/// LINK-3 `POST /api/v1/link/respond`: answers, rejects or votes through
/// the one claim, using the link up if it wins or votes.
pub(crate) fn respond(
    engine: &Engine,
    token: &str,
    request: &ResolveRequest,
) -> Result<Option<Result<Resolved>>> {
    let Some(link) = engine.link_caller(token, LinkPurpose::Answer)? else {
        return Ok(None);
    };
    Ok(Some(
        link.admit(Operation::ResolveBundle.access())
            .and_then(|caller| engine.resolve_bundle(&caller, link.pending_id(), request)),
    ))
}

/// LINK-3 `POST /api/v1/link/cancel`: cancels through the same claim.
pub(crate) fn cancel(engine: &Engine, token: &str) -> Result<Option<Result<Resolved>>> {
    let Some(link) = engine.link_caller(token, LinkPurpose::Answer)? else {
        return Ok(None);
    };
    Ok(Some(link.admit(Operation::CancelBundle.access()).and_then(
        |caller| engine.cancel_bundle(&caller, link.pending_id()),
    )))
}
