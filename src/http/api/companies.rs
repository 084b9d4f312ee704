//! `/companies`: create, list, read, replace and delete companies.

use poem::Request;
use poem::web::Data;
use poem_openapi::param::{Path, Query};
use poem_openapi::payload::Json;
use poem_openapi::{ApiResponse, Object, OpenApi};
use uuid::Uuid;

use crate::companies::{self, CompanyFields};
use crate::http::api::ApiTags;
use crate::http::error::{ErrorResponses, status};
use crate::http::json_body::JsonBody;
use crate::http::paging::{ListLocation, Paged};
use crate::http::state::AppState;
use crate::http::types::{Nullable, Timestamp};
use crate::paging::{self, PageRequest};
use crate::tenant::Tenant;

/// Company endpoints.
pub struct CompaniesApi;

/// A company: one of your end customers, owner of data connections.
#[derive(Debug, Clone, Object)]
#[oai(rename_all = "camelCase")]
pub struct Company {
    /// The company's id, used as `{companyId}` in paths.
    pub company_id: Uuid,
    /// The company's display name.
    pub name: String,
    /// Free text about the company; null when not set.
    pub description: Nullable<String>,
    /// When the company was created (RFC 3339, UTC).
    pub created: Timestamp,
    /// When a data sync of the company last completed; null until one does.
    pub last_sync: Nullable<Timestamp>,
}

impl From<entity::company::Model> for Company {
    fn from(row: entity::company::Model) -> Self {
        Self {
            company_id: row.id,
            name: row.name,
            description: row.description.into(),
            created: row.created.into(),
            last_sync: row.last_sync.map(Timestamp).into(),
        }
    }
}

/// The fields of a company that you set.
#[derive(Debug, Clone, Object)]
#[oai(rename_all = "camelCase", deny_unknown_fields)]
pub struct CompanyInput {
    /// Display name, 1 to 200 characters with at least one that is not a space; surrounding whitespace is trimmed.
    #[oai(validator(min_length = 1, max_length = 200, pattern = r"\S"))]
    pub name: String,
    /// Optional free text, up to 2000 characters; null or absent for none.
    #[oai(default, validator(max_length = 2000))]
    pub description: Nullable<String>,
}

impl CompanyInput {
    fn validate(self) -> Result<CompanyFields, crate::error::Error> {
        CompanyFields::parse(&self.name, self.description.0)
    }
}

/// Answer of `listCompanies`.
#[derive(ApiResponse)]
pub enum CompanyPage {
    /// A page of companies.
    #[oai(status = 200)]
    Ok(Json<Paged<Company>>),
}

/// Answer of `getCompany` and `replaceCompany`.
#[derive(ApiResponse)]
pub enum CompanyFound {
    /// The company.
    #[oai(status = 200)]
    Ok(Json<Company>),
}

/// Answer of `createCompany`.
#[derive(ApiResponse)]
pub enum CreatedCompany {
    /// The company was created; `Location` is its URL.
    #[oai(status = 201)]
    Created(
        Json<Company>,
        /// The path of the new company.
        #[oai(header = "Location")]
        String,
    ),
}

/// Answer of `deleteCompany`.
#[derive(ApiResponse)]
pub enum DeletedCompany {
    /// The company was deleted.
    #[oai(status = 204)]
    Deleted,
}

type ListErrors = ErrorResponses<{ status::AUTHENTICATED | status::BAD_REQUEST }>;
type CreateErrors = ErrorResponses<{ status::AUTHENTICATED | status::JSON_BODY }>;
type ReadErrors =
    ErrorResponses<{ status::AUTHENTICATED | status::BAD_REQUEST | status::NOT_FOUND }>;
type ReplaceErrors =
    ErrorResponses<{ status::AUTHENTICATED | status::JSON_BODY | status::NOT_FOUND }>;

#[OpenApi(tag = "ApiTags::Companies")]
impl CompaniesApi {
    /// List companies
    ///
    /// Your companies, oldest first (ties broken by id, so the order never
    /// changes between requests), in the paged envelope.
    #[oai(path = "/companies", method = "get", operation_id = "listCompanies")]
    async fn list_companies(
        &self,
        tenant: Tenant,
        state: Data<&AppState>,
        request: &Request,
        /// The page to return, from 1.
        #[oai(default = "paging::default_page", validator(minimum(value = "1")))]
        page: Query<i32>,
        /// Results per page, from 1 to 5000.
        #[oai(
            name = "pageSize",
            default = "paging::default_page_size",
            validator(minimum(value = "1"), maximum(value = "5000"))
        )]
        page_size: Query<i32>,
    ) -> Result<CompanyPage, ListErrors> {
        let page = PageRequest::new(page.0, page_size.0)?;
        let (rows, total) = companies::list(&state.db, tenant, page).await?;
        let results = rows.into_iter().map(Company::from).collect();
        let location = ListLocation::new(request.uri().path());
        Ok(CompanyPage::Ok(Json(Paged::new(
            results, total, page, &location,
        ))))
    }

    /// Create a company
    ///
    /// Creates a company for your end customer. Create it before its data
    /// connections; the answer's `Location` header is the company's path.
    #[oai(path = "/companies", method = "post", operation_id = "createCompany")]
    async fn create_company(
        &self,
        tenant: Tenant,
        state: Data<&AppState>,
        body: JsonBody<CompanyInput>,
    ) -> Result<CreatedCompany, CreateErrors> {
        let company = companies::create(&state.db, tenant, body.0.validate()?).await?;
        let location = format!("/companies/{}", company.id);
        Ok(CreatedCompany::Created(Json(company.into()), location))
    }

    /// Get a company
    #[oai(
        path = "/companies/:companyId",
        method = "get",
        operation_id = "getCompany"
    )]
    async fn get_company(
        &self,
        tenant: Tenant,
        state: Data<&AppState>,
        /// The company's id.
        #[oai(name = "companyId")]
        company_id: Path<Uuid>,
    ) -> Result<CompanyFound, ReadErrors> {
        let company = companies::find(&state.db, tenant, company_id.0).await?;
        Ok(CompanyFound::Ok(Json(company.into())))
    }

    /// Replace a company
    ///
    /// Replaces the company's name and description; a description left out
    /// is cleared.
    #[oai(
        path = "/companies/:companyId",
        method = "put",
        operation_id = "replaceCompany"
    )]
    async fn replace_company(
        &self,
        tenant: Tenant,
        state: Data<&AppState>,
        /// The company's id.
        #[oai(name = "companyId")]
        company_id: Path<Uuid>,
        body: JsonBody<CompanyInput>,
    ) -> Result<CompanyFound, ReplaceErrors> {
        let company =
            companies::replace(&state.db, tenant, company_id.0, body.0.validate()?).await?;
        Ok(CompanyFound::Ok(Json(company.into())))
    }

    /// Delete a company
    ///
    /// Deletes the company and everything that belongs to it.
    #[oai(
        path = "/companies/:companyId",
        method = "delete",
        operation_id = "deleteCompany"
    )]
    async fn delete_company(
        &self,
        tenant: Tenant,
        state: Data<&AppState>,
        /// The company's id.
        #[oai(name = "companyId")]
        company_id: Path<Uuid>,
    ) -> Result<DeletedCompany, ReadErrors> {
        companies::delete(&state.db, tenant, company_id.0).await?;
        Ok(DeletedCompany::Deleted)
    }
}
