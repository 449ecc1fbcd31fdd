//! Stripe's wire format for parameters: `application/x-www-form-urlencoded` pairs whose keys
//! use bracket notation, read into the same JSON tree `/v2` parses its bodies into, so one
//! parameter reader ([`crate::http::params::Params`] in its form mode) serves both dialects.
//!
//! | key | tree |
//! |---|---|
//! | `amount=2000` | `{"amount": "2000"}` (every value is a string; the reader converts) |
//! | `metadata[order]=1` | `{"metadata": {"order": "1"}}` |
//! | `items[0][price]=price_1` | `{"items": {"0": {"price": "price_1"}}}` |
//! | `expand[]=a&expand[]=b` | `{"expand": {"0": "a", "1": "b"}}` (as `expand[0]=a&expand[1]=b`) |
//! | `metadata[k]=` | `{"metadata": {"k": ""}}` (an empty value: on update, removes the key) |
//!
//! Arrays are kept as objects keyed by their indices: a metadata key may be a number too, and
//! only the reader knows which parameters are lists (`Params::objects`, `Params::strings`
//! accept such objects in form mode). What is refused here, with `400 parameter_invalid`
//! naming the key: a key that is both a value and a container (`a=1&a[b]=2`), the same key
//! twice, unbalanced brackets, nesting deeper than [`MAX_DEPTH`], an index above
//! [`MAX_INDEX`]. Percent-decoding is `form_urlencoded`'s (the `url` crate's).

use serde_json::{Map, Value};
use tender_core::error::CoreError;

/// Deepest nesting of brackets (`a[b][c][d][e]` is 4).
pub const MAX_DEPTH: usize = 5;
/// Largest array index (Stripe's lists of items are far shorter).
pub const MAX_INDEX: usize = 999;

fn invalid(key: &str, message: String) -> CoreError {
    CoreError::invalid(key.to_string(), "parameter_invalid", message)
}

/// `raw` (a body or a query string) as a JSON object tree of strings.
pub fn decode(raw: &[u8]) -> Result<Value, CoreError> {
    let mut root = Map::new();
    for (key, value) in form_urlencoded::parse(raw) {
        insert(&mut root, &key, value.into_owned())?;
    }
    Ok(Value::Object(root))
}

/// Pairs (already percent-decoded) as a JSON object tree of strings.
pub fn decode_pairs<'a>(
    pairs: impl IntoIterator<Item = (&'a str, &'a str)>,
) -> Result<Value, CoreError> {
    let mut root = Map::new();
    for (key, value) in pairs {
        insert(&mut root, key, value.to_string())?;
    }
    Ok(Value::Object(root))
}

/// `key` split into its name and bracketed segments: `items[0][price]` → `items`, `0`, `price`.
fn segments(key: &str) -> Result<Vec<&str>, CoreError> {
    let bad = || invalid(key, format!("Invalid parameter name: {key}."));
    let (name, mut rest) = match key.find('[') {
        Some(i) => (&key[..i], &key[i..]),
        None => (key, ""),
    };
    if name.is_empty() || name.contains(']') {
        return Err(bad());
    }
    let mut out = vec![name];
    while !rest.is_empty() {
        let inner = rest.strip_prefix('[').ok_or_else(bad)?;
        let close = inner.find(']').ok_or_else(bad)?;
        let segment = &inner[..close];
        if segment.contains('[') {
            return Err(bad());
        }
        out.push(segment);
        rest = &inner[close + 1..];
    }
    if out.len() > MAX_DEPTH + 1 {
        return Err(invalid(
            key,
            format!("{key} is nested more than {MAX_DEPTH} levels deep."),
        ));
    }
    Ok(out)
}

fn insert(root: &mut Map<String, Value>, key: &str, value: String) -> Result<(), CoreError> {
    let path = segments(key)?;
    let conflict = || {
        invalid(
            key,
            format!("{key} was given more than once, or both as a value and with brackets."),
        )
    };
    let mut node = root;
    let last = path.len() - 1;
    for (depth, segment) in path.iter().enumerate() {
        // `[]` appends: the next index of the list being built.
        let name = if segment.is_empty() && depth > 0 {
            node.len().to_string()
        } else {
            if depth > 0 && segment.bytes().all(|b| b.is_ascii_digit()) {
                let index: usize = segment.parse().unwrap_or(usize::MAX);
                if index > MAX_INDEX {
                    return Err(invalid(
                        key,
                        format!("{key}: an index can be at most {MAX_INDEX}."),
                    ));
                }
            }
            segment.to_string()
        };
        if depth == last {
            if node.contains_key(&name) {
                return Err(conflict());
            }
            node.insert(name, Value::String(value));
            return Ok(());
        }
        let child = node
            .entry(name)
            .or_insert_with(|| Value::Object(Map::new()));
        node = match child {
            Value::Object(map) => map,
            _ => return Err(conflict()),
        };
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn code(e: CoreError) -> (Option<String>, &'static str) {
        match e {
            CoreError::InvalidParam { param, code, .. } => (param, code),
            other => panic!("unexpected {other:?}"),
        }
    }

    #[test]
    fn brackets_nest_and_both_array_spellings_read_alike() {
        let v = decode(
            b"amount=2000&metadata[order]=1&metadata[empty]=&items[0][price]=price_1&items[0][quantity]=2&items[1][price]=price_2&expand[]=latest_charge&expand[]=customer",
        )
        .unwrap();
        assert_eq!(
            v,
            json!({
                "amount": "2000",
                "metadata": {"order": "1", "empty": ""},
                "items": {"0": {"price": "price_1", "quantity": "2"}, "1": {"price": "price_2"}},
                "expand": {"0": "latest_charge", "1": "customer"},
            })
        );
        assert_eq!(
            decode(b"expand[0]=latest_charge&expand[1]=customer").unwrap()["expand"],
            v["expand"]
        );
    }

    #[test]
    fn percent_encoding_is_decoded_in_keys_and_values() {
        let v = decode(b"metadata%5Bk%5D=a%20b%26c&description=caf%C3%A9+ok").unwrap();
        assert_eq!(
            v,
            json!({"metadata": {"k": "a b&c"}, "description": "café ok"})
        );
    }

    #[test]
    fn conflicts_malformed_names_and_bounds_are_refused_naming_the_key() {
        for (raw, key) in [
            ("a=1&a[b]=2", "a[b]"),
            ("a[b]=2&a=1", "a"),
            ("a=1&a=2", "a"),
            ("a[b=1", "a[b"),
            ("a]b=1", "a]b"),
            ("[a]=1", "[a]"),
            ("a[b]c=1", "a[b]c"),
            ("a[1][2][3][4][5][6]=1", "a[1][2][3][4][5][6]"),
            ("items[1000][price]=x", "items[1000][price]"),
        ] {
            let err = decode(raw.as_bytes()).unwrap_err();
            assert_eq!(
                code(err),
                (Some(key.to_string()), "parameter_invalid"),
                "{raw}"
            );
        }
    }

    #[test]
    fn an_empty_body_is_an_empty_object() {
        assert_eq!(decode(b"").unwrap(), json!({}));
    }
}
