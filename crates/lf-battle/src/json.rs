//! A small strict JSON reader (RFC 8259) and string writer for the judge's
//! answers. lf-battle stays free of JSON libraries (its dependency rule), and
//! judge answers are small: a recursive-descent parser with a depth limit is
//! all it takes. Never panics (property-tested).

/// A JSON value. Objects keep their members in order (duplicates included;
/// [`Value::get`] returns the first).
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Value {
    Null,
    Bool(bool),
    Number(f64),
    String(String),
    Array(Vec<Value>),
    Object(Vec<(String, Value)>),
}

impl Value {
    pub(crate) fn get(&self, key: &str) -> Option<&Value> {
        match self {
            Value::Object(members) => members.iter().find(|(k, _)| k == key).map(|(_, v)| v),
            _ => None,
        }
    }
    pub(crate) fn as_str(&self) -> Option<&str> {
        match self {
            Value::String(s) => Some(s),
            _ => None,
        }
    }
    pub(crate) fn as_f64(&self) -> Option<f64> {
        match self {
            Value::Number(n) => Some(*n),
            _ => None,
        }
    }
    pub(crate) fn as_array(&self) -> Option<&[Value]> {
        match self {
            Value::Array(a) => Some(a),
            _ => None,
        }
    }
}

const MAX_DEPTH: usize = 32;

/// Parses exactly one JSON value, surrounded by optional whitespace.
pub(crate) fn parse(text: &str) -> Result<Value, String> {
    let mut p = Parser { b: text.as_bytes(), i: 0 };
    p.ws();
    let v = p.value(0)?;
    p.ws();
    if p.i != p.b.len() {
        return Err(format!("unexpected text after the JSON value at byte {}", p.i));
    }
    Ok(v)
}

struct Parser<'a> {
    b: &'a [u8],
    i: usize,
}

impl Parser<'_> {
    fn ws(&mut self) {
        while let Some(b' ' | b'\t' | b'\n' | b'\r') = self.b.get(self.i) {
            self.i += 1;
        }
    }

    fn err<T>(&self, what: &str) -> Result<T, String> {
        Err(format!("{what} at byte {}", self.i))
    }

    fn eat(&mut self, lit: &[u8]) -> bool {
        if self.b[self.i..].starts_with(lit) {
            self.i += lit.len();
            true
        } else {
            false
        }
    }

    fn value(&mut self, depth: usize) -> Result<Value, String> {
        if depth > MAX_DEPTH {
            return self.err("nested too deeply");
        }
        match self.b.get(self.i) {
            None => self.err("expected a value, found the end"),
            Some(b'{') => self.object(depth),
            Some(b'[') => self.array(depth),
            Some(b'"') => self.string().map(Value::String),
            Some(b'-' | b'0'..=b'9') => self.number(),
            Some(_) if self.eat(b"true") => Ok(Value::Bool(true)),
            Some(_) if self.eat(b"false") => Ok(Value::Bool(false)),
            Some(_) if self.eat(b"null") => Ok(Value::Null),
            Some(_) => self.err("expected a value"),
        }
    }

    fn object(&mut self, depth: usize) -> Result<Value, String> {
        self.i += 1;
        let mut members = Vec::new();
        self.ws();
        if self.eat(b"}") {
            return Ok(Value::Object(members));
        }
        loop {
            self.ws();
            if self.b.get(self.i) != Some(&b'"') {
                return self.err("expected a quoted key");
            }
            let k = self.string()?;
            self.ws();
            if !self.eat(b":") {
                return self.err("expected ':'");
            }
            self.ws();
            let v = self.value(depth + 1)?;
            members.push((k, v));
            self.ws();
            if self.eat(b",") {
                continue;
            }
            if self.eat(b"}") {
                return Ok(Value::Object(members));
            }
            return self.err("expected ',' or '}'");
        }
    }

    fn array(&mut self, depth: usize) -> Result<Value, String> {
        self.i += 1;
        let mut items = Vec::new();
        self.ws();
        if self.eat(b"]") {
            return Ok(Value::Array(items));
        }
        loop {
            self.ws();
            items.push(self.value(depth + 1)?);
            self.ws();
            if self.eat(b",") {
                continue;
            }
            if self.eat(b"]") {
                return Ok(Value::Array(items));
            }
            return self.err("expected ',' or ']'");
        }
    }

    fn hex4(&mut self) -> Result<u32, String> {
        let Some(h) = self.b.get(self.i..self.i + 4) else { return self.err("short \\u escape") };
        let s = std::str::from_utf8(h).map_err(|_| format!("bad \\u escape at byte {}", self.i))?;
        if !s.bytes().all(|c| c.is_ascii_hexdigit()) {
            return self.err("bad \\u escape");
        }
        self.i += 4;
        u32::from_str_radix(s, 16).map_err(|_| "bad \\u escape".to_owned())
    }

    fn string(&mut self) -> Result<String, String> {
        self.i += 1;
        let mut out = String::new();
        loop {
            let start = self.i;
            while let Some(&c) = self.b.get(self.i) {
                if c == b'"' || c == b'\\' || c < 0x20 {
                    break;
                }
                self.i += 1;
            }
            // The input is a &str and we stopped at an ASCII byte, so this is
            // a char boundary.
            out.push_str(std::str::from_utf8(&self.b[start..self.i]).map_err(|e| e.to_string())?);
            match self.b.get(self.i) {
                None => return self.err("unterminated string"),
                Some(b'"') => {
                    self.i += 1;
                    return Ok(out);
                }
                Some(b'\\') => {
                    self.i += 1;
                    let Some(&e) = self.b.get(self.i) else { return self.err("unterminated escape") };
                    self.i += 1;
                    match e {
                        b'"' => out.push('"'),
                        b'\\' => out.push('\\'),
                        b'/' => out.push('/'),
                        b'b' => out.push('\u{8}'),
                        b'f' => out.push('\u{c}'),
                        b'n' => out.push('\n'),
                        b'r' => out.push('\r'),
                        b't' => out.push('\t'),
                        b'u' => {
                            let hi = self.hex4()?;
                            let cp = if (0xD800..0xDC00).contains(&hi) {
                                if !self.eat(b"\\u") {
                                    return self.err("unpaired surrogate");
                                }
                                let lo = self.hex4()?;
                                if !(0xDC00..0xE000).contains(&lo) {
                                    return self.err("unpaired surrogate");
                                }
                                0x10000 + ((hi - 0xD800) << 10) + (lo - 0xDC00)
                            } else {
                                hi
                            };
                            match char::from_u32(cp) {
                                Some(c) => out.push(c),
                                None => return self.err("unpaired surrogate"),
                            }
                        }
                        _ => return self.err("unknown escape"),
                    }
                }
                Some(_) => return self.err("control character in string"),
            }
        }
    }

    fn number(&mut self) -> Result<Value, String> {
        let start = self.i;
        self.eat(b"-");
        match self.b.get(self.i) {
            Some(b'0') => self.i += 1,
            Some(b'1'..=b'9') => self.digits(),
            _ => return self.err("bad number"),
        }
        if self.eat(b".") {
            if !matches!(self.b.get(self.i), Some(b'0'..=b'9')) {
                return self.err("bad number");
            }
            self.digits();
        }
        if let Some(b'e' | b'E') = self.b.get(self.i) {
            self.i += 1;
            if let Some(b'+' | b'-') = self.b.get(self.i) {
                self.i += 1;
            }
            if !matches!(self.b.get(self.i), Some(b'0'..=b'9')) {
                return self.err("bad number");
            }
            self.digits();
        }
        let s = std::str::from_utf8(&self.b[start..self.i]).map_err(|e| e.to_string())?;
        s.parse::<f64>().map(Value::Number).map_err(|_| format!("bad number at byte {start}"))
    }

    fn digits(&mut self) {
        while let Some(b'0'..=b'9') = self.b.get(self.i) {
            self.i += 1;
        }
    }
}

/// `s` as a JSON string literal, quotes included.
pub(crate) fn quote(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    #[test]
    fn parses_what_json_allows() {
        let v = parse(r#" {"a": [1, -2.5e3, true, null, "x\"\u00e9\ud83e\udd80"], "b": {}} "#).unwrap();
        let a = v.get("a").unwrap().as_array().unwrap();
        assert_eq!(a[1].as_f64(), Some(-2500.0));
        assert_eq!(a[4].as_str(), Some("x\"é🦀"));
        assert_eq!(v.get("b"), Some(&Value::Object(vec![])));
    }

    #[test]
    fn refuses_what_json_does_not() {
        for bad in [
            "",
            "{",
            "{'a':1}",
            "{\"a\":1,}",
            "[1,]",
            "01",
            "1.",
            "-",
            ".5",
            "+1",
            "NaN",
            "{\"a\":1} x",
            "\"\\ud800\"",
            "\"a\nb\"",
            "tru",
            "[1 2]",
            "{\"a\" 1}",
            "\"\\x\"",
        ] {
            assert!(parse(bad).is_err(), "{bad:?}");
        }
        let deep = "[".repeat(100) + &"]".repeat(100);
        assert!(parse(&deep).is_err(), "depth is limited");
    }

    #[test]
    fn quote_round_trips() {
        let s = "a\"b\\c\n\u{1}é";
        assert_eq!(parse(&quote(s)).unwrap().as_str(), Some(s));
    }

    proptest! {
        #[test]
        fn never_panics(s in "\\PC{0,200}") {
            let _ = parse(&s);
        }

        #[test]
        fn never_panics_on_jsonish(s in r#"[\[\]{}",:0-9eE.+\-a-z\\ ]{0,120}"#) {
            let _ = parse(&s);
        }

        #[test]
        fn quoted_strings_round_trip(s in "\\PC{0,100}") {
            let back = parse(&quote(&s)).unwrap();
            prop_assert_eq!(back.as_str(), Some(s.as_str()));
        }
    }
}
