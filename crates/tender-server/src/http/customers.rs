//! `/v2/customers`: create, retrieve, update, delete, list.

use tender_core::customers::customer::Address;
use tender_core::customers::service::CustomerFields;
use tender_core::error::CoreError;
use tender_core::ids::CustomerId;
use tender_core::services::RequestContext;

use super::params::{Listing, Params, Query};
use super::{ok, ApiResult};
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

/// `POST /customers/{id}`: the body → the fields (no store involved).
pub fn parse_fields(body: serde_json::Value) -> Result<CustomerFields, CoreError> {
    let mut allowed = FIELDS.to_vec();
    allowed.push("invoice_settings");
    let mut p = Params::body(body, &allowed)?;
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

pub(crate) fn fields_from(p: &mut Params) -> Result<CustomerFields, CoreError> {
    Ok(CustomerFields {
        email: p.clearable_string("email")?,
        name: p.clearable_string("name")?,
        phone: p.clearable_string("phone")?,
        address: parse_address(p)?,
        description: p.clearable_string("description")?,
        metadata: p.metadata()?,
        test_clock: None,
        default_payment_method: match p.object("invoice_settings", &["default_payment_method"])? {
            Some(mut settings) => settings.clearable_string("default_payment_method")?,
            None => None,
        },
    })
}

pub(crate) async fn create_customer(
    state: AppState,
    ctx: RequestContext,
    fields: CustomerFields,
) -> ApiResult {
    ok(&state
        .services
        .customers()
        .create_customer(&ctx, fields)
        .await?)
}

pub(crate) async fn update_customer(
    state: AppState,
    ctx: RequestContext,
    (id, fields): (CustomerId, CustomerFields),
) -> ApiResult {
    ok(&state
        .services
        .customers()
        .update_customer(&ctx, &id, fields)
        .await?)
}

/// `DELETE`: a body, if any, must be empty (`{}`) like every other unknown parameter.
pub(crate) async fn delete_customer(
    state: AppState,
    ctx: RequestContext,
    id: CustomerId,
) -> ApiResult {
    ok(&state
        .services
        .customers()
        .delete_customer(&ctx, &id)
        .await?)
}

/// `GET /customers`: the query string → page and filters.
pub fn parse_list(query: Option<&str>) -> Result<Listing, CoreError> {
    let q = Query::parse(query, &["email"])?;
    let params = q.list_params()?;
    let filters = q
        .get("email")
        .map(tender_core::customers::service::email_filter)
        .into_iter()
        .collect();
    Ok((params, filters))
}
