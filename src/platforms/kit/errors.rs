//! What a platform's error answer says: its own message, found in each
//! platform's error shape, scrubbed of secrets and bounded, for the
//! failures the HTTP client reports.

use reqwest::StatusCode;
use serde_json::Value;

/// Longest platform message quoted.
const MAX_MESSAGE_CHARS: usize = 300;

/// "Xero answered 404 Not Found: <its message>".
pub fn describe(platform: &str, status: StatusCode, body: &[u8], secrets: &[&str]) -> String {
    let reason = status.canonical_reason().unwrap_or("");
    match platform_message(body) {
        Some(message) => format!(
            "{platform} answered {} {reason}: {}",
            status.as_u16(),
            scrub(&message, secrets)
        ),
        None => format!("{platform} answered {} {reason}", status.as_u16()),
    }
}

/// Removes `secrets` from `text` and bounds its length.
pub fn scrub(text: &str, secrets: &[&str]) -> String {
    let mut text = text.to_owned();
    for secret in secrets.iter().filter(|secret| secret.len() >= 4) {
        text = text.replace(secret, "[redacted]");
    }
    if text.chars().count() > MAX_MESSAGE_CHARS {
        text = text.chars().take(MAX_MESSAGE_CHARS).collect::<String>() + "…";
    }
    text
}

/// The error message in a platform's JSON error body: Xero's `Detail`,
/// `Message` or validation errors, QuickBooks' `Fault.Error[].Message` and
/// `Detail`, FreeAgent's and FreshBooks' `errors[].message`, Zoho's
/// `message`, OData's `error.code`/`error.message` (Business Central) and
/// `error.message.value` (Exact Online), MYOB's `Errors[].Name`/`Message`,
/// NetSuite's `o:errorDetails[].detail`, Sage's array of `$dataCode` and
/// `$message`, GraphQL's `errors[].message`, Square's `errors[].code`/`detail`,
/// problem details' `detail`/`title`, Zettle's `developerMessage`, OAuth's `error_description`/`error`,
/// Plaid's `error_code`/`error_message`.
pub fn platform_message(body: &[u8]) -> Option<String> {
    let value: Value = serde_json::from_slice(body).ok()?;
    let array = |pointer: &str| value.pointer(pointer).and_then(Value::as_array);
    // Xero's validation errors sit one level down, in each element.
    let xero_validation: Vec<&Value> = array("/Elements")
        .into_iter()
        .flatten()
        .filter_map(|element| element.get("ValidationErrors").and_then(Value::as_array))
        .flatten()
        .collect();
    // Sage: a bare array of `{$dataCode, $message}`.
    joined(value.as_array().into_iter().flatten(), |error| {
        labelled(text(error.get("$dataCode")), text(error.get("$message")))
    })
    // GraphQL, FreeAgent, FreshBooks: `{"errors": [{"message": …}]}`;
    // Square: `{"errors": [{"code": …, "detail": …}]}`.
    .or_else(|| {
        joined(array("/errors").into_iter().flatten(), |error| {
            text(error.get("message"))
                .or_else(|| labelled(text(error.get("code")), text(error.get("detail"))))
        })
    })
    .or_else(|| {
        joined(array("/Fault/Error").into_iter().flatten(), |error| match (
            text(error.get("Message")),
            text(error.get("Detail")),
        ) {
            (Some(message), Some(detail)) => Some(format!("{message} ({detail})")),
            (message, detail) => message.or(detail),
        })
    })
    .or_else(|| {
        joined(xero_validation.iter().copied(), |error| {
            text(error.get("Message"))
        })
    })
    // OData (Business Central): `{"error": {"code": "…", "message": "…"}}`.
    .or_else(|| {
        let error = value.get("error").filter(|error| error.is_object())?;
        let message = text(error.get("message"))?;
        labelled(text(error.get("code")), Some(message))
    })
    // NetSuite REST: `{"o:errorDetails": [{"detail": "…", "o:errorCode": "…"}]}`.
    .or_else(|| {
        joined(array("/o:errorDetails").into_iter().flatten(), |detail| {
            let message = text(detail.get("detail"))?;
            labelled(text(detail.get("o:errorCode")), Some(message))
        })
    })
    // OData v2 (Exact Online): `{"error": {"message": {"value": "…"}}}`.
    .or_else(|| text(value.pointer("/error/message/value")))
    // MYOB: `{"Errors": [{"Name": "…", "Message": "…"}]}`, or a bare array of `{"Message": "…"}`.
    .or_else(|| {
        joined(
            array("/Errors")
                .or_else(|| value.as_array())
                .into_iter()
                .flatten(),
            |error| labelled(text(error.get("Name")), text(error.get("Message"))),
        )
    })
    // FreeAgent's `{"errors":{"error":{"message":…}}}`; FreshBooks' `{"response":{"errors":[…]}}`.
    .or_else(|| text(value.pointer("/errors/error/message")))
    .or_else(|| text(value.pointer("/response/errors/0/message")))
    .or_else(|| {
        [
            "Detail",
            "Message",
            "message",
            "error_description",
            // RFC 9457 problem details (Mollie, BigCommerce); Zettle's `developerMessage`.
            "detail",
            "developerMessage",
            "Title",
            "title",
            "error",
        ]
        .into_iter()
        .find_map(|key| text(value.get(key)))
    })
    // Plaid: `{"error_type": …, "error_code": "ITEM_LOGIN_REQUIRED", "error_message": "…"}`.
    .or_else(|| {
        labelled(
            text(value.get("error_code")),
            text(value.get("error_message")),
        )
    })
}

/// A JSON string's trimmed text, if it has any.
fn text(value: Option<&Value>) -> Option<String> {
    value
        .and_then(Value::as_str)
        .map(str::trim)
        .filter(|text| !text.is_empty())
        .map(str::to_owned)
}

/// `label: message`, or whichever of the two there is.
fn labelled(label: Option<String>, message: Option<String>) -> Option<String> {
    match (label, message) {
        (Some(label), Some(message)) => Some(format!("{label}: {message}")),
        (label, message) => message.or(label),
    }
}

/// The messages of a list of errors, joined with `; `; `None` when none
/// of them says anything.
fn joined<'a>(
    errors: impl IntoIterator<Item = &'a Value>,
    message: impl Fn(&Value) -> Option<String>,
) -> Option<String> {
    let messages: Vec<String> = errors.into_iter().filter_map(message).collect();
    (!messages.is_empty()).then(|| messages.join("; "))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn platform_messages_are_found_in_each_error_shape() {
        let xero = br#"{"Title":"Unauthorized","Status":401,"Detail":"TokenExpired"}"#;
        assert_eq!(platform_message(xero).as_deref(), Some("TokenExpired"));
        let qbo = br#"{"Fault":{"Error":[{"Message":"message=AuthenticationFailed","Detail":"Token expired","code":"3200"}],"type":"AUTHENTICATION"}}"#;
        assert_eq!(
            platform_message(qbo).as_deref(),
            Some("message=AuthenticationFailed (Token expired)")
        );
        let zoho = br#"{"code":57,"message":"You are not authorized to perform this operation"}"#;
        assert_eq!(
            platform_message(zoho).as_deref(),
            Some("You are not authorized to perform this operation")
        );
        let odata = br#"{"error":{"code":"Authentication_InvalidCredentials","message":"The server has rejected the client credentials."}}"#;
        assert_eq!(
            platform_message(odata).as_deref(),
            Some(
                "Authentication_InvalidCredentials: The server has rejected the client credentials."
            )
        );
        let netsuite = br#"{"type":"https://www.rfc-editor.org/rfc/rfc9110.html#section-15.5.2","title":"Unauthorized","status":401,"o:errorDetails":[{"detail":"Invalid login attempt.","o:errorCode":"INVALID_LOGIN"}]}"#;
        assert_eq!(
            platform_message(netsuite).as_deref(),
            Some("INVALID_LOGIN: Invalid login attempt.")
        );
        let sage = br#"[{"$severity":"error","$dataCode":"AuthorizationFailure","$message":"No active subscription. (MSE)","$source":""}]"#;
        assert_eq!(
            platform_message(sage).as_deref(),
            Some("AuthorizationFailure: No active subscription. (MSE)")
        );
        let graphql = br#"{"errors":[{"message":"Not authenticated","extensions":{"code":"UNAUTHENTICATED"}}]}"#;
        assert_eq!(
            platform_message(graphql).as_deref(),
            Some("Not authenticated")
        );
        let exact = br#"{"error":{"code":"","message":{"lang":"","value":"Forbidden"}}}"#;
        assert_eq!(platform_message(exact).as_deref(), Some("Forbidden"));
        let myob = br#"{"Errors":[{"Name":"RateLimitError","Message":"API key has exceeded the per-second rate limit","ErrorCode":0}]}"#;
        assert_eq!(
            platform_message(myob).as_deref(),
            Some("RateLimitError: API key has exceeded the per-second rate limit")
        );
        assert_eq!(
            platform_message(br#"[{"Message":"Access denied"}]"#).as_deref(),
            Some("Access denied")
        );
        assert_eq!(platform_message(b"<html>oops</html>"), None);
        let freeagent = br#"{"errors":{"error":{"message":"Access denied"}}}"#;
        assert_eq!(
            platform_message(freeagent).as_deref(),
            Some("Access denied")
        );
        let freshbooks = br#"{"response":{"errors":[{"errno":1012,"field":"f","message":"the reason","object":"o","value":"v"}]}}"#;
        assert_eq!(platform_message(freshbooks).as_deref(), Some("the reason"));
        let plaid = br#"{"error_type":"ITEM_ERROR","error_code":"ITEM_LOGIN_REQUIRED","error_message":"the login details of this item have changed","display_message":null,"request_id":"r"}"#;
        assert_eq!(
            platform_message(plaid).as_deref(),
            Some("ITEM_LOGIN_REQUIRED: the login details of this item have changed")
        );
        let square = br#"{"errors":[{"category":"AUTHENTICATION_ERROR","code":"INSUFFICIENT_SCOPES","detail":"scopes required: ORDERS_READ"}]}"#;
        assert_eq!(
            platform_message(square).as_deref(),
            Some("INSUFFICIENT_SCOPES: scopes required: ORDERS_READ")
        );
        let mollie = br#"{"status":403,"title":"Forbidden","detail":"Missing a permission"}"#;
        assert_eq!(
            platform_message(mollie).as_deref(),
            Some("Missing a permission")
        );
        let bigcommerce = br#"{"status":403,"title":"You don't have a required scope"}"#;
        assert_eq!(
            platform_message(bigcommerce).as_deref(),
            Some("You don't have a required scope")
        );
        let zettle = br#"{"errorType":"FORBIDDEN","developerMessage":"Missing required scope"}"#;
        assert_eq!(
            platform_message(zettle).as_deref(),
            Some("Missing required scope")
        );
    }

    #[test]
    fn secrets_are_scrubbed_and_messages_bounded() {
        assert_eq!(
            scrub("bad token tok-123456", &["tok-123456"]),
            "bad token [redacted]"
        );
        assert!(scrub(&"x".repeat(1000), &[]).chars().count() <= MAX_MESSAGE_CHARS + 1);
    }
}
