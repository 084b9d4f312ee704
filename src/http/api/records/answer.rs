//! A list's answer, sent as it is written: the envelope's opening, the
//! page's records as the store keeps them (each let go once copied out),
//! and the rest of the envelope, in pieces as hyper asks for them.
//!
//! Written whole first, a `pageSize=5000` page (about 5 MB of invoices) was
//! in memory twice per concurrent request, its records and the answer made
//! of them, and every record was parsed once more on its way out (the
//! store's JSON is written by serde from the record types, so it is valid
//! as stored).

use poem::http::header::CONTENT_LENGTH;
use poem::{Body, IntoResponse, Response};

use crate::http::error::ApiError;

/// How many bytes of records one piece of an answer carries (a record
/// longer than that goes in a piece of its own).
const PIECE_BYTES: usize = 64 * 1024;

/// What a page's envelope written with no records opens with: its first
/// field, as `Paged` declares it.
const EMPTY_RESULTS: &[u8] = b"{\"results\":[]";

/// The answer of 200 to a list: `envelope` (the page's envelope, written
/// with an empty `results`) with `bodies` (the records' JSON) in `results`.
pub fn list_answer(bodies: Vec<String>, envelope: &[u8]) -> poem::Result<Response> {
    let (length, pieces) = pieces(bodies, envelope)?;
    Ok(Response::builder()
        .content_type("application/json; charset=utf-8")
        .header(CONTENT_LENGTH, length)
        .body(Body::from_bytes_stream(futures_util::stream::iter(pieces)))
        .into_response())
}

/// The whole answer's length, and its pieces.
fn pieces(bodies: Vec<String>, envelope: &[u8]) -> Result<(usize, Pieces), ApiError> {
    let Some(rest) = envelope.strip_prefix(EMPTY_RESULTS) else {
        return Err(ApiError::internal(anyhow::anyhow!(
            "a page's envelope does not open with its results"
        )));
    };
    let length = OPENING.len()
        + bodies.iter().map(String::len).sum::<usize>()
        + bodies.len().saturating_sub(1)
        + 1
        + rest.len();
    let mut closing = Vec::with_capacity(1 + rest.len());
    closing.push(b']');
    closing.extend_from_slice(rest);
    let pieces = Pieces {
        opening: Some(OPENING),
        bodies: bodies.into_iter(),
        written: 0,
        closing: Some(closing),
    };
    Ok((length, pieces))
}

/// The answer [`list_answer`] sends, whole (for tests).
#[cfg(test)]
pub(super) fn written(bodies: Vec<String>, envelope: &[u8]) -> Vec<u8> {
    let (_, pieces) = pieces(bodies, envelope).expect("an envelope");
    pieces.flat_map(|piece| piece.expect("written")).collect()
}

/// The envelope up to its first record.
const OPENING: &[u8] = b"{\"results\":[";

/// The pieces of an answer, each made when asked for.
struct Pieces {
    /// Not yet sent: the envelope's opening.
    opening: Option<&'static [u8]>,
    /// The records not yet copied into a piece.
    bodies: std::vec::IntoIter<String>,
    /// How many records went out already (all but the first follow a comma).
    written: usize,
    /// Not yet sent: the end of `results` and the rest of the envelope;
    /// `None` once sent.
    closing: Option<Vec<u8>>,
}

impl Iterator for Pieces {
    type Item = Result<Vec<u8>, std::io::Error>;

    fn next(&mut self) -> Option<Self::Item> {
        self.closing.as_ref()?;
        let mut piece = Vec::with_capacity(PIECE_BYTES + 1024);
        if let Some(opening) = self.opening.take() {
            piece.extend_from_slice(opening);
        }
        while piece.len() < PIECE_BYTES {
            let Some(body) = self.bodies.next() else {
                piece.extend(self.closing.take().unwrap_or_default());
                break;
            };
            if self.written > 0 {
                piece.push(b',');
            }
            piece.extend_from_slice(body.as_bytes());
            self.written += 1;
        }
        Some(Ok(piece))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    async fn sent(bodies: Vec<String>, envelope: &str) -> (Option<usize>, String) {
        let response = list_answer(bodies, envelope.as_bytes()).expect("an answer");
        let length = response
            .headers()
            .get(CONTENT_LENGTH)
            .and_then(|value| value.to_str().ok()?.parse().ok());
        let body = response.into_body().into_string().await.expect("a body");
        (length, body)
    }

    #[tokio::test]
    async fn records_go_into_results_in_order_with_the_rest_of_the_envelope_after() {
        let envelope = r#"{"results":[],"pageNumber":1,"totalResults":2}"#;
        let (length, body) = sent(vec![r#"{"a":1}"#.into(), r#"{"b":2}"#.into()], envelope).await;
        assert_eq!(
            body,
            r#"{"results":[{"a":1},{"b":2}],"pageNumber":1,"totalResults":2}"#
        );
        assert_eq!(length, Some(body.len()));
    }

    #[tokio::test]
    async fn an_empty_page_is_its_envelope() {
        let envelope = r#"{"results":[],"pageNumber":3,"totalResults":0}"#;
        let (length, body) = sent(Vec::new(), envelope).await;
        assert_eq!(body, envelope);
        assert_eq!(length, Some(body.len()));
    }

    #[tokio::test]
    async fn records_longer_than_a_piece_arrive_whole_and_in_order() {
        let long = |fill: char| format!("{{\"x\":\"{}\"}}", fill.to_string().repeat(PIECE_BYTES));
        let bodies: Vec<String> = vec![long('a'), r#"{"y":1}"#.into(), long('b'), long('c')];
        let expected = format!("{{\"results\":[{}],\"pageNumber\":1}}", bodies.join(","));
        let (length, body) = sent(bodies, r#"{"results":[],"pageNumber":1}"#).await;
        assert_eq!(body, expected);
        assert_eq!(length, Some(body.len()));
        let parsed: serde_json::Value = serde_json::from_str(&body).expect("JSON");
        assert_eq!(parsed["results"].as_array().map(Vec::len), Some(4));
    }

    #[test]
    fn an_envelope_that_does_not_open_with_its_results_is_refused() {
        assert!(list_answer(Vec::new(), br#"{"pageNumber":1,"results":[]}"#).is_err());
    }
}
