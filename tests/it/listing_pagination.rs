//! The listing's arguments and paging (LIST-4, LIST-8): `workspace_id`
//! narrows within visibility, `created_since` keeps what is at or after
//! it, `cursor` and `limit` (default, floor, clamp) page, malformed values
//! are validation errors, and live paging skips and repeats nothing.

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine;
use clarion::{Clarion, Error, ListRequest, Principal, SessionState, Timestamp};

use crate::listing_support::*;
use crate::support::rows::{self, Row};
use crate::support::*;

fn since(created_since: &str) -> ListRequest {
    ListRequest {
        // The wire's parser (the Rust API takes a typed time).
        created_since: Timestamp::parse_rfc3339_ceil(created_since),
        ..ListRequest::default()
    }
}

fn b64(text: &str) -> String {
    URL_SAFE_NO_PAD.encode(text)
}

fn rfc3339(offset: i64) -> String {
    Timestamp::from_micros(micros(offset)).to_rfc3339()
}

// ---- LIST-4 --------------------------------------------------------------

dual_backend!(
    list_4_workspace_id_narrows_within_visibility,
    list_4_created_since_keeps_bundles_at_or_after_it,
    list_4_created_since_and_cursor_intersect,
    list_4_limit_default_floor_and_clamp,
    list_4_malformed_cursor_is_a_validation_error,
    list_4_created_since_with_sub_microsecond_digits_keeps_only_later_bundles,
    list_4_malformed_created_since_is_a_validation_error
);

/// LIST-4: `workspace_id` narrows to bundles whose task (AUTH-4) is in
/// that workspace, and never widens visibility.
fn list_4_workspace_id_narrows_within_visibility(db: &TestDb) {
    let [own, foreign, unowned, none, dangling] = visibility_world(db, Some(true));
    // A bundle without its own task id belongs to its session's task.
    let turn = rows::turn_of(db, &unowned);
    rows::insert_bundle(db, "via-session", "s-open", &turn, "");
    Row::new("via-session", "s-open", &turn).insert(db);

    assert_eq!(
        list_ids(db, &alice(), &in_workspace("w-alice")),
        [own.as_str()]
    );
    assert_eq!(
        list_ids(db, &alice(), &in_workspace("w-open")),
        strings(&[&unowned, "via-session"])
    );
    assert_eq!(
        list_ids(db, &alice(), &in_workspace("w-gone")),
        [dangling.as_str()]
    );
    assert_eq!(
        list_ids(db, &alice(), &in_workspace("w-bob")),
        Vec::<String>::new(),
        "no widening"
    );
    assert_eq!(
        list_ids(db, &alice_bot(), &in_workspace("w-bob")),
        Vec::<String>::new(),
        "no widening"
    );
    assert_eq!(
        list_ids(db, &alice(), &in_workspace("w-missing")),
        Vec::<String>::new()
    );
    assert_eq!(
        list_ids(db, &bob(), &in_workspace("w-bob")),
        [foreign.as_str()]
    );
    assert_eq!(
        list_ids(db, &bob(), &in_workspace("w-alice")),
        Vec::<String>::new()
    );
    assert_eq!(
        list_ids(db, &Principal::System, &in_workspace("w-bob")),
        [foreign.as_str()]
    );
    assert_eq!(
        list_ids(db, &Principal::System, &in_workspace("w-alice")),
        [own.as_str()]
    );

    // The empty string means "not given".
    let everything = list_ids(db, &alice(), &ListRequest::default());
    assert_eq!(
        everything,
        strings(&[&own, &unowned, &none, &dangling, "via-session"])
    );
    assert_eq!(list_ids(db, &alice(), &in_workspace("")), everything);
}

/// LIST-4: `created_since` keeps `created_at >= created_since`; the
/// boundary itself is included; any offset is accepted; "" is not given.
fn list_4_created_since_keeps_bundles_at_or_after_it(db: &TestDb) {
    let session = mirror(db, "a", "alice");
    let b0 = ask(db, &session, 1);
    db.clock.advance_micros(SECOND);
    let b1 = ask(db, &session, 1);
    db.clock.advance_micros(1);
    let b2 = ask(db, &session, 1);
    db.clock.advance_micros(SECOND - 1);
    let b3 = ask(db, &session, 1);

    let listed = |created_since: &str| list_ids(db, &alice(), &since(created_since));
    assert_eq!(
        listed("2026-11-29T20:00:01Z"),
        [b1.clone(), b2.clone(), b3.clone()]
    );
    assert_eq!(
        listed("2026-11-29T20:00:01.000000Z"),
        [b1.clone(), b2.clone(), b3.clone()]
    );
    assert_eq!(
        listed("2026-11-29T20:00:00.999999Z"),
        [b1.clone(), b2.clone(), b3.clone()]
    );
    assert_eq!(
        listed("2026-11-29T20:00:01.000001Z"),
        [b2.clone(), b3.clone()]
    );
    assert_eq!(
        listed("2026-11-29T21:00:01+01:00"),
        [b1.clone(), b2.clone(), b3.clone()]
    );
    assert_eq!(listed("2026-11-29T20:00:02Z"), [b3.as_str()]);
    assert_eq!(listed("2026-11-29T20:00:02.000001Z"), Vec::<String>::new());
    assert_eq!(
        listed("2026-11-29T20:00:00Z"),
        [b0.clone(), b1.clone(), b2.clone(), b3.clone()]
    );
    assert_eq!(listed(""), [b0, b1, b2, b3]);
    let empty = db
        .list_pending(&alice(), &since("2027-01-01T00:00:00Z"))
        .unwrap();
    assert_eq!((empty.bundles.len(), empty.next_cursor), (0, None));
}

/// LIST-4: `cursor` and `created_since` combine as an intersection:
/// whichever is later bounds the page.
fn list_4_created_since_and_cursor_intersect(db: &TestDb) {
    let session = mirror(db, "a", "alice");
    let b: Vec<String> = (0..6)
        .map(|_| {
            let id = ask(db, &session, 1);
            db.clock.advance_micros(SECOND);
            id
        })
        .collect();
    let cursor_after = |n: i64| {
        db.list_pending(&alice(), &with_limit(n))
            .unwrap()
            .next_cursor
    };
    let after_b1 = cursor_after(2);
    let after_b3 = cursor_after(4);
    assert!(after_b1.is_some() && after_b3.is_some());

    let both = |cursor: &Option<clarion::Cursor>, created_since: i64| ListRequest {
        cursor: cursor.clone(),
        created_since: Timestamp::parse_rfc3339(&rfc3339(created_since)),
        ..ListRequest::default()
    };
    // created_since later than the cursor.
    assert_eq!(
        list_ids(db, &alice(), &both(&after_b1, 3 * SECOND)),
        b[3..].to_vec()
    );
    // The cursor later than created_since.
    assert_eq!(
        list_ids(db, &alice(), &both(&after_b3, SECOND)),
        b[4..].to_vec()
    );
    // Equal: created_since at the cursor's own bundle; strictly after it.
    assert_eq!(
        list_ids(db, &alice(), &both(&after_b3, 3 * SECOND)),
        b[4..].to_vec()
    );
    // Paging under a created_since keeps it.
    let request = ListRequest {
        limit: Some(2),
        ..since(&rfc3339(2 * SECOND))
    };
    assert_eq!(
        pages(db, &alice(), &request),
        [b[2..4].to_vec(), b[4..6].to_vec()]
    );
}

/// LIST-4: `limit` defaults to 50; below 1 means 50; above 200 is
/// clamped to 200.
fn list_4_limit_default_floor_and_clamp(db: &TestDb) {
    let sessions: Vec<String> = (0..3)
        .map(|n| mirror(db, &format!("s{n}"), "alice"))
        .collect();
    for n in 0..205 {
        ask(db, &sessions[n % 3], 1);
    }
    let size = |limit: Option<i64>| {
        let page = db
            .list_pending(
                &alice(),
                &ListRequest {
                    limit,
                    ..ListRequest::default()
                },
            )
            .unwrap();
        assert!(page.next_cursor.is_some(), "limit {limit:?} leaves more");
        page.bundles.len()
    };
    assert_eq!(size(None), 50);
    assert_eq!(size(Some(0)), 50);
    assert_eq!(size(Some(-1)), 50);
    assert_eq!(size(Some(i64::MIN)), 50);
    assert_eq!(size(Some(1)), 1);
    assert_eq!(size(Some(199)), 199);
    assert_eq!(size(Some(200)), 200);
    assert_eq!(size(Some(201)), 200);
    assert_eq!(size(Some(500)), 200);
    assert_eq!(size(Some(i64::MAX)), 200);
    let pages = pages(db, &alice(), &with_limit(500));
    assert_eq!(pages.iter().map(Vec::len).collect::<Vec<_>>(), [200, 5]);
    let default_pages = pages_len(db);
    assert_eq!(default_pages, [50, 50, 50, 50, 5]);
}

/// LIST-4: a malformed cursor is a validation error naming `cursor`,
/// never ignored.
fn list_4_malformed_cursor_is_a_validation_error(db: &TestDb) {
    let session = mirror(db, "a", "alice");
    for _ in 0..3 {
        ask(db, &session, 1);
    }
    let real = db
        .list_pending(&alice(), &with_limit(1))
        .unwrap()
        .next_cursor
        .unwrap()
        .encode();
    let decoded = String::from_utf8(URL_SAFE_NO_PAD.decode(&real).unwrap()).unwrap();
    let (version, rest) = decoded.split_once(':').unwrap();
    assert_eq!(
        version, "v1",
        "this test forges other versions of {decoded:?}"
    );
    let wrong_version = [
        b64(&format!("v2:{rest}")),
        b64(&format!("v0:{rest}")),
        b64(rest),
    ];
    let garbage = [
        "garbage!".to_owned(),
        "%%%".to_owned(),
        "not a cursor".to_owned(),
        b64("garbage"),
        b64("v1:"),
        b64("v1:not-a-number:pending-000001"),
        b64("v1:123:"),
        b64("v1:123"),
        URL_SAFE_NO_PAD.encode([0xff_u8, 0xfe, 0x00]),
        format!("{real}!"),
    ];
    // The wire form is read at the door: through WIRE-5 on both principals.
    let listed = |principal: &Principal, cursor: &str| {
        db.call_value(&serde_json::json!({
            "op": "list_pending",
            "principal": principal.to_wire(),
            "args": {"cursor": cursor},
        }))
    };
    for cursor in wrong_version.iter().chain(&garbage) {
        assert_invalid(
            clarion::Cursor::parse(cursor).map_err(Error::from),
            "cursor",
        );
        for principal in [alice(), Principal::System] {
            let reply = listed(&principal, cursor);
            assert_eq!(reply.status, 400, "{cursor:?}");
            assert_eq!(reply.body["error"], "cursor: malformed cursor");
        }
    }
    // The real cursor works; "" means not given.
    assert_eq!(listed(&alice(), &real).body["count"], 2);
    assert_eq!(listed(&alice(), "").body["count"], 3);
}

/// LIST-4: `created_at >= created_since` holds exactly even when
/// `created_since` carries sub-microsecond digits: a bundle created
/// before that instant is not kept.
fn list_4_created_since_with_sub_microsecond_digits_keeps_only_later_bundles(db: &TestDb) {
    let session = mirror(db, "a", "alice");
    db.clock.advance_micros(SECOND);
    let at_one = ask(db, &session, 1);
    db.clock.advance_micros(1);
    let just_after = ask(db, &session, 1);
    assert_eq!(
        list_ids(db, &alice(), &since("2026-11-29T20:00:00.9999995Z")),
        [at_one.clone(), just_after.clone()]
    );
    assert_eq!(
        list_ids(db, &alice(), &since("2026-11-29T20:00:01.0000005Z")),
        [just_after.as_str()],
        "a bundle created at 20:00:01.000000 is before 20:00:01.0000005"
    );
}

/// LIST-4: a malformed `created_since` is a validation error naming it.
fn list_4_malformed_created_since_is_a_validation_error(db: &TestDb) {
    let session = mirror(db, "a", "alice");
    ask(db, &session, 1);
    // The time is read at the door (the Rust API takes a typed time).
    for text in [
        "yesterday",
        "2026-11-29",
        "2026-11-29T20:00:00",
        "2026-13-01T00:00:00Z",
        "1795982400",
    ] {
        let reply = db.call_value(&serde_json::json!({
            "op": "list_pending",
            "principal": alice().to_wire(),
            "args": {"created_since": text},
        }));
        assert_eq!(reply.status, 400, "{text}");
        assert!(
            reply.body["error"]
                .as_str()
                .unwrap()
                .starts_with("created_since: "),
            "{text}"
        );
    }
}

/// The page sizes of a full walk with the default limit.
fn pages_len(db: &Clarion) -> Vec<usize> {
    pages(db, &alice(), &ListRequest::default())
        .iter()
        .map(Vec::len)
        .collect()
}

// ---- LIST-8 ---------------------------------------------------------------

dual_backend!(list_8_pages_have_no_gap_or_duplicate_while_bundles_resolve);

/// LIST-8: bundles that become inactive between pages disappear without
/// shifting the others: nothing skipped, nothing duplicated, over four
/// pages.
fn list_8_pages_have_no_gap_or_duplicate_while_bundles_resolve(db: &TestDb) {
    let sessions: Vec<String> = (1..=4)
        .map(|n| mirror(db, &n.to_string(), "alice"))
        .collect();
    // b[4r + k] is round r on session k + 1.
    let mut b = Vec::new();
    for _round in 0..4 {
        for session in &sessions {
            db.clock.advance_micros(SECOND);
            b.push(ask(db, session, 1));
        }
    }
    let limit = 3;
    let mut request = with_limit(limit);
    let next = |db: &TestDb, request: &mut ListRequest| {
        let page = db.list_pending(&alice(), request).unwrap();
        request.cursor = page.next_cursor.clone();
        page
    };

    let page1 = next(db, &mut request);
    assert_eq!(ids(&page1), [b[0].clone(), b[1].clone(), b[2].clone()]);
    // Session 2 ends (b1 seen; b5, b9, b13 not yet); the cursor's own
    // bundle b2 is answered.
    db.set_session_state(&sessions[1], SessionState::Completed)
        .unwrap();
    rows::answer_all(db, &b[2]);

    let page2 = next(db, &mut request);
    assert_eq!(ids(&page2), [b[3].clone(), b[4].clone(), b[6].clone()]);
    // Session 3 moves on to a new turn (b6 seen; b10, b14 not yet).
    db.begin_turn(&sessions[2]).unwrap();

    let page3 = next(db, &mut request);
    assert_eq!(ids(&page3), [b[7].clone(), b[8].clone(), b[11].clone()]);
    assert!(page3.next_cursor.is_some());
    // b12 (not yet seen) is answered through its row.
    rows::set_status(db, &b[12], "q1", Some("answered"));

    let page4 = next(db, &mut request);
    assert_eq!(ids(&page4), [b[15].clone()]);
    assert_eq!(page4.next_cursor, None);

    let collected: Vec<String> = [page1, page2, page3, page4].iter().flat_map(ids).collect();
    let expected: Vec<String> = [0, 1, 2, 3, 4, 6, 7, 8, 11, 15]
        .iter()
        .map(|&i| b[i].clone())
        .collect();
    assert_eq!(collected, expected);
    let unique: std::collections::BTreeSet<&String> = collected.iter().collect();
    assert_eq!(unique.len(), collected.len(), "no duplicates");
}
