//! What every `/v1` parser shares: the parameters of a request as [`Params`] in form mode,
//! ids in Stripe's spelling read as Tender's, and Stripe's list parameters (`limit` 1–100,
//! default 10; `starting_after`, `ending_before`; `created` or `created[gt|gte|lt|lte]`).

use tender_core::error::CoreError;
use tender_core::ids::{Id, Kind};
use tender_core::services::ListParams;
use tender_core::store::{CreatedRange, Field};
use tender_core::stripe::ids;

use crate::http::operation::{Input, ListRequest};
use crate::http::params::Params;

/// The list parameters every list takes.
pub const LIST: &[&str] = &["limit", "starting_after", "ending_before", "created"];

/// The parameters of `i` (query string or body, decoded by the gate), holding only `allowed`.
pub fn form(i: &mut Input, allowed: &[&str]) -> Result<Params, CoreError> {
    Params::form(std::mem::take(&mut i.body), allowed)
}

/// The parameters of a list: `filters` and [`LIST`].
pub fn list_form(i: &mut Input, filters: &[&str]) -> Result<Params, CoreError> {
    let allowed: Vec<&str> = LIST.iter().chain(filters).copied().collect();
    form(i, &allowed)
}

/// The `{id}` of the path, in Stripe's spelling, as an id of kind `K` (or 404).
pub fn path_id<K: Kind>(i: &Input) -> Result<Id<K>, CoreError> {
    Id::found(ids::tender(&i.id))
}

/// A referenced id (`customer`, `payment_intent`) as Tender's, or 400 naming `param`.
pub fn referenced<K: Kind>(raw: String, param: &'static str) -> Result<Id<K>, CoreError> {
    Id::referenced(ids::tender(&raw), param)
}

/// The list request `i` makes, its page read from `p` and with `filters`.
pub fn list_request(
    i: &Input,
    p: &mut Params,
    filters: Vec<(Field, String)>,
) -> Result<ListRequest, CoreError> {
    Ok(ListRequest {
        params: list_params(p)?,
        filters,
        url: i.path.clone(),
    })
}

fn list_params(p: &mut Params) -> Result<ListParams, CoreError> {
    let limit = match p.integer("limit")? {
        None => 10,
        Some(n) if (1..=100).contains(&n) => n as u32,
        Some(_) => {
            return Err(CoreError::invalid(
                "limit",
                "parameter_invalid_integer",
                "limit must be between 1 and 100.",
            ))
        }
    };
    let cursor = |p: &mut Params, key: &str| -> Result<Option<String>, CoreError> {
        Ok(p.string(key)?.map(|id| ids::tender(&id)))
    };
    Ok(ListParams {
        limit,
        starting_after: cursor(p, "starting_after")?,
        ending_before: cursor(p, "ending_before")?,
        created: created(p)?,
        available_on: CreatedRange::default(),
    })
}

/// `created=T` (exactly) or `created[gt|gte|lt|lte]=T`.
fn created(p: &mut Params) -> Result<CreatedRange, CoreError> {
    if matches!(p.peek("created"), Some(serde_json::Value::String(_))) {
        let at = p.integer("created")?;
        return Ok(CreatedRange {
            gte: at,
            lte: at,
            ..Default::default()
        });
    }
    let Some(mut range) = p.object("created", &["gt", "gte", "lt", "lte"])? else {
        return Ok(CreatedRange::default());
    };
    Ok(CreatedRange {
        gt: range.integer("gt")?,
        gte: range.integer("gte")?,
        lt: range.integer("lt")?,
        lte: range.integer("lte")?,
    })
}
