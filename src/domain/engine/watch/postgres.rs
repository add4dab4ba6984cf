//! PostgreSQL: a listening connection (`LISTEN` on the schema's channel)
//! wakes the waiters a notification names at once; once per poll interval
//! the one re-read covers a notification lost to a crash between a commit
//! and its `NOTIFY`; a dropped connection is listened again while the poll
//! carries the waiters. Behind a transaction pooler with no direct URL
//! (PROD-1) nothing can listen: the poll alone carries waiters and event
//! readers, so other processes' changes are seen within a poll interval.

use std::time::Instant;

use std::sync::atomic::Ordering;
use std::sync::mpsc;

use crate::domain::engine::watch::tick::{heard, recheck_logged, Context, Reread};
use crate::store::watch::{Heard, Listener, Stop};

/// Listens, waking waiters as notifications arrive; polls once per poll
/// interval; listens again when the connection drops. With no `url` to
/// listen on, polls only.
pub(super) fn watch(
    context: &Context,
    url: Option<&str>,
    stop: &Stop,
    ready: mpsc::SyncSender<()>,
) {
    // PROD-2: an outage is logged once, when listening first fails, and
    // its end once, when listening works again; not on every retry.
    let mut deaf_said = false;
    if url.is_none() {
        tracing::info!(
            poll_interval_ms = context.settings.poll_interval.as_millis() as u64,
            "behind a transaction pooler with no direct URL: other processes' changes \
             are seen by polling"
        );
    }
    let mut listener = listen(context, url, &mut deaf_said);
    let _ = ready.send(());
    let poll = context.settings.poll_interval;
    let mut next_poll = Instant::now() + poll;
    loop {
        let now = Instant::now();
        if now >= next_poll {
            next_poll = now + poll;
            let deaf = listener.is_none();
            if deaf {
                listener = listen(context, url, &mut deaf_said);
            }
            // Deaf, announcements were missed: event readers read on
            // from their positions. (Not on every poll: each reader
            // would read; a notification lost to a crash between a
            // commit and its NOTIFY waits for the next change.)
            if deaf {
                context.events.notify();
            }
            if !context.waiters.is_empty() {
                // The poll is this tick's one check: its statement is
                // the re-read itself, not a re-read after a change.
                context.stats.checks.fetch_add(1, Ordering::SeqCst);
                // Deaf, a principal's sight may have changed unheard.
                let _ = recheck_logged(context, Reread::Poll { wake_scoped: deaf });
            }
        }
        let timeout = next_poll.saturating_duration_since(Instant::now());
        let Some(active) = listener.as_mut() else {
            if stop.sleep(timeout) {
                return;
            }
            continue;
        };
        match active.wait(timeout, stop) {
            Ok(Heard::Stopped) => return,
            Ok(Heard::Payloads(payloads)) => {
                for payload in payloads {
                    heard(context, &payload);
                }
            }
            Err(error) => {
                tracing::warn!(%error, "the listening connection dropped; polling until it is back");
                deaf_said = true;
                // Closed before a new one opens.
                drop(listener.take());
                context.stats.listener_pid.store(0, Ordering::SeqCst);
                listener = listen(context, url, &mut deaf_said);
                // What was announced while deaf is read back.
                context.events.notify();
                let _ = recheck_logged(context, Reread::AfterChange);
            }
        }
    }
}

/// A listening connection, or none (then the poll carries the waiters).
/// `deaf_said`: whether the failure to listen has been logged already.
fn listen(context: &Context, url: Option<&str>, deaf_said: &mut bool) -> Option<Listener> {
    let url = url?;
    if context.stats.block_listening.load(Ordering::SeqCst) {
        return None;
    }
    match Listener::listen(url) {
        Ok(listener) => {
            context
                .stats
                .listener_pid
                .store(i64::from(listener.backend_pid()), Ordering::SeqCst);
            if std::mem::take(deaf_said) {
                tracing::info!("listening for other processes' changes again");
            }
            Some(listener)
        }
        Err(error) => {
            if !std::mem::replace(deaf_said, true) {
                tracing::warn!(%error, "could not listen for other processes' changes; polling");
            }
            None
        }
    }
}
