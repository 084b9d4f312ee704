//! The hosted pages' HTML: plain server-rendered forms, no script, no
//! third-party asset, one inline style sheet (allowed by its hash in the
//! `Content-Security-Policy`), labels on every control. Every value shown
//! is escaped.

use std::fmt::Write as _;

use crate::links::flow::{Context, Ending, Refusal};
use crate::platforms::Platform;
use crate::platforms::link::{Ask, Organization};

/// The one style sheet of the hosted pages.
pub const STYLE: &str = "body{font-family:system-ui,-apple-system,'Segoe UI',sans-serif;background:#f6f7f9;color:#1b1f24;margin:0}\
main{max-width:32rem;margin:3rem auto;background:#fff;border:1px solid #d8dde3;border-radius:8px;padding:2rem}\
h1{font-size:1.4rem;margin-top:0}fieldset{border:0;padding:0;margin:0 0 1rem}\
label{display:block;padding:.6rem .8rem;border:1px solid #d8dde3;border-radius:6px;margin:.4rem 0;cursor:pointer}\
input[type=text]{width:100%;box-sizing:border-box;padding:.6rem;font-size:1rem;border:1px solid #8a939d;border-radius:6px}\
button{font-size:1rem;padding:.6rem 1.2rem;border-radius:6px;border:1px solid #1d4ed8;background:#1d4ed8;color:#fff;cursor:pointer}\
button.secondary{background:#fff;color:#1d4ed8}button:focus,input:focus,label:focus-within{outline:3px solid #f59e0b;outline-offset:2px}\
.note{color:#4b5563;font-size:.9rem}.error{color:#b91c1c}";

/// `text` with HTML's special characters escaped.
pub fn escape(text: &str) -> String {
    let mut escaped = String::with_capacity(text.len());
    for character in text.chars() {
        match character {
            '&' => escaped.push_str("&amp;"),
            '<' => escaped.push_str("&lt;"),
            '>' => escaped.push_str("&gt;"),
            '"' => escaped.push_str("&quot;"),
            '\'' => escaped.push_str("&#39;"),
            other => escaped.push(other),
        }
    }
    escaped
}

/// A whole page around `body`.
pub fn layout(title: &str, body: &str) -> String {
    format!(
        "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\
         <meta name=\"referrer\" content=\"no-referrer\">\
         <title>{title}</title><style>{STYLE}</style></head>\
         <body><main>{body}</main></body></html>",
        title = escape(title),
    )
}

fn requester(context: &Context) -> String {
    match &context.display_name {
        Some(name) => escape(name),
        None => "The service that sent you here".to_owned(),
    }
}

/// The platform picker.
pub fn choose_platform(context: &Context, platforms: &[&Platform]) -> String {
    let mut body = format!(
        "<h1>Connect {company}</h1><p>{requester} asks to read {company}'s data from one of \
         these platforms. Choose the one you use.</p>",
        company = escape(&context.company_name),
        requester = requester(context),
    );
    if platforms.is_empty() {
        body.push_str(
            "<p class=\"error\">No platform can be connected yet. Tell the service that sent you \
             here; it has to set this up first.</p>",
        );
        return layout("Connect your platform", &body);
    }
    let _ = write!(
        body,
        "<form method=\"post\" action=\"/link/{}/platform\"><fieldset><legend>Platform</legend>",
        context.session_id
    );
    for (index, platform) in platforms.iter().enumerate() {
        let _ = write!(
            body,
            "<label><input type=\"radio\" name=\"platformKey\" value=\"{key}\"{checked} required> {name}</label>",
            key = escape(platform.platform_key),
            name = escape(platform.name),
            checked = if index == 0 { " checked" } else { "" },
        );
    }
    body.push_str("</fieldset><button type=\"submit\">Continue</button></form>");
    layout("Connect your platform", &body)
}

/// The confirmation before leaving for the platform.
pub fn confirm(context: &Context, platform: &Platform, ask: Option<Ask>, repair: bool) -> String {
    let company = escape(&context.company_name);
    let name = escape(platform.name);
    let mut body = format!(
        "<h1>{verb} {name}</h1><p>{requester} asks to read <strong>{company}</strong>'s data \
         from {name}, read-only. You will sign in at {name} and choose what to allow; you can \
         revoke it there at any time.</p>",
        verb = if repair { "Reconnect" } else { "Connect" },
        requester = requester(context),
    );
    let _ = write!(
        body,
        "<form method=\"post\" action=\"/link/{}/authorize\">",
        context.session_id
    );
    match ask {
        Some(Ask::ShopDomain) => body.push_str(
            "<p><label for=\"shop\">Your shop's domain</label>\
             <input type=\"text\" id=\"shop\" name=\"shop\" placeholder=\"your-shop.myshopify.com\" \
             autocomplete=\"off\" required></p>",
        ),
        Some(Ask::Region(regions)) => {
            let _ = write!(
                body,
                "<p><label for=\"region\">The country of your {name} site</label>\
                 <select id=\"region\" name=\"region\" required>"
            );
            for region in regions {
                let _ = write!(
                    body,
                    "<option value=\"{}\">{}</option>",
                    escape(region.value),
                    escape(region.label)
                );
            }
            body.push_str("</select></p>");
        }
        None => {}
    }
    let _ = write!(
        body,
        "<button type=\"submit\">Continue to {name}</button></form>"
    );
    layout(&format!("Connect {}", platform.name), &body)
}

/// The organization picker, where one consent covered several.
pub fn choose_organization(
    context: &Context,
    platform: &Platform,
    organizations: &[Organization],
) -> String {
    let mut body = format!(
        "<h1>Choose the organization</h1><p>You allowed access to more than one {name} \
         organization. Choose the one that is <strong>{company}</strong>; tributary lets go of \
         the others.</p><form method=\"post\" action=\"/link/{session}/organization\">\
         <fieldset><legend>Organization</legend>",
        name = escape(platform.name),
        company = escape(&context.company_name),
        session = context.session_id,
    );
    for (index, organization) in organizations.iter().enumerate() {
        let _ = write!(
            body,
            "<label><input type=\"radio\" name=\"organizationId\" value=\"{id}\"{checked} required> {name}</label>",
            id = escape(&organization.id),
            name = escape(&organization.name),
            checked = if index == 0 { " checked" } else { "" },
        );
    }
    body.push_str("</fieldset><button type=\"submit\">Connect this organization</button></form>");
    layout("Choose the organization", &body)
}

/// How the session ended, when there is no redirect URL to go to.
pub fn outcome(ending: &Ending) -> String {
    let company = escape(&ending.context.company_name);
    let body = if ending.status_code == 200 {
        format!(
            "<h1>Connected</h1><p>{company}'s data is now connected. You can close this page.</p>"
        )
    } else {
        format!(
            "<h1>Not connected</h1><p class=\"error\">{}</p><p>Nothing was changed. Ask the \
             service that sent you here for a new link to try again.</p>",
            escape(
                ending
                    .error_message
                    .as_deref()
                    .unwrap_or("The connection failed.")
            )
        )
    };
    layout("Connection", &body)
}

/// A refused step: what happened and what to do.
pub fn refusal(refusal: &Refusal) -> String {
    let (title, advice) = match refusal {
        Refusal::UnknownLink => (
            "This link is not valid",
            "Check that you opened the whole link you were sent, or ask for a new one.",
        ),
        Refusal::Expired => (
            "This link has expired",
            "Links work for 30 minutes. Ask the service that sent you here for a new one.",
        ),
        Refusal::OtherBrowser => (
            "Continue in the browser you started in",
            "For your security this step only works in the browser that opened your link. \
             Open the link you were sent again in this browser to start over.",
        ),
        Refusal::BadRequest(_) => ("This step cannot be done", "Go back and try again."),
        Refusal::Callback(_) => (
            "This sign-in cannot be used",
            "Open the link you were sent again to start over. Nothing was changed.",
        ),
        Refusal::Internal(_) => (
            "Something went wrong on our side",
            "Nothing was changed. Try again in a few minutes.",
        ),
    };
    let detail = match refusal {
        Refusal::BadRequest(message) | Refusal::Callback(message) => {
            format!("<p class=\"error\">{}</p>", escape(message))
        }
        _ => String::new(),
    };
    layout(
        title,
        &format!(
            "<h1>{}</h1>{detail}<p>{}</p>",
            escape(title),
            escape(advice)
        ),
    )
}

/// The sandbox's own consent page (tributary plays the platform).
pub fn sandbox_consent(state: &str, organizations: &[(&str, &str)]) -> String {
    let listed: String = organizations
        .iter()
        .map(|(_, name)| format!("<li>{}</li>", escape(name)))
        .collect();
    let body = format!(
        "<h1>tributary Sandbox</h1><p>This is the sandbox, tributary's synthetic platform: no \
         account is needed. Allow read access to these synthetic organizations?</p><ul>{listed}</ul>\
         <form method=\"post\" action=\"/link/sandbox/consent\">\
         <input type=\"hidden\" name=\"state\" value=\"{state}\">\
         <button type=\"submit\" name=\"decision\" value=\"allow\">Allow</button> \
         <button type=\"submit\" name=\"decision\" value=\"deny\" class=\"secondary\">Deny</button></form>\
         <p class=\"note\">Real platforms show their own page here.</p>",
        state = escape(state),
    );
    layout("tributary Sandbox: allow access", &body)
}

/// Too many requests from one address.
pub fn too_many() -> String {
    layout(
        "Too many requests",
        "<h1>Too many requests</h1><p>Wait a minute and try again.</p>",
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_special_character_is_escaped() {
        assert_eq!(
            escape("<script>\"x\" & 'y'</script>"),
            "&lt;script&gt;&quot;x&quot; &amp; &#39;y&#39;&lt;/script&gt;"
        );
    }
}
