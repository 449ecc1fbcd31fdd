//! [`Services`]: what the use cases run on (the store, the clocks, the acquirer, the connector
//! factory, the configuration), the [`RequestContext`] a handler passes in, and the read helpers
//! every resource shares (load, retrieve, list, paging, retry on conflict).
//!
//! The use cases themselves live in each resource's folder (`payments/`, `refunds/`,
//! `billing/`…) as methods of that resource's handle ([`resource_handle!`]): `Payments`,
//! `Refunds`, `Billing`…, reached as `services.payments()`. A handle is `Services` seen as
//! one resource — it derefs to `Services` for the store, the clocks and the write path — so
//! `Services` itself keeps only what every resource shares. Each use case reads through the
//! [`Store`] and writes ONE
//! batch (`documents::batch::Batch`, committed by `documents::commit`): the change, its events
//! (with their webhook outbox rows, fanned out by the store) and the request's idempotency
//! record.
//!
//! Depends on the domain and the storage port; knows nothing of HTTP or SQL.

use std::sync::Arc;

use crate::auth::{Principal, Scope};
use crate::clock::Clock;
use crate::documents::document::from_body;
use crate::error::{CoreError, CoreResult, StoreError};
use crate::ids::{self, IdKind};
use crate::payments::acquirer::Acquirer;
use crate::store::{
    Collection, CreatedRange, Cursor, Field, ListQuery, Page, Store, StoredResponse,
};

/// Declares a resource's handle: `$name<'a>`, [`Services`] seen as that resource, whose
/// `impl` blocks in the resource's folder hold its use cases, and `Services::$accessor()`,
/// which hands it out. The handle derefs to `Services`, so a use case reads `self.store`,
/// `self.now()` and `self.batch()` as before, and reaches another resource as
/// `self.refunds()`.
macro_rules! resource_handle {
    ($(#[$doc:meta])* $name:ident, $accessor:ident) => {
        $(#[$doc])*
        #[derive(Clone, Copy)]
        pub struct $name<'a>(&'a $crate::services::Services);

        impl $crate::services::Services {
            #[doc = concat!("This resource's use cases ([`", stringify!($name), "`]).")]
            pub fn $accessor(&self) -> $name<'_> {
                $name(self)
            }
        }

        impl std::ops::Deref for $name<'_> {
            type Target = $crate::services::Services;

            fn deref(&self) -> &$crate::services::Services {
                self.0
            }
        }
    };
}
pub(crate) use resource_handle;

/// How a response is rendered to bytes, supplied by the HTTP layer (which owns the wire error
/// table) so that the bytes kept under an idempotency key are exactly the bytes first sent.
pub trait ResponseEncoder: Send + Sync + 'static {
    fn encode(
        &self,
        result: Result<&serde_json::Value, &CoreError>,
        request_id: &str,
    ) -> StoredResponse;
}

/// Settings the use cases need.
#[derive(Clone)]
pub struct ServiceConfig {
    /// Base of `receipt_url`, without a trailing slash.
    pub receipt_base: String,
    /// Secret from which per-account card fingerprint keys are derived (the vault key).
    pub vault_key: [u8; 32],
    /// Multiplies the webhook retry schedule (tests shrink it).
    pub webhook_retry_scale: f64,
    /// Seconds before a bank transfer (or its refund) settles.
    pub bank_settlement_delay: i64,
    /// Seconds before the first sync of a connector's payment or refund left unknown.
    pub connector_sync_delay: i64,
    /// Test-mode webhooks may reach private ranges (`--allow-private-webhook-targets`).
    pub allow_private_webhook_targets: bool,
    /// A merchant's key may set a connector's `raw_card_data` and `api_base`
    /// (`--allow-connector-settings-via-api`); otherwise only the operator's CLI may.
    pub connector_settings_via_api: bool,
    /// Seconds before a charge's money is available (`--balance-available-delay`); `None`:
    /// two days in live mode, a minute in test mode.
    pub balance_available_delay: Option<i64>,
    /// When a failed subscription invoice is tried again (CONTRACT §10).
    pub dunning: crate::billing::invoice::Dunning,
    /// Seconds a claimed background task stays its runner's (`--task-lease-secs`): a task
    /// whose runner died runs again this long after it was claimed.
    pub task_lease_secs: i64,
}

/// The use cases and what they run on. Cheap to clone.
#[derive(Clone)]
pub struct Services {
    pub store: Arc<dyn Store>,
    /// The time the use cases see: the wall clock, or a test clock's time while working for
    /// that clock's customers ([`Services::at_clock`]).
    pub clock: Arc<dyn Clock>,
    /// The wall clock, whatever `clock` is: idempotency records and leases live in real time.
    pub wall: Arc<dyn Clock>,
    pub acquirer: Arc<dyn Acquirer>,
    /// Builds the connectors accounts configure (CONTRACT §8).
    pub connectors: Arc<dyn crate::connectors::connector::ConnectorFactory>,
    pub encoder: Arc<dyn ResponseEncoder>,
    pub resolver: Arc<dyn crate::webhooks::address::HostResolver>,
    pub config: Arc<ServiceConfig>,
    /// Prices read recently ([`crate::balance::fees::PricingCache`]).
    pub pricing_cache: Arc<crate::balance::fees::PricingCache>,
    /// Declines on the public card forms, for the card-testing guard ([`crate::risk`]).
    pub velocity: Arc<crate::risk::velocity::Velocity>,
    /// Who on this node is taking an invoice number, per account ([`crate::billing::numbering`]).
    pub numbering: Arc<crate::keyed_locks::KeyedLocks>,
}

pub use crate::documents::hold::IdempotencyHold;

/// Who is asking and under which request id / idempotency key.
#[derive(Debug, Clone)]
pub struct RequestContext {
    pub principal: Principal,
    pub request_id: String,
    pub idempotency: Option<Arc<IdempotencyHold>>,
    /// The address of a browser calling with a publishable key (the card-testing guard counts
    /// its declines); `None` for a server's calls and for work Tender does itself.
    pub client: Option<String>,
}

impl RequestContext {
    pub fn scope(&self) -> &Scope {
        &self.principal.scope
    }
}

/// A page of rendered JSON documents, ready to be spliced into a list envelope.
#[derive(Debug, Clone, PartialEq)]
pub struct RawPage {
    pub data: Vec<String>,
    pub has_more: bool,
}

/// A list request as the use cases take it.
#[derive(Debug, Clone, Default)]
pub struct ListParams {
    pub limit: u32,
    pub starting_after: Option<String>,
    pub ending_before: Option<String>,
    pub created: CreatedRange,
    /// Bounds on `available_on` (balance transactions only).
    pub available_on: CreatedRange,
}

/// How many times a use case is re-run when its batch loses an optimistic-concurrency race.
const CONFLICT_RETRIES: usize = 64;

impl Services {
    pub fn now(&self) -> i64 {
        self.clock.now()
    }

    /// The wall clock's time (idempotency records and leases), even in a test clock's time.
    pub fn wall_now(&self) -> i64 {
        self.wall.now()
    }

    /// These services in test clock `clock`'s time, frozen at `time`: what they record is
    /// dated then, and what they schedule is due in that clock's time (CONTRACT §10).
    pub(crate) fn at_clock(&self, clock: &str, time: i64) -> Services {
        Services {
            clock: Arc::new(crate::clock::ClockTime::new(clock, time)),
            ..self.clone()
        }
    }

    /// What the API shows of stored documents ([`crate::documents::render`]).
    pub fn renderer(&self) -> crate::documents::render::Renderer {
        crate::documents::render::Renderer::new(self.config.receipt_base.clone())
    }

    /// Stripe's shapes of Tender's objects (`/v1`, [`crate::stripe`]).
    pub fn stripe_shapes(&self) -> crate::stripe::Shapes {
        crate::stripe::Shapes::new(&self.config.vault_key)
    }

    /// A document as the JSON text the API shows ([`crate::documents::render`]), or 404 naming
    /// `kind`.
    pub async fn retrieve_raw(
        &self,
        scope: &Scope,
        collection: Collection,
        kind: &'static str,
        id: &str,
    ) -> CoreResult<String> {
        match self.store.find_record(scope, collection, id).await? {
            Some(record) => self
                .renderer()
                .document(collection, &record.id, record.body),
            None => Err(CoreError::NotFound {
                kind,
                id: id.to_string(),
            }),
        }
    }

    /// The document a typed id names, as the API shows it, or 404: its kind gives the
    /// collection and the name in the message.
    pub async fn retrieve<K: crate::ids::Kind>(
        &self,
        scope: &Scope,
        id: &crate::ids::Id<K>,
    ) -> CoreResult<String> {
        self.retrieve_raw(scope, K::COLLECTION, K::NAME, id).await
    }

    /// A typed document and its version, or 404 naming `kind`.
    pub(crate) async fn load<T: serde::de::DeserializeOwned>(
        &self,
        scope: &Scope,
        collection: Collection,
        kind: &'static str,
        id: &str,
    ) -> CoreResult<(T, i64)> {
        match self.store.find_record(scope, collection, id).await? {
            Some(record) => Ok((from_body(&record.id, &record.body)?, record.version)),
            None => Err(CoreError::NotFound {
                kind,
                id: id.to_string(),
            }),
        }
    }

    /// Every document of `collection` whose `field` is `value`, with versions, newest first,
    /// however many pages that takes.
    pub(crate) async fn matching<T: serde::de::DeserializeOwned>(
        &self,
        scope: &Scope,
        collection: Collection,
        field: Field,
        value: &str,
    ) -> CoreResult<Vec<(T, i64)>> {
        let mut out = Vec::new();
        let mut query = ListQuery {
            filters: vec![(field, value.to_string())],
            limit: 100,
            ..ListQuery::default()
        };
        loop {
            let page = self.store.list_records(scope, collection, &query).await?;
            for r in &page.records {
                out.push((from_body(&r.id, &r.body)?, r.version));
            }
            match (page.has_more, page.records.last()) {
                (true, Some(last)) => query.cursor = Cursor::StartingAfter(last.id.clone()),
                _ => return Ok(out),
            }
        }
    }

    /// The object a request body names in `param`: a `kind` id of this scope, else 400
    /// `resource_missing` naming `param` ("No such {name}"); an id of another kind is never
    /// looked up.
    pub(crate) async fn referenced(
        &self,
        scope: &Scope,
        (collection, kind, name): (Collection, IdKind, &str),
        id: &str,
        param: &str,
    ) -> CoreResult<crate::store::Record> {
        let found = match ids::looks_like(kind, id) {
            true => self.store.find_record(scope, collection, id).await?,
            false => None,
        };
        found.ok_or_else(|| CoreError::missing_reference(param, name, id))
    }

    /// A page of a collection as the API shows it, newest first.
    /// Every document of `collection` in the scope that matches `filters` and was created in
    /// `created`, newest first, page by page.
    pub(crate) async fn every_record(
        &self,
        scope: &Scope,
        collection: Collection,
        filters: Vec<(Field, String)>,
        created: crate::store::CreatedRange,
    ) -> CoreResult<Vec<crate::store::Record>> {
        let mut out = Vec::new();
        let mut cursor = Cursor::Newest;
        loop {
            let page = self
                .store
                .list_records(
                    scope,
                    collection,
                    &ListQuery {
                        filters: filters.clone(),
                        created,
                        available_on: Default::default(),
                        cursor: cursor.clone(),
                        limit: 100,
                    },
                )
                .await?;
            let last = page.records.last().map(|r| r.id.clone());
            out.extend(page.records);
            match (page.has_more, last) {
                (true, Some(id)) => cursor = Cursor::StartingAfter(id),
                _ => break,
            }
        }
        Ok(out)
    }

    pub async fn list_raw(
        &self,
        scope: &Scope,
        collection: Collection,
        params: &ListParams,
        filters: Vec<(Field, String)>,
    ) -> CoreResult<RawPage> {
        let cursor = match (&params.starting_after, &params.ending_before) {
            (Some(_), Some(_)) => {
                return Err(CoreError::invalid(
                    "ending_before",
                    "parameter_invalid",
                    "starting_after and ending_before cannot both be given.",
                ))
            }
            (Some(id), None) => Cursor::StartingAfter(id.clone()),
            (None, Some(id)) => Cursor::EndingBefore(id.clone()),
            (None, None) => Cursor::Newest,
        };
        let query = ListQuery {
            filters,
            created: params.created,
            available_on: params.available_on,
            cursor,
            limit: params.limit,
        };
        match self.store.list_records(scope, collection, &query).await {
            Ok(Page { records, has_more }) => {
                let renderer = self.renderer();
                Ok(RawPage {
                    data: records
                        .into_iter()
                        .map(|r| renderer.document(collection, &r.id, r.body))
                        .collect::<CoreResult<_>>()?,
                    has_more,
                })
            }
            Err(StoreError::CursorNotFound(id)) => {
                let param = match query.cursor {
                    Cursor::EndingBefore(_) => "ending_before",
                    _ => "starting_after",
                };
                Err(CoreError::invalid(
                    param,
                    "resource_missing",
                    format!("No such object: '{id}'"),
                ))
            }
            Err(e) => Err(e.into()),
        }
    }

    /// Runs `attempt` until its batch does not lose an optimistic-concurrency race.
    pub(crate) async fn retry_on_conflict<T, F, Fut>(&self, mut attempt: F) -> CoreResult<T>
    where
        F: FnMut() -> Fut,
        Fut: std::future::Future<Output = CoreResult<T>>,
    {
        let mut last = None;
        for _ in 0..CONFLICT_RETRIES {
            match attempt().await {
                Err(CoreError::Store(StoreError::Conflict(what))) => {
                    last = Some(what);
                    tokio::task::yield_now().await;
                }
                other => return other,
            }
        }
        Err(StoreError::Conflict(last.unwrap_or_default()).into())
    }
}
