//! Lists (CONTRACT §4.8): the envelope, the common parameters, and a [`futures::Stream`] that
//! walks every page with `starting_after`.

use std::collections::VecDeque;

use futures::stream::{self, BoxStream, StreamExt};
use serde::de::DeserializeOwned;
use serde::Deserialize;

use crate::client::Client;
use crate::error::Error;

/// One page of a collection, newest first.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct List<T> {
    pub data: Vec<T>,
    /// Whether older objects follow this page.
    pub has_more: bool,
    /// The collection's path (`/v2/payments`).
    #[serde(default)]
    pub url: String,
}

/// A `created` filter: Unix seconds, each bound optional (`created[gte]=…`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CreatedFilter {
    pub gt: Option<i64>,
    pub gte: Option<i64>,
    pub lt: Option<i64>,
    pub lte: Option<i64>,
}

/// Objects that have an id (the pagination cursor).
pub trait HasId {
    fn id(&self) -> &str;
}

/// List parameters: the query they make, and the cursor a stream advances.
pub trait ListParams: Clone + Send + Sync + 'static {
    /// The query string pairs.
    fn to_query(&self) -> Vec<(String, String)>;
    /// Sets `starting_after` (and clears `ending_before`) for the next page of a stream.
    fn set_cursor(&mut self, starting_after: String);
    /// Drops `ending_before` (streams walk towards older objects only).
    fn clear_ending_before(&mut self);
}

/// Adds the pairs every list takes.
pub(crate) fn common_query(
    out: &mut Vec<(String, String)>,
    limit: Option<u32>,
    starting_after: &Option<String>,
    ending_before: &Option<String>,
    created: &Option<CreatedFilter>,
) {
    if let Some(l) = limit {
        out.push(("limit".into(), l.to_string()));
    }
    if let Some(s) = starting_after {
        out.push(("starting_after".into(), s.clone()));
    }
    if let Some(e) = ending_before {
        out.push(("ending_before".into(), e.clone()));
    }
    if let Some(c) = created {
        for (name, v) in [("gt", c.gt), ("gte", c.gte), ("lt", c.lt), ("lte", c.lte)] {
            if let Some(v) = v {
                out.push((format!("created[{name}]"), v.to_string()));
            }
        }
    }
}

/// Declares a list-parameters struct with the common fields plus its own filters.
macro_rules! list_params {
    (
        $(#[$meta:meta])*
        $name:ident { $( $(#[$fmeta:meta])* $field:ident : $ty:ty => $wire:literal ),* $(,)? }
    ) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Default, PartialEq)]
        pub struct $name {
            /// Page size, 1–100 (server default 10).
            pub limit: Option<u32>,
            /// Objects older than this id.
            pub starting_after: Option<String>,
            /// Objects newer than this id.
            pub ending_before: Option<String>,
            /// Creation-time bounds.
            pub created: Option<$crate::list::CreatedFilter>,
            $( $(#[$fmeta])* pub $field: Option<$ty>, )*
        }

        impl $crate::list::ListParams for $name {
            fn to_query(&self) -> Vec<(String, String)> {
                let mut out = Vec::new();
                $crate::list::common_query(
                    &mut out,
                    self.limit,
                    &self.starting_after,
                    &self.ending_before,
                    &self.created,
                );
                $(
                    if let Some(v) = &self.$field {
                        out.push(($wire.to_string(), v.to_string()));
                    }
                )*
                out
            }

            fn set_cursor(&mut self, starting_after: String) {
                self.starting_after = Some(starting_after);
                self.ending_before = None;
            }

            fn clear_ending_before(&mut self) {
                self.ending_before = None;
            }
        }
    };
}
pub(crate) use list_params;

impl Client {
    /// One page of the collection at `path`.
    pub(crate) async fn list_page<T: DeserializeOwned, P: ListParams>(
        &self,
        path: &str,
        params: &P,
    ) -> Result<List<T>, Error> {
        self.get(path, &params.to_query()).await
    }

    /// Every object of the collection at `path` from `params`' cursor (or the newest) to the
    /// oldest, fetching pages of `params.limit` as it goes. An error ends the stream after it
    /// is yielded.
    pub(crate) fn list_stream<T, P>(
        &self,
        path: &'static str,
        params: P,
    ) -> BoxStream<'static, Result<T, Error>>
    where
        T: DeserializeOwned + HasId + Send + 'static,
        P: ListParams,
    {
        struct State<T, P> {
            client: Client,
            params: P,
            buffer: VecDeque<T>,
            more: bool,
        }
        let mut params = params;
        // A stream walks towards older objects only.
        params.clear_ending_before();
        let initial = State {
            client: self.clone(),
            params,
            buffer: VecDeque::new(),
            more: true,
        };
        stream::unfold(Some(initial), move |state| async move {
            let mut state = state?;
            loop {
                if let Some(item) = state.buffer.pop_front() {
                    return Some((Ok(item), Some(state)));
                }
                if !state.more {
                    return None;
                }
                match state.client.list_page::<T, _>(path, &state.params).await {
                    Ok(page) => {
                        state.more = page.has_more && !page.data.is_empty();
                        if let Some(last) = page.data.last() {
                            state.params.set_cursor(last.id().to_string());
                        }
                        state.buffer.extend(page.data);
                    }
                    Err(e) => return Some((Err(e), None)),
                }
            }
        })
        .boxed()
    }
}
