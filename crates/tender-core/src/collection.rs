//! What the store keeps documents in and indexes them by: the [`Collection`]s (one table
//! each), the [`Field`]s lists filter on and the [`IndexValues`] a document gives them.
//!
//! A value with no I/O, apart from the storage port so that the id kinds ([`crate::ids`]) can
//! name their collection without depending on the port (and the port on the ids).

/// The document collections, one table each.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Collection {
    Payments,
    Customers,
    Refunds,
    Events,
    PaymentMethods,
    WebhookEndpoints,
    Connectors,
    BalanceTransactions,
    Payouts,
    Disputes,
    Products,
    Prices,
    Subscriptions,
    Invoices,
    TestClocks,
    SetupIntents,
    CheckoutSessions,
    PaymentLinks,
    InvoiceSequences,
}

impl Collection {
    pub const ALL: [Collection; 19] = [
        Collection::Payments,
        Collection::Customers,
        Collection::Refunds,
        Collection::Events,
        Collection::PaymentMethods,
        Collection::WebhookEndpoints,
        Collection::Connectors,
        Collection::BalanceTransactions,
        Collection::Payouts,
        Collection::Disputes,
        Collection::Products,
        Collection::Prices,
        Collection::Subscriptions,
        Collection::Invoices,
        Collection::TestClocks,
        Collection::SetupIntents,
        Collection::CheckoutSessions,
        Collection::PaymentLinks,
        Collection::InvoiceSequences,
    ];

    /// Its name: the name of its table, and of the collection in kept idempotency pointers.
    pub fn name(self) -> &'static str {
        match self {
            Collection::Payments => "payments",
            Collection::Customers => "customers",
            Collection::Refunds => "refunds",
            Collection::Events => "events",
            Collection::PaymentMethods => "payment_methods",
            Collection::WebhookEndpoints => "webhook_endpoints",
            Collection::Connectors => "connectors",
            Collection::BalanceTransactions => "balance_transactions",
            Collection::Payouts => "payouts",
            Collection::Disputes => "disputes",
            Collection::Products => "products",
            Collection::Prices => "prices",
            Collection::Subscriptions => "subscriptions",
            Collection::Invoices => "invoices",
            Collection::TestClocks => "test_clocks",
            Collection::SetupIntents => "setup_intents",
            Collection::CheckoutSessions => "checkout_sessions",
            Collection::PaymentLinks => "payment_links",
            Collection::InvoiceSequences => "invoice_sequences",
        }
    }

    /// The collection named `name` ([`Collection::name`]).
    pub fn named(name: &str) -> Option<Collection> {
        Collection::ALL.into_iter().find(|c| c.name() == name)
    }

    /// The filterable columns this collection's table has.
    pub fn filter_fields(self) -> &'static [Field] {
        match self {
            Collection::Payments => &[Field::Customer, Field::Status],
            Collection::Customers => &[Field::Email, Field::TestClock],
            Collection::Refunds => &[Field::Payment],
            Collection::Events => &[Field::Type],
            Collection::PaymentMethods => &[Field::Customer],
            Collection::WebhookEndpoints => &[Field::Status],
            Collection::Connectors => &[Field::Status],
            Collection::BalanceTransactions => &[
                Field::Type,
                Field::Source,
                Field::Payout,
                Field::Currency,
                Field::Status,
            ],
            Collection::Payouts => &[Field::Status],
            Collection::Disputes => &[Field::Payment, Field::Status],
            Collection::Products => &[Field::Active],
            Collection::Prices => &[
                Field::Product,
                Field::Active,
                Field::Type,
                Field::Currency,
                Field::LookupKey,
            ],
            Collection::Subscriptions => &[Field::Customer, Field::Status, Field::Prices],
            Collection::Invoices => &[Field::Customer, Field::Subscription, Field::Status],
            Collection::TestClocks => &[Field::Status],
            Collection::SetupIntents => &[Field::Customer, Field::Status],
            Collection::CheckoutSessions => &[
                Field::Customer,
                Field::Status,
                Field::Payment,
                Field::Subscription,
            ],
            Collection::PaymentLinks => &[Field::Active],
            Collection::InvoiceSequences => &[],
        }
    }
}

/// An indexed column a list can filter on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Field {
    Customer,
    Status,
    Email,
    Payment,
    Type,
    Source,
    Payout,
    Currency,
    /// `"true"` or `"false"`.
    Active,
    Product,
    Subscription,
    /// Subscriptions only: every price of its items, as `,a,b,`; a filter on it matches a
    /// subscription with that price among its items (`LIKE '%,price_…,%'`, see
    /// [`Field::matches_within`]).
    Prices,
    TestClock,
    /// Prices only: Stripe's `lookup_key`.
    LookupKey,
}

impl Field {
    /// Whether a filter on this field matches a value within the column (`LIKE`, the filter
    /// value made by [`prices_filter`]) rather than the whole column.
    pub fn matches_within(self) -> bool {
        self == Field::Prices
    }
}

/// The [`Field::Prices`] column of a subscription whose items have these prices.
pub fn prices_column<'a>(prices: impl Iterator<Item = &'a str>) -> String {
    let mut out = String::from(",");
    for p in prices {
        out.push_str(p);
        out.push(',');
    }
    out
}

/// The [`Field::Prices`] filter value that matches subscriptions with `price` (an id checked
/// to be `[0-9A-Za-z_]`).
pub fn prices_filter(price: &str) -> String {
    format!("%,{price},%")
}

/// Values of the indexed columns for one document (unset = NULL).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct IndexValues {
    pub customer: Option<String>,
    pub status: Option<String>,
    pub email: Option<String>,
    pub payment: Option<String>,
    pub event_type: Option<String>,
    /// Webhook endpoints only: `*` or the enabled types as `,a,b,` (so a match is a substring
    /// test in SQL, the same on every backend).
    pub enabled_events: Option<String>,
    pub source: Option<String>,
    pub payout: Option<String>,
    pub currency: Option<String>,
    /// Balance transactions only: when the money becomes available (Unix seconds).
    pub available_on: Option<i64>,
    pub active: Option<bool>,
    pub product: Option<String>,
    pub subscription: Option<String>,
    /// See [`Field::Prices`].
    pub prices: Option<String>,
    pub test_clock: Option<String>,
    pub lookup_key: Option<String>,
}

impl IndexValues {
    pub fn get(&self, field: Field) -> Option<&str> {
        match field {
            Field::Customer => self.customer.as_deref(),
            Field::Status => self.status.as_deref(),
            Field::Email => self.email.as_deref(),
            Field::Payment => self.payment.as_deref(),
            Field::Type => self.event_type.as_deref(),
            Field::Source => self.source.as_deref(),
            Field::Payout => self.payout.as_deref(),
            Field::Currency => self.currency.as_deref(),
            Field::Active => self.active.map(|a| if a { "true" } else { "false" }),
            Field::Product => self.product.as_deref(),
            Field::Subscription => self.subscription.as_deref(),
            Field::Prices => self.prices.as_deref(),
            Field::TestClock => self.test_clock.as_deref(),
            Field::LookupKey => self.lookup_key.as_deref(),
        }
    }
}
