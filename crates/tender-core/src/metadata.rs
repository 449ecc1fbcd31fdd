//! Metadata: the merchant's own key/value strings on payments, customers, refunds and payment
//! methods, with the limits of CONTRACT §1 and the merge rule of updates. Pure.

use std::collections::BTreeMap;

use crate::error::CoreError;

/// Stored metadata: sorted so that equal maps serialise to equal bytes.
pub type Metadata = BTreeMap<String, String>;

pub const MAX_KEYS: usize = 50;
pub const MAX_KEY_LEN: usize = 40;
pub const MAX_VALUE_LEN: usize = 500;

fn invalid(message: String) -> CoreError {
    CoreError::invalid("metadata", "parameter_invalid", message)
}

fn check_entry(key: &str, value: &str) -> Result<(), CoreError> {
    if key.is_empty() || key.chars().count() > MAX_KEY_LEN || key.contains(['[', ']']) {
        return Err(invalid(format!(
            "Metadata keys must be 1 to {MAX_KEY_LEN} characters without '[' or ']'."
        )));
    }
    if value.chars().count() > MAX_VALUE_LEN {
        return Err(invalid(format!(
            "Metadata values can be at most {MAX_VALUE_LEN} characters."
        )));
    }
    Ok(())
}

/// Metadata given on creation: empty values are dropped, limits enforced.
pub fn on_create(input: Vec<(String, String)>) -> Result<Metadata, CoreError> {
    merge(&Metadata::new(), input)
}

/// Metadata given on update: keys merge into `current`, a key set to `""` is removed.
pub fn merge(current: &Metadata, input: Vec<(String, String)>) -> Result<Metadata, CoreError> {
    if input.len() > MAX_KEYS {
        return Err(invalid(format!(
            "Metadata can have at most {MAX_KEYS} keys."
        )));
    }
    let mut out = current.clone();
    for (key, value) in input {
        check_entry(&key, &value)?;
        if value.is_empty() {
            out.remove(&key);
        } else {
            out.insert(key, value);
        }
    }
    if out.len() > MAX_KEYS {
        return Err(invalid(format!(
            "Metadata can have at most {MAX_KEYS} keys."
        )));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kv(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn update_merges_and_empty_value_removes() {
        let m = on_create(kv(&[("a", "1"), ("b", "2")])).expect("valid");
        let m = merge(&m, kv(&[("b", ""), ("c", "3")])).expect("valid");
        assert_eq!(m, on_create(kv(&[("a", "1"), ("c", "3")])).expect("valid"));
    }

    #[test]
    fn limits_are_enforced() {
        assert!(on_create(kv(&[("a[b]", "1")])).is_err());
        assert!(on_create(vec![("k".repeat(41), "v".into())]).is_err());
        assert!(on_create(vec![("k".into(), "v".repeat(501))]).is_err());
        let many: Vec<_> = (0..51)
            .map(|i| (format!("k{i}"), "v".to_string()))
            .collect();
        assert!(on_create(many).is_err());
        let full: Vec<_> = (0..50)
            .map(|i| (format!("k{i}"), "v".to_string()))
            .collect();
        let m = on_create(full).expect("50 keys are allowed");
        assert!(merge(&m, kv(&[("one_more", "v")])).is_err());
    }
}
