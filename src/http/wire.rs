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

use std::io::{self, IoSlice};
use std::pin::Pin;
use std::task::{Context, Poll, ready};

use poem::http::uri::Scheme;
use poem::listener::Acceptor;
use poem::web::{LocalAddr, RemoteAddr};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};

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

/// A connection whose library-made error answers get the JSON body.
pub struct ErrorBodies<Io> {
    inner: Io,
    /// A replacement answer not yet fully written.
    pending: Vec<u8>,
}

impl<Io> ErrorBodies<Io> {
    fn new(inner: Io) -> Self {
        Self {
            inner,
            pending: Vec::new(),
        }
    }
}

/// What a library-made answer with `status` tells the client.
fn sentence(status: u16) -> Option<&'static str> {
    match status {
        400 => Some(
            "The request is not well-formed HTTP/1.1: its method, URL, version or a header could not be read.",
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
        Pin::new(&mut self.get_mut().inner).poll_read(cx, buf)
    }
}

impl<Io: AsyncWrite + Unpin> AsyncWrite for ErrorBodies<Io> {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        ready!(this.poll_pending(cx))?;
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
        if let Some(first) = bufs.iter().find(|buf| !buf.is_empty())
            && let Some(answer) = this.replaced(cx, first)
        {
            return answer;
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
        Pin::new(&mut this.inner).poll_shutdown(cx)
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
