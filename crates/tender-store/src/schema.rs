//! Table and column names per collection, shared by both backends.
//!
//! Names here are static strings chosen by the code, never by input, so building SQL text from
//! them is safe; every value is bound as a parameter.

use tender_core::store::{Collection, CreatedRange, Field, IndexValues, ListQuery};

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
        Field::Source => "source",
        Field::Payout => "payout",
        Field::Currency => "currency",
        Field::Active => "active",
        Field::Product => "product",
        Field::Subscription => "subscription",
        Field::Prices => "prices",
        Field::TestClock => "test_clock",
        Field::LookupKey => "lookup_key",
    }
}

/// The SQL comparison of a list filter on `f` with its bound value (`?` or `$n` follows).
pub fn comparison(f: Field) -> &'static str {
    if f.matches_within() {
        "LIKE"
    } else {
        "="
    }
}

/// A value of an indexed column.
#[derive(Debug, Clone, PartialEq)]
pub enum ColumnValue {
    Text(Option<String>),
    Int(Option<i64>),
}

/// The indexed columns of `c` with their values from `index`, in a fixed order.
pub fn index_columns(c: Collection, index: &IndexValues) -> Vec<(&'static str, ColumnValue)> {
    let mut cols: Vec<(&'static str, ColumnValue)> = c
        .filter_fields()
        .iter()
        .map(|f| {
            (
                column(*f),
                ColumnValue::Text(index.get(*f).map(str::to_string)),
            )
        })
        .collect();
    match c {
        Collection::WebhookEndpoints => cols.push((
            "enabled_events",
            ColumnValue::Text(index.enabled_events.clone()),
        )),
        Collection::BalanceTransactions => {
            cols.push(("available_on", ColumnValue::Int(index.available_on)))
        }
        _ => {}
    }
    cols
}

/// The range filters of a list on `c`: each column with its bounds.
pub fn ranges(c: Collection, q: &ListQuery) -> Vec<(&'static str, &'static str, i64)> {
    let mut out = Vec::new();
    let mut push = |col: &'static str, r: &CreatedRange| {
        for (op, bound) in [(">", r.gt), (">=", r.gte), ("<", r.lt), ("<=", r.lte)] {
            if let Some(b) = bound {
                out.push((col, op, b));
            }
        }
    };
    push("created", &q.created);
    if c == Collection::BalanceTransactions {
        push("available_on", &q.available_on);
    }
    out
}
