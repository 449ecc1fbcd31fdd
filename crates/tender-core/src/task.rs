//! The kinds of background work Tender stores ([`TaskKind`]): a value, named in the batch that
//! schedules a task and read back by the runner ([`crate::tasks`]) that carries it out.

/// How long a runner holds a task before another may take it over, by default
/// (`ServiceConfig::task_lease_secs`).
pub const TASK_LEASE_SECS: i64 = 60;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TaskKind {
    ExpireAuthorization,
    SettleBankTransfer,
    BounceBankTransfer,
    AbandonAuthentication,
    SettleRefund,
    /// Ask a connector's processor where a payment it left unknown is (CONTRACT §8).
    SyncPayment,
    /// Send (again) a connector's pending refund until the processor settles it.
    SyncRefund,
    /// A pending charge's money becomes available (CONTRACT §9).
    MakeAvailable,
    /// A payout moves on at the bank: in transit, then paid or failed.
    AdvancePayout,
    /// The cardholder's bank disputes a payment (the disputed test card).
    OpenDispute,
    /// A submitted dispute is decided, or an unanswered one lost at its due date.
    ResolveDispute,
    /// A subscription's period (or trial) ends: the next period and its invoice.
    RenewSubscription,
    /// An automatic try of an open invoice.
    PayInvoice,
    /// `customer.subscription.trial_will_end`, three days before the trial ends.
    TrialWillEnd,
    /// A subscription whose first invoice is unpaid 23 hours on expires.
    ExpireIncomplete,
    /// A test clock runs its customers' tasks up to its target time.
    AdvanceClock,
    /// An invoice's payment that its customer confirmed (or authenticated) is settled: the
    /// invoice paid, or its try failed.
    SettleInvoicePayment,
    /// `invoice.upcoming`, three days before a renewal.
    InvoiceUpcoming,
    /// A Checkout Session reaches its `expires_at`.
    ExpireCheckoutSession,
    /// A payment a connector's processor captured is checked for refunds made at the
    /// processor (CONTRACT §15).
    WatchPayment,
    /// A connector's processor's payouts are read and mirrored (CONTRACT §15).
    MirrorPayouts,
}

impl TaskKind {
    pub fn as_str(self) -> &'static str {
        match self {
            TaskKind::ExpireAuthorization => "expire_authorization",
            TaskKind::SettleBankTransfer => "settle_bank_transfer",
            TaskKind::BounceBankTransfer => "bounce_bank_transfer",
            TaskKind::AbandonAuthentication => "abandon_authentication",
            TaskKind::SettleRefund => "settle_refund",
            TaskKind::SyncPayment => "sync_payment",
            TaskKind::SyncRefund => "sync_refund",
            TaskKind::MakeAvailable => "make_available",
            TaskKind::AdvancePayout => "advance_payout",
            TaskKind::OpenDispute => "open_dispute",
            TaskKind::ResolveDispute => "resolve_dispute",
            TaskKind::RenewSubscription => "renew_subscription",
            TaskKind::PayInvoice => "pay_invoice",
            TaskKind::TrialWillEnd => "trial_will_end",
            TaskKind::ExpireIncomplete => "expire_incomplete",
            TaskKind::AdvanceClock => "advance_clock",
            TaskKind::SettleInvoicePayment => "settle_invoice_payment",
            TaskKind::InvoiceUpcoming => "invoice_upcoming",
            TaskKind::ExpireCheckoutSession => "expire_checkout_session",
            TaskKind::WatchPayment => "watch_payment",
            TaskKind::MirrorPayouts => "mirror_payouts",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        [
            TaskKind::ExpireAuthorization,
            TaskKind::SettleBankTransfer,
            TaskKind::BounceBankTransfer,
            TaskKind::AbandonAuthentication,
            TaskKind::SettleRefund,
            TaskKind::SyncPayment,
            TaskKind::SyncRefund,
            TaskKind::MakeAvailable,
            TaskKind::AdvancePayout,
            TaskKind::OpenDispute,
            TaskKind::ResolveDispute,
            TaskKind::RenewSubscription,
            TaskKind::PayInvoice,
            TaskKind::TrialWillEnd,
            TaskKind::ExpireIncomplete,
            TaskKind::AdvanceClock,
            TaskKind::SettleInvoicePayment,
            TaskKind::InvoiceUpcoming,
            TaskKind::ExpireCheckoutSession,
            TaskKind::WatchPayment,
            TaskKind::MirrorPayouts,
        ]
        .into_iter()
        .find(|k| k.as_str() == s)
    }
}
