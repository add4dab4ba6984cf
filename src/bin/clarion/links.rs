//! Answer links on the command line (LINK-4): `clarion link PENDING_ID
//! --for USER [--ttl AGE] [--qr]` prints the URL, and with `--qr` a QR
//! code of it; `clarion ask … --link-for USER [--qr]` mints one for the
//! new bundle after the ids. `--public-url` (or `CLARION_PUBLIC_URL`) is
//! the base of the URL, as `clarion serve`'s is. These flags are the
//! command line's own: the link is `answer_link`'s, through the same
//! WIRE-5 call as every other door.

use std::net::IpAddr;

use clap::{Arg, ArgAction, ArgMatches, Command};
use clarion::envelope::Envelope;
use clarion::Timestamp;
use qrcode::render::unicode::Dense1x2;
use qrcode::{EcLevel, QrCode};
use serde_json::Value;

use crate::readable::{clean, span, when};

/// `--public-url`: where links open, for `link`, `ask` and `webhook run`
/// (`serve` says it its own way).
const PUBLIC_URL_HELP: &str = "Where this service is reached from outside \
    (https://inbox.example.com): answer links are <URL>/a/<token>; without it, the relative \
    /a/<token>.";

pub fn public_url_arg() -> Arg {
    Arg::new("public_url")
        .long("public-url")
        .env("CLARION_PUBLIC_URL")
        .value_name("URL")
        .help(PUBLIC_URL_HELP)
}

fn qr_arg() -> Arg {
    Arg::new("qr").long("qr").action(ArgAction::SetTrue).help(
        "Also draw the link as a QR code in the terminal, after the URL (on stderr when \
             the output is JSON, so stdout stays JSON).",
    )
}

/// `clarion link`'s own flags: `--qr` and `--public-url`; by default it
/// prints the URL alone, so `--json` is not its default.
pub fn link_args(command: Command) -> Command {
    command
        .arg(qr_arg())
        .arg(public_url_arg())
        .mut_arg("json", |arg| {
            arg.help("The reply as JSON, `{\"status\", \"body\"}` (by default: the URL alone).")
        })
}

/// `clarion ask`'s link flags: `--link-for USER`, `--qr`, `--public-url`.
pub fn ask_args(command: Command) -> Command {
    command
        .arg(
            Arg::new("link_for")
                .long("link-for")
                .value_name("USER")
                .help(
                    "Then print an answer link for this person on the new bundle (they must see \
                     it): a credential, for them only. Under --json, a second JSON line, \
                     answer_link's reply.",
                ),
        )
        .arg(qr_arg().requires("link_for"))
        .arg(public_url_arg())
}

/// Where the output goes: the JSON reply, the URL alone, or words.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Output {
    Json,
    Url,
    Text,
}

/// LINK-4: prints `answer_link`'s reply for `user_id`: the URL on its own
/// line (words before it under `--text`), then with `qr` its QR code; a
/// refusal as every command prints one. The exit code is the reply's.
pub fn print(
    name: &str,
    reply: &Envelope,
    output: Output,
    user_id: &str,
    qr: bool,
    now: Timestamp,
) {
    if output == Output::Json {
        println!("{}", reply.to_reply());
        if reply.status == 200 && qr {
            eprintln!("{}", qr_code(url_of(reply)));
        }
        return;
    }
    if reply.status != 200 {
        eprintln!(
            "clarion {name}: {} ({})",
            reply.body["error"].as_str().unwrap_or_default(),
            reply.status
        );
        return;
    }
    if output == Output::Text {
        println!("{}", in_words(user_id, &reply.body["expires_at"], now));
    }
    println!("{}", url_of(reply));
    if qr {
        println!("{}", qr_code(url_of(reply)));
    }
}

fn url_of(reply: &Envelope) -> &str {
    reply.body["url"].as_str().unwrap_or_default()
}

/// `Answer link for alice, answers until 2026-12-07 15:00:00 UTC (in 1 d);
/// a credential, send it to them only:`.
fn in_words(user_id: &str, expires_at: &Value, now: Timestamp) -> String {
    let until = Timestamp::parse_rfc3339(expires_at.as_str().unwrap_or_default());
    let left = until
        .map(|until| {
            let seconds = until.as_micros().saturating_sub(now.as_micros()).max(0) / 1_000_000;
            format!(" (in {})", span(seconds as u64))
        })
        .unwrap_or_default();
    format!(
        "Answer link for {}, answers until {}{left}; a credential, send it to them only:",
        clean(user_id),
        when(expires_at),
    )
}

/// The URL as a QR code in text: a block is a light module, so it reads on
/// a dark terminal as `qrencode -t UTF8` does, two rows a line, with its
/// quiet zone. The lowest error correction keeps it narrow (a screen is
/// not a worn label).
pub fn qr_code(url: &str) -> String {
    match QrCode::with_error_correction_level(url.as_bytes(), EcLevel::L) {
        Ok(code) => code
            .render::<Dense1x2>()
            .dark_color(Dense1x2::Light)
            .light_color(Dense1x2::Dark)
            .quiet_zone(true)
            .build(),
        // A URL too long for any QR code (over 2,953 bytes) is not drawn.
        Err(error) => format!("(no QR code: {error})"),
    }
}

/// The matches' `--qr` and `--public-url`.
pub fn qr(matches: &ArgMatches) -> bool {
    matches.try_get_one::<bool>("qr").ok().flatten() == Some(&true)
}

pub fn public_url(matches: &ArgMatches) -> Option<&str> {
    matches
        .try_get_one::<String>("public_url")
        .ok()
        .flatten()
        .map(String::as_str)
}

/// LINK-3, HTTP-4: `clarion serve --public-url`: an absolute `http` or
/// `https` URL (the library checks the rest when it opens); under
/// `--open-as`, which serves without a credential, one on this machine
/// only — a loopback address or `localhost` — else a link would send
/// people from outside to a server that trusts whoever reaches it.
pub fn check_public_url(url: &str, open_as: bool) -> Result<(), String> {
    let rest = url
        .strip_prefix("http://")
        .or_else(|| url.strip_prefix("https://"))
        .ok_or_else(|| format!("--public-url {url:?} is not an absolute http or https URL"))?;
    let authority = rest.split(['/', '?', '#']).next().unwrap_or_default();
    let host_port = authority
        .rsplit_once('@')
        .map_or(authority, |(_, host)| host);
    let host = match host_port.strip_prefix('[') {
        Some(v6) => v6.split(']').next().unwrap_or_default(),
        None => host_port.split(':').next().unwrap_or_default(),
    };
    if host.is_empty() {
        return Err(format!("--public-url {url:?} names no host"));
    }
    let loopback = host.eq_ignore_ascii_case("localhost")
        || host.parse::<IpAddr>().is_ok_and(|ip| ip.is_loopback());
    if open_as && !loopback {
        return Err(format!(
            "--open-as serves without authentication, so --public-url must be a loopback \
             address (127.0.0.1, ::1, localhost), not {url:?}"
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn link_3_open_as_takes_only_a_loopback_public_url() {
        for good in [
            "http://127.0.0.1:7878",
            "http://127.8.9.1/inbox",
            "http://[::1]:7878/",
            "http://localhost:7878",
            "https://LOCALHOST",
            "http://user@127.0.0.1:80",
        ] {
            assert!(check_public_url(good, true).is_ok(), "{good}");
        }
        for bad in [
            "https://inbox.example.com",
            "http://10.0.0.1:7878",
            "http://[::ffff:127.0.0.1]/",
            "http://localhost.example.com",
            "http://127.0.0.1@evil.example.com",
        ] {
            assert!(check_public_url(bad, true).is_err(), "{bad}");
            assert!(check_public_url(bad, false).is_ok(), "{bad}");
        }
        for malformed in ["ftp://127.0.0.1", "127.0.0.1:7878", "http://", "http:///a"] {
            assert!(check_public_url(malformed, false).is_err(), "{malformed}");
        }
    }
}
