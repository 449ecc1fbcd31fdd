//! Invoice numbers (CONTRACT §16): each account has, per mode, a prefix and a gap-free sequence,
//! and an invoice takes the next number when it is finalized (`3F9A0C21-0001`, `…-0002`).
//!
//! - **The prefix** is the first 8 hexadecimal digits (upper case) of the SHA-256 of the
//!   account's id: fixed for the account and the same in both modes; other accounts' differ.
//! - **The sequence** is a document ([`InvoiceSequence`], one per account and mode) holding the
//!   next number. The batch that finalizes an invoice takes the number by updating that document
//!   at the version it read, so the invoice and its number commit together or not at all: a crash
//!   loses neither one nor the other, and of two finalizations at once one conflicts and runs
//!   again with the next number. Numbers are therefore gap-free and never given twice.
//! - **No hot-row stampede.** Optimistic versions alone would make every finalization that ran
//!   beside another run again (a test clock's advance renews 32 subscriptions at once; the last
//!   would run 31 times). So on one node the number is taken under a lock per account and mode
//!   (`Services::numbering`), held from reading the sequence until the batch is committed
//!   ([`Batch::hold`]): finalizations take their turn instead of conflicting. Between nodes the
//!   versions still decide, and the loser runs again.
//! - The document is made the first time an account needs it, in a write of its own; two
//!   first finalizations at once both try, and the second finds it made.
//!
//! Depends on the storage port and `documents`.

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::auth::Scope;
use crate::billing::Billing;
use crate::documents::batch::Batch;
use crate::documents::document::{from_body, Document};
use crate::error::StoreError;
use crate::error::{CoreError, CoreResult};
use crate::store::Collection;

/// An account's (per mode) invoice prefix and the next number it gives.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct InvoiceSequence {
    pub id: String,
    pub object: String,
    pub prefix: String,
    /// The number the next finalized invoice takes (the first is 1).
    pub next: u64,
    pub created: i64,
    pub livemode: bool,
}

impl Document for InvoiceSequence {
    const COLLECTION: Collection = Collection::InvoiceSequences;

    fn id(&self) -> &str {
        &self.id
    }

    fn created(&self) -> i64 {
        self.created
    }
}

/// The account's invoice prefix: 8 upper-case hexadecimal digits of the SHA-256 of its id.
pub fn prefix_of(account: &str) -> String {
    let digest = Sha256::digest(account.as_bytes());
    digest[..4].iter().map(|b| format!("{b:02X}")).collect()
}

/// Invoice number `n` with `prefix`: at least four digits, as Stripe writes them.
pub fn number(prefix: &str, n: u64) -> String {
    format!("{prefix}-{n:04}")
}

/// The prefix of every sequence document's id.
const SEQUENCE_ID: &str = "inseq_";

/// The id of the scope's sequence document (one per account and mode).
fn sequence_id(scope: &Scope) -> String {
    let mode = if scope.livemode() { "live" } else { "test" };
    format!("{SEQUENCE_ID}{}_{mode}", scope.account)
}

/// Whether `e` is a batch that lost the race for an invoice number: it wrote nothing, and the
/// use case may be run again as it is.
pub(crate) fn lost_number_race(e: &CoreError) -> bool {
    matches!(e, CoreError::Store(StoreError::Conflict(id)) if id.starts_with(SEQUENCE_ID))
}

impl Billing<'_> {
    /// The scope's next invoice number, and in `ops` the write that takes it: the batch that
    /// finalizes the invoice must carry it (see the module doc).
    pub(crate) async fn take_invoice_number(
        &self,
        scope: &Scope,
        ops: &mut Batch,
    ) -> CoreResult<String> {
        // Held until `ops` is committed or dropped; `ops` must take no other number (the lock
        // is not reentrant).
        ops.hold(self.numbering.lock(&sequence_id(scope)).await);
        let (sequence, version) = match self.sequence(scope).await? {
            Some(found) => found,
            None => {
                self.start_sequence(scope).await?;
                // Made now (or just before by another request); gone again only if the store
                // lost it, which a run again of the use case finds out.
                self.sequence(scope)
                    .await?
                    .ok_or_else(|| StoreError::Conflict(sequence_id(scope)))?
            }
        };
        let mut after = sequence.clone();
        after.next += 1;
        ops.update(&after, version)?;
        Ok(number(&sequence.prefix, sequence.next))
    }

    async fn sequence(&self, scope: &Scope) -> CoreResult<Option<(InvoiceSequence, i64)>> {
        let id = sequence_id(scope);
        match self
            .store
            .find_record(scope, Collection::InvoiceSequences, &id)
            .await?
        {
            Some(r) => Ok(Some((from_body(&r.id, &r.body)?, r.version))),
            None => Ok(None),
        }
    }

    /// The scope's sequence made, at 1; made already by another request is as good.
    async fn start_sequence(&self, scope: &Scope) -> CoreResult<()> {
        let sequence = InvoiceSequence {
            id: sequence_id(scope),
            object: "invoice_sequence".into(),
            prefix: prefix_of(&scope.account),
            next: 1,
            created: self.wall_now(),
            livemode: scope.livemode(),
        };
        let mut ops = self.background(scope);
        ops.insert(&sequence)?;
        match self.commit_background(ops).await {
            Err(CoreError::Store(StoreError::Duplicate(_))) => Ok(()),
            other => other,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_have_the_accounts_prefix_and_at_least_four_digits() {
        let prefix = prefix_of("acct_0123456789");
        assert_eq!(prefix.len(), 8);
        assert!(prefix
            .chars()
            .all(|c| c.is_ascii_digit() || c.is_ascii_uppercase()));
        assert_eq!(prefix, prefix_of("acct_0123456789"), "fixed per account");
        assert_ne!(prefix, prefix_of("acct_0123456788"));
        assert_eq!(number("ABCD1234", 1), "ABCD1234-0001");
        assert_eq!(number("ABCD1234", 42), "ABCD1234-0042");
        assert_eq!(number("ABCD1234", 12345), "ABCD1234-12345");
    }
}
