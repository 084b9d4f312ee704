//! `/companies/{companyId}/data/{dataType}` and `.../{dataType}/{recordId}`:
//! the paged list of each data type's synced records and one record by its
//! id, two operations per [`Definition`], written from the definition (its
//! noun, order and filter) rather than by hand, so a new data type gets its
//! endpoints with nothing added here.
//!
//! Each operation parses what a poem-openapi handler would (the tenant, the
//! company id, `page`, `pageSize` and the list's filter), with the same rules
//! and messages, and answers the records' stored JSON in the paged envelope.

use std::collections::HashMap;
use std::marker::PhantomData;
use std::sync::OnceLock;

use poem::endpoint::{BoxEndpoint, make};
use poem::http::Method;
use poem::{EndpointExt, IntoResponse, Request, Response};
use poem_openapi::registry::{
    MetaApi, MetaMediaType, MetaOperation, MetaOperationParam, MetaParamIn, MetaPath, MetaResponse,
    MetaResponses, MetaSchema, MetaSchemaRef, Registry,
};
use poem_openapi::types::Type;
use poem_openapi::{ApiExtractor, ApiResponse, ExtractParamOptions, OpenApi, Tags};
use serde::Serialize;
use serde_json::value::RawValue;
use uuid::Uuid;

use crate::data::{DataType, Definition, FilterValues, MAX_FILTER_ID_LENGTH, Visitor, visit_all};
use crate::error::FieldError;
use crate::http::api::ApiTags;
use crate::http::error::{ApiError, ErrorResponses, UUID_RULE, status};
use crate::http::paging::{ListLocation, Paged};
use crate::http::schema::register_placeholder;
use crate::http::spec::case_insensitive;
use crate::http::state::AppState;
use crate::paging::{self, PageRequest};
use crate::sync::reads;
use crate::tenant::Tenant;

/// The synced-data lists, one per data type.
pub struct RecordsApi;

/// What every list can answer besides its page.
type ListErrors = ErrorResponses<
    { status::AUTHENTICATED | status::BAD_REQUEST | status::NOT_FOUND | status::CONFLICT },
>;

/// A synced record of `D` in a page: its stored JSON, written as it is,
/// documented by the schema the spec takes from `D`'s definition.
struct RecordOf<D> {
    json: Box<RawValue>,
    of: PhantomData<fn() -> D>,
}

impl<D> Serialize for RecordOf<D> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.json.serialize(serializer)
    }
}

impl<D: Definition> Type for RecordOf<D> {
    const IS_REQUIRED: bool = true;

    type RawValueType = Self;
    type RawElementValueType = Self;

    fn name() -> std::borrow::Cow<'static, str> {
        <D::Record as schemars::JsonSchema>::schema_name()
    }

    fn schema_ref() -> MetaSchemaRef {
        MetaSchemaRef::Reference(Self::name().into_owned())
    }

    fn register(registry: &mut Registry) {
        register_placeholder(registry, &Self::name());
    }

    fn as_raw_value(&self) -> Option<&Self::RawValueType> {
        Some(self)
    }

    fn raw_element_iter<'a>(
        &'a self,
    ) -> Box<dyn Iterator<Item = &'a Self::RawElementValueType> + 'a> {
        Box::new(std::iter::once(self))
    }
}

impl<D: Definition> poem_openapi::types::ToJSON for RecordOf<D> {
    fn to_json(&self) -> Option<serde_json::Value> {
        serde_json::from_str(self.json.get()).ok()
    }
}

impl<D: Definition> poem_openapi::types::ParseFromJSON for RecordOf<D> {
    fn parse_from_json(
        _value: Option<serde_json::Value>,
    ) -> poem_openapi::types::ParseResult<Self> {
        Err(poem_openapi::types::ParseError::custom(
            "synced records are never read from requests",
        ))
    }
}

/// The path of a data type's list, as documented and as routed.
fn paths(data_type: DataType) -> (String, String) {
    (
        format!("/companies/{{companyId}}/data/{}", data_type.name()),
        format!("/companies/:param0/data/{}", data_type.name()),
    )
}

/// The path of one record of a data type, as documented and as routed, and
/// the name of its id parameter (`invoiceId`).
fn record_paths(data_type: DataType) -> (String, String, String) {
    let id = data_type.spec().id_field.to_owned();
    (
        format!(
            "/companies/{{companyId}}/data/{}/{{{id}}}",
            data_type.name()
        ),
        format!("/companies/:param0/data/{}/:param1", data_type.name()),
        id,
    )
}

/// The longest record id the store holds.
const MAX_RECORD_ID_LENGTH: usize = 256;

/// poem-openapi's metadata holds `&'static str`s; the few sentences written
/// from the definitions are made once per process.
fn leak(text: String) -> &'static str {
    Box::leak(text.into_boxed_str())
}

/// The documentation of one list, written from its definition once.
struct Texts {
    summary: &'static str,
    description: &'static str,
    answer: &'static str,
    one_summary: &'static str,
    one_description: &'static str,
    one_answer: &'static str,
}

fn texts(data_type: DataType) -> &'static Texts {
    static TEXTS: OnceLock<HashMap<&'static str, Texts>> = OnceLock::new();
    let all = TEXTS.get_or_init(|| {
        DataType::all()
            .iter()
            .map(|data_type| {
                let spec = data_type.spec();
                let noun = spec.noun;
                let filter = spec.filter.as_ref().map_or(String::new(), |filter| {
                    format!(
                        ", optionally of one `{name}` (`{name}={example}` works; `totalResults` \
                         counts after the filter, and the filter is carried into `_links`)",
                        name = filter.parameter,
                        example = filter.example(),
                    )
                });
                let texts = Texts {
                    summary: leak(format!("List {noun}")),
                    description: leak(wrapped(&format!(
                        "The company's synced {noun}, {order}{filter}. While a sync runs, the last \
                         complete data is served. 409 until the first sync of {noun} completes.",
                        order = spec.order_description,
                    ))),
                    answer: leak(format!("A page of the company's {noun}.")),
                    one_summary: leak(format!("Get one of the {noun}")),
                    one_description: leak(wrapped(&format!(
                        "One of the company's synced {noun} by its id on the platform, as the \
                         list shows it, from the last complete sync. 404 when no connection of \
                         the company holds one of that id; when several do, 409 names them and \
                         `connectionId` picks one. 409 until the first sync of {noun} completes."
                    ))),
                    one_answer: leak(format!("The record, as in the list of {noun}.")),
                };
                (data_type.name(), texts)
            })
            .collect()
    });
    // Every data type is in the map: it was built from the same list.
    &all[data_type.name()]
}

/// `text` broken into lines of at most 72 characters, as the doc comments
/// of the other operations are (Markdown reads them as one paragraph).
fn wrapped(text: &str) -> String {
    let mut lines: Vec<String> = Vec::new();
    for word in text.split(' ') {
        match lines.last_mut() {
            Some(line) if line.len() + 1 + word.len() <= 72 => {
                line.push(' ');
                line.push_str(word);
            }
            _ => lines.push(word.to_owned()),
        }
    }
    lines.join("\n")
}

/// Builds each list's operation and registers its schemas.
struct Operations<'a> {
    paths: Vec<MetaPath>,
    registry: Option<&'a mut Registry>,
}

impl Visitor for Operations<'_> {
    fn visit<D: Definition>(&mut self) {
        if let Some(registry) = self.registry.as_deref_mut() {
            <Paged<RecordOf<D>> as Type>::register(registry);
            <ListErrors as ApiResponse>::register(registry);
            <Tenant as ApiExtractor>::register(registry);
            return;
        }
        let data_type = DataType::of::<D>();
        let (path, _) = paths(data_type);
        self.paths.push(MetaPath {
            path,
            operations: vec![operation::<D>(data_type)],
        });
        let (path, _, id) = record_paths(data_type);
        self.paths.push(MetaPath {
            path,
            operations: vec![record_operation::<D>(data_type, &id)],
        });
    }
}

fn query(name: &str, schema: MetaSchema, description: String) -> MetaOperationParam {
    MetaOperationParam {
        name: name.to_owned(),
        schema: MetaSchemaRef::Inline(Box::new(schema)),
        in_type: MetaParamIn::Query,
        description: Some(description),
        required: false,
        deprecated: false,
        explode: true,
        style: None,
    }
}

fn company_id_parameter() -> MetaOperationParam {
    MetaOperationParam {
        name: "companyId".to_owned(),
        schema: Uuid::schema_ref(),
        in_type: MetaParamIn::Path,
        description: Some("The company's id.".to_owned()),
        required: true,
        deprecated: false,
        explode: true,
        style: None,
    }
}

/// `GET /companies/{companyId}/data/{dataType}/{recordId}`.
fn record_operation<D: Definition>(data_type: DataType, id: &str) -> MetaOperation {
    let texts = texts(data_type);
    let params = vec![
        company_id_parameter(),
        MetaOperationParam {
            name: id.to_owned(),
            schema: MetaSchemaRef::Inline(Box::new(MetaSchema {
                min_length: Some(1),
                max_length: Some(MAX_RECORD_ID_LENGTH),
                pattern: Some(crate::http::spec::NO_NUL_PATTERN.to_owned()),
                ..MetaSchema::new("string")
            })),
            in_type: MetaParamIn::Path,
            description: Some(format!(
                "The record's id on its platform (`{id}` in the list), percent-encoded \
                     where it holds `/` or other reserved characters."
            )),
            required: true,
            deprecated: false,
            explode: true,
            style: None,
        },
        query(
            "connectionId",
            MetaSchema::new_with_format("string", "uuid"),
            "Only this connection's record; needed when several of the company's connections \
             hold a record of the id."
                .to_owned(),
        ),
    ];
    let mut responses = vec![MetaResponse {
        description: texts.one_answer,
        status: Some(200),
        status_range: None,
        content: vec![MetaMediaType {
            content_type: "application/json; charset=utf-8",
            schema: <RecordOf<D> as Type>::schema_ref(),
        }],
        headers: Vec::new(),
    }];
    responses.extend(<ListErrors as ApiResponse>::meta().responses);
    MetaOperation {
        method: Method::GET,
        tags: vec![ApiTags::Data.name()],
        summary: Some(texts.one_summary),
        description: Some(texts.one_description),
        external_docs: None,
        params,
        request: None,
        responses: MetaResponses { responses },
        deprecated: false,
        security: vec![HashMap::from([(
            crate::http::auth::SCHEME_NAME,
            Vec::new(),
        )])],
        operation_id: Some(leak(format!("get{}", RecordOf::<D>::name()))),
        code_samples: Vec::new(),
    }
}

fn operation<D: Definition>(data_type: DataType) -> MetaOperation {
    let texts = texts(data_type);
    let mut params = vec![
        company_id_parameter(),
        query(
            "page",
            MetaSchema {
                default: Some(serde_json::json!(paging::DEFAULT_PAGE)),
                minimum: Some(1.0),
                ..MetaSchema::new_with_format("integer", "int32")
            },
            "The page to return, from 1.".to_owned(),
        ),
        query(
            "pageSize",
            MetaSchema {
                default: Some(serde_json::json!(paging::DEFAULT_PAGE_SIZE)),
                maximum: Some(f64::from(paging::MAX_PAGE_SIZE)),
                minimum: Some(1.0),
                ..MetaSchema::new_with_format("integer", "int32")
            },
            "Results per page, from 1 to 5000.".to_owned(),
        ),
    ];
    if let Some(filter) = &data_type.spec().filter {
        let (schema, accepted) = match filter.values {
            FilterValues::Vocabulary(values) => {
                let names: Vec<String> = values.iter().map(|value| format!("`{value}`")).collect();
                let listed = match names.split_last() {
                    Some((last, rest)) if !rest.is_empty() => {
                        format!("{} or {last}", rest.join(", "))
                    }
                    _ => names.join(""),
                };
                (
                    MetaSchema {
                        pattern: Some(case_insensitive(values)),
                        ..MetaSchema::new("string")
                    },
                    format!("{listed} (any case)"),
                )
            }
            FilterValues::Id { example } => (
                MetaSchema {
                    min_length: Some(1),
                    max_length: Some(MAX_FILTER_ID_LENGTH),
                    ..MetaSchema::new("string")
                },
                format!("the platform's id, exactly as the records carry it (`{example}`)"),
            ),
        };
        params.push(query(
            filter.parameter,
            schema,
            format!("{}: {accepted}.", filter.description),
        ));
    }
    let mut responses = vec![MetaResponse {
        description: texts.answer,
        status: Some(200),
        status_range: None,
        content: vec![MetaMediaType {
            content_type: "application/json; charset=utf-8",
            schema: <Paged<RecordOf<D>> as Type>::schema_ref(),
        }],
        headers: Vec::new(),
    }];
    responses.extend(<ListErrors as ApiResponse>::meta().responses);
    MetaOperation {
        method: Method::GET,
        tags: vec![ApiTags::Data.name()],
        summary: Some(texts.summary),
        description: Some(texts.description),
        external_docs: None,
        params,
        request: None,
        responses: MetaResponses { responses },
        deprecated: false,
        security: vec![HashMap::from([(
            crate::http::auth::SCHEME_NAME,
            Vec::new(),
        )])],
        operation_id: Some(leak(format!("list{}", capitalized(data_type.name())))),
        code_samples: Vec::new(),
    }
}

/// `invoices` → `Invoices` (operation ids are camelCase: `listInvoices`).
fn capitalized(name: &str) -> String {
    let mut chars = name.chars();
    chars.next().map_or(String::new(), |first| {
        first.to_uppercase().chain(chars).collect()
    })
}

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
    #[cfg(feature = "naive-paging")]
    let found = if state.naive_paging {
        reads::naive_page(
            &state.db,
            tenant,
            company_id,
            data_type,
            filter.as_deref(),
            page,
        )
        .await
    } else {
        reads::page(
            &state.db,
            tenant,
            company_id,
            data_type,
            filter.as_deref(),
            page,
        )
        .await
    }
    .map_err(ApiError::from)?;
    #[cfg(not(feature = "naive-paging"))]
    let found = reads::page(
        &state.db,
        tenant,
        company_id,
        data_type,
        filter.as_deref(),
        page,
    )
    .await
    .map_err(ApiError::from)?;
    let results = found
        .bodies
        .into_iter()
        .map(|body| {
            RawValue::from_string(body).map(|json| RecordOf::<D> {
                json,
                of: PhantomData,
            })
        })
        .collect::<Result<Vec<_>, _>>()
        .map_err(ApiError::internal)?;
    let mut location = ListLocation::new(request.uri().path());
    if let Some(spec) = &data_type.spec().filter {
        location = location.filter(spec.parameter, filter);
    }
    let body = serde_json::to_vec(&Paged::new(results, found.total, page, &location))
        .map_err(ApiError::internal)?;
    Ok(json_answer(body))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::data::customers::Customers;
    use crate::data::invoices::Invoices;
    use crate::data::records::Stamp;
    use crate::platforms::sandbox::dataset::Dataset;
    use crate::timestamp::Timestamp;

    /// A page as [`list`] writes it, from `records`.
    fn page_of<D: Definition>(records: Vec<D::Record>) -> serde_json::Value {
        let stamp = Stamp {
            connection_id: Uuid::from_u128(7),
            modified: Timestamp(chrono::DateTime::UNIX_EPOCH),
        };
        let rows = crate::data::Records::of::<D>(records)
            .rows(&stamp)
            .expect("written");
        let total = rows.len() as u64;
        let results = rows
            .into_iter()
            .map(|row| RecordOf::<D> {
                json: RawValue::from_string(row.body).expect("JSON"),
                of: PhantomData,
            })
            .collect();
        let request = PageRequest::new(1, 100).expect("valid");
        let location = ListLocation::new("/companies/x/data/list").filter("status", Some("Paid"));
        let page = Paged::new(results, total, request, &location);
        serde_json::to_value(&page).expect("written")
    }

    fn published(name: &str) -> crate::validation::Checker {
        let document = crate::http::spec::document().expect("the spec");
        crate::validation::compile(
            crate::http::spec::json_schema_for(&document, name).expect("a schema"),
        )
        .expect("compiles")
    }

    /// What clients generate their types from is what the server writes:
    /// every status, null and present optional fields, exact amounts.
    #[test]
    fn pages_of_every_data_type_match_their_published_schema() {
        let dataset = Dataset::invoices_only(9, 60);
        let invoices = page_of::<Invoices>((0..60).map(|index| dataset.invoice(index)).collect());
        assert_eq!(published("Paged_Invoice").field_errors(&invoices), []);
        let statuses: std::collections::HashSet<&str> = invoices["results"]
            .as_array()
            .expect("results")
            .iter()
            .filter_map(|invoice| invoice["status"].as_str())
            .collect();
        assert_eq!(statuses.len(), 5, "{statuses:?}");
        let customers = page_of::<Customers>((0..6).map(|index| dataset.customer(index)).collect());
        assert_eq!(published("Paged_Customer").field_errors(&customers), []);
        let first = &customers["results"][0];
        assert_eq!(
            first["connectionId"],
            "00000000-0000-0000-0000-000000000007"
        );
        assert_eq!(first["modifiedDate"], "1970-01-01T00:00:00.000000Z");
    }

    #[test]
    fn a_record_missing_a_required_field_does_not_match() {
        let dataset = Dataset::invoices_only(9, 1);
        let mut page = page_of::<Invoices>(vec![dataset.invoice(0)]);
        if let Some(invoice) = page["results"][0].as_object_mut() {
            invoice.remove("amountDue");
        }
        assert!(!published("Paged_Invoice").field_errors(&page).is_empty());
    }
}
