//! What one operation of the route table is: a **parser** (the request's `{id}`, query string
//! and JSON body → a typed command, or the 4xx; no store involved) and a **handler** (the
//! command → a service call → the answer). [`endpoint`] joins the two, so the router and the
//! request decoder of the fuzz targets ([`super::routes::decode`]) run the very same parser:
//! no operation is listed a second time anywhere.
//!
//! Also here: the handlers every resource shares ([`retrieve`], [`list`]), and [`Input`], what
//! a parser reads. Depends on the pipeline's extractors ([`Ctx`], [`JsonBody`]) and on the
//! core's ids; never on a resource module.

use std::any::Any;
use std::future::Future;
use std::sync::Arc;

use axum::extract::{FromRequestParts, OriginalUri, RawPathParams, State};
use axum::http::request::Parts;
use axum::routing::{on, MethodFilter, MethodRouter};
use serde_json::Value;
use tender_core::error::CoreError;
use tender_core::ids::{Id, Kind};
use tender_core::services::{ListParams, RequestContext};
use tender_core::store::Field;

use super::error::ApiError;
use super::params::{Listing, Params};
use super::pipeline::{Ctx, JsonBody};
use super::{list_response, raw_response, ApiResult};
use crate::state::AppState;

/// What a request carries to its operation's parser.
#[derive(Debug, Clone)]
pub struct Input {
    /// The request's path (`/v2/payments`), the `url` of a list.
    pub path: String,
    /// The `{id}` segment; empty for a path without one.
    pub id: String,
    pub query: Option<String>,
    /// The JSON body (`{}` when there is none, and for a `GET`).
    pub body: Value,
}

impl Input {
    /// The `{id}` segment as an id of kind `K`, or 404 "No such …".
    pub fn id<K: Kind>(&self) -> Result<Id<K>, CoreError> {
        Id::found(self.id.clone())
    }

    pub fn query(&self) -> Option<&str> {
        self.query.as_deref()
    }

    /// A body that must be empty (a delete, a cancel): any parameter is unknown.
    pub fn no_body(self) -> Result<(), CoreError> {
        Params::body(self.body, &[]).map(drop)
    }

    /// A list request on this path, its query string read by `parse`.
    pub fn list(
        self,
        parse: fn(Option<&str>) -> Result<Listing, CoreError>,
    ) -> Result<ListRequest, CoreError> {
        let (params, filters) = parse(self.query())?;
        Ok(ListRequest {
            params,
            filters,
            url: self.path,
        })
    }
}

impl<S: Send + Sync> FromRequestParts<S> for Input {
    type Rejection = ApiError;
    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, Self::Rejection> {
        // Every route has at most one parameter, `{id}`; the router has matched it non-empty.
        let id = match RawPathParams::from_request_parts(parts, state).await {
            Ok(params) => params
                .iter()
                .next()
                .map(|(_, v)| v.to_string())
                .unwrap_or_default(),
            Err(_) => String::new(),
        };
        let JsonBody(body) = JsonBody::from_request_parts(parts, state).await?;
        // The path as requested: inside `/v2` the router sees it without the prefix.
        let path = match parts.extensions.get::<OriginalUri>() {
            Some(OriginalUri(uri)) => uri.path().to_string(),
            None => parts.uri.path().to_string(),
        };
        Ok(Input {
            path,
            id,
            query: parts.uri.query().map(str::to_string),
            body,
        })
    }
}

/// Whether the path `segments` (split on `/`) fit the route `template`: `None` if not, else
/// the `{id}` segment if the template has one. Both route tables resolve requests with it.
pub fn match_template<'p>(template: &str, segments: &[&'p str]) -> Option<Option<&'p str>> {
    let template: Vec<&str> = template.split('/').collect();
    if template.len() != segments.len() {
        return None;
    }
    let mut id = None;
    let matches = template.iter().zip(segments).all(|(t, s)| match *t {
        "{id}" if !s.is_empty() => {
            id = Some(*s);
            true
        }
        t => t == *s,
    });
    matches.then_some(id)
}

/// A list request: page, filters, and the path it was made on.
#[derive(Debug, Clone)]
pub struct ListRequest {
    pub params: ListParams,
    pub filters: Vec<(Field, String)>,
    pub url: String,
}

/// A parsed command, as the decoder hands it out (the fuzz targets downcast it to check it).
pub type Decoded = Box<dyn Any + Send>;

/// One operation: its axum handler and its parser alone.
pub struct Op {
    pub router: MethodRouter<AppState>,
    pub decode: Arc<dyn Fn(Input) -> Result<Decoded, CoreError> + Send + Sync>,
}

/// The operation that answers `method` by parsing with `parse` and handing the command to
/// `run`.
pub fn endpoint<T, H, Fut>(
    method: MethodFilter,
    parse: fn(Input) -> Result<T, CoreError>,
    run: H,
) -> Op
where
    T: Send + 'static,
    H: Fn(AppState, RequestContext, T) -> Fut + Clone + Send + Sync + 'static,
    Fut: Future<Output = ApiResult> + Send + 'static,
{
    let handler = move |State(state): State<AppState>, Ctx(ctx): Ctx, input: Input| {
        let run = run.clone();
        async move { run(state, ctx, parse(input)?).await }
    };
    Op {
        router: on(method, handler),
        decode: Arc::new(move |input| parse(input).map(|t| Box::new(t) as Decoded)),
    }
}

/// An operation whose handler reads more than [`Input`] (the event stream reads
/// `Last-Event-ID`): `router` calls `parse` itself, first.
pub fn custom<T: Send + 'static>(
    router: MethodRouter<AppState>,
    parse: fn(Input) -> Result<T, CoreError>,
) -> Op {
    Op {
        router,
        decode: Arc::new(move |input| parse(input).map(|t| Box::new(t) as Decoded)),
    }
}

/// `GET /{resource}/{id}`: the object as stored, rendered.
pub async fn retrieve<K: Kind>(state: AppState, ctx: RequestContext, id: Id<K>) -> ApiResult {
    Ok(raw_response(
        state.services.retrieve(ctx.scope(), &id).await?,
    ))
}

/// `GET /{resource}`: a page of the collection of `K`, newest first.
pub async fn list<K: Kind>(state: AppState, ctx: RequestContext, req: ListRequest) -> ApiResult {
    let page = state
        .services
        .list_raw(ctx.scope(), K::COLLECTION, &req.params, req.filters)
        .await?;
    Ok(list_response(&req.url, page))
}
