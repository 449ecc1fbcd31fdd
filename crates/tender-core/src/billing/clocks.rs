//! Test clocks (`clock_`, test mode only): a month of billing tested in a second.
//!
//! `POST /test_helpers/test_clocks/{id}/advance` records the target (the clock is `advancing`)
//! and schedules an `advance_clock` task, due at once. That task runs the clock's own tasks —
//! every renewal, try, trial end, expiry and availability of its customers' objects due by the
//! target — in time order, each in the clock's time at the instant it was due
//! ([`Services::at_clock`]); the tasks due at one instant (independent of each other, being of
//! different objects) run side by side. Then the clock is at the target and `ready` again
//! (`test_helpers.test_clock.ready`).
//!
//! Each of those tasks is a batch of its own, deleted in the batch that does it, so an advance
//! cut short by a crash goes on where it stopped when its task is leased again (at once on
//! SQLite, whose next process releases the dead one's leases; a lease later on PostgreSQL) and
//! never runs a step twice. A long advance hands over to a fresh `advance_clock` task every
//! sixth of the lease, so no second runner takes it over meanwhile.

use std::time::{Duration, Instant};

use crate::billing::clock::{Advancing, ClockStatus, ClockStatusDetails, TestClock};
use crate::billing::model::{
    add_calendar_months, periods_between, MAX_ADVANCE_MONTHS, MAX_ADVANCING_CLOCKS,
    MAX_INVOICES_PER_ADVANCE,
};
use crate::billing::subscription::{Subscription, SubscriptionStatus};
use crate::billing::Billing;
use crate::customers::customer::Customer;
use crate::documents::document::{from_body, to_value};
use crate::error::{CoreError, CoreResult};
use crate::ids::{self, IdKind};
use crate::services::RequestContext;
use crate::store::{ClaimedTask, Collection, Field};
use crate::task::TaskKind;
use crate::validate::check_text;

/// How many of a clock's tasks due at one instant run side by side.
const CLOCK_TASKS_AT_ONCE: usize = 32;
/// An advance hands over to a fresh task after this share of the task lease (10 s of the
/// default minute), so it is never still running when its lease ends.
const ADVANCE_SLICES_PER_LEASE: i64 = 6;
/// The latest `frozen_time` (the end of 9999); the earliest is 0 (1970).
const LATEST_TIME: i64 = 253_402_300_799;

/// A clock's indexed status: the advancing ones are counted (at most
/// [`MAX_ADVANCING_CLOCKS`] per account).
fn clock_state_error(c: &TestClock, what: &str) -> CoreError {
    CoreError::invalid(
        "test_clock",
        "test_clock_unexpected_state",
        format!(
            "This test clock is {}; {what} only while it is ready.",
            c.status.as_str()
        ),
    )
}

fn check_time(param: &str, t: i64) -> CoreResult<()> {
    if !(0..=LATEST_TIME).contains(&t) {
        return Err(CoreError::invalid(
            param,
            "parameter_invalid",
            format!("{param} must be a Unix time between 1970 and 9999."),
        ));
    }
    Ok(())
}

impl Billing<'_> {
    pub async fn create_test_clock(
        &self,
        ctx: &RequestContext,
        frozen_time: i64,
        name: Option<String>,
    ) -> CoreResult<TestClock> {
        let scope = ctx.scope();
        if scope.livemode() {
            return Err(CoreError::invalid(
                "frozen_time",
                "livemode_unsupported",
                "Test clocks exist in test mode only: use a test key.",
            ));
        }
        check_time("frozen_time", frozen_time)?;
        check_text("name", name.as_deref(), 300)?;
        let clock = TestClock {
            id: ids::generate(IdKind::TestClock),
            object: "test_helpers.test_clock".into(),
            frozen_time,
            status: ClockStatus::Ready,
            status_details: ClockStatusDetails { advancing: None },
            name,
            created: self.now(),
            livemode: false,
        };
        let object = to_value(&clock)?;
        let mut ops = self.batch(ctx);
        ops.insert(&clock)?;
        self.commit(ctx, ops, Ok(&object)).await?;
        Ok(clock)
    }

    /// `POST /test_helpers/test_clocks/{id}/advance`: forward only, at most two years.
    pub async fn advance_test_clock(
        &self,
        ctx: &RequestContext,
        id: &str,
        frozen_time: i64,
    ) -> CoreResult<TestClock> {
        check_time("frozen_time", frozen_time)?;
        self.retry_on_conflict(|| async {
            let scope = ctx.scope();
            let (before, version): (TestClock, i64) = self
                .load(scope, Collection::TestClocks, "test clock", id)
                .await?;
            if before.status != ClockStatus::Ready {
                return Err(clock_state_error(&before, "it can be advanced"));
            }
            if frozen_time <= before.frozen_time {
                return Err(CoreError::invalid(
                    "frozen_time",
                    "parameter_invalid",
                    format!(
                        "A test clock only moves forward: frozen_time must be after {}.",
                        before.frozen_time
                    ),
                ));
            }
            let latest = add_calendar_months(before.frozen_time, i64::from(MAX_ADVANCE_MONTHS));
            if frozen_time > latest {
                return Err(CoreError::invalid(
                    "frozen_time",
                    "parameter_invalid",
                    format!(
                        "A test clock moves at most two years at a time: frozen_time must be at most {latest}."
                    ),
                ));
            }
            let invoices = self.invoices_of_advance(scope, &before, frozen_time).await?;
            if invoices > MAX_INVOICES_PER_ADVANCE {
                return Err(CoreError::invalid(
                    "frozen_time",
                    "test_clock_advance_too_large",
                    format!(
                        "This advance would make more than {MAX_INVOICES_PER_ADVANCE} invoices (the limit of one advance): advance by less, or put fewer subscriptions on the clock."
                    ),
                ));
            }
            let mut after = before.clone();
            after.status = ClockStatus::Advancing;
            after.status_details.advancing = Some(Advancing {
                target_frozen_time: frozen_time,
            });
            let object = to_value(&after)?;
            let mut ops = self.batch(ctx);
            ops.update(&after, version)?
                // In wall time: the advance itself runs now.
                .schedule(TaskKind::AdvanceClock, &after.id, self.wall_now())
                .require_at_most::<TestClock>(
                    Some((Field::Status, ClockStatus::Advancing.as_str().into())),
                    MAX_ADVANCING_CLOCKS,
                    "advancing test clocks",
                );
            match self.commit(ctx, ops, Ok(&object)).await {
                Err(CoreError::Store(crate::error::StoreError::LimitReached(_))) => {
                    Err(CoreError::invalid(
                        "test_clock",
                        "test_clocks_advancing_limit",
                        format!(
                            "At most {MAX_ADVANCING_CLOCKS} test clocks of an account advance at once; wait for one to be ready."
                        ),
                    ))
                }
                other => other.map(|()| after),
            }
        })
        .await
    }

    /// How many invoices advancing `clock` to `target` would make, at most (every renewal and
    /// trial end of its customers' live subscriptions), counting no further than just past
    /// [`MAX_INVOICES_PER_ADVANCE`].
    async fn invoices_of_advance(
        &self,
        scope: &crate::auth::Scope,
        clock: &TestClock,
        target: i64,
    ) -> CoreResult<u64> {
        let mut total = 0u64;
        let customers = self
            .every_record(
                scope,
                Collection::Customers,
                vec![(Field::TestClock, clock.id.clone())],
                Default::default(),
            )
            .await?;
        for customer in customers {
            for record in self
                .every_record(
                    scope,
                    Collection::Subscriptions,
                    vec![(Field::Customer, customer.id.clone())],
                    Default::default(),
                )
                .await?
            {
                let sub: Subscription = from_body(&record.id, &record.body)?;
                let ended = matches!(
                    sub.status,
                    SubscriptionStatus::Canceled | SubscriptionStatus::IncompleteExpired
                );
                let Some(recurring) = sub.recurring().filter(|_| !ended) else {
                    continue;
                };
                let cap = MAX_INVOICES_PER_ADVANCE - total.min(MAX_INVOICES_PER_ADVANCE);
                total += periods_between(
                    sub.billing_cycle_anchor,
                    recurring,
                    clock.frozen_time,
                    target,
                    cap,
                );
                if sub
                    .trial_end
                    .is_some_and(|t| t > clock.frozen_time && t <= target)
                {
                    total += 1;
                }
                if total > MAX_INVOICES_PER_ADVANCE {
                    return Ok(total);
                }
            }
        }
        Ok(total)
    }

    /// The `advance_clock` task (see the module's doc).
    pub(crate) async fn advance_clock(&self, task: &ClaimedTask) -> CoreResult<()> {
        let scope = &task.scope;
        let Some(record) = self
            .store
            .find_record(scope, Collection::TestClocks, &task.object_id)
            .await?
        else {
            return self.drop_task(task, "test clock deleted").await;
        };
        let clock: TestClock = from_body(&record.id, &record.body)?;
        let Some(Advancing { target_frozen_time }) = clock.status_details.advancing else {
            return self.drop_task(task, "test clock not advancing").await;
        };
        let started = Instant::now();
        let slice = Duration::from_millis(
            (self.config.task_lease_secs * 1000 / ADVANCE_SLICES_PER_LEASE) as u64,
        );
        loop {
            let now = self.wall_now();
            let due = self
                .store
                .claim_clock_tasks(
                    &clock.id,
                    target_frozen_time,
                    now,
                    now + self.config.task_lease_secs,
                    CLOCK_TASKS_AT_ONCE,
                )
                .await?;
            if due.is_empty() {
                break;
            }
            let mut running = tokio::task::JoinSet::new();
            for t in due {
                let svc = self.at_clock(&clock.id, t.due_at);
                running.spawn(async move {
                    if let Err(e) = svc.run_step(&t).await {
                        tracing::warn!(task = %t.id, kind = %t.kind, error = %crate::error::error_chain(&e), "test clock task failed; it will be retried");
                    }
                });
            }
            while running.join_next().await.is_some() {}
            if started.elapsed() > slice {
                // Hand over to a fresh task (a fresh lease) and let other work run.
                let mut ops = self.background(scope);
                ops.done(task)
                    .schedule(TaskKind::AdvanceClock, &clock.id, self.wall_now());
                return self.commit_background(ops).await;
            }
        }
        if self
            .store
            .clock_tasks_due(&clock.id, target_frozen_time)
            .await?
            > 0
        {
            // Some are leased by a runner that died (or failed): look again after their lease.
            let mut ops = self.background(scope);
            ops.done(task).schedule(
                TaskKind::AdvanceClock,
                &clock.id,
                self.wall_now() + self.config.task_lease_secs,
            );
            return self.commit_background(ops).await;
        }
        let mut after = clock.clone();
        after.frozen_time = target_frozen_time;
        after.status = ClockStatus::Ready;
        after.status_details.advancing = None;
        let mut ops = self.background(scope);
        ops.update(&after, record.version)?
            .event("test_helpers.test_clock.ready", &after)?
            .done(task);
        self.commit_background(ops).await
    }

    /// `DELETE /test_helpers/test_clocks/{id}`: the clock, its customers (deleted as
    /// `DELETE /customers/{id}` does) and their subscriptions (ended, then deleted, as Stripe
    /// deletes them with the clock), and its tasks. Invoices stay: their payments moved money.
    pub async fn delete_test_clock(
        &self,
        ctx: &RequestContext,
        id: &str,
    ) -> CoreResult<serde_json::Value> {
        self.retry_on_conflict(|| async {
            let scope = ctx.scope();
            let (clock, version): (TestClock, i64) = self
                .load(scope, Collection::TestClocks, "test clock", id)
                .await?;
            let mut ops = self.batch(ctx);
            ops.delete::<TestClock>(&clock.id, version)
                .drop_clock_tasks(&clock.id);
            let customers: Vec<(Customer, i64)> = self
                .matching(scope, Collection::Customers, Field::TestClock, &clock.id)
                .await?;
            for (customer, customer_version) in customers {
                ops.extend(
                    self.customers()
                        .delete_customer_ops(
                            ctx,
                            &customer,
                            customer_version,
                            crate::billing::subscriptions::Ended::Deleted,
                        )
                        .await?,
                );
            }
            let deleted = serde_json::json!({
                "id": clock.id,
                "object": "test_helpers.test_clock",
                "deleted": true,
            });
            self.commit(ctx, ops, Ok(&deleted)).await?;
            Ok(deleted)
        })
        .await
    }
}
