//! `/companies/{companyId}/data/{dataType}` and `.../{dataType}/{recordId}`:
//! the paged list of each data type's synced records and one record by its
//! id, two operations per [`Definition`], written from the definition (its
//! noun, order and filter) rather than by hand, so a new data type gets its
//! endpoints with nothing added here.
//!
//! Each operation parses what a poem-openapi handler would (the tenant, the
//! company id, `page`, `pageSize`, the list's filter, `query` and `orderBy`),
//! with the same rules and messages, and answers the records' stored JSON in
//! the paged envelope. A list without `query` or `orderBy` is read by stored
//! ordinals (`reads::page`); with either, by conditions on the stored JSON
//! (`reads::queried_page`).

use std::borrow::Cow;
use std::collections::HashMap;

use poem::endpoint::{BoxEndpoint, make};
use poem::http::Method;
use poem::{EndpointExt, IntoResponse, Request, Response};
use poem_openapi::registry::{MetaApi, Registry};
use poem_openapi::{ApiExtractor, ExtractParamOptions, OpenApi};
use uuid::Uuid;

use crate::data::{DataType, Definition, Visitor, query, visit_all};
use crate::error::FieldError;
use crate::http::error::{ApiError, UUID_RULE};
use crate::http::paging::{ListLocation, Paged};
use crate::http::state::AppState;
use crate::paging::{self, Cursor, MAX_CURSOR_LENGTH, MAX_SNAPSHOT_LENGTH, PageRequest, Snapshot};
use crate::sync::reads::{self, Seen};
use crate::tenant::Tenant;

mod answer;
mod spec;

use spec::{MAX_RECORD_ID_LENGTH, Operations, RecordOf, paths, record_paths};

/// The synced-data lists, one per data type.
pub struct RecordsApi;

impl OpenApi for RecordsApi {
    fn meta() -> Vec<MetaApi> {
        let mut operations = Operations {
            paths: Vec::new(),
            registry: None,
        };
        visit_all(&mut operations);
        vec![MetaApi {
            paths: operations.paths,
        }]
    }

    fn register(registry: &mut Registry) {
        visit_all(&mut Operations {
            paths: Vec::new(),
            registry: Some(registry),
        });
    }

    fn add_routes(self, route_table: &mut HashMap<String, HashMap<Method, BoxEndpoint<'static>>>) {
        visit_all(&mut Routes(route_table));
    }
}

/// Adds each list's endpoint to the route table.
struct Routes<'a>(&'a mut HashMap<String, HashMap<Method, BoxEndpoint<'static>>>);

impl Visitor for Routes<'_> {
    fn visit<D: Definition>(&mut self) {
        let (_, route) = paths(DataType::of::<D>());
        let endpoint = make(|request: Request| async move { list::<D>(&request).await });
        self.0
            .entry(route)
            .or_default()
            .insert(Method::GET, endpoint.boxed());
        let (_, route, _) = record_paths(DataType::of::<D>());
        let endpoint = make(|request: Request| async move { one::<D>(&request).await });
        self.0
            .entry(route)
            .or_default()
            .insert(Method::GET, endpoint.boxed());
    }
}

/// One query parameter, at most once (the middleware refuses repeats).
fn query_value<'a>(pairs: &'a [(String, String)], name: &str) -> Option<&'a str> {
    pairs
        .iter()
        .find(|(key, _)| key == name)
        .map(|(_, value)| value.as_str())
}

/// A paging parameter: absent is its default; present, it must be a whole
/// number in its range.
fn paging_parameter(
    pairs: &[(String, String)],
    name: &str,
    default: i32,
    max: i32,
) -> Result<i32, ApiError> {
    match query_value(pairs, name) {
        None => Ok(default),
        Some(text) => text
            .parse::<i32>()
            .ok()
            .filter(|value| (1..=max).contains(value))
            .ok_or_else(|| {
                let rule = paging::parameter_rule(name).unwrap_or("is out of range");
                ApiError::validation(vec![FieldError::new(name, rule)])
            }),
    }
}

/// What both operations read first, in a poem-openapi handler's order: the
/// tenant, the application's state and the company id.
async fn preamble(request: &Request) -> poem::Result<(Tenant, &AppState, Uuid)> {
    let tenant = Tenant::from_request(
        request,
        &mut poem::RequestBody::default(),
        ExtractParamOptions::default(),
    )
    .await?;
    let state = request
        .data::<AppState>()
        .ok_or_else(|| ApiError::internal(anyhow::anyhow!("AppState missing from request")))?;
    let company_id: Uuid = request
        .raw_path_param("param0")
        .and_then(|text| text.parse().ok())
        .ok_or_else(|| ApiError::validation(vec![FieldError::new("companyId", UUID_RULE)]))?;
    Ok((tenant, state, company_id))
}

/// A JSON answer of 200.
fn json_answer(body: Vec<u8>) -> Response {
    Response::builder()
        .content_type("application/json; charset=utf-8")
        .body(body)
        .into_response()
}

/// One record of `D` by its platform id.
async fn one<D: Definition>(request: &Request) -> poem::Result<Response> {
    let data_type = DataType::of::<D>();
    let (tenant, state, company_id) = preamble(request).await?;
    let (_, _, id_parameter) = record_paths(data_type);
    // poem percent-decodes path parameters; one that is not UTF-8 is absent.
    let record_id = request
        .raw_path_param("param1")
        .filter(|id| {
            (1..=MAX_RECORD_ID_LENGTH).contains(&id.chars().count())
                && crate::validation::storable(id)
        })
        .ok_or_else(|| {
            ApiError::validation(vec![FieldError::new(
                id_parameter,
                "must be 1 to 256 characters of text without NUL, percent-encoded",
            )])
        })?;
    let pairs: Vec<(String, String)> = request.params().unwrap_or_default();
    let connection_id =
        match query_value(&pairs, "connectionId") {
            None => None,
            Some(text) => Some(text.parse::<Uuid>().map_err(|_| {
                ApiError::validation(vec![FieldError::new("connectionId", UUID_RULE)])
            })?),
        };
    let body = reads::record(
        &state.db,
        tenant,
        company_id,
        data_type,
        record_id,
        connection_id,
    )
    .await
    .map_err(ApiError::from)?;
    Ok(json_answer(body.into_bytes()))
}

/// The list of `D`: the same steps, in the same order, as a poem-openapi
/// handler with the tenant, the path id and the query.
async fn list<D: Definition>(request: &Request) -> poem::Result<Response> {
    let data_type = DataType::of::<D>();
    let (tenant, state, company_id) = preamble(request).await?;
    let pairs: Vec<(String, String)> = request.params().unwrap_or_default();
    let page = paging_parameter(&pairs, "page", paging::DEFAULT_PAGE, i32::MAX)?;
    let page_size = paging_parameter(
        &pairs,
        "pageSize",
        paging::DEFAULT_PAGE_SIZE,
        paging::MAX_PAGE_SIZE,
    )?;
    let page = PageRequest::new(page, page_size).map_err(ApiError::from)?;
    let filter = match &data_type.spec().filter {
        None => None,
        Some(filter) => match query_value(&pairs, filter.parameter) {
            None => None,
            Some(text) => Some(filter.value_named(text).ok_or_else(|| {
                ApiError::validation(vec![FieldError::new(filter.parameter, filter.rule())])
            })?),
        },
    };
    let query_text = query_value(&pairs, "query");
    let query = query_text
        .map(|text| query::parse(data_type, text))
        .transpose()
        .map_err(ApiError::from)?;
    let order_text = query_value(&pairs, "orderBy");
    let order_by = order_text
        .map(|text| query::parse_order_by(data_type, text))
        .transpose()
        .map_err(ApiError::from)?;
    let pinned = query_value(&pairs, "snapshot")
        .map(Snapshot::parse)
        .transpose()
        .map_err(ApiError::from)?;
    let seen = match &pinned {
        Some(snapshot) => Seen::Pinned {
            snapshot,
            retention: state.snapshot_retention,
        },
        None => Seen::Newest,
    };
    let cursor_text = query_value(&pairs, "cursor");
    let cursor = cursor_text
        .map(Cursor::parse)
        .transpose()
        .map_err(ApiError::from)?
        .flatten();
    // `status=paid` in a query is the `status` filter, which has stored
    // ordinals: a query of nothing else reads as the filtered list does. A
    // query the keys answer whole takes the `status` parameter in instead,
    // and is then known by a text that names it too (the totals, orders
    // and cursors a query is remembered by).
    let (selected, query, selection_text) = match query {
        Some(query) => {
            let lifted = query::lift_filter(data_type, filter.as_deref(), query);
            let text = match (&filter, &lifted.filter, query_text) {
                // NUL cannot be in a query or a filter value (both are
                // refused with it), so no other request has this text.
                (Some(value), None, Some(text)) => Some(Cow::Owned(format!("{value}\0{text}"))),
                _ => query_text.map(Cow::Borrowed),
            };
            (lifted.filter.map(Cow::Owned), lifted.rest, text)
        }
        None => (filter.clone(), None, None),
    };
    // Cursors are written for queried lists only; a list read by its stored
    // ordinals needs none.
    let (found, next_cursor) = if query.is_some() || order_by.is_some() {
        let queried = reads::Queried {
            query: query.as_ref().zip(selection_text.as_deref()),
            order_by: order_by.as_ref(),
            cursor: cursor.as_ref(),
        };
        let found = reads::queried_page(
            &state.db,
            &state.query_totals,
            &state.list_orders,
            tenant,
            company_id,
            data_type,
            selected.as_deref(),
            queried,
            seen,
            page,
        )
        .await
        .map_err(ApiError::from)?;
        // A cursor too long to be read back (a company of very many
        // connections) is left out: the next page is then read by number.
        let next = found
            .next
            .map(|next| next.encode())
            .filter(|token| token.len() <= MAX_CURSOR_LENGTH);
        (found.page, next)
    } else {
        let found = listed_page(
            state,
            tenant,
            company_id,
            data_type,
            selected.as_deref(),
            seen,
            page,
        )
        .await
        .map_err(ApiError::from)?;
        (found, None)
    };
    // The links pin what this page was read from.
    let snapshot = Snapshot {
        list: Snapshot::list_digest(company_id, data_type.name()),
        generations: found.generations,
    };
    let mut location = ListLocation::new(request.uri().path());
    if let Some(spec) = &data_type.spec().filter {
        location = location.filter(spec.parameter, filter);
    }
    location = location
        .filter("query", query_text)
        .filter("orderBy", order_text)
        // A snapshot too long to be read back (a company of very many
        // connections) is left out: the links then read the newest data.
        .filter(
            "snapshot",
            Some(snapshot.encode()).filter(|token| token.len() <= MAX_SNAPSHOT_LENGTH),
        )
        .cursors(cursor_text, next_cursor);
    // The envelope with no records; the records follow as they are stored.
    let envelope = serde_json::to_vec(&Paged::<RecordOf<D>>::new(
        Vec::new(),
        found.total,
        page,
        &location,
    ))
    .map_err(ApiError::internal)?;
    answer::list_answer(found.bodies, &envelope)
}

/// A page of the list in its own order, by stored ordinals (or, in the
/// benchmark's naive build when asked, by `OFFSET` and `COUNT(*)`).
async fn listed_page(
    state: &AppState,
    tenant: Tenant,
    company_id: Uuid,
    data_type: DataType,
    filter: Option<&str>,
    seen: Seen<'_>,
    page: PageRequest,
) -> Result<reads::Page, crate::error::Error> {
    #[cfg(feature = "naive-paging")]
    if state.naive_paging && matches!(seen, Seen::Newest) {
        return reads::naive_page(&state.db, tenant, company_id, data_type, filter, page).await;
    }
    reads::page(
        &state.db,
        &state.list_orders,
        tenant,
        company_id,
        data_type,
        filter,
        seen,
        page,
    )
    .await
}
