//! Embedded payloads: base64, hex, URL-encoding and ROT13 runs inside a prompt, decoded so
//! they are screened too. (Stub: being written.)

/// How a payload was encoded.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Encoding {
    Base64,
    Hex,
    Url,
    Rot13,
}

impl Encoding {
    /// The name used in reasons: `base64`, `hex`, `url`, `rot13`.
    pub fn as_str(self) -> &'static str {
        match self {
            Encoding::Base64 => "base64",
            Encoding::Hex => "hex",
            Encoding::Url => "url",
            Encoding::Rot13 => "rot13",
        }
    }
}

/// One decoded payload.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Decoded {
    pub encoding: Encoding,
    /// Byte range of the encoded run in the input.
    pub span: std::ops::Range<usize>,
    /// The decoded text (valid UTF-8, mostly printable).
    pub text: String,
}

/// The payloads found in `input`, at most `max` of them, in order of position.
pub fn decode_payloads(_input: &str, _max: usize) -> Vec<Decoded> {
    Vec::new()
}
