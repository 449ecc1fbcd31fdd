//! Every `/v1` operation's request decoding (Stripe's dialect), as the gate and the parsers run
//! it: the first byte picks a route from `tender_server::stripe::routes::ROUTES`, the rest is
//! its form-encoded parameters (bracket notation; the body of a `POST`, the query string
//! otherwise), `{id}` filled with a well-formed id.
//!
//! Invariants: nothing panics; every refusal is a 4xx in the error table (never a 5xx); a
//! parameter error names its parameter.

#![no_main]

use libfuzzer_sys::fuzz_target;
use tender_core::error::CoreError;
use tender_server::http::error::{wire, Failure};
use tender_server::stripe::routes::{decode, ROUTES};

fuzz_target!(|data: &[u8]| {
    let Some((&pick, params)) = data.split_first() else {
        return;
    };
    let route = &ROUTES[pick as usize % ROUTES.len()];
    let path = route.path.replace("{id}", "pi_4eC39HqLyjWDarjtT1zdp7dc");
    match decode(route.method.as_str(), &path, params) {
        Ok(_) => {}
        Err(e) => {
            let status = wire(Failure::Core(&e)).status;
            assert!(status.is_client_error(), "{} {}: {status} for {e:?}", route.method, route.path);
            if let CoreError::InvalidParam { param, code, .. } = &e {
                assert!(
                    param.as_deref().is_some_and(|p| !p.is_empty()) || *code == "parameter_invalid",
                    "an unnamed parameter error: {e:?}"
                );
            }
        }
    }
});
