//! The C ABI (WIRE-5) as a host calls it from several threads: one handle
//! opened from a JSON config, requests and replies as JSON text.

use std::ffi::{CStr, CString};

use clarion::ffi::{clarion_call, clarion_open, clarion_string_free, Handle};
use serde_json::{json, Value};

/// Opens a C ABI handle on `url`. The address is returned as a `usize` so
/// it crosses threads; the handle is made for that (WIRE-5).
pub fn abi_open(url: &str) -> usize {
    let config = CString::new(json!({"database_url": url}).to_string()).unwrap();
    let handle = unsafe { clarion_open(config.as_ptr()) } as usize;
    assert_ne!(handle, 0);
    handle
}

/// One request through `clarion_call` on `handle` (from [`abi_open`]):
/// the `{"status", "body", "code", "field"}` reply.
pub fn abi_call(handle: usize, request: &Value) -> Value {
    let request = CString::new(request.to_string()).unwrap();
    let reply = unsafe { clarion_call(handle as *mut Handle, request.as_ptr()) };
    let text = unsafe { CStr::from_ptr(reply) }
        .to_str()
        .unwrap()
        .to_owned();
    unsafe { clarion_string_free(reply) };
    serde_json::from_str(&text).unwrap()
}

/// `resolve_bundle` as alice with `args` through `clarion_call` on `handle`
/// (from [`abi_open`]): checks the reply is a 200 and returns it.
pub fn abi_resolve_as_alice(handle: usize, args: Value) -> Value {
    let request = json!({"op": "resolve_bundle", "principal": {"kind": "user", "user_id": "alice"}, "args": args});
    let reply = abi_call(handle, &request);
    assert_eq!(reply["status"], json!(200), "{reply}");
    reply
}
