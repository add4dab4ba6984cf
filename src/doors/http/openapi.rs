//! The OpenAPI 3.1 document (HTTP-7), made from the declarations: each
//! declared operation's REST route and its `/rpc/{op}` path, with the
//! arguments' schema as parameters or request body and a response for
//! every status it can answer (WIRE-1's table, HTTP-3's refusals, `503`),
//! each body's schema taken from its type; beside them the door's own
//! routes (sign-in, the event stream, the operational routes). The
//! schemas are JSON Schema 2020-12, OpenAPI 3.1's dialect, under
//! `components/schemas`.

use serde_json::{json, Map, Value};

use crate::doors::args::schema::{self, Shape, Side, COMPONENTS};
use crate::doors::envelope::bodies::{CodedErrorBody, ErrorBody, OkBody};
use crate::doors::http::auth::SESSION_COOKIE;
use crate::doors::http::routes::{path_names, properties, rpc_path};
use crate::doors::http::session::{SessionBody, SignInArgs};
use crate::doors::operations::{Entry, Method, Refusal, ENTRIES};
use crate::rules::limits::NO_NUL_PATTERN;
use crate::rules::vocabulary::EventType;

/// What the document's operations share while it is built: the named
/// schemas they refer to.
struct Document {
    components: Map<String, Value>,
    paths: Map<String, Value>,
}

fn reference(name: &str) -> Value {
    json!({"$ref": format!("#{COMPONENTS}/{name}")})
}

fn json_content(schema: Value) -> Value {
    json!({"application/json": {"schema": schema}})
}

/// A response whose body is one of WIRE-1's error bodies.
fn error_response(description: &str) -> Value {
    json!({"description": description, "content": json_content(reference("Error"))})
}

impl Document {
    fn new() -> Document {
        let mut components = Map::new();
        schema::component::<ErrorBody>(Side::Bodies, &mut components);
        schema::component::<CodedErrorBody>(Side::Bodies, &mut components);
        Document {
            components,
            paths: Map::new(),
        }
    }

    fn add(&mut self, path: &str, method: &str, operation: Value) {
        let item = self
            .paths
            .entry(path.to_owned())
            .or_insert_with(|| json!({}));
        if let Value::Object(item) = item {
            item.insert(method.to_owned(), operation);
        }
    }

    /// The statuses every API route can answer besides its own.
    fn common(responses: &mut Map<String, Value>, authenticated: bool, body: bool) {
        if authenticated {
            responses.insert(
                "401".into(),
                json!({
                    // HTTP-3.
                    "description": "No valid credential.",
                    "headers": {"WWW-Authenticate": {"schema": {"type": "string", "const": "Bearer"}}},
                    "content": json_content(reference("Error")),
                }),
            );
        }
        if body {
            responses.insert(
                "408".into(),
                // HTTP-12.
                error_response(
                    "The body did not arrive by the request deadline; the connection closes.",
                ),
            );
            responses.insert(
                "413".into(),
                // HTTP-3.
                error_response("The body is larger than 1 MiB."),
            );
            responses.insert(
                "415".into(),
                // HTTP-3.
                error_response("A body that is not `application/json`."),
            );
        }
        responses.insert(
            "421".into(),
            error_response(
                // HTTP-11.
                "A server without credentials (`--open-as`) was addressed by a name that is not loopback.",
            ),
        );
        responses.insert(
            "500".into(),
            // REL-6.
            error_response("An internal error; only a reference leaves the server."),
        );
        responses.insert(
            "503".into(),
            error_response(
                // HTTP-8, REL-7, PROD-2.
                "The server is shutting down, the database is closed, or the database is \
                 unavailable or read-only (`database unavailable`, `database read-only`): try again later.",
            ),
        );
        responses.insert(
            "507".into(),
            // PROD-2.
            error_response("The database has no room left to write (`database full`)."),
        );
    }

    /// One declared operation at `path`: its arguments from the path ids
    /// and the query (`GET`) or the body (`POST`), its responses.
    fn operation(&mut self, entry: &Entry, path: &str, method: Method, rpc: bool) -> Value {
        let args = entry
            .args_schema
            .map(|schema| schema(Shape::Components, &mut self.components))
            .unwrap_or_else(|| json!({"type": "object"}));
        let path_args = path_names(path);
        let mut parameters: Vec<Value> = path_args
            .iter()
            .map(|name| {
                json!({
                    "name": name,
                    "in": "path",
                    "required": true,
                    "schema": {"type": "string", "minLength": 1, "pattern": NO_NUL_PATTERN},
                })
            })
            .collect();
        let inline = entry
            .args_schema
            .map(|schema| schema(Shape::Inline, &mut Map::new()))
            .unwrap_or_default();
        let mut operation = json!({
            "tags": [if rpc { "rpc" } else { entry.http.map_or("rpc", |route| route.tag) }],
            "summary": entry.summary,
            "operationId": if rpc { format!("rpc_{}", entry.name) } else { entry.name.to_owned() },
        });
        match method {
            Method::Get => {
                for (name, _) in properties(entry) {
                    if path_args.contains(&name) {
                        continue;
                    }
                    let property = &inline["properties"][&name];
                    parameters.push(json!({
                        "name": name,
                        "in": "query",
                        "required": false,
                        "description": property["description"],
                        "schema": for_query(property),
                    }));
                }
            }
            Method::Post => {
                let body = if path_args.is_empty() {
                    args
                } else {
                    without(&inline, &path_args)
                };
                let required = inline["required"].as_array().is_some_and(|required| {
                    required.iter().any(|name| {
                        name.as_str()
                            .is_some_and(|name| !path_args.iter().any(|p| p == name))
                    })
                }) || every_alternative_requires_an_argument(&inline);
                operation["requestBody"] = json!({
                    "description": "The operation's arguments, as every door reads them (an empty body is `{}`).",
                    "required": required,
                    "content": json_content(body),
                });
            }
        }
        if !parameters.is_empty() {
            operation["parameters"] = Value::Array(parameters);
        }
        operation["responses"] = Value::Object(self.responses(entry, method));
        operation
    }

    fn responses(&mut self, entry: &Entry, method: Method) -> Map<String, Value> {
        let body = entry
            .body_schema
            .map(|schema| schema(Shape::Components, &mut self.components))
            .unwrap_or_else(|| json!({}));
        let mut responses = Map::new();
        responses.insert(
            "200".into(),
            // WIRE-1..3.
            json!({"description": "The operation's body.", "content": json_content(body)}),
        );
        responses.insert(
            "400".into(),
            // WIRE-5.
            error_response("A validation failure, its message naming the field."),
        );
        responses.insert(
            "403".into(),
            json!({
                // AUTH-2, HTTP-4.
                "description": "The capability is denied (`code`: `capability_denied`), or a cookie-authenticated request came from another site.",
                "content": json_content(json!({"anyOf": [reference("CodedError"), reference("Error")]})),
            }),
        );
        for refusal in entry.refusals {
            let description = match refusal {
                // AUTH-5, LIFE-10.
                Refusal::NotFound => {
                    "An unknown or invisible bundle, or an unknown session or task."
                }
                // REPLAY-1, ASK-5.
                Refusal::Conflict => {
                    "No longer active and nobody resolved it, or the session has ended."
                }
                Refusal::TimedOut => "The timeout passed first.",
            };
            responses.insert(refusal.status().to_string(), error_response(description));
        }
        Document::common(&mut responses, true, method == Method::Post);
        responses
    }

    fn declared(&mut self) {
        for entry in ENTRIES {
            if let Some(route) = entry.http {
                let method = match route.method {
                    Method::Get => "get",
                    Method::Post => "post",
                };
                let operation = self.operation(entry, route.path, route.method, false);
                self.add(route.path, method, operation);
            }
            if entry.call.is_some() {
                let path = rpc_path(entry.name);
                let operation = self.operation(entry, &path, Method::Post, true);
                self.add(&path, "post", operation);
            }
        }
    }

    /// The door's own routes, which no WIRE-5 operation backs.
    fn door_routes(&mut self) {
        let ok = schema::component::<OkBody>(Side::Bodies, &mut self.components);
        let session = schema::component::<SessionBody>(Side::Bodies, &mut self.components);
        let sign_in = schema::component::<SignInArgs>(Side::Arguments, &mut self.components);
        let mut current = Map::new();
        // UI-2.
        current.insert("200".into(), json!({"description": "Who the request authenticates as, and how.", "content": json_content(session)}));
        Document::common(&mut current, true, false);
        self.add(
            "/api/v1/session",
            "get",
            json!({
                "tags": ["session"], "operationId": "current_session",
                // UI-2.
                "summary": "Who the request authenticates as.",
                "responses": current,
            }),
        );
        let mut signed_in = Map::new();
        // HTTP-4.
        signed_in.insert("200".into(), json!({"description": "Signed in; the `clarion_session` cookie is set.", "content": json_content(ok.clone())}));
        signed_in.insert(
            "400".into(),
            error_response("A validation failure naming the field."),
        );
        signed_in.insert(
            "401".into(),
            error_response("The token is unknown or revoked."),
        );
        signed_in.insert(
            "403".into(),
            // HTTP-4.
            error_response("A cross-site sign-in."),
        );
        Document::common(&mut signed_in, false, true);
        self.add(
            "/api/v1/session",
            "post",
            json!({
                "tags": ["session"], "operationId": "sign_in", "security": [],
                // HTTP-4.
                "summary": "Signs in with a token: a 12-hour web session in an HttpOnly cookie.",
                "requestBody": {"required": true, "content": json_content(sign_in)},
                "responses": signed_in,
            }),
        );
        let mut signed_out = Map::new();
        signed_out.insert("200".into(), json!({"description": "Signed out; the cookie is cleared.", "content": json_content(ok.clone())}));
        signed_out.insert(
            "403".into(),
            // HTTP-4.
            error_response("A cross-site request."),
        );
        Document::common(&mut signed_out, true, false);
        self.add(
            "/api/v1/session",
            "delete",
            json!({
                "tags": ["session"], "operationId": "sign_out",
                // HTTP-4.
                "summary": "Signs out: the web session ends.",
                "responses": signed_out,
            }),
        );
        let mut stream = Map::new();
        stream.insert("200".into(), json!({
            // HTTP-10, HTTP-16.
            "description": "`text/event-stream`: `id:` the position, `event:` the type (`bundle.asked`, `bundle.resolved`, `bundle.closed`, `workspace.members`, or `reset` when events after the position were pruned or the position is past the head, which the stream then follows from), `data:` the event, as `events_after` lists it. When the credential stops naming the caller (revoked, signed out, expired), the last message is `event: revoked` with the 401's body. A `Last-Event-ID` that is no position is a 400.",
            "content": {"text/event-stream": {"schema": stream_event()}},
        }));
        stream.insert(
            "400".into(),
            error_response("A malformed position or query parameter."),
        );
        stream.insert("403".into(), json!({"description": "The capability is denied.", "content": json_content(reference("CodedError"))}));
        stream.insert("429".into(), json!({
            // HTTP-13.
            "description": "The credential holds as many event streams as it may; try again after `Retry-After` seconds.",
            "headers": {"Retry-After": {"schema": {"type": "integer", "const": 5}}},
            "content": json_content(reference("Error")),
        }));
        Document::common(&mut stream, true, false);
        self.add("/api/v1/events", "get", json!({
            "tags": ["events"], "operationId": "events",
            // HTTP-6.
            "summary": "The event log as Server-Sent Events, from a position or from now on.",
            "parameters": [
                {"name": "after", "in": "query", "required": false, "description": "A position to go on after; `Last-Event-ID` takes precedence. With neither, only new events.", "schema": {"type": "string"}},
                {"name": "Last-Event-ID", "in": "header", "required": false, "description": "The last position received (EventSource sends it on reconnect).", "schema": {"type": "string"}},
            ],
            "responses": stream,
        }));
        let mut alive = Map::new();
        alive.insert(
            "200".into(),
            json!({"description": "The process is alive.", "content": json_content(ok.clone())}),
        );
        Document::common(&mut alive, false, false);
        self.add(
            "/healthz",
            "get",
            json!({
                "tags": ["operations"], "operationId": "healthz", "security": [],
                // HTTP-7.
                "summary": "The process is alive.", "responses": alive,
            }),
        );
        let mut ready = Map::new();
        ready.insert(
            "200".into(),
            json!({"description": "The database answers.", "content": json_content(ok)}),
        );
        Document::common(&mut ready, false, false);
        self.add("/readyz", "get", json!({
            "tags": ["operations"], "operationId": "readyz", "security": [],
            // HTTP-7.
            "summary": "The database answers; 503 once it cannot be reached.", "responses": ready,
        }));
        let mut metrics = Map::new();
        metrics.insert("200".into(), json!({
            "description": "Prometheus text: pending bundles, resolves by outcome, losers, waits in flight, requests and latencies by route.",
            "content": {"application/openmetrics-text": {"schema": {"type": "string"}}},
        }));
        metrics.insert("403".into(), json!({"description": "The capability is denied: `system` only (section 13a).", "content": json_content(reference("CodedError"))}));
        Document::common(&mut metrics, true, false);
        self.add(
            "/metrics",
            "get",
            json!({
                "tags": ["operations"], "operationId": "metrics",
                // HTTP-7.
                "summary": "The door's figures for `system`.", "responses": metrics,
            }),
        );
        let mut document = Map::new();
        document.insert("200".into(), json!({"description": "This document.", "content": json_content(json!({"type": "object"}))}));
        Document::common(&mut document, false, false);
        self.add(
            "/api/v1/openapi.json",
            "get",
            json!({
                "tags": ["operations"], "operationId": "openapi", "security": [],
                // HTTP-7.
                "summary": "This document: OpenAPI 3.1, made from the operations' declarations.",
                "responses": document,
            }),
        );
    }
}

/// One message of the event stream (OpenAPI 3.1 reads a stream's schema
/// as each message's): a `reset` when events were pruned or the position
/// is past the head, the last message `revoked` when the credential ended
/// (HTTP-10), or an event
/// whose `data` is the EVT-2 event as JSON and whose `id` is its position.
fn stream_event() -> Value {
    json!({"oneOf": [
        {
            "type": "object",
            "required": ["event", "data"],
            "properties": {"event": {"const": "reset"}, "data": {"const": "{}"}},
        },
        {
            "type": "object",
            "required": ["event", "data"],
            "properties": {
                "event": {"const": "revoked"},
                "data": {"type": "string", "contentMediaType": "application/json", "contentSchema": reference("Error")},
            },
        },
        {
            "type": "object",
            "required": ["id", "event", "data"],
            "properties": {
                "id": {"type": "string"},
                "event": {"enum": EventType::ALL.iter().map(|t| t.as_str()).collect::<Vec<_>>()},
                "data": {"type": "string", "contentMediaType": "application/json", "contentSchema": reference("Event")},
            },
        },
    ]})
}

/// A query parameter's schema: the argument's, without `null` (a query
/// cannot say it; leaving the parameter out is the same), and without
/// the description the parameter carries itself.
fn for_query(schema: &Value) -> Value {
    let mut schema = schema.clone();
    if let Some(map) = schema.as_object_mut() {
        map.remove("description");
        map.remove("default");
        if let Some(Value::Array(kinds)) = map.get_mut("type") {
            kinds.retain(|kind| kind != "null");
            if kinds.len() == 1 {
                let only = kinds[0].clone();
                map.insert("type".into(), only);
            }
        }
        if let Some(Value::Array(branches)) = map.get_mut("anyOf") {
            branches.retain(|branch| branch.get("type") != Some(&Value::from("null")));
        }
    }
    schema
}

/// `schema` with the properties `names` (path ids) taken out.
fn without(schema: &Value, names: &[String]) -> Value {
    let mut schema = schema.clone();
    if let Some(properties) = schema["properties"].as_object_mut() {
        for name in names {
            properties.shift_remove(name);
        }
    }
    if let Some(required) = schema["required"].as_array_mut() {
        required.retain(|name| !names.iter().any(|path| name == path));
    }
    schema
}

/// The document, as pretty JSON text.
pub(crate) fn document() -> String {
    let mut built = Document::new();
    built.declared();
    built.door_routes();
    let document = json!({
        "openapi": "3.1.0",
        "info": {
            "title": "clarion",
            // HTTP-2.
            "description": "A durable \"ask a human\" inbox: list, read, wait for and answer clarification requests. Every operation is at its own route where it has one, and at `/api/v1/rpc/{op}` with exactly its arguments. A success is the operation's JSON body; an error is `{\"error\"}` (and `code` where one applies) with its status.",
            "license": {"name": "MIT OR Apache-2.0"},
            "version": env!("CARGO_PKG_VERSION"),
        },
        "jsonSchemaDialect": "https://json-schema.org/draft/2020-12/schema",
        // The paths are absolute on the server that serves this document:
        // a generated client's base URL is where it fetched it from.
        "servers": [{"url": "/"}],
        "security": [{"bearer": []}, {"cookie": []}],
        "paths": built.paths,
        "components": {
            "schemas": built.components,
            "securitySchemes": {
                "bearer": {"type": "http", "scheme": "bearer"},
                "cookie": {"type": "apiKey", "in": "cookie", "name": SESSION_COOKIE},
            },
        },
    });
    serde_json::to_string_pretty(&document)
        .unwrap_or_else(|error| format!("{{\"error\": \"{error}\"}}"))
}

/// Arguments given as alternatives (`oneOf`, e.g. `people`'s `user_ids` or
/// `pending_id`), each naming one it requires: an empty body is none of
/// them, so the body is required.
fn every_alternative_requires_an_argument(schema: &Value) -> bool {
    schema["oneOf"].as_array().is_some_and(|alternatives| {
        alternatives.iter().all(|alternative| {
            alternative["required"]
                .as_array()
                .is_some_and(|required| !required.is_empty())
        })
    })
}
