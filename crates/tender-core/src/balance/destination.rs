//! An account's default payout destination (CONTRACT §13): the bank account a payout goes to
//! when the request names none — `POST /v1/payouts`, which has no destination parameter in
//! Stripe's API. Set in the dashboard or with `tender accounts payout-destination`; checked as
//! a payout's destination is ([`super::payouts`]), and kept with the account as one value
//! sealed with the vault key: the IBAN is never stored or shown in clear (only its country and
//! last four).
//!
//! Depends on the payouts' destination rules, the vault and the storage port.

use serde::{Deserialize, Serialize};

use crate::balance::payouts::{check_destination, PayoutDestination};
use crate::balance::BalanceBook;
use crate::error::{CoreError, CoreResult, StoreError};
use crate::secret::Secret;
use crate::store::AccountSetting;
use crate::vault::Sealer;

/// The default destination as sealed.
#[derive(Serialize, Deserialize)]
struct Sealed {
    iban: String,
    account_holder_name: String,
}

/// The default destination, opened: what a payout to it needs.
#[derive(Debug)]
pub struct DefaultDestination {
    pub iban: Secret,
    pub account_holder_name: String,
}

impl BalanceBook<'_> {
    fn destination_sealer(&self) -> Sealer {
        Sealer::new(&self.config.vault_key, "default payout destination")
    }

    /// Sets the account's default destination (an IBAN and its holder, checked); what it shows.
    pub async fn set_payout_destination(
        &self,
        account: &str,
        iban: Secret,
        account_holder_name: &str,
    ) -> CoreResult<PayoutDestination> {
        let (iban, shown) = check_destination(iban.expose(), account_holder_name)?;
        let sealed = Sealed {
            iban: iban.normalized.expose().to_string(),
            account_holder_name: shown.account_holder_name.clone(),
        };
        let plain = serde_json::to_vec(&sealed)
            .map_err(|e| CoreError::internal("encode a payout destination", e))?;
        let sealed = self.destination_sealer().seal(&plain);
        self.store
            .update_account_setting(account, AccountSetting::PayoutDestination, Some(&sealed))
            .await?;
        Ok(shown)
    }

    /// The account's default destination, if it has one.
    pub async fn payout_destination(
        &self,
        account: &str,
    ) -> CoreResult<Option<DefaultDestination>> {
        let Some(record) = self.store.find_account(account).await? else {
            return Ok(None);
        };
        let Some(sealed) = record.payout_destination else {
            return Ok(None);
        };
        let corrupt = || {
            StoreError::Corrupt(format!(
                "the payout destination of {account} cannot be opened"
            ))
        };
        let plain = self
            .destination_sealer()
            .open(&sealed)
            .map_err(|_| corrupt())?;
        let opened: Sealed = serde_json::from_slice(&plain).map_err(|_| corrupt())?;
        Ok(Some(DefaultDestination {
            iban: Secret::new(opened.iban),
            account_holder_name: opened.account_holder_name,
        }))
    }

    /// The account's default destination as the dashboard shows it (country, last four, holder).
    pub async fn shown_payout_destination(
        &self,
        account: &str,
    ) -> CoreResult<Option<PayoutDestination>> {
        match self.payout_destination(account).await? {
            Some(d) => Ok(Some(
                check_destination(d.iban.expose(), &d.account_holder_name)?.1,
            )),
            None => Ok(None),
        }
    }
}
