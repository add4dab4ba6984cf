//! `clarion mcp`'s stdio framing: one JSON-RPC message a line. Every line
//! is decoded here first, exactly as the SDK will decode it; what the SDK
//! would drop without a word (a line that is not JSON, too long, too deep,
//! with a number or string it cannot hold) or misroute (a known method
//! with params it cannot read, which it answers as an unknown method) is
//! answered here and never reaches it.

use rmcp::model::{
    CallToolRequestMethod, CancelTaskMethod, ClientJsonRpcMessage, ClientRequest,
    CompleteRequestMethod, ConstString, DiscoverRequestMethod, GetMeta, GetPromptRequestMethod,
    GetSkillRequestMethod, GetTaskMethod, InitializeResultMethod, ListPromptsRequestMethod,
    ListResourceTemplatesRequestMethod, ListResourcesRequestMethod, ListSkillsRequestMethod,
    ListToolsRequestMethod, PingRequestMethod, ReadResourceDirectoryRequestMethod,
    ReadResourceRequestMethod, RequestId, SetLevelRequestMethod, SubscribeRequestMethod,
    SubscriptionsListenRequestMethod, UnsubscribeRequestMethod, UpdateTaskMethod,
};
use rmcp::service::ServerInitializeError;
use rmcp::{ServerHandler, ServiceExt};
use serde::de::{Deserializer, IgnoredAny, MapAccess, Visitor};
use serde_json::{json, Value};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, DuplexStream};
use tokio::sync::mpsc;

/// JSON-RPC's error codes for what never reaches the SDK.
const PARSE_ERROR: i32 = -32700;
const INVALID_REQUEST: i32 = -32600;
const INVALID_PARAMS: i32 = -32602;

/// The longest message read from stdin: a request may be up to
/// `MAX_REQUEST_BYTES`, and JSON-RPC's envelope around it is small.
const MAX_LINE_BYTES: usize = 2 * clarion::limits::MAX_REQUEST_BYTES;

/// RFC 8259 lets a parser skip a leading byte order mark; the SDK does.
const UTF8_BOM: &[u8] = b"\xEF\xBB\xBF";

/// The client requests the SDK decodes into a typed request. One of these
/// that it could not decode (its params did not fit) arrives as a custom
/// request, which the servers answer as an unknown method: it is invalid
/// params instead.
const TYPED_METHODS: &[&str] = &[
    InitializeResultMethod::VALUE,
    PingRequestMethod::VALUE,
    DiscoverRequestMethod::VALUE,
    CompleteRequestMethod::VALUE,
    SetLevelRequestMethod::VALUE,
    GetPromptRequestMethod::VALUE,
    ListPromptsRequestMethod::VALUE,
    ListResourcesRequestMethod::VALUE,
    ListResourceTemplatesRequestMethod::VALUE,
    ReadResourceRequestMethod::VALUE,
    SubscriptionsListenRequestMethod::VALUE,
    SubscribeRequestMethod::VALUE,
    UnsubscribeRequestMethod::VALUE,
    CallToolRequestMethod::VALUE,
    ListToolsRequestMethod::VALUE,
    GetTaskMethod::VALUE,
    UpdateTaskMethod::VALUE,
    CancelTaskMethod::VALUE,
    ListSkillsRequestMethod::VALUE,
    GetSkillRequestMethod::VALUE,
    ReadResourceDirectoryRequestMethod::VALUE,
];

/// What the framing does with one line of stdin.
enum Verdict {
    /// The SDK decodes it: pass it on. `starts` when it begins the
    /// session's lifecycle (an `initialize`, or a request carrying its
    /// protocol version); `needs_session` for notifications and responses,
    /// which end the SDK's server if they come before that.
    Forward { starts: bool, needs_session: bool },
    /// Answered here with this JSON-RPC error.
    Reply(Value),
    /// A notification or a response that cannot be decoded: JSON-RPC
    /// answers neither, so it is dropped.
    Drop,
}

/// A JSON-RPC error reply; `id` null when it could not be read.
fn error_reply(id: Option<RequestId>, code: i32, message: String) -> Verdict {
    Verdict::Reply(json!({
        "jsonrpc": "2.0",
        "id": id,
        "error": {"code": code, "message": message},
    }))
}

/// PROD-6: every request gets an answer. The line is decoded as the SDK
/// decodes it; when that fails, a lenient second read of the top level
/// finds the id to answer (null when the id itself cannot be read) and
/// whether the line was a notification or a response, which get none.
fn judge(line: &[u8]) -> Verdict {
    let line = line.strip_prefix(UTF8_BOM).unwrap_or(line);
    let error = match serde_json::from_slice::<ClientJsonRpcMessage>(line) {
        Ok(ClientJsonRpcMessage::Request(request)) => {
            let method = request.request.method();
            return match &request.request {
                ClientRequest::CustomRequest(_) if TYPED_METHODS.contains(&method) => {
                    let message = format!("Invalid params: {method} cannot read its params");
                    error_reply(Some(request.id), INVALID_PARAMS, message)
                }
                ClientRequest::InitializeRequest(_) => Verdict::Forward {
                    starts: true,
                    needs_session: false,
                },
                ClientRequest::PingRequest(_) | ClientRequest::DiscoverRequest(_) => {
                    Verdict::Forward {
                        starts: false,
                        needs_session: false,
                    }
                }
                other => Verdict::Forward {
                    starts: other.get_meta().protocol_version().is_some(),
                    needs_session: false,
                },
            };
        }
        Ok(_) => {
            return Verdict::Forward {
                starts: false,
                needs_session: true,
            }
        }
        Err(error) => error,
    };
    let envelope = Envelope::read(line);
    // Only a line read to its end is known to have no id.
    let notification = envelope.whole && envelope.has_method && !envelope.has_id;
    let response = envelope.whole && envelope.is_response && !envelope.has_method;
    if notification || response {
        tracing::debug!(%error, "undecodable notification or response dropped");
        return Verdict::Drop;
    }
    match error.classify() {
        serde_json::error::Category::Data => error_reply(
            envelope.id,
            INVALID_REQUEST,
            format!("Invalid request: {error}"),
        ),
        _ => error_reply(envelope.id, PARSE_ERROR, format!("Parse error: {error}")),
    }
}

/// The top level of a line that did not decode, read leniently: every
/// value but the id is skipped unread, so whatever is wrong elsewhere
/// (depth, numbers, escapes) does not stop the id being found, and an id
/// found before the line breaks off is kept.
#[derive(Default)]
struct Envelope {
    id: Option<RequestId>,
    has_id: bool,
    has_method: bool,
    is_response: bool,
    /// The top-level object was read to its end.
    whole: bool,
}

impl Envelope {
    fn read(line: &[u8]) -> Envelope {
        let mut envelope = Envelope::default();
        let mut reader = serde_json::Deserializer::from_slice(line);
        envelope.whole = reader.deserialize_map(Keys(&mut envelope)).is_ok();
        envelope
    }
}

/// Fills an [`Envelope`] key by key, so what was read stays when a later
/// value fails.
struct Keys<'a>(&'a mut Envelope);

impl<'de> Visitor<'de> for Keys<'_> {
    type Value = ();

    fn expecting(&self, formatter: &mut std::fmt::Formatter) -> std::fmt::Result {
        formatter.write_str("a JSON-RPC message")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        while let Some(key) = map.next_key::<String>()? {
            match key.as_str() {
                "id" => {
                    // An id that cannot be read is no id: the reply's is null.
                    self.0.has_id = true;
                    self.0.id = None;
                    self.0.id = map.next_value()?;
                    continue;
                }
                "method" => self.0.has_method = true,
                "result" | "error" => self.0.is_response = true,
                _ => {}
            }
            map.next_value::<IgnoredAny>()?;
        }
        Ok(())
    }
}

/// One line of stdin into `line`, keeping at most `MAX_LINE_BYTES` of it;
/// returns false at end of input. The rest of an overlong line is read and
/// dropped, so memory stays bounded whatever arrives.
async fn read_line(
    stdin: &mut BufReader<tokio::io::Stdin>,
    line: &mut Vec<u8>,
) -> std::io::Result<(bool, bool)> {
    line.clear();
    let mut overlong = false;
    loop {
        let available = stdin.fill_buf().await?;
        if available.is_empty() {
            return Ok((!line.is_empty() || overlong, overlong));
        }
        let (chunk, done) = match available.iter().position(|&b| b == b'\n') {
            Some(end) => (&available[..=end], true),
            None => (available, false),
        };
        let used = chunk.len();
        if line.len() + used > MAX_LINE_BYTES {
            overlong = true;
            line.clear();
        } else if !overlong {
            line.extend_from_slice(chunk);
        }
        stdin.consume(used);
        if done {
            return Ok((true, overlong));
        }
    }
}

/// Feeds stdin to the server line by line, each judged first (`judge`):
/// what the SDK could not take is answered (overlong lines with a parse
/// error) or dropped here and never reaches it. A notification or a
/// response before the session begins would end the SDK's server, so it is
/// dropped too: nothing on stdin can end the server but end-of-file.
async fn read_requests(mut to_server: DuplexStream, replies: mpsc::UnboundedSender<Vec<u8>>) {
    let mut stdin = BufReader::new(tokio::io::stdin());
    let mut line = Vec::new();
    let mut started = false;
    loop {
        let overlong = match read_line(&mut stdin, &mut line).await {
            Ok((true, overlong)) => overlong,
            Ok((false, _)) | Err(_) => break,
        };
        let verdict = if overlong {
            let message = "Parse error: message larger than 2 MiB".to_owned();
            error_reply(None, PARSE_ERROR, message)
        } else if line.iter().all(u8::is_ascii_whitespace) {
            continue;
        } else {
            judge(&line)
        };
        match verdict {
            Verdict::Reply(reply) => {
                if replies.send(reply.to_string().into_bytes()).is_err() {
                    break;
                }
            }
            Verdict::Drop => {}
            Verdict::Forward {
                needs_session: true,
                ..
            } if !started => {
                tracing::debug!("a notification or response before initialize dropped");
            }
            Verdict::Forward { starts, .. } => {
                started |= starts;
                if !line.ends_with(b"\n") {
                    line.push(b'\n');
                }
                if to_server.write_all(&line).await.is_err() {
                    break;
                }
            }
        }
    }
    // Dropping `to_server` is the server's end-of-file.
}

/// Writes the server's messages and the parse errors to stdout, whole
/// lines only, so the two never interleave within a message.
async fn write_replies(from_server: DuplexStream, mut replies: mpsc::UnboundedReceiver<Vec<u8>>) {
    let mut stdout = tokio::io::stdout();
    let mut server_lines = BufReader::new(from_server);
    let mut line = Vec::new();
    // `line` is emptied only by taking a whole line out of it: a read that
    // loses the race to a reply keeps what it had read for the next pass.
    loop {
        let message = tokio::select! {
            read = server_lines.read_until(b'\n', &mut line) => match read {
                Ok(0) | Err(_) => {
                    // The server ends after stdin did, and the replies to
                    // every line before the end are queued by then.
                    while let Ok(mut reply) = replies.try_recv() {
                        reply.push(b'\n');
                        if stdout.write_all(&reply).await.is_err() {
                            break;
                        }
                    }
                    let _ = stdout.flush().await;
                    break;
                }
                Ok(_) => std::mem::take(&mut line),
            },
            Some(reply) = replies.recv() => {
                let mut reply = reply;
                reply.push(b'\n');
                reply
            }
        };
        if stdout.write_all(&message).await.is_err() || stdout.flush().await.is_err() {
            break;
        }
    }
}

/// Serves `handler` over stdin and stdout until the client closes stdin,
/// whenever it does.
pub(super) async fn run_stdio(
    handler: impl ServerHandler,
) -> Result<(), Box<dyn std::error::Error>> {
    let (server_in, requests) = tokio::io::duplex(1 << 16);
    let (server_out, responses) = tokio::io::duplex(1 << 16);
    let (replies, parse_errors) = mpsc::unbounded_channel();
    tokio::spawn(read_requests(requests, replies));
    let writer = tokio::spawn(write_replies(responses, parse_errors));
    let running = match handler.serve((server_in, server_out)).await {
        Ok(running) => running,
        // The end of stdin is how a stdio server is told to stop, at any
        // moment: also before (or while) it was initialized.
        Err(ServerInitializeError::ConnectionClosed(_)) => {
            let _ = writer.await;
            return Ok(());
        }
        Err(error) => {
            // What the server answered before it gave up is still sent.
            let _ = writer.await;
            return Err(error.into());
        }
    };
    running.waiting().await?;
    // Flush whatever the server wrote last.
    let _ = writer.await;
    Ok(())
}
