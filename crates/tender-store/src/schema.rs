//! Table and column names per collection, shared by both backends.
//!
//! Names here are static strings chosen by the code, never by input, so building SQL text from
//! them is safe; every value is bound as a parameter.

use tender_core::store::{Collection, Field, IndexValues};

pub fn table(c: Collection) -> &'static str {
    c.name()
}

pub fn column(f: Field) -> &'static str {
    match f {
        Field::Customer => "customer",
        Field::Status => "status",
        Field::Email => "email",
        Field::Payment => "payment",
        Field::Type => "type",
    }
}

/// The indexed columns of `c` with their values from `index`, in a fixed order.
pub fn index_columns(c: Collection, index: &IndexValues) -> Vec<(&'static str, Option<String>)> {
    let mut cols: Vec<(&'static str, Option<String>)> = c
        .filter_fields()
        .iter()
        .map(|f| (column(*f), index.get(*f).map(str::to_string)))
        .collect();
    if c == Collection::WebhookEndpoints {
        cols.push(("enabled_events", index.enabled_events.clone()));
    }
    cols
}
