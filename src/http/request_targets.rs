//! Request targets as people type them: `?query=amountDue>0&&currency="GBP"`
//! pasted into a shell reaches tributary with `>`, `"`, `<`, `{`, spaces
//! and the like unencoded, which the HTTP parser refuses (a bare 400)
//! before any route could say why. [`RequestTargets`] sits between the
//! socket and the parser and percent-encodes those bytes in each request
//! line's target (between the method and the version), which is what the
//! client meant: the query decodes to the same text. It follows each
//! request's framing (its head line by line, then `Content-Length` bytes
//! or `chunked` data) so that nothing in a body is ever changed; whatever
//! it cannot follow (an oversized line, a conflicting length, an upgrade)
//! it passes through untouched for the parser to refuse as before.

/// The longest line followed (a request line carries the URL, whose limit
/// is 65,534 bytes); a longer one is passed through for the parser to
/// refuse.
const MAX_LINE: usize = 70_000;

/// Where in the byte stream the next byte falls.
#[derive(Debug)]
enum State {
    /// A line of a request head; `first` while no request line was read.
    Head { first: bool },
    /// `remaining` bytes of a body with a `Content-Length`.
    Body { remaining: u64 },
    /// The size line of the next chunk.
    ChunkSize,
    /// `remaining` bytes of a chunk's data, then its line end.
    ChunkData { remaining: u64 },
    /// The line end after a chunk's data.
    ChunkEnd,
    /// Trailer lines after the last chunk, up to an empty one.
    Trailers,
    /// Everything from here on goes through as it is.
    Passthrough,
}

/// What the head being read says about its body.
#[derive(Debug, Default)]
struct Framing {
    content_length: Option<u64>,
    chunked: bool,
    /// Something the stream cannot be followed through (two lengths that
    /// differ, a length that is not a number, an upgrade, `CONNECT`).
    unfollowable: bool,
}

/// A connection's request bytes, with each request target's unsafe bytes
/// percent-encoded (see the module's documentation).
#[derive(Debug)]
pub struct RequestTargets {
    state: State,
    /// The line being collected.
    line: Vec<u8>,
    framing: Framing,
}

impl Default for RequestTargets {
    fn default() -> Self {
        Self {
            state: State::Head { first: true },
            line: Vec::new(),
            framing: Framing::default(),
        }
    }
}

/// Whether a byte of a request target is one to percent-encode: those the
/// parser refuses or that RFC 3986 does not allow unencoded (`"`, `<`,
/// `>`, `\`, `^`, `` ` ``, `{`, `|`, `}`, a space), and every byte that is
/// not ASCII. Control bytes are left for the parser to refuse.
fn needs_encoding(byte: u8) -> bool {
    matches!(
        byte,
        b'"' | b'<' | b'>' | b'\\' | b'^' | b'`' | b'{' | b'|' | b'}' | b' '
    ) || byte >= 0x80
}

/// A request line with its target's unsafe bytes percent-encoded. The
/// target is what lies between the first space and the last one, so a
/// target holding spaces is read whole; a line without two spaces is left
/// as it is.
fn encode_request_line(line: &[u8]) -> Vec<u8> {
    let body_end = line
        .iter()
        .rposition(|&byte| byte != b'\r' && byte != b'\n')
        .map_or(0, |last| last + 1);
    let (text, ending) = line.split_at(body_end);
    let (Some(first), Some(last)) = (
        text.iter().position(|&byte| byte == b' '),
        text.iter().rposition(|&byte| byte == b' '),
    ) else {
        return line.to_vec();
    };
    if first == last {
        return line.to_vec();
    }
    let mut encoded = Vec::with_capacity(line.len() + 16);
    encoded.extend_from_slice(&text[..=first]);
    for &byte in &text[first + 1..last] {
        if needs_encoding(byte) {
            encoded.extend_from_slice(format!("%{byte:02X}").as_bytes());
        } else {
            encoded.push(byte);
        }
    }
    encoded.extend_from_slice(&text[last..]);
    encoded.extend_from_slice(ending);
    encoded
}

/// A line without its line end.
fn content(line: &[u8]) -> &[u8] {
    let mut end = line.len();
    while end > 0 && matches!(line[end - 1], b'\r' | b'\n') {
        end -= 1;
    }
    &line[..end]
}

impl Framing {
    /// Takes note of one header line.
    fn header(&mut self, line: &[u8]) {
        let Some(colon) = line.iter().position(|&byte| byte == b':') else {
            return;
        };
        let name = String::from_utf8_lossy(&line[..colon])
            .trim()
            .to_ascii_lowercase();
        let value = String::from_utf8_lossy(content(&line[colon + 1..]))
            .trim()
            .to_ascii_lowercase();
        match name.as_str() {
            "content-length" => match (value.parse::<u64>(), self.content_length) {
                (Ok(length), None) => self.content_length = Some(length),
                (Ok(length), Some(seen)) if length == seen => {}
                _ => self.unfollowable = true,
            },
            "transfer-encoding" => {
                if value.rsplit(',').next().map(str::trim) == Some("chunked") {
                    self.chunked = true;
                } else {
                    self.unfollowable = true;
                }
            }
            "upgrade" => self.unfollowable = true,
            _ => {}
        }
    }

    /// Where the stream goes once the head has ended.
    fn after_head(&self) -> State {
        if self.unfollowable || (self.chunked && self.content_length.is_some()) {
            State::Passthrough
        } else if self.chunked {
            State::ChunkSize
        } else {
            match self.content_length {
                Some(remaining) if remaining > 0 => State::Body { remaining },
                _ => State::Head { first: true },
            }
        }
    }
}

impl RequestTargets {
    /// Appends to `out` what the parser is to read of `input`, the next
    /// bytes from the socket. A line still incomplete is held until its end
    /// arrives.
    pub fn feed(&mut self, mut input: &[u8], out: &mut Vec<u8>) {
        while !input.is_empty() {
            match self.state {
                State::Passthrough => {
                    out.extend_from_slice(input);
                    return;
                }
                State::Body { remaining } | State::ChunkData { remaining } => {
                    let taken = usize::try_from(remaining)
                        .unwrap_or(usize::MAX)
                        .min(input.len());
                    out.extend_from_slice(&input[..taken]);
                    input = &input[taken..];
                    let left = remaining - taken as u64;
                    self.state = match self.state {
                        State::Body { .. } if left == 0 => State::Head { first: true },
                        State::Body { .. } => State::Body { remaining: left },
                        _ if left == 0 => State::ChunkEnd,
                        _ => State::ChunkData { remaining: left },
                    };
                }
                State::Head { .. } | State::ChunkSize | State::ChunkEnd | State::Trailers => {
                    match input.iter().position(|&byte| byte == b'\n') {
                        Some(end) => {
                            self.line.extend_from_slice(&input[..=end]);
                            input = &input[end + 1..];
                            if self.line.len() > MAX_LINE {
                                out.append(&mut self.line);
                                self.state = State::Passthrough;
                                continue;
                            }
                            let line = std::mem::take(&mut self.line);
                            self.line_ended(&line, out);
                        }
                        None => {
                            self.line.extend_from_slice(input);
                            if self.line.len() > MAX_LINE {
                                out.append(&mut self.line);
                                self.state = State::Passthrough;
                            }
                            return;
                        }
                    }
                }
            }
        }
    }

    /// The end of the client's bytes: a line held back goes out as it came.
    pub fn finish(&mut self, out: &mut Vec<u8>) {
        out.append(&mut self.line);
    }

    /// Handles one whole line (its line end included).
    fn line_ended(&mut self, line: &[u8], out: &mut Vec<u8>) {
        let empty = content(line).is_empty();
        match self.state {
            State::Head { first: true } if empty => out.extend_from_slice(line),
            State::Head { first: true } => {
                self.framing = Framing::default();
                if line.starts_with(b"CONNECT ") {
                    self.framing.unfollowable = true;
                }
                out.extend_from_slice(&encode_request_line(line));
                self.state = State::Head { first: false };
            }
            State::Head { first: false } if empty => {
                out.extend_from_slice(line);
                self.state = self.framing.after_head();
            }
            State::Head { first: false } => {
                self.framing.header(line);
                out.extend_from_slice(line);
            }
            State::ChunkSize => {
                out.extend_from_slice(line);
                let size = String::from_utf8_lossy(content(line));
                let size = size.split(';').next().unwrap_or_default().trim();
                self.state = match u64::from_str_radix(size, 16) {
                    Ok(0) => State::Trailers,
                    Ok(remaining) => State::ChunkData { remaining },
                    Err(_) => State::Passthrough,
                };
            }
            State::ChunkEnd => {
                out.extend_from_slice(line);
                self.state = if empty {
                    State::ChunkSize
                } else {
                    State::Passthrough
                };
            }
            State::Trailers => {
                out.extend_from_slice(line);
                if empty {
                    self.state = State::Head { first: true };
                }
            }
            State::Body { .. } | State::ChunkData { .. } | State::Passthrough => {
                out.extend_from_slice(line);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `input` fed in pieces of `piece` bytes.
    fn through(input: &[u8], piece: usize) -> Vec<u8> {
        let mut targets = RequestTargets::default();
        let mut out = Vec::new();
        for chunk in input.chunks(piece) {
            targets.feed(chunk, &mut out);
        }
        out
    }

    fn both_ways(input: &str) -> String {
        let whole = through(input.as_bytes(), input.len().max(1));
        for piece in [1, 2, 3, 7, 64] {
            assert_eq!(
                through(input.as_bytes(), piece),
                whole,
                "in pieces of {piece}"
            );
        }
        String::from_utf8(whole).expect("text")
    }

    #[test]
    fn a_pasted_query_is_percent_encoded_and_nothing_else_changes() {
        let request = "GET /companies/x/data/invoices?query=currency=\"GBP\"&&amountDue>0|{a}&orderBy=-amountDue HTTP/1.1\r\nHost: h\r\nX-Q: a<b\r\n\r\n";
        assert_eq!(
            both_ways(request),
            "GET /companies/x/data/invoices?query=currency=%22GBP%22&&amountDue%3E0%7C%7Ba%7D&orderBy=-amountDue HTTP/1.1\r\nHost: h\r\nX-Q: a<b\r\n\r\n"
        );
    }

    #[test]
    fn spaces_and_non_ascii_in_a_target_are_encoded() {
        assert_eq!(
            both_ways("GET /x?query=name=Café Ltd HTTP/1.1\r\n\r\n"),
            "GET /x?query=name=Caf%C3%A9%20Ltd HTTP/1.1\r\n\r\n"
        );
        assert_eq!(
            both_ways("GET / HTTP/1.1\r\n\r\n"),
            "GET / HTTP/1.1\r\n\r\n"
        );
        assert_eq!(both_ways("nonsense\r\n\r\n"), "nonsense\r\n\r\n");
    }

    #[test]
    fn bodies_are_never_touched_however_they_are_framed() {
        let body = "GET /a?b=<c> HTTP/1.1\r\n\r\n";
        let request = format!(
            "POST /companies HTTP/1.1\r\nContent-Length: {}\r\n\r\n{body}GET /next?q=a>b HTTP/1.1\r\n\r\n",
            body.len()
        );
        assert_eq!(
            both_ways(&request),
            format!(
                "POST /companies HTTP/1.1\r\nContent-Length: {}\r\n\r\n{body}GET /next?q=a%3Eb HTTP/1.1\r\n\r\n",
                body.len()
            )
        );
        let chunked = "POST /m HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n5;x=y\r\n<a b>\r\n3\r\n\"\"\"\r\n0\r\nT: <v>\r\n\r\nGET /q?a=\"b\" HTTP/1.1\r\n\r\n";
        assert_eq!(
            both_ways(chunked),
            "POST /m HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n5;x=y\r\n<a b>\r\n3\r\n\"\"\"\r\n0\r\nT: <v>\r\n\r\nGET /q?a=%22b%22 HTTP/1.1\r\n\r\n"
        );
    }

    #[test]
    fn what_cannot_be_followed_passes_through_untouched() {
        for request in [
            "POST /a HTTP/1.1\r\nContent-Length: 3\r\nContent-Length: 4\r\n\r\nabcdGET /b?<> HTTP/1.1\r\n\r\n",
            "POST /a HTTP/1.1\r\nContent-Length: x\r\n\r\nGET /b?<> HTTP/1.1\r\n\r\n",
            "POST /a HTTP/1.1\r\nTransfer-Encoding: chunked\r\nContent-Length: 3\r\n\r\nGET /b?<> HTTP/1.1\r\n\r\n",
            "GET /a HTTP/1.1\r\nUpgrade: websocket\r\n\r\nGET /b?<> HTTP/1.1\r\n\r\n",
            "POST /a HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\nGET /b?<> HTTP/1.1\r\n\r\n",
        ] {
            assert_eq!(both_ways(request), request);
        }
        let long = format!(
            "GET /{} HTTP/1.1\r\n\r\nGET /b?<> HTTP/1.1\r\n\r\n",
            "a".repeat(MAX_LINE + 10)
        );
        for piece in [4096, 100_000] {
            assert!(
                through(long.as_bytes(), piece) == long.as_bytes(),
                "in pieces of {piece}"
            );
        }
    }

    #[test]
    fn leading_empty_lines_and_bare_line_feeds_are_kept() {
        assert_eq!(
            both_ways("\r\nGET /a?b=<c> HTTP/1.1\nHost: h\n\n"),
            "\r\nGET /a?b=%3Cc%3E HTTP/1.1\nHost: h\n\n"
        );
    }
}
