//! `/v2/payment_links`: create, retrieve, update (`active`, `after_completion`, `metadata`),
//! list (by `active`), the line items. The parsers read a [`Params`] of either dialect, so
//! `/v1/payment_links` runs the same code ([`crate::stripe::payment_links`]).

use serde_json::{json, Value};
use tender_core::checkout::link::{
    AfterCompletion, AfterCompletionType, HostedConfirmation, PaymentLink, Redirect,
};
use tender_core::checkout::links::{CreatePaymentLink, UpdatePaymentLink};
use tender_core::checkout::session::MAX_LINE_ITEMS;
use tender_core::error::CoreError;
use tender_core::ids::PaymentLinkId;
use tender_core::services::RequestContext;
use tender_core::store::Field;

use super::params::{Listing, Params, Query};
use super::{ok, ApiResult};
use crate::state::AppState;

/// The parameters of `POST /payment_links`.
pub const CREATE_FIELDS: &[&str] = &[
    "line_items",
    "after_completion",
    "allow_promotion_codes",
    "metadata",
];
/// The parameters of `POST /payment_links/{id}`.
pub const UPDATE_FIELDS: &[&str] = &["active", "after_completion", "metadata"];

pub fn parse_create(body: Value) -> Result<CreatePaymentLink, CoreError> {
    parse_create_from(Params::body(body, CREATE_FIELDS)?)
}

/// [`parse_create`] from parameters of either dialect.
pub fn parse_create_from(mut p: Params) -> Result<CreatePaymentLink, CoreError> {
    let given = p.objects("line_items", &["price", "quantity"], MAX_LINE_ITEMS)?;
    let mut line_items = Vec::new();
    for mut line in p.required("line_items", given)? {
        let price = line.string("price")?;
        line_items.push((line.required("price", price)?, line.integer("quantity")?));
    }
    Ok(CreatePaymentLink {
        line_items,
        after_completion: parse_after_completion(&mut p)?,
        allow_promotion_codes: p.boolean("allow_promotion_codes")?.unwrap_or(false),
        metadata: p.metadata()?.unwrap_or_default(),
    })
}

pub fn parse_update(body: Value) -> Result<UpdatePaymentLink, CoreError> {
    parse_update_from(Params::body(body, UPDATE_FIELDS)?)
}

pub fn parse_update_from(mut p: Params) -> Result<UpdatePaymentLink, CoreError> {
    Ok(UpdatePaymentLink {
        active: p.boolean("active")?,
        after_completion: parse_after_completion(&mut p)?,
        metadata: p.metadata()?,
    })
}

/// `after_completion[type]` with its `redirect[url]` or `hosted_confirmation[custom_message]`.
fn parse_after_completion(p: &mut Params) -> Result<Option<AfterCompletion>, CoreError> {
    let Some(mut a) = p.object(
        "after_completion",
        &["type", "redirect", "hosted_confirmation"],
    )?
    else {
        return Ok(None);
    };
    let kind = a.string("type")?;
    let kind = match a.required("type", kind)?.as_str() {
        "redirect" => AfterCompletionType::Redirect,
        "hosted_confirmation" => AfterCompletionType::HostedConfirmation,
        other => {
            return Err(CoreError::invalid(
                a.name("type"),
                "parameter_invalid",
                format!(
                "after_completion[type] must be redirect or hosted_confirmation, not {other:?}."
            ),
            ))
        }
    };
    let redirect = match a.object("redirect", &["url"])? {
        Some(mut r) => {
            let url = r.string("url")?;
            Some(Redirect {
                url: r.required("url", url)?,
            })
        }
        None => None,
    };
    let hosted_confirmation = match a.object("hosted_confirmation", &["custom_message"])? {
        Some(mut h) => Some(HostedConfirmation {
            custom_message: h.string("custom_message")?,
        }),
        None => (kind == AfterCompletionType::HostedConfirmation).then_some(HostedConfirmation {
            custom_message: None,
        }),
    };
    Ok(Some(AfterCompletion {
        kind,
        redirect,
        hosted_confirmation,
    }))
}

pub(crate) async fn create_payment_link(
    state: AppState,
    ctx: RequestContext,
    cmd: CreatePaymentLink,
) -> ApiResult {
    ok(&state
        .services
        .checkout()
        .create_payment_link(&ctx, cmd)
        .await?)
}

pub(crate) async fn update_payment_link(
    state: AppState,
    ctx: RequestContext,
    (id, cmd): (PaymentLinkId, UpdatePaymentLink),
) -> ApiResult {
    ok(&state
        .services
        .checkout()
        .update_payment_link(&ctx, &id, cmd)
        .await?)
}

/// `GET /payment_links/{id}/line_items`: the link's lines, one page.
pub(crate) async fn list_line_items(
    state: AppState,
    ctx: RequestContext,
    id: PaymentLinkId,
) -> ApiResult {
    let raw = state.services.retrieve(ctx.scope(), &id).await?;
    let link: PaymentLink =
        serde_json::from_str(&raw).map_err(|e| CoreError::internal("read a payment link", e))?;
    ok(&json!({
        "object": "list",
        "url": format!("/v2/payment_links/{id}/line_items"),
        "has_more": false,
        "data": link.line_items.data,
    }))
}

/// `GET /payment_links`: the query string → page and the `active` filter.
pub fn parse_list(query: Option<&str>) -> Result<Listing, CoreError> {
    let q = Query::parse(query, &["active"])?;
    let params = q.list_params()?;
    let mut filters = Vec::new();
    match q.get("active") {
        None => {}
        Some(v @ ("true" | "false")) => filters.push((Field::Active, v.to_string())),
        Some(_) => {
            return Err(CoreError::invalid(
                "active",
                "parameter_invalid",
                "active must be true or false.",
            ))
        }
    }
    Ok((params, filters))
}
