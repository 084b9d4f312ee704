//! The published documentation of the synced-data operations, written from
//! each [`Definition`]: the record type poem-openapi shows ([`RecordOf`]), the
//! paths, the sentences, the parameters and the answers.

use std::collections::HashMap;
use std::marker::PhantomData;
use std::sync::OnceLock;

use poem::http::Method;
use poem_openapi::registry::{
    MetaMediaType, MetaOperation, MetaOperationParam, MetaParamIn, MetaPath, MetaResponse,
    MetaResponses, MetaSchema, MetaSchemaRef, Registry,
};
use poem_openapi::types::Type;
use poem_openapi::{ApiExtractor, ApiResponse, Tags};
use serde::Serialize;
use serde_json::value::RawValue;
use uuid::Uuid;

use crate::data::fields::{self, Kind};
use crate::data::query::MAX_QUERY_LENGTH;
use crate::data::{DataType, Definition, FilterValues, MAX_FILTER_ID_LENGTH, Visitor};
use crate::http::api::ApiTags;
use crate::http::error::{ErrorResponses, status};
use crate::http::paging::Paged;
use crate::http::schema::register_placeholder;
use crate::http::spec::case_insensitive;
use crate::paging::{self, MAX_CURSOR_LENGTH, MAX_SNAPSHOT_LENGTH};
use crate::sync::engine::SNAPSHOT_RETENTION;
use crate::tenant::Tenant;

/// What every list can answer besides its page.
type ListErrors = ErrorResponses<
    {
        status::AUTHENTICATED
            | status::BAD_REQUEST
            | status::NOT_FOUND
            | status::CONFLICT
            | status::GONE
    },
>;

/// A synced record of `D` in a page, as the spec documents it (by the
/// schema it takes from `D`'s definition): its stored JSON, written as it
/// is. A list's answer splices the stored JSON in itself (`answer.rs`); the
/// envelope is written with an empty list of these.
pub(super) struct RecordOf<D> {
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
pub(super) fn paths(data_type: DataType) -> (String, String) {
    (
        format!("/companies/{{companyId}}/data/{}", data_type.name()),
        format!("/companies/:param0/data/{}", data_type.name()),
    )
}

/// The path of one record of a data type, as documented and as routed, and
/// the name of its id parameter (`invoiceId`).
pub(super) fn record_paths(data_type: DataType) -> (String, String, String) {
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
pub(super) const MAX_RECORD_ID_LENGTH: usize = 256;

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

/// Builds each data type's two operations and registers their schemas.
pub(super) struct Operations<'a> {
    /// The operations built so far.
    pub(super) paths: Vec<MetaPath>,
    /// Where schemas are registered, when that is what the visit does.
    pub(super) registry: Option<&'a mut Registry>,
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
    read_operation(
        (texts.one_summary, texts.one_description),
        params,
        (texts.one_answer, <RecordOf<D> as Type>::schema_ref()),
        leak(format!("get{}", RecordOf::<D>::name())),
    )
}

/// A GET of synced data: its words, its parameters, its 200 answer (what it
/// is, its schema) and the errors every such read can answer.
fn read_operation(
    (summary, description): (&'static str, &'static str),
    params: Vec<MetaOperationParam>,
    (answer, schema): (&'static str, MetaSchemaRef),
    operation_id: &'static str,
) -> MetaOperation {
    let mut responses = vec![MetaResponse {
        description: answer,
        status: Some(200),
        status_range: None,
        content: vec![MetaMediaType {
            content_type: "application/json; charset=utf-8",
            schema,
        }],
        headers: Vec::new(),
    }];
    responses.extend(<ListErrors as ApiResponse>::meta().responses);
    MetaOperation {
        method: Method::GET,
        tags: vec![ApiTags::Data.name()],
        summary: Some(summary),
        description: Some(description),
        external_docs: None,
        params,
        request: None,
        responses: MetaResponses { responses },
        deprecated: false,
        security: vec![HashMap::from([(
            crate::http::auth::SCHEME_NAME,
            Vec::new(),
        )])],
        operation_id: Some(operation_id),
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
    params.push(query(
        "query",
        MetaSchema {
            min_length: Some(1),
            max_length: Some(MAX_QUERY_LENGTH),
            ..MetaSchema::new("string")
        },
        query_description(data_type),
    ));
    let orders: Vec<serde_json::Value> = fields::of(data_type)
        .iter()
        .flat_map(|field| [field.name.clone(), format!("-{}", field.name)])
        .map(serde_json::Value::String)
        .collect();
    params.push(query(
        "orderBy",
        MetaSchema {
            enum_items: orders,
            ..MetaSchema::new("string")
        },
        format!(
            "Orders the results by one field of the list (see `query`): `orderBy=field` \
             ascending, `orderBy=-field` descending; records without the field come last, and \
             ties keep the list's own order ({}). Combines with `query`.",
            data_type.spec().order_description
        ),
    ));
    params.push(query(
        "snapshot",
        MetaSchema {
            max_length: Some(MAX_SNAPSHOT_LENGTH),
            pattern: Some("^[A-Za-z0-9_-]*$".to_owned()),
            ..MetaSchema::new("string")
        },
        format!(
            "The data a walk started on: tributary writes it into `_links.current`, `next` and \
             `previous`, so that a client following them keeps reading the same snapshot (no \
             record twice, none skipped) while a newer sync completes. Without it, a request \
             reads the newest data. A snapshot stays readable for {} minutes after a newer sync \
             replaces it, unless a second newer sync completes first (a list keeps the data it \
             last replaced, no older); after that the request answers 410, and the list must be \
             read again from page 1 without `snapshot`. Opaque: follow the links as given. One \
             not shaped like tributary's, or of another list, answers 400; one naming data that \
             is not (or no longer) kept, 410.",
            SNAPSHOT_RETENTION.as_secs() / 60
        ),
    ));
    params.push(query(
        "cursor",
        MetaSchema {
            max_length: Some(MAX_CURSOR_LENGTH),
            pattern: Some("^[A-Za-z0-9_-]*$".to_owned()),
            ..MetaSchema::new("string")
        },
        "Where the previous page of a walk through a queried list ended: tributary writes it \
         into `_links.next` when the list is narrowed by `query` and in its own order, so that \
         each next page costs the same at any depth. Opaque: follow the link as given. A cursor \
         of another list, page, page size or query, one written before the data changed, or \
         one that is not tributary's is ignored (the page is then read by its number)."
            .to_owned(),
    ));
    read_operation(
        (texts.summary, texts.description),
        params,
        (texts.answer, <Paged<RecordOf<D>> as Type>::schema_ref()),
        leak(format!("list{}", capitalized(data_type.name()))),
    )
}

/// The `query` parameter's documentation: the grammar, and the list's
/// fields with their kinds.
fn query_description(data_type: DataType) -> String {
    let listed: Vec<String> = fields::of(data_type)
        .iter()
        .map(|field| match &field.kind {
            Kind::Vocabulary(values) => format!("`{}` ({})", field.name, values.join(", ")),
            kind => format!("`{}` ({})", field.name, kind.describe()),
        })
        .collect();
    format!(
        "Only records matching this query. A comparison is `field`, an operator and a bare \
         value, without quotes: `=` and `!=` for every field (`!=` also matches a record \
         without the field), `~` (contains, letter case as written) for text, `>`, `<`, `>=` \
         and `<=` for numbers and dates. Comparisons join with `&&` (and) and `||` (or; `&&` \
         binds first) and group with `{{ }}`: `currency=GBP&&{{amountDue>0||status=paid}}`. \
         Dates are `YYYY-MM-DD`; date-times RFC 3339 or a date (its midnight, UTC); numbers \
         decimals (`12.50`), compared by value; a vocabulary's values in any case. Nested \
         fields use dots (`customerRef.id=61`); fields inside lists cannot be queried. At most \
         {MAX_QUERY_LENGTH} characters, URL-encoded. Combines with the list's other filters; \
         `totalResults` counts the matches, and the query is carried into `_links`. A mistake \
         answers 400 naming the character where it is (from 1) and why. The fields of this \
         list: {}.{}",
        listed.join(", "),
        keyed_description(data_type)
    )
}

/// What the `query` documentation says of the list's keyed fields.
fn keyed_description(data_type: DataType) -> String {
    let keys = data_type.spec().keys;
    if keys.is_empty() {
        return String::new();
    }
    let named: Vec<String> = keys.iter().map(|name| format!("`{name}`")).collect();
    format!(
        " A query made only of `=`, `!=` and ranges on {} (joined in any way, without the list's \
         own filter parameter) is answered from keys kept when the data was synced, without \
         reading the records; any other query reads every record once per snapshot first, \
         which on a list of a million takes seconds.",
        named.join(", ")
    )
}

/// `invoices` → `Invoices` (operation ids are camelCase: `listInvoices`).
fn capitalized(name: &str) -> String {
    let mut chars = name.chars();
    chars.next().map_or(String::new(), |first| {
        first.to_uppercase().chain(chars).collect()
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::data::customers::Customers;
    use crate::data::invoices::Invoices;
    use crate::data::records::Stamp;
    use crate::http::paging::ListLocation;
    use crate::paging::PageRequest;
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
        let request = PageRequest::new(1, 100).expect("valid");
        let location = ListLocation::new("/companies/x/data/list").filter("status", Some("Paid"));
        let envelope = serde_json::to_vec(&Paged::<RecordOf<D>>::new(
            Vec::new(),
            total,
            request,
            &location,
        ))
        .expect("written");
        let bodies = rows.into_iter().map(|row| row.body).collect();
        serde_json::from_slice(&super::super::answer::written(bodies, &envelope)).expect("JSON")
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
