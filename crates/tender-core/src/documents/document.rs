//! What every stored resource is to the store: a [`Document`] names its collection, its id,
//! when it was created and the values the store indexes it by, so that how it is written is
//! said once, beside the type, and every write goes through [`super::batch::Batch`].
//!
//! Also the one codec between a domain value and its stored text ([`to_body`], [`from_body`])
//! and the JSON value events carry ([`to_value`]).
//!
//! Depends on the storage port's [`Collection`] and [`IndexValues`] only.

use serde::de::DeserializeOwned;
use serde::Serialize;

use crate::collection::{Collection, IndexValues};
use crate::error::{CoreError, CoreResult, StoreError};

/// A resource kept in the document store.
pub trait Document: Serialize + DeserializeOwned {
    /// Where documents of this type are kept.
    const COLLECTION: Collection;

    fn id(&self) -> &str;

    /// Unix seconds; lists are ordered by it.
    fn created(&self) -> i64;

    /// The values lists filter on; none unless the type says so.
    fn index(&self) -> IndexValues {
        IndexValues::default()
    }
}

/// A value as the JSON an event carries (its stored form).
pub(crate) fn to_value<T: Serialize>(value: &T) -> CoreResult<serde_json::Value> {
    serde_json::to_value(value).map_err(|e| CoreError::internal("serialise a document", e))
}

/// A value as the text the store keeps.
pub(crate) fn to_body<T: Serialize>(value: &T) -> CoreResult<String> {
    serde_json::to_string(value).map_err(|e| CoreError::internal("serialise a document", e))
}

/// A stored document read back; a body that does not parse is a corrupt store, naming `id`.
pub(crate) fn from_body<T: DeserializeOwned>(id: &str, body: &str) -> CoreResult<T> {
    serde_json::from_str(body).map_err(|e| StoreError::Corrupt(format!("{id}: {e}")).into())
}
