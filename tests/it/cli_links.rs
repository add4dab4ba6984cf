//! LINK-1, LINK-4 on the command line: `clarion link PENDING_ID --for USER
//! [--ttl AGE] [--qr]` prints the URL (relative `/a/…` without
//! `--public-url`), with `--qr` a QR code of it; `clarion ask …
//! --link-for USER [--qr]` prints one after the ids; `clarion
//! rotate-link-key [--now]`; an out-of-range `--ttl` is the operation's
//! refusal naming `ttl_ms`; and LINK-3: `clarion serve --open-as` refuses
//! a `--public-url` that is not a loopback address.

use std::process::Output;

use clarion::test_hooks::{link_page_opens, link_respond};
use clarion::{Clock, Principal, UserUpsert};
use serde_json::{json, Value};

use crate::cli_quorum::{code, reply, stdout, SINGLE};
use crate::cli_text::clarion_at;
use crate::support::server::clarion;
use crate::support::*;

dual_backend!(
    link_4_cli_link_prints_the_url_alone,
    link_4_cli_qr_draws_the_url,
    link_4_cli_ask_link_for_prints_it_after_the_ids,
    link_1_cli_rotate_link_key_ends_links_with_now,
    link_1_cli_an_out_of_range_ttl_is_refused,
    link_3_cli_serve_open_as_takes_only_a_loopback_public_url,
    link_1_clarion_open_takes_public_url,
);

/// The binary with its clock at the test clock's time.
fn run(db: &TestDb, args: &[&str]) -> Output {
    clarion_at(db, Some(db.clock.now()), args)
}

/// alice's workspace `w-l` with bob a member, both in the directory, and
/// a bundle asked in it.
fn world(db: &TestDb) -> String {
    for user in ["alice", "bob"] {
        db.upsert_user(UserUpsert::new(user)).unwrap();
    }
    let session = mirror(db, "l", "alice");
    db.set_members("w-l", &["bob".to_owned()]).unwrap();
    ask(db, &session, 1)
}

/// The token of a link's URL.
fn token(url: &str) -> &str {
    url.rsplit_once("/a/").map(|(_, token)| token).unwrap()
}

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

/// Whether `line` is a row of a QR code drawn two modules a character.
fn qr_row(line: &str) -> bool {
    !line.is_empty() && line.chars().all(|c| " ▀▄█".contains(c))
}

/// The QR code's rows at the end of `text`: as many, each as wide, and
/// square (two modules a row, the last row maybe half).
fn qr_block(text: &str) -> Vec<String> {
    let rows: Vec<String> = text
        .lines()
        .skip_while(|line| !qr_row(line))
        .map(str::to_owned)
        .collect();
    assert!(rows.len() >= 15, "{text}");
    assert!(rows.iter().all(|row| qr_row(row)), "{text}");
    let width = rows[0].chars().count();
    assert!(
        rows.iter().all(|row| row.chars().count() == width),
        "{text}"
    );
    assert_eq!(rows.len(), width.div_ceil(2), "{text}");
    rows
}

/// What a QR code drawn by `--qr` says, read by an independent decoder
/// from its rows as a picture: a block is light (drawn for a dark
/// terminal), a space dark, `▀` light above dark, `▄` below; four pixels a
/// module.
fn decoded(rows: &[String]) -> String {
    const SCALE: usize = 4;
    let mut light: Vec<Vec<bool>> = Vec::new();
    for row in rows {
        let (top, bottom): (Vec<bool>, Vec<bool>) = row
            .chars()
            .map(|c| match c {
                '█' => (true, true),
                '▀' => (true, false),
                '▄' => (false, true),
                _ => (false, false),
            })
            .unzip();
        light.push(top);
        light.push(bottom);
    }
    let (width, height) = (light[0].len() * SCALE, light.len() * SCALE);
    let mut picture = rqrr::PreparedImage::prepare_from_greyscale(width, height, |x, y| {
        if light[y / SCALE][x / SCALE] {
            255
        } else {
            0
        }
    });
    let grids = picture.detect_grids();
    assert_eq!(grids.len(), 1, "one QR code");
    grids[0].decode().expect("the QR code decodes").1
}

/// LINK-4, LINK-1: `clarion link` prints the URL alone on its line: the
/// relative `/a/<token>` without a public URL, under `--public-url` (or
/// `CLARION_PUBLIC_URL`) absolute; `--json` prints the reply, `--text`
/// words before the URL. Each link answers as its user, once.
fn link_4_cli_link_prints_the_url_alone(db: &TestDb) {
    let id = world(db);
    let plain = run(db, &["link", &id, "--for", "alice"]);
    assert_eq!(code(&plain), 0, "{plain:?}");
    let text = stdout(&plain);
    let url = text.trim_end();
    assert!(url.starts_with("/a/v1.") && !url.contains('\n'), "{text}");
    assert_eq!(text, format!("{url}\n"));
    let answered = link_respond(db, token(url), &one_answer("by link")).unwrap();
    assert!(
        matches!(answered, Some(Ok(ref resolved)) if resolved.claimed),
        "{answered:?}"
    );

    let id = world(db);
    let based = run(
        db,
        &[
            "link",
            &id,
            "--for",
            "bob",
            "--public-url",
            "https://inbox.example.com/",
        ],
    );
    assert_eq!(code(&based), 0, "{based:?}");
    assert!(
        stdout(&based).starts_with("https://inbox.example.com/a/v1."),
        "{based:?}"
    );
    let mut from_env = std::process::Command::new(env!("CARGO_BIN_EXE_clarion"));
    from_env
        .args(["link", &id, "--for", "bob", "--database-url", &db.url])
        .env("CLARION_PUBLIC_URL", "http://127.0.0.1:7878")
        .env("CLARION_TEST_NOW", db.clock.now().to_rfc3339());
    let from_env = from_env.output().unwrap();
    assert!(
        stdout(&from_env).starts_with("http://127.0.0.1:7878/a/v1."),
        "{from_env:?}"
    );

    let json = run(db, &["link", &id, "--for", "bob", "--ttl", "2h", "--json"]);
    assert_eq!(code(&json), 0, "{json:?}");
    let body = reply(&json)["body"].clone();
    assert_eq!(
        body.as_object().unwrap().keys().collect::<Vec<_>>(),
        ["url", "expires_at"]
    );
    let two_hours = clarion::Timestamp::from_micros(db.clock.now().as_micros() + 2 * 3_600_000_000);
    assert_eq!(body["expires_at"], json!(two_hours.to_rfc3339()));

    let words = run(db, &["link", &id, "--for", "bob", "--text"]);
    assert_eq!(code(&words), 0, "{words:?}");
    let lines: Vec<String> = stdout(&words).lines().map(str::to_owned).collect();
    assert_eq!(lines.len(), 2, "{lines:?}");
    assert!(
        lines[0].starts_with("Answer link for bob, answers until ")
            && lines[0].contains("(in 1 d)")
            && lines[0].ends_with("send it to them only:"),
        "{lines:?}"
    );
    assert!(lines[1].starts_with("/a/v1."), "{lines:?}");
    // Each link is its own: bob's answers as bob.
    let answered = link_respond(db, token(&lines[1]), &one_answer("bob's")).unwrap();
    assert!(
        matches!(answered, Some(Ok(ref resolved)) if resolved.claimed),
        "{answered:?}"
    );

    // A person who does not see the bundle: the one not-found, exit 3,
    // on stderr (stdout stays empty).
    let carol = run(db, &["link", &id, "--for", "carol"]);
    assert_eq!(code(&carol), 3, "{carol:?}");
    assert!(carol.stdout.is_empty(), "{carol:?}");
    assert!(stderr(&carol).starts_with("clarion link: "), "{carol:?}");
    // Only the host mints links.
    let as_alice = run(db, &["link", &id, "--for", "alice", "--as", "user:alice"]);
    assert_eq!(code(&as_alice), 6, "{as_alice:?}");
}

/// LINK-4: `--qr` draws the URL as a QR code after it, square, in block
/// characters; under `--json` on stderr, so stdout stays the JSON reply.
fn link_4_cli_qr_draws_the_url(db: &TestDb) {
    let id = world(db);
    let drawn = run(
        db,
        &[
            "link",
            &id,
            "--for",
            "alice",
            "--qr",
            "--public-url",
            "https://inbox.example.com",
        ],
    );
    assert_eq!(code(&drawn), 0, "{drawn:?}");
    let text = stdout(&drawn);
    let first = text.lines().next().unwrap();
    assert!(
        first.starts_with("https://inbox.example.com/a/v1."),
        "{text}"
    );
    let rows = qr_block(&text);
    assert_eq!(
        rows.len() + 1,
        text.lines().count(),
        "the URL, then the code"
    );
    // Its quiet zone: the first row is light all along.
    assert!(rows[0].chars().all(|c| c == '█'), "{text}");
    assert_eq!(decoded(&rows), first, "the code says the URL");

    let json = run(db, &["link", &id, "--for", "alice", "--qr", "--json"]);
    assert_eq!(code(&json), 0, "{json:?}");
    let url = reply(&json)["body"]["url"].as_str().unwrap().to_owned();
    assert!(url.starts_with("/a/"), "{url}");
    assert_eq!(decoded(&qr_block(&stderr(&json))), url);
}

/// LINK-4: `clarion ask … --link-for USER` asks, prints the ids, then
/// mints a link for USER on the new bundle: a second JSON line (the
/// `answer_link` reply), or under `--text` the words and the URL after the
/// ids, and with `--qr` its code. `--qr` without `--link-for` is a usage
/// error; a link for someone who does not see the bundle exits 3 after the
/// bundle was asked.
fn link_4_cli_ask_link_for_prints_it_after_the_ids(db: &TestDb) {
    world(db);
    let ask = |flags: &[&str]| {
        let mut args = vec!["ask", "s-l", "--questions", SINGLE];
        args.extend_from_slice(flags);
        run(db, &args)
    };
    let asked = ask(&["--link-for", "bob"]);
    assert_eq!(code(&asked), 0, "{asked:?}");
    let text = stdout(&asked);
    let lines: Vec<Value> = text
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect();
    assert_eq!(lines.len(), 2, "{text}");
    let pending_id = lines[0]["body"]["pending_id"].as_str().unwrap();
    assert_eq!(lines[1]["status"], json!(200));
    let url = lines[1]["body"]["url"].as_str().unwrap();
    assert!(url.starts_with("/a/v1."), "{text}");
    let bundle = link_respond(
        db,
        token(url),
        &answering(vec![answer("target", &["staging"], "")]),
    )
    .unwrap();
    match bundle {
        Some(Ok(resolved)) => {
            assert!(resolved.claimed);
            assert_eq!(resolved.response.pending_id, pending_id);
        }
        other => panic!("{other:?}"),
    }

    let words = ask(&["--link-for", "alice", "--qr", "--text"]);
    assert_eq!(code(&words), 0, "{words:?}");
    let text = stdout(&words);
    let lines: Vec<&str> = text.lines().collect();
    assert!(lines[0].ends_with("(asked)"), "{text}");
    let at = lines
        .iter()
        .position(|line| line.starts_with("Answer link for alice, answers until "))
        .unwrap_or_else(|| panic!("{text}"));
    assert!(
        lines[..at].iter().any(|line| line.contains("staging")),
        "the ids first: {text}"
    );
    assert!(lines[at + 1].starts_with("/a/v1."), "{text}");
    assert_eq!(decoded(&qr_block(&text)), lines[at + 1]);

    let usage = ask(&["--qr"]);
    assert_eq!(code(&usage), 2, "{usage:?}");
    assert!(stderr(&usage).contains("--link-for"), "{usage:?}");

    let unseen = ask(&["--link-for", "carol"]);
    assert_eq!(code(&unseen), 3, "{unseen:?}");
    let first: Value = serde_json::from_str(stdout(&unseen).lines().next().unwrap()).unwrap();
    let asked_anyway = first["body"]["pending_id"].as_str().unwrap();
    assert!(db.get_bundle(&Principal::System, asked_anyway).is_ok());
}

/// LINK-1: `clarion rotate-link-key` signs with a new key, the links made
/// before keep working; with `--now` they stop at once.
fn link_1_cli_rotate_link_key_ends_links_with_now(db: &TestDb) {
    let id = world(db);
    let minted = run(db, &["link", &id, "--for", "alice"]);
    let url = stdout(&minted).trim_end().to_owned();
    assert!(link_page_opens(db, token(&url)).unwrap());

    let rotated = run(db, &["rotate-link-key"]);
    assert_eq!(code(&rotated), 0, "{rotated:?}");
    assert_eq!(
        reply(&rotated),
        json!({"status": 200, "body": {"ok": true}, "code": "", "field": ""})
    );
    assert!(
        link_page_opens(db, token(&url)).unwrap(),
        "retired keys verify"
    );
    let after = stdout(&run(db, &["link", &id, "--for", "alice"]));
    assert!(link_page_opens(db, token(after.trim_end())).unwrap());

    let now = run(db, &["rotate-link-key", "--now", "--text"]);
    assert_eq!(code(&now), 0, "{now:?}");
    assert_eq!(stdout(&now), "ok\n");
    assert!(
        !link_page_opens(db, token(&url)).unwrap(),
        "every older key is gone"
    );
    assert!(!link_page_opens(db, token(after.trim_end())).unwrap());
}

/// LINK-1: `--ttl` from a minute to a week; outside it the operation's
/// refusal, exit 5, naming `ttl_ms`; an age without its unit is a usage
/// error (exit 2).
fn link_1_cli_an_out_of_range_ttl_is_refused(db: &TestDb) {
    let id = world(db);
    for ttl in ["59s", "8d"] {
        let refused = run(db, &["link", &id, "--for", "alice", "--ttl", ttl]);
        assert_eq!(code(&refused), 5, "{ttl}: {refused:?}");
        assert!(refused.stdout.is_empty(), "{refused:?}");
        assert!(
            stderr(&refused).starts_with("clarion link: ttl_ms: must be from 60000 to 604800000"),
            "{ttl}: {refused:?}"
        );
        let json = run(db, &["link", &id, "--for", "alice", "--ttl", ttl, "--json"]);
        assert_eq!(code(&json), 5, "{json:?}");
        assert!(reply(&json)["body"]["error"]
            .as_str()
            .unwrap()
            .starts_with("ttl_ms: "));
    }
    for ttl in ["1m", "7d"] {
        let made = run(db, &["link", &id, "--for", "alice", "--ttl", ttl]);
        assert_eq!(code(&made), 0, "{ttl}: {made:?}");
    }
    let bare = run(db, &["link", &id, "--for", "alice", "--ttl", "90"]);
    assert_eq!(code(&bare), 2, "{bare:?}");
}

/// LINK-3: under `--open-as` (no authentication) `--public-url` must be a
/// loopback address, else `clarion serve` refuses to start, a usage error
/// (exit 2), before it opens the database; a malformed one is refused
/// too.
fn link_3_cli_serve_open_as_takes_only_a_loopback_public_url(db: &TestDb) {
    for (url, why) in [
        ("https://inbox.example.com", "must be a loopback address"),
        ("http://10.1.2.3:7878", "must be a loopback address"),
        ("inbox.example.com", "not an absolute http or https URL"),
    ] {
        let refused = clarion(&[
            "serve",
            "--database-url",
            &db.url,
            "--listen",
            "127.0.0.1:0",
            "--open-as",
            "user:alice",
            "--public-url",
            url,
        ]);
        assert_eq!(code(&refused), 2, "{url}: {refused:?}");
        assert!(refused.stdout.is_empty(), "{refused:?}");
        let said = stderr(&refused);
        assert!(
            said.contains("--public-url") && said.contains(why),
            "{url}: {said}"
        );
    }
}

/// LINK-1: `clarion_open`'s `public_url` is the base of the links its
/// handle makes; one that is not an absolute `http`/`https` URL without a
/// query, or not a string, fails the open, naming the setting.
fn link_1_clarion_open_takes_public_url(db: &TestDb) {
    use std::ffi::{CStr, CString};

    use clarion::ffi::{clarion_close, clarion_last_error, clarion_open};

    use crate::support::abi::abi_call;
    let id = world(db);
    let open = |public_url: Value| {
        let config = json!({"database_url": db.url, "public_url": public_url}).to_string();
        let config = CString::new(config).unwrap();
        unsafe { clarion_open(config.as_ptr()) }
    };
    for (bad, why) in [
        (
            json!("inbox.example.com"),
            "must be an absolute http or https URL",
        ),
        (
            json!("https://inbox.example.com/?a=b"),
            "must be an absolute http or https URL",
        ),
        (
            json!("https://inbox example.com"),
            "must be an absolute http or https URL",
        ),
        (json!(["https://inbox.example.com"]), "expected a string"),
    ] {
        assert!(open(bad.clone()).is_null(), "{bad}");
        let error = unsafe { CStr::from_ptr(clarion_last_error()) }
            .to_str()
            .unwrap();
        assert!(
            error.starts_with(&format!("config.public_url: {why}")),
            "{bad}: {error}"
        );
    }
    for (base, expected) in [
        (
            json!("https://inbox.example.com/"),
            "https://inbox.example.com/a/v1.",
        ),
        (json!(null), "/a/v1."),
    ] {
        let handle = open(base.clone());
        assert!(!handle.is_null(), "{base}");
        let request = json!({"op": "answer_link", "principal": {"kind": "system"}, "args": {"pending_id": id, "user_id": "alice"}});
        let reply = abi_call(handle as usize, &request);
        assert_eq!(reply["status"], json!(200), "{reply}");
        let url = reply["body"]["url"].as_str().unwrap();
        assert!(url.starts_with(expected), "{base}: {url}");
        clarion_close(handle);
    }
}
