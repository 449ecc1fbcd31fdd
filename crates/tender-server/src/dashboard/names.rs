//! Who and what an id stands for, as a person reads it: a customer's e-mail (else name), a
//! product's name. A page reads each distinct id it shows once; an id that cannot be read (a
//! deleted customer) is shown as itself.

use std::collections::HashMap;

use tender_core::billing::subscription::Subscription;
use tender_core::store::Collection;

use super::{DashboardState, Session};

/// A stored document's JSON.
fn read(raw: &str) -> Option<serde_json::Value> {
    serde_json::from_str(raw).ok()
}

/// The names of the customers and products a page shows.
#[derive(Default)]
pub(super) struct Names {
    customers: HashMap<String, String>,
    products: HashMap<String, String>,
}

impl Names {
    /// Reads the names of `customers` and of the products of `subscriptions`' prices.
    pub(super) async fn load(
        state: &DashboardState,
        session: &Session,
        customers: &[&str],
        subscriptions: &[&Subscription],
    ) -> Self {
        let mut names = Names::default();
        let scope = session.scope();
        for &id in customers {
            if names.customers.contains_key(id) {
                continue;
            }
            let raw = state
                .services()
                .retrieve_raw(&scope, Collection::Customers, "customer", id)
                .await;
            let shown = raw.ok().and_then(|c| read(&c)).and_then(|c| {
                c["email"]
                    .as_str()
                    .or_else(|| c["name"].as_str())
                    .filter(|s| !s.is_empty())
                    .map(str::to_string)
            });
            names
                .customers
                .insert(id.to_string(), shown.unwrap_or_else(|| id.to_string()));
        }
        for s in subscriptions {
            for item in &s.items.data {
                let id = item.price.product.as_str();
                if names.products.contains_key(id) {
                    continue;
                }
                let raw = state
                    .services()
                    .retrieve_raw(&scope, Collection::Products, "product", id)
                    .await;
                let name = raw
                    .ok()
                    .and_then(|p| read(&p))
                    .and_then(|p| p["name"].as_str().map(str::to_string));
                if let Some(name) = name {
                    names.products.insert(id.to_string(), name);
                }
            }
        }
        names
    }

    /// The customer `id` as a person knows them.
    pub(super) fn customer<'a>(&'a self, id: &'a str) -> &'a str {
        self.customers.get(id).map_or(id, String::as_str)
    }

    /// The name of product `id`, when it could be read.
    pub(super) fn product(&self, id: &str) -> Option<&str> {
        self.products.get(id).map(String::as_str)
    }
}
