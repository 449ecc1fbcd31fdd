//! How any resource is kept and shown: idempotency keys and their kept answers, and the
//! render seam from stored form to wire shape.

pub mod idempotency;
pub mod render;
