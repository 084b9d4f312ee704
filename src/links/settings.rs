//! A tenant's link settings (`link_settings`): the name its end customers
//! see on the hosted pages, the redirect URLs sessions may send them back
//! to (exact match), the origins that may frame the pages, and the data
//! types a first link fetches.

use chrono::{DateTime, Utc};
use sea_orm::sea_query::OnConflict;
use sea_orm::{ConnectionTrait, EntityTrait, Set};

use entity::link_settings;

use crate::data::DataType;
use crate::error::{Error, FieldError};
use crate::tenant::Tenant;
use crate::timestamp::Timestamp;

/// The most redirect URLs (or frame origins) one client may list.
pub const MAX_LISTED: usize = 20;

/// A client's link settings.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LinkSettings {
    /// The name end customers see; `None`: the client's name.
    pub display_name: Option<String>,
    /// The redirect URLs a session may use, compared exactly.
    pub allowed_redirect_urls: Vec<String>,
    /// Origins that may show the hosted pages in a frame; empty: none may.
    pub allowed_frame_origins: Vec<String>,
    /// The data types a first link queues; `None`: every one the platform syncs.
    pub fetch_on_first_link: Option<Vec<DataType>>,
    /// When they were last set; `None`: never (the defaults).
    pub updated: Option<DateTime<Utc>>,
}

impl LinkSettings {
    /// Of `offered` (what a platform syncs), what a first link queues.
    pub fn first_link_data_types(&self, offered: &[DataType]) -> Vec<DataType> {
        DataType::chosen_of(self.fetch_on_first_link.as_deref(), offered)
    }
}

fn list_of(json: &str) -> Vec<String> {
    serde_json::from_str(json).unwrap_or_default()
}

impl From<link_settings::Model> for LinkSettings {
    fn from(row: link_settings::Model) -> Self {
        Self {
            display_name: row.display_name,
            allowed_redirect_urls: list_of(&row.allowed_redirect_urls),
            allowed_frame_origins: list_of(&row.allowed_frame_origins),
            fetch_on_first_link: row
                .fetch_on_first_link
                .as_deref()
                .map(DataType::from_stored_list),
            updated: Some(row.updated),
        }
    }
}

/// The client's link settings (the defaults when never set).
pub async fn get(db: &impl ConnectionTrait, client_id: uuid::Uuid) -> Result<LinkSettings, Error> {
    Ok(link_settings::Entity::find_by_id(client_id)
        .one(db)
        .await?
        .map(LinkSettings::from)
        .unwrap_or_default())
}

/// What `PUT /linkSettings` sets: the whole settings, data types by name.
#[derive(Debug, Clone, Default)]
pub struct NewLinkSettings {
    /// The name end customers see.
    pub display_name: Option<String>,
    /// Redirect URLs.
    pub allowed_redirect_urls: Vec<String>,
    /// Frame origins.
    pub allowed_frame_origins: Vec<String>,
    /// Data type names; `None`: every one the platform syncs.
    pub fetch_on_first_link: Option<Vec<String>>,
}

/// Why `url` cannot be a redirect URL, if it cannot: it must be absolute
/// `https` (or `http` to a loopback host, for development), with no user
/// information and no fragment.
pub fn redirect_url_problem(url: &str) -> Option<String> {
    let Ok(parsed) = url::Url::parse(url) else {
        return Some("is not an absolute URL".to_owned());
    };
    if parsed.cannot_be_a_base() || parsed.host_str().is_none() {
        return Some("is not an absolute URL with a host".to_owned());
    }
    if !parsed.username().is_empty() || parsed.password().is_some() {
        return Some("must not carry user information".to_owned());
    }
    if parsed.fragment().is_some() {
        return Some("must not have a fragment".to_owned());
    }
    match parsed.scheme() {
        "https" => None,
        "http" if is_loopback(&parsed) => None,
        "http" => Some("must be https (http only to a loopback host such as 127.0.0.1)".to_owned()),
        other => Some(format!("has scheme `{other}`; use https")),
    }
}

fn is_loopback(url: &url::Url) -> bool {
    match url.host() {
        Some(url::Host::Domain(domain)) => domain.eq_ignore_ascii_case("localhost"),
        Some(url::Host::Ipv4(address)) => address.is_loopback(),
        Some(url::Host::Ipv6(address)) => address.is_loopback(),
        None => false,
    }
}

/// Why `origin` cannot frame the pages, if it cannot: an `https` origin
/// (`scheme://host[:port]`, nothing after), or `http` on a loopback host.
pub fn frame_origin_problem(origin: &str) -> Option<String> {
    if let Some(problem) = redirect_url_problem(origin) {
        return Some(problem);
    }
    let parsed = url::Url::parse(origin).ok()?;
    (parsed.origin().ascii_serialization() != origin)
        .then(|| "must be an origin only: scheme, host and port, no path".to_owned())
}

/// The configured public base URL, checked: absolute `http` or `https`,
/// no query or fragment; returned without a trailing `/`.
pub fn public_url(configured: &str) -> anyhow::Result<String> {
    let parsed = url::Url::parse(configured).map_err(|_| {
        anyhow::anyhow!("TRIBUTARY_PUBLIC_URL `{configured}` is not an absolute URL")
    })?;
    anyhow::ensure!(
        matches!(parsed.scheme(), "http" | "https")
            && parsed.host_str().is_some()
            && parsed.query().is_none()
            && parsed.fragment().is_none(),
        "TRIBUTARY_PUBLIC_URL `{configured}` must be an http(s) URL with no query or fragment"
    );
    Ok(configured.trim_end_matches('/').to_owned())
}

/// Replaces the client's link settings, after checking each field.
pub async fn put(
    db: &impl ConnectionTrait,
    tenant: Tenant,
    new: NewLinkSettings,
) -> Result<LinkSettings, Error> {
    let mut problems = Vec::new();
    if let Some(name) = &new.display_name
        && (name.trim().is_empty() || name.chars().count() > 100)
    {
        problems.push(FieldError::new(
            "displayName",
            "must be 1 to 100 characters, not blank",
        ));
    }
    for (field, listed, problem_of) in [
        (
            "allowedRedirectUrls",
            &new.allowed_redirect_urls,
            redirect_url_problem as fn(&str) -> Option<String>,
        ),
        (
            "allowedFrameOrigins",
            &new.allowed_frame_origins,
            frame_origin_problem,
        ),
    ] {
        if listed.len() > MAX_LISTED {
            problems.push(FieldError::new(
                field,
                format!("lists {} entries; at most {MAX_LISTED}", listed.len()),
            ));
        }
        for (index, entry) in listed.iter().enumerate() {
            if let Some(problem) = problem_of(entry) {
                problems.push(FieldError::new(format!("{field}[{index}]"), problem));
            }
        }
    }
    let mut data_types = None;
    if let Some(names) = &new.fetch_on_first_link {
        let mut chosen = Vec::new();
        for (index, name) in names.iter().enumerate() {
            match DataType::named(name) {
                Some(data_type) if !chosen.contains(&data_type) => chosen.push(data_type),
                Some(_) => {}
                None => problems.push(FieldError::new(
                    format!("fetchOnFirstLink[{index}]"),
                    format!(
                        "`{name}` is not a data type; use one of {}",
                        DataType::names()
                    ),
                )),
            }
        }
        data_types = Some(chosen);
    }
    if !problems.is_empty() {
        return Err(Error::Invalid(problems));
    }
    let as_json = |list: &[String]| serde_json::to_string(list).unwrap_or_else(|_| "[]".to_owned());
    let row = link_settings::ActiveModel {
        client_id: Set(tenant.client_id),
        display_name: Set(new.display_name.map(|name| name.trim().to_owned())),
        allowed_redirect_urls: Set(as_json(&new.allowed_redirect_urls)),
        allowed_frame_origins: Set(as_json(&new.allowed_frame_origins)),
        fetch_on_first_link: Set(data_types.as_deref().map(DataType::stored_list)),
        updated: Set(Timestamp::now()),
    };
    link_settings::Entity::insert(row)
        .on_conflict(
            OnConflict::column(link_settings::Column::ClientId)
                .update_columns([
                    link_settings::Column::DisplayName,
                    link_settings::Column::AllowedRedirectUrls,
                    link_settings::Column::AllowedFrameOrigins,
                    link_settings::Column::FetchOnFirstLink,
                    link_settings::Column::Updated,
                ])
                .to_owned(),
        )
        .exec(db)
        .await?;
    get(db, tenant.client_id).await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn redirect_urls_are_https_or_loopback_http_without_fragments() {
        for good in [
            "https://app.example.com/connected",
            "https://app.example.com/connected?from=tributary",
            "http://127.0.0.1:8080/done",
            "http://localhost:3000/done",
            "http://[::1]/done",
        ] {
            assert_eq!(redirect_url_problem(good), None, "{good}");
        }
        for bad in [
            "http://app.example.com/connected",
            "https://app.example.com/connected#x",
            "https://user:pw@app.example.com/",
            "javascript:alert(1)",
            "/relative",
            "ftp://app.example.com/",
        ] {
            assert!(redirect_url_problem(bad).is_some(), "{bad}");
        }
    }

    #[test]
    fn frame_origins_are_origins_only() {
        assert_eq!(frame_origin_problem("https://app.example.com"), None);
        assert!(frame_origin_problem("https://app.example.com/path").is_some());
        assert!(frame_origin_problem("http://app.example.com").is_some());
    }
}
