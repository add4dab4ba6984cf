//! The request deadline counted from a request's first byte (PROD-5,
//! amending HTTP-12).
//!
//! hyper's own header timer starts when it begins waiting for a request,
//! and on expiry it drops the connection without a word. The deadline here
//! sits under hyper instead, in the connection's stream, which is where the
//! first byte of a request can be seen:
//!
//! - a connection waiting for a request (just accepted, or idle after a
//!   response) that receives nothing within the deadline is closed quietly,
//!   as an idle keep-alive connection is (there is nothing to answer);
//! - once a request's first byte arrives, its headers must be complete
//!   within the deadline counted from that byte, else the stream itself
//!   writes `408` with `Connection: close`, shuts the connection and fails
//!   hyper's read so hyper lets go of it;
//! - once the headers are parsed ([`Tracked`] sees hyper call the service)
//!   the request is in flight and this clock stops: the body's deadline is
//!   the extractor's (HTTP-12), from the same first byte, and an operation
//!   that has begun, a wait or an event stream is never cut. The clock
//!   starts again when the response's body has been handed to hyper whole.
//!
//! hyper parses the HTTP; this only counts time and bytes.

use std::future::Future;
use std::io;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{ready, Context, Poll};
use std::time::Duration;

use axum::body::Body;
use http_body_util::BodyExt;
use hyper::body::Incoming;
use hyper::{Request, Response};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::TcpStream;
use tokio::time::{Instant, Sleep};

use crate::doors::http::error::HttpError;
use crate::doors::http::input::RequestDeadline;

/// What one connection's stream and service share: how many requests
/// hyper has handed to the service and how many of their responses are
/// over, and when the request being received sent its first byte.
#[derive(Default)]
pub(crate) struct Clock {
    started: AtomicU64,
    finished: AtomicU64,
    first_byte: Mutex<Option<Instant>>,
}

impl Clock {
    fn record_first_byte(&self, at: Instant) {
        if let Ok(mut first) = self.first_byte.lock() {
            *first = Some(at);
        }
    }

    /// The first byte of the request whose headers were just parsed, if
    /// it was seen (a pipelined request may have come in with the previous
    /// one: then it counts from now).
    fn take_first_byte(&self) -> Option<Instant> {
        self.first_byte
            .lock()
            .ok()
            .and_then(|mut first| first.take())
    }
}

/// Marks a response over when dropped: hyper drops the body once it has
/// written it whole, or when the connection goes.
struct Finished(Arc<Clock>);

impl Drop for Finished {
    fn drop(&mut self) {
        self.0.finished.fetch_add(1, Ordering::AcqRel);
    }
}

/// The service as hyper sees it: notes each request as it is handed over
/// (its headers are complete) and the end of its response, and gives the
/// request its deadline for the body (HTTP-12).
#[derive(Clone)]
pub(crate) struct Tracked<S> {
    inner: S,
    clock: Arc<Clock>,
    timeout: Duration,
}

impl<S> Tracked<S> {
    pub(crate) fn new(inner: S, clock: Arc<Clock>, timeout: Duration) -> Self {
        Tracked {
            inner,
            clock,
            timeout,
        }
    }
}

impl<S> hyper::service::Service<Request<Incoming>> for Tracked<S>
where
    S: hyper::service::Service<Request<Incoming>, Response = Response<Body>>,
    S::Future: Send + 'static,
    S::Error: Send + 'static,
{
    type Response = Response<Body>;
    type Error = S::Error;
    type Future = Pin<Box<dyn Future<Output = Result<Response<Body>, S::Error>> + Send>>;

    fn call(&self, mut request: Request<Incoming>) -> Self::Future {
        // hyper calls the service as soon as the headers are parsed, so
        // from here the stream's clock is off until the response is over.
        self.clock.started.fetch_add(1, Ordering::AcqRel);
        let finished = Finished(self.clock.clone());
        let first_byte = self.clock.take_first_byte().unwrap_or_else(Instant::now);
        request
            .extensions_mut()
            .insert(RequestDeadline(first_byte + self.timeout));
        let response = self.inner.call(request);
        Box::pin(async move {
            let response = response.await?;
            Ok(response.map(|body| {
                // The marker lives as long as the body hyper is sending.
                Body::new(body.map_frame(move |frame| {
                    let _keep = &finished;
                    frame
                }))
            }))
        })
    }
}

/// Where the stream is in its connection's life.
enum Phase {
    /// Waiting for a request; nothing of it has come yet.
    Waiting,
    /// Part of a request's headers has come.
    Receiving,
    /// A request is in flight: no clock.
    Busy,
    /// Writing the `408`; `written` bytes of it are out.
    Answering { reply: Vec<u8>, written: usize },
    /// Shut: every read fails.
    Over,
}

/// A TCP connection under the request deadline (see the module).
pub(crate) struct ClockedStream {
    stream: TcpStream,
    clock: Arc<Clock>,
    timeout: Duration,
    phase: Phase,
    /// How many requests the clock had seen started at the last read.
    seen: u64,
    timer: Pin<Box<Sleep>>,
    /// hyper wrote and has not flushed since: part of a response may still
    /// be in its buffer, and a `408` must not be cut into it.
    unflushed: bool,
}

impl ClockedStream {
    /// Starts the clock at accept: a connection that sends nothing within
    /// the deadline is closed.
    pub(crate) fn new(stream: TcpStream, clock: Arc<Clock>, timeout: Duration) -> Self {
        ClockedStream {
            stream,
            clock,
            timeout,
            phase: Phase::Waiting,
            seen: 0,
            timer: Box::pin(tokio::time::sleep(timeout)),
            unflushed: false,
        }
    }

    fn restart(&mut self, phase: Phase) {
        self.phase = phase;
        let deadline = Instant::now() + self.timeout;
        self.timer.as_mut().reset(deadline);
    }

    /// Writes the `408`, shuts the write side, then fails the read so
    /// hyper drops the connection.
    fn poll_answer(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        loop {
            match &mut self.phase {
                Phase::Answering { reply, written } if *written < reply.len() => {
                    let n = ready!(Pin::new(&mut self.stream).poll_write(cx, &reply[*written..]))?;
                    if n == 0 {
                        return Poll::Ready(Err(io::ErrorKind::WriteZero.into()));
                    }
                    *written += n;
                }
                Phase::Answering { .. } => {
                    // The client reads the reply, then the end of stream.
                    let _ = ready!(Pin::new(&mut self.stream).poll_shutdown(cx));
                    self.phase = Phase::Over;
                }
                _ => {
                    return Poll::Ready(Err(io::Error::new(
                        io::ErrorKind::TimedOut,
                        "request headers not received in time",
                    )));
                }
            }
        }
    }
}

/// The whole `408` as bytes: the door's own refusal (HTTP-12's envelope),
/// and the connection closes after it.
fn timed_out_reply() -> Vec<u8> {
    let body = HttpError::RequestTimeout.envelope().body_text();
    format!(
        "HTTP/1.1 408 Request Timeout\r\ncontent-type: application/json\r\n\
         cache-control: no-store\r\nconnection: close\r\ncontent-length: {}\r\n\r\n{body}",
        body.len()
    )
    .into_bytes()
}

impl AsyncRead for ClockedStream {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        if matches!(this.phase, Phase::Answering { .. } | Phase::Over) {
            return this.poll_answer(cx);
        }
        let started = this.clock.started.load(Ordering::Acquire);
        let finished = this.clock.finished.load(Ordering::Acquire);
        if started != finished {
            // In flight: the body's deadline is the extractor's.
            this.phase = Phase::Busy;
            this.seen = started;
            return Pin::new(&mut this.stream).poll_read(cx, buf);
        }
        if matches!(this.phase, Phase::Busy) || started != this.seen {
            // A response is over: the connection waits for the next request.
            this.seen = started;
            this.restart(Phase::Waiting);
        }
        let before = buf.filled().len();
        match Pin::new(&mut this.stream).poll_read(cx, buf) {
            Poll::Ready(Ok(())) => {
                if buf.filled().len() > before && matches!(this.phase, Phase::Waiting) {
                    // PROD-5: the request's first byte starts its deadline.
                    let now = Instant::now();
                    this.clock.record_first_byte(now);
                    this.restart(Phase::Receiving);
                }
                Poll::Ready(Ok(()))
            }
            Poll::Ready(Err(error)) => Poll::Ready(Err(error)),
            Poll::Pending => {
                ready!(this.timer.as_mut().poll(cx));
                match this.phase {
                    // Nothing came: the end of stream, which hyper takes
                    // as the client leaving and closes quietly.
                    Phase::Waiting => {
                        this.phase = Phase::Over;
                        Poll::Ready(Ok(()))
                    }
                    // PROD-5: headers incomplete by the deadline.
                    _ if this.unflushed => {
                        this.phase = Phase::Over;
                        this.poll_answer(cx)
                    }
                    _ => {
                        this.phase = Phase::Answering {
                            reply: timed_out_reply(),
                            written: 0,
                        };
                        this.poll_answer(cx)
                    }
                }
            }
        }
    }
}

impl AsyncWrite for ClockedStream {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        this.unflushed = true;
        Pin::new(&mut this.stream).poll_write(cx, buf)
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        this.unflushed = true;
        Pin::new(&mut this.stream).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.stream.is_write_vectored()
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        ready!(Pin::new(&mut this.stream).poll_flush(cx))?;
        this.unflushed = false;
        Poll::Ready(Ok(()))
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().stream).poll_shutdown(cx)
    }
}
