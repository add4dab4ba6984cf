//! WIRE-5: the C ABI. An opaque handle, JSON text in and out, and one free
//! function for every string clarion hands out. The header
//! `include/clarion.h` is generated from this file by cbindgen and
//! committed; a test fails when the two differ.
//!
//! No input may crash the host: every entry point checks its pointers and
//! catches panics, and every request problem (NULL, invalid UTF-8, malformed,
//! oversized or too deeply nested JSON) is a `400` reply.

use std::cell::RefCell;
use std::collections::HashMap;
use std::ffi::{c_char, CStr, CString};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, OnceLock};

use serde_json::Value;

use crate::doors::envelope::{self, Envelope};
use crate::error::Error;
use crate::handle::Clarion;

/// The version of this ABI: the six symbols and the request and reply
/// formats of WIRE-5.
pub const ABI_VERSION: &CStr = c"1";

/// An open clarion database, shared by any number of threads. Opaque: a
/// `clarion_t *` is a number naming an open handle, never dereferenced, so
/// closing it while other threads are inside calls frees nothing they use
/// (REL-7), and a closed handle's number is never given out again.
pub struct Handle {
    _opaque: [u8; 0],
}

/// The open handles, by number. A call clones its handle out and works on
/// the clone, so `clarion_close` can take the handle away at any time.
fn open_handles() -> &'static Mutex<HashMap<usize, Clarion>> {
    static OPEN: OnceLock<Mutex<HashMap<usize, Clarion>>> = OnceLock::new();
    OPEN.get_or_init(Default::default)
}

/// The next handle number; never reused, never 0 (NULL).
static NEXT_HANDLE: AtomicUsize = AtomicUsize::new(1);

fn register(clarion: Clarion) -> *mut Handle {
    let number = NEXT_HANDLE.fetch_add(1, Ordering::Relaxed);
    open_handles()
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .insert(number, clarion);
    std::ptr::without_provenance_mut(number)
}

fn lookup(handle: *mut Handle) -> Option<Clarion> {
    open_handles()
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .get(&handle.addr())
        .cloned()
}

thread_local! {
    /// Why this thread's most recent `clarion_open` failed.
    static LAST_ERROR: RefCell<Option<CString>> = const { RefCell::new(None) };
}

fn set_last_error(message: &str) {
    // A message with an interior NUL loses the rest rather than being lost.
    let message = message.split('\0').next().unwrap_or_default();
    let message = CString::new(message).unwrap_or_default();
    LAST_ERROR.with(|slot| *slot.borrow_mut() = Some(message));
}

fn clear_last_error() {
    LAST_ERROR.with(|slot| *slot.borrow_mut() = None);
}

/// The reply text as a string the caller owns.
fn into_owned_reply(envelope: &Envelope) -> *mut c_char {
    // serde_json escapes U+0000, so the reply never contains a NUL byte.
    CString::new(envelope.to_reply()).map_or(std::ptr::null_mut(), CString::into_raw)
}

fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    payload
        .downcast_ref::<&str>()
        .map(|s| (*s).to_owned())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "unknown panic".to_owned())
}

/// The settings `clarion_open` takes.
const OPEN_SETTINGS: [&str; 5] = [
    "database_url",
    "direct_database_url",
    "pool_size",
    "sweep_ms",
    "public_url",
];

/// `clarion_open`'s configuration: `{"database_url": ..., "pool_size": 8,
/// "direct_database_url": ..., "sweep_ms": 250, "public_url": ...}`.
fn open_from_config(config: &str) -> Result<Clarion, String> {
    let value: Value =
        serde_json::from_str(config).map_err(|e| format!("config: not valid JSON: {e}"))?;
    let Value::Object(fields) = &value else {
        return Err("config: expected a JSON object".to_owned());
    };
    if let Some(key) = fields
        .keys()
        .find(|key| !OPEN_SETTINGS.contains(&key.as_str()))
    {
        return Err(format!("config.{key}: unknown setting"));
    }
    let url = match fields.get("database_url") {
        Some(Value::String(url)) if !url.is_empty() => url,
        Some(Value::String(_)) | None | Some(Value::Null) => {
            return Err("config.database_url: required".to_owned())
        }
        Some(_) => return Err("config.database_url: expected a string".to_owned()),
    };
    let mut builder = Clarion::builder(url);
    // PROD-1: PostgreSQL straight, beside a pooled `database_url`.
    match fields.get("direct_database_url") {
        None | Some(Value::Null) => {}
        Some(Value::String(direct)) => builder = builder.direct_url(direct),
        Some(_) => return Err("config.direct_database_url: expected a string".to_owned()),
    }
    match fields.get("pool_size") {
        None | Some(Value::Null) => {}
        Some(size) => {
            let size = size
                .as_u64()
                .filter(|n| (1..=1024).contains(n))
                .ok_or("config.pool_size: expected an integer from 1 to 1024")?;
            builder = builder.pool_size(size as u32);
        }
    }
    // EXP-4, NUDGE-2: a host on the C ABI gets deadlines and reminders
    // taken on time by a sweeper of its own.
    match fields.get("sweep_ms") {
        None | Some(Value::Null) => {}
        Some(ms) => {
            let ms = ms
                .as_u64()
                .filter(|n| (10..=60_000).contains(n))
                .ok_or("config.sweep_ms: expected an integer from 10 to 60000")?;
            builder = builder.sweep_deadlines(std::time::Duration::from_millis(ms));
        }
    }
    // LINK-1: the base of the answer links `answer_link` and the relay
    // payloads make; checked here so the refusal names the setting.
    match fields.get("public_url") {
        None | Some(Value::Null) => {}
        Some(Value::String(url)) => {
            crate::domain::open::checked_public_url(url).map_err(|error| {
                let why = match error {
                    crate::error::OpenError::Config(why) => why,
                    other => other.to_string(),
                };
                format!(
                    "config.public_url: {}",
                    why.trim_start_matches("public_url ")
                )
            })?;
            builder = builder.public_url(url);
        }
        Some(_) => return Err("config.public_url: expected a string".to_owned()),
    }
    // AUD-4: this handle's attempts record the C ABI.
    builder
        .open()
        .map(|clarion| clarion.via(crate::rules::vocabulary::Channel::CAbi))
        .map_err(|error| error.to_string())
}

/// The ABI version, a static string the caller must not free.
#[no_mangle]
pub extern "C" fn clarion_abi_version() -> *const c_char {
    ABI_VERSION.as_ptr()
}

/// Opens (and migrates) a database. `config_json` is
/// `{"database_url": "...", "pool_size": 8, "direct_database_url": "...",
/// "sweep_ms": 250, "public_url": "https://..."}` (`pool_size`;
/// `direct_database_url`, PostgreSQL beside a pooled URL; `sweep_ms`, a
/// deadline and reminder sweeper every that many milliseconds, 10 to
/// 60,000, none without it; `public_url`, where answer links open,
/// `<public_url>/a/<token>`, relative `/a/<token>` without it: all
/// optional).
/// Returns NULL on error; `clarion_last_error` then says why.
///
/// # Safety
/// `config_json` is NULL or a NUL-terminated string valid for the call.
#[no_mangle]
pub unsafe extern "C" fn clarion_open(config_json: *const c_char) -> *mut Handle {
    let opened = catch_unwind(|| {
        if config_json.is_null() {
            return Err("config: NULL pointer".to_owned());
        }
        // SAFETY: non-NULL and NUL-terminated by the caller's contract.
        let bytes = unsafe { CStr::from_ptr(config_json) }.to_bytes();
        let config = std::str::from_utf8(bytes).map_err(|_| "config: not valid UTF-8")?;
        open_from_config(config)
    });
    match opened {
        Ok(Ok(clarion)) => {
            clear_last_error();
            register(clarion)
        }
        Ok(Err(message)) => {
            set_last_error(&message);
            std::ptr::null_mut()
        }
        Err(payload) => {
            set_last_error(&format!("internal error: {}", panic_message(&*payload)));
            std::ptr::null_mut()
        }
    }
}

/// Performs one request, `{"op", "principal", "args"}`, and returns the
/// reply `{"status": <int>, "body": <json>, "code": "...", "field": "..."}`
/// (`code` the error's word, `""` on success; `field` a 400's field path,
/// else `""`), which the caller frees with `clarion_string_free`. Returns
/// NULL only if memory runs out. `wait` and `wait_bundle` block the calling
/// thread for at most their `timeout_ms`. On a closed handle the reply is
/// `503 {"error": "handle closed"}`, code `handle_closed`.
///
/// # Safety
/// `request_json` is NULL or a NUL-terminated string valid for the call.
/// `handle` is any value: one that names no open handle is refused.
#[no_mangle]
pub unsafe extern "C" fn clarion_call(
    handle: *mut Handle,
    request_json: *const c_char,
) -> *mut c_char {
    let replied = catch_unwind(AssertUnwindSafe(|| {
        if handle.is_null() {
            return envelope::bad_request("handle", "NULL pointer");
        }
        if request_json.is_null() {
            return envelope::bad_request("request", "NULL pointer");
        }
        let Some(clarion) = lookup(handle) else {
            return envelope::error(&Error::HandleClosed);
        };
        // SAFETY: non-NULL and NUL-terminated by the caller's contract.
        let request = unsafe { CStr::from_ptr(request_json) };
        clarion.call_bytes(request.to_bytes())
    }));
    let envelope = replied.unwrap_or_else(|payload| {
        let cause = format!("panic inside clarion_call: {}", panic_message(&*payload));
        envelope::error(&Error::Internal(cause))
    });
    into_owned_reply(&envelope)
}

/// Frees a string returned by `clarion_call`. NULL is ignored.
///
/// # Safety
/// `s` is NULL or a string from `clarion_call` not freed before.
#[no_mangle]
pub unsafe extern "C" fn clarion_string_free(s: *mut c_char) {
    if s.is_null() {
        return;
    }
    // SAFETY: `s` came from `CString::into_raw` in `clarion_call`.
    let _ = catch_unwind(|| drop(unsafe { CString::from_raw(s) }));
}

/// Closes a handle (REL-7). Safe while other threads are inside
/// `clarion_call` on it: calls in flight finish or return, blocked waits
/// return `503 {"error": "handle closed"}` at once, and later calls get
/// the same reply. NULL, an unknown or an already closed handle is ignored.
#[no_mangle]
pub extern "C" fn clarion_close(handle: *mut Handle) {
    let _ = catch_unwind(AssertUnwindSafe(|| {
        let closed = open_handles()
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .remove(&handle.addr());
        if let Some(clarion) = closed {
            // Its memory goes with the last call still holding a clone.
            clarion.close();
        }
    }));
}

/// Why this thread's most recent `clarion_open` failed, or NULL if it did
/// not. Borrowed: valid until this thread's next `clarion_open`; never
/// freed by the caller.
#[no_mangle]
pub extern "C" fn clarion_last_error() -> *const c_char {
    LAST_ERROR.with(|slot| {
        slot.borrow()
            .as_ref()
            .map_or(std::ptr::null(), |message| message.as_ptr())
    })
}
