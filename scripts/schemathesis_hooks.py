"""Hooks of scripts/schemathesis.sh (loaded through SCHEMATHESIS_HOOKS).

In the stateful phase every request gets an Idempotency-Key of its own. Generated keys are short
and repeat ("0", "00"...), and a create sent again with a key and body it already used is a
replay: it answers the object it first made, as Stripe does, even after a later DELETE removed
it. The stateful check `ensure_resource_availability` would read that as a created resource gone
missing. The other phases keep the generated keys, so replays, mismatches (400) and keys in
flight (409) are still exercised there.
"""

import uuid

import schemathesis


@schemathesis.hook
def before_call(context, case, **kwargs):
    meta = case.meta
    if meta is None or meta.phase.name.value != "stateful":
        return
    if case.headers and "Idempotency-Key" in case.headers:
        case.headers["Idempotency-Key"] = "st-" + uuid.uuid4().hex
