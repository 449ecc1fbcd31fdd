//! How any resource is written, kept and shown: THE write path.
//!
//! - [`document`]: the [`document::Document`] trait each stored type implements beside its
//!   definition, and the codec between a value and its stored text.
//! - [`batch`]: [`batch::Batch`], the writes of one use case; [`commit`]: where a batch
//!   reaches the store, with its idempotency record or as background work.
//! - [`idempotency`]: idempotency keys and claims; [`kept`]: what a key keeps (an answer, a
//!   payment's marker, a checkpoint) and how a replay opens it.
//! - [`page_token`]: the one-time tokens of the hosted pages' forms, each one try.
//! - [`render`]: the seam from stored form to wire shape.

pub mod batch;
pub mod commit;
pub mod document;
pub mod fingerprint;
pub mod hold;
pub mod idempotency;
pub mod kept;
pub mod page_token;
pub mod render;
