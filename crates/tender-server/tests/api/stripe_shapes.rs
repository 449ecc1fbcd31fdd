//! Checks an object `/v1` answers against Stripe's published shape of it
//! (`tests/fixtures/stripe-shapes.json`, from stripe-node 23.1.0's declarations, which Stripe
//! generates from its OpenAPI spec; `scripts/stripe-shapes.py` regenerates it): every field
//! Stripe always sends is present, no field Stripe does not declare, `null` only where Stripe
//! allows it, each value of the declared kind and, for enums, one of the declared values;
//! nested objects likewise, where the fixture declares them.

use std::sync::OnceLock;

use serde_json::Value;

fn shapes() -> &'static Value {
    static SHAPES: OnceLock<Value> = OnceLock::new();
    SHAPES.get_or_init(|| {
        serde_json::from_str(include_str!("../fixtures/stripe-shapes.json"))
            .expect("stripe-shapes.json")
    })
}

/// Panics with every difference between `value` and Stripe's `interface` (e.g.
/// `"PaymentIntent"`), fields named by their path.
pub fn assert_shape(interface: &str, value: &Value) {
    let mut problems = Vec::new();
    check(interface, value, interface, &mut problems);
    assert!(
        problems.is_empty(),
        "not Stripe's {interface}:\n  {}\nin {value:#}",
        problems.join("\n  ")
    );
}

/// The fixture's interface a field's declared type names, looked up from `within` outwards
/// (`NextAction.RedirectToUrl` inside `PaymentIntent.NextAction` is
/// `PaymentIntent.NextAction.RedirectToUrl`).
fn nested(within: &str, ts: &str) -> Option<String> {
    let interfaces = shapes()["interfaces"].as_object()?;
    let name = ts
        .split('|')
        .map(str::trim)
        .find(|t| *t != "null")?
        .trim_start_matches("Array<")
        .trim_end_matches('>');
    let mut prefix = Some(within);
    while let Some(p) = prefix {
        let candidate = format!("{p}.{name}");
        if interfaces.contains_key(&candidate) {
            return Some(candidate);
        }
        prefix = p.rsplit_once('.').map(|(p, _)| p);
    }
    interfaces.contains_key(name).then(|| name.to_string())
}

fn check(interface: &str, value: &Value, path: &str, problems: &mut Vec<String>) {
    let Some(fields) = shapes()["interfaces"][interface].as_object() else {
        problems.push(format!("{path}: no interface {interface} in the fixture"));
        return;
    };
    let Some(object) = value.as_object() else {
        problems.push(format!("{path}: not an object"));
        return;
    };
    // An interface declared without fields (`Event.Data.Object`) takes any object: its
    // content is checked as what it is (the test checks an event's object as its own shape).
    if fields.is_empty() {
        return;
    }
    for (name, decl) in fields {
        if !decl["optional"].as_bool().unwrap_or(false) && !object.contains_key(name) {
            problems.push(format!("{path}.{name}: missing"));
        }
    }
    for (name, v) in object {
        let here = format!("{path}.{name}");
        let Some(decl) = fields.get(name) else {
            problems.push(format!("{here}: not a field of Stripe's {interface}"));
            continue;
        };
        if v.is_null() {
            if !decl["nullable"].as_bool().unwrap_or(false) {
                problems.push(format!("{here}: null, which Stripe never sends"));
            }
            continue;
        }
        let kind = decl["kind"].as_str().unwrap_or("any");
        let ok = match kind {
            "string" => v.is_string(),
            "number" => v.is_number(),
            "boolean" => v.is_boolean(),
            "object" => v.is_object(),
            "array" => v.is_array(),
            "string_or_object" => v.is_string() || v.is_object(),
            _ => true,
        };
        if !ok {
            problems.push(format!("{here}: {v} is not a {kind}"));
            continue;
        }
        if let (Some(allowed), Some(s)) = (decl["enum"].as_array(), v.as_str()) {
            if !allowed.iter().any(|a| a == s) {
                problems.push(format!("{here}: {s:?} is not one of {allowed:?}"));
            }
        }
        let ts = decl["ts"].as_str().unwrap_or_default();
        if kind == "object" {
            if let Some(inner) = nested(interface, ts) {
                check(&inner, v, &here, problems);
            }
        }
        if kind == "array" {
            if let Some(inner) = nested(interface, ts) {
                for (i, item) in v.as_array().into_iter().flatten().enumerate() {
                    if item.is_object() {
                        check(&inner, item, &format!("{here}[{i}]"), problems);
                    }
                }
            }
        }
    }
}

#[test]
fn the_check_finds_a_missing_field_a_stray_one_a_wrong_null_and_a_value_outside_an_enum() {
    let mut problems = Vec::new();
    let customer = serde_json::json!({"id": "cus_1", "object": "customer", "created": 1, "livemode": false,
        "metadata": {}, "balance": 0, "default_source": null, "description": null, "email": null,
        "invoice_settings": {"custom_fields": null, "default_payment_method": null, "footer": null, "rendering_options": null},
        "shipping": null, "discount": null});
    check("Customer", &customer, "Customer", &mut problems);
    assert_eq!(problems, Vec::<String>::new(), "a complete customer passes");
    let mut bad = customer.clone();
    bad.as_object_mut().unwrap().remove("livemode");
    bad["colour"] = "red".into();
    bad["balance"] = Value::Null;
    bad["tax_exempt"] = "sometimes".into();
    bad["invoice_settings"]["footer"] = 3.into();
    check("Customer", &bad, "Customer", &mut problems);
    problems.sort();
    assert_eq!(
        problems,
        [
            "Customer.balance: null, which Stripe never sends",
            "Customer.colour: not a field of Stripe's Customer",
            "Customer.invoice_settings.footer: 3 is not a string",
            "Customer.livemode: missing",
            "Customer.tax_exempt: \"sometimes\" is not one of [String(\"exempt\"), String(\"none\"), String(\"reverse\")]",
        ]
    );
}
