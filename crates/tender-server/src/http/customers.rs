//! `/v2/customers`: create, retrieve, update, delete, list.

use axum::extract::{Path, RawQuery, State};
use tender_core::customers::customer::Address;
use tender_core::customers::service::CustomerFields;
use tender_core::error::CoreError;
use tender_core::ids::CustomerId;
use tender_core::services::ListParams;
use tender_core::store::{Collection, Field};

use super::params::{Params, Query};
use super::pipeline::{Ctx, JsonBody};
use super::{list_response, ok, raw_response, ApiResult};
use crate::state::AppState;

const FIELDS: &[&str] = &[
    "email",
    "name",
    "phone",
    "address",
    "description",
    "metadata",
];

fn parse_address(p: &mut Params) -> Result<Option<Option<Address>>, CoreError> {
    if !p.has("address") {
        return Ok(None);
    }
    let Some(mut a) = p.object(
        "address",
        &["line1", "line2", "city", "state", "postal_code", "country"],
    )?
    else {
        return Ok(Some(None));
    };
    Ok(Some(Some(Address {
        line1: a.string("line1")?,
        line2: a.string("line2")?,
        city: a.string("city")?,
        state: a.string("state")?,
        postal_code: a.string("postal_code")?,
        country: a.string("country")?,
    })))
}

/// `POST /customers` and `POST /customers/{id}`: the body → the fields (no store involved).
pub fn parse_fields(body: serde_json::Value) -> Result<CustomerFields, CoreError> {
    let mut p = Params::body(body, FIELDS)?;
    fields_from(&mut p)
}

/// `POST /customers`: the updatable fields and the test clock.
pub fn parse_create(body: serde_json::Value) -> Result<CustomerFields, CoreError> {
    let mut allowed = FIELDS.to_vec();
    allowed.push("test_clock");
    let mut p = Params::body(body, &allowed)?;
    let test_clock = p.string("test_clock")?;
    Ok(CustomerFields {
        test_clock,
        ..fields_from(&mut p)?
    })
}

fn fields_from(p: &mut Params) -> Result<CustomerFields, CoreError> {
    Ok(CustomerFields {
        email: p.clearable_string("email")?,
        name: p.clearable_string("name")?,
        phone: p.clearable_string("phone")?,
        address: parse_address(p)?,
        description: p.clearable_string("description")?,
        metadata: p.metadata()?,
        test_clock: None,
    })
}

pub(crate) async fn create_customer(
    State(state): State<AppState>,
    Ctx(ctx): Ctx,
    JsonBody(body): JsonBody,
) -> ApiResult {
    let fields = parse_create(body)?;
    ok(&state.services.create_customer(&ctx, fields).await?)
}

pub(crate) async fn retrieve_customer(
    State(state): State<AppState>,
    Ctx(ctx): Ctx,
    Path(id): Path<String>,
) -> ApiResult {
    let id = CustomerId::found(id)?;
    let body = state.services.retrieve(ctx.scope(), &id).await?;
    Ok(raw_response(body))
}

pub(crate) async fn update_customer(
    State(state): State<AppState>,
    Ctx(ctx): Ctx,
    Path(id): Path<String>,
    JsonBody(body): JsonBody,
) -> ApiResult {
    let id = CustomerId::found(id)?;
    let fields = parse_fields(body)?;
    ok(&state.services.update_customer(&ctx, &id, fields).await?)
}

/// `DELETE`: a body, if any, must be empty (`{}`) like every other unknown parameter.
pub fn parse_delete(body: serde_json::Value) -> Result<(), CoreError> {
    Params::body(body, &[]).map(drop)
}

pub(crate) async fn delete_customer(
    State(state): State<AppState>,
    Ctx(ctx): Ctx,
    Path(id): Path<String>,
    JsonBody(body): JsonBody,
) -> ApiResult {
    let id = CustomerId::found(id)?;
    parse_delete(body)?;
    ok(&state.services.delete_customer(&ctx, &id).await?)
}

/// `GET /customers`: the query string → page and filters.
pub fn parse_list(query: Option<&str>) -> Result<(ListParams, Vec<(Field, String)>), CoreError> {
    let q = Query::parse(query, &["email"])?;
    let params = q.list_params()?;
    let filters = q
        .get("email")
        .map(tender_core::customers::service::email_filter)
        .into_iter()
        .collect();
    Ok((params, filters))
}

pub(crate) async fn list_customers(
    State(state): State<AppState>,
    Ctx(ctx): Ctx,
    RawQuery(q): RawQuery,
) -> ApiResult {
    let (params, filters) = parse_list(q.as_deref())?;
    let page = state
        .services
        .list_raw(ctx.scope(), Collection::Customers, &params, filters)
        .await?;
    Ok(list_response("/v2/customers", page))
}
