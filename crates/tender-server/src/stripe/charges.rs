//! `/v1/charges`: each payment's one charge (`ch_X` of `pay_X`), read-only; a retrieve is
//! the payment's (`payment_intents::parse_id` reads `ch_X`), shown as a charge by the gate.

use tender_core::error::CoreError;
use tender_core::ids::{kind, PaymentId};
use tender_core::services::{RawPage, RequestContext};
use tender_core::store::Field;

use super::params::{list_form, list_request, referenced};
use crate::http::operation::{Input, ListRequest};
use crate::http::{list_response, ApiResult};
use crate::state::AppState;

/// `GET /v1/charges`.
pub const LIST: &[&str] = &["customer", "payment_intent"];

/// A list of charges: of one PaymentIntent, or a page of all (of a customer).
#[derive(Debug)]
pub enum ChargeList {
    OfIntent(PaymentId, String),
    Page(ListRequest),
}

pub fn parse_list(mut i: Input) -> Result<ChargeList, CoreError> {
    let mut p = list_form(&mut i, LIST)?;
    let customer = p
        .string("customer")?
        .map(|c| referenced::<kind::Customer>(c, "customer"))
        .transpose()?;
    let intent = p
        .string("payment_intent")?
        .map(|c| referenced::<kind::Payment>(c, "payment_intent"))
        .transpose()?;
    let filters = customer
        .map(|c| (Field::Customer, c.to_string()))
        .into_iter()
        .collect();
    let request = list_request(&i, &mut p, filters)?;
    Ok(match intent {
        Some(id) => ChargeList::OfIntent(id, request.url),
        None => ChargeList::Page(request),
    })
}

pub(crate) async fn list(state: AppState, ctx: RequestContext, req: ChargeList) -> ApiResult {
    match req {
        ChargeList::Page(req) => {
            crate::http::operation::list::<kind::Payment>(state, ctx, req).await
        }
        ChargeList::OfIntent(id, url) => {
            let payment = state.services.retrieve(ctx.scope(), &id).await?;
            Ok(list_response(
                &url,
                RawPage {
                    data: vec![payment],
                    has_more: false,
                },
            ))
        }
    }
}
