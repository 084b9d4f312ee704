//! A batch validated whole before anything is stored: the platform, the
//! options, and every row (its reference, its company, its authorization
//! body against the platform's schema), with every problem reported by row
//! and field and no value echoed.

use std::collections::{HashMap, HashSet};

use sea_orm::{ColumnTrait, ConnectionTrait, EntityTrait, QueryFilter, QuerySelect};
use uuid::Uuid;

use entity::{company, migration_row};

use super::{BatchInput, MAX_ROWS, RowInput, RowState};
use crate::companies::CompanyFields;
use crate::error::{Error, FieldError, Remedy};
use crate::platforms::authorization::{self, AcceptedAuthorization};
use crate::platforms::connector::Connectors;
use crate::platforms::{self, Platform};
use crate::tenant::Tenant;
use crate::timestamp::Timestamp;

/// The longest external reference or batch reference, in characters.
pub const MAX_REFERENCE_CHARS: usize = 200;

/// What a valid batch would do (the answer of a dry run).
#[derive(Debug, Clone)]
pub struct Plan {
    /// The platform.
    pub platform: &'static Platform,
    /// How many rows it has.
    pub rows: usize,
    /// Rows that would create a company.
    pub companies_to_create: usize,
    /// Rows naming an existing company by id.
    pub companies_named: usize,
    /// Rows whose external reference an earlier batch imported: their
    /// company and connection are reused.
    pub references_imported_before: usize,
    /// The canary row's external reference.
    pub canary_reference: String,
}

/// A row that passed.
pub(super) struct ValidRow {
    pub external_reference: String,
    pub company_name: Option<String>,
    pub company_id: Option<Uuid>,
    pub accepted: AcceptedAuthorization,
}

/// A batch that passed.
pub(super) struct Validated {
    pub plan: Plan,
    pub reference: Option<String>,
    pub verify: bool,
    pub sync: bool,
    pub canary_position: usize,
    pub rows: Vec<ValidRow>,
}

fn reference_error(item_id: &str, text: &str) -> Option<FieldError> {
    let chars = text.chars().count();
    if chars == 0 {
        Some(FieldError::new(
            item_id,
            "must not be empty or only whitespace",
        ))
    } else if chars > MAX_REFERENCE_CHARS {
        Some(FieldError::new(
            item_id,
            format!("must be at most {MAX_REFERENCE_CHARS} characters (got {chars})"),
        ))
    } else {
        None
    }
}

/// Field errors of the body at `rows[i].authorization`, renamed to say where.
fn nested(prefix: &str, errors: Vec<FieldError>) -> Vec<FieldError> {
    errors
        .into_iter()
        .map(|mut error| {
            error.item_id = match error.item_id.as_str() {
                "" | "body" => prefix.to_owned(),
                field => format!("{prefix}.{}", field.trim_start_matches('/')),
            };
            error
        })
        .collect()
}

/// The platform of a batch, which must take an authorization body and have
/// a connector (the canary is verified and synced).
fn platform_of(platform_key: &str, connectors: &Connectors) -> Result<&'static Platform, Error> {
    let platform = platforms::find(platform_key).ok_or_else(|| {
        Error::Invalid(vec![
            FieldError::new(
                "platformKey",
                format!("`{platform_key}` is not a known platform"),
            )
            .with_remedy(Remedy::ListPlatforms),
        ])
    })?;
    if platform.authorization.is_none() {
        return Err(Error::invalid(
            "platformKey",
            format!(
                "{} takes no migrated tokens: its end customers connect again",
                platform.name
            ),
        ));
    }
    if connectors.get(platform.platform_key).is_none() {
        return Err(Error::invalid(
            "platformKey",
            format!(
                "tributary has no connector for {} yet, so it cannot verify or sync a canary: migrate its \
                 connections one by one with the authorization operation",
                platform.name
            ),
        ));
    }
    Ok(platform)
}

/// Checks `input` whole; every problem is reported, by row and field.
pub(super) async fn validate(
    db: &impl ConnectionTrait,
    connectors: &Connectors,
    tenant: Tenant,
    input: BatchInput,
    resent: Option<Uuid>,
) -> Result<Validated, Error> {
    let platform = platform_of(&input.platform_key, connectors)?;
    let Some(body_kind) = platform.authorization else {
        return Err(Error::invalid("platformKey", "takes no migrated tokens"));
    };
    let mut errors = Vec::new();
    let reference = input.reference.as_deref().map(str::trim).map(str::to_owned);
    if let Some(reference) = &reference {
        errors.extend(reference_error("reference", reference));
    }
    if input.rows.is_empty() || input.rows.len() > MAX_ROWS {
        errors.push(FieldError::new(
            "rows",
            format!(
                "must hold 1 to {MAX_ROWS} rows (got {}); split a larger migration into batches",
                input.rows.len()
            ),
        ));
        return Err(Error::Invalid(errors));
    }
    let named: Vec<Uuid> = input.rows.iter().filter_map(|row| row.company_id).collect();
    let existing = existing_companies(db, tenant, &named).await?;
    let now = Timestamp::now();
    let mut seen: HashMap<String, usize> = HashMap::new();
    let mut rows = Vec::with_capacity(input.rows.len());
    for (index, row) in input.rows.into_iter().enumerate() {
        let at = format!("rows[{index}]");
        // Repeats are found among every row, valid or not, so that they are
        // reported with the rest and not only once the rest is fixed.
        let reference = row.external_reference.trim().to_owned();
        if let Some(first) = seen.get(&reference) {
            errors.push(FieldError::new(
                format!("{at}.externalReference"),
                format!("repeats rows[{first}]: each company appears once in a batch"),
            ));
        } else if !reference.is_empty() {
            seen.insert(reference, index);
        }
        match check_row(&at, row, body_kind, platform, &existing, now) {
            Ok(valid) => rows.push(valid),
            Err(row_errors) => errors.extend(row_errors),
        }
    }
    let canary_position = match input.canary_reference.as_deref().map(str::trim) {
        None => 0,
        Some(wanted) => match seen.get(wanted) {
            Some(position) => *position,
            None => {
                errors.push(FieldError::new(
                    "canaryReference",
                    "must be the externalReference of one of the rows",
                ));
                0
            }
        },
    };
    let references: Vec<String> = rows
        .iter()
        .map(|row| row.external_reference.clone())
        .collect();
    let earlier = earlier_rows(db, tenant, platform.platform_key, &references, resent).await?;
    for (index, row) in rows.iter().enumerate() {
        if let Some(state) = earlier.unfinished.get(&row.external_reference) {
            errors.push(FieldError::new(
                format!("rows[{index}].externalReference"),
                format!(
                    "is in another batch that has not finished with it (its row is {state:?}): wait for it, or \
                     cancel that batch"
                ),
            ));
        }
    }
    if !errors.is_empty() {
        return Err(Error::Invalid(errors));
    }
    let companies_named = rows.iter().filter(|row| row.company_id.is_some()).count();
    let references_imported_before = rows
        .iter()
        .filter(|row| {
            row.company_id.is_none() && earlier.imported.contains(&row.external_reference)
        })
        .count();
    let plan = Plan {
        platform,
        rows: rows.len(),
        companies_to_create: rows.len() - companies_named - references_imported_before,
        companies_named,
        references_imported_before,
        canary_reference: rows[canary_position].external_reference.clone(),
    };
    Ok(Validated {
        plan,
        reference,
        verify: input.verify,
        sync: input.sync,
        canary_position,
        rows,
    })
}

fn check_row(
    at: &str,
    row: RowInput,
    body_kind: authorization::BodyKind,
    platform: &Platform,
    existing: &HashSet<Uuid>,
    now: chrono::DateTime<chrono::Utc>,
) -> Result<ValidRow, Vec<FieldError>> {
    let mut errors = Vec::new();
    let external_reference = row.external_reference.trim().to_owned();
    errors.extend(reference_error(
        &format!("{at}.externalReference"),
        &external_reference,
    ));
    let mut company_name = None;
    match (&row.company_name, row.company_id) {
        (Some(_), Some(_)) | (None, None) => errors.push(FieldError::new(
            at.to_owned(),
            "must name exactly one of `companyName` (a company to create) and `companyId` (an existing one)",
        )),
        (Some(name), None) => match CompanyFields::parse(name, None) {
            Ok(_) => company_name = Some(name.trim().to_owned()),
            Err(Error::Invalid(name_errors)) => errors.extend(name_errors.into_iter().map(|mut error| {
                error.item_id = format!("{at}.companyName");
                error
            })),
            Err(_) => {}
        },
        (None, Some(id)) => {
            if !existing.contains(&id) {
                errors.push(FieldError::new(
                    format!("{at}.companyId"),
                    format!("no company with id {id}"),
                ));
            }
        }
    }
    let prefix = format!("{at}.authorization");
    let accepted = match body_kind.accept(row.authorization.clone(), now) {
        Ok(accepted) => Some(accepted),
        Err(Error::Invalid(body_errors)) => {
            let others =
                authorization::platforms_of_body(&row.authorization, platform.platform_key);
            if others.is_empty() {
                errors.extend(nested(&prefix, body_errors));
            } else {
                let names: Vec<&str> = others.iter().map(|other| other.name).collect();
                errors.push(FieldError::new(
                    prefix,
                    format!(
                        "is a {} authorization body, but this batch migrates from {}",
                        names.join(" or "),
                        platform.name
                    ),
                ));
            }
            None
        }
        Err(other) => {
            errors.push(FieldError::new(prefix, other.to_string()));
            None
        }
    };
    match accepted {
        Some(accepted) if errors.is_empty() => Ok(ValidRow {
            external_reference,
            company_name,
            company_id: row.company_id,
            accepted,
        }),
        _ => Err(errors),
    }
}

async fn existing_companies(
    db: &impl ConnectionTrait,
    tenant: Tenant,
    ids: &[Uuid],
) -> Result<HashSet<Uuid>, Error> {
    let mut found = HashSet::new();
    for chunk in ids.chunks(500) {
        let rows: Vec<Uuid> = company::Entity::find()
            .select_only()
            .column(company::Column::Id)
            .filter(company::Column::ClientId.eq(tenant.client_id))
            .filter(company::Column::Id.is_in(chunk.iter().copied()))
            .into_tuple()
            .all(db)
            .await?;
        found.extend(rows);
    }
    Ok(found)
}

/// What earlier batches did with these references.
struct Earlier {
    /// References some earlier row imported (a connection holds their tokens).
    imported: HashSet<String>,
    /// References an unfinished row of another batch holds, with its state.
    unfinished: HashMap<String, RowState>,
}

async fn earlier_rows(
    db: &impl ConnectionTrait,
    tenant: Tenant,
    platform_key: &str,
    references: &[String],
    resent: Option<Uuid>,
) -> Result<Earlier, Error> {
    let mut earlier = Earlier {
        imported: HashSet::new(),
        unfinished: HashMap::new(),
    };
    for chunk in references.chunks(500) {
        let mut query = migration_row::Entity::find()
            .select_only()
            .column(migration_row::Column::ExternalReference)
            .column(migration_row::Column::State)
            .column(migration_row::Column::ConnectionId)
            .filter(migration_row::Column::ClientId.eq(tenant.client_id));
        if let Some(batch_id) = resent {
            query = query.filter(migration_row::Column::BatchId.ne(batch_id));
        }
        let rows: Vec<(String, RowState, Option<Uuid>)> = query
            .filter(migration_row::Column::PlatformKey.eq(platform_key))
            .filter(migration_row::Column::ExternalReference.is_in(chunk.iter().cloned()))
            .into_tuple()
            .all(db)
            .await?;
        for (reference, state, connection_id) in rows {
            if connection_id.is_some() {
                earlier.imported.insert(reference.clone());
            }
            if matches!(state, RowState::Pending) {
                earlier.unfinished.insert(reference, state);
            }
        }
    }
    Ok(earlier)
}
