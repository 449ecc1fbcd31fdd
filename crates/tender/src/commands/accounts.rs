//! `tender accounts create|list|update|pricing|payout-destination|set-password` and `tender keys create|list|roll|revoke`:
//! merchant accounts and their API keys.

use super::services;
use crate::{AccountsCommand, KeysCommand, KindArg, ModeArg};
use anyhow::bail;
use tender_core::auth::{KeyKind, Mode};
use tender_core::balance::fees::Pricing;
use tender_core::services::Services;

pub async fn accounts(command: AccountsCommand) -> anyhow::Result<()> {
    match command {
        AccountsCommand::Create {
            email,
            name,
            password,
            store,
        } => {
            let created = services(&store)
                .await?
                .accounts()
                .create_account(&email, name, password)
                .await
                .map_err(|e| anyhow::anyhow!("cannot create the account: {e}"))?;
            println!("{}", serde_json::to_string(&created)?);
        }
        AccountsCommand::SetPassword {
            account,
            password,
            store,
        } => {
            let services = services(&store).await?;
            let id = resolve_account(&services, &account).await?;
            let generated = password.is_none();
            let password = services
                .accounts()
                .set_password(&id, password)
                .await
                .map_err(|e| anyhow::anyhow!("cannot set the password: {e}"))?;
            let mut out = serde_json::json!({"account": id, "sessions_ended": true});
            if generated {
                out["password"] = password.into();
            }
            println!("{out}");
        }
        AccountsCommand::Update {
            account,
            name,
            public_email,
            store,
        } => update(&account, name, public_email, &store).await?,
        AccountsCommand::Pricing {
            account,
            card,
            bank_transfer,
            dispute,
            store,
        } => pricing(&account, [card, bank_transfer, dispute], &store).await?,
        AccountsCommand::PayoutDestination {
            account,
            iban,
            account_holder_name,
            store,
        } => payout_destination(&account, iban.zip(account_holder_name), &store).await?,
        AccountsCommand::List(store) => {
            for a in services(&store).await?.store.list_accounts().await? {
                println!(
                    "{}",
                    serde_json::json!({"account": a.id, "email": a.email, "name": a.name, "public_email": a.public_email, "created": a.created})
                );
            }
        }
    }
    Ok(())
}

/// `tender accounts update`: a flag not given keeps the current value; "" clears it.
async fn update(
    account: &str,
    name: Option<String>,
    public_email: Option<String>,
    store: &crate::StoreArgs,
) -> anyhow::Result<()> {
    let services = services(store).await?;
    let id = resolve_account(&services, account).await?;
    let current = services
        .store
        .find_account(&id)
        .await?
        .ok_or_else(|| anyhow::anyhow!("no account {id}"))?;
    let name = name.or(current.name);
    let public_email = public_email.or(current.public_email);
    let a = services
        .accounts()
        .update_account_profile(&id, name.as_deref(), public_email.as_deref())
        .await
        .map_err(|e| anyhow::anyhow!("cannot update the account: {e}"))?;
    println!(
        "{}",
        serde_json::json!({"account": a.id, "email": a.email, "name": a.name, "public_email": a.public_email})
    );
    Ok(())
}

/// `tender accounts pricing`: the account's prices, changed by the flags given.
async fn pricing(
    account: &str,
    [card, bank_transfer, dispute]: [Option<String>; 3],
    store: &crate::StoreArgs,
) -> anyhow::Result<()> {
    let services = services(store).await?;
    let id = resolve_account(&services, account).await?;
    let mut pricing = services.balance().pricing(&id).await?;
    let bad = |flag: &str, e: tender_core::balance::fees::PricingError| {
        anyhow::anyhow!("--{flag}: {}", e.0)
    };
    if let Some(s) = &card {
        (pricing.card_bps, pricing.card_fixed) =
            Pricing::parse_card(s).map_err(|e| bad("card", e))?;
    }
    if let Some(s) = &bank_transfer {
        (pricing.bank_transfer_bps, pricing.bank_transfer_cap) =
            Pricing::parse_bank_transfer(s).map_err(|e| bad("bank-transfer", e))?;
    }
    if let Some(s) = &dispute {
        pricing.dispute = Pricing::parse_dispute(s).map_err(|e| bad("dispute", e))?;
    }
    if card.is_some() || bank_transfer.is_some() || dispute.is_some() {
        services.balance().set_pricing(&id, pricing).await?;
    }
    println!("{id}: {}", pricing.describe());
    Ok(())
}

/// `tender accounts payout-destination`: the account's default destination, set first when
/// given.
async fn payout_destination(
    account: &str,
    set: Option<(String, String)>,
    store: &crate::StoreArgs,
) -> anyhow::Result<()> {
    let services = services(store).await?;
    let id = resolve_account(&services, account).await?;
    let book = services.balance();
    let shown = match set {
        Some((iban, holder)) => Some(
            book.set_payout_destination(&id, tender_core::secret::Secret::new(iban), &holder)
                .await
                .map_err(|e| anyhow::anyhow!("cannot set the payout destination: {e}"))?,
        ),
        None => book.shown_payout_destination(&id).await?,
    };
    match shown {
        Some(d) => println!(
            "{}",
            serde_json::json!({"account": id, "payout_destination": d})
        ),
        None => println!(
            "{}",
            serde_json::json!({"account": id, "payout_destination": null})
        ),
    }
    Ok(())
}

pub(super) fn mode(m: ModeArg) -> Mode {
    match m {
        ModeArg::Test => Mode::Test,
        ModeArg::Live => Mode::Live,
    }
}

/// An account named by its id or its login e-mail.
pub(super) async fn resolve_account(services: &Services, account: &str) -> anyhow::Result<String> {
    if account.starts_with("acct_") {
        require_account(services, account).await?;
        return Ok(account.to_string());
    }
    match services.store.find_account_by_email(account.trim()).await? {
        Some(a) => Ok(a.id),
        None => bail!("no account with the id or e-mail {account} (see `tender accounts list`)"),
    }
}

async fn require_account(services: &Services, account: &str) -> anyhow::Result<()> {
    if services.store.find_account(account).await?.is_none() {
        bail!("no account {account} (see `tender accounts list`)");
    }
    Ok(())
}

pub async fn keys(command: KeysCommand) -> anyhow::Result<()> {
    match command {
        KeysCommand::Create {
            account,
            mode: m,
            kind,
            store,
        } => {
            let services = services(&store).await?;
            let account = resolve_account(&services, &account).await?;
            let kind = match kind {
                KindArg::Secret => KeyKind::Secret,
                KindArg::Publishable => KeyKind::Publishable,
            };
            let (key, record) = services
                .accounts()
                .create_api_key(&account, mode(m), kind)
                .await
                .map_err(anyhow::Error::msg)?;
            println!("{}", serde_json::json!({"id": record.id, "key": key}));
        }
        KeysCommand::List { account, store } => {
            let services = services(&store).await?;
            let account = resolve_account(&services, &account).await?;
            for k in services.store.list_api_keys(&account).await? {
                println!(
                    "{}",
                    serde_json::json!({
                        "id": k.id, "mode": k.mode.as_str(), "kind": k.kind.as_str(),
                        "last4": k.last4, "publishable": k.public_value, "created": k.created,
                        "expires_at": k.expires_at, "revoked": k.revoked,
                    })
                );
            }
        }
        KeysCommand::Roll {
            account,
            key,
            grace,
            store,
        } => {
            let services = services(&store).await?;
            let account = resolve_account(&services, &account).await?;
            let (new_key, record) = services
                .accounts()
                .roll_api_key(&account, &key, grace)
                .await
                .map_err(anyhow::Error::msg)?;
            println!(
                "{}",
                serde_json::json!({"id": record.id, "key": new_key, "replaces": key, "grace_seconds": grace})
            );
        }
        KeysCommand::Revoke {
            account,
            key,
            store,
        } => {
            let services = services(&store).await?;
            let account = resolve_account(&services, &account).await?;
            services
                .accounts()
                .revoke_api_key(&account, &key)
                .await
                .map_err(anyhow::Error::msg)?;
            println!("{}", serde_json::json!({"id": key, "revoked": true}));
        }
    }
    Ok(())
}
