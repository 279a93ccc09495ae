//! A model profile and the checks of what it is given: its name, endpoint,
//! model, parameters and prices.

use lf_core::{ErrorCode, LenserId, LfError, LfResult, ModelProfileId, Timestamp};
use serde_json::{Value, json};
use uuid::Uuid;

use crate::model::{ConnectionRef, JsonObject};

/// The operator's endpoint of the `LENSERFIGHT_MODEL_*` settings: where a
/// bare model name is asked.
pub const DEFAULT_ENDPOINT: &str = "default";
/// The provider of a saved connection a profile may name as its endpoint:
/// an OpenAI-compatible chat-completions API, its `base_url` in the
/// connection's settings and its API key as the connection's secret.
pub const MODEL_PROVIDER: &str = "openai_compatible";
/// Highest price per million tokens accepted.
pub const MAX_PRICE: f64 = 1_000_000.0;
/// Most stop sequences.
pub const MAX_STOPS: usize = 4;
/// Longest stop sequence, in characters.
pub const MAX_STOP_CHARS: usize = 64;
/// Highest `max_tokens`.
pub const MAX_TOKENS: u32 = 1_000_000;
/// Longest profile name.
const MAX_NAME_CHARS: usize = 64;
/// Longest model name (as the model client accepts).
const MAX_MODEL_CHARS: usize = 200;
/// The prefix of an endpoint that is a saved connection.
const CONNECTION_PREFIX: &str = "connection:";

lf_core::word_enum!(
    /// Who may read and use a profile besides its owner.
    ProfileVisibility, "visibility", [
        /// Its owner only.
        Private = "private",
        /// Everyone reads and uses it (its connection's secret stays its owner's).
        Public = "public",
    ]
);

/// A profile's name: 1 to 64 characters of letters, digits and `.`, `_`,
/// `-`, `:`, `/`, not a UUID (an id names a profile already). Unique among
/// its owner's profiles that are not archived.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct ProfileName(String);

impl ProfileName {
    pub fn parse(s: &str) -> LfResult<Self> {
        let s = s.trim();
        let ok = !s.is_empty()
            && s.chars().count() <= MAX_NAME_CHARS
            && s.chars().all(|c| c.is_ascii_alphanumeric() || "._-:/".contains(c));
        if !ok || Uuid::parse_str(s).is_ok() {
            return Err(LfError::invalid_argument(format!(
                "name must be 1 to {MAX_NAME_CHARS} characters of letters, digits and . _ - : / and not a UUID, such as gpt-4o-cheap; got {}.",
                LfError::excerpt(s)
            ))
            .with_field("name"));
        }
        Ok(Self(s.to_owned()))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// Where a profile's model is asked.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Endpoint {
    /// An endpoint the operator declares (`default` or a `[[models]]` name).
    Operator(String),
    /// A saved connection of the profile's owner, provider `openai_compatible`.
    Connection(ConnectionRef),
}

impl Endpoint {
    /// `connection:<ref>` or an operator endpoint's name (not checked
    /// against the configuration here: see `ProfileService`).
    pub fn parse(s: &str) -> LfResult<Self> {
        let s = s.trim();
        if let Some(r) = s.strip_prefix(CONNECTION_PREFIX) {
            return Ok(Self::Connection(ConnectionRef::parse("endpoint", r.trim())?));
        }
        let ok = !s.is_empty()
            && s.len() <= MAX_NAME_CHARS
            && s.chars().all(|c| c.is_ascii_alphanumeric() || "._-".contains(c));
        if !ok {
            return Err(LfError::invalid_argument(format!(
                "endpoint must be an operator endpoint's name (default, or one list_model_profiles shows) or connection:<ref> for a saved {MODEL_PROVIDER} connection of yours; got {}.",
                LfError::excerpt(s)
            ))
            .with_field("endpoint"));
        }
        Ok(Self::Operator(s.to_owned()))
    }

    /// The wire form [`Endpoint::parse`] reads.
    pub fn as_wire(&self) -> String {
        match self {
            Self::Operator(name) => name.clone(),
            Self::Connection(r) => format!("{CONNECTION_PREFIX}{r}"),
        }
    }
}

/// Checks a model name: 1 to 200 characters without control characters.
pub fn parse_model_name(field: &'static str, s: &str) -> LfResult<String> {
    let s = s.trim();
    if s.is_empty() || s.chars().count() > MAX_MODEL_CHARS || s.chars().any(char::is_control) {
        return Err(LfError::invalid_argument(format!(
            "{field} must be a model name of 1 to {MAX_MODEL_CHARS} characters without control characters, such as gpt-4o-mini or llama3.2."
        ))
        .with_field(field));
    }
    Ok(s.to_owned())
}

/// The sampling parameters a profile sends; `None` (or no stops): the
/// endpoint's default.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Parameters {
    /// 0 to 2.
    pub temperature: Option<f64>,
    /// Above 0, at most 1.
    pub top_p: Option<f64>,
    /// 1 to [`MAX_TOKENS`].
    pub max_tokens: Option<u32>,
    pub seed: Option<i64>,
    /// At most [`MAX_STOPS`], each 1 to [`MAX_STOP_CHARS`] characters.
    pub stop: Vec<String>,
}

impl Parameters {
    /// Checks each parameter, naming it (`parameters.temperature`) when out
    /// of range.
    pub fn check(self) -> LfResult<Self> {
        let bad = |field: &'static str, m: &str| {
            Err(LfError::invalid_argument(format!("parameters.{field} {m}")).with_field("parameters"))
        };
        if let Some(t) = self.temperature
            && !(t.is_finite() && (0.0..=2.0).contains(&t))
        {
            return bad("temperature", "must be between 0 and 2.");
        }
        if let Some(t) = self.top_p
            && !(t.is_finite() && t > 0.0 && t <= 1.0)
        {
            return bad("top_p", "must be above 0 and at most 1.");
        }
        if let Some(n) = self.max_tokens
            && !(1..=MAX_TOKENS).contains(&n)
        {
            return bad("max_tokens", &format!("must be between 1 and {MAX_TOKENS}."));
        }
        if self.stop.len() > MAX_STOPS
            || self.stop.iter().any(|s| s.is_empty() || s.chars().count() > MAX_STOP_CHARS)
        {
            return bad(
                "stop",
                &format!("must be at most {MAX_STOPS} sequences of 1 to {MAX_STOP_CHARS} characters."),
            );
        }
        Ok(self)
    }

    /// The parameters as a JSON object (only those set), as stores keep them.
    pub fn to_object(&self) -> JsonObject {
        let mut o = JsonObject::new();
        let mut put = |k: &str, v: Option<Value>| {
            if let Some(v) = v {
                o.insert(k.to_owned(), v);
            }
        };
        put("temperature", self.temperature.map(|v| json!(v)));
        put("top_p", self.top_p.map(|v| json!(v)));
        put("max_tokens", self.max_tokens.map(|v| json!(v)));
        put("seed", self.seed.map(|v| json!(v)));
        put("stop", (!self.stop.is_empty()).then(|| json!(self.stop)));
        o
    }

    /// The parameters of a JSON object as [`Parameters::to_object`] writes
    /// it, checked. INVALID_ARGUMENT on `parameters` for an unknown key or a
    /// value of the wrong type.
    pub fn from_object(o: &JsonObject) -> LfResult<Self> {
        let bad = |k: &str, want: &str| {
            LfError::invalid_argument(format!("parameters.{k} must be {want}.")).with_field("parameters")
        };
        let mut p = Parameters::default();
        for (k, v) in o {
            match k.as_str() {
                "temperature" => p.temperature = Some(v.as_f64().ok_or_else(|| bad(k, "a number"))?),
                "top_p" => p.top_p = Some(v.as_f64().ok_or_else(|| bad(k, "a number"))?),
                "max_tokens" => {
                    let n = v.as_u64().ok_or_else(|| bad(k, "a whole number"))?;
                    p.max_tokens = Some(u32::try_from(n).unwrap_or(u32::MAX));
                }
                "seed" => p.seed = Some(v.as_i64().ok_or_else(|| bad(k, "a whole number"))?),
                "stop" => {
                    let items = v.as_array().ok_or_else(|| bad(k, "a list of strings"))?;
                    p.stop = items
                        .iter()
                        .map(|i| i.as_str().map(str::to_owned))
                        .collect::<Option<_>>()
                        .ok_or_else(|| bad(k, "a list of strings"))?;
                }
                other => {
                    return Err(LfError::invalid_argument(format!(
                        "parameters has no {}: it takes temperature, top_p, max_tokens, seed and stop.",
                        LfError::excerpt(other)
                    ))
                    .with_field("parameters"));
                }
            }
        }
        p.check()
    }
}

/// What a million tokens cost on a profile, in the operator's currency.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Prices {
    pub per_million_input: f64,
    pub per_million_output: f64,
}

impl Prices {
    /// Each price from 0 to [`MAX_PRICE`], a finite number.
    pub fn new(input: f64, output: f64) -> LfResult<Self> {
        for (field, v) in [("price_per_million_input", input), ("price_per_million_output", output)] {
            if !(v.is_finite() && (0.0..=MAX_PRICE).contains(&v)) {
                return Err(LfError::invalid_argument(format!(
                    "{field} must be a price from 0 to {MAX_PRICE} per million tokens; got {v}."
                ))
                .with_field(field));
            }
        }
        Ok(Self { per_million_input: input, per_million_output: output })
    }
}

/// A saved profile.
#[derive(Clone, Debug, PartialEq)]
pub struct ModelProfile {
    pub id: ModelProfileId,
    pub owner: LenserId,
    pub name: ProfileName,
    pub endpoint: Endpoint,
    pub model: String,
    pub parameters: Parameters,
    pub prices: Prices,
    pub visibility: ProfileVisibility,
    pub created_at: Timestamp,
    pub updated_at: Timestamp,
    /// Set once archived: it is no longer listed, named or used.
    pub archived_at: Option<Timestamp>,
}

/// An endpoint the operator declares, as profiles see it: its name and the
/// model it asks when a profile or request names none.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OperatorEndpoint {
    pub name: String,
    pub model: Option<String>,
}

impl OperatorEndpoint {
    /// The stable id of the operator's profile of this endpoint (its name
    /// and model): the same on every server with the same configuration.
    pub fn profile_id(&self) -> ModelProfileId {
        const NAMESPACE: Uuid = Uuid::from_u128(0x6c66_6d6f_6465_6c73_8000_0000_0000_0001);
        ModelProfileId::from_uuid(Uuid::new_v5(&NAMESPACE, self.name.as_bytes()))
    }
}

/// The NOT_FOUND of a profile the caller cannot use (missing, archived,
/// or not the caller's to read: the same answer).
pub fn profile_not_found(field: &'static str, named: &str) -> LfError {
    LfError::new(
        ErrorCode::NotFound,
        format!(
            "No model profile {} you can use. list_model_profiles shows the operator's, yours and the public ones.",
            LfError::excerpt(named)
        ),
    )
    .with_field(field)
}

/// The CONFLICT of a name the owner already gives another profile.
pub fn profile_taken(name: &ProfileName) -> LfError {
    LfError::conflict(format!(
        "You already have a model profile named {}. Pick another name, or update or archive that one.",
        LfError::excerpt(name.as_str())
    ))
    .with_field("name")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The `details.field` of `e`.
    fn field(e: &LfError) -> Option<&str> {
        e.details().iter().find(|(k, _)| k == "field").and_then(|(_, v)| match v {
            lf_core::DetailValue::Str(s) => Some(s.as_str()),
            _ => None,
        })
    }

    #[test]
    fn names_endpoints_and_models_are_checked() {
        assert_eq!(ProfileName::parse(" gpt-4o:cheap/v1 ").unwrap().as_str(), "gpt-4o:cheap/v1");
        for bad in ["", "a b", "x".repeat(65).as_str(), "45000000-0001-0004-0001-00000000000a"] {
            assert_eq!(field(&ProfileName::parse(bad).unwrap_err()), Some("name"), "{bad}");
        }
        assert_eq!(Endpoint::parse("default").unwrap(), Endpoint::Operator("default".into()));
        let c = Endpoint::parse("connection:openai").unwrap();
        assert_eq!(c.as_wire(), "connection:openai");
        assert!(Endpoint::parse("http://x").is_err());
        assert!(parse_model_name("model", "a\u{7}").is_err());
    }

    #[test]
    fn parameters_and_prices_stay_in_range() {
        let ok = Parameters {
            temperature: Some(0.7),
            top_p: Some(1.0),
            max_tokens: Some(512),
            seed: Some(-3),
            stop: vec!["\n\n".into()],
        };
        assert_eq!(Parameters::from_object(&ok.to_object()).unwrap(), ok);
        for (k, v) in [
            ("temperature", json!(2.5)),
            ("temperature", json!(-0.1)),
            ("top_p", json!(0)),
            ("max_tokens", json!(0)),
            ("stop", json!(["a", "b", "c", "d", "e"])),
            ("stop", json!([""])),
            ("nope", json!(1)),
        ] {
            let o = json!({ k: v }).as_object().unwrap().clone();
            let e = Parameters::from_object(&o).unwrap_err();
            assert_eq!(field(&e), Some("parameters"), "{k}");
        }
        assert!(Prices::new(0.0, 15.0).is_ok());
        assert_eq!(field(&Prices::new(-1.0, 1.0).unwrap_err()), Some("price_per_million_input"));
        assert!(Prices::new(1.0, f64::NAN).is_err());
    }

    #[test]
    fn an_operator_profile_has_a_stable_id() {
        let a = OperatorEndpoint { name: "ollama".into(), model: None };
        assert_eq!(a.profile_id(), a.clone().profile_id());
        assert_ne!(a.profile_id(), OperatorEndpoint { name: "default".into(), model: None }.profile_id());
    }
}
