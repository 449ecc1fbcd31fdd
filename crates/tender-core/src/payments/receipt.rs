//! What a payment's receipt page shows: the payment, its refunds and the merchant's name, found
//! by id alone (payment ids are unguessable, and the page has no caller to scope by).

use crate::documents::document::from_body;
use crate::error::CoreResult;
use crate::ids::{self, IdKind};
use crate::payments::payment::Payment;
use crate::payments::Payments;
use crate::store::Collection;

/// What a receipt page shows.
#[derive(Debug, Clone)]
pub struct Receipt {
    pub payment: Payment,
    /// The business name (else its public e-mail); `None` when the account set neither.
    pub merchant: Option<String>,
    /// The account's public e-mail, for customers to write to.
    pub merchant_email: Option<String>,
    pub refunds: Vec<crate::refunds::refund::Refund>,
}

impl Payments<'_> {
    /// A payment by id in any scope, with its refunds and the merchant's display name: for the
    /// receipt page, which has no caller to scope by (payment ids are unguessable).
    pub async fn find_receipt(&self, id: &str) -> CoreResult<Option<Receipt>> {
        if !ids::looks_like(IdKind::Payment, id) {
            return Ok(None);
        }
        let Some((scope, record)) = self.store.find_unscoped(Collection::Payments, id).await?
        else {
            return Ok(None);
        };
        let payment: Payment = from_body(&record.id, &record.body)?;
        let (merchant, merchant_email) = self.merchant(&scope.account).await?;
        let query = crate::store::ListQuery {
            filters: vec![(crate::store::Field::Payment, payment.id.clone())],
            limit: 100,
            ..Default::default()
        };
        let refunds = self
            .store
            .list_records(&scope, Collection::Refunds, &query)
            .await?
            .records
            .iter()
            .map(|r| from_body(&r.id, &r.body))
            .collect::<CoreResult<Vec<crate::refunds::refund::Refund>>>()?;
        Ok(Some(Receipt {
            payment,
            merchant,
            merchant_email,
            refunds,
        }))
    }
}
