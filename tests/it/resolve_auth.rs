//! Who may resolve and cancel (AUTH-2/4/5/6): a foreign bundle and a
//! fabricated id give byte-identical results, an agent needs the answer
//! grant and resolves questions but not permissions, and `system` reaches
//! a bundle without a task.

use clarion::envelope;
use clarion::{Entity, Error, Grant, Principal, ResolveRequest, Resolved};

use crate::resolve_support::*;
use crate::support::rows::{self, Row};
use crate::support::*;

// ---- not found and capabilities ------------------------------------------

dual_backend!(
    auth_5_resolve_and_cancel_foreign_equals_fabricated,
    auth_2_agent_needs_the_answer_grant,
    auth_6_agent_resolves_questions_not_permissions
);

/// AUTH-5, REL-4: resolve and cancel give byte-identical results for a
/// foreign bundle and a fabricated id, whatever the request.
fn auth_5_resolve_and_cancel_foreign_equals_fabricated(db: &TestDb) {
    mirror(db, "a", "alice");
    let foreign = ask(db, &mirror(db, "b", "bob"), 2);
    let not_found = format!("{:?}", Err::<Resolved, _>(Error::NotFound(Entity::Bundle)));
    for principal in [alice(), alice_bot()] {
        for request in [
            two_answers(),
            rejecting("no"),
            ResolveRequest::default(),
            answering(vec![answer("q1", &["x"], "")]),
        ] {
            let on_foreign = format!("{:?}", db.resolve_bundle(&principal, &foreign, &request));
            let on_fabricated = format!(
                "{:?}",
                db.resolve_bundle(&principal, "fabricated", &request)
            );
            assert_eq!(on_foreign, on_fabricated);
            assert_eq!(on_foreign, not_found);
        }
    }
    let cancel_foreign = format!("{:?}", db.cancel_bundle(&alice(), &foreign));
    assert_eq!(
        cancel_foreign,
        format!("{:?}", db.cancel_bundle(&alice(), "fabricated"))
    );
    assert_eq!(cancel_foreign, not_found);
    let not_found_body = envelope::error(&Error::NotFound(Entity::Bundle));
    assert_eq!(
        (not_found_body.status, not_found_body.body_text()),
        (
            404,
            r#"{"error":"clarification request not found"}"#.to_owned()
        )
    );
    assert_untouched(db, &foreign);
}

/// AUTH-2: resolving needs `questions:answer` for an agent;
/// `unclassified` never resolves; the capability comes before validation.
fn auth_2_agent_needs_the_answer_grant(db: &TestDb) {
    let id = ask(db, &mirror(db, "a", "alice"), 2);
    let mut rejected_with_answers = two_answers();
    rejected_with_answers.rejected = true;
    for principal in [
        alice_bot_with([Grant::QuestionsRead]),
        alice_bot_with([]),
        Principal::Unclassified,
    ] {
        for request in [two_answers(), rejected_with_answers.clone()] {
            assert!(matches!(
                db.resolve_bundle(&principal, &id, &request),
                Err(Error::CapabilityDenied)
            ));
        }
        assert!(matches!(
            db.resolve_bundle(&principal, "fabricated", &two_answers()),
            Err(Error::CapabilityDenied)
        ));
    }
    assert_untouched(db, &id);
    let body = envelope::error(&Error::CapabilityDenied);
    assert_eq!(body.status, 403);
}

/// AUTH-2, AUTH-6: an agent with `questions:answer` resolves a question
/// bundle; a permission bundle is not-found to it, and humans resolve it.
fn auth_6_agent_resolves_questions_not_permissions(db: &TestDb) {
    let session = mirror(db, "a", "alice");
    let agent = alice_bot_with([Grant::QuestionsAnswer]);
    let question = ask(db, &session, 2);
    let won = db
        .resolve_bundle(&agent, &question, &two_answers())
        .unwrap();
    assert!(won.claimed);
    assert_eq!(
        resolution(db, &question).resolved_by_id.as_deref(),
        Some("alice/bot")
    );

    let permission = ask_permission(db, &session, 1);
    let one = answering(vec![answer("q1", &["q1_opt1"], "")]);
    for request in [one.clone(), rejecting("no")] {
        let on_permission = format!("{:?}", db.resolve_bundle(&agent, &permission, &request));
        assert_eq!(
            on_permission,
            format!("{:?}", db.resolve_bundle(&agent, "fabricated", &request))
        );
        assert!(matches!(
            db.resolve_bundle(&agent, &permission, &request),
            Err(Error::NotFound(Entity::Bundle))
        ));
    }
    assert_untouched(db, &permission);
    assert!(
        db.resolve_bundle(&alice(), &permission, &one)
            .unwrap()
            .claimed
    );
}

dual_backend!(auth_4_system_resolves_a_bundle_without_a_task);

/// AUTH-4 [seed M5a]: a bundle whose task cannot be resolved is
/// not-found to users, but `system` may resolve or cancel it.
fn auth_4_system_resolves_a_bundle_without_a_task(db: &TestDb) {
    let session = mirror(db, "a", "alice");
    let turn = rows::turn_of(db, &ask(db, &session, 1));
    for id in ["orphan-1", "orphan-2"] {
        rows::insert_bundle(db, id, &session, &turn, "t-deleted-long-ago");
        Row::new(id, &session, &turn).insert(db);
    }
    let request = answering(vec![answer("q1", &["a"], "")]);
    assert!(matches!(
        db.resolve_bundle(&alice(), "orphan-1", &request),
        Err(Error::NotFound(Entity::Bundle))
    ));
    assert!(matches!(
        db.cancel_bundle(&alice(), "orphan-2"),
        Err(Error::NotFound(Entity::Bundle))
    ));
    assert_untouched(db, "orphan-1");
    assert!(
        db.resolve_bundle(&Principal::System, "orphan-1", &request)
            .unwrap()
            .claimed
    );
    assert!(
        db.cancel_bundle(&Principal::System, "orphan-2")
            .unwrap()
            .claimed
    );
}
