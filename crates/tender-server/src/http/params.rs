//! Reading request parameters from a JSON body or a query string, with the contract's errors:
//! unknown parameters refused (`parameter_unknown`, nested names in bracket form), wrong types
//! named (`parameter_invalid_integer`, `parameter_invalid`), missing ones named
//! (`parameter_missing`), strings bounded.
//!
//! [`Params`] has a **form mode** for `/v1`, whose bodies arrive form-encoded (see
//! `crate::stripe::form`): every value is a string there, so a number, a boolean or a list is
//! read from its text (`"2000"`, `"true"`, an object keyed `"0"`, `"1"`…), with the same errors.

use serde_json::{Map, Value};
use tender_core::error::CoreError;
use tender_core::services::ListParams;
use tender_core::store::{CreatedRange, Field};

/// The longest string any parameter may be (CONTRACT §4.10).
pub const MAX_STRING: usize = 5000;

/// A JSON object being read, tracking the bracketed name of where it sits.
#[derive(Debug)]
pub struct Params {
    prefix: Option<String>,
    map: Map<String, Value>,
    /// Values came form-encoded: scalars are strings, lists index-keyed objects.
    form: bool,
}

fn invalid(param: String, message: String) -> CoreError {
    CoreError::invalid(param, "parameter_invalid", message)
}

impl Params {
    /// The top-level body: it must be an object (an empty body was turned into `{}` earlier),
    /// and may only hold `allowed` keys.
    pub fn body(value: Value, allowed: &[&str]) -> Result<Self, CoreError> {
        match value {
            Value::Object(map) => Self::checked(None, map, allowed, false),
            _ => Err(CoreError::InvalidParam {
                param: None,
                code: "invalid_json",
                message: "The request body must be a JSON object.".into(),
            }),
        }
    }

    /// The top-level parameters of a form-encoded request (`/v1`): the tree
    /// `crate::stripe::form::decode` built, holding only `allowed` keys.
    pub fn form(value: Value, allowed: &[&str]) -> Result<Self, CoreError> {
        match value {
            Value::Object(map) => Self::checked(None, map, allowed, true),
            _ => Err(CoreError::InvalidParam {
                param: None,
                code: "parameter_invalid",
                message: "The parameters must be form-encoded.".into(),
            }),
        }
    }

    /// Whether these parameters came form-encoded.
    pub fn is_form(&self) -> bool {
        self.form
    }

    fn checked(
        prefix: Option<String>,
        map: Map<String, Value>,
        allowed: &[&str],
        form: bool,
    ) -> Result<Self, CoreError> {
        let params = Self { prefix, map, form };
        if let Some(unknown) = params.map.keys().find(|k| !allowed.contains(&k.as_str())) {
            let name = params.name(unknown);
            let hint = did_you_mean(unknown, allowed)
                .map(|known| format!(" Did you mean {}?", params.name(known)))
                .unwrap_or_default();
            return Err(CoreError::invalid(
                name.clone(),
                "parameter_unknown",
                format!("Received unknown parameter: {name}.{hint}"),
            ));
        }
        Ok(params)
    }

    /// The wire name of `key` here: `key` or `prefix[key]`.
    pub fn name(&self, key: &str) -> String {
        match &self.prefix {
            Some(p) => format!("{p}[{key}]"),
            None => key.to_string(),
        }
    }

    fn take(&mut self, key: &str) -> Option<Value> {
        match self.map.remove(key) {
            None | Some(Value::Null) => None,
            Some(v) => Some(v),
        }
    }

    /// A list's value: an array, or in form mode an object keyed by indices (`"0"`, `"1"`…),
    /// returned as the array of its values in index order.
    fn take_list(&mut self, key: &str) -> Result<Option<Value>, CoreError> {
        match self.take(key) {
            Some(Value::Object(map)) if self.form => {
                let mut items = Vec::with_capacity(map.len());
                for (k, v) in map {
                    match k.parse::<usize>() {
                        Ok(i) if is_integer(&k) => items.push((i, v)),
                        _ => {
                            let name = self.name(key);
                            return Err(invalid(
                                name.clone(),
                                format!("{name} must be a list ({name}[0]=…, or {name}[]=…)."),
                            ));
                        }
                    }
                }
                items.sort_by_key(|(i, _)| *i);
                Ok(Some(Value::Array(
                    items.into_iter().map(|(_, v)| v).collect(),
                )))
            }
            other => Ok(other),
        }
    }

    /// A list of at most `max` strings (`expand`, `payment_method_types`).
    pub fn strings(&mut self, key: &str, max: usize) -> Result<Option<Vec<String>>, CoreError> {
        let name = self.name(key);
        match self.take_list(key)? {
            None => Ok(None),
            Some(Value::Array(items)) if items.len() <= max => items
                .into_iter()
                .enumerate()
                .map(|(i, item)| match item {
                    Value::String(s) if s.chars().count() <= MAX_STRING => Ok(s),
                    _ => Err(invalid(
                        format!("{name}[{i}]"),
                        format!("{name}[{i}] must be a string."),
                    )),
                })
                .collect::<Result<Vec<_>, _>>()
                .map(Some),
            Some(Value::Array(_)) => Err(invalid(
                name.clone(),
                format!("{name} can have at most {max} entries."),
            )),
            Some(_) => Err(invalid(name.clone(), format!("{name} must be a list."))),
        }
    }

    /// Sets `key` to the string `value` (a parser filling in what another parameter implied).
    pub fn insert_string(&mut self, key: &str, value: String) {
        self.map.insert(key.to_string(), Value::String(value));
    }

    /// The raw value of `key`, without taking it.
    pub fn peek(&self, key: &str) -> Option<&Value> {
        self.map.get(key)
    }

    /// Whether `key` was sent at all (even as null).
    pub fn has(&self, key: &str) -> bool {
        self.map.contains_key(key)
    }

    /// A required value: `parameter_missing` naming it when absent.
    pub fn required<T>(&self, key: &str, value: Option<T>) -> Result<T, CoreError> {
        value.ok_or_else(|| {
            let name = self.name(key);
            CoreError::invalid(
                name.clone(),
                "parameter_missing",
                format!("Missing required param: {name}."),
            )
        })
    }

    pub fn string(&mut self, key: &str) -> Result<Option<String>, CoreError> {
        match self.take(key) {
            None => Ok(None),
            Some(Value::String(s)) if s.chars().count() <= MAX_STRING => Ok(Some(s)),
            Some(Value::String(_)) => Err(invalid(
                self.name(key),
                format!("{} can be at most {MAX_STRING} characters.", self.name(key)),
            )),
            Some(_) => Err(invalid(
                self.name(key),
                format!("{} must be a string.", self.name(key)),
            )),
        }
    }

    /// For updates: absent → `None`; null or `""` → `Some(None)` (clear); else the string.
    pub fn clearable_string(&mut self, key: &str) -> Result<Option<Option<String>>, CoreError> {
        if !self.has(key) {
            return Ok(None);
        }
        Ok(Some(self.string(key)?.filter(|s| !s.is_empty())))
    }

    pub fn integer(&mut self, key: &str) -> Result<Option<i64>, CoreError> {
        match self.take(key) {
            None => Ok(None),
            Some(Value::Number(n)) if n.is_i64() => Ok(n.as_i64()),
            // Beyond i64: an integer all the same, and certainly too large for any bound.
            Some(Value::Number(n)) if n.is_u64() => Ok(Some(i64::MAX)),
            Some(Value::String(s)) if self.form && is_integer(&s) => {
                Ok(Some(s.parse::<i64>().unwrap_or(if s.starts_with('-') {
                    i64::MIN
                } else {
                    i64::MAX
                })))
            }
            Some(_) => {
                let name = self.name(key);
                Err(CoreError::invalid(
                    name.clone(),
                    "parameter_invalid_integer",
                    format!("Invalid integer: {name} must be a whole number."),
                ))
            }
        }
    }

    pub fn boolean(&mut self, key: &str) -> Result<Option<bool>, CoreError> {
        match self.take(key) {
            None => Ok(None),
            Some(Value::Bool(b)) => Ok(Some(b)),
            Some(Value::String(s)) if self.form && (s == "true" || s == "false") => {
                Ok(Some(s == "true"))
            }
            Some(_) => Err(invalid(
                self.name(key),
                format!("{} must be true or false.", self.name(key)),
            )),
        }
    }

    /// A nested object holding only `allowed` keys.
    pub fn object(&mut self, key: &str, allowed: &[&str]) -> Result<Option<Params>, CoreError> {
        match self.take(key) {
            None => Ok(None),
            Some(Value::Object(map)) => {
                Self::checked(Some(self.name(key)), map, allowed, self.form).map(Some)
            }
            Some(_) => Err(invalid(
                self.name(key),
                format!("{} must be an object.", self.name(key)),
            )),
        }
    }

    /// An array of at most `max` objects, each holding only `allowed` keys (named
    /// `key[0]`, `key[1]`…).
    pub fn objects(
        &mut self,
        key: &str,
        allowed: &[&str],
        max: usize,
    ) -> Result<Option<Vec<Params>>, CoreError> {
        let name = self.name(key);
        let form = self.form;
        match self.take_list(key)? {
            None => Ok(None),
            Some(Value::Array(items)) if items.len() <= max => items
                .into_iter()
                .enumerate()
                .map(|(i, item)| match item {
                    Value::Object(map) => {
                        Self::checked(Some(format!("{name}[{i}]")), map, allowed, form)
                    }
                    _ => Err(invalid(
                        format!("{name}[{i}]"),
                        format!("{name}[{i}] must be an object."),
                    )),
                })
                .collect::<Result<Vec<_>, _>>()
                .map(Some),
            Some(Value::Array(_)) => Err(invalid(
                name.clone(),
                format!("{name} can have at most {max} entries."),
            )),
            Some(_) => Err(invalid(name.clone(), format!("{name} must be an array."))),
        }
    }

    /// `metadata`: an object of strings (null or `""` values remove keys on update).
    pub fn metadata(&mut self) -> Result<Option<Vec<(String, String)>>, CoreError> {
        let name = self.name("metadata");
        match self.map.remove("metadata") {
            None => Ok(None),
            Some(Value::Null) => Ok(Some(Vec::new())),
            // Stripe's `metadata=` clears every key; Tender merges, so it would change
            // nothing: refused rather than silently ignored.
            Some(Value::String(s)) if self.form && s.is_empty() => Err(invalid(
                name,
                "To remove metadata keys, send each as metadata[key]= (an empty value).".into(),
            )),
            Some(Value::Object(map)) => {
                if map.len() > tender_core::metadata::MAX_KEYS {
                    return Err(invalid(name, "Metadata can have at most 50 keys.".into()));
                }
                let mut out = Vec::with_capacity(map.len());
                for (k, v) in map {
                    match v {
                        Value::String(s) => out.push((k, s)),
                        Value::Null => out.push((k, String::new())),
                        _ => return Err(invalid(name, "Metadata values must be strings.".into())),
                    }
                }
                Ok(Some(out))
            }
            Some(_) => Err(invalid(
                name,
                "metadata must be an object of strings.".into(),
            )),
        }
    }
}

/// A parsed query string for `GET` lists.
#[derive(Debug, Default)]
pub struct Query {
    pairs: Vec<(String, String)>,
}

impl Query {
    pub fn parse(raw: Option<&str>, allowed: &[&str]) -> Result<Self, CoreError> {
        let pairs: Vec<(String, String)> = form_urlencoded::parse(raw.unwrap_or("").as_bytes())
            .map(|(k, v)| (k.into_owned(), v.into_owned()))
            .collect();
        const COMMON: &[&str] = &[
            "limit",
            "starting_after",
            "ending_before",
            "created",
            "created[gt]",
            "created[gte]",
            "created[lt]",
            "created[lte]",
        ];
        let mut seen = std::collections::HashSet::new();
        for (k, v) in &pairs {
            if !COMMON.contains(&k.as_str()) && !allowed.contains(&k.as_str()) {
                let known: Vec<&str> = COMMON.iter().chain(allowed).copied().collect();
                let hint = did_you_mean(k, &known)
                    .map(|known| format!(" Did you mean {known}?"))
                    .unwrap_or_default();
                return Err(CoreError::invalid(
                    k.clone(),
                    "parameter_unknown",
                    format!("Received unknown parameter: {k}.{hint}"),
                ));
            }
            if !seen.insert(k.as_str()) {
                return Err(invalid(k.clone(), format!("{k} was given more than once.")));
            }
            if v.chars().count() > MAX_STRING {
                return Err(invalid(k.clone(), format!("{k} is too long.")));
            }
            // PostgreSQL cannot compare text with NUL in it: a 500 there (found by the abuse tests).
            if v.contains('\0') {
                return Err(invalid(
                    k.clone(),
                    format!("{k} must not contain NUL characters."),
                ));
            }
        }
        Ok(Self { pairs })
    }

    pub fn get(&self, key: &str) -> Option<&str> {
        self.pairs
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    }

    fn int(&self, key: &str) -> Result<Option<i64>, CoreError> {
        match self.get(key) {
            None => Ok(None),
            Some(v) => v.parse::<i64>().map(Some).map_err(|_| {
                CoreError::invalid(
                    key,
                    "parameter_invalid_integer",
                    format!("Invalid integer: {key}."),
                )
            }),
        }
    }

    /// `limit` (1–100, default 10), cursors and `created[…]`.
    pub fn list_params(&self) -> Result<tender_core::services::ListParams, CoreError> {
        let limit = match self.int("limit")? {
            None => 10,
            Some(n) if (1..=100).contains(&n) => n as u32,
            Some(_) => {
                return Err(invalid(
                    "limit".into(),
                    "limit must be between 1 and 100.".into(),
                ))
            }
        };
        Ok(tender_core::services::ListParams {
            limit,
            starting_after: self.get("starting_after").map(str::to_string),
            ending_before: self.get("ending_before").map(str::to_string),
            created: self.range("created")?,
            available_on: CreatedRange::default(),
        })
    }

    /// The bounds `name`, `name[gt]`, `name[gte]`, `name[lt]`, `name[lte]` give (Unix seconds;
    /// `name` alone is an exact time).
    pub fn range(&self, name: &str) -> Result<CreatedRange, CoreError> {
        let exact = self.int(name)?;
        Ok(CreatedRange {
            gt: self.int(&format!("{name}[gt]"))?,
            gte: self.int(&format!("{name}[gte]"))?.or(exact),
            lt: self.int(&format!("{name}[lt]"))?,
            lte: self.int(&format!("{name}[lte]"))?.or(exact),
        })
    }
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
    fn unknown_nested_parameter_is_named_in_brackets() {
        let mut p = Params::body(
            json!({"payment_method": {"card": {"numbr": "1"}}}),
            &["payment_method"],
        )
        .unwrap();
        let mut pm = p
            .object("payment_method", &["type", "card"])
            .unwrap()
            .unwrap();
        let err = pm.object("card", &["number"]).unwrap_err();
        assert_eq!(
            code(err),
            (
                Some("payment_method[card][numbr]".into()),
                "parameter_unknown"
            )
        );
    }

    #[test]
    fn non_integer_amount_is_parameter_invalid_integer() {
        for v in [json!(10.5), json!("100"), json!(true)] {
            let mut p = Params::body(json!({ "amount": v }), &["amount"]).unwrap();
            assert_eq!(
                code(p.integer("amount").unwrap_err()),
                (Some("amount".into()), "parameter_invalid_integer")
            );
        }
    }

    #[test]
    fn query_limits_and_unknowns() {
        assert!(Query::parse(Some("limit=0"), &[])
            .unwrap()
            .list_params()
            .is_err());
        assert!(Query::parse(Some("limit=101"), &[])
            .unwrap()
            .list_params()
            .is_err());
        assert_eq!(
            Query::parse(Some("limit=100"), &[])
                .unwrap()
                .list_params()
                .unwrap()
                .limit,
            100
        );
        assert_eq!(
            code(Query::parse(Some("colour=red"), &[]).unwrap_err()).1,
            "parameter_unknown"
        );
    }
}

/// The known parameter an unknown one was probably meant to be: Stripe's names for what Tender
/// calls otherwise, or a known name within two typing mistakes.
/// What a list's query string reads into: the page, and the filters on indexed fields.
pub type Listing = (ListParams, Vec<(Field, String)>);

/// An optional `-` and 1 to 20 digits: an integer, however large (a larger one is still an
/// integer, and out of every bound).
fn is_integer(s: &str) -> bool {
    let digits = s.strip_prefix('-').unwrap_or(s);
    !digits.is_empty() && digits.len() <= 20 && digits.bytes().all(|b| b.is_ascii_digit())
}

/// A list's query with no filter of its own: the page alone.
pub fn page_only(query: Option<&str>) -> Result<Listing, CoreError> {
    Ok((Query::parse(query, &[])?.list_params()?, Vec::new()))
}

pub fn did_you_mean<'a>(unknown: &str, known: &[&'a str]) -> Option<&'a str> {
    const STRIPE_NAMES: [(&str, &str); 4] = [
        ("charge", "payment"),
        ("payment_intent", "payment"),
        ("source", "payment_method"),
        ("email_address", "email"),
    ];
    if let Some((_, ours)) = STRIPE_NAMES.iter().find(|(theirs, _)| *theirs == unknown) {
        if let Some(k) = known.iter().find(|k| *k == ours) {
            return Some(k);
        }
    }
    known
        .iter()
        .map(|k| (strsim::levenshtein(unknown, k), *k))
        .filter(|(distance, k)| *distance <= 2 && *distance < k.len())
        .min()
        .map(|(_, k)| k)
}

#[cfg(test)]
mod did_you_mean_tests {
    use super::did_you_mean;

    #[test]
    fn close_names_and_stripe_names_are_suggested() {
        let known = ["amount", "currency", "payment", "description"];
        assert_eq!(did_you_mean("ammount", &known), Some("amount"));
        assert_eq!(did_you_mean("curency", &known), Some("currency"));
        assert_eq!(did_you_mean("charge", &known), Some("payment"));
        assert_eq!(did_you_mean("color", &known), None);
        assert_eq!(
            did_you_mean("source", &known),
            None,
            "not offered when not taken here"
        );
    }
}
