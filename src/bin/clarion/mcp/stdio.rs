//! `clarion mcp`'s stdio framing: one JSON-RPC message a line. Lines that
//! are not JSON, or too long, are answered here with a parse error and
//! never reach the SDK, which would drop them without a word.

use rmcp::service::ServerInitializeError;
use rmcp::{ServerHandler, ServiceExt};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, DuplexStream};
use tokio::sync::mpsc;

/// JSON-RPC's reply to a line that is not JSON at all.
const PARSE_ERROR: &str =
    r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error: not JSON"}}"#;

/// The longest message read from stdin: a request may be up to
/// `MAX_REQUEST_BYTES`, and JSON-RPC's envelope around it is small.
const MAX_LINE_BYTES: usize = 2 * clarion::limits::MAX_REQUEST_BYTES;

/// JSON-RPC's reply to a line longer than [`MAX_LINE_BYTES`].
const TOO_LARGE: &str = r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error: message larger than 2 MiB"}}"#;

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

/// Feeds stdin to the server line by line. The SDK drops a line that is not
/// JSON without a word; JSON-RPC wants a parse error, so such lines (and
/// overlong ones) are answered here and never reach it. Bytes that are not
/// UTF-8 are not JSON either, so nothing on stdin can end the server but
/// end-of-file.
async fn read_requests(mut to_server: DuplexStream, replies: mpsc::UnboundedSender<Vec<u8>>) {
    let mut stdin = BufReader::new(tokio::io::stdin());
    let mut line = Vec::new();
    loop {
        let overlong = match read_line(&mut stdin, &mut line).await {
            Ok((true, overlong)) => overlong,
            Ok((false, _)) | Err(_) => break,
        };
        let reply = if overlong {
            Some(TOO_LARGE)
        } else if line.iter().all(u8::is_ascii_whitespace) {
            continue;
        } else if serde_json::from_slice::<serde::de::IgnoredAny>(&line).is_ok() {
            None
        } else {
            Some(PARSE_ERROR)
        };
        match reply {
            Some(reply) => {
                if replies.send(reply.as_bytes().to_vec()).is_err() {
                    break;
                }
            }
            None => {
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
                Ok(0) | Err(_) => break,
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
        Err(error) => return Err(error.into()),
    };
    running.waiting().await?;
    // Flush whatever the server wrote last.
    let _ = writer.await;
    Ok(())
}
