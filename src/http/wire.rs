//! The answers the HTTP library gives before any route runs, in the usual
//! JSON error body.
//!
//! hyper answers a request it cannot parse (a URL over 65,534 bytes: 414;
//! headers over its buffer: 431; a malformed request line or header: 400)
//! by itself, with an empty body, and offers no hook to change that answer.
//! So each connection's writes pass through [`ErrorBodies`]: a write that is
//! exactly such an answer (one of those statuses, `content-length: 0`, no
//! content type, which none of our own responses is) is replaced by the same
//! status with the documented body and a correlation id. Everything else
//! passes through untouched.
//!
//! A connection that answered 413 closes lingering: hyper closes it
//! without reading the rest of the refused body, and a socket closed with
//! unread bytes sends a reset that makes the client's TCP stack discard the
//! answer it had not read yet. So after a 413 the connection's shutdown
//! sends its end, then reads and discards what the client still sends, up
//! to [`LINGER_BYTES`] or [`LINGER_TIME`], before closing.
//!
//! Each connection's reads pass through [`RequestTargets`] first, so that a
//! URL typed with `>`, `"` or a space in its query (as curl sends it) is
//! read as the client meant it rather than refused.

use std::future::Future;
use std::io::{self, IoSlice};
use std::pin::Pin;
use std::task::{Context, Poll, ready};

use poem::http::uri::Scheme;
use poem::listener::Acceptor;
use poem::web::{LocalAddr, RemoteAddr};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};

use super::request_targets::RequestTargets;

/// Bytes read from the socket at a time.
const READ_CHUNK: usize = 16 * 1024;

/// The most a lingering close reads and discards after a 413.
pub const LINGER_BYTES: u64 = 64 * 1024 * 1024;

/// The longest a lingering close waits for the client to stop sending.
pub const LINGER_TIME: std::time::Duration = std::time::Duration::from_secs(5);

/// A lingering close under way.
struct Linger {
    /// When it gives up.
    deadline: Pin<Box<tokio::time::Sleep>>,
    /// What it read and discarded so far.
    drained: u64,
}

/// Wraps every accepted connection of `A` in [`ErrorBodies`].
pub struct JsonErrorsAcceptor<A>(pub A);

impl<A: Acceptor> Acceptor for JsonErrorsAcceptor<A> {
    type Io = ErrorBodies<A::Io>;

    fn local_addr(&self) -> Vec<LocalAddr> {
        self.0.local_addr()
    }

    async fn accept(&mut self) -> io::Result<(Self::Io, LocalAddr, RemoteAddr, Scheme)> {
        let (io, local, remote, scheme) = self.0.accept().await?;
        Ok((ErrorBodies::new(io), local, remote, scheme))
    }
}

/// A connection whose library-made error answers get the JSON body, and
/// whose request targets are percent-encoded where they need to be.
pub struct ErrorBodies<Io> {
    inner: Io,
    /// A replacement answer not yet fully written.
    pending: Vec<u8>,
    /// The request bytes as the parser is to read them.
    targets: RequestTargets,
    /// Read from the socket, not yet through `targets`.
    raw: Vec<u8>,
    /// Through `targets`, not yet handed to the parser (from `decoded_at`).
    decoded: Vec<u8>,
    decoded_at: usize,
    /// Whether a 413 was written: the shutdown then lingers.
    answered_too_large: bool,
    /// The lingering close, once the write side is shut.
    linger: Option<Linger>,
}

impl<Io> ErrorBodies<Io> {
    fn new(inner: Io) -> Self {
        Self {
            inner,
            pending: Vec::new(),
            targets: RequestTargets::default(),
            raw: Vec::new(),
            decoded: Vec::new(),
            decoded_at: 0,
            answered_too_large: false,
            linger: None,
        }
    }

    /// Notes an answer that refuses a body too large.
    fn note_answer(&mut self, written: &[u8]) {
        if written.starts_with(b"HTTP/1.1 413 ") {
            self.answered_too_large = true;
        }
    }
}

/// What a library-made answer with `status` tells the client.
fn sentence(status: u16) -> Option<&'static str> {
    match status {
        400 => Some(
            "The request is not well-formed HTTP/1.1: its method, URL, version or a header could not be read. \
             A URL may hold no control characters: URL-encode the query's values (with curl: \
             -G --data-urlencode 'query=...').",
        ),
        414 => Some(
            "The URL is longer than the limit of 65,534 bytes. Send fewer or shorter query parameters.",
        ),
        431 => Some("The request's headers are too large. Send fewer or shorter headers."),
        _ => None,
    }
}

/// The JSON answer replacing `written`, if `written` is an empty-bodied
/// error answer of the library (see the module's documentation).
fn replacement(written: &[u8]) -> Option<Vec<u8>> {
    let rest = written.strip_prefix(b"HTTP/1.1 ")?;
    let status: u16 = std::str::from_utf8(rest.get(..3)?).ok()?.parse().ok()?;
    let message = sentence(status)?;
    let head_end = written
        .windows(4)
        .position(|window| window == b"\r\n\r\n")?;
    let head = String::from_utf8_lossy(&written[..head_end]).to_ascii_lowercase();
    if !head.contains("\r\ncontent-length: 0") || head.contains("\r\ncontent-type:") {
        return None;
    }
    let correlation_id = uuid::Uuid::new_v4().to_string();
    tracing::info!(
        status,
        correlation_id,
        "refused a request the HTTP parser could not read"
    );
    let body = serde_json::json!({
        "statusCode": status,
        "error": message,
        "correlationId": correlation_id,
        "canBeRetried": false,
    })
    .to_string();
    let reason = poem::http::StatusCode::from_u16(status)
        .ok()
        .and_then(|code| code.canonical_reason())
        .unwrap_or("Bad Request");
    Some(
        format!(
            "HTTP/1.1 {status} {reason}\r\ncontent-type: application/json; charset=utf-8\r\n\
             x-correlation-id: {correlation_id}\r\nconnection: close\r\ncontent-length: {}\r\n\r\n{body}",
            body.len()
        )
        .into_bytes(),
    )
}

impl<Io: AsyncWrite + Unpin> ErrorBodies<Io> {
    /// Writes what is left of a replacement answer.
    fn poll_pending(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        while !self.pending.is_empty() {
            let written = ready!(Pin::new(&mut self.inner).poll_write(cx, &self.pending))?;
            if written == 0 {
                return Poll::Ready(Err(io::ErrorKind::WriteZero.into()));
            }
            self.pending.drain(..written);
        }
        Poll::Ready(Ok(()))
    }

    /// Takes `buf` as written when it is an answer to replace, queuing the
    /// replacement instead.
    fn replaced(&mut self, cx: &mut Context<'_>, buf: &[u8]) -> Option<Poll<io::Result<usize>>> {
        let answer = replacement(buf)?;
        self.pending = answer;
        Some(match self.poll_pending(cx) {
            Poll::Ready(Err(error)) => Poll::Ready(Err(error)),
            // The rest goes out on the flush that follows.
            _ => Poll::Ready(Ok(buf.len())),
        })
    }
}

impl<Io: AsyncRead + Unpin> AsyncRead for ErrorBodies<Io> {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        loop {
            if this.decoded_at < this.decoded.len() {
                let ready = &this.decoded[this.decoded_at..];
                let taken = ready.len().min(buf.remaining());
                buf.put_slice(&ready[..taken]);
                this.decoded_at += taken;
                if this.decoded_at == this.decoded.len() {
                    this.decoded.clear();
                    this.decoded_at = 0;
                }
                return Poll::Ready(Ok(()));
            }
            this.raw.resize(READ_CHUNK, 0);
            let mut raw = ReadBuf::new(&mut this.raw);
            ready!(Pin::new(&mut this.inner).poll_read(cx, &mut raw))?;
            let read = raw.filled().len();
            if read == 0 {
                // The client is done sending: a line held back goes to the
                // parser as it came, then the end.
                this.targets.finish(&mut this.decoded);
                if this.decoded.is_empty() {
                    return Poll::Ready(Ok(()));
                }
                continue;
            }
            this.targets.feed(&this.raw[..read], &mut this.decoded);
        }
    }
}

impl<Io: AsyncRead + AsyncWrite + Unpin> AsyncWrite for ErrorBodies<Io> {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        ready!(this.poll_pending(cx))?;
        this.note_answer(buf);
        if let Some(answer) = this.replaced(cx, buf) {
            return answer;
        }
        Pin::new(&mut this.inner).poll_write(cx, buf)
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        ready!(this.poll_pending(cx))?;
        if let Some(first) = bufs.iter().find(|buf| !buf.is_empty()) {
            this.note_answer(first);
            if let Some(answer) = this.replaced(cx, first) {
                return answer;
            }
        }
        Pin::new(&mut this.inner).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        ready!(this.poll_pending(cx))?;
        Pin::new(&mut this.inner).poll_flush(cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        ready!(this.poll_pending(cx))?;
        if !this.answered_too_large {
            return Pin::new(&mut this.inner).poll_shutdown(cx);
        }
        if this.linger.is_none() {
            // Our end first: the client sees the answer is whole.
            ready!(Pin::new(&mut this.inner).poll_shutdown(cx))?;
            this.linger = Some(Linger {
                deadline: Box::pin(tokio::time::sleep(LINGER_TIME)),
                drained: 0,
            });
        }
        let Some(linger) = this.linger.as_mut() else {
            return Poll::Ready(Ok(()));
        };
        let mut scratch = [0u8; READ_CHUNK];
        loop {
            if linger.deadline.as_mut().poll(cx).is_ready() || linger.drained > LINGER_BYTES {
                break;
            }
            let mut discard = ReadBuf::new(&mut scratch);
            match Pin::new(&mut this.inner).poll_read(cx, &mut discard) {
                Poll::Ready(Ok(())) if discard.filled().is_empty() => break,
                Poll::Ready(Ok(())) => linger.drained += discard.filled().len() as u64,
                Poll::Ready(Err(_)) => break,
                Poll::Pending => return Poll::Pending,
            }
        }
        this.answered_too_large = false;
        Poll::Ready(Ok(()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const HYPER_414: &[u8] = b"HTTP/1.1 414 URI Too Long\r\nconnection: close\r\ncontent-length: 0\r\ndate: Tue, 24 Nov 2026 14:54:47 GMT\r\n\r\n";

    #[test]
    fn the_library_s_empty_answers_get_the_json_body() {
        let answer = String::from_utf8(replacement(HYPER_414).expect("replaced")).expect("text");
        let (head, body) = answer.split_once("\r\n\r\n").expect("a head and a body");
        assert!(head.starts_with("HTTP/1.1 414 URI Too Long\r\n"), "{head}");
        assert!(head.contains("content-type: application/json"), "{head}");
        assert!(
            head.contains(&format!("content-length: {}", body.len())),
            "{head}"
        );
        let body: serde_json::Value = serde_json::from_str(body).expect("JSON");
        assert_eq!(body["statusCode"], 414);
        assert_eq!(body["canBeRetried"], false);
        let correlation_id = body["correlationId"].as_str().expect("an id");
        assert!(head.contains(&format!("x-correlation-id: {correlation_id}")));
    }

    #[test]
    fn our_own_answers_pass_untouched() {
        let ours = b"HTTP/1.1 400 Bad Request\r\ncontent-type: application/json; charset=utf-8\r\ncontent-length: 0\r\n\r\n";
        assert!(replacement(ours).is_none());
        let ok = b"HTTP/1.1 200 OK\r\ncontent-length: 0\r\n\r\n";
        assert!(replacement(ok).is_none());
        let body_part = b"{\"results\":[]}";
        assert!(replacement(body_part).is_none());
    }
}
